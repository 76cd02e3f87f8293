"""Benchmark `kubefit consolidate` end to end from a JSON snapshot: seconds, CPU seconds and peak RSS.

The cluster, generated here (seeded): N nodes of four types over three zones (hostname and zone labels), a
DaemonSet's agent on every node, P running pods owned by ReplicaSets of 50 pods (four pod shapes; one in two
ReplicaSets behind a Service, so PodTopologySpread's system defaults apply; one in five with a zone spread
constraint (DoNotSchedule), one in four with a preferred hostname anti-affinity), a PodDisruptionBudget (half
of its pods) for one ReplicaSet in twenty, a bare pod on one node in fifty, a few kube-system pods. Pods are bound at random where they
fit, the nodes filled to about 45 % of their cpu on average: room to consolidate, nodes that cannot go.
kube-scheduler's default profile and sampling (no configuration in the file). Each size runs the `kubefit`
command in its own process (its peak RSS is its own), under a 6 GiB address-space limit.

    .venv/bin/python benchmarks/bench_consolidate.py --sizes 1000x30000 5000x150000
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

NODE_TYPES = [(16000, "16", "64Gi", 110), (32000, "32", "128Gi", 250), (48000, "48", "192Gi", 250),
              (32000, "32", "128Gi", 250)]
POD_SHAPES = [(100, "100m", "128Mi"), (250, "250m", "512Mi"), (500, "500m", "1Gi"), (1000, "1", "2Gi")]
ZONES = ("zone-a", "zone-b", "zone-c")
PER_REPLICA_SET = 50
AGENT_CPU = 100
LIMIT_BYTES = 6 << 30


def _pod(name: str, namespace: str, node: str, cpu: str, memory: str, labels: dict, owner: dict | None,
         spec: dict | None = None) -> dict:
    meta: dict = {"name": name, "namespace": namespace, "labels": labels}
    if owner is not None:
        meta["ownerReferences"] = [{**owner, "controller": True}]
    body = {"nodeName": node, "containers": [{"name": "app", "image": f"registry.example.com/{labels.get('app')}:1",
                                              "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
            **(spec or {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body, "status": {"phase": "Running"}}


def scenario(nodes: int, pods: int, seed: int = 0) -> list[dict]:
    """The documents of one snapshot: nodes, their DaemonSet pods, Services, PDBs, ReplicaSets' running pods."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(len(NODE_TYPES), size=nodes)
    names = [f"node-{i:05d}" for i in range(nodes)]
    capacity = np.array([NODE_TYPES[k][0] for k in kinds], dtype=np.int64) - AGENT_CPU
    slots = np.array([NODE_TYPES[k][3] for k in kinds], dtype=np.int64) - 1
    docs: list[dict] = []
    for i, k in enumerate(kinds):
        _, cpu, memory, max_pods = NODE_TYPES[k]
        alloc = {"cpu": cpu, "memory": memory, "pods": str(max_pods)}
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": names[i], "labels": {"kubernetes.io/hostname": names[i],
                                                               "topology.kubernetes.io/zone": ZONES[i % 3]}},
                     "status": {"allocatable": alloc, "capacity": alloc}})
        docs.append(_pod(f"agent-{i:05d}", "kube-system", names[i], f"{AGENT_CPU}m", "128Mi", {"app": "agent"},
                         {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "ds-agent"}))
    share = rng.uniform(0.3, 1.7, size=nodes) * capacity  # nodes filled unevenly: some nearly empty, some full
    budget = np.minimum(share * (sum(POD_SHAPES[a % 4][0] for a in range(1000)) / 1000 * pods) / share.sum(),
                        0.95 * capacity)  # cpu each node gets: all the pods' cpu, shared
    used = np.zeros(nodes, dtype=np.int64)
    count = np.zeros(nodes, dtype=np.int64)
    apps = (pods + PER_REPLICA_SET - 1) // PER_REPLICA_SET
    for a in range(apps):
        app, labels = f"app{a}", {"app": f"app{a}"}
        if a % 2 == 0:
            docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": "default"},
                         "spec": {"selector": labels}})
        if a % 20 == 0:
            docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                         "metadata": {"name": app, "namespace": "default"},
                         "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": labels}},
                         "status": {"disruptionsAllowed": 25, "currentHealthy": PER_REPLICA_SET,
                                    "desiredHealthy": PER_REPLICA_SET - 25, "expectedPods": PER_REPLICA_SET}})
        docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "metadata": {"name": app, "namespace": "default", "uid": f"rs-{a}"},
                     "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                              "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app"}]}}}})
        milli, cpu, memory = POD_SHAPES[a % len(POD_SHAPES)]
        spec: dict = {}
        if a % 5 == 0:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": labels}}]
        if a % 4 == 1:
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": labels},
                                                    "topologyKey": "kubernetes.io/hostname"}}]}}
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app, "uid": f"rs-{a}"}
        for r in range(min(PER_REPLICA_SET, pods - a * PER_REPLICA_SET)):
            for _ in range(20):  # a random node with room, else the emptiest
                node = int(rng.integers(nodes))
                if used[node] + milli <= budget[node] and count[node] < slots[node]:
                    break
            else:
                node = int(np.argmin(used / budget))
            used[node] += milli
            count[node] += 1
            docs.append(_pod(f"{app}-{r:03d}", "default", names[node], cpu, memory, labels, owner, spec))
    for i in range(0, nodes, 50):  # a bare pod (no controller) keeps its node
        docs.append(_pod(f"debug-{i:05d}", "default", names[i], "10m", "16Mi", {"app": "debug"}, None))
    return docs


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def run(nodes: int, pods: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": scenario(nodes, pods)}))
        kubefit = Path(sys.executable).with_name("kubefit")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run([str(kubefit), "consolidate", "-f", str(path), "-o", "json"], capture_output=True,
                             text=True, check=True, preexec_fn=_limit)
        seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime  # the machine is shared: CPU too
    data = json.loads(out.stdout)
    return {"nodes": nodes, "pods": pods, "seconds": round(seconds, 1), "cpuSeconds": round(cpu, 1),
            "peakMiB": round(usage.ru_maxrss / 1024), "removable": len(data["removable"]),
            "nodesAfter": data["nodesAfter"], "lowerBound": data["lowerBound"], "trials": data["trials"],
            "moves": len(data["moves"]), "verification": data["verification"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["1000x30000"], help="NODESxPODS, e.g. 5000x150000")
    args = parser.parse_args()
    for size in args.sizes:
        n, p = (int(x) for x in size.split("x"))
        print(json.dumps(run(n, p)), flush=True)


if __name__ == "__main__":
    main()
