"""TaintToleration: Filter on NoSchedule/NoExecute taints, Score on PreferNoSchedule (SPEC-kube-scheduler §13.2, §13.4).

The cluster's distinct taints are numbered once per state; each node is a row of taint numbers in list
order, so a pod's tolerations are checked once per distinct taint and then applied to every node with
numpy indexing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Node, Taint, Toleration
from kubefit.scheduler.plugins.base import UNRESOLVABLE, CycleContext, FilterOutcome, go_div
from kubefit.scheduler.plugins.selectors import cached_on
from kubefit.scheduler.state import ClusterState

NAME = "TaintToleration"
NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE = "NoSchedule", "NoExecute", "PreferNoSchedule"
MAX_NODE_SCORE = 100


def tolerates(tol: Toleration, taint: Taint) -> bool:
    """`Toleration.ToleratesTaint`: effect and key match (empty = any), then Equal compares values, Exists passes."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    if tol.operator in ("", "Equal"):
        return tol.value == taint.value
    return tol.operator == "Exists"


def tolerates_any(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """`TolerationsTolerateTaint`: some toleration tolerates the taint."""
    return any(tolerates(t, taint) for t in tolerations)


def untolerated_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def _rows(nodes: Sequence[Node], ids: dict[Taint, int], effects: tuple[str, ...]) -> np.ndarray:
    """[N, max] taint numbers of the given effects in each node's list order; -1 pads."""
    lists = [[ids[t] for t in n.taints if t.effect in effects] for n in nodes]
    width = max((len(x) for x in lists), default=0)
    out = np.full((len(nodes), width), -1, dtype=np.int32)
    for i, row in enumerate(lists):
        out[i, :len(row)] = row
    return out


@dataclass
class NodeTaints:
    """Every node's taints as numbered rows: the filtering ones and the PreferNoSchedule ones."""

    taints: list[Taint]
    filtering: np.ndarray  # [N, F] NoSchedule / NoExecute
    preferred: np.ndarray  # [N, P] PreferNoSchedule
    tolerated_memo: dict[tuple[Toleration, ...], np.ndarray] = field(default_factory=dict)

    @classmethod
    def build(cls, nodes: Sequence[Node]) -> NodeTaints:
        ids: dict[Taint, int] = {}
        for n in nodes:
            for t in n.taints:
                ids.setdefault(t, len(ids))
        return cls(list(ids), _rows(nodes, ids, (NO_SCHEDULE, NO_EXECUTE)), _rows(nodes, ids, (PREFER_NO_SCHEDULE,)))

    def tolerated(self, tolerations: tuple[Toleration, ...]) -> np.ndarray:
        """bool [T + 1]: distinct taint k tolerated; the last slot (padding, -1) counts as tolerated."""
        hit = self.tolerated_memo.get(tolerations)
        if hit is None:
            hit = np.array([tolerates_any(tolerations, t) for t in self.taints] + [True], dtype=bool)
            self.tolerated_memo[tolerations] = hit
        return hit


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
    name: str = NAME

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
