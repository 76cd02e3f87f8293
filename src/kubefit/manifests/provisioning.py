"""The PV controller's binding of the volumes and claims a scenario creates: the state
`pkg/controller/volume/persistentvolume/pv_controller.go` gives them right after they are created, before
kube-scheduler sees a pod that mounts them.

- A new PersistentVolume is `Available` (`syncVolume`), or `Bound` once the claim its `claimRef` names is
  bound to it.
- A new claim naming a volume (`spec.volumeName`, pre-bound) is bound to it (`syncUnboundClaim`: the
  volume exists and is free or pre-bound to the claim) and gets `pv.kubernetes.io/bind-completed`.
- A new unbound claim of an `Immediate` class is bound to the smallest `Available` volume of its class that
  fits (`findBestMatchForClaim`: capacity, volume mode, access modes, selector), else, when its class names a
  dynamic provisioner, to the volume that provisioner creates, `pvc-<uid>`, of the requested size. That
  volume's topology is the provisioner's choice (a zonal one picks a zone kubefit cannot know): it is taken
  as reachable from every node, and the note says so.
- A `WaitForFirstConsumer` claim stays unbound: kube-scheduler chooses its node (VolumeBinding).

Objects an API server stored already (`metadata.uid`: a snapshot) are as they are; with admission off
(`--no-admission`, kube-scheduler's own tests: no controller runs) nothing is bound.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from kubefit.api.storage import (
    NOT_SUPPORTED_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubefit.k8s.labels import parse_selector
from kubefit.manifests.load import Scenario

AVAILABLE, BOUND = "Available", "Bound"


def bind_volumes(scenario: Scenario) -> list[str]:
    """Bind the scenario's new volumes and claims as the PV controller does (see the module); the notes."""
    volumes = scenario.objects.by_kind.get("PersistentVolume", [])
    claims = scenario.objects.by_kind.get("PersistentVolumeClaim", [])
    classes = {c.meta.name: c for c in scenario.objects.of("StorageClass")}
    by_name = {v.meta.name: i for i, v in enumerate(volumes)}
    for i, pv in enumerate(volumes):
        if not pv.meta.uid and not pv.phase:
            volumes[i] = replace(pv, phase=BOUND if pv.claim_ref is not None else AVAILABLE)
    provisioned: list[str] = []
    for i, claim in enumerate(claims):
        if claim.meta.uid or claim.bind_completed:
            continue
        if claim.volume_name:
            j = by_name.get(claim.volume_name)
            if j is not None and _free_for(volumes[j], claim):
                volumes[j], claims[i] = _bind(volumes[j], claim)
            continue
        cls = classes.get(claim.class_name)
        if cls is None or cls.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
            continue
        j = _best_match(volumes, claim)
        if j is not None:
            volumes[j], claims[i] = _bind(volumes[j], claim)
        elif cls.provisioner and cls.provisioner != NOT_SUPPORTED_PROVISIONER:
            pv = _provisioned(claim, cls.provisioner)
            by_name[pv.meta.name] = len(volumes)
            volumes.append(pv)
            volumes[-1], claims[i] = _bind(pv, claim)
            provisioned.append(claim.meta.key)
    scenario.objects.by_kind.setdefault("PersistentVolume", volumes)
    if not provisioned:
        return []
    shown = ", ".join(provisioned[:4]) + (f" and {len(provisioned) - 4} more" if len(provisioned) > 4 else "")
    return [f"PV controller: claim(s) {shown} of an Immediate class provisioned and bound as soon as created; "
            f"kubefit takes each new volume as reachable from every node (a zonal provisioner picks a zone "
            f"kubefit cannot know)"]


def _free_for(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The volume may be bound to the claim: unclaimed, or its claimRef names the claim."""
    ref = pv.claim_ref
    return ref is None or (ref.namespace == claim.meta.namespace and ref.name == claim.meta.name)


def _best_match(volumes: list[PersistentVolume], claim: PersistentVolumeClaim) -> int | None:
    """`findBestMatchForClaim` without a node (immediate binding): the smallest free, Available volume of the
    claim's class that holds its request, in its volume mode, with its access modes, matching its selector
    (a volume pre-bound to the claim wins outright)."""
    selector = None if claim.selector is None else parse_selector(claim.selector)
    best: int | None = None
    for j, pv in enumerate(volumes):
        if pv.class_name != claim.class_name or pv.deleting or not _free_for(pv, claim):
            continue
        if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode:
            continue
        if pv.claim_ref is not None:  # pre-bound to this claim
            return j
        if pv.phase != AVAILABLE or not set(claim.access_modes) <= set(pv.access_modes):
            continue
        if selector is not None and not selector.matches(pv.meta.labels):
            continue
        if best is None or pv.capacity < volumes[best].capacity:
            best = j
    return best


def _bind(pv: PersistentVolume, claim: PersistentVolumeClaim) -> tuple[PersistentVolume, PersistentVolumeClaim]:
    """`bind`: the volume names the claim and is Bound; the claim names the volume, bind-completed, Bound."""
    ref = ClaimRef(claim.meta.namespace, claim.meta.name, claim.meta.uid)
    return (replace(pv, claim_ref=ref, phase=BOUND),
            replace(claim, volume_name=pv.meta.name, bind_completed=True, phase=BOUND))


def _provisioned(claim: PersistentVolumeClaim, provisioner: str) -> PersistentVolume:
    """The volume a dynamic provisioner creates for the claim: `pvc-<claim uid>` (a stable uid for a claim
    that has none yet), of its class, size, access and volume modes; a CSI driver's volume names it."""
    uid = claim.meta.uid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"PersistentVolumeClaim/{claim.meta.key}"))
    name = f"pvc-{uid}"
    csi = "" if provisioner.startswith("kubernetes.io/") else provisioner
    return PersistentVolume(replace(claim.meta, name=name, namespace="", uid="", labels={}),
                            storage_class_name=claim.class_name, capacity=claim.request,
                            access_modes=claim.access_modes, volume_mode=claim.volume_mode, phase=AVAILABLE,
                            csi_driver=csi, csi_volume_handle=name if csi else "")
