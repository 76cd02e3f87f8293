"""PodDisruptionBudgets written without a status get the one the disruption controller computes
(`pkg/controller/disruption/disruption.go`), and preemption and consolidate read it (issue #38, defect 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import kubefit
from kubefit.api.cluster import ObjectMeta
from kubefit.api.core import OwnerReference, Pod
from kubefit.api.storage import PodDisruptionBudget
from kubefit.errors import InputError
from kubefit.manifests.disruption import budget_status, current_budgets, scaled_value
from tests_support import SHARED_DIR

QUIET = {"warn": lambda _m: None}


def _node(name: str, cpu: str = "8") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def _rs(name: str, replicas: int, cpu: str = "1") -> dict:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "i",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def _pod(name: str, app: str, node: str, cpu: str = "1", start: str | None = None, **meta) -> dict:
    status = {"phase": "Running", **({"startTime": start} if start else {})}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": app}, **meta,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app,
                                              "uid": f"uid-{app}", "controller": True}]},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i",
                                                       "resources": {"requests": {"cpu": cpu}}}]},
            "status": status}


def _pdb(name: str, app: str, **spec) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {**spec, "selector": {"matchLabels": {"app": app}}}}


def _file(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _budget(**kw) -> PodDisruptionBudget:
    return PodDisruptionBudget(ObjectMeta("b", "default"), selector={"matchLabels": {"app": "w"}}, computed=True,
                               scales={("ReplicaSet", "w"): (("ReplicaSet", "w"), 3)}, **kw)


def _running(name: str, ready: bool = True, node: str = "n1") -> Pod:
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    from kubefit.api.core import PodCondition
    return Pod(name, node_name=node, labels={"app": "w"}, phase="Running", conditions=(PodCondition("Ready"),),
               owner_references=(OwnerReference("apps/v1", "ReplicaSet", "w", controller=True),),
               raw={"status": status})


def test_percentages_round_up_as_get_scaled_value_from_int_or_percent_does():
    """`intstr.GetScaledValueFromIntOrPercent(v, total, true)`: ceil(v * total / 100)."""
    assert [scaled_value("50%", 3), scaled_value("34%", 3), scaled_value("1%", 3), scaled_value(2, 3)] == [2, 2, 1, 2]


@pytest.mark.parametrize(("spec", "want"), [
    # getExpectedPodCount, minAvailable int: desired = 2, expected = len(pods) = 3; allowed = 3 - 2
    ({"min_available": 2}, (3, 2, 3, 1)),
    # minAvailable percentage of the controllers' scale (3), rounded up: ceil(1.5) = 2
    ({"min_available": "50%"}, (3, 2, 3, 1)),
    # maxUnavailable 50% of 3 rounded up = 2: desired = 3 - 2 = 1; allowed 2
    ({"max_unavailable": "50%"}, (3, 1, 3, 2)),
    # maxUnavailable 0: desired 3: allowed 0
    ({"max_unavailable": 0}, (3, 3, 3, 0)),
    # neither: expected and desired 0, and updatePdbStatus allows nothing while expectedPods is 0
    ({}, (3, 0, 0, 0)),
])
def test_status_as_try_sync_computes_it(spec, want):
    """`trySync` → `getExpectedPodCount`, `countHealthyPods`, `updatePdbStatus` over three ready pods of a
    ReplicaSet of 3 replicas."""
    pods = [_running(f"w-{i}") for i in range(3)]
    s = budget_status(_budget(**spec), pods)
    assert (s.current_healthy, s.desired_healthy, s.expected_pods, s.disruptions_allowed) == want


def test_unready_and_pending_pods_are_not_healthy():
    """`countHealthyPods` counts `IsPodReady` pods: a Ready=False pod and a pod not yet bound are not; the
    percentage still reads the controller's scale (3): desired 2, current 1 → allowed 0."""
    pods = [_running("w-0"), _running("w-1", ready=False)]
    s = budget_status(_budget(min_available="50%"), pods, pending=[_running("w-2", node="")])
    assert (s.current_healthy, s.desired_healthy, s.expected_pods, s.disruptions_allowed) == (1, 2, 3, 0)


def test_the_pods_a_simulation_placed_are_healthy():
    """A pod the simulation bound has no spec.nodeName of its own (the state holds it on its node): it is bound,
    so `IsPodReady` as any running pod; minAvailable 1 of 3 such pods allows 2 (it allowed 0: issue #46, 6)."""
    placed = [_running(f"w-{i}", node="") for i in range(3)]
    s = budget_status(_budget(min_available=1), placed)
    assert (s.current_healthy, s.desired_healthy, s.expected_pods, s.disruptions_allowed) == (3, 1, 3, 2)


GATEKEEPER = SHARED_DIR / "real-manifests/realworld3/open-policy-agent-gatekeeper"


def test_consolidate_reads_an_installs_budget_after_its_pods_are_placed(tmp_path):
    """open-policy-agent/gatekeeper deploy/gatekeeper.yaml: the controller-manager Deployment (3 replicas, preferred
    anti-affinity by hostname) and its PodDisruptionBudget `minAvailable: 1`, no status. Its pods are pending in the
    manifest; consolidate places them first (today's cluster), and the disruption controller's status is the one of
    that cluster: 3 healthy, desired 1, disruptionsAllowed 2. Each node holding one replica can then be drained
    (before: "allows 0 disruption(s)", every node blocked). n4 runs the audit pod (an emptyDir: local storage)."""
    nodes = [_node(f"n{i}", cpu="4") for i in range(1, 5)]
    for n in nodes:
        n["metadata"]["labels"].update({"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"})
    result = kubefit.consolidate([_file(tmp_path, nodes), str(GATEKEEPER / "deploy/gatekeeper.yaml")], **QUIET)
    assert not any("allows 0 disruption(s)" in why for why in result.blocked.values()), result.blocked
    assert len(result.removable) == 3


def test_a_controller_without_scale_fails_safe():
    """`getExpectedScale`: a DaemonSet has no scale subresource, the sync errs and `failSafe` writes 0."""
    pdb = PodDisruptionBudget(ObjectMeta("b", "default"), selector={"matchLabels": {"app": "w"}}, computed=True,
                              max_unavailable=1, scales={("DaemonSet", "w"): (("DaemonSet", "w"), None)})
    pod = Pod("w-0", node_name="n1", labels={"app": "w"}, created_by="DaemonSet/w")
    s = budget_status(pdb, [pod])
    assert s.disruptions_allowed == 0 and s.error == "daemonsets.apps does not implement the scale subresource"


def test_a_status_given_is_kept():
    """A budget written with a status (a live snapshot) keeps it."""
    given = PodDisruptionBudget(ObjectMeta("b", "default"), selector={"matchLabels": {"app": "w"}},
                                disruptions_allowed=0, min_available=0)
    assert current_budgets([given], [_running("w-0")])[0].disruptions_allowed == 0


def _consolidate_docs() -> list[dict]:
    return [_node("n1"), _node("n2"), _node("n3"), _node("n4"), _rs("web", 3),
            _pdb("web", "web", maxUnavailable=1),
            _pod("web-a", "web", "n1"), _pod("web-b", "web", "n1"), _pod("web-c", "web", "n2"),
            {**_pod("solo", "solo", "n4", cpu="7"), "metadata": {"name": "solo", "labels": {"app": "solo"}}}]


def test_consolidate_reads_the_computed_budget(tmp_path):
    """The budget has no status: the disruption controller gives it expectedPods 3 (the ReplicaSet's scale),
    desiredHealthy 3 - 1 = 2, currentHealthy 3, disruptionsAllowed 1. So n2's single web pod may be evicted
    (cluster-autoscaler `rules/pdb` / `CanRemovePods`), while n1's two may not (NotEnoughPdb, judged on today's
    cluster). n3 is empty; n4 runs a pod without a controller (NotReplicated)."""
    out = kubefit.consolidate([_file(tmp_path, _consolidate_docs())], **QUIET).to_dict()
    assert out["removable"] == ["n3", "n2"]
    assert "PodDisruptionBudget default/web allows 1 disruption(s), 2 of its pods would be evicted" \
        in out["blocked"]["n1"]


def test_consolidate_keeps_a_live_status(tmp_path):
    """The same budget with the status a live cluster wrote (disruptionsAllowed 0) is read as written: n2 stays."""
    docs = _consolidate_docs()
    docs[5] = {**docs[5], "status": {"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2,
                                     "expectedPods": 3}}
    out = kubefit.consolidate([_file(tmp_path, docs)], **QUIET).to_dict()
    assert out["removable"] == ["n3"]
    assert "allows 0 disruption(s)" in out["blocked"]["n2"]


def test_preemption_prefers_the_node_whose_budget_allows_the_eviction(tmp_path):
    """Two full 1-cpu nodes, each running one priority-0 pod of a one-replica ReplicaSet. `xa` on node a is
    covered by minAvailable 1 (desired 1, current 1: disruptionsAllowed 0), `yb` on node b by maxUnavailable 1
    (expected 1, desired 0, current 1: disruptionsAllowed 1). `pickOneNodeForPreemption` takes the node with
    the fewest PDB violations first (`filterPodsWithPDBViolation`): node b. (Were both budgets read as
    allowing 0, both nodes would violate one and the latest-started victim, xa, would decide: node a.)"""
    docs = [_node("a", "1"), _node("b", "1"), _rs("xa", 1), _rs("yb", 1),
            _pdb("xa", "xa", minAvailable=1), _pdb("yb", "yb", maxUnavailable=1),
            _pod("xa-1", "xa", "a", start="2024-01-02T00:00:00Z"), _pod("yb-1", "yb", "b", start="2024-01-01T00:00:00Z"),
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent"},
             "spec": {"priority": 100, "containers": [{"name": "c", "image": "i",
                                                       "resources": {"requests": {"cpu": "1"}}}]}}]
    out = kubefit.simulate([_file(tmp_path, docs)], **QUIET).to_dict()
    step = next(s for s in out["steps"] if s["pod"] == "urgent" and s.get("victims"))
    assert step["victims"] == ["default/yb-1"] and step["nominatedNode"] == "b"


@pytest.mark.parametrize(("spec", "message"), [
    ({"minAvailable": 1, "maxUnavailable": 1}, "spec: Invalid value: minAvailable and maxUnavailable cannot be both set"),
    ({"minAvailable": -1}, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    ({"maxUnavailable": "101%"}, 'spec.maxUnavailable: Invalid value: "101%": must not be greater than 100%'),
    ({"maxUnavailable": "half"}, "a valid percent string must be a numeric string followed by an ending '%'"),
])
def test_a_budget_the_api_server_refuses(tmp_path, spec, message):
    """`ValidatePodDisruptionBudgetSpec` (pkg/apis/policy/validation): refused with the file, object and field."""
    with pytest.raises(InputError) as err:
        kubefit.simulate([_file(tmp_path, [_node("a"), _pdb("bad", "x", **spec)])], **QUIET)
    assert message in str(err.value) and "PodDisruptionBudget/bad" in str(err.value)


def _pod_of(name: str, namespace: str, labels: dict, owner: str | None = "w", node: str = "n1") -> Pod:
    refs = () if owner is None else (OwnerReference("apps/v1", "ReplicaSet", owner, controller=True),)
    return Pod(name, namespace=namespace, node_name=node, labels=labels, phase="Running", owner_references=refs)


def test_each_budget_reads_its_own_namespaces_pods_whatever_their_label_sets_order():
    """`getPodsForPdb`: the budget's namespace, its selector over each pod's labels. The pods of a namespace are
    grouped by label set (the selector matched once a set): equal sets written in another order, a superset, a
    pod of the same labels in another namespace, and the order of the pods kept (`getExpectedScale` names the
    first pod whose controller it does not hold).

    shop's budget `app=w`, minAvailable 2: w-0 {app: w, tier: web}, w-1 {tier: web, app: w} (the same set), w-2
    {app: w} match, x-0 {app: x} does not: 3 healthy, desired 2 → allowed 1. staging's `app=w` budget with
    maxUnavailable 1 matches s-0 {app: w} (ReplicaSet w, scale 3), then s-1 {app: w, tier: db} and s-2 {app: w}, both
    owned by ReplicaSets its table does not hold: the error names s-1, the first of them in the pods' order (not
    s-2, the first of s-0's label set), failSafe writes 0. Before grouping, the same: each
    budget filtered every pod (3 s of a 2,000-node consolidate)."""
    scales = {("ReplicaSet", "w"): (("ReplicaSet", "w"), 3)}
    shop = PodDisruptionBudget(ObjectMeta("b", "shop"), selector={"matchLabels": {"app": "w"}}, computed=True,
                               min_available=2, scales=scales)
    staging = PodDisruptionBudget(ObjectMeta("b", "staging"), selector={"matchLabels": {"app": "w"}}, computed=True,
                                  max_unavailable=1, scales=scales)
    pods = [_pod_of("w-0", "shop", {"app": "w", "tier": "web"}), _pod_of("s-0", "staging", {"app": "w"}),
            _pod_of("x-0", "shop", {"app": "x"}), _pod_of("w-1", "shop", {"tier": "web", "app": "w"}),
            _pod_of("s-1", "staging", {"app": "w", "tier": "db"}, owner="v"), _pod_of("w-2", "shop", {"app": "w"}),
            _pod_of("s-2", "staging", {"app": "w"}, owner="u")]
    got = current_budgets([shop, staging], pods)
    assert [b.disruptions_allowed for b in got] == [1, 0]
    assert budget_status(staging, pods).error == "found no controllers for pod 's-1'"
    assert (budget_status(shop, pods).current_healthy, budget_status(shop, pods).expected_pods) == (3, 3)


LABEL_SETS = [{}, {"app": "w"}, {"app": "w", "tier": "web"}, {"tier": "web", "app": "w"}, {"app": "x"},
              {"tier": "db"}]
SELECTORS = [{"matchLabels": {"app": "w"}}, {}, {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
             {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["w"]}]}]


def _naive_status(pdb: PodDisruptionBudget, pods: list[Pod], pending: list[Pod]) -> tuple:
    """The definition, pod by pod: the budget's namespace, its selector matched on every pod's labels."""
    from kubefit.k8s.labels import parse_selector
    from kubefit.manifests.disruption import _expected_scale, ready

    selector = parse_selector(pdb.selector)
    bound = [p for p in pods if p.namespace == pdb.meta.namespace and selector.matches(p.labels)]
    matched = bound + [p for p in pending if p.namespace == pdb.meta.namespace and selector.matches(p.labels)]
    expected, error = _expected_scale(pdb, matched) if pdb.max_unavailable is not None else (len(matched), None)
    desired = max(expected - scaled_value(pdb.max_unavailable, expected), 0) if pdb.max_unavailable is not None \
        else pdb.min_available
    if error is not None:
        return 0, 0, 0, 0, error
    current = sum(1 for p in bound if ready(p))
    allowed = current - desired
    return current, desired, expected, allowed if expected > 0 and allowed > 0 else 0, None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["shop", "staging"]), st.integers(0, len(LABEL_SETS) - 1),
                          st.sampled_from(["w", "v", None]), st.booleans()), max_size=14),
       st.lists(st.tuples(st.sampled_from(["shop", "staging"]), st.integers(0, len(SELECTORS) - 1),
                          st.one_of(st.integers(0, 3), st.none())), min_size=1, max_size=4))
def test_grouped_statuses_are_the_pod_by_pod_definition(pods, budgets):
    """Property: the statuses `current_budgets` computes (pods grouped by namespace and label set) are those of the
    definition pod by pod, in every namespace, for any mix of label sets, owners and pending pods."""
    scales = {("ReplicaSet", "w"): (("ReplicaSet", "w"), 3)}
    made = [_pod_of(f"p-{i}", ns, dict(LABEL_SETS[at]), owner, node="n1" if bound else "")
            for i, (ns, at, owner, bound) in enumerate(pods)]
    bound_pods = [p for p, spec in zip(made, pods, strict=True) if spec[3]]
    pending = [p for p, spec in zip(made, pods, strict=True) if not spec[3]]
    pdbs = [PodDisruptionBudget(ObjectMeta(f"b{j}", ns), selector=SELECTORS[s], computed=True, scales=scales,
                                **({"min_available": 1} if mu is None else {"max_unavailable": mu}))
            for j, (ns, s, mu) in enumerate(budgets)]
    got = current_budgets(pdbs, bound_pods, pending)
    assert [b.disruptions_allowed for b in got] == [_naive_status(b, bound_pods, pending)[3] for b in pdbs]
    for b in pdbs:
        s = budget_status(b, bound_pods, pending)
        assert (s.current_healthy, s.desired_healthy, s.expected_pods, s.disruptions_allowed, s.error) == \
            _naive_status(b, bound_pods, pending)
