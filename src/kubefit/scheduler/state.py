"""ClusterState: the whole cluster as int64 numpy arrays (allocatable, requested, non-zero requested).

Columns follow the resource index of DESIGN.md: cpu (millicores), memory, pods, ephemeral-storage, then
extended / hugepages / other scalar resources in first-seen order.  `requested[:, pods]` counts pods.
Binding a pod updates one row.

Planning (`kubefit.planning.consolidate`) deletes nodes in trials and takes trials back: `remove_node` keeps
the node's row (empty, marked in `removed`) so that every array keeps its shape, and `checkpoint` /
`rollback` restore the nodes a trial changed exactly as they were (see `StateJournal`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.quantity import scheduler_units
from kubefit.k8s.requests import DemandMemo, PodDemand
from kubefit.k8s.resourcenames import BASIC_RESOURCES, CPU, MEMORY, PODS, is_scalar

try:  # a bind's row additions in C (_countkernels.c), built when the package is installed with a C compiler
    from kubefit.scheduler._countkernels import add_rows as _add_rows
except ImportError:  # pragma: no cover - numpy's row additions (the reference)
    _add_rows = None

INT64_MAX = np.iinfo(np.int64).max
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
ANY_IP = "0.0.0.0"


def host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """The pod's container ports with a host port, sanitized as `HostPortInfo` does: (hostIP or 0.0.0.0,
    protocol or TCP, hostPort)."""
    return [(p.host_ip or ANY_IP, p.protocol or "TCP", p.host_port)
            for c in pod.containers for p in c.ports if p.host_port > 0]


@dataclass
class ClusterState:
    nodes: list[Node]
    resources: list[str]
    allocatable: np.ndarray  # [N, R] int64
    requested: np.ndarray  # [N, R] int64, NodeInfo.Requested; pods column = number of pods
    nonzero_requested: np.ndarray  # [N, 2] int64, NodeInfo.NonZeroRequested (cpu, memory)
    index: dict[str, int] = field(default_factory=dict)
    node_index: dict[str, int] = field(default_factory=dict)
    version: int = 0  # bumped on every bind, lets callers cache per-state work
    pods: list[list[Pod]] = field(default_factory=list)  # per node: the pods bound there (NodeInfo.Pods)
    objects: ClusterObjects = field(default_factory=ClusterObjects)  # Services, ReplicaSets, PVCs, ...
    changes: list[tuple[int, Pod, int]] = field(default_factory=list)  # (node, pod, +1 bound / -1 removed)
    # per node, NodeInfo.UsedPorts: hostIP → {(protocol, hostPort)}; a SET, so removing a pod frees its ports
    # even when another pod on the node declared the same one (upstream's bookkeeping, kept exactly)
    used_ports: list[dict[str, set[tuple[str, int]]]] = field(default_factory=list)
    # `spec.priority` → how many pods of `pods` carry it (preemption asks whether any pod has a lower one)
    priorities: Counter[int] = field(default_factory=Counter)
    dra: Any = None  # the run's claims and devices in use (scheduler.dra.state.DraState); None without DRA
    # per node: its (allocatable, requested, nonzero_requested) rows as Python lists, for the engine's scalar
    # kernels (rows.py); a node's entry is dropped whenever its row changes
    _row_lists: dict[int, tuple[list, list, list]] = field(default_factory=dict, repr=False, compare=False)
    # bool [N]: the nodes a what-if deleted (`remove_node`); None while there are none. Replaced, never changed
    # in place, so that readers may remember it by identity. A removed node's row stays, empty: nothing chooses it
    # (the engine), and the plugins that read other nodes (PodTopologySpread's domains, ImageLocality's node
    # counts) leave it out, as kube-scheduler's snapshot would no longer list it
    removed: np.ndarray | None = None
    _journal: StateJournal | None = field(default=None, repr=False, compare=False)  # `checkpoint`
    # a bound pod's `bound_demand`, once per set of request inputs however often a trial unbinds and binds it
    # again (shared by copies: it depends on the pod alone)
    _demands: DemandMemo = field(default_factory=lambda: DemandMemo(use_status_resources=True), repr=False,
                                 compare=False)
    # the containers tuple of the last pod bound that declared no host port (`_add_ports`): a memo, not state
    _no_ports: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.index = {name: i for i, name in enumerate(self.resources)}
        self.node_index = {n.name: i for i, n in enumerate(self.nodes)}
        if len(self.pods) != len(self.nodes):
            self.pods = [[] for _ in self.nodes]
        if len(self.used_ports) != len(self.nodes):
            self.used_ports = [{} for _ in self.nodes]
        if not self.priorities:
            self.priorities = Counter(p.priority for pods in self.pods for p in pods)

    @property
    def node_names(self) -> list[str]:
        return [n.name for n in self.nodes]

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def present_count(self) -> int:
        """How many nodes the cluster has: all of them, but those `remove_node` deleted."""
        return len(self.nodes) - (0 if self.removed is None else int(np.count_nonzero(self.removed)))

    def column(self, name: str) -> int | None:
        return self.index.get(name)

    def ensure_resources(self, names: Iterable[str]) -> None:
        """Add zero columns for scalar resources no node has (a pod may still request them)."""
        new = [n for n in names if n not in self.index and is_scalar(n)]
        if not new:
            return
        pad = np.zeros((len(self.nodes), len(new)), dtype=np.int64)
        self.allocatable = np.hstack([self.allocatable, pad])
        self.requested = np.hstack([self.requested, pad])
        self.resources.extend(new)
        self.index = {name: i for i, name in enumerate(self.resources)}
        self._row_lists.clear()

    def row_lists(self, node: int) -> tuple[list, list, list]:
        """The node's allocatable, requested and non-zero requested rows as Python ints (cached until it changes)."""
        rows = self._row_lists.get(node)
        if rows is None:
            rows = self._row_lists[node] = (self.allocatable[node].tolist(), self.requested[node].tolist(),
                                            self.nonzero_requested[node].tolist())
        return rows

    def bound_demand(self, pod: Pod) -> PodDemand:
        """What a bound pod holds on its node: `pod_demand` with its status's resources (an in-place resize
        counts), computed once per set of request inputs (`DemandMemo`)."""
        return self._demands(pod)

    def demand_vector(self, demand: PodDemand) -> np.ndarray:
        """The pod's `requests` as a row over this state's columns (pods column = 1)."""
        self.ensure_resources(demand.requests)
        row = np.zeros(len(self.resources), dtype=np.int64)
        for name, amount in demand.requests.items():
            col = self.index.get(name)
            if col is not None and name != PODS:
                row[col] = amount
        row[self.index[PODS]] = 1
        return row

    def bind(self, node: int, demand: PodDemand, row: np.ndarray | None = None, pod: Pod | None = None,
             nonzero: np.ndarray | None = None) -> None:
        """Account the pod on `node` (what the scheduler cache's assume does); `pod` joins the node's pods.
        `row` and `nonzero` (its `nonzero_pair`) spare converting the demand again."""
        if self._journal is not None:
            self._journal.record(self, node)
        # whole-row (array) additions: int64 sums wrap silently, as NodeInfo's do in Go (only absurd inputs get there);
        # added in place through the node's row (a view): `a[node] += row` would also write the row back over itself
        vector = self.demand_vector(demand) if row is None else row  # (first: a new resource widens the arrays)
        if nonzero is None or not _added_in_c(self, node, vector, nonzero):
            requested = self.requested[node]
            requested += vector
            if nonzero is None:
                self._add_nonzero(node, demand, 1)
            else:
                pair = self.nonzero_requested[node]
                pair += nonzero
        self._row_lists.pop(node, None)
        if pod is not None:
            self.pods[node].append(pod)
            self.priorities[pod.priority] += 1
            self.changes.append((node, pod, 1))
            if pod.containers is not self._no_ports:
                self._add_ports(node, pod)
        self.version += 1

    def _add_ports(self, node: int, pod: Pod) -> None:
        """The pod's host ports into the node's `used_ports`; a pod's containers declaring none are remembered
        (`_no_ports`: the replicas of a workload share their containers tuple, `load.decode_pod`), so that the next
        bind of one of them skips the walk."""
        declared = host_ports(pod)
        if not declared:
            self._no_ports = pod.containers
        for ip, proto, port in declared:
            self.used_ports[node].setdefault(ip, set()).add((proto, port))

    def unbind(self, node: int, pod: Pod, demand: PodDemand | None = None, row: np.ndarray | None = None) -> None:
        """Remove `pod` from `node` (a preemption victim, or a pod that ended: the cache's RemovePod): its
        requests and its place among the node's pods."""
        if self._journal is not None:
            self._journal.record(self, node)
        demand = demand or self.bound_demand(pod)
        self.requested[node] -= self.demand_vector(demand) if row is None else row
        self._add_nonzero(node, demand, -1)
        self._row_lists.pop(node, None)
        pods = self.pods[node]
        if pods and pods[-1] is pod:  # the last one (how `remove_node` takes them): no copy of the list
            pods.pop()
            self._count_priority(pod.priority, -1)
        else:
            self.pods[node] = [p for p in pods if p is not pod]
            self._count_priority(pod.priority, len(self.pods[node]) - len(pods))
        self.changes.append((node, pod, -1))
        for ip, proto, port in host_ports(pod):
            self.used_ports[node].get(ip, set()).discard((proto, port))
        if self.dra is not None and self.dra.holds(pod):  # the resourceclaim controller's cleanup, the GC's
            self.dra.release(pod)
        self.version += 1

    def _count_priority(self, priority: int, delta: int) -> None:
        left = self.priorities[priority] + delta
        if left > 0:
            self.priorities[priority] = left
        else:
            del self.priorities[priority]

    def has_pod_below(self, priority: int) -> bool:
        """Whether a pod of lower `spec.priority` than `priority` runs on any node (what DefaultPreemption
        could evict: none, and its dry run finds no victim anywhere)."""
        return any(p < priority for p in self.priorities)

    @staticmethod
    def nonzero_pair(demand: PodDemand) -> np.ndarray | None:
        """The demand's non-zero (cpu, memory) as an int64 pair; None beyond int64 (`_add_nonzero` says so)."""
        try:
            return np.array((demand.nonzero_cpu, demand.nonzero_memory), dtype=np.int64)
        except OverflowError:
            return None

    def _add_nonzero(self, node: int, demand: PodDemand, sign: int) -> None:
        """Add (sign 1) or take back (-1) the pod's non-zero cpu/memory on `node`, as one array operation:
        int64 sums wrap silently like NodeInfo's in Go, where scalar numpy arithmetic would warn."""
        try:
            self.nonzero_requested[node] += (sign * demand.nonzero_cpu, sign * demand.nonzero_memory)
        except (TypeError, OverflowError):  # an amount beyond int64 (numpy cannot cast it): the scalar adds say so
            self.nonzero_requested[node, 0] += sign * demand.nonzero_cpu
            self.nonzero_requested[node, 1] += sign * demand.nonzero_memory

    def all_pods(self) -> list[Pod]:
        """Every pod bound to a node, node by node."""
        return [p for pods in self.pods for p in pods]

    def copy(self, *, frozen_dra: bool = False) -> ClusterState:
        """An independent copy; `frozen_dra`: its DRA state ignores binds and removals (a preemption dry run)."""
        return ClusterState(list(self.nodes), list(self.resources), self.allocatable.copy(),
                            self.requested.copy(), self.nonzero_requested.copy(),
                            pods=[list(p) for p in self.pods], objects=self.objects,
                            priorities=Counter(self.priorities),
                            used_ports=[{ip: set(pp) for ip, pp in used.items()} for used in self.used_ports],
                            dra=None if self.dra is None else self.dra.copy(frozen=frozen_dra), removed=self.removed,
                            _demands=self._demands)

    # ------------------------------------------------------------------ what-if on the node set, trials
    def remove_node(self, node: int) -> list[Pod]:
        """Delete `node` from the cluster (cluster-autoscaler's `RemoveNodeInfo` in its removal simulation): its
        pods are removed (returned, in the node's order) and it is marked in `removed`; its row stays, empty."""
        pods = list(self.pods[node])
        for pod in reversed(pods):
            self.unbind(node, pod)
        if self._journal is not None:
            self._journal.record(self, node)
        removed = np.zeros(len(self.nodes), dtype=bool) if self.removed is None else self.removed.copy()
        removed[node] = True
        self.removed = removed
        return pods

    def checkpoint(self) -> None:
        """Start a trial: until `rollback` or `commit`, each node's row, pods and ports are recorded before their
        first change (one trial at a time)."""
        if self._journal is not None:
            raise RuntimeError("a trial is already open on this state (checkpoint without rollback or commit)")
        self._journal = StateJournal(self.removed, None if self.dra is None else self.dra.copy())

    @property
    def in_trial(self) -> bool:
        """Whether a trial is open (`checkpoint` without `rollback` or `commit` yet)."""
        return self._journal is not None

    def commit(self) -> None:
        """Keep what the trial changed."""
        self._journal = None

    def rollback(self) -> tuple[list[int], list[Pod]]:
        """Take the trial back: the nodes it changed get their rows, pods (in their order) and ports as they were
        at `checkpoint`, and `removed` too. Pods are unbound and bound again through `unbind` / `bind`, so that
        the change log (`changes`, which the per-state counts follow) and anything else they maintain agree.
        Returns the nodes restored and the pods bound back."""
        journal, self._journal = self._journal, None
        if journal is None:
            raise RuntimeError("no trial is open on this state (rollback without checkpoint)")
        bound_back: list[Pod] = []
        for node, (requested, nonzero, pods, ports) in journal.rows.items():
            before = {id(p) for p in pods}
            for pod in [p for p in self.pods[node] if id(p) not in before]:
                self.unbind(node, pod)
            now = {id(p) for p in self.pods[node]}
            for pod in pods:
                if id(pod) not in now:
                    self.bind(node, self.bound_demand(pod), pod=pod)
                    bound_back.append(pod)
            width = self.requested.shape[1]  # a pod of the trial may have added a resource column
            self.requested[node] = np.pad(requested, (0, width - len(requested)))
            self.nonzero_requested[node] = nonzero
            self.pods[node] = pods
            self.used_ports[node] = ports
            self._row_lists.pop(node, None)
        self.removed = journal.removed
        if journal.dra is not None:  # the claims and devices in use as they were (`bind` above reserved none)
            self.dra.restore(journal.dra)
        self.version += 1
        return sorted(journal.rows), bound_back


class StateJournal:
    """What a trial changed, recorded before the change: per node its requested and non-zero rows, its pods (in
    `NodeInfo.Pods` order) and its used ports; and the `removed` mask at `checkpoint`. Copies of a few nodes,
    not of the state: a trial that moves a node's pods touches that node and the nodes that took them. With DRA,
    a copy of the claims and devices in use at `checkpoint` (dicts of the run's claims: DRA scenarios are small)."""

    def __init__(self, removed: np.ndarray | None, dra: Any = None) -> None:
        self.removed = removed
        self.dra = dra
        self.rows: dict[int, tuple[np.ndarray, np.ndarray, list[Pod], dict[str, set[tuple[str, int]]]]] = {}

    def record(self, state: ClusterState, node: int) -> None:
        if node not in self.rows:
            self.rows[node] = (state.requested[node].copy(), state.nonzero_requested[node].copy(),
                               list(state.pods[node]), {ip: set(pp) for ip, pp in state.used_ports[node].items()})


def _added_in_c(state: ClusterState, node: int, row: np.ndarray, nonzero: np.ndarray) -> bool:
    """A bind's `row` and `nonzero` pair added to the node's rows in one call (`_countkernels.add_rows`, int64 sums
    wrapping as numpy's): False, nothing added, where it does not take them as given (no kernel built, a row of
    another type or width): numpy's row additions then (the reference)."""
    if _add_rows is None:
        return False
    try:
        _add_rows(node, 1, state.requested, row, state.nonzero_requested, nonzero)
    except (BufferError, TypeError, ValueError, OverflowError, IndexError):
        return False
    return True


def _resource_index(nodes: Sequence[Node], pods: Iterable[Pod]) -> list[str]:
    names = list(BASIC_RESOURCES)
    seen = set(names)
    for rl in [n.allocatable for n in nodes]:
        for name in rl:
            if name not in seen and is_scalar(name):
                seen.add(name)
                names.append(name)
    read: set[int] = set()  # the container and status tuples read so far (a workload's pods share theirs)
    for pod in pods:
        for part in (pod.containers, pod.init_containers, pod.container_statuses, pod.init_container_statuses):
            if id(part) in read:  # its names are in `seen` already: the order of first appearance stays
                continue
            read.add(id(part))  # (the pods, alive meanwhile, keep every id distinct)
            for item in part:
                lists = (item.requests,) if isinstance(item, Container) else (item.requests or {},
                                                                               item.allocated_resources)
                for rl in lists:
                    for name in rl:
                        if name not in seen and is_scalar(name):
                            seen.add(name)
                            names.append(name)
    return names


def _clamp(x: int) -> int:
    return min(max(x, -INT64_MAX - 1), INT64_MAX)


def _bind_all(state: ClusterState, placed: list[tuple[int, Pod]]) -> None:
    """`state.bind` of every (node, pod) in order, the sums done once per distinct demand: each pod's row is
    gathered from its demand's (a workload's pods share one, `bound_demand`) and added with `np.add.at`,
    whose int64 sums wrap as the binds' would (integer addition in any order gives the same int64). The
    pods lists, priorities, change log and host ports are what the binds would leave. A demand beyond
    int64 binds pod by pod, where `_add_nonzero` says what it does."""
    if not placed:
        return
    demands = [state.bound_demand(pod) for _node, pod in placed]
    code: dict[int, int] = {}  # id of a demand → its row among `distinct` (the demands are kept alive)
    distinct: list[PodDemand] = []
    for d in demands:
        if id(d) not in code:
            code[id(d)] = len(distinct)
            distinct.append(d)
    for d in distinct:
        state.ensure_resources(d.requests)  # every column first: a later demand may add one
    try:
        rows = np.array([state.demand_vector(d) for d in distinct], dtype=np.int64)
        nonzero = np.array([(d.nonzero_cpu, d.nonzero_memory) for d in distinct], dtype=np.int64)
    except OverflowError:
        for node, pod in placed:
            state.bind(node, state.bound_demand(pod), pod=pod)
        return
    nodes = np.fromiter((node for node, _pod in placed), dtype=np.int64, count=len(placed))
    which = np.fromiter((code[id(d)] for d in demands), dtype=np.int64, count=len(placed))
    np.add.at(state.requested, nodes, rows[which])
    np.add.at(state.nonzero_requested, nodes, nonzero[which])
    ports: dict[int, list[tuple[str, str, int]]] = {}  # host_ports, once per shared containers tuple
    for node, pod in placed:
        state.pods[node].append(pod)
        declared = ports.get(id(pod.containers))
        if declared is None:
            declared = ports[id(pod.containers)] = host_ports(pod)
        for ip, proto, port in declared:
            state.used_ports[node].setdefault(ip, set()).add((proto, port))
    state.priorities.update(pod.priority for _node, pod in placed)
    state.changes += ((node, pod, 1) for node, pod in placed)
    state._row_lists.clear()


def compile_state(nodes: Sequence[Node], pods: Iterable[Pod] = (), objects: ClusterObjects | None = None
                  ) -> ClusterState:
    """Build the arrays from nodes and every pod bound to one of them (`spec.nodeName`); `objects` are the
    scenario's other cluster objects (Services, ReplicaSets, ...) the plugins read."""
    pods = list(pods)
    resources = _resource_index(nodes, pods)
    index = {name: i for i, name in enumerate(resources)}
    keys = [tuple(node.allocatable.items()) for node in nodes]
    rows: dict[tuple, list[int]] = {}  # per distinct allocatable list (nodes of one type share it): its row
    for key in keys:
        if key not in rows:
            row = rows[key] = [0] * len(resources)
            for name, nanos in key:
                col = index.get(name)
                if col is not None:
                    row[col] = _clamp(scheduler_units(name, nanos))
    alloc = np.array([rows[key] for key in keys], dtype=np.int64).reshape(len(nodes), len(resources))
    state = ClusterState(list(nodes), resources, alloc, np.zeros_like(alloc),
                         np.zeros((len(nodes), 2), dtype=np.int64))
    on = state.node_index.get
    _bind_all(state, [(node, pod) for pod in pods if (node := on(pod.node_name)) is not None
                      and pod.bound and pod.phase not in ("Succeeded", "Failed")])
    if objects is not None:
        state.objects = objects
    if any(state.objects.of(k) for k in DRA_KINDS) or any(p.resource_claims for p in pods):
        from kubefit.scheduler.dra.state import attach_dra

        attach_dra(state, pods)  # DynamicResources' view of the cluster: claims, devices in use, each node's pools
    state.version = 0
    return state


__all__ = ["ClusterState", "StateJournal", "compile_state", "CPU", "MEMORY"]
