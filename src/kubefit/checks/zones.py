"""`claimZones`: after a simulation, every bound pod whose claim is bound to a zoned PersistentVolume runs on a
node of that zone.

A PV is zoned by its zone labels (`topology.kubernetes.io/zone`, `failure-domain.beta.kubernetes.io/zone`), as
VolumeZone reads them, and by the zone expressions of its `spec.nodeAffinity.required` terms, as VolumeBinding
reads them. Nothing here decides a match: the labels go through VolumeZone's own rule (`topology_fits`: a node
without any topology label fits, as kube-scheduler lets it) and the affinity through VolumeBinding's
(`pv_node_affinity_mask`) on the PV's terms kept to their zone expressions (a hostname pin is not a zone; a term
without a zone expression leaves the zone free, so the PV is not zoned by its affinity).

The claims are read as the run left them: a WaitForFirstConsumer claim the run bound statically (the volume
binder's assume cache) counts with its PV; a claim left to provision has no PV yet and is not checked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from kubefit.api.storage import PersistentVolume, PersistentVolumeClaim
from kubefit.k8s.nodeaffinity import NodeSelector
from kubefit.scheduler.plugins.volumes import (
    StorageIndex,
    StorageView,
    pod_claims,
    pv_node_affinity_mask,
    storage_view,
)
from kubefit.scheduler.plugins.volumezone import BETA_ZONE, ZONE, pv_topologies, topology_fits
from kubefit.scheduler.state import ClusterState

ZONE_KEYS = (ZONE, BETA_ZONE)


@dataclass(frozen=True)
class ClaimZone:
    """One pod using one zoned volume: where the pod runs, the claim, the volume's zones, and whether it fits."""

    pod: str
    node: str
    node_zone: str | None
    claim: str
    volume: str
    zones: str  # the PV's zone constraint in words: `a`, `a, b`, or its expressions
    fits: bool

    def line(self) -> str:
        where = f"zone {self.node_zone}" if self.node_zone else "no zone label"
        return f"{self.pod} on {self.node} ({where}): claim {self.claim} → volume {self.volume} (zone {self.zones})"


def zone_affinity(pv: PersistentVolume) -> dict[str, Any] | None:
    """The PV's required node affinity kept to its zone expressions; None when it does not pin a zone (no
    affinity, or a term without a zone expression: that term allows every zone)."""
    if pv.node_affinity is None:
        return None
    terms = NodeSelector.parse(pv.node_affinity).terms
    kept = []
    for term in terms:
        exprs = [e for e in term.get("matchExpressions") or [] if e.get("key") in ZONE_KEYS]
        if not exprs:
            return None
        kept.append({"matchExpressions": exprs})
    return {"nodeSelectorTerms": kept} if kept else None


def _describe(pv: PersistentVolume, affinity: dict[str, Any] | None) -> str:
    """The PV's zones in words: its zone label values, and its affinity's zone expressions (`a, b` when every
    term is one `In`)."""
    said = []
    labels = sorted({z for t in pv_topologies(pv) if t.key in ZONE_KEYS for z in t.values})
    if labels:
        said.append(", ".join(labels))
    if affinity is not None:
        exprs = [e for t in affinity["nodeSelectorTerms"] for e in t["matchExpressions"]]
        if all(len(t["matchExpressions"]) == 1 for t in affinity["nodeSelectorTerms"]) and all(
                e.get("operator") == "In" for e in exprs):
            values = sorted({str(v) for e in exprs for v in e.get("values") or []})
            if ", ".join(values) not in said:
                said.append(", ".join(values))
        else:
            said.append(" or ".join(" and ".join(f"{e.get('key')} {e.get('operator')} {list(e.get('values') or [])}"
                                                 for e in t["matchExpressions"]) for t in affinity["nodeSelectorTerms"]))
    return "; ".join(said)


def _volume_of(view: StorageView, pvc: PersistentVolumeClaim) -> PersistentVolume | None:
    """The claim's PV: `spec.volumeName`, else a PV the run assumed bound to it (its claimRef names the claim)."""
    if pvc.volume_name:
        return view.volume(pvc.volume_name)
    for pv in view.assumed.volumes.values():
        ref = pv.claim_ref
        if ref is not None and (ref.namespace, ref.name) == (pvc.meta.namespace, pvc.meta.name):
            return pv
    return None


def claim_zones(state: ClusterState) -> list[ClaimZone]:
    """Every (bound pod, zoned volume of its claims) of the final `state`, with whether the pod's node fits it."""
    storage = state.objects.__dict__.get("_memo", {}).get("storage") or StorageIndex.from_objects(state.objects)
    if not storage.volumes:
        return []
    view = storage_view(storage, state)
    out: list[ClaimZone] = []
    fits_memo: dict[str, tuple[Any, str] | None] = {}
    for n, pods in enumerate(state.pods):
        node = state.nodes[n]
        node_zone = node.labels.get(ZONE) or node.labels.get(BETA_ZONE)
        for pod in pods:
            for name, _ephemeral in pod_claims(pod):
                pvc = view.claim(pod.namespace, name)
                pv = None if pvc is None else _volume_of(view, pvc)
                if pv is None:
                    continue
                if pv.meta.name not in fits_memo:
                    fits_memo[pv.meta.name] = _fits(state, pv)
                found = fits_memo[pv.meta.name]
                if found is None:
                    continue
                mask, zones = found
                out.append(ClaimZone(pod.key, node.name, node_zone, f"{pod.namespace}/{name}", pv.meta.name, zones,
                                     bool(mask[n])))
    return out


def _fits(state: ClusterState, pv: PersistentVolume) -> tuple[Any, str] | None:
    """Per node, whether it is in the PV's zones (VolumeZone's rule on its zone labels and VolumeBinding's on
    its zone affinity, both), and the zones in words; None for a PV without a zone."""
    topologies = [t for t in pv_topologies(pv) if t.key in ZONE_KEYS]
    affinity = zone_affinity(pv)
    if not topologies and affinity is None:
        return None
    mask = topology_fits(state, topologies)
    if affinity is not None:
        mask = mask & pv_node_affinity_mask(state, dataclasses.replace(pv, node_affinity=affinity))
    return mask, _describe(pv, affinity)
