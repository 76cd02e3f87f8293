"""Benchmark `kubefit consolidate` as the user meets it: the CLI on a snapshot file, in a fresh process.

The snapshot (a `kind: List`, JSON as `kubectl get -o json` prints it) is generated here, seeded, from
bench_cli.py's generators: its node types (`node_manifest`: five types, three zones, GPU nodes) and its
service-sized pod shapes (`pod_manifest`: the four smallest, 100m to 1 cpu, and the one without requests,
by their weights; one pod in five with a native sidecar, one in twenty with priority 1000): its larger
shapes would not let 30 pods per node fit. What consolidation adds: every pod runs (bound, `status.phase: Running`), owned by a
ReplicaSet of 50 pods of one shape; a DaemonSet's 100m agent on every node (kube-system); one ReplicaSet
in two behind a Service (PodTopologySpread's system default constraints apply), one in five with a zone
spread constraint (DoNotSchedule), one in four with a preferred hostname anti-affinity; a
PodDisruptionBudget allowing 25 disruptions for one ReplicaSet in twenty; a pod without controller on one
node in fifty (that node stays). Pods are bound at random where they fit, nodes filled unevenly (each up
to between 30 % and 100 % of its cpu, beyond only where no node has room left): room to consolidate, and
nodes that cannot go. kube-scheduler's
default profile and adaptive sampling (no configuration in the file).

Each size is `kubefit consolidate -f FILE -o json` under `prlimit --as` (8 GiB), measured by bench_cli.py's
`timed`: wall seconds from process start to its exit, CPU seconds (user + system: the figure to compare on a
shared machine) and the process's own peak RSS; the load average before and after is printed beside them.

    .venv/bin/python benchmarks/bench_consolidate.py --sizes 1000x30000 5000x150000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import (  # noqa: E402 - the generators and the measurement bench_cli.py uses
    KUBEFIT,
    NODE_TYPES,
    POD_SHAPES,
    WORK,
    figures,
    node_manifest,
    pod_manifest,
    timed,
)

PER_REPLICA_SET = 50
AGENT = (100, 128 << 20)  # the DaemonSet agent's cpu (milli) and memory (bytes) on every node
LIMIT_BYTES = 8 << 30  # prlimit --as: a run that needs more fails instead of pushing the machine into swap
SHAPES = (0, 1, 2, 3, 6)  # bench_cli.POD_SHAPES: 100m, 250m, 500m, 1 cpu, no requests
TARGETS = {(1000, 30000): 30.0, (5000, 150000): 300.0}  # seconds, issue 24
_UNITS = {"m": 1, "Mi": 1 << 20, "Gi": 1 << 30}


def _amount(text: str, *, cpu: bool) -> int:
    """A shape's cpu in millicores or memory in bytes (the shapes' own spellings: "250m", "2", "512Mi", "8Gi")."""
    if not text:
        return 0
    for suffix, unit in _UNITS.items():
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * unit
    return int(text) * (1000 if cpu else 1)


def _capacity(kind: int) -> np.ndarray:
    """A node type's (cpu milli, memory bytes, pods, gpus) less the agent."""
    _, cpu, memory, pods, gpus = NODE_TYPES[kind]
    return np.array([_amount(cpu, cpu=True) - AGENT[0], _amount(memory, cpu=False) - AGENT[1], int(pods) - 1, gpus],
                    dtype=np.int64)


def _demand(shape: int, sidecar: bool) -> np.ndarray:
    """A pod's (cpu, memory, 1, gpus) as the scheduler counts it (a native sidecar adds its requests)."""
    _, cpu, memory, gpus = POD_SHAPES[shape]
    extra = (50, 64 << 20) if sidecar else (0, 0)
    return np.array([_amount(cpu, cpu=True) + extra[0], _amount(memory, cpu=False) + extra[1], 1, gpus],
                    dtype=np.int64)


def _agent(node: dict) -> dict:
    name = node["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"agent-{name}", "namespace": "kube-system", "labels": {"app": "agent"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                              "uid": "ds-agent", "controller": True}]},
            "spec": {"nodeName": name, "containers": [{"name": "agent", "image": "registry.example/agent:1",
                                                       "resources": {"requests": {"cpu": f"{AGENT[0]}m",
                                                                                  "memory": "128Mi"}}}]},
            "status": {"phase": "Running"}}


def _app_objects(a: int, labels: dict) -> list[dict]:
    """The ReplicaSet of app `a`, its Service (one in two) and PodDisruptionBudget (one in twenty)."""
    name = f"app{a}"
    docs: list[dict] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                         "metadata": {"name": name, "namespace": "default", "uid": f"rs-{a}"},
                         "spec": {"replicas": PER_REPLICA_SET, "selector": {"matchLabels": labels},
                                  "template": {"metadata": {"labels": labels},
                                               "spec": {"containers": [{"name": "app"}]}}}}]
    if a % 2 == 0:
        docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
                     "spec": {"selector": labels}})
    if a % 20 == 0:
        docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                     "metadata": {"name": name, "namespace": "default"},
                     "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": labels}},
                     "status": {"disruptionsAllowed": 25, "currentHealthy": PER_REPLICA_SET,
                                "desiredHealthy": PER_REPLICA_SET - 25, "expectedPods": PER_REPLICA_SET}})
    return docs


def _constraints(a: int, labels: dict) -> dict:
    """App `a`'s spread constraint (one in five) and preferred anti-affinity (one in four)."""
    spec: dict = {}
    if a % 5 == 0:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": labels}}]
    if a % 4 == 1:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": labels},
                                                "topologyKey": "kubernetes.io/hostname"}}]}}
    return spec


def snapshot(nodes_n: int, pods_n: int, seed: int = 1) -> dict:
    """The seeded `kind: List` (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(len(NODE_TYPES), size=nodes_n, p=[t[0] for t in NODE_TYPES])
    nodes = [node_manifest(i, int(k)) for i, k in enumerate(kinds)]
    room = np.array([_capacity(int(k)) for k in kinds])
    budget = room.copy()  # room up to the share of its cpu each node is filled to
    budget[:, 0] = (room[:, 0] * rng.uniform(0.3, 1.0, size=nodes_n)).astype(np.int64)
    items: list[dict] = [*nodes, *(_agent(n) for n in nodes)]
    apps = (pods_n + PER_REPLICA_SET - 1) // PER_REPLICA_SET
    weights = np.array([POD_SHAPES[k][0] for k in SHAPES])
    shapes = np.array(SHAPES)[rng.choice(len(SHAPES), size=apps, p=weights / weights.sum())]
    sidecar = rng.random(pods_n) < 0.2
    priority = np.where(rng.random(pods_n) < 0.05, 1000, 0)
    placed = 0
    for a in range(apps):
        labels = {"app": f"app{a}"}
        items += _app_objects(a, labels)
        extra = _constraints(a, labels)
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"app{a}", "uid": f"rs-{a}", "controller": True}
        for _ in range(min(PER_REPLICA_SET, pods_n - a * PER_REPLICA_SET)):
            i = placed
            placed += 1
            need = _demand(int(shapes[a]), bool(sidecar[i]))
            fits = np.flatnonzero((budget >= need).all(axis=1))
            if not len(fits):
                fits = np.flatnonzero((room >= need).all(axis=1))
            if not len(fits):
                continue  # fits nowhere any more: not part of today's cluster (`podsRunning` says so)
            node = int(fits[rng.integers(len(fits))])
            room[node] -= need
            budget[node] -= need
            pod = pod_manifest(i, int(shapes[a]), bool(sidecar[i]), int(priority[i]))
            pod["metadata"].update(labels=labels, ownerReferences=[owner])
            pod["spec"].update(nodeName=nodes[node]["metadata"]["name"], **extra)
            pod["status"] = {"phase": "Running"}
            items.append(pod)
    for i in range(0, nodes_n, 50):  # a pod without controller keeps its node
        bare = pod_manifest(pods_n + i, 0, False, 0)
        bare["metadata"]["name"] = f"debug-{i:06d}"
        bare["spec"]["nodeName"] = nodes[i]["metadata"]["name"]
        bare["status"] = {"phase": "Running"}
        items.append(bare)
    return {"apiVersion": "v1", "kind": "List", "items": items}


def snapshot_file(nodes_n: int, pods_n: int) -> Path:
    """Write (once) the snapshot; its path."""
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"consolidate-{nodes_n}x{pods_n}.json"
    if not path.exists():
        path.write_text(json.dumps(snapshot(nodes_n, pods_n)))
    return path


def run(nodes_n: int, pods_n: int) -> dict:
    path = snapshot_file(nodes_n, pods_n)
    running = sum(1 for d in json.loads(path.read_text())["items"] if d["kind"] == "Pod")
    load = os.getloadavg()[0]
    seconds, cpu, rss, out = timed(["prlimit", f"--as={LIMIT_BYTES}", *KUBEFIT, "consolidate", "-f", str(path),
                                    "-o", "json"])
    data = json.loads(out)
    target = TARGETS.get((nodes_n, pods_n))
    return {"nodes": nodes_n, "pods": pods_n, "podsRunning": running, **figures(seconds, cpu, rss),
            "target": target, "met": None if target is None else seconds <= target,
            "load": [round(load, 1), round(os.getloadavg()[0], 1)], "removable": len(data["removable"]),
            "nodesAfter": data["nodesAfter"], "lowerBound": data["lowerBound"], "trials": data["trials"],
            "moves": len(data["moves"]), "blocked": len(data["blocked"]),
            "verification": data["verification"]["simulations"], "dropped": len(data["verification"]["dropped"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["1000x30000"], help="NODESxPODS, e.g. 5000x150000")
    args = parser.parse_args()
    for size in args.sizes:
        n, p = (int(x) for x in size.split("x"))
        print(json.dumps(run(n, p)), flush=True)


if __name__ == "__main__":
    main()
