"""Issue #38: the pods controllers create during a run (preemption victims' and drained or removed nodes'
replacements) pass ResourceQuota admission with `status.used` as it stands then.

Upstream:

- the deleted pods release their usage: the quota controller's `replenishQuota` on a pod's delete event
  (pkg/controller/resourcequota/resource_quota_controller.go) resyncs the quota, and `CalculateUsageStats` sums
  `PodUsageFunc` (pkg/quota/v1/evaluator/core/pods.go) over the pods left, without the deleted one;
- the controller's create then goes through `CheckRequest` (staging/src/k8s.io/apiserver/pkg/admission/plugin/
  resourcequota/controller.go): used + requested ≤ hard for each limited name, else `exceeded quota: <quota>,
  requested: <r>, used: <u>, limited: <h>`, wrapped by `admission.NewForbidden` as `pods "<generateName>" is
  forbidden: ...` (the object has no name yet: the ReplicaSet creates from `<rs>-`);
- a refused create leaves the pod not created (`manageReplicas` reports the failed create and retries later).
"""

from __future__ import annotations

from pathlib import Path

from tests_support import run_json

NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}}}
"""
REPLICA_SET = """apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: team, uid: uid-web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]
"""
WEB = """apiVersion: v1
kind: Pod
metadata:
  name: web-x7k2p
  namespace: team
  uid: uid-pod
  labels: {app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-web, controller: true}]
spec:
  nodeName: node-a
  containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]
status: {phase: Running}
"""
URGENT = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: urgent, namespace: team}
spec:
  priorityClassName: high
  containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]
"""


def quota(hard: str, status: str = "") -> str:
    return (f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q, namespace: team}}\n"
            f"spec: {{hard: {{{hard}}}}}\n{status}")


def run(tmp_path: Path, capsys, *docs: str, args: tuple[str, ...] = (), code: int = 0) -> dict:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(docs))
    rc, out, err = run_json(capsys, "simulate", "-f", str(path), "--tie-break", "first", *args)
    assert rc == code, err
    return out


def test_victim_releases_its_quota_before_the_replacement_is_created(tmp_path, capsys):
    """`pods: "2"` in team, computed (no status) from the running web pod (1), then `urgent` created at load
    (used 1 + 1 ≤ 2: admitted, used 2). urgent preempts web: the delete releases web's `pods=1` (used 1), so the
    ReplicaSet's new pod is admitted (1 + 1 ≤ 2). Had the victim's usage stayed, CheckRequest would refuse it
    (2 + 1 > 2). The replacement is queued and pending (no room, no lower-priority victim)."""
    out = run(tmp_path, capsys, NODE.format(name="node-a"), quota('pods: "2"'), REPLICA_SET, WEB, URGENT)
    steps = out["steps"]
    assert steps[0]["victims"] == ["team/web-x7k2p"]
    new = steps[0]["replacedBy"]["team/web-x7k2p"]
    assert (steps[2]["pod"], steps[2]["replaces"], steps[2]["node"]) == (new.split("/")[1], "team/web-x7k2p", None)
    assert "notCreated" not in out and (out["scheduled"], out["unschedulable"]) == (1, 1)


def test_replacement_refused_by_a_lowered_quota_is_not_created(tmp_path, capsys):
    """A snapshot's quota lowered under its usage: `status: {hard: {pods: "1"}, used: {pods: "2"}}` (the API
    server keeps running pods; it only refuses new ones). urgent, in namespace default, preempts web: released,
    used 1; the ReplicaSet's create: used 1 + requested 1 > hard 1: `exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`,
    for the object named by its generateName `web-`. Not created: no replacedBy, no pending pod, notCreated 1."""
    status = 'status: {hard: {pods: "1"}, used: {pods: "2"}}\n'
    urgent = URGENT.replace("namespace: team", "namespace: default")
    out = run(tmp_path, capsys, NODE.format(name="node-a"), quota('pods: "1"', status), REPLICA_SET, WEB, urgent)
    steps = out["steps"]
    assert steps[0]["victims"] == ["team/web-x7k2p"] and "replacedBy" not in steps[0]
    assert (steps[1]["pod"], steps[1]["node"]) == ("urgent", "node-a")
    refused = steps[2]
    assert refused["notCreated"] is True and refused["replaces"] == "team/web-x7k2p" and refused["node"] is None
    assert refused["message"] == ('pods "web-" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, '
                                  'limited: pods=1')
    assert (out["scheduled"], out["unschedulable"], out["notCreated"]) == (1, 0, 1)


def test_victims_deleted_together_release_before_any_create(tmp_path, capsys):
    """A snapshot's `requests.cpu` quota lowered to 2 under a usage of 3 (`status.used`), two running 1-cpu
    ReplicaSet pods w0, w1 on the 2-cpu node, a 2-cpu preemptor in namespace default. Preemption deletes both
    victims at once (`PrepareCandidate`), so both are released first (used 3 − 2 = 1), then each ReplicaSet
    creates, in victim order: w0's 1 + 1 ≤ 2 admitted, w1's 2 + 1 > 2 refused: `exceeded quota: q, requested:
    requests.cpu=1, used: requests.cpu=2, limited: requests.cpu=2`. (Released one by one after each create,
    w0's would be the refused one.)"""
    status = 'status: {hard: {requests.cpu: "2"}, used: {requests.cpu: "3"}}\n'
    rs = [REPLICA_SET.replace("web", f"w{i}").replace('cpu: "2"', 'cpu: "1"') for i in range(2)]
    pods = [WEB.replace("web", f"w{i}").replace('cpu: "2"', 'cpu: "1"') for i in range(2)]
    urgent = URGENT.replace("namespace: team", "namespace: default")
    out = run(tmp_path, capsys, NODE.format(name="node-a"), quota('requests.cpu: "2"', status), *rs, *pods, urgent)
    steps = out["steps"]
    assert steps[0]["victims"] == ["team/w0-x7k2p", "team/w1-x7k2p"]
    assert list(steps[0]["replacedBy"]) == ["team/w0-x7k2p"]
    assert (steps[2]["replaces"], steps[2]["notCreated"], steps[2]["message"]) == (
        "team/w1-x7k2p", True, 'pods "w1-" is forbidden: exceeded quota: q, requested: requests.cpu=1, used: '
        'requests.cpu=2, limited: requests.cpu=2')
    assert out["notCreated"] == 1 and out["unschedulable"] == 1


def test_drain_replacement_refused_by_quota(tmp_path, capsys):
    """`--drain node-a` with the lowered quota of the test above: kubectl drain evicts web (released: used 1),
    the ReplicaSet's create is refused (1 + 1 > 1). The eviction report names it not created with the API
    server's error and the answer is no (exit 1); the step is reported not created as the pods refused at load are."""
    status = 'status: {hard: {pods: "1"}, used: {pods: "2"}}\n'
    out = run(tmp_path, capsys, NODE.format(name="node-a"), NODE.format(name="node-b"),
              quota('pods: "1"', status), REPLICA_SET, WEB, args=("--drain", "node-a"), code=1)
    message = 'pods "web-" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1'
    [move] = out["nodeActions"]["evicted"]
    assert (move["pod"], move["to"], move["notCreated"]) == ("web-x7k2p", None, message)
    assert out["nodeActions"]["allPlaced"] is False
    assert [(s["message"], s.get("notCreated")) for s in out["steps"]] == [(message, True)]


def test_drain_replacement_admitted_once_the_pod_is_evicted(tmp_path, capsys):
    """`pods: "1"` (no status) with web running: used 1. Evicting web releases it (0), the replacement is
    admitted (0 + 1 ≤ 1) and lands on node-b."""
    out = run(tmp_path, capsys, NODE.format(name="node-a"), NODE.format(name="node-b"), quota('pods: "1"'),
              REPLICA_SET, WEB, args=("--drain", "node-a"))
    [move] = out["nodeActions"]["evicted"]
    assert move["to"] == "node-b" and "notCreated" not in move and out["nodeActions"]["allPlaced"] is True


def test_a_replacement_is_a_new_object():
    """The controller's new pod has no identity until the API server stores it (`rest.FillObjectMetaSystemFields`
    gives a created object a new `metadata.uid`): the victim's uid and resourceVersion are not carried over, so
    admission (LimitRanger, Priority's default class, ResourceQuota) treats it as a pod being created."""
    import yaml

    from kubefit.manifests.controllers import Controllers
    from kubefit.manifests.documents import Document
    from kubefit.manifests.load import decode_pod

    body = yaml.safe_load(WEB)
    body["metadata"]["resourceVersion"] = "42"
    victim = decode_pod(Document(body, "f.yaml", 0), [])
    new = Controllers().replacement_for(victim)
    assert victim.uid == "uid-pod" and new is not None and new.uid == ""
    assert "uid" not in new.raw["metadata"] and "resourceVersion" not in new.raw["metadata"]
    assert new.raw["metadata"]["ownerReferences"] == body["metadata"]["ownerReferences"]
