"""The `kubefit` command: kubectl-like verbs over the same functions as the Python API.

Each family of verbs lives in its own module (`cli/scheduler.py`, `cli/config.py`, `cli/karmada.py`,
`cli/cluster.py`) and registers on `app`; this module holds the shared options and error handling.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import Annotated, Any

import typer

from kubefit import dataclasscode

# The command's own start, before any of kubefit's dataclasses is created: their methods' bytecode kept, not
# recompiled (`kubefit.dataclasscode`). A program importing kubefit as a library leaves `dataclasses` as it is.
dataclasscode.install()

from kubefit.errors import KubefitError, escape_control, shorten  # noqa: E402 - after install(), on purpose

app = typer.Typer(
    name="kubefit",
    help="Where do these pods go, and how much more fits? kube-scheduler v1.34–v1.37 and Karmada, exactly.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Where do these pods go, and how much more fits? kube-scheduler v1.34–v1.37 and Karmada, exactly."""


class OutputFormat(str, Enum):  # noqa: UP042 - typer and emit() compare by value
    table = "table"
    json = "json"
    yaml = "yaml"


FilesOption = Annotated[list[str], typer.Option("-f", "--filename", help="Scenario file(s) or folder(s): YAML, JSON or kind: List; '-' is stdin.")]
RecursiveOption = Annotated[bool, typer.Option("-R", "--recursive", help="Read the folders given with -f and their sub-folders, like kubectl.")]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="table for people, json/yaml for programs.")]
ReportOption = Annotated[str | None, typer.Option(
    "--report", help="Also write the result as one self-contained HTML page (FILE.html) to open or send.")]
REPORT_SUFFIXES = (".html", ".htm")


def check_report_path(path: str | None) -> None:
    """`--report` is checked before any work: an .html name in a folder that exists."""
    from pathlib import Path

    if path is None:
        return
    if Path(path).suffix.lower() not in REPORT_SUFFIXES:
        raise typer.BadParameter(f"{path!r}: the report is an HTML page; name it FILE.html", param_hint="'--report'")
    if not Path(path).resolve().parent.is_dir():
        from kubefit.errors import InputError

        raise InputError("cannot write the report: no such folder", file=path)


def write_report(result: Any, path: str | None, data: dict | None = None) -> None:
    """Write `result` as an HTML page to `path` (`--report`); `data` is its `-o json` dict when already made."""
    if path is None:
        return
    from kubefit.report.htmlreport import write_html

    try:
        write_html(result, path, data=data)
    except OSError as exc:
        from kubefit.errors import InputError

        raise InputError(f"cannot write the report: {exc.strerror or exc}", file=path) from None
KubeVersionOption = Annotated[str | None, typer.Option(
    "--kube-version", help="The Kubernetes version to answer for: 1.34, 1.35, 1.36 or 1.37 (each at the patch "
    "`kubefit version` lists); default: $KUBEFIT_KUBE_VERSION, else the version a snapshot recorded, else 1.37.")]
SchedulerGatesOption = Annotated[str | None, typer.Option(
    "--feature-gates", help="kube-scheduler's feature gates, as it takes them: Name=true,Other=false (each "
    "version's defaults otherwise; unknown and locked gates are refused).")]
GangsAsWorkloadsOption = Annotated[bool, typer.Option(
    "--gangs-as-workloads", help="Translate coscheduling's (scheduling.x-k8s.io) and Volcano's "
    "(scheduling.volcano.sh) PodGroups into the version's own Workload and PodGroup (minMember → minCount; needs "
    "GenericWorkload): what kube-scheduler's gang scheduling would do with them.")]
ReplaceVictimsOption = Annotated[bool, typer.Option(
    "--replace-victims/--no-replace-victims", help="A preemption victim's controller (ReplicaSet, StatefulSet, "
    "Job within its backoffLimit, DaemonSet on its node) creates its replacement, queued like any new pod (also a "
    "--timeline pod deleted at its end), through ResourceQuota admission; --no-replace-victims deletes victims and "
    "recreates none, as kube-scheduler alone (its own tests) does.")]
AdmissionOption = Annotated[bool, typer.Option(
    "--admission/--no-admission", help="Pods not yet stored by an API server go through its admission (limits "
    "copied into missing requests, LimitRanges, RuntimeClasses, DefaultTolerationSeconds, the default "
    "StorageClass); --no-admission takes them as given, as kube-scheduler's own tests create them.")]


def warn(message: str) -> None:
    """A note for the user on stderr (never mixed into -o json/yaml output)."""
    print(f"warning: {escape_control(message)}", file=sys.stderr)


def warn_ignored(scenario: Any, verb: str, *, keep: tuple[str, ...] = (), config: bool = False,
                 members: bool = False) -> None:
    """Name, in one warning, the objects of the files `kubefit <verb>` does not read (never dropped silently)."""
    from kubefit.manifests.load import unread_objects

    message = unread_objects(scenario, verb, keep=keep, config=config, members=members)
    if message:
        warn(message)


def name_some(items: list[str], shown: int = 4) -> str:
    """`a, b, c, d and 5 more`: a list for a one-line message."""
    return ", ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")


VERB_FAMILIES = ("scheduler", "config", "karmada", "cluster", "simulate", "config_convert", "fleet", "whatif", "tune",
                 "consolidate", "check", "serve", "rightsize")
# The family modules a verb lives in: running one verb imports only those (a faster start); any other
# word (`--help`, a verb not listed here) imports them all.
FAMILY_OF_VERB = {
    "version": ("scheduler",), "score": ("scheduler",), "demo": ("scheduler",),
    "simulate": ("simulate",), "capacity": ("simulate",), "plan": ("whatif",), "tune": ("tune",),
    "consolidate": ("consolidate",), "check": ("check",), "rightsize": ("rightsize",),
    "summary": ("karmada",), "models": ("karmada",), "estimate": ("fleet",), "schedule": ("fleet",),
    "snapshot": ("cluster",), "import": ("cluster",), "serve": ("serve",), "config": ("config", "config_convert"),
}


def _register_verbs(verb: str | None = None) -> None:
    """Import the verb modules (only `verb`'s family when it is known); each adds its commands to `app`."""
    # One import per family; a module missing here simply has no verbs yet.
    import importlib

    for module in FAMILY_OF_VERB.get(verb or "", VERB_FAMILIES):
        try:
            importlib.import_module(f"kubefit.cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"kubefit.cli.{module}":
                raise


# Options that take several values separated by spaces (`--compare A B C`), by verb; click options take
# one value each, so the extra values are rewritten as repeats before parsing. Only verbs without
# positional arguments are listed: there a bare word after the option can only be one of its values.
MULTI_VALUE_OPTIONS = {"simulate": ("--compare", "--cordon", "--drain", "--remove"),
                       "plan": ("--cordon", "--drain", "--remove", "--node-template"), "tune": ("--validate", "--cordon", "--drain", "--remove"),
                       "consolidate": ("--compare", "--usage"), "capacity": ("--node-template", "--usage"),
                       "rightsize": ("--usage",),
                       "check": ("--baseline", "--node-template", "--fully-placed", "--min-capacity", "--min-allocation",
                                 "--gang-placed")}


def expand_multi_value_options(args: list[str]) -> list[str]:
    """`simulate --compare A B -o json` → `simulate --compare A --compare B -o json`."""
    verb = next((a for a in args if not a.startswith("-")), None)
    options = MULTI_VALUE_OPTIONS.get(verb or "", ())
    out: list[str] = []
    current: str | None = None  # the multi-value option whose values are being read
    awaiting = False  # the option was just given without `=`: the next word is its first value
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        if arg.startswith("-") and arg != "-":
            name = arg.split("=", 1)[0]
            current = name if name in options else None
            awaiting = current is not None and "=" not in arg
            out.append(arg)
        elif current is not None and not awaiting:
            out += [current, arg]  # a further value of the option: repeat the option
        else:
            awaiting = False
            out.append(arg)
    return out


def _fit_help(command: Any) -> None:
    """Commands whose rich help would cut a name at this terminal's width print click's plain help instead."""
    from rich.console import Console
    from typer import rich_utils

    from kubefit.cli.helpwidth import plain_help_where_narrow

    width = Console(width=getattr(rich_utils, "MAX_WIDTH", None)).width
    plain_help_where_narrow(command, width, typer.Context)


def _click_errors() -> tuple[type[Exception], type[Exception]]:
    """click's `UsageError` and `ClickException`, reached through typer's public `BadParameter` (a UsageError):
    typer vendors click privately (`typer._click`) or depends on it, and exports neither class."""
    bases = {cls.__name__: cls for cls in typer.BadParameter.__mro__}
    return bases["UsageError"], bases["ClickException"]


def main(argv: list[str] | None = None) -> int:
    """Entry point: run a verb; bad input becomes one clear line on stderr and exit 2.

    Usage errors (unknown verb or option, bad option value) are one `error:` line and exit 2 as well;
    anything unexpected is reported as an internal error (exit 70) instead of a traceback, unless
    KUBEFIT_TRACEBACK is set.
    """
    from typer import Abort

    usage_error, click_exception = _click_errors()
    args = expand_multi_value_options(list(sys.argv[1:] if argv is None else argv))
    _register_verbs(args[0] if args else None)
    command = typer.main.get_command(app)
    if "--help" in args or len(args) < 2:  # a help to print: never with a name or word cut (cli/helpwidth.py)
        _fit_help(command)
    try:
        result = command.main(args=args, prog_name="kubefit", standalone_mode=False)
    except KubefitError as exc:
        print(f"error: {escape_control(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except usage_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `kubefit` or `kubefit models` alone: the help, as typer shows it
            from typer import rich_utils

            rich_utils.rich_format_error(exc)
            return exc.exit_code
        where = exc.ctx.command_path if exc.ctx is not None else "kubefit"
        print(f"error: {escape_control(exc.format_message().rstrip('.'))} (see '{where} --help')", file=sys.stderr)
        return 2
    except click_exception as exc:
        print(f"error: {escape_control(exc.format_message())}", file=sys.stderr)
        return exc.exit_code
    except Abort:
        print("error: aborted", file=sys.stderr)
        return 1
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BrokenPipeError:  # `kubefit … | head`: the reader left; nothing more to say
        return 1
    except MemoryError:  # a memory limit met (ulimit -v): every allocation fails cleanly, never an abort
        print("error: out of memory: the input needs more memory than this process may use (a memory limit, "
              "ulimit -v?)", file=sys.stderr)
        return 2
    except Exception as exc:  # last resort: never a traceback for the user
        if os.environ.get("KUBEFIT_TRACEBACK"):
            raise
        print(f"error: internal error: {type(exc).__name__}: {shorten(str(exc), 200)} (please report)",
              file=sys.stderr)
        return 70
    # A command returns normally (None), or typer.Exit(code) comes back as its code.
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


_KEPT: list[Any] = []  # what a verb built, alive until the process ends (`keep`)


def keep(*objects: Any) -> None:
    """Keep what a verb built (its result, the data it printed) alive until the `kubefit` process ends:
    `run` then exits without freeing it object by object (on 5,000 nodes x 5,000 pods, 35 ms of 0.53 s).
    Called by a verb once its output is written; nothing for a library caller (`main` keeps nothing)."""
    _KEPT.extend(objects)


def run() -> None:
    """Console-script entry (and `python -m kubefit.cli`): one verb, then exit with `main`'s code."""
    import gc

    # One verb, then exit: a young collection per 100,000 net allocations instead of 700 (the engine's
    # per-pod objects are short-lived and acyclic; ≈ 190 collections fewer, 5 % of a 5,000 × 5,000 run).
    # Set before the verb's modules are imported (`import kubefit` imports none): at 700, importing them
    # took ≈ 70 collections (30 ms).
    gc.set_threshold(100_000, 50, 100)
    # numpy's OpenBLAS starts a thread per core when numpy is imported, and they spin a while: ≈ 0.07 CPU s of
    # every run on two cores, competing with the verb itself. kubefit never calls BLAS (its arrays are integer
    # vectors over the nodes; no float dot, matmul or linalg), so one thread changes no result. Set before the
    # verb's modules import numpy (`import kubefit.cli` does not); a value the user set is kept, and Dask
    # workers a verb starts inherit it.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from kubefit.collector import freeze_what_is_kept

    freeze_what_is_kept()  # the process ends with what it loaded and computed alive: no collection need walk it
    code = main()
    if _KEPT:
        _exit_now(code)
    sys.exit(code)


def _exit_now(code: int) -> None:
    """End the process as `sys.exit` would, but without tearing the heap down: the standard streams
    flushed, the dataclasses' bytecode cache written if it changed (`kubefit.dataclasscode`) and logging shut
    down (the exit handlers on a verb's path), then `os._exit`. A flush that fails (the reader left) is left to
    the normal exit, which reports it as it always has."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    from kubefit import dataclasscode

    dataclasscode.save()
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    os._exit(code)
