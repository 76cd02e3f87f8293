"""The Alibaba GPU cluster trace (cluster-trace-gpu-v2023, "openb") → v1 Nodes and Pods.

Nodes get `cpu` (cpu_milli m), `memory` (memory_mib Mi), `pods: 110`, `nvidia.com/gpu` and a
`gpu-model` label. Pods arrive in creation-time order (ties by name) and request cpu, memory and
`nvidia.com/gpu: num_gpu`; a pod sharing a GPU (0 < gpu_milli < 1000) asks one whole GPU, since
kube-scheduler counts devices, not shares. `gpu_spec` becomes required node affinity on `gpu-model`.

With `dra=True` the GPUs are Dynamic Resource Allocation devices instead of the extended resource: a
DeviceClass `gpu.nvidia.com` selecting every device of the driver, one ResourceSlice per GPU node (its
pool, devices `gpu-0`… with the `model` and `index` attributes), and per GPU pod one ResourceClaim
`<pod>-gpu` asking `num_gpu` devices of the class, named in the pod's `resourceClaims` and its container's
`resources.claims`. A pod then fits a node exactly when it would have fitted the extended-resource form.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubefit.errors import InputError

GPU_RESOURCE = "nvidia.com/gpu"
DRA_DRIVER = DRA_CLASS = "gpu.nvidia.com"
DRA_API = "resource.k8s.io/v1"
GPU_MODEL_LABEL = "gpu-model"
MAX_PODS = "110"  # the kubelet default `maxPods`
NAMESPACE = "default"

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
# Optional pod columns kubefit reads; the multigpu variants of the trace lack them.
POD_OPTIONAL = ("gpu_spec", "creation_time", "deletion_time")
# Columns of the trace a scheduling scenario has no place for.
POD_IGNORED = ("qos", "pod_phase", "scheduled_time")
ARRIVAL, DURATION = "kubefit.io/arrival", "kubefit.io/duration"  # see kubefit.manifests.timing


@dataclass
class TraceImport:
    """The imported trace: v1 Node and Pod objects (queue order) and notes for the user."""

    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    devices: list[dict[str, Any]] = field(default_factory=list)  # DRA: the DeviceClass, ResourceSlices, claims

    def documents(self) -> list[dict[str, Any]]:
        return [*self.devices, *self.nodes, *self.pods]


def import_alibaba_gpu(nodes_csv: str | Path, pods_csv: str | Path, *, dra: bool = False) -> TraceImport:
    """Read a node list and a pod list of the trace into Kubernetes objects (GPUs as DRA devices with `dra`)."""
    warnings: list[str] = []
    node_rows = _unique(_rows(nodes_csv, NODE_COLUMNS, (), warnings), "sn")
    nodes = [_node(row, dra) for row in node_rows]
    rows = _queue_order(_unique(_rows(pods_csv, POD_COLUMNS, POD_OPTIONAL, warnings), "name"), pods_csv, warnings)
    pods = [_pod(row, dra) for row in rows]
    devices: list[dict[str, Any]] = []
    if dra:
        devices = [DEVICE_CLASS, *(_slice(row) for row in node_rows if row.integer("gpu")),
                   *(_claim(row) for row in rows if _pod_gpus(row))]
    return TraceImport(nodes, pods, warnings, devices)


DEVICE_CLASS = {"apiVersion": DRA_API, "kind": "DeviceClass", "metadata": {"name": DRA_CLASS},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}}


def _slice(row: _Row) -> dict[str, Any]:
    """A GPU node's devices: one pool named after the node, `gpu-<i>` with its model and index."""
    name = _name(row, "sn")
    model = row.text("model")
    devices = []
    for i in range(row.integer("gpu")):
        attributes: dict[str, Any] = {"index": {"int": i}}
        if model:
            attributes["model"] = {"string": model}
        devices.append({"name": f"gpu-{i}", "attributes": attributes})
    return {"apiVersion": DRA_API, "kind": "ResourceSlice", "metadata": {"name": f"{name}-{DRA_DRIVER}"},
            "spec": {"driver": DRA_DRIVER, "nodeName": name, "pool": {"name": name, "resourceSliceCount": 1},
                     "devices": devices}}


def _claim_name(row: _Row) -> str:
    return f"{_name(row, 'name')}-gpu"


def _claim(row: _Row) -> dict[str, Any]:
    """The claim a GPU pod names: its GPUs, of the class that selects every GPU."""
    return {"apiVersion": DRA_API, "kind": "ResourceClaim",
            "metadata": {"name": _claim_name(row), "namespace": NAMESPACE},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": DRA_CLASS, "allocationMode": "ExactCount", "count": _pod_gpus(row)}}]}}}


# --------------------------------------------------------------------------- CSV reading

@dataclass
class _Row:
    """One CSV record with where it came from, for messages."""

    values: dict[str, str]
    file: str
    line: int

    def text(self, column: str) -> str:
        return (self.values.get(column) or "").strip()

    def integer(self, column: str, *, minimum: int = 0) -> int:
        raw = self.text(column)
        try:
            value = int(raw)
        except ValueError:
            value = _integral_float(raw)
            if value is None:
                raise self.error(column, f"must be an integer, got {raw!r}") from None
        if value < minimum:
            raise self.error(column, f"must be at least {minimum}, got {raw!r}")
        return value

    def error(self, column: str, message: str) -> InputError:
        return InputError(message, file=self.file, obj=f"line {self.line}", field=f"column {column}")


def _integral_float(raw: str) -> int | None:
    """`12.0` → 12 (some exports write integers as floats); anything else → None."""
    try:
        number = float(raw)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _rows(path: str | Path, required: tuple[str, ...], optional: tuple[str, ...],
          warnings: list[str]) -> list[_Row]:
    """Records of a CSV file with a header; a missing required column is an error."""
    source = str(path)
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(f"missing column(s) {', '.join(missing)} (the header has "
                                 f"{', '.join(header) or 'nothing'})", file=source, obj="line 1")
            rows = [_checked(_Row(values, source, reader.line_num), header) for values in reader]
    except FileNotFoundError:
        raise InputError("no such file", file=source) from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read CSV: {exc}", file=source) from None
    unknown = [c for c in header if c not in (*required, *optional)]
    if unknown:
        warnings.append(f"{source}: column(s) {', '.join(unknown)} not imported (a scenario has no place "
                        f"for them: a pod's phase and scheduling time are what kubefit computes)")
    return rows


def _checked(row: _Row, header: list[str]) -> _Row:
    """A record with as many fields as the header."""
    if None in row.values:  # csv.DictReader puts extra fields under the key None
        raise InputError(f"{len(header) + len(row.values[None])} fields, the header has {len(header)}",
                         file=row.file, obj=f"line {row.line}")
    short = [c for c, v in row.values.items() if v is None]
    if short:
        raise row.error(short[0], f"missing value ({len(header) - len(short)} fields, the header has "
                                  f"{len(header)})")
    return row


def _unique(rows: list[_Row], column: str) -> list[_Row]:
    """The records, if no two share a name (Kubernetes objects are keyed by name)."""
    first: dict[str, int] = {}
    for row in rows:
        name = row.text(column)
        if name in first:
            raise row.error(column, f"duplicate name {name!r} (first on line {first[name]})")
        first[name] = row.line
    return rows


def _queue_order(rows: list[_Row], source: str | Path, warnings: list[str]) -> list[_Row]:
    """Creation-time order, ties by name; file order when the trace has no creation_time."""
    if not rows or "creation_time" not in rows[0].values:
        if rows:
            warnings.append(f"{source}: no creation_time column; pods are queued in file order")
        return rows
    return sorted(rows, key=_arrival)


def _arrival(row: _Row) -> tuple[int, str]:
    return row.integer("creation_time"), row.text("name")


# --------------------------------------------------------------------------- records → objects

def _name(row: _Row, column: str) -> str:
    name = row.text(column)
    if not name:
        raise row.error(column, "a name is required")
    return name


def _node(row: _Row, dra: bool = False) -> dict[str, Any]:
    """One node record → a v1 Node (capacity = allocatable; a CPU-only node, or with `dra` every node, has no
    GPU resource: DRA devices are published in ResourceSlices instead)."""
    resources = {"cpu": f"{row.integer('cpu_milli')}m", "memory": f"{row.integer('memory_mib')}Mi",
                 "pods": MAX_PODS}
    gpus = row.integer("gpu")
    if gpus and not dra:
        resources[GPU_RESOURCE] = str(gpus)
    metadata: dict[str, Any] = {"name": _name(row, "sn")}
    model = row.text("model")
    if model:
        metadata["labels"] = {GPU_MODEL_LABEL: model}
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata,
            "status": {"capacity": dict(resources), "allocatable": dict(resources)}}


def _pod_gpus(row: _Row) -> int:
    """Whole GPUs the pod asks kube-scheduler for: num_gpu, at least one when it shares a GPU."""
    gpus = row.integer("num_gpu")
    share = row.integer("gpu_milli")
    if share > 1000:
        raise row.error("gpu_milli", f"must be at most 1000 (a whole GPU), got {share}")
    if 0 < share < 1000:
        return max(gpus, 1)
    return gpus


def _pod(row: _Row, dra: bool = False) -> dict[str, Any]:
    """One pod record → a pending v1 Pod with one container (with `dra`, its GPUs through a claim)."""
    requests = {"cpu": f"{row.integer('cpu_milli')}m", "memory": f"{row.integer('memory_mib')}Mi"}
    gpus = _pod_gpus(row)
    resources: dict[str, Any] = {"requests": requests}
    if gpus and not dra:
        requests[GPU_RESOURCE] = str(gpus)
    elif gpus:
        resources["claims"] = [{"name": "gpu"}]
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "trace", "resources": resources}]}
    if gpus and dra:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": _claim_name(row)}]
    models = [m.strip() for m in row.text("gpu_spec").split("|") if m.strip()]
    if models:
        term = {"matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": models}]}
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                             {"nodeSelectorTerms": [term]}}}
    metadata: dict[str, Any] = {"name": _name(row, "name"), "namespace": NAMESPACE}
    times = _times(row)
    if times:
        metadata["annotations"] = times
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _times(row: _Row) -> dict[str, str]:
    """`kubefit.io/arrival` from creation_time and `kubefit.io/duration` = deletion_time − creation_time
    (seconds); a pod without deletion_time runs to the end of the trace."""
    out: dict[str, str] = {}
    if row.text("creation_time"):
        out[ARRIVAL] = f"{row.integer('creation_time')}s"
        if row.text("deletion_time"):
            end = row.integer("deletion_time")
            if end < row.integer("creation_time"):
                raise row.error("deletion_time", f"must not be before creation_time ({row.text('creation_time')}), "
                                                 f"got {end}: the pod would have a negative duration")
            out[DURATION] = f"{end - row.integer('creation_time')}s"
    return out
