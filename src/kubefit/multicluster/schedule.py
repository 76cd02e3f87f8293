"""Schedule a ResourceBinding across clusters: filters → scores → estimates → candidates (§6) → division (§7).

`schedule` is the golden `schedule` op (every given cluster is a candidate, scores given); `schedule_binding`
is Karmada's scheduler as it runs: the Filter plugins first (a FitError when none is left), the Score
plugins (unless scores are given), then `schedule`; with `placement.clusterAffinities` each term is tried
in order, from the one `status.schedulerObservingAffinityName` names, until one schedules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubefit.api.karmada import Cluster
from kubefit.k8s.quantity import quantity_text
from kubefit.multicluster.divide import MAX_INT32, Candidate, divide
from kubefit.multicluster.estimate import ClusterEstimate, max_available_replicas, parse_request
from kubefit.multicluster.filters import Rejection, fit_error, run_filters
from kubefit.multicluster.policydefaults import webhook_defaults
from kubefit.multicluster.scores import prioritize
from kubefit.multicluster.spread import SpreadError, select_best_clusters


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
    estimates = max_available_replicas(clusters, binding_request(spec), None, gates, texts, steps=False)
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
    """`{"candidates": [...], "clusters": [...] sorted by name or None, "error": None or message}`.

    Candidates are those `SelectBestClusters` keeps (spreadConstraints, kubefit.multicluster.spread)."""
    cands, estimates = select_candidates(clusters, spec, scores, gates)
    try:
        cands = select_best_clusters(cands, spec.get("placement") or {}, int(spec.get("replicas", 0) or 0))
    except SpreadError as exc:
        return {"candidates": [], "clusters": None, "error": str(exc),
                "overflow": sorted(e.name for e in estimates if e.overflow)}
    result = divide(cands, spec, status)
    return {
        "candidates": [{"name": c.name, "availableReplicas": c.available_replicas,
                        "allocatableReplicas": c.allocatable_replicas} for c in cands],
        "clusters": result["clusters"],
        "error": result["error"],
        "overflow": sorted(e.name for e in estimates if e.overflow),
    }


def find_feasible(clusters: Sequence[Cluster], spec: Mapping[str, Any],
                  status: Mapping[str, Any]) -> tuple[list[Cluster], dict[str, Rejection]]:
    """`findClustersThatFit`: clusters every filter accepts, and why each other one was rejected.

    A cluster being deleted (metadata.deletionTimestamp) is skipped without a verdict, as Karmada does."""
    feasible: list[Cluster] = []
    rejected: dict[str, Rejection] = {}
    for c in clusters:
        raw = c.raw or {"metadata": {"name": c.name}}
        if (raw.get("metadata") or {}).get("deletionTimestamp"):
            continue
        verdict = run_filters(spec, status, raw)
        if verdict is None:
            feasible.append(c)
        else:
            rejected[c.name] = verdict
    return feasible, rejected


def schedule_once(clusters: Sequence[Cluster], spec: Mapping[str, Any], status: Mapping[str, Any],
                  scores: Mapping[str, int] | None = None, gates: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """`genericScheduler.Schedule`: filter, score (or the given scores), select and assign."""
    feasible, rejected = find_feasible(clusters, spec, status)
    if not feasible:
        result: dict[str, Any] = {"candidates": [], "clusters": None, "error": fit_error(len(clusters), {n: [r.reason] for n, r in rejected.items()}),
                                  "overflow": []}
        given: Mapping[str, int] = {}
    else:
        given = scores if scores is not None else prioritize(spec, [c.name for c in feasible])
        result = schedule(feasible, spec, status, given, gates)
    result["scores"] = {c.name: int(given.get(c.name, 0)) for c in feasible}
    result["filter"] = {name: r.as_dict() for name, r in rejected.items()}
    return result


def affinity_index(terms: Sequence[Mapping[str, Any]], observed: str) -> int:
    """`getAffinityIndex`: the term the status names, else the first."""
    return next((i for i, t in enumerate(terms) if observed and (t or {}).get("affinityName") == observed), 0)


def schedule_binding(clusters: Sequence[Cluster], spec: Mapping[str, Any], status: Mapping[str, Any] | None = None,
                     scores: Mapping[str, int] | None = None, gates: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """Karmada's scheduler on one binding; `clusterAffinities` terms are failover groups tried in order.

    With terms, the result says which `affinityName` scheduled (None when all failed: the first term's
    error is reported, as Karmada does) and `affinityAttempts` lists each term tried and its error."""
    status = status or {}
    placement = spec.get("placement") or {}
    terms = placement.get("clusterAffinities") or []
    if placement.get("clusterAffinity") is not None or not terms:
        return schedule_once(clusters, spec, status, scores, gates)
    attempts: list[dict[str, Any]] = []
    first: dict[str, Any] | None = None
    for term in terms[affinity_index(terms, status.get("schedulerObservingAffinityName") or ""):]:
        name = (term or {}).get("affinityName", "")
        result = schedule_once(clusters, spec, {**status, "schedulerObservingAffinityName": name}, scores, gates)
        attempts.append({"affinityName": name, "error": result["error"]})
        if result["error"] is None:
            return {**result, "affinityName": name, "affinityAttempts": attempts}
        first = first or result
    assert first is not None
    return {**first, "affinityName": None, "affinityAttempts": attempts}


def binding_from_workload(workload: Mapping[str, Any], policy: Mapping[str, Any],
                          template_requests: Mapping[str, str] | None) -> dict[str, Any]:
    """The ResourceBinding spec Karmada's detector builds for a Deployment-like workload and its policy
    (the policy's placement with the mutating webhook's defaults, kubefit.multicluster.policydefaults).

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
        "placement": webhook_defaults((policy.get("spec") or {}).get("placement") or {}),
    }
    if template_requests:
        spec["replicaRequirements"] = {"resourceRequest": dict(template_requests)}
    return spec
