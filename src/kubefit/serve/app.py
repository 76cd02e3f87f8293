"""The ASGI application of `kubefit serve`: the page, its assets and the JSON endpoints over a `Session`.

Every endpoint answers from the verbs (`kubefit.verbs`) through the session and the views; bad input is
kubefit's one-line message (`{"error": ...}`, status 400; 413 for a body over the limit), never a
traceback, and a refused edit leaves the last good state in place. Work runs in a thread so the event
loop keeps answering; the session's lock keeps one edit at a time.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Awaitable, Callable
from html import escape
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kubefit.errors import KubefitError, shorten
from kubefit.serve import views
from kubefit.serve.security import REPORT_CSP, BodyTooLarge, Guard, GuardMiddleware, read_body
from kubefit.serve.state import PRESETS, Session, preset, quiet, validate_config

ASSETS = Path(__file__).resolve().parent / "assets"
REPORTS_KEPT = 8  # planning and comparison reports held for the page's frames
Handler = Callable[[Request], Awaitable[Response]]


class JSON(JSONResponse):
    """JSON through orjson (the steps of 5,000 pods in a few milliseconds)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def error(message: str, status: int = 400) -> JSON:
    return JSON({"error": message}, status_code=status)


def answering(handler: Handler) -> Handler:
    """`handler` with its failures as messages: kubefit's own (400), a body too large (413), anything else
    an internal error in one line (500)."""
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except KubefitError as exc:
            return error(str(exc))
        except BodyTooLarge as exc:
            return error(str(exc), 413)
        except orjson.JSONDecodeError:
            return error("the request body is not JSON")
        except Exception as exc:  # never a traceback for the page
            return error(f"internal error: {type(exc).__name__}: {shorten(str(exc), 200)} (please report)", 500)
    return wrapped


def int_param(request: Request, name: str, default: int) -> int:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise KubefitError(f"{name}: must be an integer, got {shorten(value, 40)!r}") from None


class Api:
    """The endpoints, over one session; `routes()` lists them."""

    def __init__(self, session: Session, guard: Guard) -> None:
        self.session, self.guard = session, guard
        self.decisions: dict[tuple[int, str], dict[str, Any]] = {}  # (run, pod) → `kubefit score` of it
        self.reports: dict[str, str] = {}  # id → a self-contained HTML report
        self.tune_job: dict[str, Any] | None = None  # the last `kubefit tune` started (`kubefit.serve.tuning`)

    # -------------------------------------------------------------- helpers
    async def body(self, request: Request) -> bytes:
        return await read_body(request, self.guard.max_body)

    async def json_body(self, request: Request) -> dict[str, Any]:
        data = orjson.loads(await self.body(request) or b"{}")
        if not isinstance(data, dict):
            raise KubefitError("the request body must be a JSON object")
        return data

    async def text_body(self, request: Request) -> str:
        raw = await self.body(request)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise KubefitError("the pasted text is not UTF-8") from None

    def summary(self) -> dict[str, Any]:
        """What the page's header, history and what-if panes show of the current state."""
        s = self.session
        run, before, history = s.run, s.previous, list(s.history)  # no lock: an edit may hold it for a second
        assert run is not None
        edits, data = run.edits, run.data
        source = "edited" if edits.config is not None else ("files" if edits.source.config is not None else "defaults")
        return {
            "files": list(s.options.files), "history": [e.label for e in history], "canUndo": len(history) > 1,
            "config": s.config_text(edits) or s.default_config_text(
                ((data.get("inputs") or {}).get("kubeVersion") or {}).get("minor")),
            "configSource": source, "presets": list(PRESETS),
            "scheduled": data["scheduled"], "unschedulable": data["unschedulable"], "metrics": data["metrics"],
            "warnings": data.get("warnings", []),
            "kubeVersion": (data.get("inputs") or {}).get("kubeSchedulerVersion"),
            "resources": views.resources(data), "drivers": views.drivers(data), "nodes": len(data["final"]),
            "pods": len(data["steps"]),
            "workloads": s.workloads(), "change": views.moved(before, run),
            "actions": {k: list(getattr(edits, k)) for k in ("cordon", "drain", "remove")},
            "nodeActions": data.get("nodeActions"), "refusedDrains": views.refused_drains(data.get("nodeActions")),
            "live": s.options.kubeconfig is not None,
            "podGroups": data.get("podGroups", []),
        }

    async def changed(self, work: Callable[[], Any]) -> Response:
        """Run an edit in a thread; answer the new summary (an edit refused: its message, nothing changed)."""
        await run_in_threadpool(work)
        return JSON(self.summary())

    def keep_report(self, html: str) -> str:
        key = secrets.token_urlsafe(8)
        self.reports[key] = html
        while len(self.reports) > REPORTS_KEPT:
            self.reports.pop(next(iter(self.reports)))
        return f"/api/report/{key}"

    # -------------------------------------------------------------- pages and reads
    async def index(self, request: Request) -> Response:
        page = (ASSETS / "index.html").read_text(encoding="utf-8")
        return HTMLResponse(page.replace("{{csrf}}", escape(self.guard.csrf)))

    async def get_summary(self, request: Request) -> Response:
        return JSON(self.summary())

    async def nodes(self, request: Request) -> Response:
        run = self.session.run
        rows = views.node_rows(run)
        text = request.query_params.get("selector", "").strip()
        if text:
            chosen = views.selector(text)
            rows = [r for r in rows if chosen.matches(r["labels"])]
        rows = views.sort_nodes(rows, request.query_params.get("sort", "name"),
                                request.query_params.get("order", "asc") == "desc")
        return JSON(views.page_of(rows, int_param(request, "page", 0), int_param(request, "size", 50)))

    async def names(self, request: Request) -> Response:
        """Every node's name, for the what-if and planning choices."""
        return JSON([r["name"] for r in views.node_rows(self.session.run)])

    async def node(self, request: Request) -> Response:
        return JSON(views.node_pods(self.session.run, request.query_params.get("name", "")))

    async def pods(self, request: Request) -> Response:
        rows = views.filter_pods(views.pod_rows(self.session.run), request.query_params.get("status", "all"),
                                 request.query_params.get("q", "").strip())
        return JSON(views.page_of(rows, int_param(request, "page", 0), int_param(request, "size", 50)))

    async def decision(self, request: Request) -> Response:
        """A pod's scheduling cycle at its turn in the queue, as `kubefit score --pod P --detail --explain
        --at-turn` computes it on the current scenario (with its node actions), and the simulation's step."""
        pod = request.query_params.get("pod", "")
        if not pod:
            raise KubefitError("pod: name the pod (namespace/name)")
        run = self.session.run
        key = (id(run), pod)
        if key not in self.decisions:
            self.decisions = {k: v for k, v in self.decisions.items() if k[0] == id(run)}
            self.decisions[key] = await run_in_threadpool(self.score, run, pod)
        steps = [r for r in views.pod_rows(run) if r["key"] == pod or r["key"] == f"default/{pod}"]
        step = steps[-1] if steps else None
        out = views.decision(self.decisions[key], step, int_param(request, "page", 0), int_param(request, "size", 50),
                             request.query_params.get("q", "").strip())
        out["group"] = views.group_of(run.data, step)
        return JSON(out)

    def score(self, run: Any, pod: str) -> dict[str, Any]:
        from kubefit import verbs

        s = self.session
        with s.lock:
            files = s.files(run.edits)
            e = run.edits
            o = s.options
            return verbs.score(files, pod, detail=True, explain=True, warn=quiet, cordon=e.cordon, drain=e.drain,
                               remove=e.remove, at_turn=True, tie_break=o.tie_break, seed=o.seed, **o.versions())

    async def get_preset(self, request: Request) -> Response:
        return JSON({"name": request.query_params.get("name"), "text": preset(request.query_params.get("name", ""))})

    # -------------------------------------------------------------- edits
    async def validate(self, request: Request) -> Response:
        """kube-scheduler's verdict on the editor's text, as it is typed (no state changes)."""
        text = await self.text_body(request)
        o = self.session.options
        try:
            answer = await run_in_threadpool(validate_config, text, o.kube_version, o.feature_gates)
        except KubefitError as exc:
            return JSON({"valid": False, "message": str(exc)})
        return JSON({"valid": True, "message": "valid", "notes": answer["notes"]})

    async def configure(self, request: Request) -> Response:
        text = await self.text_body(request)
        return await self.changed(lambda: self.session.configure(text))

    async def action(self, request: Request) -> Response:
        data = await self.json_body(request)
        return await self.changed(lambda: self.session.node_action(str(data.get("action", "")),
                                                                    str(data.get("node", ""))))

    async def add_nodes(self, request: Request) -> Response:
        data = await self.json_body(request)
        count = data.get("count", 1)
        if not isinstance(count, int):
            raise KubefitError("count: must be an integer")
        return await self.changed(lambda: self.session.add_nodes(str(data.get("template", "")), count))

    async def scale(self, request: Request) -> Response:
        data = await self.json_body(request)
        position, replicas = data.get("position"), data.get("replicas")
        if not isinstance(position, int) or not isinstance(replicas, int):
            raise KubefitError("position and replicas: must be integers")
        return await self.changed(lambda: self.session.scale(position, replicas))

    async def add(self, request: Request) -> Response:
        text = await self.text_body(request)
        return await self.changed(lambda: self.session.add_yaml(text))

    async def undo(self, request: Request) -> Response:
        return await self.changed(self.session.undo)

    async def refresh(self, request: Request) -> Response:
        """A new snapshot of the live cluster (`--kubeconfig`), as `kubefit snapshot` takes it."""
        o = self.session.options
        if o.kubeconfig is None:
            raise KubefitError("no live cluster: start kubefit serve with --kubeconfig PATH")

        def work() -> None:
            from kubefit.manifests.snapshot import snapshot

            self.session.refresh(snapshot(o.kubeconfig, o.context))
        return await self.changed(work)

    # -------------------------------------------------------------- compare, planning, export
    async def compare(self, request: Request) -> Response:
        """The current scenario under its configuration and another (a preset, or pasted YAML), or under two
        Kubernetes versions: the metrics side by side and every pod placed differently."""
        data = await self.json_body(request)
        return JSON(await run_in_threadpool(self.run_compare, data))

    def run_compare(self, data: dict[str, Any]) -> dict[str, Any]:
        from kubefit import verbs
        from kubefit.scheduler.compare import (
            comparison_to_dict,
            version_comparison_to_dict,
            version_differences,
        )

        s, o = self.session, self.session.options
        with s.lock:
            files, e = s.files(s.current), s.current
            common = {"tie_break": o.tie_break, "seed": o.seed, "cordon": e.cordon, "drain": e.drain,
                      "remove": e.remove, "warn": quiet, "feature_gates": o.feature_gates,
                      "gangs_as_workloads": o.gangs_as_workloads}
            versions = data.get("versions")
            if versions:
                if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
                    raise KubefitError("versions: a list of versions such as [\"1.34\", \"1.37\"]")
                results = verbs.compare_versions(files, versions, **common)
                out = version_comparison_to_dict(results)
            else:
                others = data.get("configurations")
                if not isinstance(others, list) or not 1 <= len(others) <= 2 or not all(
                        isinstance(c, str) for c in others):
                    raise KubefitError("configurations: one or two presets or configuration texts")
                results = verbs.compare(files, [self.compared(c, i) for i, c in enumerate(others, 1)],
                                        kube_version=o.kube_version, **common)
                for i, (result, choice) in enumerate(zip(results[1:], others, strict=True), 1):
                    result.label = choice if choice in PRESETS else f"pasted YAML {i}"  # not the written file's path
                out = comparison_to_dict(results)
                out["differences"] = version_differences(results)
            from kubefit.report.htmlreport import render_html

            out["report"] = self.keep_report(render_html(results, data=out))
        out["differenceCount"] = len(out["differences"])
        out["differences"] = out["differences"][:500]
        for c in out["configurations"]:
            c.pop("final", None)  # per node, per run: the report shows it; the page needs the counts
        out.pop("allocatable", None)
        return out

    def compared(self, choice: str, i: int) -> str:
        """A configuration to compare: a preset's name (the scenario's configuration with that scoring
        strategy, as `simulate --compare MostAllocated`), or pasted YAML, validated, then written as a file."""
        if choice in PRESETS:
            return choice
        o = self.session.options
        validate_config(choice, o.kube_version, o.feature_gates)
        path = self.session.workdir / f"pasted-{i}.yaml"
        path.write_text(choice, encoding="utf-8")
        return str(path)

    async def planning(self, request: Request) -> Response:
        """`capacity` (copies of a pod), `plan` (nodes of a template to add) or `consolidate` (nodes that can
        go) on the current scenario: the verb's headline numbers and its HTML report."""
        data = await self.json_body(request)
        return JSON(await run_in_threadpool(self.run_planning, data))

    def run_planning(self, data: dict[str, Any]) -> dict[str, Any]:
        from kubefit import verbs
        from kubefit.report.htmlreport import render_html, renderer_for
        from kubefit.serve.state import node_copies

        s, o = self.session, self.session.options
        verb = data.get("verb")
        with s.lock:
            files = s.files(s.current)
            e = s.current
            versions = {**o.versions(), "warn": quiet}
            if verb == "capacity":
                result = verbs.capacity(files, str(data.get("pod") or "") or None, **versions)
            elif verb == "plan":
                name = str(data.get("template", ""))
                nodes = {n.get("metadata", {}).get("name"): n for n in s.scaled(e) if n.get("kind") == "Node"}
                if name not in nodes:
                    raise KubefitError(f"template: no node named {name!r} to copy")
                template = s.workdir / "template.json"
                template.write_bytes(orjson.dumps(node_copies(nodes[name], 1, {name})[0]))
                result = verbs.plan(files, [str(template)], tie_break=o.tie_break, seed=o.seed, cordon=e.cordon,
                                    drain=e.drain, remove=e.remove, **versions)
            elif verb == "consolidate":
                result = verbs.consolidate(files, tie_break=o.tie_break, seed=o.seed, **versions)
            elif verb == "rightsize":
                result = verbs.rightsize(files, self.requests(data), tie_break=o.tie_break, seed=o.seed, **versions)
            else:
                raise KubefitError("verb: one of capacity, plan, consolidate, rightsize")
            out = renderer_for(result).data(result)
            report = self.keep_report(render_html(result, data=out))
        headline = {k: v for k, v in out.items() if isinstance(v, int | float | str | bool) and k != "inputs"}
        return {"verb": verb, "headline": headline, "warnings": out.get("warnings", []), "report": report}

    def requests(self, data: dict[str, Any]) -> Any:
        """Where `rightsize`'s new requests come from: the page's choice (vpa or usage) with the usage `kubefit
        serve` was started with (`--usage`, `--prometheus`, the strategies); the scenario's own VPAs for vpa."""
        from dataclasses import replace as changed

        from kubefit.manifests.usage.requestsfrom import RequestsFrom

        chosen = data.get("requestsFrom") or "vpa"
        if chosen not in ("vpa", "usage"):
            raise KubefitError("requestsFrom: vpa or usage")
        given = self.session.options.requests
        if given is None:
            return RequestsFrom(chosen)
        if chosen == "vpa":
            return changed(given, source="vpa", cpu=None, memory=None, limits=None)
        return changed(given, source="usage")

    async def tune(self, request: Request) -> Response:
        """Start `kubefit tune` on the scenario as it stands, in the background (one at a time); the page
        polls `GET /api/tune` for the trials done and the result."""
        from kubefit.serve import tuning

        chosen = tuning.settings(await self.json_body(request))
        if self.tune_job is not None and self.tune_job["state"] == "running":
            raise KubefitError("a tune is already running: wait for it, or stop it")
        s, o = self.session, self.session.options
        job: dict[str, Any] = {"state": "running", "done": 0, "total": chosen["trials"], "settings": chosen,
                               "stop": threading.Event()}

        def run(files: list[str], progress: Callable[[int, int], None]) -> Any:
            from kubefit import verbs

            return verbs.tune(files, chosen["objective"], trials=chosen["trials"], batch=chosen["batch"],
                              workers=chosen["workers"], seed=o.seed, tie_break=o.tie_break, progress=progress,
                              warn=quiet, cordon=e.cordon, drain=e.drain, remove=e.remove, **o.versions())
        with s.lock:
            e = s.current  # its files and node actions as they stand now: later edits do not reach the run
            files = s.files(e)
            self.tune_job = job
            tuning.start(job, files, s.workdir / "tune", run, self.tuned)
        return JSON(tuning.status(job))

    def tuned(self, result: Any) -> dict[str, Any]:
        """A finished tune as the page shows it: the headline numbers, the configuration file to apply and the
        HTML report (the same as `kubefit tune -o json`, `--write-config` and `--report` give)."""
        from kubefit.report.htmlreport import render_html, renderer_for
        from kubefit.report.tune import config_yaml

        out = renderer_for(result).data(result)
        headline = {k: v for k, v in out.items() if isinstance(v, int | float | str | bool) and k != "inputs"}
        headline.update({"best": out["best"]["value"], "bestTrial": out["best"]["trial"], "trials": len(out["trials"]),
                         **{f"baseline {name}": value for name, value in out["baselines"].items()}})
        return {"headline": headline, "warnings": out.get("warnings", []), "config": config_yaml(out),
                "report": self.keep_report(render_html(result, data=out))}

    async def tune_status(self, request: Request) -> Response:
        from kubefit.serve.tuning import status

        return JSON(status(self.tune_job))

    async def tune_stop(self, request: Request) -> Response:
        """Stop the running tune after the batch under way (its trials are not reported)."""
        from kubefit.serve.tuning import status

        if self.tune_job is not None:
            self.tune_job["stop"].set()
        return JSON(status(self.tune_job))

    async def report(self, request: Request) -> Response:
        html = self.reports.get(request.path_params["key"])
        if html is None:
            return error("no such report (reports are kept for the last few runs)", 404)
        return HTMLResponse(html, headers={"content-security-policy": REPORT_CSP})

    async def export_yaml(self, request: Request) -> Response:
        text = await run_in_threadpool(self.session.export_yaml)
        return Response(text, media_type="application/yaml",
                        headers={"content-disposition": 'attachment; filename="scenario.yaml"'})

    async def export_report(self, request: Request) -> Response:
        from kubefit.report.htmlreport import render_html

        run = self.session.run
        html = await run_in_threadpool(render_html, run.result, data=run.data)
        return HTMLResponse(html, headers={"content-disposition": 'attachment; filename="kubefit-report.html"',
                                           "content-security-policy": REPORT_CSP})

    def routes(self) -> list[Any]:
        reads = [("/api/summary", self.get_summary), ("/api/nodes", self.nodes), ("/api/node", self.node),
                 ("/api/names", self.names), ("/api/pods", self.pods), ("/api/decision", self.decision),
                 ("/api/preset", self.get_preset), ("/api/tune", self.tune_status),
                 ("/api/report/{key}", self.report), ("/api/export/scenario.yaml", self.export_yaml),
                 ("/api/export/report.html", self.export_report)]
        writes = [("/api/config/validate", self.validate), ("/api/config", self.configure),
                  ("/api/action", self.action), ("/api/nodes/add", self.add_nodes), ("/api/scale", self.scale),
                  ("/api/add", self.add), ("/api/undo", self.undo), ("/api/refresh", self.refresh),
                  ("/api/compare", self.compare), ("/api/planning", self.planning), ("/api/tune/start", self.tune),
                  ("/api/tune/stop", self.tune_stop)]
        return ([Route("/", self.index, methods=["GET"])]
                + [Route(path, answering(h), methods=["GET"]) for path, h in reads]
                + [Route(path, answering(h), methods=["POST"]) for path, h in writes]
                + [Mount("/assets", StaticFiles(directory=ASSETS / "static"), name="assets")])


def create_app(session: Session, guard: Guard) -> Any:
    """The application: the routes behind the security guard (the session already started)."""
    api = Api(session, guard)
    return GuardMiddleware(Starlette(routes=api.routes()), guard)
