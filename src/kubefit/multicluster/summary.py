"""A member's nodes and pods → `resourceSummary` and `nodeSummary`, as Karmada's cluster status
controller computes them (SPEC-karmada §1), accounting quirks included.

Works on the manifests as Go would decode them (`Node.raw` / `Pod.raw`, or plain dicts): quantities
are re-read with `goquantity` so Value/MilliValue, Formats and int64 wrapping match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubefit.k8s import goquantity as gq
from kubefit.k8s.resourcenames import is_hugepages, is_scalar

TERMINAL_PHASES = ("Succeeded", "Failed")


def _raw(obj: Any) -> dict[str, Any]:
    return getattr(obj, "raw", obj) or {}


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


@dataclass
class Resource:
    """Karmada `util.Resource`: millicores, bytes, pods and scalar resources as int64 (wrapping)."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    def add(self, requests: dict[str, Any] | None) -> None:
        """`Resource.Add(ResourceList)`: cpu by MilliValue, the rest by Value; other names dropped."""
        for name, raw in (requests or {}).items():
            q = gq.parse_value(raw)
            if name == "cpu":
                self.milli_cpu = gq.wrap64(self.milli_cpu + q.milli_value())
            elif name == "memory":
                self.memory = gq.wrap64(self.memory + q.int_value())
            elif name == "ephemeral-storage":
                self.ephemeral_storage = gq.wrap64(self.ephemeral_storage + q.int_value())
            elif name == "pods":
                self.allowed_pod_number = gq.wrap64(self.allowed_pod_number + q.int_value())
            elif is_scalar(name):
                self.scalar[name] = gq.wrap64(self.scalar.get(name, 0) + q.int_value())

    def set_max(self, requests: dict[str, Any] | None) -> None:
        """`Resource.SetMaxResource(ResourceList)`: per dimension, max(accumulator, request)."""
        for name, raw in (requests or {}).items():
            q = gq.parse_value(raw)
            if name == "cpu":
                self.milli_cpu = max(self.milli_cpu, q.milli_value())
            elif name == "memory":
                self.memory = max(self.memory, q.int_value())
            elif name == "ephemeral-storage":
                self.ephemeral_storage = max(self.ephemeral_storage, q.int_value())
            elif name == "pods":
                self.allowed_pod_number = max(self.allowed_pod_number, q.int_value())
            elif is_scalar(name):
                self.scalar[name] = max(self.scalar.get(name, 0), q.int_value())

    def add_pod_request(self, pod_spec: dict[str, Any]) -> None:
        """`AddPodRequest`: containers added, then init containers max'ed against the SHARED total."""
        for c in pod_spec.get("containers") or []:
            self.add(_get(c, "resources", "requests"))
        for c in pod_spec.get("initContainers") or []:
            self.set_max(_get(c, "resources", "requests"))
        if pod_spec.get("overhead") is not None:
            self.add(pod_spec["overhead"])

    def add_pods(self, n: int) -> None:
        self.allowed_pod_number = gq.wrap64(self.allowed_pod_number + n)

    def resource_list(self) -> dict[str, gq.GoQuantity] | None:
        """`Resource.ResourceList()`: positive dimensions only, None when all are ≤ 0."""
        out: dict[str, gq.GoQuantity] = {}
        if self.milli_cpu > 0:
            out["cpu"] = gq.from_int64(self.milli_cpu, -3, gq.DECIMAL_SI)
        if self.memory > 0:
            out["memory"] = gq.from_int64(self.memory, 0, gq.BINARY_SI)
        if self.ephemeral_storage > 0:
            out["ephemeral-storage"] = gq.from_int64(self.ephemeral_storage, 0, gq.BINARY_SI)
        if self.allowed_pod_number > 0:
            out["pods"] = gq.from_int64(self.allowed_pod_number, 0, gq.DECIMAL_SI)
        for name, v in self.scalar.items():
            if v > 0:
                out[name] = gq.from_int64(v, 0, gq.BINARY_SI if is_hugepages(name) else gq.DECIMAL_SI)
        return out or None


def add_quantity(total: gq.GoQuantity, y: gq.GoQuantity) -> gq.GoQuantity:
    """`total.Add(y)`: exact sum, cached string cleared, Format taken from y while total is zero."""
    fmt = y.format if total.is_zero() else total.format
    n = total.nanos() + y.nanos()
    return gq.GoQuantity(fmt, value=n, scale=-9) if gq.MIN_INT64 <= n <= gq.MAX_INT64 else \
        gq.GoQuantity(fmt, big=True, unscaled=n, dec_scale=9)


def subtract_quantity(total: gq.GoQuantity, y: gq.GoQuantity) -> gq.GoQuantity:
    """`total.Sub(y)` (exact)."""
    fmt = y.format if total.is_zero() else total.format
    n = total.nanos() - y.nanos()
    return gq.GoQuantity(fmt, value=n, scale=-9) if gq.MIN_INT64 <= n <= gq.MAX_INT64 else \
        gq.GoQuantity(fmt, big=True, unscaled=n, dec_scale=9)


def cluster_allocatable(nodes: list[Any]) -> dict[str, gq.GoQuantity]:
    """`getClusterAllocatable`: per name, the sum over all nodes of status.allocatable."""
    total: dict[str, gq.GoQuantity] = {}
    for node in nodes:
        for name, raw in (_get(_raw(node), "status", "allocatable") or {}).items():
            q = gq.parse_value(raw)
            total[name] = add_quantity(total[name], q) if name in total else q
    return total


def _bound_active(pod: dict[str, Any]) -> bool:
    return bool(_get(pod, "spec", "nodeName")) and _get(pod, "status", "phase") not in TERMINAL_PHASES


def allocated_resource(pods: list[Any]) -> Resource:
    """`getAllocatedResource`: bound pods not Succeeded/Failed, one shared accumulator, + pod count."""
    acc, n = Resource(), 0
    for pod in map(_raw, pods):
        if _bound_active(pod):
            n += 1
            acc.add_pod_request(pod.get("spec") or {})
    acc.add_pods(n)
    return acc


def allocating_resource(pods: list[Any]) -> Resource:
    """`getAllocatingResource`: pods without spec.nodeName, whatever their phase, + pod count."""
    acc, n = Resource(), 0
    for pod in map(_raw, pods):
        if not _get(pod, "spec", "nodeName"):
            n += 1
            acc.add_pod_request(pod.get("spec") or {})
    acc.add_pods(n)
    return acc


def node_ready(node: dict[str, Any]) -> bool:
    """`helper.NodeReady`: the first `Ready` condition decides; True only when its status is True."""
    for cond in _get(node, "status", "conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def node_summary(nodes: list[Any]) -> dict[str, int]:
    """`getNodeSummary`: total and Ready nodes."""
    return {"totalNum": len(nodes), "readyNum": sum(node_ready(_raw(n)) for n in nodes)}


def render(resources: dict[str, gq.GoQuantity] | None) -> dict[str, str] | None:
    """A ResourceList as Go serializes it (String() of each quantity), None when empty."""
    if not resources:
        return None
    return {name: q.string() for name, q in sorted(resources.items())}


def resource_summary(nodes: list[Any], pods: list[Any], modelings: list[dict[str, Any]] | None = None
                     ) -> dict[str, Any]:
    """`getResourceSummary` + `getNodeSummary`, with `allocatableModelings` when given (the caller
    classifies the nodes: `kubefit.multicluster.models.allocatable_modelings`).

    Returns `{"resourceSummary": {...}, "nodeSummary": {...}}` with JSON field names; absent
    (nil/empty) lists are left out, as Go's `omitempty` does.
    """
    summary: dict[str, Any] = {}
    for key, value in (("allocatable", render(cluster_allocatable(nodes))),
                       ("allocating", render(allocating_resource(pods).resource_list())),
                       ("allocated", render(allocated_resource(pods).resource_list()))):
        if value:
            summary[key] = value
    if modelings:
        summary["allocatableModelings"] = modelings
    return {"resourceSummary": summary, "nodeSummary": node_summary(nodes)}


OVERFLOW = 2**62  # base units (cpu: millicores) from which Karmada's int64 arithmetic may wrap


def overflow_resources(nodes: list[Any], pods: list[Any]) -> list[str]:
    """Resource names whose quantities (one value or a pod-request total) reach 2^62 base units,
    where Karmada's int64 arithmetic may wrap silently (golden README: warn, don't trust the number)."""
    hit: set[str] = set()
    totals: dict[str, int] = {}

    def units(name: str, raw: Any) -> int:
        nanos = gq.parse_value(raw).nanos()
        return abs(nanos) // 10**6 if name == "cpu" else abs(nanos) // 10**9

    for node in nodes:
        for name, raw in (_get(_raw(node), "status", "allocatable") or {}).items():
            if units(name, raw) >= OVERFLOW:
                hit.add(name)
    for pod in map(_raw, pods):
        spec = pod.get("spec") or {}
        lists = [_get(c, "resources", "requests") for c in
                 [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]]
        for requests in [*lists, spec.get("overhead")]:
            for name, raw in (requests or {}).items():
                u = units(name, raw)
                totals[name] = totals.get(name, 0) + u
                if u >= OVERFLOW or totals[name] >= OVERFLOW:
                    hit.add(name)
    return sorted(hit)
