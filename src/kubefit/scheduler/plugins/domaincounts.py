"""PodTopologySpread's matching pods per topology domain, kept up to date bind by bind.

Upstream's PreFilter state counts, per constraint, the pods its selector matches on the nodes of each domain
that count (`preFilterState.TpValueToMatchNum`, pkg/scheduler/framework/plugins/podtopologyspread/filtering.go),
and its PreFilterExtensions (`AddPod` / `RemovePod` → `updateWithPod`) move one domain's count when a pod is
added to or removed from a node, instead of counting again. `DomainCounts` does the same across kubefit's
cycles: it follows the state's change log (`ClusterState.changes`) and adds each bound or removed pod's weight
(1 when the selector matches it, as `podcounts` counts it) to its node's domain when the node counts.
The sums are always those a fresh count gives (`np.bincount` over the counted nodes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kubefit.scheduler.plugins.podclasses import ClassWeights, follow
from kubefit.scheduler.state import ClusterState

FOLLOW_MAX = 4096  # up to this many changes since, follow them (by pod class: `podclasses`); beyond, count again


@dataclass
class DomainCounts:
    """Per domain, the matching pods on the `counted` nodes of that domain, as of change-log position `seen`."""

    domain: np.ndarray  # int32 [N]: each node's domain (its label's code + 1; 0 when it lacks the key)
    counted: np.ndarray  # bool [N]: the nodes whose pods count towards their domain
    weight: ClassWeights  # a pod's weight: 1 when it matches (`MatchingCounter.weight`)
    sums: np.ndarray  # int64 [domains + 1]: per domain, the matching pods of its counted nodes
    changes: list  # the `ClusterState.changes` followed
    seen: int  # ... up to this position

    @classmethod
    def build(cls, domain: np.ndarray, size: int, counted: np.ndarray, weight: ClassWeights,
              counts: np.ndarray, state: ClusterState) -> DomainCounts:
        """The sums as the per-node matching `counts` (of `weight`) are now (`size`: the number of domains + 1)."""
        return cls(domain, counted, weight, _sums(domain, size, counted, counts), state.changes, len(state.changes))

    def advance(self, state: ClusterState, counts: Callable[[ClusterState], np.ndarray]) -> np.ndarray:
        """The sums brought up to date with the changes since `seen`: each bound (removed) pod's weight added to
        (taken from) its node's domain when the node counts (`updateWithPod`); counted again from `counts(state)`,
        the per-node matching counts now, when the log is another one or far ahead."""
        log = state.changes
        behind = len(log) - self.seen
        if self.changes is not log or behind > FOLLOW_MAX:
            self.sums = _sums(self.domain, len(self.sums), self.counted, counts(state))
            self.changes = log
        elif behind:  # the stretch by pod class (`podclasses.follow`)
            follow(state, self.weight, self.seen, self.sums, index=self.domain, mask=self.counted)
        self.seen = len(log)
        return self.sums


def _sums(domain: np.ndarray, size: int, counted: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """int64 [size]: per domain, Σ counts over its counted nodes (float weights: exact below 2⁵³ pods)."""
    return np.bincount(domain[counted], weights=counts[counted], minlength=size).astype(np.int64)
