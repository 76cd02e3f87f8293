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
refused with its messages. `minReplicas: 0` depends on the version: the API server accepts it while HPAScaleToZero
is on (beta and on from v1.37, kubernetes#139648; alpha before), and then only beside an Object or External metric
(`validateMetrics`); the scenario loads for every version, and the version answered for refuses it or not, in
its words (`load.GatedRefusal`, checked when the scenario is prepared).
"""

from __future__ import annotations

from typing import Any

from kubefit.errors import InputError
from kubefit.k8s.validation import FORBIDDEN, INVALID, REQUIRED, FieldError, aggregate
from kubefit.manifests.documents import Document
from kubefit.manifests.load import GatedRefusal, Scenario

HPA = "HorizontalPodAutoscaler"
VERSIONS = ("autoscaling/v1", "autoscaling/v2")  # the versions kube-apiserver v1.34 serves
SCALED_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")
MIN_REPLICAS_LOWER_BOUND = 1  # without the HPAScaleToZero feature gate (alpha, off up to v1.36)
SCALE_TO_ZERO_GATE = "HPAScaleToZero"  # the registry strategy's MinReplicasLowerBound is 0 while it is on
SCALE_TO_ZERO_SOURCES = ("Object", "External")  # validateMetrics: the metrics a scale to zero needs


def _int(value: Any, doc: Document, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be an integer, got {value!r}", file=doc.source, obj=doc.label, field=field)
    return value


def _spec_errors(doc: Document, low: int | None, high: int, lower_bound: int) -> list[FieldError]:
    """`validateHorizontalPodAutoscalerSpec` of the fields kubefit reads, with the registry's lower bound of
    `minReplicas` (1, or 0 with HPAScaleToZero); the metrics rule of a scale to zero (`validateMetrics`) when the
    target reference is valid, as upstream checks the metrics only then."""
    spec = doc.body.get("spec") if isinstance(doc.body.get("spec"), dict) else {}
    ref = spec.get("scaleTargetRef") if isinstance(spec.get("scaleTargetRef"), dict) else {}
    errors = []
    if low is not None and low < lower_bound:
        errors.append(FieldError("spec.minReplicas", INVALID, low, f"must be greater than or equal to {lower_bound}"))
    if high < 1:
        errors.append(FieldError("spec.maxReplicas", INVALID, high, "must be greater than 0"))
    if low is not None and high < low:
        errors.append(FieldError("spec.maxReplicas", INVALID, high, "must be greater than or equal to `minReplicas`"))
    missing = [FieldError(f"spec.scaleTargetRef.{k}", REQUIRED) for k in ("kind", "name") if not ref.get(k)]
    metrics = spec.get("metrics") if isinstance(spec.get("metrics"), list) else []
    if missing:
        errors += missing
    elif low == 0 and not any(isinstance(m, dict) and m.get("type") in SCALE_TO_ZERO_SOURCES for m in metrics):
        errors.append(FieldError("spec.metrics", FORBIDDEN, None, "must specify at least one Object or External "
                                                                   "metric to support scaling to zero replicas"))
    return errors


def bounds(doc: Document, refusals: list[GatedRefusal] | None = None) -> tuple[str, str, int, int]:
    """An HPA's target (kind, name), `minReplicas` (default 1) and `maxReplicas`, validated as the API server
    validates them. A `minReplicas: 0` the answer depends on the version for is added to `refusals` (what the API
    server says with HPAScaleToZero off, and on); one no version accepts is refused at once."""
    if doc.body.get("apiVersion") not in VERSIONS:
        raise InputError(f"unsupported apiVersion {doc.body.get('apiVersion')!r} for {HPA} (expected one of "
                         f"{', '.join(VERSIONS)})", file=doc.source, obj=doc.label, field="apiVersion")
    spec = doc.body.get("spec") if isinstance(doc.body.get("spec"), dict) else {}
    ref = spec.get("scaleTargetRef") if isinstance(spec.get("scaleTargetRef"), dict) else {}
    low = _int(spec.get("minReplicas"), doc, "spec.minReplicas")
    high = _int(spec.get("maxReplicas"), doc, "spec.maxReplicas") or 0
    off, on = (_spec_errors(doc, low, high, bound) for bound in (MIN_REPLICAS_LOWER_BOUND, 0))
    if off == on and off:  # the same refusal whatever the gate: at once
        raise InputError(aggregate(off), file=doc.source, obj=doc.label)
    if off != on and refusals is not None:  # a negative or zero minReplicas: the version decides
        refusals.append(GatedRefusal(SCALE_TO_ZERO_GATE, *(
            InputError(aggregate(errors), file=doc.source, obj=doc.label) if errors else None for errors in (off, on))))
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
        kind, name, low, high = bounds(doc, scenario.gated_refusals)
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
