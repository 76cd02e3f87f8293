"""The objects the API server's admission plugins read when a pod is created: LimitRange (v1, LimitRanger)
and RuntimeClass (node.k8s.io/v1, the RuntimeClass plugin).

Decoded by `kubefit.manifests.policy`, applied by `kubefit.manifests.admission`; kept in `Scenario.objects`
by kind like the other cluster objects. Quantities keep their text (the API server's messages print
them) beside their exact value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubefit.api.cluster import ObjectMeta
from kubefit.api.core import Quantity

CONTAINER, POD = "Container", "Pod"  # the LimitRange item types that bound a pod
PVC = "PersistentVolumeClaim"  # the one that bounds a claim's storage request


Quantities = dict[str, Quantity]  # resource name → quantity, in the manifest's order


@dataclass(frozen=True)
class LimitRangeItem:
    """One `spec.limits[]` entry, after the API server's defaulting (`SetDefaults_LimitRangeItem`)."""

    type: str
    max: Quantities = field(default_factory=dict, hash=False)
    min: Quantities = field(default_factory=dict, hash=False)
    default: Quantities = field(default_factory=dict, hash=False)  # default limits
    default_request: Quantities = field(default_factory=dict, hash=False)
    max_limit_request_ratio: Quantities = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class LimitRange:
    """v1 LimitRange: defaults and bounds for the pods (and claims) of its namespace."""

    meta: ObjectMeta
    limits: tuple[LimitRangeItem, ...] = ()


@dataclass(frozen=True)
class RuntimeClass:
    """node.k8s.io/v1 RuntimeClass: the pod overhead it adds and the scheduling constraints it merges in."""

    meta: ObjectMeta
    handler: str = ""
    overhead: Quantities | None = field(default=None, hash=False)  # overhead.podFixed; None: no overhead
    node_selector: dict[str, str] = field(default_factory=dict, hash=False)  # scheduling.nodeSelector
    tolerations: tuple[dict[str, Any], ...] = field(default=(), hash=False)  # scheduling.tolerations, as given


@dataclass(frozen=True)
class ScopeRequirement:
    """One `spec.scopeSelector.matchExpressions[]` entry (a `spec.scopes[]` name reads as `Exists`)."""

    scope_name: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResourceQuota:
    """v1 ResourceQuota: the hard limits of what its namespace's objects may use (the ResourceQuota admission
    plugin refuses a pod that would exceed them). `status_hard` / `status_used` as a live snapshot gives them
    (None when written without a status: the quota controller's are computed from the scenario's pods)."""

    meta: ObjectMeta
    hard: Quantities = field(default_factory=dict, hash=False)  # spec.hard
    scopes: tuple[ScopeRequirement, ...] = ()  # spec.scopes (Exists) then spec.scopeSelector.matchExpressions
    status_hard: Quantities | None = field(default=None, hash=False)
    status_used: Quantities | None = field(default=None, hash=False)
