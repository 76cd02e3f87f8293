"""PostFilter of a pod that fit nowhere (`RunPostFilterPlugins`), and the FitError text that includes it.

The default profile's PostFilter plugins run in order: DynamicResources first (a pod without claims:
Unschedulable "no new claims to deallocate"; its cycle state is missing when an earlier PreFilter
rejected the pod as UnschedulableAndUnresolvable, and then it fails the whole PostFilter with the error
"not found"), then DefaultPreemption (`preemption.preempt`). A success (a nominated node) ends PostFilter
and adds nothing to the message; otherwise the rejections' reasons are joined with ", " and appended to
the FitError as `... <filter reasons>. <post-filter message>`.

In a simulation (the golden README's preemption rule) a nominated node's victims are deleted at once and
the same pod is retried immediately (`preemption_step`), its nominated node first (`Engine.cycle`).

A pod with claims gets DynamicResources' own PostFilter (`dynamic_resources_post_filter`): "still not
schedulable", or the deallocation of an allocated claim no other pod reserves, which a simulation applies.
Preemption's dry run sees the claims and devices as the cycle's PreFilter saw them (a frozen copy): in
v1.34 removing a victim frees none of its devices for the preemptor's Filter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from kubefit.api.core import Pod, copied
from kubefit.k8s.requests import PodDemand, pod_demand
from kubefit.manifests.disruption import PDB, current_budgets
from kubefit.scheduler.config import Profile
from kubefit.scheduler.engine import Engine, zone_order
from kubefit.scheduler.framework import (
    CycleResult,
    Framework,
    new_context,
    run_pre_enqueue,
    run_pre_filters,
    schedule_one,
)
from kubefit.scheduler.plugins.base import UNRESOLVABLE
from kubefit.scheduler.plugins.volumes import assumed_volumes
from kubefit.scheduler.preemption import NodeTrial, PreemptionResult, preempt
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
    partial: str | None = None  # "tried T of P potential nodes" when DryRunPreemption stopped early
    deallocate: list = field(default_factory=list)  # claims DynamicResources' PostFilter deallocated (ns, name)

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


def run_post_filter(profile: Profile, result: CycleResult, preemption: Callable[[], PreemptionResult],
                    dynamic_resources: Callable[[], tuple[str, list]] | None = None) -> PostFilterOutcome:
    """`RunPostFilterPlugins` of `profile` for the failed cycle `result`; `preemption()` runs DefaultPreemption,
    `dynamic_resources()` DynamicResources' PostFilter (its message and the claims it deallocates; None: a
    pod without claims, "no new claims to deallocate")."""
    reasons: list[str] = []
    deallocated: list = []
    for name in profile.extension_points.get("postFilter", ()):
        if name == DYNAMIC_RESOURCES:
            if _dra_state_missing(profile, result):
                return PostFilterOutcome(message=DRA_STATE_MISSING)
            message, deallocated = dynamic_resources() if dynamic_resources is not None else (NO_CLAIMS, [])
            reasons.append(message)
        elif name == DEFAULT_PREEMPTION:
            answer = preemption()
            if answer.nominated_node is not None:
                partial = f"{answer.tried} of {answer.potential}" if answer.tried < answer.potential else None
                return PostFilterOutcome(answer.nominated_node, answer.victims, partial=partial,
                                         deallocate=deallocated)
            reasons.append(answer.message)
    return PostFilterOutcome(message=", ".join(reasons), deallocate=deallocated)


def dynamic_resources_post_filter(fw: Framework, state: ClusterState, pod: Pod,
                                  result: CycleResult) -> Callable[[], tuple[str, list]] | None:
    """DynamicResources' PostFilter for the failed cycle `result` (None when the pod has no claims), with the
    cycle's PreFilter state and the nodes its Filter ran on (those no earlier Filter plugin rejected)."""
    plugin = dict(fw.filters).get(DYNAMIC_RESOURCES)
    if plugin is None or not (pod.resource_claims or (state.dra is not None and state.dra.needs(pod))):
        return None

    def post_filter() -> tuple[str, list]:
        if _pre_filter_rejector(result) == DYNAMIC_RESOURCES:
            return NO_CLAIMS, []  # PreFilter wrote its state with no claims before refusing them
        ctx = new_context(state, pod)
        if plugin.pre_filter(state, ctx).code != 0:
            return NO_CLAIMS, []
        order = [name for name, _p in fw.filters]
        after = set(order[order.index(DYNAMIC_RESOURCES):])
        ran_on = np.asarray([n for n, failed in enumerate(result.failed_plugin) if failed is None or failed in after],
                            dtype=np.int64) if result.pre_filter_message is None else np.zeros(0, dtype=np.int64)
        return plugin.post_filter(state, ctx, ran_on)

    return post_filter


def filters_after_preemption(fw: Framework, state: ClusterState, pod: Pod, post: PostFilterOutcome) -> dict:
    """Each Filter plugin alone on every node as the golden cases show it after a preemption: with the
    cycle's PreFilter state (computed before PostFilter) on the nodes as PostFilter left them (victims
    deleted): what calling the plugins' Filter once the cycle is over gives."""
    ctx = new_context(state, pod)
    active, _failure, _names, _skipped = run_pre_filters(fw, state, ctx)
    after = state.copy(frozen_dra=True)
    for victim in post.victims:
        after.unbind(post.nominated_node, victim)
    idx = np.arange(len(after), dtype=np.int64)
    return {name: plugin.filter(after, ctx, idx) for name, plugin in active}


def fit_error(result: CycleResult, post: PostFilterOutcome | None) -> str:
    """kube-scheduler's FitError text: the filter diagnosis, then the PostFilter message when there is one."""
    return with_post_filter(result.fit_error(), post)


def with_post_filter(text: str, post: PostFilterOutcome | None) -> str:
    """The filter diagnosis `text` followed by PostFilter's message when there is one."""
    return f"{text} {post.message}" if post is not None and post.message else text


@dataclass
class StateTrial:
    """A NodeTrial on a copy of the run's ClusterState: victims leave and come back through unbind/bind (so
    every per-node structure behaves as NodeInfo does), and PreFilter + Filter run on that node alone.
    `restore` undoes the trial, so one copy serves every node (plugins' count memos follow the change log)."""

    fw: Framework
    state: ClusterState
    preemptor: Pod
    node: int
    ops: list = field(default_factory=list)  # (pod, +1 added / -1 removed)
    saved: tuple = ()
    demands: dict = field(default_factory=dict)  # id(pod) → (pod, its PodDemand): shared by one dry run's trials

    def __post_init__(self) -> None:
        n = self.node
        self.saved = (list(self.state.pods[n]), {ip: set(pp) for ip, pp in self.state.used_ports[n].items()})

    def demand(self, pod: Pod) -> PodDemand:
        """`pod_demand` of a pod on the node (status resources counted as the cache counts them), or of the
        preemptor (as its cycle reads it); each computed once per dry run."""
        known = self.demands.get(id(pod))
        if known is None:
            bound = pod is not self.preemptor
            known = self.demands[id(pod)] = (pod, pod_demand(pod, use_status_resources=bound))
        return known[1]

    def remove(self, pod: Pod) -> None:
        self.state.unbind(self.node, pod, self.demand(pod))
        self.ops.append((pod, -1))

    def add(self, pod: Pod) -> None:
        self.state.bind(self.node, self.demand(pod), pod=pod)
        self.ops.append((pod, 1))

    def fits(self) -> tuple[int, list[str]]:
        nodes = np.asarray([self.node], dtype=np.int64)
        cycle = schedule_one(self.fw, self.state, self.preemptor, demand=self.demand(self.preemptor), nodes=nodes,
                             score=False)
        return int(cycle.codes[self.node]), list(cycle.reasons.get(self.node, []))

    def restore(self) -> None:
        """Undo every remove/add (pod order and the node's used ports exactly as before)."""
        for pod, delta in reversed(self.ops):
            if delta > 0:
                self.state.unbind(self.node, pod, self.demand(pod))
            else:
                self.state.bind(self.node, self.demand(pod), pod=pod)
        self.state.pods[self.node], self.state.used_ports[self.node] = self.saved
        self.ops = []


def state_trials(fw: Framework, state: ClusterState, preemptor: Pod) -> Callable[[int], NodeTrial]:
    """Node → a StateTrial on one copy of `state` (with the run's assumed volume bindings), the previous
    node's trial undone first."""
    shared: dict[str, object] = {}
    demands: dict[int, tuple[Pod, PodDemand]] = {}

    def trial(node: int) -> NodeTrial:
        if "copy" not in shared:
            shared["copy"] = state.copy(frozen_dra=True)  # DynamicResources: the cycle's PreFilter state
            shared["copy"].__dict__["_assumed_volumes"] = assumed_volumes(state)
        else:
            shared["last"].restore()
        shared["last"] = StateTrial(fw, shared["copy"], preemptor, node, demands=demands)
        return shared["last"]

    return trial


def post_filter_for(fw: Framework, state: ClusterState, preemptor: Pod, result: CycleResult,
                    node_order: np.ndarray | None = None, not_eligible: str | None = None) -> PostFilterOutcome:
    """PostFilter of the profile of `fw` for the failed cycle `result` of `preemptor` on `state`;
    `node_order` is `zone_order(state.nodes)` when the caller has it; `not_eligible`: DefaultPreemption's answer
    for a pod of a pod group it does not preempt for (`groupcycle.per_pod_preemption`), no dry run."""
    trials = state_trials(fw, state, preemptor)
    order = zone_order(state.nodes) if node_order is None else node_order

    def preemption() -> PreemptionResult:
        if not_eligible is not None:
            return PreemptionResult(message=not_eligible)
        anywhere = state.has_pod_below(preemptor.priority)
        # budgets without a status: the disruption controller's, for the cluster as it is now; only read when some
        # node has a victim (each budget matches every pod of its namespace: not once per pending pod for nothing)
        pdbs = current_budgets(state.objects.of(PDB), (p for pods in state.pods for p in pods),
                               (preemptor,)) if anywhere else []
        return preempt(preemptor, result.codes, order, lambda n: list(state.pods[n]), pdbs, trials,
                       fw.profile.plugin_args.get(DEFAULT_PREEMPTION), victims_anywhere=anywhere)

    post = run_post_filter(fw.profile, result, preemption, dynamic_resources_post_filter(fw, state, preemptor, result))
    if fw.preemption_says_where and post.nominated_node is not None:  # v1.37 (kubernetes#140180)
        post.message = (f"preemption: found a potential placement for pod on node {state.nodes[post.nominated_node].name}"
                        f", preempting {len(post.victims)} victims")
    return post


# --------------------------------------------------------------------------- the sequence rule (simulate)

SIMULATION_EPOCH = datetime(2030, 1, 1, tzinfo=UTC)
_EPOCH_SECONDS = int(SIMULATION_EPOCH.timestamp())


_FIRST_DAY = SIMULATION_EPOCH.strftime("%Y-%m-%dT")


def bound_copy(pod: Pod, step: int) -> Pod:
    """The pod as bound at step `step` of a simulation: `status.startTime` = 2030-01-01T00:00:00Z + step s
    (preemption orders victims and candidates by start time)."""
    return copied(pod, start_time=simulation_time(step))


def simulation_time(seconds: int) -> str:
    """`SIMULATION_EPOCH` + `seconds` in RFC 3339 (the first day's times formatted directly, 3x faster).

    >>> simulation_time(0), simulation_time(3_723), simulation_time(86_400 * 400 + 59)
    ('2030-01-01T00:00:00Z', '2030-01-01T01:02:03Z', '2031-02-05T00:00:59Z')
    """
    if 0 <= seconds < 86_400:
        minutes, s = divmod(seconds, 60)
        return "%s%02d:%02d:%02dZ" % (_FIRST_DAY, minutes // 60, minutes % 60, s)  # noqa: UP031 - the fastest
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_EPOCH_SECONDS + seconds))


def post_filter_cycle(engine: Engine, pod: Pod, not_eligible: str | None = None) -> tuple[str, PostFilterOutcome]:
    """PostFilter for a pod whose cycle found no node: the FitError text and PostFilter's answer (nothing
    evicted yet).

    The filter statuses are the engine's for the pod's shape (`Engine.filter_codes`, kept with the FitError
    text), what `schedule_one` gives; the plain cycle runs when PreFilter (which DynamicResources' PostFilter
    asks about) or a PreEnqueue plugin stopped the pod."""
    fw = engine.framework(pod)
    sh = engine.shape(pod)
    codes = engine.filter_codes(sh) if run_pre_enqueue(fw, pod, engine.state) is None else None
    if codes is None:
        result = schedule_one(fw, engine.state, pod, score=False)
        text = result.fit_error()
    else:
        n = len(engine.state)
        result = CycleResult(pod, n, codes, [None] * n, {}, np.zeros(0, dtype=np.int64))
        text = engine.fit_error(sh)
    if not fw.profile.extension_points.get("postFilter"):
        return text, PostFilterOutcome()
    post = post_filter_for(fw, engine.state, pod, result, engine.order, not_eligible)
    return with_post_filter(text, post), post


def preemption_step(engine: Engine, pod: Pod) -> tuple[str, PostFilterOutcome]:
    """`post_filter_cycle`, then a nominated node's victims are deleted at once (SchedulerAsyncPreemption off)."""
    message, post = post_filter_cycle(engine, pod)
    for victim in post.victims:  # all on the nominated node
        engine.evict(post.nominated_node, victim)
    dra = engine.state.dra
    for key in post.deallocate:  # DynamicResources' PostFilter: the claim's devices are free again
        deleting = key[0] == "delete"
        key = key[1] if deleting else key
        nodes = dra.nodes_of(dra.claims[key].allocation)
        dra.delete(key) if deleting else dra.deallocate(key)
        for node in sorted(nodes):
            engine.log_removal(node)
    return message, post
