"""Pods decoded straight from their JSON into `Pod`s (msgspec's typed decoding): the bulk of a snapshot.

`kubefit.manifests.load.decode_pod` is the rule; this is a faster road to the same `Pod` and the same
warnings for the pods a live cluster holds. msgspec checks in C what decode_pod checks in Python — the
known fields of the object, its metadata, spec, status, containers and their resources, ports,
tolerations, owner references, conditions and container statuses, and each field's type — and skips
what decode_pod does not read (`msgspec.Raw`), but for the unread parts of a pod spec whose field names
decode_pod checks (probes, lifecycle, security contexts, env, …: `podparts`), typed from the same shapes.
The parts decode_pod checks with more than a type
(affinity, spread constraints, volumes, quantities, times, kubefit's annotations) go through decode_pod's
own helpers. A pod this road does not take as it is — anything msgspec refuses (an unknown field, a
null entry, a type decode_pod would still accept), a helper's refusal, a pod without a name, one whose
text names "priority" when its spec gives none or the other way round (priority admission reads the text:
`names_priority`), or one using what another layer decides (`resourceClaims`, its
containers' `resources.claims` and `status.resourceClaimStatuses`, `runtimeClassName`, `overhead`) — gets None, and the caller decodes it
with decode_pod, which then gives its exact answer or error. `tests/test_stream.py` holds the two to each other.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal
from zlib import crc32

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

from kubefit.api.core import (
    VOLUMES_FROM_RAW,
    Container,
    ContainerStatus,
    OwnerReference,
    Pod,
    PodCondition,
    Toleration,
)
from kubefit.errors import InputError
from kubefit.k8s.declaredfeatures import inferred, restarts_all_containers
from kubefit.manifests import load, podparts
from kubefit.manifests.decode import Complete, check_shape
from kubefit.manifests.documents import Document
from kubefit.manifests.schedulinggroup import pod_group_reference
from kubefit.manifests.timing import ARRIVAL_ANNOTATION, DURATION_ANNOTATION

Quantities = dict[str, str | int | float]


class _Strict(Struct, forbid_unknown_fields=True):
    """A Kubernetes type: any field it does not list is refused (decode's `check_fields`)."""


class _Frozen(_Strict, frozen=True):
    """A hashable one (memo keys)."""


def _typed(shape: Any) -> Any:
    """The msgspec type of a `podparts` shape, so msgspec checks it in C as `check_shape` does in Python: a
    `Complete` is a struct refusing any other field, a list a list of its entries' type, a value anything (decode_pod keeps it as given)."""
    if isinstance(shape, list):
        return list[_typed(shape[0])] | None
    if isinstance(shape, Complete):
        return msgspec.defstruct("Part", [(name, _typed(sub), None)
                                          for name, sub in shape.items()], bases=(_Strict,)) | None
    return Any


# The parts decode_pod does not read, typed (podparts.CONTAINER_PARTS, podparts.POD_SPEC_PARTS).
_EnvFromSources = _typed([podparts.ENV_FROM_SOURCE])
_EnvVars = _typed([podparts.ENV_VAR])
_ResizePolicies = _typed([podparts.CONTAINER_RESIZE_POLICY])
_RestartRules = _typed([podparts.CONTAINER_RESTART_RULE])
_VolumeMounts = _typed([podparts.VOLUME_MOUNT])
_VolumeDevices = _typed([podparts.VOLUME_DEVICE])
_Probe = _typed(podparts.PROBE)
_Lifecycle = _typed(podparts.LIFECYCLE)
_SecurityContext = _typed(podparts.SECURITY_CONTEXT)
_EphemeralContainers = _typed([podparts.EPHEMERAL_CONTAINER])
_PodSecurityContext = _typed(podparts.POD_SECURITY_CONTEXT)
_ImagePullSecrets = _typed([podparts.LOCAL_OBJECT_REFERENCE])
_HostAliases = _typed([podparts.HOST_ALIAS])
_PodDNSConfig = _typed(podparts.POD_DNS_CONFIG)
_ReadinessGates = _typed([podparts.POD_READINESS_GATE])
_PodOS = _typed(podparts.POD_OS)
# ... and of a pod's status (podparts.CONTAINER_STATUS_PARTS, podparts.POD_STATUS_PARTS)
_ContainerState = _typed(podparts.CONTAINER_STATE)
_VolumeMountStatuses = _typed([podparts.VOLUME_MOUNT_STATUS])
_ContainerUser = _typed(podparts.CONTAINER_USER)
_ResourceStatuses = _typed([podparts.RESOURCE_STATUS])
_PodIPs = _typed([podparts.POD_IP])
_EphemeralContainerStatuses = _typed([podparts.CONTAINER_STATUS])
_ExtendedResourceClaimStatus = _typed(podparts.EXTENDED_RESOURCE_CLAIM_STATUS)
_ResourceRequirements = _typed(podparts.RESOURCE_REQUIREMENTS)
_NodeAllocatableClaimStatuses = _typed([podparts.NODE_ALLOCATABLE_CLAIM_STATUS])


def _volume_type() -> Any:
    """load._volume's check as a msgspec type: a v1 Volume's fields (load.VOLUME_FIELDS), a known source's
    own (load.VOLUME_SOURCE_FIELDS), each value anything (decode_pod keeps the volume as given)."""
    fields: list[tuple[str, Any, Any]] = [("name", Any, None)]
    for kind, known in load.VOLUME_SOURCE_FIELDS.items():
        source = Any if known is None else msgspec.defstruct(
            "VolumeSource", [(name, Any, None) for name in sorted(known)], bases=(_Strict,)) | None
        fields.append((kind, source, None))
    return msgspec.defstruct("Volume", fields, bases=(_Strict,))


_Volumes = list[_volume_type()] | None  # type: ignore[misc]


class _OwnerReference(_Frozen):  # load.OWNER_FIELDS
    apiVersion: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None
    blockOwnerDeletion: bool | None = None


class _ObjectMeta(_Strict):  # load.METADATA_FIELDS
    name: str = ""
    generateName: Raw = UNSET
    namespace: str | None = None
    selfLink: Raw = UNSET
    uid: str | None = None
    resourceVersion: Raw = UNSET
    generation: Raw = UNSET
    creationTimestamp: str | None = None
    deletionTimestamp: Raw = UNSET
    deletionGracePeriodSeconds: Raw = UNSET
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    ownerReferences: list[_OwnerReference] | None = None
    finalizers: Raw = UNSET
    managedFields: Raw = UNSET


class _Resources(_Strict):  # load.RESOURCES_FIELDS
    limits: Quantities | None = None
    requests: Quantities | None = None
    claims: Raw = UNSET


class _Port(_Frozen):  # load.PORT_FIELDS
    name: str | None = None
    hostPort: int | None = None
    containerPort: int | None = None
    protocol: str | None = None
    hostIP: str | None = None


class _Container(_Strict):  # load.CONTAINER_FIELDS
    name: str | None = None
    image: str | None = None
    command: Raw = UNSET
    args: Raw = UNSET
    workingDir: Raw = UNSET
    ports: Raw | UnsetType = UNSET  # (decoded, as list[_Port] | None, once per distinct text)
    envFrom: _EnvFromSources = None
    env: _EnvVars = None
    resources: Raw | UnsetType = UNSET  # (decoded, as _Resources | None, once per distinct text)
    resizePolicy: _ResizePolicies = None
    restartPolicy: Literal["Always", "OnFailure", "Never"] | None = None
    restartPolicyRules: _RestartRules = None
    volumeMounts: _VolumeMounts = None
    volumeDevices: _VolumeDevices = None
    livenessProbe: _Probe = None
    readinessProbe: _Probe = None
    startupProbe: _Probe = None
    lifecycle: _Lifecycle = None
    terminationMessagePath: Raw = UNSET
    terminationMessagePolicy: Raw = UNSET
    imagePullPolicy: Raw = UNSET
    securityContext: _SecurityContext = None
    stdin: Raw = UNSET
    stdinOnce: Raw = UNSET
    tty: Raw = UNSET


class _Toleration(_Frozen):  # load.TOLERATION_FIELDS
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    tolerationSeconds: int | None = None


class _SchedulingGate(_Strict):
    name: str | None = None


class _SchedulingGroup(_Strict):  # core/v1 PodSchedulingGroup (v1.36+)
    podGroupName: Raw | UnsetType = UNSET


class _WorkloadRef(_Strict):  # core/v1 WorkloadReference (v1.35)
    name: Raw | UnsetType = UNSET
    podGroup: Raw | UnsetType = UNSET
    podGroupReplicaKey: Raw | UnsetType = UNSET


class _PodSpec(_Strict):  # load.POD_SPEC_FIELDS
    containers: Raw  # (decoded, as list[_Container], once per distinct text: `FastPods._containers`)
    priority: int | None = None  # (None: absent, or null with the text naming it: `FastPods.decode` says which)
    volumes: _Volumes = None  # (checked; the pod's volumes are read from its JSON when asked for)
    initContainers: Raw | UnsetType = UNSET  # (as `containers`, a list or null)
    ephemeralContainers: _EphemeralContainers = None
    restartPolicy: Raw = UNSET
    terminationGracePeriodSeconds: Raw = UNSET
    activeDeadlineSeconds: Raw = UNSET
    dnsPolicy: Raw = UNSET
    nodeSelector: dict[str, str] | None = None
    serviceAccountName: Raw = UNSET
    serviceAccount: Raw = UNSET
    automountServiceAccountToken: Raw = UNSET
    nodeName: str | None = None
    hostNetwork: bool | None = None
    hostPID: Raw = UNSET
    hostIPC: Raw = UNSET
    shareProcessNamespace: Raw = UNSET
    securityContext: _PodSecurityContext = None
    imagePullSecrets: _ImagePullSecrets = None
    hostname: Raw = UNSET
    subdomain: Raw = UNSET
    affinity: Raw | UnsetType = UNSET
    schedulerName: str | None = None
    tolerations: list[_Toleration] | None = None
    hostAliases: _HostAliases = None
    priorityClassName: Raw = UNSET
    dnsConfig: _PodDNSConfig = None
    readinessGates: _ReadinessGates = None
    runtimeClassName: Raw | UnsetType = UNSET
    enableServiceLinks: Raw = UNSET
    preemptionPolicy: str | None = None
    overhead: Raw | UnsetType = UNSET
    topologySpreadConstraints: Raw | UnsetType = UNSET
    setHostnameAsFQDN: Raw = UNSET
    os: _PodOS = None
    hostUsers: bool | None = None
    schedulingGates: list[_SchedulingGate] | None = None
    resourceClaims: Raw | UnsetType = UNSET
    resources: _Resources | None = None
    hostnameOverride: Raw = UNSET
    schedulingGroup: _SchedulingGroup | None = None
    workloadRef: _WorkloadRef | None = None


class _PodCondition(_Strict):  # load.POD_CONDITION_FIELDS
    type: str | None = None
    reason: str | None = None
    observedGeneration: Raw = UNSET
    status: Raw = UNSET
    lastProbeTime: Raw = UNSET
    lastTransitionTime: Raw = UNSET
    message: Raw = UNSET


class _ContainerStatus(_Strict):  # load.CONTAINER_STATUS_FIELDS
    name: str | None = None
    resources: Raw | UnsetType = UNSET
    allocatedResources: Raw | UnsetType = UNSET
    state: _ContainerState = None
    lastState: _ContainerState = None
    ready: Raw = UNSET
    restartCount: Raw = UNSET
    image: Raw = UNSET
    imageID: Raw = UNSET
    containerID: Raw = UNSET
    started: Raw = UNSET
    volumeMounts: _VolumeMountStatuses = None
    user: _ContainerUser = None
    allocatedResourcesStatus: _ResourceStatuses = None
    stopSignal: Raw = UNSET


class _PodStatus(_Strict):  # load.POD_STATUS_FIELDS
    phase: str | None = None
    conditions: list[_PodCondition] | None = None
    startTime: str | None = None
    nominatedNodeName: str | None = None
    containerStatuses: list[_ContainerStatus] | None = None
    initContainerStatuses: list[_ContainerStatus] | None = None
    observedGeneration: Raw = UNSET
    message: Raw = UNSET
    reason: Raw = UNSET
    hostIP: Raw = UNSET
    hostIPs: _PodIPs = None
    podIP: Raw = UNSET
    podIPs: _PodIPs = None
    qosClass: Raw = UNSET
    ephemeralContainerStatuses: _EphemeralContainerStatuses = None
    resize: Raw = UNSET
    resourceClaimStatuses: Raw | UnsetType = UNSET
    extendedResourceClaimStatus: _ExtendedResourceClaimStatus = None
    resources: _ResourceRequirements = None  # pod-level resize status (v1.35+): read aside (scheduler/scenario.py)
    allocatedResources: Raw = UNSET
    nodeAllocatableResourceClaimStatuses: _NodeAllocatableClaimStatuses = None


class _Pod(_Strict):  # load.OBJECT_FIELDS
    apiVersion: Literal["v1"]
    kind: Literal["Pod"]
    metadata: _ObjectMeta
    spec: _PodSpec
    status: _PodStatus | None = None


def names_priority(pod: Pod) -> bool:
    """Whether `pod` is still the JSON `FastPods.decode` took it from and gives `spec.priority`: such a pod's
    text names "priority" exactly when its spec gives one (`decode` hands any other pod to decode_pod). False
    for any other pod (its spec then says)."""
    raw = pod.__dict__.get("raw")
    return type(raw) is bytes and raw.find(b'"priority"') >= 0  # (`find`: `in` raises and clears a TypeError first)


class SpecHead(msgspec.Struct):
    """What admission reads of a pod's spec before anything else, as the manifest gives it (any JSON value):
    Priority admission's three fields, and the two the admission chain's outcome is keyed by."""

    priority: Any = None
    priorityClassName: Any = None
    preemptionPolicy: Any = None
    runtimeClassName: Any = None
    hostNetwork: Any = None


class _PodHead(msgspec.Struct):
    spec: SpecHead | None = None


_POD_HEAD = msgspec.json.Decoder(_PodHead)


def spec_head(pod: Pod) -> SpecHead:
    """The pod's `SpecHead` (None for a field absent), read from its manifest's JSON when it is still JSON (those
    fields alone, leaving it unread: a snapshot's pods not admitted yet are thousands, and most share an
    admission outcome), else from the manifest."""
    raw = pod.__dict__.get("raw")
    if type(raw) is bytes:
        return _POD_HEAD.decode(raw).spec or SpecHead()
    spec = pod.raw.get("spec") or {}
    return SpecHead(spec.get("priority"), spec.get("priorityClassName"), spec.get("preemptionPolicy"),
                    spec.get("runtimeClassName"), spec.get("hostNetwork"))


REPLICAS_MAX = 4096  # prototypes a load keeps (`FastPods._replica`): a workload's pods take one


class FastPods:
    """Decodes pods of one load, remembering what repeats across them (containers, tolerations, …, and whole
    pods: `_replica`)."""

    def __init__(self, replicas_max: int = REPLICAS_MAX) -> None:
        self.decoder = msgspec.json.Decoder(_Pod)
        self.resources = msgspec.json.Decoder(_Resources | None)
        self.ports = msgspec.json.Decoder(list[_Port] | None)
        self.container_list = msgspec.json.Decoder(list[_Container] | None)
        self.memo: dict[Any, Any] = {}
        self.times: dict[str, float] = {}  # (`_time`)
        # replicas' prototypes (`_replica`): by the CRC-32 of their blank's JSON, that JSON, the prototype and its
        # warnings (less their `source: Pod/name: ` prefix); None once full without having paid (`_remember`)
        self.replicas: dict[int, list[tuple[bytes, Pod, tuple[str, ...]]]] | None = {}
        self.replicas_kept = 0
        self.replicas_max = replicas_max
        self.replica_hits = 0
        self.key = bytearray()  # (the blank's JSON: `_replica`)

    def decode(self, data: bytes, source: str, index: int) -> tuple[Pod, list[str]] | None:
        """The `Pod` and warnings decode_pod gives for this JSON, or None where it must decide."""
        named = data.find(b'"priority"') >= 0  # (`find`: `in` raises and clears a TypeError first, each pod)
        try:
            pod = self.decoder.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None
        meta, spec, status = pod.metadata, pod.spec, pod.status
        if (spec.priority is None) == named:  # the text names "priority" but the spec gives none (another field
            return None  # says it, or null), or an escape spells the key: decode_pod decides (`names_priority`)
        if not meta.name or spec.resourceClaims is not UNSET or \
                spec.runtimeClassName is not UNSET or spec.overhead is not UNSET or meta.managedFields is not UNSET \
                or (status is not None and status.resourceClaimStatuses is not UNSET):
            return None  # (the compiled reader leaves managedFields out; `raw` must lack them)
        doc = Document({"kind": "Pod", "metadata": {"name": meta.name}}, source, index)
        warnings: list[str] = []
        try:
            if self.replicas is None:
                decoded = self._pod(pod, doc, warnings, data)
            else:
                decoded = self._replica(pod, doc, warnings, data)
        except (InputError, msgspec.ValidationError, msgspec.DecodeError, msgspec.EncodeError, _Handover):
            return None  # (EncodeError: a blank's key, never seen: what msgspec decodes it encodes)
        return decoded, warnings

    def _replica(self, pod: _Pod, doc: Document, warnings: list[str], data: bytes) -> Pod:
        """`_pod` of this pod, made from the prototype of its replicas: the replicas of a workload differ in
        their name, uid, creation time, node, labels (a StatefulSet's pod name, a Job's completion index), …
        (`_Own`), and everything else `_pod` reads of them is one JSON text.

        Those per-pod values are taken out of the struct and blanked there (`_Own.take`), and the blank's JSON
        (msgspec's encoding: each typed value in one spelling, a `Raw` part as its text, an absent part left
        out) keys the prototype `_pod` made of the first such blank, with the warnings it gave (told again with
        this pod's `source: Pod/name: `, as `_containers` tells its notes). The prototype is `_pod` of the blank
        on a miss as on a hit, so a field `_pod` read but the blank lacked would be wrong for every pod, not only
        for a replica. The pod is then the prototype's fields with its own values (`_Own.put`): one dict copy
        where `Pod(...)` took ~40 keyword arguments and as many memo look-ups.

        A live pod's containers mount its service-account token's volume, named per pod (`kube-api-access-x7k2q`),
        so their JSON differs between replicas in that name alone: a name no part of kubefit reads (decode_pod
        checks a volume mount's field names, each value anything: `podparts.VOLUME_MOUNT`), left out of the blank's
        containers (`_unmounted`) as out of its container statuses (`_blank_status`). Only a pod with volumes is
        searched for mounts (a mount must name one of the pod's volumes: the API server checks it), so a file of
        pods without volumes pays nothing for it.

        The JSON is written into one buffer and found by its CRC-32, then compared whole: a `bytes` key made for
        each pod (a kilobyte for a production pod) left a hole in the C heap between each two pods' lasting
        objects that the next pod's could not fill (+5 MiB of peak RSS for 10,000 pods)."""
        own = _Own.take(pod)
        if own.volumes and data.find(b'"volumeMounts"') >= 0:  # (a mount names a volume: the API server checks it)
            spec = pod.spec
            spec.containers, spec.initContainers = _unmounted(spec.containers), _unmounted(spec.initContainers)
        key = self.key
        _KEY.encode_into(pod, key)
        crc = crc32(key)
        for known, prototype, notes in self.replicas.get(crc, ()):  # type: ignore[union-attr]
            if known == key:
                self.replica_hits += 1
                if notes:
                    warnings += (f"{doc.source}: {doc.label}: {n}" for n in notes)
                return own.put(self, prototype, doc, data)
        known = bytes(key)
        made: list[str] = []
        prototype = self._pod(pod, doc, made, b"")
        warnings += made
        self._remember(crc, known, prototype, made, f"{doc.source}: {doc.label}: ")
        return own.put(self, prototype, doc, data)

    def _remember(self, crc: int, key: bytes, prototype: Pod, notes: list[str], prefix: str) -> None:
        """Keeps a prototype (and its warnings, as `_replica` tells them again: each must start with this pod's
        prefix), up to `replicas_max` of them; a full memo that has not been hit as often as it holds entries
        is dropped (a file of distinct pods: then each is `_pod`, without a key)."""
        if self.replicas_kept >= self.replicas_max:
            if self.replica_hits < self.replicas_kept:
                self.replicas = None
            return
        if all(n.startswith(prefix) for n in notes):
            self.replicas.setdefault(crc, []).append(  # type: ignore[union-attr]
                (key, prototype, tuple(n[len(prefix):] for n in notes)))
            self.replicas_kept += 1

    def _pod(self, pod: _Pod, doc: Document, warnings: list[str], data: bytes) -> Pod:
        meta, spec, status = pod.metadata, pod.spec, pod.status or _PodStatus()
        containers, rules = self._containers(spec.containers, "containers", doc, warnings)
        if not containers:
            raise _Handover  # (decode_pod refuses a pod without containers)
        inits, init_rules = self._containers(spec.initContainers, "initContainers", doc, warnings)
        resources = spec.resources or _Resources()
        pod_requests = (load.decode_resource_list(resources.requests, doc, "spec.resources.requests", warnings)
                        if resources.requests is not None else None)
        affinity = self._parsed("affinity", spec.affinity, lambda value: load._check_affinity(value, doc))
        return Pod(
            name=meta.name, namespace=meta.namespace or "default", node_name=spec.nodeName or "",
            priority=spec.priority or 0, containers=containers, init_containers=inits, overhead=_NO_OVERHEAD,
            pod_requests=pod_requests, node_selector=spec.nodeSelector, affinity=affinity,
            tolerations=self._tolerations(spec.tolerations, doc),
            scheduler_name=spec.schedulerName or "default-scheduler",
            topology_spread_constraints=self._parsed(
                "spread", spec.topologySpreadConstraints,
                lambda value: load._spread_constraints({"topologySpreadConstraints": value}, doc)) or (),
            scheduling_gates=tuple(g.name or "" for g in spec.schedulingGates or ()), resource_claims=(),
            volumes=VOLUMES_FROM_RAW if spec.volumes else (),
            preemption_policy=spec.preemptionPolicy or "PreemptLowerPriority",
            required_features=_required_features(spec, rules + init_rules),
            phase=status.phase or "",
            container_statuses=self._statuses(status.containerStatuses, "containerStatuses", doc),
            init_container_statuses=self._statuses(status.initContainerStatuses, "initContainerStatuses", doc),
            conditions=self._conditions(status.conditions),
            labels=meta.labels if meta.labels is not None else {}, uid=meta.uid or "",
            owner_references=self._owners(meta.ownerReferences),
            start_time=self._start_time(status.startTime, doc),
            created=self._time("metadata.creationTimestamp", meta.creationTimestamp, doc),
            nominated_node_name=status.nominatedNodeName or "",
            **load._timing_fields(doc, {"annotations": meta.annotations}),
            raw=data, source=doc.source, **self._group_reference(spec, doc))

    @staticmethod
    def _group_reference(spec: _PodSpec, doc: Document) -> dict[str, Any]:
        """`podgroups.pod_group_reference` of the spec's schedulingGroup / workloadRef (most pods have neither)."""
        if spec.schedulingGroup is None and spec.workloadRef is None:
            return {}
        given = {name: {k: msgspec.json.decode(v) for k in struct.__struct_fields__
                        if (v := getattr(struct, k)) is not UNSET}
                 for name, struct in (("schedulingGroup", spec.schedulingGroup), ("workloadRef", spec.workloadRef))
                 if struct is not None}
        return pod_group_reference(given, doc)

    def _containers(self, raw: Raw | UnsetType, field: str, doc: Document,
                    warnings: list[str]) -> tuple[tuple[Container, ...], list[Any]]:
        """load._container of each of a list's containers (see `_container`), as one shared tuple, and their
        `restartPolicyRules` given (for `_required_features`): memoised, with the warnings they give (told per
        pod), by the list's JSON text, so that a replica's containers cost one look-up. Absent or null: none."""
        if raw is UNSET:
            return (), []
        key = ("containers", field, bytes(raw))
        known = self.memo.get(key)
        if known is None:
            containers = self.container_list.decode(raw) or ()
            notes: list[str] = []
            decoded = self._shared(tuple([self._container(c, doc, field, i, notes)
                                          for i, c in enumerate(containers)]))
            prefix = f"{doc.source}: {doc.label}: "
            known = self.memo[key] = (decoded, [n.removeprefix(prefix) for n in notes],
                                      [c.restartPolicyRules for c in containers if c.restartPolicyRules])
        decoded, notes, rules = known
        if notes:
            warnings += (f"{doc.source}: {doc.label}: {n}" for n in notes)
        return decoded, rules

    def _container(self, c: _Container, doc: Document, field: str, i: int, warnings: list[str]) -> Container:
        """load._container on the fields it reads, memoised with its warnings (told per pod) by those fields'
        JSON text; a container with `resources.claims` is left to decode_pod."""
        key = ("container", field, i, c.name, c.image, c.restartPolicy, _bytes(c.resources), _bytes(c.ports))
        known = self.memo.get(key)
        if known is None:
            resources = _Resources() if c.resources is UNSET else self.resources.decode(c.resources) or _Resources()
            if resources.claims is not UNSET:
                raise _Handover
            ports = None if c.ports is UNSET else self.ports.decode(c.ports)
            fields: dict[str, Any] = {"name": c.name, "image": c.image, "restartPolicy": c.restartPolicy,
                                      "resources": {"requests": resources.requests, "limits": resources.limits},
                                      "ports": [msgspec.structs.asdict(p) for p in ports or ()]}
            notes: list[str] = []
            decoded = load._container(fields, doc, f"spec.{field}[{i}]", notes)
            prefix = f"{doc.source}: {doc.label}: "
            known = self.memo[key] = (decoded, [n.removeprefix(prefix) for n in notes])
        decoded, notes = known
        if notes:
            warnings += (f"{doc.source}: {doc.label}: {n}" for n in notes)
        return decoded

    def _tolerations(self, tolerations: list[_Toleration] | None, doc: Document) -> tuple[Toleration, ...]:
        key = ("tolerations", tuple(tolerations or ()))
        known = self.memo.get(key)
        if known is None:
            known = self.memo[key] = tuple(load._toleration(msgspec.structs.asdict(t), doc, f"spec.tolerations[{i}]")
                                           for i, t in enumerate(tolerations or ()))
        return known

    def _statuses(self, statuses: list[_ContainerStatus] | None, field: str,
                  doc: Document) -> tuple[ContainerStatus, ...]:
        """load._container_statuses: name, status.resources.requests, allocatedResources (memoised per status,
        and the whole list per its statuses' keys: one look-up for a pod like the last)."""
        if not statuses:
            return ()
        keys = tuple((cs.name, _bytes(cs.resources), _bytes(cs.allocatedResources)) for cs in statuses)
        whole = self.memo.get(("statuses", field, keys))
        if whole is not None:
            return whole
        out = []
        for i, cs in enumerate(statuses):
            key = ("status", field, i, cs.name, _bytes(cs.resources), _bytes(cs.allocatedResources))
            known = self.memo.get(key)
            if known is None:
                path = f"status.{field}[{i}]"
                resources = None if cs.resources is UNSET else msgspec.json.decode(cs.resources)
                requests = None
                check_shape(resources, podparts.RESOURCE_REQUIREMENTS, doc, f"{path}.resources")
                if resources is not None:
                    requests = load.decode_resource_list(load._mapping(resources, doc, f"{path}.resources").get(
                        "requests"), doc, f"{path}.resources.requests")
                allocated = None if cs.allocatedResources is UNSET else msgspec.json.decode(cs.allocatedResources)
                known = self.memo[key] = ContainerStatus(
                    name=load._string(cs.name, doc, f"{path}.name"), requests=requests,
                    allocated_resources=load.decode_resource_list(allocated, doc, f"{path}.allocatedResources"))
            out.append(known)
        whole = self.memo[("statuses", field, keys)] = self._shared(tuple(out))
        return whole

    def _parsed(self, what: str, raw: Raw | UnsetType, check: Any) -> Any:
        """A field kept as given, checked by decode_pod's helper once per distinct JSON text (shared)."""
        if raw is UNSET:
            return None
        key = (what, bytes(raw))
        known = self.memo.get(key, _MISSING)
        if known is _MISSING:
            value = msgspec.json.decode(raw)
            known = self.memo[key] = None if value is None else check(value) if what == "spread" else (
                check(value), value)[1]
        return known

    def _start_time(self, text: str | None, doc: Document) -> str:
        """load._start_time: the text, checked to be an RFC 3339 time when not empty."""
        if text:
            self._time("status.startTime", text, doc)
        return text or ""

    def _time(self, path: str, text: str | None, doc: Document) -> float | None:
        """load._timestamp of a time string (memoised, by the text alone: a snapshot's pods share few)."""
        if text is None:
            return None
        known = self.times.get(text)
        if known is None:
            known = self.times[text] = load._timestamp(text, doc, path)  # (a float: a str is never None)
        return known

    def _conditions(self, conditions: list[_PodCondition] | None) -> tuple[PodCondition, ...]:
        if not conditions:
            return ()
        keys = tuple((c.type, c.reason) for c in conditions)
        whole = self.memo.get(("conditions", keys))
        if whole is not None:
            return whole
        out = []
        for c in conditions:
            key = ("condition", c.type, c.reason)
            known = self.memo.get(key)
            if known is None:
                known = self.memo[key] = PodCondition(type=c.type or "", reason=c.reason or "")
            out.append(known)
        whole = self.memo[("conditions", keys)] = self._shared(tuple(out))
        return whole

    def _shared(self, parts: tuple) -> tuple:
        """One tuple object for equal tuples of shared parts (containers, statuses, conditions): the engine
        and `compile_state` remember a pod's requests by the identity of these."""
        key = ("tuple", *map(id, parts))
        known = self.memo.get(key)
        if known is None:
            known = self.memo[key] = parts
        return known

    def _owners(self, refs: list[_OwnerReference] | None) -> tuple[OwnerReference, ...]:
        key = ("owners", tuple(refs or ()))
        known = self.memo.get(key)
        if known is None:
            known = self.memo[key] = tuple(
                OwnerReference(api_version=r.apiVersion or "", kind=r.kind or "", name=r.name or "", uid=r.uid or "",
                               controller=bool(r.controller)) for r in refs or ())
        return known


class _Own:
    """What tells a replica apart (`FastPods._replica`): the fields `_pod` reads per pod, taken out of the struct
    (`take`) and blanked there as if absent, and what the struct's JSON holds that decode_pod never reads and a
    live cluster sets per pod (a StatefulSet pod's `spec.hostname`, `metadata.resourceVersion`, a running pod's
    IPs, its conditions' and containers' times and states), blanked too. `put` makes the pod: the prototype's
    fields, with this pod's as `_pod` gives them from its struct."""

    __slots__ = ("name", "uid", "created", "labels", "annotations", "node_name", "node_selector", "volumes",
                 "start_time", "nominated")

    @classmethod
    def take(cls, pod: _Pod) -> _Own:
        own = cls()
        meta, spec, status = pod.metadata, pod.spec, pod.status
        own.name, own.uid, own.created, own.labels, own.annotations = (
            meta.name, meta.uid, meta.creationTimestamp, meta.labels, meta.annotations)
        meta.name, meta.uid, meta.creationTimestamp, meta.labels, meta.annotations = "", None, None, None, None
        meta.resourceVersion = meta.selfLink = UNSET
        own.node_name, own.node_selector, own.volumes = spec.nodeName, spec.nodeSelector, spec.volumes
        spec.nodeName = spec.nodeSelector = spec.volumes = None
        spec.hostname = UNSET
        if status is None:
            own.start_time = own.nominated = None
        else:
            own.start_time, own.nominated = status.startTime, status.nominatedNodeName
            _blank_status(status)
        return own

    def put(self, fast: FastPods, prototype: Pod, doc: Document, data: bytes) -> Pod:
        """The pod: `prototype`'s fields (a new dict: `api.core.copied`'s way, not `__init__`), this pod's own
        values read as `_pod` reads them (a bad time or kubefit annotation refused as it refuses it), its fields
        that are mutable and per pod in `_pod`'s (`labels`, `node_selector`: the struct's own dicts;
        `pod_requests`, made by `decode_resource_list` for each pod) its own, its manifest its own JSON."""
        fields = prototype.__dict__.copy()
        fields["name"] = self.name
        fields["uid"] = self.uid or ""
        fields["labels"] = self.labels if self.labels is not None else {}
        fields["created"] = fast._time("metadata.creationTimestamp", self.created, doc)
        fields["node_name"] = self.node_name or ""
        fields["node_selector"] = self.node_selector
        fields["volumes"] = VOLUMES_FROM_RAW if self.volumes else ()
        if self.start_time is not None:
            fields["start_time"] = fast._start_time(self.start_time, doc)
        if self.nominated is not None:
            fields["nominated_node_name"] = self.nominated
        annotations = self.annotations
        if annotations and (load.QUEUED_ANNOTATION in annotations or ARRIVAL_ANNOTATION in annotations
                            or DURATION_ANNOTATION in annotations):
            fields.update(load._timing_fields(doc, {"annotations": annotations}))
        if fields["pod_requests"] is not None:
            fields["pod_requests"] = dict(fields["pod_requests"])
        fields["raw"] = data
        fields["source"] = doc.source
        made = object.__new__(Pod)
        made.__dict__ = fields
        return made


def _blank_status(status: _PodStatus) -> None:
    """A pod status less what `_Own` reads per pod and what decode_pod never reads of it and a kubelet sets per
    pod (IPs, its conditions' times and messages, its containers' states, ids, counts, volume mounts)."""
    status.startTime = status.nominatedNodeName = None
    status.hostIP = status.podIP = status.message = UNSET
    status.hostIPs = status.podIPs = None
    for condition in status.conditions or ():
        condition.status = condition.lastProbeTime = condition.lastTransitionTime = condition.message = UNSET
    for statuses in (status.containerStatuses, status.initContainerStatuses):
        for cs in statuses or ():
            cs.state = cs.lastState = None
            cs.ready = cs.restartCount = cs.imageID = cs.containerID = cs.started = UNSET
            cs.volumeMounts = None


@cache
def _container_texts() -> msgspec.json.Decoder:
    """The decoder of a containers list whose containers' (`_Container`'s fields) and volume mounts'
    (podparts.VOLUME_MOUNT's) values are their JSON text (`_unmounted`; made when first needed: most files have
    no volumes)."""
    mount = msgspec.defstruct("MountText", [(name, Raw, UNSET) for name in podparts.VOLUME_MOUNT], bases=(_Strict,))
    container = msgspec.defstruct(
        "ContainerText", [(name, list[mount] | None, None) if name == "volumeMounts" else (name, Raw, UNSET)
                          for name in _Container.__struct_fields__], bases=(_Strict,))
    return msgspec.json.Decoder(list[container])


def _unmounted(raw: Raw | UnsetType) -> Raw | UnsetType:
    """A containers list's JSON less its volume mounts' names (`FastPods._replica`): the same field names, each
    other value the same text (in msgspec's order, a null kept as null), so what `_pod` decodes of it is what it
    decodes of the list, and what it refuses it refuses; the list as it is where it is not a list of mappings
    with a container's and a mount's field names (`_pod` decides). A mount's name is checked as anything and
    read nowhere (`podparts.VOLUME_MOUNT`; a pod's volumes are read from its own JSON)."""
    if raw is UNSET:
        return raw
    try:
        containers = _container_texts().decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return raw
    for container in containers:
        for mount in container.volumeMounts or ():
            mount.name = UNSET
    return Raw(_KEY.encode(containers))


_KEY = msgspec.json.Encoder()


class _Handover(Exception):
    """What decode_pod decides: a container with `resources.claims` (DynamicResources'), a pod without
    containers."""


_MISSING = object()
_NO_OVERHEAD: dict[str, int] = {}  # spec.overhead absent (fastpod leaves a pod with overhead to decode_pod)


def _required_features(spec: _PodSpec, rules: list[Any]) -> tuple[str, ...]:
    """load's inference from the containers' and init containers' `restartPolicyRules` (`rules`, those given),
    `hostNetwork` and `hostUsers` (at once `()` for the usual pod, with neither rules nor `hostUsers: false`)."""
    if not rules and spec.hostUsers is not False:
        return ()
    return inferred(restarts_all_containers(rules), spec.hostNetwork, spec.hostUsers)


def _bytes(raw: Raw | UnsetType) -> bytes | None:
    return None if raw is UNSET else bytes(raw)
