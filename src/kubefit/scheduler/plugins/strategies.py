"""NodeResourcesFit scoring strategies (SPEC §5): small functions of (requested, allocatable) arrays.

Each takes `req`, `alloc` of shape [M, K] (K = the strategy's resources; `alloc == 0` means dropped)
and weights [K], and returns `(node_score[M], resource_score[M, K], counted[M, K])` so that `--explain`
can show the arithmetic.  All integer arithmetic truncates like Go.

`resource_scorer(args)` chooses the strategy once, when NodeResourcesFit is built (kube-scheduler's
`resourceAllocationScorer.scorer`): its `ResourceScorer` scores many nodes at once (`nodes`) and one
resource of one node (`resource`, the simulation's row updates) with the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from kubefit.k8s.gomath import go_div as go_div_int
from kubefit.scheduler.plugins.base import go_div

if TYPE_CHECKING:
    from kubefit.scheduler.config import NodeResourcesFitArgs

MAX_NODE_SCORE = 100
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

Scores = tuple[np.ndarray, np.ndarray, np.ndarray]


def _weighted_truncated(resource_score: np.ndarray, counted: np.ndarray, w: np.ndarray) -> np.ndarray:
    num = (resource_score * w * counted).sum(axis=1)
    den = (w * counted).sum(axis=1)
    return np.where(den == 0, 0, go_div(num, np.where(den == 0, 1, den)))


def least_allocated(req: np.ndarray, alloc: np.ndarray, w: np.ndarray) -> Scores:
    """`((alloc − req)·100) / alloc`, 0 when over-requested; weighted mean truncated."""
    kept = alloc != 0
    safe = np.where(kept, alloc, 1)
    s = np.where(req > alloc, 0, go_div((alloc - req) * MAX_NODE_SCORE, safe))
    s = np.where(kept, s, 0)
    return _weighted_truncated(s, kept, w), s, kept


def most_allocated(req: np.ndarray, alloc: np.ndarray, w: np.ndarray) -> Scores:
    """`(min(req, alloc)·100) / alloc`; weighted mean truncated."""
    kept = alloc != 0
    safe = np.where(kept, alloc, 1)
    s = np.where(kept, go_div(np.minimum(req, alloc) * MAX_NODE_SCORE, safe), 0)
    return _weighted_truncated(s, kept, w), s, kept


def broken_linear(u: np.ndarray, shape: Sequence[tuple[int, int]]) -> np.ndarray:
    """`helper.BuildBrokenLinearFunction`: first point with u ≤ u_k, Go-truncated interpolation."""
    out = np.full(u.shape, shape[-1][1], dtype=np.int64)
    done = np.zeros(u.shape, dtype=bool)
    for k, (uk, sk) in enumerate(shape):
        hit = ~done & (u <= uk)
        if k == 0:
            val = np.full(u.shape, sk, dtype=np.int64)
        else:
            u0, s0 = shape[k - 1]
            val = s0 + go_div((sk - s0) * (u - u0), uk - u0)
        out = np.where(hit, val, out)
        done |= hit
    return out


def scaled_shape(points: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Shape scores 0..10 → 0..100 (`MaxNodeScore / MaxCustomPriorityScore`)."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return [(u, s * factor) for u, s in points]


def requested_to_capacity_ratio(req: np.ndarray, alloc: np.ndarray, w: np.ndarray,
                                shape: Sequence[tuple[int, int]]) -> Scores:
    """Shape of utilisation; only resources scoring > 0 count; `round(num / weightSum)`."""
    kept = alloc != 0
    safe = np.where(kept, alloc, 1)
    util = np.where(req > alloc, MAX_UTILIZATION, go_div(req * MAX_UTILIZATION, safe))
    s = np.where(kept, broken_linear(util, scaled_shape(shape)), 0)
    counted = kept & (s > 0)
    num = (s * w * counted).sum(axis=1)
    den = (w * counted).sum(axis=1)
    safe_den = np.where(den == 0, 1, den)
    rounded = np.floor_divide(2 * num + safe_den, 2 * safe_den)  # math.Round, num and den ≥ 0
    return np.where(den == 0, 0, rounded), s, counted


# --------------------------------------------------------------------------- one resource of one node

def least_allocated_one(req: int, alloc: int) -> int:
    """`least_allocated` for one resource of one node (`alloc` > 0)."""
    return 0 if req > alloc else go_div_int((alloc - req) * MAX_NODE_SCORE, alloc)


def most_allocated_one(req: int, alloc: int) -> int:
    """`most_allocated` for one resource of one node (`alloc` > 0)."""
    return go_div_int(min(req, alloc) * MAX_NODE_SCORE, alloc)


def broken_linear_one(u: int, shape: Sequence[tuple[int, int]]) -> int:
    """`broken_linear` for one utilisation."""
    for k, (uk, sk) in enumerate(shape):
        if u <= uk:
            if k == 0:
                return sk
            u0, s0 = shape[k - 1]
            return s0 + go_div_int((sk - s0) * (u - u0), uk - u0)
    return shape[-1][1]


def _ratio_one(req: int, alloc: int, shape: Sequence[tuple[int, int]]) -> int:
    """`requested_to_capacity_ratio` for one resource of one node (`alloc` > 0, `shape` scaled to 0..100)."""
    return broken_linear_one(MAX_UTILIZATION if req > alloc else go_div_int(req * MAX_UTILIZATION, alloc), shape)


# --------------------------------------------------------------------------- the strategy, chosen once

@dataclass(frozen=True)
class ResourceScorer:
    """One scoring strategy of NodeResourcesFit, over many nodes and for one resource of one node."""

    strategy: str
    nodes: Callable[[np.ndarray, np.ndarray, np.ndarray], Scores]  # (req, alloc, weights) → Scores
    resource: Callable[[int, int], int]  # (req, alloc > 0) → the resource's score
    positive_only: bool = False  # RequestedToCapacityRatio: only resources scoring > 0 count ...
    rounded: bool = False  # ... and their weighted mean is rounded (math.Round), not truncated
    points: tuple[tuple[int, int], ...] = ()  # RequestedToCapacityRatio: the shape scaled to 0..100 (`resource`'s)

    def node_score(self, num: int, den: int) -> int:
        """The node's score from Σ score·weight and Σ weight of its counted resources."""
        if den == 0:
            return 0
        return (2 * num + den) // (2 * den) if self.rounded else go_div_int(num, den)


def resource_scorer(args: NodeResourcesFitArgs) -> ResourceScorer:
    """`scoringStrategy.type` → its scorer (any type but the two allocated ones is the ratio, as NewFit reads it).

    >>> from kubefit.scheduler.config import NodeResourcesFitArgs, ShapePoint
    >>> most = resource_scorer(NodeResourcesFitArgs("MostAllocated"))
    >>> most.resource(1000, 4000), most.node_score(25 + 50, 2)
    (25, 37)
    >>> ratio = resource_scorer(NodeResourcesFitArgs("RequestedToCapacityRatio",
    ...                                             shape=(ShapePoint(0, 0), ShapePoint(100, 10))))
    >>> ratio.resource(1000, 4000), ratio.node_score(25 + 50, 2)
    (25, 38)
    """
    kind = args.scoring_type
    if kind == "LeastAllocated":
        return ResourceScorer(kind, least_allocated, least_allocated_one)
    if kind == "MostAllocated":
        return ResourceScorer(kind, most_allocated, most_allocated_one)
    shape = [(p.utilization, p.score) for p in args.shape or ()]
    points = tuple(scaled_shape(shape))
    return ResourceScorer(kind, partial(requested_to_capacity_ratio, shape=shape),
                          partial(_ratio_one, shape=points), positive_only=True, rounded=True, points=points)
