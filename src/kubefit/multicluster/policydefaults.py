"""What Karmada's PropagationPolicy mutating webhook sets before the detector builds a binding.

- `SetDefaultSpreadConstraints`: a constraint with neither spreadByField nor spreadByLabel spreads by
  `cluster`; minGroups 0 becomes 1.
- `AddTolerations`: `cluster.karmada.io/not-ready` and `cluster.karmada.io/unreachable`, operator Exists,
  effect NoExecute, tolerationSeconds 300 (the webhook's default flags), unless an equal toleration is there.
- `SetReplicaDivisionPreferenceWeighted`: Divided without a division preference becomes Weighted.

A ResourceBinding read from a file is taken as it is (it already went through the webhook).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

DEFAULT_TOLERATION_SECONDS = 300
WEBHOOK_TOLERATIONS = tuple({"key": key, "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
                            for key in ("cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"))


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """`Toleration.MatchToleration`: key, operator, value and effect equal."""
    return all((a.get(f) or "") == (b.get(f) or "") for f in ("key", "operator", "value", "effect"))


def webhook_defaults(placement: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the policy's placement with the mutating webhook's defaults applied."""
    out = copy.deepcopy(dict(placement))
    for sc in out.get("spreadConstraints") or []:
        if isinstance(sc, dict):
            if not sc.get("spreadByField") and not sc.get("spreadByLabel"):
                sc["spreadByField"] = "cluster"
            if not sc.get("minGroups"):
                sc["minGroups"] = 1
    tolerations = [t for t in out.get("clusterTolerations") or [] if isinstance(t, dict)]
    for t in WEBHOOK_TOLERATIONS:
        if not any(_same(have, t) for have in tolerations):
            tolerations.append(dict(t))
    out["clusterTolerations"] = tolerations
    rs = out.get("replicaScheduling")
    if isinstance(rs, dict) and rs.get("replicaSchedulingType") == "Divided" and not rs.get("replicaDivisionPreference"):
        rs["replicaDivisionPreference"] = "Weighted"
    return out
