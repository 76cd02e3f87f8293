"""Which PropagationPolicy claims a workload: Karmada's `ResourceSelectorPriority` and the detector's choice.

`ResourceMatches` (pkg/util/selector.go): apiVersion and kind must equal the selector's, the namespace too
when the selector names one; then a selector with a `name` matches by name alone (its labelSelector is
ignored), one without a name matches by its labelSelector (matchLabels and matchExpressions, through
`kubefit.k8s.labels`), and one with neither matches everything of that kind.  The implicit priority of a match
is name > labelSelector > everything.

The detector (`getHighestPriorityPropagationPolicy`) prefers a PropagationPolicy of the workload's
namespace over any ClusterPropagationPolicy; among candidates the higher `spec.priority` wins, then the
higher implicit priority, then the alphabetically smaller name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubefit.k8s.labels import SelectorError, parse_selector

MISMATCH, MATCH_ALL, MATCH_LABEL_SELECTOR, MATCH_NAME = 0, 1, 2, 3


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def selector_priority(resource: Mapping[str, Any], rs: Mapping[str, Any]) -> int:
    """`ResourceSelectorPriority`: MISMATCH, MATCH_ALL, MATCH_LABEL_SELECTOR or MATCH_NAME."""
    meta = resource.get("metadata") or {}
    if resource.get("apiVersion") != rs.get("apiVersion", "") or resource.get("kind") != rs.get("kind", ""):
        return MISMATCH
    if rs.get("namespace") and _namespace(resource) != rs["namespace"]:
        return MISMATCH
    if rs.get("name"):
        return MATCH_NAME if rs["name"] == meta.get("name") else MISMATCH
    if rs.get("labelSelector") is None:
        return MATCH_ALL
    try:
        matched = parse_selector(rs["labelSelector"]).matches(meta.get("labels") or {})
    except SelectorError:
        return MISMATCH
    return MATCH_LABEL_SELECTOR if matched else MISMATCH


def resource_matches(resource: Mapping[str, Any], rs: Mapping[str, Any]) -> bool:
    """`ResourceMatches`."""
    return selector_priority(resource, rs) > MISMATCH


def policy_priority(policy: Mapping[str, Any], resource: Mapping[str, Any]) -> int:
    """`ResourceMatchSelectorsPriority` over the policy's resourceSelectors (MISMATCH when none matches);
    a PropagationPolicy only selects workloads of its own namespace."""
    if policy.get("kind") == "PropagationPolicy" and _namespace(policy) != _namespace(resource):
        return MISMATCH
    selectors = (policy.get("spec") or {}).get("resourceSelectors") or []
    return max((selector_priority(resource, rs or {}) for rs in selectors), default=MISMATCH)


def claiming_policy(policies: Sequence[Mapping[str, Any]], resource: Mapping[str, Any]) -> int | None:
    """Index of the policy Karmada's detector binds the workload with, or None when none selects it."""
    best: tuple[int, tuple[int, int, int, str]] | None = None
    for i, policy in enumerate(policies):
        implicit = policy_priority(policy, resource)
        if implicit == MISMATCH:
            continue
        spec = policy.get("spec") or {}
        key = (0 if policy.get("kind") == "PropagationPolicy" else 1, -int(spec.get("priority") or 0), -implicit,
               str((policy.get("metadata") or {}).get("name") or ""))
        if best is None or key < best[1]:
            best = (i, key)
    return None if best is None else best[0]
