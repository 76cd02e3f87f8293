"""Benchmark the replay of the Alibaba GPU trace (default workload) under each scoring strategy.

The trace is imported from its CSVs (1,213 GPU nodes, 8,152 pods in creation order) and replayed
through the profile of the golden runs: NodeResourcesFit over cpu, memory and nvidia.com/gpu (weight 1)
plus NodeResourcesBalancedAllocation, every node evaluated (with `--adaptive`: `percentageOfNodesToScore`
unset, kube-scheduler's sampling of 497 of the 1,213 nodes, the golden sampling cases' setting), ties to
the first node. Each strategy runs in a fresh process, so its peak memory is its own. Printed per
strategy: seconds (wall and CPU) and pods/s of the replay alone, seconds of the stranded-capacity
metrics that `kubefit simulate` adds, seconds of the import, peak resident memory, and the outcome
(scheduled / pending), which equals the golden run's.

    .venv/bin/python benchmarks/bench_trace.py
    .venv/bin/python benchmarks/bench_trace.py --strategies MostAllocated --repeat 3
    .venv/bin/python benchmarks/bench_trace.py --adaptive
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "alibaba-gpu-v2023"
STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


def config(strategy: str, adaptive: bool = False):
    """The golden runs' configuration for `strategy`, through the v1 loader (as a user's file would go);
    `adaptive`: without `percentageOfNodesToScore`."""
    from kubefit.manifests.documents import Document
    from kubefit.scheduler.config import V1, load_configuration

    strategy_args: dict = {"type": strategy, "resources": [{"name": r, "weight": 1} for r in RESOURCES]}
    if strategy == "RequestedToCapacityRatio":
        strategy_args["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 0},
                                                               {"utilization": 100, "score": 10}]}
    enabled = [{"name": "PrioritySort"}, {"name": "NodeResourcesFit", "weight": 1},
               {"name": "NodeResourcesBalancedAllocation", "weight": 1}, {"name": "DefaultBinder"}]
    body = {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}},
                          "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy_args}}]}]}
    if adaptive:
        del body["percentageOfNodesToScore"]
    return load_configuration(Document(body, "<bench>", 0))


def run(strategy: str, trace_dir: Path, repeat: int, adaptive: bool = False) -> dict:
    from kubefit.manifests.documents import Document
    from kubefit.manifests.importers.alibaba import import_alibaba_gpu
    from kubefit.manifests.load import decode_node, decode_pod
    from kubefit.scheduler.simulate import simulate
    from kubefit.scheduler.state import compile_state

    t0 = time.perf_counter()
    trace = import_alibaba_gpu(trace_dir / "openb_node_list_gpu_node.csv", trace_dir / "openb_pod_list_default.csv")
    warnings: list[str] = []
    nodes = [decode_node(Document(n, "<trace>", i), warnings) for i, n in enumerate(trace.nodes)]
    pods = [decode_pod(Document(p, "<trace>", i), warnings) for i, p in enumerate(trace.pods)]
    imported = time.perf_counter() - t0
    cfg = config(strategy, adaptive)
    replay, replay_cpu, total, result = [], [], [], None
    for _ in range(repeat):
        state = compile_state(nodes, pods)
        t0, c0 = time.perf_counter(), time.process_time()
        result = simulate(state, cfg, pods, tie_break="first", stranded=False)
        replay.append(time.perf_counter() - t0)
        replay_cpu.append(time.process_time() - c0)  # the figure to compare on a shared machine
        state = compile_state(nodes, pods)
        t0 = time.perf_counter()
        simulate(state, cfg, pods, tie_break="first")
        total.append(time.perf_counter() - t0)
    best = min(replay)
    return {"strategy": strategy, "nodes": len(nodes), "pods": len(pods), "replaySeconds": round(best, 2),
            "replayCpuSeconds": round(min(replay_cpu), 2),
            "podsPerSecond": round(len(pods) / best), "strandedSeconds": round(max(min(total) - best, 0.0), 2),
            "importSeconds": round(imported, 2), "peakRssMiB": round(_rss_mib()),
            "scheduled": result.scheduled, "unschedulable": result.unschedulable}


def _rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", nargs="*", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument("--trace-dir", type=Path, default=TRACE)
    parser.add_argument("--repeat", type=int, default=1, help="replays per strategy; the fastest is printed")
    parser.add_argument("--adaptive", action="store_true", help="leave percentageOfNodesToScore unset (sampling)")
    parser.add_argument("--one", choices=STRATEGIES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        out = run(args.one, args.trace_dir, max(args.repeat, 1), args.adaptive)
        print(" ".join(f"{k}={v}" for k, v in out.items()), flush=True)
        return 0
    for strategy in args.strategies:  # a fresh process per strategy: its peak memory is its own
        subprocess.run([sys.executable, __file__, "--one", strategy, "--trace-dir", str(args.trace_dir),
                        "--repeat", str(args.repeat), *(["--adaptive"] if args.adaptive else [])], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
