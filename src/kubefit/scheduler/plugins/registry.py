"""Plugin name → constructor from its (defaulted) args; the framework builds a profile's plugins here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubefit.scheduler.config import BalancedAllocationArgs, NodeResourcesFitArgs
from kubefit.scheduler.plugins.balanced import NodeResourcesBalancedAllocation
from kubefit.scheduler.plugins.fit import NodeResourcesFit

FACTORIES: dict[str, Callable[[Any], Any]] = {
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
