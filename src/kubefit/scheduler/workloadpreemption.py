"""Workload-aware preemption (`WorkloadAwarePreemption`, v1.36 alpha): DefaultPreemption's PodGroupPostFilter,
victims chosen for a whole pod group across the cluster (v1.36.3 `framework/preemption/podgrouppreemption.go`,
`types.go`, `schedule_one_podgroup.go` `runWorkloadAwarePreemption`).

Run when a group's cycle found it unschedulable. The domain is the whole cluster; a victim is one pod, or every pod
of a PodGroup whose `disruptionMode` is `PodGroup` (evicted together, at the group's priority). Every victim of
lower priority than the group (`util.PodGroupPriority`: `spec.priority`, 0 unset) is removed; if the group's
algorithm (without PostFilter) then still fails, nothing is preempted. Else the victims are added back one at a time,
most important first (`moreImportantVictim`: higher priority; a group before a single pod; between single pods the
earlier start; between groups the larger, then the earlier start), those whose eviction would violate a
PodDisruptionBudget first (`filterVictimsWithPDBViolation`: a unit violates if one of its pods does), each kept
back when the group still fits with it. What cannot be added back is preempted (`actuatePodGroupPreemption`: all
victims deleted at once); the group's pods go back to the queue waiting for it.

v1.37 (`preempt_once`, kubernetes#139980, #138757, #140311, #139218, #140683; the v1.37.0 `PodGroupEvaluator.Preempt`
as kubernetes-sigs/scheduler-library copies it): PodGroupPostFilter runs for groups with topology constraints too;
the preemptor's policy is the PodGroup's with PodGroupPreemptionPolicy, else `Never` if a pod says so (`not eligible
due to preemptionPolicy=Never.`); the group's algorithm runs once with every potential victim removed, and each
victim, most important first (those a PodDisruptionBudget protects first), is added back when every pod that run
placed still passes Filter on its node (the pods checked in cycle order, each assumed there for the next). Success
says `found a placement for podgroup, preempting N victims`, and the pods are nominated to the nodes that run gave
them; every message is prefixed `pod group preemption: `.

kubefit ties equally important victims in node order, pods in each node's order (upstream: Go map order).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain

from kubefit.api.core import Pod
from kubefit.api.workload import DISRUPT_POD_GROUP, PodGroup, priority_of
from kubefit.manifests.disruption import PDB, current_budgets
from kubefit.scheduler.groupcycle import ERROR, SUCCESS, UNSCHEDULABLE, GroupResult, GroupRun
from kubefit.scheduler.podgroups import group_key
from kubefit.scheduler.preemption import NEVER, _pdb_matches, start_time

NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"
WITH_CONSTRAINTS = "workload aware preemption is not supported for pod groups with scheduling constraints"
NO_VICTIMS = "No preemption victims found for incoming preemptor"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
POD_GROUP_PREEMPTION = "pod group preemption: "  # DefaultPreemption.PodGroupPostFilter's prefix (v1.37)
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."


@dataclass
class Victim:
    """A unit of preemption: one pod, or a PodGroup's pods (`disruptionMode: PodGroup`)."""

    pods: list[tuple[int, Pod]]  # (node, pod)
    priority: int
    group: bool  # `IsPodGroup`: its pods name a scheduling group (even a single one of disruptionMode Pod)
    earliest: float = field(default=0.0)

    def sort_key(self) -> tuple:
        """`moreImportantVictim` as a key: higher priority, a group first, then singles by earlier start,
        groups by more pods then earlier start."""
        if not self.group:
            return (-self.priority, 1, 0, self.earliest)
        return (-self.priority, 0, -len(self.pods), self.earliest)


@dataclass
class WorkloadPreemption:
    """PodGroupPostFilter's answer: the status, its message and the pods deleted (node, pod)."""

    status: str
    message: str = ""
    victims: list[tuple[int, Pod]] = field(default_factory=list)
    nominations: dict[str, int] = field(default_factory=dict)  # v1.37: pod key → the node its preemption gave it


def domain_victims(run: GroupRun, specs: dict) -> list[Victim]:
    """`newDomainForWorkloadPreemption`: every pod of every node as a victim, PodGroups of disruptionMode PodGroup
    as one (in node order, pods in each node's order)."""
    state = run.engine.state
    singles: list[Victim] = []
    groups: dict[tuple[str, str], Victim] = {}
    order: list[object] = []
    for node, pods in enumerate(state.pods):
        for pod in pods:
            key = group_key(pod)
            spec: PodGroup | None = specs.get(key) if key is not None else None
            if spec is None or spec.disruption_mode != DISRUPT_POD_GROUP:
                victim = Victim([(node, pod)], pod.priority, key is not None, start_time(pod))
                singles.append(victim)
                order.append(victim)
                continue
            found = groups.get(key)
            if found is None:
                found = groups[key] = Victim([], priority_of(spec), True, start_time(pod))
                order.append(found)
            found.pods.append((node, pod))
            found.earliest = min(found.earliest, start_time(pod))
    return order  # type: ignore[return-value]


def split_by_pdb(victims: list[Victim], pdbs: list) -> tuple[list[Victim], list[Victim]]:
    """`filterVictimsWithPDBViolation` (preemption.go): one allowance per PDB spent pod by pod over the units in order;
    a pod that overdraws one stops its unit's check (the rest of its PDBs and pods are not charged)."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]

    def violates(pod: Pod) -> bool:
        if not pod.labels:
            return False
        for i, pdb in enumerate(pdbs):
            if not _pdb_matches(pdb, pod) or pod.name in pdb.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True
        return False

    violating, non_violating = [], []
    for victim in victims:
        (violating if any(violates(p) for _n, p in victim.pods) else non_violating).append(victim)
    return violating, non_violating


def preempt_for_group(run: GroupRun, specs: dict) -> WorkloadPreemption:
    """`runWorkloadAwarePreemption` + `PodGroupEvaluator.Preempt` for the group of `run` (the module's text)."""
    fw = run.engine.framework(run.pods[0])
    if "DefaultPreemption" not in fw.profile.extension_points.get("postFilter", ()):
        return WorkloadPreemption(UNSCHEDULABLE, NOT_REGISTERED)
    if run.spec is None:
        return WorkloadPreemption(ERROR, f'failed to get pod group object: podgroup.scheduling.k8s.io "{run.key[1]}" '
                                         f"not found")
    if run.spec.topology_keys:
        return WorkloadPreemption(UNSCHEDULABLE, WITH_CONSTRAINTS)
    if any(p.preemption_policy == "Never" for p in run.pods):
        return WorkloadPreemption(UNSCHEDULABLE, NEVER)
    preemptor = priority_of(run.spec)
    potential = [v for v in domain_victims(run, specs) if v.priority < preemptor]
    if not potential:
        return WorkloadPreemption(UNRESOLVABLE, NO_VICTIMS)
    with _all_removed(run, potential):
        result = _without_post_filters(run)
        if result.status != SUCCESS:
            return WorkloadPreemption(result.status, result.message)
        chosen: list[Victim] = []
        for victim in _reprieve_order(run, potential):
            _add(run, victim)
            if _without_post_filters(run).status != SUCCESS:
                _remove(run, victim)
                chosen.append(victim)
        chosen.sort(key=Victim.sort_key)
        return WorkloadPreemption(SUCCESS, victims=[pair for v in chosen for pair in v.pods])


def preempt_once(run: GroupRun, specs: dict, policy_gate: bool) -> WorkloadPreemption:
    """v1.37's `DefaultPreemption.PodGroupPostFilter` for the group of `run` (the module's text); `policy_gate`:
    PodGroupPreemptionPolicy is on."""
    fw = run.engine.framework(run.pods[0])
    if "DefaultPreemption" not in fw.profile.extension_points.get("postFilter", ()):
        return WorkloadPreemption(UNSCHEDULABLE)  # no PodGroupPostFilter plugin: nothing to say
    answer = _preempt_once(run, specs, policy_gate)
    if answer.message:
        answer.message = POD_GROUP_PREEMPTION + answer.message
    return answer


def preemption_policy(run: GroupRun, policy_gate: bool) -> str:
    """`resolvePreemptionPolicy`: the PodGroup's (PreemptLowerPriority unset) with PodGroupPreemptionPolicy, else
    `Never` when one of the pods says so."""
    if policy_gate:
        return (run.spec.preemption_policy if run.spec is not None else None) or "PreemptLowerPriority"
    return "Never" if any(p.preemption_policy == "Never" for p in run.pods) else "PreemptLowerPriority"


def _preempt_once(run: GroupRun, specs: dict, policy_gate: bool) -> WorkloadPreemption:
    if preemption_policy(run, policy_gate) == "Never":
        return WorkloadPreemption(UNSCHEDULABLE, NOT_ELIGIBLE_NEVER)
    preemptor = priority_of(run.spec)
    potential = [v for v in domain_victims(run, specs) if v.priority < preemptor]
    if not potential:
        return WorkloadPreemption(UNSCHEDULABLE, NO_VICTIMS)
    with _all_removed(run, potential):
        result = _without_post_filters(run)
        if result.status != SUCCESS:
            return WorkloadPreemption(result.status, result.message)
        assignments = [(r.node, r.pod) for r in result.pods if r.fits and r.node is not None]
        chosen = [v for v in _reprieve_order(run, potential) if not _reprieved(run, v, assignments)]
        chosen.sort(key=Victim.sort_key)
        pods = [pair for v in chosen for pair in v.pods]
        return WorkloadPreemption(SUCCESS, f"found a placement for podgroup, preempting {len(pods)} victims", pods,
                                  {pod.key: node for node, pod in assignments})


def _reprieved(run: GroupRun, victim: Victim, assignments: list[tuple[int, Pod]]) -> bool:
    """`reprieveVictim`: add the victim back; it stays when every proposed pod still passes Filter on its node, each
    assumed there for the next (then taken off again); else it is removed again (a victim)."""
    engine = run.engine
    _add(run, victim)
    placed: list[tuple[int, object, Pod]] = []
    fits = True
    for node, pod in assignments:
        sh = engine.shape(pod)
        if not engine.passes_filters(sh, node):
            fits = False
            break
        engine.bind(node, sh, pod)
        placed.append((node, sh, pod))
    for node, sh, pod in reversed(placed):
        engine.unbind(node, sh, pod)
    if not fits:
        _remove(run, victim)
    return fits


def _without_post_filters(run: GroupRun) -> GroupResult:
    """The group's algorithm without PostFilter (`runWithoutPostFilters`) on the state as it is now."""
    run.post_filters = False
    try:
        return run.algorithm()
    finally:
        run.post_filters = True


@contextmanager
def _all_removed(run: GroupRun, potential: list[Victim]) -> Iterator[None]:
    """Every potential victim removed for the block, the nodes restored after it (`restoreFn`)."""
    state = run.engine.state
    saved = {node: list(state.pods[node]) for v in potential for node, _p in v.pods}
    try:
        for victim in potential:
            _remove(run, victim)
        yield
    finally:
        _restore(run, saved)


def _reprieve_order(run: GroupRun, potential: list[Victim]) -> list[Victim]:
    """The victims in the order they are tried back: most important first (a stable sort: equal units keep the
    domain's order), those whose eviction would violate a PodDisruptionBudget before the others."""
    potential.sort(key=Victim.sort_key)
    state = run.engine.state
    violating, non_violating = split_by_pdb(potential, current_budgets(state.objects.of(PDB),
                                                                      chain.from_iterable(state.pods)))
    return [*violating, *non_violating]


def _remove(run: GroupRun, victim: Victim) -> None:
    for node, pod in victim.pods:
        run.engine.evict(node, pod)


def _add(run: GroupRun, victim: Victim) -> None:
    state = run.engine.state
    for node, pod in victim.pods:
        state.bind(node, state.bound_demand(pod), pod=pod)
        run.engine.log_removal(node)  # (a row change every shape re-reads)


def _restore(run: GroupRun, saved: dict[int, list[Pod]]) -> None:
    """`restoreFn`: the nodes as they were (their pods back in their order)."""
    state = run.engine.state
    for node, pods in saved.items():
        present = {id(p) for p in state.pods[node]}
        for pod in pods:
            if id(pod) not in present:
                state.bind(node, state.bound_demand(pod), pod=pod)
        state.pods[node] = list(pods)
        run.engine.log_removal(node)


def by_node(victims: list[tuple[int, Pod]]) -> dict[int, list[Pod]]:
    out: dict[int, list[Pod]] = {}
    for node, pod in victims:
        out.setdefault(node, []).append(pod)
    return out
