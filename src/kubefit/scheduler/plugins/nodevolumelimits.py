"""NodeVolumeLimits (v1.34.1 `plugins/nodevolumelimits`, CSILimits): a node's CSINode caps how many volumes
each CSI driver may attach; the pod's new volumes plus those of the pods already there must fit.

A volume is identified as `driver/handle`: from the bound PV's `spec.csi`, else (unbound claim, or PV not
found) from the claim's StorageClass provisioner with a per-claim handle, so a volume shared by pods on
one node counts once. Only PVC and generic ephemeral volumes are counted (in-tree volumes migrated to
CSI are not: kubefit warns about them).

With VolumeLimitScaling (alpha in v1.35 and v1.36, beta and on in v1.37; v1.36.3 `Filter` and
`checkCSIDriverOnNode`), a node is refused first when its CSINode (or a node without one) lacks the driver of a
new volume whose CSIDriver sets `preventPodSchedulingIfMissing`: `<driver> CSI driver is not installed on the
node` (Unschedulable). A driver without a CSIDriver object passes (it may be no CSI driver). Upstream walks the
new volumes in map order: with two such drivers missing, the one named is either; kubefit names the first in
name order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from kubefit.api.core import Pod
from kubefit.api.storage import CSINode
from kubefit.scheduler.plugins.base import (
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
)
from kubefit.scheduler.plugins.volumes import StorageIndex, not_found, pod_claims
from kubefit.scheduler.state import ClusterState

NAME = "NodeVolumeLimits"
REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
VOLUME_ID_PREFIX = "kubefit"  # upstream: a random prefix per plugin instance


class ClaimMissing(Exception):
    """A new pod's claim is not found: the pod can never run (UnschedulableAndUnresolvable)."""


class NodeVolumeLimits:
    """The CSILimits plugin; `node_pods(state, node)` lists the pods bound to a node."""

    def __init__(self, storage: StorageIndex, node_pods: Callable[[ClusterState, int], Sequence[Pod]], *,
                 requires_driver: bool = False) -> None:
        self.storage = storage
        self.node_pods = node_pods
        self.requires_driver = requires_driver  # VolumeLimitScaling: `checkCSIDriverOnNode`

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        """Skip unless the pod has a PVC or generic ephemeral volume."""
        return PreFilterOutcome(skip=not pod_claims(ctx.pod))

    def attachable(self, pod: Pod, new_pod: bool) -> dict[str, str]:
        """`filterAttachableVolumes`: unique volume name → driver of the pod's CSI volumes."""
        out: dict[str, str] = {}
        for name, _ephemeral in pod_claims(pod):
            pvc = self.storage.claim(pod.namespace, name)
            if pvc is None:
                if new_pod:
                    raise ClaimMissing(f"looking up PVC {pod.namespace}/{name}: {not_found('persistentvolumeclaim', name)}")
                continue
            driver, handle = self.driver_info(pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        return out

    def driver_info(self, pvc) -> tuple[str, str]:
        """`getCSIDriverInfo`: (driver, volume handle) from the PV, else from the claim's StorageClass."""
        pv = self.storage.volumes.get(pvc.volume_name) if pvc.volume_name else None
        if pv is None:
            cls = self.storage.classes.get(pvc.class_name) if pvc.class_name else None
            if cls is None:
                return "", ""
            return cls.provisioner, f"{VOLUME_ID_PREFIX}-{pvc.meta.namespace}/{pvc.meta.name}"
        return pv.csi_driver, pv.csi_volume_handle

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        codes = np.zeros(len(idx), dtype=np.int8)
        labels = [REASON_MAX_VOLUME_COUNT]
        matrix = np.zeros((len(idx), 1), dtype=bool)
        if not ctx.pod.volumes:
            return FilterOutcome(codes, labels, matrix)
        try:
            new = self.attachable(ctx.pod, True)
        except ClaimMissing as err:
            codes[:] = UNRESOLVABLE
            return FilterOutcome(codes, [str(err)], np.ones((len(idx), 1), dtype=bool))
        required = self.required_drivers(new) if self.requires_driver and new else ()
        if required:
            labels += [f"{driver} CSI driver is not installed on the node" for driver in required]
            matrix = np.zeros((len(idx), len(labels)), dtype=bool)
        limited = bool(new) and bool(set(new.values()) & self.limited_drivers())
        if not required and not limited:
            return FilterOutcome(codes, labels, matrix)  # no CSINode limits any of its drivers: no node exceeds
        for row, node in enumerate(idx.tolist()):
            missing = self.missing_driver(state, node, required)
            if missing is not None:
                codes[row], matrix[row, 1 + missing] = UNSCHEDULABLE, True
            elif limited and self.exceeds(state, node, new):
                codes[row], matrix[row, 0] = UNSCHEDULABLE, True
        return FilterOutcome(codes, labels, matrix)

    def required_drivers(self, new: dict[str, str]) -> list[str]:
        """The drivers of the new volumes whose CSIDriver sets `preventPodSchedulingIfMissing`, in name order."""
        drivers = self.storage.csi_drivers
        return sorted(d for d in set(new.values()) if d in drivers and drivers[d].prevent_pod_scheduling_if_missing)

    def missing_driver(self, state: ClusterState, node: int, required: Sequence[str]) -> int | None:
        """`checkCSIDriverOnNode`: the index in `required` of the first driver the node's CSINode does not list
        (a node without a CSINode lists none), None when it lists them all."""
        if not required:
            return None
        csi_node: CSINode | None = self.storage.csi_nodes.get(state.nodes[node].name)
        installed = {d.name for d in csi_node.drivers} if csi_node is not None else set()
        return next((i for i, driver in enumerate(required) if driver not in installed), None)

    def limited_drivers(self) -> frozenset[str]:
        """The drivers some CSINode gives an allocatable count (`exceeds` finds no limit for the others)."""
        found = self.__dict__.get("_limited")
        if found is None:
            found = self.__dict__["_limited"] = frozenset(
                driver for csi_node in self.storage.csi_nodes.values() for driver in csi_node.limits())
        return found

    def exceeds(self, state: ClusterState, node: int, new: dict[str, str],
                pods: Sequence[Pod] | None = None) -> bool:
        """Whether the new volumes overflow a driver's limit on `node` (with `pods` on it; default: its pods)."""
        csi_node: CSINode | None = self.storage.csi_nodes.get(state.nodes[node].name)
        limits = csi_node.limits() if csi_node is not None else {}
        if not limits:
            return False
        attached: dict[str, str] = {}
        for pod in self.node_pods(state, node) if pods is None else pods:
            attached.update(self.attachable(pod, False))
        fresh = {k: v for k, v in new.items() if k not in attached}
        have = Counter(attached.values())
        for driver, count in Counter(fresh.values()).items():
            if driver in limits and have[driver] + count > limits[driver]:
                return True
        return False

    def signature(self, pod: Pod) -> tuple:
        return (pod.namespace, repr(pod.volumes))
