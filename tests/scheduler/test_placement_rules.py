"""The tricky rules of the node placement plugins (SPEC-kube-scheduler §13), hand-computed, plus a property:
the vectorised selectors agree with a plain per-node rendering of the label/field matching rules."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, ContainerImage, Node, Pod, Taint, Toleration
from kubefit.errors import ConfigError
from kubefit.k8s.nodeaffinity import NodeSelector
from kubefit.k8s.taints import tolerates
from kubefit.scheduler.config import NodeAffinityArgs, Profile, ScorePlugin
from kubefit.scheduler.framework import Framework, SchedulingCycleError, schedule_one
from kubefit.scheduler.plugins.base import CycleContext
from kubefit.scheduler.plugins.imagelocality import ImageLocality
from kubefit.scheduler.plugins.nodeaffinity import NodeAffinity
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.plugins.tainttoleration import default_normalize
from kubefit.scheduler.state import compile_state

PLACEMENT = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity")
POD_SELECTOR = "node(s) didn't match Pod's node affinity/selector"
LABEL_VALUE_ERROR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                     "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                     "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def node(name: str, labels: dict | None = None, taints=(), unschedulable: bool = False) -> Node:
    return Node(name, {}, labels=dict(labels or {}), taints=tuple(taints), unschedulable=unschedulable)


def pod(**kw) -> Pod:
    return Pod("p", containers=(Container("c"),), **kw)


def affinity(required_terms=None, preferred=None) -> dict:
    na: dict = {}
    if required_terms is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required_terms}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"nodeAffinity": na}


def run(nodes, p, *, scorers=("TaintToleration", "NodeAffinity"), added=None):
    profile = Profile(filter_plugins=PLACEMENT, score_plugins=tuple(ScorePlugin(s, 1) for s in scorers),
                      plugin_args={"NodeAffinity": NodeAffinityArgs(added)})
    state = compile_state(nodes)
    return schedule_one(Framework.build(profile), state, p), state


def statuses(result, state):
    return {n.name: (result.code_name(i), result.reasons.get(i, []), result.failed_plugin[i])
            for i, n in enumerate(state.nodes)}


# --------------------------------------------------------------------------- tolerations (§13.2)

UNSCHEDULABLE = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


@pytest.mark.parametrize(("tol", "taint", "ok"), [
    (Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"), UNSCHEDULABLE, True),
    (Toleration(operator="Exists"), Taint("anything", "v", "NoExecute"), True),
    (Toleration(operator="Exists", effect="NoSchedule"), UNSCHEDULABLE, True),
    (Toleration(operator="Exists", effect="NoSchedule"), Taint("k", "", "NoExecute"), False),
    (Toleration(key="node.kubernetes.io/unschedulable"), UNSCHEDULABLE, True),  # Equal, empty value
    (Toleration(key="k", operator="Equal", value="a"), Taint("k", "b", "NoSchedule"), False),
    (Toleration(key="k", operator="exists"), Taint("k", "", "NoSchedule"), False),  # case matters
    (Toleration(key="k", operator="Gt", value="1"), Taint("k", "2", "NoSchedule"), False),
    (Toleration(operator="Equal", value=""), Taint("any-key", "", "NoExecute"), True),  # API-invalid, still works
    (Toleration(operator="Equal", value=""), Taint("any-key", "x", "NoExecute"), False),
    (Toleration(key="other", operator="Exists"), Taint("k", "", "NoSchedule"), False),
])
def test_toleration_matching(tol, taint, ok):
    assert tolerates(tol, taint) is ok


def test_cordoned_node_and_its_toleration():
    nodes = [node("a", unschedulable=True, taints=[Taint("x", "", "NoSchedule")]), node("b")]
    result, state = run(nodes, pod())
    assert statuses(result, state)["a"] == ("UnschedulableAndUnresolvable", ["node(s) were unschedulable"],
                                            "NodeUnschedulable")
    # tolerating the synthetic taint passes NodeUnschedulable; the node's own taints are TaintToleration's
    result, state = run(nodes, pod(tolerations=(Toleration(key="node.kubernetes.io/unschedulable"),)))
    assert statuses(result, state)["a"] == ("UnschedulableAndUnresolvable",
                                            ["node(s) had untolerated taint {x: }"], "TaintToleration")


def test_node_name():
    result, state = run([node("a"), node("b")], pod(node_name="b"))
    assert statuses(result, state)["a"] == ("UnschedulableAndUnresolvable",
                                            ["node(s) didn't match the requested node name"], "NodeName")
    assert [state.nodes[i].name for i in result.feasible] == ["b"]


# --------------------------------------------------------------------------- TaintToleration (§13.4)

def test_first_untolerated_taint_in_list_order_and_prefer_never_filters():
    taints = [Taint("soft", "", "PreferNoSchedule"), Taint("dedicated", "", "NoSchedule"),
              Taint("gpu", "yes", "NoExecute")]
    result, state = run([node("a", taints=taints)], pod())
    assert result.reasons[0] == ["node(s) had untolerated taint {dedicated: }"]
    result, _ = run([node("a", taints=taints)], pod(tolerations=(Toleration(key="dedicated", operator="Exists"),)))
    assert result.reasons[0] == ["node(s) had untolerated taint {gpu: yes}"]
    tolerate_hard = (Toleration(key="dedicated", operator="Exists"), Toleration(key="gpu", value="yes"))
    result, _ = run([node("a", taints=taints)], pod(tolerations=tolerate_hard))
    assert result.feasible.tolist() == [0]


def test_prefer_no_schedule_score_reversed():
    soft = [Taint("s1", "", "PreferNoSchedule"), Taint("s2", "", "PreferNoSchedule")]
    nodes = [node("two", taints=soft), node("one", taints=soft[:1]), node("none")]
    # a NoSchedule-only toleration does not count at scoring
    tols = (Toleration(key="s2", operator="Exists", effect="NoSchedule"),)
    result, _ = run(nodes, pod(tolerations=tols), scorers=("TaintToleration",))
    assert result.raw_scores["TaintToleration"].tolist() == [2, 1, 0]
    assert result.scores["TaintToleration"].tolist() == [0, 50, 100]
    tols = (Toleration(key="s2", operator="Exists", effect="PreferNoSchedule"),)
    result, _ = run(nodes, pod(tolerations=tols), scorers=("TaintToleration",))
    assert result.raw_scores["TaintToleration"].tolist() == [1, 1, 0]
    assert result.scores["TaintToleration"].tolist() == [0, 0, 100]


@pytest.mark.parametrize(("raw", "reverse", "want"), [
    ([2, 1, 0], True, [0, 50, 100]),
    ([0, 0], True, [100, 100]),
    ([15, 10, 5, 0], False, [100, 66, 33, 0]),
    ([0, 0], False, [0, 0]),
    ([-19, 0], False, [-19, 0]),  # max 0: unchanged, the framework then rejects -19
    ([-1, 3], False, [-33, 100]),  # Go's division truncates toward zero
])
def test_default_normalize_score(raw, reverse, want):
    assert default_normalize(np.array(raw), reverse).tolist() == want


# --------------------------------------------------------------------------- NodeAffinity (§13.5)

LABELED = [node("n1", {"gpu-count": "08", "zone": "a"}), node("n2", {"gpu-count": "1.5"}),
           node("n3", {"gpu-count": "many", "zone": ""}), node("n4")]


def test_nil_and_empty_node_selector():
    result, _ = run(LABELED, pod(node_selector=None))
    assert result.skipped_filter_plugins == ["NodeAffinity"]
    result, _ = run(LABELED, pod(node_selector={}))
    assert result.skipped_filter_plugins == [] and result.feasible.tolist() == [0, 1, 2, 3]
    result, _ = run(LABELED, pod(node_selector={"zone": ""}))  # exists with the empty value
    assert result.feasible.tolist() == [2]


@pytest.mark.parametrize(("op", "values", "feasible"), [
    ("Gt", ["7"], [0]),  # "08" is 8; "1.5" and "many" never compare
    ("Lt", ["9"], [0]),
    ("Gt", ["8"], []),  # strict comparisons
    ("Lt", ["8"], []),
    ("Gt", ["-1"], []),  # "-1" is no valid label value: the term never matches
    ("Gt", ["1", "2"], []),
    ("In", [], []),
    ("Exists", ["x"], []),
    ("DoesNotExist", [], [3]),
    ("NotIn", ["a"], [1, 2, 3]),
    ("Foo", ["a"], []),
])
def test_label_requirements(op, values, feasible):
    term = {"matchExpressions": [{"key": "gpu-count" if op in ("Gt", "Lt", "DoesNotExist") else "zone",
                                  "operator": op, "values": values}]}
    if op == "DoesNotExist":
        term = {"matchExpressions": [{"key": "gpu-count", "operator": op}]}
    result, _ = run(LABELED, pod(affinity=affinity([term])))
    assert result.feasible.tolist() == feasible
    for i in set(range(4)) - set(feasible):
        assert result.reasons[i] == [POD_SELECTOR]


def test_terms_are_ored_and_empty_terms_dropped():
    terms = [{}, {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
             {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n4"]}]}]
    result, _ = run(LABELED, pod(affinity=affinity(terms)))
    assert result.feasible.tolist() == [0, 3]
    result, _ = run(LABELED, pod(affinity=affinity([{}])))  # only empty terms: nothing matches
    assert result.feasible.tolist() == [] and result.pre_filter_node_names is None
    result, _ = run(LABELED, pod(affinity=affinity([])))  # nodeSelectorTerms: [] (API-invalid)
    assert result.feasible.tolist() == [] and result.skipped_filter_plugins == []


def test_match_fields_in_two_values_pre_filter_set_but_never_matches():
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
    result, state = run(LABELED, pod(affinity=affinity([term])))
    assert result.pre_filter_node_names == ["n1", "n2"]
    got = statuses(result, state)
    assert got["n1"] == ("UnschedulableAndUnresolvable", [POD_SELECTOR], "NodeAffinity")
    assert got["n3"] == ("UnschedulableAndUnresolvable", ["node(s) didn't satisfy plugin(s) [NodeAffinity]"], None)
    assert result.fit_error() == ("0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, "
                                  "2 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_match_fields_other_keys_read_empty():
    terms = [{"matchFields": [{"key": "metadata.namespace", "operator": "NotIn", "values": ["x"]},
                              {"key": "spec.unschedulable", "operator": "In", "values": [""]}]}]
    result, _ = run(LABELED, pod(affinity=affinity(terms)))
    assert result.feasible.tolist() == [0, 1, 2, 3] and result.pre_filter_node_names is None


def test_conflicting_name_terms():
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]},
                              {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]
    result, state = run(LABELED, pod(affinity=affinity(terms)))
    assert all(s == ("UnschedulableAndUnresolvable", ["pod affinity terms conflict"], "NodeAffinity")
               for s in statuses(result, state).values())
    assert result.fit_error() == "0/4 nodes are available: pod affinity terms conflict."


def test_names_outside_the_cluster_stay_in_the_pre_filter_set():
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n404"]}]},
             {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]
    result, _ = run(LABELED, pod(affinity=affinity(terms)))
    assert result.pre_filter_node_names == ["n2", "n404"] and result.feasible.tolist() == [1]


def test_added_affinity_enforced_first():
    added = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]}}
    result, state = run(LABELED, pod(node_selector={"zone": "a"}), added=added)
    got = statuses(result, state)
    assert got["n2"] == ("UnschedulableAndUnresolvable", ["node(s) didn't match scheduler-enforced node affinity"],
                         "NodeAffinity")
    assert got["n3"] == ("UnschedulableAndUnresolvable", [POD_SELECTOR], "NodeAffinity")
    assert result.feasible.tolist() == [0] and result.skipped_filter_plugins == []


def test_invalid_added_affinity_refused_by_the_constructor():
    added = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["ssd"]}]}]}}
    with pytest.raises(ConfigError) as err:
        NodeAffinity.from_args(NodeAffinityArgs(added))
    assert err.value.errors == [
        'initializing plugin "NodeAffinity": addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.'
        'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: ["ssd"]: '
        "values set must be empty for exists and does not exist"]


def test_preferred_scores_added_and_pod_terms():
    added = {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}
    prefs = [{"weight": 10, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In",
                                                            "values": ["n1"]}]}},
             {"weight": 0, "preference": {"matchExpressions": [{"key": "bad key!", "operator": "Exists"}]}},
             {"weight": 7, "preference": {}}]
    result, _ = run(LABELED, pod(affinity=affinity(preferred=prefs)), scorers=("NodeAffinity",), added=added)
    assert result.raw_scores["NodeAffinity"].tolist() == [15, 0, 5, 0]
    assert result.scores["NodeAffinity"].tolist() == [100, 0, 33, 0]


def test_pre_score_skip_only_when_nothing_is_preferred():
    result, _ = run(LABELED, pod(), scorers=("NodeAffinity",))
    assert result.skipped_score_plugins == ["NodeAffinity"]
    result, _ = run(LABELED, pod(affinity=affinity(preferred=[])), scorers=("NodeAffinity",))
    assert result.skipped_score_plugins == [] and result.scores["NodeAffinity"].tolist() == [0, 0, 0, 0]


def test_pre_score_parse_error_fails_the_cycle():
    prefs = [{"weight": 3, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}},
             {"weight": 1, "preference": {"matchExpressions": [{"key": "gpu-count", "operator": "Gt",
                                                                "values": ["-1"]}]}}]
    with pytest.raises(SchedulingCycleError) as err:
        run(LABELED, pod(affinity=affinity(preferred=prefs)))
    assert str(err.value) == ('running PreScore plugin "NodeAffinity": [1].matchExpressions[0].values[0][gpu-count]: '
                              f'Invalid value: "-1": {LABEL_VALUE_ERROR}')


def test_negative_preferred_weight_out_of_range():
    prefs = [{"weight": -19, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]
    with pytest.raises(SchedulingCycleError) as err:
        run(LABELED, pod(affinity=affinity(preferred=prefs)))
    assert str(err.value) == ('applying score defaultWeights on Score plugins: plugin "NodeAffinity" returns an '
                              "invalid score -19, it should in the range of [0, 100] after normalizing")


# --------------------------------------------------------------------------- property: vectorised == per node

INT64 = re.compile(r"^[+-]?[0-9]+$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
KEYS = ["zone", "gpu"]
VALUES = ["", "a", "08", "8", "9", "-1", "1.5", "99999999999999999999"]


def _to_int(s: str) -> int | None:
    return int(s) if INT64.match(s) and -(2**63) <= int(s) < 2**63 else None


def _requirement_ok(req: dict) -> bool:
    op, vals = req["operator"], req.get("values") or []
    if not all(LABEL_VALUE.match(v) and len(v) <= 63 for v in vals):
        return False
    if op in ("In", "NotIn"):
        return bool(vals)
    if op in ("Exists", "DoesNotExist"):
        return not vals
    if op in ("Gt", "Lt"):
        return len(vals) == 1 and _to_int(vals[0]) is not None
    return False


def _requirement_matches(req: dict, labels: dict) -> bool:
    op, vals, key = req["operator"], req.get("values") or [], req["key"]
    if op == "In":
        return key in labels and labels[key] in vals
    if op == "NotIn":
        return key not in labels or labels[key] not in vals
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    have = _to_int(labels[key]) if key in labels else None
    if have is None:
        return False
    return have > int(vals[0]) if op == "Gt" else have < int(vals[0])


def _term_matches(term: dict, n: Node) -> bool:
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not all(_requirement_ok(r) for r in exprs):
        return False
    if not all(f["operator"] in ("In", "NotIn") and len(f.get("values") or []) == 1 for f in fields):
        return False
    got_fields = [(n.name if f["key"] == "metadata.name" else "") == f["values"][0] for f in fields]
    return (all(_requirement_matches(r, n.labels) for r in exprs)
            and all(g if f["operator"] == "In" else not g for f, g in zip(fields, got_fields, strict=True)))


requirements = st.fixed_dictionaries({
    "key": st.sampled_from(KEYS),
    "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bad"]),
    "values": st.lists(st.sampled_from(VALUES), max_size=2),
})
field_reqs = st.fixed_dictionaries({
    "key": st.sampled_from(["metadata.name", "metadata.namespace"]),
    "operator": st.sampled_from(["In", "NotIn", "Exists"]),
    "values": st.lists(st.sampled_from(["n0", "n1", "n2", ""]), max_size=2),
})
terms = st.fixed_dictionaries({}, optional={"matchExpressions": st.lists(requirements, max_size=3),
                                            "matchFields": st.lists(field_reqs, max_size=2)})
label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(label_sets, min_size=1, max_size=6), st.lists(terms, max_size=3))
def test_vectorised_selector_matches_per_node_rules(labels, selector_terms):
    nodes = [node(f"n{i}", lab) for i, lab in enumerate(labels)]
    state = compile_state(nodes)
    got = NodeSelector.parse({"nodeSelectorTerms": selector_terms}).mask(node_labels(state))
    kept = [t for t in selector_terms if t.get("matchExpressions") or t.get("matchFields")]
    want = [any(_term_matches(t, n) for t in kept) for n in nodes]
    assert got.tolist() == want


TAINT_KEYS = ["dedicated", "gpu", "node.kubernetes.io/unschedulable"]
EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule"]
taints = st.builds(Taint, st.sampled_from(TAINT_KEYS), st.sampled_from(["", "a"]), st.sampled_from(EFFECTS))
tolerations = st.builds(Toleration, st.sampled_from(["", *TAINT_KEYS]), st.sampled_from(["", "Equal", "Exists", "x"]),
                        st.sampled_from(["", "a"]), st.sampled_from(["", *EFFECTS]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(taints, max_size=4), st.booleans()), min_size=1, max_size=5),
       st.lists(tolerations, max_size=3))
def test_vectorised_taints_match_per_node_rules(node_specs, tols):
    nodes = [node(f"n{i}", taints=t, unschedulable=u) for i, (t, u) in enumerate(node_specs)]
    result, state = run(nodes, pod(tolerations=tuple(tols)), scorers=("TaintToleration",))
    prefer = [t for t in tols if t.effect in ("", "PreferNoSchedule")]
    raw = []

    def ok(taint: Taint, ts=tols) -> bool:
        return any(tolerates(t, taint) for t in ts)

    for n in nodes:
        hard = [t for t in n.taints if t.effect in ("NoSchedule", "NoExecute") and not ok(t)]
        if n.unschedulable and not ok(UNSCHEDULABLE):
            want = ("UnschedulableAndUnresolvable", ["node(s) were unschedulable"], "NodeUnschedulable")
        elif hard:
            want = ("UnschedulableAndUnresolvable", [f"node(s) had untolerated taint {{{hard[0].key}: {hard[0].value}}}"],
                    "TaintToleration")
        else:
            want = ("Success", [], None)
            raw.append(sum(1 for t in n.taints if t.effect == "PreferNoSchedule" and not ok(t, prefer)))
        assert statuses(result, state)[n.name] == want
    if raw:
        assert result.raw_scores["TaintToleration"].tolist() == raw
        top = max(raw)
        assert result.scores["TaintToleration"].tolist() == [100 - (100 * r // top if top else 0) for r in raw]


def test_image_locality_scores_by_image_spread():
    """`imagelocality/image_locality.go`: per image of the pod found on the node, size × (nodes holding it /
    all nodes), summed, clamped to [23 MiB, 1000 MiB × containers], scaled to 0..100 (integer division).
    A 500 MiB image on one node of two: 250 MiB there → 100 × (250 − 23) / (1000 − 23) = 22700 / 977 = 23;
    the other node holds nothing: 0 (below the threshold). A pod whose images no node holds scores 0 on both."""
    mib = 1 << 20
    nodes = [Node("a", {"cpu": 10**9}, images=(ContainerImage(("img:1",), 500 * mib),)), Node("b", {"cpu": 10**9})]
    state = compile_state(nodes)
    every = np.arange(2)

    def scores(image: str) -> list[int]:
        pod = Pod("p", containers=(Container("c", {}, image=image),))
        return ImageLocality().score(state, CycleContext(pod, None, None), every).tolist()

    assert scores("img:1") == [23, 0]
    assert scores("img") == [0, 0]  # normalized to img:latest, which no node holds
    assert scores("other:2") == [0, 0]
