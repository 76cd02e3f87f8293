"""Schedule a whole workload pod after pod (kube-scheduler's queue, cycle, assume) and measure the packing.

Each pending pod goes through its profile (engine.py: exactly `framework.schedule_one`, fast), is bound
to the selected node and accounted there before the next pod.  The result holds every step, the final
per-node usage and the metrics: nodes used, allocation, pending pods by reason, stranded capacity.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubefit.api.core import Pod
from kubefit.k8s.requests import PodDemand, pod_demand
from kubefit.k8s.resourcenames import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubefit.manifests.controllers import Controllers
from kubefit.scheduler.capacity import copies_per_node, count_copies
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.engine import (  # noqa: F401 - re-exported: the simulation's vocabulary
    TIE_BREAKS,
    Engine,
    num_feasible_nodes_to_find,
    shape_key,
    zone_order,
)
from kubefit.scheduler.framework import gate_message, run_pre_enqueue
from kubefit.scheduler.groupqueue import GATED_BY, GroupQueue, Hooks
from kubefit.scheduler.permitgangs import PermitGangs
from kubefit.scheduler.plugins.volumebinding import assume_pod_volumes
from kubefit.scheduler.postfilter import bound_copy, preemption_step
from kubefit.scheduler.state import ClusterState
from kubefit.told import told_keys

_NO_TIES = np.zeros(0, dtype=np.int64)


# --------------------------------------------------------------------------- the workload

@dataclass
class Step:
    pod: Pod
    node: int | None
    ties: np.ndarray | Sequence[int] = ()  # nodes sharing the best total (the first `max_ties` of them)
    tie_count: int = 0  # how many nodes shared it
    message: str | None = None  # FitError, when pending
    feasible: int | None = 0  # the feasible nodes its cycle found (upstream's len(feasibleNodes)); None: no cycle
    pre_enqueue: str | None = None  # the PreEnqueue plugin that kept the pod out of the queue (SchedulingGates)
    victims: tuple[str, ...] = ()  # PostFilter (DefaultPreemption): the pods it deleted, ns/name sorted
    nominated_node: int | None = None  # ... and the node it nominated: the next step retries the pod
    nominated_first: bool = False  # bound to its nominated node without a full cycle (evaluateNominatedNode)
    batch_hint: bool = False  # bound to the opportunistic batch's hint, unscored (v1.35+, batch.py)
    devices: dict[str, list[str]] | None = None  # DynamicResources: per claim, the devices allocated at bind
    not_created: bool = False  # its controller never created it: a pod it waits for stayed pending (OrderedReady)
    replaced_by: tuple[tuple[str, str], ...] = ()  # (victim, its replacement) keys: what the victims' controllers made
    replaces: str | None = None  # the key of the deleted pod this one replaces (its controller created it)
    group: str | None = None  # the pod group (namespace/name) whose cycle this step is part of (`groupqueue.py`)
    cycle: int | None = None  # which pod group cycle of the run (1, 2, …): its pods bind together or not at all
    retried: bool = False  # a later step schedules the pod again (a pod group's retry): this one is not final
    reason: str | None = None  # a group pod's PodScheduled reason when not Unschedulable (SchedulerError)


@dataclass
class SimulationResult:
    """Where every pod went, the final state and the packing metrics."""

    state: ClusterState
    steps: list[Step]
    initial_pods: np.ndarray  # pods per node before the run
    label: str = ""
    stranded: list[dict] = field(default_factory=list)
    warnings: list[str] | None = None  # what the user was told (set by `kubefit.verbs`; then in to_dict)
    node_actions: dict | None = None  # cordon/drain/remove and where the evicted pods went (`eviction_report`)
    partial_preemptions: list[str] = field(default_factory=list)  # "ns/pod: T of P" (see `preemption_note`)
    inputs: dict | None = None  # the files, options, configuration and versions (set by `kubefit.verbs`)
    groups: list = field(default_factory=list)  # per pod group its outcome (`groupqueue.GroupRecord`), gates on
    group_notes: list[str] = field(default_factory=list)  # what the run says of its groups (`GroupQueue.notes`)
    stopped: bool = False  # the run gave up: more pods missed than `simulate`'s `give_up` allowed

    @property
    def scheduled(self) -> int:
        return sum(1 for s in self.steps if s.node is not None)

    @property
    def unschedulable(self) -> int:
        """Queued pods left pending (a step that nominated a node is followed by the pod's retry; a pod its
        controller never created is not pending: `not_created`)."""
        return sum(1 for s in self.steps if s.node is None and s.nominated_node is None and not s.not_created
                   and not s.retried)

    @property
    def not_created(self) -> int:
        """Pods their StatefulSet never created: a lower ordinal stayed pending (podManagementPolicy OrderedReady)."""
        return sum(1 for s in self.steps if s.not_created)

    def placement(self) -> dict[str, int]:
        names = self.state.node_names
        counts = Counter(s.node for s in self.steps if s.node is not None)
        return {names[i]: counts[i] for i in sorted(counts)}

    def final(self) -> dict[str, dict]:
        return final_usage(self.state)

    def metrics(self) -> dict:
        return workload_metrics(self)

    def to_dict(self) -> dict:
        names = self.state.node_names
        ties = iter(_tie_names(self.steps, names))
        steps = []
        for s in self.steps:
            d: dict = {"pod": s.pod.name}
            if s.pod.namespace != "default":
                d["namespace"] = s.pod.namespace
            d["node"] = None if s.node is None else names[s.node]
            if s.feasible is not None:
                d["feasible"] = s.feasible
            if s.pre_enqueue is not None:
                d["preEnqueue"] = s.pre_enqueue
            if s.tie_count > 1:
                d["ties"] = next(ties)
                if s.tie_count > len(s.ties):
                    d["tieCount"] = s.tie_count
            if s.message is not None:
                d["message"] = s.message
            if s.nominated_node is not None:
                d["victims"], d["nominatedNode"] = list(s.victims), names[s.nominated_node]
            if s.nominated_first:
                d["nominatedNodeFirst"] = True
            if s.batch_hint:
                d["batchHint"] = True
            if s.devices:
                d["devices"] = s.devices
            if s.not_created:
                d["notCreated"] = True
            if s.replaced_by:
                d["replacedBy"] = dict(s.replaced_by)
            if s.replaces is not None:
                d["replaces"] = s.replaces
            if s.group is not None:
                d["podGroup"] = s.group
                if s.cycle is not None:  # (v1.35's gangs and PreEnqueue-gated pods have no group cycle)
                    d["cycle"] = s.cycle
                if s.victims and s.nominated_node is None:  # victims deleted by a pod group's cycle
                    d["victims"] = list(s.victims)
                if s.retried:
                    d["retried"] = True
                if s.reason is not None:
                    d["reason"] = s.reason
            steps.append(d)
        devices = {} if self.state.dra is None else {"devices": device_usage(self.state.dra, names)}
        created = {"notCreated": self.not_created} if self.not_created else {}
        groups = {"podGroups": [g.to_dict() for g in self.groups]} if self.groups else {}
        return {"steps": steps, "scheduled": self.scheduled, "unschedulable": self.unschedulable, **created, **groups,
                "placement": self.placement(), "final": self.final(), "allocatable": node_allocatable(self.state),
                **devices, "metrics": self.metrics(), **told_keys(self.warnings, self.node_actions, self.inputs)}


def _tie_names(steps: Sequence[Step], names: list[str]) -> list[list[str]]:
    """The node names of each step's `ties`, for the steps with more than one (`tie_count`), in step order: the
    nodes of all of them looked up at once (up to 256 a step, over 10,000 steps: one lookup, not one each)."""
    tied = [s.ties for s in steps if s.tie_count > 1]
    if not tied:
        return []
    flat = np.asarray(names, dtype=object)[np.concatenate(tied).astype(np.int64, copy=False)].tolist()
    out, at = [], 0
    for nodes in tied:
        out.append(flat[at:at + len(nodes)])
        at += len(nodes)
    return out


def final_usage(state: ClusterState) -> dict[str, dict]:
    """Per node `{requested, nonZeroRequested, pods}` as the scheduler cache holds it: cpu, ephemeral-storage and
    memory always, in name order, with any other resource requested on the node among them in name order.

    Read column by column (one list per column, not one dict comprehension per node over the columns), the nodes
    requesting another resource found with one array operation and written as before."""
    basic = sorted((CPU, EPHEMERAL_STORAGE, MEMORY))  # always shown
    others = [(r, col) for r, col in state.index.items() if r not in basic and r != PODS]
    requested = state.requested
    cpu, storage, memory, pods = (requested[:, state.index[r]].tolist() for r in (CPU, EPHEMERAL_STORAGE, MEMORY, PODS))
    nonzero = state.nonzero_requested
    out = {name: {"requested": {CPU: c, EPHEMERAL_STORAGE: e, MEMORY: m},  # (`basic`: the names in order)
                  "nonZeroRequested": {"cpu": zc, "memory": zm}, "pods": p}
           for name, c, e, m, p, zc, zm in zip(state.node_names, cpu, storage, memory, pods, nonzero[:, 0].tolist(),
                                               nonzero[:, 1].tolist(), strict=True)}
    if others:  # the nodes requesting some other resource: it joins the basic ones, in name order
        cols = [col for _r, col in others]
        for i in np.flatnonzero((requested[:, cols] != 0).any(axis=1)).tolist():
            name = state.nodes[i].name
            if state.node_index[name] != i:  # (two nodes of one name: the last one's entry stands)
                continue
            req = requested[i].tolist()
            extra = [(r, req[col]) for r, col in others if req[col] != 0]
            out[name]["requested"] = dict(sorted([*((r, req[state.index[r]]) for r in basic), *extra]))
    return out


def node_allocatable(state: ClusterState) -> dict[str, dict[str, int]]:
    """Per node its allocatable (`status.allocatable`): cpu, ephemeral-storage, memory and pods always, the
    other resources where the node has some, in name order (what a report draws `final` against).

    Made once per distinct row (the nodes of one type share theirs) and copied for each node of that row."""
    columns = sorted(state.index.items())
    shown = {CPU, EPHEMERAL_STORAGE, MEMORY, PODS}
    made: dict[tuple, dict[str, int]] = {}
    out = {}
    for name, row in zip(state.node_names, map(tuple, state.allocatable.tolist()), strict=True):
        entry = made.get(row)
        if entry is None:
            entry = made[row] = {r: row[col] for r, col in columns if row[col] or r in shown}
        out[name] = entry.copy()  # (each node its own dict, as a caller may change one)
    return out


def allocation(state: ClusterState, rows: np.ndarray | None = None) -> dict[str, float]:
    """Per resource with capacity, requested / allocatable in percent over `rows` (default all nodes)."""
    alloc = state.allocatable if rows is None else state.allocatable[rows]
    req = state.requested if rows is None else state.requested[rows]
    out = {}
    for r, col in state.index.items():
        cap = int(alloc[:, col].sum()) if len(alloc) else 0
        if cap > 0:
            out[r] = round(100.0 * int(req[:, col].sum()) / cap, 2)
    return out


def workload_metrics(result: SimulationResult) -> dict:
    """Nodes used/empty, allocation of the cluster and of used nodes, pending by reason, stranded capacity."""
    state = result.state
    pods = state.requested[:, state.index[PODS]]
    used = np.flatnonzero(pods > 0)
    by_reason: Counter[str] = Counter()
    for s in result.steps:
        if s.message is not None and s.nominated_node is None and not s.not_created and not s.retried:  # left pending
            by_reason.update(set(_message_reasons(s.message)))
    return {"nodes": len(state), "nodesUsed": len(used), "emptyNodes": len(state) - len(used),
            "allocation": allocation(state), "allocationOfUsedNodes": allocation(state, used),
            "pendingByReason": dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
            "evicted": sum(len(s.victims) for s in result.steps), "stranded": result.stranded}


def not_created_message(pod: Pod, waiting: str) -> str:
    """Why a pod's controller has not created it: `waiting` (a pod key) is not running yet."""
    return (f"{pod.created_by} creates it only once {waiting.split('/', 1)[1]} is running and ready "
            f"(podManagementPolicy OrderedReady)")


def bound_keys(state: ClusterState) -> set[str]:
    """The keys of the pods bound in `state` (what an OrderedReady StatefulSet waits for)."""
    return {p.key for pods in state.pods for p in pods}


def unserved_message(pod: Pod) -> str:
    """Why a pod whose `schedulerName` no profile has stays pending (kube-scheduler never queues it)."""
    return f"no profile serves schedulerName {pod.scheduler_name!r}; kube-scheduler leaves the pod pending"


def _message_reasons(message: str) -> list[str]:
    """The reason strings of a FitError (`0/N nodes are available: 2 Insufficient cpu, 1 ….`), the
    PostFilter part after it (`… preemption: …`) left out; any other message as it is."""
    if not message.startswith("0/"):
        return [message.split(";")[0]]
    body = message.split(":", 1)[1].strip().split(". ", 1)[0].rstrip(".")
    out = []
    for part in body.split(", "):
        count, _, reason = part.partition(" ")
        out.append(reason if count.isdigit() else part)
    return out


def stranded_capacity(engine: Engine, pending: Iterable[tuple[Pod, PodDemand]], limit: int = 10_000) -> list[dict]:
    """For each distinct pending pod shape: pods pending, copies that still fit, copies the free capacity
    would hold if it were pooled on one node (what fragmentation strands).

    `engine` is the run's, its cycles over: `copies_per_node` reads the static Filter verdicts of its cached
    shape of each pod (brought up to date with every bind, as a new Engine's shape would be, without building
    one per shape)."""
    state = engine.state
    groups: dict[tuple, list] = {}
    for pod, demand in pending:
        groups.setdefault(shape_key(pod), [pod, demand, 0])[2] += 1
    free = np.maximum(state.allocatable - state.requested, 0).sum(axis=0)
    out = []
    for pod, demand, count in groups.values():
        row = state.demand_vector(demand)
        need = row > 0
        pooled = int((free[need] // row[need]).min()) if need.any() else None
        per_node = copies_per_node(state, engine.config, pod, demand, engine)  # reads the state (binds nothing)
        fits = (min(int(per_node.sum()), limit) if per_node is not None
                else copies_in_trial(state, engine.config, pod, demand, limit))
        out.append({"pod": pod.name, "pending": count,
                    "requests": {r: int(row[c]) for r, c in state.index.items() if row[c] and r != PODS},
                    "copiesThatFit": fits, "copiesIfPooled": pooled})
    return out


def copies_in_trial(state: ClusterState, config: SchedulerConfiguration, pod: Pod, demand: PodDemand,
                     limit: int) -> int:
    """`count_copies` on the state as it is, its copies taken back after: in a trial (`checkpoint` /
    `rollback`) on the state itself, whose per-node pod counts (`podcounts`) follow the copies' binds and
    their undoing, rather than on a copy whose counts would be summed again from every pod (the same
    integers either way). On a copy when a trial is already open."""
    if state.in_trial:
        return count_copies(state.copy(), config, pod, demand, limit=limit)[0]
    state.checkpoint()
    try:
        return count_copies(state, config, pod, demand, limit=limit)[0]
    finally:
        state.rollback()


class ReplacementQueue:
    """`pods` in the given order, with the pods controllers create meanwhile queued among them as the
    scheduling queue takes them: yields (pod, the key of the pod it replaces or None).

    The active queue pops by priority, then arrival (`queuesort.PrioritySort.Less`: higher `Priority` first,
    then the earlier `Timestamp`). A controller's new pod (`manageReplicas` creates it as soon as it sees the
    deletion) arrives after every pod already waiting: it is taken after the waiting pods of priority at least
    its own, before the first of lower priority or that has not arrived yet (a later
    `metadata.creationTimestamp` than the last pod taken, in kubefit's queue order); among such new pods,
    higher priority first, then first created."""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.pods = pods
        # called once every queued pod was taken: True when it did something (a pod group's retry, which may queue
        # the replacements of its victims), and the queue goes on (`groupqueue.GroupQueue.retry_next`)
        self.after: Callable[[], bool] | None = None
        self.slots: dict[int, list] = {}  # index into `pods` → heap of (-priority, seq, pod, replaces) before it
        self.seq = 0
        self.next = 0  # the first pod of `pods` not taken yet
        self.columns: tuple[np.ndarray, np.ndarray] | None = None  # priorities and arrivals, when first needed

    def __iter__(self):
        for j, pod in enumerate(self.pods):
            self.next = j
            if self.slots:  # (no controller created a pod yet: nothing waits)
                yield from self._waiting(j)
            self.next = j + 1
            yield pod, None
        self.next = len(self.pods)
        while True:
            yield from self._waiting(len(self.pods))
            if self.after is None or not self.after():
                return

    def _waiting(self, slot: int):
        heap = self.slots.get(slot)
        while heap:
            _, _, pod, replaces = heapq.heappop(heap)
            yield pod, replaces

    def add(self, pod: Pod, replaces: str | None) -> None:
        """Queue `pod`, created by a controller for the deleted pod `replaces` (see the class's text), or (None) put
        back in the active queue (v1.35's gangs: `permitgangs.py`), with the same order."""
        if self.columns is None:
            self.columns = (np.fromiter((p.priority for p in self.pods), dtype=np.int64, count=len(self.pods)),
                            np.fromiter((-np.inf if p.created is None else p.created for p in self.pods),
                                        dtype=np.float64, count=len(self.pods)))
        priority, arrival = self.columns
        now = arrival[self.next - 1] if self.next else -np.inf
        after = (priority[self.next:] < pod.priority) | (arrival[self.next:] > now)
        slot = self.next + int(after.argmax()) if after.any() else len(self.pods)
        heapq.heappush(self.slots.setdefault(slot, []), (-pod.priority, self.seq, pod, replaces))
        self.seq += 1


def _replace_victims(victims: Sequence[Pod], node: str, controllers: Controllers | None, queue: ReplacementQueue,
                     running: set[str]) -> tuple[tuple[tuple[str, str], ...], list[Step]]:
    """The victims deleted from `node` are no longer running; each one's controller creates its replacement
    (`controllers` None: none do), queued: (victim, replacement) keys, victims in name order; and the steps of the
    replacements the API server refused to create (ResourceQuota admission: not created, with its error)."""
    deleted = sorted(victims, key=lambda p: p.key)
    for victim in deleted:
        running.discard(victim.key)
    made, refused = [], []
    for victim, new, error in ([] if controllers is None else controllers.deleted(deleted, node)):
        if error is not None:
            refused.append(Step(new, None, message=error, feasible=None, not_created=True, replaces=victim.key))
            continue
        queue.add(new, victim.key)
        made.append((victim.key, new.key))
    return tuple(made), refused


def simulate(state: ClusterState, config: SchedulerConfiguration, pods: Sequence[Pod], *,
             tie_break: str = "random", seed: int | None = 0, sampling: bool = True,
             progress: Callable[[int], None] | None = None, stranded: bool = True,
             label: str = "", max_ties: int = 256, legacy: bool | None = None,
             messages: bool = True, controllers: Controllers | None = None, give_up: int | None = None,
             exempt: Collection[str] = ()) -> SimulationResult:
    """Schedule `pods` in the given (queue) order on `state` (mutated), binding each before the next.

    `messages=False` leaves a pod that fits nowhere without its FitError text (`0/N nodes are available:
    …`), for callers that only count such pods (a `tune` trial: the text was 15 % of it).

    `give_up`: stop as soon as more than this many pods of the queue (but those named in `exempt`, by key) are
    left without a node for good (pending, never created, no profile, gated): a caller that only asks whether
    enough are placed (`plan`'s trials) knows the answer then. `stopped` then says so (its steps are the
    whole run's first ones).

    `controllers`: the scenario's (`Controllers(scenario.workloads)`): each preemption victim's controller
    creates its replacement (`Controllers.replacement_for`), queued as `ReplacementQueue` says and scheduled
    like any pod (the step that preempted names it: `replaced_by`; its own steps: `replaces`), once the
    scenario's ResourceQuotas admit it (`Controllers.of`: the victims' usage released first; a refused one is a
    `not_created` step after the preemptor's retry). None: victims are deleted and nothing recreates them (a
    scheduler without a controller manager, as the golden harness)."""
    engine = Engine(state, config, tie_break=tie_break, seed=seed, sampling=sampling, legacy=legacy)
    preempting = any(p.extension_points.get("postFilter") for p in config.profiles)
    initial = state.requested[:, state.index[PODS]].copy()
    steps: list[Step] = []
    pending: list[tuple[Pod, PodDemand]] = []
    partial: list[str] = []
    served = {p.scheduler_name for p in config.profiles}
    running = bound_keys(state) if any(p.ordered_after for p in pods) else set()
    queue = ReplacementQueue(pods)
    refused: list[Step] = []
    groups = GroupQueue.of(engine, pods)  # pod groups (GenericWorkload): one entry each (`groupqueue.py`)
    hooks = None if groups is None else _group_hooks(engine, steps, controllers, queue, running, max_ties)
    if groups is not None:
        queue.after = lambda: groups.retry_next(hooks)
    permits = None if groups is not None else PermitGangs.of(engine, pods, lambda p: queue.add(p, None))
    if permits is not None:  # v1.35: gangs wait at Permit, rounds of 5 minutes (`permitgangs.py`)
        queue.after = permits.after_round
        give_up = None  # a pod that failed may still bind in a later round: no miss is final before the end
    note = (lambda step: None) if permits is None else permits.record_step
    missed = 0  # queue pods (but `exempt`) left without a node for good, for `give_up` (a group's are not counted)
    stopped = False
    for i, (pod, replaces) in enumerate(queue):
        if give_up is not None and missed > give_up:
            stopped = True
            break
        key = None if groups is None else groups.takes(pod)
        if key is not None:
            groups.enter(key, hooks)
            continue
        waiting = next((k for k in pod.ordered_after if k not in running), None) if pod.ordered_after else None
        if waiting is not None:  # its StatefulSet creates it only once the lower ordinals run
            steps.append(Step(pod, None, message=not_created_message(pod, waiting), not_created=True,
                              replaces=replaces))
            missed += pod.key not in exempt
            continue
        if pod.scheduler_name not in served:
            steps.append(Step(pod, None, message=unserved_message(pod), feasible=None, replaces=replaces))
            missed += pod.key not in exempt
            continue
        gate = run_pre_enqueue(engine.framework(pod), pod, state)
        gated = None if gate is None else (gate[0], gate_message(gate, pod, state))
        if gated is None and permits is not None and (waiting_for := permits.pre_enqueue(pod)) is not None:
            gated = (GATED_BY, waiting_for)  # v1.35's GangScheduling PreEnqueue
        if gated is not None:  # never gets a cycle: unschedulable, nothing evaluated
            steps.append(Step(pod, None, message=gated[1], pre_enqueue=gated[0], feasible=None, replaces=replaces))
            note(steps[-1])
            missed += pod.key not in exempt
            continue
        d = engine.cycle(pod)
        if d.node is None and preempting:  # PostFilter; a nominated node: victims gone, the pod retried at once
            message, post = preemption_step(engine, pod)
            nominated = post.nominated_node
            if post.partial:
                partial.append(f"{pod.key}: {post.partial}")
            steps.append(Step(pod, None, message=message, victims=tuple(post.victim_keys()), nominated_node=nominated,
                              replaces=replaces))
            note(steps[-1])
            if nominated is not None:  # (a v1.35 gang's pod waiting at Permit is rejected, not deleted)
                deleted = post.victims if permits is None else permits.preempted(post.victims)
                steps[-1].replaced_by, refused = _replace_victims(deleted, state.nodes[nominated].name,
                                                                  controllers, queue, running)
            if nominated is None:  # that step is final
                pending.append((pod, d.shape.ctx.demand))
                if permits is not None:
                    permits.failed(pod)
                missed += pod.key not in exempt
                d = None
            else:
                pod = dataclasses.replace(pod, nominated_node_name=state.nodes[nominated].name)
                d = engine.cycle(pod)
        if d is None:
            pass
        elif d.node is None:  # a retry that still fails is final too (PostFilter once per queued pod)
            steps.append(Step(pod, None, message=engine.fit_error(d.shape) if messages else "", replaces=replaces))
            pending.append((pod, d.shape.ctx.demand))
            note(steps[-1])
            if permits is not None:
                permits.failed(pod)
            missed += pod.key not in exempt
        else:
            bound = bound_copy(pod, len(steps))
            engine.bind(d.node, d.shape, bound)
            assume_pod_volumes(d.shape.fw.filters, state, pod, d.node)
            running.add(pod.key)
            ties = d.best[:max_ties].astype(np.int32) if len(d.best) > 1 else _NO_TIES
            devices = state.dra.devices_of(bound) if state.dra is not None and state.dra.holds(bound) else None
            steps.append(Step(pod, d.node, ties, len(d.best), None, d.feasible, nominated_first=d.nominated_first,
                              batch_hint=d.batch_hint, devices=devices, replaces=replaces))
            note(steps[-1])
            if permits is not None:
                permits.bound_pod(steps[-1], d.shape, bound)
        if refused:  # the creates refused when this pod's victims were deleted, after its retry
            steps += refused
            refused = []
        if progress is not None and (i & 255) == 255:
            progress(min(i + 1, len(pods)))
    if progress is not None:
        progress(len(pods))
    stopped = stopped or (give_up is not None and missed > give_up)
    if groups is not None:  # a group's attempts before its last are no longer said (but those that preempted)
        steps[:] = [s for s in steps if not s.retried or s.victims]
        pending += [(s.pod, pod_demand(s.pod)) for s in steps if s.group is not None and s.node is None
                    and not s.retried]
    if permits is not None:  # v1.35: a pod's earlier attempts likewise; what is pending at the end
        steps[:] = [s for s in steps if not s.retried or s.victims]
        pending = [(s.pod, pod_demand(s.pod)) for s in steps if s.node is None and not s.retried
                   and s.nominated_node is None and s.pre_enqueue is None and not s.not_created
                   and s.feasible is not None]
    records = list(groups.records.values()) if groups is not None else [] if permits is None else permits.records()
    result = SimulationResult(state, steps, initial, label, partial_preemptions=partial, groups=records,
                              group_notes=[] if groups is None else groups.notes(), stopped=stopped)
    if stranded and pending and not stopped:
        result.stranded = stranded_capacity(engine, pending)
    return result


def _group_hooks(engine: Engine, steps: list[Step], controllers: Controllers | None, queue: ReplacementQueue,
                 running: set[str], max_ties: int) -> Hooks:
    """What a pod group's cycles do to this simulation: bind a pod (its step), leave one pending (its step),
    delete preemption victims (their controllers' replacements queued)."""
    state = engine.state

    def bind(outcome, _result, *, group: str, cycle: int) -> None:
        pod, node, r = outcome.pod, outcome.node, outcome.result
        bound = bound_copy(pod, len(steps))
        engine.bind(node, outcome.shape, bound)
        assume_pod_volumes(outcome.shape.fw.filters, state, pod, node)
        running.add(pod.key)
        best = r.best if r is not None and r.best is not None else _NO_TIES
        ties = best[:max_ties].astype(np.int32) if len(best) > 1 else _NO_TIES
        devices = state.dra.devices_of(bound) if pod.resource_claims and state.dra is not None else None
        steps.append(Step(pod, node, ties, len(best), None, r.feasible if r is not None else 1,
                          nominated_first=r is not None and r.nominated_first, devices=devices, group=group,
                          cycle=cycle))

    def fail(pod: Pod, outcome, *, group: str, cycle: int | None = None, gated: str | None = None) -> None:
        r = outcome.result
        steps.append(Step(pod, None, message=outcome.message, pre_enqueue=gated,
                          feasible=None if gated is not None or r is None else r.feasible, group=group, cycle=cycle,
                          reason=None if outcome.reason == "Unschedulable" else outcome.reason))

    def evict(victims: dict[int, list[Pod]], step: Step | None) -> None:
        for node, pods in victims.items():
            for victim in pods:
                engine.evict(node, victim)
            made, refused = _replace_victims(pods, state.nodes[node].name, controllers, queue, running)
            if step is not None:
                step.victims = tuple(sorted({*step.victims, *(p.key for p in pods)}))
                step.replaced_by = (*step.replaced_by, *made)
            steps.extend(refused)

    return Hooks(bind, fail, evict, steps)


def device_usage(dra: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    """`devices` of `-o json`: per node with devices, how many its pools hold and which are allocated, per driver,
    and its pools device by device (`kubefit.scheduler.dra.view`)."""
    from kubefit.scheduler.dra.view import pools_by_node

    usage = dra.usage(names)
    for node, pools in pools_by_node(dra, names).items():
        if node in usage:
            usage[node]["pools"] = pools
    return usage


def run_notes(result: SimulationResult) -> list[str]:
    """What the run itself found to tell: a preemption kube-scheduler may resolve differently (`preemption_note`),
    a DRA pool order that may have mattered, reservations refused."""
    notes = [note for note in (preemption_note(result),) if note is not None]
    notes += result.group_notes
    held = [g for g in result.groups if g.timed_out]
    if held:  # v1.35: what the gangs held while waiting at Permit was free again only after their timeout
        notes.append(f"{len(held)} gang(s) (e.g. {held[0].key}) never reached minCount: their pods waited at Permit "
                     f"holding their nodes until the 5m timeout rejected them (kube-scheduler v1.35); kubefit tried "
                     f"again what kube-scheduler tries again (the pods the freed nodes requeue, the rejected pods 5 "
                     f"minutes later) until nothing changed")
    if result.state.dra is not None:
        notes += result.state.dra.notes
    return notes


def preemption_note(result: SimulationResult) -> str | None:
    """The warning for preemptions whose dry run stopped before trying every potential node: upstream
    starts it at a random node (`GetOffsetAndNumCandidates`), kubefit at the first, so the nominated
    node may differ. None when every dry run tried every potential node (then the answers agree)."""
    if not result.partial_preemptions:
        return None
    return (f"DefaultPreemption: {len(result.partial_preemptions)} preemption(s) stopped their dry run before "
            f"trying every potential node (e.g. {result.partial_preemptions[0]}); kube-scheduler starts it at a "
            "random node, kubefit at the first in node order, so the nominated node and victims may differ")
