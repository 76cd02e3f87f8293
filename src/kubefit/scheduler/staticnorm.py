"""The normalized scores of a pod shape's static Score plugins over any set of feasible nodes, without
normalizing again each time that set changes.

A static plugin's raw scores never change with binds (TaintToleration, NodeAffinity, ImageLocality,
VolumeBinding and DynamicResources for a pod that scores nothing), but its NormalizeScore reads the feasible
nodes: kube-scheduler runs it over the nodes that passed the filters (`RunScorePlugins`), and
`helper.DefaultNormalizeScore` (pkg/scheduler/framework/plugins/helper/normalize_score.go) scales each node's
score by the highest among them. A node's normalized score is therefore a function of its own raw score and of
the feasible nodes' highest: normalizing the distinct raw values that occur among the feasible nodes gives every
node its value (`StaticNormalized.total`), and which values occur changes far more rarely than the feasible set.
A plugin without NormalizeScore (ImageLocality, VolumeBinding: a node's score is its raw score) reads nothing
of the others; one whose raw score is the same on every node normalizes to one value whatever nodes are feasible.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kubefit.scheduler.framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from kubefit.scheduler.plugins.base import CycleContext, normalize_scores
from kubefit.scheduler.plugins.dynamicresources import DynamicResources
from kubefit.scheduler.plugins.imagelocality import ImageLocality
from kubefit.scheduler.plugins.nodeaffinity import NodeAffinity
from kubefit.scheduler.plugins.tainttoleration import TaintToleration
from kubefit.scheduler.plugins.volumebinding import VolumeBinding

try:  # which values a feasible set has, in one pass in C (`_countkernels.occurring`), when built
    from kubefit.scheduler._countkernels import occurring as _occurring_c
except ImportError:  # pragma: no cover - bincount below
    _occurring_c = None

# NormalizeScore = `helper.DefaultNormalizeScore`: each node's score a function of its own raw score and the
# feasible nodes' highest (DynamicResources' also fails the cycle on its error score, a function of the lowest)
DEFAULT_NORMALIZE = (TaintToleration, NodeAffinity, DynamicResources)
NO_NORMALIZE = (ImageLocality, VolumeBinding)  # no NormalizeScore: a node's score is its raw score
MAX_VALUES = 32  # distinct raw scores of one plugin beyond which its scores are normalized as kube-scheduler does


@dataclass
class _ByValue:
    """A DefaultNormalizeScore plugin whose raw scores differ between nodes: each node's raw score as an index into
    the distinct values, and per set of values occurring among the feasible nodes, weight · the normalized score
    of each value."""

    plugin: object
    weight: int
    codes: np.ndarray  # int64 [N]: each node's raw score's index in `values`
    values: np.ndarray  # int64: the distinct raw scores, ascending
    memo: dict = field(default_factory=dict)  # the values occurring (a bit mask, or bincount's bytes) → int64
    # [len(values)]: weight · the normalized score of each value when they are the feasible nodes' values


_SUMS_MAX = 64  # per-node sums a `StaticNormalized` keeps (one per combination of occurring values seen)


@dataclass
class StaticNormalized:
    """Σ weight · NormalizeScore of a shape's static normalized scorers over any feasible set: a constant, per node
    the scores of the plugins without NormalizeScore, and the plugins normalized per distinct value."""

    const: int
    per_node: np.ndarray | None  # int64 [N] (None: 0)
    by_value: list[_ByValue]
    ctx: CycleContext
    sums: dict = field(default_factory=dict)  # the `by_value` plugins' occurring values (their keys: one, or a
    # tuple of them) → int64 [N]: the sum on every node when those are the values occurring (`_sums`)

    def total(self, feasible: np.ndarray) -> int | np.ndarray | None:
        """The sum for each node of `feasible` (one int when it is one value on every node); None when a
        normalized score leaves [0, 100] (the caller lets the framework fail the cycle as it does).

        Which values occur among the feasible nodes changes far more rarely than the feasible nodes: the sum over
        every node is kept per combination of occurring values, and a feasible set reads its nodes' entries (one
        gather, where adding the parts for the feasible nodes each time cost two per plugin and the sums)."""
        if not self.by_value:
            return self.const if self.per_node is None else self.per_node[feasible] + self.const
        keys = []
        for v in self.by_value:
            key = _occurring_mask(v.codes, feasible)
            if key is None:  # (no C kernel: the values occurring by bincount, their bytes the key)
                key = np.bincount(v.codes[feasible], minlength=len(v.values)).astype(bool).tobytes()
            keys.append(key)
        key = keys[0] if len(keys) == 1 else tuple(keys)
        sums = self.sums.get(key)
        if sums is None:
            sums = self._sums(keys)
            if sums is None:
                return None
            if len(self.sums) >= _SUMS_MAX:
                self.sums.clear()
            self.sums[key] = sums
        return sums.take(feasible)

    def _sums(self, keys: list) -> np.ndarray | None:
        """int64 [N]: the sum on every node when the `by_value` plugins' occurring values are `keys` (each plugin's
        weight · normalized score of each value, `_ByValue.memo`); None when a normalized score leaves [0, 100]."""
        n = len(self.by_value[0].codes)
        out = np.full(n, self.const, dtype=np.int64) if self.per_node is None else self.per_node + self.const
        for v, key in zip(self.by_value, keys, strict=True):
            table = v.memo.get(key)
            if table is None:
                occurring = _occurring_of(key, len(v.values))
                norm = normalize_scores(v.plugin, v.values[occurring], self.ctx)
                if len(norm) and (int(norm.min()) < MIN_NODE_SCORE or int(norm.max()) > MAX_NODE_SCORE):
                    return None
                table = v.memo[key] = np.zeros(len(v.values), dtype=np.int64)
                table[occurring] = v.weight * norm
            out += table.take(v.codes)
        return out


def _occurring_mask(codes: np.ndarray, feasible: np.ndarray) -> int | None:
    """The values among `codes[feasible]` as a bit mask, in C (`_countkernels.occurring`); None without it."""
    if _occurring_c is None:
        return None
    try:
        return _occurring_c(codes, feasible)
    except (BufferError, TypeError, ValueError):  # arrays it cannot read as given (not C-contiguous int64)
        return None


def _occurring_of(key: int | bytes, size: int) -> np.ndarray:
    """bool [size]: the values occurring, from a key of `StaticNormalized.total` (a bit mask or bincount's bytes)."""
    if isinstance(key, bytes):
        return np.frombuffer(key, dtype=bool).copy()
    return np.array([(key >> v) & 1 for v in range(size)], dtype=bool)


_DISTINCT: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}  # a row's dtype and bytes → `_distinct_values` (new
# pod shapes of one profile mostly share their static plugins' rows: the same taints, the same node preferences)
_DISTINCT_MAX = 64


def _distinct_values(row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(row, return_inverse=True)` (values ascending, each node's index among them; do not modify): a row
    of one value without sorting it, a row seen before from the memo."""
    if not len(row) or row.min() == row.max():
        return row[:1], np.zeros(len(row), dtype=np.int64)
    key = row.dtype.str.encode() + row.tobytes()
    known = _DISTINCT.get(key)
    if known is None:
        if len(_DISTINCT) >= _DISTINCT_MAX:
            _DISTINCT.clear()
        values, codes = np.unique(row, return_inverse=True)
        known = _DISTINCT[key] = (values, codes.reshape(-1).astype(np.int64))
    return known


def static_normalized(scorers: list, raw: np.ndarray, static: list[int], ctx: CycleContext) -> StaticNormalized | None:
    """The `StaticNormalized` of the static normalized scorers `static` (indices into `scorers`, rows of `raw`: their
    raw scores over every node); None when one is neither kind, a plugin without NormalizeScore has a score out of
    [0, 100] somewhere, or one has too many distinct values (then the sum is normalized over each feasible set)."""
    if not static or raw.shape[1] == 0:
        return None
    const, per_node, by_value = 0, None, []
    for s in static:
        _name, plugin, w = scorers[s]
        row = raw[s]
        if type(plugin) in NO_NORMALIZE:
            if int(row.min()) < MIN_NODE_SCORE or int(row.max()) > MAX_NODE_SCORE:
                return None
            per_node = w * row if per_node is None else per_node + w * row
        elif type(plugin) in DEFAULT_NORMALIZE:
            values, codes = _distinct_values(row)
            if len(values) == 1:  # one value whatever nodes are feasible
                one = int(normalize_scores(plugin, row[:1], ctx)[0])
                if not MIN_NODE_SCORE <= one <= MAX_NODE_SCORE:
                    return None
                const += w * one
            elif len(values) <= MAX_VALUES:
                by_value.append(_ByValue(plugin, w, codes, values.astype(np.int64)))
            else:
                return None
        else:
            return None
    if per_node is not None and bool((per_node == per_node[0]).all()):
        const, per_node = const + int(per_node[0]), None
    return StaticNormalized(const, per_node, by_value, ctx)
