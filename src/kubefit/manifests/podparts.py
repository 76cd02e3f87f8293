"""The parts of a pod spec and status kubefit keeps unread (probes, lifecycle, security contexts, env, container
states, …): their fields.

kube-scheduler reads none of these, but the API server decodes them strictly (kubectl's default
`--validate=strict`): `strict decoding error: unknown field "spec.containers[0].readinessProbe.exec.comand"`.
So a field not in the core/v1 type is refused here too, by its full path (`decode.check_shape`). The
shapes are the json names of k8s.io/api v0.34.1 `core/v1/types.go` (`Probe`, `Lifecycle`,
`SecurityContext`, `PodSecurityContext`, `EnvVar`, `EnvFromSource`, `VolumeMount`, `VolumeDevice`,
`ContainerResizePolicy`, `ContainerRestartRule`, `PodDNSConfig`, `HostAlias`, `PodOS`, `PodReadinessGate`,
`LocalObjectReference`, `EphemeralContainer` and the types they hold); a struct's `json:",inline"` member
(`ProbeHandler` in `Probe`, `LocalObjectReference` in the key selectors) lends its fields. Values are kept
as given (`_`: any value): the point is the names, and a part that must be a mapping or a list.
"""

from __future__ import annotations

from typing import Any

from kubefit.manifests.decode import Complete, check_shape
from kubefit.manifests.documents import Document

_ = object  # a value kubefit does not read: any type passes (the API server's validation decides)


def _fields(*names: str, **parts: Any) -> Complete:
    """A core/v1 struct: `names` of values kept as given, `parts` of nested shapes; no other field."""
    return Complete({**dict.fromkeys(names, _), **parts})


LOCAL_OBJECT_REFERENCE = _fields("name")
EXEC_ACTION = _fields("command")
HTTP_GET_ACTION = _fields("path", "port", "host", "scheme", httpHeaders=[_fields("name", "value")])
TCP_SOCKET_ACTION = _fields("port", "host")
_HANDLER = {"exec": EXEC_ACTION, "httpGet": HTTP_GET_ACTION, "tcpSocket": TCP_SOCKET_ACTION}
PROBE = _fields("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold",
                "terminationGracePeriodSeconds", **_HANDLER, grpc=_fields("port", "service"))  # + ProbeHandler
LIFECYCLE_HANDLER = _fields(**_HANDLER, sleep=_fields("seconds"))
LIFECYCLE = _fields("stopSignal", postStart=LIFECYCLE_HANDLER, preStop=LIFECYCLE_HANDLER)
SE_LINUX_OPTIONS = _fields("user", "role", "type", "level")
WINDOWS_OPTIONS = _fields("gmsaCredentialSpecName", "gmsaCredentialSpec", "runAsUserName", "hostProcess")
SECCOMP_PROFILE = _fields("type", "localhostProfile")
APP_ARMOR_PROFILE = _fields("type", "localhostProfile")
_CONTEXT = {"seLinuxOptions": SE_LINUX_OPTIONS, "windowsOptions": WINDOWS_OPTIONS,
            "seccompProfile": SECCOMP_PROFILE, "appArmorProfile": APP_ARMOR_PROFILE}
SECURITY_CONTEXT = _fields("privileged", "runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem",
                           "allowPrivilegeEscalation", "procMount", **_CONTEXT,
                           capabilities=_fields("add", "drop"))
POD_SECURITY_CONTEXT = _fields("runAsUser", "runAsGroup", "runAsNonRoot", "supplementalGroups",
                               "supplementalGroupsPolicy", "fsGroup", "fsGroupChangePolicy", "seLinuxChangePolicy",
                               **_CONTEXT, sysctls=[_fields("name", "value")])
ENV_VAR = _fields("name", "value", valueFrom=_fields(
    fieldRef=_fields("apiVersion", "fieldPath"),
    resourceFieldRef=_fields("containerName", "resource", "divisor"),
    configMapKeyRef=_fields("name", "key", "optional"),  # + LocalObjectReference
    secretKeyRef=_fields("name", "key", "optional"),
    fileKeyRef=_fields("volumeName", "path", "key", "optional")))
ENV_FROM_SOURCE = _fields("prefix", configMapRef=_fields("name", "optional"), secretRef=_fields("name", "optional"))
VOLUME_MOUNT = _fields("name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation",
                       "subPathExpr")
VOLUME_DEVICE = _fields("name", "devicePath")
CONTAINER_RESIZE_POLICY = _fields("resourceName", "restartPolicy")
CONTAINER_RESTART_RULE = _fields("action", exitCodes=_fields("operator", "values"))
POD_DNS_CONFIG = _fields("nameservers", "searches", options=[_fields("name", "value")])
HOST_ALIAS = _fields("ip", "hostnames")
POD_OS = _fields("name")
POD_READINESS_GATE = _fields("conditionType")

# The unread parts of a Container (its other fields are read and checked by `load._container`).
CONTAINER_PARTS = {
    "envFrom": [ENV_FROM_SOURCE], "env": [ENV_VAR], "resizePolicy": [CONTAINER_RESIZE_POLICY],
    "restartPolicyRules": [CONTAINER_RESTART_RULE], "volumeMounts": [VOLUME_MOUNT], "volumeDevices": [VOLUME_DEVICE],
    "livenessProbe": PROBE, "readinessProbe": PROBE, "startupProbe": PROBE, "lifecycle": LIFECYCLE,
    "securityContext": SECURITY_CONTEXT}
# EphemeralContainer: EphemeralContainerCommon (Container's fields) + targetContainerName; unread whole.
EPHEMERAL_CONTAINER = _fields(
    "name", "image", "command", "args", "workingDir", "restartPolicy", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "stdin", "stdinOnce", "tty", "targetContainerName",
    **CONTAINER_PARTS, ports=[_fields("name", "hostPort", "containerPort", "protocol", "hostIP")],
    resources=_fields("limits", "requests", claims=[_fields("name", "request")]))
# The unread parts of a PodSpec (its other fields are read and checked by `load._pod_spec`).
POD_SPEC_PARTS = {
    "securityContext": POD_SECURITY_CONTEXT, "imagePullSecrets": [LOCAL_OBJECT_REFERENCE],
    "hostAliases": [HOST_ALIAS], "dnsConfig": POD_DNS_CONFIG, "readinessGates": [POD_READINESS_GATE],
    "os": POD_OS, "ephemeralContainers": [EPHEMERAL_CONTAINER]}

# The unread parts of a PodStatus and its ContainerStatuses (k8s.io/api v0.36.3 core/v1 types.go: `ContainerState`
# and its Waiting/Running/Terminated, `ResourceRequirements`, `VolumeMountStatus` with `VolumeStatus` /
# `ImageVolumeStatus`, `ContainerUser` / `LinuxContainerUser`, `ResourceStatus` / `ResourceHealth`, `PodIP`,
# `HostIP`, `PodExtendedResourceClaimStatus` / `ContainerExtendedResourceRequest`,
# `NodeAllocatableResourceClaimStatus`): a kubelet writes them, `kubectl get -o yaml` shows them, and the API
# server decodes them as strictly as the spec.
RESOURCE_REQUIREMENTS = _fields("limits", "requests", claims=[_fields("name", "request")])
CONTAINER_STATE = _fields(waiting=_fields("reason", "message"), running=_fields("startedAt"),
                          terminated=_fields("exitCode", "signal", "reason", "message", "startedAt", "finishedAt",
                                             "containerID"))
VOLUME_MOUNT_STATUS = _fields("name", "mountPath", "readOnly", "recursiveReadOnly",
                              volumeStatus=_fields(image=_fields("imageRef")))
CONTAINER_USER = _fields(linux=_fields("uid", "gid", "supplementalGroups"))
RESOURCE_STATUS = _fields("name", resources=[_fields("resourceID", "health", "message")])
# The unread parts of a ContainerStatus (name, resources.requests and allocatedResources are read by
# `load._container_statuses`; `resources` is checked whole here).
CONTAINER_STATUS_PARTS = {
    "state": CONTAINER_STATE, "lastState": CONTAINER_STATE, "resources": RESOURCE_REQUIREMENTS,
    "volumeMounts": [VOLUME_MOUNT_STATUS], "user": CONTAINER_USER, "allocatedResourcesStatus": [RESOURCE_STATUS]}
CONTAINER_STATUS = _fields("name", "ready", "restartCount", "image", "imageID", "containerID", "started",
                           "allocatedResources", "stopSignal", **CONTAINER_STATUS_PARTS)
POD_IP = _fields("ip")
EXTENDED_RESOURCE_CLAIM_STATUS = _fields("resourceClaimName", requestMappings=[
    _fields("containerName", "resourceName", "requestName")])
NODE_ALLOCATABLE_CLAIM_STATUS = _fields("resourceClaimName", "containers", "resources")
# The unread parts of a PodStatus (its read fields, conditions and container statuses, are checked by `load`).
POD_STATUS_PARTS = {
    "hostIPs": [POD_IP], "podIPs": [POD_IP], "ephemeralContainerStatuses": [CONTAINER_STATUS],
    "extendedResourceClaimStatus": EXTENDED_RESOURCE_CLAIM_STATUS, "resources": RESOURCE_REQUIREMENTS,
    "nodeAllocatableResourceClaimStatuses": [NODE_ALLOCATABLE_CLAIM_STATUS]}


def check_parts(value: dict[str, Any], parts: dict[str, Any], doc: Document, path: str) -> None:
    """Each of `parts` (CONTAINER_PARTS, POD_SPEC_PARTS, CONTAINER_STATUS_PARTS, POD_STATUS_PARTS) that `value` holds, at `path.<field>`: its fields
    known, its nested objects mappings and its lists lists; else the InputError naming the first that is not."""
    for name, shape in parts.items():
        part = value.get(name)
        if part is not None:
            check_shape(part, shape, doc, f"{path}.{name}")
