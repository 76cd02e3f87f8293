"""Benchmark `simulate`: seeded synthetic clusters and workloads, pods/s and peak memory.

Clusters mix several node types (general purpose, memory optimised, large, GPU) over three zones;
workloads mix pod shapes (web, batch, memory-heavy, GPU training) and some pods carry a native sidecar.
The profile is NodeResourcesFit (MostAllocated) + NodeResourcesBalancedAllocation with every node
evaluated (`percentageOfNodesToScore: 100`).

    .venv/bin/python benchmarks/bench_simulate.py                 # every size
    .venv/bin/python benchmarks/bench_simulate.py --sizes 1000x2000 5000x5000
    .venv/bin/python benchmarks/bench_simulate.py --check         # also compare with the plain framework
    .venv/bin/python benchmarks/bench_simulate.py --profile default   # kube-scheduler's default profile
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import numpy as np

from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.quantity import parse_quantity
from kubefit.scheduler.config import (
    BalancedAllocationArgs,
    NodeResourcesFitArgs,
    Profile,
    SchedulerConfiguration,
    ScorePlugin,
)
from kubefit.scheduler.state import compile_state

SIZES = {"1000x2000": (1000, 2000), "5000x5000": (5000, 5000), "5000x150000": (5000, 150_000)}
GPU = "nvidia.com/gpu"

NODE_TYPES = [  # (weight, cpu, memory, pods, gpus)
    (0.40, "16", "64Gi", "110", 0),
    (0.25, "8", "64Gi", "110", 0),
    (0.20, "64", "256Gi", "250", 0),
    (0.10, "4", "16Gi", "58", 0),
    (0.05, "32", "192Gi", "110", 8),
]
POD_SHAPES = [  # (weight, cpu, memory, gpus)
    (0.25, "100m", "128Mi", 0),
    (0.20, "250m", "512Mi", 0),
    (0.15, "500m", "1Gi", 0),
    (0.12, "1", "2Gi", 0),
    (0.08, "2", "8Gi", 0),
    (0.06, "4", "16Gi", 0),
    (0.05, "", "", 0),  # best effort
    (0.04, "8", "32Gi", 1),
    (0.03, "16", "64Gi", 4),
    (0.02, "1500m", "24Gi", 0),
]
SIDECAR = Container("proxy", {"cpu": parse_quantity("50m"), "memory": parse_quantity("64Mi")}, "Always")


def synthetic_nodes(n: int, rng: np.random.Generator) -> list[Node]:
    """`n` nodes of the weighted node types, spread over three zones."""
    kinds = rng.choice(len(NODE_TYPES), size=n, p=[t[0] for t in NODE_TYPES])
    nodes = []
    for i, k in enumerate(kinds):
        _, cpu, mem, pods, gpus = NODE_TYPES[k]
        alloc = {"cpu": parse_quantity(cpu), "memory": parse_quantity(mem), "pods": parse_quantity(pods),
                 "ephemeral-storage": parse_quantity("100Gi")}
        if gpus:
            alloc[GPU] = parse_quantity(str(gpus))
        nodes.append(Node(f"node-{i:06d}", alloc, {"topology.kubernetes.io/zone": f"zone-{i % 3}"}))
    return nodes


def synthetic_pods(n: int, rng: np.random.Generator) -> list[Pod]:
    """`n` pending pods of the weighted shapes; one in five carries a sidecar, a few have priority."""
    shapes = rng.choice(len(POD_SHAPES), size=n, p=[s[0] for s in POD_SHAPES])
    sidecar = rng.random(n) < 0.2
    priority = np.where(rng.random(n) < 0.05, 1000, 0)
    containers = {}
    for k, (_, cpu, mem, gpus) in enumerate(POD_SHAPES):
        req = {}
        if cpu:
            req = {"cpu": parse_quantity(cpu), "memory": parse_quantity(mem)}
        if gpus:
            req[GPU] = parse_quantity(str(gpus))
        containers[k] = (Container("app", req),)
    pods = []
    for i in range(n):
        init = (SIDECAR,) if sidecar[i] else ()
        pods.append(Pod(f"pod-{i:06d}", priority=int(priority[i]), containers=containers[int(shapes[i])],
                        init_containers=init))
    pods.sort(key=lambda p: -p.priority)  # queue order
    return pods


def config(profile_name: str = "bin-packing") -> SchedulerConfiguration:
    """MostAllocated + BalancedAllocation (or kube-scheduler's default profile), every node evaluated."""
    if profile_name == "default":
        from kubefit.scheduler.config import decode_v1

        return decode_v1({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                          "percentageOfNodesToScore": 100}, "default profile")
    profile = Profile(
        filter_plugins=("NodeResourcesFit",),
        score_plugins=(ScorePlugin("NodeResourcesFit", 1), ScorePlugin("NodeResourcesBalancedAllocation", 1)),
        plugin_args={"NodeResourcesFit": NodeResourcesFitArgs(scoring_type="MostAllocated"),
                     "NodeResourcesBalancedAllocation": BalancedAllocationArgs()},
        percentage_of_nodes_to_score=100)
    return SchedulerConfiguration((profile,), 100)


def run(nodes_n: int, pods_n: int, seed: int, check: bool, profile_name: str = "bin-packing") -> dict:
    from kubefit.scheduler.simulate import simulate

    rng = np.random.default_rng(seed)
    nodes, pods = synthetic_nodes(nodes_n, rng), synthetic_pods(pods_n, rng)
    cfg = config(profile_name)
    state = compile_state(nodes, pods)
    before = _rss_mib()
    t0 = time.perf_counter()
    result = simulate(state, cfg, pods, tie_break="random", seed=seed)
    elapsed = time.perf_counter() - t0
    out = {"profile": profile_name, "nodes": nodes_n, "pods": pods_n, "seconds": round(elapsed, 2),
           "podsPerSecond": round(pods_n / elapsed),
           "scheduled": result.scheduled, "unschedulable": result.unschedulable,
           "nodesUsed": result.metrics()["nodesUsed"], "peakRssMiB": round(_rss_mib()),
           "inputsRssMiB": round(before)}
    if check:
        out["identicalToFramework"] = _same_as_framework(nodes, pods, cfg)
    return out


def _same_as_framework(nodes, pods, cfg) -> bool:
    """Replay with `schedule_one` on every pod (slow) and compare with simulate, both with tie-break first."""
    from kubefit.k8s.requests import pod_demand
    from kubefit.scheduler.framework import Framework, schedule_one
    from kubefit.scheduler.simulate import simulate

    fast = simulate(compile_state(nodes, pods), cfg, pods, tie_break="first", stranded=False)
    state = compile_state(nodes, pods)
    fw = Framework.build(cfg.profiles[0])
    for pod, step in zip(pods, fast.steps, strict=True):
        r = schedule_one(fw, state, pod)
        node = None if not len(r.feasible) else int(r.best[0] if len(r.feasible) > 1 else r.feasible[0])
        if node != step.node or (node is None and r.fit_error() != step.message):
            return False
        if node is not None:
            state.bind(node, pod_demand(pod))
    return True


def _rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES),
                        help="NODESxPODS sizes to run (default: all), each in a fresh process")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="also replay with the plain framework (slow)")
    parser.add_argument("--profile", choices=("bin-packing", "default"), default="bin-packing",
                        help="bin-packing: MostAllocated + BalancedAllocation (the issue's figure); default: "
                             "kube-scheduler's default profile (LeastAllocated, TaintToleration and NodeAffinity scores too)")
    parser.add_argument("--one", choices=list(SIZES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        out = run(*SIZES[args.one], args.seed, args.check, args.profile)
        print(" ".join(f"{k}={v}" for k, v in out.items()), flush=True)
        return 0
    for size in args.sizes:  # a fresh process per size: its peak memory is its own
        cmd = [sys.executable, __file__, "--one", size, "--seed", str(args.seed), "--profile", args.profile]
        cmd += ["--check"] if args.check else []
        subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
