"""Taints and tolerations as Kubernetes matches them (`k8s.io/api/core/v1/toleration.go`,
`component-helpers/scheduling/corev1/helpers.go`), and every node's taints as numbered rows.

The distinct taints of a node list are numbered once; each node is a row of taint numbers in list order,
so a pod's tolerations are checked once per distinct taint and then applied to every node with numpy
indexing.  Read by TaintToleration, NodeUnschedulable, PodTopologySpread, Karmada's taint filter and the
DaemonSet controller's node eligibility.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kubefit.api.core import Node, Taint, Toleration

NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE = "NoSchedule", "NoExecute", "PreferNoSchedule"


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
