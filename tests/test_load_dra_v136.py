"""The fields DRA gained up to v1.36/v1.37 load exactly, what the API server refuses is refused with its words, and
what only the allocator finds wrong is reported as kube-scheduler reports it.

Refused at load (`pkg/apis/resource/validation`, messages as the API server words them, field named, exit 2):
an unknown taint effect, a toleration operator, a request policy on a device that does not allow multiple
allocations, request-policy values out of order or without the default, a step of zero, a slice with both
`sharedCounters` and `devices`, a capacity that is no quantity. Accepted by the API server but not usable by
the allocator (each object is valid alone): counters a device consumes that no slice of its pool declares
(the pool is invalid: "invalid resource pools were encountered" on its node, and a warning naming it), a
request for more capacity than any device has ("cannot allocate all claims"), slices of one pool disagreeing on
their count (a warning).
"""

from __future__ import annotations

import json

import pytest

from kubefit.cli import main
from kubefit.errors import InputError
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document

V1 = "resource.k8s.io/v1"
NANO = 10**9


def _load(*docs: dict) -> Scenario:
    scenario = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs)}), "f.json"):
        add_document(scenario, doc)
    return scenario


def _slice(devices=None, name="s1", counters=None, **spec) -> dict:
    body = {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1}}
    if devices is not None:
        body["devices"] = devices
    if counters is not None:
        body["sharedCounters"] = counters
    body.update(spec)
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def _shared(value="4") -> dict:
    return {"name": "vgpu", "allowMultipleAllocations": True,
            "capacity": {"cores": {"value": value, "requestPolicy": {
                "default": "1", "validRange": {"min": "1", "step": "1"}}}}}


def _claim(requests: list, name="c1") -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": requests}}}


def test_v136_fields_load_exactly():
    """Counters and their consumption, request policies, taints, tolerations, capacity requests and a bound share
    (shareID, consumed capacity) come out as the allocator reads them (nano-units)."""
    mig = {"name": "mig-0", "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "10Gi"}}}],
           "taints": [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]}
    scenario = _load(
        _slice([mig, _shared()], name="devices", pool={"name": "n1", "resourceSliceCount": 2}),
        _slice(counters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}], name="counters",
               pool={"name": "n1", "resourceSliceCount": 2}),
        _claim([{"name": "a", "exactly": {"deviceClassName": "vgpu", "capacity": {"requests": {"cores": "2"}},
                                           "tolerations": [{"key": "maintenance", "operator": "Exists"}]}}]))
    slices = {s.meta.name: s for s in scenario.objects.of("ResourceSlice")}
    device, shared = slices["devices"].devices
    assert device.consumes[0].counter_set == "gpu-0" and device.consumes[0].counters == {"memory": 10 * 2**30 * NANO}
    assert (device.taints[0].key, device.taints[0].effect) == ("maintenance", "NoSchedule")
    assert shared.allow_multiple and shared.policies["cores"].valid_range == (NANO, None, NANO)
    assert shared.policies["cores"].default == NANO
    assert slices["counters"].shared_counters[0].counters == {"memory": 80 * 2**30 * NANO}
    sub = scenario.objects.of("ResourceClaim")[0].spec.requests[0].exactly
    assert sub.capacity == {"cores": 2 * NANO}
    assert (sub.tolerations[0].operator, sub.tolerations[0].effect) == ("Exists", "")


@pytest.mark.parametrize("doc, field, message", [
    (_slice([{"name": "g", "taints": [{"key": "k", "effect": "Sometimes"}]}]), "spec.devices[0].taints[0].effect",
     'Unsupported value: "Sometimes": supported values: "NoExecute", "NoSchedule", "None"'),
    (_slice([{"name": "g", "taints": [{"key": "k"}]}]), "spec.devices[0].taints[0].effect", "Required value"),
    (_slice([{"name": "g", "capacity": {"c": {"value": "4", "requestPolicy": {"default": "1"}}}}]),
     "spec.devices[0].capacity[c].requestPolicy", "Forbidden: allowMultipleAllocations must be true"),
    (_slice([{**_shared(), "capacity": {"cores": {"value": "4", "requestPolicy": {
        "default": "1", "validValues": ["2", "1"]}}}}]), "spec.devices[0].capacity[cores].requestPolicy.validValues[1]",
     "values must be sorted in ascending order"),
    (_slice([{**_shared(), "capacity": {"cores": {"value": "4", "requestPolicy": {
        "default": "3", "validValues": ["1", "2"]}}}}]), "spec.devices[0].capacity[cores].requestPolicy.validValues",
     "default value is not valid according to the requestPolicy"),
    (_slice([{**_shared(), "capacity": {"cores": {"value": "4", "requestPolicy": {"validValues": ["1"]}}}}]),
     "spec.devices[0].capacity[cores].requestPolicy.default", "Required value: required when validValues is defined"),
    (_slice([{**_shared(), "capacity": {"cores": {"value": "4", "requestPolicy": {
        "default": "1", "validRange": {"min": "1", "step": "0"}}}}}]),
     "spec.devices[0].capacity[cores].requestPolicy.validRange.step", "must be greater than zero"),
    (_slice([{**_shared(), "capacity": {"cores": {"value": "4", "requestPolicy": {
        "default": "5", "validRange": {"min": "1"}}}}}]),
     "spec.devices[0].capacity[cores].requestPolicy.validRange.max", None),
    (_slice([{"name": "g"}], counters=[{"name": "c", "counters": {"m": {"value": "1"}}}]), "spec",
     "only one of `sharedCounters` or `devices` is allowed"),
    (_slice([{"name": "g", "capacity": {"memory": {"value": "80GiB"}}}]), "spec.devices[0].capacity[memory].value",
     "quantities must match"),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "g", "tolerations": [{"key": "k", "operator": "Maybe"}]}}]),
     "spec.devices.requests[0].exactly.tolerations[0].operator", 'Unsupported value: "Maybe"'),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "g", "tolerations": [
        {"key": "k", "operator": "Exists", "value": "v"}]}}]), "spec.devices.requests[0].exactly.tolerations[0].value",
     "must be empty for operator `Exists`"),
])
def test_refused_as_the_api_server_refuses(doc, field, message):
    if message is None:  # a default above a capacity that has no max: the range check itself does not refuse it
        _load(doc)
        return
    with pytest.raises(InputError) as err:
        _load(doc)
    assert err.value.field == field
    assert message in err.value.message


@pytest.mark.parametrize("value, kind", [(-0.5, "float"), (7, "int"), (True, "bool"), ("x", "str"), ({"a": 1}, "dict")])
def test_consumes_counters_not_a_list_is_refused_by_name(value, kind):
    """A device's `consumesCounters` that is not a list is refused naming the field, whatever the value (fuzz seed 61
    found a number reaching the common-device shortcut, `_plain_device`, as an internal TypeError)."""
    with pytest.raises(InputError) as err:
        _load(_slice([{"name": "g", "attributes": {"uuid": {"string": "GPU-0"}}, "consumesCounters": value}]))
    assert err.value.field == "spec.devices[0].consumesCounters"
    assert err.value.message == f"must be a list, got {kind}"


def test_a_refused_object_is_one_line_and_exit_2(tmp_path, capsys):
    """Through the command: one line naming file, object and field, exit 2, no traceback."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
        _slice([{"name": "g", "taints": [{"key": "k", "effect": "Evict"}]}])]}))
    rc = main(["simulate", "-f", str(path), "--kube-version", "1.36"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "Traceback" not in err and len(err.splitlines()) == 1
    assert "ResourceSlice/s1" in err and "spec.devices[0].taints[0].effect" in err and '"Evict"' in err


def _scenario(tmp_path, *objects) -> str:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
    gpu = {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"},
           "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "g"}]}}],
                    "resourceClaims": [{"name": "g", "resourceClaimName": "c1"}]}}
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, gpu, pod, *objects]}))
    return str(path)


def _score(capsys, path: str, *args) -> dict:
    capsys.readouterr()
    assert main(["score", "-f", path, "--pod", "p", "-o", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_counters_no_slice_declares(tmp_path, capsys):
    """A partition consuming counter set "gpu-9" that its pool does not declare: the pool is invalid to the
    v1.36 allocator (`validateDeviceCounterConsumption`), nothing else fits, so the node fails with "invalid
    resource pools were encountered"; the warning names the pool and the missing set. v1.34 (partitionable
    devices off) never allocates a counter-consuming device: "cannot allocate all claims", no pool problem."""
    pool = {"name": "n1", "resourceSliceCount": 2}
    path = _scenario(tmp_path, _slice([{"name": "mig", "consumesCounters": [
        {"counterSet": "gpu-9", "counters": {"memory": {"value": "10Gi"}}}]}], name="devices", pool=pool),
        _slice(counters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}], name="counters", pool=pool),
        _claim([{"name": "g", "exactly": {"deviceClassName": "gpu"}}]))
    got = _score(capsys, path, "--kube-version", "1.36")
    assert got["filter"]["n1"]["reasons"] == ["invalid resource pools were encountered"]
    assert any("pool gpu.example.com/n1: counter set gpu-9 not found (device mig)" in w for w in got["warnings"])
    old = _score(capsys, path, "--kube-version", "1.34")
    assert old["filter"]["n1"]["reasons"] == ["cannot allocate all claims"]
    assert not any("counter set" in w for w in old["warnings"])


def test_more_capacity_than_any_device_has(tmp_path, capsys):
    """A share of 8 cores of a 4-core device: `CmpRequestOverCapacity` refuses the device, nothing else fits."""
    path = _scenario(tmp_path, _slice([_shared("4")]),
                     _claim([{"name": "g", "exactly": {"deviceClassName": "gpu",
                                                       "capacity": {"requests": {"cores": "8"}}}}]))
    got = _score(capsys, path, "--kube-version", "1.36")
    assert got["filter"]["n1"]["reasons"] == ["cannot allocate all claims"]
    fits = _score(capsys, _scenario(tmp_path, _slice([_shared("8")]), _claim(
        [{"name": "g", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"cores": "8"}}}}])),
        "--kube-version", "1.36")
    assert fits["filter"]["n1"]["code"] == "Success"


def test_slices_of_one_pool_disagree(tmp_path, capsys):
    path = _scenario(tmp_path, _slice([{"name": "a"}], name="s1", pool={"name": "n1", "resourceSliceCount": 2}),
                     _slice([{"name": "b"}], name="s2", pool={"name": "n1", "resourceSliceCount": 3}),
                     _claim([{"name": "g", "exactly": {"deviceClassName": "gpu"}}]))
    got = _score(capsys, path, "--kube-version", "1.36")
    assert any("disagree on spec.pool.resourceSliceCount (2, 3)" in w for w in got["warnings"])
