"""The default profile's pod-interaction plugins through the CLI, on small hand-computed scenarios:
spread and anti-affinity verdicts with kube-scheduler's reasons, scheduling gates, host ports, the
warnings for what kubefit does not evaluate (stderr and `-o json`), and strict loading of the new kinds."""

from __future__ import annotations

import json

import yaml

from kubefit.cli import main

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def node(name: str, zone: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def pod(name: str, node_name: str = "", **spec) -> dict:
    body = {"containers": [{"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": "100m"}}}], **spec}
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                           "labels": {"app": "web"}}, "spec": body}


def run(tmp_path, capsys, docs: list[dict], *args: str) -> tuple[int, dict | None, str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    capsys.readouterr()
    rc = main([args[0], "-f", str(path), *args[1:]])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 and out.strip().startswith("{") else None), err


CLUSTER = [node("a1", "a"), node("a2", "a"), node("b1", "b"), pod("w1", "a1"), pod("w2", "a2")]
SPREAD = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}}]


def test_zone_spread_rejects_the_crowded_zone(tmp_path, capsys):
    """Zone a holds 2 web pods, zone b none: 2 + 1 - 0 > 1 on a1 and a2, 0 + 1 - 0 on b1."""
    rc, out, err = run(tmp_path, capsys, [*CLUSTER, pod("new", topologySpreadConstraints=SPREAD)],
                       "score", "-o", "json", "--detail")
    assert rc == 0, err
    assert out["feasible"] == ["b1"]
    reason = "node(s) didn't match pod topology spread constraints"
    assert out["filter"]["a1"] == {"code": "Unschedulable", "reasons": [reason], "plugin": "PodTopologySpread"}


def test_required_anti_affinity_by_hostname(tmp_path, capsys):
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}
    rc, out, err = run(tmp_path, capsys, [*CLUSTER, pod("new", affinity=anti)], "score", "-o", "json")
    assert rc == 0, err
    assert out["feasible"] == ["b1"]
    assert out["filter"]["a2"]["reasons"] == ["node(s) didn't match pod anti-affinity rules"]


def test_host_port_taken(tmp_path, capsys):
    ported = {"containers": [{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    docs = [node("a1", "a"), node("b1", "b"), pod("old", "a1", **ported), pod("new", **ported)]
    rc, out, err = run(tmp_path, capsys, docs, "score", "-o", "json")
    assert rc == 0, err
    assert out["feasible"] == ["b1"]
    assert out["filter"]["a1"]["reasons"] == ["node(s) didn't have free ports for the requested pod ports"]


def test_gated_pod_gets_no_cycle(tmp_path, capsys):
    docs = [*CLUSTER, pod("gated", schedulingGates=[{"name": "example.com/a"}, {"name": "example.com/b"}])]
    rc, out, err = run(tmp_path, capsys, docs, "score", "-o", "json")
    assert rc == 0, err
    assert out["preEnqueue"] == {"code": "UnschedulableAndUnresolvable", "plugin": "SchedulingGates",
                                 "reasons": ["waiting for scheduling gates: [example.com/a example.com/b]"]}
    rc, out, err = run(tmp_path, capsys, docs, "simulate", "-o", "json")
    assert out["steps"][0]["preEnqueue"] == "SchedulingGates" and out["unschedulable"] == 1
    assert "feasible" not in out["steps"][0]  # no cycle, so no feasible nodes found (a cycle says 0)


def test_unevaluated_fields_are_warned_on_stderr_and_in_json(tmp_path, capsys):
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST, "matchLabelKeys": ["x"]}]}}
    docs = [*CLUSTER, pod("new", affinity=anti, resourceClaims=[{"name": "gpu", "resourceClaimName": "g"}])]
    rc, out, err = run(tmp_path, capsys, docs, "score", "-o", "json")
    assert rc == 0
    # DynamicResources' PreEnqueue: the claim the pod names does not exist (the DRA manager's assume cache)
    assert out["preEnqueue"] == {"code": "UnschedulableAndUnresolvable", "plugin": "DynamicResources",
                                 "reasons": ['could not find ResourceClaim "default/g"']}
    fragment = "pod (anti-)affinity matchLabelKeys"
    assert err.count(fragment) == 1 and sum(fragment in w for w in out["warnings"]) == 1
    assert "not simulated" not in err


def test_service_and_replica_set_are_loaded_strictly(tmp_path, capsys):
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"selectr": {"app": "web"}}}
    rc, _, err = run(tmp_path, capsys, [*CLUSTER, svc, pod("new")], "score")
    assert rc == 2 and "Service/web" in err and "spec.selectr" in err and "Traceback" not in err
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"},
          "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}}}
    rc, _, err = run(tmp_path, capsys, [*CLUSTER, rs, pod("new")], "score")
    assert rc == 2 and "ReplicaSet/web" in err and "spec.selector.matchExpressions" in err


def test_system_default_spread_through_a_service(tmp_path, capsys):
    """A Service selecting the pod gives it the System default constraints: zone a (2 pods) scores lower."""
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}}
    rc, out, err = run(tmp_path, capsys, [*CLUSTER, svc, pod("new")], "score", "-o", "json", "--detail")
    assert rc == 0, err
    spread = out["score"]["PodTopologySpread"]
    # raw: hostname (maxSkew 3, 3 nodes) 1·ln 5 + 2 = 3.61, zone (maxSkew 5, 2 zones) 2·ln 4 + 4 = 6.77 on
    # a1/a2: round(10.38) = 10; b1: 0 + 2 + 0 + 4 = 6; normalized 100·(10 + 6 − s)/10: 60 and 100
    assert out["scoreRaw"]["PodTopologySpread"] == {"a1": 10, "a2": 10, "b1": 6}
    assert spread == {"a1": 60, "a2": 60, "b1": 100}
