"""Benchmark `kubefit tune`: trials per second on Dask workers, and what a trial costs.

Runs (each a fresh `kubefit.tune` through the Python API, a LocalCluster of its own):

- `trace-1w`, `trace-2w`: the Alibaba GPU trace (1,213 nodes x 8,152 pods, imported with `kubefit import
  alibaba-gpu`, the study's configuration) tuned for `gpu-fragmentation`, ties to the first node (one
  deterministic simulation a trial), on 1 worker (in this process) and on 2 worker processes;
- `5000x5000`: bench_cli.py's seeded 5,000 nodes x 5,000 pods, 50 trials for `nodes` on 2 workers.

Each run records the wall seconds of the verb (cluster start, loading, search), of the search alone
(`TuneResult.seconds`: shipping the workload, every trial, the hold-out), trials per second of the
search, and CPU seconds: this process's, the workers' (their trials' CPU as each worker measured it:
`cpuSeconds` of the JSON) and per trial. The machine may be shared: CPU seconds are the figures that
compare across runs. Besides the measured (wall) speedup of 2 workers, a CPU-time model of it: the 1-worker
run's trial CPU seconds over the time the 2-worker run's trials take on 2 free cores when each costs the
CPU time its worker measured, batches one after the other, each trial started in order on the worker
free first (`makespan`); the same seed gives the same trials on both. `--timeline` adds when each phase of
this process began and ended and when each trial ran on which worker.

    .venv/bin/python benchmarks/bench_tune.py                   # every run
    .venv/bin/python benchmarks/bench_tune.py --runs trace-1w trace-2w --trials 40
    .venv/bin/python benchmarks/bench_tune.py --runs trace-1w trace-2w --timeline  # where the time goes
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import scenario_files, trace_files  # noqa: E402 - the inputs bench_cli.py generates

import kubefit  # noqa: E402

RUNS = {  # name → (inputs, objective, workers, trials)
    "trace-1w": ("trace", "gpu-fragmentation", 1, 40),
    "trace-2w": ("trace", "gpu-fragmentation", 2, 40),
    "5000x5000": ("5000x5000", "nodes", 2, 50),
}


def _cpu() -> tuple[float, float]:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def run(name: str, trials: int | None, batch: int) -> dict:
    inputs, objective, workers, default_trials = RUNS[name]
    files = trace_files() if inputs == "trace" else scenario_files(5000, 5000, "json")
    trials = trials or default_trials
    wall, (cpu, children) = time.perf_counter(), _cpu()
    result = kubefit.tune(files, objective, trials=trials, batch=batch, tie_break="first", workers=workers,
                          warn=lambda _: None)
    wall = time.perf_counter() - wall
    cpu_after, children_after = _cpu()
    data = result.to_dict()
    simulated = [t for t in data["trials"] if "duplicateOf" not in t]
    trial_cpu = sum(t["cpuSeconds"] for t in simulated)
    return {
        "run": name, "objective": objective, "workers": data["workers"], "trials": len(data["trials"]),
        "simulated": len(simulated), "batch": batch, "verbSeconds": round(wall, 2),
        "searchSeconds": data["seconds"], "trialsPerSecond": round(len(data["trials"]) / data["seconds"], 2),
        "cpuSecondsHere": round(cpu_after - cpu, 2), "cpuSecondsWorkerProcesses": round(children_after - children, 2),
        "trialCpuSeconds": round(trial_cpu, 2), "cpuSecondsPerTrial": round(trial_cpu / len(simulated), 3),
        "wallSecondsPerTrialInWorker": round(sum(t["seconds"] for t in simulated) / len(simulated), 3),
        "baselines": data["baselines"], "baselineTrials": data["baselineTrials"], "best": data["best"]["value"],
        "bestSummary": data["best"]["summary"],
        "loadAverage": round(os.getloadavg()[0], 1),
        "trialCpu": [t["cpuSeconds"] for t in data["trials"]],  # in order (a repeated configuration: 0)
    }


def makespan(cpu: list[float], batch: int, workers: int, first: int) -> float:
    """Seconds the trials take on `workers` free cores: batches one after the other (the first of `first`
    trials: the baselines run with TPE's first batch), each trial of a batch started in order on the worker
    free first, each costing its CPU time."""
    total, at = 0.0, 0
    while at < len(cpu):
        size = first if at == 0 else batch
        free = [0.0] * workers
        for seconds in cpu[at:at + size]:
            free[free.index(min(free))] += seconds
        total += max(free)
        at += size
    return total


def timeline(name: str, trials: int | None, batch: int) -> dict:
    """`run(name)` with timestamps: this process's phases (cluster started, workload compiled, shipped, each
    batch handed to the workers and back) and, per trial, the worker and when it ran (written by the
    workers to a file beside this process: one machine), in seconds from the verb's start."""
    import tempfile

    import kubefit.planning.tune as tune_module
    from kubefit.planning import workers as workers_module

    marks: list[tuple[float, str]] = []
    log = Path(tempfile.mkstemp(prefix="bench-tune-", suffix=".jsonl")[1])
    evaluate = tune_module.evaluate

    def timed(workload, config):  # a closure: sent by value to the workers, `evaluate` by reference
        import json as js
        import os as o
        import time as t

        start = t.time()
        outcome = evaluate(workload, config)
        with open(log, "a") as f:
            f.write(js.dumps({"pid": o.getpid(), "start": start, "end": t.time(), "cpu": outcome.cpu_seconds}) + "\n")
        return outcome

    def wrap(owner, attr):
        real = getattr(owner, attr)

        def marked(*args, **kwargs):
            marks.append((time.time(), f"{attr} begins"))
            out = real(*args, **kwargs)
            marks.append((time.time(), f"{attr} ends"))
            return out
        setattr(owner, attr, marked)
        return real

    saved = [(tune_module, "evaluate", evaluate)]
    tune_module.evaluate = timed
    for owner, attr in [(workers_module.Workers, "__enter__"), (tune_module, "compile_workload"),
                        (workers_module.Workers, "ship"), (workers_module.Workers, "run")]:
        saved.append((owner, attr, wrap(owner, attr)))
    start = time.time()
    try:
        out = run(name, trials, batch)
    finally:
        for owner, attr, real in saved:
            setattr(owner, attr, real)
    tasks = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    pids = sorted({t["pid"] for t in tasks})
    out["phases"] = [[round(at - start, 3), what] for at, what in marks]
    out["tasks"] = [[pids.index(t["pid"]), round(t["start"] - start, 3), round(t["end"] - start, 3), t["cpu"]]
                    for t in sorted(tasks, key=lambda t: t["start"])]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS))
    parser.add_argument("--trials", type=int, default=None, help="instead of each run's own number")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--timeline", action="store_true",
                        help="also the phases of this process and when each trial ran on which worker")
    args = parser.parse_args(argv)
    results = {}
    for name in args.runs:
        results[name] = (timeline if args.timeline else run)(name, args.trials, args.batch)
        print(json.dumps({k: v for k, v in results[name].items() if k != "trialCpu"}), flush=True)
    one, two = results.get("trace-1w"), results.get("trace-2w")
    if one and two:
        first = len(set(two["baselineTrials"].values())) + args.batch
        print(json.dumps({
            "speedupWall": round(two["trialsPerSecond"] / one["trialsPerSecond"], 2),
            "speedupCpuModel": round(sum(one["trialCpu"]) / makespan(two["trialCpu"], args.batch, 2, first), 2),
            "cpuPerTrialRatio": round(two["cpuSecondsPerTrial"] / one["cpuSecondsPerTrial"], 2)}))
    return 0


if __name__ == "__main__":  # the Dask worker processes are spawned: they must not run this again
    sys.exit(main())
