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

        def prefetch(self, counts, then=()):
            if self.pool is not None and self.shipped is not None and self.runs >= 1:
                with Client(cluster.scheduler_address) as client:
                    client.retire_workers(close_workers=True)
                cluster.scale(0)
            return original(self, counts, then)

        monkeypatch.setattr(planning.DaskPlanner, "prefetch", prefetch)
        told: list[str] = []
        remote = kubefit.plan([CLUSTER], [SMALL], dask_scheduler=cluster.scheduler_address, tie_break="first",
                              warn=told.append).to_dict()
    assert (remote["add"], remote["placement"]) == (local["add"], local["placement"])
    assert any("the rest of the plan runs in this process" in w for w in told), told
