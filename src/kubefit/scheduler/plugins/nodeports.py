"""NodePorts: a pod's host ports must be free on the node (`HostPortInfo.CheckConflict` against the
node's `UsedPorts`, kept by ClusterState through binds and removals).

A port is (hostIP, protocol, hostPort); "" means 0.0.0.0 and TCP. 0.0.0.0 conflicts with any IP using the
same protocol and port, a specific IP with itself and with 0.0.0.0. Only ports with `hostPort > 0` of
regular containers count, for the incoming pod and for the pods on the node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Pod
from kubefit.scheduler.plugins.base import UNSCHEDULABLE, CycleContext, FilterOutcome, PreFilterOutcome
from kubefit.scheduler.state import ANY_IP, ClusterState, host_ports

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"


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
class NodePorts:
    name: str = NAME

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        return PreFilterOutcome(skip=not host_ports(ctx.pod))

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        wanted = host_ports(ctx.pod)
        bad = np.zeros(len(idx), dtype=bool)
        if wanted:
            for k, n in enumerate(idx.tolist()):
                bad[k] = conflicts(state.used_ports[n], wanted)
        return FilterOutcome(np.where(bad, UNSCHEDULABLE, 0).astype(np.int8), [REASON], bad[:, None])

    def signature(self, pod: Pod) -> tuple:
        return tuple(host_ports(pod))
