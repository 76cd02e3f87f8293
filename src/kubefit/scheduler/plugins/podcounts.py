"""Per node, how many of its pods a label selector matches in a namespace: kept up to date by binds.

PodTopologySpread counts, for every node, the pods of the incoming pod's namespace its selector matches
(`countPodsMatchSelector`). The counts of one (selector, namespace) are computed once over every pod and
then follow the state's change log (`ClusterState.changes`): a bind or a removal touches one node's count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.labels import Selector
from kubefit.scheduler.state import ClusterState


@dataclass
class _Counts:
    counts: np.ndarray  # int64 [N]
    seen: int  # position in state.changes already applied


def matching_counts(state: ClusterState, selector: Selector, namespace: str) -> np.ndarray:
    """int64 [N]: per node, its pods in `namespace` whose labels `selector` matches (do not modify)."""
    memo: dict = state.__dict__.setdefault("_pod_counts", {})
    key = (selector, namespace)
    entry = memo.get(key)
    if entry is None or len(entry.counts) != len(state):
        counts = np.zeros(len(state), dtype=np.int64)
        for n, pods in enumerate(state.pods):
            counts[n] = sum(1 for p in pods if p.namespace == namespace and selector.matches(p.labels))
        memo[key] = _Counts(counts, len(state.changes))
        return counts
    if entry.seen < len(state.changes):
        for node, pod, delta in state.changes[entry.seen:]:
            if pod.namespace == namespace and selector.matches(pod.labels):
                entry.counts[node] += delta
        entry.seen = len(state.changes)
    return entry.counts
