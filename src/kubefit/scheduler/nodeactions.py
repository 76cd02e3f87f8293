"""What-if on the node set: cordon, drain or remove nodes, and queue the pods that must move.

- cordon: `spec.unschedulable` and the `node.kubernetes.io/unschedulable:NoSchedule` taint the node
  lifecycle controller adds; the node's pods stay.
- drain: cordon, then evict the node's pods into the queue, as `kubectl drain --ignore-daemonsets` does:
  DaemonSet pods and mirror (static) pods stay where they are.
- remove: the node is gone; its pods are queued again, except DaemonSet pods (their controller creates
  none for a node that no longer exists).

Evicted pods keep their names and join the queue after the pods already pending (priority first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kubefit.api.core import Node, Pod, Taint
from kubefit.errors import InputError
from kubefit.load import TERMINAL_PHASES, Scenario

if TYPE_CHECKING:
    from kubefit.scheduler.simulate import SimulationResult

UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass
class NodeActions:
    """The nodes to cordon, drain and remove (names as given on the command line)."""

    cordon: list[str] = field(default_factory=list)
    drain: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.cordon or self.drain or self.remove)

    def to_dict(self) -> dict[str, list[str]]:
        return {k: v for k, v in (("cordon", self.cordon), ("drain", self.drain), ("remove", self.remove)) if v}


def daemon_pod(pod: Pod) -> bool:
    """Owned by a DaemonSet (its controller reference), or expanded from one by kubefit."""
    if pod.created_by.startswith("DaemonSet/"):
        return True
    refs = (pod.raw.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(r, dict) and r.get("kind") == "DaemonSet" and r.get("controller") for r in refs)


def mirror_pod(pod: Pod) -> bool:
    """A static pod's mirror: the kubelet owns it, drain leaves it."""
    return MIRROR_ANNOTATION in ((pod.raw.get("metadata") or {}).get("annotations") or {})


def _pinned_to(pod: Pod) -> set[str]:
    """The node a pending DaemonSet pod is pinned to (its `metadata.name In [node]` term), else nothing."""
    if pod.bound or not daemon_pod(pod):
        return set()
    required = ((pod.affinity or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = (required or {}).get("nodeSelectorTerms") or []
    return {str(v) for t in terms for f in (t or {}).get("matchFields") or []
            if f.get("key") == "metadata.name" for v in f.get("values") or []}


def cordoned(node: Node) -> Node:
    """The node as `kubectl cordon` leaves it (unschedulable, with the taint that goes with it)."""
    taints = node.taints if UNSCHEDULABLE_TAINT in node.taints else (*node.taints, UNSCHEDULABLE_TAINT)
    return replace(node, unschedulable=True, taints=taints)


def _check_names(actions: NodeActions, nodes: list[Node]) -> None:
    known = {n.name for n in nodes}
    for option, names in (("--cordon", actions.cordon), ("--drain", actions.drain), ("--remove", actions.remove)):
        for name in names:
            if name not in known:
                shown = ", ".join(sorted(known)[:10])
                raise InputError(f"no node named {name!r} in the scenario (nodes: {shown})", field=option)


def _moves(pod: Pod, drained: set[str], removed: set[str]) -> bool:
    """Whether the pod leaves its node and is queued again."""
    if not pod.bound or pod.phase in TERMINAL_PHASES:
        return False
    if pod.node_name in removed:
        return not daemon_pod(pod)
    return pod.node_name in drained and not daemon_pod(pod) and not mirror_pod(pod)


def apply_node_actions(scenario: Scenario, actions: NodeActions) -> tuple[Scenario, list[Pod]]:
    """A new scenario with the actions applied, and the pods evicted into its queue (in queue order)."""
    _check_names(actions, scenario.nodes)
    removed, drained = set(actions.remove), set(actions.drain)
    fenced = set(actions.cordon) | drained
    nodes = [cordoned(n) if n.name in fenced else n for n in scenario.nodes if n.name not in removed]
    kept: list[Pod] = []
    evicted: list[Pod] = []
    for pod in scenario.pods:
        if _moves(pod, drained, removed):
            evicted.append(replace(pod, node_name="", phase="Pending"))
        elif (pod.bound and pod.node_name in removed) or _pinned_to(pod) & removed:
            continue  # a DaemonSet pod of a removed node (running or still to create): gone with it
        else:
            kept.append(pod)
    moved = replace(scenario, nodes=nodes, pods=kept + evicted, warnings=list(scenario.warnings))
    bare = [p.key for p in evicted if not (p.raw.get("metadata") or {}).get("ownerReferences") and not p.created_by]
    if bare:
        moved.warnings.append(f"{len(bare)} evicted pod(s) have no controller to recreate them (e.g. {bare[0]}); "
                              f"kubectl drain would need --force and they would be gone; kubefit queues them to show "
                              f"where they would fit")
    return moved, evicted


def eviction_report(result: SimulationResult, actions: NodeActions, evicted: Sequence[Pod]) -> dict:
    """What the node actions did and where each evicted pod went (None: still pending), `allPlaced` the answer."""
    names = result.state.node_names
    placed = {s.pod.name: None if s.node is None else names[s.node] for s in result.steps}  # the last step wins
    moves = [{"pod": p.name, "from": p.raw.get("spec", {}).get("nodeName") or "", "to": placed.get(p.name)}
             for p in evicted]
    return {**actions.to_dict(), "evicted": moves, "allPlaced": all(m["to"] is not None for m in moves)}
