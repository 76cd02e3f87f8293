"""Node selectors (labels and fields) evaluated for every node at once, as Kubernetes matches them.

`component-helpers/scheduling/corev1/nodeaffinity` (SPEC-kube-scheduler §13.5): a node selector is an OR
over its non-empty terms; a term ANDs its matchExpressions (labels) and matchFields (`metadata.name`; any
other field reads as ""); a term with a parse error never matches.  Label columns are factorised once per
node list (value → integer code), so a requirement is a few integer comparisons over all nodes, and the
mask of each distinct term is memoised for the table's lifetime (node labels never change).  Read by the
scheduler's plugins and by the DaemonSet controller's node eligibility.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubefit.k8s.validation import aggregate, is_empty_term, parses_int64, preferred_terms_errors, term_errors

if TYPE_CHECKING:
    from kubefit.api.core import Node

OBJECT_NAME_FIELD = "metadata.name"
_TERM_MASKS_BYTES = 64 << 20  # `NodeLabels.remember`: the memo of term masks kept under about this many bytes
_TERM_MASKS_MIN = 256  # (and never emptied below this many terms)


def freeze(value: Any) -> Any:
    """A hashable copy of a JSON-like value (dicts as tagged sorted item tuples, lists as tagged tuples)."""
    if isinstance(value, dict):
        return ("{}", *sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("[]", *(freeze(v) for v in value))
    return value


@dataclass
class LabelColumn:
    """One label key over all nodes: integer code per node (-1 = label absent) and the value vocabulary."""

    codes: np.ndarray  # int32 [N]
    vocab: dict[str, int]
    _ints: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def present(self) -> np.ndarray:
        return self.codes >= 0

    def isin(self, values: Sequence[str]) -> np.ndarray:
        """Label present with one of `values`."""
        hit = np.zeros(len(self.vocab) + 1, dtype=bool)  # last slot: label absent (code -1)
        for v in values:
            code = self.vocab.get(v)
            if code is not None:
                hit[code] = True
        return hit[self.codes]

    def integers(self) -> tuple[np.ndarray, np.ndarray]:
        """(parses, value): whether each node's label parses as a base-10 int64, and that integer."""
        if self._ints is None:
            value = np.zeros(len(self.vocab) + 1, dtype=np.int64)  # last slot: label absent (code -1)
            parses = np.zeros(len(self.vocab) + 1, dtype=bool)
            for text, code in self.vocab.items():
                if parses_int64(text):
                    value[code], parses[code] = int(text), True
            self._ints = (parses[self.codes], value[self.codes])
        return self._ints


@dataclass
class NodeLabels:
    """Every node's labels and name as columns, plus the memoised masks of selector terms."""

    nodes: Sequence[Node]
    names: np.ndarray = field(init=False)  # object [N]
    columns: dict[str, LabelColumn] = field(default_factory=dict)
    term_masks: dict[Any, np.ndarray] = field(default_factory=dict)
    _rows_of: dict[str, list[int]] | None = field(default=None, repr=False)  # `named`

    def __post_init__(self) -> None:
        self.names = np.array([n.name for n in self.nodes], dtype=object)

    def named(self, *names: str) -> np.ndarray:
        """bool [N]: the nodes called any of `names` (what `metadata.name == name` selects; PreFilter's `NodeNames`),
        by an index of the names built once rather than a comparison of every name: a DaemonSet pod's term names
        its node, and `plan` queues one such pod per node it adds. A name of no node is no node; nodes sharing a
        name are each found."""
        if self._rows_of is None:
            self._rows_of = {}
            for i, node in enumerate(self.nodes):
                self._rows_of.setdefault(node.name, []).append(i)
        mask = self.nothing()
        for name in names:
            mask[self._rows_of.get(name, [])] = True
        return mask

    def remember(self, key: Any, mask: np.ndarray) -> None:
        """Memoise a term's mask; the memo is emptied when it would hold more than about 64 MiB of masks (one
        term per DaemonSet pod otherwise keeps a mask over every node for each node)."""
        if len(self.term_masks) >= max(_TERM_MASKS_MIN, _TERM_MASKS_BYTES // max(len(self.nodes), 1)):
            self.term_masks.clear()
        self.term_masks[key] = mask

    def __len__(self) -> int:
        return len(self.nodes)

    def column(self, key: str) -> LabelColumn:
        col = self.columns.get(key)
        if col is None:
            vocab: dict[str, int] = {}
            codes = np.full(len(self.nodes), -1, dtype=np.int32)
            for i, node in enumerate(self.nodes):
                value = node.labels.get(key)
                if value is not None:
                    codes[i] = vocab.setdefault(value, len(vocab))
            col = self.columns[key] = LabelColumn(codes, vocab)
        return col

    def field_values(self, key: str) -> np.ndarray:
        """`fields.Set` of a node: only `metadata.name` exists; any other key reads as ""."""
        if key == OBJECT_NAME_FIELD:
            return self.names
        return np.full(len(self.nodes), "", dtype=object)

    def nothing(self) -> np.ndarray:
        return np.zeros(len(self.nodes), dtype=bool)

    def everything(self) -> np.ndarray:
        return np.ones(len(self.nodes), dtype=bool)


# --------------------------------------------------------------------------- requirements and terms

def _requirement_mask(table: NodeLabels, req: dict[str, Any]) -> np.ndarray:
    """`labels.Requirement.Matches` over all nodes (the requirement parsed without error)."""
    col = table.column(str(req.get("key") or ""))
    op = req.get("operator")
    values = [str(v) for v in req.get("values") or []]
    if op == "In":
        return col.isin(values)
    if op == "NotIn":
        return ~col.isin(values)
    if op == "Exists":
        return col.present
    if op == "DoesNotExist":
        return ~col.present
    ok, ints = col.integers()  # Gt / Lt: a valid requirement has exactly one int64 value
    bound = int(values[0])
    return ok & (ints > bound if op == "Gt" else ints < bound)


def _field_mask(table: NodeLabels, req: dict[str, Any]) -> np.ndarray:
    """`fields.OneTermEqualSelector` / `OneTermNotEqualSelector` over all nodes."""
    key, value = str(req.get("key") or ""), str((req.get("values") or [""])[0])
    equal = table.named(value) if key == OBJECT_NAME_FIELD else table.field_values(key) == value
    return equal if req.get("operator") == "In" else ~equal


def term_valid(term: dict[str, Any]) -> bool:
    """A term parses without error (else it never matches)."""
    return not term_errors(term, "")


def term_mask(table: NodeLabels, term: dict[str, Any], key: Any = None) -> np.ndarray:
    """Nodes matching one non-empty NodeSelectorTerm (memoised on the table by the term's content)."""
    key = freeze(term) if key is None else key
    mask = table.term_masks.get(key)
    if mask is None:
        if not term_valid(term):
            mask = table.nothing()
        else:
            mask = table.everything()
            for req in term.get("matchExpressions") or []:
                mask &= _requirement_mask(table, req)
            for req in term.get("matchFields") or []:
                mask &= _field_mask(table, req)
        mask.flags.writeable = False
        table.remember(key, mask)
    return mask


@dataclass(frozen=True)
class NodeSelector:
    """`v1.NodeSelector`: OR over its non-empty terms; no term at all matches nothing."""

    terms: tuple[dict[str, Any], ...]
    keys: tuple[Any, ...]

    @classmethod
    def parse(cls, selector: dict[str, Any] | None) -> NodeSelector:
        terms = tuple(t for t in (selector or {}).get("nodeSelectorTerms") or [] if not is_empty_term(t))
        return cls(terms, tuple(freeze(t) for t in terms))

    def mask(self, table: NodeLabels) -> np.ndarray:
        out = table.nothing()
        for term, key in zip(self.terms, self.keys, strict=True):
            out |= term_mask(table, term, key)
        return out


@dataclass(frozen=True)
class PreferredTerms:
    """`[]v1.PreferredSchedulingTerm` parsed: weight-0 and empty terms dropped; `error` if any term fails."""

    weights: tuple[int, ...]
    terms: tuple[dict[str, Any], ...]
    keys: tuple[Any, ...]
    error: str | None = None

    @classmethod
    def parse(cls, terms: list[dict[str, Any]], path: str = "") -> PreferredTerms:
        errs = preferred_terms_errors(terms, path)
        kept = [(int(t.get("weight") or 0), t.get("preference") or {}) for t in terms
                if t.get("weight") and not is_empty_term(t.get("preference"))]
        return cls(tuple(w for w, _ in kept), tuple(p for _, p in kept), tuple(freeze(p) for _, p in kept),
                   aggregate(errs) if errs else None)

    def score(self, table: NodeLabels) -> np.ndarray:
        """Σ weights of the matching terms, per node."""
        out = np.zeros(len(table), dtype=np.int64)
        for weight, term, key in zip(self.weights, self.terms, self.keys, strict=True):
            out += weight * term_mask(table, term, key)
        return out


def label_set_mask(table: NodeLabels, selector: dict[str, str]) -> np.ndarray:
    """`labels.SelectorFromSet(pod.spec.nodeSelector)`: every key present with exactly that value."""
    out = table.everything()
    for key, value in selector.items():
        out &= table.column(key).isin([value])
    return out
