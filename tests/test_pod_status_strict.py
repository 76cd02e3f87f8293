"""Strict decoding of every part of a Pod's status (issue #38): an unknown field anywhere under `status` is refused
by name, with its file, object and field path, exit 2 — as the API server's strict decoding refuses it
(`strict decoding error: unknown field "status.containerStatuses[0].state.running.bogus"`; kubectl's default
`--validate=strict`) — whether the pod is read by the Python decoder (YAML, `load.decode_pod`) or by the
streaming reader's msgspec types (a JSON list, `fastpod`). The fields are those of k8s.io/api v0.36.3
core/v1/types.go (`PodStatus`, `ContainerStatus`, `ContainerState{Waiting,Running,Terminated}`,
`ResourceRequirements`, `VolumeMountStatus`, `VolumeStatus`, `ImageVolumeStatus`, `ContainerUser`,
`LinuxContainerUser`, `ResourceStatus`, `ResourceHealth`, `PodIP`, `HostIP`, `PodExtendedResourceClaimStatus`,
`NodeAllocatableResourceClaimStatus`), and a status using every one of them loads.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests_support import run_json

ROOT = Path(__file__).resolve().parent
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
STATE = {"running": {"startedAt": "2025-10-01T09:00:02Z"}}
TERMINATED = {"terminated": {"exitCode": 137, "signal": 9, "reason": "OOMKilled", "message": "m",
                             "startedAt": "2025-10-01T09:00:00Z", "finishedAt": "2025-10-01T09:00:01Z",
                             "containerID": "containerd://a"}}
CONTAINER_STATUS = {
    "name": "c", "ready": True, "restartCount": 1, "image": "x", "imageID": "x@sha256:0", "containerID": "cd://b",
    "started": True, "state": STATE, "lastState": TERMINATED, "stopSignal": "SIGTERM",
    "allocatedResources": {"cpu": "1"}, "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"},
                                                      "claims": [{"name": "gpu", "request": "r"}]},
    "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True, "recursiveReadOnly": "Disabled",
                      "volumeStatus": {"image": {"imageRef": "img@sha256:1"}}}],
    "user": {"linux": {"uid": 1000, "gid": 1000, "supplementalGroups": [1]}},
    "allocatedResourcesStatus": [{"name": "claim:gpu", "resources": [{"resourceID": "gpu-0", "health": "Healthy",
                                                                      "message": "ok"}]}]}
STATUS = {
    "phase": "Running", "observedGeneration": 1, "message": "", "reason": "", "hostIP": "10.0.0.1",
    "hostIPs": [{"ip": "10.0.0.1"}], "podIP": "10.1.0.1", "podIPs": [{"ip": "10.1.0.1"}],
    "startTime": "2025-10-01T09:00:00Z", "qosClass": "Guaranteed",
    "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1, "lastProbeTime": None,
                    "lastTransitionTime": "2025-10-01T09:00:02Z", "reason": "", "message": ""}],
    "containerStatuses": [CONTAINER_STATUS], "initContainerStatuses": [dict(copy.deepcopy(CONTAINER_STATUS), name="i")],
    "ephemeralContainerStatuses": [dict(copy.deepcopy(CONTAINER_STATUS), name="debug")],
    "extendedResourceClaimStatus": {"resourceClaimName": "p-extended", "requestMappings": [
        {"containerName": "c", "resourceName": "example.com/gpu", "requestName": "r0"}]},
    "nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "p-cpu", "containers": ["c"],
                                              "resources": {"cpu": "1"}}],
    "resources": {"requests": {"cpu": "1"}}, "allocatedResources": {"cpu": "1"}}


def pod(status: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
            "spec": {"nodeName": "n1", "priority": 0, "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}],
                "initContainers": [{"name": "i", "image": "x"}]},
            "status": status}


def write(tmp_path: Path, status: dict, fmt: str) -> str:
    """The node and the pod, as YAML documents (the Python decoder) or as a JSON List (the streaming reader's
    msgspec types, `KUBEFIT_STREAM=always`)."""
    items = [NODE, pod(status)]
    if fmt == "json":
        path = tmp_path / "cluster.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    else:
        import yaml

        path = tmp_path / "cluster.yaml"
        path.write_text(yaml.safe_dump_all(items))
    return str(path)


# (format, KUBEFIT_STREAM): the Python decoder alone (0), the streaming reader and its msgspec types (always)
FORMATS = [("yaml", "0"), ("yaml", "always"), ("json", "0"), ("json", "always")]
IDS = ["-".join(f) for f in FORMATS]


@pytest.mark.parametrize(("fmt", "stream"), FORMATS, ids=IDS)
def test_every_status_field_the_api_server_knows_loads(fmt, stream, tmp_path, capsys, monkeypatch):
    """The status above names every field of the v0.36.3 types: it loads, and the pod runs on n1."""
    monkeypatch.setenv("KUBEFIT_STREAM", stream)
    rc, out, err = run_json(capsys, "simulate", "-f", write(tmp_path, STATUS, fmt))
    assert rc == 0, err
    assert out["final"]["n1"]["pods"] == 1


def _with(path: list, key: str) -> dict:
    """STATUS with an unknown field `key` added to the mapping at `path`."""
    status = copy.deepcopy(STATUS)
    where: object = status
    for part in path:
        where = where[part]  # type: ignore[index]
    where[key] = 1  # type: ignore[index]
    return status


UNKNOWN = [  # (where the unknown field goes, the field path the error names)
    (["containerStatuses", 0, "state", "running"], "status.containerStatuses[0].state.running.bogus"),
    (["containerStatuses", 0, "state"], "status.containerStatuses[0].state.bogus"),
    (["containerStatuses", 0, "lastState", "terminated"], "status.containerStatuses[0].lastState.terminated.bogus"),
    (["containerStatuses", 0, "resources"], "status.containerStatuses[0].resources.bogus"),
    (["containerStatuses", 0, "resources", "claims", 0], "status.containerStatuses[0].resources.claims[0].bogus"),
    (["containerStatuses", 0, "volumeMounts", 0], "status.containerStatuses[0].volumeMounts[0].bogus"),
    (["containerStatuses", 0, "volumeMounts", 0, "volumeStatus", "image"],
     "status.containerStatuses[0].volumeMounts[0].volumeStatus.image.bogus"),
    (["containerStatuses", 0, "user", "linux"], "status.containerStatuses[0].user.linux.bogus"),
    (["containerStatuses", 0, "allocatedResourcesStatus", 0, "resources", 0],
     "status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].bogus"),
    (["initContainerStatuses", 0, "state", "running"], "status.initContainerStatuses[0].state.running.bogus"),
    (["ephemeralContainerStatuses", 0, "state", "running"],
     "status.ephemeralContainerStatuses[0].state.running.bogus"),
    (["ephemeralContainerStatuses", 0], "status.ephemeralContainerStatuses[0].bogus"),
    (["conditions", 0], "status.conditions[0].bogus"),
    (["podIPs", 0], "status.podIPs[0].bogus"),
    (["hostIPs", 0], "status.hostIPs[0].bogus"),
    (["resources"], "status.resources.bogus"),
    (["extendedResourceClaimStatus", "requestMappings", 0],
     "status.extendedResourceClaimStatus.requestMappings[0].bogus"),
    (["nodeAllocatableResourceClaimStatuses", 0], "status.nodeAllocatableResourceClaimStatuses[0].bogus"),
    ([], "status.bogus"),
]


@pytest.mark.parametrize(("fmt", "stream"), FORMATS, ids=IDS)
@pytest.mark.parametrize(("where", "field"), UNKNOWN, ids=[u[1] for u in UNKNOWN])
def test_an_unknown_status_field_is_refused_by_its_path(where, field, fmt, stream, tmp_path, capsys, monkeypatch):
    """The API server's strict decoding names the field; kubefit too: `<file>: Pod/web: <path>: unknown field
    'bogus'`, exit 2, from either decoder."""
    monkeypatch.setenv("KUBEFIT_STREAM", stream)
    path = write(tmp_path, _with(where, "bogus"), fmt)
    rc, out, err = run_json(capsys, "simulate", "-f", path)
    assert rc == 2 and out == {}
    assert f"{path}: Pod/web: {field}: unknown field 'bogus'" in err


def test_the_kubectl_fixtures_still_load(capsys):
    """`kubectl get nodes,pods -o yaml/json` of a real cluster (tests/fixtures) loads as before."""
    for name in ("kubectl-get-nodes-pods.json", "kubectl-get-nodes-pods.yaml"):
        rc, out, err = run_json(capsys, "simulate", "-f", str(ROOT / "fixtures" / name))
        assert rc == 0, (name, err)
