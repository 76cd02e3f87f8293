"""The structured allocator against upstream's own table (allocator_testing.go, v0.34.1), as data.

tests/scheduler/data/dra-allocator-cases.yaml holds every TestAllocator case within kube-scheduler v1.34's
default feature gates, translated by hand; this module builds the objects and checks each case's results
(per claim, devices compared as a set as upstream's ConsistOf does, the node selector, the configs), its
error text, and, where upstream counts them, how many `allocateOne` steps the search took.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubefit.api.cluster import ObjectMeta
from kubefit.api.dra import (
    EXACT_COUNT,
    ClaimSpec,
    CounterConsumption,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceSubRequest,
    DeviceTaint,
    ResourceSlice,
)
from kubefit.k8s.quantity import parse_quantity
from kubefit.scheduler.dra.allocator import (
    AllocatedState,
    AllocationError,
    ClaimToAllocate,
    Features,
    allocate,
    choose_rules,
)
from kubefit.scheduler.dra.pools import PoolRules, gather_pools

CASES = yaml.safe_load((Path(__file__).parent / "data" / "dra-allocator-cases.yaml").read_text())
FEATURES = {"adminAccess": "admin_access", "prioritizedList": "prioritized_list",
            "partitionableDevices": "partitionable_devices", "deviceTaints": "device_taints",
            "deviceBinding": "device_binding", "consumableCapacity": "consumable_capacity"}


def _device(raw: Any) -> Device:
    if isinstance(raw, str):
        return Device(raw)
    attributes = {name: DeviceAttribute(*next(iter(value.items()))) for name, value in
                  (raw.get("attributes") or {}).items()}
    capacity = {name: parse_quantity(value) for name, value in (raw.get("capacity") or {}).items()}
    return Device(raw["name"], attributes, capacity,
                  consumes=(CounterConsumption("counter-set", {"counter": 1}),) if raw.get("counters") else (),
                  binding_conditions=("condition",) if raw.get("bindingConditions") else (),
                  binding_failure_conditions=("failed",) if raw.get("bindingConditions") else (),
                  taints=(DeviceTaint("taint-key", "", "NoSchedule"),) if raw.get("taints") else ())


def _slice(raw: list) -> ResourceSlice:
    name, where, pool, driver, devices, *rest = raw
    count = rest[0] if rest else 1
    generation = rest[1] if len(rest) > 1 else 1
    if isinstance(devices, dict):
        devices = [f"device-{i}" for i in range(devices["count"])]
    placement: dict[str, Any] = {}
    if where == "all":
        placement["all_nodes"] = True
    elif where == "perDevice":
        placement["per_device_node_selection"] = placement["per_device_set"] = True
    elif isinstance(where, dict):
        (key, value), = where.items()
        kind = "matchFields" if key == "field" else "matchExpressions"
        placement["node_selector"] = {"nodeSelectorTerms": [{kind: [{
            "key": "metadata.name" if key == "field" else key, "operator": "In", "values": [value]}]}]}
    else:
        placement["node_name"] = where
    return ResourceSlice(ObjectMeta(name), driver, pool, generation=generation, slice_count=count,
                         devices=tuple(_device(d) for d in devices), **placement)


def _config(driver: str, attribute: str) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": {attribute: f"{attribute}Value"}}}


def _class(raw: Any) -> DeviceClass:
    if isinstance(raw, list):
        raw = {"name": raw[0], "driver": raw[1]}
    selector = raw.get("selector", f'device.driver == "{raw["driver"]}"')
    config = (_config(raw["driver"], raw["config"]),) if raw.get("config") else ()
    return DeviceClass(ObjectMeta(raw["name"]), selectors=(selector,), config=config)


def _sub(raw: dict[str, Any], exact: bool) -> DeviceSubRequest:
    mode = raw.get("mode", EXACT_COUNT)
    count = raw.get("count", 1 if mode == EXACT_COUNT else 0)
    return DeviceSubRequest(raw["name"], raw["class"], selectors=tuple(raw.get("selectors") or ()),
                            allocation_mode=mode, count=count,
                            admin_access=raw.get("admin") if exact else None)


def _request(raw: dict[str, Any]) -> DeviceRequest:
    if "firstAvailable" in raw:
        return DeviceRequest(raw["name"], first_available=tuple(_sub(s, False) for s in raw["firstAvailable"]))
    return DeviceRequest(raw["name"], exactly=_sub(raw, True))


def _claim(raw: dict[str, Any]) -> ClaimToAllocate:
    constraints = tuple(DeviceConstraint(tuple(c.get("requests") or ()), c.get("matchAttribute"))
                        for c in raw.get("constraints") or ())
    config = tuple({**({"requests": c["requests"]} if c.get("requests") else {}), **_config(c["driver"], c["attribute"])}
                   for c in raw.get("config") or ())
    return ClaimToAllocate(raw["name"], ClaimSpec(tuple(_request(r) for r in raw["requests"]), constraints, config))


def _node_selector(raw: Any) -> Any:
    if isinstance(raw, str) and raw.startswith("local "):
        return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                        "values": [raw.split()[1]]}]}]}
    return raw


def _canonical_selector(selector: Any) -> Any:
    """A node selector compared as upstream's matchers do: terms, requirements and values in any order."""
    if selector is None:
        return None
    terms = []
    for term in selector["nodeSelectorTerms"]:
        terms.append(tuple(sorted((part, r["key"], r["operator"], tuple(sorted(r.get("values") or ())))
                                  for part in ("matchExpressions", "matchFields") for r in term.get(part) or ())))
    return sorted(terms)


def _expected_devices(raw: Any) -> list[tuple]:
    ranges = raw if isinstance(raw, list) and raw and isinstance(raw[0], dict) else [raw] if isinstance(raw, dict) \
        else None
    if ranges is not None:
        return [(r["request"], r["driver"], r["pool"], f"device-{i}", None)
                for r in ranges for i in range(r["first"], r["first"] + r["count"])]
    return [(d[0], d[1], d[2], d[3], True if len(d) > 4 and d[4] else None) for d in raw]


def _pools(case: dict[str, Any]):
    if "node" not in case:
        return []
    node = case["node"]
    labels = {"region": case.get("region", "region-1"), "planet": "earth"}
    reached = []
    for s in (_slice(s) for s in case.get("slices") or ()):
        if s.per_device_node_selection:
            continue
        if s.node_name is not None:
            if s.node_name == node:
                reached.append(s)
        elif s.all_nodes:
            reached.append(s)
        elif s.node_selector is not None:
            req = s.node_selector["nodeSelectorTerms"][0]
            (kind, [r]), = req.items()
            value = node if kind == "matchFields" else labels.get(r["key"])
            if value in r["values"]:
                reached.append(s)
    return gather_pools(reached, reached, PoolRules(34), lambda _s, _d: True)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_upstream_allocator_case(case):
    features = Features(**{FEATURES[k]: v for k, v in {"adminAccess": False, "prioritizedList": False,
                                                          **(case.get("features") or {})}.items()})
    classes = {c.meta.name: c for c in (_class(c) for c in case.get("classes") or ())}
    claims = [_claim(c) for c in case.get("claims") or ()]
    allocated = AllocatedState(dedicated={tuple(d): 1 for d in case.get("allocated") or ()})
    rules = choose_rules(34, features)
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(AllocationError) as err:
            allocate(claims, case.get("node", ""), _pools(case), allocated, classes, features, rules)
        assert expect["error"] in str(err.value)
        return
    from kubefit.scheduler.dra import allocator

    steps: list[int] = []
    original = allocator._Search.__init__

    def counting(self, *args, **kwargs):
        original(self, *args, **kwargs)
        steps.append(self)

    allocator._Search.__init__ = counting
    try:
        got = allocate(claims, case.get("node", ""), _pools(case), allocated, classes, features, rules)
    finally:
        allocator._Search.__init__ = original
    if expect["results"] == "none":
        assert got is None or got.results == []
        return
    assert got is not None
    assert len(got.results) == len(expect["results"])
    for result, want in zip(got.results, expect["results"], strict=True):
        devices = sorted((d.request, d.driver, d.pool, d.device, d.admin_access) for d in result.results)
        assert devices == sorted(_expected_devices(want["devices"]))
        assert _canonical_selector(result.node_selector) == _canonical_selector(_node_selector(want["selector"]))
        assert list(result.config) == list(want.get("config") or [])
    if "steps" in expect:
        assert steps[0].steps == expect["steps"]


def test_case_accounting():
    """Every TestAllocator case of v0.34.1 whose gates v1.34 has on (or checks off) is here: 90 of the 146."""
    assert len(CASES) == 90
    assert len({c["name"] for c in CASES}) == len(CASES)
