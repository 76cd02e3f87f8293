"""Benchmark `kubefit simulate` under kube-scheduler's full default profile, end to end from a JSON file.

Every node is evaluated (`percentageOfNodesToScore: 100`), ties go to the first node (`--tie-break first`).
Three queues over N nodes in three zones (hostname and zone labels, one of four node types):

- `uniform` (issue 10's): P pending pods owned by ReplicaSets of 100 pods that a Service selects, so
  PodTopologySpread applies its system-default constraints; one app in five carries an explicit zone spread
  (DoNotSchedule, maxSkew 1), one in four a preferred pod anti-affinity on the hostname. Everything fits.
- `realistic` (issue 23's replay): P pods owned by ReplicaSets of 1 to 100 replicas in four namespaces,
  half of the ReplicaSets behind a Service, the system-default spread on every pod; a few carry an explicit
  zone spread, a preferred or required hostname anti-affinity, or a zone affinity to another app; they
  arrive ReplicaSet after ReplicaSet (`creationTimestamp`). Their CPU requests add up to `FILL` of the
  cluster's, and two ReplicaSets can never fit (more CPU than any node has; a node pool no node has), so
  about 3 % of the pods end pending, each after DefaultPreemption's dry run.
- `realistic-priorities`: the same with two PriorityClasses (a third of the ReplicaSets `batch`, the others
  `online`): late `online` pods preempt `batch` ones, and the dry run finds victims on some nodes only.
- `production` (issue 37's production-shaped queue): N empty nodes of six instance types (2–16 cores, 8–64 GiB,
  29–234 pods) in three zones holding images of 0.3 MB–1.6 GB, P pending pods in 40 groups (ReplicaSets and
  StatefulSets behind Services) in four labelled namespaces, with zone and hostname spread, required and
  preferred anti-affinity, host ports, claims of a zonal WaitForFirstConsumer class and pre-bound zonal
  volumes, priorities 0–10,000 (`--queues production`).

Each run is one `kubefit simulate` process, timed from its start to its answer (wall and CPU seconds, its
own peak RSS: bench_cli.py's `timed`). `--keep DIR` writes each scenario and its output there
(`check_default_profile_outputs.py` compares the outputs of two trees).

    .venv/bin/python benchmarks/bench_default_profile.py --sizes 1000x10000 5000x50000
    .venv/bin/python benchmarks/bench_default_profile.py --queues realistic --sizes 1000x10000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from bench_cli import KUBEFIT, WORK, figures, timed

NODE_TYPES = [("16", "64Gi", "110"), ("8", "32Gi", "110"), ("32", "128Gi", "250"), ("4", "16Gi", "58")]
POD_SHAPES = [("100m", "128Mi"), ("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi")]
ZONES = ("zone-a", "zone-b", "zone-c")
PER_REPLICA_SET = 100
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "percentageOfNodesToScore": 100, "profiles": [{"schedulerName": "default-scheduler"}]}
QUEUES = ("uniform", "realistic", "realistic-priorities", "production")
HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"

# realistic queue: ReplicaSet sizes and pod shapes (weight, value), namespaces, how full the queue makes the cluster
REPLICAS = [(0.20, 1), (0.20, 2), (0.15, 3), (0.15, 5), (0.12, 10), (0.08, 20), (0.06, 50), (0.04, 100)]
SHAPES = [(0.25, 100, 128), (0.25, 250, 512), (0.20, 500, 1024), (0.15, 1000, 2048), (0.10, 2000, 4096),
          (0.05, 4000, 8192)]  # (weight, millicores, MiB) before scaling to FILL
NAMESPACES = ("default", "shop", "payments", "analytics")
FILL = 1.10  # the queue's CPU requests over the cluster's allocatable CPU
MEMORY_FILL = 0.7
EPOCH = 1_800_000_000  # 2027-01-15: the first ReplicaSet's creationTimestamp, one more second per ReplicaSet
PRIORITY_CLASSES = (("online", 1000), ("batch", 100))


def nodes_of(nodes: int, rng: np.random.Generator) -> list[dict]:
    """`nodes` Nodes of the four types, zones in turn."""
    out = []
    for i in range(nodes):
        cpu, memory, max_pods = NODE_TYPES[int(rng.integers(len(NODE_TYPES)))]
        alloc = {"cpu": cpu, "memory": memory, "pods": max_pods}
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": f"node-{i:05d}", "labels": {HOSTNAME: f"node-{i:05d}", ZONE: ZONES[i % 3]}},
                    "status": {"allocatable": alloc, "capacity": alloc}})
    return out


def scenario(nodes: int, pods: int, seed: int = 0) -> list[dict]:
    """The `uniform` queue: configuration, Services, ReplicaSets, nodes, pending pods."""
    rng = np.random.default_rng(seed)
    docs: list[dict] = [CONFIG]
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
    docs += nodes_of(nodes, rng)
    for i in range(pods):
        a = i // PER_REPLICA_SET
        cpu, memory = POD_SHAPES[a % len(POD_SHAPES)]
        spec: dict = {"containers": [{"name": "app", "image": f"registry.example.com/app{a}:1",
                                      "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
        if a % 5 == 0:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE,
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": f"app{a}"}}}]
        if a % 4 == 1:
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": f"app{a}"}},
                                                    "topologyKey": HOSTNAME}}]}}
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"app{a}-{i:06d}", "namespace": "default", "labels": {"app": f"app{a}"},
                                  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                       "name": f"app{a}", "uid": f"rs-{a}", "controller": True}]},
                     "spec": spec})
    return docs


def _pick(rng: np.random.Generator, table: list[tuple], size: int) -> np.ndarray:
    """`size` row indices of `table`, drawn by its first column's weights."""
    weights = np.array([row[0] for row in table], dtype=float)
    return rng.choice(len(table), size=size, p=weights / weights.sum())


def _sizes(pods: int, rng: np.random.Generator) -> list[int]:
    """ReplicaSet sizes adding up to `pods`."""
    sizes: list[int] = []
    while sum(sizes) < pods:
        sizes.append(min(REPLICAS[int(_pick(rng, REPLICAS, 1)[0])][1], pods - sum(sizes)))
    return sizes


def _group_spec(g: int, app: str, rng: np.random.Generator, apps: list[tuple[str, str]], size: int) -> dict:
    """The pod spec's scheduling constraints of ReplicaSet `g` (most carry none)."""
    spec: dict = {}
    draw = rng.random()
    own = {"matchLabels": {"app": app}}
    if draw < 0.05:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": own}]
    elif draw < 0.15:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": own, "topologyKey": HOSTNAME}}]}}
    elif draw < 0.18 and size <= 20:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": own, "topologyKey": HOSTNAME}]}}
    elif draw < 0.20 and apps:
        other_ns, other = apps[int(rng.integers(len(apps)))]
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": other}},
                                               "namespaces": [other_ns], "topologyKey": ZONE}}]}}
    return spec


def realistic(nodes: int, pods: int, priorities: bool = False, seed: int = 0) -> list[dict]:
    """The `realistic` queue (`realistic-priorities` with `priorities`): see the module docstring."""
    rng = np.random.default_rng(seed)
    node_docs = nodes_of(nodes, rng)
    cluster_cpu = sum(int(n["status"]["allocatable"]["cpu"]) * 1000 for n in node_docs)
    cluster_mib = sum(int(n["status"]["allocatable"]["memory"][:-2]) * 1024 for n in node_docs)
    sizes = _sizes(pods, rng)
    shapes = _pick(rng, SHAPES, len(sizes))
    weight_cpu = sum(SHAPES[s][1] * n for s, n in zip(shapes, sizes, strict=True))
    weight_mib = sum(SHAPES[s][2] * n for s, n in zip(shapes, sizes, strict=True))
    cpu_scale, mib_scale = FILL * cluster_cpu / weight_cpu, MEMORY_FILL * cluster_mib / weight_mib
    never = {len(sizes) // 3: "oversized", 2 * len(sizes) // 3: "no-pool"}  # two ReplicaSets that never fit
    docs: list[dict] = [CONFIG]
    if priorities:
        docs += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                  "value": value} for name, value in PRIORITY_CLASSES]
    pod_docs: list[dict] = []
    apps: list[tuple[str, str]] = []
    for g, (size, shape) in enumerate(zip(sizes, shapes, strict=True)):
        app, ns = f"app{g}", NAMESPACES[g % len(NAMESPACES)]
        labels = {"app": app}
        created = f"{np.datetime64(EPOCH + g, 's')}Z"
        cpu = max(10, round(SHAPES[shape][1] * cpu_scale / 10) * 10)
        requests = {"cpu": f"{cpu}m", "memory": f"{max(16, round(SHAPES[shape][2] * mib_scale))}Mi"}
        spec = _group_spec(g, app, rng, apps, size)
        if never.get(g) == "oversized":
            requests["cpu"] = "48"
        elif never.get(g) == "no-pool":
            spec["nodeSelector"] = {"example.com/pool": "gpu"}
        if priorities:
            spec["priorityClassName"] = "batch" if g % 3 == 2 else "online"
        spec["containers"] = [{"name": "app", "image": f"registry.example.com/{app}:1",
                               "resources": {"requests": requests}}]
        if g % 2 == 0:
            docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": ns},
                         "spec": {"selector": labels, "ports": [{"port": 80}]}})
        uid = f"rs-{g}"
        docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "metadata": {"name": app, "namespace": ns, "uid": uid, "creationTimestamp": created},
                     "spec": {"replicas": size, "selector": {"matchLabels": labels},
                              "template": {"metadata": {"labels": labels}, "spec": spec}}})
        owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app, "uid": uid, "controller": True}]
        pod_docs += [{"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"{app}-{r:05d}", "namespace": ns, "labels": labels,
                                   "creationTimestamp": created, "ownerReferences": owner},
                      "spec": spec} for r in range(size)]
        apps.append((ns, app))
    return docs + node_docs + pod_docs


# production queue (issue 37): six instance types (cores, memory, max pods), 40 groups, four labelled namespaces
INSTANCE_TYPES = [("2", "8Gi", "29"), ("4", "16Gi", "58"), ("8", "32Gi", "110"), ("16", "64Gi", "234"),
                  ("4", "32Gi", "58"), ("8", "64Gi", "110")]
GROUPS = 40
IMAGE_SIZES = (300_000, 20_000_000, 150_000_000, 600_000_000, 1_600_000_000)  # 0.3 MB … 1.6 GB
PRODUCTION_NAMESPACES = (("web", "frontend"), ("data", "storage"), ("batch", "jobs"), ("platform", "system"))


def _production_nodes(nodes: int, rng: np.random.Generator) -> list[dict]:
    """`nodes` empty Nodes of the six instance types in three zones, each holding the images of some groups."""
    out = []
    for i in range(nodes):
        cpu, memory, max_pods = INSTANCE_TYPES[int(rng.integers(len(INSTANCE_TYPES)))]
        alloc = {"cpu": cpu, "memory": memory, "pods": max_pods, "ephemeral-storage": "100Gi"}
        held = sorted({int(g) for g in rng.integers(GROUPS, size=int(rng.integers(0, 6)))})
        images = [{"names": [f"registry.example.com/group{g}:1"], "sizeBytes": IMAGE_SIZES[g % len(IMAGE_SIZES)]}
                  for g in held]
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": f"node-{i:05d}", "labels": {
                        HOSTNAME: f"node-{i:05d}", ZONE: ZONES[i % 3],
                        "node.kubernetes.io/instance-type": f"type-{cpu}-{memory}"}},
                    "status": {"allocatable": alloc, "capacity": alloc, "images": images}})
    return out


def _production_group(g: int, size: int, ns: str, rng: np.random.Generator) -> tuple[dict, list[str]]:
    """Group g's pod spec (its constraints, one in four of each kind) and the kinds of claim its pods use."""
    app = f"group{g}"
    own = {"matchLabels": {"app": app}}
    cpu = [100, 250, 500, 750, 1000][g % 5]  # about 75 % of the cluster's cpu: most pods fit
    memory = [128, 512, 1024, 2048, 4096][(g // 2) % 5]
    container = {"name": "app", "image": f"registry.example.com/{app}:1",
                 "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}}}
    spec: dict = {"priority": int(rng.integers(0, 10_001)) // 1000 * 1000, "containers": [container]}
    kind = g % 8
    if kind == 0:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": own}]
    elif kind == 1:
        spec["topologySpreadConstraints"] = [{"maxSkew": 2, "topologyKey": HOSTNAME,
                                              "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": own}]
    elif kind == 2 and size <= 300:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": own, "topologyKey": HOSTNAME}]}}
    elif kind == 3:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": own, "topologyKey": HOSTNAME}}]}}
    elif kind == 4:
        container["ports"] = [{"containerPort": 8080 + g, "hostPort": 8080 + g}]
    claims = ["zonal"] if g % 10 == 5 else ["immediate"] if g % 10 == 7 else []
    return spec, claims


def production(nodes: int, pods: int, seed: int = 0) -> list[dict]:
    """The production-shaped queue of issue 37: `nodes` empty nodes, `pods` pending pods in 40 groups, each a
    ReplicaSet or a StatefulSet behind a Service (the system-default spread on every pod), with zone and
    hostname spread, required and preferred anti-affinity, host ports, images already on some nodes, claims of
    a zonal WaitForFirstConsumer class and of an Immediate class (pre-bound zonal volumes), priorities 0 to
    10,000, in four labelled namespaces."""
    rng = np.random.default_rng(seed)
    docs: list[dict] = [CONFIG]
    docs += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": team}}}
             for ns, team in PRODUCTION_NAMESPACES]
    docs += [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"},
              "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"},
             {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "immediate"},
              "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "Immediate"}]
    base, extra = divmod(pods, GROUPS)
    sizes = [base + (1 if g < extra else 0) for g in range(GROUPS)]
    pod_docs: list[dict] = []
    for g, size in enumerate(sizes):
        ns = PRODUCTION_NAMESPACES[g % len(PRODUCTION_NAMESPACES)][0]
        app = f"group{g}"
        labels = {"app": app}
        created = f"{np.datetime64(EPOCH + g, 's')}Z"
        spec, claims = _production_group(g, size, ns, rng)
        stateful = bool(claims) or g % 6 == 3
        kind, uid = ("StatefulSet", f"sts-{g}") if stateful else ("ReplicaSet", f"rs-{g}")
        docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": ns},
                     "spec": {"selector": labels, "ports": [{"port": 80}]}})
        controller = {"apiVersion": "apps/v1", "kind": kind,
                      "metadata": {"name": app, "namespace": ns, "uid": uid, "creationTimestamp": created},
                      "spec": {"replicas": size, "selector": {"matchLabels": labels},
                               "template": {"metadata": {"labels": labels}, "spec": spec}}}
        if stateful:
            controller["spec"]["serviceName"] = app
        docs.append(controller)
        owner = [{"apiVersion": "apps/v1", "kind": kind, "name": app, "uid": uid, "controller": True}]
        for r in range(size):
            name = f"{app}-{r}"
            pod_spec = spec
            if claims:
                claim = f"data-{name}"
                pod_spec = {**spec, "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}
                pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": claim, "namespace": ns},
                       "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": claims[0],
                                "resources": {"requests": {"storage": "10Gi"}}}}
                if claims[0] == "immediate":  # bound at creation to a volume of one zone
                    volume = f"pv-{ns}-{claim}"
                    pvc["spec"]["volumeName"] = volume
                    pvc["status"] = {"phase": "Bound"}
                    docs.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume},
                                 "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                                          "storageClassName": "immediate",
                                          "claimRef": {"name": claim, "namespace": ns},
                                          "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": volume},
                                          "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                              {"key": ZONE, "operator": "In", "values": [ZONES[r % 3]]}]}]}}},
                                 "status": {"phase": "Bound"}})
                docs.append(pvc)
            pod_docs.append({"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": name, "namespace": ns, "labels": labels,
                                          "creationTimestamp": created, "ownerReferences": owner},
                             "spec": pod_spec})
    return docs + _production_nodes(nodes, rng) + pod_docs


def write_scenario(queue: str, nodes: int, pods: int, directory: Path) -> Path:
    """The queue's scenario as a JSON `kind: List` in `directory` (written once); its path."""
    path = directory / f"default-profile-{queue}-{nodes}x{pods}.json"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        items = (scenario(nodes, pods) if queue == "uniform" else production(nodes, pods) if queue == "production"
                 else realistic(nodes, pods, queue.endswith("priorities")))
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def simulate_command(path: Path) -> list[str]:
    """The command the benchmark times: `kubefit simulate -o json --tie-break first` on the scenario."""
    return [*KUBEFIT, "simulate", "-f", str(path), "-o", "json", "--tie-break", "first"]


def run(queue: str, nodes: int, pods: int, keep: Path | None) -> dict:
    """One timed run: figures, pods scheduled and pending, preemptions."""
    path = write_scenario(queue, nodes, pods, keep or WORK)
    seconds, cpu, rss, out = timed(simulate_command(path))
    if keep is not None:
        path.with_suffix(".out.json").write_bytes(out)
    data = json.loads(out)
    return ({"queue": queue, "nodes": nodes, "pods": pods} | figures(seconds, cpu, rss, pods)
            | {"scheduled": data["scheduled"], "unschedulable": data["unschedulable"],
               "evicted": data["metrics"]["evicted"]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["1000x10000"], help="NODESxPODS, e.g. 5000x50000")
    parser.add_argument("--queues", nargs="+", default=list(QUEUES[1:3]), choices=QUEUES)
    parser.add_argument("--repeat", type=int, default=1, help="run each this many times (all are printed)")
    parser.add_argument("--keep", type=Path, help="write the scenarios and outputs in this folder")
    args = parser.parse_args()
    for size in args.sizes:
        n, p = (int(x) for x in size.split("x"))
        for queue in args.queues:
            for _ in range(args.repeat):
                print(json.dumps(run(queue, n, p, args.keep)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
