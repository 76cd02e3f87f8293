"""VolumeRestrictions (v1.34.1 `plugins/volumerestrictions`): a ReadWriteOncePod claim may be used by one pod
only, and an inline GCE PD / AWS EBS / RBD / iSCSI disk may not be mounted twice on a node.

PreFilter looks every PVC of the pod up (a missing one rejects the pod, the API's NotFound text) and counts
the pods of the cluster using the pod's ReadWriteOncePod claims; with none of those and no inline disk the
plugin is skipped. Filter: a ReadWriteOncePod claim in use anywhere rejects every node; an inline disk
conflicts on a node where another pod mounts the same disk (same source, not both read-only). Both
are Unschedulable (preemption may help).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kubefit.api.core import Pod
from kubefit.api.storage import READ_WRITE_ONCE_POD
from kubefit.scheduler.plugins.base import (
    SUCCESS,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
)
from kubefit.scheduler.plugins.volumes import (
    RESTRICTED_INLINE_SOURCES,
    StorageIndex,
    claims_in_use,
    not_found,
)
from kubefit.scheduler.state import ClusterState

NAME = "VolumeRestrictions"
REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
_DISK_KEYS = {"gcePersistentDisk": ("pdName",), "awsElasticBlockStore": ("volumeID",),
              "rbd": ("monitors", "pool", "image"), "iscsi": ("iqn",)}


def restricted_disks(pod: Pod) -> list[tuple[str, Any, bool]]:
    """(source kind, identity, read-only) of the pod's inline disks that may not be shared."""
    out = []
    for volume in pod.volumes:
        for kind in RESTRICTED_INLINE_SOURCES:
            source = volume.get(kind)
            if isinstance(source, dict):
                identity = tuple(repr(source.get(k)) for k in _DISK_KEYS[kind])
                out.append((kind, identity, bool(source.get("readOnly"))))
    return out


def _disks_conflict(a: tuple[str, Any, bool], b: tuple[str, Any, bool]) -> bool:
    """`isVolumeConflict`: same disk; GCE PDs and RBD images may be shared when both mounts are read-only."""
    if a[0] != b[0] or a[1] != b[1]:
        return False
    if a[0] in ("gcePersistentDisk", "rbd", "iscsi") and a[2] and b[2]:
        return False
    return True


class VolumeRestrictions:
    """The VolumeRestrictions plugin; `node_pods(state, n)` lists one node's bound pods."""

    reads_other_nodes = True  # a ReadWriteOncePod claim used by a pod bound anywhere rejects every node

    def __init__(self, storage: StorageIndex, node_pods: Callable[[ClusterState, int], Sequence[Pod]]) -> None:
        self.storage = storage
        self.node_pods = node_pods

    def rwop_claims(self, pod: Pod) -> set[str] | str:
        """The pod's ReadWriteOncePod claim names, or the NotFound reason of a missing claim."""
        out = set()
        for volume in pod.volumes:
            ref = volume.get("persistentVolumeClaim")
            if ref is None:
                continue
            name = str((ref or {}).get("claimName") or "")
            pvc = self.storage.claim(pod.namespace, name)
            if pvc is None:
                return not_found("persistentvolumeclaim", name)
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                out.add(name)
        return out

    def conflicting_refs(self, state: ClusterState, pod: Pod, claims: set[str]) -> int:
        """`calPreFilterState`: how many of the pod's ReadWriteOncePod claims a bound pod already uses (the
        state's claim counts, `claims_in_use`, kept along its change log, instead of a scan of every bound pod)."""
        if not claims:
            return 0
        uses = claims_in_use(state)
        return sum(1 for name in claims if uses[(pod.namespace, name)] > 0)

    def pre_static_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Whether binds can never change this pod's PreFilter outcome (nor the count it leaves in the cycle
        context): without ReadWriteOncePod claims no bound pod can conflict (0 refs), and its inline disks are
        its own. The engine then does not ask PreFilter again after each bind."""
        return self.rwop_claims(ctx.pod) == set()

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        claims = self.rwop_claims(ctx.pod)
        if isinstance(claims, str):
            return PreFilterOutcome(code=UNRESOLVABLE, reasons=(claims,))
        refs = self.conflicting_refs(state, ctx.pod, claims)
        ctx.cache[NAME] = refs
        return PreFilterOutcome(skip=not restricted_disks(ctx.pod) and refs == 0)

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        labels = [REASON_DISK_CONFLICT, REASON_RWOP_CONFLICT]
        matrix = np.zeros((len(idx), 2), dtype=bool)
        disks = restricted_disks(ctx.pod)
        if disks:
            for row, node in enumerate(idx.tolist()):
                theirs = [d for p in self.node_pods(state, node) for d in restricted_disks(p)]
                matrix[row, 0] = any(_disks_conflict(a, b) for a in disks for b in theirs)
        refs = ctx.cache.get(NAME)
        if refs is None:
            claims = self.rwop_claims(ctx.pod)
            refs = 0 if isinstance(claims, str) else self.conflicting_refs(state, ctx.pod, claims)
        matrix[:, 1] = ~matrix[:, 0] & (refs > 0)
        codes = np.where(matrix.any(axis=1), UNSCHEDULABLE, SUCCESS).astype(np.int8)
        return FilterOutcome(codes, labels, matrix)

    def signature(self, pod: Pod) -> tuple:
        return (pod.namespace, repr(pod.volumes))
