"""resource.k8s.io/v1beta1 → v1, as the API server converts what it is given (`pkg/apis/resource/v1beta1/
conversion.go`): DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate of v1beta1 differ from v1
in two places only (every other field is the same, `k8s.io/api/resource/v1beta1/types.go`):

* a slice's device holds its fields under `basic` (`Convert_v1beta1_Device_To_resource_Device`: `basic`'s fields
  lifted beside `name`); a slice's `nodeName: ""` and `allNodes: false` are "not set" in v1
  (`Convert_v1beta1_ResourceSliceSpec_To_resource_ResourceSliceSpec`);
* a claim's request holds its exact-count fields beside `name` (`Convert_v1beta1_DeviceRequest_To_resource_
  DeviceRequest`: when any of `deviceClassName`, `selectors`, `allocationMode`, `count`, `adminAccess`,
  `tolerations`, `capacity` is set, they become `exactly`; `firstAvailable` stays).

`as_v1` converts a document's body (a copy: the input stays as given); `v1beta1_path` puts a v1 field path
back the way the user wrote it, so that an error names the field in their file. A field v1beta1 does not have
is refused here, by its v1beta1 path, before the conversion could make it look like a v1 one.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kubefit.manifests.decode import check_fields, entries, mapping
from kubefit.manifests.documents import Document

V1BETA1 = "resource.k8s.io/v1beta1"
_BASIC = ("attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes", "taints",
          "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations")
_EXACT = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")
DEVICE_FIELDS = frozenset({"name", "basic"})
BASIC_FIELDS = frozenset(_BASIC)
REQUEST_FIELDS = frozenset({"name", "firstAvailable", *_EXACT})
_DEVICE_PATH = re.compile(r"^(spec\.devices\[\d+\])\.(?!name$|name\.)(.+)$")
_REQUEST_PATH = re.compile(r"^((?:spec\.spec|spec)\.devices\.requests\[\d+\])\.exactly(\..+)?$")


def as_v1(doc: Document) -> Document:
    """The document as v1 (`doc` itself when it is no v1beta1 object)."""
    if doc.body.get("apiVersion") != V1BETA1:
        return doc
    body = copy.deepcopy(doc.body)
    body["apiVersion"] = "resource.k8s.io/v1"
    spec = body.get("spec")
    converted = Document(body, doc.source, doc.index, doc.position)
    if not isinstance(spec, dict):
        return converted
    if doc.kind == "ResourceSlice":
        _slice(spec, doc)
    elif doc.kind == "ResourceClaim":
        _claim(spec, doc, "spec")
    elif doc.kind == "ResourceClaimTemplate" and isinstance(spec.get("spec"), dict):
        _claim(spec["spec"], doc, "spec.spec")
    return converted


def _slice(spec: dict[str, Any], doc: Document) -> None:
    if spec.get("nodeName") == "":
        del spec["nodeName"]
    if spec.get("allNodes") is False:
        del spec["allNodes"]
    devices = spec.get("devices")
    if not isinstance(devices, list):
        return
    for i, (where, device) in enumerate(entries(devices, doc, "spec.devices", DEVICE_FIELDS,
                                                "a device (a mapping with name)")):
        basic = device.get("basic")
        lifted = {"name": device.get("name")} if "name" in device else {}
        if basic is not None:
            basic = mapping(basic, doc, f"{where}.basic")
            check_fields(basic, BASIC_FIELDS, doc, f"{where}.basic")
            lifted.update(basic)
        devices[i] = lifted


def _claim(spec: dict[str, Any], doc: Document, path: str) -> None:
    devices = spec.get("devices")
    requests = devices.get("requests") if isinstance(devices, dict) else None
    if not isinstance(requests, list):
        return
    for i, (_where, request) in enumerate(entries(requests, doc, f"{path}.devices.requests", REQUEST_FIELDS,
                                                  "a request (a mapping with name)")):
        out = {k: request[k] for k in ("name", "firstAvailable") if k in request}
        if _any_exact_field(request):  # hasAnyMainRequestFieldsSet
            out["exactly"] = {k: request[k] for k in _EXACT if k in request}
        requests[i] = out


def _any_exact_field(request: dict[str, Any]) -> bool:
    return (request.get("deviceClassName") not in (None, "") or request.get("selectors") is not None
            or request.get("allocationMode") not in (None, "") or request.get("count") not in (None, 0)
            or any(request.get(k) is not None for k in ("adminAccess", "tolerations", "capacity")))


def v1beta1_path(kind: str, path: str | None) -> str | None:
    """A v1 field path of a converted document, as the user's v1beta1 file has it."""
    if not path:
        return path
    if kind == "ResourceSlice":
        return _DEVICE_PATH.sub(r"\1.basic.\2", path)
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        return _REQUEST_PATH.sub(lambda m: m.group(1) + (m.group(2) or ""), path)
    return path

