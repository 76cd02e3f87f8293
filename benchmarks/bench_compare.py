"""Benchmark `kubefit simulate --compare` of 16 configurations: in one process against 2 Dask workers.

The workload (`--queue`, seeded, generated once):

- `realistic` (default): bench_default_profile.py's production-shaped queue under kube-scheduler's default
  profile: ReplicaSets of 1 to 100 replicas in four namespaces, half behind a Service (the system-default
  topology spread on every pod), some with zone spreads, hostname anti-affinity or zone affinity, their CPU
  requests 110 % of the cluster's (about 3 % pending, each after DefaultPreemption's dry run); 1,000 nodes
  x 10,000 pods by default;
- `plain`: bench_cli.py's plain pods (nodes of five types, one in twenty with 8 GPUs; pods of ten shapes)
  under NodeResourcesFit + BalancedAllocation alone.

The 16 configurations are files written here, strategies x resource weights x shapes (NodeResourcesFit's
scoring strategy in the queue's profile, every node evaluated):

- LeastAllocated and MostAllocated, each with the weights cpu 1/memory 1, cpu 3/memory 1, cpu 1/memory 3 and
  cpu 5/memory 2 (8 files);
- RequestedToCapacityRatio with the shapes 0→0,100→10 (bin packing) and 0→10,100→0 (spreading), each with
  the same four weights (8 files).

The first is the scenario's own configuration (the realistic scenario's file holds it: kube-scheduler's default
profile, whose NodeResourcesFit is LeastAllocated cpu 1/memory 1; for plain pods the first file is given with
`-f`), the other 15 are `--compare` files: 16 runs.
Each measurement is one `kubefit simulate ... --compare ... -o json` in a fresh process, from process start
to its output, with its wall and CPU seconds (its own and its children's: the Dask workers) and the peak
RSS of it and of its largest child; `--workers 2` starts a LocalCluster of two worker processes in that run.
On a shared machine the wall times say little, so a model too: the one-process run is serial (its CPU
seconds are its wall time on a free core), the 2-worker run takes on two free cores at most its own
process's CPU seconds plus half its workers' (`modelSeconds`: nothing of this process overlapping them). The
modes alternate round after round, which goes first too (the machine is shared: a neighbour's burst then
hits both), and every round's two outputs must be byte-identical.

    .venv/bin/python benchmarks/bench_compare.py                        # 3 rounds, realistic 1,000 x 10,000
    .venv/bin/python benchmarks/bench_compare.py --rounds 5 --queue plain --nodes 5000 --pods 8000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import ROOT, WORK, _child_env, synthetic_list  # noqa: E402 - the generator of bench_cli.py
from bench_default_profile import write_scenario  # noqa: E402 - the production-shaped queue

WEIGHTS = [{"cpu": 1, "memory": 1}, {"cpu": 3, "memory": 1}, {"cpu": 1, "memory": 3}, {"cpu": 5, "memory": 2}]
SHAPES = {"packing": [(0, 0), (100, 10)], "spreading": [(0, 10), (100, 0)]}


def config_body(queue: str, strategy: str, weights: dict[str, int], shape: list[tuple[int, int]] | None) -> dict:
    scoring: dict = {"type": strategy, "resources": [{"name": n, "weight": w} for n, w in weights.items()]}
    if shape is not None:
        scoring["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    profile: dict = {"schedulerName": "default-scheduler",
                     "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": scoring}}]}
    if queue == "plain":
        profile["plugins"] = {"multiPoint": {"enabled": [
            {"name": "PrioritySort"}, {"name": "NodeResourcesFit", "weight": 1},
            {"name": "NodeResourcesBalancedAllocation", "weight": 1}, {"name": "DefaultBinder"}],
            "disabled": [{"name": "*"}]}}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 100, "profiles": [profile]}


def configurations(queue: str) -> list[str]:
    """The 16 configuration files (written once), in the order they run."""
    folder = WORK / f"compare-configs-{queue}"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    specs = [(s, w, None, None) for s in ("LeastAllocated", "MostAllocated") for w in WEIGHTS]
    specs += [("RequestedToCapacityRatio", w, name, shape) for name, shape in SHAPES.items() for w in WEIGHTS]
    for strategy, weights, shape_name, shape in specs:
        name = "-".join([strategy, *(f"{k}{v}" for k, v in weights.items()), *([shape_name] if shape_name else [])])
        path = folder / f"{name}.yaml"
        if not path.exists():
            path.write_text(yaml.safe_dump(config_body(queue, strategy, weights, shape), sort_keys=False))
        out.append(str(path))
    return out


def workload(queue: str, nodes: int, pods: int) -> str:
    if queue == "realistic":
        return str(write_scenario("realistic", nodes, pods, WORK))
    path = WORK / f"compare-{nodes}x{pods}.json"
    if not path.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(synthetic_list(nodes, pods), indent=4))
    return str(path)


# `kubefit ARGS` in a fresh process that reports its own CPU seconds and those of its children (the Dask
# workers, reaped by their nannies, the nannies by it) and the peak RSS of each side
_MEASURE = ("import resource, sys; from kubefit.cli import main; rc = main(sys.argv[1:]); "
            "s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print('bench', rc, s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime, s.ru_maxrss, c.ru_maxrss, "
            "file=sys.stderr)")


def timed(args: list[str]) -> tuple[dict, bytes]:
    """One run from process start to its output: wall seconds, CPU seconds (its own, its children's), peak
    RSS (its own, its largest child's), and its stdout."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True, cwd=ROOT, env=_child_env())
    seconds = time.perf_counter() - start
    err = proc.stderr.decode()
    _, rc, cpu, children, rss, child_rss = err.rstrip().rsplit("\n", 1)[-1].split()
    if rc != "0":
        raise SystemExit(f"kubefit {' '.join(args)} exited {rc}: {err[-2000:]}")
    cpu_here, cpu_children = float(cpu), float(children)
    return ({"seconds": round(seconds, 2), "cpuSeconds": round(cpu_here + cpu_children, 2),
             "cpuSecondsHere": round(cpu_here, 2), "cpuSecondsWorkers": round(cpu_children, 2),
             "peakRssMiB": round(int(rss) / 1024), "peakRssWorkerMiB": round(int(child_rss) / 1024),
             # on two free cores: this process's CPU, then the workers' split evenly (none of it overlapping)
             "modelSeconds": round(cpu_here + cpu_children / 2, 2)}, proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queue", default="realistic", choices=("realistic", "plain"))
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tie-break", default="random", choices=("random", "first"))
    args = parser.parse_args(argv)
    configs, data = configurations(args.queue), workload(args.queue, args.nodes, args.pods)
    # the realistic scenario holds its configuration: the default profile, i.e. LeastAllocated cpu 1/memory 1
    scenario = ["-f", data] if args.queue == "realistic" else ["-f", configs[0], "-f", data]
    command = ["simulate", *scenario, "--compare", ",".join(configs[1:]),
               "--tie-break", args.tie_break, "--seed", "7", "-o", "json"]
    modes = {"one process": [], f"{args.workers} Dask workers": ["--workers", str(args.workers)]}
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for r in range(args.rounds):
        outputs = []
        for mode, extra in (modes.items() if r % 2 == 0 else reversed(modes.items())):
            figures, out = timed([*command, *extra])
            runs[mode].append(figures | {"load": round(os.getloadavg()[0], 1)})
            outputs.append(out)
            print(json.dumps({"round": r, "mode": mode, **runs[mode][-1]}), flush=True)
        if outputs[0] != outputs[1]:
            raise SystemExit(f"round {r}: the outputs differ")
    first = json.loads(outputs[0])
    first_mode, other_mode = modes
    one, many = (median(x["seconds"] for x in runs[m]) for m in modes)
    summary = {"workload": f"{args.queue} {args.nodes} x {args.pods}", "configurations": len(first["configurations"]),
               "tieBreak": args.tie_break, "identicalOutputs": True, "bytes": len(outputs[0]),
               "medianSeconds": {m: median(x["seconds"] for x in runs[m]) for m in modes},
               "medianCpuSeconds": {m: median(x["cpuSeconds"] for x in runs[m]) for m in modes},
               "speedup": round(one / many, 2),
               # the one-process run is serial: on a free core its wall time is its CPU time
               "modelSpeedup": round(median(x["cpuSeconds"] for x in runs[first_mode])
                                     / median(x["modelSeconds"] for x in runs[other_mode]), 2),
               "perRoundSpeedup": [round(a["seconds"] / b["seconds"], 2) for a, b in zip(*runs.values(), strict=True)],
               "scheduled": {c["name"].rsplit("/", 1)[-1]: c["scheduled"] for c in first["configurations"]}}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
