"""The resource pools a node can reach (`GatherPools`, `buildPool`, `checkSlicesInPool` of each version).

v1.36.3 (`structured/internal/incubating/pools_incubating.go`): a slice is relevant to a node when it names
it (`nodeName`), all nodes, a node selector the node matches, or (per-device node selection,
DRAPartitionableDevices) has a device that does; a slice with `sharedCounters` is relevant to *every* node
(v1.36 hands such slices to every node's allocation; v1.37 only to the nodes its node selection names).
Without DRAPartitionableDevices, slices with shared counters or per-device node selection are left out.
Slices of one driver and pool name form a pool; only the newest generation counts; a pool missing slices
is looked up among all slices (a newer generation anywhere makes it obsolete: dropped), and stays
incomplete when they are not all there. A pool is invalid when a device name repeats among its device
slices, a counter set name repeats, or a device consumes a counter set or counter the pool does not have
(devices of the pool's slices not reaching the node are checked too: they share the counters).

Order: v1.36's incubating and experimental allocators sort pools by (driver, pool name) and a pool's slices by
name, pools with a device having binding conditions last; v1.34, v1.35 and v1.36's stable allocator range
over a Go map (random order), which kubefit replaces by the same sorted order and says so when the order may
have mattered (`Allocation.order_mattered`). v1.34 (`build_pool_v134`) keeps an incomplete pool's devices
and fails the whole cycle on an invalid pool; later versions skip both when allocating.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.dra import Device, DeviceID, ResourceSlice


@dataclass(frozen=True, eq=False)
class Candidate:
    """A device of a pool as one node sees it: its id, the device, its slice, and whether per-device node
    selection lets this node use it (`isSelectable`'s NodeMatches)."""

    device_id: DeviceID
    device: Device
    slice: ResourceSlice
    here: bool = True


@dataclass(frozen=True, eq=False)
class Pool:
    """One driver's pool as a node sees it (`Pool` of `pools_incubating.go`)."""

    driver: str
    name: str
    slices: tuple[ResourceSlice, ...] = ()  # DeviceSlicesTargetingNode, by name
    incomplete: bool = False
    invalid: str = ""  # InvalidReason ("" when valid)
    devices: tuple[Candidate, ...] = field(default=(), repr=False)
    others: tuple[Candidate, ...] = field(default=(), repr=False)  # DeviceSlicesNotTargetingNode's devices
    counter_sets: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def binding(self) -> bool:
        """`poolHasBindingConditions`."""
        return any(c.device.binding_conditions for c in self.devices)


@dataclass(frozen=True)
class PoolRules:
    """How a version gathers pools (see the module docstring)."""

    minor: int = 34
    partitionable: bool = False  # DRAPartitionableDevices
    counter_slices_everywhere: bool = False  # v1.36: slices with sharedCounters reach every node

    @property
    def skips_bad_pools(self) -> bool:
        return self.minor >= 35


def slice_reaches(s: ResourceSlice, node: int, node_name: str, selector_match: Callable[[dict], np.ndarray],
                  rules: PoolRules) -> bool | None:
    """Whether GatherPools keeps the slice for the node (None: never, whatever the node)."""
    if not rules.partitionable and (s.per_device_set or s.shared_counters):
        return None
    if s.shared_counters and rules.counter_slices_everywhere:
        return True
    if s.node_name is not None:
        return s.node_name == node_name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return bool(selector_match(s.node_selector)[node])
    if s.per_device_node_selection:
        return any(device_reaches(d, node, node_name, selector_match) for d in s.devices)
    return None  # some future way of selecting nodes: left out


def device_reaches(d: Device, node: int, node_name: str, selector_match: Callable[[dict], np.ndarray]) -> bool:
    """`NodeMatches` for one device of a slice with per-device node selection."""
    if d.node_name:
        return d.node_name == node_name
    if d.all_nodes:
        return True
    if d.node_selector is not None:
        return bool(selector_match(d.node_selector)[node])
    return False


def newest(slices: Sequence[ResourceSlice]) -> list[ResourceSlice]:
    """`addSlice`: the slices of the newest generation (an older one is out-dated, a newer one replaces)."""
    top = max(s.generation for s in slices)
    return [s for s in slices if s.generation == top]


def build_pool(driver: str, name: str, targeting: list[ResourceSlice], every: list[ResourceSlice] | None,
               rules: PoolRules, here: Callable[[ResourceSlice, Device], bool], v137: bool = False) -> Pool:
    """`buildPool`: the node's slices sorted by name, split into device and counter-set slices, validated
    (duplicate device names, duplicate counter sets, consumption of counters the pool lacks); `every`: all
    slices of the pool's generation when some do not reach the node (their devices still consume counters)."""
    targeting = sorted(targeting, key=lambda s: s.meta.name)
    names = {s.meta.name for s in targeting}
    rest = [s for s in (every or ()) if s.meta.name not in names]
    if rules.partitionable:
        counter_slices = [s for s in targeting if s.shared_counters]
        device_slices = [s for s in targeting if not s.shared_counters]
        if v137:  # v1.37: counter sets of slices not reaching the node count too
            counter_slices += [s for s in rest if s.shared_counters]
            rest = [s for s in rest if not s.shared_counters]
    else:
        counter_slices, device_slices = [], targeting
    devices = tuple(Candidate((driver, name, d.name), d, s, not s.per_device_node_selection or here(s, d))
                    for s in device_slices for d in s.devices)
    pool = Pool(driver, name, tuple(device_slices), devices=devices)
    seen: set[str] = set()
    for candidate in devices:
        if candidate.device.name in seen:
            return _invalid(pool, f"duplicate device name {candidate.device.name}")
        seen.add(candidate.device.name)
    if not rules.partitionable:
        return pool
    counter_sets: dict[str, dict[str, int]] = {}
    for s in counter_slices:
        for counter_set in s.shared_counters:
            if counter_set.name in counter_sets:
                return _invalid(pool, f"duplicate counter set name {counter_set.name}")
            counter_sets[counter_set.name] = dict(counter_set.counters)
    problem = _consumption_problem(counter_sets, device_slices if v137 else targeting)
    others = tuple(Candidate((driver, name, d.name), d, s, False) for s in rest for d in s.devices)
    if problem is None and others:
        problem = _consumption_problem(counter_sets, rest)
    if problem is not None:
        return _invalid(pool, problem)
    return Pool(driver, name, tuple(device_slices), devices=devices, others=others, counter_sets=counter_sets)


def _invalid(pool: Pool, reason: str) -> Pool:
    return Pool(pool.driver, pool.name, invalid=reason)


def _consumption_problem(counter_sets: dict[str, dict[str, int]], slices: Sequence[ResourceSlice]) -> str | None:
    """`validateDeviceCounterConsumption`."""
    for s in slices:
        for device in s.devices:
            for consumption in device.consumes:
                counters = counter_sets.get(consumption.counter_set)
                if counters is None:
                    return f"counter set {consumption.counter_set} not found"
                for counter in consumption.counters:
                    if counter not in counters:
                        return f"counter {counter} not found in counter set {consumption.counter_set}"
    return None


def by_pool(slices: Sequence[ResourceSlice]) -> dict[tuple[str, str], list[ResourceSlice]]:
    """Every slice by (driver, pool name): what `checkSlicesInPool` scans."""
    out: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        out.setdefault((s.driver, s.pool), []).append(s)
    return out


def gather_pools(reaching: list[ResourceSlice], all_slices: Sequence[ResourceSlice] | dict, rules: PoolRules,
                 here: Callable[[ResourceSlice, Device], bool], *, v137: bool = False) -> list[Pool]:
    """`GatherPools` for the slices that reach one node (`reaching`), in the sorted order (module docstring);
    `all_slices`: every slice, or `by_pool` of them."""
    index = all_slices if isinstance(all_slices, dict) else by_pool(all_slices)
    groups: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in reaching:
        groups.setdefault((s.driver, s.pool), []).append(s)
    pools = []
    for (driver, name), group in groups.items():
        group = newest(group)
        first = min(group, key=lambda s: s.meta.name)  # upstream: the informer's first; counts agree when valid
        if rules.minor < 35:
            pools.append(build_pool_v134(driver, name, group, first.slice_count))
            continue
        if len(group) == first.slice_count:
            pools.append(build_pool(driver, name, group, None, rules, here, v137))
            continue
        every = index.get((driver, name), [])
        if any(s.generation > group[0].generation for s in every):
            continue  # checkSlicesInPool: obsolete, the driver is replacing this generation
        every = [s for s in every if s.generation == group[0].generation]
        if len(every) != first.slice_count:
            pools.append(Pool(driver, name, incomplete=True))
            continue
        pools.append(build_pool(driver, name, group, every, rules, here, v137))
    return sorted(pools, key=lambda p: (p.binding, p.driver, p.name))


def build_pool_v134(driver: str, name: str, group: list[ResourceSlice], count: int) -> Pool:
    """v1.34.1's pools (`pools_incubating.go` of v0.34.1): the reachable slices of the newest generation; a pool
    with fewer than `resourceSliceCount` slices is incomplete (its devices still allocatable), one with a
    device name twice invalid (a cycle meeting it fails)."""
    current = sorted(group, key=lambda s: s.meta.name)
    devices = tuple(Candidate((driver, name, d.name), d, s) for s in current for d in s.devices)
    names = [c.device.name for c in devices]
    invalid = ""
    if len(set(names)) != len(names):
        seen: set[str] = set()
        invalid = "duplicate device name " + next(n for n in names if n in seen or seen.add(n))  # type: ignore
    return Pool(driver, name, tuple(current), incomplete=len(current) != count, invalid=invalid, devices=devices)


def reachable(slices: list[ResourceSlice], node_names: list[str], selector_mask: Callable[[dict], np.ndarray],
              rules: PoolRules) -> list[list[int]]:
    """Per node, the indices of the slices GatherPools keeps for it; `selector_mask(node_selector)` gives a
    node selector's bool mask over the nodes (kube-scheduler's nodeaffinity matching). A counter slice that
    v1.36 hands to every node is listed here only for the nodes that reach some slice of its pool; the others
    see the pool through `foreign_pools`."""
    out: list[list[int]] = [[] for _ in node_names]
    index = {name: i for i, name in enumerate(node_names)}
    everywhere: dict[tuple[str, str], list[int]] = {}
    pool_nodes: dict[tuple[str, str], set[int]] = {}
    for k, s in enumerate(slices):
        if not rules.partitionable and (s.per_device_set or s.shared_counters):
            continue
        if s.shared_counters and rules.counter_slices_everywhere:
            everywhere.setdefault((s.driver, s.pool), []).append(k)
        nodes = _normal_reach(s, node_names, index, selector_mask)
        pool_nodes.setdefault((s.driver, s.pool), set()).update(nodes)
        if not (s.shared_counters and rules.counter_slices_everywhere):
            for i in nodes:
                out[i].append(k)
    for pool, indices in everywhere.items():
        for i in sorted(pool_nodes.get(pool, ())):
            out[i].extend(indices)
    return out


def _normal_reach(s: ResourceSlice, node_names: list[str], index: dict[str, int],
                  selector_mask: Callable[[dict], np.ndarray]) -> list[int]:
    if s.node_name is not None:
        return [index[s.node_name]] if s.node_name in index else []
    if s.all_nodes:
        return list(range(len(node_names)))
    if s.node_selector is not None:
        return np.flatnonzero(selector_mask(s.node_selector)).tolist()
    if s.per_device_node_selection:
        hit = np.zeros(len(node_names), dtype=bool)
        for d in s.devices:
            hit |= device_mask(d, node_names, index, selector_mask)
        return np.flatnonzero(hit).tolist()
    return []


def foreign_pools(slices: list[ResourceSlice], per_node: list[list[int]], rules: PoolRules) -> list[tuple[Pool, set]]:
    """v1.36 hands every counter slice to every node: a node that reaches no other slice of that pool still
    gathers the pool (its counter sets, no device of its own). Such a pool matters only when it is invalid or
    incomplete (`allocationMode: All` then fails, a failed allocation says "invalid resource pools were
    encountered"): those pools, each with the nodes that see it only this way."""
    if not (rules.partitionable and rules.counter_slices_everywhere):
        return []
    out = []
    index = by_pool(slices)
    reached: list[set] | None = None
    for (driver, name), group in index.items():
        counter_slices = [s for s in group if s.shared_counters]
        if not counter_slices:
            continue
        trouble = [p for p in gather_pools(counter_slices, index, rules, lambda _s, _d: False)
                   if p.incomplete or p.invalid]
        if not trouble:
            continue
        if reached is None:
            reached = [{(slices[k].driver, slices[k].pool) for k in row} for row in per_node]
        out.append((trouble[0], {i for i, pools in enumerate(reached) if (driver, name) not in pools}))
    return out


def device_mask(d: Device, node_names: list[str], index: dict[str, int],
                selector_mask: Callable[[dict], np.ndarray]) -> np.ndarray:
    """The nodes a device of a per-device-node-selection slice reaches."""
    hit = np.zeros(len(node_names), dtype=bool)
    if d.node_name:
        if d.node_name in index:
            hit[index[d.node_name]] = True
    elif d.all_nodes:
        hit[:] = True
    elif d.node_selector is not None:
        hit |= selector_mask(d.node_selector)
    return hit
