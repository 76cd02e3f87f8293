"""ResourceQuota on ResourceClaims: the claim evaluator, ported from upstream's tables, and what runs make of it.

`TestResourceClaimEvaluatorUsage` and `TestResourceClaimEvaluatorMatchingResources` of
pkg/quota/v1/evaluator/core/resource_claims_test.go (DRAExtendedResource on, class `gpu` mapping
`example.com/gpu`, as upstream's table runs them), as named cases; then hand-derived scenarios through the CLI.
"""

from __future__ import annotations

import pytest

from kubefit.api.cluster import ObjectMeta
from kubefit.api.dra import ALL, ClaimSpec, DeviceClass, DeviceRequest, DeviceSubRequest
from kubefit.manifests.claimquota import claim_usage, extended_resource_names, matching_resources
from scheduler.test_dra_simulate import GPU_CLASS, TEMPLATE, TEMPLATED, V1, gpus, node, pod, write
from tests_support import run_json


def exactly(cls: str = "gpu", count: int = 1, mode: str = "ExactCount", admin: bool | None = None) -> DeviceRequest:
    return DeviceRequest("req-0", exactly=DeviceSubRequest("req-0", cls, allocation_mode=mode, count=count,
                                                           admin_access=admin))


def first_available(*subs: tuple[str, str, int]) -> DeviceRequest:
    return DeviceRequest("req-0", first_available=tuple(DeviceSubRequest(f"subreq-{i}", cls, allocation_mode=mode,
                                                                         count=count)
                                                        for i, (cls, mode, count) in enumerate(subs)))


GPU = "gpu.deviceclass.resource.k8s.io/devices"
IMPLICIT = "requests.deviceclass.resource.kubernetes.io/gpu"
COUNT = "count/resourceclaims.resource.k8s.io"
USAGE_CASES = {  # upstream's name → (requests, usage); the evaluator without a class mapping, as upstream's
    "simple": ((exactly(),), {COUNT: 1, GPU: 1, IMPLICIT: 1}),
    "many-requests": ((exactly(),) * 5, {COUNT: 1, GPU: 5, IMPLICIT: 5}),
    "count": ((exactly(count=5),), {COUNT: 1, GPU: 5, IMPLICIT: 5}),
    "all": ((exactly(mode=ALL),), {COUNT: 1, GPU: 32, IMPLICIT: 32}),
    "admin": ((exactly(admin=True),), {COUNT: 1, GPU: 1, IMPLICIT: 1}),  # admins are not exempt from quota
    "prioritized-list": ((first_available(("gpu", "ExactCount", 1)),), {COUNT: 1, GPU: 1, IMPLICIT: 1}),
    "prioritized-list-multiple-subrequests": (
        (first_available(("gpu", "ExactCount", 2), ("gpu", "ExactCount", 1)),), {COUNT: 1, GPU: 2, IMPLICIT: 2}),
    "prioritized-list-multiple-subrequests-allocation-mode-all": (
        (first_available(("gpu", "ExactCount", 1), ("gpu", ALL, 1)),), {COUNT: 1, GPU: 32, IMPLICIT: 32}),
    "prioritized-list-multiple-subrequests-different-device-classes": (
        (first_available(("gpu", "ExactCount", 1), ("tpu", ALL, 1)),),
        {COUNT: 1, GPU: 1, IMPLICIT: 1, "tpu.deviceclass.resource.k8s.io/devices": 32,
         "requests.deviceclass.resource.kubernetes.io/tpu": 32}),
}


@pytest.mark.parametrize("name", sorted(USAGE_CASES))
def test_upstream_claim_usage(name):
    requests, usage = USAGE_CASES[name]
    assert claim_usage(ClaimSpec(requests), {}) == usage


def test_without_dra_extended_resource_only_the_claim_and_its_devices_count():
    """v1.34 and v1.35 (DRAExtendedResource off by default): no `requests.` names."""
    assert claim_usage(ClaimSpec((exactly(count=2), first_available(("gpu", ALL, 1))))) == {COUNT: 1, GPU: 34}


def test_a_class_with_an_extended_resource_name_charges_it_too():
    """`addExtendedResourceQuota`: a regular claim of class gpu (mapping example.com/gpu) also uses
    `requests.example.com/gpu` (upstream's evaluator with the mapping, on a claim no pod's extended resources made)."""
    assert claim_usage(ClaimSpec((exactly(),)), {"gpu": "example.com/gpu"}) == {
        COUNT: 1, GPU: 1, IMPLICIT: 1, "requests.example.com/gpu": 1}


def test_upstream_matching_resources():
    gpu = DeviceClass(ObjectMeta("gpu"), extended_resource_name="example.com/gpu")
    mapping = extended_resource_names([gpu])
    supported = [COUNT, GPU, "requests.example.com/gpu", IMPLICIT]
    assert matching_resources(supported, mapping) == supported
    unsupported = ["resourceclaims", "storage", "ephemeral-storage", "bronze.deviceclass.resource.k8s.io/storage",
                   "gpu.storage.k8s.io/requests.storage"]
    assert matching_resources(unsupported, mapping) == []
    # no class maps these; without the gate only the claim count and the devices per class match
    assert matching_resources(["requests.example.com/tpu", "requests.deviceclass.resource.kubernetes.io/tpu"],
                              mapping) == []
    assert matching_resources(supported, None) == [COUNT, GPU]


def quota(name: str, hard: dict, namespace: str = "default", status: dict | None = None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": namespace},
            "spec": {"hard": hard, **spec}, **({"status": status} if status else {})}


def test_two_one_gpu_pods_under_a_quota_of_one_device(tmp_path, capsys):
    """The issue's case: a quota of 1 `gpu` device in the namespace, two pending pods with a one-GPU template
    claim, 4 free GPUs. The controller makes a's claim first (document order; quota 0 → 1 of 1), b's is refused
    with the API server's message: b waits for its claim (DynamicResources' PreEnqueue), a runs."""
    docs = [GPU_CLASS, TEMPLATE, quota("gpus", {GPU: "1"}), node("n1"), gpus("n1", 4),
            pod("a", TEMPLATED), pod("b", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs))
    assert rc == 0, err
    a, b = out["steps"]
    assert a["node"] == "n1" and b["node"] is None and b["preEnqueue"] == "DynamicResources"
    refusal = ('resourceclaims.resource.k8s.io "b-gpu-" is forbidden: exceeded quota: gpus, requested: '
               f'{GPU}=1, used: {GPU}=1, limited: {GPU}=1')
    assert b["message"] == f'pod "default/b": ResourceClaim not created yet (resourceclaim controller: {refusal})'
    assert any(refusal in w for w in out["warnings"])


def test_claim_count_quota_and_a_snapshots_status(tmp_path, capsys):
    """`count/resourceclaims.resource.k8s.io: 3` with a status (a snapshot) saying 2 are used: one more claim
    can be made, so a runs and b waits; a quota whose status does not state a claim name refuses every claim
    (`status unknown for quota`)."""
    counted = quota("claims", {COUNT: "3"}, status={"hard": {COUNT: "3"}, "used": {COUNT: "2"}})
    docs = [GPU_CLASS, TEMPLATE, counted, node("n1"), gpus("n1", 4), pod("a", TEMPLATED), pod("b", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs))
    assert rc == 0, err
    assert [s["node"] for s in out["steps"]] == ["n1", None]
    assert "exceeded quota: claims, requested: count/resourceclaims.resource.k8s.io=1, used: " \
           "count/resourceclaims.resource.k8s.io=3, limited: count/resourceclaims.resource.k8s.io=3" in \
           out["steps"][1]["message"]
    unknown = quota("claims", {COUNT: "3", GPU: "4"}, status={"hard": {COUNT: "3", GPU: "4"}, "used": {COUNT: "0"}})
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, [*docs[:2], unknown, *docs[3:]]))
    assert [s["node"] for s in out["steps"]] == [None, None]
    assert (f"status unknown for quota: claims, resources: {COUNT},{GPU}") in out["steps"][0]["message"]


def test_running_claims_count_and_a_scoped_quota_never_matches(tmp_path, capsys):
    """A quota of 2 devices given without a status: the quota controller counts the running pod's claim (its
    generated claim is stored and allocated: 1 device), so of a, b only a's claim fits (2 of 2). A quota with a
    scope (`BestEffort`... any) never matches a claim (`MatchesNoScopeFunc`): both run."""
    from scheduler.test_dra_claims import running_with_generated_claim

    running = running_with_generated_claim("r", "n1", "gpu-0")
    docs = [GPU_CLASS, TEMPLATE, quota("gpus", {GPU: "2"}), node("n1"), gpus("n1", 4), *running,
            pod("a", TEMPLATED), pod("b", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs))
    assert [s["node"] for s in out["steps"]] == ["n1", None]
    scoped = quota("gpus", {GPU: "2", "pods": "10"}, scopes=["NotBestEffort"])
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, [*docs[:2], scoped, *docs[3:]]))
    assert rc == 0, err
    assert [s["node"] for s in out["steps"]] == ["n1", "n1"]


def test_capacity_stops_when_the_next_copys_claim_is_refused(tmp_path, capsys):
    """Quota of 3 `gpu` devices, 8 GPUs on two nodes, one pending pod whose claim is made at load (1 of 3): two
    copies get claims (3 of 3), the third copy's claim is refused: the count stops at 2 with the refusal."""
    docs = [GPU_CLASS, TEMPLATE, quota("gpus", {GPU: "3"}), node("n1"), node("n2"), gpus("n1", 4), gpus("n2", 4),
            pod("p", TEMPLATED)]
    rc, out, err = run_json(capsys, "capacity", "-f", write(tmp_path, docs))
    assert rc == 0, err
    assert out["count"] == 2
    assert out["message"] == (
        'pod "default/p-copy-2": ResourceClaim not created yet (resourceclaim controller: resourceclaims.resource.'
        f'k8s.io "p-copy-2-gpu-" is forbidden: exceeded quota: gpus, requested: {GPU}=1, used: {GPU}=3, limited: '
        f'{GPU}=3)')


def test_a_deleted_pods_claim_gives_its_quota_back(tmp_path, capsys):
    """Quota of 1 device: the low-priority pod's claim holds it. Draining n1 deletes the pod and the claim made for
    it: the quota is free again, so the replacement's claim is admitted and it runs on n2."""
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f", "uid": "uid-rs", "controller": True}
    from scheduler.test_dra_claims import running_with_generated_claim

    docs = [GPU_CLASS, TEMPLATE, quota("gpus", {GPU: "1"}), node("n1"), node("n2"), gpus("n1"), gpus("n2"),
            *running_with_generated_claim("web-5d4f-abcde", "n1", "gpu-0", owner)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--drain", "n1")
    assert rc == 0, err
    [step] = out["steps"]
    assert step["node"] == "n2" and step["devices"] == {"gpu": ["gpu.example.com/n2/gpu-0"]}


def test_a_claim_document_over_quota_is_refused(tmp_path, capsys):
    """A ResourceClaim the files create (no uid, not allocated) asking 3 devices under a quota of 2: the API server
    refuses it, exit 2, one line naming the file, the object and the field."""
    claim = {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "big", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 3}}]}}}
    docs = [GPU_CLASS, quota("gpus", {GPU: "2"}), claim, node("n1"), gpus("n1", 4)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs))
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert ('ResourceClaim/big: spec.devices.requests: resourceclaims.resource.k8s.io "big" is forbidden: exceeded '
            f'quota: gpus, requested: {GPU}=3, used: {GPU}=0, limited: {GPU}=2') in err


def test_a_quota_on_an_unknown_class_is_taken_with_a_warning(tmp_path, capsys):
    """The API server takes a quota naming any class (`tpu.deviceclass.resource.k8s.io/devices` is a qualified
    name); the scenario has no class tpu, so nothing is limited: a warning says so, the GPU pods run. A quota
    value that is not a whole number is refused (exit 2), as `ValidateResourceQuantityValue` refuses it."""
    docs = [GPU_CLASS, TEMPLATE, quota("tpus", {"tpu.deviceclass.resource.k8s.io/devices": "0"}), node("n1"),
            gpus("n1"), pod("a", TEMPLATED)]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs))
    assert rc == 0 and out["steps"][0]["node"] == "n1"
    assert any("names DeviceClass 'tpu', which the scenario does not have" in w for w in out["warnings"])
    bad = quota("gpus", {GPU: "1500m"})
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, [*docs[:2], bad, *docs[3:]]))
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert f'ResourceQuota "gpus" is invalid: spec.hard[{GPU}]: Invalid value: "1500m": must be an integer' in err


def test_a_timeline_pod_waits_until_a_claim_is_given_back(tmp_path, capsys):
    """`--timeline`, a quota of 1 GPU device: a (a Job's pod, restartPolicy Never) arrives at 0 and runs 10 s; b
    arrives at 5 s, its claim is refused, so it waits; at 10 s a completes, the controller deletes a's claim, the
    quota has room again, b's claim is made at its next try and b runs at 10 s."""
    def timed(name: str, arrival: str, duration: str | None = None) -> dict:
        made = pod(name, TEMPLATED)
        made["metadata"]["annotations"] = {"kubefit.io/arrival": arrival,
                                           **({"kubefit.io/duration": duration} if duration else {})}
        made["spec"]["restartPolicy"] = "Never"
        return made
    docs = [GPU_CLASS, TEMPLATE, quota("gpus", {GPU: "1"}), node("n1"), gpus("n1", 4),
            timed("a", "0s", "10s"), timed("b", "5s")]
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, docs), "--timeline")
    assert rc == 0, err
    runs = {r["pod"]: r for r in out["pods"]}
    assert (runs["a"]["start"], runs["a"]["end"]) == (0, 10)
    assert (runs["b"]["start"], runs["b"]["attempts"]) == (10, 2)
