"""VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint objects (`autoscaling.k8s.io/v1`), decoded strictly.

The types are kubernetes/autoscaler `vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1/types.go`
(vertical-pod-autoscaler/v1.7.1): a field the CRD does not have is refused by name, and so is what the VPA
admission webhook refuses (`pkg/admission-controller/resource/vpa/validation.go` `validateVPA`, its messages):
an unknown `updateMode` or container `mode`, an `updatePolicy` without `updateMode`, a container policy without
`containerName`, `maxAllowed` below `minAllowed`, a cpu bound finer than a millicore or a memory bound finer than
a byte, more than one recommender. A recommendation below zero is refused too (the recommender never writes one).

A checkpoint (what the recommender writes every minute, `model/aggregate_container_state.go` `SaveToCheckpoint`)
holds the decayed cpu and memory histograms of one container of one VPA; it is loaded as the recommender loads it
(`LoadFromCheckpoint`, version `v3` only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubefit.errors import InputError
from kubefit.k8s.validation import FieldError, not_supported
from kubefit.manifests.decode import Complete, check_shape, decode_quantities, fail
from kubefit.manifests.documents import Document
from kubefit.manifests.usage.histogram import CPU_OPTIONS, MEMORY_OPTIONS, CheckpointError, Histogram

API_VERSION = "autoscaling.k8s.io/v1"
VPA_KIND, CHECKPOINT_KIND = "VerticalPodAutoscaler", "VerticalPodAutoscalerCheckpoint"
KINDS = (VPA_KIND, CHECKPOINT_KIND, f"{VPA_KIND}List", f"{CHECKPOINT_KIND}List")
UPDATE_MODES = ("Auto", "InPlace", "InPlaceOrRecreate", "Initial", "Off", "Recreate")  # GetUpdateModes
LISTED_UPDATE_MODES = tuple(m for m in UPDATE_MODES if m != "Auto")  # GetUpdateModesList: sorted, Auto deprecated
SCALING_MODES = ("Auto", "Off")
CONTROLLED_VALUES = ("RequestsAndLimits", "RequestsOnly")
REQUESTS_AND_LIMITS, REQUESTS_ONLY = CONTROLLED_VALUES
DEFAULT_POLICY = "*"  # DefaultContainerResourcePolicy
SUPPORTED_CHECKPOINT_VERSION = "v3"  # model.SupportedCheckpointVersion
NANO = 10**9

_META = {"name": str, "namespace": str, "creationTimestamp": object, "labels": dict, "annotations": dict}
_BOOST = Complete({"cpu": Complete({"type": str, "factor": int, "quantity": object, "durationSeconds": int})})
_POLICY = Complete({"containerName": str, "mode": str, "minAllowed": dict, "maxAllowed": dict,
                    "controlledResources": [str], "controlledValues": str, "oomBumpUpRatio": object,
                    "oomMinBumpUp": object, "memoryAggregationIntervalSeconds": int,
                    "memoryAggregationIntervalCount": int, "startupBoost": _BOOST})
_RECOMMENDATION = Complete({"containerName": str, "target": dict, "lowerBound": dict, "upperBound": dict,
                            "uncappedTarget": dict})
_VPA_SHAPE = Complete({
    "apiVersion": str, "kind": str, "metadata": _META,
    "spec": Complete({
        "targetRef": Complete({"apiVersion": str, "kind": str, "name": str}),
        "updatePolicy": Complete({"updateMode": str, "minReplicas": int,
                                  "evictionRequirements": [Complete({"resources": [str], "changeRequirement": str})],
                                  "evictAfterOOMSeconds": int}),
        "resourcePolicy": Complete({"containerPolicies": [_POLICY]}),
        "recommenders": [Complete({"name": str})],
        "startupBoost": _BOOST}),
    "status": Complete({"recommendation": Complete({"containerRecommendations": [_RECOMMENDATION]}),
                        "conditions": [Complete({"type": str, "status": str, "lastTransitionTime": object,
                                                 "reason": str, "message": str, "observedGeneration": int})],
                        "observedGeneration": int})})
_HISTOGRAM = Complete({"referenceTimestamp": object, "bucketWeights": dict, "totalWeight": object})
_CHECKPOINT_SHAPE = Complete({
    "apiVersion": str, "kind": str, "metadata": _META,
    "spec": Complete({"vpaObjectName": str, "containerName": str}),
    "status": Complete({"lastUpdateTime": object, "version": str, "cpuHistogram": _HISTOGRAM,
                        "memoryHistogram": _HISTOGRAM, "firstSampleStart": object, "lastSampleStart": object,
                        "totalSamplesCount": int})})


@dataclass(frozen=True)
class ContainerPolicy:
    """`ContainerResourcePolicy` (quantities in nano-units)."""

    container_name: str
    mode: str | None = None
    min_allowed: dict[str, int] = field(default_factory=dict)
    max_allowed: dict[str, int] = field(default_factory=dict)
    controlled_resources: tuple[str, ...] | None = None
    controlled_values: str | None = None


@dataclass(frozen=True)
class ContainerRecommendation:
    """`RecommendedContainerResources` (quantities in nano-units)."""

    container_name: str
    target: dict[str, int]
    lower_bound: dict[str, int] = field(default_factory=dict)
    upper_bound: dict[str, int] = field(default_factory=dict)
    uncapped_target: dict[str, int] = field(default_factory=dict)


@dataclass
class VerticalPodAutoscaler:
    """What the admission controller and kubefit read of a VPA."""

    namespace: str
    name: str
    target_kind: str
    target_name: str
    update_mode: str | None  # None: no updatePolicy (GetUpdateMode: Recreate)
    policies: tuple[ContainerPolicy, ...] = ()
    recommendations: tuple[ContainerRecommendation, ...] | None = None  # None: no status.recommendation
    created: float | None = None
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def mode(self) -> str:
        """`GetUpdateMode`: the update mode, Recreate when none is set."""
        return self.update_mode or "Recreate"

    def policy(self, container: str) -> ContainerPolicy | None:
        """`GetContainerResourcePolicy`: the container's own policy, else the `*` one, else None."""
        default = None
        for p in self.policies:
            if p.container_name == container:
                return p
            if p.container_name == DEFAULT_POLICY:
                default = p
        return default

    def controlled_values(self, container: str) -> str:
        """`GetContainerControlledValues`: RequestsAndLimits unless the container's policy says otherwise."""
        p = self.policy(container)
        return p.controlled_values if p is not None and p.controlled_values else REQUESTS_AND_LIMITS


@dataclass
class Checkpoint:
    """A `VerticalPodAutoscalerCheckpoint` loaded: the VPA and container it is of, its two histograms and the
    sample span the recommender's confidence is computed from."""

    namespace: str
    name: str
    vpa_name: str
    container_name: str
    cpu: Histogram
    memory: Histogram
    first_sample_start: float | None
    last_sample_start: float | None
    total_samples: int
    source: str = ""


def check_object(doc: Document, shape: Complete) -> None:
    """`check_shape` of a whole object: its top-level fields (an unknown one refused by name), then each one's."""
    unknown = sorted(str(k) for k in doc.body if k not in shape)
    if unknown:
        raise fail(doc, unknown[0], f"unknown field {unknown[0]!r}")
    for key, sub in shape.items():
        if sub is not object and key in doc.body:
            check_shape(doc.body[key], sub, doc, key)


def decode_vpa(doc: Document) -> VerticalPodAutoscaler:
    """A VerticalPodAutoscaler document → `VerticalPodAutoscaler` (see the module's docstring)."""
    _check_api_version(doc)
    check_object(doc, _VPA_SHAPE)
    meta, spec, status = (doc.body.get(k) or {} for k in ("metadata", "spec", "status"))
    target = spec.get("targetRef")
    errors: list[FieldError] = []
    if target is None:
        errors.append(FieldError("spec.targetRef", "Required value", detail="If you're using v1beta1 version of the "
                                 "API, please migrate to v1"))
    update = spec.get("updatePolicy")
    mode = None
    if update is not None:
        mode = update.get("updateMode")
        if mode is None:
            errors.append(FieldError("spec.updatePolicy.updateMode", "Required value",
                                     detail="updateMode is required if UpdatePolicy is used"))
        elif mode not in UPDATE_MODES:
            errors.append(not_supported("spec.updatePolicy.updateMode", mode, LISTED_UPDATE_MODES))
        replicas = update.get("minReplicas")
        if replicas is not None and replicas <= 0:
            errors.append(FieldError("spec.updatePolicy.minReplicas", "Invalid value", replicas,
                                     "minReplicas has to be positive"))
    if len(spec.get("recommenders") or []) > 1:
        errors.append(FieldError("spec.recommenders", "Too many", len(spec["recommenders"]),
                                 "must have at most 1 items"))
    policies = tuple(_policy(doc, i, p, errors) for i, p in enumerate(
        (spec.get("resourcePolicy") or {}).get("containerPolicies") or []))
    if errors:
        raise fail(doc, errors[0].path, errors[0].body())
    recommendation = status.get("recommendation")
    recs = None if recommendation is None else tuple(
        _recommendation(doc, i, r) for i, r in enumerate(recommendation.get("containerRecommendations") or []))
    return VerticalPodAutoscaler(
        namespace=meta.get("namespace") or "default", name=meta.get("name") or "", target_kind=target.get("kind") or "",
        target_name=target.get("name") or "", update_mode=mode, policies=policies, recommendations=recs,
        created=_time(doc, "metadata.creationTimestamp", meta.get("creationTimestamp")), source=doc.source)


def _policy(doc: Document, i: int, raw: dict[str, Any], errors: list[FieldError]) -> ContainerPolicy:
    """One `containerPolicies[]` entry, checked as `validateVPASpecResourcePolicy` checks it."""
    path = f"spec.resourcePolicy.containerPolicies[{i}]"
    name = raw.get("containerName") or ""
    if not name:
        errors.append(FieldError(f"{path}.containerName", "Required value"))
    mode = raw.get("mode")
    if mode is not None and mode not in SCALING_MODES:
        errors.append(not_supported(f"{path}.mode", mode, SCALING_MODES))
    bounds = {}
    for key in ("minAllowed", "maxAllowed"):
        quantities = decode_quantities(raw.get(key), doc, f"{path}.{key}") or {}
        for resource, q in quantities.items():
            errors += _resolution(f"{path}.{key}[{resource}]", resource, q.text, q.nanos)
        bounds[key] = {r: q.nanos for r, q in quantities.items()}
    for resource, low in bounds["minAllowed"].items():
        high = bounds["maxAllowed"].get(resource)
        if high is not None and high < low:
            texts = {k: (raw.get(k) or {}).get(resource) for k in ("minAllowed", "maxAllowed")}
            errors.append(FieldError(f"{path}.maxAllowed[{resource}]", "Invalid value", str(texts["maxAllowed"]),
                                     f'max resource for {resource} is lower than min of "{texts["minAllowed"]}"'))
    values = raw.get("controlledValues")
    if values is not None and values not in CONTROLLED_VALUES:
        errors.append(not_supported(f"{path}.controlledValues", values, CONTROLLED_VALUES))
    if mode == "Off" and values == REQUESTS_AND_LIMITS:
        errors.append(FieldError(f"{path}.controlledValues", "Forbidden",
                                 detail="controlledValues shouldn't be specified if container scaling mode is off"))
    controlled = raw.get("controlledResources")
    return ContainerPolicy(name, mode, bounds["minAllowed"], bounds["maxAllowed"],
                           None if controlled is None else tuple(controlled), values)


def _resolution(path: str, resource: str, text: str, nanos: int) -> list[FieldError]:
    """`validateResourceResolution`: cpu in whole millicores, memory in whole bytes."""
    if resource == "cpu" and nanos % 10**6:
        return [FieldError(path, "Invalid value", text, "must be a whole number of milli CPUs")]
    if resource == "memory" and nanos % NANO:
        return [FieldError(path, "Invalid value", text, "must be a whole number of bytes")]
    return []


def _recommendation(doc: Document, i: int, raw: dict[str, Any]) -> ContainerRecommendation:
    """One `containerRecommendations[]` entry; a negative quantity is refused."""
    path = f"status.recommendation.containerRecommendations[{i}]"
    lists = {}
    for key in ("target", "lowerBound", "upperBound", "uncappedTarget"):
        quantities = decode_quantities(raw.get(key), doc, f"{path}.{key}") or {}
        for resource, q in quantities.items():
            if q.nanos < 0:
                raise fail(doc, f"{path}.{key}.{resource}", f"a recommendation below zero ({q.text}): the "
                           f"recommender never writes one")
        lists[key] = {r: q.nanos for r, q in quantities.items()}
    if "target" not in raw:
        raise fail(doc, f"{path}.target", "Required value")
    return ContainerRecommendation(raw.get("containerName") or "", lists["target"], lists["lowerBound"],
                                   lists["upperBound"], lists["uncappedTarget"])


def decode_checkpoint(doc: Document) -> Checkpoint:
    """A VerticalPodAutoscalerCheckpoint document → `Checkpoint`, its histograms loaded as `LoadFromCheckpoint`
    loads them (a version other than v3 is refused with the recommender's message)."""
    _check_api_version(doc)
    check_object(doc, _CHECKPOINT_SHAPE)
    meta, spec, status = (doc.body.get(k) or {} for k in ("metadata", "spec", "status"))
    version = status.get("version") or ""
    if version != SUPPORTED_CHECKPOINT_VERSION:
        raise fail(doc, "status.version", f"unsupported checkpoint version {version}")
    for key in ("vpaObjectName", "containerName"):
        if not spec.get(key):
            raise fail(doc, f"spec.{key}", "Required value: the VPA and container the checkpoint is of")
    histograms = {key: _histogram(doc, key, status.get(key) or {}, options)
                  for key, options in (("cpuHistogram", CPU_OPTIONS), ("memoryHistogram", MEMORY_OPTIONS))}
    return Checkpoint(meta.get("namespace") or "default", meta.get("name") or "", spec["vpaObjectName"],
                      spec["containerName"], histograms["cpuHistogram"], histograms["memoryHistogram"],
                      _time(doc, "status.firstSampleStart", status.get("firstSampleStart")),
                      _time(doc, "status.lastSampleStart", status.get("lastSampleStart")),
                      int(status.get("totalSamplesCount") or 0), doc.source)


def _histogram(doc: Document, key: str, raw: dict[str, Any], options: Any) -> Histogram:
    """A `HistogramCheckpoint`: bucket weights (`map[int]uint32`, keys as JSON writes them: strings of integers)
    and the total weight."""
    path = f"status.{key}"
    weights: dict[int, int] = {}
    for bucket, weight in (raw.get("bucketWeights") or {}).items():
        try:
            index = int(bucket)
        except (TypeError, ValueError):
            raise fail(doc, f"{path}.bucketWeights", f"bucket {bucket!r} is not an integer") from None
        if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight < 2**32:
            raise fail(doc, f"{path}.bucketWeights.{bucket}", f"a bucket weight is a uint32, got {weight!r}")
        weights[index] = weight
    total = raw.get("totalWeight", 0)
    if isinstance(total, bool) or not isinstance(total, int | float):
        raise fail(doc, f"{path}.totalWeight", f"must be a number, got {total!r}")
    try:
        return Histogram.from_checkpoint(options, weights, float(total))
    except CheckpointError as exc:
        raise fail(doc, path, str(exc)) from None


def _time(doc: Document, path: str, raw: Any) -> float | None:
    """A `metav1.Time` (RFC 3339) as seconds since the epoch; null is None."""
    if raw is None:
        return None
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise fail(doc, path, f"must be an RFC 3339 time, got {raw!r}") from None


def _check_api_version(doc: Document) -> None:
    version = doc.body.get("apiVersion")
    if version != API_VERSION:
        detail = ("v1beta2 is served no more by the VPA (migrate to v1)" if isinstance(version, str)
                  and version.startswith("autoscaling.k8s.io/") else f"expected {API_VERSION!r}")
        raise InputError(f"unsupported apiVersion {version!r} for {doc.kind} ({detail})", file=doc.source,
                         obj=doc.label, field="apiVersion")
