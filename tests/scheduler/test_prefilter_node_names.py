"""Pods whose PreFilter names their nodes (NodeAffinity's `matchFields` on `metadata.name`, as the DaemonSet
controller pins each of its pods): the engine evaluates only those nodes for them (`Engine._full`, as
`findNodesThatFitPod` does upstream, pkg/scheduler/schedule_one.go) and still gives, pod after pod, the plain
framework's placement, best nodes and FitError (the other nodes' `didn't satisfy plugin(s) [NodeAffinity]`), with
stale rows redone by the plugins, the Python row kernels or the C ones."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from tests.scheduler.test_simulate_properties import (
    ROW_PATHS,
    SETTINGS,
    assert_equals_plain_framework,
    config_st,
    fast,
    nodes_st,
    pods_st,
    q,
    steps_of,
)

from kubefit.api.core import Container, Node, Pod
from kubefit.scheduler.config import default_configuration


def pinned(pod: Pod, names: list[str]) -> Pod:
    """`pod` allowed on the nodes `names` only, by a required node affinity on the node's name: a term per name
    (the terms are ORed; a `metadata.name` field requirement takes exactly one value, else it matches no node)."""
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]} for name in names]
    return replace(pod, affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": terms}}})


@st.composite
def pinned_scenario_st(draw):
    """Nodes, bound pods, a queue some of whose pods are pinned to one or a few nodes (a name of no node among
    them at times), and a profile with NodeAffinity besides NodeResourcesFit (identity-normalized scores)."""
    nodes = draw(nodes_st())
    names = [n.name for n in nodes]
    bound = draw(pods_st(max_pods=4, bound_to=names))
    queue = []
    for pod in draw(pods_st()):
        if draw(st.integers(0, 2)):
            chosen = draw(st.lists(st.sampled_from([*names, "ghost"]), min_size=1, max_size=3, unique=True))
            pod = pinned(pod, chosen)
        queue.append(pod)
    config = draw(config_st())
    profile = replace(config.profiles[0], filter_plugins=("NodeResourcesFit", "NodeAffinity"))
    return nodes, bound, queue, replace(config, profiles=(profile,))


@SETTINGS
@given(pinned_scenario_st(), st.sampled_from(ROW_PATHS))
def test_pinned_pods_equal_plain_framework(scenario, path):
    """Placement, ties and FitError text equal `schedule_one` pod after pod, with pods pinned to named nodes
    among them (their shapes evaluate the named nodes alone)."""
    assert_equals_plain_framework(scenario, path)


def test_pinned_pod_goes_to_its_node_only_and_says_why_not():
    """Hand-derived, kube-scheduler's default profile on three 1-cpu nodes (n0, n1, n2): a 600m pod pinned to n2
    binds there although n0 and n1 score alike (nothing else is filtered for it); a second such pod no longer fits
    n2 (1000m − 600m < 600m), and the FitError names n2's reason and PreFilter's for the two others:
    `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].`, then the
    PostFilter plugins' words: DynamicResources' (enabled by default, the pod has no claim) and DefaultPreemption's
    (no pod of lower priority on n2; the two others are UnschedulableAndUnresolvable). An unpinned 300m pod then goes to n0 (LeastAllocated, first of the
    equal n0 and n1)."""
    nodes = [Node(f"n{i}", {"cpu": q(1000, milli=True), "memory": q(4 << 30), "pods": q(10)}) for i in range(3)]
    pod = Pod("a", containers=(Container("c", {"cpu": q(600, milli=True)}),))
    queue = [pinned(pod, ["n2"]), pinned(replace(pod, name="b"), ["n2"]),
             Pod("c", containers=(Container("c", {"cpu": q(300, milli=True)}),))]
    config = replace(default_configuration(), percentage_of_nodes_to_score=100)
    steps = steps_of(fast(nodes, [], queue, config, tie_break="first"))
    assert [s[0] for s in steps] == [2, None, 0]
    assert steps[1][2] == ("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) "
                           "[NodeAffinity]. no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found "
                           "for incoming pod, 2 Preemption is not helpful for scheduling.")


def test_name_terms_match_by_the_name_index_and_the_memo_stays_bounded(monkeypatch):
    """`metadata.name` In / NotIn over nodes n0..n3 and a name of no node, with the term memo emptied at every
    second term (its bound set to 2): each mask is the name comparison's, whether computed or remembered."""
    from kubefit.k8s import nodeaffinity as na

    monkeypatch.setattr(na, "_TERM_MASKS_MIN", 2)
    monkeypatch.setattr(na, "_TERM_MASKS_BYTES", 1)
    nodes = [Node(f"n{i}", {"cpu": q(1)}) for i in range(4)]
    table = na.NodeLabels(nodes)
    for _ in range(2):  # the second pass reads what the memo kept (or computes again what it dropped)
        for name in ["n2", "n0", "ghost", "n3"]:
            for op in ("In", "NotIn"):
                term = {"matchFields": [{"key": "metadata.name", "operator": op, "values": [name]}]}
                want = [(n.name == name) == (op == "In") for n in nodes]
                assert na.term_mask(table, term).tolist() == want
                assert len(table.term_masks) <= 2
