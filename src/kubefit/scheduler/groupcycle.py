"""One pod group cycle, as kube-scheduler v1.36.3 runs it (`pkg/scheduler/schedule_one_podgroup.go`).

The pods of a group are scheduled together on one snapshot (`podGroupCycle`): each in turn is filtered, scored
and assumed on the snapshot (`podGroupPodSchedulingAlgorithm`: later pods see the earlier ones in place), PostFilter
(DefaultPreemption) runs for a pod that fits nowhere, and Permit (the GangScheduling plugin) says whether the group
is feasible: a gang once `minCount` of its pods are assumed or bound, a `basic` group at its first assumed pod
(`podGroupSchedulingDefaultAlgorithm`). Every assumed pod is then forgotten and the result applied
(`submitPodGroupAlgorithmResult`): a feasible group's assumed pods bind, its other pods go back to the queue; an
infeasible one binds nothing (its pods that fitted say `pod group is unschedulable, <Permit's message>`); a group
that needs preemption binds nothing either and waits for it (`pod group is waiting for preemption to complete`).

Preemption inside a group cycle: a pod that fits nowhere runs DefaultPreemption as a single pod would, against the
snapshot (earlier pods of the group assumed there); its victims are deleted at once in the cluster (the executor's
API calls) but stay in the snapshot, and the pod is assumed on its nominated node. With WorkloadAwarePreemption
(`workloadpreemption.py`) DefaultPreemption declines for group pods (`not eligible due to workload aware
preemption enabled`) and PodGroupPostFilter chooses victims for the whole group once its cycle failed. With
TopologyAwareWorkloadScheduling a group with `schedulingConstraints.topology` is tried in each placement (the nodes
of one value of the topology key, `podGroupSchedulingPlacementAlgorithm`) and the feasible placement of best
PlacementScore kept; DefaultPreemption declines for it (`not eligible due to placement-based pod group scheduling
limitation`).

What kubefit does differently: placements are tried in the order their topology values first appear in the node
list (upstream: Go map order) and a tie of placement scores goes to the first (upstream: at random).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Pod
from kubefit.api.workload import PodGroup
from kubefit.scheduler.engine import Engine, Shape
from kubefit.scheduler.podgroups import GroupKey, WorkloadGates
from kubefit.scheduler.postfilter import post_filter_cycle

SUCCESS, UNSCHEDULABLE, ERROR, WAIT = "Success", "Unschedulable", "Error", "Wait"
POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"  # errPodGroupUnschedulable
WAITING_FOR_PREEMPTION = "pod group is waiting for preemption to complete"
PERMIT_WAIT = "waiting for minCount pods from a gang to be scheduled"  # GangScheduling.Permit (v1.36)
PLUGINS_WAIT = "one or more plugins asked to wait and no plugin rejected pod"  # RunPermitPlugins
NOT_ELIGIBLE_PLACEMENT = "preemption: not eligible due to placement-based pod group scheduling limitation"
NOT_ELIGIBLE_WAP = "preemption: not eligible due to workload aware preemption enabled"
NO_PLACEMENTS = "no feasible placements found"
SCHEDULER_NAMES_DIFFER = "all pods in a single pod group should have the same .spec.schedulerName set, got: {} and {}"
KEEP, CLEAR = "keep", "clear"  # a pod's nominated node after its cycle: unchanged, cleared; else the node index


@dataclass
class PodResult:
    """`algorithmResult`: one pod's outcome in the group's cycle."""

    pod: Pod
    shape: Shape | None = None
    node: int | None = None  # SuggestedHost: where it fits, or its nominated node when it needs preemption
    fits: bool = False  # the scheduling algorithm's status is Success
    requires_preemption: bool = False
    rejected: bool = True  # its failure is Unschedulable (else an error: the cycle stops)
    message: str = ""  # its own status message (the FitError with PostFilter's part)
    permit_wait: bool = False  # Permit answered Wait (else Success); only for a pod assumed
    nominating: object = KEEP  # PostFilter's nominating info: KEEP, CLEAR or a node
    victims: tuple[Pod, ...] = ()  # deleted by its PostFilter (DefaultPreemption), all on `node`
    best: np.ndarray | None = None  # the cycle's tied best nodes and feasible count (the step's `ties`)
    feasible: int = 0
    nominated_first: bool = False

    permit_message: str = ""  # Permit's status message (a Wait's reasons)


@dataclass
class GroupResult:
    """`podGroupAlgorithmResult`: every pod's result, the group's status and whether it waits on preemption."""

    pods: list[PodResult] = field(default_factory=list)
    status: str = UNSCHEDULABLE
    message: str = POD_GROUP_UNSCHEDULABLE
    waiting: bool = False  # waitingOnPreemption
    placement: str | None = None  # the placement chosen (a topology value), when placements were tried
    # the status's error (`Status.WithError`): what `AsError()` says; None: the status has none (its message)
    cause: str | None = POD_GROUP_UNSCHEDULABLE
    any_scheduled: bool = False  # v1.37: a pod of the cycle was scheduled (`anyScheduled`)
    nominations: dict[str, int] = field(default_factory=dict)  # v1.37: PodGroupPostFilter's nodes, per pod key

    def as_error(self) -> str:
        """`Status.AsError().Error()`: the error the status carries, else its message."""
        return self.cause or self.message


@dataclass
class PodOutcome:
    """What `submitPodGroupAlgorithmResult` does with one pod: bind it on `node`, or send it back to the queue with
    the `message` of its PodScheduled condition and its nominated node (KEEP, CLEAR or a node)."""

    pod: Pod
    node: int | None
    message: str = ""
    reason: str = "Unschedulable"  # the condition's reason (SchedulerError for an error)
    nominated: object = KEEP
    shape: Shape | None = None
    victims: tuple[Pod, ...] = ()
    result: PodResult | None = None  # the pod's own result in the cycle (None: the group failed before its turn)


@dataclass
class GroupRun:
    """What a group's cycle needs: the engine (its state is the snapshot), the group, its pods in cycle order, the
    pods of the group bound already, the gates and the profile's GangScheduling/placement plugins."""

    engine: Engine
    key: GroupKey
    spec: PodGroup | None
    pods: Sequence[Pod]
    bound: int  # members assigned to nodes (`podGroupState.assignedPods`)
    gates: WorkloadGates
    gang_permit: bool  # GangScheduling is a Permit plugin of the profile
    placement_plugins: tuple[bool, tuple[tuple[str, int], ...]] = (False, ())  # generate?, (score plugin, weight)
    assumed: list[tuple[int, Shape, Pod]] = field(default_factory=list)
    post_filters: bool = True  # runAllPostFilters (False: the WAP evaluation's runWithoutPostFilters)
    # `SchedulingQueue.SchedulingCycle` during the cycle: popping each pod of the group counted one (PopSpecificPod
    # moves it in flight as Pop does), so no pod of a group of two or more gets an opportunistic batching hint
    cycle_count: int = 0

    # ------------------------------------------------------------------ the pod's algorithm
    def pod_algorithm(self, pod: Pod) -> PodResult:
        """`podGroupPodSchedulingAlgorithm`: filter and score, PostFilter if it fits nowhere, assume, Permit (a
        pod Permit rejects is forgotten again: its status a FitError on its one node)."""
        result = self.schedule_pod(pod)
        if not result.fits and not result.requires_preemption:
            return result
        self.assume(result)
        code, message = self.permit(result)
        if code in (SUCCESS, WAIT):
            result.permit_wait, result.permit_message = code == WAIT, message
            return result
        self.forget_last()
        result.fits, result.requires_preemption, result.nominating = False, False, CLEAR
        result.rejected = code == UNSCHEDULABLE
        result.message = f"0/1 nodes are available: 1 {message}." if result.rejected else message
        result.node = None
        return result

    def schedule_pod(self, pod: Pod) -> PodResult:
        """`schedulingAlgorithm`: the pod's cycle on the snapshot; PostFilter when it fits nowhere."""
        engine = self.engine
        engine.cycles = self.cycle_count - 1  # every pod of the group cycle runs at one SchedulingCycle (its pops)
        decision = engine.cycle(pod)
        result = PodResult(pod, decision.shape, best=decision.best, feasible=decision.feasible,
                           nominated_first=decision.nominated_first)
        if decision.node is None:
            self._post_filter(result)
        else:
            result.node, result.fits, result.rejected = decision.node, True, False
        return result

    def assume(self, result: PodResult) -> None:
        """`assumeAndReserve` in a pod group cycle: the pod is assumed on the snapshot (`Snapshot.AssumePod`)."""
        self.engine.bind(result.node, result.shape, result.pod)
        self.assumed.append((result.node, result.shape, result.pod))

    def permit(self, result: PodResult) -> tuple[str, str]:
        """`RunPermitPlugins`: (code, message); GangScheduling waits until `minCount` pods of the gang are assumed
        or bound."""
        return (WAIT, f"{PERMIT_WAIT}, {PLUGINS_WAIT}") if self._permit_waits() else (SUCCESS, "")

    def _post_filter(self, result: PodResult) -> None:
        """`schedulingAlgorithm` for a pod that fit nowhere: PostFilter (DynamicResources, DefaultPreemption), the
        FitError it leaves; a nominated node means it needs preemption (assumed there)."""
        fw = self.engine.framework(result.pod)
        if not self.post_filters or not fw.profile.extension_points.get("postFilter"):
            result.message, result.nominating = self.engine.fit_error(result.shape), CLEAR
            return
        message, post = post_filter_cycle(self.engine, result.pod, not_eligible=self._not_eligible())
        result.message = message
        if post.nominated_node is not None:
            result.node, result.requires_preemption, result.rejected = post.nominated_node, True, False
            result.nominating, result.victims = post.nominated_node, tuple(post.victims)
        elif "postFilter" in fw.profile.extension_points and "DefaultPreemption" in \
                fw.profile.extension_points["postFilter"] and self._not_eligible() is None:
            result.nominating = CLEAR  # DefaultPreemption found no candidate: NewPostFilterResultWithNominatedNode("")

    def _not_eligible(self) -> str | None:
        """DefaultPreemption's PostFilter for a pod of a group (`default_preemption.go`): declined under
        TopologyAwareWorkloadScheduling when the group has scheduling constraints, under WorkloadAwarePreemption
        always (PodGroupPostFilter preempts for the group)."""
        if self.gates.topology and self.spec is not None and self.spec.topology_keys:
            return NOT_ELIGIBLE_PLACEMENT
        if self.gates.preemption:
            return NOT_ELIGIBLE_WAP
        return None

    def _permit_waits(self) -> bool:
        """GangScheduling's Permit in a group cycle: Wait until `minCount` pods of the gang are assumed or bound."""
        if not self.gang_permit or self.spec is None or not self.spec.policy.gang:
            return False
        return self.bound + len(self.assumed) < self.spec.policy.min_count

    def forget(self) -> None:
        """The snapshot's ForgetPod for every pod the cycle assumed, last first."""
        while self.assumed:
            self.forget_last()

    def forget_last(self) -> None:
        node, shape, pod = self.assumed.pop()
        self.engine.unbind(node, shape, pod)

    # ------------------------------------------------------------------ the group's algorithm
    def default_algorithm(self) -> GroupResult:
        """`podGroupSchedulingDefaultAlgorithm`: every pod in order; feasible once Permit succeeds for one."""
        result = GroupResult()
        requires = False
        try:
            for pod in self.pods:
                r = self.pod_algorithm(pod)
                result.pods.append(r)
                if not r.fits and not r.requires_preemption:
                    if r.rejected:
                        continue
                    result.status, result.waiting = ERROR, False
                    result.message = f"failed to schedule other pod from a pod group: {r.message}"
                    break
                requires = requires or r.requires_preemption
                if not r.permit_wait:
                    if requires:
                        result.status, result.waiting = UNSCHEDULABLE, True
                        result.message = f"{POD_GROUP_UNSCHEDULABLE}, {WAITING_FOR_PREEMPTION}"
                    else:
                        result.status, result.message = SUCCESS, ""
        finally:
            self.forget()
        return result

    def algorithm(self) -> GroupResult:
        """`podGroupSchedulingAlgorithm`: placements under TopologyAwareWorkloadScheduling, else the default."""
        if self.gates.topology:
            return self.placement_algorithm()
        return self.default_algorithm()

    # ------------------------------------------------------------------ placements (TopologyAwareWorkloadScheduling)
    def placements(self) -> list[tuple[str | None, np.ndarray | None]] | GroupResult:
        """`RunPlacementGeneratePlugins` with TopologyPlacementGenerator: one placement per value of the group's
        topology key among the nodes (only the value its bound pods already use, if any), in node-list order;
        the whole cluster (None) without a key or without the plugin; the group's failure when there is none."""
        generate, _scorers = self.placement_plugins
        if not generate or self.spec is None or not self.spec.topology_keys:
            return [(None, None)]
        key, state = self.spec.topology_keys[0], self.engine.state
        order = self.engine.order  # the snapshot's node list
        required = None
        domains = {state.nodes[n].labels.get(key) for n, pods in enumerate(state.pods)
                   if any(self._member(p) for p in pods)} if self.bound else set()
        if domains:
            if None in domains or len(domains) > 1:  # getScheduledPodsTopologyDomain's errors
                detail = ("more than 1 domain found for pod group: " + ", ".join(sorted(d for d in domains if d))
                          if len(domains - {None}) > 1 else "no topology domain found for a pod of the group")
                return GroupResult(status=ERROR, message=f"cannot determine domain for already scheduled pods: "
                                                          f"{detail}")
            required = next(iter(domains))
        masks: dict[str, np.ndarray] = {}
        for n in order.tolist():
            value = state.nodes[n].labels.get(key)
            if value is not None and (required is None or value == required):
                masks.setdefault(value, np.zeros(len(state), dtype=bool))[n] = True
        if not masks:
            return GroupResult(message=NO_PLACEMENTS)
        whole = len(order)
        return [(value, None if int(mask.sum()) == whole else mask) for value, mask in masks.items()]

    def _member(self, pod: Pod) -> bool:
        return pod.namespace == self.key[0] and pod.scheduling_group == self.key[1]

    def placement_algorithm(self) -> GroupResult:
        """`podGroupSchedulingPlacementAlgorithm`: the default algorithm in each placement (`AssumePlacement`),
        the feasible ones (or those waiting on preemption) scored by the PlacementScore plugins."""
        placements = self.placements()
        if isinstance(placements, GroupResult):
            return placements
        first: GroupResult | None = None
        feasible: list[GroupResult] = []
        for name, mask in placements:
            self.engine.placement = mask
            try:
                result = self.default_algorithm()
            finally:
                self.engine.placement = None
                self.forget()  # placementRevertFns.revert()
            result.placement = name
            if result.status == ERROR:
                return result
            first = first or result
            if result.status == SUCCESS or result.waiting:
                feasible.append(result)
        if not feasible:
            assert first is not None
            first.status, first.message = UNSCHEDULABLE, (
                f"0/{len(placements)} placements are available, first placement status: {first.as_error()}")
            first.cause = None
            return first
        if len(feasible) == 1:
            return feasible[0]
        return self._best_placement(feasible)

    def _best_placement(self, feasible: list[GroupResult]) -> GroupResult:
        """`findBestPlacement`: the highest Σ weight · normalized PlacementScore (`RunPlacementScorePlugins`)."""
        totals = self.score_placements(feasible)
        if isinstance(totals, GroupResult):
            return totals
        best = max(range(len(feasible)), key=lambda i: (totals[i], -i))
        return feasible[best]

    def score_placements(self, feasible: list[GroupResult]) -> list[int] | GroupResult:
        """Per feasible placement its weighted total; PodGroupPodsCount scores the group's pods bound plus those the
        placement assigns (a node, preemption needed or not), normalized by the highest (`podgroup_pods_count.go`)."""
        _generate, scorers = self.placement_plugins
        totals = [0] * len(feasible)
        for name, weight in scorers:
            if name != "PodGroupPodsCount":
                continue
            raw = [self.bound + sum(1 for r in result.pods if r.node is not None) for result in feasible]
            top = max(raw)
            if top == 0:
                return GroupResult(status=ERROR, message="running NormalizePlacementScore on PlacementScore plugins: "
                                   "plugin \"PodGroupPodsCount\" failed with: no pods from pod group are assigned "
                                   "to any of the candidate placements")
            for i, score in enumerate(raw):
                totals[i] += weight * (score * 100 // top)
        return totals


# --------------------------------------------------------------------------- submitting the result

def submit(run: GroupRun, result: GroupResult) -> list[PodOutcome]:
    """`submitPodGroupAlgorithmResult`: per pod of the group (in cycle order) bind it or send it back."""
    outcomes = [dataclasses.replace(o, result=r) for o, r in zip(
        _submit(run, result), [*result.pods, *[None] * len(run.pods)], strict=False)]
    return outcomes


def _submit(run: GroupRun, result: GroupResult) -> list[PodOutcome]:
    outcomes = []
    for i, pod in enumerate(run.pods):
        r = result.pods[i] if i < len(result.pods) else None
        if r is None:  # the group failed before this pod's turn: the group's own status
            reason = "SchedulerError" if result.status == ERROR else "Unschedulable"
            outcomes.append(PodOutcome(pod, None, result.message, reason, CLEAR if result.status == ERROR else KEEP))
            continue
        if result.status == ERROR:
            outcomes.append(PodOutcome(pod, None, r.message if not r.rejected else result.message, "SchedulerError",
                                       CLEAR, r.shape, r.victims))
        elif r.fits and result.status == SUCCESS:
            outcomes.append(PodOutcome(pod, r.node, shape=r.shape))
        elif r.fits and result.waiting:
            outcomes.append(PodOutcome(pod, None, result.message, nominated=r.node, shape=r.shape))
        elif r.fits or (r.requires_preemption and not result.waiting):
            outcomes.append(PodOutcome(pod, None, f"{POD_GROUP_UNSCHEDULABLE}, {r.permit_message}", nominated=CLEAR,
                                       shape=r.shape, victims=r.victims))
        else:
            outcomes.append(PodOutcome(pod, None, r.message, nominated=r.nominating, shape=r.shape,
                                       victims=r.victims))
    return outcomes


def updated_condition(existing: tuple[str, str, str] | None,
                      new: tuple[str, str, str]) -> tuple[str, str, str]:
    """`updatePodGroupCondition`: the condition written, but a True one is never replaced by a False one (a group
    scheduled once keeps saying so while later cycles place its other pods)."""
    if existing is not None and existing[0] == "True" and new[0] != "True":
        return existing
    return new


def condition(result: GroupResult) -> tuple[str, str, str]:
    """The PodGroupScheduled condition the cycle writes: (status, reason, message)."""
    if result.status == SUCCESS:
        return "True", "Scheduled", result.message
    if result.status == UNSCHEDULABLE:
        return "False", "Unschedulable", result.message
    return "False", "SchedulerError", result.message


def scheduler_name_error(pods: Sequence[Pod]) -> str | None:
    """`frameworkForPodGroup`: the pods of one group must name one scheduler (the error, else None)."""
    first = pods[0].scheduler_name if pods else ""
    for pod in pods[1:]:
        if pod.scheduler_name != first:
            return SCHEDULER_NAMES_DIFFER.format(f'"{pod.scheduler_name}"', f'"{first}"')
    return None


Evict = Callable[[int, Pod], None]
