"""The PV controller's binding of the volumes and claims a scenario creates: the state
`pkg/controller/volume/persistentvolume/pv_controller.go` gives them right after they are created, before
kube-scheduler sees a pod that mounts them.

- A new PersistentVolume is `Available` (`syncVolume`), or `Bound` once the claim its `claimRef` names is
  bound to it.
- A new claim naming a volume (`spec.volumeName`, pre-bound) is bound to it (`syncUnboundClaim`) when the
  volume is unclaimed and satisfies it (`checkVolumeSatisfyClaim`: size, class, volume mode, access modes),
  or when the volume's `claimRef` names it; it then gets `pv.kubernetes.io/bind-completed`. Otherwise it
  stays Pending ("Cannot bind to requested volume "pv": storageClassName does not match", ...).
- A new claim without one is matched as `findBestMatchForClaim` matches it (`findByClaim`: the volumes by
  access-mode set, the sets holding the claim's modes fewest modes first; in each `FindMatchingVolume`):
  a volume whose `claimRef` names the claim wins (whatever its class, also for a `WaitForFirstConsumer`
  claim); else, for a claim that is not of a `WaitForFirstConsumer` class, the smallest `Available` volume of
  its class that holds its request, in its volume mode, matching its selector. A claim of a class that does
  not exist, or of none, is not delayed (`IsDelayBindingMode`).
- Unmatched, a claim of an `Immediate` class whose provisioner provisions (not
  `kubernetes.io/no-provisioner`) is bound to the volume that provisioner creates, `pvc-<uid>`, of the
  requested size. That volume's topology is the provisioner's choice: where the class's `allowedTopologies`
  leave it one (a single term, one value per key: the CSI external-provisioner's `requisite` topology, one
  segment), the volume's `nodeAffinity` requires that segment; otherwise (a zonal provisioner picks a zone
  kubefit cannot know) it is taken as reachable from every node, and the note says so.
- A `WaitForFirstConsumer` claim stays unbound: kube-scheduler chooses its node (VolumeBinding). Any other
  claim left unbound stays Pending, and a note says why (for a claim of no class, the PV controller's event:
  "no persistent volumes available for this claim and no storage class is set").

Objects an API server stored already (`metadata.uid`: a snapshot) are as they are; with admission off
(`--no-admission`, kube-scheduler's own tests: no controller runs) nothing is bound.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from kubefit.api.storage import (
    NOT_SUPPORTED_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kubefit.k8s.labels import parse_selector
from kubefit.k8s.quantity import value
from kubefit.k8s.validation import go_quote
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
    pinned: list[str] = []  # provisioned in the one topology their class allows
    pending: dict[str, list[str]] = {}  # why → the claims left Pending for it
    for i, claim in enumerate(claims):
        if claim.meta.uid or claim.bind_completed:
            continue
        if claim.volume_name:
            j = by_name.get(claim.volume_name)
            why = (f"the volume {go_quote(claim.volume_name)} it names does not exist" if j is None else
                   _cannot_bind(volumes[j], claim))
            if j is None or why:
                pending.setdefault(why, []).append(claim.meta.key)
            else:
                volumes[j], claims[i] = _bind(volumes[j], claim)
            continue
        cls = classes.get(claim.class_name) if claim.class_name else None
        delay = cls is not None and cls.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER
        j = _best_match(volumes, claim, delay)
        if j is not None:
            volumes[j], claims[i] = _bind(volumes[j], claim)
        elif delay:
            continue  # kube-scheduler's VolumeBinding chooses the node, then the volume
        elif cls is not None and cls.provisioner and cls.provisioner != NOT_SUPPORTED_PROVISIONER:
            segment = _single_segment(cls)
            pv = replace(_provisioned(claim, cls.provisioner), node_affinity=segment)
            by_name[pv.meta.name] = len(volumes)
            volumes.append(pv)
            volumes[-1], claims[i] = _bind(pv, claim)
            (pinned if segment else provisioned).append(claim.meta.key)
        else:
            pending.setdefault(_unprovisioned(claim, cls, classes), []).append(claim.meta.key)
    scenario.objects.by_kind.setdefault("PersistentVolume", volumes)
    notes = [f"PV controller: claim(s) {_shown(keys)} stay Pending: {why}" for why, keys in pending.items()]
    if pinned:
        notes.append(f"PV controller: claim(s) {_shown(pinned)} of an Immediate class provisioned and bound as soon "
                     f"as created, each volume in the one topology its class's allowedTopologies allow")
    if provisioned:
        notes.append(f"PV controller: claim(s) {_shown(provisioned)} of an Immediate class provisioned and bound as "
                     f"soon as created; kubefit takes each new volume as reachable from every node (a zonal "
                     f"provisioner picks a zone kubefit cannot know)")
    return notes


def _single_segment(cls: StorageClass) -> dict[str, Any] | None:
    """The node affinity of a volume provisioned for `cls` when its `allowedTopologies` name one topology
    segment (one term, each key with one value): the external-provisioner's `GenerateAccessibilityRequirements`
    makes that segment the only `requisite` topology, so the driver creates the volume there and the volume's
    `nodeAffinity` requires it. None when the class leaves the provisioner a choice (or names nothing)."""
    if len(cls.allowed_topologies) != 1:
        return None
    expressions = cls.allowed_topologies[0].get("matchLabelExpressions")
    if not isinstance(expressions, list) or not expressions:
        return None
    required = []
    for e in expressions:
        values = e.get("values") if isinstance(e, dict) else None
        if not (isinstance(values, list) and len(values) == 1 and isinstance(e.get("key"), str)
                and isinstance(values[0], str)):
            return None
        required.append({"key": e["key"], "operator": "In", "values": [values[0]]})
    return {"nodeSelectorTerms": [{"matchExpressions": required}]}


def _shown(keys: list[str]) -> str:
    return ", ".join(keys[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")


def _unprovisioned(claim: PersistentVolumeClaim, cls: StorageClass | None, classes: dict) -> str:
    """Why an unmatched claim that is not delayed stays Pending (`syncUnboundClaim`, no volume found)."""
    if not claim.class_name:
        default = "" if classes else " (the scenario has no StorageClass: give the cluster's default one)"
        return f"no persistent volumes available for this claim and no storage class is set{default}"
    if cls is None:
        return (f"no volume of class {claim.class_name!r} fits, and no StorageClass of that name exists to "
                f"provision one")
    return f"no volume of class {claim.class_name!r} fits, and its provisioner {cls.provisioner} creates none"


def _cannot_bind(pv: PersistentVolume, claim: PersistentVolumeClaim) -> str:
    """Why the PV controller does not bind a claim to the volume it names ("" when it does): the volume's
    claimRef names another claim, or (unclaimed) `checkVolumeSatisfyClaim` refuses it, with the controller's
    event messages."""
    if pv.claim_ref is not None:
        return "" if _bound_to(pv, claim) else f"volume {go_quote(pv.meta.name)} already bound to a different claim."
    if pv.deleting:
        error = f"the volume is marked for deletion {go_quote(pv.meta.name)}"
    elif value(pv.capacity) < value(claim.request):
        error = "requested PV is too small"
    elif pv.class_name != claim.class_name:
        error = "storageClassName does not match"
    elif pv.volume_mode != claim.volume_mode:
        error = "incompatible volumeMode"
    elif not set(claim.access_modes) <= set(pv.access_modes):
        error = "incompatible accessMode"
    else:
        return ""
    return f"Cannot bind to requested volume {go_quote(pv.meta.name)}: {error}"


def _bound_to(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """`IsVolumeBoundToClaim`: the volume's claimRef names the claim (and its uid, when both have one)."""
    ref = pv.claim_ref
    return (ref is not None and ref.namespace == claim.meta.namespace and ref.name == claim.meta.name
            and (not ref.uid or ref.uid == claim.meta.uid))


def _best_match(volumes: list[PersistentVolume], claim: PersistentVolumeClaim, delay: bool) -> int | None:
    """`findByClaim`: the volumes grouped by their set of access modes, the groups that hold every mode the claim
    asks for searched fewest modes first (`allPossibleMatchingAccessModes`), the first match kept."""
    wanted = set(claim.access_modes)
    groups = sorted({frozenset(pv.access_modes) for pv in volumes if wanted <= set(pv.access_modes)}, key=len)
    for modes in groups:
        j = _find_matching_volume(volumes, claim, delay, modes)
        if j is not None:
            return j
    return None


def _find_matching_volume(volumes: list[PersistentVolume], claim: PersistentVolumeClaim, delay: bool,
                          modes: frozenset[str]) -> int | None:
    """`FindMatchingVolume` without a node, over the volumes of one access-mode set: a volume pre-bound to the
    claim (capacity and volume mode permitting) outright; for a delayed claim nothing else; else the smallest
    Available volume of the claim's class that matches its selector."""
    selector = None if claim.selector is None else parse_selector(claim.selector)
    best: int | None = None
    for j, pv in enumerate(volumes):
        if frozenset(pv.access_modes) != modes or (pv.claim_ref is not None and not _bound_to(pv, claim)):
            continue
        if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode or pv.deleting:
            continue
        if _bound_to(pv, claim):
            return j
        if delay or pv.phase != AVAILABLE or (selector is not None and not selector.matches(pv.meta.labels)):
            continue
        if pv.class_name != claim.class_name:
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
