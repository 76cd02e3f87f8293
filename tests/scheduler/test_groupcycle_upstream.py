"""The pod group cycle against the tables of v1.36's own tests, `pkg/scheduler/schedule_one_podgroup_test.go`
(kubernetes/kubernetes at the v1.36 API, scheduling.k8s.io/v1alpha2): `TestPodGroupSchedulingAlgorithm`,
`TestSubmitPodGroupAlgorithmResult`, `TestUpdatePodGroupCondition`, `TestPodGroupSchedulingPlacementAlgorithm`,
`TestFrameworkForPodGroup` and `TestPodGroupInfoForPod`, each row by its upstream name.

Upstream drives the algorithm with `fakePodGroupPlugin`, whose Filter, PostFilter and Permit answer per pod from maps;
`FakeRun` answers the same way in place of the engine (`GroupRun.schedule_pod` / `permit` / `assume`), so the rows'
expectations apply unchanged: the group's status and waitingOnPreemption, each pod's status code, suggested host
and Permit code, whether it needs preemption.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kubefit.api.core import Pod
from kubefit.scheduler.groupcycle import (
    CLEAR,
    ERROR,
    KEEP,
    SUCCESS,
    UNSCHEDULABLE,
    WAIT,
    GroupResult,
    GroupRun,
    PodResult,
    condition,
    scheduler_name_error,
    submit,
    updated_condition,
)
from kubefit.scheduler.podgroups import WorkloadGates, member_order

UNRESOLVABLE = "UnschedulableAndUnresolvable"
NODE1 = 0  # the tests' one node, "node1"


@dataclass
class FakeEngine:
    placement: object = None


class FakeRun(GroupRun):
    """`fakePodGroupPlugin`: Filter per pod (None = success on node1), PostFilter per pod ((nominated node or
    CLEAR, code); default: clear, Unschedulable), Permit per pod (None = success; default Unschedulable)."""

    def __init__(self, names, filters, post=None, permits=None, tas=False):
        super().__init__(FakeEngine(), ("default", "pg"), None, [Pod(n, uid=n) for n in names], 0,
                         WorkloadGates(generic=True, topology=tas), gang_permit=False)
        self.filters, self.posts, self.permits = filters, post or {}, permits or {}

    def schedule_pod(self, pod):
        status = self.filters.get(pod.name, UNSCHEDULABLE)
        if status is None:
            return PodResult(pod, node=NODE1, fits=True, rejected=False)
        if status == ERROR:
            return PodResult(pod, rejected=False, message="filter error", nominating=CLEAR)
        nominated, code = self.posts.get(pod.name, (CLEAR, UNSCHEDULABLE))
        if code == SUCCESS and nominated not in (KEEP, CLEAR):
            return PodResult(pod, node=nominated, requires_preemption=True, rejected=False, nominating=nominated)
        return PodResult(pod, message="fit error", nominating=nominated)

    def permit(self, result):
        status = self.permits.get(result.pod.name, UNSCHEDULABLE)
        return (SUCCESS, "") if status is None else (status, status.lower())

    def assume(self, result):
        self.assumed.append((result.node, None, result.pod))

    def forget_last(self):
        self.assumed.pop()


def _code(r: PodResult) -> str:
    if r.fits:
        return SUCCESS
    return UNSCHEDULABLE if r.requires_preemption or r.rejected else ERROR


P3 = ("p1", "p2", "p3")
NOMINATED = (NODE1, SUCCESS)
# (name, filter, postFilter, permit, group status, waitingOnPreemption, pod statuses, preemption, skipForTAS)
ALGORITHM = [
    ("All pods feasible", dict.fromkeys(P3), {}, dict.fromkeys(P3), SUCCESS, False,
     dict.fromkeys(P3, SUCCESS), {}, False),
    ("All pods feasible, two waiting", dict.fromkeys(P3), {}, {"p1": WAIT, "p2": WAIT, "p3": None}, SUCCESS, False,
     dict.fromkeys(P3, SUCCESS), {}, False),
    ("All pods feasible, but all waiting", dict.fromkeys(P3), {}, dict.fromkeys(P3, WAIT), UNSCHEDULABLE, False,
     dict.fromkeys(P3, SUCCESS), {}, False),
    ("All pods feasible, but last waiting", dict.fromkeys(P3), {}, {"p1": None, "p2": None, "p3": WAIT}, SUCCESS,
     False, dict.fromkeys(P3, SUCCESS), {}, False),
    ("All pods feasible, one waiting, one unschedulable", dict.fromkeys(P3), {},
     {"p1": WAIT, "p2": UNSCHEDULABLE, "p3": None}, SUCCESS, False,
     {"p1": SUCCESS, "p2": UNSCHEDULABLE, "p3": SUCCESS}, {}, False),
    ("All pods require preemption", dict.fromkeys(P3, UNSCHEDULABLE), dict.fromkeys(P3, NOMINATED),
     dict.fromkeys(P3), UNSCHEDULABLE, True, dict.fromkeys(P3, UNSCHEDULABLE), dict.fromkeys(P3, True), True),
    ("All pods require preemption, but waiting", dict.fromkeys(P3, UNSCHEDULABLE), dict.fromkeys(P3, NOMINATED),
     dict.fromkeys(P3, WAIT), UNSCHEDULABLE, False, dict.fromkeys(P3, UNSCHEDULABLE), dict.fromkeys(P3, True), True),
    ("One pod requires preemption, but waiting, two are feasible", {"p1": UNSCHEDULABLE, "p2": None, "p3": None},
     {"p1": NOMINATED}, {"p1": WAIT, "p2": WAIT, "p3": None}, UNSCHEDULABLE, True,
     {"p1": UNSCHEDULABLE, "p2": SUCCESS, "p3": SUCCESS}, {"p1": True, "p2": False, "p3": False}, True),
    ("One pod unschedulable, one requires preemption, one feasible",
     {"p1": UNSCHEDULABLE, "p2": UNSCHEDULABLE, "p3": None}, {"p1": NOMINATED, "p2": (CLEAR, UNSCHEDULABLE)},
     {"p1": None, "p3": None}, UNSCHEDULABLE, True, {"p1": UNSCHEDULABLE, "p2": UNSCHEDULABLE, "p3": SUCCESS},
     {"p1": True, "p2": False, "p3": False}, True),
    ("All pods unschedulable", {"p1": UNRESOLVABLE, "p2": UNSCHEDULABLE, "p3": UNSCHEDULABLE}, {}, {}, UNSCHEDULABLE,
     False, dict.fromkeys(P3, UNSCHEDULABLE), {}, False),
    ("Any filter returned Error", {"p1": None, "p2": ERROR, "p3": None}, {}, dict.fromkeys(P3), ERROR, False,
     {"p1": SUCCESS, "p2": ERROR}, {}, False),
    ("Any permit returned Error", dict.fromkeys(P3), {}, {"p1": None, "p2": ERROR, "p3": None}, ERROR, False,
     {"p1": SUCCESS, "p2": ERROR}, {}, False),
    ("Any filter returned Error while waiting on preemption", {"p1": UNSCHEDULABLE, "p2": ERROR, "p3": None},
     {"p1": NOMINATED}, dict.fromkeys(P3), ERROR, False, {"p1": UNSCHEDULABLE, "p2": ERROR}, {}, False),
    ("Any permit returned Error while waiting on preemption", {"p1": UNSCHEDULABLE, "p2": None, "p3": None},
     {"p1": NOMINATED}, {"p1": None, "p2": ERROR, "p3": None}, ERROR, False, {"p1": UNSCHEDULABLE, "p2": ERROR}, {},
     False),
]
ALGORITHM_ROWS = [(row, tas) for tas in (True, False) for row in ALGORITHM if not (tas and row[8])]


@pytest.mark.parametrize(("row", "tas"), ALGORITHM_ROWS,
                         ids=[f"{r[0]} (TopologyAwareWorkloadScheduling={t})" for r, t in ALGORITHM_ROWS])
def test_pod_group_scheduling_algorithm(row, tas):
    """`TestPodGroupSchedulingAlgorithm`: `podGroupSchedulingAlgorithm` with `runAllPostFilters`."""
    _name, filters, posts, permits, status, waiting, pod_status, preemption, _skip = row
    run = FakeRun(P3, filters, posts, permits, tas=tas)
    result = run.algorithm()
    assert result.status == status
    assert result.waiting == waiting
    assert len(result.pods) == len(pod_status)
    for r in result.pods:
        assert _code(r) == pod_status[r.pod.name], r.pod.name
        if r.fits or r.requires_preemption:
            assert r.node == NODE1
            if r.pod.name in permits:
                assert (WAIT if r.permit_wait else SUCCESS) == (permits[r.pod.name] or SUCCESS)
        else:
            assert r.node is None and not r.permit_wait
        if r.pod.name in preemption:
            assert r.requires_preemption == preemption[r.pod.name]
    assert not run.assumed  # every assumed pod forgotten at the end (the deferred revertFn)


def _res(node=None, fits=False, wait=False, preempt=False, rejected=True, nominating=KEEP, message=""):
    return dict(node=node, fits=fits, permit_wait=wait, requires_preemption=preempt, rejected=rejected,
                nominating=nominating, message=message)


OK, WAITING = _res(NODE1, fits=True, rejected=False), _res(NODE1, fits=True, wait=True, rejected=False)
PREEMPTING = _res(NODE1, preempt=True, rejected=False, nominating=NODE1)
PREEMPTING_WAITING = _res(NODE1, wait=True, preempt=True, rejected=False, nominating=NODE1)
FAILED = _res(nominating=CLEAR)
# (name, group status, its message, waiting, pod results, bound, preempting, failed, condition before, condition after)
SCHEDULED = ("True", "Scheduled", "")
ALREADY = ("True", "Scheduled", "All pods scheduled")
SUBMIT = [
    ("All pods feasible", SUCCESS, "", False, [OK, OK, OK], P3, (), (), None, SCHEDULED),
    ("All pods feasible, but all waiting", UNSCHEDULABLE, "not enough capacity for the gang", False,
     [WAITING] * 3, (), (), P3, None, ("False", "Unschedulable", "not enough capacity for the gang")),
    ("All pods feasible, but last waiting", SUCCESS, "", False, [OK, OK, WAITING], P3, (), (), None, SCHEDULED),
    ("All pods feasible, one waiting, one unschedulable", SUCCESS, "", False, [WAITING, FAILED, OK], ("p1", "p3"),
     (), ("p2",), None, SCHEDULED),
    ("All pods require preemption", UNSCHEDULABLE, "waiting for preemption to complete", True, [PREEMPTING] * 3, (),
     P3, (), None, ("False", "Unschedulable", "waiting for preemption to complete")),
    ("All pods require preemption, but waiting", UNSCHEDULABLE, "preemption required but not feasible", False,
     [PREEMPTING_WAITING] * 3, (), (), P3, None, ("False", "Unschedulable", "preemption required but not feasible")),
    ("One pod requires preemption, but waiting, two are feasible", UNSCHEDULABLE,
     "waiting for preemption to complete", True, [PREEMPTING_WAITING, WAITING, OK], (), P3, (), None,
     ("False", "Unschedulable", "waiting for preemption to complete")),
    ("One pod unschedulable, one requires preemption, one feasible", UNSCHEDULABLE,
     "waiting for preemption to complete", True, [PREEMPTING, FAILED, OK], (), ("p1", "p3"), ("p2",), None,
     ("False", "Unschedulable", "waiting for preemption to complete")),
    ("All pods unschedulable", UNSCHEDULABLE, "0/3 nodes are available: insufficient cpu", False, [FAILED] * 3, (),
     (), P3, None, ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    ("All pods unschedulable with nil nominatingInfo", UNSCHEDULABLE, "0/3 nodes are available: insufficient cpu",
     False, [_res()] * 3, (), (), P3, None, ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    ("Unschedulable for the entire pod group", UNSCHEDULABLE, "node affinity mismatch", False, [], (), (), P3, None,
     ("False", "Unschedulable", "node affinity mismatch")),
    ("Error for one pod", ERROR, "plugin returned error", False,
     [OK, _res(rejected=False, nominating=CLEAR, message="plugin returned error")], (), (), P3, None,
     ("False", "SchedulerError", "plugin returned error")),
    ("Error for one pod while waiting on preemption", ERROR, "internal failure", False,
     [PREEMPTING, _res(rejected=False, nominating=CLEAR, message="internal failure")], (), (), P3, None,
     ("False", "SchedulerError", "internal failure")),
    ("Already Scheduled, successful cycle keeps condition", SUCCESS, "", False, [OK, OK, OK], P3, (), (), ALREADY,
     SCHEDULED),
    ("Already Scheduled, rejected cycle does not regress condition", UNSCHEDULABLE, "extra pods could not be placed",
     False, [FAILED] * 3, (), (), P3, ALREADY, ALREADY),
    ("Already Scheduled, error cycle does not regress condition", ERROR, "", False,
     [OK, _res(rejected=False, nominating=CLEAR)], (), (), P3, ALREADY, ALREADY),
]


@pytest.mark.parametrize("row", SUBMIT, ids=[r[0] for r in SUBMIT])
def test_submit_pod_group_algorithm_result(row):
    """`TestSubmitPodGroupAlgorithmResult`: which pods bind, which go back nominated (preempting), which fail, and
    the PodGroupScheduled condition written (a True one never regresses)."""
    _name, status, message, waiting, results, bound, preempting, failed, before, after = row
    run = FakeRun(P3, {})
    result = GroupResult([PodResult(pod, **r) for pod, r in zip(run.pods, results, strict=False)], status, message,
                         waiting)
    outcomes = submit(run, result)
    got_bound = {o.pod.name for o in outcomes if o.node is not None}
    got_preempting = {o.pod.name for o in outcomes if o.node is None and o.nominated not in (KEEP, CLEAR)}
    got_failed = {o.pod.name for o in outcomes if o.node is None and o.nominated in (KEEP, CLEAR)}
    assert (got_bound, got_preempting, got_failed) == (set(bound), set(preempting), set(failed))
    assert updated_condition(before, condition(result)) == after


CONDITIONS = [  # TestUpdatePodGroupCondition: (name, existing, written, kept)
    ("set Scheduled condition to True on empty status", None, ("True", "SomeReason", "m"), ("True", "SomeReason", "m")),
    ("transition from Unschedulable to Scheduled", ("False", "Unschedulable", "previously unschedulable"),
     ("True", "Scheduled", "ok"), ("True", "Scheduled", "ok")),
    ("transition from SchedulerError to Scheduled", ("False", "SchedulerError", "internal error"),
     ("True", "Scheduled", "ok"), ("True", "Scheduled", "ok")),
    ("do not regress Scheduled to Unschedulable", ALREADY, ("False", "Unschedulable", "extra pods could not be placed"),
     ALREADY),
    ("do not regress Scheduled to SchedulerError", ALREADY, ("False", "SchedulerError", "internal error"), ALREADY),
    ("transition from Unschedulable to SchedulerError", ("False", "Unschedulable", "not enough resources"),
     ("False", "SchedulerError", "internal error"), ("False", "SchedulerError", "internal error")),
    ("Scheduled to Scheduled", ALREADY, ("True", "Scheduled", "New condition message"),
     ("True", "Scheduled", "New condition message")),
]


@pytest.mark.parametrize("row", CONDITIONS, ids=[r[0] for r in CONDITIONS])
def test_update_pod_group_condition(row):
    _name, existing, written, kept = row
    assert updated_condition(existing, written) == kept


class PlacementRun(FakeRun):
    """`fakePlacementPlugin`: placements of named nodes, a Filter per node, a raw score per placement."""

    def __init__(self, generated, scores=None, node_filters=None, generate_error=None, score_error=None):
        super().__init__(["foo"], {}, tas=True)
        self.generated, self.scores = generated, scores or {}
        self.node_filters, self.generate_error, self.score_error = node_filters or {}, generate_error, score_error
        self.nodes = ["node1", "node2"]

    def placements(self):
        if self.generate_error:
            return GroupResult(status=ERROR, message=self.generate_error)
        if not self.generated:
            return GroupResult(message="no feasible placements found")
        return [(name, [self.nodes.index(n) for n in nodes]) for name, nodes in self.generated.items()]

    def schedule_pod(self, pod):
        candidates = [n for n in self.engine.placement if self.node_filters.get(self.nodes[n]) is None]
        if not candidates:
            return PodResult(pod, message="0/1 nodes are available:", nominating=CLEAR)
        return PodResult(pod, node=candidates[0], fits=True, rejected=False)

    def permit(self, result):
        return SUCCESS, ""

    def score_placements(self, feasible):
        if self.score_error:
            return GroupResult(status=ERROR, message=self.score_error)
        return [self.scores.get(r.placement, 0) for r in feasible]


TWO = {"placement1": ["node1"], "placement2": ["node2"]}
PLACEMENTS = [  # (name, run, status, message, suggested host)
    ("respects higher score of placement1", dict(generated=TWO, scores={"placement1": 2, "placement2": 1}), SUCCESS,
     "", 0),
    ("respects higher score of placement2", dict(generated=TWO, scores={"placement1": 1, "placement2": 2}), SUCCESS,
     "", 1),
    ("when no placements are generated, returns unschedulable", dict(generated={}), UNSCHEDULABLE,
     "no feasible placements found", None),
    ("when all placements are infeasible, returns unschedulable",
     dict(generated=TWO, scores={"placement1": 1, "placement2": 2},
          node_filters={"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE}), UNSCHEDULABLE,
     "0/2 placements are available, first placement status: pod group is unschedulable", None),
    ("filters out infeasible placements", dict(generated=TWO, scores={"placement1": 1},
                                               node_filters={"node2": UNSCHEDULABLE}), SUCCESS, "", 0),
    ("when generate plugin fails, returns error", dict(generated=TWO, generate_error="error for test"), ERROR,
     "error for test", None),
    ("when score plugin fails, returns error", dict(generated=TWO, scores={"placement1": 1},
                                                    score_error="running PlacementScore plugins: failed"), ERROR,
     "running PlacementScore plugins: failed", None),
]


@pytest.mark.parametrize("row", PLACEMENTS, ids=[r[0] for r in PLACEMENTS])
def test_pod_group_scheduling_placement_algorithm(row, monkeypatch):
    """`TestPodGroupSchedulingPlacementAlgorithm`: each placement tried, infeasible ones dropped, the best score
    kept; no placement, all infeasible, and plugin errors as upstream words them."""
    _name, kwargs, status, message, host = row
    run = PlacementRun(**kwargs)
    result = run.placement_algorithm()
    assert (result.status, result.message) == (status, message)
    if host is not None:
        assert [r.node for r in result.pods] == [host]


def test_framework_for_pod_group():
    """`TestFrameworkForPodGroup`: one scheduler name for the group, else the error naming both."""
    same = [Pod("p1", scheduler_name="sched1"), Pod("p2", scheduler_name="sched1")]
    assert scheduler_name_error(same) is None
    assert scheduler_name_error([Pod("p1", scheduler_name="sched1"), Pod("p3", scheduler_name="sched2")]) == (
        'all pods in a single pod group should have the same .spec.schedulerName set, got: "sched2" and "sched1"')


def test_pod_group_info_for_pod_order():
    """`TestPodGroupInfoForPod` "sorted by priority and timestamp": p1 (100), p2 (200), p3 (150, later), p4 (150,
    earlier) → p2, p4, p3, p1. kubefit's queue order stands for InitialAttemptTimestamp: p1, p2, p4, p3."""
    pods = [Pod("p1", priority=100), Pod("p2", priority=200), Pod("p4", priority=150), Pod("p3", priority=150)]
    assert [p.name for p in member_order(pods, 1)] == ["p2", "p4", "p3", "p1"]


def test_quorum_completer_first():
    """The pod that completes a gang's quorum entered the queue first (the others were gated until it came):
    `moveToActiveQ` stamps it, then the Pod/Add event moves the waiting ones."""
    pods = [Pod(f"w{i}") for i in range(3)] + [Pod("driver"), Pod("late")]
    assert [p.name for p in member_order(pods, 4)] == ["driver", "w0", "w1", "w2", "late"]
