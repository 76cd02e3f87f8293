"""How many more copies of a pod fit (what cluster-capacity reports), placed one by one through the profile.

Each copy is a full scheduling cycle on the cluster as it is (bound pods accounted, other pending pods
ignored), bound to the selected node before the next copy, until a copy fits nowhere or `limit` copies
were placed. Copies never preempt: the count is what fits beside the pods already running.

When every Filter plugin that runs for the pod judges a node by that node alone (its own requested
resources, labels, taints, name), copies placed elsewhere never change a node's verdict, so placing
stops exactly when every node is full, whatever order the scores chose: the count is computed, not
replayed (`copies_per_node`: per node, the minimum over the requested resources of
⌊free / request⌋, capped by the pods the node still takes). Plugins whose verdicts interact across
nodes (topology spread, inter-pod affinity, ports, volumes, ...) and `--max` limits the count would reach
are replayed copy by copy. So are pods with ResourceClaims: each copy is its own pod (`copy_of`), with
its own claims from a template, allocated on its node as the simulation allocates them; and a StatefulSet's
next ordinals, each with the claims of its volumeClaimTemplates, whose volumes VolumeBinding assumes on the
copy's node as the simulation does (a `kubernetes.io/no-provisioner` class's local PVs run out).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Pod
from kubefit.api.workload import PodGroup
from kubefit.errors import InputError
from kubefit.k8s.requests import PodDemand, pod_demand
from kubefit.k8s.resourcenames import PODS
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.framework import claims_gate
from kubefit.scheduler.groupplace import place_group
from kubefit.scheduler.plugins.base import SUCCESS
from kubefit.scheduler.plugins.fit import NodeResourcesFit, checked_resources
from kubefit.scheduler.plugins.volumebinding import assume_pod_volumes
from kubefit.scheduler.plugins.volumes import copy_with_assumed_volumes
from kubefit.scheduler.podgroups import GroupKey
from kubefit.scheduler.postfilter import post_filter_cycle
from kubefit.scheduler.state import ClusterState
from kubefit.told import told_keys

UNSCHEDULABLE = "Unschedulable"
Copies = Callable[[int], Pod]  # the i-th copy, as its controller creates it
LIMIT_REACHED = "LimitReached"
FAILED_CREATING_POD = "FailedCreatingPod"  # cluster-capacity's reason when creating a copy fails (here: ResourceQuota)
# Filter plugins whose verdict on a node reads only that node and the pod: copies bound on other nodes
# never change it, and on the node itself only NodeResourcesFit's accounting moves.
PER_NODE_FILTERS = frozenset({"NodeResourcesFit", "NodeUnschedulable", "NodeName", "TaintToleration",
                              "NodeAffinity"})


@dataclass
class CapacityResult:
    """The copies placed, per node, and why placing stopped."""

    pod: Pod
    count: int
    per_node: dict[str, int] = field(default_factory=dict)  # node → copies, in node order
    stop_reason: str = UNSCHEDULABLE  # Unschedulable | LimitReached | FailedCreatingPod
    message: str = ""
    warnings: list[str] | None = None  # what the user was told (set by `kubefit.verbs`; then in to_dict)
    inputs: dict | None = None  # the files, options, configuration and versions (set by `kubefit.verbs`)
    group: dict | None = None  # copies of a whole pod group: {podGroup, policy, minCount, pods} (`group_capacity`)

    def to_dict(self) -> dict:
        out = {"pod": self.pod.key, "count": self.count, "perNode": self.per_node,
               "stopReason": self.stop_reason, "message": self.message}
        if self.group is not None:
            out["podGroup"] = self.group
        return {**out, **told_keys(self.warnings, None, self.inputs)}


def estimate_capacity(state: ClusterState, config: SchedulerConfiguration, pod: Pod, *, limit: int | None = None,
                      tie_break: str = "first", seed: int | None = 0, replay: bool = False,
                      copies: Copies | None = None) -> CapacityResult:
    """Place copies of `pod` on a copy of `state` until one fits nowhere (or `limit` is reached).

    The count is computed where the pod's filters are per-node (`copies_per_node`) and replayed copy by
    copy otherwise, or when `replay` is set (both give the same counts and message). `copies`: each copy as its
    controller creates it (copy 0 is `pod`; a StatefulSet's next ordinals, each with its own claims), replayed.
    """
    profile = config.profile(pod.scheduler_name)
    if limit is None and "NodeResourcesFit" not in profile.filter_plugins:
        raise InputError(f"profile {profile.scheduler_name} does not filter with NodeResourcesFit: every copy "
                         f"would fit; give --max")
    state = copy_with_assumed_volumes(state)  # the pod's resources may add columns; the caller's state stays
    demand = pod_demand(pod)
    engine = Engine(state, config, tie_break=tie_break, seed=seed)  # one shape for the check and the replay
    # pods with claims are replayed copy by copy (DynamicResources reads more than the node), and the pod itself
    # never runs a cycle: its claims may be allocated already (placed by --place-pending), a copy's are its own
    computed = None if replay or copies or pod.resource_claims else full_cluster(state, config, pod, demand,
                                                                                  limit=limit, engine=engine)
    if computed is not None:
        per, message = computed
        count = int(per.sum())
    else:
        count, nodes, message = count_copies(state, config, pod, demand, limit=limit, engine=engine, copies=copies)
        per = np.bincount(np.asarray(nodes, dtype=np.int64), minlength=len(state))
    names = state.node_names
    per_node = {names[i]: int(per[i]) for i in np.flatnonzero(per).tolist()}
    if message is None:
        return CapacityResult(pod, count, per_node, LIMIT_REACHED,
                              f"the limit of {limit} cop{'y' if limit == 1 else 'ies'} (--max) was reached")
    return CapacityResult(pod, count, per_node, UNSCHEDULABLE, message)


def copies_per_node(state: ClusterState, config: SchedulerConfiguration, pod: Pod,
                    demand: PodDemand, engine: Engine | None = None) -> np.ndarray | None:
    """Copies of `pod` each node takes before its filters refuse one, or None when that is not closed-form.

    Closed-form when PreFilter lets the pod through, NodeResourcesFit filters and every other Filter plugin
    that runs is per-node (`PER_NODE_FILTERS`): a node the static filters reject takes 0 copies, any other
    min(allocatable pods − pods, ⌊(allocatable − requested) / request⌋ for each resource Filter checks).
    """
    sh = (engine or Engine(state, config)).shape(pod, demand)  # `engine`: one on `state`, its shape then kept
    names = [name for name, _plugin in sh.filters]
    if sh.failure is not None or "NodeResourcesFit" not in names or not set(names) <= PER_NODE_FILTERS:
        return None
    static = np.ones(len(state), dtype=bool) if sh.allowed is None else sh.allowed.copy()
    for p, (name, plugin) in enumerate(sh.filters):
        if name != "NodeResourcesFit":
            static &= sh.codes[p] == SUCCESS
        else:
            fit: NodeResourcesFit = plugin
    pods = state.index[PODS]
    copies = state.allocatable[:, pods] - state.requested[:, pods]
    for name in checked_resources(demand.requests, fit.args):
        col, want = state.index[name], demand.requests[name]
        if want <= 0:  # pragma: no cover - requests are never negative (the loader refuses them)
            continue
        free = np.maximum(state.allocatable[:, col] - state.requested[:, col], 0)
        copies = np.minimum(copies, free // want)
    return np.where(static, np.maximum(copies, 0), 0)


def full_cluster(state: ClusterState, config: SchedulerConfiguration, pod: Pod, demand: PodDemand, *,
                 limit: int | None = None, engine: Engine | None = None) -> tuple[np.ndarray, str] | None:
    """Copies per node and the FitError of the copy that no longer fits, computed (`copies_per_node`).

    None when the count is not closed-form, or `limit` copies would be placed first (then which copies
    go where depends on the scores: replay). The message is the cycle's on the filled cluster.
    """
    per = copies_per_node(state, config, pod, demand, engine)
    if per is None or (limit is not None and int(per.sum()) >= limit):
        return None
    full = state.copy()
    row = full.demand_vector(demand)
    full.requested += per[:, None] * row
    full.nonzero_requested += per[:, None] * np.array([demand.nonzero_cpu, demand.nonzero_memory], dtype=np.int64)
    engine = Engine(full, config)
    decision = engine.cycle(pod, demand)
    if decision.node is not None:  # pragma: no cover - a copy still fits: trust the replay instead
        return None
    return per, post_filter_cycle(engine, pod)[0]  # the replay's message: PostFilter part included


def count_copies(state: ClusterState, config: SchedulerConfiguration, pod: Pod, demand: PodDemand, *,
                 limit: int | None = None, tie_break: str = "first", seed: int | None = 0,
                 engine: Engine | None = None, copies: Copies | None = None) -> tuple[int, list[int], str | None]:
    """Place copies of `pod` one by one on `state` until one fits nowhere: (count, nodes, FitError).

    `engine`: one already on `state` (its shapes kept; its tie-break and seed then apply); `copies`: the i-th
    copy as its controller creates it (an InputError: it cannot create it, the count stops with why)."""
    engine = engine or Engine(state, config, tie_break=tie_break, seed=seed)
    nodes: list[int] = []
    while limit is None or len(nodes) < limit:
        new = copy_of(pod, len(nodes)) if pod.resource_claims else pod  # its own claims, made as it is created
        if copies is not None:
            try:
                new = copies(len(nodes))
            except InputError as exc:
                return len(nodes), nodes, exc.message
        waiting = claims_gate(engine.framework(new), new, engine.state) if new.resource_claims else None
        if waiting is not None:  # its claims could not be made: DynamicResources keeps it out of the queue
            return len(nodes), nodes, waiting
        decision = engine.cycle(new, demand)
        if decision.node is None:  # kube-scheduler's message, PostFilter part included (nothing is evicted)
            return len(nodes), nodes, post_filter_cycle(engine, new)[0]
        engine.bind(decision.node, decision.shape, new if new is not pod else None)
        assume_pod_volumes(decision.shape.fw.filters, state, new, decision.node)  # its claims take their PVs
        nodes.append(decision.node)
    return len(nodes), nodes, None


def group_capacity(state: ClusterState, config: SchedulerConfiguration, key: GroupKey, spec: PodGroup | None,
                   members: Sequence[Pod], *, limit: int | None = None, tie_break: str = "first",
                   seed: int | None = 0) -> CapacityResult:
    """How many more copies of a whole pod group fit: each copy a new PodGroup (v1.35: a new replica key of the
    Workload's pod group) with a copy of every pod of the group (`group_copy`), placed by one group cycle without
    preemption and counted only when every one of its pods is placed (`groupplace.place_group`, `whole`); placing
    stops at the first copy that is not. `per_node`: the copies' pods per node. The count is always replayed (a
    group's pods interact inside its cycle)."""
    profile = config.profile(members[0].scheduler_name)
    if limit is None and "NodeResourcesFit" not in profile.filter_plugins:
        raise InputError(f"profile {profile.scheduler_name} does not filter with NodeResourcesFit: every copy "
                         f"would fit; give --max")
    engine = Engine(state.copy(), config, tie_break=tie_break, seed=seed)
    per: Counter[int] = Counter()
    count, message = 0, ""
    while limit is None or count < limit:
        copy_key, copy_spec, pods = group_copy(key, spec, members, count)
        placed = place_group(engine, copy_key, copy_spec, pods, whole=True)
        if not placed.whole:
            message = f"copy {count + 1}: {placed.why}"
            break
        per.update(node for node in placed.nodes if node is not None)
        count += 1
    names = engine.state.node_names
    described = {"podGroup": f"{key[0]}/{key[1]}", "policy": None if spec is None else spec.policy.kind,
                 **({"minCount": spec.policy.min_count} if spec is not None and spec.policy.gang else {}),
                 "pods": len(members)}
    result = CapacityResult(members[0], count, {names[i]: per[i] for i in sorted(per)}, UNSCHEDULABLE, message,
                            group=described)
    if not message:
        result.stop_reason = LIMIT_REACHED
        result.message = f"the limit of {limit} cop{'y' if limit == 1 else 'ies'} (--max) was reached"
    return result


def group_copy(key: GroupKey, spec: PodGroup | None, members: Sequence[Pod], i: int
               ) -> tuple[GroupKey, PodGroup | None, list[Pod]]:
    """The i-th copy of a group, as a controller would create another one: a PodGroup `<name>-copy-<i>` and its
    pods `<pod>-copy-<i>` naming it (v1.35: the Workload's pod group under replica key `copy-<i>`), pending."""
    if members[0].workload_ref is not None:  # v1.35: another replica of the Workload's pod group
        workload, group, _replica = members[0].workload_ref
        ref = (workload, group, f"copy-{i}")
        pods = [dataclasses.replace(copy_of(p, i), node_name="", nominated_node_name="", workload_ref=ref)
                for p in members]
        return (key[0], f"{workload}/{group}/copy-{i}"), spec, pods
    name = f"{key[1]}-copy-{i}"
    copied = None if spec is None else dataclasses.replace(spec, meta=dataclasses.replace(spec.meta, name=name),
                                                           conditions=())
    pods = [dataclasses.replace(copy_of(p, i), node_name="", nominated_node_name="", scheduling_group=name)
            for p in members]
    return (key[0], name), copied, pods


def copy_of(pod: Pod, i: int) -> Pod:
    """The i-th copy as a new pod of its own (name and uid), scheduled and bound under that identity: the
    resourceclaim controller makes its own claim from each template it names (`handleClaim`: a new pod has no
    `status.resourceClaimStatuses` yet, so none of the copied pod's claims is its), and a named claim gets its
    own reservation."""
    return dataclasses.replace(pod, name=f"{pod.name}-copy-{i}", uid=f"{pod.uid or pod.name}-copy-{i}",
                               resource_claim_statuses=())
