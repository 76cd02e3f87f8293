"""NodeResourcesBalancedAllocation (SPEC §6): 100·(1 − std of the requested fractions), with its Skip.

v1.36 (kubernetes#135573, `balanced_allocation.go` `balancedResourceScorer`, not gated) scores how the pod
changes the node's balance: `MaxNodeScore/2 + (MaxNodeScore/2 + with − without)/2` in int64, where `with`
and `without` are the v1.34 score of the node with and without the pod's requests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.scheduler.config import BalancedAllocationArgs
from kubefit.scheduler.plugins.base import CycleContext
from kubefit.scheduler.plugins.resource_allocation import allocatable_requested, with_device_backed
from kubefit.scheduler.state import ClusterState

NAME = "NodeResourcesBalancedAllocation"


def balanced_scores(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """`balancedResourceScorer` over rows: float64 fractions capped at 1, std as Go computes it."""
    kept = alloc != 0
    frac = np.where(kept, req / np.where(kept, alloc, 1).astype(np.float64), 0.0)
    frac = np.minimum(frac, 1.0)
    n = kept.sum(axis=1)
    total = np.zeros(len(req))
    for k in range(req.shape[1]):  # summed in list order, as Go does
        total = total + frac[:, k]
    # exactly two kept fractions: |f_a − f_b| / 2
    first = np.argmax(kept, axis=1)
    last = req.shape[1] - 1 - np.argmax(kept[:, ::-1], axis=1) if req.shape[1] else first
    rows = np.arange(len(req))
    two = np.abs((frac[rows, first] - frac[rows, last]) / 2) if req.shape[1] else np.zeros(len(req))
    mean = total / np.where(n == 0, 1, n)
    sq = np.zeros(len(req))
    for k in range(req.shape[1]):
        d = np.where(kept[:, k], frac[:, k] - mean, 0.0)
        sq = sq + d * d
    many = np.sqrt(sq / np.where(n == 0, 1, n))
    std = np.where(n == 2, two, np.where(n > 2, many, 0.0))
    return ((1 - std) * 100).astype(np.int64)


def with_and_without_scores(with_pod: np.ndarray, without_pod: np.ndarray) -> np.ndarray:
    """v1.36's `balancedResourceScorer`: `50 + (50 + with − without) / 2`; both lie in [50, 100], so the
    dividend is never negative and Go's truncating division is a floor.

    >>> with_and_without_scores(np.array([100, 50, 88]), np.array([50, 100, 95])).tolist()
    [100, 50, 71]
    """
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


MAX_NODE_SCORE = 100


@dataclass
class NodeResourcesBalancedAllocation:
    """`with_and_without`: the v1.36 score (kubernetes#135573); False: v1.34/v1.35's `balancedResourceScorer`."""

    args: BalancedAllocationArgs
    name: str = NAME
    with_and_without: bool = False
    backed: frozenset[str] = frozenset()  # DRAExtendedResource: resources a DeviceClass backs (see NodeResourcesFit)

    def _requests(self, ctx: CycleContext) -> dict[str, int]:
        return ctx.demand.requests  # plain requests, pod-level resources honoured

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Skip best-effort pods: every resource of the list requested 0."""
        reqs = self._requests(ctx)
        return all(reqs.get(r.name, 0) == 0 for r in self.args.resources)

    def score_detail(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray):
        names = [r.name for r in self.args.resources]
        requests = self._requests(ctx)
        alloc, req = allocatable_requested(state, idx, names, requests, use_requested=True)
        with_device_backed(state, idx, names, requests, self.backed, alloc, req)
        scores = balanced_scores(req, alloc)
        if self.with_and_without:
            pod = np.array([requests.get(name, 0) for name in names], dtype=np.int64)
            before = np.where(alloc != 0, req - pod, 0)  # `allocated`: only where the resource is kept
            scores = with_and_without_scores(scores, balanced_scores(before, alloc))
        return scores, alloc, req

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        return self.score_detail(state, ctx, idx)[0]

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def signature(self, pod) -> tuple:
        """What this plugin reads of a pod: its requests (the engine keys every shape by them already)."""
        return ()
