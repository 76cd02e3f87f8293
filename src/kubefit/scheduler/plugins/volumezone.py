"""VolumeZone (v1.34.1 `plugins/volumezone`): a node must lie in the zones/regions its bound PVs are labelled with.

PreFilter collects, per bound PVC volume of the pod, the PV's topology labels (beta and GA zone and region
keys, values split on `__`); unbound WaitForFirstConsumer claims are left out, other unbound claims reject
the pod. No topology → Skip. Filter: a node without any topology label passes; otherwise every PV topology
must be matched by the node's label of that key (a beta key also by its GA twin).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.api.storage import WAIT_FOR_FIRST_CONSUMER, PersistentVolume
from kubefit.scheduler.plugins.base import (
    SUCCESS,
    UNRESOLVABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
)
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.plugins.volumes import StorageIndex, not_found
from kubefit.scheduler.state import ClusterState

NAME = "VolumeZone"
REASON_CONFLICT = "node(s) had no available volume zone"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
GA_LABEL = {BETA_ZONE: ZONE, BETA_REGION: REGION}
MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """`getPVTopologies`: one entry per topology label of the PV (an unparsable value is left out)."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.meta.labels.get(key)
        if value is None:
            continue
        zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
        if any(not z for z in zones):
            continue
        out.append(PVTopology(pv.meta.name, key, frozenset(zones)))
    return out


def topology_fits(state: ClusterState, topologies: list[PVTopology]) -> np.ndarray:
    """Filter's rule over every node: a node without any topology label fits; otherwise each topology must be
    matched by the node's label of its key (a beta key also by its GA twin when the node lacks the beta one).
    Also read by `kubefit check`'s claimZones assertion."""
    table = node_labels(state)
    constrained = np.zeros(len(state), dtype=bool)
    for key in TOPOLOGY_LABELS:
        constrained |= table.column(key).present
    ok = np.ones(len(state), dtype=bool)
    for topo in topologies:
        own = table.column(topo.key)
        match = np.where(own.present, own.isin(sorted(topo.values)), False)
        if topo.key in GA_LABEL:
            ga = table.column(GA_LABEL[topo.key])
            match |= ~own.present & ga.isin(sorted(topo.values))
        ok &= match
    return ~constrained | ok


class VolumeZone:
    """The VolumeZone plugin over a scenario's StorageIndex."""

    def __init__(self, storage: StorageIndex) -> None:
        self.storage = storage

    def topologies(self, ctx: CycleContext) -> list[PVTopology] | str:
        """`getPVbyPod`: the topologies of the pod's bound PVs, or the UnschedulableAndUnresolvable reason."""
        pod = ctx.pod
        out: list[PVTopology] = []
        for volume in pod.volumes:
            if volume.get("persistentVolumeClaim") is None:
                continue
            name = str((volume["persistentVolumeClaim"] or {}).get("claimName") or "")
            if not name:
                return "PersistentVolumeClaim had no name"
            pvc = self.storage.claim(pod.namespace, name)
            if pvc is None:
                return not_found("persistentvolumeclaim", name)
            if not pvc.volume_name:
                reason = self._unbound(pvc)
                if reason:
                    return reason
                continue
            pv = self.storage.volumes.get(pvc.volume_name)
            if pv is None:
                return not_found("persistentvolume", pvc.volume_name)
            out += pv_topologies(pv)
        return out

    def _unbound(self, pvc) -> str | None:
        """An unbound claim: None when its class binds WaitForFirstConsumer (skipped), else the reason."""
        if not pvc.class_name:
            return "PersistentVolumeClaim had no pv name and storageClass name"
        cls = self.storage.classes.get(pvc.class_name)
        if cls is None:
            return not_found("storageclass.storage.k8s.io", pvc.class_name)
        if cls.volume_binding_mode is None:
            return f"VolumeBindingMode not set for StorageClass \"{pvc.class_name}\""
        return None if cls.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER else "PersistentVolume had no name"

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        topologies = self.topologies(ctx)
        ctx.cache[NAME] = topologies
        if isinstance(topologies, str):
            return PreFilterOutcome(code=UNRESOLVABLE, reasons=(topologies,))
        return PreFilterOutcome(skip=not topologies)

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        topologies = ctx.cache.get(NAME)
        if topologies is None:
            topologies = self.topologies(ctx)
        if not ctx.pod.volumes or isinstance(topologies, str):
            return FilterOutcome.passing(len(idx))
        failed = ~topology_fits(state, topologies)[idx]
        codes = np.where(failed, UNRESOLVABLE, SUCCESS).astype(np.int8)
        return FilterOutcome(codes, [REASON_CONFLICT], failed[:, None])

    def signature(self, pod) -> tuple:
        return (pod.namespace, repr(pod.volumes))
