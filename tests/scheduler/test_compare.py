"""`simulate --compare`: the same workload under several configurations, metrics side by side, plot."""

from __future__ import annotations

import json

import pytest

from kubefit.cli import main
from kubefit.manifests.scenario import load_scenario
from kubefit.scheduler.compare import DEFAULT_SHAPE, candidates, strategy_config
from kubefit.scheduler.config import load_configuration
from kubefit.scheduler.simulate import simulate
from kubefit.scheduler.state import compile_state

NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
          "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}} for i in range(4)]
PODS = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}
        for i in range(6)]
BIG = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3500m", "memory": "1Gi"}}}]}}
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
              "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]}}}]}]}


def write(tmp_path, name: str, docs: list[dict]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    return str(path)


def run_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    rc = main([*argv, "-o", "json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def test_strategy_config_keeps_resources_and_sets_shape():
    from kubefit.manifests.documents import Document

    base = load_configuration(Document(CONFIG, "c", 0))
    most = strategy_config(base, "MostAllocated").profiles[0].plugin_args["NodeResourcesFit"]
    rtcr = strategy_config(base, "RequestedToCapacityRatio").profiles[0].plugin_args["NodeResourcesFit"]
    assert most.scoring_type == "MostAllocated"
    assert [(r.name, r.weight) for r in most.resources] == [("cpu", 2), ("memory", 1)]
    assert rtcr.scoring_type == "RequestedToCapacityRatio" and rtcr.shape == DEFAULT_SHAPE


def test_compare_strategies_side_by_side(tmp_path, capsys):
    """LeastAllocated spreads the six 1-cpu pods over all four nodes, so the 3.5-cpu pod fits nowhere
    (stranded: the free cpu would hold two if pooled); MostAllocated packs them on two nodes and the big
    pod takes a third. Each column equals a plain `simulate` under that configuration."""
    path = write(tmp_path, "s.json", [CONFIG, *NODES, *PODS, BIG])
    out = run_json(capsys, "simulate", "-f", path, "--tie-break", "first",
                   "--compare", "MostAllocated", "--compare", "requestedtocapacityratio")
    names = [c["name"] for c in out["configurations"]]
    assert names == ["scenario", "MostAllocated", "RequestedToCapacityRatio"]
    used = {c["name"]: c["metrics"]["nodesUsed"] for c in out["configurations"]}
    assert used == {"scenario": 4, "MostAllocated": 3, "RequestedToCapacityRatio": 3}
    scheduled = {c["name"]: c["unschedulable"] for c in out["configurations"]}
    assert scheduled == {"scenario": 1, "MostAllocated": 0, "RequestedToCapacityRatio": 0}
    spread = out["configurations"][0]["metrics"]
    assert spread["pendingByReason"] == {"Insufficient cpu": 1}
    assert spread["stranded"] == [{"pod": "big", "pending": 1, "requests": {"cpu": 3500, "memory": 1073741824},
                                   "copiesThatFit": 0, "copiesIfPooled": 2}]
    scenario = load_scenario([path])
    for cand, column in zip(candidates(load_configuration(scenario.scheduler_config), ["MostAllocated"]),
                            out["configurations"], strict=False):
        direct = simulate(compile_state(scenario.nodes, scenario.pods), cand.config, scenario.pending_pods,
                          tie_break="first", label=cand.label)
        assert direct.metrics() == column["metrics"]


def test_compare_with_a_config_file_and_plot(tmp_path, capsys):
    scenario = write(tmp_path, "s.json", [*NODES, *PODS])
    other = write(tmp_path, "most.json", [{**CONFIG, "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated"}}}]}]}])
    png = tmp_path / "alloc.png"
    out = run_json(capsys, "simulate", "-f", scenario, "--compare", f"{other},LeastAllocated", "--plot", str(png))
    assert [c["name"] for c in out["configurations"]] == ["scenario", other, "LeastAllocated"]
    assert out["configurations"][1]["metrics"]["nodesUsed"] == 2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_table(tmp_path, capsys):
    path = write(tmp_path, "s.json", [*NODES, *PODS, BIG])
    assert main(["simulate", "-f", path, "--compare", "MostAllocated"]) == 0
    out = capsys.readouterr().out
    assert "MostAllocated" in out and "nodes used" in out


@pytest.mark.parametrize("spec", ["Packed", "/no/such/file.yaml"])
def test_bad_compare(tmp_path, capsys, spec):
    path = write(tmp_path, "s.json", [*NODES, *PODS])
    assert main(["simulate", "-f", path, "--compare", spec]) == 2
    assert "neither a strategy" in capsys.readouterr().err


def test_compare_values_separated_by_spaces(tmp_path, capsys):
    """`--compare A B` (as the issue writes it) runs the same configurations as `--compare A --compare B`
    and `--compare A,B`; options after the values are still options."""
    path = write(tmp_path, "s.json", [*NODES, *PODS, BIG])
    spaced = run_json(capsys, "simulate", "-f", path, "--compare", "MostAllocated", "RequestedToCapacityRatio",
                      "--tie-break", "first")
    repeated = run_json(capsys, "simulate", "-f", path, "--tie-break", "first",
                        "--compare", "MostAllocated", "--compare", "RequestedToCapacityRatio")
    commas = run_json(capsys, "simulate", "-f", path, "--tie-break", "first",
                      "--compare=MostAllocated,RequestedToCapacityRatio")
    assert [c["name"] for c in spaced["configurations"]] == ["scenario", "MostAllocated", "RequestedToCapacityRatio"]
    assert spaced == repeated == commas


@pytest.mark.parametrize(("argv", "expected"), [
    (["simulate", "-f", "a", "--compare", "A", "B", "-o", "json"],
     ["simulate", "-f", "a", "--compare", "A", "--compare", "B", "-o", "json"]),
    (["simulate", "--compare=A", "B", "--plot", "p.png"],
     ["simulate", "--compare=A", "--compare", "B", "--plot", "p.png"]),
    (["score", "-f", "a", "b"], ["score", "-f", "a", "b"]),  # other verbs: untouched, click reports the extra
    (["simulate", "--compare", "A", "--", "B"], ["simulate", "--compare", "A", "--", "B"]),
])
def test_expand_multi_value_options(argv, expected):
    from kubefit.cli import expand_multi_value_options

    assert expand_multi_value_options(argv) == expected
