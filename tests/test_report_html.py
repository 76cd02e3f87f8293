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
from tests_support import at_pointer, many_nodes_result, run_json, shown, tagged_values

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


@pytest.mark.parametrize(("args", "meta"), [
    (["--kube-version", "1.37"], "kube-scheduler v1.37.0"),
    (["--kube-version", "1.35"], "kube-scheduler v1.35.4"),
    (["--feature-gates", "HPAScaleToZero=true", "--kube-version", "1.36"],
     "kube-scheduler v1.36.3 · feature gates HPAScaleToZero=true"),
])
def test_the_header_names_the_version_answered_for(tmp_path, capsys, args, meta):
    """The header's line of versions read `kube {'minor': '1.37', 'patch': 'v1.37.0'}` (the `inputs.kubeVersion`
    dict printed as Python): it names the kube-scheduler patch reproduced once, and the gates set (issue #46, 9)."""
    path = tmp_path / "r.html"
    assert main(["simulate", "-f", str(ROOT / "examples/docs-bin-packing/cluster.yaml"), "--report", str(path),
                 *args]) == 0
    capsys.readouterr()
    header = re.search(r'<p class="meta">([^<]*)</p>', path.read_text()).group(1)
    assert header.endswith(meta) and "{" not in header and "minor" not in header, header


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


# --------------------------------------------------------------------------- tune, DRA, OrderedReady

def quiet(_message: str) -> None:
    pass


def section_of(page: str, anchor: str) -> str:
    """The HTML of one section of a page (by its anchor)."""
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert match, anchor
    return match.group(1)


def assert_tagged_values_are_the_json(page: str, data: dict) -> None:
    values = tagged_values(page)
    assert values
    for at, text in values:
        assert shown(text) == at_pointer(data, at), at


@pytest.fixture(scope="module")
def tuned():
    """The workload tuned with six trials, --tie-break first, on one in-process worker, held out on itself."""
    return kubefit.tune([WORKLOAD], "pending", trials=6, batch=3, tie_break="first", workers=1, validate=[WORKLOAD],
                        warn=quiet)


def test_the_tune_page_compares_the_tuned_configuration_with_the_baselines(tuned):
    """The workload leaves one pod pending under the scenario's configuration (kube-scheduler's defaults)
    and none under MostAllocated (see `kubefit.tune`'s example): the headline says tuned 0 against the best
    baseline, MostAllocated, 0, and the scenario's 1; the configuration to copy is the best one's document."""
    import html

    import yaml

    data = tuned.to_dict()
    page = render_html(tuned)
    assert_tagged_values_are_the_json(page, data)
    headline = dict((label, text) for text, label in re.findall(
        r'<div class="big"><span[^>]*>([^<]*)</span></div><div class="label">([^<]*)</div>', page))
    assert headline["tuned: pods pending"] == "0" and headline["best baseline (MostAllocated): pods pending"] == "0"
    assert headline["the scenario&#x27;s configuration: pods pending"] == "1"
    pre = re.search(r"<pre>(.*?)</pre>", section_of(page, "config"), re.S).group(1)
    assert yaml.safe_load(html.unescape(pre)) == data["best"]["config"]
    history = section_of(page, "history")
    assert history.count('class="trial"') == 6 and history.count('class="best"') == 1
    assert history.count('class="baseline"') == 2  # trials 0 (scenario, LeastAllocated) and 2; 1 is the best
    holdout = section_of(page, "holdout")
    assert holdout.count("<tr>") == 1 + 5  # the header, four baselines and the tuned one
    assert holdout.count("pods pending</th>") == 1  # the objective is the pods pending: one column of them
    assert '<a href="#history">Trial history</a>' in page and "<td>objective</td><td>pending</td>" in page


def test_tune_writes_its_report_from_the_command(tmp_path, capsys):
    path = tmp_path / "tune.html"
    rc, data, err = run_json(capsys, "tune", "-f", WORKLOAD, "--trials", "4", "--tie-break", "first", "--workers", "1",
                             "--report", str(path))
    assert rc == 0, err
    assert_tagged_values_are_the_json(path.read_text(), data)
    assert main(["tune", "-f", WORKLOAD, "--report", str(tmp_path / "tune.txt")]) == 2
    assert "name it FILE.html" in capsys.readouterr().err


def test_the_trial_chart_draws_the_best_so_far_as_steps():
    """Values 3, 1, 2, 0 with the best so far 3, 1, 1, 0: the line changes at trials 1 and 3, so it runs
    through (0, 3) (1, 3) (1, 1) (3, 1) (3, 0): five points, x and y on the chart's scale (0 at the bottom)."""
    from kubefit.report import svg

    chart = svg.trial_chart([3, 1, 2, 0], [3, 1, 1, 0], ["a", "b", "c", "d"], marked={0: "baseline", 3: "best"},
                            y_label="pods pending")
    points = re.search(r'<polyline points="([^"]*)"', chart).group(1).split()
    xy = [tuple(map(float, p.split(","))) for p in points]
    x0, w, y0, h = 56, 560, 10, 200  # the chart's plot area
    expected = [(0, 3), (1, 3), (1, 1), (3, 1), (3, 0)]
    assert xy == [(pytest.approx(x0 + w * i / 3, abs=0.05), pytest.approx(y0 + h - h * v / 3, abs=0.05))
                  for i, v in expected]
    assert chart.count('class="trial"') == 4 and 'class="best"' in chart


@pytest.mark.parametrize(("values", "axis"), [
    ([1, 0, 0.5], (0, 1)),  # from 0
    ([0, 0], (0, 1)),  # nothing but zeros: an axis of 1 still
    ([659, 640, 614], (614 - 6.59, 659 + 6.59)),  # far from 0: around them, a margin of 1 % of the largest
])
def test_the_trial_axis_starts_at_zero_unless_the_values_are_far_from_it(values, axis):
    from kubefit.report.svg import _value_range

    assert _value_range(values) == pytest.approx(axis)


DRA_CLASS = ('{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, '
             '"spec": {"selectors": [{"cel": {"expression": "device.driver == \\"gpu.example.com\\""}}]}}')


def dra_scenario(tmp_path: Path) -> Path:
    """n1 with two GPUs and three NICs, n2 with two GPUs; pods a and b with a one-GPU claim each."""
    def node(name: str) -> dict:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}

    def devices(node_name: str, driver: str, prefix: str, count: int) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{prefix}"},
                "spec": {"driver": driver, "nodeName": node_name, "pool": {"name": node_name, "resourceSliceCount": 1},
                         "devices": [{"name": f"{prefix}-{i}"} for i in range(count)]}}

    def pod(name: str) -> dict:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}],
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
    items = [json.loads(DRA_CLASS), template, node("n1"), node("n2"), devices("n1", "gpu.example.com", "gpu", 2),
             devices("n1", "nic.example.com", "nic", 3), devices("n2", "gpu.example.com", "gpu", 2), pod("a"), pod("b")]
    path = tmp_path / "dra.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def test_the_simulate_page_shows_devices_per_node_and_driver(tmp_path, capsys):
    """LeastAllocated puts a on n1 (a tie goes to the first node) and b on n2 (then emptier), each on its
    node's first GPU: n1 has 1 of 2 GPUs and 0 of 3 NICs allocated, n2 1 of 2 GPUs and no NIC."""
    path = tmp_path / "dra.html"
    rc, data, err = run_json(capsys, "simulate", "-f", str(dra_scenario(tmp_path)), "--tie-break", "first",
                             "--report", str(path))
    assert rc == 0, err
    page = path.read_text()
    assert_tagged_values_are_the_json(page, data)
    devices = section_of(page, "devices")
    per_node, per_device = devices.split('<table class="device-table">')
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", per_node)]
    assert cells == ["n1", "1 / 2", "0 / 3", "gpu.example.com/n1/gpu-0",
                     "n2", "1 / 2", "–", "gpu.example.com/n2/gpu-0"]
    rows = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", per_device.split("<tbody>")[1])]
    assert [r[:4] for r in rows] == [  # a row per device: n1's GPU pool, then its NIC pool, then n2
        ["n1", "gpu.example.com/n1/gpu-0", "yes", "a"], ["n1", "gpu.example.com/n1/gpu-1", "no", "–"],
        *(["n1", f"nic.example.com/n1/nic-{i}", "no", "–"] for i in range(3)),
        ["n2", "gpu.example.com/n2/gpu-0", "yes", "b"], ["n2", "gpu.example.com/n2/gpu-1", "no", "–"]]
    assert devices.count("<svg") == 1 and "n1 · nic.example.com: 0 of 3 allocated (0.0 %)" in devices
    queue = section_of(page, "queue")
    assert "<th>devices (claim: driver/pool/device)</th>" in queue
    assert "<td>gpu: gpu.example.com/n1/gpu-0</td>" in queue and "<td>gpu: gpu.example.com/n2/gpu-0</td>" in queue


def test_a_run_without_dra_objects_has_no_device_parts():
    page = render_html(kubefit.simulate([WORKLOAD], warn=quiet))
    assert 'id="devices"' not in page and "devices (claim" not in page


INSTALL = [str(ROOT / "examples/install/kind-cluster.yaml"), str(ROOT / "examples/install/cassandra")]


def test_pods_never_created_are_shown_as_such_not_as_pending(capsys, tmp_path):
    """The README's Cassandra example: cassandra-1 fits nowhere (1Gi on a worker left with 512Mi, the other
    node tainted), so the StatefulSet (OrderedReady) never creates cassandra-2. The page counts 1 pending
    and 1 not created, lists cassandra-2 under "not created" in the queue and its own section, and not
    among the pending pods; the admission's notes are the warnings."""
    path = tmp_path / "install.html"
    rc, data, err = run_json(capsys, "simulate", *(a for f in INSTALL for a in ("-f", f)), "--report", str(path))
    assert rc == 0, err
    page = path.read_text()
    assert_tagged_values_are_the_json(page, data)
    assert '<span class="value" data-json="/notCreated">1</span></div><div class="label">pods not created' in page
    assert '<span class="value" data-json="/unschedulable">1</span></div><div class="label">pods left pending' in page
    pending = section_of(page, "pending")
    assert "cassandra-1" in pending and "cassandra-2" not in pending
    assert re.search(r"<td>cassandra-2</td><td><span class=\"not-created\">not created</span></td>", page)
    assert "<td>cassandra-2</td><td>StatefulSet/cassandra creates it only once cassandra-1" in section_of(page, "not-created")
    assert "StorageClass/fast: volumeBindingMode: the API server defaults it to Immediate" in page.split("</aside>")[0]


@pytest.mark.parametrize(("args", "label", "at"), [
    (["plan", "--node-template", str(ROOT / "examples/install/worker.yaml")], "not created before", "/notCreatedBefore"),
    (["simulate", "--timeline"], "never created", "/notCreated"),
    (["simulate", "--compare", "MostAllocated"], "pods not created", "/configurations/1/notCreated"),
], ids=["plan", "timeline", "compare"])
def test_other_pages_count_the_pods_not_created(capsys, tmp_path, args, label, at):
    """The same example: one pod not created, before the plan adds nodes, over the timeline, under each
    compared configuration."""
    path = tmp_path / "r.html"
    rc, data, err = run_json(capsys, args[0], *(a for f in INSTALL for a in ("-f", f)), *args[1:], "--report", str(path))
    assert rc in (0, 1), err
    page = path.read_text()
    assert_tagged_values_are_the_json(page, data)
    assert f'<span class="value" data-json="{at}">1</span></div><div class="label">{label}' in page


def test_the_device_rows_show_shared_capacity_and_counters():
    """The report renders what `devices[node].pools` holds (no computing): a shared device's shares and consumed
    capacity, what a partition consumes, and a table of the pool's counters left."""
    from kubefit.report.pages import per_device_table

    usage = {"n1": {"pools": [{"driver": "gpu.example.com", "pool": "n1", "allocated": 1, "counters": {
        "gpu-0": {"memory": {"capacity": "80Gi", "consumed": "10Gi", "free": "70Gi"}}}, "devices": [
        {"name": "mig-1g-0", "allocated": True, "claims": ["default/c"], "pods": ["default/p"],
         "capacity": {"memory": "10Gi"}, "consumesCounters": {"gpu-0": {"memory": "10Gi"}}},
        {"name": "eth-0", "allocated": True, "capacity": {"bandwidth": "100G"}, "shared": True, "shares": 2,
         "consumedCapacity": {"bandwidth": "30G"}}]}]}}
    html = str(per_device_table(usage))
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", html)]
    assert "memory 10Gi; consumes gpu-0: memory 10Gi" in cells
    assert "bandwidth 100G; shared: 2 share(s), bandwidth 30G consumed" in cells
    counter_rows = html.split('class="counter-table"')[1]
    assert [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", counter_rows)] == [
        "n1", "gpu.example.com/n1", "gpu-0", "memory", "10Gi", "70Gi", "80Gi"]


def test_the_plan_page_folds_the_added_nodes_when_there_are_many():
    """A plan may add thousands of nodes (7,313 on the production-shaped bench file, 4,934 of them empty in the
    verifying simulation): the per-node table is folded beyond 20 nodes, its summary counting them and the empty
    ones; a short list stays open."""
    from kubefit.report.pages import _added_nodes

    added = [f"t-{i}" for i in range(1, 31)]
    many = str(_added_nodes({"nodesAdded": added, "placement": {"old": 3, **{n: 2 for n in added[:25]}}}))
    assert many.startswith("<details><summary>pods placed per added node (30; 5 hold none)</summary>")
    assert many.count("<tr>") == 31 and '<td>t-30</td><td class="num">0</td>' in many
    few = str(_added_nodes({"nodesAdded": added[:2], "placement": {"t-1": 1, "t-2": 4}}))
    assert few.startswith("<details open><summary>pods placed per added node (2)</summary>")
