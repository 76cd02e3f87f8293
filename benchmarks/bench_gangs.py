"""Benchmark pod groups (v1.36, GenericWorkload + GangScheduling): the same production-shaped queue with and
without gangs, `kubefit simulate -f FILE -o json` in a fresh process each.

The scenario is generated here, seeded: 1,000 nodes of `bench_simulate`'s node types over three zones and 10,000
pending pods of its pod shapes under the default profile, 30 % of them in gangs of 2 to 64 identical pods (each a
PodGroup with `gang: {minCount}` between half the gang and all of it; one gang in twenty asks for more GPUs than the
cluster has free, so it fails and is retried whenever the cluster changed). The run without gangs is the same
queue with no PodGroup and no `spec.schedulingGroup`. Each run is timed (the child's user+sys CPU, wall clock) with
its peak resident memory; the issue's bar: with gangs at least half the speed (CPU) of without.

    .venv/bin/python benchmarks/bench_gangs.py              # both runs once
    .venv/bin/python benchmarks/bench_gangs.py --repeat 3   # medians of three
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("KUBEFIT_BENCH_DIR", "/tmp/kubefit-bench"))
KUBEFIT = [sys.executable, "-m", "kubefit.cli"]
NODES, PODS, GANG_SHARE = 1_000, 10_000, 0.30
NODE_TYPES = [(0.40, "16", "64Gi", 0), (0.25, "8", "64Gi", 0), (0.20, "64", "256Gi", 0), (0.10, "4", "16Gi", 0),
              (0.05, "32", "192Gi", 8)]  # (weight, cpu, memory, GPUs), as bench_simulate.py
POD_SHAPES = [(0.25, "100m", "128Mi", 0), (0.20, "250m", "512Mi", 0), (0.15, "500m", "1Gi", 0),
              (0.12, "1", "2Gi", 0), (0.08, "2", "8Gi", 0), (0.20, "500m", "1Gi", 1)]
ZONES = ("zone-a", "zone-b", "zone-c")


def _pick(rng: random.Random, table):
    return rng.choices(table, weights=[row[0] for row in table])[0]


def _node(i: int, rng: random.Random) -> dict:
    _w, cpu, memory, gpus = _pick(rng, NODE_TYPES)
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:04d}", "labels": {"topology.kubernetes.io/zone": ZONES[i % 3],
                                                             "kubernetes.io/hostname": f"node-{i:04d}"}},
            "status": {"allocatable": allocatable, "capacity": allocatable}}


def _pod(name: str, shape, group: str | None, gpus: int | None = None) -> dict:
    _w, cpu, memory, gpu = shape
    gpu = gpu if gpus is None else gpus
    requests = {"cpu": cpu, "memory": memory, **({"nvidia.com/gpu": str(gpu)} if gpu else {})}
    spec: dict = {"priority": 0, "containers": [{"name": "c", "image": "app", "resources": {"requests": requests}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def scenario(seed: int, gangs: bool) -> list[dict]:
    """The nodes, then the queue: single pods and gangs interleaved (a gang's pods created one after another)."""
    rng = random.Random(seed)
    nodes = [_node(i, rng) for i in range(NODES)]
    entries: list[list[dict]] = []
    groups: list[dict] = []
    in_gangs = 0
    while in_gangs < PODS * GANG_SHARE:
        size = min(rng.randint(2, 64), int(PODS * GANG_SHARE) - in_gangs) or 1
        name = f"gang-{len(groups):03d}"
        greedy = len(groups) % 20 == 19  # asks for more GPUs than there are free: fails, retried
        shape = _pick(rng, POD_SHAPES)
        pods = [_pod(f"{name}-{i}", shape, name if gangs else None, 4 if greedy else None) for i in range(size)]
        min_count = size if greedy else rng.randint((size + 1) // 2, size)
        groups.append({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                       "metadata": {"name": name, "namespace": "default"},
                       "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}})
        entries.append(pods)
        in_gangs += size
    singles = [[_pod(f"pod-{i:05d}", _pick(rng, POD_SHAPES), None)] for i in range(PODS - in_gangs)]
    entries += singles
    rng.shuffle(entries)
    queue = [pod for entry in entries for pod in entry]
    return [*(groups if gangs else []), *nodes, *queue]


def run_once(path: Path, gates: str | None) -> dict:
    args = [*KUBEFIT, "simulate", "-f", str(path), "--kube-version", "1.36", "--tie-break", "first", "-o", "json"]
    if gates:
        args += ["--feature-gates", gates]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    out = json.loads(done.stdout)
    return {"cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, "wall": wall,
            "rss_mib": after.ru_maxrss / 1024, "scheduled": out["scheduled"], "unschedulable": out["unschedulable"],
            "groups": len(out.get("podGroups", [])),
            "cycles": max((g["cycles"] for g in out.get("podGroups", [])), default=0)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    results = {}
    for label, gangs, gates in (("without gangs", False, None),
                                ("with gangs", True, "GenericWorkload=true,GangScheduling=true")):
        path = WORK / f"gangs-{'on' if gangs else 'off'}-{args.seed}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": scenario(args.seed, gangs)}))
        runs = [run_once(path, gates) for _ in range(args.repeat)]
        results[label] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        r = results[label]
        print(f"{label:14s} cpu {r['cpu']:.1f} s  wall {r['wall']:.1f} s  peak RSS {r['rss_mib']:.0f} MiB  "
              f"scheduled {r['scheduled']}  pending {r['unschedulable']}  groups {r['groups']}")
    ratio = results["without gangs"]["cpu"] / results["with gangs"]["cpu"]
    print(f"speed with gangs / without (CPU): {ratio:.2f} (the bar: at least 0.50)")
    return 0 if ratio >= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
