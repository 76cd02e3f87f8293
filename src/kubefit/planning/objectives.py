"""What `kubefit tune` minimises: a number measured on a finished simulation of the workload.

- `pending`: pods of the queue left unschedulable (`SimulationResult.unschedulable`).
- `nodes`: nodes running at least one pod after the run (`metrics()["nodesUsed"]`). Fewer nodes never
  buys pending pods: the search ranks by (pods pending, nodes used), so a configuration that leaves
  more pods pending loses to one that leaves fewer, whatever its node count.
- `stranded`: pending pods that the cluster's free capacity would hold if it were pooled on one node
  but that no node can take, summed over the pending pod shapes of `metrics()["stranded"]`
  (`min(pending, copiesIfPooled) − copiesThatFit`, at least 0): what fragmentation alone keeps out.
- `gpu-fragmentation`: the expected GPU fragmentation of the FGD paper (Weng et al., "Beware of
  Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC
  2023, §3.2; `NodeGpuShareFragAmountScore` in the paper's simulator, hkust-adsl/kubernetes-scheduler-
  simulator `pkg/utils/frag.go`), measured on the final state: F = Σ_nodes Σ_m p_m · F_n(m), where the
  target workload M is the queue's GPU-requesting pod shapes with popularity p_m (their share of those
  pods) and F_n(m) is the node's free GPUs when a pod of shape m does not fit on it (some requested
  resource — cpu, memory, pods, GPUs — exceeds what is free), else 0. kube-scheduler counts whole
  devices (`nvidia.com/gpu` and any other `…/gpu` extended resource), so a node where m fits has no
  partially used GPU m could not use (the paper's Q-III case is 0 here). In GPUs; lower is better.
  Built for the Alibaba GPU trace (`kubefit import alibaba-gpu`).

An objective is a function of the finished `SimulationResult`; another one (say `nodes` after
`kubefit consolidate` has removed what it can) is one more `Objective` in `OBJECTIVES` whose `measure`
runs that step on `result.state` (see `nodes_used` for where).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Pod
from kubefit.errors import InputError
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler.engine import shape_key
from kubefit.scheduler.simulate import SimulationResult
from kubefit.scheduler.state import ClusterState


@dataclass(frozen=True)
class GpuWorkload:
    """The target workload of `gpu-fragmentation`: each GPU pod shape's request row and pod count."""

    rows: np.ndarray  # [M, R] int64, the state's columns (pods column 1)
    counts: np.ndarray  # [M] pods of each shape
    gpu_columns: np.ndarray  # the state's columns holding GPUs


def is_gpu_resource(name: str) -> bool:
    """`nvidia.com/gpu`, `amd.com/gpu`, …: an extended resource counting GPU devices."""
    return "/" in name and name.rsplit("/", 1)[1] == "gpu"


def gpu_workload(state: ClusterState, queue: Sequence[Pod]) -> GpuWorkload:
    """The queue's GPU-requesting pods grouped by request (first-seen order); an error when there are none."""
    shapes: dict[tuple, list] = {}
    for pod in queue:
        demand = pod_demand(pod)
        if any(amount and is_gpu_resource(name) for name, amount in demand.requests.items()):
            entry = shapes.setdefault(shape_key(pod), [demand, 0])
            entry[1] += 1
    if not shapes:
        raise InputError("objective gpu-fragmentation needs pending pods that request GPUs (an extended resource "
                         "named …/gpu, e.g. nvidia.com/gpu); this workload has none", field="--objective")
    rows = [state.demand_vector(demand) for demand, _ in shapes.values()]  # may add GPU columns to the state
    width = len(state.resources)
    matrix = np.array([np.pad(r, (0, width - len(r))) for r in rows], dtype=np.int64)
    gpus = np.array([c for r, c in state.index.items() if is_gpu_resource(r)], dtype=np.int64)
    return GpuWorkload(matrix, np.array([n for _, n in shapes.values()], dtype=np.int64), gpus)


def gpu_fragmentation(state: ClusterState, target: GpuWorkload) -> float:
    """F = Σ_m p_m Σ_n F_n(m) on `state`: free GPUs of the nodes where shape m does not fit, weighted by
    the shape's share of the GPU pods (see the module docstring)."""
    free = state.allocatable - state.requested
    rows = target.rows
    if rows.shape[1] < free.shape[1]:  # the run added columns (a pod asked a resource no node has)
        rows = np.pad(rows, ((0, 0), (0, free.shape[1] - rows.shape[1])))
    free_gpus = np.maximum(free[:, target.gpu_columns], 0).sum(axis=1)
    total = 0
    for row, count in zip(rows, target.counts.tolist(), strict=True):
        need = np.flatnonzero(row)
        fits = (free[:, need] >= row[need]).all(axis=1)
        total += count * int(free_gpus[~fits].sum())
    return total / int(target.counts.sum())


# --------------------------------------------------------------------------- the objectives

@dataclass(frozen=True)
class Measure:
    """One simulation measured: the objective's value, the number the search ranks by, and the
    simulation's pending pods and nodes used (shown for every trial)."""

    value: float
    rank: float
    pending: int
    nodes_used: int


def pending_pods(result: SimulationResult, metrics: dict, target: GpuWorkload | None) -> tuple[float, float]:
    return result.unschedulable, result.unschedulable


def nodes_used(result: SimulationResult, metrics: dict, target: GpuWorkload | None) -> tuple[float, float]:
    """Nodes used, ranked after pods pending. "Nodes after consolidate" would run the consolidation on
    `result.state` here and count what is left (the extension point of issue 25)."""
    used = metrics["nodesUsed"]
    return used, result.unschedulable * (len(result.state) + 1) + used


def stranded_pods(result: SimulationResult, metrics: dict, target: GpuWorkload | None) -> tuple[float, float]:
    value = sum(max(0, min(s["pending"], s["copiesIfPooled"] or 0) - s["copiesThatFit"]) for s in metrics["stranded"])
    return value, value


def fragmented_gpus(result: SimulationResult, metrics: dict, target: GpuWorkload | None) -> tuple[float, float]:
    assert target is not None  # the workload carries it for this objective
    value = gpu_fragmentation(result.state, target)
    return value, value


@dataclass(frozen=True)
class Objective:
    name: str
    unit: str
    measure: Callable[[SimulationResult, dict, GpuWorkload | None], tuple[float, float]]
    stranded: bool = False  # needs the stranded-capacity metric (one more pass per pending shape)
    gpus: bool = False  # needs the GPU target workload


OBJECTIVES = {o.name: o for o in (
    Objective("pending", "pods pending", pending_pods),
    Objective("nodes", "nodes used", nodes_used),
    Objective("stranded", "pods stranded by fragmentation", stranded_pods, stranded=True),
    Objective("gpu-fragmentation", "fragmented GPUs", fragmented_gpus, gpus=True),
)}


def objective(name: str) -> Objective:
    """The objective called `name`; an error naming the known ones."""
    if name not in OBJECTIVES:
        raise InputError(f"must be one of {', '.join(OBJECTIVES)}, got {name!r}", field="--objective")
    return OBJECTIVES[name]


def measure(result: SimulationResult, goal: Objective, target: GpuWorkload | None) -> Measure:
    """The finished simulation measured for `goal` (its metrics are `simulate`'s own: `workload_metrics`)."""
    metrics = result.metrics()
    value, rank = goal.measure(result, metrics, target)
    return Measure(value, rank, result.unschedulable, metrics["nodesUsed"])
