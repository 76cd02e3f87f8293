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
from functools import wraps
from typing import Any

from kubefit.api.dra import (
    ALLOCATION_MODES,
    ALLOCATION_RESULTS_MAX_SIZE,
    API_VERSION,
    EXACT_COUNT,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    RESERVED_FOR_MAX_SIZE,
    SEMVER,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    AllocationResult,
    ClaimSpec,
    ConsumerReference,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    RequestPolicy,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubefit.errors import InputError
from kubefit.k8s.quantity import QuantityError, parse_quantity
from kubefit.k8s.resourcenames import is_extended
from kubefit.k8s.validation import FORBIDDEN, INVALID, REQUIRED, FieldError, go_quote, not_supported
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
from kubefit.manifests.drav1beta1 import as_v1, v1beta1_path
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
LIST_ATTRIBUTE_KINDS = ("ints", "bools", "strings", "versions")  # DRAListTypeAttributes
CAPACITY_FIELDS = frozenset({"value", "requestPolicy"})
POLICY_FIELDS = frozenset({"default", "validValues", "validRange"})
RANGE_FIELDS = frozenset({"min", "max", "step"})
COUNTER_SET_FIELDS = frozenset({"name", "counters"})
CONSUMPTION_FIELDS = frozenset({"counterSet", "counters"})
COUNTER_FIELDS = frozenset({"value"})
CAPACITY_REQUEST_FIELDS = frozenset({"requests"})
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
MAX_TAINTS = 16  # DeviceTaintsMaxLength


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


# --------------------------------------------------------------------------- API versions

SAME_AS_V1 = "resource.k8s.io/v1beta2"  # the fields of v1, one for one (`zz_generated.conversion.go`)


def check_dra_api_version(doc: Document) -> None:
    """DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice are read in `resource.k8s.io/v1`, in
    `v1beta2`, which every supported version serves with the same fields (v1 was made from it: the conversion
    copies each field), and in `v1beta1`, converted first (`drav1beta1.as_v1`, see `reading_v1beta1`), so that a
    driver's manifests of any served version (dra-example-driver's demos are v1beta2) load as the API server
    stores them."""
    if doc.body.get("apiVersion") != SAME_AS_V1:
        check_api_version(doc, API_VERSION)


def reading_v1beta1(decode: Callable[[Document, list[str]], Any]) -> Callable[[Document, list[str]], Any]:
    """`decode` for v1 documents and for v1beta1 ones converted to v1 (an error then names the field the way
    the v1beta1 file has it)."""
    @wraps(decode)
    def decode_any(doc: Document, warnings: list[str]) -> Any:
        v1 = as_v1(doc)
        if v1 is doc:
            return decode(doc, warnings)
        try:
            return decode(v1, warnings)
        except InputError as exc:
            raise InputError(exc.message, file=exc.file, obj=exc.obj,
                             field=v1beta1_path(doc.kind, exc.field)) from None
    return decode_any


# --------------------------------------------------------------------------- DeviceClass

@reading_v1beta1
def decode_device_class(doc: Document, warnings: list[str]) -> DeviceClass:
    check_dra_api_version(doc)
    meta, spec, _status = object_meta(doc, namespaced=False)
    check_fields(spec, DEVICE_CLASS_SPEC_FIELDS, doc, "spec")
    name = string(spec.get("extendedResourceName"), doc, "spec.extendedResourceName")
    if spec.get("extendedResourceName") is not None and not is_extended(name):
        raise fail(doc, "spec.extendedResourceName", f"{INVALID}: {go_quote(name)}: must be a valid extended "
                                                     f"resource name")
    raw_meta = mapping(doc.body.get("metadata"), doc, "metadata")
    return DeviceClass(meta, selectors=_selectors(spec.get("selectors"), doc, "spec.selectors"),
                       config=_opaque_configs(spec.get("config"), doc, "spec.config", CLASS_CONFIG_FIELDS),
                       extended_resource_name=name, creation_timestamp=str(raw_meta.get("creationTimestamp") or ""))


# --------------------------------------------------------------------------- ResourceSlice

def _attribute(value: Any, doc: Document, path: str) -> DeviceAttribute:
    body = mapping(value, doc, path)
    check_fields(body, frozenset(ATTRIBUTE_KINDS + LIST_ATTRIBUTE_KINDS), doc, path)
    given = [k for k in ATTRIBUTE_KINDS + LIST_ATTRIBUTE_KINDS if body.get(k) is not None]
    if len(given) != 1:
        raise fail(doc, path, "exactly one value must be specified (int, bool, string or version)")
    kind = given[0]
    raw = body[kind]
    if kind in LIST_ATTRIBUTE_KINDS:  # DRAListTypeAttributes (v1.36, alpha)
        items = sequence(raw, doc, f"{path}.{kind}")
        if not items:
            raise fail(doc, f"{path}.{kind}", f"{INVALID}: []: must not be empty if specified")
        return DeviceAttribute(kind, tuple(_attribute({kind[:-1]: item}, doc, f"{path}.{kind}[{i}]").value
                                           for i, item in enumerate(items)))
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


def _quantity(raw: Any, doc: Document, path: str) -> int:
    """A quantity field (`resource.Quantity`): the API server refuses what does not parse."""
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        raise fail(doc, path, str(exc)) from None


def _capacity(value: Any, doc: Document, path: str) -> tuple[int, RequestPolicy | None]:
    """`capacity[name]`: its value and request policy (DRAConsumableCapacity), validated as
    `validateRequestPolicy` does (v1.36): one of validValues and validRange, a default valid under it."""
    body = mapping(value, doc, path)
    check_fields(body, CAPACITY_FIELDS, doc, path)
    raw = body.get("value")
    if raw is None:
        raise fail(doc, f"{path}.value", "a capacity needs a value")
    amount = _quantity(raw, doc, f"{path}.value")
    if body.get("requestPolicy") is None:
        return amount, None
    return amount, _request_policy(body["requestPolicy"], amount, doc, f"{path}.requestPolicy")


def _request_policy(value: Any, capacity: int, doc: Document, path: str) -> RequestPolicy:
    body = mapping(value, doc, path)
    check_fields(body, POLICY_FIELDS, doc, path)
    default = None if body.get("default") is None else _quantity(body["default"], doc, f"{path}.default")
    values = tuple(_quantity(v, doc, f"{path}.validValues[{i}]")
                   for i, v in enumerate(sequence(body.get("validValues"), doc, f"{path}.validValues")))
    window = None
    if body.get("validRange") is not None:
        rng = mapping(body["validRange"], doc, f"{path}.validRange")
        check_fields(rng, RANGE_FIELDS, doc, f"{path}.validRange")
        window = tuple(None if rng.get(k) is None else _quantity(rng[k], doc, f"{path}.validRange.{k}")
                       for k in ("min", "max", "step"))
    if values and window is not None:
        raise fail(doc, path, f'{FORBIDDEN}: exactly one policy can be specified, cannot specify "validValues" and '
                              f'"validRange" at the same time')
    if (values or window is not None) and default is None:
        kind = "validValues" if values else "validRange"
        raise fail(doc, f"{path}.default", f"{REQUIRED}: required when {kind} is defined")
    if values:
        _check_valid_values(values, default, capacity, body["validValues"], doc, f"{path}.validValues")
    if window is not None:
        _check_range(window, default, capacity, body, doc, f"{path}.validRange")
    return RequestPolicy(default, values, window)


def _shown(raw: Any) -> str:
    """A quantity as the error shows it (its canonical text)."""
    from kubefit.k8s.quantity import quantity_text

    return quantity_text(raw)


def _check_valid_values(values: tuple[int, ...], default: int, capacity: int, raw: list, doc: Document,
                        path: str) -> None:
    """`validateRequestPolicyValidValues`: ascending, within the capacity, unique, the default among them."""
    for i in range(len(values) - 1):
        if values[i] > values[i + 1]:
            raise fail(doc, f"{path}[{i + 1}]", f'{INVALID}: "{_shown(raw[i + 1])}": values must be sorted in '
                                                f'ascending order')
    for i, option in enumerate(values):
        if option > capacity:
            raise fail(doc, f"{path}[{i}]", f'{INVALID}: "{_shown(raw[i])}": option is larger than capacity value')
        if option in values[:i]:
            raise fail(doc, f"{path}[{i}]", f"{FieldError('', 'Duplicate value', _shown(raw[i])).body()}")
    if default not in values:
        raise fail(doc, path, f"{INVALID}: default value is not valid according to the requestPolicy")


def _check_range(window: tuple, default: int, capacity: int, body: dict, doc: Document, path: str) -> None:
    """`validateRequestPolicyRange`: min required and within the capacity, the default between min and max,
    a positive step, one step within the capacity, default and max whole steps from min (whole units)."""
    from kubefit.k8s.quantity import value  # Quantity.Value(): whole units, rounded up away from zero

    minimum, maximum, step = window
    if minimum is None:
        raise fail(doc, f"{path}.min", f"{REQUIRED}: required when validRange is defined")
    if minimum > capacity:
        raise fail(doc, f"{path}.min", f"{INVALID}: min is larger than capacity value")
    if default < minimum:
        raise fail(doc, f"{path}.default", f"{INVALID}: default is less than min")
    if maximum is not None and (minimum > maximum or maximum > capacity or default > maximum):
        problem = ("min is larger than max" if minimum > maximum else "max is larger than capacity value"
                   if maximum > capacity else "default is more than max")
        raise fail(doc, f"{path}.{'default' if problem.startswith('default') else 'max'}", f"{INVALID}: {problem}")
    if step is None:
        return
    if step <= 0:
        raise fail(doc, f"{path}.step", f"{INVALID}: must be greater than zero")
    if minimum + step > capacity:
        raise fail(doc, f"{path}.step", f"{INVALID}: one step is larger than capacity value")
    for name, amount in (("default", default), ("max", maximum)):
        if amount is not None and (value(amount) - value(minimum)) % value(step) != 0:
            raise fail(doc, f"{path}.step", f"{INVALID}: {name} is not a multiple of a given step from min")


def _counters(value: Any, doc: Document, path: str) -> dict[str, int]:
    """`counters`: name → `{value: quantity}` (required, non-empty)."""
    body = mapping(value, doc, path)
    if not body:
        raise fail(doc, path, f"{REQUIRED}")
    out = {}
    for name, counter in body.items():
        raw = mapping(counter, doc, f"{path}.{name}")
        check_fields(raw, COUNTER_FIELDS, doc, f"{path}.{name}")
        out[str(name)] = _quantity(raw.get("value", 0), doc, f"{path}.{name}.value")
    return out


def _taint(raw: dict[str, Any], doc: Document, path: str) -> DeviceTaint:
    """`validateDeviceTaint`: a key, and an effect the API server knows."""
    key = string(raw.get("key"), doc, f"{path}.key")
    if not key:
        raise fail(doc, f"{path}.key", f"{REQUIRED}")
    effect = string(raw.get("effect"), doc, f"{path}.effect")
    if not effect:
        raise fail(doc, f"{path}.effect", f"{REQUIRED}")
    if effect not in TAINT_EFFECTS:
        raise fail(doc, f"{path}.effect", not_supported("", effect, sorted(TAINT_EFFECTS)).body())
    return DeviceTaint(key, string(raw.get("value"), doc, f"{path}.value"), effect)


def _toleration(raw: dict[str, Any], doc: Document, path: str) -> DeviceToleration:
    """`validateDeviceToleration` (the operator is defaulted to Equal by the API server)."""
    operator = string(raw.get("operator"), doc, f"{path}.operator") or "Equal"
    if operator not in TOLERATION_OPERATORS:
        raise fail(doc, f"{path}.operator", not_supported("", operator, ["Equal", "Exists"]).body())
    value = string(raw.get("value"), doc, f"{path}.value")
    if operator == "Exists" and value:
        raise fail(doc, f"{path}.value", f'{INVALID}: "{value}": must be empty for operator `Exists`')
    effect = string(raw.get("effect"), doc, f"{path}.effect")
    if effect and effect not in TAINT_EFFECTS:
        raise fail(doc, f"{path}.effect", not_supported("", effect, sorted(TAINT_EFFECTS)).body())
    seconds = raw.get("tolerationSeconds")
    return DeviceToleration(string(raw.get("key"), doc, f"{path}.key"), operator, value, effect,
                            None if seconds is None else _int(seconds, doc, f"{path}.tolerationSeconds"))


def _fast_attribute(value: Any, memo: dict) -> DeviceAttribute | None:
    """A plain scalar attribute (`{string: "H100"}`) decoded once per slice (memo); None: the strict path."""
    if type(value) is not dict or len(value) != 1:
        return None
    (kind, raw), = value.items()
    key = (kind, raw) if type(raw) in (str, int, bool) else None
    if key is None:
        return None
    found = memo.get(key)
    if found is None:
        if kind == "string" and type(raw) is str and len(raw.encode()) <= 64:
            found = DeviceAttribute(kind, raw)
        elif kind == "int" and type(raw) is int and -(2**63) <= raw < 2**63:
            found = DeviceAttribute(kind, raw)
        elif kind == "bool" and type(raw) is bool:
            found = DeviceAttribute(kind, raw)
        else:
            return None
        memo[key] = found
    return found


def _fast_capacity(value: Any, memo: dict) -> tuple[int, None] | None:
    """A capacity without request policy (`{value: 80Gi}`), parsed once per slice (memo); None: the strict path."""
    if type(value) is not dict or len(value) != 1 or type(value.get("value")) is not str:
        return None
    text = value["value"]
    found = memo.get(("capacity", text))
    if found is None:
        try:
            found = memo[("capacity", text)] = (parse_quantity(text), None)
        except QuantityError:
            return None
    return found


_PLAIN_DEVICE_FIELDS = frozenset({"name", "attributes", "capacity", "consumesCounters", "allowMultipleAllocations"})


def _plain_device(raw: Any, memo: dict) -> Device | None:
    """The common device (a name, scalar attributes, capacities without policy, counters consumed), decoded
    without building error paths; None: anything else, which `_device` decodes strictly."""
    if type(raw) is not dict or not raw.keys() <= _PLAIN_DEVICE_FIELDS:
        return None
    name = raw.get("name")
    multiple = raw.get("allowMultipleAllocations")
    if type(name) is not str or not name or (multiple is not None and type(multiple) is not bool):
        return None
    attributes = raw.get("attributes") or {}
    capacity = raw.get("capacity") or {}
    if type(attributes) is not dict or type(capacity) is not dict or len(attributes) + len(capacity) > MAX_ATTRIBUTES:
        return None
    decoded = {}
    for k, v in attributes.items():
        a = _fast_attribute(v, memo)
        if a is None or type(k) is not str:
            return None
        decoded[k] = a
    amounts = {}
    for k, v in capacity.items():
        c = _fast_capacity(v, memo)
        if c is None or type(k) is not str:
            return None
        amounts[k] = c[0]
    consumes = []
    listed = raw.get("consumesCounters") or ()
    if type(listed) not in (list, tuple):  # (a number, a bool, a string, a mapping: `_device` refuses it by name)
        return None
    for c in listed:
        found = _plain_consumption(c, memo)
        if found is None or any(x.counter_set == found.counter_set for x in consumes):
            return None
        consumes.append(found)
    return Device(name, decoded, amounts, consumes=tuple(consumes), allow_multiple=multiple)


def _plain_consumption(raw: Any, memo: dict) -> CounterConsumption | None:
    if type(raw) is not dict or not raw.keys() <= CONSUMPTION_FIELDS:
        return None
    counter_set, counters = raw.get("counterSet"), raw.get("counters")
    if type(counter_set) is not str or not counter_set or type(counters) is not dict or not counters:
        return None
    values = []
    for k, v in counters.items():
        if type(v) is not dict or v.keys() != {"value"} or type(v["value"]) is not str:
            return None
        values.append((k, v["value"]))
    key = ("consumes", counter_set, tuple(values))
    found = memo.get(key)
    if found is None:
        amounts = {}
        for k, text in values:
            c = _fast_capacity({"value": text}, memo)
            if c is None:
                return None
            amounts[k] = c[0]
        found = memo[key] = CounterConsumption(counter_set, amounts)
    return found


def _device(raw: dict[str, Any], doc: Document, path: str, per_device: bool, memo: dict | None = None) -> Device:
    memo = {} if memo is None else memo
    plain = None if per_device else _plain_device(raw, memo)
    if plain is not None:
        return plain
    name = string(raw.get("name"), doc, f"{path}.name")
    if not name:
        raise fail(doc, f"{path}.name", "a device name is required")
    attributes = {str(k): _fast_attribute(v, memo) or _attribute(v, doc, f"{path}.attributes.{k}")
                  for k, v in mapping(raw.get("attributes"), doc, f"{path}.attributes").items()}
    multiple = _bool(raw.get("allowMultipleAllocations"), doc, f"{path}.allowMultipleAllocations")
    capacity, policies = {}, {}
    for k, v in mapping(raw.get("capacity"), doc, f"{path}.capacity").items():
        capacity[str(k)], policy = _fast_capacity(v, memo) or _capacity(v, doc, f"{path}.capacity[{k}]")
        if policy is not None:
            if not multiple:
                raise fail(doc, f"{path}.capacity[{k}].requestPolicy",
                           f"{FORBIDDEN}: allowMultipleAllocations must be true")
            policies[str(k)] = policy
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES:
        raise fail(doc, path, f"must have at most {MAX_ATTRIBUTES} attributes and capacities")
    taint_list = sequence(raw.get("taints"), doc, f"{path}.taints")
    if len(taint_list) > MAX_TAINTS:
        raise fail(doc, f"{path}.taints", f"Too many: {len(taint_list)}: must have at most {MAX_TAINTS} items")
    taints = tuple(_taint(t, doc, where) for where, t in entries(raw.get("taints"), doc, f"{path}.taints",
                                                                 TAINT_FIELDS, "a taint (a mapping with key and effect)"))
    consumes: list[CounterConsumption] = []
    for where, c in entries(raw.get("consumesCounters"), doc, f"{path}.consumesCounters", CONSUMPTION_FIELDS,
                            "a counter consumption (a mapping with counterSet and counters)"):
        counter_set = string(c.get("counterSet"), doc, f"{where}.counterSet")
        if not counter_set:
            raise fail(doc, f"{where}.counterSet", REQUIRED)
        if any(x.counter_set == counter_set for x in consumes):
            raise fail(doc, where, FieldError("", "Duplicate value", counter_set).body())
        consumes.append(CounterConsumption(counter_set, _counters(c.get("counters"), doc, f"{where}.counters")))
    conditions = _strings(raw.get("bindingConditions"), doc, f"{path}.bindingConditions")
    failures = _strings(raw.get("bindingFailureConditions"), doc, f"{path}.bindingFailureConditions")
    if bool(conditions) != bool(failures):
        missing = "bindingFailureConditions" if conditions else "bindingConditions"
        other = "bindingConditions" if conditions else "bindingFailureConditions"
        raise fail(doc, f"{path}.{missing}", f"{INVALID}: []: {missing} are required to use {other}")
    node_name = string(raw.get("nodeName"), doc, f"{path}.nodeName") or None
    all_nodes = bool(_bool(raw.get("allNodes"), doc, f"{path}.allNodes"))
    selector = _node_selector(raw.get("nodeSelector"), doc, f"{path}.nodeSelector")
    if not per_device and (node_name is not None or all_nodes or selector is not None):
        raise fail(doc, path, f"{INVALID}: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
                              f"`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    if per_device and sum((node_name is not None, all_nodes, selector is not None)) != 1:
        raise fail(doc, path, "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                              "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    return Device(name, attributes, capacity, node_name=node_name, all_nodes=all_nodes, node_selector=selector,
                  consumes=tuple(consumes), binding_conditions=conditions, binding_failure_conditions=failures,
                  binds_to_node=bool(_bool(raw.get("bindsToNode"), doc, f"{path}.bindsToNode")), taints=taints,
                  allow_multiple=multiple, policies=policies)


def _shared_counters(value: Any, doc: Document, path: str) -> tuple[CounterSet, ...]:
    out: list[CounterSet] = []
    for where, raw in entries(value, doc, path, COUNTER_SET_FIELDS, "a counter set (a mapping with name and counters)"):
        name = string(raw.get("name"), doc, f"{where}.name")
        if not name:
            raise fail(doc, f"{where}.name", REQUIRED)
        if any(c.name == name for c in out):
            raise fail(doc, where, FieldError("", "Duplicate value", name).body())
        out.append(CounterSet(name, _counters(raw.get("counters"), doc, f"{where}.counters")))
    return tuple(out)


@reading_v1beta1
def decode_resource_slice(doc: Document, warnings: list[str]) -> ResourceSlice:
    check_dra_api_version(doc)
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
    per_device_given = _bool(spec.get("perDeviceNodeSelection"), doc, "spec.perDeviceNodeSelection")
    per_device = bool(per_device_given)
    selector = _node_selector(spec.get("nodeSelector"), doc, "spec.nodeSelector")
    ways = sum((node_name is not None, all_nodes, per_device, selector is not None))
    if ways != 1:
        raise fail(doc, "spec", "exactly one of nodeName, nodeSelector, allNodes or perDeviceNodeSelection is "
                   f"required, got {ways}")
    raw_devices = sequence(spec.get("devices"), doc, "spec.devices")
    if len(raw_devices) > MAX_DEVICES_PER_SLICE:
        raise fail(doc, "spec.devices", f"must have at most {MAX_DEVICES_PER_SLICE} devices, got {len(raw_devices)}")
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        raise fail(doc, "spec", f'{INVALID}: "": only one of `sharedCounters` or `devices` is allowed')
    memo: dict = {}  # decoded once per slice: the devices of one slice repeat their attribute values
    devices = tuple(_device(raw, doc, where, per_device, memo) for where, raw in
                    entries(raw_devices, doc, "spec.devices", DEVICE_FIELDS, "a device (a mapping with name)"))
    names = [d.name for d in devices]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise fail(doc, "spec.devices", f"duplicate device name {duplicate!r}")
    shared = _shared_counters(spec.get("sharedCounters"), doc, "spec.sharedCounters")
    return ResourceSlice(meta, driver, pool_name, generation=_int(pool.get("generation"), doc, "spec.pool.generation"),
                         slice_count=count, node_name=node_name, all_nodes=all_nodes, node_selector=selector,
                         per_device_node_selection=per_device, per_device_set=per_device_given is not None,
                         devices=devices, shared_counters=shared)


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
    if mode == EXACT_COUNT:  # `count: 0` is no count (an int64 without omitempty's pointer): defaulted to 1
        count = _int(count, doc, f"{path}.count") if count is not None else 0
        count = count or 1  # SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest
        if count < 1:
            raise fail(doc, f"{path}.count", f"must be greater than zero, got {count}")
        if count > ALLOCATION_RESULTS_MAX_SIZE:
            raise fail(doc, f"{path}.count", f"must be less than or equal to {ALLOCATION_RESULTS_MAX_SIZE}")
    elif count is not None and _int(count, doc, f"{path}.count") != 0:
        raise fail(doc, f"{path}.count", "must not be set when allocationMode is All")
    tolerations = tuple(_toleration(t, doc, w) for w, t in entries(body.get("tolerations"), doc, f"{path}.tolerations",
                                                                   TOLERATION_FIELDS,
                                                                   "a toleration (a mapping with key and operator)"))
    capacity = None
    if body.get("capacity") is not None:
        raw = mapping(body["capacity"], doc, f"{path}.capacity")
        check_fields(raw, CAPACITY_REQUEST_FIELDS, doc, f"{path}.capacity")
        capacity = {str(k): _quantity(v, doc, f"{path}.capacity.requests.{k}")
                    for k, v in mapping(raw.get("requests"), doc, f"{path}.capacity.requests").items()}
    return DeviceSubRequest(name, class_name, selectors=_selectors(body.get("selectors"), doc, f"{path}.selectors"),
                            allocation_mode=mode, count=count or 0,
                            admin_access=_bool(body.get("adminAccess"), doc, f"{path}.adminAccess") if exact else None,
                            tolerations=tolerations, capacity=capacity)


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
        consumed = raw.get("consumedCapacity")
        results.append(DeviceResult(
            *parts, admin_access=_bool(raw.get("adminAccess"), doc, f"{where}.adminAccess"),
            share_id=string(raw.get("shareID"), doc, f"{where}.shareID") or None,
            consumed_capacity=None if consumed is None else {
                str(k): _quantity(v, doc, f"{where}.consumedCapacity.{k}")
                for k, v in mapping(consumed, doc, f"{where}.consumedCapacity").items()},
            binding_conditions=_strings(raw.get("bindingConditions"), doc, f"{where}.bindingConditions"),
            binding_failure_conditions=_strings(raw.get("bindingFailureConditions"), doc,
                                                f"{where}.bindingFailureConditions"),
            tolerations=tuple(_toleration(t, doc, w) for w, t in entries(
                raw.get("tolerations"), doc, f"{where}.tolerations", TOLERATION_FIELDS, "a toleration"))))
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


def _controller(doc: Document) -> tuple[str, str, str]:
    """(uid, kind, name) of the object's controller owner reference ("" when it has none)."""
    meta = mapping(doc.body.get("metadata"), doc, "metadata")
    for i, raw in enumerate(sequence(meta.get("ownerReferences"), doc, "metadata.ownerReferences")):
        ref = mapping(raw, doc, f"metadata.ownerReferences[{i}]")
        if ref.get("controller") is True:
            return (string(ref.get("uid"), doc, f"metadata.ownerReferences[{i}].uid"),
                    string(ref.get("kind"), doc, f"metadata.ownerReferences[{i}].kind"),
                    string(ref.get("name"), doc, f"metadata.ownerReferences[{i}].name"))
    return "", "", ""


def _device_conditions(value: Any, doc: Document) -> dict:
    """`status.devices[].conditions`: per allocated device, each condition's status (binding conditions)."""
    out: dict = {}
    for i, raw in enumerate(sequence(value, doc, "status.devices")):
        device = mapping(raw, doc, f"status.devices[{i}]")
        key = tuple(string(device.get(k), doc, f"status.devices[{i}].{k}") for k in ("driver", "pool", "device"))
        conditions = {}
        for j, c in enumerate(sequence(device.get("conditions"), doc, f"status.devices[{i}].conditions")):
            cond = mapping(c, doc, f"status.devices[{i}].conditions[{j}]")
            conditions[string(cond.get("type"), doc, f"status.devices[{i}].conditions[{j}].type")] = \
                string(cond.get("status"), doc, f"status.devices[{i}].conditions[{j}].status")
        out[key] = conditions
    return out


@reading_v1beta1
def decode_resource_claim(doc: Document, warnings: list[str]) -> ResourceClaim:
    check_dra_api_version(doc)
    meta, spec, status = object_meta(doc)
    check_fields(status, CLAIM_STATUS_FIELDS, doc, "status")
    uid, kind, owner = _controller(doc)
    raw_meta = mapping(doc.body.get("metadata"), doc, "metadata")
    annotations = string_map(raw_meta.get("annotations"), doc, "metadata.annotations")
    claim = ResourceClaim(meta, claim_spec(spec, doc, "spec"), allocation=_allocation(status.get("allocation"), doc),
                          reserved_for=_reserved_for(status.get("reservedFor"), doc), controller_uid=uid,
                          controller_kind=kind, deleting=raw_meta.get("deletionTimestamp") is not None,
                          pod_claim_name=annotations.get(POD_CLAIM_NAME, ""),
                          controller_name=owner,
                          extended=annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true",
                          device_conditions=_device_conditions(status.get("devices"), doc),
                          creation_timestamp=str(raw_meta.get("creationTimestamp") or ""))
    if claim.reserved_for and claim.allocation is None:
        raise fail(doc, "status.reservedFor", "a claim that is not allocated cannot be reserved")
    return claim


# --------------------------------------------------------------------------- ResourceClaimTemplate

@reading_v1beta1
def decode_resource_claim_template(doc: Document, warnings: list[str]) -> ResourceClaimTemplate:
    check_dra_api_version(doc)
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
