"""Opportunistic batching (KEP-5598): a pod like the one just scheduled takes the next node of that pod's
sorted scores instead of a full cycle.

`pkg/scheduler/framework/runtime/batch.go` (`OpportunisticBatch`: `GetNodeHint`, `batchStateCompatible`,
`StoreScheduleResults`) and its calls in `schedule_one.go` (`findNodesThatFitPod`, `schedulePod`), v1.35+
behind the feature gate `OpportunisticBatching` (beta, on; kubernetes#135231):

- After a cycle that scored its feasible nodes and bound the pod, the other scored nodes, best first, are
  kept with the pod's scheduling signature (`StoreScheduleResults`). A pod without a signature, or a cycle
  with a single feasible node, clears them.
- The next cycle asks for a hint after PreFilter. There is one only when that cycle immediately follows the
  storing one, the pod's signature equals the stored one, and the node chosen last no longer passes the
  Filter plugins for this pod (its row was the only one the bind changed: the rest of the list is still
  ordered right). The hint is the head of the list, popped; it is filtered again (`evaluateNominatedNode`,
  a pod's nominated node going first) and, if it passes, the pod is bound there without scoring.
- v1.37 (kubernetes#140289, KEP-5598 "Rescoring the Last Chosen Node"): when the node chosen last still
  passes, it rejoins the list with its new score, the list's normalized scores are computed over the list,
  the list is sorted again and its head is the hint.

What a simulation cannot reproduce, and how kubefit decides instead (README "Which Kubernetes version"):
- The batch expires 500 ms after it was stored (`maxBatchAge`). A simulation has no wall clock, and the
  real scheduler takes a few milliseconds a cycle: kubefit never expires a batch.
- Upstream's list is a heap ordered by total score, ties by a `Randomizer` that is 0 without extenders, so
  tied nodes come off in the heap's own order. kubefit orders ties by node order, which is what the
  reference vectors of v1.36.3 show (the hint is the first of the remaining tied nodes).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

import numpy as np

_GONE = np.iinfo(np.int64).min


class RankedNodes:
    """A cycle's scored nodes but its host, by total score (best first, ties in node order): the heap of
    `newSortedNodeScores`, kept as one int64 rank per node (total, then the lower node index first) so that a
    pop is one argmax over the nodes, and nothing is sorted for a list the next pod never reads.

    `load` gives the (nodes, totals) when they are first read, `size` their number without the host."""

    __slots__ = ("_nodes", "_ranks", "_host", "_len", "_load", "_span")

    def __init__(self, nodes: np.ndarray | None, totals: np.ndarray | None, host: int, *, size: int | None = None,
                 load: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        self._nodes, self._ranks, self._host, self._load = nodes, totals, host, load
        self._span = 0  # ranks not made yet: `_ready` turns the totals into ranks
        self._len = size if size is not None else len(nodes) - int(np.count_nonzero(nodes == host))

    def _ready(self) -> tuple[np.ndarray, np.ndarray]:
        if self._load is not None:
            self._nodes, self._ranks = self._load()
            self._load = None
        if not self._span:
            nodes, totals = np.asarray(self._nodes, dtype=np.int64), np.asarray(self._ranks, dtype=np.int64)
            self._span = int(nodes.max(initial=0)) + 2
            ranks = totals * self._span + (self._span - 1 - nodes)  # |total| ≤ Σ|weight|·100: no overflow
            ranks[nodes == self._host] = _GONE
            self._nodes, self._ranks = nodes, ranks
        return self._nodes, self._ranks

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[int]:
        nodes, ranks = self._ready()
        order = np.argsort(-ranks[ranks != _GONE], kind="stable")
        return iter(nodes[ranks != _GONE][order].tolist())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other)  # type: ignore[call-overload]

    def popleft(self) -> int:
        """`sortedNodes.Pop()`: the best node left."""
        nodes, ranks = self._ready()
        at = int(ranks.argmax())
        ranks[at] = _GONE
        self._len -= 1
        return int(nodes[at])

    def with_node(self, node: int, total: int) -> RankedNodes:
        """The list with `node` (re)scored at `total` (v1.37's rescoring when every score plugin normalizes as
        the identity: the others' totals are unchanged)."""
        nodes, ranks = self._ready()
        span = max(self._span, node + 2)
        if span != self._span:  # a node beyond the ranks' range: rank everything again
            alive = ranks != _GONE
            totals = (ranks[alive] - (self._span - 1 - nodes[alive])) // self._span
            return RankedNodes(np.append(nodes[alive], node), np.append(totals, total), -1)
        out = RankedNodes(np.append(nodes, node), np.append(ranks, total * span + (span - 1 - node)), -1,
                          size=self._len + 1)
        out._span = span
        return out

    def copy(self) -> RankedNodes:
        nodes, ranks = self._ready()  # a trial's rollback restores the list as it was stored
        out = RankedNodes(nodes, ranks.copy(), self._host, size=self._len)
        out._span = self._span
        return out


@dataclass
class BatchState:
    """`batchState`: the signature of the pod that stored it and its other scored nodes, best first."""

    signature: Hashable
    sorted_nodes: deque[int] | RankedNodes = field(default_factory=deque)

    def copy(self) -> BatchState:
        nodes = self.sorted_nodes
        return BatchState(self.signature, nodes.copy() if isinstance(nodes, RankedNodes) else deque(nodes))


@dataclass
class OpportunisticBatch:
    """The batch of one scheduler (one engine): the stored list and the last cycle (`lastCycle`).

    `rescore_last_node`: v1.37's rescoring of the node chosen last when it still fits."""

    rescore_last_node: bool = False
    state: BatchState | None = None
    last_cycle: int = -2  # the cycle that stored results last (`lastCycle.cycleCount`)
    last_node: int | None = None  # the node it chose (`lastCycle.chosenNode`)
    batched: int = 0  # pods bound to their hint (`batchedPods`)

    def hint(self, engine, sh, signature: Hashable | None, cycle: int) -> int | None:
        """`GetNodeHint`: the node to try first for this cycle's pod, or None (`batchStateCompatible`)."""
        state = self.state
        if state is None or not state.sorted_nodes:
            return None
        if cycle != self.last_cycle + 1 or signature is None or signature != state.signature:
            return None  # another pod's cycle came between, or another kind of pod
        last = self.last_node
        if last is None or engine.node_removed(last):
            return None  # BatchFlushNodeMissing
        if engine.passes_filters(sh, last):  # the last node can take this pod too
            if not self.rescore_last_node:
                return None  # BatchFlushNodeNotFull: its new score is unknown (v1.35, v1.36)
            state.sorted_nodes = engine.ranked(sh, last, state.sorted_nodes)
        return state.sorted_nodes.popleft()

    def store(self, signature: Hashable | None, hint: int | None, chosen: int,
              others: list[int] | RankedNodes | None, cycle: int) -> None:
        """`StoreScheduleResults`: remember the cycle; keep the batch when its hint was used, else start a new
        one from this cycle's other scored nodes (`others`, best first; None: not scored)."""
        self.last_cycle, self.last_node = cycle, chosen
        if hint is not None and hint == chosen:
            self.batched += 1
            return
        if signature is None or not others:
            self.state = None
        else:
            self.state = BatchState(signature, others if isinstance(others, RankedNodes) else deque(others))

    def snapshot(self) -> tuple:
        """What a trial's rollback restores (`Engine.checkpoint`)."""
        return None if self.state is None else self.state.copy(), self.last_cycle, self.last_node, self.batched

    def restore(self, saved: tuple) -> None:
        state, self.last_cycle, self.last_node, self.batched = saved
        self.state = None if state is None else state.copy()


# --------------------------------------------------------------------------- the pods' signatures
# `frameworkImpl.SignPod` (v1.36.3 `framework/runtime/framework.go`): the scheduler name and the fragments of the
# profile's PreFilter, Filter, PreScore and Score plugins (`SignPod` of each, `kube-scheduler/framework/
# signers.go`), or none when a plugin refuses the pod. Pods with equal signatures batch: what the signature
# leaves out (the namespace, the priority, explicit zero cpu/memory requests) does not keep them apart.

def _spread(plugin, pod, demand):
    """`PodTopologySpread.SignPod`: "pods with topology constraints are not signable", and neither are any
    pods while the plugin has default constraints (`System` defaulting: always)."""
    if pod.topology_spread_constraints or getattr(plugin, "default_constraints", ()):
        raise _Unsignable
    return None


def _inter_pod_affinity(plugin, pod, demand):
    """`InterPodAffinity.SignPod`: "pods with InterPodAffinity are not signable"; the labels otherwise (other
    pods' terms may match them), unless `ignorePreferredTermsOfExistingPods`."""
    affinity = pod.affinity or {}
    if affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None:
        raise _Unsignable
    if getattr(plugin, "ignore_preferred_terms_of_existing_pods", False):
        return None
    return ("v1.Pod.Labels", tuple(sorted(pod.labels.items())))


def _claims(plugin, pod, demand):
    """`DynamicResources.SignPod`: "pods with dra resource claims are not signable"."""
    if pod.resource_claims:
        raise _Unsignable
    return None


def _resources(plugin, pod, demand):
    """`ResourcesSignerName`: `computePodResourceRequest` (cpu, memory and ephemeral storage as numbers, zero
    or absent alike; extended resources as the map they are)."""
    basic = ("cpu", "memory", "ephemeral-storage")
    backed = getattr(plugin, "backed", ())
    if backed and any(q and name in backed for name, q in demand.requests.items()):
        raise _Unsignable  # "signature disabled when dra extended resources are used in the cluster"
    return ("v1.Pod.Spec.ContainerRequestsAndOverheads()",
            tuple(sorted((k, v) for k, v in demand.requests.items() if v or k not in basic)))


def _node_affinity(plugin, pod, demand):
    """`NodeAffinitySigner` + the node selector."""
    selector = None if pod.node_selector is None else tuple(sorted(pod.node_selector.items()))
    return ("v1.Pod.Spec.Affinity.NodeAffinity", (selector, repr((pod.affinity or {}).get("nodeAffinity"))))


def _host_ports(plugin, pod, demand):
    """`HostPortsSigner`: the sorted set of host ports of the containers and init containers."""
    ports = {p.host_port for c in (*pod.containers, *pod.init_containers) for p in c.ports if p.host_port}
    return ("v1.Pod.Spec.HostPorts()", tuple(sorted(ports)))


def _tolerations(plugin, pod, demand):
    """`TolerationsSigner`."""
    return ("v1.Pod.Spec.Tolerations", pod.tolerations)


def _images(plugin, pod, demand):
    """`ImageLocality.SignPod`: the sorted set of normalized image names."""
    from kubefit.scheduler.plugins.imagelocality import normalized_image_name

    return ("v1.Pod.Spec.CanonicalImageNames()",
            tuple(sorted({normalized_image_name(c.image) for c in (*pod.containers, *pod.init_containers)})))


def _volumes(plugin, pod, demand):
    """`VolumesSigner` (every volume plugin writes the same fragment)."""
    return ("v1.Pod.Spec.Volumes.NonSyntheticSources()", repr(pod.volumes))


def _node_name(plugin, pod, demand):
    return ("v1.Pod.Spec.NodeName", pod.node_name)


FRAGMENTS = {
    "NodeResourcesFit": _resources, "NodeResourcesBalancedAllocation": _resources,
    "NodeAffinity": _node_affinity, "NodeName": _node_name, "NodePorts": _host_ports,
    "TaintToleration": _tolerations, "NodeUnschedulable": _tolerations, "ImageLocality": _images,
    "InterPodAffinity": _inter_pod_affinity, "PodTopologySpread": _spread, "DynamicResources": _claims,
    "VolumeBinding": _volumes, "VolumeZone": _volumes, "VolumeRestrictions": _volumes, "NodeVolumeLimits": _volumes,
}


class _Unsignable(Exception):
    """A plugin's SignPod refused the pod."""


def signature(fw, pod, demand) -> Hashable | None:
    """The pod's scheduling signature in the profile `fw`, or None (a plugin refused it, or a plugin kubefit
    has no signer for: the profile does not batch, as `computeBatchablePlugins` disables one whose plugins
    do not all sign)."""
    plugins = dict(fw.filters)
    plugins.update((name, plugin) for name, plugin, _w in fw.scorers)
    fragments = {}
    try:
        for name, plugin in plugins.items():
            signer = FRAGMENTS.get(name)
            if signer is None:
                own = getattr(plugin, "signature", None)
                if own is None:
                    return None
                fragments[name] = own(pod)
                continue
            fragment = signer(plugin, pod, demand)
            if fragment is not None:
                fragments[fragment[0]] = fragment[1]
    except _Unsignable:
        return None
    return (pod.scheduler_name, tuple(sorted(fragments.items())))
