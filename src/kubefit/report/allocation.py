"""Per-node allocation as the charts draw it (HTML and PNG): which resources, requested against allocatable.

Reads a result's `-o json` dict (`final` and `allocatable`) and only arranges it for drawing: the
resources worth a panel, each node's requested / allocatable as the length of a bar, nodes ordered
fullest first. Every number a chart prints comes from the dict as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubefit.k8s.resourcenames import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar

ALWAYS = (CPU, MEMORY, PODS)  # drawn for every cluster


@dataclass
class NodeUse:
    """One node's requested and allocatable amount of each drawn resource (None: the node offers none)."""

    name: str
    requested: dict[str, int]
    allocatable: dict[str, int]

    def fraction(self, resource: str) -> float | None:
        """Requested / allocatable (a bar's length, 1.0 = full; above 1 for an overcommitted node), None
        where the node offers none of the resource."""
        cap = self.allocatable.get(resource, 0)
        return self.requested.get(resource, 0) / cap if cap > 0 else None

    @property
    def fullest(self) -> float:
        """The fuller of cpu and memory: the order the bars are drawn in."""
        return max(self.fraction(CPU) or 0.0, self.fraction(MEMORY) or 0.0)


def drawn_resources(allocatable: dict[str, dict[str, int]], finals: list[dict[str, dict]]) -> list[str]:
    """cpu, memory, pods, then ephemeral-storage where some pod requests it and each scalar resource
    (extended, hugepages) some node offers, in name order."""
    offered = {r for alloc in allocatable.values() for r, v in alloc.items() if v > 0}
    requested = {r for final in finals for use in final.values() for r, v in use["requested"].items() if v}
    extra = sorted(r for r in offered if is_scalar(r)) + ([EPHEMERAL_STORAGE] if EPHEMERAL_STORAGE in requested else [])
    return [*ALWAYS, *extra]


def node_uses(final: dict[str, dict], allocatable: dict[str, dict[str, int]]) -> list[NodeUse]:
    """Every node of `final` (`-o json`'s per-node usage) with its allocatable, fullest first (stable)."""
    uses = [NodeUse(name, {**use["requested"], PODS: use["pods"]}, allocatable.get(name, {}))
            for name, use in final.items()]
    return sorted(uses, key=lambda u: -u.fullest)
