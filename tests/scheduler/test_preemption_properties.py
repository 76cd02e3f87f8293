"""Properties of DefaultPreemption on random clusters (NodeResourcesFit as the only Filter):

- a nominated node's victims all sit on that node and have a lower priority than the preemptor;
- without them the preemptor fits there, and with any single one of them back it does not (victims are
  only those that could not be reprieved, and the resource filter is monotone);
- with no nomination, no Unschedulable node would fit the preemptor even with every lower-priority pod gone.
Each check runs the plain framework (`schedule_one`) on a recompiled state, independently of the trials.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Container, Node, Pod
from kubefit.scheduler.config import NodeResourcesFitArgs, Profile
from kubefit.scheduler.framework import Framework, schedule_one
from kubefit.scheduler.plugins.base import SUCCESS, UNSCHEDULABLE
from kubefit.scheduler.postfilter import post_filter_for
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
