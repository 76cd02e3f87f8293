"""`tune`'s objectives measured on hand-computed cases: pending, nodes (after pending), stranded, and the
FGD paper's GPU fragmentation."""

from __future__ import annotations

import pytest
from tune_support import node, pod, write

import kubefit
from kubefit.errors import InputError
from kubefit.manifests.scenario import load_scenario
from kubefit.planning.objectives import OBJECTIVES, gpu_fragmentation, gpu_workload, measure
from kubefit.scheduler.compare import strategy_config
from kubefit.scheduler.config import default_configuration
from kubefit.scheduler.scenario import prepare
from kubefit.scheduler.simulate import simulate


def quiet(_message: str) -> None:
    pass


def test_gpu_fragmentation_by_hand(tmp_path):
    """g1: 8 cpu, 4 GPUs, a bound pod of 7 cpu + 1 GPU → free 1 cpu, 3 GPUs. g2: 8 cpu, 4 GPUs, a bound pod
    of 2 cpu + 3 GPUs → free 6 cpu, 1 GPU. The queue: two pods A (2 cpu, 1 GPU), one pod B (1 cpu, 2 GPUs).

    F_n(A): on g1 A lacks cpu (1 < 2) → its 3 free GPUs are fragmented; on g2 A fits → 0.  Σ = 3.
    F_n(B): on g1 B fits (1 ≥ 1 cpu, 3 ≥ 2 GPUs) → 0; on g2 B lacks GPUs (1 < 2) → 1.  Σ = 1.
    F = p_A · 3 + p_B · 1 = 2/3 · 3 + 1/3 · 1 = 7/3.
    """
    path = write(tmp_path / "w.json", [
        node("g1", "8", "64Gi", gpus=4), node("g2", "8", "64Gi", gpus=4),
        pod("run-1", "7", gpus=1, node_name="g1"), pod("run-2", "2", gpus=3, node_name="g2"),
        pod("a-1", "2", gpus=1), pod("b-1", "1", gpus=2), pod("a-2", "2", gpus=1), pod("cpu-only", "1")])
    scenario = load_scenario([path])
    prepared = prepare(scenario)
    target = gpu_workload(prepared.state, scenario.pending_pods)
    assert target.counts.tolist() == [2, 1]  # the CPU-only pod is not part of the target workload
    assert gpu_fragmentation(prepared.state, target) == pytest.approx(7 / 3)


def test_gpu_fragmentation_needs_gpu_pods(tmp_path):
    path = write(tmp_path / "w.json", [node("n", "4"), pod("p", "1")])
    scenario = load_scenario([path])
    with pytest.raises(InputError, match="needs pending pods that request GPUs"):
        gpu_workload(prepare(scenario).state, scenario.pending_pods)


def test_nodes_rank_pending_first(tmp_path):
    """Two 4-cpu nodes. Run X: pods of 3, 3 and 3 cpu → the third is pending, 2 nodes used. Run Y: pods of
    1 and 1 cpu under MostAllocated → both on the first node, 1 node used, nothing pending.
    Ranks (pending · (nodes + 1) + used): X = 1 · 3 + 2 = 5, Y = 0 · 3 + 1 = 1; and a run leaving one pod
    pending on one node (Z: a 3-cpu and a 5-cpu pod, the second fits nowhere) = 1 · 3 + 1 = 4 > Y."""
    nodes = [node("n1", "4"), node("n2", "4")]
    goal = OBJECTIVES["nodes"]
    ranks = []
    for pods in ([pod("x1", "3"), pod("x2", "3"), pod("x3", "3")], [pod("y1", "1"), pod("y2", "1")],
                 [pod("z1", "3"), pod("z2", "5")]):
        scenario = load_scenario([write(tmp_path / "w.json", nodes + pods)])
        result = simulate(prepare(scenario).state, strategy_config(default_configuration(), "MostAllocated"),
                          scenario.pending_pods, tie_break="first")
        m = measure(result, goal, None)
        ranks.append((m.value, m.rank))
    assert ranks == [(2, 5), (1, 1), (1, 4)]


def tune_json(files: list[str], objective: str, **options) -> dict:
    options = {"trials": 6, "tie_break": "first", "workers": 1, "warn": quiet, **options}
    return kubefit.tune(files, objective, **options).to_dict()


def test_nodes_objective_prefers_packing(tmp_path):
    """Three 4-cpu nodes, three 1-cpu pods. LeastAllocated puts each pod on the emptiest node (3 nodes used);
    MostAllocated and RequestedToCapacityRatio (0 → 0, 100 → 10) stack them on the first (1 node)."""
    path = write(tmp_path / "w.json", [node(f"n{i}", "4") for i in range(3)] + [pod(f"p{i}", "1") for i in range(3)])
    out = tune_json([path], "nodes")
    assert out["baselines"] == {"scenario": 3, "LeastAllocated": 3, "MostAllocated": 1, "RequestedToCapacityRatio": 1}
    assert out["best"]["value"] == 1 and out["best"]["pending"] == 0


def test_stranded_objective_by_hand(tmp_path):
    """Two 4-cpu nodes; pods of 3, 3 and 2 cpu. Every strategy puts one 3-cpu pod on each node, so the 2-cpu pod
    is pending with 1 + 1 cpu free: pooled they would hold it (1 copy), no node can (0): stranded 1."""
    path = write(tmp_path / "w.json", [node("n1", "4"), node("n2", "4"), pod("a", "3"), pod("b", "3"), pod("c", "2")])
    out = tune_json([path], "stranded")
    assert set(out["baselines"].values()) == {1}
    assert out["best"]["value"] == 1


def test_objective_name_is_checked(tmp_path):
    path = write(tmp_path / "w.json", [node("n", "4"), pod("p", "1")])
    with pytest.raises(InputError, match="must be one of pending, nodes, stranded, gpu-fragmentation"):
        tune_json([path], "fastest")
