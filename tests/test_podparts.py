"""The pod-spec parts kubefit does not read load when valid, on both roads (`kubefit.manifests.podparts`).

The pods are assembled from the Kubernetes documentation's examples (tasks/configure-pod-container:
liveness/readiness/startup probes, container lifecycle handlers, security contexts, sysctls, environment
variables from the downward API, ConfigMaps and Secrets, DNS config, host aliases, pod readiness gates,
private registry pulls, Windows RunAsUserName, ephemeral debug containers), with upstream field names:
everything the API server accepts must load, through decode_pod and through fastpod alike.
"""

from __future__ import annotations

import copy

import msgspec
import orjson
import pytest

from kubefit.errors import InputError
from kubefit.manifests import fastpod, podparts
from kubefit.manifests.documents import Document
from kubefit.manifests.fastpod import FastPods
from kubefit.manifests.load import CONTAINER_FIELDS, POD_SPEC_FIELDS, PORT_FIELDS, decode_pod

APP = {
    "name": "app", "image": "registry.k8s.io/busybox", "args": ["/bin/sh", "-c", "sleep 600"],
    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
    "ports": [{"name": "liveness-port", "containerPort": 8080}],
    "livenessProbe": {"httpGet": {"path": "/healthz", "port": "liveness-port", "host": "10.0.0.7", "scheme": "HTTPS",
                                  "httpHeaders": [
        {"name": "Custom-Header", "value": "Awesome"}]}, "initialDelaySeconds": 3, "periodSeconds": 3,
        "failureThreshold": 1, "timeoutSeconds": 1, "successThreshold": 1, "terminationGracePeriodSeconds": 60},
    "readinessProbe": {"tcpSocket": {"port": 8080, "host": "127.0.0.1"}, "initialDelaySeconds": 15},
    "startupProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "failureThreshold": 30, "periodSeconds": 10},
    "lifecycle": {"postStart": {"exec": {"command": ["/bin/sh", "-c", "echo Hello > /usr/share/message"]}},
                  "preStop": {"sleep": {"seconds": 5}}, "stopSignal": "SIGUSR1"},
    "securityContext": {"allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": True,
                        "runAsUser": 2000, "runAsGroup": 3000, "runAsNonRoot": True, "procMount": "Default",
                        "capabilities": {"add": ["NET_ADMIN", "SYS_TIME"], "drop": ["ALL"]},
                        "seLinuxOptions": {"user": "system_u", "role": "system_r", "type": "spc_t", "level": "s0:c123,c456"},
                        "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/audit.json"},
                        "appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-apparmor-example-deny-write"}},
    "env": [{"name": "DEMO_GREETING", "value": "Hello from the environment"},
            {"name": "MY_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName", "apiVersion": "v1"}}},
            {"name": "MY_CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"containerName": "app",
                                                                        "resource": "limits.cpu", "divisor": "1m"}}},
            {"name": "SPECIAL_LEVEL_KEY", "valueFrom": {"configMapKeyRef": {"name": "special-config",
                                                                            "key": "special.how", "optional": True}}},
            {"name": "SECRET_USERNAME", "valueFrom": {"secretKeyRef": {"name": "backend-user", "key": "backend-username",
                                                                          "optional": False}}},
            {"name": "CONFIG_MAIN", "valueFrom": {"fileKeyRef": {"volumeName": "config", "path": "config.env",
                                                                 "key": "CONFIG_MAIN", "optional": False}}}],
    "envFrom": [{"configMapRef": {"name": "special-config", "optional": True}, "prefix": "CFG_"},
                {"secretRef": {"name": "test-secret", "optional": False}}],
    "volumeMounts": [{"name": "config", "mountPath": "/etc/config", "readOnly": True, "recursiveReadOnly": "IfPossible",
                      "subPath": "app", "mountPropagation": "None"},
                     {"name": "workdir", "mountPath": "/work", "subPathExpr": "$(MY_NODE_NAME)"}],
    "volumeDevices": [{"name": "data", "devicePath": "/dev/xvda"}],
    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                     {"resourceName": "memory", "restartPolicy": "RestartContainer"}],
    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    "imagePullPolicy": "IfNotPresent", "stdin": False, "stdinOnce": False, "tty": False, "workingDir": "/",
}
SIDECAR = {"name": "logshipper", "image": "alpine:latest", "restartPolicy": "Always",
           "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}],
           "livenessProbe": {"grpc": {"port": 2379, "service": "etcd"}},
           "lifecycle": {"postStart": {"tcpSocket": {"port": 8080}},
                         "preStop": {"httpGet": {"path": "/shutdown", "port": 8080, "host": "localhost", "scheme": "HTTP"}}}}
LINUX_POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "security-context-demo", "namespace": "default"},
    "spec": {
        "priority": 0, "containers": [APP], "initContainers": [SIDECAR],
        "securityContext": {"runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000, "supplementalGroups": [4000],
                            "supplementalGroupsPolicy": "Strict", "fsGroupChangePolicy": "OnRootMismatch",
                            "runAsNonRoot": True, "seLinuxChangePolicy": "MountOption",
                            "seLinuxOptions": {"level": "s0:c123,c456"},
                            "seccompProfile": {"type": "RuntimeDefault"}, "appArmorProfile": {"type": "RuntimeDefault"},
                            "sysctls": [{"name": "kernel.shm_rmid_forced", "value": "0"},
                                        {"name": "net.core.somaxconn", "value": "1024"}]},
        "dnsPolicy": "None", "dnsConfig": {"nameservers": ["192.0.2.1"], "searches": [
            "ns1.svc.cluster-domain.example", "my.dns.search.suffix"], "options": [{"name": "ndots", "value": "2"},
                                                                                 {"name": "edns0"}]},
        "hostAliases": [{"ip": "127.0.0.1", "hostnames": ["foo.local", "bar.local"]},
                        {"ip": "10.1.2.3", "hostnames": ["foo.remote", "bar.remote"]}],
        "os": {"name": "linux"}, "readinessGates": [{"conditionType": "www.example.com/feature-1"}],
        "imagePullSecrets": [{"name": "regcred"}],
        "ephemeralContainers": [{"name": "debugger-8xzrl", "image": "busybox:1.28", "targetContainerName": "app",
                                 "stdin": True, "tty": True, "terminationMessagePolicy": "File",
                                 "imagePullPolicy": "IfNotPresent", "resources": {},
                                 "env": [{"name": "A", "value": "1"}], "securityContext": {"privileged": True},
                                 "volumeMounts": [{"name": "config", "mountPath": "/etc/config"}]}],
        "volumes": [{"name": "config", "configMap": {"name": "special-config"}}, {"name": "workdir", "emptyDir": {}},
                    {"name": "data", "persistentVolumeClaim": {"claimName": "block-pvc"}}],
    },
}
WINDOWS_POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "run-as-username-pod-demo"},
    "spec": {"priority": 0, "os": {"name": "windows"},
             "securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}},
             "containers": [{"name": "run-as-username-demo", "image": "mcr.microsoft.com/windows/servercore:ltsc2019",
                             "command": ["ping", "-t", "localhost"], "securityContext": {"windowsOptions": {
                                 "runAsUserName": "ContainerAdministrator", "gmsaCredentialSpecName": "gmsa-webapp-1",
                                 "gmsaCredentialSpec": "{}", "hostProcess": False}}}]},
}


@pytest.mark.parametrize("body", [LINUX_POD, WINDOWS_POD], ids=["linux", "windows"])
def test_a_pod_using_every_unread_part_loads_on_both_roads(body):
    """decode_pod takes it, and fastpod gives exactly its Pod and warnings (not None: it takes it itself)."""
    warnings: list[str] = []
    want = decode_pod(Document(copy.deepcopy(body), "pod.json", 1), warnings)
    fast = FastPods().decode(orjson.dumps(body), "pod.json", 1)
    assert fast is not None
    assert fast == (want, warnings)
    assert [c.name for c in want.containers] == [c["name"] for c in body["spec"]["containers"]]


def test_the_example_pods_set_every_field_of_the_unread_parts():
    """The examples above hold each field a shape names at least once (so a name dropped from a shape, or
    misspelt, fails the test above), but for the fields of a part used only elsewhere (ephemeral containers
    repeat Container's)."""
    seen: set[tuple[int, str]] = set()

    def walk(value, shape) -> None:
        if isinstance(shape, list) and isinstance(value, list):
            for item in value:
                walk(item, shape[0])
        elif isinstance(shape, dict) and isinstance(value, dict):
            for key, item in value.items():
                seen.add((id(shape), key))
                walk(item, shape.get(key))

    for body in (LINUX_POD, WINDOWS_POD):
        spec = body["spec"]
        for container in (*spec["containers"], *spec.get("initContainers", ())):
            walk(container, podparts.CONTAINER_PARTS)
        walk(spec, podparts.POD_SPEC_PARTS)
    missing = []

    def check(shape, where: str) -> None:
        if isinstance(shape, list):
            check(shape[0], where + "[]")
        elif isinstance(shape, dict) and shape is not podparts.EPHEMERAL_CONTAINER:
            for key, sub in shape.items():
                if (id(shape), key) not in seen:
                    missing.append(f"{where}.{key}")
                check(sub, f"{where}.{key}")

    check(podparts.CONTAINER_PARTS, "container")
    check(podparts.POD_SPEC_PARTS, "spec")
    assert not missing, " ".join(missing)


def test_the_parts_are_fields_of_container_and_pod_spec():
    """The unread parts are among the fields load checks by name; an ephemeral container has Container's
    fields and `targetContainerName` (EphemeralContainerCommon is Container's copy, types.go)."""
    assert podparts.CONTAINER_PARTS.keys() <= CONTAINER_FIELDS
    assert podparts.POD_SPEC_PARTS.keys() <= POD_SPEC_FIELDS
    assert podparts.EPHEMERAL_CONTAINER.keys() == CONTAINER_FIELDS | {"targetContainerName"}
    assert podparts.EPHEMERAL_CONTAINER["ports"][0].keys() == PORT_FIELDS
    assert all(podparts.EPHEMERAL_CONTAINER[k] is v for k, v in podparts.CONTAINER_PARTS.items())


def _shape(info: msgspec.inspect.Type):
    """The `podparts` shape a msgspec type stands for: a struct refusing other fields → its fields' shapes,
    a list → [its item's], a value of any type → object (null allowed wherever the shape allows absence)."""
    inspect = msgspec.inspect
    if isinstance(info, inspect.UnionType):
        (kind,) = [t for t in info.types if not isinstance(t, inspect.NoneType)]
        return _shape(kind)
    if isinstance(info, inspect.ListType):
        return [_shape(info.item_type)]
    if isinstance(info, inspect.StructType):
        assert info.forbid_unknown_fields
        return {f.name: _shape(f.type) for f in info.fields}
    assert isinstance(info, inspect.AnyType), info
    return object


@pytest.mark.parametrize("struct,parts", [(fastpod._Container, podparts.CONTAINER_PARTS),
                                          (fastpod._PodSpec, podparts.POD_SPEC_PARTS)], ids=["Container", "PodSpec"])
def test_fastpod_types_each_part_from_its_shape(struct, parts):
    """fastpod's type of each unread part is its shape, so msgspec refuses in C what check_shape refuses in
    Python (a field the shape lacks, a mapping or a list that is not one)."""
    fields = {f.name: f.type for f in msgspec.inspect.type_info(struct).fields}
    for name, shape in parts.items():
        assert _shape(fields[name]) == shape, name


def test_a_typo_in_an_example_part_is_refused_on_both_roads():
    """One misspelt field deep in the example: decode_pod names it, fastpod leaves the pod to it."""
    body = copy.deepcopy(LINUX_POD)
    body["spec"]["containers"][0]["env"][1]["valueFrom"]["fieldRef"]["fieldpath"] = "spec.nodeName"
    assert FastPods().decode(orjson.dumps(body), "pod.json", 1) is None
    with pytest.raises(InputError) as raised:
        decode_pod(Document(body, "pod.json", 1), [])
    assert (raised.value.field, raised.value.message) == (
        "spec.containers[0].env[1].valueFrom.fieldRef.fieldpath", "unknown field 'fieldpath'")
