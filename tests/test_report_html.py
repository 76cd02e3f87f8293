"""The HTML report as text (no browser): escaping, the registry of pages, the inputs it shows, bad paths."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import kubefit
from kubefit.cli import main
from kubefit.report import render_html
from kubefit.report.html import RENDERERS, Headline, Page, pointer, renders, section, table
from tests_support import many_nodes_result, run_json

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = str(ROOT / "examples/workload/cluster.yaml")
PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def test_names_from_the_input_are_escaped_everywhere(tmp_path):
    """Node, pod and file names reach bars, tooltips, tables, messages and the title; none as markup."""
    scenario = tmp_path / f"{PAYLOAD.replace('/', '_')}.yaml"
    scenario.write_text(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {json.dumps('n' + PAYLOAD)}}}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n"
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {json.dumps('p' + PAYLOAD)}}}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\n")
    text = render_html(kubefit.simulate([scenario], warn=lambda _: None))
    assert text.count("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;") >= 5
    assert "<img" not in text and text.count("<script") == 1  # the page's own script only


def test_a_new_result_type_is_one_registered_function():
    @dataclass
    class Moves:
        count: int

        def to_dict(self) -> dict:
            return {"moves": self.count, "warnings": ["a <b> note"]}

    @renders(Moves)
    def moves_page(data: dict) -> Page:
        return Page("consolidate", "Which nodes can go?", [Headline("moves", data["moves"], pointer("moves"))],
                    [section("Moves", table(("n",), [(data["moves"],)], numeric=(0,)), anchor="moves")])

    try:
        text = render_html(Moves(1234))
    finally:
        del RENDERERS[Moves]
    assert '<span class="value" data-json="/moves">1,234</span>' in text
    assert '<li>a &lt;b&gt; note</li>' in text and '<a href="#moves">Moves</a>' in text
    with pytest.raises(TypeError, match="no HTML report for a Moves"):
        render_html(Moves(1))


def test_a_list_is_a_comparison_of_simulations_only():
    with pytest.raises(TypeError, match="every item must be a SimulationResult"):
        render_html([object()])


def test_inputs_name_each_compared_configuration_with_its_strategy(capsys):
    """The scenario (kube-scheduler's defaults: LeastAllocated, cpu 1 memory 1), MostAllocated, and
    RequestedToCapacityRatio with the 0→0, 100→10 shape kubefit gives it when the scenario has none."""
    rc, data, _ = run_json(capsys, "simulate", "-f", WORKLOAD, "--compare", "MostAllocated", "RequestedToCapacityRatio",
                           "--seed", "3")
    assert rc == 0
    inputs = data["inputs"]
    assert inputs["files"] == [WORKLOAD] and inputs["options"] == {"tieBreak": "random", "seed": 3}
    assert inputs["kubeSchedulerVersion"] == "v1.34.1"
    strategies = {c["name"]: c["profiles"][0]["scoringStrategy"] for c in inputs["configurations"]}
    assert strategies == {
        "scenario": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
        "MostAllocated": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                 {"name": "memory", "weight": 1}]},
        "RequestedToCapacityRatio": {"type": "RequestedToCapacityRatio",
                                     "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                                     "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                            {"utilization": 100, "score": 10}]}}}
    # every configuration's per-node usage, against the nodes' allocatable (the same nodes in every run)
    assert all(set(c["final"]) == set(data["allocatable"]) for c in data["configurations"])


def test_the_page_shows_the_configuration_and_versions(tmp_path, capsys):
    docs = ROOT / "examples/docs-bin-packing"
    path = tmp_path / "r.html"
    assert main(["simulate", "-f", str(docs / "cluster.yaml"), "-f", str(docs / "requested-to-capacity-ratio.yaml"),
                 "--report", str(path)]) == 0
    capsys.readouterr()
    text = path.read_text()
    # the docs' weights intel.com/foo 5, memory 1, cpu 3 and the shape 0→0, 100→10, as the inputs table shows them
    assert "<td>intel.com/foo 5, memory 1, cpu 3</td><td>0→0, 100→10</td>" in text
    assert "kube-scheduler v1.34.1" in text and f"kubefit {kubefit_version()}" in text


def kubefit_version() -> str:
    from importlib.metadata import version

    return version("kubefit")


@pytest.mark.parametrize(("name", "message"), [
    ("out.txt", "Invalid value for '--report': 'OUT': the report is an HTML page; name it FILE.html"),
    ("missing/out.html", "OUT: cannot write the report: no such folder"),
])
def test_a_bad_report_path_is_one_error_before_any_work(tmp_path, capsys, name, message):
    out = str(tmp_path / name)
    assert main(["simulate", "-f", WORKLOAD, "--report", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: " + message.replace("OUT", out))


def test_fleet_results_carry_their_warnings(capsys):
    """What `schedule` said on stderr is in its -o json too (and so on the page)."""
    rc, data, err = run_json(capsys, "schedule", "-f", str(ROOT / "examples/karmada/schedule-general-prefers-member1.yaml"))
    assert rc == 0
    assert data["warnings"] and all(f"warning: {w}" in err for w in data["warnings"])
    assert data["inputs"]["karmadaVersion"] == "v1.19 pre-release f8fdd02"


def test_the_large_case_draws_no_bar_per_node():
    text = render_html(many_nodes_result(400))
    assert text.count('class="track"') == 0 and len(re.findall(r"<polyline", text)) == 3


def test_the_plot_names_each_node_of_a_small_cluster_and_shows_every_resource():
    """examples/workload: 7 nodes, one with 4 GPUs. A panel per configuration and resource (cpu, memory,
    pods, nvidia.com/gpu), a bar per node; gpu-1 is the fullest under the scenario's LeastAllocated (cpu
    6100m of 8 = 76 %, before the general nodes' 2800m of 4 = 70 %)."""
    import matplotlib.pyplot as plt

    from kubefit.report.plots import allocation_figure
    from kubefit.scheduler.compare import comparison_to_dict

    runs = kubefit.compare([WORKLOAD], ["MostAllocated"], warn=lambda _: None)
    data = comparison_to_dict(runs)
    fig = allocation_figure([(c["name"], c["final"]) for c in data["configurations"]], data["allocatable"])
    try:
        axes = fig.get_axes()
        assert [ax.get_title() for ax in axes[:4]] == ["cpu", "memory", "pods", "nvidia.com/gpu"]
        assert len(axes) == 2 * 4 and all(len(ax.patches) == 7 for ax in axes)
        names = [t.get_text() for t in axes[0].get_yticklabels()]
        assert sorted(names) == sorted(data["allocatable"]) and names[0] == "gpu-1"
        assert axes[0].patches[0].get_width() == pytest.approx(100 * 6100 / 8000)
        gpu = [p.get_width() for p in axes[3].patches]
        assert gpu == [100.0, 0, 0, 0, 0, 0, 0]  # the GPU node's 4 of 4, visible in its own panel
    finally:
        plt.close(fig)


def test_the_plot_of_a_large_cluster_is_one_sorted_profile_per_resource_and_run():
    import matplotlib.pyplot as plt

    from kubefit.report.plots import allocation_figure

    a, b = many_nodes_result(50, pods=60).to_dict(), many_nodes_result(50, pods=150).to_dict()
    fig = allocation_figure([("a", a["final"]), ("b", b["final"])], a["allocatable"])
    try:
        axes = fig.get_axes()
        assert [ax.get_title() for ax in axes] == ["cpu", "memory", "pods"]
        for ax in axes:
            lines = ax.get_lines()
            assert len(lines) == 2 and all(len(line.get_ydata()) == 50 for line in lines)
            assert all(list(line.get_ydata()) == sorted(line.get_ydata(), reverse=True) for line in lines)
        # 150 one-cpu pods on 50 four-cpu nodes, spread: 3 each, 75 % of every node's cpu
        assert set(axes[0].get_lines()[1].get_ydata()) == {75.0}
    finally:
        plt.close(fig)
