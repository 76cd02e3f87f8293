"""What a scenario's devices use that kubefit does not evaluate exactly as the version would: one note each.

kubefit's allocator is each version's (`kubefit.scheduler.dra.allocator`): partitionable devices, consumable
capacity, device taints, binding conditions and extended resources backed by devices are evaluated as v1.36.3
evaluates them, with v1.37's fixes in v1.37. What is left:

* v1.34/v1.35 with DRAPartitionableDevices, DRAConsumableCapacity or DRADeviceTaints turned on: those alpha
  allocators (counters kept per slice, no rollback of a rejected candidate) are evaluated with v1.36.3's code;
* binding conditions: kube-scheduler's PreBind waits up to `bindingTimeout` for a device's conditions; a
  simulation assumes they become true in time (and that none of `bindingFailureConditions` does);
* a NoExecute device taint evicts the pods using the device (the device taint eviction controller), which a
  simulation does not do: it only keeps new allocations away;
* DeviceTaintRules (DRADeviceTaintRules, off by default), list-type attributes in CEL beyond equality and
  membership (DRAListTypeAttributes), node-allocatable resources (DRANodeAllocatableResources) and claims of
  PodGroups (DRAWorkloadResourceClaims) are not evaluated.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubefit.api.dra import NO_EXECUTE, DeviceClass, ResourceSlice
from kubefit.scheduler.dra.pools import newest

_ALPHA_BEFORE_136 = (
    ("DRAPartitionableDevices", "consumes shared counters or selects its nodes per device",
     lambda s, d: bool(d.consumes) or s.per_device_node_selection or bool(s.shared_counters)),
    ("DRAConsumableCapacity", "allows multiple allocations", lambda s, d: bool(d.allow_multiple)),
    ("DRADeviceTaints", "has taints", lambda s, d: bool(d.taints)),
)
_NOT_EVALUATED = ("DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAWorkloadResourceClaims",
                  "DRADeviceTaintRules")


def unevaluated_device_features(slices: Iterable[ResourceSlice], version, classes: Iterable[DeviceClass] = ()
                                ) -> list[str]:
    """One note per device feature the scenario uses that `version` evaluates and kubefit does not exactly."""
    if version is None:
        return []
    slices = list(slices)
    notes = []
    if version.minor < 36:
        for gate, uses, used in _ALPHA_BEFORE_136:
            found = next(((s, d) for s in slices for d in s.devices if used(s, d)), None)
            if version.gate(gate) and found is not None:
                notes.append(f"ResourceSlice/{found[0].meta.name}: device {found[1].name} {uses} ({gate}, turned on "
                             f"in kube-scheduler {version.patch}): kubefit evaluates it with v1.36.3's allocator, "
                             f"not {version.patch}'s alpha one, so this answer may differ")
    binding = next(((s, d) for s in slices for d in s.devices if d.binding_conditions), None)
    if binding is not None and version.gate("DRADeviceBindingConditions"):
        notes.append(f"ResourceSlice/{binding[0].meta.name}: device {binding[1].name} has binding conditions "
                     f"({', '.join(binding[1].binding_conditions)}): kube-scheduler waits at PreBind until they hold "
                     f"(up to DynamicResourcesArgs.bindingTimeout); kubefit assumes they hold in time and none of "
                     f"its bindingFailureConditions does")
    evicting = next(((s, d) for s in slices for d in s.devices if any(t.effect == NO_EXECUTE for t in d.taints)),
                    None)
    if evicting is not None and version.gate("DRADeviceTaints"):
        notes.append(f"ResourceSlice/{evicting[0].meta.name}: device {evicting[1].name} has a NoExecute taint: "
                     f"new allocations avoid it as kube-scheduler does, but the pods already using it are not "
                     f"evicted (the device taint eviction controller is not simulated)")
    notes += pool_problems(slices, version)
    for gate in _NOT_EVALUATED if slices else ():
        if version.gate(gate):
            notes.append(f"{gate} is on in kube-scheduler {version.patch}: kubefit does not evaluate it "
                         f"(its objects and fields are ignored)")
    return notes



def pool_problems(slices: list[ResourceSlice], version) -> list[str]:
    """What makes a pool unusable for the allocator (`buildPool`: a device name twice, with
    DRAPartitionableDevices a counter set twice or a device consuming a counter set or counter the pool does
    not declare), and slices of one pool's generation that disagree on their count: one note each, naming the
    pool. kube-scheduler does not allocate from such a pool (v1.35+: a node where nothing else fits says
    "invalid resource pools were encountered"; v1.34: the cycle fails)."""
    partitionable = version.gate("DRAPartitionableDevices")
    groups: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        groups.setdefault((s.driver, s.pool), []).append(s)
    notes = []
    for (driver, pool), group in sorted(groups.items()):
        current = newest(group)
        counts = sorted({s.slice_count for s in current})
        if len(counts) > 1:
            notes.append(f"ResourceSlices of pool {driver}/{pool} disagree on spec.pool.resourceSliceCount "
                         f"({', '.join(map(str, counts))}): kube-scheduler reads the count of whichever slice its "
                         f"informer lists first, kubefit the first by name")
        problem = _pool_problem(current, partitionable)
        if problem is not None:
            notes.append(f"ResourceSlices of pool {driver}/{pool}: {problem}: kube-scheduler does not allocate "
                         f"from the pool (\"invalid resource pools were encountered\" where nothing else fits)")
    return notes


def _pool_problem(current: list[ResourceSlice], partitionable: bool) -> str | None:
    devices = [d for s in current if not (partitionable and s.shared_counters) for d in s.devices]
    seen: set[str] = set()
    for d in devices:
        if d.name in seen:
            return f"duplicate device name {d.name}"
        seen.add(d.name)
    if not partitionable:
        return None
    counter_sets: dict[str, dict[str, int]] = {}
    for s in current:
        for counter_set in s.shared_counters:
            if counter_set.name in counter_sets:
                return f"duplicate counter set name {counter_set.name}"
            counter_sets[counter_set.name] = counter_set.counters
    for d in devices:
        for consumption in d.consumes:
            counters = counter_sets.get(consumption.counter_set)
            if counters is None:
                return f"counter set {consumption.counter_set} not found (device {d.name})"
            missing = next((c for c in consumption.counters if c not in counters), None)
            if missing is not None:
                return f"counter {missing} not found in counter set {consumption.counter_set} (device {d.name})"
    return None
