"""Files → API objects: multi-document YAML/JSON, `kind: List`, several files; nothing about scheduling.

Every problem is reported as an `InputError` naming the file, the object (kind/name) and the field.
"""

from __future__ import annotations

import datetime
import functools
import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import (
    Container,
    ContainerImage,
    ContainerPort,
    ContainerStatus,
    Node,
    OwnerReference,
    Pod,
    PodCondition,
    ResourceList,
    Taint,
    Toleration,
)
from kubefit.errors import InputError
from kubefit.k8s.declaredfeatures import inferred, restarts_all_containers
from kubefit.k8s.labels import SelectorError, parse_selector
from kubefit.k8s.quantity import QuantityError, parse_quantity
from kubefit.k8s.resourcenames import is_schedulable
from kubefit.k8s.validation import go_quote
from kubefit.manifests.decode import boolean, entries
from kubefit.manifests.decode import check_api_version as _check_api_version
from kubefit.manifests.decode import check_fields as _check_fields
from kubefit.manifests.decode import fail as _fail
from kubefit.manifests.decode import integer as _int
from kubefit.manifests.decode import mapping as _mapping
from kubefit.manifests.decode import sequence as _list
from kubefit.manifests.decode import string as _string
from kubefit.manifests.decode import string_map as _string_map
from kubefit.manifests.decode import type_name as _type_name
from kubefit.manifests.documents import Document
from kubefit.manifests.podparts import (
    CONTAINER_PARTS,
    CONTAINER_STATUS_PARTS,
    POD_SPEC_PARTS,
    POD_STATUS_PARTS,
    check_parts,
)
from kubefit.manifests.schedulinggroup import pod_group_reference
from kubefit.manifests.timing import ARRIVAL_ANNOTATION, DURATION_ANNOTATION, DurationError, parse_duration

TERMINAL_PHASES = ("Succeeded", "Failed")
QUEUED_ANNOTATION = "kubefit.io/queued"  # "true": a pod with spec.nodeName that is still to be scheduled
# Fields of the core/v1 types (v1.34) kubefit reads; any other is a typo the API server would refuse.
OBJECT_FIELDS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
METADATA_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields"})
NODE_SPEC_FIELDS = frozenset({"podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource",
                              "externalID"})
POD_SPEC_FIELDS = frozenset({
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName",
    "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC",
    "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity",
    "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints",
    "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims", "resources", "hostnameOverride",
    "schedulingGroup",  # v1.36+ (`PodSchedulingGroup`, gate GenericWorkload): which versions know it, `podgroups.served`
    "workloadRef"})  # v1.35 only (`WorkloadReference`; tombstoned in v1.36)
CONTAINER_FIELDS = frozenset({
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty"})
RESOURCES_FIELDS = frozenset({"limits", "requests", "claims"})
NODE_STATUS_FIELDS = frozenset({
    "capacity", "allocatable", "phase", "conditions", "addresses", "daemonEndpoints", "nodeInfo", "images",
    "volumesInUse", "volumesAttached", "config", "runtimeHandlers", "features", "declaredFeatures"})
POD_STATUS_FIELDS = frozenset({
    "observedGeneration", "phase", "conditions", "message", "reason", "nominatedNodeName", "hostIP", "hostIPs",
    "podIP", "podIPs", "startTime", "initContainerStatuses", "containerStatuses", "qosClass",
    "ephemeralContainerStatuses", "resize", "resourceClaimStatuses", "extendedResourceClaimStatus",
    "resources", "allocatedResources",  # pod-level resize status (v1.35+, InPlacePodLevelResourcesVerticalScaling)
    "nodeAllocatableResourceClaimStatuses"})  # v1.36 (DRANodeAllocatableResources)
NODE_CONDITION_FIELDS = frozenset({"type", "status", "lastHeartbeatTime", "lastTransitionTime", "reason", "message"})
POD_CONDITION_FIELDS = frozenset({"type", "observedGeneration", "status", "lastProbeTime", "lastTransitionTime",
                                  "reason", "message"})
CONTAINER_STATUS_FIELDS = frozenset({
    "name", "state", "lastState", "ready", "restartCount", "image", "imageID", "containerID", "started",
    "allocatedResources", "resources", "volumeMounts", "user", "allocatedResourcesStatus", "stopSignal"})
AFFINITY_FIELDS = frozenset({"nodeAffinity", "podAffinity", "podAntiAffinity"})
NODE_AFFINITY_FIELDS = frozenset({"requiredDuringSchedulingIgnoredDuringExecution",
                                  "preferredDuringSchedulingIgnoredDuringExecution"})
TERM_FIELDS = frozenset({"matchExpressions", "matchFields"})
# v1 Volume: its name and one VolumeSource; the fields of the sources kubefit reads (the volume plugins) or
# that manifests commonly hold. A source not listed here is kept as given, unread.
VOLUME_SOURCE_FIELDS: dict[str, frozenset[str] | None] = {
    "persistentVolumeClaim": frozenset({"claimName", "readOnly"}),
    "ephemeral": frozenset({"volumeClaimTemplate"}),
    "gcePersistentDisk": frozenset({"pdName", "fsType", "partition", "readOnly"}),
    "awsElasticBlockStore": frozenset({"volumeID", "fsType", "partition", "readOnly"}),
    "rbd": frozenset({"monitors", "image", "fsType", "pool", "user", "keyring", "secretRef", "readOnly"}),
    "iscsi": frozenset({"targetPortal", "iqn", "lun", "iscsiInterface", "fsType", "readOnly", "portals",
                        "chapAuthDiscovery", "chapAuthSession", "secretRef", "initiatorName"}),
    "emptyDir": frozenset({"medium", "sizeLimit"}),
    "hostPath": frozenset({"path", "type"}),
    "configMap": frozenset({"name", "items", "defaultMode", "optional"}),
    "secret": frozenset({"secretName", "items", "defaultMode", "optional"}),
    "projected": frozenset({"sources", "defaultMode"}),
    "downwardAPI": frozenset({"items", "defaultMode"}),
    "csi": frozenset({"driver", "readOnly", "fsType", "volumeAttributes", "nodePublishSecretRef"}),
    "nfs": frozenset({"server", "path", "readOnly"}),
    **dict.fromkeys(("gitRepo", "glusterfs", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
                     "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO",
                     "storageos")),
    "image": frozenset({"reference", "pullPolicy"}),  # ImageLocality reads the reference (v1.36+)
}
VOLUME_FIELDS = frozenset({"name", *VOLUME_SOURCE_FIELDS})
REQUIREMENT_FIELDS = frozenset({"key", "operator", "values"})
TAINT_FIELDS = frozenset({"key", "value", "effect", "timeAdded"})
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_FIELDS = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})
PORT_FIELDS = frozenset({"name", "hostPort", "containerPort", "protocol", "hostIP"})
OWNER_FIELDS = frozenset({"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"})
SPREAD_FIELDS = frozenset({"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                           "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"})
POD_RESOURCE_CLAIM_FIELDS = frozenset({"name", "resourceClaimName", "resourceClaimTemplateName"})
POD_AFFINITY_TERM_FIELDS = frozenset({"labelSelector", "namespaces", "topologyKey", "namespaceSelector",
                                      "matchLabelKeys", "mismatchLabelKeys"})


KUBERNETES_VERSION_ANNOTATION = "kubefit.io/kubernetes-version"  # written by `kubefit snapshot` on every node
_VERSION_KEY = KUBERNETES_VERSION_ANNOTATION.encode()


def _recorded_version(node: Node) -> str | None:
    """The node's `kubefit.io/kubernetes-version` annotation. A node read by the streaming reader keeps its
    manifest as JSON text until asked: looked for in the text first, so that the 5,000 manifests of a large
    snapshot are not all decoded (and kept) to learn that none records a version."""
    raw = node.__dict__.get("raw")
    if type(raw) is bytes:
        if _VERSION_KEY not in raw:
            return None
        raw = json.loads(raw)
    return ((raw.get("metadata") or {}).get("annotations") or {}).get(KUBERNETES_VERSION_ANNOTATION)


@dataclass(frozen=True)
class GatedRefusal:
    """What the API server refuses depending on a feature gate (`minReplicas: 0` without HPAScaleToZero): the
    scenario loads for every version, and the version answered for refuses it (`when_off`, `when_on`: its error
    with the gate off and on; None: accepted)."""

    gate: str
    when_off: InputError | None
    when_on: InputError | None = None


@dataclass
class Scenario:
    """What the user described: at most one scheduler configuration, nodes, pods, fleet objects."""

    scheduler_config: Document | None = None
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)  # document order, bound and pending
    fleet: list[Document] = field(default_factory=list)  # Karmada objects, raw
    objects: ClusterObjects = field(default_factory=ClusterObjects)  # Services, ReplicaSets, PVCs, ... by kind
    workloads: list[Document] = field(default_factory=list)  # Deployment, StatefulSet, …, raw (workloads.py)
    skipped: list[Document] = field(default_factory=list)  # kinds that do not affect scheduling, raw
    warnings: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the files read, for messages about the whole
    admission: bool = True  # pods created from the files go through API-server admission (admission.py)
    # pods the API server refused to create (ResourceQuota admission), with its error: reported as not created
    refused: list[tuple[Pod, str]] = field(default_factory=list)
    # a workload's pods an admission plugin forbade (a missing PriorityClass, a LimitRange, a RuntimeClass...), with
    # the API server's error: never created, so in no run (told in a warning; `kubefit check` fails on them)
    forbidden: list[tuple[Pod, str]] = field(default_factory=list)
    gated_refusals: list[GatedRefusal] = field(default_factory=list)  # checked against the version answered for
    quota: Any = field(default=None, repr=False, compare=False)  # the ResourceQuota admission as loading left it (quota.QuotaAdmission), for later creates

    @property
    def files(self) -> str:
        """The files the scenario was read from, for a message about the scenario as a whole."""
        return ", ".join(self.sources) or "<scenario>"
    pod_specs: dict[bytes, tuple] = field(default_factory=dict, repr=False, compare=False)  # decode_pod's memo

    @property
    def kube_version(self) -> str | None:
        """The Kubernetes version the scenario's cluster runs, as `kubefit snapshot` recorded it on its nodes
        (annotation `kubefit.io/kubernetes-version`, the API server's `/version`); None when not recorded.
        Nodes recording different versions (files of two clusters) record none."""
        seen = {_recorded_version(n) for n in self.nodes} - {None}
        return next(iter(seen)) if len(seen) == 1 else None

    @property
    def bound_pods(self) -> list[Pod]:
        """Pods with `spec.nodeName`: they run there."""
        return [p for p in self.pods if p.bound]

    @property
    def pending_pods(self) -> list[Pod]:
        """Pods without `spec.nodeName` (or annotated `kubefit.io/queued`), in queue order: by arrival
        (`metadata.creationTimestamp`; a pod without one arrives first), then higher `spec.priority`
        first among pods that arrive together, then document order.

        Terminal pods (`Succeeded`/`Failed`) are not queued: the scheduler only takes pods still to run.
        """
        return pending_in_order(self.pods)

    def fleet_objects(self, *kinds: str) -> list[Document]:
        return [d for d in self.fleet if d.kind in kinds]


def pending_in_order(pods: list[Pod]) -> list[Pod]:
    """Of `pods`, those the scheduler still has to place (not bound, not terminal), in queue order
    (`Scenario.pending_pods` of a scenario's pods)."""
    return queue_order([p for p in pods if not p.bound and p.phase not in TERMINAL_PHASES])


def queue_order(pods: list[Pod]) -> list[Pod]:
    """Pods in the scheduling queue's order: by arrival (`metadata.creationTimestamp`; a pod without one
    arrives first), then higher `spec.priority` first among pods that arrive together, then as given."""
    return sorted(pods, key=lambda p: (p.created is not None, p.created or 0.0, -p.priority))


def unread_objects(scenario: Scenario, verb: str, *, keep: tuple[str, ...] = (), config: bool = False,
                   members: bool = False, skipped: bool = False) -> str | None:
    """One sentence naming the objects of the files `kubefit <verb>` does not read, None when it reads all.

    `keep`: fleet kinds the verb reads; `config`: it reads the scheduler configuration; `members`: it
    reads the nodes and pods (scheduler verbs and member verbs do, `models validate` does not);
    `skipped`: name the kinds that place no pod (ConfigMaps, Secrets, …) too, for a verb that does not
    print the scenario's own note about them (the scheduler verbs do).
    """
    ignored = [f"{d.source}: {d.label}" for d in scenario.fleet if d.kind not in keep]
    if skipped:
        ignored += [f"{d.source}: {d.label}" for d in scenario.skipped]
    if scenario.scheduler_config is not None and not config:
        ignored.insert(0, f"{scenario.scheduler_config.source}: {scenario.scheduler_config.label}")
    if not members:
        ignored += [f"{d.source}: {d.label}" for d in scenario.workloads if d.kind not in keep]
        ignored += [f"{n.source}: Node/{n.name}" for n in scenario.nodes]
        ignored += [f"{p.source}: Pod/{p.name}" for p in scenario.pods if not p.created_by]
    if not ignored:
        return None
    shown = ", ".join(ignored[:4]) + (f" and {len(ignored) - 4} more" if len(ignored) > 4 else "")
    return f"kubefit {verb} does not read {shown}; ignored"


def _name(doc: Document) -> str:
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    name = meta.get("name")
    if name is not None and not isinstance(name, str):
        raise _fail(doc, "metadata.name", f"must be a string, got {_type_name(name)} {name!r}")
    if not name:
        raise _fail(doc, "metadata.name", "a name is required (or metadata.generateName)")
    return name


def _object_parts(doc: Document) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """metadata, spec and status of a core object, their known fields checked."""
    _check_fields(doc.body, OBJECT_FIELDS, doc, "")
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    _check_fields(meta, METADATA_FIELDS, doc, "metadata")
    return meta, _mapping(doc.body.get("spec"), doc, "spec"), _mapping(doc.body.get("status"), doc, "status")


_STR_ONLY = frozenset({str})


def decode_resource_list(value: Any, doc: Document, field_path: str, warnings: list[str] | None = None,
                         *, allow_negative: bool = False) -> ResourceList:
    """A `ResourceList` mapping → {name: nanos}; bad or negative quantities are errors."""
    mapping = _mapping(value, doc, field_path)
    if set(map(type, mapping.values())) <= _STR_ONLY:  # the usual case: one parse per distinct list
        try:
            decoded, non_negative, schedulable = _string_resource_list(tuple(mapping.items()))
        except QuantityError:
            pass  # the loop below names the field
        else:
            if (allow_negative or non_negative) and (warnings is None or schedulable):
                return dict(decoded)
    return _decode_resource_list(mapping, doc, field_path, warnings, allow_negative)


@functools.lru_cache(maxsize=4096)
def _string_resource_list(items: tuple[tuple[str, str], ...]) -> tuple[ResourceList, bool, bool]:
    """A resource list of quantity strings → (decoded, none negative, all schedulable); cached, as a
    cluster repeats a few resource lists thousands of times."""
    decoded = {str(name): parse_quantity(raw) for name, raw in items}
    return decoded, all(q >= 0 for q in decoded.values()), all(is_schedulable(n) for n in decoded)


def _decode_resource_list(mapping: dict[str, Any], doc: Document, field_path: str, warnings: list[str] | None,
                          allow_negative: bool) -> ResourceList:
    out: ResourceList = {}
    for name, raw in mapping.items():
        where = f"{field_path}.{name}"
        if isinstance(raw, bool) or raw is None:
            got = "null" if raw is None else f"a boolean {str(raw).lower()}"
            raise InputError(f"must be a quantity such as 2, 500m or 1Gi, got {got}",
                             file=doc.source, obj=doc.label, field=where)
        try:
            nanos = parse_quantity(raw)
        except QuantityError as exc:
            raise InputError(str(exc), file=doc.source, obj=doc.label, field=where) from None
        if nanos < 0 and not allow_negative:
            raise InputError(f"must be greater than or equal to 0, got {raw!r}", file=doc.source,
                             obj=doc.label, field=where)
        if warnings is not None and not is_schedulable(str(name)):
            warnings.append(f"{doc.source}: {doc.label}: {where}: resource {name!r} is not one kube-scheduler "
                            f"accounts for (not cpu, memory, ephemeral-storage, pods, extended or hugepages); "
                            f"it is ignored, as kube-scheduler ignores it")
        out[str(name)] = nanos
    return out


def decode_node(doc: Document, warnings: list[str]) -> Node:
    _check_api_version(doc, "v1")
    name = _name(doc)
    meta, spec, status = _object_parts(doc)
    _check_fields(spec, NODE_SPEC_FIELDS, doc, "spec")
    _check_fields(status, NODE_STATUS_FIELDS, doc, "status")
    allocatable = node_allocatable(status, doc, warnings)
    taints = tuple(_taint(t, doc, f"spec.taints[{i}]") for i, t in enumerate(_list(spec.get("taints"), doc, "spec.taints")))
    labels = _string_map(meta.get("labels"), doc, "metadata.labels")
    for path, condition in entries(status.get("conditions"), doc, "status.conditions", NODE_CONDITION_FIELDS,
                                    "a condition (a mapping with type and status)"):
        for key in ("type", "status"):
            _string(condition.get(key), doc, f"{path}.{key}")
    unschedulable = spec.get("unschedulable")
    if unschedulable is not None and not isinstance(unschedulable, bool):
        raise _fail(doc, "spec.unschedulable", f"must be true or false, got {unschedulable!r}")
    declared = tuple(_string_list(status.get("declaredFeatures"), doc, "status.declaredFeatures"))
    return Node(name=name, allocatable=allocatable, labels=labels, unschedulable=bool(unschedulable),
                taints=taints, images=_node_images(status, doc), declared_features=declared,
                raw=kept_manifest(doc.body), source=doc.source)


def node_allocatable(status: dict[str, Any], doc: Document, warnings: list[str]) -> ResourceList:
    """What the scheduler may place on the node: `status.allocatable`, else `status.capacity` (told), else
    nothing (told). `status` needs only the two keys, each present when the node gives it (null included)."""
    if "allocatable" in status:
        return decode_resource_list(status["allocatable"], doc, "status.allocatable", warnings)
    if "capacity" in status:
        allocatable = decode_resource_list(status["capacity"], doc, "status.capacity", warnings)
        warnings.append(f"{doc.source}: {doc.label}: status.allocatable is absent; using status.capacity")
        return allocatable
    warnings.append(f"{doc.source}: {doc.label}: node has neither status.allocatable nor status.capacity;"
                    f" nothing fits on it")
    return {}


def kept_manifest(body: dict[str, Any]) -> dict[str, Any]:
    """A node's or pod's manifest as kept in its `raw`: less `metadata.managedFields`, which nothing reads
    (the field managers' record, a third of a snapshot's pod) and the streaming reader never keeps."""
    meta = body.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return body
    return {**body, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


_IMAGES: dict[bytes, tuple[ContainerImage, ...]] = {}  # status.images → decoded, for the nodes of one pool


def _node_images(status: dict[str, Any], doc: Document) -> tuple[ContainerImage, ...]:
    """`status.images[]`: names and sizeBytes (ImageLocality); a list decoded before (its exact JSON, as
    the nodes of one pool share it) is not decoded again."""
    images = status.get("images")
    if images is None:
        return ()
    try:
        key = orjson.dumps(images)
    except TypeError:
        return _decode_images(status, doc)
    known = _IMAGES.get(key)
    if known is None:
        known = _decode_images(status, doc)
        if len(_IMAGES) < 256:
            _IMAGES[key] = known
    return known


def _decode_images(status: dict[str, Any], doc: Document) -> tuple[ContainerImage, ...]:
    out = []
    for i, raw in enumerate(_list(status.get("images"), doc, "status.images")):
        path = f"status.images[{i}]"
        image = _mapping(raw, doc, path)
        names = tuple(_string(n, doc, f"{path}.names[{k}]") for k, n in enumerate(_list(image.get("names"), doc,
                                                                                       f"{path}.names")))
        out.append(ContainerImage(names, _int(image.get("sizeBytes"), doc, f"{path}.sizeBytes")))
    return tuple(out)


def _taint(raw: Any, doc: Document, path: str) -> Taint:
    t = _mapping(raw, doc, path)
    _check_fields(t, TAINT_FIELDS, doc, path)
    key = _string(t.get("key"), doc, f"{path}.key")
    if not key:
        raise _fail(doc, f"{path}.key", "a taint needs a key")
    effect = _string(t.get("effect"), doc, f"{path}.effect")
    if effect not in TAINT_EFFECTS:
        raise _fail(doc, f"{path}.effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}"
                    if effect else f"is required ({', '.join(TAINT_EFFECTS)})")
    return Taint(key=key, value=_string(t.get("value"), doc, f"{path}.value"), effect=effect)


def _toleration(raw: Any, doc: Document, path: str) -> Toleration:
    """Types only: an unusual operator or effect is kept, kube-scheduler's matching decides (golden cases)."""
    t = _mapping(raw, doc, path)
    _check_fields(t, TOLERATION_FIELDS, doc, path)
    seconds = t.get("tolerationSeconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
        raise _fail(doc, f"{path}.tolerationSeconds", f"must be an integer, got {seconds!r}")
    return Toleration(**{f: _string(t.get(f), doc, f"{path}.{f}") for f in ("key", "operator", "value", "effect")})


def _container(raw: Any, doc: Document, path: str, warnings: list[str]) -> Container:
    if raw is None:
        raise _fail(doc, path, "must be a container (a mapping with name, resources, ...), got null")
    c = _mapping(raw, doc, path)
    _check_fields(c, CONTAINER_FIELDS, doc, path)
    check_parts(c, CONTAINER_PARTS, doc, path)
    resources = _mapping(c.get("resources"), doc, f"{path}.resources")
    _check_fields(resources, RESOURCES_FIELDS, doc, f"{path}.resources")
    restart = c.get("restartPolicy")
    if restart is not None and restart not in ("Always", "OnFailure", "Never"):
        raise _fail(doc, f"{path}.restartPolicy", f"must be Always, OnFailure or Never, got {restart!r}")
    requests = decode_resource_list(resources.get("requests"), doc, f"{path}.resources.requests", warnings)
    decode_resource_list(resources.get("limits"), doc, f"{path}.resources.limits")  # read by admission.py
    ports = tuple(_port(p, doc, f"{path}.ports[{i}]") for i, p in enumerate(_list(c.get("ports"), doc, f"{path}.ports")))
    return Container(name=_string(c.get("name"), doc, f"{path}.name"), requests=requests, restart_policy=restart,
                     image=_string(c.get("image"), doc, f"{path}.image"), ports=ports)


def _port(raw: Any, doc: Document, path: str) -> ContainerPort:
    port = _mapping(raw, doc, path)
    _check_fields(port, PORT_FIELDS, doc, path)
    return ContainerPort(container_port=_int(port.get("containerPort"), doc, f"{path}.containerPort"),
                         host_port=_int(port.get("hostPort"), doc, f"{path}.hostPort"),
                         protocol=_string(port.get("protocol"), doc, f"{path}.protocol") or "TCP",
                         host_ip=_string(port.get("hostIP"), doc, f"{path}.hostIP"))


def decode_pod(doc: Document, warnings: list[str], memo: dict[bytes, tuple] | None = None) -> Pod:
    """A v1 Pod. With `memo`, a spec equal to one decoded before (the same bytes) is not decoded again:
    pods of one workload share their spec, and a snapshot holds thousands of them."""
    _check_api_version(doc, "v1")
    name = _name(doc)
    meta, spec, status = _object_parts(doc)
    _check_fields(status, POD_STATUS_FIELDS, doc, "status")
    check_parts(status, POD_STATUS_PARTS, doc, "status")
    key = _spec_key(spec) if memo is not None else None
    cached = memo.get(key) if key is not None else None
    if cached is None:
        notes: list[str] = []
        parts = _pod_spec(doc, spec, meta, notes)
        warnings += notes
        prefix = f"{doc.source}: {doc.label}: "
        if key is not None and all(n.startswith(prefix) for n in notes):
            memo[key] = (parts, [n[len(prefix):] for n in notes])
    else:
        parts, notes = cached
        _string_map(meta.get("annotations"), doc, "metadata.annotations")
        _string(meta.get("namespace"), doc, "metadata.namespace")
        warnings += [f"{doc.source}: {doc.label}: {n}" for n in notes]
    return Pod(  # (a pending pod often has neither status nor annotations: what those give is then known)
        name=name,
        namespace=_string(meta.get("namespace"), doc, "metadata.namespace") or "default",
        node_name=_string(spec.get("nodeName"), doc, "spec.nodeName"),
        **parts,
        phase=str(status.get("phase") or ""),
        container_statuses=_container_statuses(status, "containerStatuses", doc) if status else (),
        init_container_statuses=_container_statuses(status, "initContainerStatuses", doc) if status else (),
        conditions=_pod_conditions(status, doc) if status else (),
        resource_claim_statuses=_resource_claim_statuses(status, doc) if status else (),
        labels=_string_map(meta.get("labels"), doc, "metadata.labels"),
        uid=_string(meta.get("uid"), doc, "metadata.uid"),
        owner_references=_owner_references(meta, doc),
        start_time=_start_time(status.get("startTime"), doc),
        created=_timestamp(meta.get("creationTimestamp"), doc, "metadata.creationTimestamp"),
        nominated_node_name=_string(status.get("nominatedNodeName"), doc, "status.nominatedNodeName"),
        **_timing_fields(doc, meta),
        raw=kept_manifest(doc.body),
        source=doc.source,
    )


def _spec_key(spec: dict[str, Any]) -> bytes | None:
    """The spec's exact bytes but for `nodeName` (decoded per pod); key order kept, as it orders resources.

    The whole spec, not only the fields read today: a field a plugin comes to read can never be served
    from another pod's decoding. None when orjson cannot write it (the pod is decoded alone).
    """
    try:
        return orjson.dumps({k: v for k, v in spec.items() if k != "nodeName"} if "nodeName" in spec else spec)
    except TypeError:
        return None


def _pod_spec(doc: Document, spec: dict[str, Any], meta: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """The Pod fields read from `spec`, checked in document order (metadata.annotations among them)."""
    _check_fields(spec, POD_SPEC_FIELDS, doc, "spec")
    check_parts(spec, POD_SPEC_PARTS, doc, "spec")
    raw_containers = _list(spec.get("containers"), doc, "spec.containers")
    if not raw_containers:
        raise InputError("a pod needs at least one container", file=doc.source, obj=doc.label,
                         field="spec.containers")
    containers = tuple(_container(c, doc, f"spec.containers[{i}]", warnings) for i, c in enumerate(raw_containers))
    raw_inits = _list(spec.get("initContainers"), doc, "spec.initContainers")
    inits = tuple(_container(c, doc, f"spec.initContainers[{i}]", warnings) for i, c in enumerate(raw_inits))
    pod_resources = _mapping(spec.get("resources"), doc, "spec.resources")
    _check_fields(pod_resources, RESOURCES_FIELDS, doc, "spec.resources")
    pod_requests = (decode_resource_list(pod_resources["requests"], doc, "spec.resources.requests", warnings)
                    if pod_resources.get("requests") is not None else None)
    priority = spec.get("priority", 0) or 0
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise InputError(f"must be an integer, got {priority!r}", file=doc.source, obj=doc.label,
                         field="spec.priority")
    selector = spec.get("nodeSelector")
    node_selector = None if selector is None else _string_map(selector, doc, "spec.nodeSelector")
    tolerations = tuple(_toleration(t, doc, f"spec.tolerations[{i}]")
                        for i, t in enumerate(_list(spec.get("tolerations"), doc, "spec.tolerations")))
    affinity = spec.get("affinity")
    if affinity is not None:
        _check_affinity(affinity, doc)
    _string_map(meta.get("annotations"), doc, "metadata.annotations")
    _string(meta.get("namespace"), doc, "metadata.namespace")
    _string(spec.get("nodeName"), doc, "spec.nodeName")
    overhead = decode_resource_list(spec.get("overhead"), doc, "spec.overhead", warnings)
    required = inferred(restarts_all_containers(c.get("restartPolicyRules") for c in (*raw_containers, *raw_inits)),
                        boolean(spec.get("hostNetwork"), doc, "spec.hostNetwork"),
                        boolean(spec.get("hostUsers"), doc, "spec.hostUsers"))
    return {"priority": priority, "containers": containers, "init_containers": inits,
            "overhead": overhead, "pod_requests": pod_requests, "node_selector": node_selector,
            "affinity": _mapping(affinity, doc, "spec.affinity") if affinity is not None else None,
            "tolerations": tolerations,
            "scheduler_name": _string(spec.get("schedulerName"), doc, "spec.schedulerName") or "default-scheduler",
            "topology_spread_constraints": _spread_constraints(spec, doc),
            "scheduling_gates": _scheduling_gates(spec, doc),
            "resource_claims": _claims_referenced(spec, doc, _pod_resource_claims(spec, doc)),
            "volumes": tuple(_volume(v, doc, f"spec.volumes[{i}]") for i, v in
                             enumerate(_list(spec.get("volumes"), doc, "spec.volumes"))),
            "preemption_policy": _string(spec.get("preemptionPolicy"), doc, "spec.preemptionPolicy")
            or "PreemptLowerPriority", "required_features": required,
            **pod_group_reference(spec, doc)}


def _pod_resource_claims(spec: dict[str, Any], doc: Document) -> tuple[dict[str, Any], ...]:
    """`spec.resourceClaims[]`: a name and exactly one of resourceClaimName / resourceClaimTemplateName."""
    out = []
    for where, claim in entries(spec.get("resourceClaims"), doc, "spec.resourceClaims", POD_RESOURCE_CLAIM_FIELDS,
                                "a resource claim (a mapping with name and resourceClaimName)"):
        if not _string(claim.get("name"), doc, f"{where}.name"):
            raise _fail(doc, f"{where}.name", "a name is required")
        given = [k for k in ("resourceClaimName", "resourceClaimTemplateName")
                 if _string(claim.get(k), doc, f"{where}.{k}")]
        if len(given) != 1:
            raise _fail(doc, where, "exactly one of resourceClaimName or resourceClaimTemplateName is required")
        out.append(claim)
    return tuple(out)


CONTAINER_CLAIM_FIELDS = frozenset({"name", "request"})  # core/v1 ResourceClaim


def _claims_referenced(spec: dict[str, Any], doc: Document,
                       claims: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
    """`claims`, once every container's `resources.claims[]` (fields `name`, `request`) is checked as
    `validateResourceClaimNames` (pkg/apis/core/validation) checks it: a name, unique per container (with
    its request), naming one of the pod's `spec.resourceClaims`. kube-scheduler does not read them (the
    kubelet does), but the API server refuses a pod whose claims are wrong."""
    names = sorted({c.get("name") for c in claims})
    for kind in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(kind) or ()):
            path = f"spec.{kind}[{i}].resources.claims"
            seen: set[str] = set()
            for where, ref in entries((container.get("resources") or {}).get("claims"), doc, path,
                                      CONTAINER_CLAIM_FIELDS, "a claim (a mapping with name)"):
                name = _string(ref.get("name"), doc, f"{where}.name")
                request = _string(ref.get("request"), doc, f"{where}.request")
                if not name:
                    raise _fail(doc, where, "Required value")
                key = f"{name}/{request}" if request else name
                if key in seen:
                    raise _fail(doc, where, f"Duplicate value: {go_quote(key)}")
                seen.add(key)
                if name not in names:
                    known = f": {', '.join(names)}" if names else " which is empty"
                    raise _fail(doc, where, f"Not found: {go_quote(name)}: must be one of the names in "
                                            f"pod.spec.resourceClaims{known}")
    return claims


def _resource_claim_statuses(status: dict[str, Any], doc: Document) -> tuple[tuple[str, str | None], ...]:
    """`status.resourceClaimStatuses[]`: (pod claim name, the generated claim's name or None)."""
    out = []
    for where, entry in entries(status.get("resourceClaimStatuses"), doc, "status.resourceClaimStatuses",
                                frozenset({"name", "resourceClaimName"}), "a mapping with name and resourceClaimName"):
        name = entry.get("resourceClaimName")
        out.append((_string(entry.get("name"), doc, f"{where}.name"),
                    None if name is None else _string(name, doc, f"{where}.resourceClaimName")))
    return tuple(out)


def _volume(value: Any, doc: Document, path: str) -> dict[str, Any]:
    """A `spec.volumes[]` entry, kept as given: its fields and those of its (known) source checked."""
    volume = _mapping(value, doc, path)
    _check_fields(volume, VOLUME_FIELDS, doc, path)
    for kind, source in volume.items():
        known = VOLUME_SOURCE_FIELDS.get(kind)
        if known is not None and source is not None:
            _check_fields(_mapping(source, doc, f"{path}.{kind}"), known, doc, f"{path}.{kind}")
    return volume


def _start_time(value: Any, doc: Document) -> str:
    """`status.startTime` as given, checked to be an RFC 3339 time (preemption orders victims by it)."""
    text = _string(value, doc, "status.startTime")
    if text:
        _timestamp(text, doc, "status.startTime")
    return text


def _timestamp(value: Any, doc: Document, path: str) -> float | None:
    """An RFC 3339 time (`2023-11-15T00:57:48Z`) as seconds since the epoch; None when absent."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):  # YAML reads unquoted timestamps as datetimes
        stamp = value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
        return stamp.timestamp()
    text = _string(value, doc, path)
    try:
        stamp = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise _fail(doc, path, f"must be an RFC 3339 time such as 2024-01-31T12:00:00Z, got {text!r}") from None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=datetime.UTC)).timestamp()


_OWNER_STRINGS = ("apiVersion", "kind", "name", "uid")
_STR_OR_NONE = (str, type(None))
_BOOL_OR_NONE = (bool, type(None))
_OWNERS: dict[tuple, OwnerReference] = {}  # (apiVersion, kind, name, uid, controller) → one shared (frozen) object
_OWNERS_MAX = 1 << 14


def _owner_references(meta: dict[str, Any], doc: Document) -> tuple[OwnerReference, ...]:
    """`metadata.ownerReferences`; the replicas of a workload name one owner: one object for them all."""
    out = []
    for i, raw in enumerate(_list(meta.get("ownerReferences"), doc, "metadata.ownerReferences")):
        if (type(raw) is dict and raw.keys() <= OWNER_FIELDS and type(raw.get("controller")) in _BOOL_OR_NONE
                and all(type(raw.get(k)) in _STR_OR_NONE for k in _OWNER_STRINGS)):  # what every check below passes
            key = (raw.get("apiVersion"), raw.get("kind"), raw.get("name"), raw.get("uid"), raw.get("controller"))
            ref = _OWNERS.get(key)
            if ref is None:
                if len(_OWNERS) >= _OWNERS_MAX:
                    _OWNERS.clear()
                ref = _OWNERS[key] = OwnerReference(api_version=key[0] or "", kind=key[1] or "", name=key[2] or "",
                                                    uid=key[3] or "", controller=bool(key[4]))
            out.append(ref)
            continue
        path = f"metadata.ownerReferences[{i}]"
        ref = _mapping(raw, doc, path)
        _check_fields(ref, OWNER_FIELDS, doc, path)
        controller = ref.get("controller")
        if controller is not None and not isinstance(controller, bool):
            raise _fail(doc, f"{path}.controller", f"must be true or false, got {controller!r}")
        out.append(OwnerReference(api_version=_string(ref.get("apiVersion"), doc, f"{path}.apiVersion"),
                                  kind=_string(ref.get("kind"), doc, f"{path}.kind"),
                                  name=_string(ref.get("name"), doc, f"{path}.name"),
                                  uid=_string(ref.get("uid"), doc, f"{path}.uid"), controller=bool(controller)))
    return tuple(out)


def _scheduling_gates(spec: dict[str, Any], doc: Document) -> tuple[str, ...]:
    out = []
    for i, raw in enumerate(_list(spec.get("schedulingGates"), doc, "spec.schedulingGates")):
        gate = _mapping(raw, doc, f"spec.schedulingGates[{i}]")
        _check_fields(gate, frozenset({"name"}), doc, f"spec.schedulingGates[{i}]")
        out.append(_string(gate.get("name"), doc, f"spec.schedulingGates[{i}].name"))
    return tuple(out)


def label_selector(value: Any, doc: Document, path: str) -> None:
    """A metav1.LabelSelector: mapping, matchLabels strings, expressions (their fields known) kube-scheduler
    can parse."""
    if value is None:
        return
    selector = _mapping(value, doc, path)
    _check_fields(selector, frozenset({"matchLabels", "matchExpressions"}), doc, path)
    _string_map(selector.get("matchLabels"), doc, f"{path}.matchLabels")
    list(entries(selector.get("matchExpressions"), doc, f"{path}.matchExpressions", REQUIREMENT_FIELDS,
                 "a requirement (a mapping with key, operator, values)"))
    try:
        parse_selector(selector)
    except SelectorError as exc:
        raise _fail(doc, f"{path}.matchExpressions", str(exc)) from None


def _string_list(value: Any, doc: Document, path: str) -> list[str]:
    return [_string(v, doc, f"{path}[{i}]") for i, v in enumerate(_list(value, doc, path))]


def _spread_constraints(spec: dict[str, Any], doc: Document) -> tuple[dict[str, Any], ...]:
    """`spec.topologySpreadConstraints`, fields and types checked, kept as given for PodTopologySpread."""
    out = []
    for i, raw in enumerate(_list(spec.get("topologySpreadConstraints"), doc, "spec.topologySpreadConstraints")):
        path = f"spec.topologySpreadConstraints[{i}]"
        c = _mapping(raw, doc, path)
        _check_fields(c, SPREAD_FIELDS, doc, path)
        _int(c.get("maxSkew"), doc, f"{path}.maxSkew")
        _int(c.get("minDomains"), doc, f"{path}.minDomains")
        for key in ("topologyKey", "whenUnsatisfiable", "nodeAffinityPolicy", "nodeTaintsPolicy"):
            _string(c.get(key), doc, f"{path}.{key}")
        label_selector(c.get("labelSelector"), doc, f"{path}.labelSelector")
        _string_list(c.get("matchLabelKeys"), doc, f"{path}.matchLabelKeys")
        out.append(c)
    return tuple(out)


def _check_pod_affinity(affinity: dict[str, Any], doc: Document) -> None:
    """spec.affinity.podAffinity / podAntiAffinity: terms' fields, selectors, weights."""
    for kind in ("podAffinity", "podAntiAffinity"):
        path = f"spec.affinity.{kind}"
        section = _mapping(affinity.get(kind), doc, path)
        _check_fields(section, frozenset({"requiredDuringSchedulingIgnoredDuringExecution",
                                          "preferredDuringSchedulingIgnoredDuringExecution"}), doc, path)
        rpath = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(_list(section.get("requiredDuringSchedulingIgnoredDuringExecution"), doc, rpath)):
            _check_pod_affinity_term(term, doc, f"{rpath}[{i}]")
        ppath = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, raw in enumerate(_list(section.get("preferredDuringSchedulingIgnoredDuringExecution"), doc, ppath)):
            weighted = _mapping(raw, doc, f"{ppath}[{i}]")
            _check_fields(weighted, frozenset({"weight", "podAffinityTerm"}), doc, f"{ppath}[{i}]")
            _int(weighted.get("weight"), doc, f"{ppath}[{i}].weight")
            _check_pod_affinity_term(weighted.get("podAffinityTerm"), doc, f"{ppath}[{i}].podAffinityTerm")


def _check_pod_affinity_term(value: Any, doc: Document, path: str) -> None:
    term = _mapping(value, doc, path)
    _check_fields(term, POD_AFFINITY_TERM_FIELDS, doc, path)
    label_selector(term.get("labelSelector"), doc, f"{path}.labelSelector")
    label_selector(term.get("namespaceSelector"), doc, f"{path}.namespaceSelector")
    _string_list(term.get("namespaces"), doc, f"{path}.namespaces")
    _string(term.get("topologyKey"), doc, f"{path}.topologyKey")
    for key in ("matchLabelKeys", "mismatchLabelKeys"):
        _string_list(term.get(key), doc, f"{path}.{key}")


def _container_statuses(status: dict[str, Any], key: str, doc: Document) -> tuple[ContainerStatus, ...]:
    """`status.containerStatuses` / `initContainerStatuses`: name, resources.requests, allocatedResources.

    Only these are read (an in-place resize is accounted from them); the kubelet's other fields pass unread,
    their shapes checked (`podparts.CONTAINER_STATUS_PARTS`: state, lastState, resources, ...).
    """
    out = []
    for path, cs in entries(status.get(key), doc, f"status.{key}", CONTAINER_STATUS_FIELDS,
                             "a container status (a mapping with name, resources, ...)"):
        check_parts(cs, CONTAINER_STATUS_PARTS, doc, path)
        resources = cs.get("resources")
        requests = None
        if resources is not None:  # present, even empty: the kubelet reported what it actuated
            requests = decode_resource_list(_mapping(resources, doc, f"{path}.resources").get("requests"), doc,
                                            f"{path}.resources.requests")
        allocated = decode_resource_list(cs.get("allocatedResources"), doc, f"{path}.allocatedResources")
        out.append(ContainerStatus(name=_string(cs.get("name"), doc, f"{path}.name"), requests=requests,
                                   allocated_resources=allocated))
    return tuple(out)


def _pod_conditions(status: dict[str, Any], doc: Document) -> tuple[PodCondition, ...]:
    """`status.conditions[].{type, reason}` (a `PodResizePending` condition changes how a pod is accounted)."""
    out = []
    for path, condition in entries(status.get("conditions"), doc, "status.conditions", POD_CONDITION_FIELDS,
                                    "a condition (a mapping with type and status)"):
        out.append(PodCondition(type=_string(condition.get("type"), doc, f"{path}.type"),
                                reason=_string(condition.get("reason"), doc, f"{path}.reason")))
    return tuple(out)


def _check_affinity(value: Any, doc: Document) -> None:
    """The shape of spec.affinity.nodeAffinity (types only; operators and values are the plugin's to judge)."""
    affinity = _mapping(value, doc, "spec.affinity")
    _check_fields(affinity, AFFINITY_FIELDS, doc, "spec.affinity")
    _check_pod_affinity(affinity, doc)
    path = "spec.affinity.nodeAffinity"
    node_affinity = _mapping(affinity.get("nodeAffinity"), doc, path)
    _check_fields(node_affinity, NODE_AFFINITY_FIELDS, doc, path)
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        rpath = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        selector = _mapping(required, doc, rpath)
        _check_fields(selector, frozenset({"nodeSelectorTerms"}), doc, rpath)
        terms = selector.get("nodeSelectorTerms")
        for i, term in enumerate(_list(terms, doc, f"{rpath}.nodeSelectorTerms")):
            _check_term(term, doc, f"{rpath}.nodeSelectorTerms[{i}]")
    ppath = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for where, pref in entries(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"), doc, ppath,
                                frozenset({"weight", "preference"}), "a mapping with weight and preference"):
        weight = pref.get("weight")
        if weight is not None and (isinstance(weight, bool) or not isinstance(weight, int)):
            raise _fail(doc, f"{where}.weight", f"must be an integer, got {weight!r}")
        _check_term(pref.get("preference"), doc, f"{where}.preference")


def _check_term(value: Any, doc: Document, path: str) -> None:
    term = _mapping(value, doc, path)
    _check_fields(term, TERM_FIELDS, doc, path)
    for part in ("matchExpressions", "matchFields"):
        for where, requirement in entries(term.get(part), doc, f"{path}.{part}", REQUIREMENT_FIELDS,
                                           "a requirement (a mapping with key, operator, values)"):
            _string(requirement.get("key"), doc, f"{where}.key")
            _string(requirement.get("operator"), doc, f"{where}.operator")
            for k, v in enumerate(_list(requirement.get("values"), doc, f"{where}.values")):
                _string(v, doc, f"{where}.values[{k}]")


def _queued(doc: Document, meta: dict[str, Any]) -> bool:
    """`kubefit.io/queued: "true"` keeps a pod with spec.nodeName in the queue (to simulate NodeName)."""
    value = _mapping(meta.get("annotations"), doc, "metadata.annotations").get(QUEUED_ANNOTATION)
    if value is None:
        return False
    if str(value).lower() not in ("true", "false"):
        raise InputError(f'must be "true" or "false", got {value!r}', file=doc.source, obj=doc.label,
                         field=f"metadata.annotations.{QUEUED_ANNOTATION}")
    return str(value).lower() == "true"


_NO_TIMING = {"queued": False, "arrival": 0, "duration": None}


def _timing_fields(doc: Document, meta: dict[str, Any]) -> dict[str, Any]:
    """A pod's `queued`, `arrival` and `duration` from its kubefit.io annotations (`_queued`, `_time_annotation`),
    in that order of their checks; without annotations their defaults. `decode_pod` and `kubefit.manifests.fastpod`
    (a pod, and a replica made from its prototype) read them here."""
    if meta.get("annotations") is None:
        return _NO_TIMING
    return {"queued": _queued(doc, meta), "arrival": _time_annotation(doc, meta, ARRIVAL_ANNOTATION) or 0,
            "duration": _time_annotation(doc, meta, DURATION_ANNOTATION)}


def _time_annotation(doc: Document, meta: dict[str, Any], key: str) -> int | None:
    """`kubefit.io/arrival` / `kubefit.io/duration` in nanoseconds (None when absent)."""
    value = _mapping(meta.get("annotations"), doc, "metadata.annotations").get(key)
    if value is None:
        return None
    try:
        return parse_duration(str(value))
    except DurationError as exc:
        raise _fail(doc, f"metadata.annotations.{key}", str(exc)) from None
