"""`kubefit tune` end to end: the same seed gives the same answer on one local worker and on a real two-worker
Dask cluster; the tuned configuration is never worse than the best stock strategy; the written file is
accepted by `config validate` and `simulate` with it reproduces the reported value; the hold-out."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from statistics import fmean

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tune_support import node, pod, write

import kubefit
from kubefit.cli import main
from kubefit.manifests.scenario import load_scenario
from kubefit.planning.objectives import OBJECTIVES
from kubefit.planning.space import default_space, v1_body
from kubefit.planning.tune import tune
from kubefit.planning.workers import Workers
from kubefit.scheduler.compare import candidates, compare
from kubefit.scheduler.config import SCORING_TYPES
from kubefit.scheduler.scenario import prepare
from tests_support import run_json

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = str(ROOT / "examples/workload/cluster.yaml")


def quiet(_message: str) -> None:
    pass


def comparable(out: dict) -> dict:
    """A result without what depends on the machine (times, the number of workers, where they run)."""
    out = {k: v for k, v in out.items() if k not in ("seconds", "workers", "inputs")}
    out["trials"] = [{k: v for k, v in t.items() if k not in ("seconds", "cpuSeconds")} for t in out["trials"]]
    return out


@pytest.fixture(scope="module")
def dask_cluster():
    """A real Dask scheduler and two worker processes on 127.0.0.1, started and stopped here."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        yield cluster.scheduler_address


def test_same_seed_same_answer_locally_and_on_a_two_worker_cluster(dask_cluster, capsys):
    """TPE runs (the default space is far larger than 16 trials), in batches of 4, two seeds a trial: every trial,
    its value and the best configuration agree between one in-process worker and the cluster's two processes,
    through the API and through the command."""
    options = dict(trials=16, seed=7, batch=4, repeats=2, warn=quiet)
    local = kubefit.tune([WORKLOAD], "pending", workers=1, **options).to_dict()
    remote = kubefit.tune([WORKLOAD], "pending", dask_scheduler=dask_cluster, **options).to_dict()
    assert remote["workers"] == 2 and local["workers"] == 1 and local["search"] == "tpe"
    assert comparable(remote) == comparable(local)
    rc, cli, err = run_json(capsys, "tune", "-f", WORKLOAD, "--trials", "16", "--seed", "7", "--batch", "4",
                            "--repeats", "2", "--dask-scheduler", dask_cluster)
    assert rc == 0, err
    assert comparable(cli) == comparable(local)
    assert local["best"]["value"] <= min(local["baselines"].values())


def test_results_come_back_in_submission_order(dask_cluster):
    """The slow first task finishes last on the two workers; its result still comes first (the search tells the
    sampler in the order it asked, whichever worker finished first). The data goes out once to each worker,
    which unpickles its own copy; a task runs where its copy is."""
    with Workers(dask_cluster) as workers:
        shipped = workers.ship("payload")
        addresses = sorted(workers.client.scheduler_info(n_workers=-1)["workers"])
        assert sorted(shipped.copies) == addresses
        for address, copy in shipped.copies.items():
            assert list(workers.client.who_has(copy)[copy.key]) == [address]
        out = workers.run(lambda data, s: (time.sleep(s), s, data, __import__("distributed").get_worker().address),
                          shipped, [0.6, 0.0, 0.3, 0.0])
    assert [o[1:3] for o in out] == [(0.6, "payload"), (0.0, "payload"), (0.3, "payload"), (0.0, "payload")]
    assert {o[3] for o in out} == set(addresses)


def test_trials_run_while_no_worker_is_listed(dask_cluster, monkeypatch):
    """The scheduler's worker list can be empty for a moment (a LocalCluster's workers still registering, or all
    gone): the trials are then submitted for any worker and still come back in order. Dask refuses
    `allow_other_workers` without `workers` (a ValueError that reached `tune` as a flaky failure)."""
    with Workers(dask_cluster) as workers:
        shipped = workers.ship("payload")
        monkeypatch.setattr(workers, "addresses", lambda: [])  # (the real cluster's two workers run the tasks)
        out = workers.run(lambda data, s: (s, data), shipped, [3, 1, 2])
    assert out == [(3, "payload"), (1, "payload"), (2, "payload")]


def test_another_seed_searches_elsewhere():
    """The seed is what the search depends on: another one proposes other configurations after the baselines."""
    runs = [kubefit.tune([WORKLOAD], trials=10, seed=s, tie_break="first", workers=1, warn=quiet).to_dict()
            for s in (1, 2)]
    assert [t["summary"] for t in runs[0]["trials"][:3]] == [t["summary"] for t in runs[1]["trials"][:3]]
    assert [t["summary"] for t in runs[0]["trials"][3:]] != [t["summary"] for t in runs[1]["trials"][3:]]


def test_unreachable_scheduler_is_one_clear_error(capsys):
    rc = main(["tune", "-f", WORKLOAD, "--dask-scheduler", "tcp://127.0.0.1:1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == ["error: --dask-scheduler: cannot reach the Dask scheduler at "
                               "'tcp://127.0.0.1:1': Connection refused"]


@pytest.mark.parametrize(("objective", "tie_break", "repeats"), [
    ("pending", "first", 1), ("nodes", "first", 1), ("pending", "random", 2)])
def test_written_configuration_reproduces_the_value(tmp_path, capsys, objective, tie_break, repeats):
    """`--write-config` writes a file `kubefit config validate` accepts, and `kubefit simulate` with it (on the
    workload, which has no configuration of its own) measures the reported value: for the random tie-break,
    the mean over the trial's seeds, each seed's run reproduced by `simulate --seed`."""
    out_file = tmp_path / "tuned.yaml"
    rc, data, err = run_json(capsys, "tune", "-f", WORKLOAD, "--objective", objective, "--trials", "12",
                             "--tie-break", tie_break, "--repeats", str(repeats), "--seed", "3",
                             "--workers", "1", "--write-config", str(out_file))
    assert rc == 0, err
    assert main(["config", "validate", "-f", str(out_file)]) == 0
    assert capsys.readouterr().out.strip() == "valid"
    assert yaml.safe_load(out_file.read_text()) == data["best"]["config"]
    values = []
    for seed in range(3, 3 + repeats):
        rc, sim, err = run_json(capsys, "simulate", "-f", str(out_file), "-f", WORKLOAD, "--tie-break", tie_break,
                                "--seed", str(seed))
        assert rc == 0, err
        values.append(sim["unschedulable"] if objective == "pending" else sim["metrics"]["nodesUsed"])
    assert data["best"]["value"] == pytest.approx(fmean(values))
    best = data["trials"][data["best"]["trial"]]
    assert best.get("values", [best["value"]]) == values


def test_hold_out_is_rescored(tmp_path):
    """`--validate`: the best configuration and the baselines scored on another workload, each equal to a plain
    simulation of that workload under the same configuration."""
    held = write(tmp_path / "held.json", [node("a", "4"), node("b", "4"), node("c", "8"),
                                          *(pod(f"p{i}", c) for i, c in enumerate(["3", "1", "3", "6", "1"]))])
    result = kubefit.tune([WORKLOAD], trials=8, tie_break="first", workers=1, validate=[held], warn=quiet)
    out = result.to_dict()["validation"]
    assert out["files"] == [held] and set(out["baselines"]) == {"scenario", *SCORING_TYPES}
    scenario = load_scenario([held])
    for name, config in [("best", result.best.config), *((n, t.config) for n, t in result.baselines.items())]:
        from kubefit.scheduler.simulate import simulate

        run = simulate(prepare(scenario).state, config, scenario.pending_pods, tie_break="first")
        assert (out["best"] if name == "best" else out["baselines"][name]) == run.unschedulable


def test_the_result_names_its_inputs_best_baseline_and_best_so_far(capsys):
    """The workload under --tie-break first (as the verb's doctest): trial 0 is the scenario's configuration
    (kube-scheduler's LeastAllocated, also the LeastAllocated baseline), 1 pod pending; trial 1 MostAllocated,
    0 pending, and the best: no later trial ranks below it, so the best so far is trial 0, then trial 1 for
    every later trial. The best baseline is MostAllocated (0, tied with RequestedToCapacityRatio, named
    after it). The inputs are the files and the options given."""
    rc, out, err = run_json(capsys, "tune", "-f", WORKLOAD, "--trials", "6", "--batch", "3", "--tie-break", "first",
                            "--workers", "1", "--validate", WORKLOAD)
    assert rc == 0, err
    assert out["best"]["trial"] == 1 and [t["value"] for t in out["trials"][:2]] == [1, 0]
    assert out["bestSoFar"] == [0, 1, 1, 1, 1, 1]
    assert out["bestBaseline"] == "MostAllocated" and out["baselines"]["RequestedToCapacityRatio"] == 0
    inputs = out["inputs"]
    assert inputs["files"] == [WORKLOAD] and inputs["configuration"]["source"] == "kube-scheduler defaults"
    assert inputs["options"] == {"objective": "pending", "trials": 6, "seed": 0, "batch": 3, "tieBreak": "first",
                                 "repeats": 1, "validate": [WORKLOAD], "workers": 1}


@pytest.mark.parametrize(("args", "message"), [
    (["--trials", "0"], "error: --trials: must be within 1..100000, got 0"),
    (["--batch", "0"], "error: --batch: must be at least 1, got 0"),
    (["--repeats", "2", "--tie-break", "first"], "error: --repeats: several seeds are for the random tie-break"),
    (["--workers", "0"], "error: --workers: must be at least 1, got 0"),
    (["--workers", "2", "--dask-scheduler", "tcp://127.0.0.1:1"], "error: --workers: give either"),
    (["--dask-scheduler", "127.0.0.1"], "error: --dask-scheduler: must be tcp://HOST:PORT, got '127.0.0.1'"),
    (["--objective", "fastest"], "error: --objective: must be one of pending, nodes, stranded, gpu-fragmentation"),
    (["--validate", "no-such-file.yaml"], "error: no-such-file.yaml: no such file"),
], ids=lambda v: v[0] if isinstance(v, list) else None)
def test_bad_options_are_one_clear_error(capsys, args, message):
    rc = main(["tune", "-f", WORKLOAD, *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(message), err


def test_nothing_pending_is_one_clear_error(tmp_path, capsys):
    path = write(tmp_path / "w.json", [node("n", "4"), pod("p", "1", node_name="n")])
    rc = main(["tune", "-f", path])
    assert rc == 2 and "the scenario has no pending pod" in capsys.readouterr().err


def test_other_verbs_do_not_import_optuna_or_dask():
    code = ("import sys, kubefit; kubefit.simulate(['examples/workload/cluster.yaml']); "
            "print(sorted(m for m in ('optuna', 'distributed', 'dask') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- the search is the seed's alone

def reference_history(files: list[str], goal: str, trials: int, batch: int, seed: int, tie_break: str,
                      repeats: int, space_body: dict | None) -> list[tuple]:
    """The search as issue 25 states it, written out here and run in this process without Dask: the
    baselines (the scenario's configuration, then LeastAllocated, MostAllocated, RequestedToCapacityRatio;
    one trial per distinct configuration) evaluated and told to Optuna's seeded multivariate grouped TPE
    (its defaults) first, where the space names them; then batches of `batch` asked, evaluated one after
    the other, told in the order asked before the next batch is asked; a configuration seen before is a
    trial of its own that repeats the first one's value. Each trial as (configuration, value, duplicateOf)."""
    import warnings

    import optuna

    from kubefit.planning.space import (
        checked_config,
        distributions,
        load_space,
        params,
        point_body,
        point_of,
        stock_body,
        suggest,
    )
    from kubefit.planning.tune import compile_workload, config_key, evaluate

    scenario = load_scenario(files)
    prepared = prepare(scenario)
    base = prepared.config
    base_body = v1_body(base, None)
    space = default_space(base, scenario.pending_pods, scenario.pods)
    if space_body is not None:
        space = load_space(space_body, "space", space)
    assert space.size() > trials  # TPE, not the grid
    workload = compile_workload(prepared.state, scenario.pending_pods, OBJECTIVES[goal], tie_break,
                                tuple(range(seed, seed + repeats)))
    history: list[tuple] = []
    first: dict[str, tuple[int, object, float]] = {}  # configuration key → (trial, config, rank)

    def trial(body: dict, baseline: bool) -> float:
        config = checked_config(body, "reference")
        key = config_key(config)
        if key not in first:
            outcome = evaluate(workload, config)
            first[key] = (len(history), config, outcome.rank)
            history.append((body, outcome.value, None))
        elif not baseline:
            number = first[key][0]
            history.append((history[number][0], history[number][1], number))
        return first[key][2]

    for body in [base_body] + [stock_body(base_body, base, s) for s in SCORING_TYPES]:
        trial(body, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    for _, config, rank in first.values():
        p = params(point_of(config, space), space)
        if p is not None:
            study.add_trial(optuna.trial.create_trial(params=p, distributions=distributions(list(p), space),
                                                      value=rank))
    while len(history) < trials:
        asked = [study.ask() for _ in range(min(batch, trials - len(history)))]
        ranks = [trial(point_body(base_body, base, suggest(t, space)), False) for t in asked]
        for t, rank in zip(asked, ranks, strict=True):
            study.tell(t, rank)
    return history


SMALL_SPACE = {"strategies": ["LeastAllocated", "MostAllocated"], "resources": {"cpu": [1, 2, 3], "memory": [1, 2]},
               "pluginWeights": {"NodeResourcesFit": [1, 2], "NodeResourcesBalancedAllocation": 1}}  # 24 points


@pytest.mark.parametrize(("goal", "trials", "batch", "seed", "tie_break", "repeats", "space"), [
    ("pending", 23, 4, 0, "first", 1, None), ("nodes", 17, 3, 5, "random", 2, None),
    ("stranded", 20, 8, 11, "first", 1, None), ("pending", 20, 8, 2, "first", 1, SMALL_SPACE)],
    ids=["pending", "nodes-random", "stranded", "small-space"])
def test_trial_history_is_the_reference_search_on_any_workers(tmp_path, dask_cluster, goal, trials, batch, seed,
                                                              tie_break, repeats, space):
    """Every trial (configuration, value, the earlier trial it repeats) in order, and so the best one, is what
    `reference_history` gives for the seed: on one in-process worker and on the cluster's two processes,
    however the trials were handed out, whatever ran together (the baselines run with the first batch). In
    the small space (RequestedToCapacityRatio outside it: a baseline the sampler is not told) configurations
    come again, baselines among them."""
    expected = reference_history([WORKLOAD], goal, trials, batch, seed, tie_break, repeats, space)
    if space is not None:
        assert any(d is not None and d < 3 for _, _, d in expected)  # a baseline's configuration asked again
    options = dict(trials=trials, batch=batch, seed=seed, tie_break=tie_break, repeats=repeats, warn=quiet)
    if space is not None:
        (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
        options["space"] = tmp_path / "space.yaml"
    for where in ({"workers": 1}, {"dask_scheduler": dask_cluster}):
        out = kubefit.tune([WORKLOAD], goal, **where, **options).to_dict()
        assert [(t["config"], t["value"], t.get("duplicateOf")) for t in out["trials"]] == expected, where


GC_CHECK = """
import gc, sys
from kubefit.manifests.scenario import load_scenario
from kubefit.planning.objectives import OBJECTIVES
from kubefit.planning.space import checked_config, stock_body, v1_body
from kubefit.planning.tune import compile_workload, evaluate
from kubefit.scheduler.config import SCORING_TYPES
from kubefit.scheduler.scenario import prepare

goal, tie_break, files = sys.argv[1], sys.argv[2], sys.argv[3:]
scenario = load_scenario(files)
prepared = prepare(scenario)
workload = compile_workload(prepared.state, scenario.pending_pods, OBJECTIVES[goal], tie_break, (0, 1))
body = v1_body(prepared.config, None)
configs = [checked_config(stock_body(body, prepared.config, s), "test") for s in SCORING_TYPES]
on = []
for config in configs:
    evaluate(workload, config)
    on.append(gc.isenabled())
gc.collect()
gc.disable()
for config in configs:
    evaluate(workload, config)
    on.append(gc.isenabled())
print(on, gc.collect())
"""


@pytest.mark.parametrize(("goal", "tie_break"), [("pending", "random"), ("nodes", "first"), ("stranded", "random"),
                                              ("gpu-fragmentation", "first")])
def test_a_trial_leaves_no_cyclic_garbage(tmp_path, goal, tie_break):
    """`evaluate` pauses the cyclic collector, which is safe only while a trial's garbage all goes by reference
    counting: after trials under each stock strategy a collection finds nothing unreachable (in a process of
    its own: no other thread makes garbage meanwhile). The collector is on again after a trial when it was
    on before, and stays off when it was off."""
    files = [WORKLOAD]
    if goal == "gpu-fragmentation":
        files = [write(tmp_path / "gpu.json", [node("g1", "16", gpus=4), node("g2", "16", gpus=2), node("c", "8"),
                                               pod("a", "2", gpus=1), pod("b", "4", gpus=2), pod("c", "1"),
                                               pod("d", "3", gpus=3)])]
    out = subprocess.run([sys.executable, "-c", GC_CHECK, goal, tie_break, *files], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["[True,", "True,", "True,", "False,", "False,", "False]", "0"]


# --------------------------------------------------------------------------- never worse than stock

@pytest.fixture(scope="module")
def pool():
    """One in-process Dask worker for the property's many small runs."""
    with Workers(count=1) as workers:
        yield workers


SIZES = st.sampled_from(["1", "2", "4", "8"])
REQUESTS = st.sampled_from(["250m", "500m", "1", "1500m", "2", "3", "5"])


@st.composite
def workloads(draw):
    nodes = [node(f"n{i}", draw(SIZES), draw(st.sampled_from(["2Gi", "4Gi", "8Gi"])))
             for i in range(draw(st.integers(2, 5)))]
    pods = [pod(f"p{i}", draw(REQUESTS), draw(st.sampled_from(["256Mi", "1Gi", "3Gi"])))
            for i in range(draw(st.integers(2, 12)))]
    return nodes + pods


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=workloads(), objective=st.sampled_from(["pending", "nodes"]), tie_break=st.sampled_from(["first", "random"]))
def test_tuned_is_never_worse_than_the_best_stock_strategy(tmp_path_factory, pool, docs, objective, tie_break):
    """Independently of tune: `simulate --compare`'s runs of the three stock strategies (per seed; for `nodes`
    ranked by pods pending, then nodes used). The baselines are those values and the tuned configuration's
    rank is at most the best of them."""
    path = write(tmp_path_factory.mktemp("w") / "w.json", docs)
    scenario = load_scenario([path])
    prepared = prepare(scenario)
    seeds = [0, 1] if tie_break == "random" else [0]
    stock = {}
    for seed in seeds:
        runs = compare(scenario.nodes, scenario.pods, scenario.pending_pods,
                       candidates(prepared.config, SCORING_TYPES)[1:], tie_break=tie_break, seed=seed)
        for r in runs:
            used = r.metrics()["nodesUsed"]
            stock.setdefault(r.label, []).append(
                (r.unschedulable, used) if objective == "nodes" else (r.unschedulable,))
    expected = {n: tuple(fmean(x) for x in zip(*v, strict=True)) for n, v in stock.items()}
    base = prepared.config
    result = tune(prepared.state, scenario.pending_pods, v1_body(base, None), base,
                  default_space(base, scenario.pending_pods, scenario.pods), pool, goal=OBJECTIVES[objective],
                  trials=8, batch=3, tie_break=tie_break, repeats=len(seeds))
    out = result.to_dict()
    for name, value in expected.items():
        assert out["baselines"][name] == pytest.approx(value[-1])
    best = (out["best"]["pending"], out["best"]["value"]) if objective == "nodes" else (out["best"]["value"],)
    assert best <= min(expected.values())
    # the best baseline by the same order, ties to the first named: the scenario's configuration (here
    # kube-scheduler's defaults, LeastAllocated's run) first, then the stock strategies in their order
    named = {"scenario": expected["LeastAllocated"], **expected}
    assert out["bestBaseline"] == next(n for n, v in named.items() if v == min(named.values()))
    # best so far: a trial becomes it only by ranking below every trial before it; the last is the best
    ranks = [(t["pending"], t["value"]) if objective == "nodes" else (t["value"],) for t in out["trials"]]
    so_far = out["bestSoFar"]
    assert len(so_far) == len(ranks) and so_far[0] == 0 and so_far[-1] == out["best"]["trial"]
    for i in range(1, len(ranks)):
        fresh = "duplicateOf" not in out["trials"][i]
        assert so_far[i] in ((so_far[i - 1], i) if fresh else (so_far[i - 1],))
        assert ranks[so_far[i]] == min(ranks[: i + 1])



DRAIN = str(ROOT / "examples/drain/cluster.yaml")


@pytest.mark.parametrize(("scenario", "actions"), [
    (WORKLOAD, {"cordon": ["general-1", "general-2"]}),
    (WORKLOAD, {"remove": ["general-1", "highmem-2"], "cordon": ["gpu-1"]}),
    (DRAIN, {"drain": ["node-a"], "remove": ["node-c"]})])
def test_node_actions_reach_the_baselines_and_every_trial(tmp_path, capsys, scenario, actions):
    """`tune --cordon/--drain/--remove` applies them as `simulate` does before every trial: each trial's
    configuration (and the scenario's, the first baseline) under `kubefit simulate` with the same options
    leaves the trial's pending pods pending, and `--write-config`'s file reproduces the best value. The
    actions change the answer: cordoning general-1 and general-2 leaves a pod pending that MostAllocated
    schedules otherwise; in examples/drain node-a's api pod is replaced and, node-c gone, one pod fits nowhere."""
    options = [w for option, names in actions.items() for w in (f"--{option}", ",".join(names))]
    out_file = tmp_path / "tuned.yaml"
    rc, data, err = run_json(capsys, "tune", "-f", scenario, "--trials", "8", "--batch", "4", "--tie-break",
                             "first", "--workers", "1", "--write-config", str(out_file), *options)
    assert rc == 0, err
    assert {k: data["inputs"]["options"][k] for k in actions} == actions
    rc, sim, err = run_json(capsys, "simulate", "-f", str(out_file), "-f", scenario, "--tie-break", "first", *options)
    assert rc == (0 if sim["nodeActions"]["allPlaced"] else 1), err  # 1: an evicted pod fits nowhere, or is lost
    assert sim["unschedulable"] == data["best"]["value"] == data["best"]["pending"]
    rc, sim, err = run_json(capsys, "simulate", "-f", scenario, "--tie-break", "first", *options)
    assert rc == (0 if sim["nodeActions"]["allPlaced"] else 1), err
    assert sim["unschedulable"] == data["baselines"]["scenario"]
    for trial in data["trials"]:
        config = tmp_path / f"trial-{trial['number']}.yaml"
        config.write_text(yaml.safe_dump(trial["config"]))
        simulated = kubefit.simulate([str(config), scenario], tie_break="first", warn=quiet, **actions)
        assert simulated.unschedulable == trial["pending"], trial["summary"]
    plain = main(["tune", "-f", scenario, "--trials", "8", "--batch", "4", "--tie-break", "first", "--workers", "1",
                  "-o", "json"])
    assert plain == 0 and json.loads(capsys.readouterr().out)["baselines"] != data["baselines"]


@pytest.mark.parametrize("option", ["--cordon", "--drain", "--remove"])
def test_unknown_node_is_refused_as_simulate_refuses_it(capsys, option):
    """A node the scenario does not have: exit 2 and simulate's message, before any trial runs."""
    answers = []
    for verb in ("simulate", "tune"):
        extra = ["--workers", "1"] if verb == "tune" else []
        rc = main([verb, "-f", WORKLOAD, option, "general-1", "nope", *extra])
        answers.append((rc, capsys.readouterr().err.strip()))
    assert answers[0] == answers[1]
    assert answers[1] == (2, f"error: {option}: no node named 'nope' in the scenario (nodes: general-1, general-2, "
                             "general-3, general-4, gpu-1, highmem-1, highmem-2)")
