"""Where the new requests come from: the VPA admission controller (`vpa_plan`) or a KRR-style strategy on the
observed usage (`usage_plan`), each a `rewrite.Plan` the scenario transformation applies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubefit.api.core import Pod
from kubefit.manifests.load import Scenario
from kubefit.manifests.usage import recommender
from kubefit.manifests.usage.model import CPU, MEMORY, RESOURCES
from kubefit.manifests.usage.owners import ContainerSeries, Workload, label
from kubefit.manifests.usage.rewrite import Plan
from kubefit.manifests.usage.strategy import Strategies
from kubefit.manifests.usage.vpa import Checkpoint, VerticalPodAutoscaler
from kubefit.manifests.usage.vpaadmission import (
    Admitted,
    LimitRangeItem,
    Resources,
    admit,
    limit_range_item,
    proportional_limit,
)


@dataclass
class LimitRanges:
    """The namespaces' merged LimitRange items (`getLimitRangeItem`), Container and Pod."""

    scenario: Scenario
    known: dict[tuple[str, str], LimitRangeItem | None] = field(default_factory=dict)

    def item(self, namespace: str, kind: str) -> LimitRangeItem | None:
        key = (namespace, kind)
        if key not in self.known:
            ranges = sorted((lr for lr in self.scenario.objects.of("LimitRange") if lr.meta.namespace == namespace),
                            key=lambda lr: lr.meta.name)
            items = [(_nanos(i.max), _nanos(i.min), _nanos(i.default)) for lr in ranges for i in lr.limits
                     if i.type == kind]
            self.known[key] = limit_range_item(items)
        return self.known[key]


def _nanos(quantities: Any) -> dict[str, int]:
    return {k: q.nanos for k, q in (quantities or {}).items()}


def strongest(vpas: Sequence[VerticalPodAutoscaler]) -> dict[Workload, VerticalPodAutoscaler]:
    """Per target workload, the VPA that controls its pods (`Stronger`: the earliest created, then by name; a
    VPA without a creation time is taken as created first, as a VPA in the files is being created)."""
    out: dict[Workload, VerticalPodAutoscaler] = {}
    for vpa in sorted(vpas, key=lambda v: (v.created if v.created is not None else float("-inf"), v.name)):
        out.setdefault((vpa.namespace, vpa.target_kind, vpa.target_name), vpa)
    return out


def vpa_plan(vpas: Sequence[VerticalPodAutoscaler], checkpoints: Sequence[Checkpoint], scenario: Scenario,
             notes: list[str]) -> Plan:
    """The VPA admission controller's rewrite (see `rewrite`); a VPA without `status.recommendation` gets the
    recommender's from its checkpoints (said in `notes`)."""
    by_target = strongest(vpas)
    by_vpa: dict[tuple[str, str], list[Checkpoint]] = {}
    for c in checkpoints:
        by_vpa.setdefault((c.namespace, c.vpa_name), []).append(c)
    computed = []
    for vpa in by_target.values():
        if vpa.recommendations is None and by_vpa.get((vpa.namespace, vpa.name)):
            vpa.recommendations = recommender.recommend(vpa, by_vpa[(vpa.namespace, vpa.name)])
            computed.append(vpa.key)
    if computed:
        notes.append(f"{len(computed)} VPA(s) without status.recommendation (e.g. {computed[0]}): recommended from "
                     f"their checkpoints as the VPA recommender computes it")
    shadowed = [v.key for v in vpas if by_target.get((v.namespace, v.target_kind, v.target_name)) is not v]
    if shadowed:
        notes.append(f"{len(shadowed)} VPA(s) target a workload an earlier VPA already controls (e.g. {shadowed[0]}): "
                     f"the admission controller uses the earliest created")
    ranges = LimitRanges(scenario)

    def recommend(workload: Workload, pod: Pod, resources: list[Resources]) -> list[Admitted] | None:
        vpa = by_target.get(workload)
        if vpa is None:
            return None
        return admit(vpa, resources, ranges.item(pod.namespace, "Container"), ranges.item(pod.namespace, "Pod"))

    def mode_of(workload: Workload) -> str:
        return by_target[workload].mode

    def source_of(workload: Workload) -> str:
        return f"VerticalPodAutoscaler {by_target[workload].key}"

    return Plan(recommend, mode_of, source_of)


@dataclass
class Targets:
    """The usage strategy's new requests per workload container (nano-units), and the statistics they came from."""

    requests: dict[Workload, dict[str, dict[str, int]]] = field(default_factory=dict)
    stats: dict[Workload, dict[str, dict[str, Any]]] = field(default_factory=dict)
    thin: list[str] = field(default_factory=list)  # containers with few samples


def usage_targets(series: dict[Workload, dict[str, ContainerSeries]], strategies: Strategies,
                  min_samples: int = 1) -> Targets:
    """Each workload container's new cpu and memory requests by the strategies, where it has samples (or a
    checkpoint histogram) of that resource; fewer than `min_samples` samples: none."""
    out = Targets()
    for workload, containers in series.items():
        for name, s in containers.items():
            new: dict[str, int] = {}
            for resource in RESOURCES:
                strategy = strategies.of(resource)
                values = s.values(resource)
                histogram = s.histograms.get(resource)
                if values.shape[0] >= max(min_samples, 1):
                    new[resource] = strategy.request(strategy.statistic(values))
                elif histogram is not None and not histogram.is_empty():
                    new[resource] = strategy.request(strategy.from_histogram(histogram))
                elif values.shape[0]:
                    out.thin.append(f"{label(workload)} container {name!r} {resource}")
            if new:
                out.requests.setdefault(workload, {})[name] = new
    return out


def usage_plan(targets: Targets, strategies: Strategies, scenario: Scenario, mode: str) -> Plan:
    """The strategy's rewrite: the requests set, the limits per `strategies.limits`."""
    ranges = LimitRanges(scenario)

    def recommend(workload: Workload, pod: Pod, resources: list[Resources]) -> list[Admitted] | None:
        wanted = targets.requests.get(workload)
        if not wanted:
            return None
        out = []
        item = ranges.item(pod.namespace, "Container")
        default = (item.default if item is not None else None) or {}
        for res in resources:
            requests = wanted.get(res.name)
            if requests is None:
                continue
            limits: dict[str, Any] = {}
            notes: list[str] = []
            if strategies.limits == "proportional":
                scaled, notes = proportional_limit(res.limits, res.requests, requests, default)
                limits = scaled or {}
            elif strategies.limits == "krr":
                limits = {CPU: None, **({MEMORY: requests[MEMORY]} if MEMORY in requests else {})}
            out.append(Admitted(res.name, dict(requests), limits, notes))
        return out

    def mode_of(workload: Workload) -> str:
        return mode

    def source_of(workload: Workload) -> str:
        return f"usage: cpu {strategies.cpu.text}, memory {strategies.memory.text}"

    return Plan(recommend, mode_of, source_of)
