"""`consolidate`: which nodes today's workload can do without, each removal checked by the profile itself.

Today's cluster is the scenario with its pending pods scheduled first (a `simulate` run: what kube-scheduler
does before anything is removed). Then, as cluster-autoscaler's scale-down plans (`core/scaledown/planner`
`categorizeNodes` → `simulator/cluster.go` `SimulateNodeRemoval`), the candidates are tried one at a time in
a fixed order:

- candidates: every node, but one whose utilization is not below `--utilization-threshold` (autoscaler
  `eligibility.isNodeBelowUtilizationThreshold`, `NotUnderutilized`; its flag's default is 0.5, kubefit's is no
  threshold). Utilization is `simulator/utilization` `Calculate`'s: the larger of cpu and memory requests /
  allocatable, every pod of the node counted (DaemonSet and mirror pods too, `--ignore-daemonsets-utilization`
  off); a node without cpu or memory allocatable has none and is no candidate (`UnexpectedError`).
- order: empty nodes first (nothing to move: `processors/scaledowncandidates/emptycandidates` puts them
  first), then ascending utilization, then node order; `--order cost`: the dearest node first
  (`kubefit.io/cost`, default 1, as `plan` reads it), then that order.
- each candidate: drainability (`drainability.drain`, refusals named), then a trial on the engine
  (`Engine.remove_node`: cluster-autoscaler removes the node from its snapshot too, `findPlaceFor`): each pod
  that must move is replaced as its controller would (`nodeactions.replacement`) and scheduled by the profile
  on the remaining nodes in queue order, without preemption (a move evicts no one). The removal is accepted
  when every pod is placed, and its moves stay for the next candidates (the autoscaler persists a successful
  simulation); else it is rolled back (`NoPlaceToMovePods`, with the FitError). A trial that must fail
  (`Consolidator.no_room`: a pod that no remaining node has NodeResourcesFit's room for) is refused on that pod
  after one cycle, not after the cycles of the pods queued before it.

Unlike the autoscaler (Filter only, the first node that passes: `RunFiltersUntilPassingNode`) and Karpenter
(its own first-fit scheduler, `disruption/helpers.go` `SimulateScheduling`), a moved pod goes where the
profile's scores send it, sampled and tie-broken as `simulate` does.

The answer is then what a user would see (`Verifier`): `simulate --remove <removable>` on today's cluster
must place every replacement of the removed nodes' pods, preempting no one, and its cluster is the one reported
after (each pod's `from` is its node today, `to` where that run puts it). Only the removed nodes' pods move
(cluster-autoscaler `SimulateNodeRemoval` / `GetPodsToMove`): the pods today's run placed stay where it placed
them on the nodes that are kept. Removing nodes one
after the other is not removing them at once: a DoNotSchedule spread constraint, say, lets a pod of the first
removed node move to another zone, while with all of them gone at once their pods must go back to the zones
they left, which may be full. When the check fails, the nodes of the pods it leaves pending are kept and the
check runs again on the others (each round keeps at least one node more). `lowerbound` says how far the answer
is from any consolidation's limit, `repack` what the workload needs when scheduled from scratch.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING

import numpy as np

from kubefit.api.core import Node, Pod, copied
from kubefit.collector import collector_paused
from kubefit.errors import InputError
from kubefit.k8s.requests import DemandMemo, PodDemand
from kubefit.k8s.resourcenames import CPU, MEMORY, PODS
from kubefit.manifests.disruption import PDB, current_budgets
from kubefit.manifests.load import TERMINAL_PHASES, Scenario, queue_order
from kubefit.manifests.templates import template_cost
from kubefit.planning.drainability import (
    LOST,
    Budgets,
    Drain,
    DrainOptions,
    Verdict,
    drain,
    per_node_pod,
    pod_verdict,
)
from kubefit.planning.lowerbound import LowerBound, lower_bound
from kubefit.scheduler.compare import Candidate
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.engine import TIE_BREAKS, Engine
from kubefit.scheduler.framework import run_pre_enqueue
from kubefit.scheduler.groupplace import place_group, running_members
from kubefit.scheduler.nodeactions import NodeActions, apply_node_actions, replacement
from kubefit.scheduler.plugins.volumes import assumed_volumes
from kubefit.scheduler.podgroups import GroupKey, GroupTable, group_key
from kubefit.scheduler.postfilter import bound_copy, simulation_time
from kubefit.scheduler.simulate import allocation, preemption_note, simulate, unserved_message
from kubefit.scheduler.state import ClusterState, compile_state
from kubefit.told import told_keys

if TYPE_CHECKING:
    from kubefit.planning.sweep import Sweep

ORDERS = ("utilization", "cost")
HOSTNAME_LABEL = "kubernetes.io/hostname"
FIT = "NodeResourcesFit"
Progress = Callable[[int, int], None]  # (candidates tried, candidates)


@dataclass(frozen=True)
class ConsolidateOptions:
    """How candidates are chosen and ordered, drain options, and the simulation's tie-break."""

    order: str = "utilization"
    utilization_threshold: float | None = None
    max_nodes: int | None = None
    drain: DrainOptions = field(default_factory=DrainOptions)
    tie_break: str = "random"
    seed: int | None = 0

    def check(self) -> None:
        if self.order not in ORDERS:
            raise InputError(f"must be one of {', '.join(ORDERS)}, got {self.order!r}", field="--order")
        if self.tie_break not in TIE_BREAKS:
            raise InputError(f"must be random or first, got {self.tie_break!r}", field="--tie-break")
        t = self.utilization_threshold
        if t is not None and not 0 <= t <= 1:
            raise InputError(f"must be between 0 and 1 (a fraction of allocatable), got {t}",
                             field="--utilization-threshold")
        if self.max_nodes is not None and self.max_nodes < 0:
            raise InputError(f"must be 0 or more, got {self.max_nodes}", field="--max-nodes")


@dataclass
class Consolidation:
    """The nodes that can go (in the order they were removed), why the others stay, each pod's move, and the
    cluster before and after; `to_dict()` is `-o json` (node → reason in `blocked`)."""

    removable: list[str]
    blocked: dict[str, str]
    moves: list[dict]
    lost: list[dict]
    nodes: list[dict]  # per node: its cost, allocatable, usage before and after (None: removed), utilization
    nodes_before: int
    nodes_after: int
    bound: LowerBound
    cost_before: Decimal
    cost_after: Decimal
    utilization_before: dict[str, float]
    utilization_after: dict[str, float]
    candidates: list[str]  # in the order they were tried
    trials: int  # removals simulated on the engine
    pending: list[str]  # pods today's cluster leaves pending (not part of the workload moved)
    verification: dict  # `simulate --remove <removable>`: simulations run, removals it dropped
    configuration: str = "scenario"
    repack: list[dict] | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] | None = None  # what the user was told (set by `kubefit.verbs`; then in to_dict)
    inputs: dict | None = None  # the files, options, configuration and versions (set by `kubefit.verbs`)

    @property
    def lower_bound(self) -> int:
        return self.bound.nodes

    def to_dict(self) -> dict:
        out = {"removable": self.removable, "blocked": self.blocked, "moves": self.moves, "lost": self.lost,
               "nodesBefore": self.nodes_before, "nodesAfter": self.nodes_after, "lowerBound": self.bound.nodes,
               "lowerBoundParts": self.bound.to_dict(), "costBefore": _number(self.cost_before),
               "costAfter": _number(self.cost_after), "costSaved": _number(self.cost_before - self.cost_after),
               "utilization": {"before": self.utilization_before, "after": self.utilization_after},
               "configuration": self.configuration, "candidates": self.candidates, "trials": self.trials,
               "pendingToday": self.pending, "verification": self.verification, "nodes": self.nodes}
        if self.repack is not None:
            out["repack"] = self.repack
        return {**out, **told_keys(self.warnings, None, self.inputs)}


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def node_utilization(state: ClusterState, node: int) -> tuple[float, str] | None:
    """cluster-autoscaler's `utilization.Calculate` for a node without GPUs: (the larger of cpu and memory
    requests / allocatable, which of them), as float64 of milli-values; None when cpu or memory allocatable is
    0 (the autoscaler's error: it never removes such a node)."""
    cpu, memory = state.index[CPU], state.index[MEMORY]
    alloc, req = state.allocatable[node], state.requested[node]
    if int(alloc[cpu]) <= 0 or int(alloc[memory]) <= 0:
        return None
    cpu_util = float(int(req[cpu])) / float(int(alloc[cpu]))  # millicores: MilliValue already
    mem_util = float(int(req[memory]) * 1000) / float(int(alloc[memory]) * 1000)  # bytes → MilliValue
    return (cpu_util, CPU) if cpu_util > mem_util else (mem_util, MEMORY)


def pinned_to(pod: Pod, node: Node, nodes: Sequence[Node]) -> bool:
    """Whether the pod can run on its node only: its required node affinity names that node alone in every
    term (`matchFields metadata.name`), or its nodeSelector names a hostname only that node has."""
    required = ((pod.affinity or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = (required or {}).get("nodeSelectorTerms") or []
    if terms and all(any(f.get("key") == "metadata.name" and f.get("operator") == "In"
                         and list(f.get("values") or []) == [node.name] for f in (t or {}).get("matchFields") or [])
                     for t in terms):
        return True
    host = (pod.node_selector or {}).get(HOSTNAME_LABEL)
    return host is not None and host == node.labels.get(HOSTNAME_LABEL) and sum(
        1 for n in nodes if n.labels.get(HOSTNAME_LABEL) == host) == 1


def usage(state: ClusterState, node: int) -> dict[str, int]:
    """A node's requested cpu (millicores), memory (bytes) and pod count."""
    row = state.requested[node]
    return {"cpu": int(row[state.index[CPU]]), "memory": int(row[state.index[MEMORY]]),
            "pods": int(row[state.index[PODS]])}


class Consolidator:
    """The greedy removal on one engine over today's cluster (see the module's docstring)."""

    def __init__(self, scenario: Scenario, config: SchedulerConfiguration, options: ConsolidateOptions,
                 state: ClusterState) -> None:
        self.scenario, self.config, self.options, self.state = scenario, config, options, state
        queue = scenario.pending_pods
        self.today = None
        if queue:
            self.today = simulate(self.state, config, queue, tie_break=options.tie_break, seed=options.seed,
                                  stranded=False, label="today")
        self.engine = Engine(self.state, config, tie_break=options.tie_break, seed=options.seed)
        # budgets without a status: as the disruption controller computes them for today's cluster, the pending
        # pods placed (then bound and healthy), those left pending counted but not healthy
        placed = {p.key for p in self.state.all_pods()}
        self.budgets = Budgets(current_budgets(self.state.objects.of(PDB), self.state.all_pods(),
                                               [p for p in queue if p.key not in placed]))
        self.served = {p.scheduler_name for p in config.profiles}
        self.demands = DemandMemo(use_status_resources=False)
        self.verdicts: dict[int, tuple[Pod, Verdict]] = {}  # id → (the pod, kept alive: ids stay unique; its verdict)
        self.moved: set[int] = set()  # ids of the pods it bound (a pod moved before moves again as it is)
        self.drains: dict[int, tuple[tuple[Pod, ...], Drain]] = {}  # node → (its pods then, `drain`'s answer)
        self.fit_profiles: dict[int, tuple[object, bool]] = {}  # id → (framework, runs NodeResourcesFit's Filter)
        self.removed: list[int] = []
        self.trials = 0
        self.step = 0  # start times of the pods it binds (`simulation_time`)
        self.groups = GroupTable.build(state.objects, config.version, [*state.all_pods(), *queue])  # gates on

    # ------------------------------------------------------------------ one candidate
    def try_node(self, i: int) -> str | None:
        """Remove node `i` if its pods let it go and all that must move is placed; else why not."""
        engine = self.engine
        if len(self.removed) + 1 >= len(self.state):
            return "the cluster's last node (a cluster keeps at least one)"
        plan = self.drain(i)
        if plan.blocked is not None:
            return plan.blocked
        broken = self.gang_lost([pod for pod, _why in plan.lost])
        if broken is not None:
            return broken
        self.trials += 1
        checkpoint = engine.checkpoint()
        engine.remove_node(i)
        queue = queue_order(plan.moves)
        hopeless = self.no_room(queue)
        if hopeless is not None:
            outcome = self._move(hopeless)
            engine.rollback(checkpoint)
            if isinstance(outcome, str):
                return outcome
            checkpoint = engine.checkpoint()  # placed after all (not NodeResourcesFit's verdict): the whole trial
            engine.remove_node(i)
        bound: list[int] = []
        for key, pods in group_entries(queue, self.groups):
            outcome = self._move(pods[0]) if key is None else self._move_group(key, pods)
            if isinstance(outcome, str):
                engine.rollback(checkpoint)
                return outcome
            bound += [outcome] if isinstance(outcome, int) else outcome
        engine.commit()
        self.moved.update(bound)
        self.removed.append(i)
        return None

    def no_room(self, queue: list[Pod]) -> Pod | None:
        """The first pod of the queue that no remaining node has the room for, as NodeResourcesFit's Filter
        judges cpu, memory and the pod count (`fitsRequest`: a request above allocatable less requested; a
        node at its pod limit), in a profile that runs that Filter; None when each has some node. A trial only
        adds pods to the remaining nodes, so such a pod fits nowhere when its turn comes either: the trial is
        refused with that pod's FitError, found in one cycle instead of the queue's (the pods ahead of it might
        have failed first: the refusal names a pod that fails, not always the first)."""
        state, groups = self.state, self.groups
        checked = [p for p in queue if self._fit_filters(p)
                   and (not groups or group_key(p) not in groups.known)]  # a gang's: its own reason
        if not checked:
            return None
        cpu, memory, pods = state.index[CPU], state.index[MEMORY], state.index[PODS]
        alloc, req = state.allocatable, state.requested
        slot = ~state.removed & (alloc[:, pods] > req[:, pods])  # a remaining node below its pod limit
        free_cpu, free_memory = (alloc[:, cpu] - req[:, cpu])[slot], (alloc[:, memory] - req[:, memory])[slot]
        fits: dict[tuple[int, int], bool] = {}  # (cpu, memory) asked → some node has the room
        for pod in checked:
            requests = self.demand(pod).requests
            ask = (requests.get(CPU, 0), requests.get(MEMORY, 0))
            room = fits.get(ask)
            if room is None:
                room = fits[ask] = bool((((ask[0] == 0) | (free_cpu >= ask[0]))
                                         & ((ask[1] == 0) | (free_memory >= ask[1]))).any())
            if not room:
                return pod
        return None

    def _fit_filters(self, pod: Pod) -> bool:
        """Whether the pod's profile runs NodeResourcesFit's Filter (once per profile)."""
        fw = self.engine.framework(pod)
        known = self.fit_profiles.get(id(fw))
        if known is None or known[0] is not fw:
            known = self.fit_profiles[id(fw)] = (fw, any(name == FIT for name, _ in fw.filters))
        return known[1]

    def demand(self, pod: Pod) -> PodDemand:
        """What the pod's replacement requests (its spec's: a new pod has no status), once per pod."""
        return self.demands(pod)

    def verdict(self, pod: Pod) -> Verdict:
        """`pod_verdict` (static for a pod: the rules read the pod, the budgets' selectors and the options)."""
        known = self.verdicts.get(id(pod))
        if known is None:
            known = self.verdicts[id(pod)] = (pod, pod_verdict(pod, self.budgets, self.options.drain))
        return known[1]

    def drain(self, i: int) -> Drain:
        """What draining node `i` would do now: computed again only when the node's pods changed since it was
        last asked (a removal that moved pods onto it). The rest is fixed for the run: the node, the budgets
        (each node is judged against them as they are, `drainability`), the options, each pod's verdict."""
        pods = self.state.pods[i]
        known = self.drains.get(i)
        if known is not None and len(known[0]) == len(pods) and all(a is b for a, b in zip(known[0], pods, strict=True)):
            return known[1]
        plan = drain(self.state.nodes[i], pods, self.budgets, self.options.drain, self.verdict)
        self.drains[i] = (tuple(pods), plan)
        return plan

    def _move(self, pod: Pod) -> int | str:
        """Schedule the pod's replacement on the remaining nodes and bind it: the bound pod's id, or why it fits
        nowhere. A pod of the scenario's own is replaced by its controller; one placed today from the
        scenario's queue, or moved before, is queued again as it is (as `simulate --remove` queues pending pods)."""
        new = replacement(pod) if pod.bound and id(pod) not in self.moved else replace(
            pod, node_name="", start_time="", resource_claim_statuses=())  # its claims went with it: made anew
        assert new is not None  # a pod that moves has a controller (`drainability.MOVES`)
        what = f"pod {new.key}" + (f" (replacing {pod.key})" if new.name != pod.name else "")
        if new.scheduler_name not in self.served:
            return f"no place for {what}: {unserved_message(new)} (cluster-autoscaler NoPlaceToMovePods)"
        gate = run_pre_enqueue(self.engine.framework(new), new, self.engine.state)
        if gate is not None:
            return f"no place for {what}: {', '.join(gate[1].reasons)} (cluster-autoscaler NoPlaceToMovePods)"
        decision = self.engine.cycle(new)
        if decision.node is None:
            return (f"no place for {what}: {self.engine.fit_error(decision.shape)} "
                    "(cluster-autoscaler NoPlaceToMovePods)")
        self.step += 1
        bound = replace(new, node_name=self.state.nodes[decision.node].name, start_time=simulation_time(self.step))
        self.engine.bind(decision.node, decision.shape, bound)
        return id(bound)

    def _move_group(self, key: GroupKey, pods: list[Pod]) -> list[int] | str:
        """The replacements of a pod group's pods on the removed node, placed whole by one group cycle beside the
        group's pods still running (`groupplace.place_group`): the bound pods' ids, or why the group cannot be
        placed whole again."""
        news = [replacement(p) if p.bound and id(p) not in self.moved else replace(p, node_name="", start_time="")
                for p in pods]
        assert all(n is not None for n in news)  # pods that move have a controller (`drainability.MOVES`)
        state = self.state
        running = running_members(state, key)

        def as_bound(pod: Pod, node: int) -> Pod:
            self.step += 1
            return replace(pod, node_name=state.nodes[node].name, start_time=simulation_time(self.step))

        placed = place_group(self.engine, key, self.groups.specs.get(key), news, bound=running, as_bound=as_bound)
        if not placed.whole:
            return (f"pod group {placed.label} cannot be placed whole again: {len(news)} of its pods run on the "
                    f"node ({running} elsewhere): {placed.why}")
        return [id(p) for p in placed.placed if p is not None]

    def gang_lost(self, lost: list[Pod]) -> str | None:
        """A gang's pod that removing the node deletes for good (no controller, `--force`): the gang is broken, it
        cannot be placed whole again, and the node stays."""
        for pod in lost:
            key = group_key(pod) if self.groups else None
            spec = None if key is None else self.groups.specs.get(key)
            if spec is not None and spec.policy.gang:
                return (f"pod {pod.key} of gang {key[0]}/{key[1]} (minCount {spec.policy.min_count}) would be deleted "
                        f"and nothing recreates it: the gang cannot be placed whole again")
        return None

    # ------------------------------------------------------------------ candidates
    def candidates(self, costs: list[Decimal]) -> tuple[list[int], dict[int, str], set[int]]:
        """The candidates in the order they are tried, the nodes that are none (with why), and the nodes no
        consolidation can remove (refused today by a rule that still holds later, or running a pinned pod)."""
        state, options = self.state, self.options
        refused: dict[int, str] = {}
        forced: set[int] = set()
        keys: dict[int, tuple] = {}
        threshold = options.utilization_threshold
        for i, node in enumerate(state.nodes):
            util = node_utilization(state, i)
            if util is None:
                refused[i] = ("no utilization: cpu or memory allocatable is 0 (cluster-autoscaler "
                              "UnexpectedError, never removed)")
            elif threshold is not None and util[0] >= threshold:
                refused[i] = (f"{util[1]} {100 * util[0]:.1f}% requested, not below --utilization-threshold "
                              f"{threshold:g} (cluster-autoscaler NotUnderutilized)")
            plan = self.drain(i)
            if plan.blocked is not None or i in refused:
                forced.add(i)  # pods only ever join a node that stays, budgets only shrink: still refused later
            elif any(pinned_to(p, node, state.nodes) for p in plan.moves):
                forced.add(i)
            if i not in refused:
                empty = not plan.moves and not plan.lost and plan.blocked is None
                keys[i] = (0 if empty else 1, util[0] if util else 0.0, i)
        order = sorted(keys, key=(lambda i: (-costs[i], keys[i])) if options.order == "cost" else keys.__getitem__)
        return order, refused, forced

    def run(self, order: list[int], progress: Progress | None = None) -> tuple[dict[int, str], int]:
        """Try the candidates in order (up to `max_nodes` removals): the refusals, and how many were tried."""
        refused: dict[int, str] = {}
        limit = self.options.max_nodes
        tried = 0
        for i in order:
            if limit is not None and len(self.removed) >= limit:
                break
            reason = self.try_node(i)
            if reason is not None:
                refused[i] = reason
            tried += 1
            if progress is not None and (tried & 15 == 0 or tried == len(order)):
                progress(tried, len(order))
        return refused, tried

    # ------------------------------------------------------------------ the answer
    def overhead_and_leaving(self) -> tuple[set[int], set[int]]:
        """Ids of today's per-node pods (DaemonSet, mirror: they leave with their node) and of the pods a
        removal would delete (no controller to recreate them, and allowed to go)."""
        overhead, leaving = set(), set()
        for pods in self.state.pods:
            for pod in pods:
                if per_node_pod(pod):
                    overhead.add(id(pod))
                elif self.verdict(pod).outcome == LOST:
                    leaving.add(id(pod))
        return overhead, leaving


def group_entries(queue: Sequence[Pod], groups: GroupTable | None) -> list[tuple[GroupKey | None, list[Pod]]]:
    """The queue's entries in order: a single pod `(None, [pod])`, or a pod group's pods together where its first
    pod is (`(key, pods)`), as kube-scheduler's queue takes a group (GenericWorkload on; `groups` of the run)."""
    entries: list[tuple[GroupKey | None, list[Pod]]] = []
    at: dict[GroupKey, int] = {}
    for pod in queue:
        key = group_key(pod) if groups else None
        if key is None or key not in groups.known:
            entries.append((None, [pod]))
        elif key in at:
            entries[at[key]][1].append(pod)
        else:
            at[key] = len(entries)
            entries.append((key, [pod]))
    return entries


def _named(pod: Pod) -> dict:
    """`{"pod": name}` (and its namespace when not default, as `simulate` names pods)."""
    return {"pod": pod.name} if pod.namespace == "default" else {"pod": pod.name, "namespace": pod.namespace}


@dataclass
class Check:
    """`simulate --remove <nodes>` on the scenario: what it leaves undone, each with the node today of the pod
    concerned (None: a pod of no removed node); and the cluster it ends with: where each pod that changed node
    went, the pods lost, each node's usage and the allocation."""

    failures: list[tuple[str, str | None]] = field(default_factory=list)
    moves: list[dict] = field(default_factory=list)
    lost: list[tuple[Pod, str]] = field(default_factory=list)  # (the pod as it ran, its node)
    after: dict[str, dict[str, int]] = field(default_factory=dict)
    allocation: dict[str, float] = field(default_factory=dict)


class Verifier:
    """`simulate --remove <nodes>` on today's cluster, checked: every replacement must be placed, and no pod
    preempted.

    Today's cluster is the scenario with the pods today's run placed bound where it placed them (those it left
    pending are no part of the workload, and the pods it preempted are gone): only the removed nodes' pods
    move, as cluster-autoscaler moves them (`SimulateNodeRemoval` → `GetPodsToMove`: the pods of the node
    removed, nothing else is rescheduled); re-running the whole queue without the nodes would shuffle pods
    between nodes that stay. A check is a trial on one engine over that cluster: the nodes removed
    (`Engine.remove_nodes`: the cluster without them, exactly), the replacements scheduled in queue order from a
    fresh tie-break generator and sampling start, then rolled back; without PostFilter, as a pod it cannot
    place fails either way (where simulate would preempt, someone is evicted)."""

    def __init__(self, scenario: Scenario, config: SchedulerConfiguration, options: ConsolidateOptions,
                 compiled: ClusterState) -> None:
        self.scenario, self.config, self.options = scenario, config, options
        self.engine = Engine(compiled, config, tie_break=options.tie_break, seed=options.seed)
        self.served = {p.scheduler_name for p in config.profiles}
        self.runs = 0
        self.groups = GroupTable.build(compiled.objects, config.version, [*compiled.all_pods(),
                                                                         *scenario.pending_pods])

    def check(self, removable: list[str]) -> Check:
        self.runs += 1
        after, evicted = apply_node_actions(self.scenario, NodeActions(remove=list(removable)))
        origin = {e.replacement.key: (e.pod, e.pod.node_name) for e in evicted.evictions if e.replacement is not None}
        out = Check(lost=[(e.pod, e.pod.node_name) for e in evicted.evictions if e.replacement is None])
        where = self._engine_run(removable, after, out, origin)
        for e in evicted.evictions:  # its controller's create refused (ResourceQuota): it never reaches the queue
            if e.replacement is not None and e.refused is not None:
                out.failures.append((f"{e.replacement.key} (replacing {e.pod.key} of {e.pod.node_name}) is not "
                                     f"created: {e.refused}", e.pod.node_name))
        for key, node in where.items():
            came = origin.get(key)
            if came is not None and node is not None and came[1] != node:
                out.moves.append({**_named(came[0]), "replacement": key.partition("/")[2], "from": came[1],
                                  "to": node})
        return out

    def _fail(self, out: Check, origin: dict, key: str, why: str) -> None:
        came = origin.get(key)
        replacing = f" (replacing {came[0].key} of {came[1]})" if came and came[0] is not None else ""
        out.failures.append((f"{key}{replacing} stays pending: {why}", came[1] if came else None))

    def _engine_run(self, removable: list[str], after: Scenario, out: Check, origin: dict) -> dict[str, str | None]:
        engine, index = self.engine, self.engine.state.node_index
        checkpoint = engine.checkpoint()
        engine.rng.seed(self.options.seed)
        engine.next_start = 0
        where: dict[str, str | None] = {}
        try:
            engine.remove_nodes([index[name] for name in removable])
            step = 0
            for key, pods in group_entries(after.pending_pods, self.groups):
                placed = [self._place(pods[0], step)] if key is None else self._place_group(key, pods)
                for pod, (node, why) in zip(pods, placed, strict=True):
                    where[pod.key] = node
                    if why is not None:
                        self._fail(out, origin, pod.key, why)
                step += len(pods)
            state = engine.state
            present = np.flatnonzero(~state.removed) if state.removed is not None else np.arange(len(state))
            out.after = {state.nodes[i].name: usage(state, i) for i in present.tolist()}
            out.allocation = allocation(state, present)
        finally:
            engine.rollback(checkpoint)
        return where

    def _place_group(self, key: GroupKey, pods: list[Pod]) -> list[tuple[str | None, str | None]]:
        """A pod group's replacements placed whole by one group cycle beside its pods still running: per pod (its
        node, None) or (None, why the group is not placed whole)."""
        engine = self.engine
        state = engine.state
        placed = place_group(engine, key, self.groups.specs.get(key), pods, bound=running_members(state, key))
        if not placed.whole:
            return [(None, f"pod group {placed.label} is not placed whole: {placed.why}")] * len(pods)
        nodes = {p.key: state.nodes[n].name for p, n in zip(placed.pods, placed.nodes, strict=True)}
        return [(nodes[p.key], None) for p in pods]

    def _place(self, pod: Pod, step: int) -> tuple[str | None, str | None]:
        """Schedule the pod on the verifying engine, bound where it lands: (its node, None) or (None, why not)."""
        engine = self.engine
        if pod.scheduler_name not in self.served:
            return None, unserved_message(pod)
        gate = run_pre_enqueue(engine.framework(pod), pod, engine.state)
        if gate is not None:
            return None, ", ".join(gate[1].reasons)
        decision = engine.cycle(pod)
        if decision.node is None:
            return None, engine.fit_error(decision.shape)
        engine.bind(decision.node, decision.shape, bound_copy(pod, step))
        return engine.state.nodes[decision.node].name, None


def _today(consolidator: Consolidator) -> tuple[list[str], list[str], dict[str, str]]:
    """Notes on the pending pods scheduled first, the pods they leave pending, and where each was placed."""
    today = consolidator.today
    if today is None:
        return [], [], {}
    names = consolidator.state.node_names
    placed = {s.pod.key: names[s.node] for s in today.steps if s.node is not None}
    pending = sorted({s.pod.key for s in today.steps if s.node is None} - set(placed))
    notes = [f"{len(today.steps)} pending pod(s) scheduled first: today's cluster is the scenario after "
             f"kube-scheduler placed {len(placed)} of them"]
    if pending:
        notes.append(f"{len(pending)} pending pod(s) fit nowhere today (e.g. {pending[0]}); they are not part of "
                     "the workload that must keep fitting")
    note = preemption_note(today)
    if note is not None:
        notes.append(note)
    return notes, pending, placed


def _today_cluster(scenario: Scenario, work: Consolidator) -> tuple[Scenario, ClusterState]:
    """Today's cluster before any removal, as a scenario and compiled: the scenario itself when it has no
    pending pods, else its pods as today's run left them bound (the pods it placed on their nodes, the pods it
    preempted gone, the pods it left pending out), the volumes it assumed kept."""
    compiled = work.state.copy()
    if work.today is None:
        return scenario, compiled
    compiled.__dict__["_assumed_volumes"] = copy.deepcopy(assumed_volumes(work.state))
    terminal = [p for p in scenario.pods if p.bound and p.phase in TERMINAL_PHASES]
    # (`copied`, not `replace`, which reads every field, each manifest decoded: 20,000 pods at 2,000 nodes, 0.3 s)
    running = [p if p.node_name == node.name else copied(p, node_name=node.name, queued=False)
               for node, pods in zip(work.state.nodes, work.state.pods, strict=True) for p in pods]
    return replace(scenario, pods=[*running, *terminal]), compiled


def consolidate(scenario: Scenario, config: SchedulerConfiguration, options: ConsolidateOptions | None = None, *,
                state: ClusterState | None = None, repack_configs: Sequence[Candidate] = (),
                configuration: str = "scenario", progress: Progress | None = None,
                sweep: Sweep | None = None) -> Consolidation:
    """The nodes today's workload can do without (see the module's docstring); `state`: the scenario compiled
    (else compiled here; it is changed), `repack_configs`: the configurations to repack the workload under
    (on the Dask workers of `sweep` when it has some, see `repack`)."""
    options = options or ConsolidateOptions()
    options.check()
    if not scenario.nodes:
        raise InputError("the scenario has no Node objects", file=scenario.files)
    costs = [template_cost(n) for n in scenario.nodes]
    state = state if state is not None else compile_state(scenario.nodes, scenario.pods, scenario.objects)
    work = Consolidator(scenario, config, options, state)
    today_cluster, verified = _today_cluster(scenario, work)  # the verifier works on it
    notes, pending, _placed = _today(work)
    before = [usage(work.state, i) for i in range(len(work.state))]
    util = [node_utilization(work.state, i) for i in range(len(work.state))]
    utilization_before = allocation(work.state)
    overhead, leaving = work.overhead_and_leaving()
    order, refused, forced = work.candidates(costs)
    bound = lower_bound(work.state, config, forced, overhead, leaving)
    refusals, tried = work.run(order, progress)
    if tried < len(order):
        notes.append(f"stopped after --max-nodes {options.max_nodes} removal(s): {len(order) - tried} "
                     "candidate(s) not tried")
    verifier = Verifier(today_cluster, config, options, verified)
    removed, dropped = list(work.removed), []
    names = work.state.node_names
    while True:
        check = verifier.check([names[i] for i in removed])
        if not check.failures or not removed:
            break
        origins = {node for _why, node in check.failures}
        drop = [i for i in removed if names[i] in origins] or removed[-1:]
        for i in drop:
            why = next((w for w, node in check.failures if node == names[i]), check.failures[0][0])
            refusals[i] = f"removed at once with the other removable nodes (simulate --remove), {why}"
        dropped += [names[i] for i in drop]
        notes.append(f"simulate --remove of the {len(removed)} nodes removed one by one: {check.failures[0][0]}"
                     f"{f' (and {len(check.failures) - 1} more)' if len(check.failures) > 1 else ''}; "
                     f"kept: {', '.join(names[i] for i in drop)}")
        removed = [i for i in removed if i not in drop]
    lost = [{**_named(pod), "from": node, "reason": work.verdict(pod).reason or "declares no controller"}
            for pod, node in check.lost]
    gone = set(removed)
    nodes = [{"name": n.name, "cost": _number(costs[i]), "removed": i in gone,
              "utilization": None if util[i] is None else round(util[i][0], 4),
              "allocatable": {"cpu": int(state.allocatable[i, state.index[CPU]]),
                              "memory": int(state.allocatable[i, state.index[MEMORY]]),
                              "pods": int(state.allocatable[i, state.index[PODS]])},
              "before": before[i], "after": check.after.get(n.name)}
             for i, n in enumerate(state.nodes)]
    result = Consolidation(
        removable=[names[i] for i in removed],
        blocked={names[i]: reason for i, reason in {**refused, **refusals}.items() if i not in gone},
        moves=check.moves, lost=lost, nodes=nodes, nodes_before=len(state), nodes_after=len(state) - len(removed),
        bound=bound, cost_before=sum(costs, Decimal(0)),
        cost_after=sum((c for i, c in enumerate(costs) if i not in gone), Decimal(0)),
        utilization_before=utilization_before, utilization_after=check.allocation,
        candidates=[names[i] for i in order], trials=work.trials, pending=pending,
        verification={"simulations": verifier.runs, "dropped": dropped}, configuration=configuration, notes=notes)
    if repack_configs:
        result.repack = repack(scenario, repack_configs, costs, options, sweep)
    return result


def repack(scenario: Scenario, configs: Sequence[Candidate], costs: list[Decimal],
           options: ConsolidateOptions, sweep: Sweep | None = None) -> list[dict]:
    """Every pod of the scenario scheduled from scratch under each configuration: DaemonSet and mirror pods
    stay on their nodes (per-node overhead), every other pod, bound or pending, is queued in queue order onto
    the otherwise empty nodes. Per configuration: the nodes that run some pod beyond their overhead, their cost,
    the pods placed and left pending. `sweep` (started with Dask workers): each configuration runs there, on a
    copy of the nodes and overhead compiled here once and shipped to each worker once (`run_repack`)."""
    stays = [p.bound and per_node_pod(p) for p in scenario.pods]
    overhead = [p for p, keep in zip(scenario.pods, stays, strict=True) if keep]
    queue = queue_order([replace(p, node_name="", nominated_node_name="") for p, keep
                         in zip(scenario.pods, stays, strict=True) if not keep and p.phase not in TERMINAL_PHASES])
    if sweep is not None and sweep.pool is not None:
        work = RepackWork(compile_state(scenario.nodes, overhead, scenario.objects), queue, costs, options.tie_break,
                          options.seed)
        return sweep.map(run_repack, work, configs)
    return [_repacked(compile_state(scenario.nodes, overhead, scenario.objects), queue, cand, costs, options.tie_break,
                      options.seed) for cand in configs]


@dataclass
class RepackWork:
    """What each worker holds for `--repack`: the nodes with their overhead compiled, the queue, the costs."""

    state: ClusterState
    queue: list[Pod]
    costs: list[Decimal]
    tie_break: str
    seed: int | None


def run_repack(work: RepackWork, cand: Candidate) -> dict:
    """On a worker: one configuration's repack, on a copy of the compiled nodes and overhead."""
    with collector_paused():
        return _repacked(work.state.copy(), work.queue, cand, work.costs, work.tie_break, work.seed)


def _repacked(state: ClusterState, queue: list[Pod], cand: Candidate, costs: list[Decimal], tie_break: str,
              seed: int | None) -> dict:
    result = simulate(state, cand.config, queue, tie_break=tie_break, seed=seed, stranded=False, label=cand.label)
    used = sorted({s.node for s in result.steps if s.node is not None and not per_node_pod(s.pod)})
    return {"configuration": cand.label, "nodesUsed": len(used),
            "cost": _number(sum((costs[i] for i in used), Decimal(0))),
            "scheduled": result.scheduled, "unschedulable": result.unschedulable}
