"""v1.37's pod group cycle, hand-derived from its sources (`schedule_one_podgroup.go` and `gangscheduling.go` of the
v1.37 code freeze, the v1.37.0 `PodGroupEvaluator.Preempt` as kubernetes-sigs/scheduler-library copies it, the
release notes), and GangScheduling's `TestPlacementFeasible` table ported. Each test names the rule it checks and
derives its expectation in its docstring; where v1.36 answers otherwise the same input is run under v1.36 too.
"""

from __future__ import annotations

import pytest
import yaml
from tests.scheduler.gangsupport import final_steps, simulate_docs

from kubefit.scheduler.feasiblecycle import placement_feasible
from kubefit.scheduler.groupcycle import SUCCESS, UNSCHEDULABLE, WAIT
from tests_support import run_json

G137 = "GenericWorkload=true"
G136_WAP = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"


def _node(name: str, cpu: str = "2") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, *, group: str | None = None, cpu: str = "1", priority: int | None = None,
         node: str | None = None, start: str | None = None, **spec) -> dict:
    body: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}], **spec}
    if group is not None:
        body["schedulingGroup"] = {"podGroupName": group}
    if priority is not None:
        body["priority"] = priority
    if node is not None:
        body["nodeName"] = node
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}
    if start is not None:
        doc["status"] = {"startTime": start}
    return doc


def _pod_group(name: str, policy: dict, *, version: str = "v1beta1", **spec) -> dict:
    ref = ({"workloadRef": {"workloadName": "wl", "templateName": "main"}} if version == "v1beta1" else
           {"podGroupTemplateRef": {"workload": {"workloadName": "wl", "podGroupTemplateName": "main"}}})
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {**ref, "schedulingPolicy": policy, **spec}}


def _gang(name: str, min_count: int, **kw) -> dict:
    return _pod_group(name, {"gang": {"minCount": min_count}}, **kw)


_run = simulate_docs
_final = final_steps


# --------------------------------------------------------------------------- GangScheduling.PlacementFeasible

# `TestPlacementFeasible` of gangscheduling_test.go: (name, minCount, pods, initially scheduled, per-pod outcome,
# expected code after each pod). The plugin of the v1.37 code freeze receives the progress (`PlacementProgress`:
# remaining = pods not tried yet, scheduled = scheduled so far); the table's "Non-gang pod group ignored" row
# expected Success from the earlier plugin, whose basic groups were skipped; v1.37's `getMinCount` gives a basic
# group minCount 1, so its only pod failing leaves it Unschedulable.
PLACEMENT_FEASIBLE_TABLE = [
    ("All pods succeed, minCount met at end", 2, 2, 0, [True, True], [WAIT, SUCCESS]),
    ("First pod fails, minCount not satisfiable", 3, 3, 0, [False], [UNSCHEDULABLE]),
    ("Second pod fails, minCount not satisfiable", 2, 2, 0, [True, False], [WAIT, UNSCHEDULABLE]),
    ("Basic pod group (v1.37: minCount 1)", 1, 1, 0, [False], [UNSCHEDULABLE]),
    ("More than minCount pods, all succeed", 2, 3, 0, [True, True, True], [WAIT, SUCCESS, SUCCESS]),
    ("More than minCount pods, first fails", 2, 3, 0, [False, True, True], [WAIT, WAIT, SUCCESS]),
    ("More than minCount pods, minCount not satisfiable", 2, 3, 0, [False, False, True],
     [WAIT, UNSCHEDULABLE, UNSCHEDULABLE]),
    ("1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, 1, [True, True], [WAIT, SUCCESS]),
    ("minCount already met by scheduled pods", 2, 1, 2, [False], [SUCCESS]),
    ("1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining", 3, 2, 1, [False],
     [UNSCHEDULABLE]),
    ("1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining", 4, 2, 1, [True],
     [UNSCHEDULABLE]),
]


@pytest.mark.parametrize("name,min_count,pods,scheduled,outcomes,codes", PLACEMENT_FEASIBLE_TABLE,
                         ids=[row[0] for row in PLACEMENT_FEASIBLE_TABLE])
def test_placement_feasible_table(name, min_count, pods, scheduled, outcomes, codes):
    remaining = pods
    for fits, want in zip(outcomes, codes, strict=True):
        remaining -= 1
        scheduled += int(fits)
        assert placement_feasible(min_count, scheduled, remaining)[0] == want


def test_placement_feasible_messages():
    """The statuses' messages (`gangscheduling.go`): counts as given."""
    assert placement_feasible(6, 2, 3) == (UNSCHEDULABLE, "minCount (6) cannot be satisfied: 2 scheduled, 3 remaining")
    assert placement_feasible(6, 2, 4) == (WAIT, "minCount (6) is not yet satisfied: 2 scheduled, 4 remaining")
    assert placement_feasible(6, 6, 0) == (SUCCESS, "")


# --------------------------------------------------------------------------- the cycle

def test_early_stop_once_min_count_cannot_be_reached(tmp_path, capsys):
    """kubernetes#138643: one 2-cpu node, a gang of six 1-cpu pods with minCount 6. The cycle takes w5 first (it
    completed the quorum), then w0..w4: w5 and w0 fit (2 scheduled, 4 remaining: Wait), w1 does not (2 scheduled, 3
    remaining: 5 < 6, Unschedulable) and the cycle stops: w2..w4 are never tried. Nothing preemptible exists
    (PodGroupPostFilter: no victims). w5, w0 say `pod group is unschedulable, <the group's status>`; w1 its FitError
    (no PostFilter in a pod group cycle, #140412); w2..w4 the group's status before PodGroupPostFilter."""
    docs = [_gang("pg", 6), _node("n1"), *[_pod(f"w{i}", group="pg") for i in range(6)]]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0
    final = _final(out)
    stop = "minCount (6) cannot be satisfied: 2 scheduled, 3 remaining"
    group = f"{stop}, pod group preemption: No preemption victims found for incoming preemptor"
    assert final["w5"]["message"] == final["w0"]["message"] == f"pod group is unschedulable, {group}"
    assert final["w1"]["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert [final[f"w{i}"]["message"] for i in (2, 3, 4)] == [stop] * 3
    assert out["scheduled"] == 0
    assert out["podGroups"][0]["condition"] == {"type": "PodGroupInitiallyScheduled", "status": "False",
                                                "reason": "Unschedulable", "message": group}


def test_early_stop_v136_tries_every_pod(tmp_path, capsys):
    """The same gang under v1.36 (Permit decides, every pod tried): w5 and w0 wait at Permit; the four others carry
    their FitError with the PostFilter part (DynamicResources', DefaultPreemption's: per-pod PostFilter inside the
    cycle)."""
    docs = [_gang("pg", 6, version="v1alpha2"), _node("n1"), *[_pod(f"w{i}", group="pg") for i in range(6)]]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36", "--feature-gates",
                         "GenericWorkload=true,GangScheduling=true")
    assert rc == 0
    final = _final(out)
    assert all(final[f"w{i}"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu. no new claims to "
                                                    "deallocate, preemption:") for i in range(1, 5))
    assert final["w0"]["message"].startswith("pod group is unschedulable, waiting for minCount pods")


def test_basic_group_feasible_at_one_pod_then_requeued(tmp_path, capsys):
    """A basic group (PlacementFeasible's minCount 1) of two pods on one 1-cpu node: a fits (Success), b does not;
    a binds. kubernetes#139613 sends b straight back: a second cycle at once, where b starts with 1 scheduled
    (Success) but schedules nothing, so the group is Unschedulable (`pod group is unschedulable`; the framework
    needs one pod scheduled). b keeps its FitError; the condition written True in cycle 1 is not regressed."""
    docs = [_pod_group("pg", {"basic": {}}), _node("n1", "1"), _pod("a", group="pg"), _pod("b", group="pg")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0
    final = _final(out)
    assert final["a"]["node"] == "n1" and final["a"]["cycle"] == 1
    assert final["b"]["node"] is None and final["b"]["cycle"] == 2
    assert final["b"]["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    group = out["podGroups"][0]
    assert group["cycles"] == 2 and group["condition"]["status"] == "True"


def test_priority_must_be_the_pod_groups(tmp_path, capsys):
    """kubernetes#139920: the PodGroup has no priority (0) but its pods say 5: the cycle never starts; every pod
    fails with the error (SchedulerError) and the condition says it (#140183)."""
    docs = [_gang("pg", 2), _node("n1"), _pod("a", group="pg", priority=5), _pod("b", group="pg", priority=5)]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0
    message = "all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 0"
    final = _final(out)
    assert final["a"]["message"] == final["b"]["message"] == message
    assert final["a"]["reason"] == "SchedulerError"
    assert out["podGroups"][0]["condition"] == {"type": "PodGroupInitiallyScheduled", "status": "False",
                                                "reason": "SchedulerError", "message": message}


def test_preemption_policy_must_agree(tmp_path, capsys):
    """kubernetes#140359 without PodGroupPreemptionPolicy: the first pod of the cycle sets the policy (b, the pod that
    completed the quorum, goes first: Never), a says PreemptLowerPriority (its default): `got PreemptLowerPriority and
    Never`."""
    docs = [_gang("pg", 2), _node("n1"), _pod("a", group="pg", priority=0),
            _pod("b", group="pg", priority=0, preemptionPolicy="Never")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0
    assert _final(out)["a"]["message"] == ("all pods in a single pod group should have the same preemption policy, "
                                           "got PreemptLowerPriority and Never")


def _wap_docs(version: str) -> list[dict]:
    """Two 2-cpu nodes, each holding one priority-1 single pod of 1 cpu (v1 on n1 started first, so it is the more
    important victim); a priority-10 gang of three 1-cpu pods, minCount 3 (2 cpu free: it needs a victim)."""
    return [_gang("pg", 3, version=version, priority=10), _node("n1"), _node("n2"),
            _pod("v1", priority=1, node="n1", start="2030-01-01T00:00:01Z"),
            _pod("v2", priority=1, node="n2", start="2030-01-01T00:00:02Z"),
            *[_pod(f"g{i}", group="pg", priority=10) for i in range(3)]]


def test_workload_preemption_single_attempt(tmp_path, capsys):
    """kubernetes#139980: cycle 1 puts g2 (the quorum pod) on n1 and g0 on n2, g1 fits nowhere (2 scheduled, 0
    remaining: Unschedulable). With v1 and v2 removed the group's run puts g2 on n1, g0 on n2, g1 on n1 (ties to the
    first node). Reprieving v1 (the more important) back on n1 leaves g1 no room on n1: v1 is the victim; v2 back on
    n2 beside g0 leaves every proposed pod fitting: reprieved. The pods that fitted say the group's status with what
    PodGroupPostFilter found (#140311), g1 its FitError (the cycle's steps are retried: the first, which records
    the victims, is kept); the retry binds the gang, two pods on n1."""
    rc, out, _err = _run(tmp_path, capsys, _wap_docs("v1beta1"), "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0, out
    victims = sorted(v for s in out["steps"] for v in s.get("victims", ()))
    assert victims == ["default/v1"]
    final = _final(out)
    assert sorted(final[f"g{i}"]["node"] for i in range(3)) == ["n1", "n1", "n2"]
    preempting = next(s for s in out["steps"] if s.get("victims"))  # the cycle's first step keeps its victims
    assert preempting["pod"] == "g2" and preempting["cycle"] == 1
    assert preempting["message"] == ("minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group "
                                     "preemption: found a placement for podgroup, preempting 1 victims")


def test_workload_preemption_v136_reruns_the_group(tmp_path, capsys):
    """The same cluster under v1.36 (`WorkloadAwarePreemption`): each reprieval reruns the whole group. v1 back on n1:
    the run places the three pods around it (n2 empty takes two): v1 reprieved; v2 back: 2 cpu free for 3 pods, no
    run fits: v2 is the victim."""
    rc, out, _err = _run(tmp_path, capsys, _wap_docs("v1alpha2"), "--kube-version", "1.36", "--feature-gates",
                         G136_WAP)
    assert rc == 0, out
    victims = sorted(v for s in out["steps"] for v in s.get("victims", ()))
    assert victims == ["default/v2"]


def test_pod_group_preemption_stops_at_the_first_pod(tmp_path, capsys):
    """A gang of two priority-10 pods on one 2-cpu node full of two priority-1 pods: b (the quorum pod) goes first
    and fits nowhere (0 scheduled, 1 remaining: 1 < 2): the cycle stops before a. PodGroupPostFilter removes both
    pods, the group's run places a and b, and neither victim can come back: both are preempted. b's step, the first
    of the cycle, keeps the victims and its FitError; the next cycle binds the gang and writes the condition True."""
    docs = [_gang("pg", 2, priority=10), _node("n1"),
            _pod("s1", priority=1, node="n1", start="2030-01-01T00:00:01Z"),
            _pod("s2", priority=1, node="n1", start="2030-01-01T00:00:02Z"),
            _pod("a", group="pg", priority=10), _pod("b", group="pg", priority=10)]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0
    preempting = next(s for s in out["steps"] if s.get("victims"))
    assert preempting["pod"] == "b" and preempting["victims"] == ["default/s1", "default/s2"]
    assert preempting["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert out["scheduled"] == 2 and out["podGroups"][0]["condition"]["status"] == "True"


def test_single_pod_preemption_names_its_node(tmp_path, capsys):
    """kubernetes#140180: a pod that preempts says where (`preemption: found a potential placement for pod on node
    n1, preempting 1 victims`); v1.36 says nothing after the FitError."""
    docs = [_node("n1", "1"), _pod("low", priority=1, node="n1"), _pod("high", priority=10)]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37")
    step = next(s for s in out["steps"] if s.get("victims"))
    assert step["message"] == ("0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement "
                               "for pod on node n1, preempting 1 victims")
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36")
    assert next(s for s in out["steps"] if s.get("victims"))["message"] == "0/1 nodes are available: 1 Insufficient cpu."


def test_requeue_after_success_comes_before_later_pods(tmp_path, capsys):
    """kubernetes#139613: a basic priority-10 group {a, b} and a priority-5 single pod c on one 2-cpu node holding a
    priority-1 pod low. Cycle 1: a fits, b does not; basic: feasible, a binds. The group is back in the active queue
    ahead of c: cycle 2 (b alone, nothing scheduled: Unschedulable) runs PodGroupPostFilter, which preempts low; b
    binds in cycle 3. c then finds no room and nothing of lower priority to preempt. (Were the group retried after
    c, c would preempt low first and the group then c.)"""
    docs = [_pod_group("pg", {"basic": {}}, priority=10), _node("n1"),
            _pod("low", priority=1, node="n1", start="2030-01-01T00:00:01Z"),
            _pod("a", group="pg", priority=10), _pod("b", group="pg", priority=10), _pod("c", priority=5)]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0
    assert sorted(v for s in out["steps"] for v in s.get("victims", ())) == ["default/low"]
    final = _final(out)
    assert final["a"]["node"] == final["b"]["node"] == "n1" and final["b"]["cycle"] == 3
    assert final["c"]["node"] is None


def _priority_class(name: str, value: int, default: bool = False) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value,
            **({"globalDefault": True} if default else {})}


def test_pod_group_priority_from_its_class(tmp_path, capsys):
    """Priority admission of PodGroups (`plugin/pkg/admission/priority`, its PodGroup cases): a PodGroup naming class
    `high` (100) without `spec.priority` gets 100, as its pods do; v1.37's check of the pods' priority against the
    group's passes and the gang binds. Naming a class that does not exist forbids the PodGroup (exit 2)."""
    pods = [_pod(f"p{i}", group="pg", priorityClassName="high") for i in range(2)]
    docs = [_priority_class("high", 100), _gang("pg", 2, priorityClassName="high"), _node("n1"), *pods]
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    rc, out, _err = run_json(capsys, "simulate", "-f", str(path), "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0 and out["scheduled"] == 2
    docs[1] = _gang("pg", 2, priorityClassName="nope")
    path.write_text(yaml.safe_dump_all(docs))
    rc, _out, err = run_json(capsys, "simulate", "-f", str(path), "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 2
    assert 'podgroups.scheduling.k8s.io "pg" is forbidden: no PriorityClass with name nope was found' in err


def test_pod_group_priority_from_the_global_default(tmp_path, capsys):
    """A PodGroup naming no class takes the global default's value (7) as its pods do: the gang binds."""
    docs = [_priority_class("base", 7, default=True), _gang("pg", 2), _node("n1"),
            _pod("a", group="pg"), _pod("b", group="pg")]
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    rc, out, _err = run_json(capsys, "simulate", "-f", str(path), "--kube-version", "1.37", "--feature-gates", G137)
    assert rc == 0 and out["scheduled"] == 2
