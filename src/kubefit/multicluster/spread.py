"""Karmada's `SelectBestClusters`: which candidates spreadConstraints keep (pkg/scheduler/core/spreadconstraint).

- No spreadConstraints, or static weights (Divided + Weighted with a staticWeightList and no dynamicWeight,
  or no weightPreference): every candidate is kept.
- A `cluster` constraint: fewer candidates than `minGroups` is an error; otherwise the first
  min(maxGroups, candidates) in candidate order are kept, and, unless the strategy ignores capacity
  (no replicaScheduling, or Duplicated), while their AvailableReplicas fall short of the replicas the
  lowest-ranked kept cluster is swapped, from the back, for the left-out cluster with the most
  AvailableReplicas above its own (`selectClustersByAvailableResource`); still short is an error.
- A `region` constraint (with or without others) groups clusters by region; kubefit does not evaluate that
  selection and says so (`SpreadNotEvaluated`).
- Constraints only by zone, provider or label: Karmada's error "just support cluster and region spread
  constraint".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubefit.multicluster.divide import Candidate


class SpreadError(ValueError):
    """Karmada refuses the selection (its message)."""


class SpreadNotEvaluated(ValueError):
    """A spread constraint kubefit does not evaluate."""


def ignores_spread(placement: Mapping[str, Any]) -> bool:
    """`shouldIgnoreSpreadConstraint`: static weights decide alone."""
    rs = placement.get("replicaScheduling")
    if not rs or rs.get("replicaSchedulingType") != "Divided" or rs.get("replicaDivisionPreference") != "Weighted":
        return False
    wp = rs.get("weightPreference")
    return wp is None or (bool(wp.get("staticWeightList")) and not wp.get("dynamicWeight"))


def ignores_capacity(placement: Mapping[str, Any]) -> bool:
    """`shouldIgnoreAvailableResource`: no replicaScheduling, or Duplicated."""
    rs = placement.get("replicaScheduling")
    return not rs or rs.get("replicaSchedulingType") == "Duplicated"


def _swap_for_capacity(kept: list[Candidate], rest: list[Candidate], need: int) -> list[Candidate] | None:
    """`selectClustersByAvailableResource`."""
    i = len(kept) - 1
    while sum(c.available_replicas for c in kept) < need and i >= 0:
        best, most = -1, kept[i].available_replicas
        for j, c in enumerate(rest):
            if c.available_replicas > most:
                best, most = j, c.available_replicas
        if best >= 0:
            kept[i], rest[best] = rest[best], kept[i]
        i -= 1
    return kept if sum(c.available_replicas for c in kept) >= need else None


def by_cluster(cands: list[Candidate], constraint: Mapping[str, Any], need: int | None) -> list[Candidate]:
    """`selectBestClustersByCluster`; `need` None ignores capacity."""
    if len(cands) < int(constraint.get("minGroups") or 0):
        raise SpreadError("the number of feasible clusters is less than spreadConstraint.MinGroups")
    count = min(int(constraint.get("maxGroups") or 0), len(cands))
    if need is None:
        return cands[:count]
    kept = _swap_for_capacity(list(cands[:count]), list(cands[count:]), need)
    if not kept:
        raise SpreadError(f"no enough resource when selecting {count} clusters")
    return kept


def select_best_clusters(cands: list[Candidate], placement: Mapping[str, Any], replicas: int) -> list[Candidate]:
    """`SelectBestClusters` over the sorted candidates."""
    constraints = placement.get("spreadConstraints") or []
    if not constraints or ignores_spread(placement):
        return cands
    by_field = {str((c or {}).get("spreadByField") or ""): c or {} for c in constraints}
    if "region" in by_field:
        raise SpreadNotEvaluated("spreadConstraints by region: Karmada's region group selection is not evaluated "
                                 "by kubefit")
    if "cluster" in by_field:
        return by_cluster(cands, by_field["cluster"], None if ignores_capacity(placement) else replicas)
    raise SpreadError("just support cluster and region spread constraint")
