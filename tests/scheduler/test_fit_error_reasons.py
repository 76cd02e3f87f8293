"""What a simulation reads of its engine once a pod fits nowhere. The FitError reasons the engine keeps per shape
(`Engine._reason_counts`), across the `_redo` of a shape whose plugins read other nodes: only the rows bound or
unbound since are filtered again when every active Filter plugin is row-local; with one that reads other nodes
(PodTopologySpread) every node is. Checked against hand-derived texts and, pod after pod, against the plain
framework's cycle (`schedule_one`), which keeps nothing. And the stranded capacity, read from the run's cached
shapes, against copies placed one by one by an engine of their own."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.scheduler.test_default_profile_properties import CONFIG, nodes_st, pod_st

from kubefit.api.core import Container, Node, Pod, Taint, Toleration
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler.capacity import count_copies
from kubefit.scheduler.engine import Engine, _global_plugin
from kubefit.scheduler.framework import Framework, schedule_one
from kubefit.scheduler.simulate import simulate
from kubefit.scheduler.state import compile_state

GIB = 1 << 30
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
M = 10**6  # milli-units, as kubefit holds quantities (nano)


def _node(name: str, zone: str, pods: int = 2, taints: tuple = (), cpu_m: int = 2000) -> Node:
    return Node(name, {"cpu": cpu_m * M, "memory": 4 * GIB * 10**9, "pods": pods * 10**9},
                {HOST: name, ZONE: zone}, taints=taints)


def _pod(name: str, cpu_m: int, app: str, **kw) -> Pod:
    return Pod(name, containers=(Container("c", {"cpu": cpu_m * M, "memory": GIB * 10**9}),), labels={"app": app},
               **kw)


def _check(engine: Engine, pod: Pod, expected: str | None = None):
    """The engine's FitError for `pod` (its cycle run first), equal to the plain cycle's (and to `expected`);
    the cycle's decision."""
    d = engine.cycle(pod)
    text = engine.fit_error(d.shape)
    plain = schedule_one(Framework.build(CONFIG.profiles[0]), engine.state, pod, score=False)
    assert text == plain.fit_error()
    assert engine.filter_codes(d.shape).tolist() == plain.codes.tolist()
    if expected is not None:
        assert text == expected
    return d


def test_row_local_filters_of_a_global_shape_by_hand():
    """A pod with a preferred pod affinity term (InterPodAffinity scores it over every node: its shape is redone,
    `_redo`, before each cycle), filtered only by row-local plugins. Nodes n0 (2 cpu), n1 (4 cpu), 2 pods each, and
    n2-n7 tainted: 8 nodes, so that up to 8 // 4 = 2 changed rows are redone alone. The 2.5-cpu pod: n0
    Insufficient cpu, n1 passes, the others the taint. Two small pods bound on each of n0, n1 fill their pod
    slots: n0 says Too many pods and Insufficient cpu, n1 Too many pods alone (the kept reasons redo those two
    rows; NodeResourcesFit's bits for Too many pods alone equal TaintToleration's for its one reason: the ids
    are told apart by the labels too). One evicted from n0: it is back to Insufficient cpu alone."""
    taint = (Taint("dedicated", "infra", "NoSchedule"),)
    nodes = [_node("n0", "za"), _node("n1", "za", cpu_m=4000)]
    nodes += [_node(f"n{i}", "zb", taints=taint) for i in range(2, 8)]
    engine = Engine(compile_state(nodes), CONFIG, tie_break="first")
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}
    affinity = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": term}]}}
    big = [_pod(f"big-{i}", 2500, "web", affinity=affinity) for i in range(3)]
    tainted = "6 node(s) had untolerated taint {dedicated: infra}."
    _check(engine, big[0], f"0/8 nodes are available: 1 Insufficient cpu, {tainted}")
    shape = engine.cycle(big[1]).shape
    assert shape.global_ and not any(_global_plugin(p) for _n, p in shape.filters)  # the case under test
    small = [_pod(f"small-{i}", 100, "db") for i in range(4)]
    for i, pod in enumerate(small):
        engine.bind(i // 2, engine.cycle(pod).shape, pod)
    _check(engine, big[1], f"0/8 nodes are available: 1 Insufficient cpu, 2 Too many pods, {tainted}")
    engine.evict(0, small[0])
    _check(engine, big[2], f"0/8 nodes are available: 1 Insufficient cpu, 1 Too many pods, {tainted}")


def test_a_filter_reading_other_nodes_redoes_every_node_by_hand():
    """A hard zone spread (maxSkew 1) over app=web pods: n0, n1 in zone za, n2-n7 in zb. Nothing bound: every
    node passes (the head alone). A web pod bound on n0 makes za hold 1, zb 0: placing in za gives skew 2 > 1, so
    n0 AND n1 fail, n1 with nothing bound on it (only a redo of every node sees it)."""
    nodes = [_node(f"n{i}", "za" if i < 2 else "zb", 10) for i in range(8)]
    engine = Engine(compile_state(nodes), CONFIG, tie_break="first")
    spread = ({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}},)
    pods = [_pod(f"s-{i}", 100, "web", topology_spread_constraints=spread) for i in range(2)]
    _check(engine, pods[0], "0/8 nodes are available:")
    plain = _pod("plain", 100, "web")
    engine.bind(0, engine.cycle(plain).shape, plain)
    _check(engine, pods[1], "0/8 nodes are available: 2 node(s) didn't match pod topology spread constraints.")


@st.composite
def repeated_st(draw) -> tuple[list[Node], list[Pod], list[int]]:
    """Few nodes, pods drawn from three templates (their shapes come back, with binds and evictions between),
    larger requests so that many fit nowhere."""
    nodes = draw(nodes_st())[:4]
    templates = [draw(pod_st(t)) for t in range(3)]
    cpu = [draw(st.sampled_from([700, 1500, 2500])) for _ in templates]
    templates = [replace(p, containers=(replace(p.containers[0], requests={**p.containers[0].requests,
                                                                            "cpu": c * M}),))
                 for p, c in zip(templates, cpu, strict=True)]
    order = draw(st.lists(st.integers(0, 2), min_size=2, max_size=16))
    pods = [replace(templates[t], name=f"p{i}") for i, t in enumerate(order)]
    return nodes, pods, draw(st.lists(st.integers(0, 15), max_size=5))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repeated_st())
def test_kept_reasons_are_the_plain_cycles(case):
    """Pod after pod, shapes coming back after binds and evictions elsewhere: the engine's FitError text and
    status codes equal the plain cycle's."""
    nodes, pods, evictions = case
    engine = Engine(compile_state(nodes), CONFIG, tie_break="first")
    placed = []
    for i, pod in enumerate(pods):
        d = _check(engine, pod)
        if d.node is not None:
            engine.bind(d.node, d.shape, pod)
            placed.append((d.node, pod))
        if i in evictions and placed:
            engine.evict(*placed.pop(0))


@st.composite
def static_filters_st(draw) -> tuple[list[Node], list[Pod]]:
    """Nodes some tainted or cordoned, pods of a few templates some tolerating the taint or selecting a zone,
    more than fit: the pending pods' copies are counted from the per-node filters' verdicts (closed form)."""
    taint = (Taint("dedicated", "infra", "NoSchedule"),)
    nodes = [replace(_node(f"n{i}", draw(st.sampled_from(["za", "zb"])), pods=draw(st.integers(1, 4)),
                           cpu_m=draw(st.sampled_from([1000, 2000, 3000])),
                           taints=taint if draw(st.integers(0, 2)) == 0 else ()),
                     unschedulable=draw(st.integers(0, 4)) == 0)
             for i in range(draw(st.integers(1, 6)))]
    templates = []
    for t in range(draw(st.integers(1, 3))):
        tolerations = (Toleration("dedicated", "Equal", "infra", "NoSchedule"),) if draw(st.booleans()) else ()
        selector = {ZONE: draw(st.sampled_from(["za", "zb"]))} if draw(st.booleans()) else None
        templates.append(_pod(f"t{t}", draw(st.sampled_from([300, 800, 1500])), "web", tolerations=tolerations,
                              node_selector=selector))
    order = draw(st.lists(st.integers(0, len(templates) - 1), min_size=1, max_size=14))
    return nodes, [replace(templates[t], name=f"p{i}") for i, t in enumerate(order)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(static_filters_st())
def test_stranded_copies_that_fit_are_the_replayed_count(case):
    """`stranded_capacity` reads the run's own engine (its cached shapes): each pending shape's `copiesThatFit`
    equals placing copies one by one on the final state with an engine of their own (`count_copies`)."""
    nodes, pods = case
    result = simulate(compile_state(nodes), CONFIG, pods, tie_break="first")
    pending = {p.name: p for s in result.steps if s.node is None for p in (s.pod,)}
    for entry in result.stranded:
        pod = pending[entry["pod"]]
        replayed = count_copies(result.state.copy(), CONFIG, pod, pod_demand(pod), limit=10_000)[0]
        assert entry["copiesThatFit"] == replayed
