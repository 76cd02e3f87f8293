"""What people look at: each node's pools device by device, allocated or free, as the run leaves them.

Read from the run's `DraState` (never changed here): per pool the node reaches (driver, pool), each device with
the claims whose allocation holds it and the pods those claims are reserved for, and its capacity; the result
is `simulate -o json`'s `devices[node].pools` (what the table, the HTML report and `kubefit serve` draw). Devices
held with admin access are not allocated (`foreachAllocatedDevice` skips them): their claims are listed with
`adminAccess`. Quantities are written as Kubernetes writes them (`40Gi`, `7`, `1500m`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubefit.api.dra import Device, DeviceID
from kubefit.k8s import goquantity as gq


def quantity_text(nanos: int) -> str:
    """A device quantity (nano-units) as Kubernetes prints it: the shorter of its binary and decimal canonical
    forms (`40Gi`, not `42949672960`; `10G`, not `9765625Ki`)."""
    binary = gq.canonical(gq.GoQuantity(gq.BINARY_SI, value=nanos, scale=-9))
    decimal = gq.canonical(gq.GoQuantity(gq.DECIMAL_SI, value=nanos, scale=-9))
    return binary if len(binary) < len(decimal) else decimal


def pool_devices(pool: Any) -> Iterator[tuple[DeviceID, Device]]:
    """The pool's devices, in the allocator's order."""
    for device_id, device, _slice in pool.devices:
        yield device_id, device


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
    view: dict[str, Any] = {"name": device_id[2], "allocated": device_id in dra.in_use}
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
        view["capacity"] = {name: quantity_text(v) for name, v in sorted(device.capacity.items())}
    return view


def node_pools(dra: Any, node: int, held: dict[DeviceID, list[tuple[str, Any]]]) -> list[dict[str, Any]]:
    """The pools node `node` reaches, each with its devices (`device_view`) and how many are allocated."""
    out = []
    for pool in dra.catalog.node_pools[node]:
        devices = [device_view(device_id, device, held.get(device_id, []), dra)
                   for device_id, device in pool_devices(pool)]
        if not devices:
            continue
        out.append({"driver": pool.driver, "pool": pool.name, "devices": devices,
                    "allocated": sum(1 for d in devices if d["allocated"])})
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
