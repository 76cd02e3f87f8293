"""NodePorts: a pod's host ports must be free on the node (`HostPortInfo.CheckConflict` against the
node's `UsedPorts`, kept by ClusterState through binds and removals).

A port is (hostIP, protocol, hostPort); "" means 0.0.0.0 and TCP. 0.0.0.0 conflicts with any IP using the
same protocol and port, a specific IP with itself and with 0.0.0.0. Only ports with `hostPort > 0` of
regular containers count, for the incoming pod and for the pods on the node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Pod
from kubefit.scheduler.plugins.base import UNSCHEDULABLE, CycleContext, FilterOutcome, PreFilterOutcome
from kubefit.scheduler.state import ANY_IP, ClusterState, host_ports

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"
_FEW = 8  # up to this many nodes, `conflicts` node by node (no index to bring up to date)


def conflicts(by_ip: dict[str, set[tuple[str, int]]], wanted: list[tuple[str, str, int]]) -> bool:
    """`HostPortInfo.CheckConflict` of every wanted port against a node's used ports."""
    if not by_ip:
        return False
    for ip, proto, port in wanted:
        pp = (proto, port)
        if ip == ANY_IP:
            if any(pp in pps for pps in by_ip.values()):
                return True
        elif pp in by_ip.get(ip, ()) or pp in by_ip.get(ANY_IP, ()):
            return True
    return False


@dataclass
class PortIndex:
    """Per host port the nodes using it, read off the state's `used_ports` and kept up to date along its change
    log (a bind or a removal of a pod with host ports redoes its node from `used_ports`, which stays the truth):
    `CheckConflict` of a port over many nodes is then one array look-up."""

    n: int
    changes: list  # the `ClusterState.changes` followed ...
    seen: int  # ... up to this position
    on_any_ip: dict = field(default_factory=dict)  # (protocol, port) → bool [N]: some IP of the node uses it
    on_ip: dict = field(default_factory=dict)  # (IP, protocol, port) → bool [N]
    keys_of: dict = field(default_factory=dict)  # node → the set of keys of both set for it

    @classmethod
    def of(cls, state: ClusterState) -> PortIndex:
        index = state.__dict__.get("_port_index")
        if index is None or index.changes is not state.changes or index.n != len(state):
            index = state.__dict__["_port_index"] = cls(len(state), state.changes, len(state.changes))
            for node, by_ip in enumerate(state.used_ports):
                if by_ip:
                    index._set(node, by_ip)
        elif index.seen < len(state.changes):
            redo = {node for node, pod, _sign in state.changes[index.seen:] if _declares_ports(pod)}
            index.seen = len(state.changes)
            for node in redo:
                index._set(node, state.used_ports[node])
        return index

    def _set(self, node: int, by_ip: dict[str, set[tuple[str, int]]]) -> None:
        """The node's entries as its used ports are now: those it no longer has cleared, the new ones set (a bind
        or removal changes a pod's few ports of the many a busy node may use)."""
        keys = {(ip, proto, port) for ip, pps in by_ip.items() for proto, port in pps}
        keys |= {(proto, port) for _ip, proto, port in keys}
        old = self.keys_of.pop(node, frozenset())
        for key in old - keys:
            (self.on_ip if len(key) == 3 else self.on_any_ip)[key][node] = False
        for key in keys - old:
            table = self.on_ip if len(key) == 3 else self.on_any_ip
            mask = table.get(key)
            if mask is None:
                mask = table[key] = np.zeros(self.n, dtype=bool)
            mask[node] = True
        if keys:
            self.keys_of[node] = keys

    def conflicts(self, wanted: list[tuple[str, str, int]], idx: np.ndarray) -> np.ndarray:
        """bool [len(idx)]: `conflicts` of each node of idx (the same rules, as masks)."""
        bad = np.zeros(len(idx), dtype=bool)
        for ip, proto, port in wanted:
            masks = [self.on_any_ip.get((proto, port))] if ip == ANY_IP else [
                self.on_ip.get((ip, proto, port)), self.on_ip.get((ANY_IP, proto, port))]
            for mask in masks:
                if mask is not None:
                    bad |= mask[idx]
        return bad


_DECLARED: dict[int, tuple] = {}  # id of a pod's containers → (them, whether one declares a host port)
_DECLARED_MAX = 4096


def _declares_ports(pod: Pod) -> bool:
    """Whether the pod has a host port (`host_ports`), once per containers tuple (replicas share theirs)."""
    known = _DECLARED.get(id(pod.containers))
    if known is None:
        if len(_DECLARED) >= _DECLARED_MAX:
            _DECLARED.clear()
        known = _DECLARED[id(pod.containers)] = (pod.containers, bool(host_ports(pod)))
    return known[1]


@dataclass
class NodePorts:
    name: str = NAME

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        return PreFilterOutcome(skip=not host_ports(ctx.pod))

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        wanted = host_ports(ctx.pod)
        if not wanted:
            bad = np.zeros(len(idx), dtype=bool)
        elif len(idx) <= _FEW:
            bad = np.array([conflicts(state.used_ports[n], wanted) for n in idx.tolist()], dtype=bool)
        else:
            bad = PortIndex.of(state).conflicts(wanted, np.asarray(idx, dtype=np.int64))
        return FilterOutcome(np.where(bad, UNSCHEDULABLE, 0).astype(np.int8), [REASON], bad[:, None])

    def signature(self, pod: Pod) -> tuple:
        return tuple(host_ports(pod))
