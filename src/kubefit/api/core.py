"""Kubernetes core/v1 objects as kube-scheduler reads them (Node, Pod), quantities in nano-units."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

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
    declared_features: tuple[str, ...] = ()  # status.declaredFeatures, as written (NodeDeclaredFeatures)
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
    # the node declared features its spec requires in any version (restartPolicyRules, hostNetwork with
    # hostUsers false: `kubefit.k8s.declaredfeatures.inferred`); NodeDeclaredFeatures keeps its version's
    required_features: tuple[str, ...] = ()
    start_time: str = ""  # status.startTime (RFC 3339), "" when absent
    created: float | None = None  # metadata.creationTimestamp, seconds since the epoch
    nominated_node_name: str = ""  # status.nominatedNodeName
    queued: bool = False  # annotation kubefit.io/queued: schedule it although spec.nodeName is set
    arrival: int = 0  # kubefit.io/arrival, nanoseconds from the start of a timeline
    duration: int | None = None  # kubefit.io/duration, nanoseconds it runs once bound (None: it never ends)
    created_by: str = ""  # "Kind/name" of the workload kubefit expanded this pod from ("" = given as a Pod)
    ordered_after: tuple[str, ...] = ()  # pods (keys) to be running before its controller creates it (OrderedReady)
    # workload-aware scheduling (`kubefit.api.workload`): v1.36+ `spec.schedulingGroup.podGroupName`, v1.35
    # `spec.workloadRef` (name, podGroup, podGroupReplicaKey); None when absent (or dropped: GenericWorkload off)
    scheduling_group: str | None = None
    workload_ref: tuple[str, str, str] | None = None
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


def _raw_get(obj: Any) -> dict[str, Any]:
    raw = obj.__dict__["raw"]  # the property below wins over the instance's own entry of that name
    if type(raw) is bytes:
        raw = obj.__dict__["raw"] = json.loads(raw)  # (the json module fails cleanly when memory runs out)
    return raw


def _raw_set(obj: Any, value: dict[str, Any] | bytes) -> None:
    obj.__dict__["raw"] = value


class _VolumesFromRaw:
    """`Pod.volumes` not decoded yet: read from the pod's manifest JSON (`raw`) when first asked for."""

    def __reduce__(self) -> str:
        return "VOLUMES_FROM_RAW"  # (pickled by name: the one instance)


VOLUMES_FROM_RAW = _VolumesFromRaw()


class _SpecVolumes(msgspec.Struct):
    volumes: list[dict[str, Any]] | None = None


class _PodVolumes(msgspec.Struct):
    spec: _SpecVolumes


_POD_VOLUMES = msgspec.json.Decoder(_PodVolumes)


def _volumes_get(pod: Pod) -> tuple[dict[str, Any], ...]:
    volumes = pod.__dict__["volumes"]
    if volumes is VOLUMES_FROM_RAW:
        raw = pod.__dict__["raw"]
        listed = _POD_VOLUMES.decode(raw).spec.volumes if type(raw) is bytes else raw["spec"].get("volumes")
        volumes = pod.__dict__["volumes"] = tuple(listed or ())
    return volumes


def _volumes_set(pod: Pod, value: tuple[dict[str, Any], ...] | _VolumesFromRaw) -> None:
    pod.__dict__["volumes"] = value


def raw_is_json(obj: Node | Pod) -> bool:
    """Whether a node's or pod's `raw` is still the manifest's JSON, not yet read (see `Pod.raw`)."""
    return type(obj.__dict__.get("raw")) is bytes


def raw_may_name(obj: Node | Pod, key: str) -> bool:
    """Whether the manifest may hold `key` anywhere: False only for JSON not read yet whose text has neither that
    key nor an escape (`\\u…` may spell any key), so that a question about a field nobody sets does not decode
    every pod's manifest. (`bytes.find`, not `in`: `in` first tries its operand as a byte value, and the TypeError it
    raises and clears costs more than the search, for each pod of a snapshot.)"""
    raw = obj.__dict__.get("raw")
    return type(raw) is not bytes or raw.find(key.encode()) >= 0 or raw.find(b"\\u") >= 0


def copied(obj: Any, **changes: Any) -> Any:
    """`dataclasses.replace(obj, **changes)` for a `Node` or `Pod`, made as a shallow copy of the instance's fields
    (what `copy.copy` gives, without its reduce protocol). `replace` reads every field through its property — a
    manifest or volumes still JSON (`Pod.raw`, `Pod.volumes`) decoded for each copy — and runs `__init__` again:
    20,000 pods expanded from their templates, or bound by a simulation, paid that for each. These classes have no
    `__post_init__` and only init fields, so the copy is the object `replace` makes; volumes still to be read
    from the old manifest are read before the manifest is replaced, as `replace` would have read them."""
    known = type(obj).__dataclass_fields__
    for name in changes:  # (the changes walked, not the ~40 fields; a loop, not a list: a bind copies each pod)
        if name not in known:
            raise TypeError(f"{type(obj).__name__} has no field {sorted(set(changes) - set(known))[0]!r}")
    fields = obj.__dict__.copy()
    if "raw" in changes and fields.get("volumes") is VOLUMES_FROM_RAW:
        fields["volumes"] = _volumes_get(obj)
    fields.update(changes)
    made = object.__new__(type(obj))
    made.__dict__ = fields
    return made


# `raw` may be given as the manifest's compact JSON (bytes): it is decoded on first read. The streaming
# reader keeps a snapshot's objects so (`kubefit.manifests.stream`): 150,000 pods' manifests as dicts
# took 2 GB more than as JSON, and the scheduler reads them only to drain a node or name an owner.
Node.raw = Pod.raw = property(_raw_get, _raw_set)  # type: ignore[assignment,method-assign]
# `volumes` may be given as VOLUMES_FROM_RAW by a reader that checked `spec.volumes` in the manifest's JSON
# (`kubefit.manifests.fastpod`): only the volume plugins read them, and only where a pending pod asks.
Pod.volumes = property(_volumes_get, _volumes_set)  # type: ignore[assignment,method-assign]
