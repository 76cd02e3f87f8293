"""NodeResourcesFit scoring strategies (SPEC §5): small functions of (requested, allocatable) arrays.

Each takes `req`, `alloc` of shape [M, K] (K = the strategy's resources; `alloc == 0` means dropped)
and weights [K], and returns `(node_score[M], resource_score[M, K], counted[M, K])` so that `--explain`
can show the arithmetic.  All integer arithmetic truncates like Go.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubefit.scheduler.plugins.base import go_div

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
