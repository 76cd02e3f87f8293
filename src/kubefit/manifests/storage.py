"""Documents → the storage objects the volume plugins read and the PodDisruptionBudgets preemption reads:
PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver, PodDisruptionBudget (strict:
an unknown field is an error naming it).

`DECODERS` maps each kind to its decoder `(doc, warnings) -> object`; `load.add_document` puts the result
in `Scenario.objects`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubefit.api.storage import (
    ANN_SELECTED_NODE,
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    PodDisruptionBudget,
    StorageClass,
)
from kubefit.k8s.validation import go_quote, regex_error
from kubefit.manifests.cluster import label_selector, object_meta
from kubefit.manifests.decode import check_api_version as _check_api_version
from kubefit.manifests.decode import check_fields as _check_fields
from kubefit.manifests.decode import decode_quantities
from kubefit.manifests.decode import fail as _fail
from kubefit.manifests.decode import integer as _int
from kubefit.manifests.decode import mapping as _mapping
from kubefit.manifests.decode import sequence as _list
from kubefit.manifests.decode import string as _string
from kubefit.manifests.decode import string_map as _string_map
from kubefit.manifests.documents import Document
from kubefit.manifests.load import _check_term, decode_resource_list

BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
BIND_COMPLETED_ANNOTATION = "pv.kubernetes.io/bind-completed"
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
PVC_SPEC_FIELDS = frozenset({"accessModes", "selector", "resources", "volumeName", "storageClassName", "volumeMode",
                             "dataSource", "dataSourceRef", "volumeAttributesClassName"})
VOLUME_RESOURCES_FIELDS = frozenset({"limits", "requests"})
PV_SOURCES = frozenset({
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "iscsi", "cinder", "cephfs",
    "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk",
    "portworxVolume", "scaleIO", "local", "storageos", "csi"})
# in-tree sources the CSI translation library migrates (counted by NodeVolumeLimits upstream)
MIGRATABLE_SOURCES = frozenset({"gcePersistentDisk", "awsElasticBlockStore", "azureDisk", "azureFile", "cinder",
                                "vsphereVolume", "portworxVolume"})
PV_SPEC_FIELDS = PV_SOURCES | {"capacity", "persistentVolumeReclaimPolicy", "accessModes", "claimRef",
                               "storageClassName", "mountOptions", "volumeMode", "nodeAffinity",
                               "volumeAttributesClassName"}
CLAIM_REF_FIELDS = frozenset({"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"})
CSI_SOURCE_FIELDS = frozenset({"driver", "volumeHandle", "readOnly", "fsType", "volumeAttributes",
                               "controllerPublishSecretRef", "nodeStageSecretRef", "nodePublishSecretRef",
                               "controllerExpandSecretRef", "nodeExpandSecretRef"})
STORAGE_CLASS_FIELDS = frozenset({"apiVersion", "kind", "metadata", "provisioner", "parameters", "reclaimPolicy",
                                  "mountOptions", "allowVolumeExpansion", "volumeBindingMode", "allowedTopologies"})
IMMEDIATE, DELETE = "Immediate", "Delete"
BINDING_MODES = (IMMEDIATE, "WaitForFirstConsumer")
RECLAIM_POLICIES = (DELETE, "Retain")  # ValidateStorageClass: Recycle is a PersistentVolume's only
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"
CSI_NODE_SPEC_FIELDS = frozenset({"drivers"})
CSI_NODE_DRIVER_FIELDS = frozenset({"name", "nodeID", "topologyKeys", "allocatable"})
CSI_DRIVER_SPEC_FIELDS = frozenset({"attachRequired", "podInfoOnMount", "volumeLifecycleModes", "storageCapacity",
                                    "fsGroupPolicy", "tokenRequests", "requiresRepublish", "seLinuxMount",
                                    "nodeAllocatableUpdatePeriodSeconds",
                                    "preventPodSchedulingIfMissing"})  # v1.35+ (VolumeLimitScaling)
PDB_SPEC_FIELDS = frozenset({"minAvailable", "selector", "maxUnavailable", "unhealthyPodEvictionPolicy"})
PDB_STATUS_FIELDS = frozenset({"observedGeneration", "disruptedPods", "disruptionsAllowed", "currentHealthy",
                               "desiredHealthy", "expectedPods", "conditions"})


def _annotations(doc: Document) -> dict[str, str]:
    return _string_map(_mapping(doc.body.get("metadata"), doc, "metadata").get("annotations"), doc,
                       "metadata.annotations")


def _access_modes(value: Any, doc: Document, path: str) -> tuple[str, ...]:
    modes = tuple(_string(m, doc, f"{path}[{i}]") for i, m in enumerate(_list(value, doc, path)))
    for i, mode in enumerate(modes):
        if mode not in ACCESS_MODES:
            raise _fail_value(doc, f"{path}[{i}]", mode, ACCESS_MODES)
    return modes


def _fail_value(doc: Document, path: str, value: str, allowed: tuple[str, ...]) -> Exception:
    return _fail(doc, path, f"unsupported value {value!r} (one of {', '.join(allowed)})")


def _storage(value: Any, doc: Document, path: str) -> int:
    """`storage` of a ResourceList (nano-units; 0 when absent)."""
    return decode_resource_list(value, doc, path).get("storage", 0)


def _optional_string(value: Any, doc: Document, path: str) -> str | None:
    return None if value is None else _string(value, doc, path)


def decode_pvc(doc: Document, warnings: list[str]) -> PersistentVolumeClaim:
    _check_api_version(doc, "v1")
    meta, spec, status = object_meta(doc)
    _check_fields(spec, PVC_SPEC_FIELDS, doc, "spec")
    resources = _mapping(spec.get("resources"), doc, "spec.resources")
    _check_fields(resources, VOLUME_RESOURCES_FIELDS, doc, "spec.resources")
    ann = _annotations(doc)
    return PersistentVolumeClaim(
        meta, storage_class_name=_optional_string(spec.get("storageClassName"), doc, "spec.storageClassName"),
        beta_class_annotation=ann.get(BETA_CLASS_ANNOTATION),
        volume_name=_string(spec.get("volumeName"), doc, "spec.volumeName"),
        access_modes=_access_modes(spec.get("accessModes"), doc, "spec.accessModes"),
        request=_storage(resources.get("requests"), doc, "spec.resources.requests"),
        volume_mode=_string(spec.get("volumeMode"), doc, "spec.volumeMode") or "Filesystem",
        selected_node=ann.get(ANN_SELECTED_NODE, ""), bind_completed=BIND_COMPLETED_ANNOTATION in ann,
        selector=label_selector(spec.get("selector"), doc, "spec.selector"),
        phase=_string(status.get("phase"), doc, "status.phase"),
        requests=decode_quantities(resources.get("requests"), doc, "spec.resources.requests"))


def _claim_ref(value: Any, doc: Document) -> ClaimRef | None:
    if value is None:
        return None
    ref = _mapping(value, doc, "spec.claimRef")
    _check_fields(ref, CLAIM_REF_FIELDS, doc, "spec.claimRef")
    return ClaimRef(*(_string(ref.get(k), doc, f"spec.claimRef.{k}") for k in ("namespace", "name", "uid")))


def _pv_node_affinity(value: Any, doc: Document) -> dict[str, Any] | None:
    """`spec.nodeAffinity.required` (a NodeSelector) as given; None when there is none."""
    affinity = _mapping(value, doc, "spec.nodeAffinity")
    _check_fields(affinity, frozenset({"required"}), doc, "spec.nodeAffinity")
    if affinity.get("required") is None:
        return None
    required = _mapping(affinity["required"], doc, "spec.nodeAffinity.required")
    _check_fields(required, frozenset({"nodeSelectorTerms"}), doc, "spec.nodeAffinity.required")
    path = "spec.nodeAffinity.required.nodeSelectorTerms"
    for i, term in enumerate(_list(required.get("nodeSelectorTerms"), doc, path)):
        _check_term(term, doc, f"{path}[{i}]")
    return required


def decode_pv(doc: Document, warnings: list[str]) -> PersistentVolume:
    _check_api_version(doc, "v1")
    meta, spec, status = object_meta(doc, namespaced=False)
    _check_fields(spec, PV_SPEC_FIELDS, doc, "spec")
    csi = _mapping(spec.get("csi"), doc, "spec.csi")
    _check_fields(csi, CSI_SOURCE_FIELDS, doc, "spec.csi")
    raw_meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    in_tree = sorted(k for k in spec if k in MIGRATABLE_SOURCES)
    if in_tree:
        warnings.append(f"{doc.source}: {doc.label}: spec.{in_tree[0]}: an in-tree volume kube-scheduler counts "
                        f"against its CSI driver's limit after CSI migration; kubefit does not translate it, so "
                        f"NodeVolumeLimits leaves it out")
    return PersistentVolume(
        meta, storage_class_name=_string(spec.get("storageClassName"), doc, "spec.storageClassName"),
        beta_class_annotation=_annotations(doc).get(BETA_CLASS_ANNOTATION),
        capacity=_storage(spec.get("capacity"), doc, "spec.capacity"),
        access_modes=_access_modes(spec.get("accessModes"), doc, "spec.accessModes"),
        volume_mode=_string(spec.get("volumeMode"), doc, "spec.volumeMode") or "Filesystem",
        claim_ref=_claim_ref(spec.get("claimRef"), doc), node_affinity=_pv_node_affinity(spec.get("nodeAffinity"), doc),
        csi_driver=_string(csi.get("driver"), doc, "spec.csi.driver"),
        csi_volume_handle=_string(csi.get("volumeHandle"), doc, "spec.csi.volumeHandle"),
        phase=_string(status.get("phase"), doc, "status.phase"),
        deleting=raw_meta.get("deletionTimestamp") is not None)


def decode_storage_class(doc: Document, warnings: list[str]) -> StorageClass:
    _check_api_version(doc, "storage.k8s.io/v1")
    _check_fields(doc.body, STORAGE_CLASS_FIELDS, doc, "")
    body = doc.body
    meta = object_meta(Document({k: v for k, v in body.items() if k in ("kind", "metadata")}, doc.source,
                                doc.index), namespaced=False)[0]
    mode = _optional_string(body.get("volumeBindingMode"), doc, "volumeBindingMode")
    if mode is not None and mode not in BINDING_MODES:
        raise _fail_value(doc, "volumeBindingMode", mode, BINDING_MODES)
    reclaim = _optional_string(body.get("reclaimPolicy"), doc, "reclaimPolicy")
    if reclaim is not None and reclaim not in RECLAIM_POLICIES:
        raise _fail_value(doc, "reclaimPolicy", reclaim, RECLAIM_POLICIES)
    if mode is None:  # SetDefaults_StorageClass (pkg/apis/storage/v1/defaults.go): every stored class has one
        warnings.append(f"{doc.source}: {doc.label}: volumeBindingMode: the API server defaults it to {IMMEDIATE}")
    topologies = tuple(_mapping(t, doc, f"allowedTopologies[{i}]")
                       for i, t in enumerate(_list(body.get("allowedTopologies"), doc, "allowedTopologies")))
    _check_unread(body, doc)
    return StorageClass(meta, provisioner=_string(body.get("provisioner"), doc, "provisioner"),
                        volume_binding_mode=mode or IMMEDIATE, allowed_topologies=topologies,
                        reclaim_policy=reclaim or DELETE, default_class=_is_default_class(doc))


def _check_unread(body: dict[str, Any], doc: Document) -> None:
    """The fields no plugin reads are still typed as the API server decodes them (`storage/v1.StorageClass`):
    `parameters` a map[string]string, `mountOptions` a []string, `allowVolumeExpansion` a *bool."""
    if body.get("parameters") is not None:
        _string_map(body["parameters"], doc, "parameters")
    for i, option in enumerate(_list(body.get("mountOptions"), doc, "mountOptions")):
        _string(option, doc, f"mountOptions[{i}]")
    _bool(body.get("allowVolumeExpansion"), doc, "allowVolumeExpansion", False)


def _is_default_class(doc: Document) -> bool:
    """The class is marked as the default (`storageclass.kubernetes.io/is-default-class: "true"`, or the beta
    annotation), as `storageutil.IsDefaultAnnotation` reads it."""
    ann = _annotations(doc)
    return any(ann.get(key) == "true" for key in (DEFAULT_CLASS_ANNOTATION, BETA_DEFAULT_CLASS_ANNOTATION))


def _csi_node_driver(raw: Any, doc: Document, path: str) -> CSINodeDriver:
    driver = _mapping(raw, doc, path)
    _check_fields(driver, CSI_NODE_DRIVER_FIELDS, doc, path)
    allocatable = _mapping(driver.get("allocatable"), doc, f"{path}.allocatable")
    _check_fields(allocatable, frozenset({"count"}), doc, f"{path}.allocatable")
    count = allocatable.get("count")
    keys = tuple(_string(k, doc, f"{path}.topologyKeys[{i}]")
                 for i, k in enumerate(_list(driver.get("topologyKeys"), doc, f"{path}.topologyKeys")))
    return CSINodeDriver(_string(driver.get("name"), doc, f"{path}.name"),
                         _string(driver.get("nodeID"), doc, f"{path}.nodeID"),
                         None if count is None else _int(count, doc, f"{path}.allocatable.count"), keys)


def decode_csi_node(doc: Document, warnings: list[str]) -> CSINode:
    _check_api_version(doc, "storage.k8s.io/v1")
    meta, spec, _status = object_meta(doc, namespaced=False)
    _check_fields(spec, CSI_NODE_SPEC_FIELDS, doc, "spec")
    drivers = tuple(_csi_node_driver(d, doc, f"spec.drivers[{i}]")
                    for i, d in enumerate(_list(spec.get("drivers"), doc, "spec.drivers")))
    return CSINode(meta, drivers)


def _bool(value: Any, doc: Document, path: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _fail(doc, path, f"must be true or false, got {value!r}")
    return value


def decode_csi_driver(doc: Document, warnings: list[str]) -> CSIDriver:
    _check_api_version(doc, "storage.k8s.io/v1")
    meta, spec, _status = object_meta(doc, namespaced=False)
    _check_fields(spec, CSI_DRIVER_SPEC_FIELDS, doc, "spec")
    driver = CSIDriver(meta, attach_required=_bool(spec.get("attachRequired"), doc, "spec.attachRequired", True),
                       storage_capacity=_bool(spec.get("storageCapacity"), doc, "spec.storageCapacity", False),
                       prevent_pod_scheduling_if_missing=_bool(spec.get("preventPodSchedulingIfMissing"), doc,
                                                               "spec.preventPodSchedulingIfMissing", False))
    if driver.storage_capacity:
        warnings.append(f"{doc.source}: {doc.label}: spec.storageCapacity: kubefit reads no CSIStorageCapacity "
                        f"objects, so VolumeBinding finds no room to provision a claim with this driver (as "
                        f"kube-scheduler does when there are none)")
    return driver


def decode_pdb(doc: Document, warnings: list[str]) -> PodDisruptionBudget:
    _check_api_version(doc, "policy/v1")
    meta, spec, status = object_meta(doc)
    _check_fields(spec, PDB_SPEC_FIELDS, doc, "spec")
    _check_fields(status, PDB_STATUS_FIELDS, doc, "status")
    disrupted = _mapping(status.get("disruptedPods"), doc, "status.disruptedPods")
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        raise _fail(doc, "spec", "Invalid value: minAvailable and maxUnavailable cannot be both set")
    return PodDisruptionBudget(meta, selector=label_selector(spec.get("selector"), doc, "spec.selector"),
                               disruptions_allowed=_int(status.get("disruptionsAllowed"), doc,
                                                        "status.disruptionsAllowed"),
                               disrupted_pods=frozenset(str(k) for k in disrupted),
                               min_available=_int_or_percent(spec.get("minAvailable"), doc, "spec.minAvailable"),
                               max_unavailable=_int_or_percent(spec.get("maxUnavailable"), doc,
                                                               "spec.maxUnavailable"),
                               computed=not any(k in status for k in PDB_COMPUTED_STATUS))


# the status fields the disruption controller always writes (no omitempty): a budget with none of them was
# written without a status, and gets the one the controller computes
PDB_COMPUTED_STATUS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")
PERCENT_ERROR = regex_error("a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%",
                            "1%", "93%")


def _int_or_percent(value: Any, doc: Document, path: str) -> int | str | None:
    """An IntOrString as `ValidatePodDisruptionBudgetSpec` checks it (`ValidatePositiveIntOrPercent`,
    `IsNotMoreThan100Percent`): a non-negative integer, or a percentage `[0-9]+%` not above 100%."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _fail(doc, path, f"must be an integer or a percentage string, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise _fail(doc, path, f"Invalid value: {value}: must be greater than or equal to 0")
        return value
    if re.fullmatch(r"[0-9]+%", value) is None:
        raise _fail(doc, path, f"Invalid value: {go_quote(value)}: {PERCENT_ERROR}")
    if int(value[:-1]) > 100:
        raise _fail(doc, path, f"Invalid value: {go_quote(value)}: must not be greater than 100%")
    return value


DECODERS: dict[str, Callable[[Document, list[str]], Any]] = {
    "PersistentVolumeClaim": decode_pvc,
    "PersistentVolume": decode_pv,
    "StorageClass": decode_storage_class,
    "CSINode": decode_csi_node,
    "CSIDriver": decode_csi_driver,
    "PodDisruptionBudget": decode_pdb,
}
