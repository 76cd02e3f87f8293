"""The sweeps on Dask workers (`kubefit.planning.sweep`): `simulate --compare`, `simulate --compare-versions` and
`consolidate --repack --compare` give byte-identical `-o json` on two worker processes (`--workers 2`, or a
real Dask scheduler with two workers on 127.0.0.1) and in one process; a cluster whose workers run another
kubefit is refused as `tune` refuses it; bad options are one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tune_support import node, pod, write

import kubefit
from kubefit.cli import main
from kubefit.scheduler.compare import comparison_to_dict

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = str(ROOT / "examples/workload/cluster.yaml")
VERSIONS = str(ROOT / "examples/versions/cluster.yaml")
CONSOLIDATE = str(ROOT / "examples/consolidate/cluster.yaml")
DRAIN = str(ROOT / "examples/drain/cluster.yaml")
CONFIGS = [str(ROOT / "examples/configs" / f) for f in ("v1-most-allocated.yaml", "v1-requested-to-capacity-ratio.yaml",
                                                         "v1beta2-most-allocated.yaml", "v1-docs-worked-example.yaml")]


def quiet(_message: str) -> None:
    pass


@pytest.fixture(scope="module")
def dask_cluster():
    """A real Dask scheduler and two worker processes on 127.0.0.1, started and stopped here."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def ties(tmp_path_factory) -> str:
    """Eight identical nodes and pods of three sizes: nearly every pod ties between nodes, so the seeded random
    tie-break decides where it lands (another seed places them elsewhere)."""
    path = tmp_path_factory.mktemp("ties") / "ties.json"
    return write(path, [*(node(f"n{i}", "8") for i in range(8)),
                        *(pod(f"p{i}", ["500m", "1", "2"][i % 3], ["512Mi", "1Gi", "2Gi"][i % 3]) for i in range(30))])


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """`kubefit ARGS -o json` in-process: exit code, stdout as written (compared byte for byte), stderr."""
    rc = main([*args, "-o", "json"])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_compare_on_two_workers_is_the_one_process_json(capsys, ties):
    """Strategies and configuration files (v1, v1beta2, a Policy-free docs example) under the random tie-break,
    seed 3: the same bytes from `--workers 2` as from one process; another seed places the pods elsewhere, so
    each run's own seeded tie-break is what both reproduce."""
    args = ["simulate", "-f", ties, "--compare", "MostAllocated,RequestedToCapacityRatio", "--compare", *CONFIGS,
            "--seed", "3"]
    rc, local, err = cli(capsys, *args)
    assert rc == 0, err
    rc, remote, err = cli(capsys, *args, "--workers", "2")
    assert rc == 0, err
    assert remote == local
    data = json.loads(local)
    assert [c["name"] for c in data["configurations"]] == ["scenario", "MostAllocated", "RequestedToCapacityRatio",
                                                           *CONFIGS]
    assert "workers" not in data["inputs"]["options"]
    rc, other, err = cli(capsys, *args[:-1], "4")
    assert rc == 0, err
    assert [c["placement"] for c in json.loads(other)["configurations"]] != \
        [c["placement"] for c in data["configurations"]]


def test_compare_api_on_an_existing_scheduler(dask_cluster):
    """`kubefit.compare(dask_scheduler=...)`: the same SimulationResults (labels, steps, warnings, `-o json`) as
    in this process, on the bundled workload with its pending 6-cpu pod and the messages it gets."""
    options = dict(seed=1, warn=quiet)
    specs = ["MostAllocated", "LeastAllocated", "RequestedToCapacityRatio", CONFIGS[0]]
    local = kubefit.compare([WORKLOAD], specs, **options)
    remote = kubefit.compare([WORKLOAD], specs, dask_scheduler=dask_cluster, **options)
    assert [r.label for r in remote] == [r.label for r in local]
    assert [r.to_dict() for r in remote] == [r.to_dict() for r in local]
    assert json.dumps(comparison_to_dict(remote)) == json.dumps(comparison_to_dict(local))


def test_summaries_are_what_the_comparison_reads(dask_cluster, ties):
    """`summaries=True` (the command without --report): each run summarized on its worker gives the same
    comparison, warnings and inputs included."""
    from kubefit.planning.sweep import RunSummary

    specs = ["MostAllocated", *CONFIGS[:2]]
    local = kubefit.compare([ties], specs, seed=5, warn=quiet)
    remote = kubefit.compare([ties], specs, seed=5, warn=quiet, dask_scheduler=dask_cluster, summaries=True)
    assert all(isinstance(r, RunSummary) for r in remote)
    assert json.dumps(comparison_to_dict(remote)) == json.dumps(comparison_to_dict(local))


def test_report_on_workers_draws_the_whole_results(capsys, tmp_path, dask_cluster):
    """With --report the runs come back whole (the page draws them); -o json is still the one-process one."""
    args = ["simulate", "-f", WORKLOAD, "--compare", "MostAllocated,RequestedToCapacityRatio"]
    rc, local, err = cli(capsys, *args, "--report", str(tmp_path / "local.html"))
    assert rc == 0, err
    rc, remote, err = cli(capsys, *args, "--report", str(tmp_path / "remote.html"), "--dask-scheduler", dask_cluster)
    assert rc == 0, err
    assert remote == local and (tmp_path / "remote.html").stat().st_size > 10_000


def test_what_if_replacements_come_back_too(dask_cluster):
    """`--drain`: the replacement pods the what-if queues were not shipped as pods of the scenario; their runs
    come back all the same."""
    options = dict(drain=["node-a"], tie_break="first", warn=quiet)
    local = kubefit.compare([DRAIN], ["MostAllocated", "RequestedToCapacityRatio"], **options)
    remote = kubefit.compare([DRAIN], ["MostAllocated", "RequestedToCapacityRatio"], dask_scheduler=dask_cluster,
                             **options)
    assert [r.to_dict() for r in remote] == [r.to_dict() for r in local]


def test_a_result_comes_back_on_this_process_objects():
    """`Work.send`/`receive` without Dask (the worker's copy is the work pickled and unpickled): the result
    equals the in-process run, its steps name this process's own queued pods and nodes, and a pod it bound
    is one object in the node's list and in the change log, as in the run itself."""
    import pickle

    from kubefit.planning.sweep import CompareWork, run_candidate
    from kubefit.scheduler.compare import candidates, compare
    from kubefit.verbs import prepare_files

    scenario, prepared, _ = prepare_files([WORKLOAD], "simulate", quiet)
    cands = candidates(prepared.config, ["MostAllocated"])
    queue = scenario.pending_pods
    work = CompareWork(prepared.state, queue, "random", 4)
    there = pickle.loads(pickle.dumps(work))
    blob = run_candidate(there, cands[1])
    result = work.receive(blob)
    local = compare(scenario.nodes, scenario.pods, queue, cands, tie_break="random", seed=4,
                    objects=scenario.objects)[1]
    assert result.to_dict() == local.to_dict()
    assert {id(s.pod) for s in result.steps} <= {id(p) for p in queue}
    assert all(a is b for a, b in zip(result.state.nodes, scenario.nodes, strict=True))
    assert result.state.objects is scenario.objects
    bound = {id(p) for pods in result.state.pods for p in pods}
    assert {id(pod) for _, pod, _ in result.state.changes} <= bound
    assert len(blob) < len(pickle.dumps(local)) / 2


def test_progress_on_workers_is_told_once_per_configuration(dask_cluster):
    seen: list[tuple[str, int, int]] = []
    kubefit.compare([WORKLOAD], ["MostAllocated"], dask_scheduler=dask_cluster, warn=quiet,
                    progress=lambda *a: seen.append(a))
    assert sorted(seen) == [("MostAllocated", 21, 21), ("scenario", 21, 21)]


def test_compare_versions_on_two_workers_is_the_one_process_json(capsys):
    """`--compare-versions 1.34,1.37` (the example whose placements differ between them): the same bytes, the
    differences and each version's notes included, from `--workers 2` and from one process."""
    args = ["simulate", "-f", VERSIONS, "--compare-versions", "1.34,1.37", "--tie-break", "first"]
    rc, local, err_local = cli(capsys, *args)
    assert rc == 0, err_local
    rc, remote, err_remote = cli(capsys, *args, "--workers", "2")
    assert rc == 0, err_remote
    assert remote == local and err_remote == err_local
    assert json.loads(local)["differences"]


def test_compare_versions_with_the_random_tie_break_on_a_scheduler(dask_cluster, ties):
    local = kubefit.compare_versions([ties], ["1.34", "1.35", "1.37"], seed=9, warn=quiet)
    remote = kubefit.compare_versions([ties], ["1.34", "1.35", "1.37"], seed=9, warn=quiet,
                                      dask_scheduler=dask_cluster)
    assert [r.to_dict() for r in remote] == [r.to_dict() for r in local]


def test_consolidate_repack_compare_on_workers(capsys, dask_cluster):
    args = ["consolidate", "-f", CONSOLIDATE, "--repack", "--compare", "MostAllocated,RequestedToCapacityRatio",
            "--compare", CONFIGS[0], "--seed", "2"]
    rc, local, err = cli(capsys, *args)
    assert rc == 0, err
    rc, remote, err = cli(capsys, *args, "--dask-scheduler", dask_cluster)
    assert rc == 0, err
    assert remote == local
    assert [r["configuration"] for r in json.loads(local)["repack"]] == ["scenario", "MostAllocated",
                                                                        "RequestedToCapacityRatio", CONFIGS[0]]


def test_workers_of_another_kubefit_are_refused(capsys, dask_cluster):
    """Each worker reports the kubefit it imports (here made to say 0.0.1): refused as `tune` refuses it, one
    line, exit 2, before any run."""
    from distributed import Client

    def pretend(version):
        import kubefit.planning.workers as w

        if version is None:
            w._kubefit_version = w.__dict__.pop("_real_version")
        else:
            w.__dict__.setdefault("_real_version", w._kubefit_version)
            w._kubefit_version = lambda: version

    with Client(dask_cluster) as client:
        client.run(pretend, "0.0.1")
        try:
            rc = main(["simulate", "-f", WORKLOAD, "--compare", "MostAllocated", "--dask-scheduler", dask_cluster])
        finally:
            client.run(pretend, None)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: --dask-scheduler: the workers of the Dask cluster at {dask_cluster!r} run "
                             f"kubefit 0.0.1, this process "), err


@pytest.mark.parametrize(("args", "message"), [
    (["--compare", "MostAllocated", "--dask-scheduler", "tcp://127.0.0.1:1"],
     "error: --dask-scheduler: cannot reach the Dask scheduler at 'tcp://127.0.0.1:1': Connection refused"),
    (["--compare", "MostAllocated", "--dask-scheduler", "127.0.0.1"],
     "error: --dask-scheduler: must be tcp://HOST:PORT, got '127.0.0.1'"),
    (["--compare-versions", "1.34,1.37", "--dask-scheduler", "tcp://no-such-host.invalid:8786"],
     "error: --dask-scheduler: cannot reach the Dask scheduler at 'tcp://no-such-host.invalid:8786'"),
    (["--compare", "MostAllocated", "--workers", "0"], "error: --workers: must be at least 1, got 0"),
    (["--compare", "MostAllocated", "--workers", "2", "--dask-scheduler", "tcp://127.0.0.1:1"],
     "error: --workers: give either"),
    (["--workers", "2"], "error: --workers: Dask workers run the configurations of --compare"),
], ids=["refused", "not-tcp", "unknown-host", "zero", "both", "nothing-to-compare"])
def test_bad_options_are_one_clear_error(capsys, args, message):
    rc = main(["simulate", "-f", WORKLOAD, *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(message), err


def test_consolidate_workers_need_repack(capsys):
    rc = main(["consolidate", "-f", CONSOLIDATE, "--workers", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == ["error: --workers: Dask workers run the repack of each configuration: give --repack "
                               "too"]


def test_one_process_by_default_and_with_one_worker():
    """Without the options, and with `workers=1`, the runs stay in this process: Dask is not even imported."""
    code = ("import sys, kubefit; w = dict(warn=lambda _: None); "
            "kubefit.compare(['examples/workload/cluster.yaml'], ['MostAllocated'], **w); "
            "kubefit.compare(['examples/workload/cluster.yaml'], ['MostAllocated'], workers=1, **w); "
            "kubefit.compare_versions(['examples/workload/cluster.yaml'], ['1.34', '1.37'], workers=1, **w); "
            "print(sorted(m for m in ('distributed', 'dask') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
