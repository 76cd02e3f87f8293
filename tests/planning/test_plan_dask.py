"""`plan` on Dask workers (`--workers N`, `--dask-scheduler ADDRESS`): the simulations run side by side, the counts
the search asks next started ahead, and the answer is the one-process answer, `-o json` byte for byte (the number
of simulations included: runs asked ahead and not needed are not counted). A cluster that cannot be reached, that
loses a worker in the middle of the plan or loses them all gives a clear warning and the one-process answer,
never a hang."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

import pytest

import kubefit
from kubefit.cli import main
from kubefit.planning import plan as planning

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plan"
CLUSTER, SMALL, LARGE = str(EXAMPLE / "cluster.yaml"), str(EXAMPLE / "small.yaml"), str(EXAMPLE / "large.yaml")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = main([*args, "-o", "json"])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def dask_cluster():
    """A real Dask scheduler and two worker processes (each behind a nanny that restarts it) on 127.0.0.1."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        yield cluster


@pytest.mark.parametrize(("templates", "where"), [([SMALL], "--workers"), ([SMALL, LARGE], "--dask-scheduler")],
                         ids=["one-template-local-cluster", "two-templates-existing-scheduler"])
def test_plan_on_two_workers_is_the_one_process_json(capsys, dask_cluster, templates, where):
    """`--workers 2` or two workers of an existing scheduler: the same bytes as in one process, one template (the
    search asked ahead) or two."""
    args = ["plan", "-f", CLUSTER, *(a for t in templates for a in ("--node-template", t)), "--tie-break", "first"]
    rc, local, err = cli(capsys, *args)
    assert rc == 0, err
    rc, remote, err = cli(capsys, *args, where, "2" if where == "--workers" else dask_cluster.scheduler_address)
    assert rc == 0, err
    assert remote == local, err
    assert json.loads(local)["simulations"] >= 3


def test_the_gallop_on_two_workers_is_the_one_process_json(tmp_path, capsys, dask_cluster):
    """The estimate and the gallop down from it (`test_plan_search.py`'s host-port scenario: probes 5 and 4 after the
    pending pods' runs on the copies alone), each probe started beside the next: the same bytes as in one
    process."""
    from test_plan_search import port_scenario

    path, tpl = port_scenario(tmp_path)
    args = ["plan", "-f", str(path), "--node-template", str(tpl), "--tie-break", "first"]
    rc, local, err = cli(capsys, *args)
    assert rc == 0, err
    rc, remote, err = cli(capsys, *args, "--dask-scheduler", dask_cluster.scheduler_address)
    assert rc == 0, err
    assert remote == local, err
    assert (json.loads(local)["add"], json.loads(local)["simulations"]) == ({"t": 5}, 5)


def test_unreachable_scheduler_plans_here(capsys):
    """Nothing listens at the address: one warning naming it, and the one-process answer (exit 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # (closed again: nothing listens there)
    args = ["plan", "-f", CLUSTER, "--node-template", SMALL, "--tie-break", "first"]
    rc, local, _ = cli(capsys, *args)
    rc, remote, err = cli(capsys, *args, "--dask-scheduler", f"tcp://127.0.0.1:{port}")
    assert rc == 0, err
    assert "Traceback" not in err and err.count("could not be used") == 1 and f"127.0.0.1:{port}" in err
    data = json.loads(remote)
    assert data["add"] == json.loads(local)["add"] and data["placement"] == json.loads(local)["placement"]
    assert any("could not be used" in w for w in data["warnings"])


def _kill_a_worker_after(monkeypatch, cluster, trials: int) -> list[int]:
    """Kill one worker process (SIGKILL, its nanny starts another) once the plan has had `trials` answers."""
    from distributed import Client

    killed: list[int] = []
    answered = [0]
    original = planning.DaskPlanner.trial

    def trial(self, counts, give_up=None, keep=False):
        out = original(self, counts, give_up, keep)
        answered[0] += 1
        if answered[0] == trials and not killed:
            with Client(cluster.scheduler_address) as client:
                pids = client.run(os.getpid)
            pid = next(iter(pids.values()))
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        return out

    monkeypatch.setattr(planning.DaskPlanner, "trial", trial)
    return killed


def test_a_worker_killed_in_the_middle_of_a_plan(monkeypatch, dask_cluster):
    """A worker killed after the plan's first answer: the plan ends with the one-process answer (its runs
    retried on the workers, or the rest computed here with a warning), in bounded time."""
    options = dict(tie_break="first", warn=lambda _: None)
    local = kubefit.plan([CLUSTER], [SMALL, LARGE], **options).to_dict()
    told: list[str] = []
    killed = _kill_a_worker_after(monkeypatch, dask_cluster, 1)
    remote = kubefit.plan([CLUSTER], [SMALL, LARGE], dask_scheduler=dask_cluster.scheduler_address,
                          tie_break="first", warn=told.append).to_dict()
    assert killed
    assert (remote["add"], remote["placement"], remote["cost"]) == (local["add"], local["placement"], local["cost"])
    assert all("Traceback" not in w for w in told)


def test_every_worker_gone_plans_here(monkeypatch):
    """The cluster's workers all retire in the middle of the plan and none comes back: after `WAIT_FOR_WORKERS`
    (shortened here) one warning, and the rest of the plan runs in this process, with the one-process answer."""
    from distributed import Client, LocalCluster

    monkeypatch.setattr(planning, "WAIT_FOR_WORKERS", 2.0)
    local = kubefit.plan([CLUSTER], [SMALL], tie_break="first", warn=lambda _: None).to_dict()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        original = planning.DaskPlanner.prefetch

        def prefetch(self, counts, then=(), whole=False):
            if self.pool is not None and self.shipped is not None and self.runs >= 1:
                with Client(cluster.scheduler_address) as client:
                    client.retire_workers(close_workers=True)
                cluster.scale(0)
            return original(self, counts, then, whole)

        monkeypatch.setattr(planning.DaskPlanner, "prefetch", prefetch)
        told: list[str] = []
        remote = kubefit.plan([CLUSTER], [SMALL], dask_scheduler=cluster.scheduler_address, tie_break="first",
                              warn=told.append).to_dict()
    assert (remote["add"], remote["placement"]) == (local["add"], local["placement"])
    assert any("the rest of the plan runs in this process" in w for w in told), told


# --------------------------------------------------------------------------- what runs ahead, and what stops

@pytest.fixture()
def threads_cluster():
    """A Dask cluster whose workers are threads of this process (reached over TCP, as `--dask-scheduler` reaches
    one): what a test patches here (a slower run) is what the workers run."""
    from distributed import LocalCluster

    def start(workers: int) -> str:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=False, protocol="tcp://",
                               host="127.0.0.1", dashboard_address="127.0.0.1:0")
        started.append(cluster)
        return cluster.scheduler_address

    started: list = []
    yield start
    for cluster in started:
        cluster.close()


def _spread(tmp_path, pods: int) -> tuple[str, str]:
    """`test_plan_search.py`'s hostname spread of `pods` 1-cpu pods: k copies place 2k + 3, so the search asks
    trial 0, the estimate's [1 or 2], the generous cluster [pods] and a bisection of about log₂(pods) levels."""
    from test_plan_search import _spread_scenario

    path, tpl = _spread_scenario(tmp_path, 1, 1, pods)
    return str(path), str(tpl)


def _asked(monkeypatch) -> list[tuple[tuple[int, ...], bool, int]]:
    """Every answer the search records, in order: (counts, whether the run gave up, pods it placed)."""
    asked: list[tuple[tuple[int, ...], bool, int]] = []
    real = planning.Planner.record

    def record(self, key, trial):
        asked.append((key, trial.stopped, trial.scheduled if not trial.stopped else -1))
        return real(self, key, trial)

    monkeypatch.setattr(planning.Planner, "record", record)
    return asked


def test_the_workers_answer_the_counts_the_search_asks_in_process(tmp_path, capsys, monkeypatch, dask_cluster):
    """A long bisection (128 pods: trial 0, [2], [128], then (3, 128]) on two worker processes: the search asks the
    same counts in the same order and is told the same answers as in one process (the runs asked ahead and not
    needed are neither recorded nor counted), and `-o json` is the same bytes."""
    path, tpl = _spread(tmp_path, 128)
    args = ["plan", "-f", path, "--node-template", tpl, "--tie-break", "first"]
    asked = _asked(monkeypatch)
    rc, local, err = cli(capsys, *args)
    assert rc == 0, err
    here, asked[:] = list(asked), []
    rc, remote, err = cli(capsys, *args, "--dask-scheduler", dask_cluster.scheduler_address)
    assert rc == 0, err
    assert asked == here
    assert [k[0] for k, _s, _n in here] == [0, 2, 128, 65, 34, 50, 58, 62, 64, 63]
    assert remote == local, err
    assert json.loads(local)["add"] == {"t": 63}


def test_a_run_ruled_out_stops_on_its_worker(tmp_path, monkeypatch, threads_cluster):
    """The search rules out a run in progress (`prefetch` told other counts): Dask cancels it, the run sees it at its
    next check (every 256 pods) and stops there, and its worker, the only one, answers the next count at once. The
    run of [2560] is slowed here (50 ms at every check), so that the whole of it would take 0.5 s more."""
    from kubefit.manifests.scenario import load_scenario
    from kubefit.manifests.templates import load_templates
    from kubefit.planning.workers import Workers
    from kubefit.scheduler.config import load_configuration

    path, tpl = _spread(tmp_path, 2560)
    checks: dict[int, list[int]] = {}  # copies in each run → the progress it reported, check by check
    real = planning.simulate

    def simulate(state, config, pods, **kw):
        seen = checks.setdefault(len(state.nodes) - 2, [])
        stop = kw["progress"]

        def progress(done):
            seen.append(done)
            time.sleep(0.05 if len(state.nodes) > 2 else 0)
            if stop is not None:
                stop(done)
        return real(state, config, pods, **{**kw, "progress": progress})

    monkeypatch.setattr(planning, "simulate", simulate)
    scenario, templates = load_scenario([path]), load_templates([tpl])
    with Workers(threads_cluster(1)) as pool:
        planner = planning.DaskPlanner(scenario, load_configuration(None), list(templates), tie_break="first",
                                       pool=pool, warn=pytest.fail)
        planner.prefetch([[2560]])
        while not checks.get(2560):
            time.sleep(0.01)  # (the run has started)
        planner.prefetch([[0]])  # [2560] is ruled out
        began = time.perf_counter()
        trial = planner.trial([0])
        waited = time.perf_counter() - began
        planner.close()
    assert (trial.scheduled, trial.stopped, planner.runs) == (3, False, 1)
    assert checks[2560] and max(checks[2560]) < 2560 // 2, checks  # it stopped at its first checks
    assert checks[0][-1] == 2560  # (the run of trial 0, whole)
    assert waited < 0.4, waited  # not behind the rest of [2560] (≥ 0.5 s of checks left)


def test_the_generous_cluster_runs_beside_trial_0_and_stops_when_the_first_probe_holds(tmp_path, monkeypatch,
                                                                                      threads_cluster):
    """`test_plan_search.py`'s host-port scenario (six 1-cpu pods on host port 80, an 8-cpu node, an 8-cpu template:
    one pod a node) with `--max-nodes 10`: trial 0 places one; the estimate, from two runs on the copies alone, is
    5; [5] holds the whole queue, so the most generous cluster [10] (started beside trial 0, in case the first
    probe were short and futile) is ruled out then and stops on its worker at its next check; the cut down asks
    [4], short: add 5, as in one process. On the workers the generous cluster's run is slowed (a check every 20 ms,
    4 s in all) and so is [4]'s (0.6 s), so that a generous run left going would still be checking 0.4 s after."""
    from test_plan_search import port_scenario

    from kubefit.manifests.scenario import load_scenario
    from kubefit.manifests.templates import load_templates
    from kubefit.planning.workers import Workers
    from kubefit.scheduler.config import load_configuration

    path, tpl = port_scenario(tmp_path)
    scenario, templates = load_scenario([path]), list(load_templates([tpl]))
    here = planning.plan(scenario, load_configuration(None), templates, max_nodes=10, tie_break="first")
    checks: list[float] = []  # when the generous cluster's run checked whether it was cancelled
    held: list[float] = []  # when the search recorded [5] holding
    real, record = planning.simulate, planning.Planner.record

    def simulate(state, config, pods, **kw):
        stop = kw.get("progress")
        if stop is not None and len(state.nodes) == 11:  # the generous cluster (1 + 10 nodes), on its worker
            for i in range(200):
                checks.append(time.perf_counter())
                time.sleep(0.02)
                stop(i)
        if stop is not None and len(state.nodes) == 5:  # [4]
            time.sleep(0.6)
        return real(state, config, pods, **kw)

    def recorded(self, key, trial):
        if key == (5,):
            held.append(time.perf_counter())
        return record(self, key, trial)

    monkeypatch.setattr(planning, "simulate", simulate)
    monkeypatch.setattr(planning.Planner, "record", recorded)
    with Workers(threads_cluster(2)) as pool:
        there = planning.plan(scenario, load_configuration(None), templates, max_nodes=10, tie_break="first",
                              pool=pool, warn=pytest.fail)
    assert (there.counts, there.simulations) == (here.counts, here.simulations) == ([5], 5)
    assert checks, "the generous cluster did not start"
    assert checks[0] < held[-1], "the generous cluster did not run beside the search's first runs"
    assert checks[-1] < held[-1] + 0.4, "the generous cluster went on after the first probe held"


def _two_templates(tmp_path) -> tuple[str, list[str]]:
    """`test_plan_search.py`'s six host-port pods (one per node) and templates a (cost 1) and b (cost 2): trial 0,
    [1, 1], [6, 6], the bisection [4, 4], [3, 3], [2, 2], two cut-downs and eleven greedy runs: 19 simulations."""
    from test_plan_search import NODE, PORT_POD

    path = tmp_path / "pods.yaml"
    path.write_text("---\n".join(PORT_POD.format(i=i) for i in range(6)))
    templates = []
    for name, cost in (("a", 1), ("b", 2)):
        tpl = tmp_path / f"{name}.yaml"
        tpl.write_text(NODE.format(name=name, cpu=8).replace(
            "metadata: {name: " + name + "}", f"metadata: {{name: {name}, labels: {{kubefit.io/cost: '{cost}'}}}}"))
        templates.append(str(tpl))
    return str(path), templates


@pytest.mark.parametrize(("scenario", "add", "rounds_on_three"), [
    # trial 0, [2], [128], then the bisection of (2, 128]: 7 levels, two a round on three workers
    ("spread", {"t": 63}, 6),
    # the greedy build-up's steps ask both templates' next node side by side, the cut-downs their probes together
    ("two-templates", {"a": 6, "b": 0}, 12),
])
def test_more_workers_fewer_rounds(tmp_path, monkeypatch, threads_cluster, scenario, add, rounds_on_three):
    """Each run made to take 0.1 s (its worker waits; the workers are threads): on one worker the search waits for
    every count it asks; on three, what it may ask next runs beside each count (the bisection's next two levels,
    the most generous cluster beside trial 0, both templates' next node in the greedy build-up, the next
    templates' cut-down probes), so it waits far less often, asking the same counts and told the same answers."""
    if scenario == "spread":
        path, tpl = _spread(tmp_path, 128)
        templates = [tpl]
    else:
        path, templates = _two_templates(tmp_path)
    real_run, real_trial = planning.Planner.run, planning.DaskPlanner.trial

    def run(self, counts, give_up=None, check=None):
        time.sleep(0.1)
        return real_run(self, counts, give_up, check)

    def trial(self, counts, give_up=None, keep=False, check=None):
        began = time.perf_counter()
        out = real_trial(self, counts, give_up, keep, check)
        waits.append(time.perf_counter() - began > 0.05)
        return out

    monkeypatch.setattr(planning.Planner, "run", run)
    monkeypatch.setattr(planning.DaskPlanner, "trial", trial)
    asked = _asked(monkeypatch)
    rounds, answers = {}, {}
    for workers in (1, 3):
        waits: list[bool] = []
        asked[:] = []
        out = kubefit.plan([path], templates, dask_scheduler=threads_cluster(workers), tie_break="first",
                           warn=pytest.fail).to_dict()
        assert out["add"] == add
        rounds[workers], answers[workers] = sum(waits), (list(asked), out["simulations"])
    assert answers[3] == answers[1]
    assert rounds[1] == len(answers[1][0]) and rounds[3] <= rounds_on_three, rounds
    if scenario == "spread":
        assert [k[0] for k, _s, _n in answers[1][0]] == [0, 2, 128, 65, 34, 50, 58, 62, 64, 63]


@pytest.mark.parametrize(("ran", "asked", "answers"), [
    (None, 5, True), (None, None, True),  # a whole run answers every trial
    (7, 5, True), (5, 5, True),  # one that gives up later tells as much: if it gave up, so would the trial
    (3, 5, False),  # one that gave up sooner may have given up where the trial goes on
    (5, None, False),  # a trial asked whole (the count it placed) is answered only by a whole run
])
def test_which_run_asked_ahead_answers_a_trial(ran, asked, answers):
    assert planning._answers(ran, asked) is answers
