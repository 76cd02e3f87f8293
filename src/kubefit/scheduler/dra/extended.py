"""Extended resources backed by devices (DRAExtendedResource, KEP-5004: beta and on in v1.36, GA in v1.37).

A pod asking for `example.com/gpu: 1` where a DeviceClass says `extendedResourceName: example.com/gpu`, or for
`deviceclass.resource.kubernetes.io/<class>: 1` (every class's implicit name), gets it from a device plugin on a
node whose `status.allocatable` has it, and from DRA on a node where it is 0 or absent: kube-scheduler makes a
claim for the pod (`extendeddynamicresources.go`), allocates its devices like any claim's and writes it at
PreBind, owned by the pod and annotated `resource.kubernetes.io/extended-resource-claim: "true"`.

* `ClassResolver` is `extendedresourcecache.ExtendedResourceCache` (`GetDeviceClass`): classes are added in
  name order (an informer's first list); two classes naming one resource: the newer wins, on equal creation
  times the lower name; a class losing that contest loses its implicit name too (upstream returns before
  adding it).
* `claim_requests` is `createRequestsAndMappings`: per resource name (sorted), one `ExactCount` request of the
  class per long-lived container (`container-<i>-request-<j>`, i over init containers then containers, j the
  resource's index among the container's sorted request names), and for the init containers that run before
  them the largest of their requests not covered by the long-lived requests after them; requests sorted by name.
* `node_requests` is `filterExtendedResources` for one node.
* `device_totals` is `calculateDRAResourceTotals` (NodeResourcesFit and BalancedAllocation scoring): how many
  devices of the class a node reaches and how many are allocated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kubefit.api.core import Container, Pod
from kubefit.api.dra import (
    DEVICE_CLASS_PREFIX,
    EXACT_COUNT,
    ClaimSpec,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceSlice,
)
from kubefit.k8s.quantity import NANO
from kubefit.k8s.resourcenames import is_extended, is_scalar

CANNOT_FIT = "cannot fit resource"
STALE_CLAIM = "cannot schedule extended resource claim"


def is_dra_extended_name(name: str) -> bool:
    """`IsDRAExtendedResourceName`: an extended resource name, or a class's implicit one."""
    return is_extended(name) or name.startswith(DEVICE_CLASS_PREFIX)


@dataclass
class ClassResolver:
    """`ExtendedResourceCache.GetDeviceClass`: the class backing an extended resource name."""

    by_name: dict[str, DeviceClass]

    @classmethod
    def of(cls, classes: Iterable[DeviceClass]) -> ClassResolver:
        mapping: dict[str, DeviceClass] = {}
        for device_class in sorted(classes, key=lambda c: c.meta.name):
            explicit = device_class.extended_resource_name
            holder = mapping.get(explicit) if explicit else None
            if holder is not None:
                mine, theirs = device_class.creation_timestamp, holder.creation_timestamp
                if mine < theirs or (mine == theirs and device_class.meta.name >= holder.meta.name):
                    continue  # the current holder is newer (or ties with a lower name): nothing is added
            if explicit:
                mapping[explicit] = device_class
            mapping[DEVICE_CLASS_PREFIX + device_class.meta.name] = device_class
        return cls(mapping)

    def get(self, name: str) -> DeviceClass | None:
        return self.by_name.get(name)

    def backs_any(self, names: Iterable[str]) -> bool:
        return any(self.by_name.get(n) is not None for n in names)


def pod_extended_requests(pod_requests: Mapping[str, int], resolver: ClassResolver) -> dict[str, int] | None:
    """PreFilter (`hasDeviceClassMappedExtendedResource`): the pod's scalar requests (whole units, as
    `framework.NewResource` keeps them) when one non-zero DRA extended resource name has a class; else None."""
    if not any(q != 0 and is_dra_extended_name(n) and resolver.get(n) is not None for n, q in pod_requests.items()):
        return None
    return {n: q for n, q in pod_requests.items() if is_scalar(n)}


def node_requests(scalars: Mapping[str, int], allocatable: Mapping[str, int], resolver: ClassResolver
                  ) -> dict[str, int] | str:
    """`filterExtendedResources` for a node: the resources DRA must provide there (the class backs them and the
    node's allocatable has 0), or "cannot fit resource" for one neither the node nor a class provides."""
    out: dict[str, int] = {}
    for name, quantity in scalars.items():
        if not is_dra_extended_name(name) or quantity == 0:
            continue
        present = name in allocatable
        if resolver.get(name) is not None and allocatable.get(name, 0) == 0:
            out[name] = quantity
        elif not present:
            return CANNOT_FIT
    return out


def _container_request(index: int, container: Container, name: str, class_name: str,
                       reusable: Sequence[DeviceRequest | None]) -> DeviceRequest | None:
    """`createResourceRequestAndMappings`: the request one container adds for `name` (None: it needs none or
    the long-lived requests after it cover it)."""
    quantity = container.requests.get(name)
    if quantity is None or quantity % NANO != 0 or quantity == 0:
        return None  # absent, not an integer (AsInt64 fails), or zero
    wanted = quantity // NANO
    covered = 0
    for request in reusable:
        if request is not None:
            covered += request.exactly.count
            if covered >= wanted:
                return None
    keys = sorted(container.requests)
    position = keys.index(name)
    request_name = f"container-{index}-request-{position}"
    return DeviceRequest(request_name, exactly=DeviceSubRequest(request_name, class_name, allocation_mode=EXACT_COUNT,
                                                                count=wanted - covered))


def claim_requests(pod: Pod, resources: Mapping[str, int], resolver: ClassResolver) -> tuple[DeviceRequest, ...]:
    """`createRequestsAndMappings`: the requests of the claim the scheduler makes for the pod on a node."""
    containers = list(pod.init_containers) + list(pod.containers)
    inits = len(pod.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= inits or c.restart_policy == "Always"]
    short_lived = [i for i, c in enumerate(containers) if i < inits and c.restart_policy != "Always"]
    requests: list[DeviceRequest] = []
    for name in sorted(resources):
        device_class = resolver.get(name)
        if device_class is None:
            continue
        lived: list[DeviceRequest | None] = [None] * len(containers)
        for i in long_lived:
            lived[i] = _container_request(i, containers[i], name, device_class.meta.name, ())
        largest = None
        for i in short_lived:
            request = _container_request(i, containers[i], name, device_class.meta.name, lived[i:])
            if request is not None and (largest is None or largest.exactly.count < request.exactly.count):
                largest = request
        if largest is not None:
            requests.append(largest)
        requests += [r for r in lived if r is not None]
    return tuple(sorted(requests, key=lambda r: r.name))


def extended_claim_spec(pod: Pod, resources: Mapping[str, int], resolver: ClassResolver) -> ClaimSpec:
    """The spec of the node's variant of the scheduler's claim (no requests when DRA provides nothing there)."""
    return ClaimSpec(claim_requests(pod, resources, resolver))


def device_totals(node: int, node_name: str, device_class: DeviceClass, slices: Sequence[ResourceSlice],
                  selector_match: Callable[[dict], bool], matches: Callable[[str, object], bool]
                  ) -> list[tuple[str, str, str]]:
    """`calculateDRAResourceTotals`: the devices of the class the node reaches (every slice, any generation,
    per-device node selection honoured), whose allocated ones upstream counts with `IsDeviceAllocated`."""
    out = []
    for s in slices:
        if s.per_device_node_selection:
            devices = [d for d in s.devices
                       if d.all_nodes or (d.node_name and d.node_name == node_name)
                       or (d.node_selector is not None and not d.node_name and selector_match(d.node_selector))]
        else:
            if not s.all_nodes and s.node_name != node_name and s.node_selector is not None:
                if not selector_match(s.node_selector):
                    continue
            elif not s.all_nodes and s.node_name and s.node_name != node_name:
                continue
            devices = list(s.devices)
        out += [(s.driver, s.pool, d.name) for d in devices if not device_class.selectors or matches(s.driver, d)]
    return out
