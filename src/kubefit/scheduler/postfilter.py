"""PostFilter of a pod that fit nowhere (`RunPostFilterPlugins`), and the FitError text that includes it.

The default profile's PostFilter plugins run in order: DynamicResources first (a pod without claims:
Unschedulable "no new claims to deallocate"; its cycle state is missing when an earlier PreFilter
rejected the pod as UnschedulableAndUnresolvable, and then it fails the whole PostFilter with the error
"not found"), then DefaultPreemption (`preemption.preempt`). A success (a nominated node) ends PostFilter
and adds nothing to the message; otherwise the rejections' reasons are joined with ", " and appended to
the FitError as `... <filter reasons>. <post-filter message>`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Pod
from kubefit.scheduler.config import Profile
from kubefit.scheduler.framework import CycleResult, Framework, schedule_one
from kubefit.scheduler.plugins.base import UNRESOLVABLE
from kubefit.scheduler.preemption import DryRun, PreemptionResult, preempt
from kubefit.scheduler.state import ClusterState

DYNAMIC_RESOURCES, DEFAULT_PREEMPTION = "DynamicResources", "DefaultPreemption"
NO_CLAIMS = "no new claims to deallocate"
DRA_STATE_MISSING = "not found"


@dataclass
class PostFilterOutcome:
    """What PostFilter decided: the nominated node (None: none), its victims, the status message."""

    nominated_node: int | None = None
    victims: list[Pod] = field(default_factory=list)
    message: str = ""

    def victim_keys(self) -> list[str]:
        return sorted(p.key for p in self.victims)


def _pre_filter_rejector(result: CycleResult) -> str | None:
    """The PreFilter plugin that rejected the pod as UnschedulableAndUnresolvable (None: none did)."""
    if result.pre_filter_message is None or not len(result.codes) or int(result.codes[0]) != UNRESOLVABLE:
        return None
    return result.failed_plugin[0]


def _dra_state_missing(profile: Profile, result: CycleResult) -> bool:
    """DynamicResources' PreFilter never ran: an earlier PreFilter plugin stopped the cycle."""
    rejector = _pre_filter_rejector(result)
    order = list(profile.extension_points.get("preFilter", ()))
    if rejector is None or DYNAMIC_RESOURCES not in order:
        return False
    return rejector not in order or order.index(rejector) < order.index(DYNAMIC_RESOURCES)


def run_post_filter(profile: Profile, result: CycleResult,
                    preemption: Callable[[], PreemptionResult]) -> PostFilterOutcome:
    """`RunPostFilterPlugins` of `profile` for the failed cycle `result`; `preemption()` runs DefaultPreemption."""
    reasons: list[str] = []
    for name in profile.extension_points.get("postFilter", ()):
        if name == DYNAMIC_RESOURCES:
            if _dra_state_missing(profile, result):
                return PostFilterOutcome(message=DRA_STATE_MISSING)
            reasons.append(NO_CLAIMS)
        elif name == DEFAULT_PREEMPTION:
            answer = preemption()
            if answer.nominated_node is not None:
                return PostFilterOutcome(answer.nominated_node, answer.victims)
            reasons.append(answer.message)
    return PostFilterOutcome(message=", ".join(reasons))


def fit_error(result: CycleResult, post: PostFilterOutcome | None) -> str:
    """kube-scheduler's FitError text: the filter diagnosis, then the PostFilter message when there is one."""
    text = result.fit_error()
    return f"{text} {post.message}" if post is not None and post.message else text


def rebuilt_dry_run(fw: Framework, preemptor: Pod, pods: Sequence[Pod],
                    compile_without: Callable[[list[Pod]], ClusterState]) -> DryRun:
    """A DryRun that compiles the cluster again without the removed pods and runs PreFilter + Filter on the
    node: exact for every plugin (what upstream's AddPod/RemovePod extensions keep up to date)."""

    def dry_run(node: int, removed: Sequence[Pod]) -> tuple[int, list[str]]:
        gone = {id(p) for p in removed}
        state = compile_without([p for p in pods if id(p) not in gone])
        cycle = schedule_one(fw, state, preemptor, nodes=np.asarray([node], dtype=np.int64), score=False)
        return int(cycle.codes[node]), list(cycle.reasons.get(node, []))

    return dry_run


def default_preemption(preemptor: Pod, result: CycleResult, node_order: Sequence[int],
                       node_pods: Callable[[int], Sequence[Pod]], pdbs: Sequence, dry_run: DryRun
                       ) -> Callable[[], PreemptionResult]:
    """DefaultPreemption for `run_post_filter`, over the cycle's node statuses."""
    return lambda: preempt(preemptor, result.codes.tolist(), node_order, node_pods, pdbs, dry_run)
