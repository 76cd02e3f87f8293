"""Karmada's `SelectBestClusters`: which candidates spreadConstraints keep (pkg/scheduler/core/spreadconstraint).

- No spreadConstraints, or static weights (Divided + Weighted with a staticWeightList and no dynamicWeight,
  or no weightPreference): every candidate is kept.
- A `cluster` constraint: fewer candidates than `minGroups` is an error; otherwise the first
  min(maxGroups, candidates) in candidate order are kept, and, unless the strategy ignores capacity
  (no replicaScheduling, or Duplicated), while their AvailableReplicas fall short of the replicas the
  lowest-ranked kept cluster is swapped, from the back, for the left-out cluster with the most
  AvailableReplicas above its own (`selectClustersByAvailableResource`); still short is an error.
- A `region` constraint (`selectBestClustersByRegion`, read at karmada 5194e176): regions (score = their
  best cluster's) are chosen by `selectGroups` — every combination of minGroups..maxGroups regions holding
  at least the cluster constraint's minGroups clusters, best by summed score, then cluster count, then
  search order, a chosen path's prefix preferred; the best cluster of each chosen region is kept, then the
  others of those regions by score, AvailableReplicas and name up to the cluster constraint's maxGroups.
- Constraints only by zone, provider or label: Karmada's error "just support cluster and region spread
  constraint".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubefit.multicluster.divide import Candidate


class SpreadError(ValueError):
    """Karmada refuses the selection (its message)."""


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


@dataclass
class _Path:
    """A `dfsPath`: chosen groups (name, clusters, score), search id, summed score and cluster count."""

    groups: list[tuple[str, int, int]]
    id: int
    weight: int
    value: int


def find_feasible_paths(groups: list[tuple[str, int, int]], low: int, high: int, target: int) -> list[_Path]:
    """`findFeasiblePaths`: DFS over groups sorted by clusters ↑, score ↓, name ↑ for combinations of
    low..high groups whose cluster count reaches `target`; each found path's groups sorted by score ↓, name ↑."""
    groups = sorted(groups, key=lambda g: (g[1], -g[2], g[0]))
    paths: list[_Path] = []
    stack: list[tuple[str, int, int]] = []
    counter = [0]

    def dfs(total: int, begin: int) -> None:
        if total >= target and low <= len(stack) <= high:
            counter[0] += 1
            chosen = sorted(stack, key=lambda g: (-g[2], g[0]))
            paths.append(_Path(chosen, counter[0], sum(g[2] for g in chosen), sum(g[1] for g in chosen)))
            return
        if len(stack) >= high:
            return
        for i in range(begin, len(groups)):
            stack.append(groups[i])
            dfs(total + groups[i][1], i + 1)
            stack.pop()

    dfs(0, 0)
    return paths


def prioritize_paths(paths: list[_Path]) -> _Path:
    """`prioritizePaths`: score ↓, clusters ↓, id ↑; then a later path that is a strict prefix wins."""
    ordered = sorted(paths, key=lambda p: (-p.weight, -p.value, p.id))
    final = ordered[0]
    for p in ordered[1:]:
        if len(p.groups) < len(final.groups) and [g[0] for g in final.groups[:len(p.groups)]] == \
                [g[0] for g in p.groups]:
            final = p
    return final


def by_region(cands: list[Candidate], region: Mapping[str, Any], cluster: Mapping[str, Any]) -> list[Candidate]:
    """`selectBestClustersByRegion` over candidates in candidate order."""
    regions: dict[str, list[Candidate]] = {}
    for c in cands:
        name = str((c.cluster.get("spec") or {}).get("region") or "")
        if name:
            regions.setdefault(name, []).append(c)
    if len(regions) < int(region.get("minGroups") or 0):
        raise SpreadError("the number of feasible region is less than spreadConstraint.MinGroups")
    groups = [(name, len(members), members[0].score) for name, members in regions.items()]
    paths = find_feasible_paths(groups, int(region.get("minGroups") or 0), int(region.get("maxGroups") or 0),
                                int(cluster.get("minGroups") or 0))
    if not paths:
        raise SpreadError("the number of clusters is less than the cluster spreadConstraint.MinGroups")
    chosen = [regions[name] for name, _, _ in prioritize_paths(paths).groups]
    kept = [members[0] for members in chosen]
    rest = sorted((c for members in chosen for c in members[1:]),
                  key=lambda c: (-c.score, -c.available_replicas, c.name))
    need = min(len(kept) + len(rest), int(cluster.get("maxGroups") or 0))
    return kept + rest[:max(need - len(kept), 0)]


def select_best_clusters(cands: list[Candidate], placement: Mapping[str, Any], replicas: int) -> list[Candidate]:
    """`SelectBestClusters` over the sorted candidates."""
    constraints = placement.get("spreadConstraints") or []
    if not constraints or ignores_spread(placement):
        return cands
    by_field = {str((c or {}).get("spreadByField") or ""): c or {} for c in constraints}
    if "region" in by_field:
        return by_region(cands, by_field["region"], by_field.get("cluster", {}))
    if "cluster" in by_field:
        return by_cluster(cands, by_field["cluster"], None if ignores_capacity(placement) else replicas)
    raise SpreadError("just support cluster and region spread constraint")
