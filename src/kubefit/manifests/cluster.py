"""Documents → the cluster objects PodTopologySpread and InterPodAffinity read: Namespace, Service,
ReplicaSet, StatefulSet, ReplicationController (strict: an unknown field is an error naming it).

`DECODERS` maps each kind to its decoder `(doc, warnings) -> object`; `load.add_document` puts the
result in `Scenario.objects`. `object_meta` and `label_selector` are shared by every loader module of
cluster objects (see `kubefit.manifests.storage`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubefit.api.cluster import Controller, Namespace, ObjectMeta, Service
from kubefit.manifests.decode import check_api_version as _check_api_version
from kubefit.manifests.decode import check_fields as _check_fields
from kubefit.manifests.decode import entries
from kubefit.manifests.decode import mapping as _mapping
from kubefit.manifests.decode import string as _string
from kubefit.manifests.decode import string_map as _string_map
from kubefit.manifests.documents import Document
from kubefit.manifests.kinds import SPEC_FIELDS, STATUS_FIELDS
from kubefit.manifests.load import _name, _object_parts
from kubefit.manifests.load import label_selector as check_selector

SERVICE_SPEC_FIELDS = frozenset({
    "ports", "selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity", "loadBalancerIP",
    "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy", "healthCheckNodePort",
    "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies", "ipFamilyPolicy",
    "allocateLoadBalancerNodePorts", "loadBalancerClass", "internalTrafficPolicy", "trafficDistribution"})
SERVICE_PORT_FIELDS = frozenset({"name", "protocol", "appProtocol", "port", "targetPort", "nodePort"})
NAMESPACE_SPEC_FIELDS = frozenset({"finalizers"})
TEMPLATE_FIELDS = frozenset({"metadata", "spec"})  # core/v1 PodTemplateSpec (also the controllers' templates)


def object_meta(doc: Document, *, namespaced: bool = True) -> tuple[ObjectMeta, dict[str, Any], dict[str, Any]]:
    """The object's metadata (name required, namespace defaulting to "default"), spec and status (its
    fields checked for the kinds whose status is not read: `kinds.STATUS_FIELDS`)."""
    name = _name(doc)
    meta, spec, status = _object_parts(doc)
    if doc.kind in STATUS_FIELDS:
        _check_fields(status, STATUS_FIELDS[doc.kind], doc, "status")
    namespace = (_string(meta.get("namespace"), doc, "metadata.namespace") or "default") if namespaced else ""
    labels = _string_map(meta.get("labels"), doc, "metadata.labels")
    uid = _string(meta.get("uid"), doc, "metadata.uid")
    return ObjectMeta(name, namespace, uid, labels, doc.source), spec, status


def label_selector(value: Any, doc: Document, path: str) -> dict[str, Any] | None:
    """A metav1.LabelSelector as given (None when absent), its fields and operators checked."""
    check_selector(value, doc, path)
    return value


def decode_namespace(doc: Document, warnings: list[str]) -> Namespace:
    _check_api_version(doc, "v1")
    meta, spec, _status = object_meta(doc, namespaced=False)
    _check_fields(spec, NAMESPACE_SPEC_FIELDS, doc, "spec")
    return Namespace(meta)


def decode_service(doc: Document, warnings: list[str]) -> Service:
    _check_api_version(doc, "v1")
    meta, spec, _status = object_meta(doc)
    _check_fields(spec, SERVICE_SPEC_FIELDS, doc, "spec")
    # kubefit reads no port of a Service; a misspelt field is still refused
    list(entries(spec.get("ports"), doc, "spec.ports", SERVICE_PORT_FIELDS, "a port (a mapping with port)"))
    selector = spec.get("selector")
    return Service(meta, None if selector is None else _string_map(selector, doc, "spec.selector"))


def _controller(doc: Document, api_version: str, fields: frozenset[str], map_selector: bool) -> Controller:
    _check_api_version(doc, api_version)
    meta, spec, _status = object_meta(doc)
    _check_fields(spec, fields, doc, "spec")
    template = _mapping(spec.get("template"), doc, "spec.template")
    _check_fields(template, TEMPLATE_FIELDS, doc, "spec.template")
    raw = spec.get("selector")
    if map_selector:  # ReplicationController: a map; absent means the template's labels (API defaulting)
        selector = None if raw is None else {"matchLabels": _string_map(raw, doc, "spec.selector")}
    else:
        selector = label_selector(raw, doc, "spec.selector")
    return Controller(doc.kind, meta, selector)


def decode_replica_set(doc: Document, warnings: list[str]) -> Controller:
    return _controller(doc, "apps/v1", SPEC_FIELDS["ReplicaSet"], map_selector=False)


def decode_stateful_set(doc: Document, warnings: list[str]) -> Controller:
    return _controller(doc, "apps/v1", SPEC_FIELDS["StatefulSet"], map_selector=False)


def decode_replication_controller(doc: Document, warnings: list[str]) -> Controller:
    return _controller(doc, "v1", SPEC_FIELDS["ReplicationController"], map_selector=True)


DECODERS: dict[str, Callable[[Document, list[str]], Any]] = {
    "Namespace": decode_namespace,
    "Service": decode_service,
    "ReplicaSet": decode_replica_set,
    "StatefulSet": decode_stateful_set,
    "ReplicationController": decode_replication_controller,
}
