"""NodeResourcesFit: Filter (insufficient resources, SPEC §3) and Score (the three strategies, §4–5)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kubefit.k8s.resourcenames import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_extended, is_scalar
from kubefit.scheduler.config import NodeResourcesFitArgs
from kubefit.scheduler.plugins.base import UNRESOLVABLE, UNSCHEDULABLE, CycleContext, FilterOutcome
from kubefit.scheduler.plugins.resource_allocation import (
    allocatable_requested,
    weights_array,
    with_device_backed,
)
from kubefit.scheduler.plugins.strategies import ResourceScorer, Scores, resource_scorer
from kubefit.scheduler.state import ClusterState

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"


def _ignored(name: str, args: NodeResourcesFitArgs) -> bool:
    """Extended resources listed in ignoredResources / ignoredResourceGroups skip Filter (never hugepages)."""
    if not is_extended(name):
        return False
    return name in args.ignored_resources or name.split("/")[0] in args.ignored_resource_groups


def checked_resources(requests: dict[str, int], args: NodeResourcesFitArgs) -> list[str]:
    """The resources Filter compares, in reason order: cpu, memory, ephemeral-storage, then scalars (sorted)."""
    basic = [n for n in (CPU, MEMORY, EPHEMERAL_STORAGE) if requests.get(n, 0) > 0]
    scalars = sorted(n for n, q in requests.items()
                     if is_scalar(n) and q != 0 and not _ignored(n, args))
    return basic + scalars


@dataclass
class NodeResourcesFit:
    """`backed` (v1.36+, DRAExtendedResource): the extended resources a DeviceClass backs. On a node whose
    allocatable has none of such a resource, Filter leaves it to DynamicResources (`shouldDelegateResourceToDRA`)
    and Score counts the class's devices there (`calculateDRAExtendedResourceAllocatableRequest`)."""

    args: NodeResourcesFitArgs
    name: str = NAME
    backed: frozenset[str] = frozenset()
    scorer: ResourceScorer = field(init=False, repr=False)  # the strategy, chosen once (NewFit)

    def __post_init__(self) -> None:
        self.scorer = resource_scorer(self.args)

    # ------------------------------------------------------------------ Filter
    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        requests = ctx.demand.requests
        pods_col = state.index[PODS]
        too_many = state.requested[idx, pods_col] + 1 > state.allocatable[idx, pods_col]
        labels = [TOO_MANY_PODS]
        columns = [too_many]
        unresolvable = np.zeros(len(idx), dtype=bool)
        nothing = all(requests.get(n, 0) == 0 for n in (CPU, MEMORY, EPHEMERAL_STORAGE)) and not any(
            is_scalar(n) for n in requests)
        if not nothing:
            for name in checked_resources(requests, self.args):
                col = state.index[name]
                want = requests[name]
                alloc = state.allocatable[idx, col]
                short = want > alloc - state.requested[idx, col]
                if name in self.backed:
                    short &= alloc > 0  # delegated to DRA where no device plugin provides it
                labels.append(f"Insufficient {name}")
                columns.append(short)
                unresolvable |= short & (want > alloc)
        matrix = np.column_stack(columns)
        failed = matrix.any(axis=1)
        codes = np.where(failed, np.where(unresolvable, UNRESOLVABLE, UNSCHEDULABLE), 0).astype(np.int8)
        return FilterOutcome(codes, labels, matrix)

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """NodeResourcesFit never skips scoring."""
        return False

    def score_detail(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> tuple[Scores, np.ndarray, np.ndarray]:
        """Node scores plus the per-resource view `--explain` prints: (scores, alloc, req)."""
        names = [r.name for r in self.args.resources]
        alloc, req = allocatable_requested(state, idx, names, ctx.demand.score_requests, use_requested=False)
        with_device_backed(state, idx, names, ctx.demand.score_requests, self.backed, alloc, req)
        w = weights_array(r.weight for r in self.args.resources)
        return self.scorer.nodes(req, alloc, w), alloc, req

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        return self.score_detail(state, ctx, idx)[0][0]

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def signature(self, pod) -> tuple:
        """What this plugin reads of a pod: its requests (the engine keys every shape by them already)."""
        return ()
