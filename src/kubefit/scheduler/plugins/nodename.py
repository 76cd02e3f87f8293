"""NodeName: a pod with `spec.nodeName` fits only the node of that name (§13.3)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.scheduler.plugins.base import UNRESOLVABLE, CycleContext, FilterOutcome
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.state import ClusterState

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"


@dataclass
class NodeName:
    name: str = NAME

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        wanted = ctx.pod.node_name
        if not wanted:
            return FilterOutcome.passing(len(idx))
        other = node_labels(state).names[idx] != wanted
        return FilterOutcome(np.where(other, UNRESOLVABLE, 0).astype(np.int8), [REASON], other[:, None])

    def signature(self, pod) -> tuple:
        """What this plugin reads of a pod (kube-scheduler's SignPlugin)."""
        return (pod.node_name,)
