"""What a change does to each workload: the baseline's run and the candidate's side by side, per workload and in
total, and the pods it moves.

A pod of the baseline and one of the candidate are the same pod when they have the same name, else when they are
the same ordinal of the same workload (its n-th pod in creation order, among those not matched by name): a
changed template renames every pod of a Deployment (its pod-template-hash changes), a StatefulSet keeps its
names. A matched pod moved when its node differs (or it was bound in one run and pending in the other);
`maxPodMoves` counts those, the workloads the change touched included. Per workload: pods, placed, pending, not
created, nodes used and the requests placed (cpu millicores, memory bytes); in total the same and the cluster's
nodes used and allocation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubefit.checks.targets import Owners, Workload
from kubefit.k8s.requests import DemandMemo
from kubefit.k8s.resourcenames import CPU, MEMORY

if TYPE_CHECKING:
    from kubefit.api.core import Pod
    from kubefit.manifests.load import Scenario
    from kubefit.scheduler.simulate import SimulationResult

NOT_CREATED = "not created"
EVICTED = "deleted by preemption"  # a pod of no controller a preemption deleted (a controller's is replaced)


@dataclass
class Placed:
    """Where every pod of one run is at its end: node name, None (pending), `NOT_CREATED` or `EVICTED`, in
    creation order."""

    where: dict[str, str | None] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    workload: dict[str, Workload] = field(default_factory=dict)

    @classmethod
    def of(cls, scenario: Scenario, result: SimulationResult, owners: Owners) -> Placed:
        out = cls()
        names = result.state.node_names
        final = {p.key: names[i] for i, pods in enumerate(result.state.pods) for p in pods}
        never = {s.pod.key for s in result.steps if s.not_created} | {p.key for p, _ in scenario.forbidden}
        for pod in [*scenario.pods, *(s.pod for s in result.steps), *(p for p, _ in scenario.forbidden)]:
            if pod.key in out.where:
                continue
            workload = owners.of(pod)
            gone = pod.key not in final and pod.bound  # a victim of preemption: deleted
            if gone and workload.kind != "Pod":
                continue  # its controller's replacement stands for it (a pod of the run)
            out.pods[pod.key] = pod
            out.workload[pod.key] = workload
            out.where[pod.key] = EVICTED if gone else final.get(pod.key) or (NOT_CREATED if pod.key in never else None)
        return out


def pending_steps(result: SimulationResult) -> list[tuple[Pod, str]]:
    """(pod, message) of every pod the run left pending (what `unschedulable` counts)."""
    return [(s.pod, s.message or "") for s in result.steps
            if s.node is None and s.nominated_node is None and not s.not_created]


def matched(before: Placed, after: Placed) -> list[tuple[str, str]]:
    """(baseline key, candidate key) of the pods both runs have: by name, then by workload and ordinal."""
    pairs = [(k, k) for k in before.where if k in after.where]
    named = {k for k, _ in pairs}
    rest_before: dict[Workload, list[str]] = {}
    for key in before.where:
        if key not in named:
            rest_before.setdefault(before.workload[key], []).append(key)
    taken: dict[Workload, int] = {}
    for key in after.where:
        if key in named:
            continue
        workload = after.workload[key]
        i = taken.get(workload, 0)
        olds = rest_before.get(workload, [])
        if i < len(olds) and workload.kind != "Pod":
            pairs.append((olds[i], key))
            taken[workload] = i + 1
    return pairs


def pod_moves(before: Placed, after: Placed) -> list[dict[str, Any]]:
    """The matched pods whose place differs (bound elsewhere, or bound in one run and pending in the other); a pod
    not created in either run is no move."""
    out = []
    for old, new in matched(before, after):
        a, b = before.where[old], after.where[new]
        if a == b or NOT_CREATED in (a, b):
            continue
        out.append({"pod": new, **({"baselinePod": old} if old != new else {}), "workload": str(after.workload[new]),
                    "baseline": a, "candidate": b})
    return out


@dataclass
class Figures:
    """One workload's (or the cluster's) figures in one run."""

    pods: int = 0
    placed: int = 0
    pending: int = 0
    not_created: int = 0
    nodes: set[str] = field(default_factory=set)
    cpu: int = 0  # millicores requested by the placed pods
    memory: int = 0  # bytes

    def to_dict(self) -> dict[str, int]:
        return {"pods": self.pods, "placed": self.placed, "pending": self.pending, "notCreated": self.not_created,
                "nodes": len(self.nodes), "cpu": self.cpu, "memory": self.memory}


def figures(placed: Placed) -> dict[Workload, Figures]:
    demand = DemandMemo(use_status_resources=False)
    out: dict[Workload, Figures] = {}
    for key, where in placed.where.items():
        f = out.setdefault(placed.workload[key], Figures())
        if where == EVICTED:
            continue  # it no longer exists
        if where == NOT_CREATED:
            f.not_created += 1
            continue
        f.pods += 1
        if where is None:
            f.pending += 1
            continue
        f.placed += 1
        f.nodes.add(where)
        requests = demand(placed.pods[key]).requests
        f.cpu += requests.get(CPU, 0)
        f.memory += requests.get(MEMORY, 0)
    return out


def before_after(before: Placed, after: Placed, base: dict[str, Any], cand: dict[str, Any]) -> dict[str, Any]:
    """Per workload (those whose figures differ first, then the others) and in total, the baseline's figures and
    the candidate's, with the cluster's nodes used and allocation (`base`, `cand`: each run's `metrics()`)."""
    a, b = figures(before), figures(after)
    rows = []
    for workload in sorted(set(a) | set(b)):
        was, now = a.get(workload, Figures()), b.get(workload, Figures())
        rows.append({"workload": str(workload), "baseline": was.to_dict(), "candidate": now.to_dict()})
    rows.sort(key=lambda r: r["baseline"] == r["candidate"])  # stable: the changed ones first, by name
    changed = sum(1 for r in rows if r["baseline"] != r["candidate"])

    def total(f: dict[Workload, Figures], metrics: dict[str, Any]) -> dict[str, Any]:
        whole = Figures()
        for one in f.values():
            whole.pods, whole.placed, whole.pending = whole.pods + one.pods, whole.placed + one.placed, \
                whole.pending + one.pending
            whole.not_created += one.not_created
            whole.cpu, whole.memory = whole.cpu + one.cpu, whole.memory + one.memory
        return {**whole.to_dict(), "nodes": metrics["nodesUsed"], "clusterNodes": metrics["nodes"],
                "allocation": metrics["allocation"]}
    return {"total": {"baseline": total(a, base), "candidate": total(b, cand)}, "changed": changed,
            "workloads": rows}
