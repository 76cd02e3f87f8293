"""The resource pools a node can reach (`structured/internal/experimental/pools_experimental.go`, GatherPools).

A ResourceSlice is reachable from a node when it names the node (`nodeName`), all nodes (`allNodes`) or a
node selector the node matches; a slice with per-device node selection needs DRAPartitionableDevices (off
in v1.34) and is left out, as is a slice that says none of these. Slices of one driver and pool name form
a pool; only the slices of the pool's newest generation count; a pool with fewer slices than
`resourceSliceCount` is incomplete, one with a device name twice is invalid.

Order. kube-scheduler gathers pools into a Go map and ranges over it, and lists a pool's slices from its
informer cache: both orders are random. kubefit takes pools in (driver, pool name) order, then a pool's
slices by name, devices in their slice's order; pools holding a device with binding conditions go last
(as the experimental allocator sorts them). Which devices a claim gets can depend on that order (never
whether it gets some: the search is exhaustive); `Allocation.order_mattered` tells when it may have.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kubefit.api.dra import Device, DeviceID, ResourceSlice


@dataclass(frozen=True, eq=False)
class Pool:
    """One driver's pool as a node sees it: its slices of the newest generation and its devices in order."""

    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]
    incomplete: bool = False
    invalid: str = ""  # why the pool is invalid ("" when it is not)
    devices: tuple[tuple[DeviceID, Device, ResourceSlice], ...] = field(default=(), repr=False)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def build_pool(driver: str, name: str, slices: list[ResourceSlice]) -> Pool:
    """The pool of `slices` (one driver and pool name): the newest generation's slices, by slice name."""
    newest = max(s.generation for s in slices)
    current = sorted((s for s in slices if s.generation == newest), key=lambda s: s.meta.name)
    devices = tuple(((driver, name, d.name), d, s) for s in current for d in s.devices)
    names = [d[0][2] for d in devices]
    invalid = ""
    if len(set(names)) != len(names):
        seen: set[str] = set()
        duplicate = next(n for n in names if n in seen or seen.add(n))  # type: ignore[func-returns-value]
        invalid = f"duplicate device name {duplicate}"
    return Pool(driver, name, tuple(current), incomplete=len(current) != current[0].slice_count,
                invalid=invalid, devices=devices)


def pool_order(pool: Pool) -> tuple:
    """kubefit's fixed order of pools (upstream: random); binding-condition pools last."""
    return (any(d.binding_conditions for _i, d, _s in pool.devices), pool.driver, pool.name)


def gather_pools(slices: list[ResourceSlice]) -> list[Pool]:
    """`GatherPools` for the slices a node reaches, in kubefit's fixed order (see the module docstring)."""
    groups: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        groups.setdefault((s.driver, s.pool), []).append(s)
    return sorted((build_pool(driver, name, group) for (driver, name), group in groups.items()), key=pool_order)


def reachable(slices: list[ResourceSlice], node_names: list[str], selector_mask) -> list[list[int]]:
    """Per node, the indices of the slices it reaches; `selector_mask(node_selector)` gives a node selector's
    bool mask over the nodes (kube-scheduler's nodeaffinity matching)."""
    out: list[list[int]] = [[] for _ in node_names]
    index = {name: i for i, name in enumerate(node_names)}
    for k, s in enumerate(slices):
        if s.per_device_node_selection:  # DRAPartitionableDevices is off: GatherPools skips the slice
            continue
        if s.node_name is not None:
            i = index.get(s.node_name)
            if i is not None:
                out[i].append(k)
        elif s.all_nodes:
            for row in out:
                row.append(k)
        elif s.node_selector is not None:
            for i in np.flatnonzero(selector_mask(s.node_selector)).tolist():
                out[i].append(k)
    return out


# The allocator features kube-scheduler turns on from v1.36 (their gates beta and on), which kubefit's
# allocator evaluates as v1.34 does (off): what a device uses of them, and the gate.
_V136_FEATURES = (
    ("DRAPartitionableDevices", "consumes shared counters or selects its nodes per device",
     lambda s, d: d.consumes_counters or s.per_device_node_selection),
    ("DRADeviceTaints", "has taints", lambda s, d: bool(d.taints)),
    ("DRADeviceBindingConditions", "has binding conditions", lambda s, d: d.binding_conditions or d.binds_to_node),
)


def unevaluated_device_features(slices, version, classes=()) -> list[str]:
    """One note per device feature that `version` evaluates (its gate on: v1.36's defaults) and kubefit does
    not: the first ResourceSlice and device using it named (or DeviceClass, for extended resources backed by
    devices), and what kubefit does instead."""
    if version is None:
        return []
    notes = []
    backed = next((c for c in classes if getattr(c, "extended_resource_name", None)), None)
    if backed is not None and version.gate("DRAExtendedResource"):
        notes.append(f"DeviceClass/{backed.meta.name}: spec.extendedResourceName {backed.extended_resource_name!r} "
                     f"(DRAExtendedResource, on in kube-scheduler {version.patch}): requests of that resource are "
                     f"evaluated as device-plugin resources only (NodeResourcesFit of v1.34), not allocated as "
                     f"devices, so this answer may differ")
    for gate, uses, used in _V136_FEATURES:
        if not version.gate(gate):
            continue
        found = next(((s, d) for s in slices for d in s.devices if used(s, d)), None)
        if found is not None:
            notes.append(f"ResourceSlice/{found[0].meta.name}: device {found[1].name} {uses} ({gate}, on in "
                         f"kube-scheduler {version.patch}): kubefit's allocator evaluates devices as kube-scheduler "
                         f"v1.34 does, with {gate} off (such devices are left out), so this answer may differ")
    return notes
