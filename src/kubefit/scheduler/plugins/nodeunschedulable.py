"""NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes only pods tolerating its synthetic taint (§13.3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Node, Taint
from kubefit.k8s.taints import NO_SCHEDULE, tolerates_any
from kubefit.scheduler.plugins.base import UNRESOLVABLE, CycleContext, FilterOutcome
from kubefit.scheduler.plugins.selectors import cached_on
from kubefit.scheduler.state import ClusterState

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", value="", effect=NO_SCHEDULE)


def _cordoned(nodes: Sequence[Node]) -> np.ndarray:
    return np.array([bool(n.unschedulable) for n in nodes], dtype=bool)


@dataclass
class NodeUnschedulable:
    name: str = NAME

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        cordoned = cached_on(state, "unschedulable", _cordoned)[idx]
        if tolerates_any(ctx.pod.tolerations, UNSCHEDULABLE_TAINT):
            cordoned = np.zeros(len(idx), dtype=bool)
        return FilterOutcome(np.where(cordoned, UNRESOLVABLE, 0).astype(np.int8), [REASON], cordoned[:, None])

    def signature(self, pod) -> tuple:
        """What this plugin reads of a pod (kube-scheduler's SignPlugin)."""
        return pod.tolerations
