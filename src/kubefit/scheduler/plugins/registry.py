"""Plugin name → constructor from its (defaulted) args; the framework builds a profile's plugins here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubefit.scheduler.config import BalancedAllocationArgs, NodeResourcesFitArgs
from kubefit.scheduler.plugins.balanced import NodeResourcesBalancedAllocation
from kubefit.scheduler.plugins.fit import NodeResourcesFit
from kubefit.scheduler.plugins.nodeaffinity import NodeAffinity
from kubefit.scheduler.plugins.nodename import NodeName
from kubefit.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from kubefit.scheduler.plugins.tainttoleration import TaintToleration

FACTORIES: dict[str, Callable[[Any], Any]] = {
    "NodeUnschedulable": lambda args: NodeUnschedulable(),
    "NodeName": lambda args: NodeName(),
    "TaintToleration": lambda args: TaintToleration(),
    "NodeAffinity": NodeAffinity.from_args,
    "NodeResourcesFit": lambda args: NodeResourcesFit(args or NodeResourcesFitArgs()),
    "NodeResourcesBalancedAllocation": lambda args: NodeResourcesBalancedAllocation(args or BalancedAllocationArgs()),
}


def register(name: str, factory: Callable[[Any], Any]) -> None:
    """Make plugin `name` buildable (placement plugins register themselves on import)."""
    FACTORIES[name] = factory


def build(name: str, args: Any) -> Any | None:
    """The plugin object, or None for a plugin kubefit does not simulate."""
    factory = FACTORIES.get(name)
    return factory(args) if factory else None
