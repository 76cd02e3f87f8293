"""`simulate --timeline` with pod groups (v1.36, GenericWorkload on): a group is one queue entry.

Its pods that have arrived wait together: GangScheduling's PreEnqueue keeps a gang out of the queue until `minCount`
of its pods exist (no cycle, no attempt), then one group cycle binds the pods that fitted once `minCount` did
(else none); the others wait for capacity to free and are retried together. Hand-derived cases on one node.
"""

from __future__ import annotations

from gangs_support import GATES, V136, gang, gpu_node, gpu_pod, run
from tests_support import ROOT, run_json


def _at(pod: dict, arrival: int, duration: int | None = None) -> dict:
    notes = {"kubefit.io/arrival": f"{arrival}s"}
    if duration is not None:
        notes["kubefit.io/duration"] = f"{duration}s"
    pod["metadata"]["annotations"] = notes
    return pod


def _rows(out: dict) -> dict:
    return {p["pod"]: p for p in out["pods"]}


def test_a_gang_waits_for_its_last_pod(tmp_path, capsys):
    # 3 pods of a gang (minCount 3) arrive at 0, 5 and 10 s on a 4-GPU node: the gang is queued only when the third
    # exists, at 10 s, and its one cycle binds all three then (one attempt each). With the gate off each binds as
    # it arrives.
    group, *pods = gang("pg", 3)
    docs = [gpu_node("a", 4), group, *(_at(p, t) for p, t in zip(pods, (0, 5, 10), strict=True))]
    rc, out, _ = run(tmp_path, capsys, "simulate", docs, "--timeline", *V136)
    assert rc == 0
    rows = _rows(out)
    assert [(rows[f"pg-{i}"]["start"], rows[f"pg-{i}"]["attempts"]) for i in range(3)] == [(10, 1)] * 3
    assert rows["pg-0"]["podGroup"] == "ml/pg"
    rc, off, _ = run(tmp_path, capsys, "simulate", docs, "--timeline", "--kube-version", "1.36")
    assert [_rows(off)[f"pg-{i}"]["start"] for i in range(3)] == [0, 5, 10]


def test_a_gang_waits_for_room_as_a_whole(tmp_path, capsys):
    # hog (3 GPUs) runs from 0 to 20 s; a gang of 2 arrives at 1 s and finds 1 GPU: 1 of minCount 2 fit, nothing
    # binds; at 20 s hog's completion frees the node and the gang, retried, binds both. Gate off: one pod at 1 s.
    group, *pods = gang("pg", 2)
    docs = [gpu_node("a", 4), _at(gpu_pod("hog", gpus=3), 0, 20), group, *(_at(p, 1) for p in pods)]
    rc, out, _ = run(tmp_path, capsys, "simulate", docs, "--timeline", *V136)
    assert rc == 0
    rows = _rows(out)
    assert [(rows[p]["start"], rows[p]["attempts"]) for p in ("pg-0", "pg-1")] == [(20, 2), (20, 2)]
    rc, off, _ = run(tmp_path, capsys, "simulate", docs, "--timeline", "--kube-version", "1.36")
    assert sorted(_rows(off)[p]["start"] for p in ("pg-0", "pg-1")) == [1, 20]


def test_the_example_leaves_tune_pending_with_its_reason(capsys):
    rc, out, _ = run_json(capsys, "simulate", "--timeline", "-f", str(ROOT / "examples" / "gangs" / "cluster.yaml"),
                          *V136)
    assert rc == 0 and out["scheduled"] == 8 and out["unschedulable"] == 4
    assert {p["message"] for p in out["pods"] if p["node"] is None} == {
        "gang ml/tune-0: 2 of minCount 4 fit: 3 nodes Insufficient nvidia.com/gpu"}


def test_a_gang_short_of_min_count_never_gets_a_cycle(tmp_path, capsys):
    docs = [gpu_node("a", 4), *gang("pg", 2, 3)]
    rc, out, _ = run(tmp_path, capsys, "simulate", docs, "--timeline", *V136)
    rows = _rows(out)
    assert rc == 0 and rows["pg-0"]["attempts"] == 0
    assert rows["pg-0"]["message"] == "waiting for minCount pods from a gang to appear in scheduling queue"


def test_v135_gangs_are_said_to_be_replayed_pod_by_pod(tmp_path, capsys):
    workload = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "w",
                "namespace": "ml"}, "spec": {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": 2}}}]}}
    pods = [gpu_pod(f"p{i}") for i in range(2)]
    for pod in pods:
        pod["spec"]["workloadRef"] = {"name": "w", "podGroup": "g"}
    rc, out, _ = run(tmp_path, capsys, "simulate", [gpu_node("a", 4), workload, *pods], "--timeline",
                     "--kube-version", "1.35", "--feature-gates", GATES)
    assert rc == 0 and any("one by one: their wait at Permit" in w for w in out["warnings"])
