"""v1.35's gang scheduling: no pod group cycle; a gang's pods wait at Permit, holding their nodes, for one another.

Ported from kube-scheduler v1.35.7 as openshift-kni/scheduler-plugins 2117d3e3 vendors it: `gangscheduling.go`
(PreEnqueue, Reserve, Permit), `backend/workloadmanager/podgroupinfo.go` (`allPods`, `assumedPods`,
`assignedPods`, `SchedulingTimeout`), `schedule_one.go` (`schedulingCycle`, `bindingCycle`,
`handleBindingCycleError`), `backend/queue/scheduling_queue.go` (`Activate`, `AddUnschedulableIfNotPresent`,
`flushUnschedulablePodsLeftover`), `framework/runtime/waiting_pods_map.go`, `framework/preemption/preemption.go`.

A gang is the pods naming one Workload's pod group (`spec.workloadRef{name, podGroup, podGroupReplicaKey}`: the
replica key makes gangs of its own) whose policy is `gang: {minCount}`. Each of its pods is scheduled on its own:
filtered, scored, assumed, Reserve counts it assumed, and Permit lets it bind only once `minCount` pods of the gang
are assumed or bound; until then it waits, its node held (other pods see it there). Waiting, it moves the gang's
pods that failed before (the unschedulable pool) back into the active queue (`Activate`: behind the pods of their
priority already waiting there). The pod that completes the quorum allows every waiting one: they all bind.

Time, which a simulation otherwise does without, enters here. A gang's first waiting pod sets a deadline 5 minutes
ahead (`DefaultSchedulingTimeoutDuration`), shared by the gang; kube-scheduler works its queue in milliseconds, so
kubefit works the queue through (a round), then lets the deadlines pass: every gang still waiting is rejected
(`0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling.`), its pods forgotten
(their nodes free again) and sent to the unschedulable pool. Forgetting them is an AssignedPodDelete event: the pods
that failed to fit are tried again at once (the next round), and the pool's pods older than 5 minutes too
(`podMaxInUnschedulablePodsDuration`: the gang's pods rejected a round earlier). A round's queue is ordered as the
active queue orders it: priority, then the time each pod entered the pool. kubefit stops once a round binds nothing
and ends where an earlier round ended (kube-scheduler would go round for ever), or after `MAX_ROUNDS`.

What kubefit does not reproduce: a gang's later waiting pods wait a little less than 5 minutes (the time left to the
shared deadline): kubefit writes `5m0s` for all. A pending pod's retry when nothing changed since its last attempt
is skipped (it fails as before). A waiting pod chosen as a preemption victim is rejected (`1 preempted`) and sent
to the pool, not deleted, as `PreemptPod` does for waiting pods.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubefit.api.core import Pod
from kubefit.k8s.version import POD_SCHEDULING_GROUP
from kubefit.scheduler.engine import Engine, Shape
from kubefit.scheduler.groupqueue import GATED_BY, GroupRecord
from kubefit.scheduler.podgroups import GroupKey, GroupTable, group_key

PERMIT_TIMEOUT = "0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling."
PREEMPTED = "0/1 nodes are available: 1 preempted."  # a waiting victim: `waitingPod.Reject(plugin, "preempted")`
MAX_ROUNDS = 12  # rounds of 5 minutes kubefit simulates at most (an hour)
FIT, TIMEOUT = "fit", "timeout"  # why a pod is in the unschedulable pool: its FitError, or Permit rejected it


@dataclass
class Waiting:
    """A pod assumed on its node and waiting at Permit: its step (the node held) and shape."""

    step: Any
    shape: Shape
    pod: Pod


class PermitGangs:
    """The gangs of one v1.35 simulation (the module's text). `enqueue(pod)` puts a pod back in the active queue."""

    def __init__(self, engine: Engine, table: GroupTable, queued: Sequence[Pod],
                 enqueue: Callable[[Pod], None]) -> None:
        self.engine, self.table, self.enqueue = engine, table, enqueue
        self.members: dict[GroupKey, list[str]] = {}
        for pod in [*engine.state.all_pods(), *queued]:
            if (key := group_key(pod)) is not None:
                self.members.setdefault(key, []).append(pod.name)
        self.assigned = Counter(k for pods in engine.state.pods for p in pods if (k := group_key(p)) is not None)
        self.bound_names: dict[GroupKey, list[tuple[str, str]]] = {}
        for node, pods in enumerate(engine.state.pods):
            for p in pods:
                if (k := group_key(p)) is not None:
                    self.bound_names.setdefault(k, []).append((p.name, engine.state.nodes[node].name))
        self.waiting: dict[GroupKey, list[Waiting]] = {}  # in the order the gangs first waited
        self.pool: dict[str, tuple[tuple[int, int, int], Pod, str]] = {}  # pod key → (entered, pod, why)
        self.steps: dict[str, Any] = {}  # pod key → its latest step
        self.tried: dict[str, int] = {}  # pod key → the state's version its last failure saw
        self.timeouts: Counter = Counter()  # gang → times its waiting pods were rejected
        self.round, self.seq, self.bound_in_round = 0, 0, 0
        self.ends: set = set()  # how earlier rounds ended: how many pods of which gang waited on which node

    @classmethod
    def of(cls, engine: Engine, queued: Sequence[Pod], enqueue: Callable[[Pod], None]) -> PermitGangs | None:
        version = engine.config.version
        if version is None or version.has(POD_SCHEDULING_GROUP) or not any(p.workload_ref for p in queued):
            return None
        table = GroupTable.build(engine.state.objects, version, [*engine.state.all_pods(), *queued])
        return cls(engine, table, queued, enqueue) if table.gates.generic else None

    # ------------------------------------------------------------------ the queue's hooks
    def pre_enqueue(self, pod: Pod) -> str | None:
        """GangScheduling's PreEnqueue (its Workload, its pod group, a gang's quorum of pods known)."""
        key = group_key(pod)
        if key is None or "GangScheduling" not in self.engine.framework(pod).profile.extension_points.get(
                "preEnqueue", ()):
            return None
        return self.table.pre_enqueue(key)

    def record_step(self, step) -> None:
        """A pod's new step: its earlier one is no longer final (a gang pod's or a requeued pod's retry)."""
        earlier = self.steps.get(step.pod.key)
        if earlier is not None and earlier is not step:
            earlier.retried = True
        self.steps[step.pod.key] = step
        if step.group is None and (key := group_key(step.pod)) is not None and self._gang(step.pod) is not None:
            step.group = self.table.label(key)

    def failed(self, pod: Pod) -> None:
        """The pod found no node (FitError; PostFilter found none either): into the unschedulable pool."""
        self.pool[pod.key] = ((self.round, 0, self._next()), pod, FIT)
        self.tried[pod.key] = self.engine.state.version

    def bound_pod(self, step, shape: Shape, pod: Pod) -> None:
        """After the pod's Reserve: GangScheduling's Permit. Wait (the node held; the gang's pods in the pool
        activated), or, the quorum met, allow the gang's waiting pods: they bind with it."""
        self.pool.pop(pod.key, None)
        key = group_key(pod)
        spec = self._gang(pod)
        if spec is None:
            self.bound_in_round += 1
            return
        waiting = self.waiting.setdefault(key, [])
        if self.assigned[key] + len(waiting) + 1 < spec.policy.min_count:
            waiting.append(Waiting(step, shape, pod))
            self._activate(key)
            return
        for held in waiting:
            self.bound_names.setdefault(key, []).append((held.pod.name, self.engine.state.nodes[held.step.node].name))
        self.bound_names.setdefault(key, []).append((pod.name, self.engine.state.nodes[step.node].name))
        self.assigned[key] += len(waiting) + 1
        self.bound_in_round += len(waiting) + 1
        waiting.clear()

    def preempted(self, victims: Sequence[Pod]) -> list[Pod]:
        """Victims that were waiting at Permit are rejected (`preempted`), not deleted: their steps lose their node,
        they go to the pool; the victims to delete are returned."""
        waiting = {w.pod.key: (key, w) for key, ws in self.waiting.items() for w in ws}
        deleted = []
        for victim in victims:
            found = waiting.get(victim.key)
            if found is None:
                deleted.append(victim)
                continue
            key, held = found
            self.waiting[key].remove(held)
            self._reject(held, PREEMPTED, evicted=True)
        return deleted

    def after_round(self) -> bool:
        """The queue is worked through: the deadlines pass (every waiting gang rejected), and the pods kube-scheduler
        tries again are queued for the next round, 5 minutes on (rounds with nothing to do pass). False: nothing more
        happens."""
        end = frozenset(Counter((key, w.step.node) for key, ws in self.waiting.items() for w in ws).items())
        timed_out = self._time_out()
        seen, self.ends = end in self.ends, self.ends | {end}
        if not self.bound_in_round and seen:
            return False
        while self.round + 1 < MAX_ROUNDS and any(why == TIMEOUT or timed_out for _e, _p, why in self.pool.values()):
            self.round, self.bound_in_round = self.round + 1, 0
            due = self._due(timed_out)
            timed_out = False
            for pod in due:
                del self.pool[pod.key]
                self.enqueue(pod)
            if due:
                return True
        return False

    def _due(self, timed_out: bool) -> list[Pod]:
        """The pool's pods tried in the round starting now, in the active queue's order (priority, then when they
        entered the pool): with a gang just rejected (AssignedPodDelete), those that failed to fit (unless the
        cluster is as they last saw it); the pods Permit rejected a round ago (flushed after 5 minutes)."""
        version = self.engine.state.version
        due = []
        for pod_key, (entered, pod, why) in self.pool.items():
            moved = timed_out and why == FIT and self.tried.get(pod_key) != version
            flushed = why == TIMEOUT and entered[0] <= self.round - 2
            if moved or flushed:
                due.append((-pod.priority, entered, pod))
        return [pod for _p, _entered, pod in sorted(due, key=lambda item: (item[0], item[1]))]

    # ------------------------------------------------------------------ inside
    def _gang(self, pod: Pod):
        """The gang spec of a pod whose profile runs GangScheduling's Permit (None: a pod scheduled on its own)."""
        key = group_key(pod)
        spec = None if key is None else self.table.specs.get(key)
        if spec is None or not spec.policy.gang:
            return None
        return spec if "GangScheduling" in self.engine.framework(pod).profile.extension_points.get("permit", ()) \
            else None

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _activate(self, key: GroupKey) -> None:
        """`handle.Activate(podGroupInfo.UnscheduledPods())`: the gang's pods in the pool, into the active queue."""
        for pod_key, (_entered, pod, _why) in list(self.pool.items()):
            if group_key(pod) == key:
                del self.pool[pod_key]
                self.enqueue(pod)

    def _time_out(self) -> bool:
        """Every gang still waiting reaches its deadline: its pods rejected (last first), their nodes freed."""
        rejected = False
        for key, waiting in self.waiting.items():
            if waiting:
                self.timeouts[key] += 1
                rejected = True
            for held in reversed(waiting):
                self._reject(held, PERMIT_TIMEOUT, phase=1)
            waiting.clear()
        return rejected

    def _reject(self, held: Waiting, message: str, *, phase: int = 0, evicted: bool = False) -> None:
        """`handleBindingCycleError`: Unreserve, ForgetPod (the node freed unless preemption already took the pod
        off), the pod to the pool with the rejection as its FitError on one node."""
        step = held.step
        if not evicted:
            self.engine.unbind(step.node, held.shape, held.pod)
        step.node, step.ties, step.tie_count, step.message = None, (), 0, message
        self.pool[step.pod.key] = ((self.round, phase, self._next()), step.pod, TIMEOUT)

    # ------------------------------------------------------------------ the outcome
    def records(self) -> list[GroupRecord]:
        """Per gang (and group of a basic policy) of the run: its pods, what bound, what waits, why."""
        out = []
        for key, names in self.members.items():
            spec = self.table.specs.get(key)
            gang = spec is not None and spec.policy.gang
            record = GroupRecord(key[0], key[1], "" if spec is None else spec.policy.kind,
                                 spec.policy.min_count if gang else None, pods=list(names))
            record.bound = list(self.bound_names.get(key, ()))
            bound = {n for n, _node in record.bound}
            record.pending = [n for n in names if n not in bound]
            missing = self.table.missing.get(key)
            if missing is not None or (gang and self.table.known[key] < spec.policy.min_count):
                record.gated = missing or self.table.pre_enqueue(key)
            record.timed_out = self.timeouts[key] > 0 and bool(record.pending)
            record.why = self._why(record)
            out.append(record)
        return out

    def _why(self, record: GroupRecord) -> str:
        head = f"{record.policy or 'group'} {record.key}"
        if record.gated is not None:
            return f"{head}: never queued ({record.gated})"
        need = f"minCount {record.min_count}" if record.min_count is not None else f"{len(record.pods)} pods"
        if not record.pending:
            return f"{head}: {len(record.bound)} of {len(record.pods)} pods bound ({need})"
        if record.timed_out:
            times = self.timeouts[(record.namespace, record.name)]
            return (f"{head}: {len(record.bound)} of {len(record.pods)} pods bound ({need}): its pods waited at "
                    f"Permit, holding their nodes, until the 5m timeout rejected them ({times} time(s))")
        return f"{head}: {len(record.bound)} of {len(record.pods)} pods bound ({need})"


__all__ = ["GATED_BY", "MAX_ROUNDS", "PERMIT_TIMEOUT", "PermitGangs"]
