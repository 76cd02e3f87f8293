"""`rightsize`: the cluster today and with the new requests, through the exact scheduler, and what it takes.

Given the scenario and the same scenario with the new requests applied (`kubefit.manifests.usage.requestsfrom`:
pending pods rewritten, running pods resized in place or recreated by their controllers), kubefit answers:

- today: the scenario's pending pods scheduled (`simulate`), allocation of cpu and memory per node pool;
- after: the right-sized scenario's queue scheduled — the recreated pods where the profile sends them (`moves`:
  from the node they ran on to the one their replacement gets), the pods that fit nowhere any more (`pending`:
  a recommendation that raises a request, with the FitError) — and allocation per pool again;
- the nodes that can go once the new requests are applied: `consolidate` on the right-sized cluster (its greedy
  removals, verified by `simulate --remove`), and with `baseline` the nodes consolidation frees today, so the
  difference is right-sizing's own;
- the risk per workload container: over the usage window, the share of samples above the new request (cpu:
  throttling when the node is busy; memory: reclaim pressure) and, for memory, above the new limit (the
  container would have been OOM-killed), beside the same shares for today's requests;
- the usage behind each change (p50, p95, max) for the bars of the report.

A node's pool is the first of its labels that names one (`POOL_LABELS`: Karpenter's, GKE's, EKS's, AKS's, then
the instance type); nodes without any are one pool, `-`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubefit.k8s.resourcenames import CPU, MEMORY
from kubefit.manifests.usage.model import AVERAGES, HISTOGRAM, SAMPLE
from kubefit.manifests.usage.owners import label
from kubefit.told import told_keys

if TYPE_CHECKING:
    from kubefit.manifests.load import Scenario
    from kubefit.manifests.usage.requestsfrom import Applied
    from kubefit.planning.consolidate import ConsolidateOptions, Consolidation
    from kubefit.scheduler.config import SchedulerConfiguration
    from kubefit.scheduler.simulate import SimulationResult
    from kubefit.scheduler.state import ClusterState

POOL_LABELS = ("karpenter.sh/nodepool", "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup",
               "kubernetes.azure.com/agentpool", "agentpool", "node.kubernetes.io/instance-type")
NO_POOL = "-"
NANO = 10**9


def pool_of(labels: dict[str, str], pool_label: str | None = None) -> str:
    """The node pool a node's labels name (`pool_label` first when given)."""
    for key in ((pool_label,) if pool_label else ()) + POOL_LABELS:
        if labels.get(key):
            return labels[key]
    return NO_POOL


def allocation_by_pool(state: ClusterState, pool_label: str | None = None) -> dict[str, Any]:
    """Requested and allocatable cpu (millicores) and memory (bytes), and their ratio in percent, for the whole
    cluster and per pool (nodes removed from the state not counted)."""
    removed = state.removed if state.removed is not None else np.zeros(len(state.nodes), dtype=bool)
    present = np.flatnonzero(~removed)
    pools: dict[str, list[int]] = {}
    for i in present.tolist():
        pools.setdefault(pool_of(state.nodes[i].labels, pool_label), []).append(i)

    def totals(rows: list[int]) -> dict[str, Any]:
        out: dict[str, Any] = {"nodes": len(rows)}
        for r in (CPU, MEMORY):
            col = state.index[r]
            req = int(state.requested[rows, col].sum()) if rows else 0
            cap = int(state.allocatable[rows, col].sum()) if rows else 0
            out[r] = {"requested": req, "allocatable": cap, "percent": round(100.0 * req / cap, 2) if cap else None}
        return out
    return {"cluster": totals(present.tolist()), "pools": {p: totals(rows) for p, rows in sorted(pools.items())}}


@dataclass
class Rightsizing:
    """The answer of `kubefit rightsize`; `to_dict()` is `-o json`."""

    source: dict[str, Any]
    changes: list[dict[str, Any]]
    resizes: list[dict[str, Any]]
    today: dict[str, Any]
    after: dict[str, Any]
    moves: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    risk: list[dict[str, Any]]
    consolidation: Consolidation | None = None
    baseline: Consolidation | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] | None = None
    inputs: dict | None = None

    @property
    def nodes_before(self) -> int:
        return int(self.today["allocation"]["cluster"]["nodes"])

    @property
    def nodes_after(self) -> int:
        if self.consolidation is not None:
            return self.consolidation.nodes_after
        return int(self.after["allocation"]["cluster"]["nodes"])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "usage": self.source, "changes": self.changes, "resizes": self.resizes, "today": self.today,
            "after": self.after, "moves": self.moves, "pending": self.pending, "risk": self.risk,
            "nodesBefore": self.nodes_before, "nodesAfter": self.nodes_after, "pendingPods": len(self.pending),
            "podsRecreated": sum(1 for m in self.moves if m.get("replacement")),
            "consolidation": None if self.consolidation is None else _consolidation(self.consolidation),
        }
        if self.baseline is not None:
            out["baseline"] = _consolidation(self.baseline)
            out["nodesFreedByRightsizing"] = self.baseline.nodes_after - self.nodes_after
        return {**out, **told_keys(self.warnings, None, self.inputs)}


def _consolidation(c: Consolidation) -> dict[str, Any]:
    """What a consolidation answered, without its inputs and warnings (those are the result's)."""
    data = c.to_dict()
    return {k: v for k, v in data.items() if k not in ("warnings", "inputs")}


def _placed(result: SimulationResult) -> dict[str, tuple[str | None, str | None]]:
    """Each pod the run scheduled: (the node it got or None, the FitError when none); the last step wins."""
    names = result.state.node_names
    return {s.pod.key: (None if s.node is None else names[s.node], s.message) for s in result.steps}


def rightsize(scenario: Scenario, applied: Applied, config: SchedulerConfiguration, today_state: ClusterState,
              after_state: ClusterState, *, options: ConsolidateOptions, consolidate: bool = True,
              baseline: bool = False, pool_label: str | None = None, after_scenario: Scenario | None = None,
              after_config: SchedulerConfiguration | None = None) -> Rightsizing:
    """The answer (see the module's docstring): `today_state` and `after_state` are the scenario and the
    right-sized scenario compiled (changed here)."""
    from kubefit.planning.consolidate import consolidate as run_consolidate
    from kubefit.scheduler.simulate import simulate

    after_scenario = after_scenario or applied.rightsized.scenario
    today_consolidation = None
    if baseline and consolidate:
        today_consolidation = run_consolidate(scenario, config, options, state=today_state.copy())
    today_run = simulate(today_state, config, scenario.pending_pods, tie_break=options.tie_break, seed=options.seed,
                         stranded=False, label="today")
    after_run = simulate(after_state, after_config or config, after_scenario.pending_pods,
                         tie_break=options.tie_break, seed=options.seed, stranded=False, label="after")
    today, after = _placed(today_run), _placed(after_run)
    moves, pending = _moves_and_pending(applied, today, after, scenario)
    result = Rightsizing(
        source=_source(applied), changes=[c.to_dict() for c in applied.rightsized.changes],
        resizes=[r.to_dict() for r in applied.rightsized.resizes],
        today={"allocation": allocation_by_pool(today_run.state, pool_label),
               "pending": sorted(k for k, (node, _) in today.items() if node is None)},
        after={"allocation": allocation_by_pool(after_run.state, pool_label),
               "pending": sorted(k for k, (node, _) in after.items() if node is None)},
        moves=moves, pending=pending, risk=risk(applied), notes=list(applied.notes))
    result.notes += _too_large(applied, after_run.state)
    if consolidate:  # on the cluster the run left (what consolidate's own first simulation would make again)
        result.consolidation = run_consolidate(_as_bound(after_scenario, after_run), after_config or config,
                                               options, state=after_run.state)
        result.notes += [n for n in result.consolidation.notes if not n.endswith(
            "scheduled first: today's cluster is the scenario after kube-scheduler placed them")
            and "scheduled first: today's cluster" not in n]
    result.baseline = today_consolidation
    return result


def _as_bound(scenario: Scenario, run: SimulationResult) -> Scenario:
    """The scenario as the run left it: every pod on the node it runs on (the queue's pods bound where the run
    placed them, the pods it preempted gone), the pods it could not place still pending, terminal pods kept — so
    that consolidating it starts from that cluster instead of scheduling the queue again (with the same
    tie-break and seed, the same placements)."""
    from dataclasses import replace

    from kubefit.manifests.load import TERMINAL_PHASES

    state = run.state
    running = [p if p.node_name == node.name else replace(p, node_name=node.name, queued=False)
               for node, pods in zip(state.nodes, state.pods, strict=True) for p in pods]
    placed = {p.key for p in running}
    waiting = [p for p in scenario.pending_pods if p.key not in placed]
    terminal = [p for p in scenario.pods if p.bound and p.phase in TERMINAL_PHASES]
    return replace(scenario, pods=[*running, *terminal, *waiting])


def _moves_and_pending(applied: Applied, today: dict, after: dict, scenario: Scenario
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The recreated pods (from the node they ran on to where their replacement went, None: pending) and the
    pods the right-sized cluster leaves pending that today's places (each with its FitError)."""
    moves, pending = [], []
    replaced: dict[str, str] = {}
    for old, new, refused in applied.rightsized.recreated:
        if new is None:
            moves.append({"pod": old.key, "replacement": None, "from": old.node_name, "to": None,
                          "why": "no controller recreates it"})
            continue
        replaced[new.key] = old.key
        if refused is not None:
            moves.append({"pod": old.key, "replacement": new.name, "from": old.node_name, "to": None,
                          "notCreated": refused})
            continue
        node, message = after.get(new.key, (None, None))
        moves.append({"pod": old.key, "replacement": new.name, "from": old.node_name, "to": node})
        if node is None:
            pending.append({"pod": new.key, "replaces": old.key, "ranOn": old.node_name, "message": message or ""})
    for key, (node, message) in after.items():
        if node is None and key not in replaced and today.get(key, (None,))[0] is not None:
            pending.append({"pod": key, "replaces": None, "ranOn": None, "message": message or ""})
    return moves, pending


def _source(applied: Applied) -> dict[str, Any]:
    """What usage was read: formats, files, window, samples, containers, VPAs."""
    data = applied.data
    return {"formats": data.formats, "sources": data.sources, "window": data.window(), "samples": data.samples,
            "containers": len(data.containers), "verticalPodAutoscalers": len(data.vpas),
            "checkpoints": len(data.checkpoints),
            "workloads": sum(len(v) for v in applied.attributed.series.values())}


def _stats(values: np.ndarray) -> dict[str, float] | None:
    if values.shape[0] == 0:
        return None
    p50, p95 = np.percentile(values, [50, 95])
    return {"p50": float(p50), "p95": float(p95), "max": float(values.max()), "samples": int(values.shape[0])}


RELATIVE_NOISE = 1e-9  # a rate Prometheus extrapolates (0.25000000000000006 cores) is not above a 250m request


def _share(values: np.ndarray, threshold: float | None) -> float | None:
    """The share of samples above `threshold` by more than float rounding (a billionth of it); None: no
    threshold, no data."""
    if threshold is None or values.shape[0] == 0:
        return None
    above = np.count_nonzero(values > threshold * (1.0 + RELATIVE_NOISE))
    return round(float(above) / values.shape[0], 6)


def _above(values: np.ndarray, hist: Any, before: float | None, after: float | None) -> tuple[Any, Any]:
    """The shares of the usage above `before` and `after`: of the samples, else of a checkpoint's histogram
    (None without either, or without the threshold)."""
    if values.shape[0]:
        return _share(values, before), _share(values, after)
    if hist is not None:
        return tuple(None if t is None else hist.share_above(t) for t in (before, after))
    return None, None


def _risk_entry(values: np.ndarray, hist: Any, change: Any, resource: str) -> dict[str, Any]:
    """One resource of a container's risk: the requests and usage, the shares above the requests (and, for
    memory, the limits)."""
    before = _cores_or_bytes(change.requests_before.get(resource))
    after = _cores_or_bytes(change.requests_after.get(resource))
    entry: dict[str, Any] = {"requestBefore": before, "requestAfter": after, "usage": _stats(values)}
    if not values.shape[0] and hist is not None:
        entry["usage"] = {"p50": hist.percentile(0.5), "p95": hist.percentile(0.95), "max": hist.percentile(1.0),
                          "samples": None}
    if values.shape[0] or hist is not None:
        entry["overRequestBefore"], entry["overRequestAfter"] = _above(values, hist, before, after)
    if resource == MEMORY:
        entry["limitBefore"] = _cores_or_bytes(change.limits_before.get(MEMORY))
        entry["limitAfter"] = _cores_or_bytes(change.limits_after.get(MEMORY))
        if values.shape[0] or hist is not None:
            entry["overLimitBefore"], entry["overLimitAfter"] = _above(values, hist, entry["limitBefore"],
                                                                       entry["limitAfter"])
    return entry


_NOTES = {SAMPLE: "one sample: an instant, not a window",
          AVERAGES: "averages per step (OpenCost): peaks between them are not seen",
          HISTOGRAM: "the VPA checkpoint's decayed histogram, to its bucket resolution"}


def risk(applied: Applied) -> list[dict[str, Any]]:
    """Per changed workload container: its usage (p50, p95, max: cores and bytes), and the share of samples above
    today's and the new request (and, for memory, the limit), over the usage window."""
    series = applied.attributed.series
    out = []
    for change in applied.rightsized.changes:
        by = series.get(change.workload, {})
        for c in change.containers:
            s = by.get(c.name)
            row: dict[str, Any] = {"workload": label(change.workload), "container": c.name,
                                   "measured": None if s is None else s.measured}
            for resource in (CPU, MEMORY):
                values = s.values(resource) if s is not None else np.empty(0)
                row[resource] = _risk_entry(values, None if s is None else s.histograms.get(resource), c, resource)
            if s is None:
                row["note"] = "no usage of this container: the risk is not evaluated (a VPA recommendation alone)"
            elif s.measured in _NOTES:
                row["note"] = _NOTES[s.measured]
            out.append(row)
    return out


def _cores_or_bytes(nanos: int | None) -> float | None:
    return None if nanos is None else nanos / NANO


def _too_large(applied: Applied, state: ClusterState) -> list[str]:
    """A new request larger than every node's allocatable: named (its pods can run nowhere)."""
    notes = []
    for change in applied.rightsized.changes:
        for c in change.containers:
            for resource in (CPU, MEMORY):
                asked = c.requests_after.get(resource)
                if asked is None:
                    continue
                col = state.index.get(resource)
                if col is None or not len(state):
                    continue
                units = -((-asked) // (10**6 if resource == CPU else NANO))
                if units > int(state.allocatable[:, col].max()):
                    notes.append(f"{label(change.workload)} container {c.name!r}: the new {resource} request is "
                                 f"larger than any node's allocatable: its pods fit nowhere")
    return notes
