"""Pre-1.17 resource priorities on the 0..10 scale (SPEC-kube-scheduler §11), over node arrays.

kube-scheduler v1.16 scored nodes 0..10 (`MaxPriority = 10`). The functions here reproduce its
`RequestedToCapacityRatioPriority`, `LeastRequestedPriority`, `MostRequestedPriority` and
`BalancedResourceAllocation` exactly. Inputs are `requested[N, K]` (what the node would hold with the
incoming pod: node non-zero requests + pod non-zero request, as v1.16 summed them) and
`allocatable[N, K]` as int64 (cpu in millicores, other resources in base units).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from kubefit.k8s.gomath import go_div_array
from kubefit.k8s.resourcenames import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar
from kubefit.scheduler.config import NodeResourcesFitArgs
from kubefit.scheduler.plugins.balanced import NodeResourcesBalancedAllocation
from kubefit.scheduler.plugins.base import CycleContext
from kubefit.scheduler.plugins.fit import NodeResourcesFit
from kubefit.scheduler.state import ClusterState

MAX_PRIORITY = 10  # schedulerapi.MaxPriority before v1.17
MAX_UTILIZATION = 100

Shape = Sequence[tuple[int, int]]  # (utilization 0..100, score 0..10), utilizations increasing


def legacy_broken_linear(utilization: np.ndarray, shape: Shape) -> np.ndarray:
    """v1.16 `buildBrokenLinearFunction`: the shape on 0..10, interpolated with Go truncation."""
    p = np.asarray(utilization, dtype=np.int64)
    out = np.full(p.shape, int(shape[-1][1]), dtype=np.int64)
    done = np.zeros(p.shape, dtype=bool)
    for i, (u, s) in enumerate(shape):
        hit = ~done & (p <= u)
        if i == 0:
            out[hit] = s
        else:
            u0, s0 = shape[i - 1]
            seg = s0 + go_div_array((s - s0) * (p - u0), u - u0)
            out[hit] = seg[hit]
        done |= hit
    return out


def legacy_utilization(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
    """`100 − ((cap−req)·100)/cap` truncated; 100 where cap is 0 or req > cap (rounds utilisation up)."""
    req = np.asarray(requested, dtype=np.int64)
    cap = np.asarray(allocatable, dtype=np.int64)
    full = (cap == 0) | (req > cap)
    safe = np.where(full, 1, cap)
    util = MAX_UTILIZATION - ((safe - np.where(full, 0, req)) * MAX_UTILIZATION) // safe
    return np.where(full, MAX_UTILIZATION, util)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """Go `math.Round` (half away from zero) to int64."""
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(np.int64)


def legacy_rtcr_scores(requested: np.ndarray, allocatable: np.ndarray, weights: Sequence[int],
                       shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    """v1.16 RequestedToCapacityRatioPriority: (node scores[N] on 0..10, per-resource scores[N, K]).

    Per resource `f(100 − ((cap−req)·100)/cap)` (f(100) when cap is 0 or req > cap); only resources
    with a positive score enter the weighted average, which is rounded half away from zero.
    """
    per = legacy_broken_linear(legacy_utilization(requested, allocatable), shape)
    w = np.asarray(weights, dtype=np.int64)
    positive = per > 0
    num = np.where(positive, per * w, 0).sum(axis=-1)
    wsum = np.where(positive, w, 0).sum(axis=-1)
    node = np.where(wsum == 0, 0, _round_half_away(num / np.where(wsum == 0, 1, wsum)))
    return node.astype(np.int64), per


def _least_requested(req: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """v1.16 `leastRequestedScore`: `(cap−req)·10/cap`, 0 when cap is 0 or req > cap."""
    bad = (cap == 0) | (req > cap)
    safe = np.where(cap == 0, 1, cap)
    return np.where(bad, 0, ((safe - req) * MAX_PRIORITY) // safe)


def _most_requested(req: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """v1.16 `mostRequestedScore`: `req·10/cap`, 0 when cap is 0 or req > cap."""
    bad = (cap == 0) | (req > cap)
    safe = np.where(cap == 0, 1, cap)
    return np.where(bad, 0, (req * MAX_PRIORITY) // safe)


def _cpu_memory(requested: np.ndarray, allocatable: np.ndarray) -> tuple[np.ndarray, ...]:
    req = np.asarray(requested, dtype=np.int64)
    cap = np.asarray(allocatable, dtype=np.int64)
    if req.shape[-1] != 2 or cap.shape[-1] != 2:
        raise ValueError("legacy Least/Most/Balanced priorities take exactly [cpu, memory] columns")
    return req[..., 0], cap[..., 0], req[..., 1], cap[..., 1]


def legacy_least_requested_scores(requested: np.ndarray, allocatable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v1.16 LeastRequestedPriority on [cpu, memory]: ((cpu + memory) / 2, per-resource[N, 2])."""
    rc, cc, rm, cm = _cpu_memory(requested, allocatable)
    per = np.stack([_least_requested(rc, cc), _least_requested(rm, cm)], axis=-1)
    return per.sum(axis=-1) // 2, per


def legacy_most_requested_scores(requested: np.ndarray, allocatable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v1.16 MostRequestedPriority on [cpu, memory]: ((cpu + memory) / 2, per-resource[N, 2])."""
    rc, cc, rm, cm = _cpu_memory(requested, allocatable)
    per = np.stack([_most_requested(rc, cc), _most_requested(rm, cm)], axis=-1)
    return per.sum(axis=-1) // 2, per


def legacy_balanced_scores(requested: np.ndarray, allocatable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v1.16 BalancedResourceAllocation: `int((1 − |cpuFraction − memFraction|)·10)`, (scores, fractions[N, 2]).

    A fraction is req/cap in float64 (1 when cap is 0); a node with either fraction ≥ 1 scores 0.
    """
    rc, cc, rm, cm = _cpu_memory(requested, allocatable)
    fc = np.where(cc == 0, 1.0, rc / np.where(cc == 0, 1, cc))
    fm = np.where(cm == 0, 1.0, rm / np.where(cm == 0, 1, cm))
    score = ((1 - np.abs(fc - fm)) * MAX_PRIORITY).astype(np.int64)  # int64() truncates
    score = np.where((fc >= 1) | (fm >= 1), 0, score)
    return score, np.stack([fc, fm], axis=-1)


# ---------------------------------------------------------------- over a ClusterState (for `--scoring legacy`)


def legacy_pairs(state: ClusterState, idx: np.ndarray, names: Sequence[str],
                 pod_requests: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """v1.16 `calculateResourceAllocatableRequest`: `(allocatable[M, K], requested[M, K])` for nodes `idx`.

    cpu and memory use the node's non-zero requests plus the pod's non-zero request; ephemeral-storage
    and scalar resources the node's requests plus the pod's; a scalar no node has is (0, pod); any other
    name is (0, 0). Unlike v1 nothing is dropped: capacity 0 scores as fully used in RTCR.
    """
    m = len(idx)
    alloc = np.zeros((m, len(names)), dtype=np.int64)
    req = np.zeros((m, len(names)), dtype=np.int64)
    for k, name in enumerate(names):
        p = int(pod_requests.get(name, 0))
        col = state.index.get(name)
        if name in (CPU, MEMORY):
            used = state.nonzero_requested[idx, 0 if name == CPU else 1]
        elif (name == EPHEMERAL_STORAGE or is_scalar(name)) and col is not None:
            used = state.requested[idx, col]
        elif is_scalar(name):
            req[:, k] = p
            continue
        else:
            continue
        alloc[:, k] = state.allocatable[idx, col]
        req[:, k] = used + p
    return alloc, req


@dataclass(frozen=True)
class LegacyScorer:
    """NodeResourcesFit's strategy as its v1.16 priority, chosen once: the resources it reads and its scores."""

    resources: tuple[tuple[str, int], ...]  # (name, weight) in column order
    scores: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]  # (req, alloc) → (node, per)
    positive_only: bool = False  # RequestedToCapacityRatioPriority: only resources scoring > 0 count

    def score(self, state: ClusterState, idx: np.ndarray,
              pod_requests: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(node scores 0..10, per-resource, alloc, req) of nodes `idx`."""
        alloc, req = legacy_pairs(state, idx, [name for name, _ in self.resources], pod_requests)
        node, per = self.scores(req, alloc)
        return node, per, alloc, req


def legacy_scorer(args: NodeResourcesFitArgs) -> LegacyScorer:
    """RequestedToCapacityRatio on the args' resources and shape; LeastAllocated/MostAllocated were
    LeastRequested/MostRequestedPriority, always on cpu and memory with equal weight."""
    if args.scoring_type == "RequestedToCapacityRatio":
        shape = [(p.utilization, p.score) for p in args.shape or ()]
        weights = [r.weight for r in args.resources]
        return LegacyScorer(tuple((r.name, r.weight) for r in args.resources),
                            partial(legacy_rtcr_scores, weights=weights, shape=shape), positive_only=True)
    fn = legacy_most_requested_scores if args.scoring_type == "MostAllocated" else legacy_least_requested_scores
    return LegacyScorer(((CPU, 1), (MEMORY, 1)), fn)


def legacy_fit_scores(state: ClusterState, idx: np.ndarray, args: NodeResourcesFitArgs,
                      pod_requests: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """NodeResourcesFit's strategy scored as its v1.16 priority: (node scores 0..10, per-resource, alloc, req).

    `pod_requests` is the incoming pod's non-zero scoring request (`PodDemand.score_requests`).
    """
    return legacy_scorer(args).score(state, idx, pod_requests)


def legacy_balanced_node_scores(state: ClusterState, idx: np.ndarray,
                                pod_requests: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """BalancedResourceAllocation as v1.16 scored it (cpu and memory, non-zero requests): (scores, fractions)."""
    alloc, req = legacy_pairs(state, idx, (CPU, MEMORY), pod_requests)
    return legacy_balanced_scores(req, alloc)


# ---------------------------------------------------------------- plugins for `--scoring legacy`

class LegacyNodeResourcesFit(NodeResourcesFit):
    """NodeResourcesFit whose Score is the v1.16 priority of its strategy (0..10); Filter unchanged."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.legacy_scorer = legacy_scorer(self.args)  # chosen once, as the priority function was

    def explained_resources(self) -> list[tuple[str, int]]:
        return list(self.legacy_scorer.resources)

    def score_detail(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray):
        node, per, alloc, req = self.legacy_scorer.score(state, idx, ctx.demand.score_requests)
        counted = per > 0 if self.legacy_scorer.positive_only else np.ones_like(per, dtype=bool)
        return (node, per, counted), alloc, req


class LegacyBalancedAllocation(NodeResourcesBalancedAllocation):
    """BalancedResourceAllocation as v1.16 scored it (0..10, cpu and memory, never skipped)."""

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        return False

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        return legacy_balanced_node_scores(state, idx, ctx.demand.score_requests)[0]


LEGACY_PLUGINS = {"NodeResourcesFit": LegacyNodeResourcesFit,
                  "NodeResourcesBalancedAllocation": LegacyBalancedAllocation}
