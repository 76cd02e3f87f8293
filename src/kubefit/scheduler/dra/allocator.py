"""The structured allocator: which devices of a node's pools a pod's claims get (kube-scheduler v1.34.1).

A port of `k8s.io/dynamic-resource-allocation/structured/internal/experimental/allocator_experimental.go`
(`Allocator.Allocate`, `allocateOne`, `allocateDevice`, `isSelectable`, `validateDeviceRequest`,
`createNodeSelector`, `matchAttributeConstraint`), the variant kube-scheduler uses with v1.34's default
feature gates (DRAPrioritizedList and DRAAdminAccess on; partitionable devices, device taints, binding
conditions and consumable capacity off, their fields left out as the allocator leaves them out).

Claims in order, each claim's requests in order, for each wanted device the candidates pool by pool, slice
by slice, device by device: a candidate must not be in use (allocated to another claim, or being allocated
in this search), pass its class's selectors and the request's, and keep every constraint of the claim;
`firstAvailable` tries its subrequests in order; `All` takes every selectable device of the node's pools
(none of them incomplete or invalid) and fails if one is in use. The search backtracks over every
candidate in every order and stops at the first complete solution. An error (a class that does not exist,
a selector failing at run time, an invalid pool) stops the whole Filter: kube-scheduler then fails the
pod's scheduling cycle with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubefit.api.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    AllocationResult,
    ClaimSpec,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceID,
    DeviceResult,
    DeviceSubRequest,
    ResourceSlice,
)
from kubefit.scheduler.dra.pools import Pool

NODE_NAME_FIELD = "metadata.name"


class AllocationError(Exception):
    """A fatal allocation error (invalid input): the Filter of the whole cycle fails with this text."""


@dataclass(frozen=True)
class Features:
    """The allocator's feature gates (`structured.Features`) at their kube-scheduler v1.34 defaults."""

    admin_access: bool = True  # DRAAdminAccess (beta)
    prioritized_list: bool = True  # DRAPrioritizedList (beta)
    partitionable_devices: bool = False  # DRAPartitionableDevices (alpha)
    device_taints: bool = False  # DRADeviceTaints (alpha)
    device_binding: bool = False  # DRADeviceBindingConditions (alpha)
    consumable_capacity: bool = False  # DRAConsumableCapacity (alpha)


V134 = Features()


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
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] | None = None

    @property
    def result_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def admin_access(self) -> bool:
        return bool(self.sub.admin_access)


@dataclass
class _Constraint:
    """`matchAttributeConstraint`: every device of the requests it names shares one attribute value."""

    requests: frozenset[str]
    attribute: str
    value: Any = None
    count: int = 0

    def applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, driver: str, device: Device) -> bool:
        if not self.applies(request, sub):
            return True
        value = lookup_attribute(device, driver, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value, self.count = value, 1
            return True
        if value.kind != self.value.kind or value.value != self.value.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if self.applies(request, sub):
            self.count -= 1


def lookup_attribute(device: Device, driver: str, name: str):
    """`lookupAttribute`: the fully qualified name, else its id when the domain is the driver's."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


@dataclass
class Allocation:
    """Allocate's answer for one node: one AllocationResult per claim, and whether pool order may have
    mattered (a request had selectable devices in more than one pool)."""

    results: list[AllocationResult]
    order_mattered: bool = False


@dataclass
class _Search:
    claims: list[ClaimToAllocate]
    node_name: str
    pools: list[Pool]
    allocated: frozenset[DeviceID] | set[DeviceID]
    features: Features
    requests: dict[tuple[int, int, int], _Request] = field(default_factory=dict)
    selected_sub: dict[tuple[int, int], int] = field(default_factory=dict)
    constraints: list[list[_Constraint]] = field(default_factory=list)
    allocating: dict[DeviceID, set[int]] = field(default_factory=dict)
    results: list[list[tuple[_Request, DeviceID, ResourceSlice]]] = field(default_factory=list)
    matches: dict[tuple, bool] = field(default_factory=dict)
    steps: int = 0


class _ResultsMaxExceeded(Exception):
    """`errAllocationResultMaxSizeExceeded`: more than 32 devices for one claim on this path."""


def allocate(claims: list[ClaimToAllocate], node_name: str, pools: list[Pool],
             allocated: frozenset[DeviceID] | set[DeviceID], classes: dict[str, DeviceClass],
             features: Features = V134) -> Allocation | None:
    """`Allocator.Allocate` for one node: the results (claims in order), None when the claims do not all fit;
    AllocationError for invalid input."""
    search = _Search(claims, node_name, pools, allocated, features)
    for c, claim in enumerate(claims):
        minimum = 0
        for r, request in enumerate(claim.spec.requests):
            if request.first_available:
                if not features.prioritized_list:
                    raise AllocationError(f"claim {claim.label}, request {request.name}: has subrequests, but the "
                                          f"DRAPrioritizedList feature is disabled")
                fewest = math.inf
                for s, sub in enumerate(request.first_available):
                    if sub.capacity and not features.consumable_capacity:
                        raise AllocationError(f"claim {claim.label}, subrequest {sub.name}: has capacity requests, "
                                              f"but the DRAConsumableCapacity feature is disabled")
                    data = _validate(search, c, sub.name, request.name, sub, classes)
                    search.requests[(c, r, s)] = data
                    fewest = min(fewest, data.num_devices)
                minimum += int(fewest)
            else:
                sub = request.exactly
                if sub.capacity and not features.consumable_capacity:
                    raise AllocationError(f"claim {claim.label}, request {request.name}: has capacity requests, but "
                                          f"the DRAConsumableCapacity feature is disabled")
                data = search.requests[(c, r, 0)] = _validate(search, c, request.name, "", sub, classes)
                minimum += data.num_devices
        if minimum > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(f"claim {claim.label}: number of requested devices {minimum} exceeds the claim "
                                  f"limit of {ALLOCATION_RESULTS_MAX_SIZE}")
        search.constraints.append([_constraint(claim, i, k) for i, k in enumerate(claim.spec.constraints)])
        search.results.append([])
    try:
        done = _allocate_one(search, 0, 0, 0, 0, False)
    except _ResultsMaxExceeded:
        done = False
    if not done:
        return None
    return Allocation([_result(search, c) for c in range(len(claims))], _order_mattered(search, classes))


def _constraint(claim: ClaimToAllocate, i: int, constraint: DeviceConstraint) -> _Constraint:
    if constraint.match_attribute is not None:
        return _Constraint(frozenset(constraint.requests), constraint.match_attribute)
    raise AllocationError(f"claim {claim.label}, constraint #{i}: empty constraint (unsupported constraint type?)")


def _validate(search: _Search, c: int, name: str, parent: str, sub: DeviceSubRequest,
              classes: dict[str, DeviceClass]) -> _Request:
    """`validateDeviceRequest`: the class, the admin access gate, the number of devices (for `All`: every
    selectable device, refused when a pool is incomplete or invalid)."""
    label = search.claims[c].label
    shown = sub.name
    for i, selector in enumerate(sub.selectors):
        if selector is None:  # an unknown (future) selector type
            raise AllocationError(f"claim {label}, request {shown}, selector #{i}: CEL expression empty (unsupported "
                                  f"selector type?)")
    if sub.admin_access is not None and not search.features.admin_access:
        raise AllocationError(f"claim {label}, request {shown}: admin access is requested, but the feature is "
                              f"disabled")
    if not sub.device_class_name:
        raise AllocationError(f"claim {label}, request {shown}: missing device class name (unsupported request "
                              f"type?)")
    device_class = classes.get(sub.device_class_name)
    if device_class is None:
        raise AllocationError(f"claim {label}, request {shown}: could not retrieve device class "
                              f"{sub.device_class_name}: deviceclass.resource.k8s.io "
                              f"\"{sub.device_class_name}\" not found")
    data = _Request(name, parent, sub, device_class)
    if sub.allocation_mode == EXACT_COUNT:
        data.num_devices = sub.count
    elif sub.allocation_mode == ALL:
        data.all_devices = []
        for pool in search.pools:
            if pool.incomplete:
                raise AllocationError(f"claim {label}, request {shown}: asks for all devices, but resource pool "
                                      f"{pool.pool_id} is currently being updated")
            if pool.invalid:
                raise AllocationError(f"claim {label}, request {shown}: asks for all devices, but resource pool "
                                      f"{pool.pool_id} is currently invalid")
            for device in pool.devices:
                if _selectable(search, c, data, device):
                    data.all_devices.append(device)
        data.num_devices = len(data.all_devices)
    else:
        raise AllocationError(f"claim {label}, request {shown}: unsupported count mode {sub.allocation_mode}")
    return data


def _selectable(search: _Search, c: int, data: _Request, candidate: tuple[DeviceID, Device, ResourceSlice]) -> bool:
    """`isSelectable`: the class's selectors, then the request's (verdicts cached per device and request)."""
    device_id, device, _slice = candidate
    if device.binding_conditions and not search.features.device_binding:
        return False  # devices with binding conditions are not supported with the feature off
    key = (device_id, c, data.result_name)
    known = search.matches.get(key)
    if known is not None:
        return known
    ok = (_selectors_match(search, c, device_id, device, data.device_class.selectors, data.device_class.meta.name)
          and _selectors_match(search, c, device_id, device, data.sub.selectors, None))
    search.matches[key] = ok
    return ok


def _selectors_match(search: _Search, c: int, device_id: DeviceID, device: Device, selectors: Iterable[str],
                     class_name: str | None) -> bool:
    """`selectorsMatch`: every selector passes; a CEL error names the class or the claim."""
    from kubefit.k8s.cel import (  # celpy: when DRA is used
        CelError,
        CelRuntimeError,
        compile_selector,
    )

    owner = f"class {class_name}" if class_name is not None else f"claim {search.claims[c].label}"
    for i, expression in enumerate(selectors):
        try:
            if not compile_selector(expression).matches(device_id[0], device):
                return False
        except CelError as exc:
            raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {exc}") from None
        except CelRuntimeError as exc:
            raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {exc}") from None
    return True


def _in_use(search: _Search, device_id: DeviceID) -> bool:
    return device_id in search.allocated or bool(search.allocating.get(device_id))


def _allocate_one(search: _Search, c: int, r: int, s: int, d: int, in_sub: bool) -> bool:
    """`allocateOne`: device `d` of (sub)request (`r`, `s`) of claim `c`; True when everything got allocated."""
    search.steps += 1
    if c >= len(search.claims):
        return True
    claim = search.claims[c]
    if r >= len(claim.spec.requests):
        try:
            return _allocate_one(search, c + 1, 0, 0, 0, False)
        except _ResultsMaxExceeded:
            return False  # retrying under other circumstances may succeed (fewer devices of a subrequest)
    data = search.requests[(c, r, s)]
    if not in_sub and data.parent:  # the first subrequest: try each in turn, keep the first that works
        all_exceeded = True
        for k in range(len(claim.spec.requests[r].first_available)):
            try:
                done = _allocate_one(search, c, r, k, d, True)
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
        return _allocate_one(search, c, r + 1, 0, 0, False)
    if len(search.results[c]) + data.num_devices - d > ALLOCATION_RESULTS_MAX_SIZE:
        raise _ResultsMaxExceeded
    if data.all_devices is not None:
        rollback = _allocate_device(search, c, data, data.all_devices[d], must=True)
        if rollback is None:
            return False  # the order of "all" devices does not matter: no solution
        try:
            done = _allocate_one(search, c, r, s, d + 1, in_sub)
        except _ResultsMaxExceeded:
            rollback()
            raise
        if not done:
            rollback()
        return done
    for pool in search.pools:
        if pool.invalid:
            raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid}")
        for candidate in pool.devices:
            device_id = candidate[0]
            if data.admin_access:
                if c in search.allocating.get(device_id, ()):
                    continue
            elif _in_use(search, device_id):
                continue
            if not _selectable(search, c, data, candidate):
                continue
            rollback = _allocate_device(search, c, data, candidate, must=False)
            if rollback is None:
                continue
            try:
                if _allocate_one(search, c, r, s, d + 1, in_sub):
                    return True
            except _ResultsMaxExceeded:
                rollback()
                raise
            rollback()
    return False


def _allocate_device(search: _Search, c: int, data: _Request, candidate: tuple[DeviceID, Device, ResourceSlice],
                     must: bool):
    """`allocateDevice`: take the candidate if it is free and keeps the claim's constraints; the function that
    gives it back, or None."""
    device_id, device, _slice = candidate
    if data.admin_access:
        if c in search.allocating.get(device_id, ()):
            return None
    elif _in_use(search, device_id):
        return None
    if device.consumes_counters and not search.features.partitionable_devices:
        return None
    base, sub = (data.parent, data.name) if data.parent else (data.name, "")
    constraints = search.constraints[c]
    for i, constraint in enumerate(constraints):
        if not constraint.add(base, sub, device_id[0], device):
            if must:
                raise AllocationError(f"claim {search.claims[c].label}, request {data.name}: cannot add device "
                                      f"{'/'.join(device_id)} because a claim constraint would not be satisfied")
            for earlier in constraints[:i]:
                earlier.remove(base, sub)
            return None
    search.allocating.setdefault(device_id, set()).add(c)
    search.results[c].append((data, device_id, candidate[2]))

    def rollback() -> None:
        for constraint in constraints:
            constraint.remove(base, sub)
        search.allocating[device_id].discard(c)
        search.results[c].pop()

    return rollback


def _result(search: _Search, c: int) -> AllocationResult:
    """The claim's AllocationResult: its devices, the configs of its classes and its own, its node selector."""
    claim = search.claims[c]
    devices = tuple(DeviceResult(data.result_name, *device_id, admin_access=True if data.admin_access else None)
                    for data, device_id, _slice in search.results[c])
    config: list[dict[str, Any]] = []
    for r in range(len(claim.spec.requests)):
        data = search.requests[(c, r, search.selected_sub.get((c, r), 0))]
        config += [{"source": "FromClass", **entry} for entry in data.device_class.config]
    for entry in claim.spec.config:
        names = entry.get("requests") or []
        if not names:
            config.append({"source": "FromClaim", **entry})
            continue
        for r, request in enumerate(claim.spec.requests):
            if request.name in names:
                config.append({"source": "FromClaim", **entry})
                continue
            if request.first_available:
                sub = request.first_available[search.selected_sub.get((c, r), 0)]
                if f"{request.name}/{sub.name}" in names:
                    config.append({"source": "FromClaim", **entry})
    return AllocationResult(devices, _node_selector(search, c), tuple(config))


def _node_selector(search: _Search, c: int) -> dict[str, Any] | None:
    """`createNodeSelector`: the node itself when a device is node-local, else the requirements of the slices'
    node selectors (None: every node)."""
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for _data, _device_id, slc in search.results[c]:
        if slc.node_name is not None:
            return node_name_selector(search.node_name)
        if slc.node_selector is not None:
            terms = slc.node_selector.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise AllocationError(f"create NodeSelector for claim {search.claims[c].label.split('/')[-1]}: "
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


def _order_mattered(search: _Search, classes: dict[str, DeviceClass]) -> bool:
    """Whether a request that got devices had selectable devices in more than one pool (then kube-scheduler's
    random pool order may have given it other devices)."""
    if len(search.pools) < 2:
        return False
    for c, results in enumerate(search.results):
        for data in {id(d): d for d, _i, _s in results}.values():
            pools = {pool.pool_id for pool in search.pools for candidate in pool.devices
                     if _quietly_selectable(search, c, data, candidate)}
            if len(pools) > 1:
                return True
    return False


def _quietly_selectable(search: _Search, c: int, data: _Request, candidate) -> bool:
    """`_selectable` for a device the search never looked at: an error there only means "not selectable"."""
    try:
        return _selectable(search, c, data, candidate)
    except AllocationError:
        return False
