"""Gangs in v1.35 and v1.37, hand-derived from their sources (no golden files exist for them):

- v1.35.7 (openshift-kni/scheduler-plugins 2117d3e3's vendor tree, `gangscheduling.go`,
  `workloadmanager/podgroupinfo.go`, `schedule_one.go`, `scheduling_queue.go`): a pod names
  `spec.workloadRef{name, podGroup, podGroupReplicaKey}` of a `v1alpha1` Workload; there is no pod group cycle: each
  pod is scheduled alone, Reserve assumes it, Permit waits until `minCount` pods of the gang (same workload, pod group
  and replica key) are assumed or bound, then all of them bind, and a waiting pod activates its gang's pods that
  failed; a gang that never gets there is rejected after 5 minutes (`rejected due to timeout after waiting 5m0s at
  plugin GangScheduling`), which frees its nodes and requeues the pods that failed to fit; the rejected pods come
  back 5 minutes later (`permitgangs.py`'s rounds).
- v1.37 (kubernetes/api v1beta1, release notes): Workload and PodGroup are `scheduling.k8s.io/v1beta1`, a PodGroup
  names its Workload in `workloadRef{workloadName, templateName}`, `disruptionMode` is `{single|all}`, the condition is
  `PodGroupInitiallyScheduled`, GangScheduling and workload-aware preemption come with GenericWorkload alone.
"""

from __future__ import annotations

import yaml
from tests.scheduler.gangsupport import final_steps, simulate_docs

from tests_support import run_json

G135 = "GenericWorkload=true,GangScheduling=true"


def _node(name: str, cpu: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, *, ref: tuple[str, str, str] | None = None, group: str | None = None, cpu: str = "1",
         priority: int | None = None, node: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if ref is not None:
        spec["workloadRef"] = {"name": ref[0], "podGroup": ref[1], **({"podGroupReplicaKey": ref[2]} if ref[2] else {})}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if priority is not None:
        spec["priority"] = priority
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _workload_v1alpha1(min_count: int) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "train"},
            "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": min_count}}}]}}


_run = simulate_docs
_final = final_steps


# --------------------------------------------------------------------------- v1.35

def test_v135_gang_binds_once_min_count_wait(tmp_path, capsys):
    """n1 (2 cpu), n2 (1 cpu); the gang's three 1-cpu pods: w0 and w1 wait at Permit on the nodes their cycles
    chose, w2 brings the gang to minCount 3 and all three bind (2 on n1, 1 on n2); the single pod finds no room."""
    docs = [_workload_v1alpha1(3), _node("n1", "2"), _node("n2", "1"),
            *[_pod(f"w{i}", ref=("train", "workers", "")) for i in range(3)], _pod("solo")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35", "--feature-gates", G135)
    assert rc == 0
    final = _final(out)
    assert sorted(final[f"w{i}"]["node"] for i in range(3)) == ["n1", "n1", "n2"]
    assert final["solo"]["node"] is None
    assert all("cycle" not in s for s in out["steps"])  # no pod group cycle in v1.35: one cycle per pod


def test_v135_gang_below_min_count_times_out(tmp_path, capsys):
    """minCount 5, room for 3 (n1 2 cpu, n2 1 cpu), then a single pod. Round 0: w0 (n1), w1 (n2: less allocated),
    w2 (n1) wait at Permit holding their nodes; w3, w4 and solo find no room. 5 minutes on the three are rejected
    (timeout) and their nodes freed, which requeues the pods that failed to fit. Round 1: w3 waits on n1 (activating
    its rejected siblings, queued behind), w4 on n2, solo binds on n1, w2, w1, w0 find no room. Round 2: w2, w1 wait,
    the others fail; its end repeats round 1's (one pod of the gang waiting on each node) with nothing bound: kubefit
    stops, the waiting ones rejected by their timeout."""
    docs = [_workload_v1alpha1(5), _node("n1", "2"), _node("n2", "1"),
            *[_pod(f"w{i}", ref=("train", "workers", "")) for i in range(5)], _pod("solo")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35", "--feature-gates", G135)
    assert rc == 0
    final = _final(out)
    timed_out = sorted(n for n, s in final.items() if s.get("message") ==
                       "0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling.")
    assert timed_out == ["w1", "w2"]
    assert final["solo"]["node"] == "n1" and out["scheduled"] == 1
    assert all(final[n]["message"].startswith("0/2 nodes are available: 2 Insufficient cpu") for n in ("w0", "w3", "w4"))
    assert out["final"]["n2"]["pods"] == 0  # what the gang held is free again
    group = out["podGroups"][0]
    assert group["bound"] == 0 and group["pending"] == 5 and "(3 time(s))" in group["why"]
    assert any("holding their nodes until the 5m timeout rejected them" in w for w in out["warnings"])


def test_v135_waiting_pod_activates_its_siblings(tmp_path, capsys):
    """`Activate` in GangScheduling's Permit: n1 (1 cpu), a gang {a, b} of minCount 2. Round 0: a waits on n1, b
    finds no room. The timeout frees n1 and requeues b: b waits on n1 and activates a (rejected by the timeout a
    round earlier, not yet flushed), which is tried at once and finds no room: a's last word is its FitError (without
    the activation it would still be the timeout's). Round 1 ends as round 0 did: b is rejected by its timeout."""
    docs = [_workload_v1alpha1(2), _node("n1", "1"), _pod("a", ref=("train", "workers", "")),
            _pod("b", ref=("train", "workers", ""))]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35", "--feature-gates", G135)
    assert rc == 0
    final = _final(out)
    assert final["a"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu")
    assert final["b"]["message"].endswith("rejected due to timeout after waiting 5m0s at plugin GangScheduling.")


def test_v135_waiting_pod_preempted_is_rejected_not_deleted(tmp_path, capsys):
    """`PreemptPod`: a victim waiting at Permit is rejected (`preempted`), not deleted. n1 (2 cpu); a gang of three
    1-cpu pods with minCount 3: g0 and g1 wait on n1, g2 finds no room; then a priority-10 pod of 2 cpu preempts the
    two waiting pods and binds (it arrives after them: created later). They go back to the queue (no controller
    replaces them) and find no room."""
    high = _pod("high", cpu="2", priority=10)
    high["metadata"]["creationTimestamp"] = "2030-01-01T00:01:00Z"
    docs = [_workload_v1alpha1(3), _node("n1", "2"), *[_pod(f"g{i}", ref=("train", "workers", "")) for i in range(3)],
            high]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35", "--feature-gates", G135)
    assert rc == 0
    final = _final(out)
    assert final["high"]["node"] == "n1"
    preempting = next(s for s in out["steps"] if s.get("victims"))
    assert preempting["pod"] == "high" and preempting["victims"] == ["default/g0", "default/g1"]
    assert "replacedBy" not in preempting
    assert final["g0"]["node"] is None and final["g1"]["node"] is None and out["scheduled"] == 1
    # rejected, not deleted: back in the pool, flushed 5 minutes later (no sibling waits to activate them): no room;
    # no pod of the gang waits any more, so no timeout comes
    assert all(final[f"g{i}"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu") for i in range(3))


def test_v135_rejected_pods_flushed_after_five_minutes(tmp_path, capsys):
    """`flushUnschedulablePodsLeftover`: n1 (2 cpu); a and b of a minCount-3 gang wait on n1; s (2 cpu) and c (the
    gang's third) find no room. The timeout frees n1 and requeues s and c (they failed to fit): s binds, c finds no
    room again, so no pod of the gang waits to activate a and b. They were rejected by Permit (GangScheduling
    answers no cluster event of theirs): they come back 5 minutes later, a round on, and find no room."""
    docs = [_workload_v1alpha1(3), _node("n1", "2"), _pod("a", ref=("train", "workers", "")),
            _pod("b", ref=("train", "workers", "")), _pod("s", cpu="2"), _pod("c", ref=("train", "workers", ""))]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35", "--feature-gates", G135)
    assert rc == 0
    final = _final(out)
    assert final["s"]["node"] == "n1"
    assert all(final[n]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu") for n in ("a", "b", "c"))


def test_v135_replica_keys_are_separate_gangs(tmp_path, capsys):
    """`podGroupReplicaKey` splits a pod group into gangs of their own (podGroupKey includes it): two replicas of
    minCount 2, each of two pods, both bind; a third replica of one pod never reaches its quorum (PreEnqueue)."""
    docs = [_workload_v1alpha1(2), _node("n1", "8"),
            *[_pod(f"{r}-{i}", ref=("train", "workers", r)) for r in ("a", "b") for i in range(2)],
            _pod("c-0", ref=("train", "workers", "c"))]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35", "--feature-gates", G135)
    assert rc == 0
    final = _final(out)
    assert all(final[f"{r}-{i}"]["node"] == "n1" for r in ("a", "b") for i in range(2))
    assert final["c-0"]["preEnqueue"] == "GangScheduling"
    assert final["c-0"]["message"] == "waiting for minCount pods from a gang to appear in scheduling queue"


def test_v135_pre_enqueue_messages(tmp_path, capsys):
    """v1.35's PreEnqueue: the Workload missing, or its pod group missing (UnschedulableAndUnresolvable)."""
    docs = [_workload_v1alpha1(1), _node("n1", "8"), _pod("a", ref=("nope", "workers", "")),
            _pod("b", ref=("train", "other", ""))]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35", "--feature-gates", G135)
    assert rc == 0
    final = _final(out)
    assert final["a"]["message"] == 'waiting for pods\'s workload "nope" to appear in scheduling queue'
    assert final["b"]["message"] == 'pod group "other" doesn\'t exist for a workload "train"'


def test_v135_gates_off_drops_workload_ref(tmp_path, capsys):
    docs = [_workload_v1alpha1(5), _node("n1", "2"), *[_pod(f"w{i}", ref=("train", "workers", "")) for i in range(3)]]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.35")
    assert rc == 0 and out["scheduled"] == 2
    assert any("spec.workloadRef dropped from 3 pod(s)" in w for w in out["warnings"])


# --------------------------------------------------------------------------- v1.37

def _pod_group_v1beta1(name: str, min_count: int, **spec) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"workloadRef": {"workloadName": "wl", "templateName": "main"},
                     "schedulingPolicy": {"gang": {"minCount": min_count}}, **spec}}


def test_v137_beta_api_and_condition(tmp_path, capsys):
    """GenericWorkload alone turns gangs on in v1.37 (GangScheduling is gone); the condition is
    PodGroupInitiallyScheduled (kubernetes#139743); v1.37's cycle is the one run, nothing said of it."""
    docs = [_pod_group_v1beta1("pg", 2), _node("n1", "2"), _pod("a", group="pg"), _pod("b", group="pg")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", "GenericWorkload=true")
    assert rc == 0 and out["scheduled"] == 2
    assert out["podGroups"][0]["condition"]["type"] == "PodGroupInitiallyScheduled"
    assert not any("not reproduced" in w for w in out["warnings"])


def test_v137_workload_aware_preemption_comes_with_generic_workload(tmp_path, capsys):
    """`disruptionMode: {all: {}}` (v1beta1's union) makes a running gang one victim; with GenericWorkload alone the
    group preempts as a whole (PodGroupPostFilter): a priority-10 gang of 2 on one 2-cpu node held by the 2 pods of
    a priority-1 gang evicts both (they are one victim, and the new gang needs all the room)."""
    old = _pod_group_v1beta1("old", 2, disruptionMode={"all": {}}, priority=1)
    new = _pod_group_v1beta1("new", 2, priority=10)
    docs = [old, new, _node("n1", "2"),
            {**_pod("old-0", group="old", priority=1, node="n1"), "status": {"startTime": "2030-01-01T00:00:01Z"}},
            {**_pod("old-1", group="old", priority=1, node="n1"), "status": {"startTime": "2030-01-01T00:00:02Z"}},
            _pod("a", group="new", priority=10), _pod("b", group="new", priority=10)]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", "GenericWorkload=true")
    assert rc == 0, out
    victims = sorted(v for s in out["steps"] for v in s.get("victims", ()))
    assert victims == ["default/old-0", "default/old-1"]
    assert out["scheduled"] == 2


def test_v137_default_profile_has_gang_scheduling_with_generic_workload(tmp_path, capsys):
    """`applyGangScheduling` with GenericWorkload in v1.37 (kubernetes#139520): the default profile's multiPoint."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}))
    rc, out, _err = run_json(capsys, "config", "view", "-f", str(path), "--kube-version", "1.37", "--feature-gates",
                             "GenericWorkload=true")
    assert rc == 0
    names = [p["name"] for p in out["profiles"][0]["plugins"]["multiPoint"]["enabled"]]
    assert names[-1] == "GangScheduling"
