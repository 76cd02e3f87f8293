"""The ideal: a lower bound on the nodes that any consolidation of today's workload keeps.

Today's cluster is a valid placement; a consolidation removes nodes and moves their pods through the
profile's filters. Whatever it does, it keeps:

- the nodes it may not remove (`kept`: refused by a drainability rule or an annotation, not a candidate for
  the utilization threshold, running a pod pinned to its node) — their pods never leave;
- for each resource NodeResourcesFit checks in every profile (cpu, memory, ephemeral-storage, pods and the
  extended resources it does not ignore): enough further nodes to hold the workload. DaemonSet and mirror
  pods are per-node overhead (they leave with their node), so the workload W (every other pod that stays in
  the cluster) is counted against what a node has left after its own overhead pods, its `room`
  max(allocatable − overhead, its workload today). A node only gains a pod that requests some of a resource
  when Filter lets it (then requested ≤ allocatable), so no kept node ever holds more of W than its room,
  and the further nodes number at least the smallest k whose k largest rooms add up to what the kept nodes
  cannot hold (k = ⌈W / room⌉ when the nodes are alike);
- for a required pod anti-affinity term whose topology key every node carries (with InterPodAffinity
  filtering): as many nodes as hold the pods that carry the term and match it today (they repel each
  other: a moved one lands where none of them is, so the count of such nodes never falls).

The bound is the largest of |kept| + max over resources of k, that count, and 1 (a cluster keeps a node). It never exceeds
what a consolidation keeps (`lowerBound ≤ nodesAfter`), and it is tight where the arithmetic is (pods that
pack exactly). Pods a consolidation might delete (no controller, with `--force` or safe-to-evict) are left
out of W; a pod resized in place counts the smaller of its spec and its actual requests.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate

import numpy as np

from kubefit.api.core import Pod
from kubefit.k8s.requests import pod_demand
from kubefit.k8s.resourcenames import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar
from kubefit.scheduler.config import NodeResourcesFitArgs, SchedulerConfiguration
from kubefit.scheduler.plugins.affinityterms import AffinityTerm, pod_terms
from kubefit.scheduler.plugins.fit import checked_resources
from kubefit.scheduler.plugins.interpodaffinity import namespace_labels
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.state import ClusterState

FIT, INTER_POD_AFFINITY = "NodeResourcesFit", "InterPodAffinity"


@dataclass
class LowerBound:
    """The bound and its parts: nodes kept, further nodes per resource, nodes an anti-affinity term spreads to."""

    nodes: int
    kept: int
    by_resource: dict[str, int] = field(default_factory=dict)
    anti_affinity: int = 0

    def to_dict(self) -> dict:
        return {"nodes": self.nodes, "kept": self.kept, "byResource": self.by_resource,
                "antiAffinity": self.anti_affinity}


def bounded_resources(state: ClusterState, config: SchedulerConfiguration) -> list[str]:
    """The state's resources NodeResourcesFit's Filter checks in every profile (none when a profile has no
    NodeResourcesFit Filter): pods always; the others when a pod requests them, unless ignored."""
    names = [r for r in state.resources if r in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or is_scalar(r)]
    for profile in config.profiles:
        if FIT not in profile.filter_plugins:
            return []
        args = profile.plugin_args.get(FIT) or NodeResourcesFitArgs()
        names = [r for r in names if r == PODS or checked_resources({r: 1}, args)]
    return names


def further_nodes(rooms: np.ndarray, need: int) -> int:
    """The fewest of these nodes whose rooms add up to `need` (largest first): ⌈need / room⌉ for equal rooms.

    >>> further_nodes(np.array([4000, 4000, 4000]), 6000), further_nodes(np.array([1, 8, 2]), 9)
    (2, 2)
    """
    if need <= 0:
        return 0
    total = list(accumulate(sorted(rooms.tolist(), reverse=True)))  # Python ints: exact, never wrap
    return min(bisect_left(total, need) + 1, len(rooms))


def _held(state: ClusterState, pods: Iterable[tuple[int, Pod]]) -> np.ndarray:
    """int64 [N, R]: per node the requests of the given (node, pod) pairs, as the state accounts bound pods."""
    out = np.zeros_like(state.requested)
    for node, pod in pods:
        out[node] += state.demand_vector(pod_demand(pod, use_status_resources=True))
    return out


def _resized_down(state: ClusterState, node: int, pod: Pod) -> np.ndarray:
    """How much more the pod holds today than its spec asks (a pod resized up in place moves with its spec)."""
    actual = state.demand_vector(pod_demand(pod, use_status_resources=True))
    spec = state.demand_vector(pod_demand(pod))
    return np.maximum(actual - spec, 0)


def resource_bound(state: ClusterState, config: SchedulerConfiguration, kept: set[int], overhead: set[int],
                   leaving: set[int]) -> dict[str, int]:
    """Per bounded resource, the further nodes beyond `kept` the workload needs (`overhead`, `leaving`: ids of
    the per-node pods and of the pods a consolidation may delete)."""
    names = bounded_resources(state, config)
    if not names:
        return {}
    present = np.ones(len(state), dtype=bool) if state.removed is None else ~state.removed
    per_node = [(n, p) for n, pods in enumerate(state.pods) for p in pods]
    own = _held(state, [(n, p) for n, p in per_node if id(p) in overhead])
    gone = _held(state, [(n, p) for n, p in per_node if id(p) in leaving])
    workload = state.requested - own - gone
    for n, p in per_node:
        if p.container_statuses and id(p) not in overhead and id(p) not in leaving:
            workload[n] -= _resized_down(state, n, p)
    room = np.maximum(state.allocatable - own, workload)
    is_kept = np.zeros(len(state), dtype=bool)
    is_kept[list(kept)] = True
    out = {}
    for name in names:
        col = state.index[name]
        need = sum(workload[present, col].tolist()) - sum(room[present & is_kept, col].tolist())
        out[name] = further_nodes(room[present & ~is_kept, col], need)
    return out


def anti_affinity_bound(state: ClusterState, config: SchedulerConfiguration, overhead: set[int],
                        leaving: set[int]) -> int:
    """The most nodes holding the pods of one required anti-affinity term that they match (every node carries
    its topology key; every profile filters with InterPodAffinity)."""
    if not all(INTER_POD_AFFINITY in p.filter_plugins for p in config.profiles):
        return 0
    present = np.flatnonzero(np.ones(len(state), dtype=bool) if state.removed is None else ~state.removed)
    table = node_labels(state)
    holders: dict[AffinityTerm, set[int]] = {}
    for n, pods in enumerate(state.pods):
        for pod in pods:
            if not pod.affinity or id(pod) in overhead or id(pod) in leaving:
                continue
            for term in pod_terms(pod).required_anti_affinity:
                if term.matches(pod, namespace_labels(state.objects, pod.namespace)):
                    holders.setdefault(term, set()).add(n)
    counts = [len(nodes) for term, nodes in holders.items()
              if table.column(term.topology_key).present[present].all()]
    return max(counts, default=0)


def lower_bound(state: ClusterState, config: SchedulerConfiguration, kept: set[int], overhead: set[int],
                leaving: set[int]) -> LowerBound:
    """The bound on today's `state` (see the module's docstring)."""
    by_resource = resource_bound(state, config, kept, overhead, leaving)
    spread = anti_affinity_bound(state, config, overhead, leaving)
    nodes = max(len(kept) + max(by_resource.values(), default=0), spread, min(1, state.present_count))
    return LowerBound(nodes, len(kept), by_resource, spread)
