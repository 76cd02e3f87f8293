"""`kubefit schedule` runs Karmada's filters, scores and clusterAffinities failover (hand-checked cases).

The base scenario is examples/karmada/samples-nginx: Karmada's samples/nginx Deployment (2 replicas) and
PropagationPolicy (clusterAffinity member1+member2, static weights 1:1) over member1, member2 (tainted
maintenance=true:NoSchedule) and member3.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubefit.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "karmada" / "samples-nginx"
AFFINITY = "cluster(s) did not match the placement cluster affinity constraint"
TAINT = "cluster(s) had untolerated taint {maintenance=true:NoSchedule}"
DUPLICATED = {"replicaSchedulingType": "Duplicated"}


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLE / name).read_text()) if d]


@pytest.fixture
def scenario() -> dict[str, Any]:
    return {"clusters": _docs("clusters.yaml"), "deployment": _docs("deployment.yaml")[0],
            "policy": _docs("propagationpolicy.yaml")[0]}


def _schedule(tmp_path: Path, capsys, docs: list[dict[str, Any]], *args: str) -> tuple[int, dict, str]:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    rc = main(["schedule", "-f", str(path), "-o", "json", *args])
    out = capsys.readouterr()
    return rc, json.loads(out.out), out.err


def _all(s: dict[str, Any]) -> list[dict[str, Any]]:
    return [*s["clusters"], s["deployment"], s["policy"]]


def test_samples_nginx_example_as_shipped(capsys) -> None:
    files = [a for f in ("clusters.yaml", "deployment.yaml", "propagationpolicy.yaml") for a in ("-f", str(EXAMPLE / f))]
    assert main(["schedule", *files, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["replicas"] == {"member1": 2, "member2": 0, "member3": 0}
    assert data["filter"] == {"member2": {"plugin": "TaintToleration", "reason": TAINT},
                              "member3": {"plugin": "ClusterAffinity", "reason": AFFINITY}}
    assert [c["name"] for c in data["candidates"]] == ["member1"]


def test_without_the_taint_the_static_weights_split_one_one(tmp_path, capsys, scenario) -> None:
    del scenario["clusters"][1]["spec"]["taints"]
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 0
    assert data["replicas"] == {"member1": 1, "member2": 1, "member3": 0}
    assert list(data["filter"]) == ["member3"]


def test_a_tolerated_taint_passes(tmp_path, capsys, scenario) -> None:
    scenario["policy"]["spec"]["placement"]["clusterTolerations"] = [
        {"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 0 and data["replicas"] == {"member1": 1, "member2": 1, "member3": 0}


def test_no_cluster_left_is_karmadas_fit_error(tmp_path, capsys, scenario) -> None:
    scenario["clusters"][0]["spec"]["taints"] = copy.deepcopy(scenario["clusters"][1]["spec"]["taints"])
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 1
    assert data["error"] == f"0/3 clusters are available: 1 {AFFINITY}, 2 {TAINT}."
    assert data["clusters"] is None and data["replicas"] == {"member1": 0, "member2": 0, "member3": 0}


def test_every_rejecting_filter_is_listed(tmp_path, capsys, scenario) -> None:
    scenario["clusters"][2]["spec"]["taints"] = copy.deepcopy(scenario["clusters"][1]["spec"]["taints"])
    _, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert data["filter"]["member3"] == {"plugin": "TaintToleration", "reason": TAINT,
                                         "alsoRejectedBy": ["ClusterAffinity"]}


def test_cluster_affinities_are_failover_groups(tmp_path, capsys, scenario) -> None:
    placement = scenario["policy"]["spec"]["placement"]
    del placement["clusterAffinity"]
    placement["clusterAffinities"] = [{"affinityName": "primary", "clusterNames": ["member2"]},
                                      {"affinityName": "backup", "clusterNames": ["member1", "member3"]}]
    placement["replicaScheduling"] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 0
    assert data["affinityName"] == "backup"
    assert data["affinityAttempts"] == [
        {"affinityName": "primary", "error": f"0/3 clusters are available: 1 {TAINT}, 2 {AFFINITY}."},
        {"affinityName": "backup", "error": None}]
    # Aggregated over member1 and member3 (100 free pods each): the first candidate takes both replicas
    assert sum(data["replicas"].values()) == 2 and data["replicas"]["member2"] == 0


def test_all_affinity_terms_failing_report_the_first_error(tmp_path, capsys, scenario) -> None:
    placement = scenario["policy"]["spec"]["placement"]
    del placement["clusterAffinity"]
    placement["clusterAffinities"] = [{"affinityName": "a", "clusterNames": ["member2"]},
                                      {"affinityName": "b", "clusterNames": ["nowhere"]}]
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 1 and data["affinityName"] is None
    assert data["error"] == data["affinityAttempts"][0]["error"] == f"0/3 clusters are available: 1 {TAINT}, 2 {AFFINITY}."
    # member2 fails TaintToleration before ClusterAffinity (registry order), so term b reads the same
    assert data["affinityAttempts"][1]["error"] == f"0/3 clusters are available: 1 {TAINT}, 2 {AFFINITY}."


def test_cluster_locality_prefers_the_previous_clusters(tmp_path, capsys, scenario) -> None:
    """A binding already on member3: ClusterLocality scores it 100, the others 0, so it leads the candidates."""
    del scenario["clusters"][1]["spec"]["taints"]
    binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
               "metadata": {"name": "nginx-deployment", "namespace": "default"},
               "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
                        "replicas": 2, "clusters": [{"name": "member3", "replicas": 2}],
                        "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided",
                                                            "replicaDivisionPreference": "Aggregated"}}}}
    rc, data, _ = _schedule(tmp_path, capsys, [*scenario["clusters"], binding])
    assert rc == 0
    assert data["scores"] == {"member1": 0, "member2": 0, "member3": 100}
    assert data["candidates"][0]["name"] == "member3"
    rc, given, _ = _schedule(tmp_path, capsys, [*scenario["clusters"], binding], "--score", "member1=7")
    assert given["scores"] == {"member1": 7, "member2": 0, "member3": 0}


def test_api_enablement(tmp_path, capsys, scenario) -> None:
    scenario["clusters"][0]["status"]["apiEnablements"] = [{"groupVersion": "v1", "resources": [{"kind": "Pod"}]}]
    del scenario["clusters"][1]["status"]["apiEnablements"]
    rc, data, err = _schedule(tmp_path, capsys, _all(scenario))
    assert data["filter"]["member1"] == {"plugin": "APIEnablement", "reason": "cluster(s) did not have the API resource"}
    assert "member2: no status.apiEnablements" in err  # not checked, said so


@pytest.mark.parametrize(("selector", "selects"), [
    ({"name": "nginx", "labelSelector": {"matchLabels": {"app": "other"}}}, True),  # name only, selector ignored
    ({"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["nginx"]}]}}, True),
    ({"labelSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["nginx"]}]}}, False),
    ({"name": "nginx", "namespace": "prod"}, False),
    ({}, True),  # neither name nor selector: every Deployment
])
def test_resource_selectors(tmp_path, capsys, scenario, selector, selects) -> None:
    scenario["policy"]["spec"]["resourceSelectors"] = [{"apiVersion": "apps/v1", "kind": "Deployment", **selector}]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(_all(scenario)))
    rc = main(["schedule", "-f", str(path), "-o", "json"])
    err = capsys.readouterr().err
    assert rc == (0 if selects else 2)
    assert ("no PropagationPolicy selects this workload" in err) is not selects


def test_the_higher_priority_policy_claims_the_workload(tmp_path, capsys, scenario) -> None:
    other = copy.deepcopy(scenario["policy"])
    other["metadata"]["name"] = "a-everything"  # alphabetically first, but matches all Deployments only
    other["spec"]["resourceSelectors"] = [{"apiVersion": "apps/v1", "kind": "Deployment"}]
    other["spec"]["placement"]["clusterAffinity"] = {"clusterNames": ["member3"]}
    rc, data, _ = _schedule(tmp_path, capsys, [*_all(scenario), other])
    assert rc == 0 and data["replicas"]["member1"] == 2  # the name match outranks match-all
    other["spec"]["priority"] = 5  # explicit priority first
    rc, data, _ = _schedule(tmp_path, capsys, [*_all(scenario), other])
    assert data["replicas"] == {"member1": 0, "member2": 0, "member3": 2}


def test_webhook_defaults_apply_to_a_policy(tmp_path, capsys, scenario) -> None:
    """Divided without a preference becomes Weighted (static weight 1 each, as no weightPreference);
    the default not-ready toleration (NoExecute) lets a cluster with that NoExecute taint pass, not a NoSchedule one."""
    placement = scenario["policy"]["spec"]["placement"]
    placement["replicaScheduling"] = {"replicaSchedulingType": "Divided"}
    scenario["clusters"][1]["spec"]["taints"] = [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 0 and data["replicas"] == {"member1": 1, "member2": 1, "member3": 0}
    scenario["clusters"][1]["spec"]["taints"] = [{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}]
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert data["filter"]["member2"]["reason"] == "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"
    assert data["replicas"] == {"member1": 2, "member2": 0, "member3": 0}


def test_a_spread_constraint_without_field_spreads_by_cluster(tmp_path, capsys, scenario) -> None:
    placement = scenario["policy"]["spec"]["placement"]
    del scenario["clusters"][1]["spec"]["taints"]
    placement["replicaScheduling"] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
    placement["spreadConstraints"] = [{"maxGroups": 1}]  # → spreadByField cluster, minGroups 1
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 0 and [c["name"] for c in data["candidates"]] == ["member1"]


def test_a_deleting_cluster_is_skipped_but_counted(tmp_path, capsys, scenario) -> None:
    """findClustersThatFit skips a cluster with a deletionTimestamp (no verdict); FitError still counts all 3."""
    scenario["clusters"][0]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    rc, data, _ = _schedule(tmp_path, capsys, _all(scenario))
    assert rc == 1 and "member1" not in data["filter"]
    assert data["error"] == f"0/3 clusters are available: 1 {AFFINITY}, 1 {TAINT}."  # sorted: "did" < "had"


def test_failover_starts_at_the_observed_affinity_term(tmp_path, capsys, scenario) -> None:
    """A binding whose status names term "second" starts there, even though "first" would schedule."""
    del scenario["clusters"][1]["spec"]["taints"]
    binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
               "metadata": {"name": "nginx-deployment", "namespace": "default"},
               "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}, "replicas": 2,
                        "placement": {"clusterAffinities": [{"affinityName": "first", "clusterNames": ["member1"]},
                                                            {"affinityName": "second", "clusterNames": ["member2"]}],
                                      "replicaScheduling": DUPLICATED}},
               "status": {"schedulerObservingAffinityName": "second"}}
    rc, data, _ = _schedule(tmp_path, capsys, [*scenario["clusters"], binding])
    assert rc == 0 and data["affinityName"] == "second"
    assert data["replicas"] == {"member1": 0, "member2": 2, "member3": 0}
    assert [a["affinityName"] for a in data["affinityAttempts"]] == ["second"]


@pytest.mark.parametrize(("where", "key", "value", "field"), [
    ("cluster", ("spec", "taints"), "x", "Cluster/member1: spec.taints"),
    ("cluster", ("status", "apiEnablements"), [{"groupVersion": "apps/v1", "resources": "x"}],
     "Cluster/member1: status.apiEnablements[0].resources"),
    ("placement", ("spreadConstraints",), [{"spreadByField": "cluster", "maxGroups": "a"}],
     "spec.placement.spreadConstraints[0].maxGroups"),
    ("placement", ("clusterAffinity",), {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "In",
                                                                                 "values": "x"}]}},
     "spec.placement.clusterAffinity.labelSelector.matchExpressions[0].values"),
])
def test_bad_filter_inputs_are_one_line_errors(tmp_path, capsys, scenario, where, key, value, field) -> None:
    target = scenario["clusters"][0] if where == "cluster" else scenario["policy"]["spec"]["placement"]
    for k in key[:-1]:
        target = target[k]
    target[key[-1]] = value
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(_all(scenario)))
    assert main(["schedule", "-f", str(path), "-o", "json"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {path}: ") and field in line
