"""Label selectors (`metav1.LabelSelector`) as Kubernetes and Karmada match them: one home for both schedulers.

`metav1.LabelSelectorAsSelector` semantics: a nil selector selects nothing, an empty one everything;
`matchLabels` are equality requirements; `matchExpressions` take In, NotIn, Exists, DoesNotExist (In and
NotIn need values, Exists and DoesNotExist must have none); all requirements are ANDed.  NotIn and
DoesNotExist also match objects that lack the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


class SelectorError(ValueError):
    """A selector `LabelSelectorAsSelector` refuses (its error text)."""


@dataclass(frozen=True)
class Requirement:
    """One `labels.Requirement`: key, operator, values."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """`Requirement.Matches`."""
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist


@dataclass(frozen=True)
class Selector:
    """A parsed label selector; `nothing` is the nil selector (matches no object)."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def everything(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def key_error(key: str) -> str | None:
    """`validation.IsQualifiedName`: [prefix/]name, name ≤ 63 alphanumerics with -_. inside; None when valid."""
    prefix, _, name = key.rpartition("/") if "/" in key else ("", "", key)
    if key.count("/") > 1 or ("/" in key and not (prefix and len(prefix) <= 253
                                                  and _DNS1123_SUBDOMAIN.fullmatch(prefix))):
        return f"key: Invalid value: {key!r}: a qualified name needs an optional DNS subdomain prefix and '/'"
    if not name or len(name) > 63 or not _NAME.fullmatch(name):
        return (f"key: Invalid value: {key!r}: name part must consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character")
    return None


def value_error(value: str) -> str | None:
    """`validation.IsValidLabelValue`: empty, or ≤ 63 alphanumerics with -_. inside; None when valid."""
    if value == "" or (len(value) <= 63 and _NAME.fullmatch(value)):
        return None
    return f"values[0]: Invalid value: {value!r}: a valid label must be an empty string or consist of alphanumerics"


def _checked(key: str, op: str, values: Sequence[Any]) -> Requirement:
    """`labels.NewRequirement`'s key and value checks."""
    problem = key_error(key) or next(filter(None, (value_error(str(v)) for v in values)), None)
    if problem:
        raise SelectorError(problem)
    return Requirement(key, op, frozenset(str(v) for v in values))


def requirement(expr: Mapping[str, Any]) -> Requirement:
    """One matchExpressions entry as `labels.NewRequirement` accepts it; SelectorError otherwise."""
    key, op = str(expr.get("key") or ""), expr.get("operator") or ""
    values: Sequence[Any] = expr.get("values") or []
    if not isinstance(values, list):
        raise SelectorError(f"values: must be a list of strings, got {type(values).__name__}")
    if not isinstance(op, str) or op not in OPERATORS:
        raise SelectorError(f"{op!r} is not a valid label selector operator".replace("'", '"'))
    if op in ("In", "NotIn") and not values:
        raise SelectorError("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
                            "empty")
    if op in ("Exists", "DoesNotExist") and values:
        raise SelectorError("values: Invalid value: "
                            f"{list(values)!r}: values set must be empty for exists and does not exist")
    return _checked(key, op, values)


def parse_selector(selector: Mapping[str, Any] | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`: None → nothing, {} → everything; SelectorError on a bad expression."""
    if selector is None:
        return NOTHING
    if not isinstance(selector, Mapping):
        raise SelectorError(f"must be a label selector (a mapping), got {type(selector).__name__}")
    labels, exprs = selector.get("matchLabels") or {}, selector.get("matchExpressions") or []
    if not isinstance(labels, Mapping):
        raise SelectorError(f"matchLabels: must be a mapping of label keys to values, got {type(labels).__name__}")
    if not isinstance(exprs, list) or not all(isinstance(e, Mapping | None) for e in exprs):
        raise SelectorError("matchExpressions: must be a list of requirements (mappings with key, operator, values)")
    reqs = [_checked(str(k), "In", [str(v)]) for k, v in labels.items()]
    reqs += [requirement(e or {}) for e in exprs]
    return Selector(tuple(reqs))


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether `labels` satisfy the selector (None selects nothing); a malformed selector matches nothing."""
    try:
        return parse_selector(selector).matches(labels)
    except SelectorError:
        return False
