"""CompositePodGroup hierarchies as v1.37 schedules them (gates GenericWorkload and CompositePodGroup, KEP-6012).

A CompositePodGroup (`scheduling.k8s.io/v1alpha3`) groups PodGroups and other CompositePodGroups (each names its
parent in `spec.parentCompositePodGroupName`); `schedulingPolicy: {gang: {minGroupCount}}` asks that many of its
children be scheduled, `{basic: {}}` one. Ported from the v1.37 code freeze: `gangscheduling.go`
(`preEnqueueWithHierarchies`, `checkCPGHierarchyReadiness`, `isCPGTreeReady`, `isPGReady`, `PlacementFeasible`,
`getMinCount`), `schedule_one_podgroup.go` (`runRootSchedulingAlgorithm`, `podGroupSchedulingRecursiveAlgorithm`,
`compositePodGroupSchedulingPlacementAlgorithm`, `compositePodGroupSchedulingDefaultAlgorithm`,
`completeCompositePodGroupAlgorithmResultMap`):

- the whole hierarchy is one queue entry, entered at the first pod of any of its PodGroups; PreEnqueue lets it in once
  the tree is ready: the root has at least minGroupCount (1 for basic) ready children, a child CompositePodGroup
  recursively, a child PodGroup when minCount (1 for basic) of its pods exist; else `waiting for composite pod group
  "<root>" tree to meet quorum`. A PodGroup whose parent does not exist waits too.
- one cycle from the root: a CompositePodGroup's children in turn (each PodGroup a v1.37 pod group cycle, its pods
  assumed and kept while its siblings are tried, each CompositePodGroup recursively), GangScheduling's
  PlacementFeasible weighing the children scheduled against minGroupCount before the first and after each one
  (`minCount (2) cannot be satisfied: 0 scheduled, 1 remaining` stops it). A CompositePodGroup is always evaluated
  through placements (without TopologyAwareWorkloadScheduling: one, the whole cluster), so its failure reads
  `pod group is unschedulable, 0/1 placements are available, first placement status: <its status>`.
- a child that succeeded under a parent that failed is made to fail with the parent's status: nothing of the
  hierarchy binds unless its root is feasible. A root that scheduled no pod in the cycle is Unschedulable.
- each PodGroup's pods are then submitted as a pod group's are (`feasiblecycle.submit_feasible`), a PodGroup whose
  result came from its parent giving that status to all its pods; each PodGroup's condition is written.

What kubefit does not do: topology placements for a CompositePodGroup (its own `schedulingConstraints`), and
workload-aware preemption for a hierarchy (kubernetes#140634) — a hierarchy that needs preemption stays pending and
kubefit says so. Children are taken CompositePodGroups first, then PodGroups, each in document order (upstream: the
order the scheduler's cache holds them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubefit.api.cluster import ClusterObjects
from kubefit.scheduler.feasiblecycle import FeasibleRun, placement_feasible, with_group_error
from kubefit.scheduler.groupcycle import (
    ERROR,
    POD_GROUP_UNSCHEDULABLE,
    SUCCESS,
    UNSCHEDULABLE,
    WAIT,
    GroupResult,
)
from kubefit.scheduler.podgroups import GroupKey

COMPOSITE_CHILD_ERROR = "composite pod group evaluation failed due to child error: {}"
NOT_SIMULATED_PREEMPTION = ("workload-aware preemption for a CompositePodGroup hierarchy (kubernetes#140634) is not "
                            "simulated: a hierarchy that needs preemption stays pending")


@dataclass(frozen=True)
class RootKey:
    """The queue entry of a hierarchy: its root CompositePodGroup."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class Member:
    """A node of a hierarchy: a CompositePodGroup with its children, or a PodGroup (a leaf)."""

    key: GroupKey
    spec: object  # PodGroup or CompositePodGroup
    composite: bool
    children: list[Member] = field(default_factory=list)

    def leaves(self) -> list[Member]:
        return [self] if not self.composite else [leaf for c in self.children for leaf in c.leaves()]


@dataclass
class Forest:
    """The hierarchies of a scenario: each root's tree, and the root of each PodGroup under one."""

    roots: dict[RootKey, Member] = field(default_factory=dict)
    root_of: dict[GroupKey, RootKey] = field(default_factory=dict)
    broken: dict[GroupKey, str] = field(default_factory=dict)  # PodGroup → why its hierarchy cannot be built

    @classmethod
    def build(cls, objects: ClusterObjects, specs: dict) -> Forest:
        forest = cls()
        composites = {(c.meta.namespace, c.meta.name): c for c in objects.of("CompositePodGroup")}
        nodes = {key: Member(key, c, True) for key, c in composites.items()}
        for key, c in composites.items():  # CompositePodGroups first, then PodGroups, each in document order
            if c.parent is not None and (key[0], c.parent) in nodes:
                nodes[(key[0], c.parent)].children.append(nodes[key])
        for key, spec in specs.items():
            if getattr(spec, "parent", None) is None:
                continue
            parent = (key[0], spec.parent)
            if parent not in nodes:
                forest.broken[key] = (f"failed to build hierarchy snapshot: composite pod group object not found in "
                                      f"state for compositepodgroup/{key[0]}/{spec.parent}")
                continue
            leaf = Member(key, spec, False)
            nodes[parent].children.append(leaf)
            root = _root(parent, composites)
            if root is None:
                forest.broken[key] = (f"failed to build hierarchy snapshot: the parents of composite pod group "
                                      f"{key[0]}/{spec.parent} form a cycle")
                continue
            forest.root_of[key] = RootKey(*root)
            forest.roots.setdefault(RootKey(*root), nodes[root])
        return forest


def _root(key: GroupKey, composites: dict) -> GroupKey | None:
    """The top CompositePodGroup above `key` (None: its parents form a cycle or one is missing)."""
    seen = {key}
    while composites[key].parent is not None:
        key = (key[0], composites[key].parent)
        if key in seen or key not in composites:
            return None
        seen.add(key)
    return key


def min_children(spec) -> int:
    """`getMinCount` of a CompositePodGroup: a gang's minGroupCount, 1 for a basic one."""
    return spec.policy.min_count if spec.policy.gang else 1


def tree_ready(member: Member, known) -> bool:
    """`isCPGTreeReady` / `isPGReady` with `AllPodsCount` (`known`: PodGroup → pods the scheduler knows)."""
    if not member.composite:
        need = member.spec.policy.min_count if member.spec.policy.gang else 1
        return known[member.key] >= need
    return sum(1 for c in member.children if tree_ready(c, known)) >= min_children(member.spec)


@dataclass
class CompositeRun:
    """One cycle of a hierarchy: a `FeasibleRun` per PodGroup (`runs`), the results of every member."""

    root: Member
    runs: dict[GroupKey, FeasibleRun]
    gang_plugin: bool  # GangScheduling (its PlacementFeasible) is in the profile
    results: dict[GroupKey, GroupResult] = field(default_factory=dict)
    inherited: set[GroupKey] = field(default_factory=set)  # members whose result is their parent's failure

    def algorithm(self) -> GroupResult:
        """`runRootSchedulingAlgorithm` for a CompositePodGroup root; every assumed pod forgotten after it."""
        try:
            result = self._placements(self.root)
        finally:
            for run in self.runs.values():
                run.forget()
        if result.status == SUCCESS and not result.any_scheduled:
            result.status, result.message, result.cause = (UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE,
                                                           POD_GROUP_UNSCHEDULABLE)
        self.results[self.root.key] = result
        self._inherit(self.root, result)
        return result

    def _member(self, member: Member) -> GroupResult:
        if member.composite:
            return self._placements(member)
        run = self.runs.get(member.key)
        if run is None:  # a PodGroup of the hierarchy without a pending pod: nothing to place, nothing scheduled
            result = GroupResult(status=SUCCESS, message="", cause=None)
        else:
            result = run.placement_algorithm() if run.gates.topology else run.default_algorithm()
        self.results[member.key] = result
        return result

    def _placements(self, member: Member) -> GroupResult:
        """`compositePodGroupSchedulingPlacementAlgorithm` with one placement (the whole cluster)."""
        result = self._default(member)
        if result.status == UNSCHEDULABLE:
            result.message = with_group_error(f"0/1 placements are available, first placement status: "
                                              f"{result.as_error()}")
            result.cause = POD_GROUP_UNSCHEDULABLE
        self.results[member.key] = result
        return result

    def _default(self, member: Member) -> GroupResult:
        """`compositePodGroupSchedulingDefaultAlgorithm`: the children in turn, PlacementFeasible after each."""
        need, remaining, scheduled = min_children(member.spec), len(member.children), 0
        code, message = self._feasible(need, scheduled, remaining)
        result = GroupResult(status=code, message=message, cause=None)
        if code == UNSCHEDULABLE:
            return result
        for child in member.children:
            child_result = self._member(child)
            if child_result.status == ERROR:
                self._forget(member)
                return GroupResult(status=ERROR, message=COMPOSITE_CHILD_ERROR.format(child_result.as_error()),
                                   cause=None)
            result.any_scheduled = result.any_scheduled or child_result.any_scheduled
            remaining -= 1
            scheduled += int(child_result.status == SUCCESS)
            result.status, result.message = self._feasible(need, scheduled, remaining)
            if result.status == UNSCHEDULABLE:
                break
        if result.status == WAIT:
            result.status, result.message = UNSCHEDULABLE, with_group_error(result.message)
            result.cause = POD_GROUP_UNSCHEDULABLE
        if result.status != SUCCESS:
            self._forget(member)
            result.any_scheduled = False
        return result

    def _feasible(self, need: int, scheduled: int, remaining: int) -> tuple[str, str]:
        return placement_feasible(need, scheduled, remaining) if self.gang_plugin else (SUCCESS, "")

    def _forget(self, member: Member) -> None:
        for leaf in member.leaves():
            run = self.runs.get(leaf.key)
            if run is not None:
                run.forget()

    def _inherit(self, member: Member, parent: GroupResult) -> None:
        """`completeCompositePodGroupAlgorithmResultMap`: a member without a result, or that succeeded under a parent
        that failed, takes the parent's status."""
        own = self.results.get(member.key)
        if own is None or (parent.status != SUCCESS and own.status == SUCCESS and member is not self.root):
            own = self.results[member.key] = GroupResult(status=parent.status, message=parent.message,
                                                         cause=parent.cause)
            self.inherited.add(member.key)
        for child in member.children:
            self._inherit(child, own)

