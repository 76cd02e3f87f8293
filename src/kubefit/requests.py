"""A pod's effective request (`component-helpers/resource.PodRequests`) and its scheduler views.

Three views of one pod (SPEC-kube-scheduler §2, §4):
- `requests`: what Filter, BalancedAllocation and node accounting (`Requested`) use — containers,
  init containers and sidecars, pod-level resources honoured, overhead added;
- `nonzero`: the node's `NonZeroRequested` cpu/memory (100m / 200Mi for a container lacking the key);
- `score_requests`: what NodeResourcesFit scoring uses for the incoming pod — the non-zero variant
  with pod-level resources ignored (the v1.34.1 quirk).
All values are scheduler integers: millicores for cpu, whole units otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubefit.api.core import Container, Pod, ResourceList
from kubefit.quantity import NANO, scheduler_units
from kubefit.resourcenames import CPU, MEMORY, is_hugepages

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


def aggregate_container_requests(pod: Pod, non_missing: ResourceList | None = None) -> ResourceList:
    """`AggregateContainerRequests`: Σ containers + sidecars, then max with the init-container peaks."""
    reqs: ResourceList = {}
    for c in pod.containers:
        _add(reqs, _with_defaults(c.requests, non_missing))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.init_containers:
        own = _with_defaults(c.requests, non_missing)
        if is_sidecar(c):
            _add(reqs, own)
            _add(sidecars, own)
            candidate = sidecars
        else:
            candidate = dict(own)
            _add(candidate, sidecars)
        _max_into(init_peak, candidate)
    _max_into(reqs, init_peak)
    return reqs


def is_supported_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or is_hugepages(name)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """`IsPodLevelRequestsSet`: spec.resources.requests names cpu, memory or hugepages."""
    return bool(pod.pod_requests) and any(is_supported_pod_level_resource(n) for n in pod.pod_requests or {})


def pod_requests_nanos(pod: Pod, *, non_missing: ResourceList | None = None, pod_level: bool = True) -> ResourceList:
    """`PodRequests(pod, opts)` as exact quantities (nano-units)."""
    reqs = aggregate_container_requests(pod, non_missing)
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


def pod_demand(pod: Pod) -> PodDemand:
    """Compute the three request views of `pod` (SPEC §2 and §4)."""
    plain = pod_requests_nanos(pod)
    if is_pod_level_requests_set(pod):
        non_missing = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in plain}
    else:
        non_missing = NON_ZERO_DEFAULTS
    nonzero = pod_requests_nanos(pod, non_missing=non_missing) if non_missing else plain
    score = pod_requests_nanos(pod, non_missing=NON_ZERO_DEFAULTS, pod_level=False)
    return PodDemand(
        requests=to_units(plain),
        nonzero_cpu=scheduler_units(CPU, nonzero.get(CPU, 0)),
        nonzero_memory=scheduler_units(MEMORY, nonzero.get(MEMORY, 0)),
        score_requests=to_units(score),
    )
