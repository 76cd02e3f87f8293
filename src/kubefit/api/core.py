"""Kubernetes core/v1 objects as kube-scheduler reads them (Node, Pod), quantities in nano-units."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ResourceList = dict[str, int]
"""Resource name → exact quantity in nano-units (see `kubefit.k8s.quantity`)."""


@dataclass(frozen=True)
class Quantity:
    """A quantity as written (`text`: Go's formats, cached strings and messages depend on it) and its exact
    value in nano-units (`nanos`)."""

    text: str
    nanos: int


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Toleration:
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class ContainerPort:
    """`ports[]` of a container: NodePorts reads those with a hostPort."""

    container_port: int = 0
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(frozen=True)
class Container:
    name: str
    requests: ResourceList = field(default_factory=dict)
    restart_policy: str | None = None  # "Always" on an init container makes it a sidecar
    image: str = ""
    ports: tuple[ContainerPort, ...] = ()


@dataclass(frozen=True)
class OwnerReference:
    api_version: str
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


@dataclass(frozen=True)
class ContainerImage:
    """`status.images[]` of a node: the names an image is known by and its size (ImageLocality)."""

    names: tuple[str, ...]
    size_bytes: int = 0


@dataclass(frozen=True)
class ContainerStatus:
    """`status.containerStatuses[]` / `initContainerStatuses[]`: what the kubelet has actuated (in-place resize)."""

    name: str
    requests: ResourceList | None = None  # status.resources.requests; None when status.resources is absent
    allocated_resources: ResourceList = field(default_factory=dict)  # status.allocatedResources


@dataclass(frozen=True)
class PodCondition:
    type: str
    reason: str = ""


@dataclass
class Node:
    name: str
    allocatable: ResourceList  # status.allocatable, falling back to status.capacity
    labels: dict[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    images: tuple[ContainerImage, ...] = ()  # status.images
    raw: dict[str, Any] = field(default_factory=dict, repr=False)  # the manifest as given
    source: str = ""  # file the node came from


@dataclass
class Pod:
    name: str
    namespace: str = "default"
    node_name: str = ""
    priority: int = 0
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = field(default_factory=dict)
    pod_requests: ResourceList | None = None  # spec.resources.requests (pod-level resources)
    node_selector: dict[str, str] | None = None  # None = absent (differs from {} for NodeAffinity)
    affinity: dict[str, Any] | None = None  # spec.affinity as given (nodeAffinity is read by plugins)
    tolerations: tuple[Toleration, ...] = ()
    phase: str = ""
    container_statuses: tuple[ContainerStatus, ...] = ()  # status.containerStatuses
    init_container_statuses: tuple[ContainerStatus, ...] = ()  # status.initContainerStatuses
    conditions: tuple[PodCondition, ...] = ()  # status.conditions (type, reason)
    scheduler_name: str = "default-scheduler"
    labels: dict[str, str] = field(default_factory=dict)
    uid: str = ""
    owner_references: tuple[OwnerReference, ...] = ()
    topology_spread_constraints: tuple[dict[str, Any], ...] = ()  # as given, shapes checked by the loader
    scheduling_gates: tuple[str, ...] = ()  # spec.schedulingGates[].name
    resource_claims: tuple[dict[str, Any], ...] = ()  # spec.resourceClaims (DynamicResources)
    resource_claim_statuses: tuple[tuple[str, str | None], ...] = ()  # status.resourceClaimStatuses (name, claim)
    volumes: tuple[dict[str, Any], ...] = ()  # spec.volumes as given (the volume plugins read them)
    preemption_policy: str = "PreemptLowerPriority"
    start_time: str = ""  # status.startTime (RFC 3339), "" when absent
    created: float | None = None  # metadata.creationTimestamp, seconds since the epoch
    nominated_node_name: str = ""  # status.nominatedNodeName
    queued: bool = False  # annotation kubefit.io/queued: schedule it although spec.nodeName is set
    arrival: int = 0  # kubefit.io/arrival, nanoseconds from the start of a timeline
    duration: int | None = None  # kubefit.io/duration, nanoseconds it runs once bound (None: it never ends)
    created_by: str = ""  # "Kind/name" of the workload kubefit expanded this pod from ("" = given as a Pod)
    ordered_after: tuple[str, ...] = ()  # pods (keys) to be running before its controller creates it (OrderedReady)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    source: str = ""

    @property
    def bound(self) -> bool:
        """Running on `spec.nodeName` (counted there), unless marked queued for a NodeName simulation."""
        return bool(self.node_name) and not self.queued

    @property
    def key(self) -> str:
        """`namespace/name`, the way kube-scheduler names a pod in its logs."""
        return f"{self.namespace}/{self.name}"
