"""The drivers' demos under `--kube-version 1.36`, expectations derived by hand from the v1.36.3 allocator.

NVIDIA's dynamic MIG (`dra-driver-nvidia-gpu`, KEP-4815's motivating example): each A100-40GB publishes a
counter set `gpu-N-counter-set` of its capacities (multiprocessors 98, copy engines 7, decoders 5, memory
40192Mi) and one counter per memory slice (`memory-slice-0` … `-7`, 1 each); the full GPU consumes all of it,
each MIG placement its profile's capacities and the memory slices it covers (the placements of KEP-4815's
table: 7g.40gb at 0, 4g.20gb at 0, 3g.20gb at 0 and 4, 2g.10gb at 0, 2 and 4, 1g.10gb at 0, 2, 4 and 6,
1g.5gb at 0 … 6). MIG devices carry `type: mig`, `profile` and `parentUUID`. kubefit's layout lists the full
GPUs first, then per GPU its placements by profile, largest first, starts ascending (the allocator takes the
first device that fits in slice order).

The example driver (`dra-example-driver`, `internal/profiles/gpu`): GPUs `gpu-N` with index, uuid, model and
driverVersion attributes and 80Gi memory, 100 compute capacity; with `gpuPartitions=P` a counter slice
(`gpu-N-counters`: memory 80Gi, compute 100) and a device slice of `gpu-N-partition-J` (80Gi/P, 100/P) and
`gpu-N-full` (all of it) per GPU; with `gpuAllowMultipleAllocations` every device allows multiple allocations
and its capacities a request policy (memory: 1Gi steps from 1Gi, default all; compute: steps of 1).
"""

from __future__ import annotations

import json

from kubefit.k8s import version
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.scenario import prepare
from kubefit.scheduler.simulate import simulate

V1 = "resource.k8s.io/v1"
NVIDIA = "gpu.nvidia.com"
EXAMPLE = "gpu.example.com"

# KEP-4815's A100-40GB table: profile → (memory slices, multiprocessors, copy engines, decoders, memory Mi, starts)
A100 = {"7g.40gb": (8, 98, 7, 5, 40192, (0,)), "4g.20gb": (4, 56, 4, 2, 19968, (0,)),
        "3g.20gb": (4, 42, 3, 2, 19968, (0, 4)), "2g.10gb": (2, 28, 2, 1, 9856, (0, 2, 4)),
        "1g.10gb": (2, 14, 1, 1, 9856, (0, 2, 4, 6)), "1g.5gb": (1, 14, 1, 0, 4864, tuple(range(7)))}


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}}}


def _class(name: str, expression: str) -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _counters(mp: int, ce: int, dec: int, mem: int, start: int, size: int) -> dict:
    counters = {"multiprocessors": {"value": str(mp)}, "copy-engines": {"value": str(ce)},
                "memory": {"value": f"{mem}Mi"}}
    if dec:
        counters["decoders"] = {"value": str(dec)}
    counters.update({f"memory-slice-{i}": {"value": "1"} for i in range(start, start + size)})
    return counters


def nvidia_node(name: str, gpus: int = 2) -> list[dict]:
    """A node of A100-40GB GPUs as the NVIDIA driver publishes them with dynamic MIG (see the module doc)."""
    pool = {"name": name, "resourceSliceCount": 2}
    sets, devices, migs = [], [], []
    for g in range(gpus):
        uuid = f"GPU-{name}-{g}"
        counter_set = f"gpu-{g}-counter-set"
        sets.append({"name": counter_set, "counters": _counters(98, 7, 5, 40192, 0, 8)})
        base = {"uuid": {"string": uuid}, "productName": {"string": "NVIDIA A100-SXM4-40GB"}}
        devices.append({"name": f"gpu-{g}", "attributes": {**base, "type": {"string": "gpu"}, "index": {"int": g}},
                        "capacity": {"memory": {"value": "40192Mi"}},
                        "consumesCounters": [{"counterSet": counter_set, "counters": _counters(98, 7, 5, 40192, 0, 8)}]})
        for profile, (size, mp, ce, dec, mem, starts) in A100.items():
            for start in starts:
                migs.append({"name": f"gpu-{g}-mig-{profile.replace('.', '')}-{start}-{size}",
                             "attributes": {"type": {"string": "mig"}, "profile": {"string": profile},
                                            "parentUUID": {"string": uuid}, "parentIndex": {"int": g}},
                             "capacity": {"multiprocessors": {"value": str(mp)}, "memory": {"value": f"{mem}Mi"}},
                             "consumesCounters": [{"counterSet": counter_set,
                                                   "counters": _counters(mp, ce, dec, mem, start, size)}]})
    spec = {"driver": NVIDIA, "nodeName": name, "pool": pool}
    return [_node(name),
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-counters"},
             "spec": {**spec, "sharedCounters": sets}},
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-devices"},
             "spec": {**spec, "devices": devices + migs}}]


NVIDIA_CLASSES = [_class("gpu.nvidia.com", f"device.driver == '{NVIDIA}' && device.attributes['{NVIDIA}'].type == 'gpu'"),
                  _class("mig.nvidia.com", f"device.driver == '{NVIDIA}' && device.attributes['{NVIDIA}'].type == 'mig'")]


def _mig_request(name: str, profile: str) -> dict:
    return {"name": name, "exactly": {"deviceClassName": "mig.nvidia.com", "selectors": [
        {"cel": {"expression": f"device.attributes['{NVIDIA}'].profile == '{profile}'"}}]}}


KEP_CLAIM = {"requests": [_mig_request("mig-1g-5gb-0", "1g.5gb"), _mig_request("mig-1g-5gb-1", "1g.5gb"),
                          _mig_request("mig-2g-10gb", "2g.10gb"), _mig_request("mig-3g-20gb", "3g.20gb")],
             "constraints": [{"requests": [], "matchAttribute": f"{NVIDIA}/parentUUID"}]}


def _template(name: str, devices: dict, namespace: str = "default") -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": devices}}}


def _pod(name: str, claim: dict, namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "ctr0", "resources": {"requests": {"cpu": "1"},
                                                                   "claims": [{"name": "devices"}]}}],
                     "resourceClaims": [{"name": "devices", **claim}]}}


def _run(docs: list[dict]):
    """Schedule the pending pods in order (`--tie-break first`): per pod its node and its claim's devices (device
    names in the order of the allocation's results), and the final DRA state."""
    scenario = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "demo.json"):
        add_document(scenario, doc)
    prepared = prepare(scenario, version=version.for_minor(36))
    result = simulate(prepared.state, prepared.config, scenario.pending_pods, tie_break="first", seed=0)
    dra = prepared.state.dra
    names = prepared.state.node_names
    placed = {}
    for step in result.steps:
        devices = [d.split("/", 2)[2] for d in dra.devices_of(step.pod).get("devices", [])]
        placed[step.pod.name] = (None if step.node is None else names[step.node], devices)
    return placed, dra


def test_mig_claim_of_kep_4815_takes_non_overlapping_placements_of_one_gpu():
    """KEP-4815's claim (two 1g.5gb, a 2g.10gb and a 3g.20gb, matchAttribute parentUUID) on a fresh node: in
    request order, first fit: 1g.5gb at memory slice 0, then at 1 (0 is taken), 2g.10gb at 0 misses slice 0 so
    takes 2-3, 3g.20gb at 0 overlaps, takes 4-7: the KEP's picture. Multiprocessors 14+14+28+42 = 98 and copy
    engines 1+1+2+3 = 7 use the GPU up exactly; all from gpu-0."""
    placed, _dra = _run([*NVIDIA_CLASSES, *nvidia_node("a100"), _template("mig-devices", KEP_CLAIM),
                         _pod("pod0", {"resourceClaimTemplateName": "mig-devices"})])
    assert placed["pod0"] == ("a100", ["gpu-0-mig-1g5gb-0-1", "gpu-0-mig-1g5gb-1-1", "gpu-0-mig-2g10gb-2-2",
                                       "gpu-0-mig-3g20gb-4-4"])


def test_mig_claim_moves_to_the_other_gpu_when_one_slice_is_taken():
    """A 1g.5gb held first (gpu-0, slice 0) leaves gpu-0 84 multiprocessors: KEP-4815's claim needs 98, so no
    placement on gpu-0 works; the search backtracks off gpu-0 and, parentUUID matching, puts all four on gpu-1
    as on a fresh GPU. A full GPU then finds neither GPU whole (both have consumed counters): no fit."""
    single = _template("one-mig", {"requests": [_mig_request("mig", "1g.5gb")]})
    full = _template("full-gpu", {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]})
    placed, _dra = _run([*NVIDIA_CLASSES, *nvidia_node("a100"), _template("mig-devices", KEP_CLAIM), single, full,
                         _pod("small", {"resourceClaimTemplateName": "one-mig"}),
                         _pod("kep", {"resourceClaimTemplateName": "mig-devices"}),
                         _pod("whole", {"resourceClaimTemplateName": "full-gpu"})])
    assert placed["small"] == ("a100", ["gpu-0-mig-1g5gb-0-1"])
    assert placed["kep"] == ("a100", ["gpu-1-mig-1g5gb-0-1", "gpu-1-mig-1g5gb-1-1", "gpu-1-mig-2g10gb-2-2",
                                      "gpu-1-mig-3g20gb-4-4"])
    assert placed["whole"] == (None, [])


def test_whole_gpus_and_mig_partitions_exclude_each_other():
    """A full GPU first takes gpu-0 (all of its counters); a 7g.40gb then cannot be gpu-0's (no counter left)
    and takes gpu-1's; two 1g.10gb after that fit nowhere (every memory slice of both GPUs is consumed). Without
    the full GPU, the two 1g.10gb (no constraint) take the first fits in slice order: gpu-0 slices 0-1 and 2-3."""
    full = _template("full-gpu", {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]})
    seven = _template("seven", {"requests": [_mig_request("mig", "7g.40gb")]})
    two = _template("two-1g10gb", {"requests": [{"name": "migs", "exactly": {
        "deviceClassName": "mig.nvidia.com", "count": 2,
        "selectors": [{"cel": {"expression": f"device.attributes['{NVIDIA}'].profile == '1g.10gb'"}}]}}]})
    placed, _dra = _run([*NVIDIA_CLASSES, *nvidia_node("a100"), full, seven, two,
                         _pod("whole", {"resourceClaimTemplateName": "full-gpu"}),
                         _pod("seven", {"resourceClaimTemplateName": "seven"}),
                         _pod("pair", {"resourceClaimTemplateName": "two-1g10gb"})])
    assert placed == {"whole": ("a100", ["gpu-0"]), "seven": ("a100", ["gpu-1-mig-7g40gb-0-8"]), "pair": (None, [])}
    placed, _dra = _run([*NVIDIA_CLASSES, *nvidia_node("a100"), two,
                         _pod("pair", {"resourceClaimTemplateName": "two-1g10gb"})])
    assert placed["pair"] == ("a100", ["gpu-0-mig-1g10gb-0-2", "gpu-0-mig-1g10gb-2-2"])


def example_node(name: str, gpus: int, partitions: int = 0, multiple: bool = False) -> list[dict]:
    """A node as dra-example-driver's gpu profile publishes it (see the module doc)."""
    def capacity(memory_gi: int, compute: int) -> dict:
        out = {"memory": {"value": f"{memory_gi}Gi"}, "compute": {"value": str(compute)}}
        if multiple:
            out["memory"]["requestPolicy"] = {"default": f"{memory_gi}Gi", "validRange": {
                "min": "1Gi", "step": "1Gi", "max": f"{memory_gi}Gi"}}
            out["compute"]["requestPolicy"] = {"default": str(compute), "validRange": {
                "min": "1", "step": "1", "max": str(compute)}}
        return out

    devices, sets = [], []
    for i in range(gpus):
        attrs = {"index": {"int": i}, "uuid": {"string": f"GPU-{name}-{i}"}, "model": {"string": "LATEST-GPU-MODEL"},
                 "driverVersion": {"version": "1.0.0"}}
        extra = {"allowMultipleAllocations": True} if multiple else {}
        if not partitions:
            devices.append({"name": f"gpu-{i}", "attributes": attrs, "capacity": capacity(80, 100), **extra})
            continue
        counter_set = f"gpu-{i}-counters"
        sets.append({"name": counter_set, "counters": {"memory": {"value": "80Gi"}, "compute": {"value": "100"}}})
        memory, compute = 80 // partitions, 100 // partitions
        for j in range(partitions):
            devices.append({"name": f"gpu-{i}-partition-{j}", **extra,
                            "attributes": {**attrs, "partition": {"int": j}, "partitionable": {"bool": True}},
                            "capacity": capacity(memory, compute),
                            "consumesCounters": [{"counterSet": counter_set, "counters": {
                                "memory": {"value": f"{memory}Gi"}, "compute": {"value": str(compute)}}}]})
        devices.append({"name": f"gpu-{i}-full", **extra,
                        "attributes": {**attrs, "partitionable": {"bool": True}, "full": {"bool": True}},
                        "capacity": capacity(80, 100),
                        "consumesCounters": [{"counterSet": counter_set, "counters": {
                            "memory": {"value": "80Gi"}, "compute": {"value": "100"}}}]})
    spec = {"driver": EXAMPLE, "nodeName": name}
    if not sets:
        return [_node(name), {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                              "spec": {**spec, "pool": {"name": name, "resourceSliceCount": 1}, "devices": devices}}]
    pool = {"name": name, "resourceSliceCount": 2}
    return [_node(name),
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-counters"},
             "spec": {**spec, "pool": pool, "sharedCounters": sets}},
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
             "spec": {**spec, "pool": pool, "devices": devices}}]


EXAMPLE_CLASS = _class("gpu.example.com", f"device.driver == '{EXAMPLE}'")
ONE_GPU = {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}


def test_example_shared_claim_across_pods():
    """basic-shared-claim-across-pods: pod0 and pod1 name ResourceClaim single-gpu. pod0 allocates it on the
    first node (a tie between two empty nodes goes to the first), its gpu-0; pod1 finds it allocated there and
    joins: same node, same device, both reserve it, one device in use."""
    namespace = "basic-shared-claim-across-pods"
    claim = {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "single-gpu", "namespace": namespace},
             "spec": {"devices": ONE_GPU}}
    placed, dra = _run([EXAMPLE_CLASS, *example_node("kind-worker", 8), *example_node("kind-worker2", 8), claim,
                        _pod("pod0", {"resourceClaimName": "single-gpu"}, namespace),
                        _pod("pod1", {"resourceClaimName": "single-gpu"}, namespace)])
    assert placed["pod0"] == placed["pod1"] == ("kind-worker", ["gpu-0"])
    shared = dra.claims[(namespace, "single-gpu")]
    assert [r.name for r in shared.reserved_for] == ["pod0", "pod1"]
    assert list(dra.in_use) == [(EXAMPLE, "kind-worker", "gpu-0")]


def test_example_admin_access_sees_every_gpu_in_use():
    """admin-access: a template asking allocationMode All with adminAccess. After a pod holds gpu-0 of the
    node's two, the admin pod still gets both GPUs (admin access ignores devices in use and holds none), so a
    third pod asking one GPU gets gpu-1; a pod asking All without admin access then fits nowhere (both GPUs in
    use: the All request must take each)."""
    namespace = "admin-access"
    admin = _template("multiple-gpus-admin", {"requests": [{"name": "admin-gpu", "exactly": {
        "deviceClassName": "gpu.example.com", "allocationMode": "All", "adminAccess": True}}]}, namespace)
    every = _template("every-gpu", {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": "gpu.example.com", "allocationMode": "All"}}]})
    placed, dra = _run([EXAMPLE_CLASS, *example_node("kind-worker", 2), admin, every,
                        _template("one-gpu", ONE_GPU),
                        {"apiVersion": "v1", "kind": "Namespace", "metadata": {
                            "name": namespace, "labels": {"resource.kubernetes.io/admin-access": "true"}}},
                        _pod("first", {"resourceClaimTemplateName": "one-gpu"}),
                        _pod("pod0", {"resourceClaimTemplateName": "multiple-gpus-admin"}, namespace),
                        _pod("second", {"resourceClaimTemplateName": "one-gpu"}),
                        _pod("all", {"resourceClaimTemplateName": "every-gpu"})])
    assert placed["first"] == ("kind-worker", ["gpu-0"])
    assert placed["pod0"] == ("kind-worker", ["gpu-0", "gpu-1"])
    assert placed["second"] == ("kind-worker", ["gpu-1"])
    assert placed["all"] == (None, [])
    admin_claim = next(c for (ns, _name), c in dra.claims.items() if ns == namespace)
    assert [r.admin_access for r in admin_claim.allocation.results] == [True, True]


def test_example_partitionable_devices():
    """partitionable-devices (gpuPartitions=4, numDevices=2): two partitions of 20Gi/25 each. pod0 asks two:
    the first two in slice order, gpu-0-partition-0 and -1 (40Gi/50 of gpu-0's counters left). A full GPU then
    skips gpu-0-full (needs 80Gi of gpu-0's 40Gi left) and takes gpu-1-full; two more partitions take gpu-0's
    last two; a fifth partition finds no counters left on either GPU."""
    two = _template("gpu-partitions", {"requests": [{"name": "gpu-partition", "exactly": {
        "deviceClassName": "gpu.example.com", "count": 2,
        "selectors": [{"cel": {"expression": f"!has(device.attributes['{EXAMPLE}'].full)"}}]}}]})
    full = _template("full", {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com",
        "selectors": [{"cel": {"expression": f"has(device.attributes['{EXAMPLE}'].full)"}}]}}]})
    one = _template("one-partition", {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com",
        "selectors": [{"cel": {"expression": f"!has(device.attributes['{EXAMPLE}'].full)"}}]}}]})
    placed, _dra = _run([EXAMPLE_CLASS, *example_node("kind-worker", 2, partitions=4), two, full, one,
                         _pod("pod0", {"resourceClaimTemplateName": "gpu-partitions"}),
                         _pod("whole", {"resourceClaimTemplateName": "full"}),
                         _pod("pod1", {"resourceClaimTemplateName": "gpu-partitions"}),
                         _pod("fifth", {"resourceClaimTemplateName": "one-partition"})])
    assert placed["pod0"] == ("kind-worker", ["gpu-0-partition-0", "gpu-0-partition-1"])
    assert placed["whole"] == ("kind-worker", ["gpu-1-full"])
    assert placed["pod1"] == ("kind-worker", ["gpu-0-partition-2", "gpu-0-partition-3"])
    assert placed["fifth"] == (None, [])


def test_example_partitionable_devices_without_a_selector_take_the_first_two():
    """The demo's own template (count 2, no selector) on the same node: the first two devices in slice order,
    gpu-0-partition-0 and -1 (the demo says "two GPU partition devices")."""
    two = _template("gpu-partitions", {"requests": [{"name": "gpu-partition", "exactly": {
        "deviceClassName": "gpu.example.com", "count": 2}}]})
    placed, _dra = _run([EXAMPLE_CLASS, *example_node("kind-worker", 2, partitions=4), two,
                         _pod("pod0", {"resourceClaimTemplateName": "gpu-partitions"})])
    assert placed["pod0"] == ("kind-worker", ["gpu-0-partition-0", "gpu-0-partition-1"])


def test_example_allow_multiple_allocations_partitionable_pods_share_partition_0():
    """gpu-allow-multiple-allocations-partitionable (one GPU, 4 partitions, multiple allocations): two claims each
    asking 8Gi memory and 10 compute of a device. The demo expects both pods on gpu-0-partition-0: the first
    device in slice order has 20Gi/25 of capacity, 8Gi/10 taken by pod0 leaves 12Gi/15 for pod1. A third pair
    of requests fits there no more (4Gi left) and takes partition-1."""
    namespace = "gpu-allow-multiple-allocations-partitionable"

    def claim(name: str) -> dict:
        return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.example.com",
                    "capacity": {"requests": {"memory": "8Gi", "compute": "10"}}}}]}}}

    placed, dra = _run([EXAMPLE_CLASS, *example_node("kind-worker", 1, partitions=4, multiple=True),
                        claim("shared-partition-pod0"), claim("shared-partition-pod1"), claim("third"),
                        _pod("pod0", {"resourceClaimName": "shared-partition-pod0"}, namespace),
                        _pod("pod1", {"resourceClaimName": "shared-partition-pod1"}, namespace),
                        _pod("pod2", {"resourceClaimName": "third"}, namespace)])
    assert placed["pod0"] == placed["pod1"] == ("kind-worker", ["gpu-0-partition-0"])
    assert placed["pod2"] == ("kind-worker", ["gpu-0-partition-1"])
    results = [dra.claims[(namespace, n)].allocation.results[0] for n in ("shared-partition-pod0",
                                                                          "shared-partition-pod1")]
    assert all(r.share_id for r in results) and results[0].share_id != results[1].share_id
    assert [dict(r.consumed_capacity) for r in results] == [{"memory": 8 * 2**30 * 10**9, "compute": 10 * 10**9}] * 2
