"""Documents → Dynamic Resource Allocation objects: DeviceClass, ResourceSlice, ResourceClaim and
ResourceClaimTemplate of resource.k8s.io/v1 (strict: an unknown field is an error naming it).

Fields are those of the v1.34 API types (`k8s.io/api/resource/v1/types.go`); what the API server's
defaulting adds is added here (`allocationMode: ExactCount`, `count: 1`), and what its validation
refuses (`pkg/apis/resource/validation`) is refused with the field named: a request that is neither
`exactly` nor `firstAvailable`, an allocation mode other than ExactCount/All, a count below 1, an
attribute with no or several values, a version that is no semantic version, a slice that says on which
nodes its devices are in no or several ways, a CEL selector that does not parse. Fields of features off
by default in v1.34 (consumable capacity, partitionable devices, device taints, binding conditions) are
decoded and kept so that the allocator leaves them out exactly as kube-scheduler does.

`DECODERS` maps each kind to its decoder `(doc, warnings) -> object`; `load.add_document` puts the result
in `Scenario.objects`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubefit.api.dra import (
    ALLOCATION_MODES,
    ALLOCATION_RESULTS_MAX_SIZE,
    API_VERSION,
    EXACT_COUNT,
    RESERVED_FOR_MAX_SIZE,
    SEMVER,
    AllocationResult,
    ClaimSpec,
    ConsumerReference,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubefit.k8s.quantity import QuantityError, parse_quantity
from kubefit.manifests.cluster import object_meta
from kubefit.manifests.decode import (
    check_api_version,
    check_fields,
    entries,
    fail,
    mapping,
    sequence,
    string,
    string_map,
)
from kubefit.manifests.decode import integer as _int
from kubefit.manifests.documents import Document
from kubefit.manifests.load import _check_term

DEVICE_CLASS_SPEC_FIELDS = frozenset({"selectors", "config", "extendedResourceName"})
SELECTOR_FIELDS = frozenset({"cel"})
CEL_FIELDS = frozenset({"expression"})
CLASS_CONFIG_FIELDS = frozenset({"opaque"})
CLAIM_CONFIG_FIELDS = frozenset({"requests", "opaque"})
OPAQUE_FIELDS = frozenset({"driver", "parameters"})
SLICE_SPEC_FIELDS = frozenset({"driver", "pool", "nodeName", "nodeSelector", "allNodes", "devices",
                               "perDeviceNodeSelection", "sharedCounters"})
POOL_FIELDS = frozenset({"name", "generation", "resourceSliceCount"})
DEVICE_FIELDS = frozenset({"name", "attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector",
                           "allNodes", "taints", "bindsToNode", "bindingConditions", "bindingFailureConditions",
                           "allowMultipleAllocations"})
ATTRIBUTE_KINDS = ("int", "bool", "string", "version")
CAPACITY_FIELDS = frozenset({"value", "requestPolicy"})
TAINT_FIELDS = frozenset({"key", "value", "effect", "timeAdded"})
CLAIM_SPEC_FIELDS = frozenset({"devices"})
DEVICE_CLAIM_FIELDS = frozenset({"requests", "constraints", "config"})
REQUEST_FIELDS = frozenset({"name", "exactly", "firstAvailable"})
EXACT_FIELDS = frozenset({"deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                          "capacity"})
SUBREQUEST_FIELDS = frozenset({"name", "deviceClassName", "selectors", "allocationMode", "count", "tolerations",
                               "capacity"})
TOLERATION_FIELDS = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})
CONSTRAINT_FIELDS = frozenset({"requests", "matchAttribute", "distinctAttribute"})
CLAIM_STATUS_FIELDS = frozenset({"allocation", "reservedFor", "devices"})
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"  # the resourceclaim controller's annotation
ALLOCATION_FIELDS = frozenset({"devices", "nodeSelector", "allocationTimestamp"})
ALLOCATION_DEVICES_FIELDS = frozenset({"results", "config"})
RESULT_FIELDS = frozenset({"request", "driver", "pool", "device", "adminAccess", "tolerations", "bindingConditions",
                           "bindingFailureConditions", "shareID", "consumedCapacity"})
CONSUMER_FIELDS = frozenset({"apiGroup", "resource", "name", "uid"})
TEMPLATE_SPEC_FIELDS = frozenset({"metadata", "spec"})
NODE_SELECTOR_FIELDS = frozenset({"nodeSelectorTerms"})
MAX_DEVICES_PER_SLICE = 128  # ResourceSliceMaxDevices
MAX_REQUESTS = 32  # DeviceRequestsMaxSize
MAX_SUBREQUESTS = 8  # FirstAvailableDeviceRequestMaxSize
MAX_ATTRIBUTES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_SELECTOR_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength


def _bool(value: Any, doc: Document, path: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise fail(doc, path, f"must be true or false, got {value!r}")
    return value


def _strings(value: Any, doc: Document, path: str) -> tuple[str, ...]:
    return tuple(string(v, doc, f"{path}[{i}]") for i, v in enumerate(sequence(value, doc, path)))


def _selectors(value: Any, doc: Document, path: str) -> tuple[str, ...]:
    """`selectors[]`: each a CEL expression that parses (the API server refuses one that does not)."""
    from kubefit.k8s.cel import CelError, compile_selector

    out = []
    for where, selector in entries(value, doc, path, SELECTOR_FIELDS, "a selector (a mapping with cel)"):
        cel = mapping(selector.get("cel"), doc, f"{where}.cel")
        check_fields(cel, CEL_FIELDS, doc, f"{where}.cel")
        expression = string(cel.get("expression"), doc, f"{where}.cel.expression")
        if not expression:
            raise fail(doc, f"{where}.cel.expression", "a CEL expression is required")
        if len(expression) > MAX_SELECTOR_LENGTH:
            raise fail(doc, f"{where}.cel.expression", f"must have at most {MAX_SELECTOR_LENGTH} bytes")
        try:
            compile_selector(expression)
        except CelError as exc:
            raise fail(doc, f"{where}.cel.expression", str(exc)) from None
        out.append(expression)
    return tuple(out)


def _opaque_configs(value: Any, doc: Document, path: str, known: frozenset[str]) -> tuple[dict[str, Any], ...]:
    out = []
    for where, config in entries(value, doc, path, known, "a configuration (a mapping with opaque)"):
        check_fields(mapping(config.get("opaque"), doc, f"{where}.opaque"), OPAQUE_FIELDS, doc, f"{where}.opaque")
        if "requests" in known:
            _strings(config.get("requests"), doc, f"{where}.requests")
        out.append(config)
    return tuple(out)


def _node_selector(value: Any, doc: Document, path: str) -> dict[str, Any] | None:
    """A v1 NodeSelector as given (None when absent), its terms' shapes checked."""
    if value is None:
        return None
    selector = mapping(value, doc, path)
    check_fields(selector, NODE_SELECTOR_FIELDS, doc, path)
    terms = sequence(selector.get("nodeSelectorTerms"), doc, f"{path}.nodeSelectorTerms")
    for i, term in enumerate(terms):
        _check_term(term, doc, f"{path}.nodeSelectorTerms[{i}]")
    return selector


# --------------------------------------------------------------------------- DeviceClass

def decode_device_class(doc: Document, warnings: list[str]) -> DeviceClass:
    check_api_version(doc, API_VERSION)
    meta, spec, _status = object_meta(doc, namespaced=False)
    check_fields(spec, DEVICE_CLASS_SPEC_FIELDS, doc, "spec")
    return DeviceClass(meta, selectors=_selectors(spec.get("selectors"), doc, "spec.selectors"),
                       config=_opaque_configs(spec.get("config"), doc, "spec.config", CLASS_CONFIG_FIELDS),
                       extended_resource_name=string(spec.get("extendedResourceName"), doc,
                                                     "spec.extendedResourceName"))


# --------------------------------------------------------------------------- ResourceSlice

def _attribute(value: Any, doc: Document, path: str) -> DeviceAttribute:
    body = mapping(value, doc, path)
    check_fields(body, frozenset(ATTRIBUTE_KINDS), doc, path)
    given = [k for k in ATTRIBUTE_KINDS if body.get(k) is not None]
    if len(given) != 1:
        raise fail(doc, path, "exactly one value must be specified (int, bool, string or version)")
    kind = given[0]
    raw = body[kind]
    if kind == "int":
        number = _int(raw, doc, f"{path}.int")
        if not -(2**63) <= number < 2**63:
            raise fail(doc, f"{path}.int", "must fit in int64")
        return DeviceAttribute(kind, number)
    if kind == "bool":
        return DeviceAttribute(kind, bool(_bool(raw, doc, f"{path}.bool")))
    text = string(raw, doc, f"{path}.{kind}")
    if len(text) > 64:
        raise fail(doc, f"{path}.{kind}", "must have at most 64 bytes")
    if kind == "version" and not SEMVER.match(text):
        raise fail(doc, f"{path}.version", f"must be a semantic version (semver 2.0.0), got {text!r}")
    return DeviceAttribute(kind, text)


def _capacity(value: Any, doc: Document, path: str) -> int:
    body = mapping(value, doc, path)
    check_fields(body, CAPACITY_FIELDS, doc, path)
    raw = body.get("value")
    if raw is None:
        raise fail(doc, f"{path}.value", "a capacity needs a value")
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        raise fail(doc, f"{path}.value", str(exc)) from None


def _device(raw: dict[str, Any], doc: Document, path: str) -> Device:
    name = string(raw.get("name"), doc, f"{path}.name")
    if not name:
        raise fail(doc, f"{path}.name", "a device name is required")
    attributes = {str(k): _attribute(v, doc, f"{path}.attributes.{k}")
                  for k, v in mapping(raw.get("attributes"), doc, f"{path}.attributes").items()}
    capacity = {str(k): _capacity(v, doc, f"{path}.capacity.{k}")
                for k, v in mapping(raw.get("capacity"), doc, f"{path}.capacity").items()}
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES:
        raise fail(doc, path, f"must have at most {MAX_ATTRIBUTES} attributes and capacities")
    taints = tuple(t for _w, t in entries(raw.get("taints"), doc, f"{path}.taints", TAINT_FIELDS,
                                          "a taint (a mapping with key and effect)"))
    for key in ("bindingConditions", "bindingFailureConditions"):
        _strings(raw.get(key), doc, f"{path}.{key}")
    return Device(name, attributes, capacity,
                  node_name=string(raw.get("nodeName"), doc, f"{path}.nodeName") or None,
                  all_nodes=bool(_bool(raw.get("allNodes"), doc, f"{path}.allNodes")),
                  node_selector=_node_selector(raw.get("nodeSelector"), doc, f"{path}.nodeSelector"),
                  consumes_counters=bool(sequence(raw.get("consumesCounters"), doc, f"{path}.consumesCounters")),
                  binding_conditions=bool(raw.get("bindingConditions")),
                  binds_to_node=bool(_bool(raw.get("bindsToNode"), doc, f"{path}.bindsToNode")), taints=taints)


def decode_resource_slice(doc: Document, warnings: list[str]) -> ResourceSlice:
    check_api_version(doc, API_VERSION)
    meta, spec, _status = object_meta(doc, namespaced=False)
    check_fields(spec, SLICE_SPEC_FIELDS, doc, "spec")
    driver = string(spec.get("driver"), doc, "spec.driver")
    if not driver:
        raise fail(doc, "spec.driver", "a driver name is required")
    pool = mapping(spec.get("pool"), doc, "spec.pool")
    check_fields(pool, POOL_FIELDS, doc, "spec.pool")
    pool_name = string(pool.get("name"), doc, "spec.pool.name")
    if not pool_name:
        raise fail(doc, "spec.pool.name", "a pool name is required")
    count = _int(pool.get("resourceSliceCount"), doc, "spec.pool.resourceSliceCount")
    if count < 1:
        raise fail(doc, "spec.pool.resourceSliceCount", f"must be greater than zero, got {count}")
    node_name = string(spec.get("nodeName"), doc, "spec.nodeName") or None
    all_nodes = bool(_bool(spec.get("allNodes"), doc, "spec.allNodes"))
    per_device = bool(_bool(spec.get("perDeviceNodeSelection"), doc, "spec.perDeviceNodeSelection"))
    selector = _node_selector(spec.get("nodeSelector"), doc, "spec.nodeSelector")
    ways = sum((node_name is not None, all_nodes, per_device, selector is not None))
    if ways != 1:
        raise fail(doc, "spec", "exactly one of nodeName, nodeSelector, allNodes or perDeviceNodeSelection is "
                   f"required, got {ways}")
    raw_devices = sequence(spec.get("devices"), doc, "spec.devices")
    if len(raw_devices) > MAX_DEVICES_PER_SLICE:
        raise fail(doc, "spec.devices", f"must have at most {MAX_DEVICES_PER_SLICE} devices, got {len(raw_devices)}")
    devices = tuple(_device(raw, doc, where) for where, raw in
                    entries(raw_devices, doc, "spec.devices", DEVICE_FIELDS, "a device (a mapping with name)"))
    names = [d.name for d in devices]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise fail(doc, "spec.devices", f"duplicate device name {duplicate!r}")
    list(entries(spec.get("sharedCounters"), doc, "spec.sharedCounters", frozenset({"name", "counters"}),
                 "a counter set (a mapping with name and counters)"))
    return ResourceSlice(meta, driver, pool_name, generation=_int(pool.get("generation"), doc, "spec.pool.generation"),
                         slice_count=count, node_name=node_name, all_nodes=all_nodes, node_selector=selector,
                         per_device_node_selection=per_device, devices=devices)


# --------------------------------------------------------------------------- ResourceClaim (spec)

def _sub_request(body: dict[str, Any], doc: Document, path: str, name: str, exact: bool) -> DeviceSubRequest:
    """The common part of `exactly` and a `firstAvailable` entry, with the API server's defaults."""
    class_name = string(body.get("deviceClassName"), doc, f"{path}.deviceClassName")
    if not class_name:
        raise fail(doc, f"{path}.deviceClassName", "a device class name is required")
    mode = string(body.get("allocationMode"), doc, f"{path}.allocationMode") or EXACT_COUNT
    if mode not in ALLOCATION_MODES:
        raise fail(doc, f"{path}.allocationMode", f"must be one of {', '.join(ALLOCATION_MODES)}, got {mode!r}")
    count = body.get("count")
    if mode == EXACT_COUNT:
        count = 1 if count is None else _int(count, doc, f"{path}.count")
        if count < 1:
            raise fail(doc, f"{path}.count", f"must be greater than zero, got {count}")
        if count > ALLOCATION_RESULTS_MAX_SIZE:
            raise fail(doc, f"{path}.count", f"must be less than or equal to {ALLOCATION_RESULTS_MAX_SIZE}")
    elif count is not None and _int(count, doc, f"{path}.count") != 0:
        raise fail(doc, f"{path}.count", "must not be set when allocationMode is All")
    tolerations = tuple(t for _w, t in entries(body.get("tolerations"), doc, f"{path}.tolerations", TOLERATION_FIELDS,
                                               "a toleration (a mapping with key and operator)"))
    return DeviceSubRequest(name, class_name, selectors=_selectors(body.get("selectors"), doc, f"{path}.selectors"),
                            allocation_mode=mode, count=count or 0,
                            admin_access=_bool(body.get("adminAccess"), doc, f"{path}.adminAccess") if exact else None,
                            tolerations=tolerations, capacity=body.get("capacity") is not None)


def _request(where: str, raw: dict[str, Any], doc: Document) -> DeviceRequest:
    name = string(raw.get("name"), doc, f"{where}.name")
    if not name:
        raise fail(doc, f"{where}.name", "a request name is required")
    exactly, first = raw.get("exactly"), raw.get("firstAvailable")
    if (exactly is None) == (not first):
        raise fail(doc, where, "exactly one of exactly or firstAvailable is required")
    if exactly is not None:
        body = mapping(exactly, doc, f"{where}.exactly")
        check_fields(body, EXACT_FIELDS, doc, f"{where}.exactly")
        return DeviceRequest(name, exactly=_sub_request(body, doc, f"{where}.exactly", name, exact=True))
    path = f"{where}.firstAvailable"
    if len(sequence(first, doc, path)) > MAX_SUBREQUESTS:
        raise fail(doc, path, f"must have at most {MAX_SUBREQUESTS} subrequests")
    subs = []
    for sub_where, sub in entries(first, doc, path, SUBREQUEST_FIELDS, "a subrequest (a mapping with name)"):
        sub_name = string(sub.get("name"), doc, f"{sub_where}.name")
        if not sub_name:
            raise fail(doc, f"{sub_where}.name", "a subrequest name is required")
        subs.append(_sub_request(sub, doc, sub_where, sub_name, exact=False))
    if len({s.name for s in subs}) != len(subs):
        raise fail(doc, path, "subrequest names must be unique")
    return DeviceRequest(name, first_available=tuple(subs))


def claim_spec(value: Any, doc: Document, path: str) -> ClaimSpec:
    """A ResourceClaimSpec (`spec` of a claim, `spec.spec` of a template)."""
    spec = mapping(value, doc, path)
    check_fields(spec, CLAIM_SPEC_FIELDS, doc, path)
    devices = mapping(spec.get("devices"), doc, f"{path}.devices")
    check_fields(devices, DEVICE_CLAIM_FIELDS, doc, f"{path}.devices")
    rpath = f"{path}.devices.requests"
    if len(sequence(devices.get("requests"), doc, rpath)) > MAX_REQUESTS:
        raise fail(doc, rpath, f"must have at most {MAX_REQUESTS} requests")
    requests = tuple(_request(where, raw, doc) for where, raw in
                     entries(devices.get("requests"), doc, rpath, REQUEST_FIELDS, "a request (a mapping with name)"))
    names = [r.name for r in requests]
    if len(set(names)) != len(names):
        raise fail(doc, rpath, f"duplicate request name {next(n for n in names if names.count(n) > 1)!r}")
    constraints = []
    cpath = f"{path}.devices.constraints"
    for where, raw in entries(devices.get("constraints"), doc, cpath, CONSTRAINT_FIELDS,
                              "a constraint (a mapping with matchAttribute)"):
        match = string(raw.get("matchAttribute"), doc, f"{where}.matchAttribute") or None
        distinct = string(raw.get("distinctAttribute"), doc, f"{where}.distinctAttribute") or None
        for attribute, key in ((match, "matchAttribute"), (distinct, "distinctAttribute")):
            if attribute is not None and "/" not in attribute:
                raise fail(doc, f"{where}.{key}", f"must be a fully qualified name (domain/name), got {attribute!r}")
        used = _strings(raw.get("requests"), doc, f"{where}.requests")
        for i, name in enumerate(used):
            if name.split("/")[0] not in names:
                raise fail(doc, f"{where}.requests[{i}]", f"must be the name of a request of the claim, got {name!r}")
        constraints.append(DeviceConstraint(used, match, distinct))
    config = _opaque_configs(devices.get("config"), doc, f"{path}.devices.config", CLAIM_CONFIG_FIELDS)
    return ClaimSpec(requests, tuple(constraints), config)


# --------------------------------------------------------------------------- ResourceClaim (status)

def _allocation(value: Any, doc: Document) -> AllocationResult | None:
    if value is None:
        return None
    body = mapping(value, doc, "status.allocation")
    check_fields(body, ALLOCATION_FIELDS, doc, "status.allocation")
    devices = mapping(body.get("devices"), doc, "status.allocation.devices")
    check_fields(devices, ALLOCATION_DEVICES_FIELDS, doc, "status.allocation.devices")
    results = []
    rpath = "status.allocation.devices.results"
    for where, raw in entries(devices.get("results"), doc, rpath, RESULT_FIELDS, "a device result (a mapping with "
                                                                                 "request, driver, pool, device)"):
        parts = [string(raw.get(k), doc, f"{where}.{k}") for k in ("request", "driver", "pool", "device")]
        for key, part in zip(("request", "driver", "pool", "device"), parts, strict=True):
            if not part:
                raise fail(doc, f"{where}.{key}", f"a {key} is required")
        results.append(DeviceResult(*parts, admin_access=_bool(raw.get("adminAccess"), doc, f"{where}.adminAccess")))
    if len(results) > ALLOCATION_RESULTS_MAX_SIZE:
        raise fail(doc, rpath, f"must have at most {ALLOCATION_RESULTS_MAX_SIZE} results")
    config = tuple(c for _w, c in entries(devices.get("config"), doc, "status.allocation.devices.config",
                                          frozenset({"source", "requests", "opaque"}), "a configuration"))
    return AllocationResult(tuple(results), _node_selector(body.get("nodeSelector"), doc,
                                                           "status.allocation.nodeSelector"), config)


def _reserved_for(value: Any, doc: Document) -> tuple[ConsumerReference, ...]:
    out = []
    for where, raw in entries(value, doc, "status.reservedFor", CONSUMER_FIELDS,
                              "a consumer reference (a mapping with resource, name, uid)"):
        out.append(ConsumerReference(*(string(raw.get(k), doc, f"{where}.{k}") for k in ("resource", "name", "uid",
                                                                                        "apiGroup"))))
    if len(out) > RESERVED_FOR_MAX_SIZE:
        raise fail(doc, "status.reservedFor", f"must have at most {RESERVED_FOR_MAX_SIZE} items")
    return tuple(out)


def _controller(doc: Document) -> tuple[str, str]:
    """(uid, kind) of the object's controller owner reference ("" when it has none)."""
    meta = mapping(doc.body.get("metadata"), doc, "metadata")
    for i, raw in enumerate(sequence(meta.get("ownerReferences"), doc, "metadata.ownerReferences")):
        ref = mapping(raw, doc, f"metadata.ownerReferences[{i}]")
        if ref.get("controller") is True:
            return (string(ref.get("uid"), doc, f"metadata.ownerReferences[{i}].uid"),
                    string(ref.get("kind"), doc, f"metadata.ownerReferences[{i}].kind"))
    return "", ""


def decode_resource_claim(doc: Document, warnings: list[str]) -> ResourceClaim:
    check_api_version(doc, API_VERSION)
    meta, spec, status = object_meta(doc)
    check_fields(status, CLAIM_STATUS_FIELDS, doc, "status")
    uid, kind = _controller(doc)
    raw_meta = mapping(doc.body.get("metadata"), doc, "metadata")
    annotations = string_map(raw_meta.get("annotations"), doc, "metadata.annotations")
    claim = ResourceClaim(meta, claim_spec(spec, doc, "spec"), allocation=_allocation(status.get("allocation"), doc),
                          reserved_for=_reserved_for(status.get("reservedFor"), doc), controller_uid=uid,
                          controller_kind=kind, deleting=raw_meta.get("deletionTimestamp") is not None,
                          pod_claim_name=annotations.get(POD_CLAIM_NAME, ""))
    if claim.reserved_for and claim.allocation is None:
        raise fail(doc, "status.reservedFor", "a claim that is not allocated cannot be reserved")
    return claim


# --------------------------------------------------------------------------- ResourceClaimTemplate

def decode_resource_claim_template(doc: Document, warnings: list[str]) -> ResourceClaimTemplate:
    check_api_version(doc, API_VERSION)
    meta, spec, _status = object_meta(doc)
    check_fields(spec, TEMPLATE_SPEC_FIELDS, doc, "spec")
    claim_meta = mapping(spec.get("metadata"), doc, "spec.metadata")
    return ResourceClaimTemplate(meta, claim_spec(spec.get("spec"), doc, "spec.spec"),
                                 labels=string_map(claim_meta.get("labels"), doc, "spec.metadata.labels"),
                                 annotations=string_map(claim_meta.get("annotations"), doc,
                                                        "spec.metadata.annotations"))


DECODERS: dict[str, Callable[[Document, list[str]], Any]] = {
    "DeviceClass": decode_device_class,
    "ResourceSlice": decode_resource_slice,
    "ResourceClaim": decode_resource_claim,
    "ResourceClaimTemplate": decode_resource_claim_template,
}
