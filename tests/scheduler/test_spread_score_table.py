"""PodTopologySpread's Score from its (count, domains) table equals the node-by-node computation: random
nodes (labels missing at random), constraints over the hostname and other keys in random order, random
pod counts and filtered node sets, with and without nodes ignored for lacking a key."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.api.core import Node, Pod
from kubefit.scheduler.framework import new_context
from kubefit.scheduler.plugins.topologyspread import SCHEDULE_ANYWAY, PodTopologySpread
from kubefit.scheduler.state import compile_state

KEYS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack")


@st.composite
def case_st(draw):
    n = draw(st.integers(1, 12))
    nodes = []
    for i in range(n):
        labels = {}
        for key, values in zip(KEYS, ([f"n{i}"], ["za", "zb", "zc"], ["r1", "r2"]), strict=True):
            if draw(st.integers(0, 5)):  # a label missing now and then
                labels[key] = draw(st.sampled_from(values))
        nodes.append(Node(f"n{i}", {"pods": 10**10}, labels))
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=3))
    spread = tuple({"maxSkew": draw(st.integers(1, 5)), "topologyKey": k, "whenUnsatisfiable": SCHEDULE_ANYWAY,
                    "labelSelector": {"matchLabels": {"app": "a"}}} for k in keys)
    counts = [np.asarray(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=np.int64) for _ in keys]
    idx = np.asarray(sorted(draw(st.sets(st.integers(0, n - 1), min_size=1))), dtype=np.int64)
    return nodes, spread, counts, idx, draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(case_st())
def test_table_scores_equal_node_scores(case):
    nodes, spread, counts, idx, require_all = case
    plugin = PodTopologySpread()
    state = compile_state(nodes)
    pod = Pod("p", labels={"app": "a"}, topology_spread_constraints=spread)
    ctx = new_context(state, pod)
    constraints = plugin.constraints(pod, SCHEDULE_ANYWAY)
    view = plugin._nodes(state, ctx, SCHEDULE_ANYWAY).scored_nodes(idx, require_all)
    table = view.table_scores(constraints, counts, idx)
    if sum(c.topology_key == KEYS[0] for c in constraints) > 1:
        assert table is None  # several hostname constraints: computed node by node
        return
    assert table is not None
    assert table.tolist() == PodTopologySpread._node_scores(constraints, counts, view, idx).tolist()
