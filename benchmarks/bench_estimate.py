"""Benchmark `estimate` over a fleet of 100 member clusters × 5,000 nodes (goal: under 1 s).

Measures, separately:
  1. Karmada's general estimator (summary + model path) for 100 Cluster objects;
  2. the exact node-level count over 100 members of 5,000 nodes each (numpy, arrays compiled once);
  3. compiling one member (5,000 Node objects and 20,000 bound Pods) into those arrays.
Prints wall time and peak traced memory of each. Run: `python benchmarks/bench_estimate.py`.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.quantity import parse_quantity
from kubefit.manifests.karmada import decode_cluster
from kubefit.multicluster.estimate import MemberState, exact_counts, max_available_replicas, member_state

CLUSTERS, NODES, PODS_PER_NODE = 100, 5_000, 4
REQUEST = {"cpu": parse_quantity("500m"), "memory": parse_quantity("1Gi")}


def fleet(rng: np.random.Generator) -> list:
    """100 Karmada clusters, half with graded resource models."""
    out = []
    for i in range(CLUSTERS):
        status = {"resourceSummary": {
            "allocatable": {"cpu": str(NODES * 32), "memory": f"{NODES * 128}Gi", "pods": str(NODES * 110)},
            "allocated": {"cpu": str(int(rng.integers(0, NODES * 30))), "memory": f"{int(rng.integers(0, NODES * 100))}Gi",
                          "pods": str(NODES * PODS_PER_NODE)}}}
        spec: dict = {"syncMode": "Push"}
        if i % 2:
            spec["resourceModels"] = [{"grade": g, "ranges": [{"name": "cpu", "min": str(2**g if g else 0), "max": str(2**(g + 1))},
                                                              {"name": "memory", "min": f"{4**g if g else 0}Gi",
                                                               "max": f"{4**(g + 1)}Gi"}]} for g in range(6)]
            status["resourceSummary"]["allocatableModelings"] = [
                {"grade": g, "count": int(c)} for g, c in enumerate(rng.multinomial(NODES, [1 / 6] * 6))]
        out.append(decode_cluster({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                                   "metadata": {"name": f"member{i}"}, "spec": spec, "status": status}))
    return out


def member_arrays(rng: np.random.Generator) -> MemberState:
    """One member's free resources as the compiled arrays (cpu millicores, memory bytes)."""
    cpu = rng.integers(0, 32_000, NODES)
    mem = rng.integers(0, 128 * 2**30, NODES)
    free = np.stack([cpu, mem], axis=1).astype(np.int64)
    return MemberState([f"n{i}" for i in range(NODES)], ["cpu", "memory"], free, np.ones_like(free, dtype=bool),
                       np.full(NODES, 110 - PODS_PER_NODE, dtype=np.int64))


def measure(label: str, fn):  # noqa: ANN001, ANN201
    tracemalloc.start()
    t0 = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<58} {elapsed * 1000:9.1f} ms   peak {peak / 2**20:7.1f} MiB")
    return result, elapsed


def main() -> None:
    rng = np.random.default_rng(7)
    clusters = fleet(rng)
    members = [member_arrays(rng) for _ in range(CLUSTERS)]
    _, t_general = measure(f"Karmada general estimate, {CLUSTERS} clusters",
                           lambda: max_available_replicas(clusters, REQUEST))
    totals, t_exact = measure(f"exact node-level count, {CLUSTERS} × {NODES:,} nodes",
                              lambda: [int(exact_counts(m, REQUEST).sum()) for m in members])
    nodes = [Node(name=f"n{i}", allocatable={"cpu": 32 * 10**9, "memory": 128 * 2**30 * 10**9, "pods": 110 * 10**9})
             for i in range(NODES)]
    pods = [Pod(name=f"p{i}-{j}", node_name=f"n{i}", containers=(Container("c", {"cpu": 10**9, "memory": 2**30 * 10**9}),))
            for i in range(NODES) for j in range(PODS_PER_NODE)]
    measure(f"compile one member ({NODES:,} nodes, {len(pods):,} pods)", lambda: member_state(nodes, pods, ["cpu", "memory"]))
    total = t_general + t_exact
    print(f"estimate total (general + exact): {total * 1000:.1f} ms — goal < 1000 ms: {'met' if total < 1 else 'MISSED'}")
    print(f"exact replicas fleet-wide: {sum(totals):,}")


if __name__ == "__main__":
    main()
