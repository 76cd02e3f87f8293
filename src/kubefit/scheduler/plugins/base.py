"""What plugins exchange with the framework: per-pod cycle context, filter and pre-filter outcomes."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kubefit.api.core import Pod
from kubefit.errors import KubefitError
from kubefit.k8s.gomath import go_div_array
from kubefit.k8s.requests import PodDemand

SUCCESS, UNSCHEDULABLE, UNRESOLVABLE = 0, 1, 2
CODE_NAMES = ("Success", "Unschedulable", "UnschedulableAndUnresolvable")


go_div = go_div_array  # the plugins' name for Go's int64 `/` (kubefit.k8s.gomath)


def normalize_scores(plugin, raw: np.ndarray, ctx: CycleContext) -> np.ndarray:
    """The plugin's NormalizeScore of `raw` (plugins that set `normalize_needs_context` also get the cycle)."""
    if getattr(plugin, "normalize_needs_context", False):
        return plugin.normalize(raw, ctx)
    return plugin.normalize(raw)


class HashedKey:
    """A key with its hash computed once: keys nest dataclasses (tolerations, owner references, selectors)
    whose hashes run in Python (1.6 µs a shape key of the default profile, which a cycle looks up twice)."""

    __slots__ = ("key", "_hash")

    def __init__(self, key: tuple) -> None:
        self.key, self._hash = key, hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HashedKey) and self._hash == other._hash and self.key == other.key


class SchedulingCycleError(KubefitError):
    """The framework itself failed the cycle (e.g. a plugin returned a score out of range)."""

    exit_code = 1


class StatusError(Exception):
    """A plugin's error status (`framework.AsStatus(err)`): the framework fails the cycle, naming the plugin."""


@dataclass
class CycleContext:
    """One scheduling cycle of one pod (kube-scheduler's CycleState, what plugins pre-compute)."""

    pod: Pod
    demand: PodDemand
    row: np.ndarray  # demand.requests over the state's columns
    cache: dict[str, object] = field(default_factory=dict)


@dataclass
class FilterOutcome:
    """A Filter plugin's verdict on the nodes `idx` it was given: codes plus a reason matrix."""

    codes: np.ndarray  # int8 [M]
    labels: list[str]  # reason strings, in the order kube-scheduler reports them
    matrix: np.ndarray  # bool [M, K]: reason k applies to node m

    def reasons(self, m: int) -> list[str]:
        return [label for label, hit in zip(self.labels, self.matrix[m], strict=True) if hit]

    @staticmethod
    def passing(m: int) -> FilterOutcome:
        return FilterOutcome(np.zeros(m, dtype=np.int8), [], np.zeros((m, 0), dtype=bool))


@dataclass
class PreFilterOutcome:
    """PreFilter: Skip (Filter not run), a node-name subset, or a failure for every node."""

    skip: bool = False
    node_names: set[str] | None = None
    code: int = SUCCESS
    reasons: tuple[str, ...] = ()


# --------------------------------------------------------------------------- extension points (typed)
# A plugin implements the points it takes part in; the framework asks `isinstance(plugin, FilterPlugin)`.

@runtime_checkable
class PreEnqueuePlugin(Protocol):
    def pre_enqueue(self, pod: Pod, state: Any = None) -> PreFilterOutcome | None:
        """None: the pod may enter the queue; else the rejecting status (`state`: the run's ClusterState)."""


@runtime_checkable
class PreFilterPlugin(Protocol):
    def pre_filter(self, state, ctx: CycleContext) -> PreFilterOutcome:
        """Skip, a node-name subset, or a failure for every node."""


@runtime_checkable
class FilterPlugin(Protocol):
    def filter(self, state, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        """The verdict on nodes `idx`."""


@runtime_checkable
class PreScorePlugin(Protocol):
    def pre_score(self, state, ctx: CycleContext) -> bool:
        """True: Skip (the plugin does not score this pod)."""


@runtime_checkable
class ScorePlugin(Protocol):
    def score(self, state, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        """Raw scores of nodes `idx`."""

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        """NormalizeScore of the raw scores."""


@runtime_checkable
class SignPlugin(Protocol):
    def signature(self, pod: Pod) -> Hashable:
        """Everything of `pod` the plugin's verdicts and scores depend on (upstream's SignPlugin): pods
        with equal signatures for every plugin of a profile are scheduled alike."""
