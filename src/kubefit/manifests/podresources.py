"""A pod's resources as the API server reads them: its containers' requests and limits, their aggregate, and the
validation of pod-level `spec.resources` against them (`validatePodResourceConsistency`, PodLevelResources on as
in v1.34).

The aggregate is `AggregateContainerRequests` / `AggregateContainerLimits` (k8s.io/component-helpers/resource/
helpers.go), which LimitRanger's `podRequests` / `podLimits` copy: containers and restartable (sidecar) init
containers summed, then the larger of that and each init container's peak (the init container plus the sidecars
started before it). The API server validates a Pod after defaulting and the mutating admission plugins (so with
the requests `SetDefaults_Pod` and LimitRanger gave it), and a workload's pod template as it is written
(`ValidatePodTemplateSpec` calls the same `ValidatePodSpec`; a template is not defaulted as a Pod is).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubefit.api.core import Quantity
from kubefit.k8s import goquantity as gq
from kubefit.k8s.resourcenames import is_hugepages
from kubefit.k8s.validation import INVALID, FieldError
from kubefit.manifests.decode import decode_quantities
from kubefit.manifests.documents import Document


@dataclass
class Resources:
    """One container's (or init container's) requests and limits, as Quantities (their text is what the API
    server's messages print)."""

    name: str
    requests: dict[str, Quantity]
    limits: dict[str, Quantity]
    sidecar: bool = False


def containers_of(spec: dict[str, Any], doc: Document, key: str, path: str = "spec") -> list[Resources]:
    """`containers` / `initContainers` of a pod spec as `Resources` (a quantity that does not parse is refused
    with its path; an entry that is not a container is left to the pod's decoding, which refuses it)."""
    out = []
    given = spec.get(key)
    for i, raw in enumerate(given if isinstance(given, list) else []):
        if not isinstance(raw, dict):
            continue  # refused where the pod is decoded
        resources = raw.get("resources") if isinstance(raw.get("resources"), dict) else {}
        where = f"{path}.{key}[{i}].resources"
        out.append(Resources(str(raw.get("name") or ""),
                             decode_quantities(resources.get("requests"), doc, f"{where}.requests") or {},
                             decode_quantities(resources.get("limits"), doc, f"{where}.limits") or {},
                             raw.get("restartPolicy") == "Always"))
    return out


def shown(q: Quantity) -> str:
    """`Quantity.String()` of what was written: Go's canonical form."""
    return gq.parse(q.text).string()


def add(a: Quantity, b: Quantity) -> Quantity:
    """`a.Add(b)`: the exact sum, printed in `a`'s format (its cached string dropped), or in `b`'s when `a` is
    zero (apimachinery's `Quantity.Add`)."""
    nanos = a.nanos + b.nanos
    fmt = gq.parse((b if a.nanos == 0 else a).text).format
    return Quantity(gq.canonical(gq.GoQuantity(fmt, value=nanos, scale=-9)), nanos)


def aggregate_container(containers: list[Resources], inits: list[Resources], which: str) -> dict[str, Quantity]:
    """`AggregateContainerRequests` (`which="requests"`) / `AggregateContainerLimits` (`"limits"`) of the spec:
    containers and sidecars summed, then the larger of that and each init container's peak."""
    def total(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:  # addResourceList
        for k, q in other.items():
            into[k] = add(into[k], q) if k in into else q

    def peak(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:  # maxResourceList
        for k, q in other.items():
            if k not in into or q.nanos > into[k].nanos:
                into[k] = q
    out: dict[str, Quantity] = {}
    for c in containers:
        total(out, getattr(c, which))
    sidecars: dict[str, Quantity] = {}
    inits_peak: dict[str, Quantity] = {}
    for c in inits:
        own = getattr(c, which)
        if c.sidecar:
            total(out, own)
            total(sidecars, own)
            candidate = sidecars
        else:
            candidate = dict(own)
            total(candidate, sidecars)
        peak(inits_peak, candidate)
    peak(out, inits_peak)
    return out


def consistency_errors(requests: dict[str, Quantity], limits: dict[str, Quantity], containers: list[Resources],
                       inits: list[Resources], path: str = "spec.resources") -> list[FieldError]:
    """`validatePodResourceConsistency` (pkg/apis/core/validation/validation.go, v1.34) of a pod whose pod-level
    `spec.resources` holds `requests` and `limits`, in upstream's order (Go walks maps in any order: kubefit by
    name).

    1. each pod-level request must be ≥ the aggregate container request of that resource (a resource the pod
       does not request is not compared): `spec.resources.requests[cpu]: Invalid value: "500m": must be greater
       than or equal to aggregate container requests of 1`;
    2. a `hugepages-*` pod-level limit must be ≥ the aggregate container limit: `... must be greater than or
       equal to aggregate container limits of 512Mi`;
    3. each container's (not init container's) limit must be ≤ the pod-level limit of that resource, at
       upstream's path `spec.resources.containers[0][cpu].limits`: `... must be less than or equal to pod limits
       of 1`.
    """
    errors = []
    aggregate_requests = aggregate_container(containers, inits, "requests")
    for name in sorted(aggregate_requests):
        pod = requests.get(name)
        if pod is not None and aggregate_requests[name].nanos > pod.nanos:
            errors.append(FieldError(f"{path}.requests[{name}]", INVALID, shown(pod),
                                     f"must be greater than or equal to aggregate container requests of "
                                     f"{shown(aggregate_requests[name])}"))
    aggregate_limits = aggregate_container(containers, inits, "limits")
    for name in sorted(aggregate_limits):
        pod = limits.get(name)
        if is_hugepages(name) and pod is not None and aggregate_limits[name].nanos > pod.nanos:
            errors.append(FieldError(f"{path}.limits[{name}]", INVALID, shown(pod),
                                     f"must be greater than or equal to aggregate container limits of "
                                     f"{shown(aggregate_limits[name])}"))
    for i, c in enumerate(containers):
        for name in sorted(c.limits):
            pod = limits.get(name)
            if pod is not None and c.limits[name].nanos > pod.nanos:
                errors.append(FieldError(f"{path}.containers[{i}][{name}].limits", INVALID, shown(c.limits[name]),
                                         f"must be less than or equal to pod limits of {shown(pod)}"))
    return errors


def template_errors(spec: dict[str, Any], doc: Document, path: str) -> list[FieldError]:
    """`validatePodResourceConsistency` of a pod template's spec at `path` (`spec.template.spec`), as written: a
    template gets none of a Pod's defaulting (its containers' limits are not copied into their requests)."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return []
    requests = decode_quantities(resources.get("requests"), doc, f"{path}.resources.requests") or {}
    limits = decode_quantities(resources.get("limits"), doc, f"{path}.resources.limits") or {}
    return consistency_errors(requests, limits, containers_of(spec, doc, "containers", path),
                              containers_of(spec, doc, "initContainers", path), f"{path}.resources")
