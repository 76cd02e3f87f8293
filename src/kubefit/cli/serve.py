"""`kubefit serve`: the scheduling simulator in the browser (see `kubefit.serve`).

Starlette and uvicorn are imported only when the command runs, so `import kubefit.cli` stays light."""

from __future__ import annotations

import signal
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from kubefit.cli import GangsAsWorkloadsOption, KubeVersionOption, RecursiveOption, SchedulerGatesOption, app
from kubefit.cli.requests import with_requests_options
from kubefit.cli.scheduler import EXAMPLES
from kubefit.cli.simulate import SeedOption, TieBreak, TieBreakOption

DEFAULT_EXAMPLE = EXAMPLES / "workload" / "cluster.yaml"  # the README's simulate example: a queue, a pending pod


@app.command()
@with_requests_options
def serve(
    files: Annotated[list[str] | None, typer.Option(
        "-f", "--filename", help="Scenario file(s) or folder(s), '-' is stdin (read once, at start); default: the "
        "bundled examples/workload.")] = None,
    recursive: RecursiveOption = False,
    kubeconfig: Annotated[str | None, typer.Option(
        "--kubeconfig", help="A live cluster: start from its snapshot (as kubefit snapshot takes it) and offer "
        "'refresh from cluster'.")] = None,
    context: Annotated[str | None, typer.Option("--context", help="The kubeconfig context to use.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on; anything but a loopback address "
                                                     "requires a token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: a free one).")] = 8765,
    token: Annotated[str | None, typer.Option(
        "--token", help="The token every request must carry (default: none on 127.0.0.1, a random one on "
        "any other host, printed in the URL).")] = None,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the page in the default browser.")] = False,
    max_body: Annotated[int, typer.Option("--max-body", help="Largest request body accepted, in bytes "
                                                             "(pasted YAML, a configuration).")] = 8 << 20,
    tie_break: TieBreakOption = TieBreak.random,
    seed: SeedOption = 0,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
    requests: Any = None,
) -> None:
    """See every decision, edit, re-run and compare in the browser: a local web page over the same verbs."""
    from kubefit.serve.server import Server, bind, prepare
    from kubefit.serve.state import Options

    if not 0 <= port <= 65535:
        raise typer.BadParameter(f"{port} is not a port (0..65535)", param_hint="'--port'")
    with ExitStack() as cleanup:
        # a stop while loading cleans up too (uvicorn's own handler once serving); the caller's handler after
        cleanup.callback(signal.signal, signal.SIGTERM, signal.signal(signal.SIGTERM, _stop))
        paths = list(files or [])
        if kubeconfig is not None and not paths:
            paths = [_snapshot_file(kubeconfig, context)]
            cleanup.callback(Path(paths[0]).unlink, missing_ok=True)
        options = Options(paths or [str(DEFAULT_EXAMPLE)], kube_version=kube_version, feature_gates=feature_gates,
                          kubeconfig=kubeconfig, context=context, tie_break=tie_break.value, seed=seed,
                          recursive=recursive, requests=requests, gangs_as_workloads=gangs_as_workloads)
        sock = bind(host, port)
        cleanup.callback(sock.close)
        application, guard, session = prepare(options, host, sock.getsockname()[1], token, max_body)
        cleanup.callback(session.close)
        server = Server(application, sock)
        url = guard.url()
        print(f"kubefit serve: {len(session.run.data['final'])} nodes, {len(session.run.data['steps'])} pods "
              f"queued; open {url}  (Ctrl-C stops)", file=sys.stderr, flush=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        server.run()


def _stop(signum: int, frame: object) -> None:
    """SIGTERM before the server runs: leave through the cleanup, with the shell's code for it."""
    raise SystemExit(128 + signum)


def _snapshot_file(kubeconfig: str, context: str | None) -> str:
    """The live cluster's snapshot written to a temporary file (what the session then reads)."""
    import tempfile

    from kubefit.cli.cluster import write_scenario
    from kubefit.manifests.snapshot import snapshot

    path = tempfile.NamedTemporaryFile(prefix="kubefit-snapshot-", suffix=".json", delete=False).name
    write_scenario(snapshot(kubeconfig, context), path)
    return path
