"""The structured allocator: which devices of a node's pools a pod's claims get, as each version allocates them.

A port of `k8s.io/dynamic-resource-allocation/structured/internal/incubating/allocator_incubating.go` of
v1.36.3 (`Allocator.Allocate`, `validateDeviceRequest`, `allocateOne`, `isSelectable`, `allocateDevice`,
`rollbackDevice`, `checkAvailableCounters`, `taintPreventsAllocation`, `createNodeSelector`), the variant
kube-scheduler v1.36 picks with its default gates (`structured.NewAllocator`: the most stable implementation
supporting every enabled feature; `experimental` adds DRAListTypeAttributes, `stable` lacks consumable
capacity and binding conditions), and of the differences of the other versions (`Rules`).

Claims in order, each claim's requests in order, for each wanted device the candidates pool by pool, slice
by slice, device by device (from v1.36 the next device of one request is searched after the previous one:
combinations, not permutations). A candidate must not be in use (allocated exclusively to a claim, or being
allocated in this search) unless it allows multiple allocations, pass its class's selectors and the
request's, have the capacity the request asks for, leave every shared counter of its pool non-negative, have
no NoSchedule/NoExecute taint the request does not tolerate, and keep every constraint of the claim;
`firstAvailable` tries its subrequests in order; `All` takes every selectable device. The search backtracks
over every candidate and stops at the first complete solution. An error (a class that does not exist, a
selector failing at run time) stops the whole Filter: kube-scheduler fails the pod's cycle with it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubefit.api.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    NO_EXECUTE,
    NO_SCHEDULE,
    AllocationResult,
    ClaimSpec,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceID,
    DeviceResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ResourceSlice,
)
from kubefit.k8s import version
from kubefit.scheduler.dra.capacity import (
    CapacityNotDefined,
    add_into,
    consumed_from_request,
    fits_capacity,
    remove_from,
)
from kubefit.scheduler.dra.constraints import DistinctAttribute, MatchAttribute
from kubefit.scheduler.dra.pools import Candidate, Pool

NODE_NAME_FIELD = "metadata.name"
INVALID_POOLS = "invalid resource pools were encountered"
MILLI = 10**6


class AllocationError(Exception):
    """A fatal allocation error (invalid input): the Filter of the whole cycle fails with this text."""


class NodeUnschedulable(Exception):
    """`ErrFailedAllocationOnNode`: this node fails with the message (UnschedulableAndUnresolvable), others may
    still fit (v1.35+: "invalid resource pools were encountered")."""


@dataclass(frozen=True)
class Features:
    """The allocator's features (`structured.Features`, `AllocatorFeatures(fts)`), set from the gates."""

    admin_access: bool = True  # DRAAdminAccess
    prioritized_list: bool = True  # DRAPrioritizedList
    partitionable_devices: bool = False  # DRAPartitionableDevices
    device_taints: bool = False  # DRADeviceTaints
    device_binding: bool = False  # DRADeviceBindingConditions && DRAResourceClaimDeviceStatus
    consumable_capacity: bool = False  # DRAConsumableCapacity
    list_type_attributes: bool = False  # DRAListTypeAttributes (v1.36+, only the experimental allocator)

    def names(self) -> frozenset[str]:
        return frozenset(n for n, on in vars(self).items() if on)


@dataclass(frozen=True)
class Rules:
    """What differs between versions' allocators besides the features: the version's variants (named in
    `kubefit.k8s.version`, each with its upstream change) and the implementation `channel` NewAllocator picks."""

    minor: int = 34
    channel: str = "incubating"
    variants: frozenset[str] = frozenset()

    def _has(self, name: str) -> bool:
        return name in self.variants

    @property
    def skips_bad_pools(self) -> bool:
        return self._has(version.DRA_SKIP_BAD_POOLS)

    @property
    def combinations(self) -> bool:
        return self._has(version.DRA_COMBINATIONS) and self.channel != "stable"

    @property
    def sorted_pools(self) -> bool:
        return self._has(version.DRA_SORTED_POOLS) and self.channel != "stable"

    @property
    def counters_by_pool_name(self) -> bool:
        return not self._has(version.DRA_COUNTERS_BY_POOL_ID)

    @property
    def counter_slices_everywhere(self) -> bool:
        return self._has(version.DRA_COUNTER_SLICES_EVERYWHERE) and not self._has(version.DRA_COUNTER_SLICES_OWN_NODES)

    @property
    def counter_slices_own_nodes(self) -> bool:
        return self._has(version.DRA_COUNTER_SLICES_OWN_NODES)

    @property
    def distinct_per_device(self) -> bool:
        return self._has(version.DRA_DISTINCT_PER_DEVICE)

    @property
    def shared_marker_counts(self) -> bool:
        return self._has(version.DRA_SHARE_SPARES_COUNTERS)

    @property
    def all_mode_strict_capacity(self) -> bool:
        return self._has(version.DRA_ALL_MODE_CAPACITY)

    @property
    def capacity_unit(self) -> int:
        return MILLI if self._has(version.DRA_MILLI_RANGES) else 10**9

    @property
    def restores_intersection(self) -> bool:
        return self._has(version.DRA_LIST_INTERSECTION_RESTORE)

    @property
    def class_config_requests(self) -> bool:
        return self._has(version.DRA_CLASS_CONFIG_REQUESTS)

    @property
    def config_once(self) -> bool:
        return self._has(version.DRA_CONFIG_ONCE)

    @property
    def lists_in_cel(self) -> bool:
        return self._has(version.DRA_LIST_VALUES_IN_CEL)

    @property
    def cel_error_names_device(self) -> bool:
        return self._has(version.DRA_CEL_ERROR_NAMES_DEVICE)

    @property
    def binds_to_node(self) -> bool:
        """`createNodeSelector` restricts a `bindsToNode` device's allocation to the node (v1.35+)."""
        return self.minor >= 35


V134 = Features()
STABLE_136 = frozenset({"admin_access", "prioritized_list", "partitionable_devices", "device_taints"})
INCUBATING_136 = STABLE_136 | {"device_binding", "consumable_capacity"}


def version_features(version) -> Features:
    """`AllocatorFeatures(fts)`: the allocator's features from a KubeVersion's gates."""
    return Features(admin_access=version.gate("DRAAdminAccess"), prioritized_list=version.gate("DRAPrioritizedList"),
                    partitionable_devices=version.gate("DRAPartitionableDevices"),
                    device_taints=version.gate("DRADeviceTaints"),
                    device_binding=version.gate("DRADeviceBindingConditions")
                    and version.gate("DRAResourceClaimDeviceStatus"),
                    consumable_capacity=version.gate("DRAConsumableCapacity"),
                    list_type_attributes=version.gate("DRAListTypeAttributes"))


def choose_rules(kube_version, features: Features) -> Rules:
    """`NewAllocator`: the first of stable, incubating, experimental supporting every enabled feature, with the
    version's allocator variants. `kube_version`: a KubeVersion, or a minor (its default gates)."""
    if isinstance(kube_version, int):
        kube_version = version.for_minor(kube_version)
    minor = kube_version.minor
    names = features.names()
    if minor >= 36:
        channel = "stable" if names <= STABLE_136 else "incubating" if names <= INCUBATING_136 else "experimental"
    else:  # v1.34/v1.35: stable supports no optional feature, incubating the four of v1.36's stable
        channel = "incubating" if names <= STABLE_136 else "experimental"
    dra = frozenset(v for v in kube_version.variants if v.startswith("DRA"))
    return Rules(minor, channel, dra)


@dataclass
class AllocatedState:
    """`structured.AllocatedState`: devices allocated exclusively (with how many claims hold them), shares of
    devices that allow multiple allocations (device → share ids), and the capacity the shares consume."""

    dedicated: Mapping[DeviceID, int] = field(default_factory=dict)
    shares: Mapping[DeviceID, Any] = field(default_factory=dict)
    capacity: Mapping[DeviceID, Mapping[str, int]] = field(default_factory=dict)
    # kubefit's caches, kept by the run's DraState across allocations: a pool's counters left by the claims held
    # ((driver, pool) → id(pool) → counters, dropped when a device of the pool changes hands) and selector
    # verdicts per device object (the classes, the features and the devices never change in a run)
    counters: dict | None = None
    selections: dict | None = None

    def allocated(self, device_id: DeviceID) -> bool:
        """`IsDeviceAllocated`: held exclusively, shared, or consuming capacity."""
        return device_id in self.dedicated or device_id in self.shares or device_id in self.capacity


@dataclass(frozen=True)
class ClaimToAllocate:
    """A claim the allocator works on: `namespace/name` (for messages) and its spec."""

    label: str
    spec: ClaimSpec


@dataclass
class _Request:
    """One request or subrequest to fill (`requestData`)."""

    name: str  # the (sub)request's name
    parent: str  # the request's name for a subrequest, "" otherwise
    sub: DeviceSubRequest
    device_class: DeviceClass
    num_devices: int = 0
    all_devices: list[tuple[Pool, Candidate, tuple[int, int]]] | None = None

    @property
    def result_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def admin_access(self) -> bool:
        return bool(self.sub.admin_access)


@dataclass
class Allocation:
    """Allocate's answer for one node: one AllocationResult per claim, and whether pool order may have
    mattered (a request had selectable devices in more than one pool, in a version ranging over a Go map);
    `where`: per claim, each result's (pool index, position in the pool) on that node (`relocate`)."""

    results: list[AllocationResult]
    order_mattered: bool = False
    where: list[list[tuple[int, int]]] = field(default_factory=list)


class _ResultsMaxExceeded(Exception):
    """`errAllocationResultMaxSizeExceeded`: more than 32 devices for one claim on this path."""


@dataclass
class _Search:
    claims: list[ClaimToAllocate]
    node_name: str
    pools: list[Pool]
    state: AllocatedState
    features: Features
    rules: Rules
    requests: dict[tuple[int, int, int], _Request] = field(default_factory=dict)
    selected_sub: dict[tuple[int, int], int] = field(default_factory=dict)
    constraints: list[list[Any]] = field(default_factory=list)
    allocating: dict[DeviceID, set[int]] = field(default_factory=dict)
    allocating_capacity: dict[DeviceID, dict[str, int]] = field(default_factory=dict)
    consumed_counters: dict[Any, dict[str, dict[str, int]]] = field(default_factory=dict)
    available_counters: dict[Any, dict[str, dict[str, int]]] = field(default_factory=dict)
    results: list[list[dict[str, Any]]] = field(default_factory=list)
    matches: dict[tuple, bool] = field(default_factory=dict)
    steps: int = 0


def allocate(claims: list[ClaimToAllocate], node_name: str, pools: list[Pool], state: AllocatedState,
             classes: dict[str, DeviceClass], features: Features = V134, rules: Rules = Rules()) -> Allocation | None:
    """`Allocator.Allocate` for one node: the results (claims in order), None when the claims do not all fit;
    AllocationError for invalid input, NodeUnschedulable for the node's own failure message."""
    search = _Search(claims, node_name, pools, state, features, rules)
    for c, claim in enumerate(claims):
        _prepare_claim(search, c, claim, classes)
    try:
        done = _allocate_one(search, 0, 0, 0, 0, False, (0, 0))
    except _ResultsMaxExceeded:
        done = False
    if not done:
        if rules.skips_bad_pools and any(p.invalid for p in pools):
            raise NodeUnschedulable(INVALID_POOLS)
        return None
    return Allocation([_result(search, c) for c in range(len(claims))], _order_mattered(search),
                      [[e["where"] for e in results] for results in search.results])


def _prepare_claim(search: _Search, c: int, claim: ClaimToAllocate, classes: dict[str, DeviceClass]) -> None:
    """The first loop of `Allocate`: each request's data, the device count limit, the constraints."""
    features = search.features
    minimum = 0
    for r, request in enumerate(claim.spec.requests):
        if request.first_available and not features.prioritized_list:
            raise AllocationError(f"claim {claim.label}, request {request.name}: has subrequests, but the "
                                  f"DRAPrioritizedList feature is disabled")
        if not features.consumable_capacity:
            if request.exactly is not None and request.exactly.capacity is not None:
                raise AllocationError(f"claim {claim.label}, request {request.name}: has capacity requests, but "
                                      f"the DRAConsumableCapacity feature is disabled")
            for sub in request.first_available:
                if sub.capacity is not None:
                    raise AllocationError(f"claim {claim.label}, subrequest {sub.name}: has capacity requests, "
                                          f"but the DRAConsumableCapacity feature is disabled")
        if request.first_available:
            fewest = math.inf
            for s, sub in enumerate(request.first_available):
                data = search.requests[(c, r, s)] = _validate(search, c, sub.name, request.name, sub, classes)
                fewest = min(fewest, data.num_devices)
            minimum += int(fewest)
        else:
            data = search.requests[(c, r, 0)] = _validate(search, c, request.name, "", request.exactly, classes)
            minimum += data.num_devices
    if minimum > ALLOCATION_RESULTS_MAX_SIZE:
        raise AllocationError(f"claim {claim.label}: number of requested devices {minimum} exceeds the claim "
                              f"limit of {ALLOCATION_RESULTS_MAX_SIZE}")
    search.constraints.append([_constraint(search, claim, i, k) for i, k in enumerate(claim.spec.constraints)])
    search.results.append([])


def _constraint(search: _Search, claim: ClaimToAllocate, i: int, constraint: DeviceConstraint):
    list_type = search.features.list_type_attributes
    if constraint.match_attribute is not None:
        return MatchAttribute(frozenset(constraint.requests), constraint.match_attribute, list_type=list_type,
                              restores_intersection=search.rules.restores_intersection)
    if constraint.distinct_attribute is not None and search.features.consumable_capacity:
        return DistinctAttribute(frozenset(constraint.requests), constraint.distinct_attribute, list_type=list_type,
                                 per_device=search.rules.distinct_per_device)
    raise AllocationError(f"claim {claim.label}, constraint #{i}: empty constraint (unsupported constraint type?)")


def _validate(search: _Search, c: int, name: str, parent: str, sub: DeviceSubRequest,
              classes: dict[str, DeviceClass]) -> _Request:
    """`validateDeviceRequest`: the class, the admin access gate, the number of devices (for `All`: every
    selectable device with the capacity asked, refused when a pool is incomplete or invalid)."""
    label = search.claims[c].label
    for i, selector in enumerate(sub.selectors):
        if selector is None:  # an unknown (future) selector type
            raise AllocationError(f"claim {label}, request {name}, selector #{i}: CEL expression empty (unsupported "
                                  f"selector type?)")
    if sub.admin_access is not None and not search.features.admin_access:
        raise AllocationError(f"claim {label}, request {name}: admin access is requested, but the feature is "
                              f"disabled")
    if not sub.device_class_name:
        raise AllocationError(f"claim {label}, request {name}: missing device class name (unsupported request type?)")
    device_class = classes.get(sub.device_class_name)
    if device_class is None:
        raise AllocationError(f"claim {label}, request {name}: could not retrieve device class "
                              f"{sub.device_class_name}: deviceclass.resource.k8s.io "
                              f"\"{sub.device_class_name}\" not found")
    data = _Request(name, parent, sub, device_class)
    if sub.allocation_mode == EXACT_COUNT:
        data.num_devices = sub.count
    elif sub.allocation_mode == ALL:
        data.all_devices = []
        for p, pool in enumerate(search.pools):
            if pool.incomplete:
                raise AllocationError(f"claim {label}, request {name}: asks for all devices, but resource pool "
                                      f"{pool.pool_id} is currently being updated")
            if pool.invalid:
                raise AllocationError(f"claim {label}, request {name}: asks for all devices, but resource pool "
                                      f"{pool.pool_id} is currently invalid")
            for position, candidate in enumerate(pool.devices):
                if not _selectable(search, c, data, candidate):
                    continue
                if search.features.consumable_capacity and not _capacity_for_all(search, data, candidate):
                    continue
                data.all_devices.append((pool, candidate, (p, position)))
        data.num_devices = len(data.all_devices)
    else:
        raise AllocationError(f"claim {label}, request {name}: unsupported count mode {sub.allocation_mode}")
    return data


def _selectable(search: _Search, c: int, data: _Request, candidate: Candidate) -> bool:
    """`isSelectable`: binding conditions need their feature; the class's selectors, then the request's, then
    per-device node selection (verdicts cached per device and request)."""
    device = candidate.device
    if device.binding_conditions and not search.features.device_binding:
        return False  # devices with binding conditions are not supported, feature is off
    cache = search.state.selections if search.state.selections is not None else search.matches
    key = (id(device), candidate.device_id[0], data.device_class.meta.name, data.sub.selectors)
    known = cache.get(key)
    if known is None:  # an error is raised again each time (its text names the claim), never cached
        known = cache[key] = (_selectors_match(search, c, candidate.device_id, device, data.device_class.selectors,
                                               data.device_class.meta.name)
                              and _selectors_match(search, c, candidate.device_id, device, data.sub.selectors, None))
    return known and candidate.here


def _selectors_match(search: _Search, c: int, device_id: DeviceID, device: Device, selectors: Iterable[str],
                     class_name: str | None) -> bool:
    """`selectorsMatch`: every selector passes; a CEL error names the class or the claim (v1.37: and the
    device, `cel.EnhanceRuntimeError`)."""
    from kubefit.k8s.cel import (  # celpy: when DRA is used
        CelError,
        CelRuntimeError,
        compile_selector,
    )

    owner = f"class {class_name}" if class_name is not None else f"claim {search.claims[c].label}"
    for i, expression in enumerate(selectors):
        try:
            if not compile_selector(expression).matches(device_id[0], device,
                                                        multiple=search.features.consumable_capacity,
                                                        lists=search.features.list_type_attributes
                                                        or search.rules.lists_in_cel):
                return False
        except CelError as exc:
            raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {exc}") from None
        except CelRuntimeError as exc:
            where = f" on device {'/'.join(device_id)}" if search.rules.cel_error_names_device else ""
            raise AllocationError(f"{owner}: selector #{i}{where}: CEL runtime error: {exc}") from None
    return True


def _capacity_ok(search: _Search, data: _Request, candidate: Candidate) -> bool:
    """`CmpRequestOverCapacity` of the allocator: the capacity asked fits beside what is consumed (a request
    naming a capacity the device lacks skips the device)."""
    device_id = candidate.device_id
    try:
        return fits_capacity(search.state.capacity.get(device_id), data.sub.capacity, candidate.device,
                             search.allocating_capacity.get(device_id), search.rules.capacity_unit)
    except CapacityNotDefined:
        return False


def _capacity_for_all(search: _Search, data: _Request, candidate: Candidate) -> bool:
    """Whether `All` counts the device: v1.36 leaves out one without the capacity asked for or without enough of
    it left; v1.37 (kubernetes#140769) only one without the capacity, so a claim some matching device cannot
    serve fails instead of getting fewer devices."""
    if not search.rules.all_mode_strict_capacity:
        return _capacity_ok(search, data, candidate)
    requests = data.sub.capacity or {}
    return all(name in candidate.device.capacity for name in requests)


def _in_use(search: _Search, device_id: DeviceID) -> bool:
    """`deviceInUse`: allocated exclusively before this cycle, or in this search."""
    return device_id in search.state.dedicated or bool(search.allocating.get(device_id))


def _allocate_one(search: _Search, c: int, r: int, s: int, d: int, in_sub: bool, start: tuple[int, int]) -> bool:
    """`allocateOne`: device `d` of (sub)request (`r`, `s`) of claim `c`, candidates from `start` (pool index,
    position in the pool) on; True when everything got allocated."""
    search.steps += 1
    if c >= len(search.claims):
        return True
    claim = search.claims[c]
    if r >= len(claim.spec.requests):
        try:
            return _allocate_one(search, c + 1, 0, 0, 0, False, (0, 0))
        except _ResultsMaxExceeded:
            return False  # retrying under other circumstances may succeed (fewer devices of a subrequest)
    data = search.requests[(c, r, s)]
    if not in_sub and data.parent:  # the first subrequest: try each in turn, keep the first that works
        all_exceeded = True
        for k in range(len(claim.spec.requests[r].first_available)):
            try:
                done = _allocate_one(search, c, r, k, d, True, (0, 0))
            except _ResultsMaxExceeded:
                continue
            all_exceeded = False
            if done:
                search.selected_sub[(c, r)] = k
                return True
        if all_exceeded:
            raise _ResultsMaxExceeded
        return False
    if data.sub.allocation_mode == ALL and not data.all_devices:
        return False  # at least one device is required
    if d >= data.num_devices:
        return _allocate_one(search, c, r + 1, 0, 0, False, (0, 0))
    if len(search.results[c]) + data.num_devices - d > ALLOCATION_RESULTS_MAX_SIZE:
        raise _ResultsMaxExceeded
    if data.all_devices is not None:
        pool, candidate, where = data.all_devices[d]
        rollback = _allocate_device(search, c, r, s, data, pool, candidate, where, must=True)
        if rollback is None:
            return False  # the order of "all" devices does not matter: no solution
        try:
            done = _allocate_one(search, c, r, s, d + 1, in_sub, (0, 0))
        except _ResultsMaxExceeded:
            rollback()
            raise
        if not done:
            rollback()
        return done
    return _try_candidates(search, c, r, s, d, in_sub, data, start)


def _try_candidates(search: _Search, c: int, r: int, s: int, d: int, in_sub: bool, data: _Request,
                    start: tuple[int, int]) -> bool:
    """The candidate loop of `allocateOne`: every device of every usable pool, from `start` on."""
    skip_bad = search.rules.skips_bad_pools
    for p in range(start[0], len(search.pools)):
        pool = search.pools[p]
        if skip_bad and (pool.incomplete or pool.invalid):
            continue
        if not skip_bad and pool.invalid:
            raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid}")
        first = start[1] if p == start[0] else 0
        for position in range(first, len(pool.devices)):
            candidate = pool.devices[position]
            device_id = candidate.device_id
            if data.admin_access:
                if c in search.allocating.get(device_id, ()):
                    continue
            elif _in_use(search, device_id):
                continue
            if not _selectable(search, c, data, candidate):
                continue
            if search.features.consumable_capacity and not _capacity_ok(search, data, candidate):
                continue
            rollback = _allocate_device(search, c, r, s, data, pool, candidate, (p, position), must=False)
            if rollback is None:
                continue
            following = (p, position + 1) if search.rules.combinations else (0, 0)
            try:
                if _allocate_one(search, c, r, s, d + 1, in_sub, following):
                    return True
            except _ResultsMaxExceeded:
                rollback()
                raise
            rollback()
    return False


def _allocate_device(search: _Search, c: int, r: int, s: int, data: _Request, pool: Pool, candidate: Candidate,
                     where: tuple[int, int], must: bool):
    """`allocateDevice`: take the candidate if it is free, its counters suffice, no taint forbids it, the
    claim's constraints hold and (consumable capacity) its capacity does; the function that gives it back, or
    None. Every rejection undoes what was done before it (`rollbackDevice`, v1.36.3)."""
    device_id, device = candidate.device_id, candidate.device
    features = search.features
    multiple = features.consumable_capacity and bool(device.allow_multiple)
    if not multiple and data.admin_access and c in search.allocating.get(device_id, ()):
        return None
    if not data.admin_access and _in_use(search, device_id):
        return None
    if not features.partitionable_devices and device.consumes:
        return None
    undo: list = []
    skip_counters = multiple and _capacity_in_use(search, device_id)
    if not skip_counters and device.consumes:
        if not _reserve_counters(search, pool, device):
            return None
        undo.append(lambda: _release_counters(search, pool, device))
    if features.device_taints and taint_prevents_allocation(device.taints, data.sub.tolerations):
        _undo(undo)
        return None
    base, sub = (data.parent, data.name) if data.parent else (data.name, "")
    constraints = search.constraints[c]
    for constraint in constraints:
        if not constraint.add(base, sub, device_id[0], device):
            _undo(undo)
            if must:
                raise AllocationError(f"claim {search.claims[c].label}, request {data.name}: cannot add device "
                                      f"{'/'.join(device_id)} because a claim constraint would not be satisfied")
            return None
        undo.append(lambda k=constraint: k.remove(base, sub))
    if not multiple:
        search.allocating.setdefault(device_id, set()).add(c)
        undo.append(lambda: search.allocating[device_id].discard(c))
    consumed: dict[str, int] = {}
    share = False
    if features.consumable_capacity:
        if not _capacity_ok(search, data, candidate):
            _undo(undo)
            return None
        if multiple:
            consumed = consumed_from_request(data.sub.capacity, device, search.rules.capacity_unit)
            share = True
            existed = device_id in search.allocating_capacity
            add_into(search.allocating_capacity, device_id, consumed)
            undo.append(lambda: _remove_share(search, device_id, consumed, existed))
    search.results[c].append({"data": data, "id": device_id, "device": device, "slice": candidate.slice,
                              "share": share, "consumed": consumed or None, "where": where})
    undo.append(search.results[c].pop)
    return lambda: _undo(undo)


def _undo(steps: list) -> None:
    for step in reversed(steps):
        step()


def _remove_share(search: _Search, device_id: DeviceID, consumed: dict[str, int], existed: bool) -> None:
    """Rollback of one share: its capacity removed; an entry an earlier share needs is kept, even empty."""
    remove_from(search.allocating_capacity, device_id, consumed)
    if existed and device_id not in search.allocating_capacity:
        search.allocating_capacity[device_id] = {}


def _capacity_in_use(search: _Search, device_id: DeviceID) -> bool:
    """`deviceCapacityInUse`: the device has a share consuming capacity already (v1.37: or any share)."""
    if device_id in search.state.capacity or device_id in search.allocating_capacity:
        return True
    return search.rules.shared_marker_counts and device_id in search.state.shares


def taint_prevents_allocation(taints: Iterable[DeviceTaint], tolerations: Iterable[DeviceToleration]) -> bool:
    """`taintPreventsAllocation`: a NoSchedule or NoExecute taint no toleration tolerates (None and unknown
    effects never prevent)."""
    tolerations = tuple(tolerations)
    return any(t.effect in (NO_SCHEDULE, NO_EXECUTE) and not any(tolerates(k, t) for k in tolerations)
               for t in taints)


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """`resourceclaim.ToleratesTaint`."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


# --------------------------------------------------------------------------- shared counters

def _counter_key(search: _Search, pool: Pool) -> Any:
    return pool.name if search.rules.counters_by_pool_name else (pool.driver, pool.name)


def _available(search: _Search, pool: Pool) -> dict[str, dict[str, int]]:
    """The pool's counter sets less what its allocated devices consume (computed once per pool name in v1.36,
    `availableCounters`); may go negative, which leaves nothing available."""
    key = _counter_key(search, pool)
    found = search.available_counters.get(key)
    if found is None and search.state.counters is not None:
        found = search.state.counters.get((pool.driver, pool.name), {}).get(id(pool))
        if found is not None:
            search.available_counters[key] = found
    if found is None:
        found = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        for candidate in (*pool.devices, *pool.others):
            if not search.state.allocated(candidate.device_id):
                continue
            for consumption in candidate.device.consumes:
                counters = found.get(consumption.counter_set)
                if counters is None:
                    continue
                for name, amount in consumption.counters.items():
                    if name in counters:
                        counters[name] -= amount
        search.available_counters[key] = found
        if search.state.counters is not None:
            search.state.counters.setdefault((pool.driver, pool.name), {})[id(pool)] = found
    return found


def _reserve_counters(search: _Search, pool: Pool, device: Device) -> bool:
    """`checkAvailableCounters`: add the device's consumption; every counter of the pool must still cover what
    this search consumes of it, else the consumption is taken back."""
    available = _available(search, pool)
    consumed = search.consumed_counters.setdefault(_counter_key(search, pool), {})
    for consumption in device.consumes:
        counters = consumed.setdefault(consumption.counter_set, {})
        for name, amount in consumption.counters.items():
            counters[name] = counters.get(name, 0) + amount
    for set_name, counters in available.items():
        used = consumed.get(set_name, {})
        for name, amount in counters.items():
            if amount < used.get(name, 0):
                _release_counters(search, pool, device)
                return False
    return True


def _release_counters(search: _Search, pool: Pool, device: Device) -> None:
    """`deallocateCountersForDevice`."""
    consumed = search.consumed_counters[_counter_key(search, pool)]
    for consumption in device.consumes:
        counters = consumed.setdefault(consumption.counter_set, {})
        for name, amount in consumption.counters.items():
            counters[name] = counters.get(name, 0) - amount


# --------------------------------------------------------------------------- the result

def _result(search: _Search, c: int) -> AllocationResult:
    """The claim's AllocationResult: its devices (with share and consumed capacity), configs, node selector."""
    claim = search.claims[c]
    devices = []
    for entry in search.results[c]:
        data = entry["data"]
        devices.append(DeviceResult(
            data.result_name, *entry["id"], admin_access=True if data.admin_access else None,
            share_id=_share_id(claim, c, len(devices)) if entry["share"] else None,
            consumed_capacity=entry["consumed"],
            binding_conditions=entry["device"].binding_conditions if search.features.device_binding else (),
            binding_failure_conditions=(entry["device"].binding_failure_conditions
                                        if search.features.device_binding else ()),
            tolerations=data.sub.tolerations))
    selector = node_selector_of([(e["slice"], e["device"]) for e in search.results[c]], search.node_name,
                                search.rules.binds_to_node, claim.label)
    return AllocationResult(tuple(devices), selector, tuple(_configs(search, c)))


def _share_id(claim: ClaimToAllocate, c: int, i: int) -> str:
    """A share's id (upstream: a random UUID; kubefit: stable, made of the claim and the result's position)."""
    return f"share-{claim.label.replace('/', '-')}-{i}"


def _configs(search: _Search, c: int) -> list[dict[str, Any]]:
    """The configs: each class's once (v1.35+: with the requests using it), then the claim's that apply (v1.36:
    once per request they name; v1.37, kubernetes#139732: once), and (v1.37, kubernetes#139731) a config that
    applies to every request lists none."""
    claim = search.claims[c]
    config: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    chosen = [search.requests[(c, r, search.selected_sub.get((c, r), 0))] for r in range(len(claim.spec.requests))]
    for data in chosen:
        name = data.device_class.meta.name
        if not search.rules.class_config_requests:
            config += [{"source": "FromClass", **entry} for entry in data.device_class.config]
            continue
        if name in by_class:
            for entry in by_class[name]:
                entry["requests"].append(data.result_name)
            continue
        by_class[name] = [{"source": "FromClass", "requests": [data.result_name], **entry}
                          for entry in data.device_class.config]
        config += by_class[name]
    once = search.rules.config_once
    for entry in claim.spec.config:
        names = entry.get("requests") or []
        if not names:
            config.append({"source": "FromClaim", **entry})
            continue
        for request, data in zip(claim.spec.requests, chosen, strict=True):
            if request.name in names or (data.parent and data.result_name in names):
                config.append({"source": "FromClaim", **entry})
                if once:
                    break
    if once:
        every = [(request.name, data.result_name) for request, data in zip(claim.spec.requests, chosen, strict=True)]
        for entry in config:
            requests = entry.get("requests") or []
            if requests and all(name in requests or result in requests for name, result in every):
                entry["requests"] = None
    return [{k: v for k, v in entry.items() if not (k == "requests" and v is None)} for entry in config]


def node_selector_of(devices: list[tuple[ResourceSlice, Device]], node_name: str, binds_to_node: bool,
                     label: str) -> dict[str, Any] | None:
    """`createNodeSelector`: the node itself when a device is node-local or binds to its node, else the
    requirements of the slices' (or per-device) node selectors (None: every node)."""
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for slc, device in devices:
        if slc.per_device_node_selection:
            local, selector = device.node_name, device.node_selector
        else:
            local, selector = slc.node_name, slc.node_selector
        if local is not None or (device.binds_to_node and binds_to_node):
            return node_name_selector(node_name)
        if selector is not None:
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise AllocationError(f"create NodeSelector for claim {label.split('/')[-1]}: "
                                      f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
            if terms:
                _add_new(terms[0].get("matchFields") or [], fields)
                _add_new(terms[0].get("matchExpressions") or [], expressions)
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def relocate(allocation: Allocation, claims: list[ClaimToAllocate], pools: list[Pool], node_name: str,
             rules: Rules) -> Allocation:
    """An allocation found on a node whose pools offer what `pools` offer (same contents, position by position,
    and the same devices in use), moved onto the devices at the same positions of `pools`: what the allocator
    would find there (names, share ids and node selectors are the node's own)."""
    results = []
    for c, (result, where) in enumerate(zip(allocation.results, allocation.where, strict=True)):
        moved, devices = [], []
        for i, (r, (p, position)) in enumerate(zip(result.results, where, strict=True)):
            candidate = pools[p].devices[position]
            driver, pool, device = candidate.device_id
            moved.append(dataclasses.replace(r, driver=driver, pool=pool, device=device,
                                             share_id=_share_id(claims[c], c, i) if r.share_id else None))
            devices.append((candidate.slice, candidate.device))
        results.append(AllocationResult(tuple(moved), node_selector_of(devices, node_name, rules.binds_to_node,
                                                                        claims[c].label), result.config))
    return Allocation(results, allocation.order_mattered, allocation.where)


def node_name_selector(node_name: str) -> dict[str, Any]:
    """The selector of an allocation local to one node."""
    return {"nodeSelectorTerms": [{"matchFields": [{"key": NODE_NAME_FIELD, "operator": "In",
                                                    "values": [node_name]}]}]}


def _add_new(source: list[dict[str, Any]], into: list[dict[str, Any]]) -> None:
    """`addNewNodeSelectorRequirements`: requirements not already present (values compared as sets)."""
    for requirement in source:
        if not any(r.get("key") == requirement.get("key") and r.get("operator") == requirement.get("operator")
                   and set(r.get("values") or []) == set(requirement.get("values") or []) for r in into):
            into.append(requirement)


def _order_mattered(search: _Search) -> bool:
    """Whether a request that got devices had selectable devices in more than one pool, in a version whose
    allocator ranges over the pools in random (Go map) order."""
    if search.rules.sorted_pools or len(search.pools) < 2:
        return False
    for c, results in enumerate(search.results):
        for data in {id(e["data"]): e["data"] for e in results}.values():
            pools = {pool.pool_id for pool in search.pools for candidate in pool.devices
                     if _quietly_selectable(search, c, data, candidate)}
            if len(pools) > 1:
                return True
    return False


def _quietly_selectable(search: _Search, c: int, data: _Request, candidate: Candidate) -> bool:
    """`_selectable` for a device the search never looked at: an error there only means "not selectable"."""
    try:
        return _selectable(search, c, data, candidate)
    except AllocationError:
        return False
