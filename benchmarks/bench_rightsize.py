"""Benchmark `kubefit rightsize` as a user runs it: requests from 30 days of usage series, the right-sized cluster
scheduled and consolidated (verified), from process start to `-o json`.

Generated here, seeded (and kept in $KUBEFIT_BENCH_DIR, default /tmp/kubefit-bench, between runs):

- the cluster, a `kind: List` as `kubectl get -o json` prints it: 1,000 nodes (16 cpu, 64Gi, three pools),
  1,000 Deployments of 10 replicas (each with its ReplicaSet), 10,000 pods running, one container each, requests
  from 250m to 2 cpu and 512Mi to 4Gi, limits twice the cpu request and equal to the memory request, bound
  round-robin (about 60 % of the cpu requested);
- the usage, a Prometheus `query_range` answer (JSON) holding, for every Deployment's container, 30 days of
  5-minute samples (8,640) of both `namespace_workload_container:container_cpu_usage_seconds_total:sum_rate` and
  `...:container_memory_working_set_bytes:max` (kubernetes-mixin-style rules by workload, labels `namespace`,
  `workload_type`, `workload`, `container`): 2 × 1,000 × 8,640 = 17,280,000 samples, about 470 MB. Usage runs
  at 20–60 % of each request, with a daily cycle and rare peaks.

Then `kubefit rightsize -f CLUSTER --requests-from usage --usage USAGE -o json` in a fresh process, measured by
bench_cli.py's `timed` (wall seconds, CPU seconds: the figure to compare on a shared machine, the process's own
peak RSS), against the issue's targets (≤ 60 s, ≤ 2 GiB):

    .venv/bin/python benchmarks/bench_rightsize.py [--nodes 1000 --workloads 1000 --replicas 10 --days 30]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import KUBEFIT, WORK, figures, timed  # noqa: E402 - the measurement bench_cli.py uses

STEP = 300  # seconds between samples
START = 1764547200  # 2025-12-01T00:00:00Z
CPU_SHAPES = (250, 500, 1000, 2000)  # millicores
MEMORY_SHAPES = (512, 1024, 2048, 4096)  # MiB
POOLS = ("general", "compute", "memory")
TARGET_SECONDS, TARGET_RSS_MIB = 60.0, 2048


def cluster(nodes: int, workloads: int, replicas: int, rng: np.random.Generator) -> dict:
    """The cluster as a `kind: List` (see the module's docstring)."""
    items: list[dict] = []
    for i in range(nodes):
        name = f"node-{i:04d}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "karpenter.sh/nodepool": POOLS[i % len(POOLS)]}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                       "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    slot = 0
    for w in range(workloads):
        ns, name = f"team-{w % 20:02d}", f"app-{w:04d}"
        cpu, memory = int(rng.choice(CPU_SHAPES)), int(rng.choice(MEMORY_SHAPES))
        resources = {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"},
                     "limits": {"cpu": f"{2 * cpu}m", "memory": f"{memory}Mi"}}
        template = {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "main", "image": "registry/app:1", "resources": resources}]}}
        digest = f"{w:09x}"[-9:]
        rs = f"{name}-{digest}"
        items.append({"apiVersion": "apps/v1", "kind": "Deployment",
                      "metadata": {"name": name, "namespace": ns, "uid": f"d-{w}"},
                      "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template}})
        rs_template = {**template, "metadata": {"labels": {"app": name, "pod-template-hash": digest}}}
        items.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": rs, "namespace": ns, "uid": f"rs-{w}", "labels": {"app": name, "pod-template-hash": digest},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": f"d-{w}",
                                 "controller": True}]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name, "pod-template-hash": digest}},
                     "template": rs_template}})
        for r in range(replicas):
            node = f"node-{slot % nodes:04d}"
            slot += 1
            items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"{rs}-{_suffix(w, r)}", "namespace": ns, "uid": f"p-{w}-{r}",
                "labels": {"app": name, "pod-template-hash": digest},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": f"rs-{w}",
                                     "controller": True}]},
                "spec": {"nodeName": node, "containers": [{"name": "main", "image": "registry/app:1",
                                                           "resources": resources}]},
                "status": {"phase": "Running"}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _suffix(w: int, r: int) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    n = w * 1000 + r
    return "".join(alphabet[(n // len(alphabet) ** k) % len(alphabet)] for k in range(5))


def write_usage(path: Path, doc: dict, days: int, rng: np.random.Generator) -> int:
    """The Prometheus answer, written series by series (see the module's docstring); its sample count."""
    n = days * 86400 // STEP
    times = START + STEP * np.arange(n, dtype=np.int64)
    daily = 0.5 + 0.5 * np.sin(2 * np.pi * (times % 86400) / 86400)
    time_text = [str(t) for t in times.tolist()]
    samples = 0
    with path.open("w") as f:
        f.write('{"status":"success","data":{"resultType":"matrix","result":[')
        first = True
        for item in doc["items"]:
            if item["kind"] != "Deployment":
                continue
            meta, spec = item["metadata"], item["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
            cpu = int(spec["cpu"].removesuffix("m")) / 1000
            memory = int(spec["memory"].removesuffix("Mi")) * (1 << 20)
            level = rng.uniform(0.2, 0.6)
            cpu_values = cpu * level * (0.6 + 0.4 * daily) * rng.uniform(0.9, 1.1, n)
            peaks = rng.random(n) < 0.002
            cpu_values[peaks] *= 2.5
            memory_values = memory * (level + 0.1 * daily) * rng.uniform(0.97, 1.03, n)
            labels = (f'"namespace":"{meta["namespace"]}","workload_type":"deployment","workload":"{meta["name"]}",'
                      f'"container":"main"')
            for metric, values, fmt in (
                    ("namespace_workload_container:container_cpu_usage_seconds_total:sum_rate", cpu_values, "%.4f"),
                    ("namespace_workload_container:container_memory_working_set_bytes:max", memory_values, "%.0f")):
                f.write(("" if first else ",") + f'{{"metric":{{"__name__":"{metric}",{labels}}},"values":[')
                first = False
                texts = np.char.mod(fmt, values).tolist()
                f.write(",".join(f'[{t},"{v}"]' for t, v in zip(time_text, texts, strict=True)))
                f.write("]}")
                samples += n
        f.write("]}}\n")
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--workloads", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--no-consolidate", action="store_true")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    stem = f"rightsize-{args.nodes}x{args.workloads}x{args.replicas}-{args.days}d"
    cluster_file, usage_file = WORK / f"{stem}-cluster.json", WORK / f"{stem}-usage.json"
    samples = None
    if not (cluster_file.exists() and usage_file.exists()):
        rng = np.random.default_rng(45)
        doc = cluster(args.nodes, args.workloads, args.replicas, rng)
        cluster_file.write_text(json.dumps(doc))
        samples = write_usage(usage_file, doc, args.days, rng)
    command = [*KUBEFIT, "rightsize", "-f", str(cluster_file), "--requests-from", "usage", "--usage",
               str(usage_file), "-o", "json", *(["--no-consolidate"] if args.no_consolidate else [])]
    load = os.getloadavg()[0]
    seconds, cpu, rss, out = timed(command)
    data = json.loads(out)
    result = figures(seconds, cpu, rss) | {
        "loadBefore": round(load, 2), "loadAfter": round(os.getloadavg()[0], 2),
        "usageMB": round(usage_file.stat().st_size / 1e6, 1), "samples": data["usage"]["samples"],
        "workloadsRewritten": len(data["changes"]), "podsRecreated": data["podsRecreated"],
        "pendingAfter": data["pendingPods"], "nodesBefore": data["nodesBefore"], "nodesAfter": data["nodesAfter"],
        "targets": {"seconds": TARGET_SECONDS, "peakRssMiB": TARGET_RSS_MIB},
        "met": seconds <= TARGET_SECONDS and rss <= TARGET_RSS_MIB}
    if samples is not None:
        result["samplesWritten"] = samples
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
