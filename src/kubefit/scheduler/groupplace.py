"""One pod group placed whole, outside `simulate`'s queue: the group cycle `capacity` (copies of a whole group),
`consolidate` (a gang's pods moved off a node) and `timeline` (a group that arrived) run for a group.

It is the cycle `groupqueue.py` runs (`groupcycle.GroupRun.algorithm`, then `submit`), with what these verbs add:

- no preemption: the cycle runs without PostFilter (the WAP evaluation's `runWithoutPostFilters`), as `capacity`
  and `consolidate` place pods beside the running ones and evict no one;
- "whole": with `whole=True` a group binds only when every one of its pods fits (a copy of a gang, a gang moved off
  a node); else as kube-scheduler binds it (a feasible group, `minCount` met, binds the pods that fitted).

GangScheduling's PreEnqueue is checked first (`podgroups.GroupTable.pre_enqueue`'s quorum: `minCount` pods of the
gang known, bound ones included); a group that never enters the queue binds nothing and says why. v1.35 has no
group cycle (`groupqueue.PermitGangs`): its pods are scheduled one by one and Permit holds them until `minCount`
are assumed, so the group binds when that many fitted in turn, and nothing when fewer did (the Permit timeout).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubefit.api.core import Pod
from kubefit.api.workload import PodGroup
from kubefit.k8s.version import POD_GROUP_CYCLE
from kubefit.scheduler.engine import Engine, Shape
from kubefit.scheduler.groupcycle import GroupResult, GroupRun, scheduler_name_error, submit
from kubefit.scheduler.groupqueue import _fit_reasons
from kubefit.scheduler.podgroups import WAITING_FOR_QUORUM, GroupKey, WorkloadGates, group_key, member_order
from kubefit.scheduler.state import ClusterState


@dataclass
class GroupPlacement:
    """Where one group's pods went: `nodes[i]` for `pods[i]` (cycle order), None where it did not bind; `fitted`:
    the pods that found a node in the cycle (bound or not); `why` one line a person reads."""

    label: str  # namespace/name
    spec: PodGroup | None
    pods: list[Pod]
    nodes: list[int | None] = field(default_factory=list)
    shapes: list[Shape | None] = field(default_factory=list)
    placed: list[Pod | None] = field(default_factory=list)  # the pods as bound (`as_bound`'s), None: not bound
    fitted: int = 0
    why: str = ""

    @property
    def bound(self) -> int:
        return sum(1 for n in self.nodes if n is not None)

    @property
    def whole(self) -> bool:
        """Every pod of the group bound."""
        return bool(self.pods) and self.bound == len(self.pods)


def running_members(state: ClusterState, key: GroupKey) -> int:
    """The pods of group `key` bound on the state's nodes (a removed node's not counted): what counts towards its
    `minCount` besides the pods being placed."""
    removed = state.removed
    return sum(1 for n, pods in enumerate(state.pods) if removed is None or not removed[n]
               for p in pods if group_key(p) == key)


def group_label(spec: PodGroup | None, label: str) -> str:
    """`gang ns/name`, `basic group ns/name` (a group whose object does not exist: `group ns/name`)."""
    if spec is None:
        return f"group {label}"
    return f"gang {label}" if spec.policy.gang else f"basic group {label}"


def place_group(engine: Engine, key: GroupKey, spec: PodGroup | None, pods: Sequence[Pod], *, bound: int = 0,
                whole: bool = True, as_bound: Callable[[Pod, int], Pod] | None = None) -> GroupPlacement:
    """Schedule the group's pending `pods` on `engine` in one group cycle (v1.35: pod by pod), without preemption,
    and bind what the cycle binds (`whole`: only when every pod fits). `bound`: pods of the group already on nodes
    (they count towards `minCount`); `as_bound(pod, node)`: the pod as it is bound there (default the pod)."""
    label = f"{key[0]}/{key[1]}"
    quorum = max(spec.policy.min_count - bound, 1) if spec is not None and spec.policy.gang else 1
    order = member_order(list(pods), quorum)
    out = GroupPlacement(label, spec, order, [None] * len(order), [None] * len(order), [None] * len(order))
    refused = _refused(engine, spec, order, bound, label)
    if refused is not None:
        out.why = refused
        return out
    version = engine.config.version
    if version is not None and version.has(POD_GROUP_CYCLE):
        run, result = _group_cycle(engine, key, spec, order, bound)
        chosen = [(o.node, o.shape) if o.node is not None else (None, None) for o in submit(run, result)]
        out.fitted = sum(1 for r in result.pods if r.node is not None)
        reasons = _fit_reasons(result) or result.message
    else:
        chosen, out.fitted, reasons = _pod_by_pod(engine, spec, order, bound)
    if whole and any(node is None for node, _shape in chosen):
        chosen = [(None, None)] * len(order)
    for i, (node, shape) in enumerate(chosen):
        if node is not None:
            pod = order[i] if as_bound is None else as_bound(order[i], node)
            engine.bind(node, shape, pod)
            out.nodes[i], out.shapes[i], out.placed[i] = node, shape, pod
    out.why = _why(out, bound, reasons)
    return out


def _refused(engine: Engine, spec: PodGroup | None, pods: Sequence[Pod], bound: int, label: str) -> str | None:
    """Why the group never gets a cycle: no PodGroup, GangScheduling's quorum, pods naming different schedulers."""
    if not pods:
        return f"{group_label(spec, label)}: no pod to place"
    if spec is None:
        return f"{group_label(spec, label)}: never queued (its PodGroup does not exist)"
    fw = engine.framework(pods[0])
    gang = "GangScheduling" in fw.profile.extension_points.get("preEnqueue", ())
    if gang and spec.policy.gang and bound + len(pods) < spec.policy.min_count:
        return (f"{group_label(spec, label)}: {bound + len(pods)} of minCount {spec.policy.min_count} pods exist: "
                f"never queued ({WAITING_FOR_QUORUM})")
    error = scheduler_name_error(list(pods))
    return None if error is None else f"{group_label(spec, label)}: {error}"


def _group_cycle(engine: Engine, key: GroupKey, spec: PodGroup | None, pods: Sequence[Pod],
                 bound: int) -> tuple[GroupRun, GroupResult]:
    """`podGroupCycle` on the engine's state, PostFilter left out; the engine's cycle count moved past its pods."""
    fw = engine.framework(pods[0])
    points = fw.profile.extension_points
    start = engine.cycles
    run = GroupRun(engine, key, spec, pods, bound, WorkloadGates.of(engine.config.version),
                   gang_permit="GangScheduling" in points.get("permit", ()),
                   placement_plugins=(bool(points.get("placementGenerate")),
                                      tuple((p.name, p.weight) for p in fw.profile.placement_score_plugins)),
                   post_filters=False, cycle_count=start + len(pods))
    result = run.algorithm()
    engine.cycles = start + len(pods)
    return run, result


def _pod_by_pod(engine: Engine, spec: PodGroup | None, pods: Sequence[Pod],
                bound: int) -> tuple[list[tuple[int | None, Shape | None]], int, str]:
    """v1.35: each pod its own cycle, assumed where it fits (Permit holds it); the gang binds once `minCount` are
    assumed or bound, else none does (Permit's timeout unreserves them). Also how many fitted, and the first
    FitError (its filter part)."""
    placed: list[tuple[int | None, Shape | None]] = []
    error = ""
    for pod in pods:
        decision = engine.cycle(pod)
        if decision.node is None:
            placed.append((None, None))
            error = error or engine.fit_error(decision.shape).rstrip(".")
            continue
        engine.bind(decision.node, decision.shape, pod)
        placed.append((decision.node, decision.shape))
    for pod, (node, shape) in zip(reversed(pods), reversed(placed), strict=True):
        if node is not None:
            engine.unbind(node, shape, pod)
    need = spec.policy.min_count if spec is not None and spec.policy.gang else 1
    fitted = sum(1 for node, _s in placed if node is not None)
    if bound + fitted < need:
        return [(None, None)] * len(pods), fitted, error
    return placed, fitted, error


def _why(placement: GroupPlacement, bound: int, reasons: str) -> str:
    """`gang ns/pg: 4 of 4 pods placed (minCount 4)`; `gang ns/pg: 2 of minCount 4 fit: 3 nodes Insufficient cpu`."""
    spec, head = placement.spec, group_label(placement.spec, placement.label)
    need = f"minCount {spec.policy.min_count}" if spec is not None and spec.policy.gang else \
        f"{len(placement.pods)} pods"
    tail = f": {reasons}" if reasons else ""
    if placement.whole:
        return f"{head}: {len(placement.pods)} of {len(placement.pods)} pods placed ({need})"
    if spec is not None and spec.policy.gang and bound + placement.fitted < spec.policy.min_count:
        return f"{head}: {bound + placement.fitted} of {need} fit{tail}"
    return f"{head}: {placement.fitted} of its {len(placement.pods)} pods fit ({need}){tail}"
