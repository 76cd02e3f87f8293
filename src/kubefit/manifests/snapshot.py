"""A live cluster → a scenario: its nodes, storage objects, PodDisruptionBudgets, non-terminal pods,
namespaces, services, pod controllers, LimitRanges, ResourceQuotas, RuntimeClasses, PriorityClasses and DRA
objects (DeviceClasses, ResourceSlices, ResourceClaims and their templates), trimmed to what scheduling reads.

The kubeconfig is found as kubectl finds it: `--kubeconfig`, then `$KUBECONFIG` (paths joined by the OS
path separator, merged), then `~/.kube/config`, then the in-cluster service account. Lists are read in
pages (`limit`/`continue`) with the official `kubernetes` client. Every failure to reach or read the
cluster is an `InputError` (one line, exit 2).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kubefit.errors import InputError

PAGE_SIZE = 500  # what kubectl asks for
TERMINAL_PHASES = ("Succeeded", "Failed")
# The pod list kube-scheduler's informer watches: everything not finished.
NON_TERMINAL = ",".join(f"status.phase!={phase}" for phase in TERMINAL_PHASES)

# What a scenario needs of each object; everything else (managedFields, most conditions, ...) is noise.
NODE_META = ("name", "labels", "creationTimestamp")
NODE_SPEC = ("unschedulable", "taints")
NODE_STATUS = ("capacity", "allocatable", "images", "declaredFeatures")  # declaredFeatures: NodeDeclaredFeatures
IMAGE_FIELDS = ("names", "sizeBytes")  # of each node `status.images[]` (ImageLocality)
POD_META = ("name", "namespace", "uid", "labels", "creationTimestamp", "ownerReferences")
POD_SPEC = ("nodeName", "schedulerName", "priority", "priorityClassName", "preemptionPolicy",
            "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "schedulingGates",
            "overhead", "resources", "hostNetwork", "hostUsers", "runtimeClassName", "volumes", "resourceClaims")
# image: ImageLocality; restartPolicyRules: NodeDeclaredFeatures (a RestartAllContainers rule)
CONTAINER_FIELDS = ("name", "image", "resources", "restartPolicy", "restartPolicyRules", "ports")
# preemption orders victims by start time; DynamicResources finds a pod's template claims by its status
POD_STATUS = ("phase", "startTime", "nominatedNodeName", "resourceClaimStatuses")
# A bound pod mid-resize is accounted from its container statuses (InPlacePodVerticalScaling) and its
# PodResizePending condition; those parts of the status are kept, the rest is noise.
RESIZE_CONDITION = "PodResizePending"


def snapshot(kubeconfig: str | None = None, context: str | None = None) -> list[dict[str, Any]]:
    """Nodes, storage objects, PDBs, namespaces, services, pod controllers, LimitRanges, ResourceQuotas,
    RuntimeClasses and PriorityClasses, then non-terminal pods of the cluster, trimmed; pods in creation order
    (queue order)."""
    from kubernetes import client

    api = client.CoreV1Api(api_client(kubeconfig, context))
    where = _server(api)
    nodes = list(_list_all(api.list_node, "nodes", where))
    version = server_version(api.api_client, where)
    nodes = [trim_node(n, version) for n in nodes]
    pods = [trim_pod(p) for p in _list_all(api.list_pod_for_all_namespaces, "pods", where,
                                           field_selector=NON_TERMINAL)
            if (p.get("status") or {}).get("phase") not in TERMINAL_PHASES]
    pods.sort(key=lambda p: str(p["metadata"].get("creationTimestamp") or ""))  # stable: API order kept
    return [*nodes, *_objects(api.api_client, where, STORAGE_KINDS), *_objects(api.api_client, where, CLUSTER_KINDS),
            *_objects(api.api_client, where, POLICY_KINDS), *_dra_objects(api.api_client, where), *pods]


# The storage objects the volume plugins read and the PodDisruptionBudgets preemption reads:
# (API group class, list method, resource, apiVersion, kind, kept top-level fields, kept spec, kept status).
STORAGE_KINDS = (
    ("CoreV1Api", "list_persistent_volume_claim_for_all_namespaces", "persistentvolumeclaims", "v1",
     "PersistentVolumeClaim", (), ("accessModes", "selector", "resources", "volumeName", "storageClassName",
                                   "volumeMode"), ("phase",)),
    ("CoreV1Api", "list_persistent_volume", "persistentvolumes", "v1", "PersistentVolume", (),
     ("capacity", "accessModes", "claimRef", "storageClassName", "volumeMode", "nodeAffinity", "csi",
      "gcePersistentDisk", "awsElasticBlockStore", "azureDisk", "azureFile", "cinder", "vsphereVolume",
      "portworxVolume", "local", "hostPath"), ("phase",)),
    ("StorageV1Api", "list_storage_class", "storageclasses", "storage.k8s.io/v1", "StorageClass",
     ("provisioner", "reclaimPolicy", "volumeBindingMode", "allowedTopologies"), (), ()),
    ("StorageV1Api", "list_csi_node", "csinodes", "storage.k8s.io/v1", "CSINode", (), ("drivers",), ()),
    ("StorageV1Api", "list_csi_driver", "csidrivers", "storage.k8s.io/v1", "CSIDriver", (),
     ("attachRequired", "storageCapacity"), ()),
    ("PolicyV1Api", "list_pod_disruption_budget_for_all_namespaces", "poddisruptionbudgets", "policy/v1",
     "PodDisruptionBudget", (), ("minAvailable", "maxUnavailable", "selector"), ("disruptionsAllowed",
                                                                                 "disruptedPods")),
)
# The objects PodTopologySpread's default constraints and InterPodAffinity's namespaceSelector read
# (kubefit.manifests.cluster), the controllers also as workloads (kubefit.manifests.workloads: replicas, template).
CLUSTER_KINDS = (
    ("CoreV1Api", "list_namespace", "namespaces", "v1", "Namespace", (), (), ()),
    ("CoreV1Api", "list_service_for_all_namespaces", "services", "v1", "Service", (), ("selector",), ()),
    ("AppsV1Api", "list_replica_set_for_all_namespaces", "replicasets", "apps/v1", "ReplicaSet", (),
     ("replicas", "selector", "template"), ()),
    ("AppsV1Api", "list_stateful_set_for_all_namespaces", "statefulsets", "apps/v1", "StatefulSet", (),
     ("replicas", "selector", "template", "ordinals", "volumeClaimTemplates", "podManagementPolicy"), ()),
    ("CoreV1Api", "list_replication_controller_for_all_namespaces", "replicationcontrollers", "v1",
     "ReplicationController", (), ("replicas", "selector", "template"), ()),
)
# What the API server's admission reads when a pod is created (a pending pod of the files, a replica `capacity`
# adds, a DaemonSet's pod on a node `plan` adds, a controller's replacement during a run): the namespaces'
# LimitRanges, their ResourceQuotas with the quota controller's `status` (`status.used` is what the live
# cluster's pods use; kubefit.manifests.quota keeps it), the RuntimeClasses (kubefit.manifests.admission) and the
# PriorityClasses (kubefit.manifests.priority: a template naming a class, the global default; a quota's
# PriorityClass scope).
POLICY_KINDS = (
    ("CoreV1Api", "list_limit_range_for_all_namespaces", "limitranges", "v1", "LimitRange", (), ("limits",), ()),
    ("CoreV1Api", "list_resource_quota_for_all_namespaces", "resourcequotas", "v1", "ResourceQuota", (),
     ("hard", "scopes", "scopeSelector"), ("hard", "used")),
    ("NodeV1Api", "list_runtime_class", "runtimeclasses", "node.k8s.io/v1", "RuntimeClass",
     ("handler", "overhead", "scheduling"), (), ()),
    ("SchedulingV1Api", "list_priority_class", "priorityclasses", "scheduling.k8s.io/v1", "PriorityClass",
     ("value", "globalDefault", "preemptionPolicy"), (), ()),
)
# Dynamic Resource Allocation (resource.k8s.io/v1, served from v1.34): the objects DynamicResources reads.
DRA_KINDS = (
    ("ResourceV1Api", "list_device_class", "deviceclasses", "resource.k8s.io/v1", "DeviceClass", (),
     ("selectors", "config", "extendedResourceName"), ()),
    ("ResourceV1Api", "list_resource_slice", "resourceslices", "resource.k8s.io/v1", "ResourceSlice", (),
     ("driver", "pool", "nodeName", "nodeSelector", "allNodes", "devices", "perDeviceNodeSelection",
      "sharedCounters"), ()),
    ("ResourceV1Api", "list_resource_claim_for_all_namespaces", "resourceclaims", "resource.k8s.io/v1",
     "ResourceClaim", (), ("devices",), ("allocation", "reservedFor")),
    ("ResourceV1Api", "list_resource_claim_template_for_all_namespaces", "resourceclaimtemplates",
     "resource.k8s.io/v1", "ResourceClaimTemplate", (), ("metadata", "spec"), ()),
)
DRA_META = ("ownerReferences", "deletionTimestamp")  # a template's claim is the pod's; one being deleted
STORAGE_META = ("name", "namespace", "uid", "labels")
# annotations the volume plugins read (binding state, selected node, the beta storage class)
STORAGE_ANNOTATIONS = ("pv.kubernetes.io/bind-completed", "volume.kubernetes.io/selected-node",
                       "volume.beta.kubernetes.io/storage-class", "storageclass.kubernetes.io/is-default-class",
                       "storageclass.beta.kubernetes.io/is-default-class")


def _objects(api_client: Any, where: str, kinds: tuple[tuple[Any, ...], ...]) -> list[dict[str, Any]]:
    """Every object of `kinds` (STORAGE_KINDS, CLUSTER_KINDS), trimmed to what the plugins read."""
    from kubernetes import client

    out = []
    for group, method, resource, version, kind, top, spec, status in kinds:
        call = getattr(getattr(client, group)(api_client), method)
        for item in _list_all(call, resource, where):
            out.append(trim_object(item, version, kind, top, spec, status))
    return out


def _dra_objects(api_client: Any, where: str) -> list[dict[str, Any]]:
    """DeviceClasses, ResourceSlices, ResourceClaims and templates; none from a cluster that does not serve
    resource.k8s.io/v1 (older than v1.34, or DRA turned off: its pods have no claims to allocate then)."""
    from kubernetes import client

    out = []
    for group, method, resource, version, kind, top, spec, status in DRA_KINDS:
        call = getattr(getattr(client, group)(api_client), method)
        try:
            items = list(_list_all(call, resource, where))
        except NotServed:
            return []
        for item in items:
            trimmed = trim_object(item, version, kind, top, spec, status)
            trimmed["metadata"].update(_pick(item.get("metadata"), DRA_META))
            out.append(trimmed)
    return out


class NotServed(InputError):
    """A list endpoint the cluster does not serve (404): its API group or version is not there."""


def trim_object(item: dict[str, Any], version: str, kind: str, top: tuple[str, ...], spec: tuple[str, ...],
                status: tuple[str, ...]) -> dict[str, Any]:
    """An object with its identity, the volume plugins' annotations and the given fields (a pod template
    trimmed as a pod: its labels and what scheduling reads of its spec)."""
    meta = _pick(item.get("metadata"), STORAGE_META)
    annotations = _pick((item.get("metadata") or {}).get("annotations"), STORAGE_ANNOTATIONS)
    if annotations:
        meta["annotations"] = annotations
    out: dict[str, Any] = {"apiVersion": version, "kind": kind, "metadata": meta, **_pick(item, top)}
    for part, keys in (("spec", spec), ("status", status)):
        picked = _pick(item.get(part), keys)
        if isinstance(picked.get("template"), dict):
            picked["template"] = trim_template(picked["template"])
        if picked:
            out[part] = picked
    return out


# --------------------------------------------------------------------------- connecting

def kubeconfig_paths(kubeconfig: str | None) -> str | None:
    """The kubeconfig kubectl would read (a path list for `$KUBECONFIG`), or None for in-cluster."""
    if kubeconfig:
        return kubeconfig
    env = os.environ.get("KUBECONFIG", "")
    if any(p for p in env.split(os.pathsep)):
        return env
    default = Path("~/.kube/config").expanduser()
    return str(default) if default.exists() else None


def api_client(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """A `kubernetes.client.ApiClient` for the cluster kubectl would talk to."""
    import yaml
    from kubernetes import client, config
    from kubernetes.config import ConfigException

    paths = kubeconfig_paths(kubeconfig)
    configuration = client.Configuration()
    configuration.retries = 0  # one clear failure, now, rather than silent retries
    try:
        if paths is None:
            if context:
                raise InputError(f"context {context!r} not found: there is no kubeconfig "
                                 f"(--kubeconfig, $KUBECONFIG, ~/.kube/config)")
            config.load_incluster_config(client_configuration=configuration)
        else:
            config.load_kube_config(config_file=paths, context=context, client_configuration=configuration,
                                    persist_config=False)
    except ConfigException as exc:
        where = "no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and not in a cluster: " \
            if paths is None else ""
        raise InputError(f"{where}{_one_line(str(exc))}", file=paths) from None
    except yaml.YAMLError as exc:
        raise InputError(f"kubeconfig is not valid YAML: {_one_line(str(exc))}", file=paths) from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:  # malformed kubeconfig files
        raise InputError(f"cannot read kubeconfig: {_one_line(str(exc))}", file=paths) from None
    return client.ApiClient(configuration=configuration)


def _server(api: Any) -> str:
    return str(api.api_client.configuration.host)


# --------------------------------------------------------------------------- listing

def _list_all(call: Callable[..., Any], resource: str, server: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Every item of a list endpoint, page by page, as the API server's JSON."""
    token: str | None = None
    while True:
        body = _get_page(call, resource, server, limit=PAGE_SIZE, _continue=token, **params)
        items = body.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"listing {resource}: the server's reply has no list of items", file=server)
        yield from (item for item in items if isinstance(item, dict))
        token = (body.get("metadata") or {}).get("continue") or None
        if not token:
            return


def _get_page(call: Callable[..., Any], resource: str, server: str, **params: Any) -> dict[str, Any]:
    """One page of a list call, raw JSON (the client's models would drop fields they do not know)."""
    import urllib3
    from kubernetes.client import ApiException

    params = {k: v for k, v in params.items() if v is not None}
    try:
        response = call(_preload_content=False, _request_timeout=30, **params)
        if not 200 <= response.status <= 299:
            raise ApiException(http_resp=response)
        body = json.loads(response.data)
    except ApiException as exc:
        error = NotServed if exc.status == 404 else InputError
        raise error(f"listing {resource}: {_api_reason(exc)}", file=server) from None
    except urllib3.exceptions.HTTPError as exc:
        reason = getattr(exc, "reason", None) or exc
        raise InputError(f"cannot reach the cluster: {_one_line(str(reason))}", file=server) from None
    except ValueError as exc:
        raise InputError(f"listing {resource}: the server's reply is not JSON: {exc}", file=server) from None
    if not isinstance(body, dict):
        raise InputError(f"listing {resource}: the server's reply is not a list object", file=server)
    return body


def _api_reason(exc: Any) -> str:
    """`403 Forbidden: nodes is forbidden: User ... cannot list ...` from an API error."""
    message = ""
    try:
        message = str(json.loads(exc.body).get("message") or "")
    except (TypeError, ValueError, AttributeError):
        pass
    head = f"{exc.status} {exc.reason}" if exc.status else str(exc.reason)
    return _one_line(f"{head}: {message}" if message else head)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------- trimming

def _pick(mapping: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(mapping, dict):
        return {}
    return {k: mapping[k] for k in keys if mapping.get(k) not in (None, {}, [], "")}


def server_version(api_client: Any, where: str) -> str | None:
    """The API server's `/version` gitVersion (`v1.36.3`), which the scenario then answers for; None when the
    server does not say (the scenario answers for `--kube-version` or the default then)."""
    from kubernetes import client

    try:
        version = _get_page(client.VersionApi(api_client).get_code, "version", where).get("gitVersion")
    except InputError:  # /version refused or absent: nothing recorded
        return None
    return version if isinstance(version, str) and version else None


def trim_node(node: dict[str, Any], version: str | None = None) -> dict[str, Any]:
    """A Node with its name, labels, taints, unschedulable flag, capacity, allocatable, images and declared
    features; `version` (the cluster's) recorded in the annotation `kubefit.io/kubernetes-version`."""
    from kubefit.manifests.load import KUBERNETES_VERSION_ANNOTATION

    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                           "metadata": _pick(node.get("metadata"), NODE_META)}
    if version is not None:
        out["metadata"]["annotations"] = {KUBERNETES_VERSION_ANNOTATION: version}
    spec = _pick(node.get("spec"), NODE_SPEC)
    if spec:
        out["spec"] = spec
    status = _pick(node.get("status"), NODE_STATUS)
    images = [_pick(i, IMAGE_FIELDS) for i in status.pop("images", None) or [] if isinstance(i, dict)]
    if images:
        status["images"] = images
    out["status"] = status
    return out


def _trim_containers(containers: Any) -> list[dict[str, Any]]:
    trimmed = []
    for container in containers if isinstance(containers, list) else []:
        c = _pick(container, CONTAINER_FIELDS)
        ports = [p for p in c.pop("ports", []) if isinstance(p, dict) and p.get("hostPort")]
        if ports:
            c["ports"] = ports  # host ports are what scheduling (NodePorts) reads
        trimmed.append(c)
    return trimmed


def trim_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """A Pod with what scheduling reads: placement constraints, requests, priority, node, phase."""
    raw_spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    spec = _pick(raw_spec, POD_SPEC)
    spec["containers"] = _trim_containers(raw_spec.get("containers"))
    inits = _trim_containers(raw_spec.get("initContainers"))
    if inits:
        spec["initContainers"] = inits
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": _pick(pod.get("metadata"), POD_META), "spec": spec}
    raw_status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    status = _pick(raw_status, POD_STATUS)
    if spec.get("nodeName"):
        status.update(_resize_status(raw_status))
    if status:
        out["status"] = status
    return out


def trim_template(template: dict[str, Any]) -> dict[str, Any]:
    """A controller's pod template: its labels (what its selector matches) and its spec trimmed as a pod's
    (the pods it still owes are made from it)."""
    labels = _pick(template.get("metadata"), ("labels",))
    return {**({"metadata": labels} if labels else {}), "spec": trim_pod(template)["spec"]}


def _trim_statuses(statuses: Any) -> list[dict[str, Any]]:
    """Container statuses that report `resources` (the others leave the spec's requests standing)."""
    trimmed = []
    for cs in statuses if isinstance(statuses, list) else []:
        if not isinstance(cs, dict) or cs.get("resources") is None:
            continue
        trimmed.append({"name": cs.get("name"), "resources": _pick(cs["resources"], ("requests",)),
                        **_pick(cs, ("allocatedResources",))})
    return trimmed


def _resize_status(status: dict[str, Any]) -> dict[str, Any]:
    """containerStatuses / initContainerStatuses (name, resources.requests, allocatedResources) and
    the PodResizePending conditions (type, status, reason) of a bound pod."""
    out: dict[str, Any] = {}
    for key in ("containerStatuses", "initContainerStatuses"):
        statuses = _trim_statuses(status.get(key))
        if statuses:
            out[key] = statuses
    raw = status.get("conditions")
    conditions = [_pick(c, ("type", "status", "reason")) for c in raw if isinstance(c, dict)
                  and c.get("type") == RESIZE_CONDITION] if isinstance(raw, list) else []
    if conditions:
        out["conditions"] = conditions
    return out
