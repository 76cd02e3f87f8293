"""Properties of DefaultPreemption on random clusters (NodeResourcesFit as the only Filter):

- a nominated node's victims all sit on that node and have a lower priority than the preemptor;
- without them the preemptor fits there, and with any single one of them back it does not (victims are
  only those that could not be reprieved, and the resource filter is monotone);
- with no nomination, no Unschedulable node would fit the preemptor even with every lower-priority pod gone;
- the dry run's shortcuts (no trial on a node without a pod of lower priority, none at all when no node
  has one) give the message of a dry run that tries every node;
- `ClusterState.priorities` (what the second shortcut reads) follows binds and removals exactly.
Each check runs the plain framework (`schedule_one`) on a recompiled state, independently of the trials.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler.config import NodeResourcesFitArgs, Profile
from kubefit.scheduler.engine import zone_order
from kubefit.scheduler.framework import Framework, schedule_one
from kubefit.scheduler.plugins.base import SUCCESS, UNSCHEDULABLE
from kubefit.scheduler.postfilter import StateTrial, post_filter_for
from kubefit.scheduler.preemption import NOT_HELPFUL, preemption_fit_error, select_victims_on_node
from kubefit.scheduler.state import compile_state

MILLI = 10**6
PROFILE = Profile(filter_plugins=("NodeResourcesFit",), plugin_args={"NodeResourcesFit": NodeResourcesFitArgs()},
                  extension_points={"preFilter": ("NodeResourcesFit",), "filter": ("NodeResourcesFit",),
                                    "postFilter": ("DefaultPreemption",)})


@st.composite
def cluster_st(draw):
    n = draw(st.integers(1, 5))
    nodes = [Node(f"n{i}", {"cpu": draw(st.sampled_from([1000, 2000, 3000])) * MILLI, "pods": 20 * 10**9})
             for i in range(n)]
    pods = []
    for k in range(draw(st.integers(2, 16))):
        pods.append(Pod(f"p{k}", node_name=f"n{draw(st.integers(0, n - 1))}",
                        priority=draw(st.sampled_from([0, 10, 100, 1000])),
                        containers=(Container("c", {"cpu": draw(st.sampled_from([100, 300, 500, 1000])) * MILLI}),),
                        start_time=f"2030-01-01T00:{k // 60:02d}:{k % 60:02d}Z"))
    preemptor = Pod("in", priority=draw(st.sampled_from([10, 100, 5000])),
                    containers=(Container("c", {"cpu": draw(st.sampled_from([700, 1000, 1500, 2000])) * MILLI}),))
    return nodes, pods, preemptor


def fits_without(fw, nodes, pods, preemptor, node: int, gone) -> bool:
    state = compile_state(nodes, [p for p in pods if p not in gone])
    cycle = schedule_one(fw, state, preemptor, nodes=np.asarray([node]), score=False)
    return int(cycle.codes[node]) == SUCCESS


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st())
def test_victims_are_needed_and_enough(cluster):
    nodes, pods, preemptor = cluster
    fw = Framework.build(PROFILE, objects=ClusterObjects())
    state = compile_state(nodes, pods)
    result = schedule_one(fw, state, preemptor, score=False)
    if len(result.feasible):
        return
    post = post_filter_for(fw, state, preemptor, result)
    if post.nominated_node is None:
        for node in np.flatnonzero(result.codes == UNSCHEDULABLE).tolist():
            lower = [p for p in state.pods[node] if p.priority < preemptor.priority]
            assert not lower or not fits_without(fw, nodes, pods, preemptor, node, lower)
        return
    node = post.nominated_node
    victims = post.victims
    assert victims and all(v in state.pods[node] and v.priority < preemptor.priority for v in victims)
    assert fits_without(fw, nodes, pods, preemptor, node, victims)
    for v in victims:
        assert not fits_without(fw, nodes, pods, preemptor, node, [w for w in victims if w is not v])


def full_dry_run_message(fw, state, preemptor, result) -> str | None:
    """The PostFilter message of a dry run that tries every Unschedulable node with `SelectVictimsOnNode`
    on a fresh copy of the cluster (no shortcut); None when some node is a candidate."""
    statuses = {}
    for node in zone_order(state.nodes).tolist():
        if int(result.codes[node]) != UNSCHEDULABLE:
            continue
        trial = StateTrial(fw, state.copy(), preemptor, node)
        victims, _violations, status = select_victims_on_node(preemptor, list(state.pods[node]), [], trial)
        if status[0] == SUCCESS and victims:
            return None
        statuses[node] = status[1]
    return f"preemption: {preemption_fit_error(len(state), statuses, NOT_HELPFUL)}"


def _no_lower_priority_anywhere() -> tuple:
    """Three full nodes whose pods all outrank the preemptor: every node Unschedulable, none with a victim."""
    nodes = [Node(f"n{i}", {"cpu": 1000 * MILLI, "pods": 20 * 10**9}) for i in range(3)]
    pods = [Pod(f"p{i}", node_name=f"n{i}", priority=100, containers=(Container("c", {"cpu": 1000 * MILLI}),))
            for i in range(3)]
    return nodes, pods, Pod("in", priority=10, containers=(Container("c", {"cpu": 700 * MILLI}),))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st())
@example(_no_lower_priority_anywhere())
def test_dry_run_shortcuts_give_the_full_dry_runs_answer(cluster):
    """Nodes without a pod of lower priority (and a cluster without any: `has_pod_below`) are answered
    without a trial; the message is the one trying every node gives, reason histogram included."""
    nodes, pods, preemptor = cluster
    fw = Framework.build(PROFILE, objects=ClusterObjects())
    state = compile_state(nodes, pods)
    result = schedule_one(fw, state, preemptor, score=False)
    if len(result.feasible):
        return
    assert state.has_pod_below(preemptor.priority) == any(p.priority < preemptor.priority for p in pods)
    expected = full_dry_run_message(fw, state, preemptor, result)
    post = post_filter_for(fw, state, preemptor, result)
    assert (post.nominated_node is None) == (expected is not None)
    if expected is not None:
        assert post.message == expected


@settings(max_examples=100, deadline=None)
@given(cluster_st(), st.lists(st.tuples(st.booleans(), st.integers(0, 15), st.integers(0, 4)), max_size=25))
def test_the_priority_count_follows_binds_and_removals(cluster, ops):
    """`ClusterState.priorities` counts exactly the priorities of the pods on the nodes, through binds,
    removals (of pods there or not) and copies."""
    nodes, pods, _ = cluster
    state = compile_state(nodes, pods)
    for bind, k, n in ops:
        pod, node = pods[k % len(pods)], n % len(nodes)
        if bind:
            state.bind(node, pod_demand(pod), pod=pod)
        else:
            state.unbind(node, pod)
        state = state.copy() if k % 3 == 0 else state
        assert state.priorities == Counter(p.priority for on_node in state.pods for p in on_node)
        assert all(count > 0 for count in state.priorities.values())
