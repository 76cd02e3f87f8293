"""Benchmark a maximum-size cluster as `kubectl get nodes,pods -A -o yaml|json` prints it (issue 23).

Kubernetes' documented limits: 5,000 nodes (3 zones) and 150,000 pods, all bound, plus 1,000 pending.
The objects are full, as the API server returns them: `managedFields`, status (conditions, container
statuses, a node's 40 images), init containers and native sidecars, spread constraints, the
`kube-api-access-*` projected volume every pod gets, probes and environment; pods belong to
ReplicaSets (1,500 Deployments) and DaemonSets (3 per node). Both files are written once under
`KUBEFIT_BENCH_DIR` (default /tmp/kubefit-scale), from per-shape templates in which only the per-object
values (names, uids, addresses, times, node) change, so that writing 700 MB takes a minute, not ten.

Each run is `kubefit capacity|simulate -f FILE -o json` in a fresh process, with its wall time, CPU time
and peak RSS (the child's `ru_maxrss`), next to a bare `json.load` of the same JSON file timed in the
same run (the yardstick of the targets: JSON ≤ 0.5× and ≤ 2 GiB, YAML ≤ 1.5× and ≤ 3 GiB). Every child
runs under an address-space limit (`--memory`, default 8 GiB), so that no run can push the machine
into swap; the answers of both formats are compared.

    .venv/bin/python benchmarks/bench_scale.py                          # the maximum size
    .venv/bin/python benchmarks/bench_scale.py --nodes 1000 --pods 30000 --pending 200
    .venv/bin/python benchmarks/bench_scale.py --generate-only          # write the files, print sizes
    .venv/bin/python benchmarks/bench_scale.py --clean                  # delete the files afterwards
    .venv/bin/python benchmarks/bench_scale.py --fleet 10000             # a Karmada fleet instead
    .venv/bin/python benchmarks/bench_scale.py --fleet 60000 --fleet-verbs models-validate --save /tmp/out
    .venv/bin/python benchmarks/bench_scale.py --fleet 43000 --varied     # each Cluster's summary its own

`--fleet N` writes N Karmada Clusters (the three of examples/karmada/schedule-customized-divided-20.yaml,
renamed, resource models and summaries included) and their ResourceBinding, and times `kubefit
schedule`, `kubefit estimate` and `kubefit models validate` on it (`--save DIR`: their outputs, to `cmp`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import yaml

from kubefit.manifests.k8syaml import resolve_plain

ROOT = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("KUBEFIT_BENCH_DIR", "/tmp/kubefit-scale"))
KUBEFIT = [sys.executable, "-m", "kubefit.cli"]
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
NODE_TYPES = [  # (weight, instance type, cpu, allocatable cpu, memory Ki, allocatable memory Ki)
    (0.30, "m6i.4xlarge", 16, "15890m", 65_023_508, 64_008_212),
    (0.50, "m6i.8xlarge", 32, "31850m", 130_045_076, 127_900_180),
    (0.20, "m6i.16xlarge", 64, "63770m", 260_092_692, 255_802_900)]
POD_SHAPES = [  # (weight, cpu, memory, cpu limit, memory limit)
    (0.30, "100m", "128Mi", "500m", "256Mi"), (0.25, "250m", "512Mi", "1", "1Gi"),
    (0.20, "500m", "1Gi", "2", "2Gi"), (0.15, "1", "2Gi", "2", "4Gi"), (0.10, "2", "4Gi", "4", "8Gi")]
DAEMONSETS = [("kube-proxy", "kube-system", "100m", "128Mi"), ("aws-node", "kube-system", "25m", "64Mi"),
              ("node-exporter", "monitoring", "50m", "64Mi")]
TIME = "2025-10-01T09:00:02Z"


# --------------------------------------------------------------------------- objects

def managed(manager: str, fields: dict, subresource: str | None = None) -> dict:
    entry = {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields, "manager": manager,
             "operation": "Update", "time": "__TIME__"}
    if subresource:
        entry["subresource"] = subresource
    return entry


def node_object(kind: int) -> dict:
    """A v1 Node of one instance type, placeholders where each node differs."""
    _, instance, cpu, alloc_cpu, mem, alloc_mem = NODE_TYPES[kind]
    capacity = {"cpu": str(cpu), "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                "memory": f"{mem}Ki", "pods": "110"}
    allocatable = capacity | {"cpu": alloc_cpu, "ephemeral-storage": "95551679124", "memory": f"{alloc_mem}Ki"}
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": instance,
              "beta.kubernetes.io/os": "linux", "eks.amazonaws.com/capacityType": "ON_DEMAND",
              "eks.amazonaws.com/nodegroup": f"ng-{instance.replace('.', '-')}", "failure-domain.beta.kubernetes.io/region":
              "us-east-1", "failure-domain.beta.kubernetes.io/zone": "__ZONE__", "kubernetes.io/arch": "amd64",
              "kubernetes.io/hostname": "__NAME__", "kubernetes.io/os": "linux",
              "node.kubernetes.io/instance-type": instance, "topology.kubernetes.io/region": "us-east-1",
              "topology.kubernetes.io/zone": "__ZONE__"}
    conditions = [{"lastHeartbeatTime": "__TIME__", "lastTransitionTime": "__TIME__", "message": message,
                   "reason": reason, "status": status, "type": kind_}
                  for kind_, status, reason, message in (
                      ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                      ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                      ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                      ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))]
    images = [{"names": [f"registry.example.com/team-{i % 7}/service-{i}@sha256:{i:064x}",
                         f"registry.example.com/team-{i % 7}/service-{i}:v1.{i}.0"],
               "sizeBytes": 50_000_000 + 7_919 * i * i} for i in range(40)]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "annotations": {"alpha.kubernetes.io/provided-node-ip": "__IP__",
                            "csi.volume.kubernetes.io/nodeid": '{"ebs.csi.aws.com":"__ID__"}',
                            "node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": "__TIME__", "labels": labels,
            "managedFields": [
                managed("kubelet", {"f:metadata": {"f:annotations": {".": {}, **{f"f:{k}": {} for k in (
                    "alpha.kubernetes.io/provided-node-ip", "volumes.kubernetes.io/controller-managed-attach-detach")}},
                    "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}}}, "f:spec": {"f:providerID": {}}}),
                managed("kube-controller-manager", {"f:metadata": {"f:annotations": {
                    "f:node.alpha.kubernetes.io/ttl": {}}}, "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {
                        ".": {}, 'v:"__CIDR__"': {}}}}),
                managed("kubelet", {"f:status": {"f:conditions": {f'k:{{"type":"{c["type"]}"}}': {
                    "f:lastHeartbeatTime": {}, "f:status": {}} for c in conditions}, "f:images": {},
                    "f:nodeInfo": {"f:bootID": {}}}}, "status")],
            "name": "__NAME__", "resourceVersion": "__RV__", "uid": "__UID__"},
        "spec": {"podCIDR": "__CIDR__", "podCIDRs": ["__CIDR__"], "providerID": "aws:///__ZONE__/__ID__"},
        "status": {
            "addresses": [{"address": "__IP__", "type": "InternalIP"}, {"address": "__NAME__", "type": "Hostname"},
                          {"address": "__NAME__", "type": "InternalDNS"}],
            "allocatable": allocatable, "capacity": capacity, "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}, "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": "__UID__", "containerRuntimeVersion": "containerd://1.7.27",
                         "kernelVersion": "6.1.132-147.221.amzn2023.x86_64", "kubeProxyVersion": "v1.34.1",
                         "kubeletVersion": "v1.34.1", "machineID": "__ID__", "operatingSystem": "linux",
                         "osImage": "Amazon Linux 2023.7.20250414", "systemUUID": "__UID__"}}}


def container(name: str, image: str, cpu: str, mem: str, cpu_limit: str, mem_limit: str, *, port: int | None,
              restart: str | None = None) -> dict:
    c: dict = {
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "GOMAXPROCS", "value": "2"}],
        "image": image, "imagePullPolicy": "IfNotPresent", "name": name,
        "resources": {"limits": {"cpu": cpu_limit, "memory": mem_limit}, "requests": {"cpu": cpu, "memory": mem}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "name": "kube-api-access-__KA__", "readOnly": True}]}
    if port:
        probe = {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
                 "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1}
        c |= {"readinessProbe": probe,
              "ports": [{"containerPort": port, "name": "http", "protocol": "TCP"}]}
    if restart:
        c["restartPolicy"] = restart
    return c


def container_status(name: str, image: str, *, init: bool) -> dict:
    state = ({"terminated": {"containerID": "containerd://__CID__", "exitCode": 0, "finishedAt": "__TIME__",
                             "reason": "Completed", "startedAt": "__TIME__"}} if init
             else {"running": {"startedAt": "__TIME__"}})
    return {"containerID": "containerd://__CID__", "image": image, "imageID": f"{image.split(':')[0]}@sha256:__CID__",
            "lastState": {}, "name": name, "ready": not init, "restartCount": 0, "started": not init, "state": state}


def pod_object(owner_kind: str, owner: str, namespace: str, labels: dict, containers: list[dict],
               init_containers: list[dict], spread: list[dict], *, bound: bool) -> dict:
    """A v1 Pod of a workload, placeholders where each pod differs."""
    spec: dict = {
        "containers": containers, "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always",
        "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "tolerationSeconds": 300},
                        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                         "tolerationSeconds": 300}],
        "volumes": [{"name": "kube-api-access-__KA__", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        "path": "namespace"}]}}]}}]}
    if init_containers:
        spec["initContainers"] = init_containers
    if spread:
        spec["topologySpreadConstraints"] = spread
    if bound:
        spec["nodeName"] = "__NODE__"
        conditions = [{"lastProbeTime": None, "lastTransitionTime": "__TIME__", "status": "True", "type": t}
                      for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
        status = {"conditions": conditions,
                  "containerStatuses": [container_status(c["name"], c["image"], init=False) for c in containers],
                  "hostIP": "__HIP__", "hostIPs": [{"ip": "__HIP__"}], "phase": "Running", "podIP": "__PIP__",
                  "podIPs": [{"ip": "__PIP__"}], "qosClass": "Burstable", "startTime": "__TIME__"}
        if init_containers:
            status["initContainerStatuses"] = [container_status(c["name"], c["image"], init=True)
                                               for c in init_containers]
    else:
        status = {"conditions": [{"lastProbeTime": None, "lastTransitionTime": "__TIME__", "message":
                                  "0/5000 nodes are available: 5000 Insufficient cpu. preemption: 0/5000 nodes are "
                                  "available: 5000 No preemption victims found for incoming pod.",
                                  "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}],
                  "phase": "Pending", "qosClass": "Burstable"}
    kubelet_fields = {"f:status": {"f:conditions": {f'k:{{"type":"{c["type"]}"}}': {"f:status": {}}
                                                    for c in status["conditions"]}, "f:phase": {}, "f:startTime": {}}}
    controller_fields = {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}},
                                        "f:ownerReferences": {".": {}, 'k:{"uid":"__OUID__"}': {}}},
                         "f:spec": {"f:containers": {f'k:{{"name":"{c["name"]}"}}': {
                             ".": {}, "f:image": {}, "f:name": {}, "f:resources": {".": {}, "f:limits": {},
                                                                                 "f:requests": {}}}
                             for c in containers}, "f:dnsPolicy": {}, "f:restartPolicy": {}}}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "creationTimestamp": "__TIME__", "generateName": f"{owner}-", "labels": labels,
            "managedFields": [managed("kube-controller-manager", controller_fields),
                              managed("kubelet", kubelet_fields, "status")],
            "name": "__NAME__", "namespace": namespace,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": owner_kind, "name": owner, "uid": "__OUID__"}],
            "resourceVersion": "__RV__", "uid": "__UID__"},
        "spec": spec, "status": status}


# --------------------------------------------------------------------------- templates

_PLACEHOLDER = re.compile(r"__([A-Z]+)__")
_QUOTED_IN_YAML = ("TIME", "RV")  # values YAML must quote (they would read as timestamps or integers)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """YAML as kubectl writes it (go-yaml v2's emitter): every object in full (no anchors for the dicts the
    templates share), and a string quoted wherever go-yaml would not read it back as a string (`y`,
    `00019223`), which PyYAML's YAML 1.1 resolver alone would leave plain."""

    def ignore_aliases(self, data: object) -> bool:
        return True

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            resolved = resolve_plain(value)
            if type(resolved) is not str:
                return "tag:yaml.org,2002:" + {bool: "bool", int: "int", float: "float"}.get(type(resolved), "null")
        return super().resolve(kind, value, implicit)


class Template:
    """An object written once as kubectl's YAML item and JSON item, filled per object by placeholder."""

    def __init__(self, obj: dict) -> None:
        text = yaml.dump(obj, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=80)
        for name in _QUOTED_IN_YAML:
            text = text.replace(f"__{name}__", f"'__{name}__'")
        lines = text.rstrip("\n").split("\n")
        self.yaml = "- " + "\n  ".join(lines) + "\n"
        self.json = json.dumps(obj, sort_keys=True)

    @staticmethod
    def fill(text: str, values: dict[str, str]) -> str:
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def workloads(rng: np.random.Generator, pods_n: int) -> list[tuple[Template, Template, int]]:
    """The Deployments' ReplicaSets: (bound template, pending template, replicas), ≈ 100 pods each."""
    count = max(1, pods_n // 100)
    shapes = rng.choice(len(POD_SHAPES), size=count, p=[s[0] for s in POD_SHAPES])
    out = []
    for w in range(count):
        _, cpu, mem, cpu_limit, mem_limit = POD_SHAPES[int(shapes[w])]
        name, namespace = f"service-{w:04d}", f"team-{w % 40:02d}"
        owner = f"{name}-{w * 7919 % 0xFFFFFFFF:08x}"[:len(name) + 9]
        labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": f"product-{w % 40:02d}",
                  "pod-template-hash": owner.rsplit("-", 1)[1]}
        image = f"registry.example.com/team-{w % 7}/{name}:v1.{w % 50}.0"
        containers = [container("app", image, cpu, mem, cpu_limit, mem_limit, port=8080)]
        init = []
        if w % 5 == 0:  # a native sidecar (an init container that keeps running)
            init.append(container("proxy", "registry.example.com/mesh/proxy:1.24.3", "50m", "64Mi", "1", "256Mi",
                                  port=15021, restart="Always"))
        if w % 10 == 3:  # a classic init container
            init.insert(0, container("migrate", image, "100m", "64Mi", "500m", "128Mi", port=None))
        spread = [{"labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}}, "maxSkew": 1,
                   "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]
        if w % 4 == 0:
            spread.append({"labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}}, "maxSkew": 2,
                           "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"})
        args = ("ReplicaSet", owner, namespace, labels, containers, init, spread)
        out.append((Template(pod_object(*args, bound=True)), Template(pod_object(*args, bound=False)), owner))
    return out


def daemon_templates() -> list[tuple[Template, str]]:
    out = []
    for name, namespace, cpu, mem in DAEMONSETS:
        c = container(name, f"registry.example.com/system/{name}:v1.34.1", cpu, mem, "500m", "256Mi", port=None)
        labels = {"controller-revision-hash": "6d4b8f7c9", "k8s-app": name, "pod-template-generation": "1"}
        out.append((Template(pod_object("DaemonSet", name, namespace, labels, [c], [], [], bound=True)), name))
    return out


# --------------------------------------------------------------------------- the files

def _node_values(i: int, zone: str) -> dict[str, str]:
    name = f"ip-10-{i // 65536 % 256}-{i // 256 % 256}-{i % 256}.ec2.internal"
    return {"NAME": name, "ZONE": zone, "IP": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
            "ID": f"i-{i * 2654435761 % 16**17:017x}", "CIDR": f"100.{64 + i // 256 % 64}.{i % 256}.0/24",
            "UID": _uid(1, i), "RV": str(1000 + i), "TIME": TIME}


def _uid(kind: int, i: int) -> str:
    h = f"{(i * 0x9E3779B97F4A7C15 + kind) % 16**32:032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def _suffix(i: int) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[(i // 27**k) % 27] for k in range(5))


def generate(nodes_n: int, pods_n: int, pending_n: int, seed: int = 23) -> Iterator[tuple[str, str]]:
    """The List's items as (YAML item, JSON item) text: nodes, then bound pods node by node, then pending."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(len(NODE_TYPES), size=nodes_n, p=[t[0] for t in NODE_TYPES])
    node_templates = [Template(node_object(k)) for k in range(len(NODE_TYPES))]
    names = []
    for i in range(nodes_n):
        values = _node_values(i, ZONES[i % len(ZONES)])
        names.append((values["NAME"], values["IP"]))
        t = node_templates[int(kinds[i])]
        yield Template.fill(t.yaml, values), Template.fill(t.json, values)
    daemons = daemon_templates()
    apps = workloads(rng, pods_n)
    per_node = np.full(nodes_n, 0)
    serial = 0

    def pod(t: Template, owner: str, node: int | None) -> tuple[str, str]:
        nonlocal serial
        serial += 1
        host, ip = names[node] if node is not None else ("", "")
        values = {"NAME": f"{owner}-{_suffix(serial)}", "UID": _uid(2, serial), "OUID": _uid(3, sum(map(ord, owner)) * 31 + len(owner)),
                  "NODE": host, "HIP": ip, "PIP": f"100.{64 + serial // 65536 % 64}.{serial // 256 % 256}.{serial % 256}",
                  "TIME": TIME, "RV": str(100_000 + serial), "KA": _suffix(serial * 31 + 7), "CID": f"{serial:064x}"}
        return Template.fill(t.yaml, values), Template.fill(t.json, values)

    for node in range(nodes_n):  # the DaemonSets' pods, one per node each
        for t, owner in daemons:
            if serial < pods_n:
                per_node[node] += 1
                yield pod(t, owner, node)
    remaining = pods_n - serial
    weights = np.array([NODE_TYPES[int(k)][2] for k in kinds], dtype=float)
    placement = rng.choice(nodes_n, size=max(remaining, 0), p=weights / weights.sum())
    order = rng.permutation(max(remaining, 0))
    for k, j in enumerate(order):
        bound, _, owner = apps[k % len(apps)]
        yield pod(bound, owner, int(placement[j]))
    for k in range(pending_n):
        _, pending, owner = apps[k % len(apps)]
        yield pod(pending, owner, None)


def write_files(nodes_n: int, pods_n: int, pending_n: int) -> tuple[Path, Path]:
    """Write (once) the YAML and JSON Lists; their paths."""
    WORK.mkdir(parents=True, exist_ok=True)
    stem = WORK / f"cluster-{nodes_n}x{pods_n}+{pending_n}"
    yaml_path, json_path = stem.with_suffix(".yaml"), stem.with_suffix(".json")
    if yaml_path.exists() and json_path.exists():
        return yaml_path, json_path
    with open(f"{yaml_path}.tmp", "w") as y, open(f"{json_path}.tmp", "w") as j:
        y.write("apiVersion: v1\nitems:\n")
        j.write('{"apiVersion": "v1", "items": [')
        first = True
        for y_item, j_item in generate(nodes_n, pods_n, pending_n):
            y.write(y_item)
            j.write(j_item if first else ", " + j_item)
            first = False
        y.write('kind: List\nmetadata:\n  resourceVersion: ""\n')
        j.write('], "kind": "List", "metadata": {"resourceVersion": ""}}\n')
    os.replace(f"{yaml_path}.tmp", yaml_path)
    os.replace(f"{json_path}.tmp", json_path)
    return yaml_path, json_path


# --------------------------------------------------------------------------- runs

_MEASURE = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, "
            "preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2)); "
            "u = resource.getrusage(resource.RUSAGE_CHILDREN); sys.stdout.buffer.write(p.stdout); "
            "sys.stderr.buffer.write(p.stderr[-3000:]); "
            "print('\\nbench', p.returncode, time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss, "
            "file=sys.stderr)")


def timed(args: list[str], memory: int) -> tuple[float, float, float, bytes, str]:
    """Run a command in a fresh process under an address-space limit: seconds, CPU seconds, peak RSS
    (MiB), stdout, and stderr's last lines (for a failure)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(memory), *args], capture_output=True, cwd=ROOT,
                          env=env | {"KUBEFIT_MAX_INPUT_BYTES": env.get("KUBEFIT_MAX_INPUT_BYTES", "")})
    err = proc.stderr.decode(errors="replace")
    head, last = err.rstrip().rsplit("\n", 1)
    _, rc, seconds, cpu, rss_kib = last.split()
    if rc != "0":
        head = f"exit {rc}: {head[-1500:]}"
    return float(seconds), float(cpu), int(rss_kib) / 1024, proc.stdout, head if rc != "0" else ""


def json_load(path: Path, memory: int) -> dict:
    seconds, cpu, rss, _, failed = timed([sys.executable, "-c", f"import json; json.load(open({str(path)!r}))"],
                                         memory)
    return {"seconds": round(seconds, 2), "cpuSeconds": round(cpu, 2), "peakRssMiB": round(rss), "failed": failed}


def kubefit(verb: str, path: Path, memory: int) -> dict:
    seconds, cpu, rss, out, failed = timed([*KUBEFIT, verb, "-f", str(path), "-o", "json"], memory)
    answer = None
    if not failed:
        data = json.loads(out)
        answer = ({"count": data.get("count"), "stopReason": data.get("stopReason")} if verb == "capacity"
                  else {"scheduled": data.get("scheduled"), "unschedulable": data.get("unschedulable")})
    return {"seconds": round(seconds, 2), "cpuSeconds": round(cpu, 2), "peakRssMiB": round(rss),
            "answer": answer, "failed": failed}


def write_fleet(clusters: int, varied: bool = False) -> Path:
    """N Clusters cycling through the example's three, then its ResourceBinding (once, under WORK).

    `varied`: each Cluster's summary its own (random allocatable cpu, memory and pods, node counts per grade)
    and every other Cluster's grade-7 cpu max raised by one per 500 Clusters (86 sets of models, half of
    them refused by Karmada's API: not contiguous), so that no result is one Cluster's repeated."""
    path = WORK / f"fleet-{'varied-' if varied else ''}{clusters}.yaml"
    if path.exists():
        return path
    if varied:
        text = write_fleet(clusters).read_text()
        rng = np.random.default_rng(38)
        ranges = {"cpu": (1, 400), "memory": (1, 4000), "pods": (0, 2000), "count": (0, 60)}
        text = re.sub(r"(?m)^(      (cpu|memory|pods|count): '?)\d+((Gi)?'?)$",
                      lambda m: f"{m.group(1)}{rng.integers(*ranges[m.group(2)])}{m.group(3)}", text)
        seen = [0]

        def own_max(m: re.Match) -> str:
            seen[0] += 1
            return f"{m.group(1)}'{128 + seen[0] // 500}'" if seen[0] % 2 == 0 else m.group(0)
        text = re.sub(r"(?m)^(      max: )'128'$", own_max, text)
        path.write_text(text)
        return path
    WORK.mkdir(parents=True, exist_ok=True)
    example = ROOT / "examples" / "karmada" / "schedule-customized-divided-20.yaml"
    docs = [d for d in yaml.safe_load_all(example.read_text()) if d]
    templates = [yaml.safe_dump(d, sort_keys=False) for d in docs if d["kind"] == "Cluster"]
    binding = next(d for d in docs if d["kind"] == "ResourceBinding")
    with open(f"{path}.tmp", "w") as fh:
        for i in range(clusters):
            fh.write("---\n" + templates[i % len(templates)].replace("name: member", f"name: m{i}-member", 1))
        fh.write("---\n" + yaml.safe_dump(binding, sort_keys=False))
    os.replace(f"{path}.tmp", path)
    return path


FLEET_VERBS = ("schedule", "estimate", "models-validate")


def run_fleet(clusters: int, memory: int, save: Path | None = None, verbs: Sequence[str] = FLEET_VERBS,
              varied: bool = False) -> None:
    """`schedule`, `estimate` and `models validate` on the fleet (validate exits 0: every Cluster valid);
    `save`: a directory each verb's `-o json` output is written to (to compare two versions with `cmp`).
    `summary` is not among them: it describes one member's nodes and pods, and refuses a fleet."""
    path = write_fleet(clusters, varied)
    print(f"{clusters} Karmada Clusters{' (varied)' if varied else ''}: {path.stat().st_size / 1e6:.0f} MB",
          flush=True)
    for name in verbs:
        args = name.split("-", 1) if name == "models-validate" else [name]
        seconds, cpu, rss, out, failed = timed([*KUBEFIT, *args, "-f", str(path), "-o", "json"], memory)
        code = 1 if failed.startswith("exit 1:") and out.startswith(b"{") else 0  # (refused or unschedulable)
        print(f"{name}: {{'seconds': {seconds:.2f}, 'cpuSeconds': {cpu:.2f}, 'peakRssMiB': {rss:.0f}, "
              f"'outputMB': {len(out) / 1e6:.1f}, 'exit': {code}, 'failed': {'' if code else failed!r}}}", flush=True)
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            (save / f"{name}-{'varied-' if varied else ''}{clusters}.json").write_bytes(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000, help="bound pods")
    parser.add_argument("--pending", type=int, default=1000)
    parser.add_argument("--memory", type=float, default=8.0, help="address-space limit of each run, GiB")
    parser.add_argument("--verbs", nargs="*", default=["capacity", "simulate"])
    parser.add_argument("--formats", nargs="*", default=["json", "yaml"])
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--clean", action="store_true", help="delete the generated files at the end")
    parser.add_argument("--fleet", type=int, default=0, help="time a Karmada fleet of this many Clusters instead")
    parser.add_argument("--save", type=Path, help="with --fleet: write each verb's JSON output to this directory")
    parser.add_argument("--fleet-verbs", nargs="*", default=list(FLEET_VERBS), choices=FLEET_VERBS)
    parser.add_argument("--varied", action="store_true", help="with --fleet: every Cluster's summary its own")
    args = parser.parse_args(argv)
    if args.fleet:
        run_fleet(args.fleet, int(args.memory * 2**30), args.save, args.fleet_verbs, args.varied)
        if args.clean:
            shutil.rmtree(WORK, ignore_errors=True)
        return 0
    started = time.perf_counter()
    paths = dict(zip(("yaml", "json"), write_files(args.nodes, args.pods, args.pending), strict=True))
    print(f"{args.nodes} nodes × {args.pods} bound pods + {args.pending} pending "
          f"(written in {time.perf_counter() - started:.0f} s): "
          + ", ".join(f"{fmt} {p.stat().st_size / 1e6:.0f} MB" for fmt, p in paths.items()), flush=True)
    if not args.generate_only:
        memory = int(args.memory * 2**30)
        base = json_load(paths["json"], memory)
        print(f"json.load: {base}", flush=True)
        answers: dict[str, set] = {}
        for verb in args.verbs:
            for fmt in args.formats:
                result = kubefit(verb, paths[fmt], memory)
                if base["seconds"]:
                    result["vsJsonLoad"] = round(result["seconds"] / base["seconds"], 2)
                answers.setdefault(verb, set()).add(json.dumps(result["answer"], sort_keys=True))
                print(f"{verb} {fmt}: {result}", flush=True)
        for verb, seen in answers.items():
            print(f"{verb}: {'the same answer from every format' if len(seen) == 1 else 'ANSWERS DIFFER'}")
    if args.clean:
        shutil.rmtree(WORK, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
