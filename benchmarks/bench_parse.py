"""Benchmark the parsing layer (text → documents) on a 5,000-node × 5,000-pod scenario, YAML and JSON.

"plain" is what kubefit did before the reliability bounds (libyaml's CSafeLoader through
`yaml.load_all`, `json.loads`); "checked" is `kubefit.manifests.parse.parse_bodies` (duplicate keys, int64
integers, depth and alias bounds). Best of `--repeat` runs each, seconds.

    .venv/bin/python benchmarks/bench_parse.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import time

import yaml

from kubefit.manifests.parse import parse_bodies


def scenario(nodes: int, pods: int) -> list[dict]:
    """Nodes with labels, taints and conditions; bound pods with two containers each (kubectl-like)."""
    out: list[dict] = []
    for i in range(nodes):
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}",
                                                                   "topology.kubernetes.io/zone": f"z{i % 3}"}},
                    "spec": {"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
                             if i % 10 == 0 else []},
                    "status": {"capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                               "allocatable": {"cpu": "31500m", "memory": "125Gi", "pods": "110"},
                               "conditions": [{"type": "Ready", "status": "True"}]}})
    for j in range(pods):
        containers = [{"name": f"c{k}", "image": "registry.k8s.io/pause:3.10",
                       "resources": {"requests": {"cpu": "250m", "memory": "512Mi"},
                                     "limits": {"cpu": "500m", "memory": "1Gi"}}} for k in range(2)]
        out.append({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": f"pod-{j}", "namespace": "default", "labels": {"app": f"a{j % 50}"}},
                    "spec": {"nodeName": f"node-{j % nodes}", "priority": 0, "containers": containers},
                    "status": {"phase": "Running"}})
    return out


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    docs = scenario(args.nodes, args.pods)
    texts = {"YAML": yaml.safe_dump_all(docs, sort_keys=False),
             "JSON": json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2)}
    plain = {"YAML": lambda t: list(yaml.load_all(t, Loader=yaml.CSafeLoader)), "JSON": json.loads}
    print(f"{args.nodes} nodes × {args.pods} pods, best of {args.repeat}")
    print(f"{'format':6} {'MiB':>6} {'plain s':>8} {'checked s':>10} {'ratio':>6}")
    for fmt, text in texts.items():
        before = best(lambda fmt=fmt, text=text: plain[fmt](text), args.repeat)
        after = best(lambda text=text: parse_bodies(text, "bench"), args.repeat)
        print(f"{fmt:6} {len(text) / 2**20:6.1f} {before:8.2f} {after:10.2f} {after / before:6.2f}")


if __name__ == "__main__":
    main()
