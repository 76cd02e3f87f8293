"""Consumable capacity (DRAConsumableCapacity): what a request takes of a device's capacity, and whether it fits.

A port of `structured/internal/incubating/consumable_capacity.go` of v1.36.3 (`CmpRequestOverCapacity`,
`calculateConsumedCapacity`, `fillEmptyRequest`, `roundUpRange`, `roundUpValidValues`,
`GetConsumedCapacityFromRequest`, `violatesPolicy`) and of the `schedulerapi` collections the allocator keeps
consumed capacity in (`ConsumedCapacity.Add/Sub/Empty`, `ConsumedCapacityCollection.Insert/Remove`).

Quantities are kubefit's exact nano-unit integers. Where upstream reads a quantity as an integer (`Value()`, a
ceiling) it does so here too: `roundUpRange` and the step check of `violateValidRange` work in whole units, so a
fractional request is first rounded up to a whole unit (v1.37, kubernetes#140161, works in milli-units; see
`milli_ranges`). A consumed amount is a request rounded up per the device's `requestPolicy`; a request that does
not name a capacity of the device consumes the policy's default, or all of the capacity when there is no policy.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubefit.api.dra import Device, RequestPolicy
from kubefit.k8s.quantity import NANO

ConsumedCapacity = dict[str, int]  # capacity name → nano-units


class CapacityNotDefined(Exception):
    """`requestsContainNonExistCapacity`: the request names a capacity the device does not have (the device
    is skipped: "some requested capacity has not been defined")."""


def _units(nanos: int, step: int = NANO) -> int:
    """`Quantity.Value()` (step NANO) or `MilliValue()` (step 10^6): the ceiling, away from zero."""
    whole = -(-abs(nanos) // step)
    return whole if nanos >= 0 else -whole


def round_up_range(requested: int, valid_range: tuple[int, int | None, int | None], unit: int = NANO) -> int:
    """`roundUpRange`: below min, min; without a step, the request; else min plus whole steps, rounded up, the
    arithmetic on `Value()` integers (`unit` NANO; v1.37 milli-units, 10^6) as upstream does it."""
    minimum, _maximum, step = valid_range
    if requested < minimum:
        return minimum
    if step is None:
        return requested
    req, st, mn = _units(requested, unit), _units(step, unit), _units(minimum, unit)
    added = req - mn
    n = _go_div(added, st)
    if _go_mod(added, st) != 0:
        n += 1
    return (mn + st * n) * unit


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncation toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_mod(a: int, b: int) -> int:
    """Go's `%`: the sign of the dividend."""
    return a - b * _go_div(a, b)


def round_up_valid_values(requested: int, valid_values: tuple[int, ...]) -> int:
    """`roundUpValidValues`: the first valid value at or above the request (the list is ascending), else the
    request itself."""
    for value in valid_values:
        if requested <= value:
            return value
    return requested


def consumed_amount(requested: int | None, value: int, policy: RequestPolicy | None, unit: int = NANO) -> int:
    """`calculateConsumedCapacity`: what a request of `requested` (None: not asked) takes of a capacity."""
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else value  # fillEmptyRequest
    if policy is None:
        return requested
    if policy.valid_range is not None:  # upstream also requires Min, which validation always sets
        return round_up_range(requested, policy.valid_range, unit)
    if policy.valid_values:
        return round_up_valid_values(requested, policy.valid_values)
    return requested


def violates_policy(amount: int, policy: RequestPolicy | None, unit: int = NANO) -> bool:
    """`violatesPolicy`: above the range's max, off its step, or not one of the valid values. An amount equal
    to the default never violates (upstream compares the Quantity structs; the API server only stores a
    default that is itself valid, so comparing values decides alike)."""
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default:
        return False
    if policy.valid_range is not None:
        minimum, maximum, step = policy.valid_range
        if maximum is not None and amount > maximum:
            return True
        if step is not None:
            added = _units(amount, unit) - _units(minimum, unit)
            return _go_mod(added, _units(step, unit)) != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def consumed_from_request(requests: Mapping[str, int] | None, device: Device, unit: int = NANO) -> ConsumedCapacity:
    """`GetConsumedCapacityFromRequest`: per capacity of the device, what the request consumes of it."""
    requests = requests or {}
    return {name: consumed_amount(requests.get(name), value, device.policies.get(name), unit)
            for name, value in device.capacity.items()}


def fits_capacity(current: Mapping[str, int] | None, requests: Mapping[str, int] | None, device: Device,
                  allocating: Mapping[str, int] | None, unit: int = NANO) -> bool:
    """`CmpRequestOverCapacity`: the request keeps to each capacity's policy, and what is consumed already
    (`current`: the claims allocated before this cycle; `allocating`: this search's other shares) plus what it
    consumes stays within each capacity's value. CapacityNotDefined when it names a capacity the device lacks."""
    if requests and any(name not in device.capacity for name in requests):
        raise CapacityNotDefined("some requested capacity has not been defined")
    requests = requests or {}
    current = current or {}
    allocating = allocating or {}
    for name, value in device.capacity.items():
        policy = device.policies.get(name)
        amount = consumed_amount(requests.get(name), value, policy, unit)
        if violates_policy(amount, policy, unit):
            return False
        total = current.get(name, 0) + amount + allocating.get(name, 0)
        if total > value:
            return False
    return True


def add_into(collection: dict, device_id, consumed: Mapping[str, int]) -> None:
    """`ConsumedCapacityCollection.Insert`: the entry is created even for an empty amount."""
    entry = collection.get(device_id)
    if entry is None:
        collection[device_id] = dict(consumed)
        return
    for name, amount in consumed.items():
        entry[name] = entry.get(name, 0) + amount


def remove_from(collection: dict, device_id, consumed: Mapping[str, int]) -> None:
    """`ConsumedCapacityCollection.Remove`: subtract what the entry has; drop the entry when all of it is 0."""
    entry = collection.get(device_id)
    if entry is None:
        return
    for name, amount in consumed.items():
        if name in entry:
            entry[name] -= amount
    if all(v == 0 for v in entry.values()):
        del collection[device_id]
