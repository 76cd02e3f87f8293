"""Small workloads for the `tune` tests, written as a `kind: List` file."""

from __future__ import annotations

import json
from pathlib import Path


def node(name: str, cpu: str, memory: str = "16Gi", gpus: int = 0, pods: str = "110") -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"allocatable": alloc}}


def pod(name: str, cpu: str, memory: str = "1Gi", gpus: int = 0, node_name: str = "") -> dict:
    requests = {"cpu": cpu, "memory": memory}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def write(path: Path, docs: list[dict]) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    return str(path)
