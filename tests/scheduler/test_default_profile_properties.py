"""Properties of the default profile's pod-interaction plugins (spread, inter-pod affinity, host ports):
the incremental engine gives exactly what the plain framework gives pod after pod, and a pod is never
bound against a required anti-affinity term or a DoNotSchedule spread constraint (checked by brute force
over the pods bound so far, independently of the plugins)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, ContainerPort, Node, Pod
from kubefit.scheduler.config import default_configuration
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.framework import Framework, schedule_one
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
