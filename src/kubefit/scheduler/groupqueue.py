"""The pod groups of a simulation: one queue entry per group, its cycles, its retries (v1.36+, GenericWorkload on).

A group enters the queue where its first pod would (queue order: priority, then arrival) and takes its cycle there
for all its pending pods (`ScheduleOne` → `podGroupInfoForPod` pops them all; `groupcycle.py`). Before that,
GangScheduling's PreEnqueue keeps a group out of the queue while its PodGroup does not exist or fewer than its
`minCount` pods do (`podgroups.GroupTable.pre_enqueue`): its pods stay pending with that message (`gatedBy`).

After its cycle a group's pods that did not bind go back to the queue, and kube-scheduler retries them after a
backoff whatever happened meanwhile (`determineSchedulingHintForInFlightPod`: a pod group member is always
`queueAfterBackoff`): kubefit retries such a group once the queue holding it has been worked through, as long as
the cluster changed since its previous attempt (the same cluster gives the same answer), until nothing changes. A
group waiting on the preemption it started is retried at once (its pods are nominated: kubefit gives no other pod a
chance at the room freed, as it does for a single pod's preemption).

Each group's outcome (`GroupRecord`) is the simulation's `groups` (in `-o json`: `podGroups`): its pods, how many
bound, the PodGroupScheduled condition kube-scheduler wrote, the cycles it took, and one line saying why
("gang ns/pg: 5 of minCount 8 fit: 3 nodes Insufficient nvidia.com/gpu").
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubefit.api.core import Pod
from kubefit.api.workload import PodGroup
from kubefit.k8s.version import (
    COMPOSITE_POD_GROUP_CYCLE,
    PLACEMENT_FEASIBLE,
    POD_GROUP_CYCLE,
    POD_GROUP_POST_FILTER_ONLY,
    POD_GROUP_REQUEUE_ACTIVE,
    POD_GROUP_VALIDATION,
)
from kubefit.scheduler.compositecycle import (
    NOT_SIMULATED_PREEMPTION,
    CompositeRun,
    Forest,
    RootKey,
    tree_ready,
)
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.feasiblecycle import FeasibleRun, submit_feasible
from kubefit.scheduler.groupcycle import (
    CLEAR,
    ERROR,
    KEEP,
    SUCCESS,
    UNSCHEDULABLE,
    GroupResult,
    GroupRun,
    PodOutcome,
    condition,
    scheduler_name_error,
    submit,
    updated_condition,
)
from kubefit.scheduler.podgroups import GroupKey, GroupTable, group_key, member_order, validation_error
from kubefit.scheduler.workloadpreemption import UNRESOLVABLE, by_node, preempt_for_group, preempt_once

GATED_BY = "GangScheduling"
IMMEDIATE_RETRIES = 64  # waiting-on-preemption retries of one entry before kubefit stops (each evicts a victim)


@dataclass
class GroupRecord:
    """One pod group's outcome in a simulation: what every verb that reports groups reads.

    In `-o json` (`SimulationResult.to_dict()["podGroups"]`, one object per group, gates on): `namespace`, `name`,
    `policy` (`gang` / `basic`, null when its PodGroup does not exist), `minCount` (a gang's), `pods` (how many the
    group has in the run, bound before it included), `bound` and `pending` (at the end), `nodes` (the bound pods'
    nodes, sorted), `cycles` (pod group cycles it took), `gatedBy`/`gatedMessage` (PreEnqueue kept it out of the
    queue), `condition` (`{type, status, reason, message}` as kube-scheduler last wrote it: PodGroupScheduled, v1.37
    PodGroupInitiallyScheduled), `placement` (`key=value` it bound in), `victims` (pods its cycles preempted), and
    `why`, one line. The steps of its pods carry `podGroup` and `cycle` (pods bound in one cycle bound together).
    """

    namespace: str
    name: str
    policy: str  # "gang" / "basic" ("" when its object does not exist)
    min_count: int | None
    pods: list[str] = field(default_factory=list)  # every pod of the group in the run (bound before, pending)
    bound: list[tuple[str, str]] = field(default_factory=list)  # (pod, node) bound at the end, the run's and before
    pending: list[str] = field(default_factory=list)
    gated: str | None = None  # PreEnqueue's message: the group never entered the queue
    condition: tuple[str, str, str] | None = None  # PodGroupScheduled (status, reason, message) as last written
    cycles: int = 0
    victims: list[str] = field(default_factory=list)  # pods its cycles preempted (namespace/name)
    placement: str | None = None  # the placement it bound in, `key=value` of its topology constraint
    last_fit: int = 0  # pods that fitted in its last cycle (assumed there)
    why: str = ""
    condition_type: str = "PodGroupScheduled"
    timed_out: bool = False  # v1.35: its pods waited at Permit, holding nodes, until the timeout rejected them

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"namespace": self.namespace, "name": self.name, "policy": self.policy or None}
        if self.min_count is not None:
            out["minCount"] = self.min_count
        out.update({"pods": len(self.pods), "bound": len(self.bound), "pending": len(self.pending),
                    "nodes": sorted(node for _pod, node in self.bound), "cycles": self.cycles})
        if self.gated is not None:
            out["gatedBy"], out["gatedMessage"] = GATED_BY, self.gated
        if self.condition is not None:
            status, reason, message = self.condition
            out["condition"] = {"type": self.condition_type, "status": status, "reason": reason,
                                **({"message": message} if message else {})}
        if self.placement is not None:
            out["placement"] = self.placement
        if self.victims:
            out["victims"] = sorted(self.victims)
        out["why"] = self.why
        return out


@dataclass
class Hooks:
    """What a group's cycles do to the simulation: `bind(pod, node, result)` a pod and record its step;
    `fail(pod, outcome, ...)` record a pending pod's step; `evict(victims by node, step)` delete preemption victims
    (their controllers replace them)."""

    bind: Callable[..., Any]
    fail: Callable[..., Any]
    evict: Callable[[dict[int, list[Pod]], Any], None]
    steps: list


class GroupQueue:
    """The groups of one simulation (see the module's text); `take(pod)` is called for each queued pod in order."""

    def __init__(self, engine: Engine, table: GroupTable, queued: Sequence[Pod]) -> None:
        self.engine, self.table = engine, table
        served = {p.scheduler_name for p in engine.config.profiles}
        self.members: dict[GroupKey, list[Pod]] = {}
        for pod in queued:
            key = group_key(pod)
            if key is not None and pod.scheduler_name in served:
                self.members.setdefault(key, []).append(pod)
        self.quorum: dict[GroupKey, int] = {}
        self.bound = Counter(k for pods in engine.state.pods for p in pods if (k := group_key(p)) is not None)
        self.records: dict[GroupKey, GroupRecord] = {}
        self.entered: set[GroupKey] = set()
        self.nominated: dict[str, str] = {}  # pod key → nominated node name
        # the state's version after the group's last attempt and the pods it tried: the same cluster and pods give
        # the same answer (a group that bound some of its pods tries the others on their own: another answer)
        self.seen: dict[GroupKey, tuple[int, frozenset[str]]] = {}
        # the version steps of cycles that changed nothing (pods assumed, then forgotten, the group unschedulable):
        # no event of the cluster, so no reason for another group to be tried again (`changes`)
        self.unchanged = 0
        self.retrying: list = []  # entries (groups, hierarchies) with pods left to retry, in the order they failed
        self.leaf_results: dict[GroupKey, GroupResult] = {}  # a hierarchy's PodGroups: their last cycle's result
        self.cycles = 0
        # v1.37's cycle (`feasiblecycle.py`), chosen once: PlacementFeasible, PodGroupPostFilter alone, the group
        # requeued to the active queue after a success, its pods validated first
        version = engine.config.version
        self.feasible = version is not None and version.has(PLACEMENT_FEASIBLE)
        self.post_filter_only = version is not None and version.has(POD_GROUP_POST_FILTER_ONLY)
        self.requeue_active = version is not None and version.has(POD_GROUP_REQUEUE_ACTIVE)
        self.validate = version is not None and version.has(POD_GROUP_VALIDATION)
        self.policy_gate = version is not None and version.gate("PodGroupPreemptionPolicy")
        self.forest = Forest.build(engine.state.objects, table.specs) if version is not None and version.has(
            COMPOSITE_POD_GROUP_CYCLE) else None  # CompositePodGroup hierarchies: one entry each (`compositecycle.py`)
        self.said: list[str] = []  # what the run found to tell of its groups
        self.bound_pods: dict[GroupKey, list[Pod]] = {}  # the group's pods bound to nodes (validated, v1.37)
        for pods in engine.state.pods:
            for pod in pods:
                if (k := group_key(pod)) is not None:
                    self.bound_pods.setdefault(k, []).append(pod)
        self._records_for_bound()

    @classmethod
    def of(cls, engine: Engine, queued: Sequence[Pod]) -> GroupQueue | None:
        """The run's groups, None when it has none (gates off, or no pod names a group): nothing changes then."""
        version = engine.config.version
        if version is None or not version.has(POD_GROUP_CYCLE) or not any(group_key(p) is not None for p in queued):
            return None  # (v1.35 schedules a gang's pods one by one: `PermitGangs`)
        table = GroupTable.build(engine.state.objects, engine.config.version,
                                 [*engine.state.all_pods(), *queued])
        return cls(engine, table, queued) if table.gates.generic else None

    def notes(self) -> list[str]:
        """What the run should say of its groups: what kubefit did not simulate of them (the cycles are the version's)."""
        return list(self.said)

    def _records_for_bound(self) -> None:
        state = self.engine.state
        for node, pods in enumerate(state.pods):
            for pod in pods:
                key = group_key(pod)
                if key is not None:
                    self._record(key).bound.append((pod.name, state.nodes[node].name))
                    self._record(key).pods.append(pod.name)
        for key, pods in self.members.items():
            self._record(key).pods.extend(p.name for p in pods)

    def _record(self, key: GroupKey) -> GroupRecord:
        record = self.records.get(key)
        if record is None:
            spec = self.table.specs.get(key)
            record = self.records[key] = GroupRecord(
                key[0], key[1], "" if spec is None else spec.policy.kind,
                spec.policy.min_count if spec is not None and spec.policy.gang else None)
            if spec is not None and spec.api_version.endswith(("v1beta1", "v1alpha3")):
                record.condition_type = "PodGroupInitiallyScheduled"
            if spec is not None:  # the condition its status already has (a group scheduled before)
                record.condition = next(((c.status, c.reason, c.message) for c in spec.conditions
                                         if c.type == record.condition_type), None)
        return record

    # ------------------------------------------------------------------ the queue
    def takes(self, pod: Pod) -> GroupKey | RootKey | None:
        """The entry `pod` belongs to: its group's, its hierarchy's (v1.37 CompositePodGroup), None: its own."""
        key = group_key(pod)
        if key is None or key not in self.members:
            return None
        return self.forest.root_of.get(key, key) if self.forest is not None else key

    def enter(self, key: GroupKey | RootKey, hooks: Hooks) -> None:
        """The entry at its first pod in queue order (nothing for its other pods)."""
        if key in self.entered:
            return
        self.entered.add(key)
        first = self._pending(key)[0]
        gate = self._pre_enqueue(key, first)
        if gate is not None:
            for leaf in self._leaves(key):
                record = self._record(leaf)
                record.gated = gate
                record.pending = [p.name for p in self.members.get(leaf, ())]
                for pod in self.members.get(leaf, ()):
                    hooks.fail(pod, PodOutcome(pod, None, gate), gated=GATED_BY, group=record.key)
                record.why = self._why(leaf, None)
            return
        self._cycles(key, hooks)

    def _leaves(self, key: GroupKey | RootKey) -> list[GroupKey]:
        """The groups of an entry: a hierarchy's PodGroups with pods in the run, or the group itself."""
        if not isinstance(key, RootKey):
            return [key]
        return [leaf.key for leaf in self.forest.roots[key].leaves() if leaf.key in self.members]

    def retry_next(self, hooks: Hooks) -> bool:
        """Retry the first group still pending whose cluster changed since its last attempt; False: none is left."""
        while self.retrying:
            key = self.retrying.pop(0)
            pending = self._pending(key)
            if pending and self.seen.get(key) != (self.changes(), frozenset(p.key for p in pending)):
                self._cycles(key, hooks)
                return True
        return False

    def _pre_enqueue(self, key: GroupKey | RootKey, first: Pod) -> str | None:
        fw = self.engine.framework(first)
        if "GangScheduling" not in fw.profile.extension_points.get("preEnqueue", ()):
            return None
        if isinstance(key, RootKey):  # `checkCPGHierarchyReadiness`
            ready = tree_ready(self.forest.roots[key], self.table.known)
            return None if ready else f'waiting for composite pod group "{key.name}" tree to meet quorum'
        if self.forest is not None and key in self.forest.broken:
            return self.forest.broken[key]
        return self.table.pre_enqueue(key)

    def _pending(self, key: GroupKey | RootKey) -> list[Pod]:
        out = []
        for leaf in self._leaves(key):
            bound = {name for name, _node in self._record(leaf).bound}
            out += [p for p in self.members.get(leaf, ()) if p.name not in bound]
        return out

    # ------------------------------------------------------------------ cycles
    def changes(self) -> int:
        """How many times the cluster changed: the state's version, less the steps of cycles that left it as it was
        (a group retried because another group's unschedulable cycle assumed and forgot its pods would make the two
        retry each other for ever; kube-scheduler requeues a group on cluster events, and such a cycle is none)."""
        return self.engine.state.version - self.unchanged

    def _cycles(self, key: GroupKey, hooks: Hooks) -> None:
        """The group's cycle, again at once while it waits on the preemption it started."""
        for _ in range(IMMEDIATE_RETRIES):
            tried = frozenset(p.key for p in self._pending(key))
            before = self.engine.state.version
            result = self._cycle(key, hooks)
            again = result is not None and (result.waiting or (self.requeue_active and result.status == SUCCESS))
            if result is None or (result.status != SUCCESS and not result.waiting):  # nothing bound, nothing evicted
                self.unchanged += self.engine.state.version - before
            if not again or not self._pending(key):
                break
        for leaf in self._leaves(key):
            record = self.records[leaf]
            record.pending = [p.name for p in self._pending(leaf)]
            record.why = self._why(leaf, self.leaf_results.get(leaf, result))
        self.seen[key] = (self.changes(), tried)
        if self._pending(key) and (result is None or result.status != ERROR) and key not in self.retrying:
            self.retrying.append(key)

    def _cycle(self, key: GroupKey | RootKey, hooks: Hooks) -> GroupResult | None:
        if isinstance(key, RootKey):
            return self._composite_cycle(key, hooks)
        engine, record = self.engine, self.records[key]
        spec = self.table.specs.get(key)
        queued = self._pending(key)
        pods = [self._with_nomination(p) for p in member_order(queued, self._quorum(key, spec))]
        self.cycles += 1
        record.cycles += 1
        label = record.key
        self._mark_retried(hooks, pods)
        error = self._pods_error(key, spec, pods)
        if error is not None:
            for pod in pods:
                hooks.fail(pod, PodOutcome(pod, None, error, "SchedulerError", CLEAR), group=label, cycle=self.cycles)
            if self.validate:  # `updatePodGroupConditionWithError` (kubernetes#140183)
                record.condition = updated_condition(record.condition, ("False", "SchedulerError", error))
            return None
        fw = engine.framework(pods[0])
        points = fw.profile.extension_points
        start = engine.cycles
        run = self._run(key, spec, pods, points, [(p.name, p.weight) for p in fw.profile.placement_score_plugins],
                        start + len(pods))
        result = run.algorithm()
        before_post_filter = result.message
        wap = None
        if self.post_filter_only:
            if result.status == UNSCHEDULABLE:  # `RunPodGroupPostFilterPlugins` + `applyPodGroupPostFilterResult`
                wap = preempt_once(run, self.table.specs, self.policy_gate)
                if wap.status == SUCCESS:
                    result.waiting, result.nominations = True, dict(wap.nominations)
                if wap.status == ERROR:
                    result.status, result.message, result.cause = ERROR, wap.message, None
                elif wap.message:
                    result.message = f"{result.message}, {wap.message}"
        elif self.table.gates.preemption and result.status == UNSCHEDULABLE:
            wap = preempt_for_group(run, self.table.specs)
            if wap.status == "Success":
                result.waiting = True
            elif wap.status == ERROR:
                result.status, result.message = ERROR, wap.message
            else:
                result.message = f"{result.message}, {wap.message}"
        engine.cycles = start + len(pods)
        outcomes = submit_feasible(run, result, before_post_filter) if self.feasible else submit(run, result)
        self._apply(key, result, outcomes, wap, hooks)
        return result

    def _composite_cycle(self, root: RootKey, hooks: Hooks) -> GroupResult | None:
        """One cycle of a CompositePodGroup hierarchy (`compositecycle.py`): its PodGroups' pods validated against
        the root, a run per PodGroup, the hierarchy's algorithm, each PodGroup's pods submitted."""
        engine, tree = self.engine, self.forest.roots[root]
        pods_by_leaf: dict[GroupKey, list[Pod]] = {}
        for leaf in self._leaves(root):
            spec, queued = self.table.specs.get(leaf), self._pending(leaf)
            if queued:
                pods_by_leaf[leaf] = [self._with_nomination(p) for p in member_order(queued, self._quorum(leaf, spec))]
        everyone = [p for pods in pods_by_leaf.values() for p in pods]
        self.cycles += 1
        for leaf in pods_by_leaf:
            self.records[leaf].cycles += 1
        self._mark_retried(hooks, everyone)
        profiles = {p.scheduler_name for p in engine.config.profiles}
        bound = [p for leaf in self._leaves(root) for p in self.bound_pods.get(leaf, ())]
        error = validation_error(everyone, bound, tree.spec, profiles, self.policy_gate)
        if error is not None:
            for leaf, pods in pods_by_leaf.items():
                for pod in pods:
                    hooks.fail(pod, PodOutcome(pod, None, error, "SchedulerError", CLEAR), group=self.records[leaf].key,
                               cycle=self.cycles)
                self.records[leaf].condition = updated_condition(self.records[leaf].condition,
                                                                 ("False", "SchedulerError", error))
            return None
        fw = engine.framework(everyone[0])
        points = fw.profile.extension_points
        start = engine.cycles
        scorers = [(p.name, p.weight) for p in fw.profile.placement_score_plugins]
        runs = {leaf: self._run(leaf, self.table.specs.get(leaf), pods, points, scorers, start + len(everyone))
                for leaf, pods in pods_by_leaf.items()}
        gang = "GangScheduling" in points.get("permit", ()) or "GangScheduling" in points.get("preEnqueue", ())
        composite = CompositeRun(tree, runs, gang)
        result = composite.algorithm()
        if result.status == UNSCHEDULABLE and NOT_SIMULATED_PREEMPTION not in self.said:
            self.said.append(NOT_SIMULATED_PREEMPTION)
        engine.cycles = start + len(everyone)
        for leaf, run in runs.items():
            leaf_result = self.leaf_results[leaf] = composite.results[leaf]
            if leaf in composite.inherited:
                reason = "SchedulerError" if leaf_result.status == ERROR else "Unschedulable"
                outcomes = [PodOutcome(p, None, leaf_result.message, reason, CLEAR if reason != "Unschedulable" else KEEP)
                            for p in run.pods]
            else:
                outcomes = submit_feasible(run, leaf_result, leaf_result.message)
            self._apply(leaf, leaf_result, outcomes, None, hooks)
        return result

    def _pods_error(self, key: GroupKey, spec: PodGroup | None, pods: Sequence[Pod]) -> str | None:
        """Why the group gets no cycle: v1.37's `validatePodGroup` (its pending and bound pods), v1.36's
        `frameworkForPodGroup` (one scheduler name, a profile for it)."""
        profiles = {p.scheduler_name for p in self.engine.config.profiles}
        if self.validate:
            return validation_error(pods, self.bound_pods.get(key, ()), spec, profiles, self.policy_gate)
        error = scheduler_name_error(pods)
        if error is None and pods[0].scheduler_name not in profiles:
            error = f'profile not found for scheduler name "{pods[0].scheduler_name}"'
        return error

    def _run(self, key: GroupKey, spec: PodGroup | None, pods: list[Pod], points: dict, scorers: list,
             cycle_count: int) -> GroupRun:
        """The group's run: v1.37's (PlacementFeasible) or v1.36's (Permit)."""
        common = dict(gang_permit="GangScheduling" in points.get("permit", ()),
                      placement_plugins=(bool(points.get("placementGenerate")), tuple(scorers)),
                      cycle_count=cycle_count)
        if self.feasible:
            gang = "GangScheduling" in points.get("permit", ()) or "GangScheduling" in points.get("preEnqueue", ())
            return FeasibleRun(self.engine, key, spec, pods, self.bound[key], self.table.gates, **common,
                               feasible_plugin=gang)
        return GroupRun(self.engine, key, spec, pods, self.bound[key], self.table.gates, **common)

    def _apply(self, key: GroupKey, result: GroupResult, outcomes: list[PodOutcome], wap, hooks: Hooks) -> None:
        """Evict what the cycle's preemption chose, bind the feasible group's pods (`outcomes`), record every pod's
        step and the group's condition."""
        record = self.records[key]
        first_step = len(hooks.steps)
        per_pod = {}
        for r in result.pods:
            for victim in r.victims:
                per_pod.setdefault(id(victim), (r.node, victim))
        fitted = 0
        for outcome in outcomes:
            if outcome.node is not None:
                hooks.bind(outcome, result, group=record.key, cycle=self.cycles)
                self.bound[key] += 1
                self.bound_pods.setdefault(key, []).append(outcome.pod)
                record.bound.append((outcome.pod.name, self.engine.state.nodes[outcome.node].name))
                self.nominated.pop(outcome.pod.key, None)
                continue
            self._nominate(outcome)
            hooks.fail(outcome.pod, outcome, group=record.key, cycle=self.cycles)
        for r in result.pods:
            fitted += int(r.node is not None)
        record.last_fit = fitted
        victims = list(per_pod.values()) + (wap.victims if wap is not None and wap.status == "Success" else [])
        if victims:
            step = hooks.steps[first_step] if len(hooks.steps) > first_step else None
            hooks.evict(by_node(victims), step)
            record.victims += [p.key for _n, p in victims]
            for _node, victim in victims:
                victim_key = group_key(victim)
                if victim_key is not None and self.bound[victim_key] > 0:
                    self.bound[victim_key] -= 1
                    self.bound_pods[victim_key] = [p for p in self.bound_pods.get(victim_key, ())
                                                   if p.key != victim.key]
                    other = self.records.get(victim_key)
                    if other is not None:
                        other.bound = [(n, at) for n, at in other.bound if n != victim.name]
        spec = self.table.specs.get(key)
        if result.placement is not None and result.status == "Success" and spec is not None and spec.topology_keys:
            record.placement = f"{spec.topology_keys[0]}={result.placement}"
        record.condition = updated_condition(record.condition, condition(result))

    def _with_nomination(self, pod: Pod) -> Pod:
        node = self.nominated.get(pod.key, "")
        return pod if node == pod.nominated_node_name else dataclasses.replace(pod, nominated_node_name=node)

    def _nominate(self, outcome: PodOutcome) -> None:
        if outcome.nominated == CLEAR:
            self.nominated.pop(outcome.pod.key, None)
        elif outcome.nominated != KEEP:
            self.nominated[outcome.pod.key] = self.engine.state.nodes[outcome.nominated].name

    def _quorum(self, key: GroupKey, spec: PodGroup | None) -> int:
        """Which pod completed the gang's quorum in the queue: the minCount-th pod known, bound ones counted."""
        if spec is None or not spec.policy.gang:
            return 1
        return max(spec.policy.min_count - (self.table.known[key] - len(self.members[key])), 1)

    @staticmethod
    def _mark_retried(hooks: Hooks, pods: Sequence[Pod]) -> None:
        """The pods' earlier steps are no longer final."""
        keys = {p.key for p in pods}
        for step in reversed(hooks.steps):
            if step.group is not None and step.pod.key in keys and not step.retried:
                step.retried = True
                keys.discard(step.pod.key)
                if not keys:
                    break

    # ------------------------------------------------------------------ reporting
    def _why(self, key: GroupKey, result: GroupResult | None) -> str:
        """One line a person reads: what became of the group and why."""
        record = self.records[key]
        kind = record.policy or "group"
        head = f"{kind} {record.key}"
        if record.gated is not None:
            if record.policy == "gang":
                return (f"{head}: {len(record.pods)} of minCount {record.min_count} pods exist: never queued "
                        f"({record.gated})")
            return f"{head}: never queued ({record.gated})"
        need = f"minCount {record.min_count}" if record.min_count is not None else f"{len(record.pods)} pods"
        where = f" in {record.placement}" if record.placement else ""
        if not record.pending:
            return f"{head}: {len(record.bound)} of {len(record.pods)} pods bound{where} ({need})"
        reasons = _fit_reasons(result)
        if record.condition is not None and record.condition[0] == "True":
            tail = f": {len(record.pending)} pending: {reasons}" if reasons else f": {len(record.pending)} pending"
            return f"{head}: {len(record.bound)} of {len(record.pods)} pods bound{where} ({need}){tail}"
        if result is None:
            return f"{head}: nothing bound: {record.condition[2] if record.condition else 'pending'}"
        fit = f"{record.last_fit} of {need} fit"
        return f"{head}: {fit}: {reasons}" if reasons else f"{head}: {fit}: {result.message}"


def _fit_reasons(result: GroupResult | None) -> str:
    """The first FitError of the cycle's pods as `3 nodes Insufficient cpu, 1 node(s) had ...` (its filter part)."""
    if result is None:
        return ""
    for r in result.pods:
        if r.node is None and r.message.startswith("0/"):
            body = r.message.split(":", 1)[1].strip().split(". ", 1)[0].rstrip(".")
            return ", ".join(_nodes_word(part) for part in body.split(", "))
    return ""


def _nodes_word(part: str) -> str:
    count, _, reason = part.partition(" ")
    return f"{count} nodes {reason}" if count.isdigit() and not reason.startswith("node") else part


__all__ = ["GATED_BY", "GroupQueue", "GroupRecord", "Hooks", "UNRESOLVABLE"]


def cycle_view(engine: Engine, pod: Pod, pending: Sequence[Pod]) -> str | None:
    """`score --pod` of a pod group's member: its cycle is the group's, where the members ordered before it are
    assumed first (`podGroupSchedulingDefaultAlgorithm`). Binds those that fit into the engine's state (the caller's
    copy) and says so; None for a pod of no group (or gates off). Their own PostFilter is not run."""
    queue = GroupQueue.of(engine, pending)
    key = None if queue is None else queue.takes(pod)
    if key is None:
        return None
    spec = queue.table.specs.get(key)
    order = member_order(queue.members[key], queue._quorum(key, spec))
    position = next(i for i, p in enumerate(order) if p.key == pod.key)
    placed = []
    for member in order[:position]:
        decision = engine.cycle(member)
        if decision.node is not None:
            engine.bind(decision.node, decision.shape, member)
            placed.append(f"{member.name} on {engine.state.nodes[decision.node].name}")
    label = queue.table.label(key)
    gate = queue._pre_enqueue(key, order[0])
    said = (f"pod {pod.key} is pod {position + 1} of {len(order)} in pod group {label}'s cycle: scored with the "
            f"{len(placed)} pod(s) of the group before it assumed" + (f" ({', '.join(placed)})" if placed else ""))
    return said + (f"; the group never gets a cycle: {gate}" if gate else "")
