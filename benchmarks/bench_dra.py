"""Benchmark Dynamic Resource Allocation end to end: `kubefit simulate -f FILE -o json` in a fresh process.

The scenario is generated here, seeded: 1,000 GPU nodes (96 cpu, 768Gi) with 8 GPUs each published in one
ResourceSlice per node (model H100 or A100, index, NUMA node 0/1, memory 80Gi or 40Gi), DeviceClasses for
any GPU and for H100s (a CEL attribute selector), and 5,000 pods under the default profile asking, through
ResourceClaimTemplates, 1 GPU (ExactCount), 2 GPUs on one NUMA node (a matchAttribute constraint), 4 GPUs
with at least 40Gi (a capacity selector) or an H100 else two A100s (firstAvailable). A second run gives
each pod its own ResourceClaim (named in the pod) instead of a template. Each run is timed (wall clock
and the child's user+sys CPU) with its peak resident memory; pods/s is pods over wall time.

A third run, `partitionable` (v1.36's DRAPartitionableDevices, answered with `--kube-version 1.36`): each
node's 8 GPUs are each partitionable into 7 slices, MIG-style: a ResourceSlice of 8 counter sets (80Gi of
memory and 7 compute slices per GPU) and one of 64 devices, the 8 whole GPUs and 56 `1g.10gb` partitions, each
consuming its GPU's counters. The 5,000 pods ask one partition (55 %), a whole GPU (20 %), two partitions of
one GPU (a matchAttribute on the parent GPU, 15 %) or a whole GPU else two partitions (firstAvailable, 10 %).

    .venv/bin/python benchmarks/bench_dra.py                # every run
    .venv/bin/python benchmarks/bench_dra.py --runs templates --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("KUBEFIT_BENCH_DIR", "/tmp/kubefit-bench"))
KUBEFIT = [sys.executable, "-m", "kubefit.cli"]
V1 = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"
NODES, GPUS, PODS = 1_000, 8, 5_000


def _class(name: str, expression: str) -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _exactly(name: str, cls: str, count: int = 1, selector: str | None = None) -> dict:
    body: dict = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selector:
        body["selectors"] = [{"cel": {"expression": selector}}]
    return {"name": name, "exactly": body}


SPECS = {  # claim spec per kind of pod, with its share of the queue
    "one": (0.55, {"requests": [_exactly("gpu", "gpu")]}),
    "numa-pair": (0.20, {"requests": [_exactly("gpus", "gpu", 2)],
                         "constraints": [{"matchAttribute": f"{DRIVER}/numa"}]}),
    "big-memory": (0.10, {"requests": [_exactly("gpus", "gpu", 4, f'device.capacity["{DRIVER}"].memory'
                                                                 f'.compareTo(quantity("40Gi")) >= 0')]}),
    "h100-or-two": (0.15, {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "h100", "deviceClassName": "gpu-h100", "allocationMode": "ExactCount", "count": 1},
        {"name": "a100s", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}]}]}),
}


def scenario(named_claims: bool, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    docs = [_class("gpu", f'device.driver == "{DRIVER}"'),
            _class("gpu-h100", f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "H100"')]
    for kind, (_share, spec) in SPECS.items():
        docs.append({"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": kind},
                     "spec": {"spec": {"devices": spec}}})
    for i in range(NODES):
        name = f"gpu-node-{i:04d}"
        h100 = i % 3 == 0
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"allocatable": {"cpu": "96", "memory": "768Gi", "pods": "110"}}})
        devices = [{"name": f"gpu-{g}", "attributes": {"model": {"string": "H100" if h100 else "A100"},
                                                       "index": {"int": g}, "numa": {"int": g // 4}},
                    "capacity": {"memory": {"value": "80Gi" if h100 or g % 2 else "40Gi"}}} for g in range(GPUS)]
        docs.append({"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-{DRIVER}"},
                     "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "resourceSliceCount": 1},
                              "devices": devices}})
    kinds = list(SPECS)
    weights = [SPECS[k][0] for k in kinds]
    for i in range(PODS):
        kind = rng.choices(kinds, weights)[0]
        name = f"job-{i:05d}"
        claim: dict = {"name": "gpus", "resourceClaimTemplateName": kind}
        if named_claims:
            claim = {"name": "gpus", "resourceClaimName": f"{name}-gpus"}
            docs.append({"apiVersion": V1, "kind": "ResourceClaim",
                         "metadata": {"name": f"{name}-gpus", "namespace": "default"},
                         "spec": {"devices": SPECS[kind][1]}})
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                     "spec": {"containers": [{"name": "main", "image": "trainer:1", "resources": {
                         "requests": {"cpu": str(rng.choice((2, 4, 8))), "memory": f"{rng.choice((16, 32, 64))}Gi"},
                         "claims": [{"name": "gpus"}]}}], "resourceClaims": [claim]}})
    return docs


PARTITION_SPECS = {  # claim spec per kind of pod on partitionable GPUs, with its share of the queue
    "slice": (0.55, {"requests": [_exactly("mig", "mig-1g")]}),
    "whole": (0.20, {"requests": [_exactly("gpu", "gpu")]}),
    "two-slices": (0.15, {"requests": [_exactly("migs", "mig-1g", 2)],
                          "constraints": [{"matchAttribute": f"{DRIVER}/parent"}]}),
    "whole-or-slices": (0.10, {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "whole", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        {"name": "slices", "deviceClassName": "mig-1g", "allocationMode": "ExactCount", "count": 2}]}]}),
}


def _partitionable_node(name: str) -> list[dict]:
    """A node's two slices: 8 counter sets (a GPU's memory and compute slices), 8 whole GPUs and 56 partitions."""
    pool = {"name": name, "resourceSliceCount": 2}
    sets = [{"name": f"gpu-{g}-cs", "counters": {"memory": {"value": "80Gi"}, "compute-slices": {"value": "7"}}}
            for g in range(GPUS)]
    devices = []
    for g in range(GPUS):
        base = {"parent": {"string": f"{name}-gpu-{g}"}, "index": {"int": g}, "numa": {"int": g // 4}}
        devices.append({"name": f"gpu-{g}", "attributes": {**base, "type": {"string": "gpu"}},
                        "capacity": {"memory": {"value": "80Gi"}},
                        "consumesCounters": [{"counterSet": f"gpu-{g}-cs", "counters": {
                            "memory": {"value": "80Gi"}, "compute-slices": {"value": "7"}}}]})
        for k in range(7):
            devices.append({"name": f"gpu-{g}-1g-{k}", "attributes": {**base, "type": {"string": "mig"},
                                                                      "profile": {"string": "1g.10gb"}},
                            "capacity": {"memory": {"value": "10Gi"}},
                            "consumesCounters": [{"counterSet": f"gpu-{g}-cs", "counters": {
                                "memory": {"value": "10Gi"}, "compute-slices": {"value": "1"}}}]})
    spec = {"driver": DRIVER, "nodeName": name, "pool": pool}
    return [{"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-counters"},
             "spec": {**spec, "sharedCounters": sets}},
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
             "spec": {**spec, "devices": devices}}]


def partitionable_scenario(seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    expr = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == '
    docs = [_class("gpu", expr + '"gpu"'),
            _class("mig-1g", expr + f'"mig" && device.attributes["{DRIVER}"].profile == "1g.10gb"')]
    for kind, (_share, spec) in PARTITION_SPECS.items():
        docs.append({"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": kind},
                     "spec": {"spec": {"devices": spec}}})
    for i in range(NODES):
        name = f"gpu-node-{i:04d}"
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"allocatable": {"cpu": "96", "memory": "768Gi", "pods": "110"}}})
        docs += _partitionable_node(name)
    kinds = list(PARTITION_SPECS)
    weights = [PARTITION_SPECS[k][0] for k in kinds]
    for i in range(PODS):
        kind = rng.choices(kinds, weights)[0]
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"job-{i:05d}", "namespace": "default"},
                     "spec": {"containers": [{"name": "main", "image": "trainer:1", "resources": {
                         "requests": {"cpu": str(rng.choice((2, 4, 8))), "memory": f"{rng.choice((16, 32, 64))}Gi"},
                         "claims": [{"name": "gpus"}]}}],
                         "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": kind}]}})
    return docs


def run(name: str, named_claims: bool, repeat: int) -> dict:
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"dra-{name}.json"
    docs = partitionable_scenario() if name == "partitionable" else scenario(named_claims)
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    version = ["--kube-version", "1.36"] if name == "partitionable" else []
    figures = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([*KUBEFIT, "simulate", "-f", str(path), "-o", "json", *version], capture_output=True,
                              text=True, cwd=ROOT, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr)
        out = json.loads(proc.stdout)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        figures.append({"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "pods_per_s": round(PODS / wall),
                        "max_rss_mb": round(after.ru_maxrss / 1024), "scheduled": out["scheduled"],
                        "unschedulable": out["unschedulable"],
                        "gpus_allocated": sum(len(n["allocated"]) for n in out["devices"].values())})
    best = min(figures, key=lambda f: f["wall_s"])
    print(f"{name}: {json.dumps(best)}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="*", default=["templates", "claims", "partitionable"],
                        choices=["templates", "claims", "partitionable"])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    for name in args.runs:
        run(name, name == "claims", args.repeat)


if __name__ == "__main__":
    main()
