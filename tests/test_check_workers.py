"""`check --workers N` / `--dask-scheduler`: the baseline read and simulated on Dask workers (a real LocalCluster, a real
scheduler with two worker processes on 127.0.0.1) while this process does the candidate (`kubefit.checks.baseline`):
the same `-o json`, byte for byte, as one process; a baseline of another cluster refused in the same words; a cluster
that fails said once, the baseline then run here with the same answers; the option without a baseline refused."""

from __future__ import annotations

import pytest

import kubefit
from kubefit.checks.expectations import from_options
from kubefit.cli import main
from kubefit.errors import InputError
from test_check import deployment, node, pod, scenario

ASSERTIONS = {"max_pending": "baseline", "max_pod_moves": 0}


@pytest.fixture(scope="module")
def dask_cluster():
    """A real Dask scheduler and two worker processes on 127.0.0.1, started and stopped here."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def change(tmp_path) -> tuple[str, str]:
    """The baseline: n1, n2 (4 cpu each), web 3 × 1 cpu, x pinned to n1, a ConfigMap (which it tells it skips). The
    candidate: web 4 × 2 cpu, x pinned to n2: x moves, and web's pods are renamed (their template changed) and placed
    elsewhere, one of them pending."""
    base = scenario(tmp_path / "base.yaml", node("n1"), node("n2"), deployment("web", 3, 1), pod("x", 1, selector="n1"),
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    cand = scenario(tmp_path / "cand.yaml", node("n1"), node("n2"), deployment("web", 4, 2), pod("x", 1, selector="n2"))
    return base, cand


def checked(cand: str, base: str, **options) -> tuple[dict, list[str]]:
    told: list[str] = []
    result = kubefit.check([cand], baseline=[base], assertions=from_options(**ASSERTIONS), kube_versions="1.34,1.36",
                           warn=told.append, **options)
    data = result.to_dict()
    data.pop("started", None)
    return data, told


def test_the_baseline_on_a_dask_cluster_is_the_one_process_answer(change, dask_cluster, capsys):
    """Two versions, each baseline's run a task of its own (one per worker): the outcomes, the moves, the before and
    after per workload and the warnings are those of one process, and so is the command's `-o json`."""
    base, cand = change
    here, told_here = checked(cand, base)
    assert [o["status"] for o in here["assertions"]] == ["failed"] * 4  # two assertions, two versions (not vacuous)
    assert here["moves"]["1.34"] and here["changes"]["1.36"]["changed"]
    assert told_here == ["baseline: skipped 1 object(s) that place no pod: ConfigMap (1)"]
    away, told_away = checked(cand, base, dask_scheduler=dask_cluster)
    assert away == here and told_away == told_here
    args = ["check", "-f", cand, "--baseline", base, "--max-pending", "baseline", "--max-pod-moves", "0", "-o", "json"]
    assert main(args) == 1
    one = capsys.readouterr().out
    assert main([*args, "--dask-scheduler", dask_cluster]) == 1
    assert capsys.readouterr().out == one


def test_the_baseline_on_two_local_workers(change):
    """`--workers 2`: a LocalCluster whose workers read the baseline's files themselves."""
    base, cand = change
    assert checked(cand, base, workers=2) == checked(cand, base)


def test_a_baseline_of_another_cluster_is_refused_on_workers(change, tmp_path, dask_cluster):
    _, cand = change
    other = scenario(tmp_path / "other.yaml", node("z1"), pod("other", 1))
    with pytest.raises(InputError) as here:
        checked(cand, other)
    with pytest.raises(InputError) as away:
        checked(cand, other, dask_scheduler=dask_cluster)
    assert str(away.value) == str(here.value) and "shares no node and no pod with the candidate" in str(here.value)


def test_a_cluster_that_fails_runs_the_baseline_here(change, monkeypatch):
    """The workers fail (here: every result raises, as a killed cluster's would): said once, the same answers."""
    from kubefit.planning.workers import Background

    def failing(self, i):
        raise RuntimeError("no Dask worker for 30.0 s")
    monkeypatch.setattr(Background, "start", lambda self, fn, data, items: self)
    monkeypatch.setattr(Background, "result", failing)
    base, cand = change
    here, told_here = checked(cand, base)
    away, told_away = checked(cand, base, workers=2)
    assert away == here
    assert told_away == ["the Dask workers failed (RuntimeError: no Dask worker for 30.0 s); the baseline runs in this "
                         "process, with the same answers", *told_here]


def test_workers_need_a_baseline(change, capsys):
    _, cand = change
    assert main(["check", "-f", cand, "--max-pending", "0", "--workers", "2"]) == 2
    assert "--workers: runs the baseline on Dask workers beside the candidate: give --baseline" in capsys.readouterr().err
