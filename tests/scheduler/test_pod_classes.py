"""The change log by pod class (`podclasses`): a stretch of binds and removals replayed as arrays, in C
(`_countkernels.c`) or with numpy, adds to counts exactly what replaying it change by change adds; the spread
score's occupied cells and per-cycle table are those of the whole-array table, whichever path computes them."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubefit.api.cluster import ClusterObjects, ObjectMeta, Service
from kubefit.api.core import Node, Pod
from kubefit.k8s.labels import parse_selector
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler.framework import new_context
from kubefit.scheduler.plugins import podclasses, topologyspread
from kubefit.scheduler.plugins.affinityterms import KINDS, PREFERRED, REQUIRED, pod_terms
from kubefit.scheduler.plugins.podclasses import ClassMemo, ClassWeights, PodClasses, follow, log_arrays
from kubefit.scheduler.plugins.topologyspread import PodTopologySpread
from kubefit.scheduler.state import compile_state

from .test_default_profile_properties import LABEL_PAIRS, SELECTORS, any_term_st
from .test_spread_score_table import steps_st

APPS = ("a", "b", "c")


@contextlib.contextmanager
def patched(module, **values):
    """Set module attributes for the block (hypothesis runs many examples per test: no function fixture)."""
    saved = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def test_the_count_kernels_are_built():
    """An installation from the project's files compiles them (setup.py); without a C compiler kubefit follows
    the log with numpy, with the same counts."""
    assert podclasses._scatter is not None and topologyspread._occupied_c is not None
    assert topologyspread._cell_scores is not None


@st.composite
def log_st(draw):
    """Nodes, then binds and removals of pods of a few label sets (some in another namespace), in any order."""
    n = draw(st.integers(1, 8))
    state = compile_state([Node(f"n{i}", {"pods": 10**12}) for i in range(n)])
    bound: list[tuple[int, Pod]] = []
    for i in range(draw(st.integers(0, 30))):
        if bound and draw(st.integers(0, 3)) == 0:
            node, pod = bound.pop(draw(st.integers(0, len(bound) - 1)))
            state.unbind(node, pod)
            continue
        node = draw(st.integers(0, n - 1))
        pod = Pod(f"p{i}", namespace=draw(st.sampled_from(["default", "shop"])),
                  labels={"app": draw(st.sampled_from(APPS))}, node_name=f"n{node}")
        state.bind(node, pod_demand(pod), pod=pod)
        bound.append((node, pod))
    return state


def _replay(state, weight, start: int, target: np.ndarray, index, mask, mult: int, offset) -> int | None:
    """The stretch change by change, as the followers did before they followed it by class."""
    top = None
    changed = []
    for node, pod, sign in state.changes[start:]:
        w = weight(pod)
        if w and (mask is None or mask[node]):
            j = node if index is None else int(index[node])
            target[j] = np.asarray(int(target[j]) + sign * w * mult).astype(target.dtype)
            changed.append((j, node))
    for j, node in changed:
        now = int(target[j]) - (0 if offset is None else int(offset[node]))
        top = now if top is None else max(top, now)
    return top


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_st(), st.data())
def test_follow_adds_what_the_change_by_change_replay_adds(state, data):
    """`follow` in C and with numpy gives the counts, the per-domain sums (an index, a mask of counted nodes)
    and the cells (a multiplier, an offset; int32) the change-by-change replay gives, from any start."""
    n = len(state)
    app = data.draw(st.sampled_from(APPS))
    weight = lambda p: int(p.namespace == "default" and p.labels.get("app") == app)  # noqa: E731
    needs = ("app", app) if data.draw(st.booleans()) else None
    start = data.draw(st.integers(0, len(state.changes)))
    index = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int32) \
        if data.draw(st.booleans()) else None
    mask = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))) if data.draw(st.booleans()) else None
    mult = data.draw(st.sampled_from([1, 4, 12]))
    offset = np.asarray(data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)), dtype=np.int32) \
        if data.draw(st.booleans()) else None
    dtype = data.draw(st.sampled_from([np.int32, np.int64]))
    initial = np.asarray(data.draw(st.lists(st.integers(0, 20), min_size=4 if index is not None else n,
                                            max_size=4 if index is not None else n)), dtype=dtype)
    expected = initial.copy()
    want = _replay(state, weight, start, expected, index, mask, mult, offset)
    for c_kernel in (podclasses._scatter, None):
        if c_kernel is None and podclasses._scatter is None:
            continue
        with patched(podclasses, _scatter=c_kernel):
            got = initial.copy()
            top = follow(state, ClassWeights(weight, needs), start, got, index=index, mask=mask, mult=mult,
                         offset=offset)
        assert got.tolist() == expected.tolist()
        assert top == want


@settings(max_examples=100, deadline=None)
@given(log_st(), st.data())
def test_classes_in_any_order_of_stretches(state, data):
    """Stretches asked in any order (a follower far behind, one just built) classify each change once: every
    change's class holds pods of one namespace and one label set, and a `ClassMemo` value is its pod's."""
    log = log_arrays(state)
    end = len(state.changes)
    for _ in range(3):
        a = data.draw(st.integers(0, end))
        b = data.draw(st.integers(a, end))
        nodes, klass, sign = log.segment(a, b)
        assert [(n, s) for n, _p, s in state.changes[a:b]] == list(zip(nodes.tolist(), sign.tolist(), strict=True))
        for c, (_n, pod, _s) in zip(klass.tolist(), state.changes[a:b], strict=True):
            first = log.classes.pods[c]
            assert (first.namespace, first.labels) == (pod.namespace, pod.labels)
    memo = ClassMemo().update(log.classes, lambda p: p.labels["app"], lambda v: v == "a")
    assert memo.values == [p.labels["app"] for p in log.classes.pods]
    assert memo.nonempty.tolist() == [p.labels["app"] == "a" for p in log.classes.pods]
    # asked only about the classes `could` names (those carrying app=a), in two steps: the others get `empty`
    asked = []
    could = lambda a, b: [c for c in range(a, b) if log.classes.pods[c].labels["app"] == "a"]  # noqa: E731
    half = ClassMemo()
    half.values, half.nonempty, half._classes = memo.values[:1], memo.nonempty[:1], log.classes
    half.update(log.classes, lambda p: asked.append(p) or p.labels["app"], lambda v: v == "a", could, "-")
    assert half.values == memo.values[:1] + [a if a == "a" else "-" for a in memo.values[1:]]
    assert half.nonempty.tolist() == memo.nonempty.tolist()
    assert asked == [p for p in log.classes.pods[1:] if p.labels["app"] == "a"]


@st.composite
def classed_pod_st(draw, i: int) -> Pod:
    """A pod of one of two namespaces with a few labels and up to three affinity terms of any kind and selector."""
    affinity: dict = {}
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["podAffinity", "podAntiAffinity"]))
        term = draw(any_term_st())
        if draw(st.booleans()):
            affinity.setdefault(kind, {}).setdefault(REQUIRED, []).append(term)
        else:
            affinity.setdefault(kind, {}).setdefault(PREFERRED, []).append({"weight": 3, "podAffinityTerm": term})
    return Pod(f"p{i}", namespace=draw(st.sampled_from(["default", "shop"])),
               labels=dict(draw(st.lists(st.sampled_from(LABEL_PAIRS), max_size=3))), affinity=affinity or None)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_classes_could_match_names_every_class_that_relates_to_the_pod(data):
    """`PodClasses.could_match` leaves out only classes that relate to nothing of the question: none of their terms'
    selectors matches the incoming pod's labels and none of the given selectors matches their labels (what a
    `ClassMemo` then gives them without asking); the classes it names are in the range, ascending, once each."""
    classes = PodClasses()
    for i in range(data.draw(st.integers(0, 12))):
        classes.of(data.draw(classed_pod_st(i)))
    labels = dict(data.draw(st.lists(st.sampled_from(LABEL_PAIRS), max_size=3)))
    selectors = [parse_selector(s) for s in data.draw(st.lists(st.sampled_from(SELECTORS), max_size=2))]
    n = len(classes.pods)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    named = list(classes.could_match(start, end, labels, selectors))
    assert named == sorted(set(named)) and all(start <= c < end for c in named)
    for c in sorted(set(range(start, end)) - set(named)):
        pod = classes.pods[c]
        assert not any(t.selector.matches(labels) for kind in KINDS for t in getattr(pod_terms(pod), kind))
        assert not any(s.matches(pod.labels) for s in selectors)


def _zone_less_node() -> tuple:
    """The System defaults (a Service selects app a) on n0 (zone a), n1 (zone b) and n2 without a zone: n2's absent
    zone ("") is a domain PreScore counts (`TopologyPairToPodCounts`), so the zone weight is log(3 + 2)."""
    nodes = [Node("n0", {"pods": 10**10}, {"kubernetes.io/hostname": "n0", "topology.kubernetes.io/zone": "za"}),
             Node("n1", {"pods": 10**10}, {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "zb"}),
             Node("n2", {"pods": 10**10}, {"kubernetes.io/hostname": "n2"})]
    return nodes, (), np.arange(3, dtype=np.int64), [("bind", 0, "a"), ("bind", 0, "a"), ("bind", 2, "a")]


@pytest.mark.parametrize("path", ["cells in C", "few cells, C", "many cells", "few cells, numpy"])
@settings(max_examples=150, deadline=None)
@given(case=steps_st())
@example(case=_zone_less_node())
def test_normalized_scores_by_every_path_equal_score_then_normalize(path, case):
    """PodTopologySpread's per-cycle score over the occupied cells (all in C; or Python floats, the cells found in C
    or with numpy) and over the whole table (numpy) give Score then NormalizeScore from scratch, step after step
    (binds and removals followed in C or with numpy)."""
    values = {"cells in C": {}, "few cells, C": {"_cell_scores": None},
              "many cells": {"_FEW_CELLS": -1, "_cell_scores": None},
              "few cells, numpy": {"_occupied_c": None, "_cell_scores": None}}[path]
    with patched(topologyspread, **values), patched(podclasses, _scatter=None if "numpy" in path
                                                     else podclasses._scatter):
        nodes, spread, idx, steps = case
        objects = ClusterObjects()
        objects.add("Service", Service(ObjectMeta("svc", "default"), {"app": "a"}))
        state = compile_state(nodes, (), objects)
        pod = Pod("p", labels={"app": "a"}, topology_spread_constraints=spread)
        plugin, ctx = PodTopologySpread.from_args(None, objects), new_context(state, pod)  # System defaults
        bound: list[tuple[int, Pod]] = []
        for i, (kind, arg, app) in enumerate([("start", None, None), *steps]):
            if kind == "bind":
                other = Pod(f"q{i}", labels={"app": app}, node_name=nodes[arg].name)
                state.bind(arg, pod_demand(other), pod=other)
                bound.append((arg, other))
            elif kind == "remove" and bound:
                node, other = bound.pop(arg % len(bound))
                state.unbind(node, other)
            elif kind in ("shrink", "redraw"):
                idx = np.asarray(sorted(arg), dtype=np.int64)
            got = plugin.normalized_scores(state, ctx, idx)
            if got is not None:
                fresh = new_context(state, pod)  # Score then NormalizeScore, no view or cells kept from before
                assert got.tolist() == plugin.normalize(plugin.score(state, fresh, idx), fresh).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 50) | st.integers(-10**12, 10**12) | st.integers(-70, 1000)), st.integers(-2, 60))
def test_distinct_rows_are_the_sorted_set_of_the_log_stretch(log, start):
    """`_countkernels.distinct` (the engine's rows changed since a position of its log) is sorted(set(...)), whether
    it marks the values (a small range: a bitmap of one or many words) or sorts them."""
    from kubefit.scheduler._countkernels import distinct

    assert distinct(log, start) == sorted(set(log[max(start, 0):]))


def test_distinct_reads_the_bitmap_across_its_words():
    """Values either side of each 64-bit word's edge (from the lowest value, 3: 3 + 63 = 66 is the first word's
    last bit, 67 the second's first), repeated, from position 1: each once, ascending, as the log's own ints."""
    from kubefit.scheduler._countkernels import distinct

    log = [999, 66, 3, 67, 130, 131, 67, 3, 200, 130]
    out = distinct(log, 1)
    assert out == [3, 66, 67, 130, 131, 200]
    assert all(a is b for a, b in zip(out, [log[2], log[1], log[3], log[4], log[5], log[8]], strict=True))
