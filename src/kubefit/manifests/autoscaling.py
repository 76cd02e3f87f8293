"""The HorizontalPodAutoscaler controller's bounds on its target's replicas, which it applies at once.

`reconcileAutoscaler` (pkg/controller/podautoscaler/horizontal.go) reads the target's `spec.replicas`
through its scale subresource and, before any metric is read, scales a target above `maxReplicas` down to
it ("Current number of replicas above Spec.MaxReplicas") and one below `minReplicas` (default 1) up to it
("Current number of replicas below Spec.MinReplicas"); a target of 0 replicas is left alone ("scaling is
disabled since the replica count of the target is zero"). A Helm chart with autoscaling on renders its
Deployment without `replicas` (1) beside an HPA of `minReplicas: 3`: the cluster runs 3. kubefit applies
these bounds to the scenario's Deployments, ReplicaSets, StatefulSets and ReplicationControllers before
their controllers create pods; what the HPA's metrics would ask for later is not evaluated (the skipped
objects' note says so).

An HPA the API server refuses (`validateHorizontalPodAutoscalerSpec`, pkg/apis/autoscaling/validation) is
refused with its messages.
"""

from __future__ import annotations

from typing import Any

from kubefit.errors import InputError
from kubefit.k8s.validation import INVALID, REQUIRED, FieldError, aggregate
from kubefit.manifests.documents import Document
from kubefit.manifests.load import Scenario

HPA = "HorizontalPodAutoscaler"
VERSIONS = ("autoscaling/v1", "autoscaling/v2")  # the versions kube-apiserver v1.34 serves
SCALED_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")
MIN_REPLICAS_LOWER_BOUND = 1  # without the HPAScaleToZero feature gate (alpha, off)


def _int(value: Any, doc: Document, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be an integer, got {value!r}", file=doc.source, obj=doc.label, field=field)
    return value


def bounds(doc: Document) -> tuple[str, str, int, int]:
    """An HPA's target (kind, name), `minReplicas` (default 1) and `maxReplicas`, validated as the API server
    validates them."""
    if doc.body.get("apiVersion") not in VERSIONS:
        raise InputError(f"unsupported apiVersion {doc.body.get('apiVersion')!r} for {HPA} (expected one of "
                         f"{', '.join(VERSIONS)})", file=doc.source, obj=doc.label, field="apiVersion")
    spec = doc.body.get("spec") if isinstance(doc.body.get("spec"), dict) else {}
    ref = spec.get("scaleTargetRef") if isinstance(spec.get("scaleTargetRef"), dict) else {}
    low = _int(spec.get("minReplicas"), doc, "spec.minReplicas")
    high = _int(spec.get("maxReplicas"), doc, "spec.maxReplicas") or 0
    errors = []
    if low is not None and low < MIN_REPLICAS_LOWER_BOUND:
        errors.append(FieldError("spec.minReplicas", INVALID, low,
                                 f"must be greater than or equal to {MIN_REPLICAS_LOWER_BOUND}"))
    if high < 1:
        errors.append(FieldError("spec.maxReplicas", INVALID, high, "must be greater than 0"))
    if low is not None and high < low:
        errors.append(FieldError("spec.maxReplicas", INVALID, high, "must be greater than or equal to `minReplicas`"))
    errors += [FieldError(f"spec.scaleTargetRef.{k}", REQUIRED) for k in ("kind", "name") if not ref.get(k)]
    if errors:
        raise InputError(aggregate(errors), file=doc.source, obj=doc.label)
    return str(ref["kind"]), str(ref["name"]), 1 if low is None else low, high


def _namespace(doc: Document) -> str:
    meta = doc.body.get("metadata")
    return str((meta or {}).get("namespace") or "default") if isinstance(meta, dict) else "default"


def apply_replica_bounds(scenario: Scenario) -> list[str]:
    """Scale each HPA's target in the scenario into [minReplicas, maxReplicas] as the HPA controller does
    (its `spec.replicas` rewritten, as the scale subresource writes it); one note naming what changed."""
    targets = {(d.kind, _namespace(d), d.name): d for d in scenario.workloads if d.kind in SCALED_KINDS}
    changed = []
    for doc in (d for d in scenario.skipped if d.kind == HPA):
        kind, name, low, high = bounds(doc)
        target = targets.get((kind, _namespace(doc), name))
        spec = target.body.get("spec") if target is not None else None
        if not isinstance(spec, dict):
            continue  # no such workload here (or one its controller refuses: named when expanded)
        current = spec.get("replicas", 1)
        if isinstance(current, bool) or not isinstance(current, int) or current == 0:
            continue  # a bad value is refused when expanded; 0: scaling disabled
        wanted = high if current > high else low if current < low else current
        if wanted != current:
            spec["replicas"] = wanted
            changed.append(f"{target.label} {current} → {wanted} ({doc.label})")
    if not changed:
        return []
    shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
    return [f"HorizontalPodAutoscaler controller: replicas scaled into [minReplicas, maxReplicas] at once, before "
            f"any metric is read: {shown}"]
