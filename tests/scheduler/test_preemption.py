"""DefaultPreemption's victim selection, PDB rule and node choice on hand-computed cases.

The dry run is a one-resource model: a node holds pods whose cpu sum (plus the preemptor's) must stay
within its capacity, so every expected victim list below is worked out by hand from the v1.34 rules.
"""

from __future__ import annotations

from kubefit.api.cluster import ObjectMeta
from kubefit.api.core import Pod
from kubefit.api.storage import PodDisruptionBudget
from kubefit.scheduler.plugins.base import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from kubefit.scheduler.preemption import (
    Candidate,
    pick_one_node,
    preempt,
    select_victims_on_node,
    split_by_pdb_violation,
)


def pod(name: str, priority: int, cpu: int, second: int, **labels: str) -> Pod:
    p = Pod(name=name, priority=priority, labels=dict(labels), start_time=f"2030-01-01T00:00:{second:02d}Z")
    p.raw = {"cpu": cpu}
    return p


class CapacityTrial:
    """A node holding `pods`: the preemptor fits while their cpu plus its own stays within `capacity`."""

    def __init__(self, capacity: int, pods: list[Pod], preemptor: Pod) -> None:
        self.capacity, self.on, self.preemptor = capacity, list(pods), preemptor

    def remove(self, pod: Pod) -> None:
        self.on.remove(pod)

    def add(self, pod: Pod) -> None:
        self.on.append(pod)

    def fits(self):
        used = sum(p.raw["cpu"] for p in self.on) + self.preemptor.raw["cpu"]
        return (SUCCESS, []) if used <= self.capacity else (UNSCHEDULABLE, ["Insufficient cpu"])


def capacity_dry_run(capacity: dict[int, int], pods: dict[int, list[Pod]], preemptor: Pod):
    """Node → a fresh CapacityTrial of it."""
    return lambda node: CapacityTrial(capacity[node], pods[node], preemptor)


def pdb(name: str, allowed: int, namespace: str = "default", selector=None, disrupted=()) -> PodDisruptionBudget:
    return PodDisruptionBudget(ObjectMeta(name, namespace), selector, allowed, frozenset(disrupted))


def test_reprieve_the_higher_priority_pod_first():
    p1, p2, p3 = pod("p1", 1, 4, 1), pod("p2", 2, 4, 2), pod("p3", 5, 2, 3)
    incoming = pod("in", 3, 4, 9)
    dry = capacity_dry_run({0: 10}, {0: [p1, p2, p3]}, incoming)
    victims, violations, status = select_victims_on_node(incoming, [p1, p2, p3], [], dry(0))
    # all lower pods gone: 2 + 4 = 6 fits; p2 back: 10 fits; p1 back: 14 does not
    assert [v.name for v in victims] == ["p1"] and violations == 0 and status[0] == SUCCESS


def test_no_lower_priority_pod_is_unresolvable():
    p = pod("p", 7, 4, 1)
    incoming = pod("in", 7, 4, 9)
    victims, _, status = select_victims_on_node(incoming, [p], [], capacity_dry_run({0: 5}, {0: [p]}, incoming)(0))
    assert victims == [] and status == (UNRESOLVABLE, ["No preemption victims found for incoming pod"])


def test_pdb_allowance_is_spent_in_importance_order():
    a, b, c = pod("a", 1, 3, 1, app="x"), pod("b", 1, 3, 2, app="x"), pod("c", 0, 3, 3)
    budget = pdb("x", 1, selector={"matchLabels": {"app": "x"}})
    violating, fine = split_by_pdb_violation([a, b, c], [budget])
    assert [p.name for p in violating] == ["b"] and [p.name for p in fine] == ["a", "c"]


def test_pdb_empty_selector_other_namespace_and_disrupted_pods_do_not_count():
    a, b = pod("a", 1, 3, 1, app="x"), pod("b", 1, 3, 2, app="x")
    budgets = [pdb("all", 0, selector={}), pdb("other", 0, namespace="team-a", selector={"matchLabels": {"app": "x"}}),
               pdb("gone", 0, selector={"matchLabels": {"app": "x"}}, disrupted=["a"])]
    violating, fine = split_by_pdb_violation([a, b], budgets)
    assert [p.name for p in violating] == ["b"] and [p.name for p in fine] == ["a"]


def test_violating_pods_are_reprieved_before_the_others():
    a, b, c = pod("a", 1, 3, 1, app="x"), pod("b", 1, 3, 2, app="x"), pod("c", 0, 3, 3)
    budget = pdb("x", 1, selector={"matchLabels": {"app": "x"}})
    incoming = pod("in", 5, 7, 9)
    dry = capacity_dry_run({0: 13}, {0: [a, b, c]}, incoming)
    victims, violations, _ = select_victims_on_node(incoming, [a, b, c], [budget], dry(0))
    # b (violating) back first: 3 + 7 = 10 fits; a back: 13 fits; c back: 16 does not
    assert [v.name for v in victims] == ["c"] and violations == 0
    big = pod("big", 5, 10, 9)
    victims, violations, _ = select_victims_on_node(big, [a, b, c], [budget],
                                                    capacity_dry_run({0: 13}, {0: [a, b, c]}, big)(0))
    # b back: 13 fits; a back: 16 no; c back: 16 no -> victims a, c, none violating
    assert [v.name for v in victims] == ["a", "c"] and violations == 0
    huge = pod("huge", 5, 13, 9)
    victims, violations, _ = select_victims_on_node(huge, [a, b, c], [budget],
                                                    capacity_dry_run({0: 13}, {0: [a, b, c]}, huge)(0))
    # nothing can come back; both groups non-empty -> victims re-sorted by importance
    assert [v.name for v in victims] == ["a", "b", "c"] and violations == 1


def cand(node: int, violations: int, *victims: Pod) -> Candidate:
    return Candidate(node, list(victims), violations)


def test_pick_one_node_criteria_in_order():
    low, mid, high = pod("l", 1, 1, 5), pod("m", 5, 1, 6), pod("h", 9, 1, 7)
    assert pick_one_node([cand(0, 1, low), cand(1, 0, high)]).node == 1  # fewer PDB violations
    assert pick_one_node([cand(0, 0, high), cand(1, 0, mid, low)]).node == 1  # lower highest priority
    assert pick_one_node([cand(0, 0, mid, mid), cand(1, 0, mid, low)]).node == 1  # smaller priority sum
    a, b = pod("a", 1, 1, 10), pod("b", 1, 1, 20)
    assert pick_one_node([cand(0, 0, low, low), cand(1, 0, pod("x", 2, 1, 1))]).node == 0  # highest 1 < 2
    assert pick_one_node([cand(0, 0, low, low), cand(1, 0, low)]).node == 1  # smaller priority sum
    assert pick_one_node([cand(0, 0, a), cand(1, 0, b)]).node == 1  # latest start time
    assert pick_one_node([cand(0, 0, a), cand(1, 0, a)]).node == 0  # then node order


def test_preempt_without_candidates_gives_its_own_fit_error():
    incoming = pod("in", 5, 4, 9)
    same = pod("same", 5, 4, 1)
    pods = {0: [], 1: [same], 2: []}
    result = preempt(incoming, [UNRESOLVABLE, UNSCHEDULABLE, UNRESOLVABLE], [0, 1, 2], lambda n: pods[n], [],
                     capacity_dry_run({0: 1, 1: 4, 2: 1}, pods, incoming))
    assert result.nominated_node is None and result.victims == []
    assert result.message == ("preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
                              "2 Preemption is not helpful for scheduling.")


def test_preempt_policy_never():
    incoming = pod("in", 5, 4, 9)
    incoming.preemption_policy = "Never"
    result = preempt(incoming, [UNSCHEDULABLE], [0], lambda n: [], [], capacity_dry_run({0: 9}, {0: []}, incoming))
    assert result.message == "preemption: not eligible due to preemptionPolicy=Never."


def test_preempt_nominates_the_node_with_the_cheapest_victims():
    incoming = pod("in", 10, 4, 30)
    pods = {0: [pod("a0", 5, 4, 1)], 1: [pod("a1", 1, 4, 2)], 2: [pod("a2", 1, 2, 3), pod("b2", 1, 2, 4)]}
    result = preempt(incoming, [UNSCHEDULABLE] * 3, [0, 1, 2], lambda n: pods[n], [],
                     capacity_dry_run({0: 4, 1: 4, 2: 4}, pods, incoming))
    # node 0's victim has priority 5; nodes 1 and 2 tie on priority 1, node 1 has the smaller sum
    assert result.nominated_node == 1 and result.victim_keys() == ["default/a1"] and result.message == ""


def test_num_candidates():
    """10% of the nodes, at least 100, at most all of them (calculateNumCandidates)."""
    from kubefit.scheduler.preemption import num_candidates
    assert [num_candidates(n, None) for n in (5, 100, 999, 1000, 5000)] == [5, 100, 100, 100, 500]
    assert num_candidates(50, {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 0}) == 20


def test_dry_run_stops_at_enough_candidates():
    """With one candidate wanted, the first node with victims and no PDB violation ends the search."""
    incoming = pod("in", 10, 4, 30)
    pods = {0: [pod("a0", 1, 4, 1)], 1: [pod("a1", 0, 4, 2)]}
    args = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}
    result = preempt(incoming, [UNSCHEDULABLE] * 2, [0, 1], lambda n: pods[n], [],
                     capacity_dry_run({0: 4, 1: 4}, pods, incoming), args)
    assert result.nominated_node == 0  # node 1's cheaper victim is never looked at
    assert preempt(incoming, [UNSCHEDULABLE] * 2, [0, 1], lambda n: pods[n], [],
                   capacity_dry_run({0: 4, 1: 4}, pods, incoming)).nominated_node == 1


def test_candidates_are_tried_and_tie_broken_in_node_list_order():
    """The potential nodes are walked in the snapshot's node list order (`node_order`, zone round robin), not by
    index, and may arrive as numpy arrays (the engine's codes and order). By hand: nodes 2, 0, 1 in that order, the
    codes of node 1 UNRESOLVABLE (not a potential node), nodes 0 and 2 alike (one priority-1 victim of 4 cpu each):
    every criterion of `pickOneNodeForPreemption` ties, the first candidate in node list order wins: node 2; with
    one candidate wanted the dry run stops at node 2 too."""
    import numpy as np

    incoming = pod("in", 10, 4, 30)
    pods = {0: [pod("a0", 1, 4, 1)], 1: [pod("a1", 1, 4, 2)], 2: [pod("a2", 1, 4, 1)]}
    codes = np.asarray([UNSCHEDULABLE, UNRESOLVABLE, UNSCHEDULABLE], dtype=np.int8)
    trials = capacity_dry_run({0: 4, 1: 4, 2: 4}, pods, incoming)
    for order in ([2, 0, 1], np.asarray([2, 0, 1], dtype=np.int64)):
        result = preempt(incoming, codes, order, lambda n: pods[n], [], trials)
        assert (result.nominated_node, result.tried, result.potential) == (2, 2, 2)
    one = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}
    assert preempt(incoming, codes.tolist(), [2, 0, 1], lambda n: pods[n], [], trials, one).tried == 1
