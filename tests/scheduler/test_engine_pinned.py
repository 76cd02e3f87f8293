"""Pods PreFilter pins to one node (a DaemonSet pod's `metadata.name In [node]`): `Engine._pinned_shape` runs every
PreFilter and the Filter plugins on that node alone, never scores (upstream's `schedulePod` returns a single
feasible node before PreScore, `if len(feasibleNodes) == 1` in pkg/scheduler/schedule_one.go) and keeps no shape.
Each answer equals the cached path's (the shapes every other pod gets, which the golden cases check) and, by hand,
kube-scheduler's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.scheduler.test_prefilter_node_names import pinned, pinned_scenario_st
from tests.scheduler.test_simulate_properties import fast, q, steps_of

from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.version import for_minor
from kubefit.scheduler import engine as eng
from kubefit.scheduler.config import default_configuration
from kubefit.scheduler.config.types import Profile, SchedulerConfiguration, ScorePlugin
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.framework import SchedulingCycleError, new_context
from kubefit.scheduler.plugins.base import SUCCESS
from kubefit.scheduler.plugins.nodeaffinity import _FEW_ROWS, NodeAffinity
from kubefit.scheduler.state import compile_state

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
NAMES = ["n0", "n1", "n2", "n3", "n4", "n5", "ghost"]


# --------------------------------------------------------------------------- NodeAffinity's one-node paths

@st.composite
def requirement_st(draw) -> dict:
    """A label requirement (some that fail to parse: Gt with a non-integer) or a `metadata.name` field one."""
    if draw(st.booleans()):
        values = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True))
        return {"key": draw(st.sampled_from(["metadata.name", "metadata.name", "spec.other"])),
                "operator": draw(st.sampled_from(["In", "In", "NotIn"])), "values": values}
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    req = {"key": draw(st.sampled_from(["zone", "rank"])), "operator": op}
    if op in ("In", "NotIn"):
        req["values"] = draw(st.lists(st.sampled_from(["a", "b", "1"]), min_size=1, max_size=2))
    elif op in ("Gt", "Lt"):
        req["values"] = [draw(st.sampled_from(["0", "2", "x"]))]
    return req


@st.composite
def term_st(draw) -> dict:
    term: dict = {}
    fields = draw(st.lists(requirement_st().filter(lambda r: r["key"].startswith(("metadata", "spec"))), max_size=2))
    exprs = draw(st.lists(requirement_st().filter(lambda r: r["key"] in ("zone", "rank")), max_size=2))
    if fields:
        term["matchFields"] = fields
    if exprs:
        term["matchExpressions"] = exprs
    return term


@st.composite
def affinity_pod_st(draw) -> Pod:
    """A pod with or without a nodeSelector and required node affinity (no term, empty terms, a few terms)."""
    selector = draw(st.sampled_from([None, {}, {"zone": "a"}, {"rank": "1"}]))
    affinity = None
    if draw(st.integers(0, 4)):
        terms = draw(st.lists(term_st(), max_size=3))
        affinity = {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": terms}} if draw(st.integers(0, 5)) else {}}
    return Pod("p", node_selector=selector, affinity=affinity)


def _labelled_nodes(draw) -> list[Node]:
    return [Node(name, {"cpu": q(1)}, {k: v for k, v in (("zone", draw(st.sampled_from(["a", "b", None]))),
                                                           ("rank", draw(st.sampled_from(["0", "1", "3", "x", None]))))
                                       if v is not None})
            for name in NAMES[:draw(st.integers(_FEW_ROWS + 1, 6))]]


@settings(max_examples=300, deadline=None)
@given(affinity_pod_st())
def test_pins_exactly_when_pre_filter_names_one_node(pod):
    """`NodeAffinity.pins` (read off the pod, no cycle) says yes exactly when its PreFilter succeeds with a
    PreFilterResult of one node name: the engine's pinned path is taken for those pods and no other."""
    state = compile_state([Node("n0", {"cpu": q(1)})])
    pre = NodeAffinity().pre_filter(state, new_context(state, pod))
    one = pre.code == SUCCESS and not pre.skip and pre.node_names is not None and len(pre.node_names) == 1
    assert NodeAffinity().pins(pod) == one


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(affinity_pod_st(), st.data())
def test_filter_of_a_few_nodes_equals_filter_of_every_node(pod, data):
    """NodeAffinity's Filter of up to `_FEW_ROWS` nodes (matched over a table of those nodes alone) gives each of
    them the codes and reasons its Filter over every node gives it (label columns, integer Gt/Lt, field selectors,
    terms that fail to parse, the `addedAffinity` args' terms)."""
    nodes = _labelled_nodes(data.draw)
    state = compile_state(nodes)
    added = data.draw(st.sampled_from([None, {REQUIRED: {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}]))
    plugin = NodeAffinity.from_args({"addedAffinity": added} if added else None)
    ctx = new_context(state, pod)
    every = plugin.filter(state, ctx, np.arange(len(nodes), dtype=np.int64))  # (more than _FEW_ROWS: every node)
    rows = np.asarray(data.draw(st.lists(st.integers(0, len(nodes) - 1), min_size=1, max_size=_FEW_ROWS,
                                         unique=True)), dtype=np.int64)
    few = plugin.filter(state, ctx, rows)
    assert few.codes.tolist() == every.codes[rows].tolist()
    assert few.matrix.tolist() == every.matrix[rows].tolist() and few.labels == every.labels


# --------------------------------------------------------------------------- the pinned path and the cached one

def _both_paths(monkeypatch, nodes, bound, queue, config, **kw):
    """`simulate` with the pinned path, then with every pod through the cached shapes (`_pins` never says yes)."""
    pinned_run = fast(nodes, bound, queue, config, tie_break="first", **kw)
    with monkeypatch.context() as m:
        m.setattr(eng, "_pins", lambda fw, pod: False)
        cached_run = fast(nodes, bound, queue, config, tie_break="first", **kw)
    return pinned_run, cached_run


def _assert_same(a, b) -> None:
    """Every step alike (node, ties, FitError, feasible nodes found, victims, nomination, how it was bound) and
    the final requests."""
    def steps(run):
        return [(s.feasible, s.victims, s.nominated_node, s.nominated_first, s.batch_hint) for s in run.steps]
    assert steps_of(a) == steps_of(b)
    assert steps(a) == steps(b)
    assert np.array_equal(a.state.requested, b.state.requested)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pinned_scenario_st(), st.sampled_from([None, 34, 35, 36, 37]), st.booleans())
def test_pinned_path_equals_cached_path(monkeypatch, scenario, minor, sampling):
    """Placements, ties, FitError texts (PreFilter's reason for the other nodes) and the final requests are the
    cached path's, pods pinned to one node, to several or to none among the others, with opportunistic batching
    (v1.35+: a pinned pod's cycle clears the batch, and its signature could never get a hint) and with node sampling
    (the start index moves by the one node searched, or none)."""
    nodes, bound, queue, config = scenario
    config = replace(config, version=None if minor is None else for_minor(minor),
                     percentage_of_nodes_to_score=100 if sampling else config.percentage_of_nodes_to_score)
    _assert_same(*_both_paths(monkeypatch, nodes, bound, queue, config))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(2, 5), st.lists(st.tuples(st.integers(0, 6), st.sampled_from([200, 700, 1500]),
                                             st.integers(0, 2)), min_size=1, max_size=10),
       st.sampled_from([34, 35, 37]))
def test_pinned_path_equals_cached_path_with_preemption(monkeypatch, n, queue_spec, minor):
    """The default profile (PostFilter: DefaultPreemption; PreScore of every scorer) on n 2-cpu nodes, a queue of
    pods pinned to a node (a name of no node when the index is past the nodes) or not (index 6), of priorities
    0..2: a pinned pod evicts lower-priority pods from its node as the cached path does, and says so alike."""
    nodes = [Node(f"n{i}", {"cpu": q(2000, milli=True), "memory": q(8 << 30), "pods": q(10)},
                  {"kubernetes.io/hostname": f"n{i}"}) for i in range(n)]
    queue = []
    for i, (at, cpu, priority) in enumerate(queue_spec):
        pod = Pod(f"p{i}", priority=priority, containers=(Container("c", {"cpu": q(cpu, milli=True)}),))
        queue.append(pod if at == 6 else pinned(pod, [f"n{at}" if at < n else "ghost"]))
    config = replace(default_configuration(for_minor(minor)), percentage_of_nodes_to_score=100)
    _assert_same(*_both_paths(monkeypatch, nodes, [], queue, config))


def test_pinned_pods_keep_no_shape():
    """A DaemonSet's pods, one pinned to each node, leave the engine's shape cache as it was (no entry to evict
    the shapes that are reused), and their shapes are never scored (no raw scores, no totals)."""
    nodes = [Node(f"n{i}", {"cpu": q(1000, milli=True), "pods": q(10)}) for i in range(4)]
    state = compile_state(nodes)
    engine = Engine(state, default_configuration())
    web = Pod("web", containers=(Container("c", {"cpu": q(100, milli=True)}),))
    engine.bind(engine.cycle(web).node, engine.shape(web), web)
    before = list(engine.shapes)
    for i in range(4):
        d = engine.cycle(pinned(replace(web, name=f"agent-{i}"), [f"n{i}"]))
        assert d.node == i and d.shape.pinned is not None and d.shape.raw is None and d.shape.total is None
    assert list(engine.shapes) == before


# --------------------------------------------------------------------------- by hand

def _pre_score_fails() -> dict:
    """A preferred node affinity term whose Gt value is no integer: NodeAffinity's PreScore fails
    (`getPodPreferredNodeAffinity`'s parse error, returned as its status)."""
    return {PREFERRED: [{"weight": 1, "preference": {"matchExpressions": [
        {"key": "rank", "operator": "Gt", "values": ["x"]}]}}]}


def test_pinned_pod_whose_pre_score_would_fail_still_binds():
    """Hand-derived, default profile on three 1-cpu nodes: a pod pinned to n1 whose NodeAffinity PreScore would
    fail binds to n1, since with one feasible node `schedulePod` returns before `prioritizeNodes` (PreScore
    never runs); the same pod allowed on n1 and n2 has two feasible nodes, and the cycle fails in PreScore."""
    nodes = [Node(f"n{i}", {"cpu": q(1000, milli=True), "pods": q(10)}) for i in range(3)]
    pod = Pod("agent", containers=(Container("c", {"cpu": q(100, milli=True)}),))
    one = pinned(pod, ["n1"])
    one = replace(one, affinity={"nodeAffinity": {**one.affinity["nodeAffinity"], **_pre_score_fails()}})
    engine = Engine(compile_state(nodes), default_configuration())
    d = engine.cycle(one)
    assert (d.node, d.feasible) == (1, 1)
    two = pinned(pod, ["n1", "n2"])
    two = replace(two, affinity={"nodeAffinity": {**two.affinity["nodeAffinity"], **_pre_score_fails()}})
    with pytest.raises(SchedulingCycleError, match='running PreScore plugin "NodeAffinity"'):
        engine.cycle(two)


def test_fit_error_of_a_pinned_pod_without_preemption():
    """Hand-derived, a profile without PostFilter (NodeResourcesFit and NodeAffinity filter, NodeResourcesFit
    scores) on three 1-cpu nodes, n1 holding 700m: a 600m DaemonSet pod pinned to n1 does not fit
    (1000m − 700m < 600m): `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s)
    [NodeAffinity].` (n0 and n2 are outside PreFilter's node names; the reasons sorted by text, as
    `FitError.Error` joins them). Pinned to a name of no node: all three nodes get PreFilter's reason. Pinned
    to n2 it binds there, with one node searched."""
    nodes = [Node(f"n{i}", {"cpu": q(1000, milli=True), "pods": q(10)}) for i in range(3)]
    held = Pod("held", node_name="n1", containers=(Container("c", {"cpu": q(700, milli=True)}),))
    pod = Pod("agent", containers=(Container("c", {"cpu": q(600, milli=True)}),))
    profile = Profile(filter_plugins=("NodeResourcesFit", "NodeAffinity"), score_plugins=(
        ScorePlugin("NodeResourcesFit", 1),))
    config = SchedulerConfiguration((profile,), 100)
    queue = [pinned(pod, ["n1"]), pinned(replace(pod, name="ghostly"), ["ghost"]),
             pinned(replace(pod, name="fits"), ["n2"])]
    steps = steps_of(fast(nodes, [held], queue, config, tie_break="first"))
    assert steps == [
        (None, [], "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."),
        (None, [], "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."),
        (2, [], None)]
