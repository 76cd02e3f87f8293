"""Per node, how many of its pods match something: kept up to date by binds and removals.

PodTopologySpread counts the pods of the incoming pod's namespace its selector matches; InterPodAffinity
the pods an affinity term matches, and the pods that carry a given term. Each such count is computed once
over every pod and then follows the state's change log (`ClusterState.changes`): a bind or a removal
touches one node's count.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Pod
from kubefit.labels import Selector
from kubefit.scheduler.state import ClusterState


@dataclass
class _Counts:
    counts: np.ndarray  # int64 [N]
    seen: int  # position in state.changes already applied


def counts_of(state: ClusterState, key: Hashable, weight: Callable[[Pod], int]) -> np.ndarray:
    """int64 [N]: per node, Σ weight(pod) over its pods; `key` names `weight` (do not modify the result)."""
    memo: dict = state.__dict__.setdefault("_pod_counts", {})
    entry = memo.get(key)
    if entry is None or len(entry.counts) != len(state):
        counts = np.zeros(len(state), dtype=np.int64)
        for n, pods in enumerate(state.pods):
            counts[n] = sum(weight(p) for p in pods)
        memo[key] = _Counts(counts, len(state.changes))
        return counts
    if entry.seen < len(state.changes):
        for node, pod, delta in state.changes[entry.seen:]:
            w = weight(pod)
            if w:
                entry.counts[node] += delta * w
        entry.seen = len(state.changes)
    return entry.counts


def matching_counts(state: ClusterState, selector: Selector, namespace: str) -> np.ndarray:
    """int64 [N]: per node, its pods in `namespace` whose labels `selector` matches (`countPodsMatchSelector`)."""
    return counts_of(state, ("selector", selector, namespace),
                     lambda p: int(p.namespace == namespace and selector.matches(p.labels)))
