"""Storage and disruption objects as the volume plugins and preemption read them: PersistentVolumeClaim,
PersistentVolume, StorageClass, CSINode, CSIDriver (storage.k8s.io/v1) and PodDisruptionBudget (policy/v1).

Decoded by `kubefit.manifests.storage`; kept in `Scenario.objects` by kind, like the other cluster objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubefit.api.cluster import ObjectMeta

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"


@dataclass(frozen=True)
class PersistentVolumeClaim:
    """v1 PersistentVolumeClaim: what VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits read."""

    meta: ObjectMeta
    storage_class_name: str | None = None  # spec.storageClassName (None: absent)
    beta_class_annotation: str | None = None  # volume.beta.kubernetes.io/storage-class (wins over the field)
    volume_name: str = ""  # spec.volumeName: bound (or pre-bound) to this PV
    access_modes: tuple[str, ...] = ()
    request: int = 0  # spec.resources.requests.storage, in nano-units (0 when absent)
    volume_mode: str = "Filesystem"
    selected_node: str = ""  # annotation volume.kubernetes.io/selected-node
    bind_completed: bool = False  # annotation pv.kubernetes.io/bind-completed
    selector: dict[str, Any] | None = field(default=None, hash=False, compare=False)  # spec.selector as given
    phase: str = ""
    # spec.resources.requests as written ({name: Quantity}; None: absent): LimitRanger's min/max and its messages
    requests: dict[str, Any] | None = field(default=None, hash=False, compare=False)

    @property
    def class_name(self) -> str:
        """`storagehelpers.GetPersistentVolumeClaimClass`: the beta annotation, else the field, else ""."""
        if self.beta_class_annotation is not None:
            return self.beta_class_annotation
        return self.storage_class_name or ""


@dataclass(frozen=True)
class ClaimRef:
    namespace: str = ""
    name: str = ""
    uid: str = ""


@dataclass(frozen=True)
class PersistentVolume:
    """v1 PersistentVolume: capacity, class, access modes, node affinity, the CSI driver and handle."""

    meta: ObjectMeta
    storage_class_name: str = ""
    beta_class_annotation: str | None = None
    capacity: int = 0  # spec.capacity.storage, nano-units
    access_modes: tuple[str, ...] = ()
    volume_mode: str = "Filesystem"
    claim_ref: ClaimRef | None = None
    node_affinity: dict[str, Any] | None = field(default=None, hash=False, compare=False)  # spec.nodeAffinity.required
    csi_driver: str = ""  # spec.csi.driver ("" for other sources)
    csi_volume_handle: str = ""
    phase: str = ""
    deleting: bool = False  # metadata.deletionTimestamp set

    @property
    def class_name(self) -> str:
        """`storagehelpers.GetPersistentVolumeClass`: the beta annotation, else the field."""
        return self.beta_class_annotation if self.beta_class_annotation is not None else self.storage_class_name


@dataclass(frozen=True)
class StorageClass:
    """storage.k8s.io/v1 StorageClass: provisioner, binding mode, topologies, and whether it is the default class."""

    meta: ObjectMeta
    provisioner: str = ""
    volume_binding_mode: str | None = None  # the loader defaults it to Immediate as the API server does (None:
    # a class built by hand without one; VolumeZone and VolumeBinding then refuse it, as upstream's plugins do)
    allowed_topologies: tuple[dict[str, Any], ...] = field(default=(), hash=False, compare=False)
    reclaim_policy: str = "Delete"
    default_class: bool = False  # annotated storageclass.kubernetes.io/is-default-class: "true"


@dataclass(frozen=True)
class CSINodeDriver:
    name: str
    node_id: str = ""
    allocatable_count: int | None = None  # spec.drivers[].allocatable.count (None: no limit)
    topology_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class CSINode:
    """storage.k8s.io/v1 CSINode (named like its node): per CSI driver, how many volumes it may attach."""

    meta: ObjectMeta
    drivers: tuple[CSINodeDriver, ...] = ()

    def limits(self) -> dict[str, int]:
        """`getVolumeLimits`: driver → allocatable count, for the drivers that declare one."""
        return {d.name: d.allocatable_count for d in self.drivers if d.allocatable_count is not None}


@dataclass(frozen=True)
class CSIDriver:
    """storage.k8s.io/v1 CSIDriver: `spec.storageCapacity` says whether CSIStorageCapacity objects are checked;
    `spec.preventPodSchedulingIfMissing` (v1.35+, VolumeLimitScaling) keeps pods using the driver off nodes whose
    CSINode does not list it."""

    meta: ObjectMeta
    attach_required: bool = True
    storage_capacity: bool = False
    prevent_pod_scheduling_if_missing: bool = False


@dataclass(frozen=True)
class PodDisruptionBudget:
    """policy/v1 PodDisruptionBudget: preemption reads its selector, `status.disruptionsAllowed` and
    `status.disruptedPods`; a budget written without a status gets the disruption controller's."""

    meta: ObjectMeta
    selector: dict[str, Any] | None = field(default=None, hash=False, compare=False)  # spec.selector as given
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()
    min_available: int | str | None = None  # spec.minAvailable (an int or a percentage), None when absent
    max_unavailable: int | str | None = None  # spec.maxUnavailable
    # written without a status (an install manifest): the disruption controller's is computed from the pods
    # (`kubefit.manifests.disruption`); False: the status given (a live snapshot) is kept
    computed: bool = False
    # the scale of each workload of its namespace, (kind, name) → replicas (None: no scale subresource),
    # a ReplicaSet a Deployment owns resolved to it: what `getExpectedScale`'s finders read
    scales: dict[tuple[str, str], tuple[tuple[str, str], int | None]] | None = field(
        default=None, hash=False, compare=False)
