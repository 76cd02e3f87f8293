"""Dynamic Resource Allocation objects (resource.k8s.io/v1) as the DynamicResources plugin reads them.

DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate, decoded strictly by
`kubefit.manifests.dra`. They are plain, immutable data: what a simulation changes (a claim's allocation,
its `reservedFor`, the claims created from templates) is kept by `kubefit.scheduler.dra.state.DraState`
on the run's ClusterState, never written into these objects.

Quantities (device capacity) are exact integers in nano-units, as everywhere in kubefit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubefit.api.cluster import ObjectMeta

API_VERSION = "resource.k8s.io/v1"
EXACT_COUNT, ALL = "ExactCount", "All"
NO_SCHEDULE, NO_EXECUTE, NONE_EFFECT = "NoSchedule", "NoExecute", "None"
TAINT_EFFECTS = (NONE_EFFECT, NO_SCHEDULE, NO_EXECUTE)  # DeviceTaintEffect values the API server accepts
TOLERATION_OPERATORS = ("Exists", "Equal")
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"  # the implicit extended resource of every class
ALLOCATION_MODES = (EXACT_COUNT, ALL)
# resource.k8s.io/v1 limits (types.go)
ALLOCATION_RESULTS_MAX_SIZE = 32  # AllocationResultsMaxSize: devices of one claim
RESERVED_FOR_MAX_SIZE = 256  # ResourceClaimReservedForMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8  # FirstAvailableDeviceRequestMaxSize: subrequests of a request (DynamicResources' score)
CEL_SELECTOR_MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost
# semver 2.0.0 (blang/semver's strict Parse): no leading zeros, optional pre-release and build metadata
_NUMBER = r"(?:0|[1-9][0-9]*)"
_PRE = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
SEMVER = re.compile(rf"^{_NUMBER}\.{_NUMBER}\.{_NUMBER}(?:-{_PRE}(?:\.{_PRE})*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$")


@dataclass(frozen=True)
class DeviceAttribute:
    """One attribute value: exactly one of int, bool, string or version (a semver string)."""

    kind: str  # "int", "bool", "string" or "version"
    value: int | bool | str


DeviceID = tuple[str, str, str]
"""(driver, pool, device): how the allocator names a device (`structured.DeviceID`)."""


@dataclass(frozen=True)
class CounterSet:
    """`spec.sharedCounters[]` of a ResourceSlice: named counters (nano-units) devices of the pool consume."""

    name: str
    counters: dict[str, int] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class CounterConsumption:
    """`devices[].consumesCounters[]`: what the device takes from one counter set of its pool."""

    counter_set: str
    counters: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    def key(self) -> tuple:
        return (self.counter_set, tuple(sorted(self.counters.items())))


@dataclass(frozen=True)
class RequestPolicy:
    """`capacity[name].requestPolicy` (DRAConsumableCapacity): the default a claim that does not ask for the
    capacity consumes, and the valid values (ascending) or the valid range (min, max or None, step or None)."""

    default: int | None = None
    valid_values: tuple[int, ...] = ()
    valid_range: tuple[int, int | None, int | None] | None = None

    def key(self) -> tuple:
        return (self.default, self.valid_values, self.valid_range)


@dataclass(frozen=True)
class DeviceTaint:
    """`devices[].taints[]` (DRADeviceTaints): NoSchedule and NoExecute keep untolerating requests away."""

    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class DeviceToleration:
    """`tolerations[]` of a request (`resourceclaim.ToleratesTaint` reads key, operator, value, effect)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(frozen=True)
class Device:
    """A device of a ResourceSlice: its name, attributes and capacity (qualified name → value), and what the
    v1.36 allocator reads besides: the counters it consumes, its capacity request policies, whether several
    claims may share it, its taints, binding conditions and per-device node selection."""

    name: str
    attributes: dict[str, DeviceAttribute] = field(default_factory=dict, hash=False, compare=False)
    capacity: dict[str, int] = field(default_factory=dict, hash=False, compare=False)  # nano-units
    # per-device node selection (DRAPartitionableDevices)
    node_name: str | None = None
    all_nodes: bool = False
    node_selector: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    consumes: tuple[CounterConsumption, ...] = ()  # DRAPartitionableDevices
    binding_conditions: tuple[str, ...] = ()  # DRADeviceBindingConditions
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    taints: tuple[DeviceTaint, ...] = ()  # DRADeviceTaints
    allow_multiple: bool | None = None  # allowMultipleAllocations (DRAConsumableCapacity)
    policies: dict[str, RequestPolicy] = field(default_factory=dict, hash=False, compare=False)  # by capacity

    @property
    def consumes_counters(self) -> bool:
        return bool(self.consumes)

    def content_key(self, driver: str) -> tuple:
        """Everything a selector, a constraint or the allocator can read of the device (not its name): devices
        with equal keys are interchangeable for a verdict."""
        return (driver, tuple(sorted((k, a.kind, a.value) for k, a in self.attributes.items())), self.rest_key())

    def rest_key(self) -> tuple:
        """`content_key` without the attributes."""
        return (tuple(sorted(self.capacity.items())), tuple(c.key() for c in self.consumes),
                self.binding_conditions, self.binding_failure_conditions, self.binds_to_node, self.taints,
                self.allow_multiple, tuple(sorted((k, p.key()) for k, p in self.policies.items())),
                self.node_name, self.all_nodes, _frozen(self.node_selector) if self.node_selector else None)


def _frozen(value: Any) -> Any:
    """A hashable copy of plain data (a node selector as given)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


@dataclass(frozen=True)
class ResourceSlice:
    """resource.k8s.io/v1 ResourceSlice: devices of one driver's pool, and the nodes that can reach them."""

    meta: ObjectMeta
    driver: str
    pool: str
    generation: int = 0
    slice_count: int = 1  # spec.pool.resourceSliceCount
    node_name: str | None = None
    all_nodes: bool = False
    node_selector: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    per_device_node_selection: bool = False
    per_device_set: bool = False  # `perDeviceNodeSelection` given at all (GatherPools skips it without the gate)
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()  # DRAPartitionableDevices


@dataclass(frozen=True)
class DeviceClass:
    """resource.k8s.io/v1 DeviceClass: CEL selectors every device of the class must pass, and its config."""

    meta: ObjectMeta
    selectors: tuple[str, ...] = ()  # spec.selectors[].cel.expression
    config: tuple[dict[str, Any], ...] = field(default=(), hash=False, compare=False)  # spec.config, as given
    extended_resource_name: str = ""
    creation_timestamp: str = ""  # metadata.creationTimestamp: the newer of two classes naming one resource wins


@dataclass(frozen=True)
class DeviceSubRequest:
    """An alternative of a `firstAvailable` request (DRAPrioritizedList), or the body of an `exactly` one."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None  # only on `exactly`
    tolerations: tuple[DeviceToleration, ...] = ()  # DRADeviceTaints
    capacity: dict[str, int] | None = field(default=None, hash=False, compare=False)  # capacity.requests

    def capacity_key(self) -> tuple | None:
        return None if self.capacity is None else tuple(sorted(self.capacity.items()))

    def __hash__(self) -> int:
        return hash((self.name, self.device_class_name, self.selectors, self.allocation_mode, self.count,
                     self.admin_access, self.tolerations, self.capacity_key()))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DeviceSubRequest) and (
            (self.name, self.device_class_name, self.selectors, self.allocation_mode, self.count,
             self.admin_access, self.tolerations, self.capacity_key())
            == (other.name, other.device_class_name, other.selectors, other.allocation_mode, other.count,
                other.admin_access, other.tolerations, other.capacity_key()))


@dataclass(frozen=True)
class DeviceRequest:
    """`spec.devices.requests[]`: `exactly` one kind of device, or the first of `firstAvailable` that fits."""

    name: str
    exactly: DeviceSubRequest | None = None  # its name is the request's
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True)
class DeviceConstraint:
    """`spec.devices.constraints[]`: the requests it applies to (none: all) and its attribute."""

    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None  # DRAConsumableCapacity (off): the allocator refuses it


@dataclass(frozen=True)
class ClaimSpec:
    """A ResourceClaim's (or template's) `spec.devices`."""

    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[dict[str, Any], ...] = field(default=(), hash=False, compare=False)  # as given

    def key(self) -> tuple:
        """What allocation reads of the spec (config aside): claims with equal keys allocate alike."""
        return (self.requests, self.constraints)


@dataclass(frozen=True)
class DeviceResult:
    """`status.allocation.devices.results[]`: one device allocated for a request."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    share_id: str | None = None  # shareID: one share of a device that allows multiple allocations
    consumed_capacity: dict[str, int] | None = field(default=None, hash=False, compare=False)
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    tolerations: tuple[DeviceToleration, ...] = ()

    @property
    def device_id(self) -> DeviceID:
        return (self.driver, self.pool, self.device)


@dataclass(frozen=True)
class AllocationResult:
    """`status.allocation`: the devices, the node selector (None: every node) and the configs."""

    results: tuple[DeviceResult, ...] = ()
    node_selector: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    config: tuple[dict[str, Any], ...] = field(default=(), hash=False, compare=False)


@dataclass(frozen=True)
class ConsumerReference:
    """`status.reservedFor[]`: who uses the claim (a pod)."""

    resource: str
    name: str
    uid: str = ""
    api_group: str = ""


@dataclass(frozen=True)
class ResourceClaim:
    """resource.k8s.io/v1 ResourceClaim: its spec, and its status as loaded (allocation, reservedFor)."""

    meta: ObjectMeta
    spec: ClaimSpec = ClaimSpec()
    allocation: AllocationResult | None = None
    reserved_for: tuple[ConsumerReference, ...] = ()
    controller_uid: str = ""  # metadata.ownerReferences[controller=true].uid (a claim made for a pod)
    controller_kind: str = ""
    deleting: bool = False  # metadata.deletionTimestamp set
    pod_claim_name: str = ""  # annotation resource.kubernetes.io/pod-claim-name (a claim made from a template)
    controller_name: str = ""
    extended: bool = False  # annotation resource.kubernetes.io/extended-resource-claim: "true" (the scheduler's)
    # status.devices[].conditions: (driver, pool, device) → {condition type: status} (binding conditions)
    device_conditions: dict[DeviceID, dict[str, str]] = field(default_factory=dict, hash=False, compare=False)
    creation_timestamp: str = ""  # metadata.creationTimestamp as given


@dataclass(frozen=True)
class ResourceClaimTemplate:
    """resource.k8s.io/v1 ResourceClaimTemplate: the claim the resourceclaim controller creates per pod."""

    meta: ObjectMeta
    spec: ClaimSpec = ClaimSpec()
    labels: dict[str, str] = field(default_factory=dict, hash=False, compare=False)  # spec.metadata.labels
    annotations: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
