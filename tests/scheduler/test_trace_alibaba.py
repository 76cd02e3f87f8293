"""The Alibaba GPU trace through the real scheduler, reproduced from the CSVs (golden trace-alibaba.jsonl).

The default trace is imported once with `kubefit import alibaba-gpu` (1,213 nodes, 8,152 pods); each
golden run adds a v1 configuration built from the case's `fitArgs` / `pluginWeights`
(golden_scenario.case_config) and goes through `kubefit simulate -o json --tie-break first`. Every
step's node, tied nodes (the golden file keeps the first 8 and `tieCount`), the message of a pending
pod, the placement and the final per-node usage are compared.

The golden runs check every pod against every node (`feasible` counts all 1,213 of them), so the
configuration sets `percentageOfNodesToScore: 100`: kube-scheduler's adaptive default would stop
after 41% of this cluster's nodes (SPEC §7) and pick other nodes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from golden_scenario import case_config
from kubefit.cli import main
from tests_support import GOLDEN_DIR, golden_cases

TRACE = GOLDEN_DIR.parent / "traces" / "alibaba-gpu-v2023"
NODES_CSV = TRACE / "openb_node_list_gpu_node.csv"
PODS_CSV = TRACE / "openb_pod_list_default.csv"
GOLDEN_TIES = 8  # the golden file lists at most this many tied nodes

CASES = golden_cases("kube-scheduler/trace-alibaba.jsonl")


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The default trace imported once through the CLI (a JSON List: loads faster than YAML)."""
    path = tmp_path_factory.mktemp("alibaba") / "trace.json"
    assert main(["import", "alibaba-gpu", str(NODES_CSV), str(PODS_CSV), "-o", str(path)]) == 0
    return str(path)


def trace_config(case: dict[str, Any]) -> dict[str, Any]:
    """The case's configuration, evaluating every node as the golden runs did."""
    return {**case_config(case), "percentageOfNodesToScore": 100}


def golden_step(step: dict[str, Any]) -> dict[str, Any]:
    """What the golden file states of one step (per-step reasons aside)."""
    return {k: step[k] for k in ("pod", "node", "feasible", "ties", "tieCount", "message") if k in step}


def kubefit_step(step: dict[str, Any]) -> dict[str, Any]:
    """A `kubefit simulate` step in the golden file's shape: the first 8 ties and their count."""
    out = {k: step[k] for k in ("pod", "node", "feasible", "message") if k in step}
    ties = step.get("ties") or []
    count = step.get("tieCount", len(ties))
    if ties:
        out["ties"] = ties[:GOLDEN_TIES]
        if count > GOLDEN_TIES:
            out["tieCount"] = count
    return out


def first_difference(got: list[dict], want: list[dict]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if kubefit_step(g) != golden_step(w):
            return f"step {i}: kubefit {kubefit_step(g)} != golden {golden_step(w)}"
    return ""


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_trace_replay(case, trace_file, tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(trace_config(case)))
    capsys.readouterr()
    rc = main(["simulate", "-f", str(config), "-f", trace_file, "-o", "json", "--tie-break", "first",
               "--no-admission"])  # the golden pods are used as given
    out, err = capsys.readouterr()
    assert rc == 0, err
    got = json.loads(out)
    expect = case["expect"]
    assert len(got["steps"]) == len(expect["steps"]) == case["traceStats"]["pods"]
    difference = first_difference(got["steps"], expect["steps"])
    assert not difference, difference
    for key in ("scheduled", "unschedulable", "placement", "final"):
        assert got[key] == expect[key], key


def test_three_strategies():
    """One run per scoring strategy, each with BalancedAllocation beside NodeResourcesFit."""
    strategies = [c["fitArgs"]["scoringStrategy"]["type"] for c in CASES]
    assert strategies == ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
    assert all(c["pluginWeights"] == {"NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1} for c in CASES)


def test_study_comparison_is_the_golden_runs(trace_file):
    """examples/alibaba: its configuration under `--compare` gives, per strategy, the real scheduler's run."""
    from kubefit.manifests.scenario import load_scenario
    from kubefit.scheduler.compare import STRATEGIES, candidates, compare
    from kubefit.scheduler.config import load_configuration

    study = Path(__file__).resolve().parents[2] / "examples" / "alibaba" / "scheduler-config.yaml"
    scenario = load_scenario([str(study), trace_file])
    cands = candidates(load_configuration(scenario.scheduler_config), STRATEGIES)
    results = compare(scenario.nodes, scenario.pods, scenario.pending_pods, cands, tie_break="first")
    golden = {c["fitArgs"]["scoringStrategy"]["type"]: c["expect"] for c in CASES}
    assert [r.label for r in results] == ["scenario", *STRATEGIES]
    for result in results:
        expect = golden[result.label if result.label != "scenario" else "RequestedToCapacityRatio"]
        assert result.placement() == expect["placement"], result.label
        assert result.final() == expect["final"], result.label
        assert (result.scheduled, result.unschedulable) == (expect["scheduled"], expect["unschedulable"])
    # the study's plot draws the GPUs in a panel of their own: each run's 1,213 GPU nodes, fullest first
    import matplotlib.pyplot as plt

    from kubefit.report.plots import allocation_figure
    from kubefit.scheduler.compare import comparison_to_dict

    data = comparison_to_dict(results)
    fig = allocation_figure([(c["name"], c["final"]) for c in data["configurations"]], data["allocatable"])
    gpu = next(ax for ax in fig.get_axes() if ax.get_title() == "nvidia.com/gpu")
    curves = [line.get_ydata() for line in gpu.get_lines()]
    plt.close(fig)
    assert len(curves) == 4 and all(len(c) == 1213 and c[0] == 100 and min(c) >= 0 for c in curves)
