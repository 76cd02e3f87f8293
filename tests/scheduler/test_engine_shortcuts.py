"""Shortcuts of the engine and of InterPodAffinity that skip work, each equal to the work it skips: a pod's shape
key found by an earlier replica reads none of the fields replicas differ in; InterPodAffinity's PreFilter and
PreScore skip at once exactly when the full computation would skip; the cycle's best nodes are found in C as numpy
finds them."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Node, Pod
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler import engine as eng
from kubefit.scheduler.framework import Framework, new_context
from kubefit.scheduler.plugins.affinityterms import PREFERRED, REQUIRED
from kubefit.scheduler.plugins.interpodaffinity import InterPodAffinity
from kubefit.scheduler.state import compile_state

from .test_default_profile_properties import CONFIG, HOST, ZONE, any_term_st, template_st

# another value of each field `_IDENTITY_FIELDS` names (a field added there needs one here, and must be read by no key)
OTHER = {"name": "other", "uid": "u-2", "raw": {"metadata": {"name": "other"}}, "source": "elsewhere.yaml",
         "created": 1.0e9, "start_time": "2031-01-01T00:00:00Z", "arrival": 5, "duration": 7,
         "created_by": "ReplicaSet/other", "ordered_after": ("default/p-0",)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_replicas_differ_only_in_fields_no_key_reads(data):
    """Varying any of `_IDENTITY_FIELDS` leaves a pod's signature key and shape key as they were, so the engine
    may give a replica the key of an earlier pod of its template (`Engine._replica_key`); and it does."""
    objects = ClusterObjects()
    pod = Pod("p", **data.draw(template_st(0, ["app0", "app1"], objects)))
    fw = Framework.build(CONFIG.profiles[0], objects=objects, version=CONFIG.version)
    engine = eng.Engine(compile_state([Node("n0", {"pods": 10**10}, {HOST: "n0", ZONE: "za"})], (), objects), CONFIG)
    key = eng.HashedKey(eng.signature_key(fw, pod) or eng.shape_key(pod))
    engine._remember_key(fw, pod, key)
    for name in eng._IDENTITY_FIELDS:
        other = dataclasses.replace(pod, **{name: OTHER[name]})
        assert eng.signature_key(fw, other) == eng.signature_key(fw, pod), name
        assert eng.shape_key(other) == eng.shape_key(pod), name
        assert engine._replica_key(fw, other) is key, name
    changed = dataclasses.replace(pod, labels={**pod.labels, "tier": "other"})  # a field keys read
    assert engine._replica_key(fw, changed) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["podAffinity", "podAntiAffinity"]), st.booleans(), any_term_st(),
                          st.sampled_from(["default", "shop"])), max_size=5),
       st.sampled_from([None, "podAffinity", "podAntiAffinity"]), st.booleans(), any_term_st(), st.data())
def test_inter_pod_affinity_skips_exactly_when_the_full_computation_skips(carried, kind, required, term, data):
    """PreFilter skips at once when neither the pod nor any bound pod carries a required (anti-)affinity term,
    PreScore when neither carries a term that credits nodes: each answer is the full computation's (its
    PreFilter state, its scores over every bound pod), whatever terms the bound pods carry."""
    nodes = [Node(f"n{i}", {"cpu": 4000 * 10**6, "pods": 20 * 10**9}, {HOST: f"n{i}", ZONE: "za"}) for i in range(2)]
    state = compile_state(nodes, [])
    labels = data.draw(st.sampled_from([{"app": "a"}, {"app": "b", "tier": "web"}, {"tier": "db"}]))
    for i, (k, req, t, ns) in enumerate(carried):
        section = {REQUIRED: [t]} if req else {PREFERRED: [{"weight": 5, "podAffinityTerm": t}]}
        bound = Pod(f"b{i}", namespace=ns, node_name=f"n{i % 2}", labels=labels, affinity={k: section})
        state.bind(i % 2, pod_demand(bound), pod=bound)
    affinity = None
    if kind is not None:
        affinity = {kind: {REQUIRED: [term]} if required else {PREFERRED: [{"weight": 3, "podAffinityTerm": term}]}}
    pod = Pod("in", labels=data.draw(st.sampled_from([{"app": "a"}, {"tier": "db"}])), affinity=affinity)
    plugin = InterPodAffinity(objects=ClusterObjects())
    full = plugin._pre_filter_state(state, new_context(state, pod))
    skip = not full.any_existing_anti and not full.terms.required_affinity and not full.terms.required_anti_affinity
    assert plugin.pre_filter(state, new_context(state, pod)).skip == skip
    assert plugin.pre_score(state, new_context(state, pod)) == (plugin._topology_score(state, new_context(state, pod))
                                                                 is None)


PORTS = st.sampled_from([("", "TCP", 53), ("0.0.0.0", "UDP", 53), ("10.0.0.1", "TCP", 53), ("10.0.0.2", "TCP", 80),
                         ("", "TCP", 80)])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.lists(PORTS, min_size=1, max_size=2), st.booleans()), max_size=20),
       st.lists(PORTS, min_size=1, max_size=2))
def test_port_index_answers_as_check_conflict_node_by_node(steps, wanted):
    """NodePorts over many nodes reads the port index (`PortIndex`, kept along the change log); it gives every
    node what `conflicts` gives from the node's used ports, after binds and removals (a removed pod frees its
    ports even when another pod of the node declared them: `used_ports` is a set, as upstream's)."""
    from kubefit.api.core import Container, ContainerPort
    from kubefit.scheduler.plugins.nodeports import NodePorts, PortIndex, conflicts
    from kubefit.scheduler.state import host_ports

    state = compile_state([Node(f"n{i}", {"pods": 10**10}) for i in range(5)], [])
    plugin = NodePorts()
    bound: list[tuple[int, Pod]] = []
    for i, (node, ports, remove) in enumerate(steps):
        if remove and bound:
            n, pod = bound.pop(node % len(bound))
            state.unbind(n, pod)
        else:
            pod = Pod(f"p{i}", containers=(Container("c", {}, ports=tuple(
                ContainerPort(p, p, proto, ip) for ip, proto, p in ports)),))
            state.bind(node, pod_demand(pod), pod=pod)
            bound.append((node, pod))
        PortIndex.of(state)  # followed step by step (and built afresh below)
    incoming = Pod("in", containers=(Container("c", {}, ports=tuple(ContainerPort(p, p, proto, ip)
                                                                    for ip, proto, p in wanted)),))
    every = np.arange(5, dtype=np.int64)
    want = [conflicts(state.used_ports[n], host_ports(incoming)) for n in range(5)]
    assert PortIndex.of(state).conflicts(host_ports(incoming), every).tolist() == want
    state.__dict__.pop("_port_index")
    assert PortIndex.of(state).conflicts(host_ports(incoming), every).tolist() == want
    assert (plugin.filter(state, new_context(state, incoming), every).codes != 0).tolist() == want


INT64 = st.integers(-2**63, 2**63 - 1)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_best_in_c_equals_numpy(data):
    """`_best` in C (`_countkernels.best`) gives numpy's sums (int64, wrapping) and the nodes tying for the highest,
    in the feasible nodes' order, whatever the values (ties, negatives, sums beyond int64)."""
    n = data.draw(st.integers(1, 40))
    small = st.integers(-3, 3)
    total = np.asarray(data.draw(st.lists(INT64 | small, min_size=n, max_size=n)), dtype=np.int64)
    feasible = np.asarray(data.draw(st.permutations(range(n)))[:data.draw(st.integers(1, n))], dtype=np.int64)
    normed = np.asarray(data.draw(st.lists(INT64 | small, min_size=len(feasible), max_size=len(feasible))),
                        dtype=np.int64)
    assert eng._best_c is not None
    summed, best = eng._best(total, feasible, normed)
    want = total[feasible] + normed
    assert summed.tolist() == want.tolist()
    assert best.tolist() == [int(f) for f, v in zip(feasible, want, strict=True) if v == want.max()]
    # with a scale and an extra (an int, or an array over feasible's positions): a plugin's normalized scores, its
    # weight and the static scorers' sum (`Engine._normalized_parts`), numpy's int64 arithmetic by hand
    scale = data.draw(st.integers(-3, 10) | INT64)
    extra = data.draw(INT64 | small) if data.draw(st.booleans()) else np.asarray(
        data.draw(st.lists(INT64 | small, min_size=len(feasible), max_size=len(feasible))), dtype=np.int64)
    want = [_wrap(int(total[f]) + int(v) * scale + int(np.broadcast_to(extra, len(feasible))[k]))
            for k, (f, v) in enumerate(zip(feasible.tolist(), normed.tolist(), strict=True))]
    for compiled in (True, False):
        old = eng._best_c
        eng._best_c = old if compiled else None
        try:
            summed, best = eng._best(total, feasible, normed, scale, extra)
        finally:
            eng._best_c = old
        assert summed.tolist() == want
        assert best.tolist() == [int(f) for f, v in zip(feasible, want, strict=True) if v == max(want)]


def _wrap(v: int) -> int:
    """v as int64 arithmetic leaves it (two's complement, modulo 2⁶⁴)."""
    return (v + 2**63) % 2**64 - 2**63
