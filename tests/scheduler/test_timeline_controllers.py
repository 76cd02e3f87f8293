"""Issue #38: `simulate --timeline` removes pods through the controllers, the path preemption victims and drained
nodes' pods take (`kubefit.manifests.controllers`).

Upstream:

- a ReplicaSet's, StatefulSet's or DaemonSet's pod template must say `restartPolicy: Always`
  (pkg/apis/apps/validation/validation.go: `ValidatePodTemplateSpecForReplicaSet`, `ValidateStatefulSetSpec`,
  `ValidateDaemonSetSpec` refuse any other with `field.NotSupported`); the kubelet restarts
  such a pod's exiting containers (`computePodActions`, pkg/kubelet/kuberuntime), so a pod of theirs that leaves
  was deleted. `manageReplicas` (pkg/controller/replicaset/replica_set.go) then creates `replicas − active` = 1
  new pod from `<rs>-`, `processReplica` (stateful_set_control.go) the same ordinal under its name;
- a Job's pod (`restartPolicy` Never or OnFailure) whose containers exit 0 is Succeeded: the Job counts a success
  (`trackJobStatusAndRemoveFinalizers`) and creates nothing for it;
- deleting an owner deletes its dependents (pkg/controller/garbagecollector `attemptToDeleteItem`: an object
  whose owners are all gone is deleted; background propagation, the default): a Deployment's ReplicaSet, then its
  pods; the ReplicaSet being gone, nothing recreates them;
- the quota controller releases a deleted pod's usage (`replenishQuota`) before the new pod's create is checked
  (`CheckRequest`).
"""

from __future__ import annotations

from pathlib import Path

from tests_support import run_json

NODE = """apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def workload(kind: str, name: str, cpu: str, *, replicas: int = 1, template_annotations: str = "",
             annotations: str = "", restart: str = "Always", namespace: str = "default") -> str:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    meta = f"{{name: {name}, namespace: {namespace}{', annotations: {' + annotations + '}' if annotations else ''}}}"
    spec = "" if kind == "Job" else f"  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n"
    if kind == "StatefulSet":
        spec += f"  serviceName: {name}\n"
    tmeta = f"{{labels: {{app: {name}}}" + (f", annotations: {{{template_annotations}}}}}" if template_annotations
                                            else "}")
    return (f"apiVersion: {api}\nkind: {kind}\nmetadata: {meta}\nspec:\n{spec}  template:\n    metadata: {tmeta}\n"
            f"    spec:\n      restartPolicy: {restart}\n"
            f'      containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]\n')


def replay(tmp_path: Path, capsys, *docs: str, args: tuple[str, ...] = ()) -> dict:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([NODE, *docs]))
    rc, out, err = run_json(capsys, "simulate", "-f", str(path), "--timeline", "--tie-break", "first", *args)
    assert rc == 0, err
    return out


def test_replica_set_pod_deleted_at_its_end_is_replaced(tmp_path, capsys):
    """A ReplicaSet of 1 whose template says `kubefit.io/duration: 10s`: its pod runs 0–10 s and is deleted (it
    restarts always); manageReplicas creates one pod `web-<5>` at 10 s, which binds then and runs on (the
    duration was the deleted pod's). `replacedBy` names it; 1 completion, 2 pods scheduled."""
    out = replay(tmp_path, capsys, workload("ReplicaSet", "web", "2", template_annotations="kubefit.io/duration: 10s"))
    first, second = out["pods"]
    assert (first["start"], first["end"]) == (0, 10) and "replaces" not in first
    assert second["pod"].startswith("web-") and second["pod"] != first["pod"]
    assert (second["arrival"], second["start"], second["end"], second["replaces"]) == (
        10, 10, None, f"default/{first['pod']}")
    assert out["replacedBy"] == {f"default/{first['pod']}": f"default/{second['pod']}"}
    assert (out["scheduled"], out["unschedulable"], out["completed"]) == (2, 0, 1)


def test_stateful_set_ordinal_comes_back_under_its_name(tmp_path, capsys):
    """processReplica recreates the missing ordinal `db-0` under the same name at the deletion instant."""
    out = replay(tmp_path, capsys, workload("StatefulSet", "db", "2", template_annotations="kubefit.io/duration: 3s"))
    assert [(p["pod"], p["start"], p["end"]) for p in out["pods"]] == [("db-0", 0, 3), ("db-0", 3, None)]
    assert out["replacedBy"] == {"default/db-0": "default/db-0"}


def test_job_pod_completes_and_is_not_replaced(tmp_path, capsys):
    """A Job's pod (restartPolicy Never) with `kubefit.io/duration: 5s` succeeds at 5 s: nothing replaces it."""
    out = replay(tmp_path, capsys, workload("Job", "batch", "1", template_annotations="kubefit.io/duration: 5s",
                                            restart="Never"))
    [run] = out["pods"]
    assert (run["start"], run["end"]) == (0, 5) and "replacedBy" not in out and out["completed"] == 1


def test_no_replace_victims_recreates_nothing(tmp_path, capsys):
    """`--no-replace-victims`: the deleted pod is gone, as before controllers were modelled."""
    out = replay(tmp_path, capsys, workload("ReplicaSet", "web", "2", template_annotations="kubefit.io/duration: 10s"),
                 args=("--no-replace-victims",))
    assert len(out["pods"]) == 1 and "replacedBy" not in out


def test_deleting_the_deployment_deletes_its_pods(tmp_path, capsys):
    """A Deployment of 2 × 3 cpu on the 4-cpu node, annotated `kubefit.io/duration: 20s` (deleted at 20 s): one
    pod runs, the other waits; `late` (3 cpu) arrives at 5 s and waits. At 20 s the garbage collector deletes the
    ReplicaSet and its two pods (the running one ends at 20, the waiting one is never scheduled), neither
    replaced; the freed 3 cpu let `late` bind at 20 s. 2 deleted, 0 unschedulable."""
    late = ("apiVersion: v1\nkind: Pod\nmetadata: {name: late, annotations: {kubefit.io/arrival: 5s}}\n"
            'spec: {containers: [{name: c, resources: {requests: {cpu: "3"}}}]}\n')
    out = replay(tmp_path, capsys, workload("Deployment", "web", "3", replicas=2,
                                            annotations="kubefit.io/duration: 20s"), late)
    running, waiting, after = out["pods"]
    assert (running["start"], running["end"], running["deleted"]) == (0, 20, True)
    assert (waiting["node"], waiting["deleted"]) == (None, True)
    assert waiting["message"] == "deleted with its owner Deployment/web before it was scheduled"
    assert (after["pod"], after["start"]) == ("late", 20)
    assert (out["deleted"], out["unschedulable"], out["scheduled"]) == (2, 0, 2) and "replacedBy" not in out


def stored_pod(namespace: str = "default") -> str:
    """A running pod of ReplicaSet web (uid u-rs), stored (uid, nodeName), deleted at 4 s."""
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: web-abcde
  namespace: {namespace}
  uid: u-pod
  labels: {{app: web}}
  annotations: {{kubefit.io/duration: 4s}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u-rs, controller: true}}]
spec:
  nodeName: node-1
  containers: [{{name: c, resources: {{requests: {{cpu: "2"}}}}}}]
status: {{phase: Running}}
"""


def stored_rs(namespace: str = "default") -> str:
    return workload("ReplicaSet", "web", "2", namespace=namespace).replace(
        f"metadata: {{name: web, namespace: {namespace}}}", f"metadata: {{name: web, namespace: {namespace}, uid: u-rs}}")


def test_bound_pod_of_a_snapshot_is_replaced_too(tmp_path, capsys):
    """A running ReplicaSet pod (stored: uid, nodeName) with `kubefit.io/duration: 4s` is deleted at 4 s and its
    ReplicaSet (in the files) creates a new pod, which binds at 4 s."""
    out = replay(tmp_path, capsys, stored_rs(), stored_pod())
    [new] = out["pods"]
    assert (new["replaces"], new["arrival"], new["start"]) == ("default/web-abcde", 4, 4)
    assert out["replacedBy"] == {"default/web-abcde": f"default/{new['pod']}"} and out["completed"] == 1


def test_replacement_refused_by_quota_is_not_created(tmp_path, capsys):
    """A snapshot quota lowered to `pods: "1"` under a usage of 2 in namespace team (`status.used`): the stored
    ReplicaSet pod deleted at 4 s releases its `pods=1` (used 1); the new pod's create finds 1 + 1 > 1:
    `exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1` for `web-` — not created, no
    replacedBy."""
    quota = ("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: team}\n"
             'spec: {hard: {pods: "1"}}\nstatus: {hard: {pods: "1"}, used: {pods: "2"}}\n')
    out = replay(tmp_path, capsys, quota, stored_rs("team"), stored_pod("team"))
    [refused] = out["pods"]
    assert refused["notCreated"] is True and refused["replaces"] == "team/web-abcde"
    assert refused["message"] == ('pods "web-" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, '
                                  'limited: pods=1')
    assert "replacedBy" not in out and out["notCreated"] == 1


def test_deleting_a_deployment_reaches_its_replica_sets_pods(tmp_path, capsys):
    """A snapshot's chain: Deployment web (uid u-dep, `kubefit.io/duration: 6s`) → ReplicaSet web-6d4f8 (owned
    by it, 1 replica) → the running pod web-6d4f8-abcde (owned by the ReplicaSet). At 6 s the garbage collector
    deletes the ReplicaSet (its owner is gone), then the pod (its owner is gone); nothing recreates it: the node
    is empty, 1 pod freed."""
    deployment = workload("Deployment", "web", "2", annotations="kubefit.io/duration: 6s").replace(
        "metadata: {name: web, namespace: default,", "metadata: {name: web, namespace: default, uid: u-dep,")
    rs = workload("ReplicaSet", "web-6d4f8", "2").replace(
        "metadata: {name: web-6d4f8, namespace: default}",
        "metadata: {name: web-6d4f8, namespace: default, uid: u-rs, ownerReferences: [{apiVersion: apps/v1, "
        "kind: Deployment, name: web, uid: u-dep, controller: true}]}").replace("app: web-6d4f8", "app: web")
    pod = stored_pod().replace("web-abcde", "web-6d4f8-abcde").replace("name: web,", "name: web-6d4f8,").replace(
        "  annotations: {kubefit.io/duration: 4s}\n", "")
    out = replay(tmp_path, capsys, deployment, rs, pod)
    assert out["pods"] == [] and "replacedBy" not in out
    assert out["series"]["running"][-1] == 0 and out["freed"]["pods"] == 1


def test_a_bad_deletion_time_on_a_workload_is_refused(tmp_path, capsys):
    """A workload's `kubefit.io/duration` is read as a pod's is: a value that is no duration is refused by its
    file, object and field, exit 2."""
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([NODE, workload("Deployment", "web", "1", annotations="kubefit.io/duration: soon")]))
    rc, _, err = run_json(capsys, "simulate", "-f", str(path), "--timeline")
    assert rc == 2
    assert "Deployment/web" in err and "metadata.annotations.kubefit.io/duration" in err and "'soon'" in err


def bare(name: str, arrival: str, duration: str | None = None, restart: str = "Always") -> str:
    times = f"kubefit.io/arrival: {arrival}" + (f", kubefit.io/duration: {duration}" if duration else "")
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: team, annotations: {{{times}}}}}\n"
            f"spec: {{restartPolicy: {restart}, containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}\n")


def team_quota(hard: str) -> str:
    return f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q, namespace: team}}\nspec: {{hard: {{{hard}}}}}\n"


def test_each_pod_is_created_and_charged_when_it_arrives(tmp_path, capsys):
    """`pods: "1"` in team. a arrives at 0 s and is deleted at 10 s; b arrives at 5 s and c at 15 s. Each is
    created when it arrives (CheckRequest against `status.used` then): b finds used 1 + 1 > 1 and is refused,
    `pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`; a's deletion
    releases its pod (replenishQuota), so c finds 0 + 1 ≤ 1 and runs. (Charged at load in document order, b and
    c would both have been refused.)"""
    out = replay(tmp_path, capsys, team_quota('pods: "1"'), bare("a", "0s", "10s"), bare("b", "5s"), bare("c", "15s"))
    pods = {p["pod"]: p for p in out["pods"]}
    assert (pods["a"]["start"], pods["a"]["end"]) == (0, 10)
    assert pods["b"]["notCreated"] is True and pods["b"]["message"] == (
        'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1')
    assert (pods["c"]["arrival"], pods["c"]["start"]) == (15, 15)
    assert (out["scheduled"], out["notCreated"], out["unschedulable"]) == (2, 1, 0)


def test_a_completed_pod_still_counts_in_count_pods(tmp_path, capsys):
    """`count/pods: "1"` and `pods: "1"`: a (restartPolicy Never) completes at 10 s and stays stored, Succeeded:
    `PodUsageFunc` of a terminal pod charges `count/pods` only (pkg/quota/v1/evaluator/core/pods.go,
    `QuotaV1Pod` false for Succeeded/Failed). c arriving at 15 s finds `pods` free but `count/pods` used 1:
    `exceeded quota: q, requested: count/pods=1, used: count/pods=1, limited: count/pods=1`."""
    out = replay(tmp_path, capsys, team_quota('count/pods: "1", pods: "1"'), bare("a", "0s", "10s", restart="Never"),
                 bare("c", "15s"))
    pods = {p["pod"]: p for p in out["pods"]}
    assert (pods["a"]["end"], pods["c"]["notCreated"]) == (10, True)
    assert pods["c"]["message"] == ('pods "c" is forbidden: exceeded quota: q, requested: count/pods=1, used: '
                                    'count/pods=1, limited: count/pods=1')


def test_without_replacements_the_quota_still_follows_the_pods(tmp_path, capsys):
    """`--no-replace-victims` recreates nothing, but the pods still come and go through the quota: as in
    test_each_pod_is_created_and_charged_when_it_arrives, b is refused and c runs."""
    out = replay(tmp_path, capsys, team_quota('pods: "1"'), bare("a", "0s", "10s"), bare("b", "5s"), bare("c", "15s"),
                 args=("--no-replace-victims",))
    assert [(p["pod"], p.get("notCreated", False)) for p in out["pods"]] == [("a", False), ("b", True), ("c", False)]


def test_a_drained_pods_replacement_is_charged_once(tmp_path, capsys):
    """`--timeline --drain node-1` with `pods: "1"` and the stored ReplicaSet pod of test_bound_pod_of_a_snapshot_
    is_replaced_too on node-1 (counted: used 1): the eviction releases it and the ReplicaSet's new pod is
    admitted then (0 + 1 ≤ 1); arriving at 0 s it is not charged a second time (1 + 1 > 1 would refuse it). It
    waits: node-1, cordoned, is the only node."""
    rs, pod = stored_rs("team"), stored_pod("team").replace("  annotations: {kubefit.io/duration: 4s}\n", "")
    out = replay(tmp_path, capsys, team_quota('pods: "1"'), rs, pod, args=("--drain", "node-1"))
    [new] = out["pods"]
    assert "notCreated" not in new and new["node"] is None and "unschedulable" in new["message"]
