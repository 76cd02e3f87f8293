"""The scoring strategy chosen once per NodeResourcesFit: over many nodes and one resource at a time, the same."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.scheduler.config import NodeResourcesFitArgs, ShapePoint
from kubefit.scheduler.plugins.fit import NodeResourcesFit
from kubefit.scheduler.plugins.legacy import LegacyNodeResourcesFit
from kubefit.scheduler.plugins.strategies import resource_scorer

SHAPE = (ShapePoint(0, 10), ShapePoint(50, 3), ShapePoint(100, 0))
ARGS = [NodeResourcesFitArgs("LeastAllocated"), NodeResourcesFitArgs("MostAllocated"),
        NodeResourcesFitArgs("RequestedToCapacityRatio", shape=SHAPE)]

nodes = st.lists(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=3, max_size=3),
                 min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(ARGS), nodes, st.lists(st.integers(1, 100), min_size=3, max_size=3))
def test_one_resource_at_a_time_equals_the_vectorised_scorer(args, rows, weights):
    scorer = resource_scorer(args)
    req = np.array([[r for r, _ in row] for row in rows], dtype=np.int64)
    alloc = np.array([[a for _, a in row] for row in rows], dtype=np.int64)
    node, per, counted = scorer.nodes(req, alloc, np.array(weights, dtype=np.int64))
    for m, row in enumerate(rows):
        num = den = 0
        for k, (r, a) in enumerate(row):
            if a == 0:
                assert not counted[m, k]
                continue
            s = scorer.resource(r, a)
            assert s == per[m, k]
            if scorer.positive_only and s <= 0:
                continue
            num, den = num + s * weights[k], den + weights[k]
        assert scorer.node_score(num, den) == node[m]


def test_the_plugin_chooses_its_strategy_when_built():
    for args in ARGS:
        plugin = NodeResourcesFit(args)
        assert plugin.scorer.strategy == args.scoring_type
        assert plugin.scorer.rounded == (args.scoring_type == "RequestedToCapacityRatio")
    legacy = LegacyNodeResourcesFit(NodeResourcesFitArgs("MostAllocated"))
    assert legacy.explained_resources() == [("cpu", 1), ("memory", 1)]  # v1.16 MostRequestedPriority
    ratio = LegacyNodeResourcesFit(ARGS[2])
    assert ratio.legacy_scorer.positive_only and ratio.explained_resources() == [("cpu", 1), ("memory", 1)]
