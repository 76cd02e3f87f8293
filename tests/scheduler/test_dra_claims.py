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
