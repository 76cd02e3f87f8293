"""Label selectors (`metav1.LabelSelector`) as Kubernetes and Karmada match them: one home for both schedulers.

`metav1.LabelSelectorAsSelector` semantics: a nil selector selects nothing, an empty one everything;
`matchLabels` are equality requirements; `matchExpressions` take In, NotIn, Exists, DoesNotExist (In and
NotIn need values, Exists and DoesNotExist must have none); all requirements are ANDed.  NotIn and
DoesNotExist also match objects that lack the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


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


def requirement(expr: Mapping[str, Any]) -> Requirement:
    """One matchExpressions entry as `labels.NewRequirement` accepts it; SelectorError otherwise."""
    key, op = str(expr.get("key") or ""), expr.get("operator") or ""
    values: Sequence[Any] = expr.get("values") or []
    if op not in OPERATORS:
        raise SelectorError(f"{op!r} is not a valid label selector operator".replace("'", '"'))
    if op in ("In", "NotIn") and not values:
        raise SelectorError("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
                            "empty")
    if op in ("Exists", "DoesNotExist") and values:
        raise SelectorError("values: Invalid value: "
                            f"{list(values)!r}: values set must be empty for exists and does not exist")
    return Requirement(key, op, frozenset(str(v) for v in values))


def parse_selector(selector: Mapping[str, Any] | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`: None → nothing, {} → everything; SelectorError on a bad expression."""
    if selector is None:
        return NOTHING
    reqs = [Requirement(str(k), "In", frozenset({str(v)})) for k, v in (selector.get("matchLabels") or {}).items()]
    reqs += [requirement(e or {}) for e in selector.get("matchExpressions") or []]
    return Selector(tuple(reqs))


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether `labels` satisfy the selector (None selects nothing); a malformed selector matches nothing."""
    try:
        return parse_selector(selector).matches(labels)
    except SelectorError:
        return False
