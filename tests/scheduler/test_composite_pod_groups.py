"""CompositePodGroup hierarchies as v1.37 schedules them (`compositecycle.py`), hand-derived from
`gangscheduling.go` (`preEnqueueWithHierarchies`, `PlacementFeasible` with minGroupCount) and
`schedule_one_podgroup.go` (`compositePodGroupSchedulingPlacementAlgorithm`, `compositePodGroupSchedulingDefaultAlgorithm`,
`completeCompositePodGroupAlgorithmResultMap`) of the v1.37 code freeze, and GangScheduling's `TestCPGHierarchicalScheduling`
tree (its readiness rule) ported.
"""

from __future__ import annotations

from collections import Counter

import yaml
from tests.scheduler.gangsupport import final_steps, simulate_docs

from kubefit.api.cluster import ObjectMeta
from kubefit.api.workload import CompositePodGroup, PodGroup, SchedulingPolicy
from kubefit.scheduler.compositecycle import Member, tree_ready
from tests_support import run_json

GATES = "GenericWorkload=true,CompositePodGroup=true"


def _node(name: str, cpu: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, group: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulingGroup": {"podGroupName": group}, "priority": 0,
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}


def _composite(name: str, min_groups: int, parent: str | None = None) -> dict:
    spec: dict = {"workloadRef": {"workloadName": "wl", "templateName": name},
                  "schedulingPolicy": {"gang": {"minGroupCount": min_groups}}}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": name},
            "spec": spec}


def _group(name: str, min_count: int, parent: str) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"workloadRef": {"workloadName": "wl", "templateName": name}, "parentCompositePodGroupName": parent,
                     "schedulingPolicy": {"gang": {"minCount": min_count}}}}


def _job(cpu: str, workers_min: int = 2) -> list[dict]:
    """A CompositePodGroup `job` (minGroupCount 2) of a PodGroup `driver` (minCount 1, one pod) and a PodGroup
    `workers` (two pods), every pod 1 cpu, on one node."""
    return [_composite("job", 2), _group("driver", 1, "job"), _group("workers", workers_min, "job"), _node("n1", cpu),
            _pod("d", "driver"), _pod("w0", "workers"), _pod("w1", "workers")]


def _run(tmp_path, capsys, docs, *args):
    return simulate_docs(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", GATES, *args)


_final = final_steps


def test_hierarchy_binds_in_one_cycle(tmp_path, capsys):
    """3 cpu: driver's pod fits (1 of minCount 1: Success), both workers fit (Success): 2 of minGroupCount 2 children
    scheduled: the root is feasible and the three pods bind in the same cycle."""
    rc, out, _err = _run(tmp_path, capsys, _job("3"))
    assert rc == 0
    final = _final(out)
    assert {final[p]["node"] for p in ("d", "w0", "w1")} == {"n1"} and {final[p]["cycle"] for p in ("d", "w0", "w1")} == {1}
    assert {g["name"]: g["condition"]["status"] for g in out["podGroups"]} == {"driver": "True", "workers": "True"}


def test_hierarchy_all_or_nothing(tmp_path, capsys):
    """2 cpu: driver succeeds (its pod assumed); workers: w1 (its quorum pod) fits, w0 does not (1 scheduled, 0
    remaining: Unschedulable). The root then has 1 of minGroupCount 2 children, 0 remaining: Unschedulable, so the
    driver, feasible alone, takes the root's status and binds nothing. The root went through its one placement: its
    status reads `pod group is unschedulable, 0/1 placements are available, first placement status: ...`."""
    rc, out, _err = _run(tmp_path, capsys, _job("2"))
    assert rc == 0
    final = _final(out)
    root = ("pod group is unschedulable, 0/1 placements are available, first placement status: minCount (2) cannot "
            "be satisfied: 1 scheduled, 0 remaining")
    assert out["scheduled"] == 0
    assert final["d"]["message"] == root
    assert final["w1"]["message"] == "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    assert final["w0"]["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    conditions = {g["name"]: (g["condition"]["status"], g["condition"]["message"]) for g in out["podGroups"]}
    assert conditions["driver"] == ("False", root)
    assert any("workload-aware preemption for a CompositePodGroup hierarchy" in w for w in out["warnings"])


def test_hierarchy_waits_for_its_tree(tmp_path, capsys):
    """workers needs 3 pods and has 2: not ready; the root needs 2 ready children and has 1: PreEnqueue keeps every
    pod of the hierarchy out of the queue."""
    rc, out, _err = _run(tmp_path, capsys, _job("3", workers_min=3))
    assert rc == 0
    final = _final(out)
    assert {final[p]["message"] for p in ("d", "w0", "w1")} == {'waiting for composite pod group "job" tree to meet quorum'}
    assert all(final[p]["preEnqueue"] == "GangScheduling" for p in ("d", "w0", "w1"))


def test_gate_off_groups_scheduled_on_their_own(tmp_path, capsys):
    """Without CompositePodGroup the API server serves no v1alpha3 and drops `parentCompositePodGroupName`: driver
    and workers are pod groups of their own (2 cpu: driver binds, then workers fits one of two: nothing of it)."""
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(_job("2")[1:]))
    rc, out, _err = run_json(capsys, "simulate", "-f", str(path), "--tie-break", "first", "--no-admission",
                             "--kube-version", "1.37", "--feature-gates", "GenericWorkload=true")
    assert rc == 0
    final = _final(out)
    assert final["d"]["node"] == "n1" and final["w0"]["node"] is None and final["w1"]["node"] is None


def _cpg(name: str, min_groups: int | None) -> CompositePodGroup:
    policy = SchedulingPolicy("gang", min_groups) if min_groups else SchedulingPolicy("basic")
    return CompositePodGroup(ObjectMeta(name, "default"), "scheduling.k8s.io/v1alpha3", policy)


def _pg(name: str, min_count: int | None) -> PodGroup:
    policy = SchedulingPolicy("gang", min_count) if min_count else SchedulingPolicy("basic")
    return PodGroup(ObjectMeta(name, "default"), "scheduling.k8s.io/v1alpha3", policy)


def test_tree_readiness_table():
    """`TestCPGHierarchicalScheduling`'s tree with its counts read as pods known (`AllPodsCount`): root (minGroupCount
    2) over sub1 (2: pg1..pg3, minCount 2 each), sub2 (basic: pg4 basic, pg5 minCount 2), sub3 (2: pg6, pg7 minCount
    2); pods known pg1 2, pg2 2, pg3 0, pg4 1, pg5 2, pg6 0, pg7 0. sub1 has 2 ready children (ready), sub2 1 (basic:
    ready), sub3 none: the root has 2 ready: ready. With pg2 at 1 sub1 has one: the root one: not ready."""
    leaves = {f"pg{i}": Member(("default", f"pg{i}"), _pg(f"pg{i}", None if i == 4 else 2), False) for i in range(1, 8)}
    sub1 = Member(("default", "sub1"), _cpg("sub1", 2), True, [leaves["pg1"], leaves["pg2"], leaves["pg3"]])
    sub2 = Member(("default", "sub2"), _cpg("sub2", None), True, [leaves["pg4"], leaves["pg5"]])
    sub3 = Member(("default", "sub3"), _cpg("sub3", 2), True, [leaves["pg6"], leaves["pg7"]])
    root = Member(("default", "root"), _cpg("root", 2), True, [sub1, sub2, sub3])
    known = Counter({("default", "pg1"): 2, ("default", "pg2"): 2, ("default", "pg4"): 1, ("default", "pg5"): 2})
    assert tree_ready(sub1, known) and tree_ready(sub2, known) and not tree_ready(sub3, known)
    assert tree_ready(root, known)
    known[("default", "pg2")] = 1
    assert not tree_ready(sub1, known) and not tree_ready(root, known)


def test_hierarchy_stops_once_min_group_count_is_out_of_reach(tmp_path, capsys):
    """PlacementFeasible on the root (minGroupCount 3, three one-pod PodGroups a, b, c; one 1-cpu node): a is
    scheduled (1 scheduled, 2 remaining: Wait), b is not (1 scheduled, 1 remaining: 2 < 3, Unschedulable): the cycle
    stops before c, which has no result and takes the root's status; a, feasible alone, takes it too."""
    docs = [_composite("job", 3), *[_group(g, 1, "job") for g in "abc"], _node("n1", "1"),
            *[_pod(f"{g}0", g) for g in "abc"]]
    rc, out, _err = _run(tmp_path, capsys, docs)
    assert rc == 0
    final = _final(out)
    root = ("pod group is unschedulable, 0/1 placements are available, first placement status: minCount (3) cannot "
            "be satisfied: 1 scheduled, 1 remaining")
    assert final["a0"]["message"] == final["c0"]["message"] == root
    assert final["b0"]["message"] == "0/1 nodes are available: 1 Insufficient cpu."
