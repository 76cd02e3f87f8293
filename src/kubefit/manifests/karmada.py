"""Karmada manifests → typed objects (`kubefit.api.karmada`): Cluster (cluster.karmada.io/v1alpha1) and
ResourceBinding (work.karmada.io/v1alpha2), strictly, as Karmada's API server decodes them."""

from __future__ import annotations

import functools
from typing import Any

import orjson

from kubefit.api.karmada import (
    BINDING_API_VERSION,
    CLUSTER_API_VERSION,
    AllocatableModeling,
    Cluster,
    ResourceBinding,
    ResourceModel,
    ResourceModelRange,
    ResourceSummary,
)
from kubefit.manifests.decode import (
    Complete,
    check_fields,
    check_shape,
    decode_quantities,
    decode_quantity,
    integer,
)
from kubefit.manifests.decode import fail as _fail
from kubefit.manifests.decode import mapping as _mapping
from kubefit.manifests.decode import sequence as _list
from kubefit.manifests.documents import Document
from kubefit.manifests.load import METADATA_FIELDS, OBJECT_FIELDS


def _as_document(doc: Document | dict[str, Any], source: str = "<input>") -> Document:
    return doc if isinstance(doc, Document) else Document(doc, source, 1)


_MODELS: dict[bytes, tuple[ResourceModel, ...]] = {}  # spec.resourceModels (JSON) → decoded, shared
_SHARED: dict[int, tuple[list[Any], tuple[ResourceModel, ...] | None]] = {}  # `share_models`' lists, decoded


def share_models(models: list[Any]) -> None:
    """Say that `models` (a read Cluster's spec.resourceModels) is the one list of the Clusters of a file
    that hold equal ones (`manifests.stream`): decoded once, then known by identity."""
    if len(_SHARED) < 256:
        _SHARED[id(models)] = (models, None)  # (the list kept: its id stays its own)


def decode_resource_models(value: Any, doc: Document, field_path: str = "spec.resourceModels"
                           ) -> tuple[ResourceModel, ...]:
    """`spec.resourceModels` → ResourceModel tuple, in the order given; models given before (their exact
    JSON: a fleet's clusters share a few sets) are not decoded again, nor their JSON written again where
    it is a shared list (`share_models`)."""
    shared = _SHARED.get(id(value))
    if shared is not None and shared[0] is value and shared[1] is not None:
        return shared[1]
    try:
        key = orjson.dumps(value)
    except TypeError:
        return _decode_resource_models(value, doc, field_path)
    known = _MODELS.get(key)
    if known is None:
        known = _decode_resource_models(value, doc, field_path)
        if len(_MODELS) < 256:
            _MODELS[key] = known
    if shared is not None and shared[0] is value:
        _SHARED[id(value)] = (value, known)
    return known


def _check_kind(doc: Document, kind: str, api_version: str) -> None:
    if doc.body.get("kind", kind) != kind:
        raise _fail(doc, "kind", f"expected kind {kind!r}, got {doc.body.get('kind')!r}")
    version = doc.body.get("apiVersion", api_version)
    if version != api_version:
        raise _fail(doc, "apiVersion", f"unsupported apiVersion {version!r} for {kind} (expected {api_version!r})")


def _name(doc: Document, required: bool = True) -> str:
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    name = meta.get("name", "")
    if not isinstance(name, str) or (required and not name):
        raise _fail(doc, "metadata.name", "a name is required")
    return name


# --------------------------------------------------------------------------- Cluster

def _decode_resource_models(value: Any, doc: Document, field_path: str) -> tuple[ResourceModel, ...]:
    models = []
    for i, raw in enumerate(_list(value, doc, field_path)):
        where = f"{field_path}[{i}]"
        model = _mapping(raw, doc, where)
        unknown = sorted(set(model) - {"grade", "ranges"})
        if unknown:
            raise _fail(doc, f"{where}.{unknown[0]}", "unknown field (a model has grade and ranges)")
        ranges = []
        for j, r in enumerate(_list(model.get("ranges"), doc, f"{where}.ranges")):
            rwhere = f"{where}.ranges[{j}]"
            rng = _mapping(r, doc, rwhere)
            unknown = sorted(set(rng) - {"name", "min", "max"})
            if unknown:
                raise _fail(doc, f"{rwhere}.{unknown[0]}", "unknown field (a range has name, min and max)")
            name = rng.get("name", "")
            if not isinstance(name, str):
                raise _fail(doc, f"{rwhere}.name", f"must be a string, got {name!r}")
            for key in ("min", "max"):
                if key not in rng:
                    raise _fail(doc, f"{rwhere}.{key}", "is required")
            ranges.append(ResourceModelRange(name, decode_quantity(rng["min"], doc, f"{rwhere}.min"),
                                             decode_quantity(rng["max"], doc, f"{rwhere}.max")))
        models.append(ResourceModel(integer(model.get("grade", 0), doc, f"{where}.grade", default=None), tuple(ranges)))
    return tuple(models)


def decode_resource_summary(value: Any, doc: Document, field_path: str = "status.resourceSummary"
                            ) -> ResourceSummary | None:
    """`status.resourceSummary` → ResourceSummary (None when absent)."""
    if value is None:
        return None
    summary = _mapping(value, doc, field_path)
    check_fields(summary, RESOURCE_SUMMARY_FIELDS, doc, field_path)
    modelings = []
    for i, raw in enumerate(_list(summary.get("allocatableModelings"), doc, f"{field_path}.allocatableModelings")):
        if type(raw) is dict and len(raw) == 2 and type(raw.get("grade")) is int and type(raw.get("count")) is int:
            modelings.append(_modeling(raw["grade"], raw["count"]))  # the usual case, no field path written
            continue
        where = f"{field_path}.allocatableModelings[{i}]"
        m = _mapping(raw, doc, where)
        check_fields(m, MODELING_FIELDS, doc, where)
        modelings.append(AllocatableModeling(integer(m.get("grade", 0), doc, f"{where}.grade", default=None),
                                             integer(m.get("count", 0), doc, f"{where}.count", default=None)))
    return ResourceSummary(
        allocatable=decode_quantities(summary.get("allocatable"), doc, f"{field_path}.allocatable"),
        allocated=decode_quantities(summary.get("allocated"), doc, f"{field_path}.allocated"),
        allocating=decode_quantities(summary.get("allocating"), doc, f"{field_path}.allocating"),
        allocatable_modelings=tuple(modelings),
    )


MODELING_FIELDS = frozenset({"grade", "count"})


@functools.lru_cache(maxsize=4096)
def _modeling(grade: int, count: int) -> AllocatableModeling:
    """One AllocatableModeling per (grade, count): a fleet's summaries repeat them (the objects are frozen)."""
    return AllocatableModeling(grade, count)


# ClusterSpec (cluster.karmada.io/v1alpha1) fields; kubefit reads few of them but refuses typos.
CLUSTER_SPEC_FIELDS = frozenset({
    "id", "syncMode", "apiEndpoint", "secretRef", "impersonatorSecretRef", "insecureSkipTLSVerification",
    "proxyURL", "proxyHeader", "provider", "region", "zone", "zones", "taints", "resourceModels"})
CLUSTER_STATUS_FIELDS = frozenset({
    "kubernetesVersion", "apiEnablements", "conditions", "nodeSummary", "resourceSummary", "remedyActions"})
# The parts of ClusterSpec / ClusterStatus Karmada's filters read (TaintToleration, APIEnablement), typed.
CLUSTER_SPEC_SHAPE = {"taints": [Complete({"key": str, "value": str, "effect": str, "timeAdded": str})]}
CLUSTER_STATUS_SHAPE = {"apiEnablements": [Complete({"groupVersion": str,
                                                     "resources": [Complete({"name": str, "kind": str})]})]}
RESOURCE_SUMMARY_FIELDS = frozenset({"allocatable", "allocating", "allocated", "allocatableModelings"})
# ResourceBinding (work.karmada.io/v1alpha2) fields, as Karmada's strict decoding knows them.
BINDING_SPEC_FIELDS = frozenset({
    "resource", "propagateDeps", "replicaRequirements", "replicas", "clusters", "placement",
    "gracefulEvictionTasks", "requiredBy", "schedulerName", "failover", "conflictResolution",
    "rescheduleTriggeredAt", "suspension", "preserveResourcesOnDeletion", "components", "schedulePriority"})
BINDING_STATUS_FIELDS = frozenset({
    "schedulerObservedGeneration", "schedulerObservingAffinityName", "lastScheduledTime", "conditions",
    "aggregatedStatus"})
OBJECT_REFERENCE_FIELDS = frozenset({"apiVersion", "kind", "namespace", "name", "uid", "resourceVersion"})
REPLICA_REQUIREMENTS_FIELDS = frozenset({"nodeClaim", "resourceRequest", "namespace", "priorityClassName"})


def decode_cluster(doc: Document | dict[str, Any], *, require_name: bool = True) -> Cluster:
    """A `Cluster` document → Cluster; bad input → InputError with file/object/field."""
    doc = _as_document(doc)
    _check_kind(doc, "Cluster", CLUSTER_API_VERSION)
    name = _name(doc, require_name)
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    spec = _mapping(doc.body.get("spec"), doc, "spec")
    status = _mapping(doc.body.get("status"), doc, "status")
    for part, value, known in (("", doc.body, OBJECT_FIELDS), ("metadata", meta, METADATA_FIELDS),
                               ("spec", spec, CLUSTER_SPEC_FIELDS), ("status", status, CLUSTER_STATUS_FIELDS)):
        check_fields(value, known, doc, part)
    check_shape(spec, CLUSTER_SPEC_SHAPE, doc, "spec")
    check_shape(status, CLUSTER_STATUS_SHAPE, doc, "status")
    labels = {str(k): str(v) for k, v in _mapping(meta.get("labels"), doc, "metadata.labels").items()}
    zones = tuple(str(z) for z in _list(spec.get("zones"), doc, "spec.zones"))
    return Cluster(
        name=name,
        resource_models=decode_resource_models(spec.get("resourceModels"), doc),
        resource_summary=decode_resource_summary(status.get("resourceSummary"), doc),
        sync_mode=str(spec.get("syncMode") or ""),
        labels=labels,
        provider=str(spec.get("provider") or ""),
        region=str(spec.get("region") or ""),
        zone=str(spec.get("zone") or ""),
        zones=zones,
        raw=doc.body,
        source=doc.source,
    )


# --------------------------------------------------------------------------- ResourceBinding

def decode_resource_binding(doc: Document | dict[str, Any]) -> ResourceBinding:
    """A `ResourceBinding` document → ResourceBinding; spec/status checked for shape only."""
    doc = _as_document(doc)
    _check_kind(doc, "ResourceBinding", BINDING_API_VERSION)
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    spec = _mapping(doc.body.get("spec"), doc, "spec")
    status = _mapping(doc.body.get("status"), doc, "status")
    for part, value, known in (("", doc.body, OBJECT_FIELDS), ("metadata", meta, METADATA_FIELDS),
                               ("spec", spec, BINDING_SPEC_FIELDS), ("status", status, BINDING_STATUS_FIELDS),
                               ("spec.resource", _mapping(spec.get("resource"), doc, "spec.resource"),
                                OBJECT_REFERENCE_FIELDS)):
        check_fields(value, known, doc, part)
    if "replicas" in spec and spec["replicas"] is not None:
        integer(spec["replicas"], doc, "spec.replicas", default=None)
    requirements = spec.get("replicaRequirements")
    if requirements is not None:
        req = _mapping(requirements, doc, "spec.replicaRequirements")
        check_fields(req, REPLICA_REQUIREMENTS_FIELDS, doc, "spec.replicaRequirements")
        decode_quantities(req.get("resourceRequest"), doc, "spec.replicaRequirements.resourceRequest")
    for i, target in enumerate(_list(spec.get("clusters"), doc, "spec.clusters")):
        t = _mapping(target, doc, f"spec.clusters[{i}]")
        check_fields(t, frozenset({"name", "replicas"}), doc, f"spec.clusters[{i}]")
        if not isinstance(t.get("name"), str):
            raise _fail(doc, f"spec.clusters[{i}].name", "a cluster name is required")
        if t.get("replicas") is not None:
            integer(t["replicas"], doc, f"spec.clusters[{i}].replicas", default=None)
    _mapping(spec.get("placement"), doc, "spec.placement")
    return ResourceBinding(
        name=_name(doc, required=False),
        namespace=str(meta.get("namespace") or "default"),
        spec=spec,
        status=status,
        raw=doc.body,
        source=doc.source,
    )
