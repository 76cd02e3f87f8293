"""Schedule a ResourceBinding across clusters: estimates → candidates (SPEC-karmada §6) → division (§7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubefit.api.karmada import Cluster, quantity_text
from kubefit.multicluster.divide import MAX_INT32, Candidate, divide
from kubefit.multicluster.estimate import ClusterEstimate, max_available_replicas, parse_request


def binding_request(spec: Mapping[str, Any]) -> dict[str, int] | None:
    """The binding's `replicaRequirements.resourceRequest` in nanos, or None when there are no requirements."""
    rr = spec.get("replicaRequirements")
    if rr is None:
        return None
    return parse_request(rr.get("resourceRequest") or {}, "spec.replicaRequirements.resourceRequest")


def cal_available_replicas(clusters: Sequence[Cluster], spec: Mapping[str, Any],
                           gates: Mapping[str, bool] | None = None) -> tuple[list[int], list[ClusterEstimate]]:
    """`calAvailableReplicas`: the general estimate per cluster; MaxInt32 (no answer) becomes spec.replicas."""
    replicas = int(spec.get("replicas", 0) or 0)
    if replicas == 0 and not spec.get("components"):
        return [MAX_INT32] * len(clusters), []
    rr = spec.get("replicaRequirements")
    texts = None if rr is None else {str(k): quantity_text(v) for k, v in (rr.get("resourceRequest") or {}).items()}
    estimates = max_available_replicas(clusters, binding_request(spec), None, gates, texts)
    out = []
    for est in estimates:
        n = MAX_INT32
        if est.replicas != -1:
            n = min(n, est.replicas)
        out.append(replicas if n == MAX_INT32 else n)
    return out, estimates


def select_candidates(clusters: Sequence[Cluster], spec: Mapping[str, Any], scores: Mapping[str, int] | None = None,
                      gates: Mapping[str, bool] | None = None) -> tuple[list[Candidate], list[ClusterEstimate]]:
    """Every cluster as a candidate, sorted by overflowOrder ↑, score ↓, AvailableReplicas ↓, name ↑."""
    allocatable, estimates = cal_available_replicas(clusters, spec, gates)
    previous: dict[str, int] = {}
    for tc in spec.get("clusters") or []:
        previous[tc["name"]] = int(tc.get("replicas", 0) or 0)
    cands = [Candidate(name=c.name, available_replicas=n + previous.get(c.name, 0), allocatable_replicas=n,
                       cluster=c.raw or {"metadata": {"name": c.name}}, score=int((scores or {}).get(c.name, 0)))
             for c, n in zip(clusters, allocatable, strict=True)]
    cands.sort(key=lambda c: (c.overflow_order, -c.score, -c.available_replicas, c.name))
    return cands, estimates


def schedule(clusters: Sequence[Cluster], spec: Mapping[str, Any], status: Mapping[str, Any] | None = None,
             scores: Mapping[str, int] | None = None, gates: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """`{"candidates": [...], "clusters": [...] sorted by name or None, "error": None or message}`."""
    cands, estimates = select_candidates(clusters, spec, scores, gates)
    result = divide(cands, spec, status)
    return {
        "candidates": [{"name": c.name, "availableReplicas": c.available_replicas,
                        "allocatableReplicas": c.allocatable_replicas} for c in cands],
        "clusters": result["clusters"],
        "error": result["error"],
        "overflow": sorted(e.name for e in estimates if e.overflow),
    }


def _selector_matches(selector: Mapping[str, Any], workload: Mapping[str, Any]) -> bool:
    meta = workload.get("metadata") or {}
    if selector.get("apiVersion") not in (None, workload.get("apiVersion")):
        return False
    if selector.get("kind") not in (None, workload.get("kind")):
        return False
    if selector.get("name") and selector["name"] != meta.get("name"):
        return False
    if selector.get("namespace") and selector["namespace"] != (meta.get("namespace") or "default"):
        return False
    labels = meta.get("labels") or {}
    match = (selector.get("labelSelector") or {}).get("matchLabels") or {}
    return all(labels.get(k) == v for k, v in match.items())


def policy_matches(policy: Mapping[str, Any], workload: Mapping[str, Any]) -> bool:
    """Whether one of the PropagationPolicy's resourceSelectors selects the workload."""
    return any(_selector_matches(s or {}, workload)
               for s in ((policy.get("spec") or {}).get("resourceSelectors") or []))


def binding_from_workload(workload: Mapping[str, Any], policy: Mapping[str, Any],
                          template_requests: Mapping[str, str] | None) -> dict[str, Any]:
    """The ResourceBinding spec Karmada's detector builds for a Deployment-like workload and its policy.

    `template_requests` is the pod template's effective request (quantity strings), as Karmada's
    interpreter reads it (`resourcehelper.PodRequests`); empty means no replicaRequirements.
    """
    meta = workload.get("metadata") or {}
    replicas = (workload.get("spec") or {}).get("replicas")
    spec: dict[str, Any] = {
        "resource": {"apiVersion": workload.get("apiVersion", ""), "kind": workload.get("kind", ""),
                     "namespace": meta.get("namespace") or "default", "name": meta.get("name", ""),
                     "uid": meta.get("uid", "")},
        "replicas": 1 if replicas is None else int(replicas),
        "placement": (policy.get("spec") or {}).get("placement") or {},
    }
    if template_requests:
        spec["replicaRequirements"] = {"resourceRequest": dict(template_requests)}
    return spec
