"""Properties of the default profile's pod-interaction plugins (spread, inter-pod affinity, host ports):
the incremental engine gives exactly what the plain framework gives pod after pod, and a pod is never
bound against a required anti-affinity term or a DoNotSchedule spread constraint (checked by brute force
over the pods bound so far, independently of the plugins)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.scheduler.test_simulate_properties import fast, reference, steps_of

from kubefit.api.cluster import ClusterObjects, Controller, ObjectMeta, Service
from kubefit.api.core import (
    Container,
    ContainerImage,
    ContainerPort,
    Node,
    OwnerReference,
    Pod,
    Taint,
    Toleration,
)
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler.capacity import count_copies
from kubefit.scheduler.config import default_configuration
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.framework import Framework, schedule_one
from kubefit.scheduler.plugins.affinityterms import PREFERRED, REQUIRED, pod_terms
from kubefit.scheduler.plugins.interpodaffinity import distinct_terms, terms_matching
from kubefit.scheduler.plugins.podcounts import matching_counts
from kubefit.scheduler.plugins.topologyspread import PodTopologySpread
from kubefit.scheduler.simulate import copies_in_trial
from kubefit.scheduler.state import compile_state

GIB = 1 << 30
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
CONFIG = replace(default_configuration(), percentage_of_nodes_to_score=100)


@st.composite
def nodes_st(draw) -> list[Node]:
    out = []
    for i in range(draw(st.integers(2, 7))):
        labels = {HOST: f"n{i}", ZONE: draw(st.sampled_from(["za", "zb", "zc"]))}
        alloc = {"cpu": draw(st.sampled_from([2000, 4000])) * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9}
        out.append(Node(f"n{i}", alloc, labels))
    return out


@st.composite
def pod_st(draw, i: int) -> Pod:
    app = draw(st.sampled_from(["a", "b"]))
    spread = ()
    if draw(st.booleans()):
        spread = ({"maxSkew": draw(st.integers(1, 2)), "topologyKey": draw(st.sampled_from([ZONE, HOST])),
                   "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                   "labelSelector": {"matchLabels": {"app": app}}},)
    affinity = None
    if draw(st.booleans()):
        term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": draw(st.sampled_from([ZONE, HOST]))}
        kind = draw(st.sampled_from(["podAntiAffinity", "podAffinity"]))
        if draw(st.booleans()):
            affinity = {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        else:
            affinity = {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": draw(st.integers(1, 100)), "podAffinityTerm": term}]}}
    ports = (ContainerPort(80, 8080),) if draw(st.integers(0, 3)) == 0 else ()
    cpu = draw(st.sampled_from([100, 500, 1000])) * 10**6
    return Pod(f"p{i}", containers=(Container("c", {"cpu": cpu, "memory": GIB * 10**9}, ports=ports),),
               labels={"app": app}, topology_spread_constraints=spread, affinity=affinity)


@st.composite
def workload_st(draw) -> tuple[list[Node], list[Pod]]:
    nodes = draw(nodes_st())
    return nodes, [draw(pod_st(i)) for i in range(draw(st.integers(1, 12)))]


def _plain(nodes: list[Node], pods: list[Pod]) -> list[int | None]:
    """Each pod through `schedule_one` on a state rebuilt from the pods bound so far."""
    bound: list[Pod] = []
    out = []
    for pod in pods:
        state = compile_state(nodes, bound)
        result = schedule_one(Framework.build(CONFIG.profiles[0]), state, pod)
        node = int(result.best[0]) if len(result.feasible) else None
        out.append(node)
        if node is not None:
            bound.append(replace(pod, node_name=nodes[node].name))
    return out


def _incremental(nodes: list[Node], pods: list[Pod]) -> list[int | None]:
    engine = Engine(compile_state(nodes), CONFIG, tie_break="first")
    out = []
    for pod in pods:
        d = engine.cycle(pod)
        if d.node is not None:
            engine.bind(d.node, d.shape, pod)
        out.append(d.node)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload_st())
def test_incremental_engine_equals_plain_framework(workload):
    nodes, pods = workload
    assert _incremental(nodes, pods) == _plain(nodes, pods)


@st.composite
def preferences_st(draw) -> tuple[list[Node], list[Pod]]:
    """A workload whose nodes may carry a PreferNoSchedule taint or an image of the pods and whose pods may
    prefer a zone (node affinity) or tolerate the taint: TaintToleration, NodeAffinity and ImageLocality
    then score the nodes alike (one normalized value whatever nodes are feasible: `Shape.static_fixed`'s
    shortcut) or not, while the nodes fill up and leave the feasible set."""
    nodes, pods = draw(workload_st())
    taint = Taint("dedicated", "batch", "PreferNoSchedule")
    image = ContainerImage(("img:1",), 500 << 20)
    nodes = [replace(n, taints=(taint,) if draw(st.booleans()) else (),
                     images=(image,) if draw(st.integers(0, 3)) == 0 else ()) for n in nodes]
    prefer = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["za"]}]}}]}}
    out = []
    for pod in pods:
        if draw(st.booleans()):
            pod = replace(pod, affinity={**(pod.affinity or {}), **prefer})
        if draw(st.booleans()):
            pod = replace(pod, tolerations=(Toleration("dedicated", "Equal", "batch", "PreferNoSchedule"),))
        if draw(st.booleans()):
            pod = replace(pod, containers=(replace(pod.containers[0], image="img:1"),))
        out.append(pod)
    return nodes, out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preferences_st())
@example(([Node("n0", {"cpu": 1000 * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9}, {HOST: "n0", ZONE: "za"}),
           Node("n1", {"cpu": 2000 * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9}, {HOST: "n1", ZONE: "zb"}),
           Node("n2", {"cpu": 2000 * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9}, {HOST: "n2", ZONE: "zc"},
                taints=(Taint("dedicated", "batch", "PreferNoSchedule"),))],
          [Pod(f"p{i}", containers=(Container("c", {"cpu": 500 * 10**6, "memory": GIB * 10**9}),), labels={"app": "a"},
               topology_spread_constraints=({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                                             "labelSelector": {"matchLabels": {"app": "a"}}},)) for i in range(8)]))
def test_incremental_engine_equals_plain_framework_with_node_preferences(workload):
    """The example: n0 fills after two pods, so the feasible set shrinks while the tainted n2 keeps its
    lower TaintToleration score (raw scores differ: no shortcut); the drawn workloads mix both cases."""
    nodes, pods = workload
    assert _incremental(nodes, pods) == _plain(nodes, pods)


def test_equal_static_scores_are_normalized_once():
    """No taint, no node preference, no image: TaintToleration normalizes to 100 on every node and
    NodeAffinity / ImageLocality to 0 (DefaultNormalizeScore of an all-zero list, reversed or not; ImageLocality
    has no NormalizeScore), weights 3, 2 and 1 in the default profile: 300 whatever nodes are feasible."""
    nodes = [Node(f"n{i}", {"cpu": 1000 * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9},
                  {HOST: f"n{i}", ZONE: "za"}) for i in range(3)]
    pod = Pod("p", containers=(Container("c", {"cpu": 400 * 10**6, "memory": GIB * 10**9}),), labels={"app": "a"},
              topology_spread_constraints=({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                                            "labelSelector": {"matchLabels": {"app": "a"}}},))
    engine = Engine(compile_state(nodes), CONFIG, tie_break="first")
    for i in range(6):  # two fit on each node: the feasible set shrinks from three nodes to one
        d = engine.cycle(replace(pod, name=f"p{i}"))
        engine.bind(d.node, d.shape, replace(pod, name=f"p{i}"))
        fixed = d.shape.static_fixed
        assert fixed is None or (fixed.const, fixed.per_node, fixed.by_value) == (300, None, [])
    assert d.shape.static_fixed.const == 300 and d.shape.static_fixed.total(np.arange(3)) == 300


def _violates(pod: Pod, node: Node, placed: list[tuple[Pod, Node]], nodes: list[Node]) -> str | None:
    """Brute force: a required anti-affinity term matched in the domain, or a DoNotSchedule skew exceeded."""
    app = pod.labels["app"]
    for term in ((pod.affinity or {}).get("podAntiAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution") or ():
        key = term["topologyKey"]
        if any(q.labels.get("app") == app and n.labels[key] == node.labels[key] for q, n in placed):
            return "anti-affinity"
    for c in pod.topology_spread_constraints:
        if c["whenUnsatisfiable"] != "DoNotSchedule":
            continue
        key = c["topologyKey"]
        counts = {n.labels[key]: 0 for n in nodes}
        for q, n in placed:
            if q.labels.get("app") == app:
                counts[n.labels[key]] += 1
        if counts[node.labels[key]] + 1 - min(counts.values()) > c["maxSkew"]:
            return "spread"
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload_st())
def test_no_bind_breaks_required_anti_affinity_or_hard_spread(workload):
    nodes, pods = workload
    placed: list[tuple[Pod, Node]] = []
    for pod, node in zip(pods, _incremental(nodes, pods), strict=True):
        if node is None:
            continue
        assert _violates(pod, nodes[node], placed, nodes) is None
        placed.append((pod, nodes[node]))


# --------------------------------------------------------------------------- replicas of several workloads

@st.composite
def term_st(draw, apps: list[str]) -> dict:
    """One pod (anti-)affinity term: a selector on an app, a key, sometimes other namespaces or all of them."""
    term = {"labelSelector": {"matchLabels": {"app": draw(st.sampled_from(apps))}},
            "topologyKey": draw(st.sampled_from([ZONE, HOST]))}
    scope = draw(st.integers(0, 3))
    if scope == 1:
        term["namespaces"] = ["team"]
    elif scope == 2:
        term["namespaceSelector"] = {}
    return term


@st.composite
def template_st(draw, a: int, apps: list[str], objects: ClusterObjects) -> dict:
    """A workload's pod template: selected by a Service and/or owned by a ReplicaSet (System default spread),
    explicit spread constraints (matchLabelKeys among them), pod (anti-)affinity terms, a priority."""
    namespace = draw(st.sampled_from(["default", "default", "default", "team"]))
    app = apps[a]
    labels = {"app": app, "tier": draw(st.sampled_from(["web", "db"]))}
    if draw(st.booleans()):
        objects.add("Service", Service(ObjectMeta(app, namespace), {"app": app}))
    owner: tuple = ()
    if draw(st.booleans()):
        objects.add("ReplicaSet", Controller("ReplicaSet", ObjectMeta(app, namespace, uid=f"rs-{a}"),
                                             {"matchLabels": {"app": app}}))
        owner = (OwnerReference("apps/v1", "ReplicaSet", app, f"rs-{a}", True),)
    spread = []
    for _ in range(draw(st.integers(0, 2))):
        c = {"maxSkew": draw(st.integers(1, 2)), "topologyKey": draw(st.sampled_from([ZONE, HOST])),
             "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
             "labelSelector": {"matchLabels": {"app": app}}}
        if draw(st.booleans()):
            c["matchLabelKeys"] = ["tier"]
        spread.append(c)
    affinity: dict = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section: dict = {}
        if draw(st.integers(0, 2)) == 0:
            section["requiredDuringSchedulingIgnoredDuringExecution"] = [draw(term_st(apps))]
        if draw(st.booleans()):
            section["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.integers(1, 100)), "podAffinityTerm": draw(term_st(apps))}
                for _ in range(draw(st.integers(1, 2)))]
        if section:
            affinity[kind] = section
    cpu = draw(st.sampled_from([300, 700, 1000])) * 10**6
    return {"namespace": namespace, "labels": labels, "owner_references": owner,
            "topology_spread_constraints": tuple(spread), "affinity": affinity or None,
            "priority": draw(st.sampled_from([0, 0, 100])),
            "containers": (Container("c", {"cpu": cpu, "memory": GIB * 10**9}),)}


@st.composite
def replicas_st(draw):
    """Nodes, the Services/ReplicaSets, a few bound pods and a queue of replicas of 1–3 workloads (shapes are
    reused, interleaved), with priorities that make DefaultPreemption evict."""
    nodes = draw(nodes_st())
    objects = ClusterObjects()
    apps = [f"app{a}" for a in range(draw(st.integers(1, 3)))]
    templates = [draw(template_st(a, apps, objects)) for a in range(len(apps))]
    bound = [Pod(f"b{i}", node_name=draw(st.sampled_from(nodes)).name, start_time=f"2029-01-01T00:00:{i:02d}Z",
                 **draw(st.sampled_from(templates))) for i in range(draw(st.integers(0, 3)))]
    runs = draw(st.lists(st.tuples(st.integers(0, len(apps) - 1), st.integers(1, 5)), min_size=1, max_size=5))
    queue = [Pod(f"p{i}", **templates[t]) for i, t in enumerate(t for t, k in runs for _ in range(k))]
    return nodes, bound, queue, objects


def _anti_affinity_between_workloads() -> tuple:
    """app1, then app0 whose required anti-affinity keeps app1 off its node, then app1 again twice: the
    later app1 cycles must see app0's term (an existing pod's anti-affinity, counted as app0 binds)."""
    nodes = [Node(f"n{i}", {"cpu": 4000 * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9},
                  {HOST: f"n{i}", ZONE: "za"}) for i in range(2)]
    containers = (Container("c", {"cpu": 300 * 10**6, "memory": GIB * 10**9}),)
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "app1"}}, "topologyKey": HOST}]}}
    queue = [Pod("p0", labels={"app": "app1"}, containers=containers),
             Pod("p1", labels={"app": "app0"}, containers=containers, affinity=anti),
             Pod("p2", labels={"app": "app1"}, containers=containers),
             Pod("p3", labels={"app": "app1"}, containers=containers)]
    return nodes, [], queue, ClusterObjects()


def _terms_on_a_workload_without_terms(kind: str) -> tuple:
    """app1's replicas (300m, 1Gi) have a `kind` term (weight 100 if preferred) on app0 (100m, 256Mi), whose pods
    have no terms: an app0 pod bound between two app1 cycles must count for the second (PreFilter's counts and
    PreScore's credits follow the log by pod class: `PodClasses.could_match`). Three equal nodes, app0's b0 on n0 from the start, p1
    (app0) pinned to n2 by its nodeSelector. By hand: p0 (app1) → n0 for affinity (required: the only node with
    app0; preferred: its credit), n1 for anti-affinity (n1, n2 alike, LeastAllocated ties to the first); p1 → n2;
    p2 (app1) → n2 for affinity (credited like n0, and emptier), n1 for anti-affinity (n0 and n2 hold app0; were
    p1 missed, n2 would be allowed, emptier and better balanced than n1)."""
    nodes = [Node(f"n{i}", {"cpu": 4000 * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9},
                  {HOST: f"n{i}", ZONE: "za"}) for i in range(3)]
    term = {"labelSelector": {"matchLabels": {"app": "app0"}}, "topologyKey": HOST}
    section = {"requiredDuringSchedulingIgnoredDuringExecution": [term]} if kind != "preferred" else {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]}
    app0 = {"labels": {"app": "app0"}, "containers": (Container("c", {"cpu": 100 * 10**6, "memory": GIB // 4 * 10**9}),)}
    app1 = {"labels": {"app": "app1"}, "containers": (Container("c", {"cpu": 300 * 10**6, "memory": GIB * 10**9}),),
            "affinity": {"podAntiAffinity" if kind == "anti" else "podAffinity": section}}
    queue = [Pod("p0", **app1), Pod("p1", node_selector={HOST: "n2"}, **app0), Pod("p2", **app1)]
    return nodes, [Pod("b0", node_name="n0", **app0)], queue, ClusterObjects()


def test_terms_on_a_workload_without_terms_by_hand():
    """The derivation of `_terms_on_a_workload_without_terms`: where p0, p1 and p2 go."""
    for kind, expected in (("required", [0, 2, 2]), ("preferred", [0, 2, 2]), ("anti", [1, 2, 1])):
        nodes, bound, queue, objects = _terms_on_a_workload_without_terms(kind)
        result = fast(nodes, bound, queue, CONFIG, objects=objects, tie_break="first")
        assert [s.node for s in result.steps] == expected, kind


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replicas_st())
@example(_anti_affinity_between_workloads())
@example(_terms_on_a_workload_without_terms("required"))
@example(_terms_on_a_workload_without_terms("anti"))
@example(_terms_on_a_workload_without_terms("preferred"))
def test_incremental_engine_equals_plain_framework_on_replicas(case):
    """Replicas of several workloads (System default spread, matchLabelKeys, namespaces, weighted preferred
    terms, required terms, preemption): the engine's incremental spread and affinity counts and its
    replica shortcut give each step's node, ties and message as `schedule_one` pod after pod."""
    nodes, bound, queue, objects = case
    result = fast(nodes, bound, queue, CONFIG, objects=objects, tie_break="first")
    ref, ref_state = reference(nodes, bound, queue, CONFIG, objects=objects)
    assert steps_of(result) == [(n, b if len(b) > 1 else [], m) for n, b, m in ref]
    assert np.array_equal(result.state.requested, ref_state.requested)


LABEL_PAIRS = [("app", "a"), ("app", "b"), ("tier", "web"), ("tier", "db"), ("team", "x")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["default", "shop"]),
                          st.none() | st.lists(st.sampled_from(LABEL_PAIRS), max_size=3).map(dict)), max_size=12),
       st.sampled_from(["default", "shop"]), st.lists(st.sampled_from(LABEL_PAIRS), max_size=4).map(dict))
def test_services_selecting_a_pod_are_those_whose_whole_selector_it_carries(services, namespace, labels):
    """`ClusterObjects.services_selecting` (indexed by each selector's first pair) lists exactly, in document
    order, the Services of the namespace with a non-empty selector whose every pair the labels carry."""
    objects = ClusterObjects()
    for i, (ns, selector) in enumerate(services):
        objects.add("Service", Service(ObjectMeta(f"s{i}", ns), selector))
    expected = [svc for svc in objects.of("Service") if svc.meta.namespace == namespace and svc.selector
                and all(labels.get(k) == v for k, v in svc.selector.items())]
    assert objects.services_selecting(namespace, labels) == expected
    objects.add("Service", Service(ObjectMeta("late", namespace), dict(labels) or {"app": "a"}))  # index renewed
    assert objects.services_selecting(namespace, labels)[-1:] == ([objects.of("Service")[-1]] if labels else [])


SELECTORS = [{"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b", "tier": "web"}}, {},
             {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
             {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
             {"matchExpressions": [{"key": "team", "operator": "Exists"}]}, {"matchLabels": {"tier": "db"}}]


@st.composite
def any_term_st(draw) -> dict:
    """A term with any kind of selector (labels, expressions, empty), namespaces or a namespace selector."""
    term = {"labelSelector": draw(st.sampled_from(SELECTORS)), "topologyKey": draw(st.sampled_from([ZONE, HOST]))}
    if draw(st.booleans()):
        term["namespaces"] = draw(st.lists(st.sampled_from(["default", "shop"]), min_size=1, max_size=2))
    elif draw(st.integers(0, 3)) == 0:
        term["namespaceSelector"] = {}
    return term


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["podAffinity", "podAntiAffinity"]), st.booleans(), any_term_st(),
                          st.sampled_from(["default", "shop"])), min_size=1, max_size=8),
       st.sampled_from(["default", "shop"]), st.lists(st.sampled_from(LABEL_PAIRS), max_size=4).map(dict))
def test_terms_matching_a_pod_are_the_distinct_terms_that_match_it(carried, namespace, labels):
    """`terms_matching` (terms indexed by a label their selector requires) lists, in first-seen order,
    exactly the bound pods' distinct terms `AffinityTerm.matches` accepts for the pod, also after more binds."""
    nodes = [Node(f"n{i}", {"cpu": 4000 * 10**6, "pods": 20 * 10**9}, {HOST: f"n{i}", ZONE: "za"}) for i in range(2)]
    state = compile_state(nodes, [])
    pod = Pod("in", namespace=namespace, labels=labels)
    for i, (kind, required, term, ns) in enumerate(carried):
        section = {REQUIRED: [term]} if required else {PREFERRED: [{"weight": 5, "podAffinityTerm": term}]}
        bound = Pod(f"p{i}", namespace=ns, node_name=f"n{i % 2}", affinity={kind: section})
        state.bind(i % 2, pod_demand(bound), pod=bound)
        expected = [(k, t) for k, t in distinct_terms(state) if t.matches(pod, None)]
        assert terms_matching(state, pod, None) == expected


def _pinned(pod: Pod, node: str) -> Pod:
    """The pod with a required node affinity on `metadata.name` (PreFilter restricts the node set)."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = {**(pod.affinity or {}), "nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [term]}}}
    return replace(pod, affinity=affinity)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload_st(), st.lists(st.integers(0, 11), max_size=4), st.lists(st.integers(0, 11), max_size=3))
def test_engine_filter_codes_and_fit_error_are_the_plain_cycles(workload, evictions, pins):
    """What PostFilter reads of a cycle (each node's Filter status code, the FitError text), kept by the
    engine with its reasons, equals the plain framework's cycle on the same state, pod after pod, also
    after pods leave nodes (preemption's evictions) and for pods PreFilter keeps to one node."""
    nodes, pods = workload
    pods = [_pinned(p, nodes[0].name) if i in pins else p for i, p in enumerate(pods)]
    engine = Engine(compile_state(nodes), CONFIG, tie_break="first")
    fw = Framework.build(CONFIG.profiles[0])
    placed = []
    for i, pod in enumerate(pods):
        d = engine.cycle(pod)
        plain = schedule_one(fw, engine.state, pod, score=False)
        codes = engine.filter_codes(d.shape)
        assert codes is not None and codes.tolist() == plain.codes.tolist()
        assert engine.fit_error(d.shape) == plain.fit_error()
        if d.node is not None:
            engine.bind(d.node, d.shape, pod)
            placed.append((d.node, pod))
        if i in evictions and placed:
            engine.evict(*placed.pop(0))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ReplicaSet", "StatefulSet"]), st.sampled_from(["default", "shop"]),
                          st.sampled_from(["a", "b", "c"])), max_size=10),
       st.sampled_from(["ReplicaSet", "StatefulSet"]), st.sampled_from(["default", "shop"]), st.sampled_from("abc"))
def test_named_object_is_the_first_of_its_kind_namespace_and_name(controllers, kind, namespace, name):
    """`ClusterObjects.named` (indexed per kind) gives the first object in document order with that kind,
    namespace and name, as a scan would (the owner DefaultSelector reads), also after more are added."""
    objects = ClusterObjects()
    for i, (k, ns, n) in enumerate(controllers):
        objects.add(k, Controller(k, ObjectMeta(n, ns, uid=str(i))))
        scan = next((c for c in objects.of(kind) if c.meta.namespace == namespace and c.meta.name == name), None)
        found = objects.named(kind, namespace, name)
        assert found is scan



@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replicas_st())
def test_copies_replayed_in_a_trial_are_those_of_a_copy(case):
    """Stranded capacity replays the copies of a pod whose filters read other nodes (spread, inter-pod
    affinity) on the state itself and takes them back (`copies_in_trial`): after a simulation, for each
    workload the count is the one replayed on an independent copy of the state, and afterwards the state
    (rows, pods, the per-node pod counts its memos keep) is as the simulation left it."""
    nodes, bound, queue, objects = case
    state = fast(nodes, bound, queue, CONFIG, objects=objects, tie_break="first", stranded=False).state
    requested, pods = state.requested.copy(), [[p.name for p in on] for on in state.pods]
    for pod in {p.labels["app"]: p for p in queue}.values():
        demand = pod_demand(pod)
        expected = count_copies(state.copy(), CONFIG, pod, demand, limit=50)[0]
        assert copies_in_trial(state, CONFIG, pod, demand, 50) == expected
        assert np.array_equal(state.requested, requested)
        assert [[p.name for p in on] for on in state.pods] == pods
        for c in PodTopologySpread(objects=objects).constraints(pod, "ScheduleAnyway"):
            fresh = [sum(p.namespace == pod.namespace and c.selector.matches(p.labels) for p in on)
                     for on in state.pods]
            assert matching_counts(state, c.selector, pod.namespace).tolist() == fresh


def test_pod_terms_of_a_shared_affinity_keep_each_pods_namespace():
    """Replicas share their affinity object (`load.decode_pod`); a term without namespaces means the pod's own
    namespace (`newAffinityTerm`), so pods of two namespaces sharing one affinity get one namespace each."""
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": HOST}]}}
    first, second = Pod("p", namespace="shop", affinity=affinity), Pod("q", namespace="team", affinity=affinity)
    assert pod_terms(first).required_affinity[0].namespaces == frozenset({"shop"})
    assert pod_terms(second).required_affinity[0].namespaces == frozenset({"team"})
    assert pod_terms(Pod("r", namespace="shop", affinity=affinity)) is pod_terms(first)  # parsed once
