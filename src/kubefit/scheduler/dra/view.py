"""What people look at: each node's pools device by device, allocated or free, as the run leaves them.

Read from the run's `DraState` (never changed here): per pool the node reaches (driver, pool), each device with
the claims whose allocation holds it and the pods those claims are reserved for, and its capacity; the result
is `simulate -o json`'s `devices[node].pools` (what the table, the HTML report and `kubefit serve` draw). Devices
held with admin access are not allocated (`foreachAllocatedDevice` skips them): their claims are listed with
`adminAccess`. Quantities are written as Kubernetes writes them (`40Gi`, `7`, `1500m`).

Where the version's allocator reads them (DRAPartitionableDevices, DRAConsumableCapacity): a pool's shared
counters per counter set, each counter's capacity, what its allocated devices consume and what is free (as the
allocator's `availableCounters` computes it: the sets less the consumption of every allocated device of the
pool, those of slices not reaching the node included) — a MIG GPU's counter set and the slices carved from it —
what each device consumes of them, and, for a device several claims may share, its shares and the capacity they
consume.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from kubefit.api.dra import Device, DeviceID
from kubefit.k8s import goquantity as gq


@lru_cache(maxsize=4096)
def quantity_text(nanos: int) -> str:
    """A device quantity (nano-units) as Kubernetes prints it: the shorter of its binary and decimal canonical
    forms (`40Gi`, not `42949672960`; `10G`, not `9765625Ki`). Memoized: a cluster's devices repeat a few
    amounts (64,000 devices of a GPU cluster print a handful of distinct capacities)."""
    binary = gq.canonical(gq.GoQuantity(gq.BINARY_SI, value=nanos, scale=-9))
    decimal = gq.canonical(gq.GoQuantity(gq.DECIMAL_SI, value=nanos, scale=-9))
    return binary if len(binary) < len(decimal) else decimal


def pool_devices(pool: Any, others: bool = False) -> Iterator[tuple[DeviceID, Device]]:
    """The pool's devices, in the allocator's order (`others`: with the devices of its slices that do not reach the
    node, which consume its counters too)."""
    for entry in (*pool.devices, *(getattr(pool, "others", ()) if others else ())):
        if isinstance(entry, tuple):
            yield entry[0], entry[1]
        else:
            yield entry.device_id, entry.device


def allocated(dra: Any, device_id: DeviceID) -> bool:
    """Whether the allocator sees the device as taken: held by a claim, or shared by some (DRAConsumableCapacity)."""
    return device_id in dra.in_use or device_id in getattr(dra, "shares", {}) or device_id in getattr(dra, "capacity", {})


def amounts(values: dict[str, int]) -> dict[str, str]:
    return {name: quantity_text(v) for name, v in sorted(values.items())}


def pool_counters(dra: Any, pool: Any) -> dict[str, dict[str, dict[str, str]]]:
    """Per counter set of the pool (`sharedCounters`), per counter: its capacity, what the allocated devices
    consume, what is free (never below zero)."""
    sets = getattr(pool, "counter_sets", None) or {}
    if not sets:
        return {}
    consumed: dict[str, dict[str, int]] = {name: dict.fromkeys(counters, 0) for name, counters in sets.items()}
    for device_id, device in pool_devices(pool, others=True):
        if not allocated(dra, device_id):
            continue
        for consumption in getattr(device, "consumes", ()):
            used = consumed.get(consumption.counter_set)
            if used is not None:
                for name, amount in consumption.counters.items():
                    if name in used:
                        used[name] += amount
    return {name: {counter: {"capacity": quantity_text(total), "consumed": quantity_text(consumed[name][counter]),
                             "free": quantity_text(max(total - consumed[name][counter], 0))}
                   for counter, total in sorted(counters.items())}
            for name, counters in sorted(sets.items())}


def holders(dra: Any) -> dict[DeviceID, list[tuple[str, Any]]]:
    """Per device, the claims (`namespace/name`, claim) whose allocation names it, in claim order."""
    out: dict[DeviceID, list[tuple[str, Any]]] = {}
    for (namespace, name), claim in dra.claims.items():
        if claim.allocation is not None:
            for result in claim.allocation.results:
                out.setdefault(result.device_id, []).append((f"{namespace}/{name}", result))
    return out


def device_view(device_id: DeviceID, device: Device, held: list[tuple[str, Any]], dra: Any) -> dict[str, Any]:
    """One device: allocated (some claim holds it without admin access), the claims and the pods they serve."""
    view: dict[str, Any] = {"name": device_id[2], "allocated": allocated(dra, device_id)}
    if held:
        view["claims"] = [key for key, _r in held]
        pods = []
        for key, _r in held:
            claim = dra.claims.get(tuple(key.split("/", 1)))
            pods += [f"{claim.meta.namespace}/{r.name}" for r in (claim.reserved_for if claim else ())
                     if r.resource == "pods"]
        if pods:
            view["pods"] = sorted(set(pods))
        if any(r.admin_access for _k, r in held):
            view["adminAccess"] = [key for key, r in held if r.admin_access]
    if device.capacity:
        view["capacity"] = amounts(device.capacity)
    consumes = getattr(device, "consumes", ())
    if consumes:
        view["consumesCounters"] = {c.counter_set: amounts(c.counters) for c in consumes}
    if getattr(device, "allow_multiple", None):
        view["shared"] = True
        shares = getattr(dra, "shares", {}).get(device_id) or {}
        if shares:
            view["shares"] = len(shares)
        used = getattr(dra, "capacity", {}).get(device_id)
        if used:
            view["consumedCapacity"] = amounts(used)
    return view


def node_pools(dra: Any, node: int, held: dict[DeviceID, list[tuple[str, Any]]]) -> list[dict[str, Any]]:
    """The pools node `node` reaches, each with its devices (`device_view`) and how many are allocated."""
    out = []
    for pool in dra.catalog.node_pools[node]:
        devices = [device_view(device_id, device, held.get(device_id, []), dra)
                   for device_id, device in pool_devices(pool)]
        if not devices:
            continue
        view = {"driver": pool.driver, "pool": pool.name, "devices": devices,
                "allocated": sum(1 for d in devices if d["allocated"])}
        counters = pool_counters(dra, pool)
        if counters:
            view["counters"] = counters
        out.append(view)
    return out


def pools_by_node(dra: Any, node_names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """`node_pools` of every node that reaches devices."""
    held = holders(dra)
    out = {}
    for n, name in enumerate(node_names):
        pools = node_pools(dra, n, held)
        if pools:
            out[name] = pools
    return out
