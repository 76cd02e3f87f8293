"""Claims as the resourceclaim controller makes them: one per new pod from each template it names.

Hand-derived scenarios (the reasoning in each docstring) on the helpers of `test_dra_simulate`: nodes of 8 cpu
with GPUs in one pool per node (driver gpu.example.com), the default profile, `--tie-break first`.
"""

from __future__ import annotations

from tests_support import run_json

from .test_dra_simulate import GPU_CLASS, TEMPLATE, TEMPLATED, V1, gpus, node, pod, write


def test_place_pending_copies_get_their_own_claims_on_the_example(capsys):
    """The reported bug, on `examples/dra`: with the pending pods placed first (train-0 and train-1 take node-a's
    four A100s, serve-0 and serve-1 two H100s of node-b beside the inference pod's), only node-b's gpu-3 is free:
    a copy of train-0 needs two GPUs on one NUMA node, so none fits. kubefit counted copies that shared train-0's
    allocated claim instead (2 on node-a, as many as its cpu allowed)."""
    rc, out, err = run_json(capsys, "capacity", "-f", "examples/dra/cluster.yaml", "--place-pending")
    assert rc == 0, err
    assert out["count"] == 0 and out["perNode"] == {}
    assert out["message"].startswith("0/3 nodes are available: 3 cannot allocate all claims.")


def test_copies_of_a_placed_one_gpu_pod(tmp_path, capsys):
    """Two nodes of two GPUs, one pending pod asking one GPU from a template: placed first it takes n1/gpu-0;
    three GPUs are left, so three copies fit (n2, n1, n2: LeastAllocated, ties to the first node), each with the
    claim the controller makes for it. Sharing the placed pod's claim, copies were bounded by cpu only (7 + 8)."""
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpus("n1"), gpus("n2"), pod("p", TEMPLATED)]
    rc, out, err = run_json(capsys, "capacity", "-f", write(tmp_path, docs), "--place-pending", "--pod", "p")
    assert rc == 0, err
    assert out["count"] == 3 and out["perNode"] == {"n1": 1, "n2": 2}


def test_copies_of_a_running_pod_do_not_share_its_generated_claim(tmp_path, capsys):
    """A running pod as a live cluster shows it: `status.resourceClaimStatuses` names the claim the controller
    made for it (owned by the pod, allocated n1/gpu-0). A copy is a new pod: the controller makes it a claim of
    its own from the template, so three copies fit on the three free GPUs (n2, n2, n1: n1 is fuller in cpu
    until n2 has two more pods)."""
    running = pod("p", TEMPLATED, node_name="n1")
    running["status"] = {"phase": "Running", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}]}
    claim = {"apiVersion": V1, "kind": "ResourceClaim",
             "metadata": {"name": "p-gpu-x7k2q", "namespace": "default", "uid": "uid-claim",
                          "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                          "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p",
                                               "controller": True, "blockOwnerDeletion": True}]},
             "spec": TEMPLATE["spec"]["spec"],
             "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                                 "pool": "n1", "device": "gpu-0"}]},
                                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                           {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
                        "reservedFor": [{"resource": "pods", "name": "p", "uid": "uid-p"}]}}
    docs = [GPU_CLASS, TEMPLATE, claim, node("n1"), node("n2"), gpus("n1"), gpus("n2"), running]
    rc, out, err = run_json(capsys, "capacity", "-f", write(tmp_path, docs), "--pod", "p")
    assert rc == 0, err
    assert out["count"] == 3 and out["perNode"] == {"n1": 1, "n2": 2}


def running_with_generated_claim(name: str, node_name: str, device: str, owner: dict | None = None) -> list[dict]:
    """A running pod as a live cluster shows it, with the claim the resourceclaim controller made for it from
    TEMPLATE (named in `status.resourceClaimStatuses`, owned by the pod, allocated `device` of its node)."""
    running = pod(name, TEMPLATED, node_name=node_name)
    if owner is not None:
        running["metadata"]["ownerReferences"] = [owner]
    claim_name = f"{name}-gpu-x7k2q"
    running["status"] = {"phase": "Running", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}]}
    claim = {"apiVersion": V1, "kind": "ResourceClaim",
             "metadata": {"name": claim_name, "namespace": "default", "uid": f"uid-{claim_name}",
                          "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                          "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": f"uid-{name}",
                                               "controller": True, "blockOwnerDeletion": True}]},
             "spec": TEMPLATE["spec"]["spec"],
             "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                                 "pool": node_name, "device": device}]},
                                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                           {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
                        "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-{name}"}]}}
    return [claim, running]


def test_a_drained_pods_replacement_gets_a_claim_of_its_own(tmp_path, capsys):
    """A ReplicaSet's pod runs on n1 with its generated claim on n1/gpu-0. Draining n1 deletes the pod (and, with
    it, the claim it owns); the ReplicaSet creates a new pod, a new pod has no `resourceClaimStatuses`, so the
    controller makes it a claim from the template, allocated on n2 (the only schedulable node). Carrying the old
    pod's status over, the new pod named the deleted claim and stayed pending ("could not find ResourceClaim")."""
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f", "uid": "uid-rs", "controller": True}
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpus("n1"), gpus("n2"),
            *running_with_generated_claim("web-5d4f-abcde", "n1", "gpu-0", owner)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--drain", "n1")
    assert rc == 0, err
    [step] = out["steps"]
    assert step["pod"].startswith("web-5d4f-") and step["pod"] != "web-5d4f-abcde" and step["node"] == "n2"
    assert step["devices"] == {"gpu": ["gpu.example.com/n2/gpu-0"]}


def test_consolidate_moves_a_gpu_pod_with_a_claim_of_its_own(tmp_path, capsys):
    """n1 runs a 6-cpu pod, n2 a ReplicaSet's 1-cpu pod holding n2/gpu-0 through its generated claim. n2 is the
    less used node, so consolidation tries it first: its pod's replacement gets a claim of its own from the template,
    allocated n1/gpu-0, and fits beside the 6-cpu pod (7 of 8 cpu): n2 can go. n1 then cannot (nowhere else)."""
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f", "uid": "uid-rs", "controller": True}
    big = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "uid": "uid-big", "ownerReferences": [
        {**owner, "name": "big-77c9", "uid": "uid-rs-big"}]},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "6"}}}]}}
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpus("n1"), gpus("n2"), big,
            *running_with_generated_claim("web-5d4f-abcde", "n2", "gpu-0", owner)]
    rc, out, err = run_json(capsys, "consolidate", "-f", write(tmp_path, docs))
    assert rc == 0, err
    assert out["removable"] == ["n2"]
    [move] = out["moves"]
    assert move["pod"] == "web-5d4f-abcde" and move["to"] == "n1" and move["replacement"] != move["pod"]


ADMIN_TEMPLATE = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "monitor", "namespace": "ops"},
                  "spec": {"spec": {"devices": {"requests": [
                      {"name": "all-gpus", "exactly": {"deviceClassName": "gpu", "allocationMode": "All",
                                                       "adminAccess": True}}]}}}}
FORBIDDEN = ("Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on "
             "the containing namespace")


def namespace(name: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


def monitor(name: str = "monitor-0", uid: str | None = None) -> dict:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpus"}]}}],
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "monitor"}]}
    meta = {"name": name, "namespace": "ops", **({"uid": uid} if uid else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def test_admin_access_needs_the_namespace_label(tmp_path, capsys):
    """A monitoring pod's template asks for all GPUs with admin access. In a namespace labelled
    `resource.kubernetes.io/admin-access: "true"` the claim is made and allocated: both GPUs of n1, which stay free
    for others (admin access holds no device). Without the label the API server refuses the template being created
    (`AuthorizedForAdmin`): exit 2, one line, its words."""
    docs = [GPU_CLASS, TEMPLATE, ADMIN_TEMPLATE, node("n1"), gpus("n1"), monitor(), pod("app", TEMPLATED)]
    labelled = [namespace("ops", {"resource.kubernetes.io/admin-access": "true"}), *docs]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, labelled))
    assert rc == 0, err
    mon, app = out["steps"]
    assert mon["devices"] == {"gpus": ["gpu.example.com/n1/gpu-0", "gpu.example.com/n1/gpu-1"]}
    assert app["devices"] == {"gpu": ["gpu.example.com/n1/gpu-0"]}
    for scenario in ([namespace("ops", {"resource.kubernetes.io/admin-access": "yes"}), *docs], docs):
        rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, scenario))
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert err.strip().endswith(
            'ResourceClaimTemplate/monitor: spec.devices.requests[0].adminAccess: ResourceClaimTemplate.resource.k8s.io '
            f'"monitor" is invalid: spec.devices.requests[0].adminAccess: {FORBIDDEN}')


def test_a_stored_admin_template_in_an_unlabelled_namespace_makes_no_claim(tmp_path, capsys):
    """The template is stored (a uid: admitted when the namespace had the label), the label is gone: the API server
    refuses the claim the controller makes from it, so the pod waits for its claim, the step saying why; the
    ResourceClaim named after its `generateName`. `--no-admission` takes the objects as given."""
    stored = {**ADMIN_TEMPLATE, "metadata": {**ADMIN_TEMPLATE["metadata"], "uid": "uid-monitor"}}
    docs = [namespace("ops"), GPU_CLASS, stored, node("n1"), gpus("n1"), monitor()]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs))
    assert rc == 0, err
    [step] = out["steps"]
    assert step["node"] is None and step["preEnqueue"] == "DynamicResources"
    assert step["message"] == ('pod "ops/monitor-0": ResourceClaim not created yet (resourceclaim controller: '
                               'ResourceClaim.resource.k8s.io "monitor-0-gpus-" is invalid: '
                               f'spec.devices.requests[0].adminAccess: {FORBIDDEN})')
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--no-admission")
    assert rc == 0 and out["steps"][0]["node"] == "n1"


def test_admin_access_claim_documents_and_stored_claims(tmp_path, capsys):
    """A ResourceClaim document (no uid, not allocated) with admin access outside a labelled namespace is refused
    as the template is; a stored one (a uid) loads, with a warning that the API server would refuse its allocation
    (`AuthorizedForAdminStatus`), which kubefit does not model."""
    claim = {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "watch", "namespace": "ops"},
             "spec": ADMIN_TEMPLATE["spec"]["spec"]}
    docs = [namespace("ops"), GPU_CLASS, node("n1"), gpus("n1")]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, [*docs, claim]))
    assert rc == 2 and err.strip().endswith(
        f'ResourceClaim.resource.k8s.io "watch" is invalid: spec.devices.requests[0].adminAccess: {FORBIDDEN}')
    stored = {**claim, "metadata": {**claim["metadata"], "uid": "uid-watch"}}
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, [*docs, stored]))
    assert rc == 0, err
    assert any("ResourceClaim ops/watch asks for admin access" in w and "would refuse its allocation" in w
               for w in out["warnings"])


def test_admin_access_with_the_gate_off(tmp_path, capsys):
    """`--feature-gates DRAAdminAccess=false` (v1.34): the controller refuses to make a claim from a template that
    asks for admin access (`admin access is requested, but the feature is disabled`); the label is not consulted."""
    stored = {**ADMIN_TEMPLATE, "metadata": {**ADMIN_TEMPLATE["metadata"], "uid": "uid-monitor"}}
    docs = [namespace("ops", {"resource.kubernetes.io/admin-access": "true"}), GPU_CLASS, stored, node("n1"),
            gpus("n1"), monitor()]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--feature-gates", "DRAAdminAccess=false")
    assert rc == 0, err
    assert out["steps"][0]["message"].endswith(
        "(resourceclaim controller: admin access is requested, but the feature is disabled)")


def test_the_controller_adopts_the_claim_it_made_before_the_pods_status_said_so(tmp_path, capsys):
    """A pending pod whose status does not name its claim yet, and a claim it owns annotated
    `resource.kubernetes.io/pod-claim-name: gpu`, allocated n2/gpu-1 (`findPodResourceClaim`): the controller takes
    that claim instead of making another, so the pod must go where it is allocated, n2, though n1 ties first; a
    claim annotated for another pod claim is not adopted (the pod takes n1/gpu-0)."""
    [orphan, _running] = running_with_generated_claim("p", "n2", "gpu-1")
    orphan["status"].pop("reservedFor")
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpus("n1"), gpus("n2"), orphan, pod("p", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--tie-break", "first")
    assert rc == 0, err
    assert out["steps"][0]["node"] == "n2" and out["steps"][0]["devices"] == {"gpu": ["gpu.example.com/n2/gpu-1"]}
    orphan["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "other"}
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--tie-break", "first")
    assert out["steps"][0]["devices"] == {"gpu": ["gpu.example.com/n1/gpu-0"]}


def dgx_template(tmp_path, pool: str = "dgx", **selection) -> str:
    """A node template `dgx` of 64 cpu with its 8 GPUs in one ResourceSlice (pool `pool`, node-local unless
    `selection` replaces `nodeName`)."""
    slice_ = gpus("dgx", 8)
    slice_["spec"]["pool"]["name"] = pool
    if selection:
        del slice_["spec"]["nodeName"]
        slice_["spec"].update(selection)
    dgx = node("dgx")
    dgx["status"]["allocatable"]["cpu"] = "64"
    path = tmp_path / "dgx.json"
    path.write_text(__import__("json").dumps({"apiVersion": "v1", "kind": "List", "items": [dgx, slice_]}))
    return str(path)


def test_plan_counts_dgx_nodes_by_their_devices(tmp_path, capsys):
    """Ten training pods of 1 cpu each asking 4 GPUs (a template claim, count 4), one 8-cpu node without GPUs:
    cpu alone would need one DGX node (64 cpu), devices need five (8 GPUs hold two pods). Each copy gets the
    template's slice, its pool `gpus` made unique per copy (`gpus-dgx-1`, …: the template's name is not in it)."""
    four = {**TEMPLATE, "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 4}}]}}}}
    docs = [GPU_CLASS, four, node("cpu-only"), *(pod(f"train-{i}", TEMPLATED) for i in range(10))]
    rc, out, err = run_json(capsys, "plan", "-f", write(tmp_path, docs), "--node-template",
                            dgx_template(tmp_path, pool="gpus"), "--tie-break", "first")
    assert rc == 0, err
    assert out["add"] == {"dgx": 5} and out["scheduled"] == 10
    devices = out["simulation"]["devices"]
    assert sorted(devices) == [f"dgx-{i}" for i in range(1, 6)]
    assert all(d["devices"] == 8 and len(d["allocated"]) == 8 for d in devices.values())
    assert devices["dgx-3"]["allocated"][0] == "gpu.example.com/gpus-dgx-3/gpu-0"


def test_a_template_slice_must_be_node_local(tmp_path, capsys):
    """A template's ResourceSlice reachable from all nodes, or by a node selector, does not come with a node (what
    cluster-autoscaler refuses to copy): exit 2, one line naming the file, the slice and the field."""
    docs = [GPU_CLASS, TEMPLATE, node("n1"), pod("p", TEMPLATED)]
    for selection, field in (({"allNodes": True}, "spec.allNodes"),
                             ({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                                 {"key": "gpu", "operator": "Exists"}]}]}}, "spec.nodeSelector")):
        template = dgx_template(tmp_path, **selection)
        rc, out, err = run_json(capsys, "plan", "-f", write(tmp_path, docs), "--node-template", template)
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert f"ResourceSlice/dgx-gpus: {field}: a node template's ResourceSlice must be node-local" in err
    other = gpus("elsewhere")
    path = tmp_path / "other.json"
    path.write_text(__import__("json").dumps({"apiVersion": "v1", "kind": "List", "items": [node("dgx"), other]}))
    rc, out, err = run_json(capsys, "plan", "-f", write(tmp_path, docs), "--node-template", str(path))
    assert rc == 2 and ("ResourceSlice/elsewhere-gpus: spec.nodeName: a node template's ResourceSlice must name a "
                        "template node in spec.nodeName (one of dgx), got 'elsewhere'") in err


def test_capacity_with_template_nodes_counts_their_devices(tmp_path, capsys):
    """One 8-cpu node with two GPUs and a pending pod asking 4 GPUs: 0 copies fit. With two DGX nodes added
    (`--node-template --nodes 2`, 8 GPUs each), 4 copies fit (two per DGX node), and the count stops with
    DynamicResources' message on every node."""
    four = {**TEMPLATE, "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 4}}]}}}}
    docs = [GPU_CLASS, four, node("n1"), gpus("n1"), pod("p", TEMPLATED)]
    rc, out, err = run_json(capsys, "capacity", "-f", write(tmp_path, docs))
    assert rc == 0 and out["count"] == 0
    rc, out, err = run_json(capsys, "capacity", "-f", write(tmp_path, docs), "--node-template", dgx_template(tmp_path),
                            "--nodes", "2")
    assert rc == 0, err
    assert out["count"] == 4 and out["perNode"] == {"dgx-1": 2, "dgx-2": 2}
    assert out["message"].startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    assert out["inputs"]["options"]["nodes"] == 2


def test_each_device_says_who_holds_it(tmp_path, capsys):
    """`devices[node].pools`, as the table, the report and serve draw it: n1 has a GPU pool and a NIC pool (driver
    order), pod a holds n1/gpu-0 (LeastAllocated, ties to n1), b holds n2/gpu-0; the others are free; capacities
    as Kubernetes writes them (an 80Gi GPU memory, 10G of NIC bandwidth); the table shows one row per pool."""
    nics = {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "n1-nics"},
            "spec": {"driver": "nic.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                     "devices": [{"name": f"nic-{i}", "capacity": {"bandwidth": {"value": "10G"}}} for i in range(2)]}}
    gpu_slice = gpus("n1")
    for device in gpu_slice["spec"]["devices"]:
        device["capacity"] = {"memory": {"value": "80Gi"}}
    docs = [GPU_CLASS, TEMPLATE, node("n1"), node("n2"), gpu_slice, nics, gpus("n2"), pod("a", TEMPLATED),
            pod("b", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--tie-break", "first")
    assert rc == 0, err
    claim_a = out["devices"]["n1"]["pools"][0]["devices"][0]["claims"][0]
    assert claim_a.startswith("default/a-gpu-")
    assert out["devices"]["n1"]["pools"] == [
        {"driver": "gpu.example.com", "pool": "n1", "allocated": 1, "devices": [
            {"name": "gpu-0", "allocated": True, "claims": [claim_a], "pods": ["default/a"],
             "capacity": {"memory": "80Gi"}},
            {"name": "gpu-1", "allocated": False, "capacity": {"memory": "80Gi"}}]},
        {"driver": "nic.example.com", "pool": "n1", "allocated": 0, "devices": [
            {"name": f"nic-{i}", "allocated": False, "capacity": {"bandwidth": "10G"}} for i in range(2)]}]
    assert out["devices"]["n2"]["pools"][0]["devices"][0]["pods"] == ["default/b"]
    from kubefit.cli import main

    assert main(["simulate", "-f", write(tmp_path, docs), "--tie-break", "first"]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if "│ n1" in line or "│ n2" in line]
    assert any("gpu.example.com/n1" in r and "1/2" in r and "gpu-1" in r and "gpu-0: a" in r for r in rows)
    assert any("nic.example.com/n1" in r and "0/2" in r and "nic-0, nic-1" in r for r in rows)


def test_generated_claim_names_are_cut_as_the_controller_cuts_them():
    """`handleClaim`: `<pod>-<claim>-` when it has at most 57 characters; else both parts cut in proportion to the
    length before the cut and joined by one `-`, with no `-` at the end: a 60-character pod name and claim `gpu`
    make 65 characters, so 60·57//65 = 52 of the pod's and 3·57//65 = 2 of the claim's; the API server adds 5."""
    from kubefit.api.core import Pod
    from kubefit.scheduler.dra.controller import generate_name_base, generated_claim_name

    assert generate_name_base("train-0", "gpus") == "train-0-gpus-"
    long_pod = "p" * 60
    assert generate_name_base(long_pod, "gpu") == "p" * 52 + "-gp"
    name = generated_claim_name(Pod(long_pod), "gpu")
    assert name.startswith("p" * 52 + "-gp") and len(name) == 60
    assert generate_name_base("a" * 50, "b" * 6) == "a" * 49 + "-" + "b" * 5  # 58: 50·57//58, 6·57//58
    assert len(generate_name_base("a" * 49, "b" * 6)) == 57  # 57: kept whole


def test_a_mig_gpus_counters_and_a_shared_devices_capacity_are_shown():
    """The view of a partitionable GPU and a shared NIC, on the allocator's state as v1.36 keeps it (`in_use`,
    `shares`, `capacity`; pools with `counter_sets`, devices with `consumes`), built by hand: counter set gpu-0 has
    memory 80Gi and 7 compute slices; the whole GPU would consume all of it, two allocated 1g slices consume 10Gi
    and 1 slice each, a 3g slice (40Gi, 3) is free: 20Gi and 2 slices consumed, 60Gi and 5 free. A slice of
    another node's slice of the pool (`others`) allocated consumes too (5Gi, no compute). The NIC allows multiple
    allocations: two shares consume 30G of its 100G."""
    from types import SimpleNamespace as NS

    from kubefit.report.simulation import counters_text, shared_text
    from kubefit.scheduler.dra.view import node_pools

    gi = 2**30 * 10**9

    def Device(name: str, capacity: dict | None = None, consumes: tuple = (), allow_multiple: bool | None = None):
        return NS(name=name, capacity=capacity or {}, consumes=consumes, allow_multiple=allow_multiple)

    def CounterConsumption(counter_set: str, counters: dict):  # noqa: N802 - the API type's name
        return NS(counter_set=counter_set, counters=counters)

    def part(name: str, memory: int, slices: int):
        return Device(name, capacity={"memory": memory * gi},
                      consumes=(CounterConsumption("gpu-0", {"memory": memory * gi, "slices": slices * 10**9}),))
    whole, one_a, one_b, three = part("gpu-0", 80, 7), part("mig-1g-0", 10, 1), part("mig-1g-1", 10, 1), part(
        "mig-3g-0", 40, 3)
    far = Device("mig-far", consumes=(CounterConsumption("gpu-0", {"memory": 5 * gi}),))
    gpus = NS(driver="gpu.example.com", name="n1", devices=[(("gpu.example.com", "n1", d.name), d, None)
                                                            for d in (whole, one_a, one_b, three)],
              others=[(("gpu.example.com", "n1", "mig-far"), far, None)],
              counter_sets={"gpu-0": {"memory": 80 * gi, "slices": 7 * 10**9}})
    nic = Device("eth-0", capacity={"bandwidth": 100 * 10**18}, allow_multiple=True)
    nics = NS(driver="nic.example.com", name="n1", devices=[(("nic.example.com", "n1", "eth-0"), nic, None)])
    held = {("gpu.example.com", "n1", "mig-1g-0"), ("gpu.example.com", "n1", "mig-1g-1"),
            ("gpu.example.com", "n1", "mig-far")}
    dra = NS(in_use=dict.fromkeys(held, 1), shares={("nic.example.com", "n1", "eth-0"): {"s1": 1, "s2": 1}},
             capacity={("nic.example.com", "n1", "eth-0"): {"bandwidth": 30 * 10**18}},
             claims={}, catalog=NS(node_pools=[(gpus, nics)]))
    gpu_view, nic_view = node_pools(dra, 0, {})
    assert gpu_view["counters"] == {"gpu-0": {
        "memory": {"capacity": "80Gi", "consumed": "25Gi", "free": "55Gi"},
        "slices": {"capacity": "7", "consumed": "2", "free": "5"}}}
    assert [d["allocated"] for d in gpu_view["devices"]] == [False, True, True, False] and gpu_view["allocated"] == 2
    assert gpu_view["devices"][3]["consumesCounters"] == {"gpu-0": {"memory": "40Gi", "slices": "3"}}
    assert nic_view["devices"] == [{"name": "eth-0", "allocated": True, "capacity": {"bandwidth": "100G"},
                                    "shared": True, "shares": 2, "consumedCapacity": {"bandwidth": "30G"}}]
    assert counters_text(gpu_view["counters"]) == "gpu-0: memory 55Gi of 80Gi free, slices 5 of 7 free"
    assert shared_text(nic_view["devices"][0]) == "eth-0: 2 share(s), bandwidth 30G of 100G consumed"
