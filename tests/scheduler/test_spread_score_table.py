"""PodTopologySpread's Score from its (count, domains) table equals the node-by-node computation: random
nodes (labels missing at random), constraints over the hostname and other keys in random order, random
pod counts and filtered node sets, with and without nodes ignored for lacking a key. Its incremental
Score + NormalizeScore (`normalized_scores`) equals them from scratch after binds, removals and changes
of the filtered nodes."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubefit.api.cluster import ClusterObjects, ObjectMeta, Service
from kubefit.api.core import Node, Pod
from kubefit.k8s.requests import pod_demand
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
    nodes_of = plugin._nodes(state, ctx, SCHEDULE_ANYWAY)
    view = nodes_of.scored_nodes(idx, require_all)
    totals = [None if host else _totals(nodes_of, k, counts[k], require_all) for k, host in enumerate(nodes_of.hostname)]
    table = view.table_scores(constraints, counts, idx, totals)
    if sum(c.topology_key == KEYS[0] for c in constraints) > 1:
        assert table is None  # several hostname constraints: computed node by node
        return
    assert table is not None
    assert table.tolist() == PodTopologySpread._node_scores(constraints, counts, view, idx, totals).tolist()


def _totals(nodes, k: int, counts: np.ndarray, require_all: bool) -> np.ndarray:
    """Constraint k's matching pods per domain (label code + 1) over the nodes that count, from `counts`."""
    counted = nodes.inclusion[k] & (nodes.has_all if require_all else True)
    domain = nodes.codes[k].astype(np.int64) + 1
    return np.bincount(domain[counted], weights=counts[counted], minlength=int(domain.max()) + 1).astype(np.int64)


@st.composite
def steps_st(draw):
    """Nodes, a pod's ScheduleAnyway constraints (or the System defaults, through a Service), and steps: a pod
    bound or removed (matching the selector or not), the filtered nodes shrunk or drawn anew."""
    nodes, spread, _counts, idx, _require_all = draw(case_st())
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["bind", "bind", "remove", "shrink", "redraw"]))
        if kind in ("bind", "remove"):
            steps.append((kind, draw(st.integers(0, len(nodes) - 1)), draw(st.sampled_from(["a", "b"]))))
        else:
            steps.append((kind, draw(st.sets(st.integers(0, len(nodes) - 1), min_size=1)), None))
    return nodes, spread if draw(st.booleans()) else (), idx, steps


def _scratch(state, pod, objects, idx) -> np.ndarray:
    """Score then NormalizeScore over idx on a fresh cycle context (no view or cells kept from before)."""
    plugin = PodTopologySpread(objects=objects)
    ctx = new_context(state, pod)
    return plugin.normalize(plugin.score(state, ctx, idx), ctx)


def _lacking_rack() -> tuple:
    """Zone and rack constraints (every key required): n1 lacks the rack, so a pod bound there counts in no
    domain; n0 and n2, in zones a and b, then keep equal scores."""
    nodes = [Node("n0", {"pods": 10**10}, {KEYS[0]: "n0", KEYS[1]: "za", KEYS[2]: "r1"}),
             Node("n1", {"pods": 10**10}, {KEYS[0]: "n1", KEYS[1]: "za"}),
             Node("n2", {"pods": 10**10}, {KEYS[0]: "n2", KEYS[1]: "zb", KEYS[2]: "r1"})]
    spread = tuple({"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": SCHEDULE_ANYWAY,
                    "labelSelector": {"matchLabels": {"app": "a"}}} for k in KEYS[1:])
    return nodes, spread, np.asarray([0, 2], dtype=np.int64), [("bind", 1, "a")]


@settings(max_examples=300, deadline=None)
@given(steps_st())
@example(_lacking_rack())
def test_live_normalized_scores_equal_score_then_normalize(case):
    """`normalized_scores` (cells kept bind by bind, views derived for fewer filtered nodes) gives, after each
    step, what Score then NormalizeScore give from scratch."""
    nodes, spread, idx, steps = case
    objects = ClusterObjects()
    objects.add("Service", Service(ObjectMeta("svc", "default"), {"app": "a"}))
    state = compile_state(nodes, (), objects)
    pod = Pod("p", labels={"app": "a"}, topology_spread_constraints=spread)
    plugin, ctx = PodTopologySpread(objects=objects), new_context(state, pod)
    bound: list[tuple[int, Pod]] = []
    for i, (kind, arg, app) in enumerate([("start", None, None), *steps]):
        if kind == "bind":
            other = Pod(f"q{i}", labels={"app": app}, node_name=nodes[arg].name)
            state.bind(arg, pod_demand(other), pod=other)
            bound.append((arg, other))
        elif kind == "remove" and bound:
            node, other = bound.pop(arg % len(bound))
            state.unbind(node, other)
        elif kind == "shrink":
            idx = np.asarray([n for n in idx.tolist() if n not in arg] or idx[:1].tolist(), dtype=np.int64)
        elif kind == "redraw":
            idx = np.asarray(sorted(arg), dtype=np.int64)
        got = plugin.normalized_scores(state, ctx, idx)
        if got is not None:
            assert got.tolist() == _scratch(state, pod, objects, idx).tolist()
