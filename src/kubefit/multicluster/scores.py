"""Karmada's in-tree Score plugins and the per-cluster total `prioritizeClusters` sums.

- ClusterLocality: 100 (MaxClusterScore) for a cluster already in the binding's `spec.clusters`, 0 for
  the others and for every cluster when `spec.clusters` is empty.
- ClusterAffinity: 0 for every cluster (its NormalizeScore changes nothing).

No weights are configured by default (`scorePluginsWeightMap` is empty), so the total is the plain sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubefit.multicluster.filters import target_contains

MIN_CLUSTER_SCORE, MAX_CLUSTER_SCORE = 0, 100


def cluster_locality(spec: Mapping[str, Any], name: str) -> int:
    """ClusterLocality.Score."""
    if not spec.get("clusters"):
        return MIN_CLUSTER_SCORE
    return MAX_CLUSTER_SCORE if target_contains(spec, name) else MIN_CLUSTER_SCORE


def cluster_affinity(_spec: Mapping[str, Any], _name: str) -> int:
    """ClusterAffinity.Score: always MinClusterScore."""
    return MIN_CLUSTER_SCORE


SCORES = (("ClusterLocality", cluster_locality), ("ClusterAffinity", cluster_affinity))


def prioritize(spec: Mapping[str, Any], names: Sequence[str]) -> dict[str, int]:
    """`prioritizeClusters`: each feasible cluster's summed score."""
    return {n: sum(score(spec, n) for _, score in SCORES) for n in names}
