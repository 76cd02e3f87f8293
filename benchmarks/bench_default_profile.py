"""Benchmark `kubefit simulate` under kube-scheduler's full default profile, end to end from a JSON file.

The cluster: N nodes over three zones (hostname and zone labels, one of four node types); the workload:
P pending pods owned by ReplicaSets (100 pods each) that a Service selects, so PodTopologySpread applies
its system-default constraints; one pod in five also carries an explicit zone spread constraint
(DoNotSchedule, maxSkew 1) and one in four a preferred pod anti-affinity on the hostname. Every node is
evaluated (`percentageOfNodesToScore: 100`). Prints pods/s and the peak RSS of the kubefit process.

    .venv/bin/python benchmarks/bench_default_profile.py --sizes 500x5000 5000x50000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

NODE_TYPES = [("16", "64Gi", "110"), ("8", "32Gi", "110"), ("32", "128Gi", "250"), ("4", "16Gi", "58")]
POD_SHAPES = [("100m", "128Mi"), ("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi")]
ZONES = ("zone-a", "zone-b", "zone-c")
PER_REPLICA_SET = 100


def scenario(nodes: int, pods: int, seed: int = 0) -> list[dict]:
    """The documents of one scenario file: configuration, Services, ReplicaSets, nodes, pending pods."""
    rng = np.random.default_rng(seed)
    docs: list[dict] = [{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "percentageOfNodesToScore": 100, "profiles": [{"schedulerName": "default-scheduler"}]}]
    apps = (pods + PER_REPLICA_SET - 1) // PER_REPLICA_SET
    for a in range(apps):
        labels = {"app": f"app{a}"}
        docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"app{a}", "namespace": "default"},
                     "spec": {"selector": labels}})
        docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "metadata": {"name": f"app{a}", "namespace": "default", "uid": f"rs-{a}"},
                     "spec": {"replicas": PER_REPLICA_SET, "selector": {"matchLabels": labels},
                              "template": {"metadata": {"labels": labels},
                                           "spec": {"containers": [{"name": "app", "image": "app"}]}}}})
    for i in range(nodes):
        cpu, memory, max_pods = NODE_TYPES[int(rng.integers(len(NODE_TYPES)))]
        alloc = {"cpu": cpu, "memory": memory, "pods": max_pods}
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"node-{i:05d}", "labels": {"kubernetes.io/hostname": f"node-{i:05d}",
                                                                      "topology.kubernetes.io/zone": ZONES[i % 3]}},
                     "status": {"allocatable": alloc, "capacity": alloc}})
    for i in range(pods):
        a = i // PER_REPLICA_SET
        cpu, memory = POD_SHAPES[a % len(POD_SHAPES)]
        spec: dict = {"containers": [{"name": "app", "image": f"registry.example.com/app{a}:1",
                                      "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
        if a % 5 == 0:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": f"app{a}"}}}]
        if a % 4 == 1:
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": f"app{a}"}},
                                                    "topologyKey": "kubernetes.io/hostname"}}]}}
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"app{a}-{i:06d}", "namespace": "default", "labels": {"app": f"app{a}"},
                                  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                       "name": f"app{a}", "uid": f"rs-{a}", "controller": True}]},
                     "spec": spec})
    return docs


def run(nodes: int, pods: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": scenario(nodes, pods)}))
        kubefit = Path(sys.executable).with_name("kubefit")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run([str(kubefit), "simulate", "-f", str(path), "-o", "json", "--tie-break", "first"],
                             capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime  # the machine is shared: CPU too
    peak = usage.ru_maxrss / 1024  # KiB → MiB (Linux; the largest child so far)
    data = json.loads(out.stdout)
    return {"nodes": nodes, "pods": pods, "seconds": round(seconds, 1), "cpuSeconds": round(cpu, 1),
            "podsPerSecond": round(pods / seconds), "peakMiB": round(peak), "scheduled": data["scheduled"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["500x5000"], help="NODESxPODS, e.g. 5000x50000")
    args = parser.parse_args()
    for size in args.sizes:
        n, p = (int(x) for x in size.split("x"))
        print(json.dumps(run(n, p)), flush=True)


if __name__ == "__main__":
    main()
