"""DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate load strictly (resource.k8s.io/v1).

What the API server accepts loads (with its defaults: allocationMode ExactCount, count 1); what it refuses
is one error naming file, object and field.
"""

from __future__ import annotations

import json

import pytest

from kubefit.api.dra import ALL, EXACT_COUNT
from kubefit.errors import InputError
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from tests_support import golden_cases

V1 = "resource.k8s.io/v1"


def _load(*docs: dict) -> Scenario:
    scenario = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs)}), "f.json"):
        add_document(scenario, doc)
    return scenario


def _slice(**spec) -> dict:
    body = {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "H100"}, "index": {"int": 0},
                                                         "v": {"version": "1.2.3"}, "x.io/numa": {"int": 1}},
                         "capacity": {"memory": {"value": "80Gi"}}}]}
    body.update(spec)
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "s1"}, "spec": body}


def _claim(requests: list, **extra) -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "c1", "namespace": "ns"},
            "spec": {"devices": {"requests": requests, **extra}}}


def test_golden_objects_load():
    """Every DRA object of the golden cases loads, and what the allocator reads comes out exact."""
    case = golden_cases("kube-scheduler/dra-cases.jsonl")[2]
    scenario = _load(*case["deviceClasses"], *case["resourceSlices"], *case["resourceClaims"])
    slices = scenario.objects.of("ResourceSlice")
    assert len(slices) == len(case["resourceSlices"])
    first = slices[0].devices[0]
    assert first.attributes["model"].value == "H100" and first.attributes["example.com/numa"].value == 0
    assert first.capacity["memory"] == 80 * 2**30 * 10**9  # nano-units
    claims = {c.meta.name: c for c in scenario.objects.of("ResourceClaim")}
    held = claims["held-app0-4864ada1-002"]
    assert [r.device for r in held.allocation.results] == ["gpu-0", "gpu-1"]
    assert held.reserved_for[0].uid == "pod-000034"
    want = claims["want-gpu"]
    assert [s.name for s in want.spec.requests[0].first_available] == ["big", "small"]
    assert want.allocation is None
    assert len(scenario.objects.of("DeviceClass")) == 4


def test_request_defaults_as_the_api_server():
    """An `exactly` request without allocationMode is ExactCount of 1; All has no count."""
    scenario = _load(_claim([{"name": "a", "exactly": {"deviceClassName": "gpu"}},
                             {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}]))
    a, b = scenario.objects.of("ResourceClaim")[0].spec.requests
    assert (a.exactly.allocation_mode, a.exactly.count) == (EXACT_COUNT, 1)
    assert (b.exactly.allocation_mode, b.exactly.count) == (ALL, 0)


def test_a_zero_count_is_no_count():
    """`count: 0` is what Go decodes for no count (an int64): `SetDefaults_ExactDeviceRequest` and
    `SetDefaults_DeviceSubRequest` make an ExactCount of 0 a count of 1; the API server accepts it."""
    scenario = _load(_claim([{"name": "a", "exactly": {"deviceClassName": "gpu", "count": 0}},
                             {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "gpu", "count": 0}]}]))
    a, b = scenario.objects.of("ResourceClaim")[0].spec.requests
    assert a.exactly.count == 1 and b.first_available[0].count == 1


@pytest.mark.parametrize("doc, field, message", [
    (_slice(drvier="x"), "spec.drvier", "unknown field 'drvier'"),
    (_slice(devices=[{"name": "g", "attributes": {"m": {"string": "a", "int": 1}}}]), "spec.devices[0].attributes.m",
     "exactly one value"),
    (_slice(devices=[{"name": "g", "attributes": {"v": {"version": "1.02.0"}}}]), "spec.devices[0].attributes.v.version",
     "must be a semantic version"),
    (_slice(devices=[{"name": "g", "capacity": {"memory": {"value": "lots"}}}]), "spec.devices[0].capacity[memory].value",
     "quantities must match"),
    (_slice(devices=[{"name": "g"}, {"name": "g"}]), "spec.devices", "duplicate device name 'g'"),
    (_slice(allNodes=True), "spec", "exactly one of nodeName, nodeSelector, allNodes"),
    (_claim([{"name": "a"}]), "spec.devices.requests[0]", "exactly one of exactly or firstAvailable"),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "gpu", "count": -1}}]), "spec.devices.requests[0].exactly.count",
     "must be greater than zero"),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "gpu", "allocationMode": "Some"}}]),
     "spec.devices.requests[0].exactly.allocationMode", "must be one of ExactCount, All"),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": "device.("}}]}}]),
     "spec.devices.requests[0].exactly.selectors[0].cel.expression", "Syntax error"),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": "gpu.x"}}]}}]),
     "spec.devices.requests[0].exactly.selectors[0].cel.expression", "undeclared reference to 'gpu'"),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "gpu"}}], constraints=[{"matchAttribute": "numa"}]),
     "spec.devices.constraints[0].matchAttribute", "fully qualified name"),
    (_claim([{"name": "a", "exactly": {"deviceClassName": "gpu"}}], constraints=[{"requests": ["b"],
                                                                                 "matchAttribute": "x.io/n"}]),
     "spec.devices.constraints[0].requests[0]", "must be the name of a request"),
])
def test_refused_with_the_field_named(doc, field, message):
    with pytest.raises(InputError) as err:
        _load(doc)
    assert err.value.field == field
    assert message in err.value.message
    assert err.value.file == "f.json"


def test_pod_resource_claims_are_checked():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "g", "resourceClaimName": "a",
                                                                      "resourceClaimTemplateName": "t"}]}}
    with pytest.raises(InputError, match="exactly one of resourceClaimName or resourceClaimTemplateName"):
        _load(pod)
    pod["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "t"}]
    pod["status"] = {"resourceClaimStatuses": [{"name": "g", "resourceClaimName": "p-g-abc12"}]}
    assert _load(pod).pods[0].resource_claim_statuses == (("g", "p-g-abc12"),)


@pytest.mark.parametrize("stream", ["never", "always"])
def test_v1beta2_objects_load_as_their_v1_twins(tmp_path, capsys, monkeypatch, stream):
    """resource.k8s.io/v1beta2 has v1's fields one for one (its conversion copies each): the DRA example written
    in v1beta2 is scheduled exactly as in v1, through either reader."""
    from kubefit.cli import main
    from tests_support import ROOT

    monkeypatch.setenv("KUBEFIT_STREAM", stream)
    text = (ROOT / "examples" / "dra" / "cluster.yaml").read_text()
    assert "apiVersion: resource.k8s.io/v1\n" in text
    beta = tmp_path / "beta2.yaml"
    beta.write_text(text.replace("apiVersion: resource.k8s.io/v1\n", "apiVersion: resource.k8s.io/v1beta2\n"))
    runs = []
    for path in (ROOT / "examples" / "dra" / "cluster.yaml", beta):
        assert main(["simulate", "-f", str(path), "--tie-break", "first", "-o", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        runs.append([(s["pod"], s.get("node"), s.get("devices")) for s in out["steps"]])
    assert runs[0] == runs[1] and any(node for _p, node, _d in runs[0])


def _as_v1beta1(body: dict) -> dict:
    """A v1 DRA object written as v1beta1 by hand (devices' fields under `basic`, requests' `exactly` flattened)."""
    if not str(body.get("apiVersion", "")).startswith("resource.k8s.io/"):
        return body
    body = {**body, "apiVersion": "resource.k8s.io/v1beta1"}
    spec = body.get("spec") or {}
    if body["kind"] == "ResourceSlice":
        body["spec"] = {**spec, "devices": [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
                                            for d in spec.get("devices") or []]}
    claim = spec.get("spec") if body["kind"] == "ResourceClaimTemplate" else spec
    if body["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
        for request in claim["devices"]["requests"]:
            request.update(request.pop("exactly", {}))
    return body


@pytest.mark.parametrize("stream", ["never", "always"])
def test_v1beta1_objects_load_converted_as_the_api_server_converts_them(tmp_path, capsys, monkeypatch, stream):
    """The DRA example written in v1beta1 (devices under `basic`, requests without `exactly`) is scheduled as in
    v1: `Convert_v1beta1_Device_To_resource_Device` and `Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest`."""
    import yaml

    from kubefit.cli import main
    from tests_support import ROOT

    monkeypatch.setenv("KUBEFIT_STREAM", stream)
    original = ROOT / "examples" / "dra" / "cluster.yaml"
    docs = [_as_v1beta1(d) for d in yaml.safe_load_all(original.read_text()) if d]
    assert any(d.get("apiVersion") == "resource.k8s.io/v1beta1" and d["kind"] == "ResourceSlice" for d in docs)
    beta = tmp_path / "beta1.yaml"
    beta.write_text(yaml.safe_dump_all(docs))
    runs = []
    for path in (original, beta):
        assert main(["simulate", "-f", str(path), "--tie-break", "first", "-o", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        runs.append([(s["pod"], s.get("node"), s.get("devices")) for s in out["steps"]])
    assert runs[0] == runs[1] and any(node for _p, node, _d in runs[0])


@pytest.mark.parametrize(("body", "field"), [
    ({"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": "d", "nodeName": "n", "pool": {
        "name": "p", "resourceSliceCount": 1}, "devices": [{"name": "g", "basic": {"attributes": {"x": {"int": 1, "bool": True}}}}]}},
     "spec.devices[0].basic.attributes"),
    ({"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": "d", "nodeName": "n", "pool": {
        "name": "p", "resourceSliceCount": 1}, "devices": [{"name": "g", "attributes": {}}]}}, "spec.devices[0]"),
    ({"kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {"requests": [
        {"name": "r", "deviceClassName": "gpu", "count": -2}]}}}, "spec.devices.requests[0].count"),
])
def test_v1beta1_errors_name_the_field_as_written(tmp_path, capsys, body, field):
    from kubefit.cli import main

    path = tmp_path / "beta1.json"
    path.write_text(json.dumps({"apiVersion": "resource.k8s.io/v1beta1", **body}))
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert f": {field}" in err and ".exactly" not in err, err
