"""The pod group cycle of v1.37: GangScheduling's PlacementFeasible decides it, and no pod of it runs PostFilter.

Ported from `pkg/scheduler/schedule_one_podgroup.go` of the v1.37 code freeze (`podGroupSchedulingDefaultAlgorithm`,
`runRootSchedulingAlgorithm`, `submitPodGroupAlgorithmResult`) and `framework/plugins/gangscheduling/gangscheduling.go`
(`PlacementFeasible`, `getMinCount`), kubernetes#138643, #140215, #140412:

- before the first pod and after each one the PlacementFeasible plugins (GangScheduling's, when the profile has the
  plugin) weigh the group's progress: `minCount` (1 for a `basic` group) against the pods scheduled (bound before the
  cycle included) and those still to try. Not reachable any more: the cycle stops at once, Unschedulable
  (`minCount (4) cannot be satisfied: 2 scheduled, 1 remaining`); not reached yet: Wait and go on; reached: Success.
  Permit takes no part in the cycle (it still runs when the pods bind, and passes then).
- each pod is filtered, scored and assumed on the snapshot; a pod that fits nowhere keeps its FitError alone (no
  PostFilter runs inside the cycle: `PodGroupPostFilter` preempts for the whole group once it is unschedulable,
  `workloadpreemption.preempt_once`).
- a group whose status is Success but that scheduled no pod in the cycle is Unschedulable (`pod group is
  unschedulable`): the framework needs one pod at least.
- submitting: a feasible group binds what fitted; an unschedulable one binds nothing, its pods that fitted say
  `pod group is unschedulable, <the group's message>`, those that did not their FitError, those never tried the
  group's status of the cycle (before PodGroupPostFilter added its part).

Not read directly and so modelled on what is around it (kubefit's choice is stated): `RunPlacementFeasiblePlugins`
(GangScheduling's status passed on as it is); how the PostFilter of a pod in a group cycle is skipped (its message is
its FitError without a PostFilter part, its nominated node unchanged).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kubefit.api.core import Pod
from kubefit.scheduler.groupcycle import (
    CLEAR,
    ERROR,
    KEEP,
    POD_GROUP_UNSCHEDULABLE,
    SUCCESS,
    UNSCHEDULABLE,
    WAIT,
    GroupResult,
    GroupRun,
    PodOutcome,
    PodResult,
)


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> tuple[str, str]:
    """`GangScheduling.PlacementFeasible`: (code, message) for `scheduled` pods of the group scheduled and `remaining`
    still to try."""
    if remaining + scheduled < min_count:
        return UNSCHEDULABLE, f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
    if scheduled < min_count:
        return WAIT, f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
    return SUCCESS, ""


def with_group_error(message: str) -> str:
    """`NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable).Message()`."""
    return f"{POD_GROUP_UNSCHEDULABLE}, {message}" if message else POD_GROUP_UNSCHEDULABLE


@dataclass
class FeasibleRun(GroupRun):
    """A v1.37 group cycle (the module's text); `feasible_plugin`: GangScheduling is in the profile."""

    feasible_plugin: bool = True

    def min_count(self) -> int:
        """`getMinCount`: a gang's minCount, 1 for a basic group."""
        spec = self.spec
        return spec.policy.min_count if spec is not None and spec.policy.gang else 1

    def feasible(self, scheduled: int, remaining: int) -> tuple[str, str]:
        """`RunPlacementFeasiblePlugins`: GangScheduling's answer, Success without the plugin."""
        return placement_feasible(self.min_count(), scheduled, remaining) if self.feasible_plugin else (SUCCESS, "")

    def pod_algorithm(self, pod: Pod) -> PodResult:
        """`podGroupPodSchedulingAlgorithm`: filter and score; a pod that fits is assumed on the snapshot."""
        result = self.schedule_pod(pod)
        if result.fits:
            self.assume(result)
        return result

    def _post_filter(self, result: PodResult) -> None:
        """No PostFilter for a pod of a pod group cycle (kubernetes#140412): its FitError, its nomination kept."""
        result.message, result.nominating = self.engine.fit_error(result.shape), KEEP

    def default_algorithm(self) -> GroupResult:
        """`podGroupSchedulingDefaultAlgorithm` (the module's text); a failed group's pods are forgotten again."""
        result = GroupResult()
        scheduled, remaining = self.bound, len(self.pods)
        code, message = self.feasible(scheduled, remaining)
        if code == UNSCHEDULABLE:
            result.message = with_group_error(message)
            return result
        result.status, result.message, result.cause = code, message, None
        try:
            for pod in self.pods:
                r = self.pod_algorithm(pod)
                result.pods.append(r)
                if not r.fits and not r.rejected:
                    result.status, result.cause = ERROR, None
                    result.message = f"failed to schedule other pod from a pod group: {r.message}"
                    break
                remaining -= 1
                scheduled += int(r.fits)
                code, message = self.feasible(scheduled, remaining)
                result.status, result.message, result.cause = code, message, None
                if code == UNSCHEDULABLE:
                    break
                result.any_scheduled = result.any_scheduled or r.fits
            if result.status == WAIT:
                result.status, result.message = UNSCHEDULABLE, with_group_error(result.message)
                result.cause = POD_GROUP_UNSCHEDULABLE
        finally:
            if result.status != SUCCESS:
                self.forget()
                result.any_scheduled = False
        return result

    def placement_algorithm(self) -> GroupResult:
        """v1.37's placements: as v1.36's, the status of none feasible carrying errPodGroupUnschedulable."""
        result = super().placement_algorithm()
        if result.status == UNSCHEDULABLE and result.cause is None and result.message.startswith("0/"):
            result.message, result.cause = with_group_error(result.message), POD_GROUP_UNSCHEDULABLE
        return result

    def algorithm(self) -> GroupResult:
        """`runRootSchedulingAlgorithm`: the group's algorithm, every assumed pod forgotten after it, and a feasible
        group that scheduled nothing in the cycle made Unschedulable."""
        try:
            result = self.placement_algorithm() if self.gates.topology else self.default_algorithm()
        finally:
            self.forget()
        if result.status == SUCCESS and not result.any_scheduled:
            result.status, result.message, result.cause = (UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE,
                                                           POD_GROUP_UNSCHEDULABLE)
        return result


def submit_feasible(run: GroupRun, result: GroupResult, before_post_filter: str) -> list[PodOutcome]:
    """`submitPodGroupAlgorithmResult` of v1.37 for the pods of `run` in cycle order; `before_post_filter` is the
    group's message before PodGroupPostFilter added to it (what the pods never tried were given)."""
    outcomes = []
    for i, pod in enumerate(run.pods):
        r = result.pods[i] if i < len(result.pods) else None
        outcomes.append(dataclasses.replace(_outcome(pod, r, result, before_post_filter), result=r))
    return outcomes


def _outcome(pod: Pod, r: PodResult | None, result: GroupResult, before_post_filter: str) -> PodOutcome:
    if result.status == ERROR:
        own = r is not None and not r.fits and not r.rejected
        return PodOutcome(pod, None, r.message if own else result.message, "SchedulerError", CLEAR,
                          r.shape if r is not None else None)
    if r is None:  # never tried: `completePodGroupAlgorithmResult` gave it the group's status of the cycle
        return PodOutcome(pod, None, before_post_filter, nominated=result.nominations.get(pod.key, KEEP))
    nominated = result.nominations.get(pod.key, r.nominating)
    if r.fits and result.status == SUCCESS:
        return PodOutcome(pod, r.node, shape=r.shape)
    if r.fits and result.waiting:
        return PodOutcome(pod, None, result.message, nominated=nominated, shape=r.shape)
    if r.fits:
        return PodOutcome(pod, None, with_group_error(result.message), nominated=CLEAR, shape=r.shape)
    return PodOutcome(pod, None, r.message, nominated=nominated, shape=r.shape)
