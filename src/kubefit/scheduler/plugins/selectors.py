"""Per-state memos of node-derived data for the plugins: label tables (`kubefit.k8s.nodeaffinity`), taints, flags.

The state's nodes are never edited in place during a run, so what is derived from them is built once per
node list and kept on the state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kubefit.api.core import Node
from kubefit.k8s.nodeaffinity import NodeLabels

if TYPE_CHECKING:
    from kubefit.scheduler.state import ClusterState

T = TypeVar("T")


def cached_on(state: ClusterState, key: str, build: Callable[[Sequence[Node]], T]) -> T:
    """Per-state memo of node-derived data (labels, taints, flags), rebuilt when the node list is replaced or
    changes length; nodes themselves are never edited in place during a run."""
    memo: dict[str, tuple[Sequence[Node], int, Any]] = state.__dict__.setdefault("_node_columns", {})
    hit = memo.get(key)
    if hit is None or hit[0] is not state.nodes or hit[1] != len(state.nodes):
        hit = (state.nodes, len(state.nodes), build(state.nodes))
        memo[key] = hit
    return hit[2]


def node_labels(state: ClusterState) -> NodeLabels:
    """The state's label columns (built once per node list)."""
    return cached_on(state, "labels", NodeLabels)
