"""Scheduler configuration → profiles: decoding, defaulting and validation (SPEC-kube-scheduler §8–9).

CONTRACT (used by the framework, simulate and the CLI; keep these names and fields):
- `load_configuration(doc: Document | None) -> SchedulerConfiguration`; `None` = kube-scheduler defaults.
  Raises `ConfigError(messages)` for what kube-scheduler refuses (exact messages), `InputError` for
  files it could not even decode as a configuration.
- A `Profile` lists its enabled filter plugins in order and its score plugins with weights (0/unset
  already turned into 1); `plugin_args[name]` holds the args dataclass of each enabled plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubefit.load import Document

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Plugins kubefit evaluates; any other enabled plugin is listed once on stderr as "not simulated".
SIMULATED_PLUGINS = frozenset({
    "NodeResourcesFit", "NodeResourcesBalancedAllocation",
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "PrioritySort", "DefaultBinder",
})


@dataclass(frozen=True)
class ResourceWeight:
    name: str
    weight: int


@dataclass(frozen=True)
class ShapePoint:
    utilization: int
    score: int  # 0..10 (MaxCustomPriorityScore scale)


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    """Defaulted `NodeResourcesFitArgs`."""

    scoring_type: str = "LeastAllocated"  # LeastAllocated | MostAllocated | RequestedToCapacityRatio
    resources: tuple[ResourceWeight, ...] = (ResourceWeight("cpu", 1), ResourceWeight("memory", 1))
    shape: tuple[ShapePoint, ...] | None = None  # scoringStrategy.requestedToCapacityRatio.shape
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class BalancedAllocationArgs:
    """Defaulted `NodeResourcesBalancedAllocationArgs`."""

    resources: tuple[ResourceWeight, ...] = (ResourceWeight("cpu", 1), ResourceWeight("memory", 1))


@dataclass(frozen=True)
class ScorePlugin:
    name: str
    weight: int  # as the framework applies it: 0/unset → 1, negatives kept


@dataclass(frozen=True)
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    filter_plugins: tuple[str, ...] = ()  # enabled Filter plugins, in run order
    score_plugins: tuple[ScorePlugin, ...] = ()  # enabled Score plugins, in order
    plugin_args: dict[str, Any] = field(default_factory=dict)  # plugin name → args dataclass / dict
    percentage_of_nodes_to_score: int | None = None  # the profile's own; None = use the global one
    not_simulated: tuple[str, ...] = ()  # enabled plugins kubefit does not model


@dataclass(frozen=True)
class SchedulerConfiguration:
    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int | None = None  # global; None/0 = adaptive
    source: str | None = None  # file it came from; None for the built-in defaults
    dialect: str = "v1"  # v1 | v1beta3 | v1beta2 | v1beta1 | Policy | default
    notes: tuple[str, ...] = ()  # what could not be expressed exactly, said to the user
    legacy_scoring: bool = False  # score on the pre-1.17 0..10 scale (SPEC §11)

    def profile(self, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Profile:
        """The profile a pod with `spec.schedulerName` is scheduled by (the first one by default)."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return self.profiles[0]


def load_configuration(doc: Document | None) -> SchedulerConfiguration:
    """Decode, default and validate a configuration document (None = kube-scheduler's defaults)."""
    raise NotImplementedError("being written: see the config helper's task")
