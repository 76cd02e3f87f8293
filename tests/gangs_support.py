"""Builders for gang scenarios in the verb tests: GPU nodes, pods naming a PodGroup, PodGroups (v1alpha2, v1.36)."""

from __future__ import annotations

import yaml

from tests_support import run_json

GATES = "GenericWorkload=true,GangScheduling=true"
V136 = ("--kube-version", "1.36", "--feature-gates", GATES)


def gpu_node(name: str, gpus: int, *, cpu: str = "32", labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": {"cpu": cpu, "memory": "256Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}}}


def gpu_pod(name: str, group: str | None = None, *, gpus: int = 1, cpu: str = "1", node: str | None = None,
            namespace: str = "ml", owner: dict | None = None, priority: int | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "trainer", "resources": {
        "requests": {"cpu": cpu, "memory": "1Gi", "nvidia.com/gpu": str(gpus)}, "limits": {"nvidia.com/gpu": str(gpus)}}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node is not None:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    meta: dict = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": owner.get("apiVersion", "batch/v1"), "kind": owner["kind"],
                                    "name": owner["name"], "uid": owner.get("uid", f"uid-{owner['name']}"),
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod_group(name: str, min_count: int | None, *, namespace: str = "ml") -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"schedulingPolicy": policy}}


def gang(name: str, size: int, min_count: int | None = None, *, gpus: int = 1, nodes: list[str | None] | None = None,
         namespace: str = "ml", owner: dict | None = None) -> list[dict]:
    """A PodGroup `name` (gang of `min_count`, default `size`) and its `size` pods `<name>-<i>` (bound on `nodes[i]`)."""
    where = nodes or [None] * size
    return [pod_group(name, size if min_count is None else min_count, namespace=namespace),
            *(gpu_pod(f"{name}-{i}", name, gpus=gpus, node=where[i], namespace=namespace, owner=owner)
              for i in range(size))]


def write(tmp_path, docs: list[dict], name: str = "s.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def run(tmp_path, capsys, verb: str, docs: list[dict], *args: str) -> tuple[int, dict, str]:
    """`kubefit VERB -f <docs> ARGS -o json` (in-process)."""
    return run_json(capsys, verb, "-f", write(tmp_path, docs), *args)
