"""DRA across pods: allocations carried from pod to pod, shared claims, rollback when pods leave.

Hand-computed scenarios on two nodes with two GPUs each (one pool per node, driver gpu.example.com),
under the default profile with `--tie-break first`; the reasoning is in each docstring.
"""

from __future__ import annotations

import json

from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.scenario import prepare
from tests_support import run_json

V1 = "resource.k8s.io/v1"
GPU_CLASS = {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
TEMPLATE = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
TEMPLATED = {"resourceClaimTemplateName": "one-gpu"}


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def gpus(name: str, count: int = 2) -> dict:
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": name, "pool": {"name": name, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}}


def pod(name: str, claim: dict, priority: int = 0, node_name: str = "") -> dict:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", **claim}], "priority": priority}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec}


def counts(usage: dict) -> dict:
    """A node's `devices` entry without its pools' device-by-device view (`test_dra_claims` checks that)."""
    return {k: v for k, v in usage.items() if k != "pools"}


def write(tmp_path, docs: list[dict]) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    return str(path)


def test_allocations_are_carried_from_pod_to_pod(tmp_path, capsys):
    """Five pods with a one-GPU template claim, four GPUs: LeastAllocated alternates n1, n2 (the emptier node
    wins; a tie goes to the first), each pod gets the next free GPU of its node; the fifth fits nowhere:
    DynamicResources refuses both nodes (UnschedulableAndUnresolvable, so preemption cannot help) and its
    PostFilter finds no allocated claim to give back ("still not schedulable")."""
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpus("n1"), gpus("n2"),
            *(pod(f"p{i}", TEMPLATED) for i in range(5))]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--tie-break", "first")
    assert rc == 0, err
    steps = out["steps"]
    assert [s["node"] for s in steps] == ["n1", "n2", "n1", "n2", None]
    assert [s.get("devices") for s in steps[:4]] == [
        {"gpu": ["gpu.example.com/n1/gpu-0"]}, {"gpu": ["gpu.example.com/n2/gpu-0"]},
        {"gpu": ["gpu.example.com/n1/gpu-1"]}, {"gpu": ["gpu.example.com/n2/gpu-1"]}]
    assert steps[4]["message"] == ("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
                                   "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert {n: counts(u) for n, u in out["devices"].items()} == {
        n: {"devices": 2, "allocated": [f"gpu.example.com/{n}/gpu-0", f"gpu.example.com/{n}/gpu-1"],
            "drivers": {"gpu.example.com": {"devices": 2, "allocated": 2}}} for n in ("n1", "n2")}
    rc, score, _ = run_json(capsys, "score", "-f", write(tmp_path, docs))
    assert score["deviceAllocations"] == {n: {"gpu": [f"gpu.example.com/{n}/gpu-0"]} for n in ("n1", "n2")}


def test_device_usage_is_counted_per_driver(tmp_path, capsys):
    """n1 publishes two GPUs (gpu.example.com) and three NICs (nic.example.com); n2 two GPUs. Two pods
    with a one-GPU claim: LeastAllocated puts the first on n1 (a tie of empty nodes goes to the first),
    the second on n2 (now emptier in cpu); n1 then holds 1 of its 2 GPUs and 0 of its 3 NICs, 5 devices
    in all: a total of "1/5" would hide that half the GPUs are taken."""
    nics = {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "n1-nics"},
            "spec": {"driver": "nic.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                     "devices": [{"name": f"nic-{i}"} for i in range(3)]}}
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpus("n1"), nics, gpus("n2"),
            pod("a", TEMPLATED), pod("b", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--tie-break", "first")
    assert rc == 0, err
    assert [s["node"] for s in out["steps"]] == ["n1", "n2"]
    assert counts(out["devices"]["n1"]) == {"devices": 5, "allocated": ["gpu.example.com/n1/gpu-0"],
                                    "drivers": {"gpu.example.com": {"devices": 2, "allocated": 1},
                                                "nic.example.com": {"devices": 3, "allocated": 0}}}
    assert out["devices"]["n2"]["drivers"] == {"gpu.example.com": {"devices": 2, "allocated": 1}}


def test_a_shared_claim_follows_its_first_allocation(tmp_path, capsys):
    """Two pods name one claim of one GPU. The first allocates it on n1 (a tie); the second finds it
    allocated with a node selector for n1: n2 is "resourceclaim not available on the node", so it joins
    the first on n1 although n2 is emptier, and takes no second GPU."""
    shared = {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    docs = [GPU_CLASS, shared, node("n1"), node("n2"), gpus("n1"), gpus("n2"),
            pod("a", {"resourceClaimName": "shared"}), pod("b", {"resourceClaimName": "shared"})]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--tie-break", "first")
    assert rc == 0, err
    assert [s["node"] for s in out["steps"]] == ["n1", "n1"]
    assert out["devices"]["n1"]["allocated"] == ["gpu.example.com/n1/gpu-0"]
    rc, score, _ = run_json(capsys, "score", "-f", write(tmp_path, docs), "--detail")
    assert score["feasible"] == ["n1", "n2"]  # before any bind, the claim is not allocated yet


def _engine(docs: list[dict]):
    scenario = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "s.json"):
        add_document(scenario, doc)
    prepared = prepare(scenario)
    return Engine(prepared.state, prepared.config, tie_break="first"), scenario


def test_evicting_a_pod_frees_its_devices_and_deletes_its_claims():
    """One node with one GPU: p0 takes it; p1 then fits nowhere; evicting p0 (the resourceclaim controller
    deletes the claim it had from the template) makes the GPU free, and p1's next cycle finds n1."""
    engine, scenario = _engine([GPU_CLASS, TEMPLATE, node("n1"), gpus("n1", 1), pod("p0", TEMPLATED),
                                pod("p1", TEMPLATED)])
    p0, p1 = scenario.pending_pods
    d0 = engine.cycle(p0)
    engine.bind(d0.node, d0.shape, p0)
    dra = engine.state.dra
    assert dra.devices_of(p0) == {"gpu": ["gpu.example.com/n1/gpu-0"]} and len(dra.in_use) == 1
    assert engine.cycle(p1).node is None
    engine.evict(d0.node, p0)
    assert dra.in_use == {} and dra.devices_of(p0) == {}
    assert not any(key[1].startswith("p0-gpu-") for key in dra.claims)
    assert engine.cycle(p1).node == 0


def test_a_copy_is_independent_and_a_frozen_copy_ignores_changes():
    """What capacity and plans rely on: changes on a copy stay there; preemption's dry run (a frozen copy)
    keeps the devices of the pods it removes in use, as kube-scheduler v1.34's DynamicResources does."""
    engine, scenario = _engine([GPU_CLASS, TEMPLATE, node("n1"), gpus("n1", 1), pod("p0", TEMPLATED)])
    p0 = scenario.pending_pods[0]
    d0 = engine.cycle(p0)
    engine.bind(d0.node, d0.shape, p0)
    copy, frozen = engine.state.copy(), engine.state.copy(frozen_dra=True)
    copy.unbind(0, p0)
    frozen.unbind(0, p0)
    assert copy.dra.in_use == {} and len(frozen.dra.in_use) == 1 and len(engine.state.dra.in_use) == 1


def test_running_pods_hold_their_allocated_claims(tmp_path, capsys):
    """A bound pod's claim allocated to n1/gpu-0 and reserved for it keeps that GPU in use: of n1's two GPUs
    one is left, so a pod asking two goes to n2."""
    held = {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "held", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                                "pool": "n1", "device": "gpu-0"}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
                       "reservedFor": [{"resource": "pods", "name": "running", "uid": "uid-running"}]}}
    two = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "two-gpus"},
           "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                                    "count": 2}}]}}}}
    docs = [GPU_CLASS, two, held, node("n1"), node("n2"), gpus("n1"), gpus("n2"),
            pod("running", {"resourceClaimName": "held"}, node_name="n1"),
            pod("big", {"resourceClaimTemplateName": "two-gpus"})]
    rc, out, err = run_json(capsys, "score", "-f", write(tmp_path, docs), "--detail")
    assert rc == 0, err
    assert out["feasible"] == ["n2"]
    assert out["filter"]["n1"] == {"code": "UnschedulableAndUnresolvable", "reasons": ["cannot allocate all claims"],
                                   "plugin": "DynamicResources"}


def test_capacity_counts_copies_with_their_own_claims(tmp_path, capsys):
    """Copies of a pod asking one GPU from a template: 2 nodes × 2 GPUs hold 4, then the FitError is
    DynamicResources'; asking two GPUs, 2 copies (one per node). CPU (1 of 8 per copy) never binds first."""
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpus("n1"), gpus("n2"), pod("p", TEMPLATED)]
    rc, out, err = run_json(capsys, "capacity", "-f", write(tmp_path, docs))
    assert rc == 0, err
    assert out["count"] == 4 and out["perNode"] == {"n1": 2, "n2": 2}
    assert out["message"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    two = {**TEMPLATE, "metadata": {"name": "one-gpu"}, "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}]}}}}
    rc, out, err = run_json(capsys, "capacity", "-f", write(tmp_path, [GPU_CLASS, two, *docs[2:]]))
    assert out["count"] == 2 and out["perNode"] == {"n1": 1, "n2": 1}


def test_plan_adds_template_nodes_with_their_devices(tmp_path, capsys):
    """One node with 2 GPUs, five pods asking one GPU each (template claims): 3 cannot fit. A template node
    `gpu-node` with a ResourceSlice of 2 GPUs (pool named after it): 2 copies are needed for the 3 pods (one
    copy holds only 2), and each copy's slice is renamed for it."""
    docs = [GPU_CLASS, TEMPLATE, node("n1"), gpus("n1"), *(pod(f"p{i}", TEMPLATED) for i in range(5))]
    template = tmp_path / "templates.json"
    template.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("gpu-node"),
                                                                                gpus("gpu-node")]}))
    rc, out, err = run_json(capsys, "plan", "-f", write(tmp_path, docs), "--node-template", str(template),
                            "--tie-break", "first")
    assert rc == 0, err
    assert out["add"] == {"gpu-node": 2} and out["scheduled"] == 5 and out["cannotFit"] == []
    allocated = out["simulation"]["devices"]
    assert allocated["gpu-node-1"]["allocated"] == ["gpu.example.com/gpu-node-1/gpu-0",
                                                    "gpu.example.com/gpu-node-1/gpu-1"]


def test_pool_order_that_may_matter_is_warned(tmp_path, capsys):
    """A node with two pools a class selects (two drivers): kube-scheduler ranges over them in random order,
    kubefit in (driver, pool) order, so the pod gets a.example.com's device and the run says the choice could
    have differed; one pool only, no warning."""
    any_gpu = {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
               "spec": {"selectors": [{"cel": {"expression": 'device.driver.endsWith(".example.com")'}}]}}
    second = {**gpus("n1", 1), "metadata": {"name": "n1-b"}}
    second["spec"] = {**second["spec"], "driver": "a.example.com"}
    docs = [any_gpu, TEMPLATE, node("n1"), gpus("n1", 1), second, pod("p0", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs))
    assert rc == 0, err
    assert out["steps"][0]["devices"] == {"gpu": ["a.example.com/n1/gpu-0"]}
    assert any("pool order" in w for w in out["warnings"]) and "pool order" in err
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, [any_gpu, TEMPLATE, node("n1"), gpus("n1", 1),
                                                                        pod("p0", TEMPLATED)]))
    assert not any("pool order" in w for w in out["warnings"])
