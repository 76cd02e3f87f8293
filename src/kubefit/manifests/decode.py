"""Strict decoding of manifest fields: the one home of how a field is read and how a wrong one is refused.

Every object decoder (core objects in `kubefit.manifests.load`, cluster and storage objects, workloads, Karmada's
objects) reads its fields through these, so a wrong type, a missing apiVersion or an unknown field gets
the same one-line error naming file, object and field path, as the API server refuses them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kubefit.api.core import Quantity
from kubefit.errors import InputError
from kubefit.k8s.quantity import QuantityError, parse_quantity, quantity_text

if TYPE_CHECKING:
    from kubefit.manifests.documents import Document

_STR_ONLY = frozenset({str})


def type_name(value: Any) -> str:
    """YAML's word for a value's type, for messages."""
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def fail(doc: Document, field_path: str, message: str) -> InputError:
    """The error for field `field_path` of `doc` (file, object and field named)."""
    return InputError(message, file=doc.source, obj=doc.label, field=field_path)


def mapping(value: Any, doc: Document, field_path: str) -> dict[str, Any]:
    """An object field (null → empty)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail(doc, field_path, f"must be a mapping, got {type(value).__name__}")
    return value


def sequence(value: Any, doc: Document, field_path: str) -> list[Any]:
    """A list field (null → empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(doc, field_path, f"must be a list, got {type(value).__name__}")
    return value


def string(value: Any, doc: Document, field_path: str, default: str = "") -> str:
    """A string field (null → default); numbers and booleans are refused, as the API server does."""
    if value is None:
        return default
    if not isinstance(value, str):
        raise fail(doc, field_path, f"must be a string, got {type_name(value)} {value!r}"
                   + ("; quote it" if isinstance(value, (bool, int, float)) else ""))
    return value


def string_map(value: Any, doc: Document, field_path: str) -> dict[str, str]:
    """A map[string]string (labels, annotations, nodeSelector)."""
    found = mapping(value, doc, field_path)
    if {*map(type, found), *map(type, found.values())} <= _STR_ONLY:  # the usual case, at C speed
        return found.copy()
    return {str(k): string(v, doc, f"{field_path}.{k}") for k, v in found.items()}


def boolean(value: Any, doc: Document, field_path: str) -> bool | None:
    """A boolean field (null → None: a `*bool` unset); strings such as "true" are refused, as the API server does."""
    if value is None or isinstance(value, bool):
        return value
    raise fail(doc, field_path, f"must be true or false, got {type_name(value)} {value!r}")


def integer(value: Any, doc: Document, field_path: str, default: int | None = 0) -> int:
    """An integer field (null → `default`; `default=None`: required); booleans are not integers."""
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(doc, field_path, f"must be an integer, got {type_name(value)} {value!r}")
    return value


def decode_quantity(raw: Any, doc: Document, field_path: str) -> Quantity:
    """One quantity value → `Quantity(text, nanos)`; a malformed one is an InputError."""
    try:
        return _quantity(quantity_text(raw))
    except QuantityError as exc:
        raise fail(doc, field_path, str(exc)) from None


@functools.lru_cache(maxsize=4096)
def _quantity(text: str) -> Quantity:
    """A quantity text parsed once (a fleet's clusters repeat their models' bounds)."""
    return Quantity(text, parse_quantity(text))


def decode_quantities(value: Any, doc: Document, field_path: str) -> dict[str, Quantity] | None:
    """A ResourceList mapping → {name: Quantity}, None when absent (negative values are kept)."""
    if value is None:
        return None
    out = {}
    for name, raw in mapping(value, doc, field_path).items():
        if isinstance(raw, str):  # the usual case: parsed before, no field path to write
            try:
                out[str(name)] = _quantity(raw)
                continue
            except QuantityError:
                pass
        out[str(name)] = decode_quantity(raw, doc, f"{field_path}.{name}")
    return out


def check_fields(value: dict[str, Any], known: frozenset[str], doc: Document, field_path: str) -> None:
    """Unknown fields are typos the API server would refuse: report the first, never ignore it."""
    if value.keys() <= known:
        return
    unknown = sorted(str(k) for k in value if k not in known)
    where = f"{field_path}.{unknown[0]}" if field_path else unknown[0]
    raise fail(doc, where, f"unknown field {unknown[0]!r}")


def entries(value: Any, doc: Document, field_path: str, known: frozenset[str],
            what: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each entry of the list at `field_path` as (its path, its mapping), its fields checked against
    `known`; a null entry is refused as not `what` ("a condition (a mapping with type and status)")."""
    for i, raw in enumerate(sequence(value, doc, field_path)):
        where = f"{field_path}[{i}]"
        if raw is None:
            raise fail(doc, where, f"must be {what}, got null")
        entry = mapping(raw, doc, where)
        check_fields(entry, known, doc, where)
        yield where, entry


def check_api_version(doc: Document, expected: str) -> None:
    """The document's apiVersion is required and must be `expected` (the one version kubefit decodes)."""
    version = doc.body.get("apiVersion")
    if version is None:
        raise fail(doc, "apiVersion", f"apiVersion is required ({expected!r} for {doc.kind})")
    if version != expected:
        raise fail(doc, "apiVersion", f"unsupported apiVersion {version!r} for {doc.kind} (expected {expected!r})")


class Complete(dict):
    """A shape (see `check_shape`) listing every field of its API type: any other field is refused."""


def check_shape(value: Any, shape: Any, doc: Document, field_path: str) -> None:
    """`value` has the type `shape` gives at every field it names (null is absent; a dict shape is a
    mapping, a one-item list a list of that, a `Complete` a mapping with no other field, `object` any
    value); else an InputError at the first field that differs. The fields an open shape does not name pass untouched."""
    if value is None:
        return
    expected = dict if isinstance(shape, dict) else list if isinstance(shape, list) else shape
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise fail(doc, field_path, f"must be {type_name(expected())}, got {value!r}")
    if isinstance(shape, Complete) and not value.keys() <= shape.keys():
        unknown = sorted(str(k) for k in value if k not in shape)
        raise fail(doc, f"{field_path}.{unknown[0]}", f"unknown field {unknown[0]!r}")
    if isinstance(shape, dict):
        for key, sub in shape.items():
            if sub is not object and key in value:  # (`object`: any value, as an absent field is)
                check_shape(value[key], sub, doc, f"{field_path}.{key}")
    elif isinstance(shape, list):
        for i, item in enumerate(value):
            check_shape(item, shape[0], doc, f"{field_path}[{i}]")
