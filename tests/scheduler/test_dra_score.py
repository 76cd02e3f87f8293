"""DynamicResources' Score + NormalizeScore (kube-scheduler v1.35+, kubernetes#134711), hand-derived.

Each node publishes GPUs of one or more kinds, one driver (and device class) per kind: big, medium, small.
A claim asks `firstAvailable: [big, medium, small]`; the allocator takes the first subrequest the node can
satisfy, and Score adds `FirstAvailableDeviceRequestMaxSize - i` = 8 - i for the subrequest at index i
that was allocated: big 8, medium 7, small 6. NormalizeScore is `DefaultNormalizeScore(100, false)`:
`score * 100 // max` over the feasible nodes. Weight 2 in the default profile.
"""

from __future__ import annotations

import json

import pytest

from kubefit.errors import ConfigError
from kubefit.k8s.version import for_minor
from kubefit.manifests.documents import Document, parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.config import load_configuration
from kubefit.scheduler.framework import schedule_one
from kubefit.scheduler.plugins.base import SchedulingCycleError
from kubefit.scheduler.scenario import prepare
from tests_support import run_json

V1 = "resource.k8s.io/v1"
KINDS = ("big", "medium", "small")


def device_class(kind: str) -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": kind},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{kind}.example.com"'}}]}}


FIRST_AVAILABLE = {"requests": [{"name": "gpu", "firstAvailable": [
    {"name": kind, "deviceClassName": kind} for kind in KINDS]}]}
TEMPLATE = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "any-gpu"},
            "spec": {"spec": {"devices": FIRST_AVAILABLE}}}
EXACT_TEMPLATE = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "one-small"},
                  "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "small"}}]}}}}


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def devices(node_name: str, kind: str, count: int = 1) -> dict:
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{kind}"},
            "spec": {"driver": f"{kind}.example.com", "nodeName": node_name,
                     "pool": {"name": node_name, "resourceSliceCount": 1},
                     "devices": [{"name": f"{kind}-{i}"} for i in range(count)]}}


def pod(name: str, claims: dict[str, dict]) -> dict:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"},
                                                       "claims": [{"name": n} for n in claims]}}],
            "resourceClaims": [{"name": n, **ref} for n, ref in claims.items()]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec}


def allocated_claim(name: str, request: str, driver: str, pool: str, device: str) -> dict:
    """A claim allocated before (no node selector: usable on every node) with one result for `request`."""
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "uid": f"uid-{name}"},
            "spec": {"devices": FIRST_AVAILABLE},
            "status": {"allocation": {"devices": {"results": [
                {"request": request, "driver": driver, "pool": pool, "device": device}]}}}}


CLASSES = [device_class(kind) for kind in KINDS]
ANY_GPU = {"gpu": {"resourceClaimTemplateName": "any-gpu"}}


def write(tmp_path, docs: list[dict]) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    return str(path)


def three_kinds(tmp_path) -> str:
    """n1 has a big GPU, n2 a medium one, n3 a small one, n4 none (DynamicResources refuses it)."""
    return write(tmp_path, [*CLASSES, TEMPLATE, node("n1"), node("n2"), node("n3"), node("n4"),
                            devices("n1", "big"), devices("n2", "medium"), devices("n3", "small"),
                            pod("p", ANY_GPU)])


def test_each_node_scores_the_rank_of_the_subrequest_it_can_satisfy(tmp_path, capsys):
    """Raw 8 - i: n1 8 (big, index 0), n2 7 (medium), n3 6 (small); normalized against the highest (8):
    100, 87 (700 // 8), 75 (600 // 8). The other plugins see three empty equal nodes and score them alike,
    so n1 alone is best, by 2 x (100 - 87) = 26 over n2."""
    rc, out, err = run_json(capsys, "score", "-f", three_kinds(tmp_path), "--detail", "--kube-version", "1.36")
    assert rc == 0, err
    assert out["feasible"] == ["n1", "n2", "n3"]
    assert out["scoreRaw"]["DynamicResources"] == {"n1": 8, "n2": 7, "n3": 6}
    assert out["score"]["DynamicResources"] == {"n1": 100, "n2": 87, "n3": 75}
    assert out["total"]["n1"] - out["total"]["n2"] == 2 * (100 - 87)
    assert out["total"]["n2"] - out["total"]["n3"] == 2 * (87 - 75)
    assert out["best"] == ["n1"]
    assert "DynamicResources" not in (out.get("skippedScorePlugins") or [])


def test_v1_35_scores_alike(tmp_path, capsys):
    """Claims that all need allocation: v1.35's claim-indexed results are the same results."""
    rc, out, err = run_json(capsys, "score", "-f", three_kinds(tmp_path), "--detail", "--kube-version", "1.35")
    assert rc == 0, err
    assert out["scoreRaw"]["DynamicResources"] == {"n1": 8, "n2": 7, "n3": 6}


def test_v1_34_has_no_dynamic_resources_score(tmp_path, capsys):
    """v1.34's DynamicResources is no Score plugin: the nodes tie and the first is chosen by `best` order."""
    rc, out, err = run_json(capsys, "score", "-f", three_kinds(tmp_path), "--detail", "--kube-version", "1.34")
    assert rc == 0, err
    assert "DynamicResources" not in out["score"] and "DynamicResources" not in out["scoreRaw"]
    assert out["best"] == ["n1", "n2", "n3"]


def test_a_pod_without_claims_scores_zero(tmp_path, capsys):
    docs = [*CLASSES, node("n1"), node("n2"), devices("n1", "big"),
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
             "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}]
    rc, out, err = run_json(capsys, "score", "-f", write(tmp_path, docs), "--detail", "--kube-version", "1.36")
    assert rc == 0, err
    assert out["scoreRaw"]["DynamicResources"] == out["score"]["DynamicResources"] == {"n1": 0, "n2": 0}


def _framework_cycle(docs: list[dict], version, pod_name: str):
    scenario = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "s.json"):
        add_document(scenario, doc)
    prepared = prepare(scenario, version=version)
    target = next(p for p in scenario.pending_pods if p.name == pod_name)
    return prepared.state, schedule_one(prepared.framework(target), prepared.state, target)


def allocated_and_new() -> list[dict]:
    """`p` has an allocated claim `shared` (its result `gpu/medium`, index 1: 7) and a template claim asking for
    exactly one small GPU (no firstAvailable: 0), which makes Filter allocate and so fill `nodeAllocations`.
    n1 and n2 each have a small GPU; the medium one `shared` holds is on n1's pool but usable everywhere."""
    return [*CLASSES, EXACT_TEMPLATE, node("n1"), node("n2"), devices("n1", "small"), devices("n2", "small"),
            devices("n1", "medium"),
            allocated_claim("shared", "gpu/medium", "medium.example.com", "n1", "medium-0"),
            pod("p", {"shared": {"resourceClaimName": "shared"}, "new": {"resourceClaimTemplateName": "one-small"}})]


def test_v1_36_reads_an_allocated_claims_own_allocation():
    """v1.36 `computeScore`: the allocated claim counts from its status (7), the other from the node's
    results (an `exactly` request: 0); 7 on both nodes, 100 after normalizing."""
    state, result = _framework_cycle(allocated_and_new(), for_minor(36), "p")
    feasible = [state.nodes[int(i)].name for i in result.feasible]
    assert feasible == ["n1", "n2"]
    assert result.raw_scores["DynamicResources"].tolist() == [7, 7]
    assert result.scores["DynamicResources"].tolist() == [100, 100]


def test_dra_prioritized_list_off_scores_zero():
    """v1.36's Score answers 0 while DRAPrioritizedList is off (`!pl.fts.EnableDRAPrioritizedList`)."""
    _state, result = _framework_cycle(allocated_and_new(), for_minor(36, {"DRAPrioritizedList": False}), "p")
    assert len(result.feasible) == 2
    assert result.raw_scores["DynamicResources"].tolist() == [0, 0]
    assert result.scores["DynamicResources"].tolist() == [0, 0]


def test_v1_35_fails_the_cycle_when_an_allocated_claim_sits_beside_one_to_allocate():
    """v1.35.4 read `allocationResults[i]` for the i-th of all the pod's claims: one result, two claims."""
    with pytest.raises(SchedulingCycleError, match=r'running Score plugins: plugin "DynamicResources" failed '
                                                    r"with: number of allocations 1 is smaller than number of claims"):
        _framework_cycle(allocated_and_new(), for_minor(35), "p")


def test_all_claims_allocated_scores_zero():
    """No claim to allocate: Filter keeps no `nodeAllocations` entry, so Score is 0 even for a claim
    allocated with its first choice."""
    docs = [*CLASSES, node("n1"), node("n2"), devices("n1", "big"),
            allocated_claim("shared", "gpu/big", "big.example.com", "n1", "big-0"),
            pod("p", {"shared": {"resourceClaimName": "shared"}})]
    _state, result = _framework_cycle(docs, for_minor(36), "p")
    assert len(result.feasible) == 2
    assert result.raw_scores["DynamicResources"].tolist() == [0, 0]


def test_simulate_rescores_after_each_bind(tmp_path, capsys):
    """n1 has a big and a small GPU, n2 a medium and a small one; four pods with the firstAvailable claim.

    p1: n1 8, n2 7: n1 (big). p2: n1 can now give only small (6), n2 medium (7): normalized 85 and 100, so
    n2 (had n1 kept its raw 8, its 2 x 13 = 26 points would outweigh what NodeResourcesFit and
    BalancedAllocation give n2 for being emptier, and p2 would go to n1). p3: both only small (6), the nodes
    equal: the first, n1. p4: n2's small GPU. p5: no GPU left."""
    docs = [*CLASSES, TEMPLATE, node("n1"), node("n2"), devices("n1", "big"), devices("n1", "small"),
            devices("n2", "medium"), devices("n2", "small"), *(pod(f"p{i}", ANY_GPU) for i in range(1, 6))]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--tie-break", "first",
                            "--kube-version", "1.36")
    assert rc == 0, err
    steps = out["steps"]
    assert [s["node"] for s in steps] == ["n1", "n2", "n1", "n2", None]
    assert [s.get("devices") for s in steps[:4]] == [
        {"gpu": ["big.example.com/n1/big-0"]}, {"gpu": ["medium.example.com/n2/medium-0"]},
        {"gpu": ["small.example.com/n1/small-0"]}, {"gpu": ["small.example.com/n2/small-0"]}]


def _profile_plugins(plugins: dict, version):
    body = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": plugins}]}
    return load_configuration(Document(body, "config.yaml", 1), version)


def test_dynamic_resources_is_a_score_plugin_without_pre_score():
    """v1.36: weight 2 in the default profile; `score.enabled` takes it, `preScore.enabled` is refused (no
    PreScore upstream); v1.34 refuses it under `score`."""
    config = _profile_plugins({}, for_minor(36))
    assert ("DynamicResources", 2) in [(s.name, s.weight) for s in config.profiles[0].score_plugins]
    only = {"score": {"enabled": [{"name": "DynamicResources", "weight": 5}]}}
    assert ("DynamicResources", 5) in [(s.name, s.weight) for s in
                                       _profile_plugins(only, for_minor(36)).profiles[0].score_plugins]
    for plugins, version, point in [({"preScore": {"enabled": [{"name": "DynamicResources"}]}}, for_minor(36),
                                     "PreScorePlugin"), (only, for_minor(34), "ScorePlugin")]:
        with pytest.raises(ConfigError) as info:
            _profile_plugins(plugins, version)
        assert info.value.errors[0].endswith(f'plugin "DynamicResources" does not extend {point} plugin')
