"""examples/workload: what the README says of it holds (LeastAllocated strands the report job,
MostAllocated and RequestedToCapacityRatio pack the caches together and place it)."""

from __future__ import annotations

import json
from pathlib import Path

from kubefit.cli import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "workload" / "cluster.yaml")


def run(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main([*argv, "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_least_allocated_strands_the_report_job(capsys):
    out = run(capsys, "simulate", "-f", EXAMPLE)
    steps = {s["pod"]: s for s in out["steps"]}
    assert len(steps) == 21 and out["scheduled"] == 20
    # priority 1000 first: the caches, each on its own high-memory node (LeastAllocated spreads)
    assert [s["pod"] for s in out["steps"][:2]] == ["cache-0", "cache-1"]
    assert {steps["cache-0"]["node"], steps["cache-1"]["node"]} == {"highmem-1", "highmem-2"}
    assert steps["trainer-0"]["node"] == steps["trainer-1"]["node"] == "gpu-1"
    report = steps["report-0"]
    assert report["node"] is None
    assert report["message"].startswith("0/7 nodes are available: ")
    # each high-memory node keeps 8 - 0.1 - 2 - ... < 6 cpu free; pooled, two copies would fit
    assert out["metrics"]["stranded"][0]["pod"] == "report-0"
    assert out["metrics"]["stranded"][0]["copiesThatFit"] == 0
    assert out["metrics"]["stranded"][0]["copiesIfPooled"] == 2


def test_packing_strategies_place_everything(capsys):
    out = run(capsys, "simulate", "-f", EXAMPLE, "--compare", "MostAllocated", "RequestedToCapacityRatio")
    by_name = {c["name"]: c for c in out["configurations"]}
    assert by_name["scenario"]["unschedulable"] == 1
    for name in ("MostAllocated", "RequestedToCapacityRatio"):
        assert by_name[name]["unschedulable"] == 0
        assert sum(by_name[name]["placement"].values()) == 21


def test_capacity_of_the_report_job(capsys):
    """On the cluster as it runs now (node exporters only), one copy fits per high-memory node: 7.9 cpu
    free there, 3.9 on the general nodes, and the GPU node's taint is not tolerated."""
    out = run(capsys, "capacity", "-f", EXAMPLE, "--pod", "report-0")
    assert out["count"] == 2
    assert out["perNode"] == {"highmem-1": 1, "highmem-2": 1}
