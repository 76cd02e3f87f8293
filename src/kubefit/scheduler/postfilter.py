"""PostFilter of a pod that fit nowhere (`RunPostFilterPlugins`), and the FitError text that includes it.

The default profile's PostFilter plugins run in order: DynamicResources first (a pod without claims:
Unschedulable "no new claims to deallocate"; its cycle state is missing when an earlier PreFilter
rejected the pod as UnschedulableAndUnresolvable, and then it fails the whole PostFilter with the error
"not found"), then DefaultPreemption (`preemption.preempt`). A success (a nominated node) ends PostFilter
and adds nothing to the message; otherwise the rejections' reasons are joined with ", " and appended to
the FitError as `... <filter reasons>. <post-filter message>`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Pod
from kubefit.scheduler.config import Profile
from kubefit.scheduler.engine import zone_order
from kubefit.scheduler.framework import CycleResult, Framework, schedule_one
from kubefit.scheduler.plugins.base import UNRESOLVABLE
from kubefit.scheduler.plugins.volumes import assumed_volumes
from kubefit.scheduler.preemption import DryRun, PreemptionResult, preempt
from kubefit.scheduler.state import ClusterState, compile_state

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


def rebuilt_dry_run(fw: Framework, state: ClusterState, preemptor: Pod) -> DryRun:
    """A DryRun that compiles the cluster again without the removed pods and runs PreFilter + Filter on the
    node: exact for every plugin (what upstream's AddPod/RemovePod extensions keep up to date). The run's
    assumed volume bindings carry over to the rebuilt state."""
    bound = [(p, state.nodes[n].name) for n, pods in enumerate(state.pods) for p in pods]
    nodes = np.asarray([0], dtype=np.int64)

    def dry_run(node: int, removed: Sequence[Pod]) -> tuple[int, list[str]]:
        gone = {id(p) for p in removed}
        kept = [p if p.node_name == name and not p.queued else dataclasses.replace(p, node_name=name, queued=False)
                for p, name in bound if id(p) not in gone]
        trial = compile_state(state.nodes, kept, state.objects)
        trial.__dict__["_assumed_volumes"] = assumed_volumes(state)
        nodes[0] = node
        cycle = schedule_one(fw, trial, preemptor, nodes=nodes, score=False)
        return int(cycle.codes[node]), list(cycle.reasons.get(node, []))

    return dry_run


def post_filter_for(fw: Framework, state: ClusterState, preemptor: Pod, result: CycleResult,
                    dry_run: DryRun | None = None) -> PostFilterOutcome:
    """PostFilter of the profile of `fw` for the failed cycle `result` of `preemptor` on `state`."""
    dry_run = dry_run or rebuilt_dry_run(fw, state, preemptor)
    pdbs = state.objects.of("PodDisruptionBudget")
    order = zone_order(state.nodes).tolist()

    def preemption() -> PreemptionResult:
        return preempt(preemptor, result.codes.tolist(), order, lambda n: state.pods[n], pdbs, dry_run)

    return run_post_filter(fw.profile, result, preemption)
