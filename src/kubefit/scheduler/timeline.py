"""`simulate --timeline`: an event-driven replay where pods arrive, run for their duration and leave.

Events are pod arrivals (`kubefit.io/arrival`) and completions (bind time + `kubefit.io/duration`); at
one instant completions come first (their capacity is free), then arrivals.  After the events of an
instant the scheduling queue runs: the active pods in queue order (higher priority first, then
arrival order), each through the same cycle as `simulate`.  A pod that fits nowhere waits among the
unschedulable pods; a completion frees capacity, so, as kube-scheduler moves unschedulable pods back
to the active queue on a pod-delete event, every waiting pod is tried again after it.  (Back-off
timers are not modelled: simulated time jumps from event to event.)

Metrics are sampled after each instant (at most `max_samples`, evenly spread, plus the last):
allocation of every resource in percent, pods pending and running, and stranded capacity — the free
capacity on nodes where no waiting pod fits.

Pods leave through the controllers (`kubefit.manifests.controllers`, the path preemption victims and drained
nodes' pods take): at the end of its duration a pod whose `restartPolicy` is Always (every ReplicaSet's,
StatefulSet's and DaemonSet's: the kubelet restarts an exiting container, so such a pod only ends when it is
deleted) is deleted, and its controller creates a new pod at that instant, queued like an arrival (`replaces`;
`replacedBy` in the result), which runs on (its duration was the deleted pod's), through ResourceQuota admission
(the deleted pod's usage released first; a refused one is not created, with the API server's error). A pod
that completes (restartPolicy Never or OnFailure: a Job's) is not replaced, and its quota usage but `count/pods`
is released. A pod of the files is created when it arrives: ResourceQuota admission charges it then, against the
usage of the pods created, deleted and completed before (`quota_at_arrival` loading), or refuses it (not
created, with the API server's error). A workload with a `kubefit.io/duration` of its own is deleted at its `kubefit.io/arrival` (default
0) + that duration: the garbage collector deletes its pods, down its chain (a Deployment's ReplicaSets' pods,
running, waiting or not created yet), and nothing recreates them (`deleted`).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from kubefit.api.core import Pod
from kubefit.k8s.requests import pod_demand
from kubefit.k8s.resourcenames import PODS
from kubefit.k8s.version import POD_GROUP_CYCLE
from kubefit.manifests.controllers import Controllers, Owners, restarts_always
from kubefit.manifests.timing import seconds
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.engine import Engine, shape_key
from kubefit.scheduler.framework import claims_gate
from kubefit.scheduler.groupplace import place_group, running_members
from kubefit.scheduler.podgroups import WAITING_FOR_QUORUM, GroupTable, WorkloadGates, group_key
from kubefit.scheduler.simulate import allocation, not_created_message, unserved_message
from kubefit.scheduler.state import ClusterState
from kubefit.told import told_keys

COMPLETION, ARRIVAL = 0, 1  # at one instant completions are handled first
POD_GROUP = "\0podGroup"  # the mark of a pod group's waiting key (`Replay._group`; no scheduler name has a NUL)


@dataclass
class PodRun:
    """One queued pod's life: when it came, where and when it ran, when it ended."""

    pod: Pod
    arrival: int
    node: int | None = None
    bound_at: int | None = None
    ended_at: int | None = None
    times: list[int] | None = None  # every attempt's time, when recorded (`record_attempts`)
    not_created: bool = False  # its controller has not created it: a pod it waits for never ran (OrderedReady)
    replaces: str | None = None  # the key of the deleted pod whose controller created this one
    deleted: bool = False  # deleted with its owner (the garbage collector): gone, not replaced


@dataclass(frozen=True)
class OwnerDeleted:
    """The event of a workload's deletion (kind, namespace, name)."""

    key: tuple[str, str, str]


@dataclass
class TimelineResult:
    """Every pod's run, the sampled metrics, the completions, and what they freed."""

    state: ClusterState
    runs: list[PodRun]
    samples: list[dict]
    attempts: np.ndarray  # scheduling cycles per run
    messages: list[str | None]  # the last FitError of each pod still pending
    completions: list[tuple[int, int]] = field(default_factory=list)  # (time, run index), queued pods only
    retries: list[tuple[int, int, int]] = field(default_factory=list)  # (time, pods waiting, of them retried)
    freed: np.ndarray | None = None  # Σ request vectors released by completions and deletions (state columns)
    released_bound: int = 0  # completions of pods that were bound from the start
    warnings: list[str] | None = None  # what the user was told (set by `kubefit.verbs`; then in to_dict)
    inputs: dict | None = None  # the files, options, configuration and versions (set by `kubefit.verbs`)
    replaced_by: list[tuple[str, str]] = field(default_factory=list)  # (deleted pod, its controller's new pod) keys
    pod_groups: bool = False  # pod groups were scheduled as groups (each pod's row says its `podGroup`)

    def to_dict(self) -> dict:
        names = self.state.node_names
        pods = [{"pod": r.pod.name, "arrival": None if r.not_created else seconds(r.arrival),
                 "node": None if r.node is None else names[r.node],
                 "start": None if r.bound_at is None else seconds(r.bound_at),
                 "end": None if r.ended_at is None else seconds(r.ended_at),
                 "attempts": int(self.attempts[i]), **({"message": self.messages[i]} if r.node is None else {}),
                 **({"notCreated": True} if r.not_created else {}),
                 **({"replaces": r.replaces} if r.replaces is not None else {}),
                 **({"deleted": True} if r.deleted else {}),
                 **({"podGroup": "/".join(k)} if self.pod_groups and (k := group_key(r.pod)) is not None else {})}
                for i, r in enumerate(self.runs)]
        keys = sorted({k for s in self.samples for k in s["allocation"]})
        stranded = sorted({k for s in self.samples for k in s["stranded"]})
        series = {"time": [seconds(s["time"]) for s in self.samples],
                  "pending": [s["pending"] for s in self.samples], "running": [s["running"] for s in self.samples],
                  "allocation": {k: [s["allocation"].get(k, 0.0) for s in self.samples] for k in keys},
                  "stranded": {k: [s["stranded"].get(k, 0) for s in self.samples] for k in stranded}}
        scheduled = sum(1 for r in self.runs if r.node is not None)
        not_created = sum(1 for r in self.runs if r.not_created)
        gone = sum(1 for r in self.runs if r.deleted and r.node is None and not r.not_created)  # never bound
        deleted = sum(1 for r in self.runs if r.deleted)
        return {"pods": pods, "series": series, "scheduled": scheduled,
                "unschedulable": len(self.runs) - scheduled - not_created - gone,
                **({"notCreated": not_created} if not_created else {}),
                **({"deleted": deleted} if deleted else {}),
                **({"replacedBy": dict(self.replaced_by)} if self.replaced_by else {}),
                "completed": len(self.completions) + self.released_bound,
                "freed": {r: int(self.freed[c]) for r, c in self.state.index.items()} if self.freed is not None else {},
                **told_keys(self.warnings, None, self.inputs)}


class Replay:
    """The event loop over one engine: a heap of events, the active queue and the waiting pods.

    Waiting pods are kept in groups of one priority and one shape (everything the plugins read).  Within
    an instant only binds happen after the completions, and a bind only takes capacity away, so once a
    pod of a group fails, every later pod of that group fails too: the group is tried once and its other
    pods are counted as tried, with the same FitError, each moving the start index as its own failing
    cycle would (what trying each would give, faster).
    """

    def __init__(self, engine: Engine, pods: Sequence[Pod], bound: Sequence[Pod], served: set[str],
                 record: bool = False, controllers: Controllers | None = None, owners: Owners | None = None,
                 admitted: set[int] | None = None) -> None:
        self.engine, self.state = engine, engine.state
        self.controllers, self.owners = controllers, owners
        self.record = record
        self.replaced_by: list[tuple[str, str]] = []
        self.keep_shapes = owners is not None and bool(owners.deleted_at)  # a pod may be deleted before it ends
        self.alive: dict[int, tuple[int, Pod]] = {}  # pods bound from the start, still running: id → (node, pod)
        self.chains: dict[int, tuple] = {}  # run index → its owners' chain
        self.runs = [PodRun(p, p.arrival, times=[] if record else None) for p in pods]
        # runs created already (charged to their quotas): the others are created when they arrive
        self.charged = {i for i, p in enumerate(pods) if admitted and id(p) in admitted}
        self.keys: list[tuple | None] = [None] * len(self.runs)
        self.attempts = np.zeros(len(self.runs), dtype=np.int64)
        self.messages: list[str | None] = [None] * len(self.runs)
        self.events: list[tuple[int, int, int, object]] = []
        self.active: list[tuple[int, int, tuple | None, list[int] | None]] = []  # (-priority, first, group, pods)
        self.waiting: dict[tuple, list[int]] = {}
        self.running_count = sum(1 for p in bound if self.state.node_index.get(p.node_name) is not None)
        self.shapes: dict[int, object] = {}
        self.freed = np.zeros(len(self.state.resources), dtype=np.int64)
        self.completions: list[tuple[int, int]] = []
        self.retries: list[tuple[int, int, int]] = []
        self.released_bound = 0
        self.served = served
        self.seq = 0
        # an OrderedReady StatefulSet creates a pod once the pods before it run: it arrives then, if ever
        self.running = {p.key for p in bound if self.state.node_index.get(p.node_name) is not None}
        self.waiting_for: dict[str, list[int]] = {}  # pod key → runs created when it runs
        for i, run in enumerate(self.runs):
            if not self._created(i, run.arrival):
                run.not_created = True
        for pod in bound:
            node = self.state.node_index.get(pod.node_name)
            if node is not None and pod.duration is not None:
                self._event(pod.arrival + pod.duration, COMPLETION, (node, pod))
            if node is not None and self.keep_shapes:
                self.alive[id(pod)] = (node, pod)
        for key, time in sorted((owners.deleted_at if owners is not None else {}).items(), key=lambda kv: kv[1]):
            self._event(time, COMPLETION, OwnerDeleted(key))
        # pod groups scheduled as groups (v1.36+, GenericWorkload on): the pods of each that have arrived
        self.pod_groups = pod_group_table(engine, pods, bound)
        self.arrived: Counter = Counter()  # a group's pods that arrived (what its PreEnqueue counts)
        self.arrivals: dict[tuple[str, str], list[int]] = {}  # ... and are not in its entry yet
        self.queued: set[tuple[str, str]] = set()  # groups with an entry in the active queue
        self.bound_members = Counter(k for p in bound if (k := group_key(p)) is not None and p.key in self.running)

    def _created(self, i: int, now: int) -> bool:
        """Queue run `i`'s arrival (at `now` or its own arrival, the later) once every pod it waits for runs;
        else wait for the first that does not (False)."""
        run = self.runs[i]
        if run.deleted:
            return False
        waiting = next((k for k in run.pod.ordered_after if k not in self.running), None)
        if waiting is not None:
            self.waiting_for.setdefault(waiting, []).append(i)
            self.messages[i] = not_created_message(run.pod, waiting)
            return False
        run.arrival, run.not_created, self.messages[i] = max(now, run.arrival), False, None
        self._event(run.arrival, ARRIVAL, i)
        return True

    def _event(self, time: int, kind: int, payload: object) -> None:
        heapq.heappush(self.events, (time, kind, self.seq, payload))
        self.seq += 1

    def _group(self, i: int) -> tuple:
        """The waiting group of run `i`: (priority, its shape), or (priority, (POD_GROUP, namespace, name)) for a
        pod of a pod group the version schedules as one (all its pods wait and are retried together)."""
        if self.keys[i] is None:
            pod = self.runs[i].pod
            key = group_key(pod) if self.pod_groups else None
            self.keys[i] = (pod.priority, shape_key(pod) if key is None else (POD_GROUP, *key))
        return self.keys[i]

    def _free(self, row: np.ndarray) -> None:
        if len(self.freed) < len(row):
            self.freed = np.concatenate([self.freed, np.zeros(len(row) - len(self.freed), dtype=np.int64)])
        self.freed[:len(row)] += row

    def instant(self) -> int:
        """Handle every event of the next instant, then run the queue; returns its time."""
        now = self.events[0][0]
        completed = False
        while self.events and self.events[0][0] == now:
            _t, kind, _seq, payload = heapq.heappop(self.events)
            if kind == ARRIVAL:
                if not self.runs[payload].deleted and self._admitted(payload):
                    self._arrive(payload)
                continue
            if isinstance(payload, OwnerDeleted):
                completed = self._delete_owner(payload.key, now) or completed
                continue
            if isinstance(payload, tuple):  # a pod bound from the start
                if self.keep_shapes and self.alive.pop(id(payload[1]), None) is None:
                    continue  # deleted with its owner before
                completed = True
                self.running_count -= 1
                self._free(self._release(*payload))
                self.released_bound += 1
                self._ended(payload[1], payload[0], now)
            else:
                if self.runs[payload].deleted:
                    continue
                completed = True
                self.running_count -= 1
                self.runs[payload].ended_at = now
                self._free(self.engine.unbind(self.runs[payload].node, self.shapes.pop(payload), self.runs[payload].pod))
                self.completions.append((now, payload))
                self._ended(self.runs[payload].pod, self.runs[payload].node, now)
        if not completed:
            self._schedule(now)
            return now
        # MoveAllToActiveOrBackoffQueue on a pod delete: every waiting pod is tried again
        waiting = np.fromiter((i for g in self.waiting.values() for i in g), dtype=np.int64)
        before = self.attempts[waiting].copy()
        for group, members in self.waiting.items():
            heapq.heappush(self.active, (-group[0], members[0], group, members))
        self.waiting = {}
        self._schedule(now)
        self.retries.append((now, len(waiting), int(np.count_nonzero(self.attempts[waiting] > before))))
        return now

    def _arrive(self, i: int) -> None:
        """Run `i` joins the active queue; a pod group's pod joins its group's one entry (queued at its first pod)."""
        key = group_key(self.runs[i].pod) if self.pod_groups else None
        if key is not None:
            self.arrived[key] += 1
            self.arrivals.setdefault(key, []).append(i)
            if key in self.queued:
                return
            self.queued.add(key)
        heapq.heappush(self.active, (-self.runs[i].pod.priority, i, None, None))

    def _admitted(self, i: int) -> bool:
        """Run `i` created as it arrives: ResourceQuota admission against the usage now (`Controllers.created`;
        a refused pod is not created, with the API server's error). A stored pod (`metadata.uid`) exists
        already, a controller's replacement was admitted when it was made."""
        if self.controllers is None or i in self.charged or self.runs[i].pod.uid:
            return True
        self.charged.add(i)
        error = self.controllers.created(self.runs[i].pod)
        if error is not None:
            self.runs[i].not_created, self.messages[i] = True, error
        return error is None

    def _ended(self, pod: Pod, node: int, now: int) -> None:
        """`pod`'s duration is over on `node`: deleted, and replaced by its controller, when its containers
        restart always; else completed (see the module's text)."""
        if self.controllers is None:
            return
        if not restarts_always(pod):
            self.controllers.completed(pod)
            return
        for old, new, error in self.controllers.deleted([pod], self.state.node_names[node]):
            self._add(new, old.key, error, now)

    def _add(self, pod: Pod, replaces: str, error: str | None, now: int) -> None:
        """A run for the pod a controller created at `now` (not created: the API server's `error`)."""
        i = len(self.runs)
        run = PodRun(replace(pod, arrival=now, duration=None), now, times=[] if self.record else None,
                     replaces=replaces)
        self.runs.append(run)
        self.keys.append(None)
        self.attempts = np.append(self.attempts, 0)
        self.messages.append(None)
        self.charged.add(i)
        if error is not None:
            run.not_created, self.messages[i] = True, error
            return
        self.replaced_by.append((replaces, pod.key))
        if not self._created(i, now):
            run.not_created = True

    def _chain(self, i: int) -> tuple:
        if i not in self.chains:
            self.chains[i] = self.owners.chain(self.runs[i].pod) if self.owners is not None else ()
        return self.chains[i]

    def _delete_owner(self, key: tuple[str, str, str], now: int) -> bool:
        """The workload `key` deleted at `now`: every pod down its chain is deleted (running ones unbound,
        waiting ones dequeued, ones not created yet never created), none recreated. Whether any capacity
        was freed."""
        freed = False
        label = f"{key[0]}/{key[2]}"
        for i, run in enumerate(self.runs):
            if run.deleted or run.ended_at is not None or key not in self._chain(i):
                continue
            run.deleted = True
            if self.controllers is not None:
                self.controllers.removed(run.pod)
            if run.node is not None:
                run.ended_at = now
                self._free(self.engine.unbind(run.node, self.shapes.pop(i), run.pod))
                self.running_count -= 1
                freed = True
            else:
                self.messages[i] = f"deleted with its owner {label} before it was scheduled"
        for group, members in list(self.waiting.items()):
            kept = [i for i in members if not self.runs[i].deleted]
            if kept:
                self.waiting[group] = kept
            else:
                del self.waiting[group]
        for ident, (node, pod) in list(self.alive.items()):
            if key in self.owners.chain(pod):
                del self.alive[ident]
                if self.controllers is not None:
                    self.controllers.removed(pod)
                self._free(self._release(node, pod))
                self.running_count -= 1
                freed = True
        return freed

    def _release(self, node: int, pod: Pod) -> np.ndarray:
        demand = pod_demand(pod, use_status_resources=True)
        row = self.state.demand_vector(demand)
        self.state.unbind(node, pod, demand, row)
        self.engine.log_removal(node)
        return row

    def _schedule(self, now: int) -> None:
        # groups that failed at this instant: FitError, nodes processed, and the state's version then. Under binds
        # alone a group that failed still fails, but its FitError's reasons may grow (a bind used more of a
        # node): the cycle is skipped only while nothing was bound since, else the pod gets its own cycle.
        failed: dict[tuple, tuple[str, int, int]] = {}
        while self.active:
            _p, first, group, members = heapq.heappop(self.active)
            if group is None:
                group, members = self._group(first), [first]
            if group in failed and failed[group][2] == self.state.version:
                message, processed, _version = failed[group]
                self.engine.advance(processed * len(members))  # each pod's own failing cycle moves the start index
                self._wait(group, members, now, message)
                continue
            run = self.runs[first]
            if run.pod.scheduler_name not in self.served:
                self._tried(members, now)
                for i in members:
                    self.messages[i] = unserved_message(run.pod)  # never queued by kube-scheduler, never retried
                continue
            if group[1][0] == POD_GROUP:
                self._group_cycle(group, members, now)
                continue
            waiting = claims_gate(self.engine.framework(run.pod), run.pod, self.state) if run.pod.resource_claims \
                else None
            if waiting is not None:  # its claims could not be made (yet): DynamicResources keeps it out of the queue
                self._wait(group, members, now, waiting)
                continue
            d = self.engine.cycle(run.pod)
            if d.node is None:
                failed[group] = (self.engine.fit_error(d.shape), d.processed, self.state.version)
                self.engine.advance(d.processed * (len(members) - 1))
                self._wait(group, members, now, failed[group][0])
                continue
            self._tried([first], now)
            self._bind(first, d, now)
            if len(members) > 1:
                heapq.heappush(self.active, (-group[0], members[1], group, members[1:]))

    def _group_cycle(self, group: tuple, members: list[int], now: int) -> None:
        """A pod group's entry: its pods that have arrived and wait, together; GangScheduling's PreEnqueue (its
        PodGroup exists, `minCount` of its pods arrived or bound), then one group cycle without preemption
        (`groupplace.place_group`, as kube-scheduler binds a feasible group: the pods that fitted); the others wait
        for capacity to free, as a group."""
        key = group[1][1:]
        self.queued.discard(key)
        members = [i for i in sorted({*members, *self.waiting.pop(group, []), *self.arrivals.pop(key, [])})
                   if not self.runs[i].deleted and self.runs[i].node is None]
        if not members:
            return
        spec = self.pod_groups.specs.get(key)
        running = running_members(self.state, key)
        gate = self.pod_groups.missing.get(key)
        if gate is None and spec is not None and spec.policy.gang and self.pod_groups.gates.gang and \
                self.arrived[key] + self.bound_members[key] < spec.policy.min_count:
            gate = WAITING_FOR_QUORUM
        if gate is not None:  # never gets a cycle: no attempt
            for i in members:
                self.messages[i] = gate
            self.waiting[group] = members
            return
        by_pod = {id(self.runs[i].pod): i for i in members}
        placed = place_group(self.engine, key, spec, [self.runs[i].pod for i in members], bound=running,
                             whole=False)
        self._tried(members, now)
        left = []
        for pod, node, shape in zip(placed.pods, placed.nodes, placed.shapes, strict=True):
            i = by_pod[id(pod)]
            if node is None:
                left.append(i)
                self.messages[i] = placed.why
            else:
                self._bound(i, node, shape, now)
        if left:
            self.waiting[group] = sorted(left)

    def _tried(self, members: list[int], now: int) -> None:
        self.attempts[members] += 1
        if self.runs[members[0]].times is not None:
            for i in members:
                self.runs[i].times.append(now)

    def _wait(self, group: tuple, members: list[int], now: int, message: str) -> None:
        self._tried(members, now)
        for i in members:
            self.messages[i] = message
        mine = self.waiting.get(group)
        self.waiting[group] = members if mine is None else sorted(mine + members)

    def _bind(self, i: int, d, now: int) -> None:
        self.engine.bind(d.node, d.shape, self.runs[i].pod)
        self._bound(i, d.node, d.shape, now)

    def _bound(self, i: int, node: int, shape, now: int) -> None:
        """Run `i` was bound on `node` at `now` (the engine has it): its run, the pods waiting for it, its end."""
        run = self.runs[i]
        run.node, run.bound_at, self.messages[i] = node, now, None
        self.running_count += 1
        self.running.add(run.pod.key)
        for j in self.waiting_for.pop(run.pod.key, ()):  # its StatefulSet creates the next ordinal now
            self._created(j, now)
        if run.pod.duration is not None or self.keep_shapes:
            self.shapes[i] = shape
        if run.pod.duration is not None:
            self._event(now + run.pod.duration, COMPLETION, i)

    def pending(self) -> int:
        return sum(len(g) for g in self.waiting.values())

    def sample(self, now: int) -> dict:
        """Allocation %, pending, running, and the free capacity on nodes no waiting pod fits."""
        state = self.state
        free = np.maximum(state.allocatable - state.requested, 0)
        usable = np.zeros(len(state), dtype=bool)
        for members in self.waiting.values():
            usable |= self.engine.shape(self.runs[members[0]].pod).ok
        stranded = free[~usable].sum(axis=0) if self.waiting else np.zeros(len(state.resources), dtype=np.int64)
        return {"time": now, "allocation": allocation(state), "pending": self.pending(), "running": self.running_count,
                "stranded": {r: int(stranded[c]) for r, c in state.index.items() if r != PODS}}


def pod_group_table(engine: Engine, pods: Sequence[Pod], bound: Sequence[Pod]) -> GroupTable | None:
    """The pod groups of the replay when the version schedules them in group cycles (v1.36+, GenericWorkload on),
    else None (their pods are then scheduled one by one)."""
    version = engine.config.version
    if version is None or not version.has(POD_GROUP_CYCLE) or not any(group_key(p) is not None for p in pods):
        return None
    table = GroupTable.build(engine.state.objects, version, [*bound, *pods])
    return table if table.gates.generic else None


def timeline(state: ClusterState, config: SchedulerConfiguration, pods: Sequence[Pod], bound: Sequence[Pod] = (),
             *, tie_break: str = "random", seed: int | None = 0, max_samples: int = 500,
             progress: Callable[[int], None] | None = None, record_attempts: bool = False,
             controllers: Controllers | None = None, owners: Owners | None = None,
             admitted: set[int] | None = None) -> TimelineResult:
    """Replay `pods` (queue order) on `state` as they arrive and end; `bound` pods with a duration end too.

    `controllers` (`Controllers.of(scenario)`): a deleted pod's controller creates its replacement (None: nothing
    is recreated); `owners` (`Owners(scenario.workloads)`): the workloads deleted during the replay, with their
    pods (see the module's text). With `controllers`, each pod of `pods` not stored yet is created when it
    arrives, through their ResourceQuota admission (a scenario loaded with `quota_at_arrival`), but those whose
    id is in `admitted` (created already: a drained node's replacements)."""
    engine = Engine(state, config, tie_break=tie_break, seed=seed)
    replay = Replay(engine, pods, bound, {p.scheduler_name for p in config.profiles}, record_attempts,
                    controllers, owners, admitted)
    instants = len({r.arrival for r in replay.runs}) + sum(1 for p in pods if p.duration is not None) \
        + sum(1 for p in bound if p.duration is not None) + (len(owners.deleted_at) if owners is not None else 0)
    every = max(1, -(-instants // max(1, max_samples)))
    samples: list[dict] = []
    k = 0
    now = 0
    while replay.events:
        now = replay.instant()
        k += 1
        if k % every == 0:
            samples.append(replay.sample(now))
        if progress is not None and (k & 255) == 0:
            progress(int(np.count_nonzero(replay.attempts)))
    if not samples or samples[-1]["time"] != now:
        samples.append(replay.sample(now))
    if progress is not None:
        progress(len(replay.runs))
    return TimelineResult(state, replay.runs, samples, replay.attempts, replay.messages, replay.completions,
                          replay.retries, replay.freed[:len(state.resources)], replay.released_bound,
                          replaced_by=replay.replaced_by, pod_groups=bool(replay.pod_groups))


def timeline_warnings(config: SchedulerConfiguration, pods: Sequence[Pod], bound: Sequence[Pod] = ()) -> list[str]:
    """What the replay leaves out that kube-scheduler would do with these pods: v1.35's gangs waiting at Permit;
    preemption (PostFilter) when pods of different priorities meet under a profile that preempts."""
    out = []
    version = config.version
    if version is not None and not version.has(POD_GROUP_CYCLE) and WorkloadGates.of(version).gang and any(
            p.workload_ref is not None for p in pods):
        out.append(f"--timeline schedules the pods of Kubernetes {version.name}'s gangs one by one: their wait at "
                   f"Permit until minCount pods are assumed (and its 5-minute timeout) is not replayed; simulate "
                   f"without --timeline shows it")
    preempting = any(p.extension_points.get("postFilter") for p in config.profiles)
    if not preempting or len({p.priority for p in (*pods, *bound)}) < 2:
        return out
    return [*out, "--timeline does not replay preemption (DefaultPreemption): a pod that fits nowhere waits for "
            "capacity to free, and its message is the FitError without the PostFilter part; run simulate "
            "without --timeline to see which pods kube-scheduler would evict"]
