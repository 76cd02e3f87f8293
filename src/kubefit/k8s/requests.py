"""A pod's effective request (`component-helpers/resource.PodRequests`) and its scheduler views.

Three views of one pod (SPEC-kube-scheduler §2, §4):
- `requests`: what Filter, BalancedAllocation and node accounting (`Requested`) use — containers,
  init containers and sidecars, pod-level resources honoured, overhead added;
- `nonzero`: the node's `NonZeroRequested` cpu/memory (100m / 200Mi for a container lacking the key);
- `score_requests`: what NodeResourcesFit scoring uses for the incoming pod — the non-zero variant
  with pod-level resources ignored (the v1.34.1 quirk).
A pod bound to a node is accounted with its container statuses' resources max-ed in (in-place resize,
`use_status_resources`). All values are scheduler integers: millicores for cpu, whole units otherwise.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubefit.k8s.quantity import NANO, scheduler_units
from kubefit.k8s.resourcenames import CPU, MEMORY, is_hugepages

if TYPE_CHECKING:
    from kubefit.api.core import Container, ContainerStatus, Pod, ResourceList

DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest
NON_ZERO_DEFAULTS: ResourceList = {CPU: DEFAULT_MILLI_CPU_REQUEST * 10**6, MEMORY: DEFAULT_MEMORY_REQUEST * NANO}


def _add(into: ResourceList, other: ResourceList) -> None:
    for name, q in other.items():
        into[name] = into.get(name, 0) + q


def _max_into(into: ResourceList, other: ResourceList) -> None:
    """`maxResourceList`: keys only in `other` are copied, shared keys keep the larger value."""
    for name, q in other.items():
        if name not in into or q > into[name]:
            into[name] = q


def _with_defaults(requests: ResourceList, non_missing: ResourceList | None) -> ResourceList:
    """`applyNonMissing`: fill keys the container lacks (a present key, even 0, is kept)."""
    if not non_missing:
        return requests
    out = dict(requests)
    for name, q in non_missing.items():
        out.setdefault(name, q)
    return out


def is_sidecar(container: Container) -> bool:
    return container.restart_policy == "Always"


def is_pod_resize_infeasible(pod: Pod) -> bool:
    """`IsPodResizeInfeasible`: the first `PodResizePending` condition has reason `Infeasible`."""
    for condition in pod.conditions:
        if condition.type == "PodResizePending":
            return condition.reason == "Infeasible"
    return False


def _max_of(*lists: ResourceList | None) -> ResourceList:
    """`max(a, b...)`: per name over the union of keys, the larger quantity."""
    out: ResourceList = {}
    for rl in lists:
        _max_into(out, rl or {})
    return out


def _status_requests(pod: Pod, container: Container, status: ContainerStatus | None) -> ResourceList:
    """A container's requests for node accounting (`determineContainerReqs` when its status has `resources`)."""
    if status is None or status.requests is None:
        return container.requests
    if is_pod_resize_infeasible(pod):
        return _max_of(status.requests, status.allocated_resources)
    return _max_of(container.requests, status.requests, status.allocated_resources)


def aggregate_container_requests(pod: Pod, non_missing: ResourceList | None = None, *,
                                 use_status_resources: bool = False) -> ResourceList:
    """`AggregateContainerRequests`: Σ containers + sidecars, then max with the init-container peaks.

    `use_status_resources` (`opts.UseStatusResources`, on for pods bound to a node under
    InPlacePodVerticalScaling): a container or sidecar whose status carries `resources` counts the
    max of its spec, status and allocated requests (spec ignored while a resize is infeasible).
    """
    statuses: dict[str, ContainerStatus] = {}
    if use_status_resources:
        statuses = {cs.name: cs for cs in (*pod.container_statuses, *pod.init_container_statuses)}
    reqs: ResourceList = {}
    for c in pod.containers:
        _add(reqs, _with_defaults(_status_requests(pod, c, statuses.get(c.name)), non_missing))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.init_containers:
        if is_sidecar(c):
            own = _with_defaults(_status_requests(pod, c, statuses.get(c.name)), non_missing)
            _add(reqs, own)
            _add(sidecars, own)
            candidate = sidecars
        else:
            candidate = dict(_with_defaults(c.requests, non_missing))
            _add(candidate, sidecars)
        _max_into(init_peak, candidate)
    _max_into(reqs, init_peak)
    return reqs


def resize_footprint_may_differ(pod: Pod) -> bool:
    """Whether v1.37's resize footprint (kubernetes#140047: the max of the sums of desired, allocated and
    actuated requests, each falling back to the one before) can differ from the sum of each container's max
    kubefit counts: two or more containers or sidecars whose statuses carry `resources`, and either an
    Infeasible resize or those two sums differing."""
    statuses = {cs.name: cs for cs in (*pod.container_statuses, *pod.init_container_statuses)}
    counted = [*pod.containers, *(c for c in pod.init_containers if is_sidecar(c))]
    states = []
    for c in counted:
        status = statuses.get(c.name)
        if status is None or status.requests is None:
            states.append((c.requests, c.requests, c.requests))
        else:
            allocated = status.allocated_resources or c.requests
            states.append((c.requests, allocated, status.requests))
    if sum(1 for c in counted if (s := statuses.get(c.name)) is not None and s.requests is not None) < 2:
        return False
    if is_pod_resize_infeasible(pod):
        return True
    sum_of_max: ResourceList = {}
    sums: list[ResourceList] = [{}, {}, {}]
    for state in states:
        _add(sum_of_max, _max_of(*state))
        for total, part in zip(sums, state, strict=True):
            _add(total, part)
    return sum_of_max != _max_of(*sums)


def is_supported_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or is_hugepages(name)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """`IsPodLevelRequestsSet`: spec.resources.requests names cpu, memory or hugepages."""
    return bool(pod.pod_requests) and any(is_supported_pod_level_resource(n) for n in pod.pod_requests or {})


def pod_requests_nanos(pod: Pod, *, non_missing: ResourceList | None = None, pod_level: bool = True,
                       use_status_resources: bool = False) -> ResourceList:
    """`PodRequests(pod, opts)` as exact quantities (nano-units)."""
    reqs = aggregate_container_requests(pod, non_missing, use_status_resources=use_status_resources)
    if pod_level and is_pod_level_requests_set(pod):
        for name, q in (pod.pod_requests or {}).items():
            if is_supported_pod_level_resource(name):
                reqs[name] = q
    _add(reqs, pod.overhead)
    return reqs


def to_units(reqs: ResourceList) -> dict[str, int]:
    """Exact quantities → scheduler integers (MilliValue for cpu, Value otherwise)."""
    return {name: scheduler_units(name, q) for name, q in reqs.items()}


@dataclass(frozen=True)
class PodDemand:
    """Everything the resource plugins need to know about one pod, in scheduler integers."""

    requests: dict[str, int]  # Filter, BalancedAllocation, node Requested
    nonzero_cpu: int  # node NonZeroRequested.MilliCPU contribution
    nonzero_memory: int  # node NonZeroRequested.Memory contribution
    score_requests: dict[str, int]  # NodeResourcesFit scoring, incoming pod side


def pod_demand(pod: Pod, *, use_status_resources: bool = False) -> PodDemand:
    """Compute the three request views of `pod` (SPEC §2 and §4).

    `use_status_resources=True` is for a pod bound to a node (`NodeInfo` accounting, InPlacePodVerticalScaling
    on as in v1.34): `requests` and the non-zero view take the container statuses' resources into account.
    The pod being scheduled leaves it off (Filter and scoring read its spec only), and so does Karmada.
    """
    plain = pod_requests_nanos(pod, use_status_resources=use_status_resources)
    if is_pod_level_requests_set(pod):
        non_missing = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in plain}
    else:
        non_missing = NON_ZERO_DEFAULTS
    nonzero = (pod_requests_nanos(pod, non_missing=non_missing, use_status_resources=use_status_resources)
               if non_missing else plain)
    score = pod_requests_nanos(pod, non_missing=NON_ZERO_DEFAULTS, pod_level=False)
    return PodDemand(
        requests=to_units(plain),
        nonzero_cpu=scheduler_units(CPU, nonzero.get(CPU, 0)),
        nonzero_memory=scheduler_units(MEMORY, nonzero.get(MEMORY, 0)),
        score_requests=to_units(score),
    )


# What `pod_demand` reads of a pod (its spec's requests, and for a bound pod its statuses' resources).
DEMAND_INPUTS = ("containers", "init_containers", "overhead", "pod_requests", "container_statuses",
                 "init_container_statuses", "conditions")


_demand_inputs = operator.attrgetter(*DEMAND_INPUTS)  # a pod's DEMAND_INPUTS as one tuple (in C)


class DemandMemo:
    """`pod_demand` once per distinct set of request inputs, recognised by identity: a workload's pods, decoded
    once, share them, and so do the replacements a what-if creates for them. The inputs are kept with their
    demand, so an identity is never mistaken for another object's after the first is freed."""

    def __init__(self, *, use_status_resources: bool) -> None:
        self.use_status_resources = use_status_resources
        self.known: dict[tuple[int, ...], tuple[tuple, PodDemand]] = {}

    def __call__(self, pod: Pod) -> PodDemand:
        inputs = _demand_inputs(pod)
        key = tuple(map(id, inputs))
        hit = self.known.get(key)
        if hit is None or not all(map(operator.is_, hit[0], inputs)):
            hit = self.known[key] = (inputs, pod_demand(pod, use_status_resources=self.use_status_resources))
        return hit[1]

