"""Issue #38, defect 1: a preemption victim's controller creates its replacement, which is queued and scheduled.

Upstream, the scheduler deletes the victims (DefaultPreemption, `PrepareCandidate`) and nothing more; the owner's
controller sees the deletion and creates a new pod at once:

- ReplicaSet: `manageReplicas` (pkg/controller/replicaset/replica_set.go) computes `diff := len(activePods) -
  int(*(rs.Spec.Replicas))` and, when negative, creates `-diff` pods from the template (`generateName`
  `<rs>-`), so a ReplicaSet of 1 whose pod was preempted creates one new pod;
- StatefulSet: `processReplica` (pkg/controller/statefulset/stateful_set_control.go) creates the missing
  ordinal again under the same name `<set>-<ordinal>` (`newVersionedStatefulSetPod`), its claims kept;
- DaemonSet: `manage` (pkg/controller/daemon/daemon_controller.go) creates a pod for each node that should
  run one and has none, pinned to that node (`ReplaceDaemonSetPodNodeNameNodeAffinity`);
- Job: the deleted pod counts as failed (job_controller.go `trackJobStatusAndRemoveFinalizers`); the Job
  fails once `failed > backoffLimit` (`syncJob`'s `exceedsBackoffLimit`), else it creates a new pod;
- a pod without a controller (`metav1.GetControllerOf` nil) is gone.

The new pod enters the scheduling queue (activeQ, `PrioritySort`: higher priority first, then earlier
arrival): after the preemptor's retry, behind the pods already waiting with at least its priority. A
replacement that fits nowhere stays pending: the cluster shows one pending pod where the victim was.
"""

from __future__ import annotations

import json

import pytest

from kubefit.cli import main

NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}}}
"""
URGENT = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]
"""


def owned_pod(name: str, kind: str, owner: str, node: str, labels: str, extra: str = "") -> str:
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {labels}
  ownerReferences: [{{apiVersion: apps/v1, kind: {kind}, name: {owner}, uid: uid-{owner}, controller: true}}]
spec:
  nodeName: {node}
{extra}  containers: [{{name: c, resources: {{requests: {{cpu: "2", memory: 1Gi}}}}}}]
status: {{phase: Running}}
"""


def controller(kind: str, name: str, spec: str = "", api: str = "apps/v1", status: str = "") -> str:
    """A workload of one 2-cpu container, labelled `app: <name>`, with `spec` lines added (a Job's selector is
    the API server's to generate)."""
    selector = "" if kind == "Job" else f"  selector: {{matchLabels: {{app: {name}}}}}\n"
    return (f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}, uid: uid-{name}}}\nspec:\n{spec}"
            f"{selector}  template:\n    metadata: {{labels: {{app: {name}}}}}\n"
            "    spec:\n      restartPolicy: " + ("Never" if kind == "Job" else "Always") + "\n"
            '      containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]\n' + status)


REPLICA_SET = controller("ReplicaSet", "web", "  replicas: 1\n")


def simulate(tmp_path, capsys, *docs: str, args: tuple[str, ...] = ()) -> dict:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(docs))
    capsys.readouterr()
    rc = main(["simulate", "-f", str(path), "-o", "json", "--tie-break", "first", *args])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def test_replica_set_victim_is_recreated_and_stays_pending(tmp_path, capsys):
    """The issue's case: a ReplicaSet of 1 fills the only node; `urgent` (priority 1000) preempts its pod.
    manageReplicas creates `1 − 0 = 1` new pod `web-<5 chars>`, which fits nowhere and finds no victim of
    lower priority: 1 pending, not 0."""
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), REPLICA_SET,
                   owned_pod("web-x7k2p", "ReplicaSet", "web", "node-a", "{app: web}"), URGENT)
    steps = got["steps"]
    assert [(s["pod"], s["node"]) for s in steps[:2]] == [("urgent", None), ("urgent", "node-a")]
    assert steps[0]["victims"] == ["default/web-x7k2p"]
    new = steps[0]["replacedBy"]["default/web-x7k2p"].split("/", 1)[1]
    assert new.startswith("web-") and len(new) == len("web-x7k2p") and new != "web-x7k2p"
    assert steps[2]["pod"] == new and steps[2]["replaces"] == "default/web-x7k2p" and steps[2]["node"] is None
    assert "Insufficient cpu" in steps[2]["message"]
    assert (got["scheduled"], got["unschedulable"], len(steps)) == (1, 1, 3)
    assert got["metrics"]["pendingByReason"] == {"Insufficient cpu": 1}


def test_replacement_schedules_elsewhere(tmp_path, capsys):
    """node-a (3 cpu) runs web (2 cpu); `urgent` needs 3 cpu, which node-b (2 cpu, empty) lacks: it preempts
    web on node-a, and web's replacement lands on node-b. Nothing is left pending."""
    big = NODE.format(name="node-a").replace('cpu: "2"', 'cpu: "3"')
    urgent = URGENT.replace('cpu: "2"', 'cpu: "3"')
    got = simulate(tmp_path, capsys, big, NODE.format(name="node-b"), REPLICA_SET,
                   owned_pod("web-x7k2p", "ReplicaSet", "web", "node-a", "{app: web}"), urgent)
    steps = got["steps"]
    assert steps[0]["nominatedNode"] == "node-a" and steps[1]["node"] == "node-a"
    assert (steps[2]["replaces"], steps[2]["node"]) == ("default/web-x7k2p", "node-b")
    assert (got["scheduled"], got["unschedulable"]) == (2, 0)
    assert got["placement"] == {"node-a": 1, "node-b": 1}


def test_no_replace_victims_deletes_them_only(tmp_path, capsys):
    """`--no-replace-victims`: kube-scheduler alone (its integration tests, the golden harness): 0 pending."""
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), REPLICA_SET,
                   owned_pod("web-x7k2p", "ReplicaSet", "web", "node-a", "{app: web}"), URGENT,
                   args=("--no-replace-victims",))
    assert (got["scheduled"], got["unschedulable"], len(got["steps"])) == (1, 0, 2)
    assert "replacedBy" not in got["steps"][0]


def test_bare_pod_is_not_replaced(tmp_path, capsys):
    """A pod that declares no controller: deleted, nothing recreates it."""
    bare = """apiVersion: v1
kind: Pod
metadata: {name: lonely}
spec:
  nodeName: node-a
  containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]
status: {phase: Running}
"""
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), bare, URGENT)
    assert got["steps"][0]["victims"] == ["default/lonely"] and "replacedBy" not in got["steps"][0]
    assert (got["scheduled"], got["unschedulable"], len(got["steps"])) == (1, 0, 2)


def test_stateful_set_ordinal_comes_back_under_its_name(tmp_path, capsys):
    """processReplica recreates ordinal 0 as `db-0`, with its claim volume as before."""
    sts = controller("StatefulSet", "db", "  replicas: 1\n  serviceName: db\n")
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), sts,
                   owned_pod("db-0", "StatefulSet", "db", "node-a", "{app: db}"), URGENT)
    steps = got["steps"]
    assert steps[0]["replacedBy"] == {"default/db-0": "default/db-0"}
    assert (steps[2]["pod"], steps[2]["replaces"], steps[2]["node"]) == ("db-0", "default/db-0", None)
    assert got["unschedulable"] == 1


DAEMON_SET = controller("DaemonSet", "agent")


PINNED = """  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-a]}]}]
"""


@pytest.mark.parametrize("affinity", [PINNED, ""], ids=["pinned", "nodeName-only"])
def test_daemon_set_pod_is_recreated_on_its_node_only(tmp_path, capsys, affinity):
    """node-a (3 cpu) runs the DaemonSet's agent (2 cpu); `urgent` (3 cpu) fits only there once agent is gone.
    The DaemonSet controller creates agent's pod for node-a again, pinned there (`matchFields metadata.name`,
    also when the deleted pod was written with `nodeName` alone): node-b (2 cpu) could hold it, but it is not
    its node, so the replacement stays pending (node-b gets the DaemonSet's own pod for it)."""
    big = NODE.format(name="node-a").replace('cpu: "2"', 'cpu: "3"')
    urgent = URGENT.replace('cpu: "2"', 'cpu: "3"')
    got = simulate(tmp_path, capsys, big, NODE.format(name="node-b"), DAEMON_SET,
                   owned_pod("agent-a", "DaemonSet", "agent", "node-a", "{app: agent}", affinity), urgent)
    steps = got["steps"]
    assert steps[0]["victims"] == ["default/agent-a"] and steps[1]["node"] == "node-a"
    new = steps[0]["replacedBy"]["default/agent-a"].split("/", 1)[1]
    assert new.startswith("agent-") and new != "agent-a"
    # the DaemonSet's own pod for node-b was waiting already (same priority, earlier): it goes first
    assert [(s["pod"].split("-")[0], s["node"]) for s in steps[2:]] == [("agent", "node-b"), ("agent", None)]
    assert (steps[3]["pod"], steps[3]["replaces"]) == (new, "default/agent-a")
    assert steps[3]["message"].startswith("0/2 nodes are available: 1 Insufficient cpu, "
                                          "1 node(s) didn't satisfy plugin(s) [NodeAffinity].")
    assert got["unschedulable"] == 1


def job(backoff: int | None, failed: int = 0, policy: str = "") -> str:
    limit = "" if backoff is None else f"  backoffLimit: {backoff}\n"
    return controller("Job", "batch", limit + policy, "batch/v1", f"status: {{active: 1, failed: {failed}}}\n")


@pytest.mark.parametrize(("backoff", "failed", "replaced"), [
    (None, 0, True),  # default backoffLimit 6: 1 failure of 6
    (0, 0, False),  # 1 > 0: the Job fails (BackoffLimitExceeded), no new pod
    (2, 1, True),  # 2 failures, limit 2
    (2, 2, False),  # 3 failures > 2
])
def test_job_replaces_within_its_backoff_limit(tmp_path, capsys, backoff, failed, replaced):
    """A preempted Job pod is a failed pod: replaced while `failed <= backoffLimit` (status.failed counted)."""
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), job(backoff, failed),
                   owned_pod("batch-k2x9q", "Job", "batch", "node-a", "{app: batch}"), URGENT)
    step = got["steps"][0]
    assert step["victims"] == ["default/batch-k2x9q"]
    if replaced:
        assert step["replacedBy"]["default/batch-k2x9q"].startswith("default/batch-")
        assert got["unschedulable"] == 1
    else:
        assert "replacedBy" not in step and got["unschedulable"] == 0


def test_job_pod_failure_policy_ignore_disruption(tmp_path, capsys):
    """A `podFailurePolicy` rule `Ignore` on `DisruptionTarget` does not count the preemption: with
    backoffLimit 0 the pod is still replaced; `FailJob` on it ends the Job instead."""
    ignore = ("  podFailurePolicy:\n    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]\n")
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), job(0, 0, ignore),
                   owned_pod("batch-k2x9q", "Job", "batch", "node-a", "{app: batch}"), URGENT)
    assert "replacedBy" in got["steps"][0]
    fail = ignore.replace("Ignore", "FailJob")
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), job(6, 0, fail),
                   owned_pod("batch-k2x9q", "Job", "batch", "node-a", "{app: batch}"), URGENT)
    assert "replacedBy" not in got["steps"][0]


def test_replacement_waits_behind_pods_of_its_priority(tmp_path, capsys):
    """The activeQ pops by priority then arrival: a pending pod of the victim's priority, queued before the
    deletion, is taken before the replacement; one of lower priority after it."""
    pending = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  priority: {priority}
  containers: [{{name: c, resources: {{requests: {{cpu: "2", memory: 1Gi}}}}}}]
"""
    got = simulate(tmp_path, capsys, NODE.format(name="node-a"), REPLICA_SET,
                   owned_pod("web-x7k2p", "ReplicaSet", "web", "node-a", "{app: web}"), URGENT,
                   pending.format(name="same", priority=0), pending.format(name="lower", priority=-5))
    order = [s["pod"] for s in got["steps"]]
    new = got["steps"][0]["replacedBy"]["default/web-x7k2p"].split("/", 1)[1]
    assert order == ["urgent", "urgent", "same", new, "lower"]
    assert got["unschedulable"] == 3


def test_queue_table_names_the_replacement(tmp_path, capsys):
    """The Queue table: the evicting step names each victim's replacement, the replacement says what it replaces."""
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([NODE.format(name="node-a"), REPLICA_SET,
                                  owned_pod("web-x7k2p", "ReplicaSet", "web", "node-a", "{app: web}"), URGENT]))
    capsys.readouterr()
    assert main(["simulate", "-f", str(path), "--tie-break", "first"]) == 0
    out = capsys.readouterr().out
    assert "evicts default/web-x7k2p (replaced by web-" in out and "(replaces web-x7k2p)" in out
    assert "unschedulable 1" in out


def test_html_report_names_the_replacement(tmp_path, capsys):
    """`--report`: the Preemptions section's "replaced by" column and the Queue's pod that replaces a victim."""
    path, report = tmp_path / "scenario.yaml", tmp_path / "report.html"
    path.write_text("---\n".join([NODE.format(name="node-a"), REPLICA_SET,
                                  owned_pod("web-x7k2p", "ReplicaSet", "web", "node-a", "{app: web}"), URGENT]))
    capsys.readouterr()
    assert main(["simulate", "-f", str(path), "--tie-break", "first", "--report", str(report)]) == 0
    html = report.read_text()
    assert "replaced by" in html and "(for default/web-x7k2p)" in html and "(replaces default/web-x7k2p)" in html
