"""PodTopologySpread's Filter and Score, kept up to date bind by bind (per-domain counts that follow the change
log, `DomainCounts`), equal a from-scratch reference after every step of random bind / removal / node-deletion
sequences.

The reference is written here, node by node, from upstream v1.34.1
(pkg/scheduler/framework/plugins/podtopologyspread): Filter from `calPreFilterState` (per constraint, the pods the
selector matches in the pod's namespace counted per domain over the nodes that carry every constraint's key and
pass the constraint's inclusion policies; minMatchNum the least of them, 0 below minDomains) and `Filter`
(missing key: UnschedulableAndUnresolvable; matchNum + selfMatch − minMatchNum > maxSkew: Unschedulable; the
first constraint that fails decides); Score from `initPreScoreState` / `Score` / `NormalizeScore`. Random
clusters: nodes lacking the keys now and then, NoSchedule / PreferNoSchedule / NoExecute taints, a `pool` label
for the pod's nodeSelector; random constraints: keys, maxSkew, minDomains, both whenUnsatisfiable values, both
inclusion policies, matchLabelKeys, pods that do and do not match their own selector, other namespaces.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubefit.api.cluster import ClusterObjects, ObjectMeta, Service
from kubefit.api.core import Node, Pod, Taint, Toleration
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler.framework import new_context
from kubefit.scheduler.plugins.base import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from kubefit.scheduler.plugins.topologyspread import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, PodTopologySpread
from kubefit.scheduler.state import compile_state

HOST, ZONE, RACK = "kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack"
VALUES = {HOST: None, ZONE: ["za", "zb", "zc"], RACK: ["r1", "r2"]}


@st.composite
def node_st(draw, i: int) -> Node:
    labels = {}
    for key, values in VALUES.items():
        if draw(st.integers(0, 5)):  # a key missing now and then
            labels[key] = f"n{i}" if values is None else draw(st.sampled_from(values))
    if draw(st.booleans()):
        labels["pool"] = draw(st.sampled_from(["a", "b"]))
    taints = tuple(Taint("dedicated", "x", effect) for effect in
                   draw(st.lists(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]), max_size=1)))
    return Node(f"n{i}", {"pods": 10**10}, labels, taints=taints)


@st.composite
def constraint_st(draw) -> dict:
    c = {"maxSkew": draw(st.integers(1, 3)), "topologyKey": draw(st.sampled_from(list(VALUES))),
         "whenUnsatisfiable": draw(st.sampled_from([DO_NOT_SCHEDULE, SCHEDULE_ANYWAY])),
         "labelSelector": {"matchLabels": {"app": "a"}}}
    if draw(st.booleans()):
        c["minDomains"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        c["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.booleans()):
        c["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.booleans()):
        c["matchLabelKeys"] = ["tier"]
    return c


def labels_st():
    return st.fixed_dictionaries({"app": st.sampled_from(["a", "b"])},
                                 optional={"tier": st.sampled_from(["x", "y"])})


@st.composite
def case_st(draw):
    """Nodes, the incoming pod (its own constraints, or none: the System defaults through a Service) and the steps:
    a pod bound or removed (matching the selector or not, in the pod's namespace or another), a node deleted, the
    filtered nodes drawn anew."""
    n = draw(st.integers(1, 10))
    nodes = [draw(node_st(i)) for i in range(n)]
    spread = tuple(draw(st.lists(constraint_st(), min_size=1, max_size=3))) if draw(st.integers(0, 4)) else ()
    pod = Pod("p", labels=draw(labels_st()), topology_spread_constraints=spread,
              node_selector={"pool": "a"} if draw(st.booleans()) else None,
              tolerations=(Toleration("dedicated", "Exists"),) if draw(st.booleans()) else ())
    steps = []
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["bind", "bind", "bind", "remove", "delete-node", "redraw"]))
        steps.append((kind, draw(st.integers(0, n - 1)), draw(labels_st()),
                      draw(st.sampled_from(["default", "default", "other"])),
                      draw(st.sets(st.integers(0, n - 1), min_size=1))))
    return nodes, pod, steps


# --------------------------------------------------------------------------- the reference, node by node

def _selector(c: dict, pod: Pod) -> dict[str, str]:
    """The constraint's selector as required labels: matchLabels plus matchLabelKeys' values of the pod."""
    required = dict(c["labelSelector"]["matchLabels"])
    for key in c.get("matchLabelKeys", ()):
        if key in pod.labels:
            required[key] = pod.labels[key]
    return required


def _matching(state, node: int, required: dict[str, str], namespace: str) -> int:
    """`countPodsMatchSelector`: the node's pods of `namespace` carrying every required label."""
    return sum(1 for p in state.pods[node]
               if p.namespace == namespace and all(p.labels.get(k) == v for k, v in required.items()))


def _included(c: dict, pod: Pod, node: Node) -> bool:
    """`matchNodeInclusionPolicies`: nodeAffinityPolicy Honor (default) asks the pod's nodeSelector; nodeTaintsPolicy
    Honor (default Ignore) asks that every NoSchedule / NoExecute taint be tolerated."""
    if c.get("nodeAffinityPolicy", "Honor") == "Honor" and pod.node_selector:
        if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
            return False
    if c.get("nodeTaintsPolicy", "Ignore") == "Honor":
        tolerated = any(t.key == "dedicated" and t.operator == "Exists" for t in pod.tolerations)
        if any(t.effect in ("NoSchedule", "NoExecute") for t in node.taints) and not tolerated:
            return False
    return True


def _present(state) -> list[int]:
    return [i for i in range(len(state)) if state.removed is None or not state.removed[i]]


def reference_filter(state, pod: Pod, constraints: list[dict], idx: list[int]) -> list[int]:
    """`calPreFilterState` then `Filter` of each node of idx: its status code."""
    keys = [c["topologyKey"] for c in constraints]
    per_domain: list[dict[str, int]] = [{} for _ in constraints]
    for n in _present(state):
        node = state.nodes[n]
        if not all(k in node.labels for k in keys):
            continue
        for i, c in enumerate(constraints):
            if _included(c, pod, node):
                value = node.labels[c["topologyKey"]]
                per_domain[i][value] = per_domain[i].get(value, 0) + _matching(state, n, _selector(c, pod),
                                                                               pod.namespace)
    out = []
    for n in idx:
        code = SUCCESS
        for i, c in enumerate(constraints):
            value = state.nodes[n].labels.get(c["topologyKey"])
            if value is None:
                code = UNRESOLVABLE
                break
            required = _selector(c, pod)
            self_match = int(all(pod.labels.get(k) == v for k, v in required.items()))
            counts = per_domain[i]
            min_match = 0 if len(counts) < c.get("minDomains", 1) else min(counts.values())
            if counts.get(value, 0) + self_match - min_match > c["maxSkew"]:
                code = UNSCHEDULABLE
                break
        out.append(code)
    return out


def reference_scores(state, pod: Pod, constraints: list[dict], require_all: bool, idx: list[int]) -> list[int]:
    """`initPreScoreState`, `Score` and `NormalizeScore` over the filtered nodes idx."""
    keys = [c["topologyKey"] for c in constraints]
    ignored = {n for n in idx if require_all and not all(k in state.nodes[n].labels for k in keys)}
    pairs: dict[tuple[int, str], int] = {}
    for n in idx:
        if n not in ignored:
            for i, c in enumerate(constraints):
                if c["topologyKey"] != HOST:
                    pairs[(i, state.nodes[n].labels.get(c["topologyKey"], ""))] = 0
    weights = [math.log((len(idx) - len(ignored) if c["topologyKey"] == HOST
                         else sum(1 for i2, _v in pairs if i2 == i)) + 2) for i, c in enumerate(constraints)]
    for n in _present(state):
        node = state.nodes[n]
        if require_all and not all(k in node.labels for k in keys):
            continue
        for i, c in enumerate(constraints):
            pair = (i, node.labels.get(c["topologyKey"], ""))
            if _included(c, pod, node) and c["topologyKey"] != HOST and pair in pairs:
                pairs[pair] += _matching(state, n, _selector(c, pod), pod.namespace)
    raw = {}
    for n in idx:
        if n in ignored:  # `Score` returns 0 at once
            raw[n] = 0
            continue
        score = 0.0
        for i, c in enumerate(constraints):
            value = state.nodes[n].labels.get(c["topologyKey"])
            if value is not None:
                cnt = (_matching(state, n, _selector(c, pod), pod.namespace) if c["topologyKey"] == HOST
                       else pairs[(i, value)])
                score += float(cnt) * weights[i] + float(c["maxSkew"] - 1)
        raw[n] = math.floor(score + 0.5)  # math.Round of a score >= 0
    valid = [raw[n] for n in idx if n not in ignored]
    lo, hi = min(valid, default=0), max([0, *valid])
    return [0 if n in ignored else 100 if hi == 0 else 100 * (hi + lo - raw[n]) // hi for n in idx]


# --------------------------------------------------------------------------- the properties

SYSTEM_DEFAULTS = [{"maxSkew": 3, "topologyKey": HOST, "whenUnsatisfiable": SCHEDULE_ANYWAY,
                    "labelSelector": {"matchLabels": {"app": "a"}}},
                   {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY,
                    "labelSelector": {"matchLabels": {"app": "a"}}}]


def _run(case, check) -> None:
    """Drive the case's steps on one state and one cycle context (what the engine keeps between a shape's
    cycles); after the start and every step, `check(state, plugin, ctx, idx)` with the filtered nodes idx."""
    nodes, pod, steps = case
    objects = ClusterObjects()
    objects.add("Service", Service(ObjectMeta("svc", "default"), {"app": "a"}))  # the System defaults' selector
    state = compile_state(nodes, (), objects)
    plugin = PodTopologySpread.from_args({}, objects)  # defaultingType System
    ctx = new_context(state, pod)
    bound: list[tuple[int, Pod]] = []
    idx = list(range(len(nodes)))
    check(state, plugin, ctx, idx)
    for i, (kind, node, labels, namespace, subset) in enumerate(steps):
        present = _present(state)
        if kind == "bind" and node in present:
            other = Pod(f"q{i}", namespace, node_name=nodes[node].name, labels=labels)
            state.bind(node, pod_demand(other), pod=other)
            bound.append((node, other))
        elif kind == "remove" and bound:
            at, other = bound.pop(node % len(bound))
            if other in state.pods[at]:
                state.unbind(at, other)
        elif kind == "delete-node" and len(present) > 1 and node in present:
            state.remove_node(node)
            bound = [(n, p) for n, p in bound if n != node]
        idx = sorted(n for n in (subset if kind == "redraw" else idx) if n in _present(state)) or _present(state)[:1]
        check(state, plugin, ctx, idx)


@settings(max_examples=400, deadline=None)
@given(case_st())
def test_incremental_filter_equals_the_reference_after_every_step(case):
    """Filter over the present nodes, its per-domain counts followed bind by bind, gives each node the code and
    reason the reference does (a fresh cycle context too)."""
    def check(state, plugin, ctx, _idx):
        constraints = [c for c in ctx.pod.topology_spread_constraints if c["whenUnsatisfiable"] == DO_NOT_SCHEDULE]
        present = np.asarray(_present(state), dtype=np.int64)
        outcome = plugin.filter(state, ctx, present)
        want = reference_filter(state, ctx.pod, constraints, present.tolist())
        assert outcome.codes.tolist() == want
        assert [outcome.reasons(m) for m in range(len(present))] == [
            [] if code == SUCCESS else ["node(s) didn't match pod topology spread constraints"
                                        + (" (missing required label)" if code == UNRESOLVABLE else "")]
            for code in want]
        fresh = plugin.filter(state, new_context(state, ctx.pod), present)
        assert fresh.codes.tolist() == want

    _run(case, check)


def _lacking_rack() -> tuple:
    """Zone and rack ScheduleAnyway constraints (every key required): n1 lacks the rack, so the pod bound there
    counts in no domain though n1 is in zone za with n0; n0 and n2 (zone zb) then keep equal raw scores."""
    nodes = [Node("n0", {"pods": 10**10}, {HOST: "n0", ZONE: "za", RACK: "r1"}),
             Node("n1", {"pods": 10**10}, {HOST: "n1", ZONE: "za"}),
             Node("n2", {"pods": 10**10}, {HOST: "n2", ZONE: "zb", RACK: "r1"})]
    spread = tuple({"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": SCHEDULE_ANYWAY,
                    "labelSelector": {"matchLabels": {"app": "a"}}} for k in (ZONE, RACK))
    return nodes, Pod("p", labels={"app": "a"}, topology_spread_constraints=spread), [
        ("bind", 1, {"app": "a"}, "default", {0, 2}), ("redraw", 0, {"app": "a"}, "default", {0, 2})]


@settings(max_examples=400, deadline=None)
@given(case_st())
@example(_lacking_rack())
def test_incremental_scores_equal_the_reference_after_every_step(case):
    """Score + NormalizeScore over the filtered nodes (`normalized_scores`, and Score then NormalizeScore), their
    per-domain counts followed bind by bind, give what the reference does."""
    def check(state, plugin, ctx, idx):
        spread = ctx.pod.topology_spread_constraints
        if spread:
            constraints = [c for c in spread if c["whenUnsatisfiable"] == SCHEDULE_ANYWAY]
        else:  # the System defaults, with the Service's selector when it selects the pod
            constraints = SYSTEM_DEFAULTS if ctx.pod.labels["app"] == "a" else []
        if not constraints:
            return
        want = reference_scores(state, ctx.pod, constraints, bool(spread), idx)
        rows = np.asarray(idx, dtype=np.int64)
        live = plugin.normalized_scores(state, ctx, rows)
        if live is not None:
            assert live.tolist() == want
        assert plugin.normalize(plugin.score(state, ctx, rows), ctx).tolist() == want

    _run(case, check)
