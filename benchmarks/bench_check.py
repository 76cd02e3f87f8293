"""Benchmark `kubefit check` as a platform team runs it in a pull request: a GitOps repository, in a fresh process.

The repository is generated here, seeded, as such a team holds it (nothing in it is running yet: every pod
is one a controller will create):

- `cluster/nodes/zone-{a,b,c}.yaml`: the node pools as Node YAML, three zones, four node types (general
  16 cpu / 64 GiB, memory 8 cpu / 64 GiB, large 32 cpu / 128 GiB, GPU 32 cpu / 192 GiB with 4 GPUs and a
  `nvidia.com/gpu` NoSchedule taint);
- `cluster/scheduler.yaml`: a KubeSchedulerConfiguration (MostAllocated, adaptive sampling);
- `cluster/priority.yaml`: two PriorityClasses;
- `cluster/apps/<namespace>.yaml`: a Namespace and its Deployments (requests of 250m to 8 cpu, 1.75 on average: more than the nodes hold; one in three
  spread over zones with DoNotSchedule, one in four with a preferred hostname anti-affinity, one in twenty
  with a PriorityClass, one in six with a PodDisruptionBudget), StatefulSets, Jobs, and the platform's
  node agent DaemonSet;
- `templates/zone-{a,b,c}.yaml`: the node the pool would add, one template per zone (for `maxNodesAdded`);
- `base/`: the same repository before the change (the candidate raises one Deployment's cpu request and
  replicas and adds a Deployment).

Each assertion kind is timed alone, `kubefit check -f cluster/ -R ... -o json`, in a fresh process, by
bench_cli.py's `timed` (wall seconds from process start to exit, CPU seconds, the process's own peak RSS),
under `prlimit --as` 8 GiB; the load average is printed beside each figure (the machine is shared: CPU seconds
are the figures that compare).

    .venv/bin/python benchmarks/bench_check.py --size 2000x20000 [--runs simulate baseline plan capacity consolidate]
    .venv/bin/python benchmarks/bench_check.py --generate-only --size 200x2000    # write the repository only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import _MEASURE, KUBEFIT, ROOT, _child_env, figures  # noqa: E402 - the measurement bench_cli.py uses

WORK = Path(os.environ.get("KUBEFIT_BENCH_DIR", "/tmp/kubefit-bench")) / "check"
ZONES = ("a", "b", "c")
NODE_TYPES = [  # (weight, type, cpu, memory, gpus)
    (0.55, "general", "16", "64Gi", 0), (0.25, "memory", "8", "64Gi", 0), (0.15, "large", "32", "128Gi", 0),
    (0.05, "gpu", "32", "192Gi", 4)]
POD_SHAPES = [  # (weight, cpu, memory): 1.75 cpu a pod on average, more than the nodes without GPUs hold
    (0.20, "250m", "512Mi"), (0.20, "500m", "1Gi"), (0.20, "1", "2Gi"), (0.20, "2", "4Gi"), (0.15, "4", "8Gi"),
    (0.05, "8", "16Gi")]
NAMESPACES = ("shop", "staging", "data", "search", "payments", "ml")
GPU = "nvidia.com/gpu"
LIMIT_BYTES = 8 << 30  # prlimit --as: a run that needs more fails instead of pushing the machine into swap
TARGETS = {"simulate": 10.0, "baseline": 15.0, "baseline-workers": 15.0, "plan": 30.0, "capacity": 30.0,
           "consolidate": 30.0}  # issue 44


def node(name: str, kind: int, zone: str) -> dict:
    _, family, cpu, memory, gpus = NODE_TYPES[kind]
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi", **({GPU: str(gpus)} if gpus else {})}
    spec = {"taints": [{"key": GPU, "value": "present", "effect": "NoSchedule"}]} if gpus else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{zone}", "node.kubernetes.io/pool": family}},
        **({"spec": spec} if spec else {}), "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def container(cpu: str, memory: str, gpus: int = 0) -> dict:
    requests = {"cpu": cpu, "memory": memory, **({GPU: str(gpus)} if gpus else {})}
    return {"name": "app", "image": "registry.example/app:1", "resources": {"requests": requests}}


def template(app: str, spec: dict, labels: dict | None = None) -> dict:
    return {"metadata": {"labels": {"app": app, **(labels or {})}}, "spec": spec}


def deployment(ns: str, name: str, replicas: int, shape: int, rng: np.random.Generator) -> list[dict]:
    """A Deployment (and its PodDisruptionBudget, one in six), with the spread, anti-affinity and priority the
    module's docstring gives."""
    _, cpu, memory = POD_SHAPES[shape]
    spec: dict = {"containers": [container(cpu, memory)]}
    draw = rng.random(4)
    if draw[0] < 1 / 3:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": name}}}]
    if draw[1] < 1 / 4:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                               "labelSelector": {"matchLabels": {"app": name}}}}]}}
    if draw[2] < 1 / 20:
        spec["priorityClassName"] = "critical"
    out = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": template(name, spec)}}]
    if draw[3] < 1 / 6:
        out.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": ns},
                    "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": name}}}})
    return out


def statefulset(ns: str, name: str, replicas: int) -> dict:
    spec = {"containers": [container("2", "8Gi")],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": name}}}]}}}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "podManagementPolicy": "Parallel", "template": template(name, spec)}}


def job(ns: str, name: str, parallelism: int, gpus: int) -> dict:
    spec: dict = {"containers": [container("4", "16Gi", gpus)], "restartPolicy": "Never"}
    if gpus:
        spec["tolerations"] = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": ns},
            "spec": {"parallelism": parallelism, "completions": parallelism, "template": template(name, spec)}}


def agent() -> dict:
    spec = {"containers": [container("100m", "128Mi")], "tolerations": [{"operator": "Exists"}],
            "priorityClassName": "system-node-critical"}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "node-agent", "namespace": "platform"},
            "spec": {"selector": {"matchLabels": {"app": "node-agent"}}, "template": template("node-agent", spec)}}


SCHEDULER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
             "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
                 "name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
PRIORITY = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "critical"},
             "value": 100000}, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": "batch"}, "value": -10, "preemptionPolicy": "Never"}]


def dump(path: Path, docs: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    path.write_text(yaml.dump_all(docs, Dumper=dumper, sort_keys=False))


def apps(pods: int, rng: np.random.Generator) -> dict[str, list[dict]]:
    """The workloads per namespace: Deployments of 5 to 60 replicas until `pods` pods (less one StatefulSet and
    one GPU Job per namespace)."""
    out: dict[str, list[dict]] = {ns: [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}]
                                  for ns in NAMESPACES}
    left = pods
    for ns in NAMESPACES:
        out[ns].append(statefulset(ns, "db", 5))
        out[ns].append(job(ns, "train", 4, 2 if ns == "ml" else 0))
        left -= 9
    i = 0
    while left > 0:
        ns = NAMESPACES[i % len(NAMESPACES)]
        replicas = int(min(left, rng.integers(5, 61)))
        shape = int(rng.choice(len(POD_SHAPES), p=[s[0] for s in POD_SHAPES]))
        out[ns] += deployment(ns, f"svc-{i:04d}", replicas, shape, rng)
        left -= replicas
        i += 1
    return out


def repository(nodes: int, pods: int, seed: int = 7) -> Path:
    """Write (once) the repository of `nodes` nodes and about `pods` pods (besides the node agents); its root."""
    root = WORK / f"repo-{nodes}x{pods}"
    if (root / "kubefit-check.yaml").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(seed)
    kinds = rng.choice(len(NODE_TYPES), size=nodes, p=[t[0] for t in NODE_TYPES])
    for z, zone in enumerate(ZONES):
        dump(root / "base" / "nodes" / f"zone-{zone}.yaml",
             [node(f"{NODE_TYPES[int(k)][1]}-{zone}-{i:05d}", int(k), zone) for i, k in enumerate(kinds) if i % 3 == z])
        dump(root / "templates" / f"zone-{zone}.yaml", [node(f"new-{zone}", 0, zone)])
    dump(root / "base" / "scheduler.yaml", [SCHEDULER])
    dump(root / "base" / "priority.yaml", PRIORITY)
    workloads = apps(pods, rng)
    workloads["platform"] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "platform"}}, agent()]
    for ns, docs in workloads.items():
        dump(root / "base" / "apps" / f"{ns}.yaml", docs)
    shutil.copytree(root / "base", root / "cluster")
    changed = root / "cluster" / "apps" / "shop.yaml"
    docs = list(yaml.safe_load_all(changed.read_text()))
    web = next(d for d in docs if d["kind"] == "Deployment")
    web["spec"]["replicas"] += 10
    web["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1500m"
    docs += deployment("shop", "checkout", 30, 3, np.random.default_rng(seed + 1))
    dump(changed, docs)
    (root / "kubefit-check.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kubefit.io/v1alpha1", "kind": "SchedulingExpectations", "metadata": {"name": "bench"},
        "files": ["cluster/"], "baseline": ["base/"], "nodeTemplates": [f"templates/zone-{z}.yaml" for z in ZONES],
        "assertions": {"maxPending": "baseline"}}, sort_keys=False))
    return root


RUNS = {  # the assertion options each run gives (besides -f cluster/ -R); {root}: the repository
    "simulate": ["--max-pending", "0", "--fully-placed", "shop/deployment/svc-0000", "--min-allocation", "cpu=50"],
    "baseline": ["--baseline", "{root}/base", "--max-pending", "baseline", "--max-pod-moves", "100"],
    # the same with the baseline read and simulated on a local Dask worker beside the candidate (check --workers)
    "baseline-workers": ["--baseline", "{root}/base", "--max-pending", "baseline", "--max-pod-moves", "100",
                         "--workers", "2"],
    "plan": ["--max-nodes-added", "0", *(f"--node-template={{root}}/templates/zone-{z}.yaml" for z in ZONES)],
    "capacity": ["--min-capacity", "shop/deployment/svc-0000=10"],
    "consolidate": ["--min-removable-nodes", "1"],
}


def run(root: Path, name: str) -> dict:
    load = os.getloadavg()[0]
    args = ["prlimit", f"--as={LIMIT_BYTES}", *KUBEFIT, "check", "-f", str(root / "cluster"), "-R",
            *(a.format(root=root) for a in RUNS[name]), "-o", "json"]
    seconds, cpu, rss, out = timed_any(args)
    data = json.loads(out)
    return {"run": name, **figures(seconds, cpu, rss), "target": TARGETS[name], "load": [round(load, 1),
            round(os.getloadavg()[0], 1)], "answers": {o["title"]: o["actual"] for o in data["assertions"]}}


def timed_any(args: list[str]) -> tuple[float, float, float, bytes]:
    """bench_cli's `timed`, exit 1 (an assertion that does not hold) accepted: the answer is what is measured."""
    import subprocess

    proc = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True, cwd=ROOT, env=_child_env())
    err = proc.stderr.decode()
    _, rc, seconds, cpu, rss_kib = err.rstrip().rsplit("\n", 1)[-1].split()
    if rc not in ("0", "1"):
        raise SystemExit(f"{' '.join(args)} exited {rc}: {err[-2000:]}")
    return float(seconds), float(cpu), int(rss_kib) / 1024, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2000x20000", help="NODESxPODS")
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--generate-only", action="store_true")
    args = parser.parse_args()
    n, p = (int(x) for x in args.size.split("x"))
    root = repository(n, p)
    if args.generate_only:
        print(root)
        return
    for name in args.runs:
        for _ in range(args.repeat):
            print(json.dumps(run(root, name)), flush=True)


if __name__ == "__main__":
    main()
