"""Karmada's `util.ClusterMatches`: whether a Cluster satisfies a ClusterAffinity (exclude, labels, fields, names).

Used by the ClusterAffinity filter and by StaticWeight's `targetCluster` rules.  Label selectors go through
`kubefit.k8s.labels` (a malformed one matches nothing, as `LabelSelectorAsSelector`'s error does in Karmada).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubefit.k8s.labels import SelectorError, requirement, selector_matches


def match_zones(op: str, values: list[Any], zones: list[str]) -> bool:
    """`matchZones`: In needs every zone listed (and at least one zone), NotIn none of them; Exists /
    DoesNotExist ask whether the cluster has zones; other operators never match."""
    if op == "In":
        return bool(zones) and all(z in values for z in zones)
    if op == "NotIn":
        return not any(z in values for z in zones)
    if op in ("Exists", "DoesNotExist"):
        return bool(zones) == (op == "Exists")
    return False


def _field_matches(expr: Mapping[str, Any], fields: Mapping[str, str]) -> bool:
    """One provider/region requirement as a label requirement on the cluster's fields (Gt/Lt compare integers)."""
    op, values = expr.get("operator", ""), list(expr.get("values") or [])
    if op in ("Gt", "Lt"):
        key = str(expr.get("key") or "")
        try:
            have, want = int(fields[key]), int(values[0])
        except (KeyError, IndexError, ValueError):
            return False
        return have > want if op == "Gt" else have < want
    try:
        return requirement(expr).matches(fields)
    except SelectorError:
        return False


def _field_selector_matches(selector: Mapping[str, Any], cluster: Mapping[str, Any]) -> bool:
    """`fieldSelector.matchExpressions`, ANDed: `zone` through `matchZones`, other keys against the cluster's
    provider and region as labels (so a key Karmada does not extract, e.g. metadata.name, is absent)."""
    spec = cluster.get("spec") or {}
    fields = {k: str(spec[k]) for k in ("provider", "region") if spec.get(k)}
    zones = list(spec.get("zones") or ([spec["zone"]] if spec.get("zone") else []))
    for expr in selector.get("matchExpressions") or []:
        expr = expr or {}
        if expr.get("key") == "zone":
            ok = match_zones(expr.get("operator", ""), list(expr.get("values") or []), zones)
        else:
            ok = _field_matches(expr, fields)
        if not ok:
            return False
    return True


def cluster_matches(cluster: Mapping[str, Any], affinity: Mapping[str, Any] | None) -> bool:
    """`util.ClusterMatches`: exclude list, then label selector, field selector, cluster names."""
    affinity = affinity or {}
    meta = cluster.get("metadata") or {}
    name = meta.get("name", "")
    if name in (affinity.get("exclude") or []):
        return False
    if affinity.get("labelSelector") is not None and not selector_matches(
            affinity["labelSelector"], meta.get("labels") or {}):
        return False
    if affinity.get("fieldSelector") is not None and not _field_selector_matches(affinity["fieldSelector"], cluster):
        return False
    names = affinity.get("clusterNames") or []
    return not names or name in names
