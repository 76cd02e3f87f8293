"""Karmada's in-tree Filter plugins and the FitError they add up to (pkg/scheduler/framework/plugins).

Each filter is a function `(spec, status, cluster) -> reason or None` on the ResourceBinding's spec and
status and one Cluster object (JSON form), with Karmada's exact reason text:

- APIEnablement: the cluster serves the binding's apiVersion/kind (`status.apiEnablements`); a cluster
  already in `spec.clusters` passes.  A Cluster without `status.apiEnablements` cannot be checked: it
  passes, and `schedule` warns (Karmada itself would reject it).
- TaintToleration: no NoSchedule/NoExecute taint of `spec.taints` is left untolerated by
  `placement.clusterTolerations`; a cluster already in `spec.clusters` passes.
- ClusterAffinity: `util.ClusterMatches` against `placement.clusterAffinity`, or the `clusterAffinities`
  term named by `status.schedulerObservingAffinityName`.
- SpreadConstraint: the cluster has the provider / region / zones each spread constraint spreads by.
- ClusterEviction: the cluster is not the source of one of `spec.gracefulEvictionTasks`.

Karmada builds its filter list from a Go map, so when several filters reject a cluster the one it reports
varies from run to run; kubefit runs them in the registry's source order (below) and lists every
rejecting filter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubefit.api.core import Taint, Toleration
from kubefit.k8s.taints import tolerates_any
from kubefit.multicluster.affinity import cluster_matches

Filter = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]], str | None]


def target_contains(spec: Mapping[str, Any], name: str) -> bool:
    """`ResourceBindingSpec.TargetContains`: the cluster is in the previous result `spec.clusters`."""
    return any((tc or {}).get("name") == name for tc in spec.get("clusters") or [])


def _name(cluster: Mapping[str, Any]) -> str:
    return str((cluster.get("metadata") or {}).get("name") or "")


def api_enabled(cluster: Mapping[str, Any], api_version: str, kind: str) -> bool:
    """`helper.IsAPIEnabled`: some `status.apiEnablements` entry of the groupVersion lists the kind."""
    for enablement in (cluster.get("status") or {}).get("apiEnablements") or []:
        if (enablement or {}).get("groupVersion") != api_version:
            continue
        if any((r or {}).get("kind") == kind for r in enablement.get("resources") or []):
            return True
    return False


def api_enablement(spec: Mapping[str, Any], _status: Mapping[str, Any], cluster: Mapping[str, Any]) -> str | None:
    """APIEnablement.Filter."""
    if target_contains(spec, _name(cluster)) or (cluster.get("status") or {}).get("apiEnablements") is None:
        return None
    resource = spec.get("resource") or {}
    if api_enabled(cluster, str(resource.get("apiVersion") or ""), str(resource.get("kind") or "")):
        return None
    return "cluster(s) did not have the API resource"


def taint_text(taint: Taint) -> str:
    """`corev1.Taint.ToString`: key=value:effect, leaving out what is empty."""
    if not taint.effect:
        return taint.key if not taint.value else f"{taint.key}={taint.value}:"
    return f"{taint.key}:{taint.effect}" if not taint.value else f"{taint.key}={taint.value}:{taint.effect}"


def _taints(cluster: Mapping[str, Any]) -> list[Taint]:
    return [Taint(key=str(t.get("key") or ""), value=str(t.get("value") or ""), effect=str(t.get("effect") or ""))
            for t in (cluster.get("spec") or {}).get("taints") or [] if isinstance(t, Mapping)]


def _tolerations(spec: Mapping[str, Any]) -> list[Toleration]:
    raw = (spec.get("placement") or {}).get("clusterTolerations") or []
    return [Toleration(**{f: str(t.get(f) or "") for f in ("key", "operator", "value", "effect")})
            for t in raw if isinstance(t, Mapping)]


def taint_toleration(spec: Mapping[str, Any], _status: Mapping[str, Any], cluster: Mapping[str, Any]) -> str | None:
    """TaintToleration.Filter: the first NoSchedule/NoExecute taint no clusterToleration tolerates."""
    if target_contains(spec, _name(cluster)):
        return None
    tolerations = _tolerations(spec)
    for taint in _taints(cluster):
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerates_any(tolerations, taint):
            return f"cluster(s) had untolerated taint {{{taint_text(taint)}}}"
    return None


def active_affinity(spec: Mapping[str, Any], status: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """`placement.clusterAffinity`, else the `clusterAffinities` term named by the status, else None."""
    placement = spec.get("placement") or {}
    if placement.get("clusterAffinity") is not None:
        return placement["clusterAffinity"]
    observed = status.get("schedulerObservingAffinityName") or ""
    for term in placement.get("clusterAffinities") or []:
        if (term or {}).get("affinityName", "") == observed:
            return term
    return None


def cluster_affinity(spec: Mapping[str, Any], status: Mapping[str, Any], cluster: Mapping[str, Any]) -> str | None:
    """ClusterAffinity.Filter."""
    affinity = active_affinity(spec, status)
    if affinity is None or cluster_matches(cluster, affinity):
        return None
    return "cluster(s) did not match the placement cluster affinity constraint"


def spread_constraint(spec: Mapping[str, Any], _status: Mapping[str, Any], cluster: Mapping[str, Any]) -> str | None:
    """SpreadConstraint.Filter: the first constraint whose field the cluster lacks."""
    cspec = cluster.get("spec") or {}
    for sc in (spec.get("placement") or {}).get("spreadConstraints") or []:
        field = (sc or {}).get("spreadByField")
        if field == "provider" and not cspec.get("provider"):
            return "cluster(s) did not have provider property"
        if field == "region" and not cspec.get("region"):
            return "cluster(s) did not have region property"
        if field == "zone" and not cspec.get("zones"):
            return "cluster(s) did not have zones property"
    return None


def cluster_eviction(spec: Mapping[str, Any], _status: Mapping[str, Any], cluster: Mapping[str, Any]) -> str | None:
    """ClusterEviction.Filter: `helper.ClusterInGracefulEvictionTasks`."""
    name = _name(cluster)
    if any((t or {}).get("fromCluster") == name for t in spec.get("gracefulEvictionTasks") or []):
        return "cluster(s) is in the process of eviction"
    return None


# `plugins.NewInTreeRegistry` in source order (the order kubefit reports a cluster's first failure in).
FILTERS: tuple[tuple[str, Filter], ...] = (
    ("APIEnablement", api_enablement),
    ("TaintToleration", taint_toleration),
    ("ClusterAffinity", cluster_affinity),
    ("SpreadConstraint", spread_constraint),
    ("ClusterEviction", cluster_eviction),
)


@dataclass(frozen=True)
class Rejection:
    """Why a cluster is infeasible: the first failing filter, its reason, and every other failing filter."""

    plugin: str
    reason: str
    also: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"plugin": self.plugin, "reason": self.reason}
        if self.also:
            out["alsoRejectedBy"] = list(self.also)
        return out


def run_filters(spec: Mapping[str, Any], status: Mapping[str, Any], cluster: Mapping[str, Any]) -> Rejection | None:
    """Every filter on one cluster: None when all pass."""
    failed = [(name, reason) for name, f in FILTERS if (reason := f(spec, status, cluster)) is not None]
    if not failed:
        return None
    return Rejection(failed[0][0], failed[0][1], tuple(n for n, _ in failed[1:]))


def fit_error(num_all_clusters: int, reasons: Mapping[str, Sequence[str]]) -> str:
    """`framework.FitError.Error()`: "0/N clusters are available: " + the sorted "count reason" histogram
    over every rejected cluster's reasons."""
    if num_all_clusters == 0 or not reasons:
        return f"0/{num_all_clusters} clusters are available: no cluster exists."
    counts: dict[str, int] = {}
    for cluster_reasons in reasons.values():
        for reason in cluster_reasons:
            counts[reason] = counts.get(reason, 0) + 1
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    return f"0/{num_all_clusters} clusters are available: {', '.join(parts)}."
