"""TaintToleration: Filter on NoSchedule/NoExecute taints, Score on PreferNoSchedule (SPEC-kube-scheduler §13.2, §13.4).

The cluster's distinct taints are numbered once per state; each node is a row of taint numbers in list
order, so a pod's tolerations are checked once per distinct taint and then applied to every node with
numpy indexing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.k8s.taints import PREFER_NO_SCHEDULE, NodeTaints, untolerated_reason
from kubefit.scheduler.plugins.base import UNRESOLVABLE, CycleContext, FilterOutcome, go_div
from kubefit.scheduler.plugins.selectors import cached_on
from kubefit.scheduler.state import ClusterState

NAME = "TaintToleration"
MAX_NODE_SCORE = 100
UNNAMED_REASON = "node(s) had untolerated taint(s)"  # v1.35+ (kubernetes#134740)


def node_taints(state: ClusterState) -> NodeTaints:
    return cached_on(state, "taints", NodeTaints.build)


def default_normalize(raw: np.ndarray, reverse: bool) -> np.ndarray:
    """`helper.DefaultNormalizeScore(100, reverse)`: scale to the maximum (if > 0), optionally reversed."""
    raw = np.asarray(raw, dtype=np.int64)
    top = int(raw.max()) if len(raw) else 0
    if top <= 0:
        return np.full(len(raw), MAX_NODE_SCORE, dtype=np.int64) if reverse else raw.copy()
    scaled = go_div(MAX_NODE_SCORE * raw, top)
    return MAX_NODE_SCORE - scaled if reverse else scaled


@dataclass
class TaintToleration:
    """`names_taint`: v1.34's Filter reason names the first untolerated taint (`{key: value}`); from v1.35
    (kubernetes#134740, `taint_toleration.go` Filter) the reason is `node(s) had untolerated taint(s)`."""

    name: str = NAME
    names_taint: bool = True

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        """The first NoSchedule/NoExecute taint (in list order) no toleration tolerates rejects the node."""
        table = node_taints(state)
        rows = table.filtering[idx]
        untolerated = ~table.tolerated(ctx.pod.tolerations)[rows]
        failed = untolerated.any(axis=1)
        if not failed.any():
            return FilterOutcome.passing(len(idx))
        first = rows[np.arange(len(idx)), untolerated.argmax(axis=1)]
        first = np.where(failed, first, -1)
        culprits = list(dict.fromkeys(int(k) for k in first[failed]))
        matrix = first[:, None] == np.array(culprits, dtype=np.int32)[None, :]
        codes = np.where(failed, UNRESOLVABLE, 0).astype(np.int8)
        if not self.names_taint:
            return FilterOutcome(codes, [UNNAMED_REASON], failed[:, None])
        return FilterOutcome(codes, [untolerated_reason(table.taints[k]) for k in culprits], matrix)

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Never skipped."""
        return False

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        """Raw score: PreferNoSchedule taints not tolerated by the tolerations of effect "" / PreferNoSchedule."""
        table = node_taints(state)
        prefer = tuple(t for t in ctx.pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        return (~table.tolerated(prefer)[table.preferred[idx]]).sum(axis=1, dtype=np.int64)

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return default_normalize(raw, reverse=True)

    def signature(self, pod) -> tuple:
        """What this plugin reads of a pod (kube-scheduler's SignPlugin)."""
        return pod.tolerations
