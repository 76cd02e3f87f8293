"""A replica's Pod decoded once (`kubefit.manifests.fastpod.FastPods._replica`).

The pods of a load go through one `FastPods`, whose memo of whole pods keys a prototype by everything `_pod`
reads but what tells replicas apart. Each pod it gives must be decode_pod's (the reference), field for field
(its `raw` its own JSON, its volumes read from it), with decode_pod's warnings naming that pod, its mutable
per-pod dicts its own; a bad per-pod value (a time, a kubefit annotation) on a later replica must still be
refused with decode_pod's error; and the memo must stay bounded on a file of distinct pods.
"""

from __future__ import annotations

import copy
import json
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_stream import outcome, pods

from kubefit.api.core import VOLUMES_FROM_RAW, Pod
from kubefit.errors import InputError
from kubefit.manifests import fastpod
from kubefit.manifests.documents import Document
from kubefit.manifests.fastpod import REPLICAS_MAX, FastPods
from kubefit.manifests.load import decode_pod


def _mounts(suffix: str, recursive: str | None = None) -> list[dict]:
    """The volume mount the API server adds to each container of a pod (its service-account token's)."""
    mount = {"name": f"kube-api-access-{suffix}", "readOnly": True,
             "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    return [mount | ({"recursiveReadOnly": recursive} if recursive else {})]


# What a workload's controller or a kubelet sets per pod (`_Own`): (path, values), some of them bad.
PER_POD = {
    ("metadata", "uid"): ["u-1", "u-2", 7],
    ("metadata", "creationTimestamp"): ["2025-10-01T09:00:02Z", "2025-10-01T09:00:03+02:00", "2025-10-01",
                                        "yesterday", "", None],
    ("metadata", "labels"): [{"app": "a", "statefulset.kubernetes.io/pod-name": "web-0"},
                             {"app": "a", "statefulset.kubernetes.io/pod-name": "web-1"}, {}, None, {"a": None}],
    ("metadata", "annotations"): [{"kubefit.io/queued": "true"}, {"kubefit.io/queued": "False"},
                                  {"kubefit.io/arrival": "5s", "kubefit.io/duration": "1m"},
                                  {"kubefit.io/duration": "2h"}, {"kubefit.io/arrival": "soon"},
                                  {"kubefit.io/queued": "maybe"}, {"a": "b"}, {}, None],
    ("metadata", "resourceVersion"): ["1", "2"],
    ("metadata", "selfLink"): ["/api/v1/x"],
    ("spec", "nodeName"): ["n1", "n2", "", None],
    ("spec", "nodeSelector"): [{"disk": "ssd"}, {"disk": "hdd"}, {}, None],
    ("spec", "volumes"): [[{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}],
                          [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}], [], None],
    ("spec", "hostname"): ["web-0", "web-1"],
    ("status", "startTime"): ["2025-10-01T09:00:02Z", "2025-10-01T09:01:00Z", "1e19", "", None],
    ("status", "nominatedNodeName"): ["n2", "", None],
    ("status", "podIP"): ["10.0.0.1", "10.0.0.2"],
    ("status", "hostIPs"): [[{"ip": "10.1.0.1"}], [{"ip": "10.1.0.2"}]],
    ("status", "conditions"): [[{"type": "Ready", "status": "True", "lastTransitionTime": "2025-10-01T09:00:02Z"}],
                               [{"type": "Ready", "status": "False", "message": "not yet"}]],
    # (a path of three: that field of each container, init container or container status; a live pod's containers
    # mount its service-account token's volume, named per pod: `_unmounted`; the odd ones refused alike)
    ("spec", "containers", "volumeMounts"): [_mounts("x7k2q"), _mounts("b4m9z"), [{"name": 7, "mountPath": "/x"}],
                                             [{"name": None, "readOnly": True}], [{"mountPath": "/x"}], [], None,
                                             [{"name": {"a": [1]}, "subPath": "s"}], [None], [{"nme": "x"}], {}],
    ("spec", "initContainers", "volumeMounts"): [_mounts("x7k2q"), _mounts("b4m9z"), [{"name": "", "readOnly": 1}],
                                                 None, [{"mountPth": "/x"}]],
    ("status", "containerStatuses", "volumeMounts"): [_mounts("x7k2q", "Disabled"), _mounts("b4m9z", "Disabled"),
                                                      [{"name": 3}], None, [{"nme": "x"}]],
    ("status", "containerStatuses"): [
        [{"name": "c0", "ready": True, "restartCount": 0, "containerID": "containerd://a",
          "state": {"running": {"startedAt": "2025-10-01T09:00:02Z"}}}],
        [{"name": "c0", "ready": False, "restartCount": 3, "started": False,
          "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": {"terminated": {"exitCode": 1}}}]],
}

# What `_pod` reads of every replica alike: a change makes another workload's pods (another prototype).
SHARED = {
    ("metadata", "namespace"): ["team", "other"],
    ("metadata", "ownerReferences"): [[{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "9",
                                        "controller": True}]],
    ("spec", "priority"): [0, 7],
    ("spec", "schedulerName"): ["other", "default-scheduler"],
    ("spec", "preemptionPolicy"): ["Never"],
    ("spec", "tolerations"): [[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]],
    ("spec", "containers"): [[{"name": "c0", "image": "img:2", "resources": {"requests": {"cpu": "2", "bogus": "1"}}}],
                             [{"name": "c0", "resources": {"requests": {"memory": "1Gi"}}}],
                             [{"name": "c0", "image": "img:1", "ports": [{"containerPort": 80, "hostPort": 8080}],
                               "volumeMounts": _mounts("x7k2q")}],
                             [{"name": "c0", "image": "img:1", "restartPolicy": "Never", "volumeMounts": _mounts("a")},
                              {"name": "c1", "image": "img:1", "resources": {"limits": {"cpu": "1"}},
                               "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                             [{"name": "c0", "image": "img:1", "resources": {"requests": {"cpu": "3"}},
                               "volumeMounts": _mounts("x7k2q"), "ports": [{"containerPort": 81, "protocol": "UDP"}]}]],
    ("spec", "initContainers"): [[{"name": "sidecar", "image": "proxy:1", "restartPolicy": "Always",
                                   "resources": {"requests": {"cpu": "100m"}}, "volumeMounts": _mounts("x7k2q")}],
                                 [{"name": "sidecar", "image": "proxy:1", "restartPolicy": "Always",
                                   "restartPolicyRules": [{"action": "RestartAllContainers", "exitCodes": {
                                       "operator": "In", "values": [42]}}], "volumeMounts": _mounts("b4m9z")}],
                                 [{"name": "init", "image": "proxy:2", "volumeMounts": _mounts("x7k2q")}]],
    ("spec", "resources"): [{"requests": {"cpu": "1", "example.com/x": "1"}}, {"requests": {"cpu": "1"}}],
    ("spec", "affinity"): [{"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "a"}}}]}}],
    ("spec", "topologySpreadConstraints"): [[{"maxSkew": 1, "topologyKey": "zone",
                                              "whenUnsatisfiable": "ScheduleAnyway"}]],
    ("spec", "schedulingGates"): [[{"name": "g"}]],
    ("spec", "hostUsers"): [False],
    ("status", "phase"): ["Running", "Succeeded"],
    ("status", "conditions"): [[{"type": "PodScheduled", "reason": "Unschedulable", "status": "False"}]],
    ("status", "containerStatuses"): [[{"name": "c0", "resources": {"requests": {"cpu": "2"}},
                                        "allocatedResources": {"cpu": "2"}}]],
}


@st.composite
def workload_pods(draw) -> dict:
    """A well-formed pod as a workload's controller makes it (fastpod takes most of them)."""
    spec: dict = {"containers": [{"name": "c0", "image": "img:1",
                                  "resources": draw(st.sampled_from([{"requests": {"cpu": "500m", "memory": "1Gi"}},
                                                                     {"requests": {"cpu": "1", "bogus": "1"}}, {}]))}],
                  "priority": draw(st.sampled_from([0, 100])), "schedulerName": "default-scheduler",
                  "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                                   "tolerationSeconds": 300}]}
    meta: dict = {"name": "web-0", "namespace": "team", "labels": {"app": "a"}, "uid": "u-0",
                  "creationTimestamp": "2025-10-01T09:00:00Z",
                  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8", "uid": "1",
                                       "controller": True, "blockOwnerDeletion": True}]}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if draw(st.booleans()):  # as the API server admits it: its service-account token's volume, mounted
        spec["volumes"] = [{"name": "kube-api-access-x7k2q", "projected": {"sources": [{"serviceAccountToken": {
            "path": "token"}}]}}]
        spec["containers"][0]["volumeMounts"] = _mounts("x7k2q")
    if draw(st.booleans()):
        body["status"] = {"phase": "Running", "startTime": "2025-10-01T09:00:01Z", "podIP": "10.0.0.9",
                          "conditions": [{"type": "Ready", "status": "True"}],
                          "containerStatuses": [{"name": "c0", "ready": True, "restartCount": 0}]}
    return body


def _change(body: dict, path: tuple[str, ...], value) -> None:
    """Sets `section.field` of the pod, or with a path of three that field of each entry of `section.list` (a
    container, a container status) that is a mapping."""
    if len(path) == 3:
        entries = (body.get(path[0]) or {}).get(path[1])
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict):
                entry[path[2]] = copy.deepcopy(value)
        return
    body.setdefault(path[0], {})[path[1]] = copy.deepcopy(value)


def _reference(body: dict, index: int) -> tuple[Pod, list[str]]:
    warnings: list[str] = []
    return decode_pod(Document(copy.deepcopy(body), "f.json", index), warnings), warnings


def _todays(data: bytes, index: int) -> tuple[Pod, list[str]] | None:
    """The road without the memo of whole pods (`_pod` of the pod's own struct)."""
    fast = FastPods()
    fast.replicas = None
    return fast.decode(data, "f.json", index)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(workload_pods(), pods()), st.lists(st.tuples(
    st.dictionaries(st.sampled_from(sorted(PER_POD)), st.integers(0, 8), max_size=5),
    st.one_of(st.none(), st.none(), st.none(), st.tuples(st.sampled_from(sorted(SHARED)), st.integers(0, 4)))),
    min_size=2, max_size=7),
    st.sampled_from([REPLICAS_MAX, 1, 2]))
def test_replicas_are_decode_pods_pods(base, replicas, replicas_max):
    """`_replicas_are_decode_pods_pods`, the memo holding up to `REPLICAS_MAX`, 1 or 2 prototypes."""
    _replicas_are_decode_pods_pods(base, replicas, replicas_max)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload_pods(), st.lists(st.tuples(
    st.dictionaries(st.sampled_from(sorted(PER_POD)), st.integers(0, 8), max_size=3),
    st.one_of(st.none(), st.tuples(st.sampled_from(sorted(SHARED)), st.integers(0, 4)))), min_size=2, max_size=7))
def test_prototypes_found_by_one_crc_are_told_apart_by_their_json(base, replicas):
    """The same, with every blank's CRC-32 made one number (`_replica` finds a prototype by it, then compares its
    whole JSON): pods of other workloads share a bucket and must still get their own prototype."""
    with mock.patch.object(fastpod, "crc32", lambda key: 7):
        _replicas_are_decode_pods_pods(base, replicas, REPLICAS_MAX)


def _replicas_are_decode_pods_pods(base, replicas, replicas_max):
    """Replicas of one pod (each with its own name and a few of the values a controller or kubelet sets per pod;
    now and then a change to what `_pod` reads of all of them, kept for the later replicas: another workload),
    through one FastPods as in a load: each is None exactly where fastpod without the memo gives None, or else
    decode_pod's Pod (every field, its manifest its own JSON, its volumes read from it) and warnings; no two share a
    labels, nodeSelector or pod-level requests dict, as no two share one without the memo."""
    fast = FastPods(replicas_max)
    decoded = []
    for i, (own, shared) in enumerate(replicas):
        if shared is not None:
            values = SHARED[shared[0]]
            _change(base, shared[0], values[shared[1] % len(values)])
        body = copy.deepcopy(base)
        body["metadata"]["name"] = f"web-{i}"
        for path, n in own.items():
            _change(body, path, PER_POD[path][n % len(PER_POD[path])])
        data = orjson.dumps(body)
        got = fast.decode(data, "f.json", i)
        assert (got is None) == (_todays(data, i) is None)
        if got is None:
            continue
        pod, notes = got
        assert pod.__dict__["raw"] is data and pod.source == "f.json"  # (before `==` reads them)
        assert (pod.__dict__["volumes"] is VOLUMES_FROM_RAW) == bool(body["spec"].get("volumes"))
        assert (pod, notes) == _reference(body, i)
        decoded.append((pod, body, i))
    for field in ("labels", "node_selector", "pod_requests"):
        dicts = [getattr(pod, field) for pod, _, _ in decoded if getattr(pod, field) is not None]
        assert len({id(d) for d in dicts}) == len(dicts), field
    if len(decoded) > 1:  # (and so a change to one pod's leaves the others decode_pod's)
        first = decoded[0][0]
        first.labels["changed"] = "yes"
        if first.node_selector is not None:
            first.node_selector["changed"] = "yes"
        if first.pod_requests is not None:
            first.pod_requests["cpu"] = 1
        assert all(pod == _reference(body, i)[0] for pod, body, i in decoded[1:])


def _replica(name: str, **changes) -> dict:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "team", "uid": f"uid-{name}", "labels": {"app": "web"},
        "creationTimestamp": "2025-10-01T09:00:00Z"}, "spec": {
        "priority": 0, "nodeName": "n1",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "dongle": "1"}}}],
        "resources": {"requests": {"cpu": "2", "bogus": "1"}}}, "status": {
        "phase": "Running", "startTime": "2025-10-01T09:00:01Z"}}
    for path, value in changes.items():
        _change(body, tuple(path.split("__")), value)
    return body


def test_a_replicas_warnings_name_it():
    """The prototype's warnings (a container's resource and a pod-level one kube-scheduler does not account for)
    are told for each replica with its own name and file (one load reads several), as decode_pod tells them: two
    per pod, `<i>.json: Pod/web-<i>`; the pod's `source` is its own file."""
    fast = FastPods()
    for i in range(3):
        body = _replica(f"web-{i}")
        pod, notes = fast.decode(orjson.dumps(body), f"{i}.json", i + 1)
        warnings: list[str] = []
        assert (pod, notes) == (decode_pod(Document(copy.deepcopy(body), f"{i}.json", i + 1), warnings), warnings)
        assert pod.source == f"{i}.json"
        assert [n.split(": ")[:3] for n in notes] == [
            [f"{i}.json", f"Pod/web-{i}", "spec.containers[0].resources.requests.dongle"],
            [f"{i}.json", f"Pod/web-{i}", "spec.resources.requests.bogus"]]
    assert fast.replica_hits == 2


@pytest.mark.parametrize(("path", "value", "field"), [
    ("metadata__creationTimestamp", "yesterday", "metadata.creationTimestamp"),
    ("metadata__creationTimestamp", "", "metadata.creationTimestamp"),
    ("status__startTime", "1e19", "status.startTime"),
    ("metadata__annotations", {"kubefit.io/arrival": "soon"}, "metadata.annotations.kubefit.io/arrival"),
    ("metadata__annotations", {"kubefit.io/queued": "maybe"}, "metadata.annotations.kubefit.io/queued"),
])
def test_a_bad_value_on_a_later_replica_is_refused_as_by_decode_pod(tmp_path, path, value, field):
    """Three replicas, the second with a bad time or kubefit annotation (the second and the third hit the first's
    prototype): the load refuses it with decode_pod's error naming `Pod/web-1` and the field, whether the stream
    or the reference reads the file; FastPods itself hands that pod over (None) and takes the third."""
    bodies = [_replica("web-0"), _replica("web-1", **{path: value}), _replica("web-2")]
    file = tmp_path / "pods.json"
    file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": bodies}))
    streamed = outcome(file, True)
    assert streamed == outcome(file, False)
    assert streamed[0] == "InputError" and "Pod/web-1" in streamed[1] and field in streamed[1]
    fast = FastPods()
    got = [fast.decode(orjson.dumps(b), "f.json", i) for i, b in enumerate(bodies)]
    assert got[1] is None and got[0] is not None and got[2] is not None and fast.replica_hits == 2
    with pytest.raises(InputError, match=field.replace(".", r"\.")):
        decode_pod(Document(bodies[1], "f.json", 2), [])


def test_the_memo_of_whole_pods_is_bounded():
    """A file of distinct pods keeps at most `replicas_max` prototypes, and none once they have been hit less
    often than they are many; a memo that pays is kept (full, its replicas still hit). Every pod is still
    decode_pod's."""
    distinct = FastPods(replicas_max=8)
    for i in range(40):
        body = _replica(f"p-{i}", spec__priority=i)
        assert distinct.decode(orjson.dumps(body), "f.json", i) == _reference(body, i)
        assert distinct.replicas is None or distinct.replicas_kept <= 8
    assert distinct.replicas is None and distinct.replica_hits == 0
    paying = FastPods(replicas_max=8)
    for i in range(64):  # 8 workloads of 3 replicas, then 40 more distinct pods, then the first workload's
        body = _replica(f"p-{i}", spec__priority=i // 3 if i < 24 else i if i < 56 else 0)
        assert paying.decode(orjson.dumps(body), "f.json", i) == _reference(body, i)
    assert paying.replicas is not None and paying.replicas_kept == 8 and paying.replica_hits == 16 + 8


def test_a_warning_not_naming_its_pod_is_never_told_again_under_another_name(monkeypatch):
    """`_replica` tells a prototype's warnings again with each pod's `source: Pod/name: ` prefix, so it keeps only
    a prototype whose warnings all start with it (decode_pod's all do): a warning worded otherwise (here one
    `_pod` is made to add) leaves the pod unremembered, and each replica gets that warning as `_pod` words it."""
    pod_of = FastPods._pod

    def worded_otherwise(self, pod, doc, warnings, data):
        warnings.append(f"about {doc.label}")
        return pod_of(self, pod, doc, warnings, data)

    monkeypatch.setattr(FastPods, "_pod", worded_otherwise)
    fast = FastPods()
    for i in range(2):
        _, notes = fast.decode(orjson.dumps(_replica(f"web-{i}")), "f.json", i + 1)
        assert notes[0] == f"about Pod/web-{i}"
    assert fast.replicas == {} and fast.replica_hits == 0


def _live(name: str, suffix: str) -> dict:
    """A replica as a live cluster lists it: its service-account token's projected volume, named per pod, mounted
    by each container (a native sidecar too) and listed in each container's status."""
    token = f"kube-api-access-{suffix}"
    body = _replica(name, spec__volumes=[{"name": token, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}])
    spec, status = body["spec"], body["status"]
    spec["containers"][0]["volumeMounts"] = _mounts(suffix)
    spec["initContainers"] = [{"name": "proxy", "image": "proxy:1", "restartPolicy": "Always",
                               "resources": {"requests": {"cpu": "100m"}}, "volumeMounts": _mounts(suffix)}]
    status["containerStatuses"] = [{"name": "c", "ready": True, "restartCount": 0, "image": "img",
                                    "volumeMounts": _mounts(suffix, "Disabled")}]
    status["initContainerStatuses"] = [{"name": "proxy", "ready": True, "restartCount": 0,
                                        "volumeMounts": _mounts(suffix, "Disabled")}]
    return body


def test_a_live_snapshots_replicas_share_one_prototype():
    """Three replicas whose containers, init containers and container statuses differ in their token volume's name
    alone take one prototype (the second and the third hit it: `_unmounted`, `_blank_status`), each decode_pod's
    Pod and warnings with its own JSON; a fourth whose container differs in what `_container` reads (its image)
    takes another."""
    fast = FastPods()
    bodies = [_live("web-0", "x7k2q"), _live("web-1", "b4m9z"), _live("web-2", "q2w3e"), _live("web-3", "zz9zz")]
    bodies[3]["spec"]["containers"][0]["image"] = "img:2"
    for i, body in enumerate(bodies):
        data = orjson.dumps(body)
        pod, notes = fast.decode(data, "f.json", i)
        assert pod.__dict__["raw"] is data  # (before `==` reads it)
        assert (pod, notes) == _reference(body, i)
    assert (fast.replica_hits, fast.replicas_kept) == (2, 2)
    assert [c.image for c in pod.containers] == ["img:2"]


@pytest.mark.parametrize("odd", [
    {"resorces": {"requests": {"cpu": "1"}}},  # a container field misspelt
    {"volumeMounts": [{"name": "kube-api-access-b4m9z", "mountPth": "/x"}]},  # a mount's
    {"volumeMounts": [None]}, {"volumeMounts": {"name": "x"}}, {"volumeMounts": "x"},
    {"livenessProbe": {"httpGet": {"pth": "/"}}},  # a field misspelt deep down (podparts)
    {"resources": {"requests": {"cpu": "a lot"}}}, {"ports": [{"containerPort": "80"}]}, {"image": 3},
    {"restartPolicy": "Sometimes"}, {"name": None},
])
def test_a_live_replica_refused_as_today(odd):
    """A replica (the second, after one the memo keeps) whose container is odd in what `_unmounted` leaves in the
    key or what msgspec checks of a container: FastPods gives None exactly where it gives None without the memo
    (decode_pod then decides), or else decode_pod's Pod; the third, a good replica, still hits the first's."""
    fast = FastPods()
    bodies = [_live("web-0", "x7k2q"), _live("web-1", "b4m9z"), _live("web-2", "q2w3e")]
    bodies[1]["spec"]["containers"][0].update(odd)
    for i, body in enumerate(bodies):
        data = orjson.dumps(body)
        got = fast.decode(data, "f.json", i)
        assert (got is None) == (_todays(data, i) is None)
        assert got is None or got == _reference(body, i)
    assert fast.replica_hits >= 1
