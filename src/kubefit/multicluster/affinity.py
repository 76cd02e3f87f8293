"""Karmada's `util.ClusterMatches`: whether a Cluster satisfies a ClusterAffinity (exclude, labels, fields, names).

Used by the ClusterAffinity filter and by StaticWeight's `targetCluster` rules.  Label selectors go through
`kubefit.labels` (a malformed one matches nothing, as `LabelSelectorAsSelector`'s error does in Karmada).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubefit.labels import selector_matches


def _field_selector_matches(selector: Mapping[str, Any], cluster: Mapping[str, Any]) -> bool:
    spec = cluster.get("spec") or {}
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if key == "zone":
            have = list(spec.get("zones") or ([spec["zone"]] if spec.get("zone") else []))
        elif key in ("provider", "region"):
            have = [spec[key]] if spec.get(key) else []
        else:
            return False
        if op == "In":
            ok = bool(have) and all(h in values for h in have)
        elif op == "NotIn":
            ok = not any(h in values for h in have)
        else:
            return False
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
