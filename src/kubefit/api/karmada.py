"""Karmada objects read from manifests: Cluster (v1alpha1) and ResourceBinding (v1alpha2), plain data.

Quantities keep their original STRING beside the exact value: Go's `resource.Quantity` semantics
(Format, cached string, struct equality, int64 wrapping) depend on how a value was written, and
`kubefit.k8s.goquantity` re-reads those strings when it matters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubefit.api.core import Quantity  # noqa: F401 - re-exported: Karmada's objects are built of it

CLUSTER_API_VERSION = "cluster.karmada.io/v1alpha1"
BINDING_API_VERSION = "work.karmada.io/v1alpha2"


@dataclass(frozen=True)
class ResourceModelRange:
    """One `spec.resourceModels[].ranges[]` entry: `[min, max)` of one resource."""

    name: str
    min: Quantity
    max: Quantity


@dataclass(frozen=True)
class ResourceModel:
    """One grade of `spec.resourceModels`."""

    grade: int
    ranges: tuple[ResourceModelRange, ...] = ()


@dataclass(frozen=True)
class AllocatableModeling:
    """`status.resourceSummary.allocatableModelings[]`: how many nodes are in a grade."""

    grade: int
    count: int


@dataclass
class ResourceSummary:
    """`status.resourceSummary`; each list is None when the field is absent (Go nil map)."""

    allocatable: dict[str, Quantity] | None = None
    allocated: dict[str, Quantity] | None = None
    allocating: dict[str, Quantity] | None = None
    allocatable_modelings: tuple[AllocatableModeling, ...] = ()


@dataclass
class Cluster:
    """A Karmada member `Cluster` (cluster.karmada.io/v1alpha1)."""

    name: str
    resource_models: tuple[ResourceModel, ...] = ()
    resource_summary: ResourceSummary | None = None
    sync_mode: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    provider: str = ""
    region: str = ""
    zone: str = ""
    zones: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    source: str = ""


@dataclass
class ResourceBinding:
    """A `ResourceBinding` (work.karmada.io/v1alpha2); spec and status stay as given (JSON names)."""

    name: str
    namespace: str
    spec: dict[str, Any]
    status: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    source: str = ""

    @property
    def replicas(self) -> int:
        return int(self.spec.get("replicas") or 0)

    @property
    def replica_requirements(self) -> dict[str, Any] | None:
        return self.spec.get("replicaRequirements")

    @property
    def uid(self) -> str:
        return str((self.spec.get("resource") or {}).get("uid") or "")


# --------------------------------------------------------------------------- decoding helpers
