"""`--requests-from vpa|usage` and its options, shared by every verb that answers for a cluster.

`with_requests_options` adds the options to a command's signature (typer reads `__signature__`) and hands the
command one `RequestsFrom` (or None without `--requests-from`) as its `requests` argument: every verb gets them
the same way, and a verb's own code says `requests=requests` once.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

import typer

from kubefit.errors import InputError

PANEL = "Requests from usage"


class Source(StrEnum):
    vpa = "vpa"
    usage = "usage"


class Limits(StrEnum):
    proportional = "proportional"
    keep = "keep"
    krr = "krr"


class UpdateMode(StrEnum):
    Recreate = "Recreate"
    Auto = "Auto"
    Initial = "Initial"
    Off = "Off"
    InPlaceOrRecreate = "InPlaceOrRecreate"
    InPlace = "InPlace"


def _option(*names: str, help: str, **kw: Any) -> Any:  # noqa: A002 - typer's word
    return typer.Option(*names, help=help, rich_help_panel=PANEL, **kw)


OPTIONS: list[tuple[str, Any, Any]] = [
    ("requests_from", Annotated[Source | None, _option(
        "--requests-from", help="Answer for the cluster with new requests: vpa (each pod's VPA, as the VPA "
        "admission controller writes it) or usage (KRR-style, from --usage or --prometheus series).")], None),
    ("usage", Annotated[list[str] | None, _option(
        "--usage", help="Usage files: VPA objects and checkpoints, PodMetrics, a Prometheus query_range/query "
        "answer (cpu=FILE / memory=FILE when its series have no metric name), an OpenCost /allocation answer. "
        "Several: separated by spaces.")], None),
    ("prometheus", Annotated[str | None, _option(
        "--prometheus", help="Ask this Prometheus (http://HOST:PORT) for container_cpu_usage_seconds_total (as a "
        "rate) and container_memory_working_set_bytes over --since, every --step (read-only GETs).")], None),
    ("since", Annotated[str, _option("--since", help="With --prometheus: how far back (at most 90d).")], "7d"),
    ("step", Annotated[str, _option("--step", help="With --prometheus: the query's resolution step.")], "5m"),
    ("max_samples", Annotated[int, _option(
        "--max-samples", min=1, help="With --prometheus: refuse an answer of more samples than this.")],
     50_000_000),
    ("cpu", Annotated[str | None, _option(
        "--cpu", help="With usage: the cpu request, pN (a percentile of every sample) or max, plus +M% "
        "(default p95, KRR's).")], None),
    ("memory", Annotated[str | None, _option(
        "--memory", help="With usage: the memory request, pN or max, plus +M% (default max+15%, KRR's).")], None),
    ("cpu_floor", Annotated[str | None, _option(
        "--cpu-floor", help="With usage: at least this cpu request (default 10m).")], None),
    ("memory_floor", Annotated[str | None, _option(
        "--memory-floor", help="With usage: at least this memory request (default 100M).")], None),
    ("limits", Annotated[Limits | None, _option(
        "--limits", help="With usage: proportional (keep each request:limit ratio, as the VPA does), keep, or krr "
        "(memory limit = request, no cpu limit).")], None),
    ("update_mode", Annotated[UpdateMode | None, _option(
        "--update-mode", help="How running pods get the new requests, for every workload: Recreate (default for "
        "usage), InPlaceOrRecreate (the kubelet admits each resize or the pod is recreated), InPlace, Initial, "
        "Off; default: each VPA's own.")], None),
    ("min_samples", Annotated[int, _option(
        "--min-samples", min=1, help="With usage: a container resource with fewer samples is left as it is.")], 1),
]
NAMES = [name for name, _, _ in OPTIONS]


def requests_options(values: dict[str, Any]) -> Any:
    """The `RequestsFrom` the options give (None without --requests-from; a usage option alone is refused). The
    right-sizing modules are imported only when asked for: every verb takes these options, few runs give them."""
    source = values.get("requests_from")
    if source is None:
        given = [f"--{n.replace('_', '-')}" for n in ("usage", "prometheus", "cpu", "memory", "limits", "update_mode")
                 if values.get(n)]
        if given:
            raise InputError("says where the new requests come from: give --requests-from vpa or usage too",
                             field=given[0])
        return None
    from kubefit.manifests.usage.requestsfrom import PrometheusQuery, RequestsFrom

    usage = tuple(u.strip() for spec in values.get("usage") or [] for u in spec.split(",") if u.strip())
    query = None
    if values.get("prometheus"):
        query = PrometheusQuery(values["prometheus"], since=values["since"], step=values["step"],
                                max_samples=values["max_samples"])
    enum = lambda v: None if v is None else getattr(v, "value", v)  # noqa: E731
    return RequestsFrom(enum(source), usage=usage, prometheus=query, cpu=values.get("cpu"),
                        memory=values.get("memory"), cpu_floor=values.get("cpu_floor"),
                        memory_floor=values.get("memory_floor"), limits=enum(values.get("limits")),
                        update_mode=enum(values.get("update_mode")), min_samples=values.get("min_samples") or 1)


def with_requests_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The command with the options above in its signature; it receives `requests=` (see the module)."""
    signature = inspect.signature(command, eval_str=True)  # typer reads the annotations themselves
    own = [p for p in signature.parameters.values() if p.name != "requests"]
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
             for name, annotation, default in OPTIONS]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, default) for name, _, default in OPTIONS}
        return command(*args, requests=requests_options(values), **kwargs)

    positional = [p for p in own if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = [p for p in own if p not in positional]
    wrapper.__signature__ = signature.replace(parameters=[  # type: ignore[attr-defined]
        *[p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in positional], *rest, *added])
    return wrapper
