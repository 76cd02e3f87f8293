"""The storage objects of a scenario compiled once for the volume plugins: claims, volumes, classes, CSINodes.

`StorageIndex` answers the listers' questions (`pvcLister.Get`, `pvLister.Get`, `classLister.Get`,
`csiNodeLister.Get`); it is shared and never edited. What a simulated bind assumes (the volume binder's
assume cache: a PV chosen for a claim gets that claim in its `claimRef`, a claim to provision gets its
selected node) lives on the run's ClusterState, and `StorageView` reads both.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Pod
from kubefit.api.storage import (
    ClaimRef,
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kubefit.k8s.nodeaffinity import NodeSelector
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.state import ClusterState

RESTRICTED_INLINE_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def claim_name(pod: Pod, volume: dict[str, Any]) -> str | None:
    """The PVC a volume uses (`ephemeral.VolumeClaimName` for generic ephemeral volumes), None for others."""
    if volume.get("persistentVolumeClaim") is not None:
        return str((volume["persistentVolumeClaim"] or {}).get("claimName") or "")
    if volume.get("ephemeral") is not None:
        return f"{pod.name}-{volume.get('name', '')}"
    return None


def pod_claims(pod: Pod) -> list[tuple[str, bool]]:
    """(claim name, is ephemeral) of each PVC-backed volume of the pod, in `spec.volumes` order."""
    out = []
    for volume in pod.volumes:
        name = claim_name(pod, volume)
        if name is not None:
            out.append((name, volume.get("ephemeral") is not None))
    return out


def not_found(kind: str, name: str) -> str:
    """The API's NotFound text, as the listers' errors print it."""
    return f"{kind} \"{name}\" not found"


@dataclass
class StorageIndex:
    """Claims by namespace/name, volumes, classes, CSINodes and CSIDrivers by name, as loaded (never edited)."""

    claims: dict[tuple[str, str], PersistentVolumeClaim] = field(default_factory=dict)
    volumes: dict[str, PersistentVolume] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)

    @classmethod
    def from_objects(cls, objects: ClusterObjects) -> StorageIndex:
        return cls(claims={(c.meta.namespace, c.meta.name): c for c in objects.of("PersistentVolumeClaim")},
                   volumes={v.meta.name: v for v in objects.of("PersistentVolume")},
                   classes={c.meta.name: c for c in objects.of("StorageClass")},
                   csi_nodes={c.meta.name: c for c in objects.of("CSINode")},
                   csi_drivers={d.meta.name: d for d in objects.of("CSIDriver")})

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.claims.get((namespace, name))

    def volume_names_of_class(self, class_name: str) -> tuple[str, ...]:
        """The loaded volumes of one storage class, in load order (indexed once: a run's assumptions change a
        volume's claimRef, never its class)."""
        by_class = self.__dict__.get("_by_class")
        if by_class is None:
            by_class = {}
            for name, volume in self.volumes.items():
                by_class.setdefault(volume.class_name, []).append(name)
            by_class = self.__dict__["_by_class"] = {k: tuple(v) for k, v in by_class.items()}
        return by_class.get(class_name, ())


@dataclass
class AssumedVolumes:
    """The volume binder's assume cache for one run: PVs given a claimRef, claims given a selected node."""

    volumes: dict[str, PersistentVolume] = field(default_factory=dict)
    claims: dict[tuple[str, str], PersistentVolumeClaim] = field(default_factory=dict)


def assumed_volumes(state: ClusterState) -> AssumedVolumes:
    """The assume cache of a run, kept on its ClusterState (a copied or rebuilt state starts empty)."""
    assumed = state.__dict__.get("_assumed_volumes")
    if assumed is None:  # (not `setdefault`: it would build one on every call)
        assumed = state.__dict__["_assumed_volumes"] = AssumedVolumes()
    return assumed


def copy_with_assumed_volumes(state: ClusterState) -> ClusterState:
    """`state.copy()` keeping the run's assume cache (an independent copy of it): the claims the run bound stay
    bound in the copy (`capacity --place-pending` counts copies after the pending pods took their volumes)."""
    out = state.copy()
    assumed = state.__dict__.get("_assumed_volumes")
    if assumed is not None:
        out.__dict__["_assumed_volumes"] = AssumedVolumes(dict(assumed.volumes), dict(assumed.claims))
    return out


@dataclass
class StorageView:
    """The objects as the binder sees them during a run: the loaded ones with the run's assumptions on top."""

    storage: StorageIndex
    assumed: AssumedVolumes

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        key = (namespace, name)
        return self.assumed.claims.get(key) or self.storage.claims.get(key)

    def volume(self, name: str) -> PersistentVolume | None:
        return self.assumed.volumes.get(name) or self.storage.volumes.get(name)

    def volumes_of_class(self, class_name: str) -> list[PersistentVolume]:
        """`pvCache.ListPVs(class)`: the volumes of one storage class, assumed claimRefs included."""
        return [self.volume(name) for name in self.storage.volume_names_of_class(class_name)]

    def assume_static(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """`AssumePodVolumes` for a static binding: the PV now names the claim."""
        ref = ClaimRef(claim.meta.namespace, claim.meta.name, claim.meta.uid)
        self.assumed.volumes[pv.meta.name] = dataclasses.replace(pv, claim_ref=ref)

    def assume_provision(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """`AssumePodVolumes` for a claim to provision: it gets the selected-node annotation."""
        self.assumed.claims[(claim.meta.namespace, claim.meta.name)] = dataclasses.replace(
            claim, selected_node=node_name)


def storage_view(storage: StorageIndex, state: ClusterState) -> StorageView:
    return StorageView(storage, assumed_volumes(state))


def pv_node_affinity_mask(state: ClusterState, pv: PersistentVolume) -> np.ndarray:
    """`volume.CheckNodeAffinity` over every node: no `required` selector matches every node."""
    if pv.node_affinity is None:
        return np.ones(len(state), dtype=bool)
    return NodeSelector.parse(pv.node_affinity).mask(node_labels(state))


def topology_mask(state: ClusterState, terms: Iterable[dict[str, Any]]) -> np.ndarray:
    """`v1helper.MatchTopologySelectorTerms` (a class's `allowedTopologies`): no term matches everything;
    a term ANDs its `matchLabelExpressions` (key In values), an empty term matches nothing, terms are ORed."""
    terms = list(terms)
    if not terms:
        return np.ones(len(state), dtype=bool)
    table = node_labels(state)
    out = np.zeros(len(state), dtype=bool)
    for term in terms:
        if not term.get("matchLabelExpressions"):
            continue
        mask = np.ones(len(state), dtype=bool)
        for expr in term.get("matchLabelExpressions") or []:
            mask &= table.column(str(expr.get("key") or "")).isin([str(v) for v in expr.get("values") or []])
        out |= mask
    return out


# --------------------------------------------------------------------------- pods that differ only in their claims
def claims_in_use(state: ClusterState) -> Counter:
    """(namespace, claim) → how many pods bound to a node use it (PVC and generic ephemeral volumes), kept on
    the state and following its change log (`state.changes` only grows: a trial's rollback unbinds and binds)."""
    known = state.__dict__.get("_claims_in_use")
    if known is None:
        uses: Counter = Counter()
        for pods in state.pods:
            for pod in pods:
                if pod.volumes:
                    uses.update((pod.namespace, name) for name, _eph in pod_claims(pod))
        known = state.__dict__["_claims_in_use"] = [uses, len(state.changes)]
    uses, seen = known
    if seen < len(state.changes):
        for _node, pod, delta in state.changes[seen:]:
            if pod.volumes:
                for name, _eph in pod_claims(pod):
                    uses[(pod.namespace, name)] += delta
        known[1] = len(state.changes)
    return uses


_ALIAS = "\x00claim "  # no claim name starts so (not a DNS subdomain): an alias never equals a real name


class ClaimAliases:
    """The pods of a StatefulSet differ only in their claims' names (`<template>-<pod>`); where nothing tells
    those claims apart but their names, the pods are one shape to the engine (issue 37: each ordinal was a
    shape of its own, evaluated over every node).

    A claim is replaced by its content (the claim's fields less its name and uid; the bound PV's fields less
    its name, claimRef and volume handle, its labels kept) when every volume plugin's verdict for it depends
    on nothing else:
    - it exists, is not `Lost`, and its PV (if it names one) exists: the plugins' messages that carry a
      claim's or PV's name are for the others;
    - no bound pod uses it and the run's assume cache has not touched it (`claims_in_use`,
      `assumed_volumes`): a fresh volume on every node to NodeVolumeLimits (`filterAttachableVolumes` counts a
      volume already attached to the node once) and to VolumeRestrictions;
    - VolumeBinding and VolumeRestrictions read other nodes, so the engine runs their PreFilter and Filter for
      each pod anyway; VolumeZone reads the PV's labels and the claim's class, which the content keeps.
    The engine then asks the pod's batch signature per pod (its `VolumesSigner` fragment names the claims)."""

    def __init__(self, storage: StorageIndex) -> None:
        self.storage = storage
        self._content: dict[tuple[str, str], str | None] = {}

    def keyed(self, state: ClusterState, pod: Pod) -> Pod:
        """`pod` with each aliasable claim's name replaced by its content (the pod itself when none is)."""
        volumes: list | None = None
        uses = assumed = None
        for i, volume in enumerate(pod.volumes):
            ref = volume.get("persistentVolumeClaim")
            if not ref:
                continue
            key = (pod.namespace, str(ref.get("claimName") or ""))
            content = self._content.get(key, False)
            if content is False:
                content = self._content[key] = self._content_of(*key)
            if content is None:
                continue
            if uses is None:
                uses, assumed = claims_in_use(state), assumed_volumes(state)
            pvc = self.storage.claims[key]
            if uses[key] or key in assumed.claims or (pvc.volume_name and pvc.volume_name in assumed.volumes):
                continue
            if volumes is None:
                volumes = list(pod.volumes)
            volumes[i] = {**volume, "persistentVolumeClaim": {**ref, "claimName": content}}
        return pod if volumes is None else dataclasses.replace(pod, volumes=tuple(volumes))

    def _content_of(self, namespace: str, name: str) -> str | None:
        pvc = self.storage.claim(namespace, name)
        if pvc is None or pvc.phase == "Lost":
            return None
        pv = None
        if pvc.volume_name:
            pv = self.storage.volumes.get(pvc.volume_name)
            if pv is None:
                return None
            pv = dataclasses.replace(pv, meta=tuple(sorted(pv.meta.labels.items())), claim_ref=None,
                                     csi_volume_handle="")
        return _ALIAS + repr((dataclasses.replace(pvc, meta=None, volume_name=""), pv))
