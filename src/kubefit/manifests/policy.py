"""Documents → the objects the API server's admission reads: LimitRange and RuntimeClass (strict: an unknown
field is an error naming it; what the API server's validation refuses is refused with its message).

`DECODERS` maps each kind to its decoder `(doc, warnings) -> object`; `scenario.add_document` puts the result
in `Scenario.objects`, and `kubefit.manifests.admission` applies them to the pods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubefit.api.policy import CONTAINER, POD, PVC, LimitRange, LimitRangeItem, Quantities, RuntimeClass
from kubefit.errors import InputError
from kubefit.k8s import goquantity as gq
from kubefit.k8s.resourcenames import is_native
from kubefit.k8s.validation import INVALID, FieldError, aggregate, dns1123_label_errors
from kubefit.manifests.cluster import object_meta
from kubefit.manifests.decode import check_api_version, check_fields, decode_quantities, entries, mapping
from kubefit.manifests.decode import string as _string
from kubefit.manifests.decode import string_map as _string_map
from kubefit.manifests.documents import Document
from kubefit.manifests.load import TOLERATION_FIELDS, _toleration

LIMIT_RANGE_ITEM_FIELDS = frozenset({"type", "max", "min", "default", "defaultRequest", "maxLimitRequestRatio"})
RUNTIME_CLASS_FIELDS = frozenset({"apiVersion", "kind", "metadata", "handler", "overhead", "scheduling"})
OVERHEAD_FIELDS = frozenset({"podFixed"})
SCHEDULING_FIELDS = frozenset({"nodeSelector", "tolerations"})
_ITEM_KEYS = (("max", "max"), ("min", "min"), ("default", "default"), ("defaultRequest", "default_request"),
              ("maxLimitRequestRatio", "max_limit_request_ratio"))


# --------------------------------------------------------------------------- LimitRange

def decode_limit_range(doc: Document, warnings: list[str]) -> LimitRange:
    """A v1 LimitRange, its Container items defaulted (`SetDefaults_LimitRangeItem`) and the whole checked as
    `ValidateLimitRange` checks it (the API server's messages)."""
    check_api_version(doc, "v1")
    meta, spec, _status = object_meta(doc)
    check_fields(spec, frozenset({"limits"}), doc, "spec")
    items = [_limit_range_item(path, raw, doc) for path, raw in
             entries(spec.get("limits"), doc, "spec.limits", LIMIT_RANGE_ITEM_FIELDS, "a limit (a mapping with type)")]
    errors = [e for i, item in enumerate(items) for e in _item_errors(item, f"spec.limits[{i}]",
                                                                      [t.type for t in items[:i]])]
    if errors:
        raise InputError(aggregate(errors), file=doc.source, obj=doc.label)
    return LimitRange(meta, tuple(items))


def _limit_range_item(path: str, raw: dict[str, Any], doc: Document) -> LimitRangeItem:
    kind = _string(raw.get("type"), doc, f"{path}.type")
    values = {attr: decode_quantities(raw.get(key), doc, f"{path}.{key}") or {} for key, attr in _ITEM_KEYS}
    if kind == CONTAINER:  # SetDefaults_LimitRangeItem, in its order
        values["default"] = {**values["max"], **values["default"]}
        values["default_request"] = {**values["default"], **values["default_request"]}
        values["default_request"] = {**values["min"], **values["default_request"]}
    return LimitRangeItem(kind, **values)


def _item_errors(item: LimitRangeItem, path: str, earlier: list[str]) -> list[FieldError]:
    """`ValidateLimitRange` for one item (its type, what a Pod item may not hold, then per resource the
    ordering min ≤ defaultRequest ≤ default ≤ max and the ratio's bounds), in upstream's order."""
    errors = []
    if item.type not in (CONTAINER, POD, PVC) and "/" not in item.type:
        errors.append(FieldError(f"{path}.type", INVALID, item.type, "must be a standard limit type or fully qualified"))
    if item.type in earlier:
        errors.append(FieldError(f"{path}.type", "Duplicate value", item.type))
    if item.type == POD:
        errors += [FieldError(f"{path}.{key}", "Forbidden", None, "may not be specified when `type` is 'Pod'")
                   for key, attr in (("default", "default"), ("defaultRequest", "default_request"))
                   if getattr(item, attr)]
    if item.type == PVC and "storage" not in item.min and "storage" not in item.max:
        errors.append(FieldError(f"{path}.limits", "Required value", None,
                                 "either minimum or maximum storage value is required, but neither was provided"))
    keys = sorted({k for _key, attr in _ITEM_KEYS for k in getattr(item, attr)})  # Go walks a set: any order
    for key in keys:
        errors += _resource_errors(item, path, key)
    return errors


def _resource_errors(item: LimitRangeItem, path: str, key: str) -> list[FieldError]:
    lo, hi = item.min.get(key), item.max.get(key)
    default, request = item.default.get(key), item.default_request.get(key)
    ratio = item.max_limit_request_ratio.get(key)
    out = []

    def invalid(where: str, shown: Any, detail: str) -> None:
        out.append(_invalid(f"{path}.{where}[{key}]", shown, detail))

    if lo and hi and lo.nanos > hi.nanos:
        invalid("min", lo, f"min value {_s(lo)} is greater than max value {_s(hi)}")
    if request and lo and lo.nanos > request.nanos:
        invalid("defaultRequest", request, f"min value {_s(lo)} is greater than default request value {_s(request)}")
    if request and hi and request.nanos > hi.nanos:
        invalid("defaultRequest", request, f"default request value {_s(request)} is greater than max value {_s(hi)}")
    if request and default and request.nanos > default.nanos:
        invalid("defaultRequest", request, f"default request value {_s(request)} is greater than default limit "
                f"value {_s(default)}")
    if default and lo and lo.nanos > default.nanos:
        invalid("default", lo, f"min value {_s(lo)} is greater than default value {_s(default)}")
    if default and hi and default.nanos > hi.nanos:  # upstream shows the max as the bad value
        invalid("default", hi, f"default value {_s(default)} is greater than max value {_s(hi)}")
    if ratio and ratio.nanos < 10**9:
        invalid("maxLimitRequestRatio", ratio, f"ratio {_s(ratio)} is less than 1")
    if ratio and lo and hi:
        bound = _milli(hi) / _milli(lo) if _milli(lo) else float("inf")
        if _milli(ratio) / 1000 > bound:
            invalid("maxLimitRequestRatio", ratio, f"ratio {_s(ratio)} is greater than max/min = {bound:f}")
    overcommit = is_native(key) and not key.startswith("hugepages-")  # helper.IsOvercommitAllowed
    if not overcommit and default and request and default.nanos != request.nanos:
        invalid("defaultRequest", request, f"default value {_s(default)} must equal to defaultRequest value "
                f"{_s(request)} in {key}")
    return out


def _s(q: Any) -> str:
    """`Quantity.String()`: Go's canonical form of what was written."""
    return gq.parse(q.text).string()


def _milli(q: Any) -> int:
    return gq.parse(q.text).milli_value()


def _invalid(path: str, q: Any, detail: str) -> FieldError:
    """`field.Invalid(path, quantity, detail)`: v1.34 prints the bad value as JSON, a Quantity as its string."""
    return FieldError(path, INVALID, _s(q), detail)


# --------------------------------------------------------------------------- RuntimeClass

def decode_runtime_class(doc: Document, warnings: list[str]) -> RuntimeClass:
    """A node.k8s.io/v1 RuntimeClass: its handler, `overhead.podFixed` and `scheduling` (node selector and
    tolerations the RuntimeClass admission plugin merges into each pod naming it)."""
    check_api_version(doc, "node.k8s.io/v1")
    check_fields(doc.body, RUNTIME_CLASS_FIELDS, doc, "")
    meta = object_meta(Document({k: v for k, v in doc.body.items() if k in ("kind", "metadata")}, doc.source,
                                doc.index), namespaced=False)[0]
    handler = _string(doc.body.get("handler"), doc, "handler")
    errors = [FieldError("handler", INVALID, handler, m) for m in dns1123_label_errors(handler)]
    if errors:  # ValidateRuntimeClass: NameIsDNSLabel
        raise InputError(aggregate(errors), file=doc.source, obj=doc.label)
    overhead = mapping(doc.body.get("overhead"), doc, "overhead")
    check_fields(overhead, OVERHEAD_FIELDS, doc, "overhead")
    scheduling = mapping(doc.body.get("scheduling"), doc, "scheduling")
    check_fields(scheduling, SCHEDULING_FIELDS, doc, "scheduling")
    tolerations = []
    for path, raw in entries(scheduling.get("tolerations"), doc, "scheduling.tolerations", TOLERATION_FIELDS,
                             "a toleration (a mapping with key, operator, effect)"):
        _toleration(raw, doc, path)
        tolerations.append(raw)
    fixed: Quantities | None = None
    if doc.body.get("overhead") is not None:
        fixed = decode_quantities(overhead.get("podFixed"), doc, "overhead.podFixed") or {}
    return RuntimeClass(meta, handler, fixed, _string_map(scheduling.get("nodeSelector"), doc,
                                                          "scheduling.nodeSelector"), tuple(tolerations))


DECODERS: dict[str, Callable[[Document, list[str]], Any]] = {
    "LimitRange": decode_limit_range,
    "RuntimeClass": decode_runtime_class,
}
