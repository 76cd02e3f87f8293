"""Shared scoring machinery of the resource plugins (`resource_allocation.go`): (allocatable, requested) pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubefit.k8s.resourcenames import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar
from kubefit.scheduler.state import ClusterState


def allocatable_requested(state: ClusterState, idx: np.ndarray, names: Sequence[str],
                          pod_requests: dict[str, int], *, use_requested: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per resource of the plugin's list, the `(alloc_i, req_i)` columns for nodes `idx` (SPEC §4).

    `use_requested=False` is NodeResourcesFit (NonZeroRequested cpu/memory), True is BalancedAllocation.
    A pair with allocatable 0 means "dropped": it contributes neither score nor weight.
    """
    m = len(idx)
    alloc = np.zeros((m, len(names)), dtype=np.int64)
    req = np.zeros((m, len(names)), dtype=np.int64)
    for k, name in enumerate(names):
        p = int(pod_requests.get(name, 0))
        if p == 0 and is_scalar(name):
            continue
        if name in (CPU, MEMORY):
            col = state.index[name]
            used = state.requested[idx, col] if use_requested else state.nonzero_requested[idx, 0 if name == CPU else 1]
        elif name == EPHEMERAL_STORAGE or (is_scalar(name) and name in state.index):
            col = state.index[name]
            used = state.requested[idx, col]
        else:  # pods, unknown names, scalars no node has
            continue
        alloc[:, k] = state.allocatable[idx, col]
        req[:, k] = used + p
    return alloc, req


def backed_resources(objects) -> frozenset[str]:
    """DRAExtendedResource: the extended resource names a DeviceClass backs (`ExtendedResourceCache`)."""
    from kubefit.scheduler.dra.extended import ClassResolver

    return frozenset(ClassResolver.of(objects.of("DeviceClass")).by_name)


def with_device_backed(state: ClusterState, idx: np.ndarray, names: Sequence[str], pod_requests: dict[str, int],
                       backed: frozenset[str], alloc: np.ndarray, req: np.ndarray) -> None:
    """`calculateResourceAllocatableRequest` for a resource a DeviceClass backs, on a node whose allocatable
    has none of it (v1.36, DRAExtendedResource): the devices of the class the node reaches are its
    allocatable, the allocated ones its requested (`calculateDRAResourceTotals`); nothing when it reaches none."""
    if not backed or state.dra is None:
        return
    for k, name in enumerate(names):
        p = int(pod_requests.get(name, 0))
        if name not in backed or p == 0:
            continue
        rows = np.flatnonzero(alloc[:, k] == 0)
        if not len(rows):
            continue
        totals = state.dra.device_totals(name, idx[rows].tolist())
        if totals is None:
            continue
        total, used = totals
        hit = total > 0
        alloc[rows[hit], k] = total[hit]
        req[rows[hit], k] = used[hit] + p


def weights_array(weights: Sequence[int]) -> np.ndarray:
    return np.asarray(list(weights), dtype=np.int64)
