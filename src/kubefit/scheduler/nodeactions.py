"""What-if on the node set: cordon, drain or remove nodes, and queue the pods that must move.

- cordon: `spec.unschedulable` and the `node.kubernetes.io/unschedulable:NoSchedule` taint the node
  lifecycle controller adds; the node's pods stay.
- drain: cordon, then evict the node's pods, as `kubectl drain --ignore-daemonsets` does by default:
  DaemonSet pods and mirror (static) pods stay where they are, and a node running a pod that declares no
  controller is refused whole (kubectl's error, no `--force`): it stays cordoned and keeps its pods.
- remove: the node is gone with its pods; DaemonSet pods are not recreated (no node to run on), a pod
  without a controller is lost.

An evicted pod does not come back: its controller creates a replacement, which joins the queue after the
pods already pending (priority first) — a StatefulSet's under the same name, a ReplicaSet's,
ReplicationController's or Job's under a new `metadata.generateName` name (`kubefit.k8s.names`), a Job's only
while its backoffLimit allows (`kubefit.manifests.controllers`, the path every deleted pod takes). The pods
evicted are deleted together (kubectl drain evicts a node's pods at once, the pod garbage collector deletes a
removed node's): their ResourceQuota usage is released, then each replacement is created through the quota
admission; one it refuses is not created (`scenario.refused`, reported with the API server's error as the
pods refused at load are).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kubefit.api.core import Node, Pod, Taint
from kubefit.errors import InputError
from kubefit.manifests.controllers import Controllers, controller_of, replacement  # noqa: F401 - (callers')
from kubefit.manifests.load import TERMINAL_PHASES, Scenario

if TYPE_CHECKING:
    from kubefit.scheduler.simulate import SimulationResult

UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"  # kubectl drain


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
    """Whether the pod leaves its node (evicted or deleted with it)."""
    if not pod.bound or pod.phase in TERMINAL_PHASES:
        return False
    if pod.node_name in removed:
        return not daemon_pod(pod)
    return pod.node_name in drained and not daemon_pod(pod) and not mirror_pod(pod)


@dataclass
class Eviction:
    """A pod that left its node, and what its controller creates instead (None: lost)."""

    pod: Pod
    replacement: Pod | None
    refused: str | None = None  # the API server refused to create the replacement (ResourceQuota): its error


@dataclass
class Evictions:
    """What the node actions took off the nodes: evictions in queue order, drains refused (node → message)."""

    evictions: list[Eviction] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def _refusals(scenario: Scenario, drained: set[str], removed: set[str]) -> dict[str, str]:
    """kubectl drain's refusal per drained node running pods that declare no controller (no `--force`)."""
    bare: dict[str, list[str]] = {}
    for pod in scenario.pods:
        if _moves(pod, drained, removed) and pod.node_name not in removed and controller_of(pod) is None:
            bare.setdefault(pod.node_name, []).append(pod.key)
    return {node: f"{UNMANAGED_FATAL}: {', '.join(keys)}" for node, keys in bare.items()}


def apply_node_actions(scenario: Scenario, actions: NodeActions) -> tuple[Scenario, Evictions]:
    """A new scenario with the actions applied (replacements at the end of its queue) and what was evicted."""
    _check_names(actions, scenario.nodes)
    removed = set(actions.remove)
    refused = _refusals(scenario, set(actions.drain), removed)
    drained = set(actions.drain) - set(refused)
    fenced = set(actions.cordon) | set(actions.drain)
    nodes = [cordoned(n) if n.name in fenced else n for n in scenario.nodes if n.name not in removed]
    kept: list[Pod] = []
    leaving: list[Pod] = []
    for pod in scenario.pods:
        if _moves(pod, drained, removed):
            leaving.append(pod)
        elif (pod.bound and pod.node_name in removed) or _pinned_to(pod) & removed:
            continue  # a DaemonSet pod of a removed node (running or still to create): gone with it
        else:
            kept.append(pod)
    controllers = Controllers.of(scenario)  # the quotas' usage of the scenario after the actions
    made = {id(pod): (new, error) for pod, new, error in controllers.deleted(leaving)}
    evictions = [Eviction(pod, *made.get(id(pod), (None, None))) for pod in leaving]
    new = [e.replacement for e in evictions if e.replacement is not None and e.refused is None]
    moved = replace(scenario, nodes=nodes, pods=kept + new, warnings=list(scenario.warnings), quota=controllers.quota,
                    refused=[*scenario.refused, *((e.replacement, e.refused) for e in evictions
                                                  if e.replacement is not None and e.refused is not None)])
    lost = [e.pod.key for e in evictions if e.replacement is None]
    if lost:
        moved.warnings.append(f"{len(lost)} pod(s) of removed nodes have no controller to recreate them and are lost "
                              f"(e.g. {lost[0]})")
    moved.warnings += [f"drain of {node} refused, as kubectl drain without --force: {msg}"
                       for node, msg in refused.items()]
    return moved, Evictions(evictions, refused)


def eviction_report(result: SimulationResult, actions: NodeActions, evicted: Evictions) -> dict:
    """What the node actions did: each evicted pod's replacement and where it went (None: still pending), the
    pods lost, the drains refused, the nodes left cordoned (`--cordon` and `--drain`: a refused drain's node too,
    as `kubectl drain` cordons before it evicts); `allPlaced` the answer (every replacement placed, nothing lost
    or refused)."""
    names = result.state.node_names
    placed = {s.pod.key: None if s.node is None else names[s.node] for s in result.steps}  # the last step wins
    moves = [{"pod": e.pod.name, "replacement": e.replacement.name, "from": e.pod.node_name,
              "to": None if e.refused else placed.get(e.replacement.key),
              **({"notCreated": e.refused} if e.refused else {})}
             for e in evicted.evictions if e.replacement is not None]
    lost = [{"pod": e.pod.name, "from": e.pod.node_name} for e in evicted.evictions if e.replacement is None]
    cordoned = [n for n in dict.fromkeys([*actions.cordon, *actions.drain]) if n not in actions.remove]
    return {**actions.to_dict(), "evicted": moves, "lost": lost, "refused": evicted.refused, "cordoned": cordoned,
            "allPlaced": all(m["to"] is not None for m in moves) and not lost and not evicted.refused}
