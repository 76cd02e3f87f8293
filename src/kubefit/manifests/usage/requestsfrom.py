"""`--requests-from vpa|usage`: the options, and the scenario with the new requests (what every verb runs on).

`RequestsFrom` gathers what the command line gives (usage files, a Prometheus to ask, the strategies, the update
mode); `requests_from(scenario, options)` reads the usage (the files, the Prometheus, the VPA objects of the
scenario's own files), attributes it to the scenario's workloads and applies the new requests (`rewrite`),
returning the new scenario and all that was found on the way (`Applied`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubefit.errors import InputError
from kubefit.manifests.load import Scenario
from kubefit.manifests.usage import read
from kubefit.manifests.usage.model import UsageData
from kubefit.manifests.usage.owners import Attributed, Workload, Workloads, attribute, unknown_note
from kubefit.manifests.usage.plans import Targets, usage_plan, usage_targets, vpa_plan
from kubefit.manifests.usage.rewrite import MODES, Rightsized, rightsize
from kubefit.manifests.usage.strategy import Strategies

SOURCES = ("vpa", "usage")
NANO = 10**9


@dataclass(frozen=True)
class PrometheusQuery:
    """`--prometheus URL` and its bounds (see `promquery`)."""

    url: str
    since: str = "7d"
    step: str = "5m"
    max_samples: int = 50_000_000
    timeout: float = 60.0
    end: float | None = None  # seconds since the epoch; None: now


@dataclass(frozen=True)
class RequestsFrom:
    """Where the new requests come from and how they are applied (the options of every verb)."""

    source: str
    usage: tuple[str, ...] = ()
    prometheus: PrometheusQuery | None = None
    cpu: str | None = None
    memory: str | None = None
    cpu_floor: str | None = None
    memory_floor: str | None = None
    limits: str | None = None
    update_mode: str | None = None
    min_samples: int = 1

    def check(self) -> Strategies | None:
        """Options refused before any file is read; the strategies of `usage`."""
        if self.source not in SOURCES:
            raise InputError(f"must be vpa or usage, got {self.source!r}", field="--requests-from")
        if self.update_mode is not None and self.update_mode not in MODES:
            raise InputError(f"must be one of {', '.join(MODES)}, got {self.update_mode!r}", field="--update-mode")
        if self.min_samples < 1:
            raise InputError(f"must be 1 or more, got {self.min_samples}", field="--min-samples")
        strategies = Strategies.parse(self.cpu, self.memory, self.cpu_floor, self.memory_floor, self.limits)
        if self.prometheus is not None:
            from kubefit.manifests.usage.promquery import check

            check(self.prometheus)
        if self.source == "vpa":
            given = [o for o, v in (("--cpu", self.cpu), ("--memory", self.memory), ("--limits", self.limits))
                     if v is not None]
            if given:
                raise InputError("the VPA's recommendation decides the requests: --cpu, --memory and --limits are "
                                 "for --requests-from usage", field=given[0])
            return None
        if not self.usage and self.prometheus is None:
            raise InputError("--requests-from usage needs usage: --usage FILE or --prometheus URL",
                             field="--requests-from")
        return strategies

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"requestsFrom": self.source, "usage": list(self.usage)}
        if self.prometheus is not None:
            out["prometheus"] = {"url": self.prometheus.url, "since": self.prometheus.since,
                                 "step": self.prometheus.step}
        if self.source == "usage":
            out["strategy"] = Strategies.parse(self.cpu, self.memory, self.cpu_floor, self.memory_floor,
                                               self.limits).describe()
        if self.update_mode:
            out["updateMode"] = self.update_mode
        return out


@dataclass
class Applied:
    """The scenario with the new requests, and what was read and found on the way."""

    rightsized: Rightsized
    data: UsageData
    attributed: Attributed
    targets: Targets | None
    notes: list[str] = field(default_factory=list)
    requests: dict[Workload, dict[str, dict[str, float]]] = field(default_factory=dict)  # today's, cores/bytes


def workload_requests(scenario: Scenario, workloads: Workloads) -> dict[Workload, dict[str, dict[str, float]]]:
    """Each workload's containers and their requests today (cores, bytes), from the first of its pods."""
    out: dict[Workload, dict[str, dict[str, float]]] = {}
    for pod in scenario.pods:
        w = workloads.of(pod)
        if w is None or w in out:
            continue
        out[w] = {c.name: {r: c.requests.get(r, 0) / NANO for r in ("cpu", "memory")} for c in pod.containers}
    return out


def read_all(options: RequestsFrom, scenario: Scenario) -> UsageData:
    """The usage files, the Prometheus answers and the scenario's own VPA objects, merged."""
    data = read.read_usage(options.usage)
    if options.prometheus is not None:
        from kubefit.manifests.usage.promquery import query_prometheus

        data.add(query_prometheus(options.prometheus))
    own = read.from_documents([d for d in scenario.skipped if d.kind in read.vpa.KINDS], strict=False)
    data.add(own)
    return data


def requests_from(scenario: Scenario, options: RequestsFrom, data: UsageData | None = None) -> Applied:
    """The scenario with the new requests applied (see the module's docstring); `data`: the usage already read."""
    strategies = options.check()
    data = read_all(options, scenario) if data is None else data
    workloads = Workloads(scenario.workloads, scenario.pods)
    requests = workload_requests(scenario, workloads)
    attributed = attribute(data, workloads, requests)
    notes = list(data.notes)
    _checkpoints(data, attributed, requests, notes)
    for what, kind in ((attributed.unknown_pods, "pods or workloads"),
                       (attributed.unknown_containers, "containers")):
        note = unknown_note(what, kind)
        if note:
            notes.append(note)
    if attributed.by_name:
        notes.append(f"usage of {attributed.by_name} container(s) of pods the scenario does not hold (gone since: "
                     f"a rollout, a restart) attributed to their workload by the pod's name")
    if attributed.unsplit:
        notes.append(f"{len(attributed.unsplit)} aggregated allocation(s) could not be divided among pods (no request "
                     f"to divide the summed request average by), ignored: {attributed.unsplit[0]}")
    targets = None
    if options.source == "vpa":
        if not data.vpas:
            raise InputError("--requests-from vpa needs VerticalPodAutoscaler objects (with -f or --usage); none "
                             "was found", file=scenario.files, field="--requests-from")
        plan = vpa_plan(data.vpas, data.checkpoints, scenario, notes)
        _no_target(data, workloads, requests, notes)
    else:
        assert strategies is not None
        targets = usage_targets(attributed.series, strategies, options.min_samples)
        if not targets.requests:
            raise InputError("no usage of any workload of the scenario: nothing to right-size (see the warnings)",
                             file=scenario.files, field="--usage")
        if targets.thin:
            notes.append(f"{len(targets.thin)} container resource(s) with fewer than --min-samples "
                         f"{options.min_samples} samples left as they are (e.g. {targets.thin[0]})")
        plan = usage_plan(targets, strategies, scenario, options.update_mode or "Recreate")
    rightsized = rightsize(scenario, plan, mode=options.update_mode)
    notes += rightsized.notes
    rightsized.scenario.warnings += notes
    return Applied(rightsized, data, attributed, targets, notes, requests)


def _checkpoints(data: UsageData, attributed: Attributed, requests: dict, notes: list[str]) -> None:
    """Each VPA checkpoint's histograms added to the usage of its VPA's target workload and container (the risk
    and `--requests-from usage` read them where no series is); a checkpoint of a VPA the files do not hold, or of
    no container of its workload, is named and ignored."""
    from kubefit.manifests.usage.model import HISTOGRAM
    from kubefit.manifests.usage.owners import ContainerSeries

    vpas = {(v.namespace, v.name): v for v in data.vpas}
    orphans = []
    for c in data.checkpoints:
        vpa = vpas.get((c.namespace, c.vpa_name))
        workload = None if vpa is None else (vpa.namespace, vpa.target_kind, vpa.target_name)
        if workload is None or c.container_name not in requests.get(workload, {}):
            orphans.append(f"{c.namespace}/{c.name}")
            continue
        into = attributed.series.setdefault(workload, {}).setdefault(c.container_name, ContainerSeries())
        if not into.cpu and not into.memory:
            into.measured = HISTOGRAM
        into.histograms = {"cpu": c.cpu, "memory": c.memory}
    if orphans:
        notes.append(f"{len(orphans)} VerticalPodAutoscalerCheckpoint(s) of no VPA or container of the files "
                     f"ignored (e.g. {orphans[0]})")


def _no_target(data: UsageData, workloads: Workloads, requests: dict, notes: list[str]) -> None:
    """A VPA whose target the scenario does not hold is named (it controls nothing here)."""
    missing = [v.key for v in data.vpas if (v.namespace, v.target_kind, v.target_name) not in requests]
    if missing:
        notes.append(f"{len(missing)} VPA(s) target no workload of the scenario (e.g. {missing[0]}): ignored")
    stale = [v.key for v in data.vpas if v.recommendations is None]
    if stale:
        notes.append(f"{len(stale)} VPA(s) have no recommendation yet and no checkpoint (e.g. {stale[0]}): their "
                     f"pods keep their requests")
