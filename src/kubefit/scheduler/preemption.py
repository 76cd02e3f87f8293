"""DefaultPreemption as kube-scheduler v1.34.1 runs it in PostFilter (`framework/preemption`,
`plugins/defaultpreemption`): eligibility, candidate nodes, victims per node, the node to nominate.

1. Eligibility: `preemptionPolicy: Never` is not eligible.
2. Candidate nodes: those whose Filter status is `Unschedulable` (not `UnschedulableAndUnresolvable`).
3. `SelectVictimsOnNode`: remove every pod of lower priority; if the pod then fits, reprieve them back
   one by one, most important first (higher priority, then earlier start), those whose eviction would
   violate a PodDisruptionBudget (`status.disruptionsAllowed` exhausted; for a budget written without a
   status, the disruption controller's for the cluster at that cycle, `disruption.py`) before the others; a pod that
   cannot be reprieved is a victim.
4. `pickOneNodeForPreemption`: fewest PDB violations, lowest highest victim priority, smallest priority
   sum, fewest victims, latest start time of the highest-priority victims, then node order.

The framework gives a `NodeTrial` per node: a copy of the cluster where pods leave and come back, and the
preemptor's Filter verdict on that node in between (NodeInfo semantics, e.g. host ports kept as a set).
Without a candidate the answer is a FitError of its own (`preemption: 0/N nodes are available: ...`).

One implementation for v1.34-v1.37: v1.36 collects the eligible pods before removing them, where v1.34/v1.35
removed each while ranging over the node's pods; Go's `range` over the swap-deleted slice still visits every
pod once, in order (tests/scheduler/test_v137_differences.py), so the victims are the same.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import Protocol

import numpy as np

from kubefit.api.core import Pod
from kubefit.api.storage import PodDisruptionBudget
from kubefit.k8s.labels import SelectorError, parse_selector
from kubefit.scheduler.framework import fit_error_text
from kubefit.scheduler.plugins.base import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE

NAME = "DefaultPreemption"
INT32_MAX = 2**31 - 1
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."


class NodeTrial(Protocol):
    """One node of a copy of the cluster (upstream: a NodeInfo snapshot and a cloned CycleState): pods are
    removed and added back one at a time, and the preemptor's Filter verdict asked in between."""

    def remove(self, pod: Pod) -> None:
        """`removePod`: the pod leaves the node (and the PreFilter state sees it gone)."""

    def add(self, pod: Pod) -> None:
        """`addPod`: the pod is back on the node."""

    def fits(self) -> tuple[int, list[str]]:
        """`RunFilterPluginsWithNominatedPods`: (code, reasons) of the first failing Filter, (SUCCESS, []) if none."""


@dataclass
class Candidate:
    node: int
    victims: list[Pod]  # most important first
    pdb_violations: int


@dataclass
class PreemptionResult:
    """DefaultPreemption's PostFilter answer: the node to nominate (None: none) and its victims, or why not."""

    nominated_node: int | None = None
    victims: list[Pod] = field(default_factory=list)
    message: str = ""  # the status message ("preemption: ..."); "" on success
    tried: int = 0  # potential nodes the dry run tried ...
    potential: int = 0  # ... of these (fewer: upstream's random offset could have tried others)

    def victim_keys(self) -> list[str]:
        return sorted(p.key for p in self.victims)


# --------------------------------------------------------------------------- ordering

_NOW = time.time()


def start_time(pod: Pod) -> float:
    """`util.GetPodStartTime`: `status.startTime`, else now (an assumed pod that has not started yet)."""
    if not pod.start_time:
        return _NOW
    return datetime.fromisoformat(pod.start_time.replace("Z", "+00:00")).timestamp()


def importance_key(pod: Pod) -> tuple[int, float]:
    """Sort key of `util.MoreImportantPod`: higher priority first, then the earlier start."""
    return (-pod.priority, start_time(pod))


# --------------------------------------------------------------------------- PodDisruptionBudgets

def _pdb_matches(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """A PDB of the pod's namespace whose non-empty selector matches its labels (nil or {} matches nothing)."""
    if pdb.meta.namespace != pod.namespace or not pdb.selector:
        return False
    try:
        selector = parse_selector(pdb.selector)
    except SelectorError:
        return False
    return not selector.everything and selector.matches(pod.labels)


def split_by_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], list[Pod]]:
    """`filterPodsWithPDBViolation`: walking `pods` in order, each matching PDB's allowance (disruptions
    allowed, pods already in `disruptedPods` not counted) is spent; a pod that overdraws one violates."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating, non_violating = [], []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not _pdb_matches(pdb, pod) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                violated = violated or allowed[i] < 0
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


# --------------------------------------------------------------------------- one node

NO_VICTIMS_STATUS = (UNRESOLVABLE, [NO_VICTIMS])


def lower_priority(preemptor: Pod, pods: Sequence[Pod]) -> list[Pod]:
    """The pods `SelectVictimsOnNode` (default_preemption.go) removes first: those of lower priority than
    the preemptor (`isPreemptionAllowed`). None: it answers UnschedulableAndUnresolvable "No preemption
    victims found for incoming pod" without running a Filter ("we don't need to evaluate the node again
    since its state didn't change"), so kubefit answers `NO_VICTIMS_STATUS` without a trial."""
    return [p for p in pods if p.priority < preemptor.priority]


def select_victims_on_node(preemptor: Pod, pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget],
                           trial: NodeTrial) -> tuple[list[Pod], int, tuple[int, list[str]]]:
    """`SelectVictimsOnNode`: (victims most important first, PDB violations, status of the node)."""
    potential = lower_priority(preemptor, pods)
    for pod in potential:
        trial.remove(pod)
    if not potential:
        return [], 0, NO_VICTIMS_STATUS
    status = trial.fits()
    if status[0] != SUCCESS:
        return [], 0, status
    potential.sort(key=importance_key)
    violating, non_violating = split_by_pdb_violation(potential, pdbs)
    victims: list[Pod] = []
    violations = 0
    for group, counts in ((violating, True), (non_violating, False)):
        for pod in group:
            trial.add(pod)
            if trial.fits()[0] != SUCCESS:
                trial.remove(pod)
                victims.append(pod)
                violations += counts
    if violating and non_violating:
        victims.sort(key=importance_key)
    return victims, violations, (SUCCESS, [])


# --------------------------------------------------------------------------- choosing the node

def _earliest_start_of_highest(victims: Sequence[Pod]) -> float:
    """`util.GetEarliestPodStartTime`: the earliest start among the highest-priority victims."""
    top = max(p.priority for p in victims)
    return min(start_time(p) for p in victims if p.priority == top)


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate:
    """`pickOneNodeForPreemption`: each criterion keeps the best-scoring candidates, the first left wins."""
    criteria: list[Callable[[Candidate], float]] = [
        lambda c: -c.pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + INT32_MAX + 1 for p in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_start_of_highest(c.victims),
    ]
    remaining = list(candidates)
    for score in criteria:
        if len(remaining) == 1:
            break
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
    return remaining[0]


# --------------------------------------------------------------------------- PostFilter

def preemption_fit_error(num_nodes: int, statuses: dict[int, list[str]], absent_reason: str) -> str:
    """`FitError.Error()` of preemption's own diagnosis: per reason the number of nodes, sorted; the nodes
    without a status count under `absent_reason` (`AbsentNodesStatus`)."""
    counts = Counter(chain.from_iterable(statuses.values()))  # one count per (node, reason)
    return _with_absent(num_nodes, counts, len(statuses), absent_reason)


def _with_absent(num_nodes: int, counts: Counter, with_status: int, absent_reason: str) -> str:
    """`preemption_fit_error` from the counts of the `with_status` nodes that have a status."""
    absent = num_nodes - with_status
    if absent > 0:
        counts[absent_reason] += absent
    return fit_error_text(num_nodes, None, counts)


def num_candidates(num_nodes: int, args: dict | None) -> int:
    """`calculateNumCandidates`: minCandidateNodesPercentage of the nodes, at least minCandidateNodesAbsolute,
    at most every node."""
    args = args or {}
    n = num_nodes * int(args.get("minCandidateNodesPercentage", 10)) // 100
    return min(max(n, int(args.get("minCandidateNodesAbsolute", 100))), num_nodes)


def _no_candidate(num_nodes: int, statuses: dict[int, list[str]]) -> PreemptionResult:
    """`Preempt`'s answer when the dry run found no candidate: preemption's own FitError (`findCandidates`)."""
    return PreemptionResult(message=f"preemption: {preemption_fit_error(num_nodes, statuses, NOT_HELPFUL)}")


def preempt(preemptor: Pod, codes: Sequence[int], node_order: Sequence[int], node_pods: Callable[[int], Sequence[Pod]],
            pdbs: Sequence[PodDisruptionBudget], trial: Callable[[int], NodeTrial],
            args: dict | None = None, *, victims_anywhere: bool = True) -> PreemptionResult:
    """DefaultPreemption's PostFilter for a pod that fit nowhere; `codes[n]` is node n's Filter status code,
    `node_order` the snapshot's node list (candidates are tried and tie-broken in that order), `trial(n)` a
    fresh copy of node n to try victims on, `args` the plugin's DefaultPreemptionArgs. `DryRunPreemption`
    stops once it has a non-violating candidate and `num_candidates` in all; upstream starts at a random
    offset (it matters only beyond 100 candidate nodes), kubefit at the first node and reports `tried` of
    `potential` so the run can say when that choice mattered.

    A node without a pod of lower priority is answered without a trial (`SelectVictimsOnNode` returns
    before touching it); `victims_anywhere=False` says no node has one (`ClusterState.has_pod_below`), so
    every potential node answers `NO_VICTIMS_STATUS` and their pods are not even looked at."""
    if preemptor.preemption_policy == "Never":
        return PreemptionResult(message=f"preemption: {NEVER}")
    order = np.asarray(node_order, dtype=np.int64)  # (a pending pod per cycle on thousands of nodes: not in Python)
    potential = order[np.asarray(codes)[order] == UNSCHEDULABLE].tolist()
    if not victims_anywhere:  # every potential node answers NO_VICTIMS_STATUS: its reasons counted at once
        per_node = Counter(NO_VICTIMS_STATUS[1]) if potential else Counter()
        counts = Counter({reason: k * len(potential) for reason, k in per_node.items()})
        return PreemptionResult(message=f"preemption: {_with_absent(len(codes), counts, len(potential), NOT_HELPFUL)}")
    wanted = num_candidates(len(potential), args)
    candidates: list[Candidate] = []
    statuses: dict[int, list[str]] = {}
    tried = 0
    for node in potential:
        tried += 1
        pods = node_pods(node)
        if not lower_priority(preemptor, pods):
            statuses[node] = NO_VICTIMS_STATUS[1]
            continue
        victims, violations, status = select_victims_on_node(preemptor, pods, pdbs, trial(node))
        if status[0] == SUCCESS and victims:
            candidates.append(Candidate(node, victims, violations))
            if any(c.pdb_violations == 0 for c in candidates) and len(candidates) >= wanted:
                break
        else:
            statuses[node] = status[1]
    if not candidates:
        return _no_candidate(len(codes), statuses)
    non_violating = [c for c in candidates if c.pdb_violations == 0]
    ordered = non_violating + [c for c in candidates if c.pdb_violations != 0]
    best = ordered[0] if len(ordered) == 1 else pick_one_node(ordered)
    return PreemptionResult(best.node, best.victims, tried=tried, potential=len(potential))
