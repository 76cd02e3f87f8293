"""A claim's device constraints: `matchAttribute` and `distinctAttribute`, as the allocator tracks them.

Ports of `matchAttributeConstraint` (`allocator_incubating.go`) and `distinctAttributeConstraint`
(`constraint.go`, DRAConsumableCapacity) of v1.36.3, with the experimental allocator's list-type variant
(DRAListTypeAttributes, `attributeAsSet`, `hasIntersection`, `updateToIntersection`).

Upstream quirks kept, because they decide answers:

* `distinctAttribute` remembers one attribute per *request name*: a second device of the same request replaces
  the first, so with three devices in one request the third is only compared with the second (fixed in v1.37,
  kubernetes#140600: `per_device`). Removing a device forgets the whole request's entry.
* With DRAListTypeAttributes, `distinctAttribute` checks a new device against the others but records nothing
  for it (the set stays the first device's); `matchAttribute` narrows its intersection on every add and never
  widens it on remove (until it is empty again), so a search that backtracks can miss a solution (v1.37 fixes
  that, kubernetes#140325: `restores_intersection`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubefit.api.dra import Device, DeviceAttribute

LIST_KINDS = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """`lookupAttribute`: the fully qualified name, else its id when the domain is the driver's."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


def as_set(attribute: DeviceAttribute | None) -> tuple[str, frozenset] | None:
    """`attributeAsSet`: (element kind, values) of a scalar or list attribute."""
    if attribute is None:
        return None
    kind = LIST_KINDS.get(attribute.kind, attribute.kind)
    if attribute.kind in LIST_KINDS:
        return (kind, frozenset(attribute.value)) if attribute.value else None
    return kind, frozenset((attribute.value,))


def _intersects(a: tuple[str, frozenset] | None, b: tuple[str, frozenset] | None) -> bool:
    return a is not None and b is not None and a[0] == b[0] and bool(a[1] & b[1])


def _applies(names: frozenset[str], request: str, sub: str) -> bool:
    """`matches`: the constraint names the request, or the `request/subrequest`."""
    if not names:
        return True
    return request in names or (bool(sub) and f"{request}/{sub}" in names)


@dataclass
class MatchAttribute:
    """`matchAttributeConstraint`: every device of the requests it names has one attribute value."""

    requests: frozenset[str]
    attribute: str
    list_type: bool = False  # DRAListTypeAttributes: values intersect instead of being equal
    restores_intersection: bool = False  # v1.37 (kubernetes#140325)
    value: DeviceAttribute | None = None
    intersection: tuple[str, frozenset] | None = None
    history: list = field(default_factory=list)
    count: int = 0

    def add(self, request: str, sub: str, driver: str, device: Device) -> bool:
        if not _applies(self.requests, request, sub):
            return True
        attribute = lookup_attribute(device, driver, self.attribute)
        if attribute is None:
            return False
        if self.count == 0:
            if self.list_type:
                self.intersection = as_set(attribute)
                if self.intersection is None:
                    return False
            else:
                self.value = attribute
            self.count = 1
            return True
        if self.list_type:
            other = as_set(attribute)
            if other is None or not _intersects(self.intersection, other):
                return False
            if self.restores_intersection:
                self.history.append(self.intersection)
            self.intersection = (self.intersection[0], self.intersection[1] & other[1])
        elif attribute.kind in LIST_KINDS or attribute.kind != self.value.kind or attribute.value != self.value.value:
            return False  # (a list value is an unknown type to the scalar comparison)
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if not _applies(self.requests, request, sub):
            return
        self.count -= 1
        if self.restores_intersection and self.history:
            self.intersection = self.history.pop()


@dataclass
class DistinctAttribute:
    """`distinctAttributeConstraint`: the devices of the requests it names have pairwise different values."""

    requests: frozenset[str]
    attribute: str
    list_type: bool = False
    per_device: bool = False  # v1.37 (kubernetes#140600): every device is remembered, not one per request
    seen: dict[Any, DeviceAttribute] = field(default_factory=dict)
    count: int = 0
    serial: int = 0

    def add(self, request: str, sub: str, driver: str, device: Device) -> bool:
        if not _applies(self.requests, request, sub):
            return True
        attribute = lookup_attribute(device, driver, self.attribute)
        if attribute is None:
            return False
        key: Any = (request, self.serial) if self.per_device else request
        if self.count == 0:
            self.seen[key] = attribute
            self.count = 1
            self.serial += 1
            return True
        if self.list_type:
            new = as_set(attribute)
            if new is None:
                return False
            return not any(_intersects(new, as_set(a)) for a in self.seen.values())
        if attribute.kind in LIST_KINDS or any(a.kind == attribute.kind and a.value == attribute.value
                                               for a in self.seen.values()):
            return False  # (a list value is an unknown type to the scalar comparison)
        self.seen[key] = attribute
        self.count += 1
        self.serial += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if not _applies(self.requests, request, sub):
            return
        if self.per_device:
            newest = next((k for k in reversed(self.seen) if k[0] == request), None)
            if newest is not None:
                del self.seen[newest]
        else:
            self.seen.pop(request, None)
        self.count -= 1
