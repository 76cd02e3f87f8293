"""The HTML reports opened in a real headless Chromium: no script error, charts drawn, the numbers of
`-o json`, nothing fetched, hostile names shown as text.

Each case runs the command in-process with `-o json --report` (so that a run with times, `tune`'s, is
compared with itself) and opens the page from disk as a person would. Every element tagged with a JSON
Pointer (`data-json`: the headline numbers and the tables' values) must show the value `-o json` holds
there; a case's own elements (`SHOWN`) must be there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser import browser, has_colour, open_page, screenshot_pixels  # noqa: F401 (browser: a fixture)
from kubefit.cli import main
from tests_support import at_pointer, shown

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = "examples/workload/cluster.yaml"
KARMADA = "examples/karmada"
NGINX = [f"{KARMADA}/samples-nginx/{f}.yaml" for f in ("clusters", "deployment", "propagationpolicy")]
CASES = {
    "simulate": ["simulate", "-f", WORKLOAD],
    "compare": ["simulate", "-f", WORKLOAD, "--compare", "MostAllocated", "RequestedToCapacityRatio"],
    "compare-versions": ["simulate", "-f", "examples/versions/cluster.yaml", "--compare-versions", "1.34,1.37"],
    "timeline": ["simulate", "-f", "examples/timeline/cluster.yaml", "--timeline"],
    "drain": ["simulate", "-f", "examples/drain/cluster.yaml", "--drain", "node-a"],
    "preemption": ["simulate", "-f", "examples/preemption/cluster.yaml"],
    "capacity": ["capacity", "-f", WORKLOAD, "--pod", "report-0"],
    "plan": ["plan", "-f", "examples/plan/cluster.yaml", "--node-template", "examples/plan/small.yaml",
             "examples/plan/large.yaml"],
    "estimate": ["estimate", "-f", f"{KARMADA}/estimate-fragmentation.yaml", "--explain",
                 "--member", f"fragmented={KARMADA}/estimate-fragmentation-member.yaml"],
    "schedule": ["schedule", *(a for f in NGINX for a in ("-f", f))],
    # its Clusters have no status.apiEnablements: a warning, which the page must show first
    "schedule-warned": ["schedule", "-f", f"{KARMADA}/schedule-general-prefers-member1.yaml"],
    "consolidate": ["consolidate", "-f", "examples/consolidate/cluster.yaml", "--repack", "--compare", "MostAllocated"],
    "tune": ["tune", "-f", WORKLOAD, "--trials", "6", "--batch", "3", "--tie-break", "first", "--workers", "1",
             "--validate", WORKLOAD],
    "dra": ["simulate", "-f", "examples/dra/cluster.yaml", "--tie-break", "first"],
    # cassandra-1 fits nowhere, so its StatefulSet never creates cassandra-2; admission's notes are warnings
    "ordered-ready": ["simulate", "-f", "examples/install/kind-cluster.yaml", "-f", "examples/install/cassandra"],
    "rightsize": ["rightsize", "-f", "examples/rightsize/cluster.yaml", "--requests-from", "usage", "--usage",
                  "examples/rightsize/usage/prometheus.json", "--baseline"],
    "rightsize-vpa": ["rightsize", "-f", "examples/rightsize", "--requests-from", "vpa"],
}
SHOWN = {  # case → {selector: elements expected}
    # README's worked example: node-d and node-e go, node-e's api pod moves, node-a, b and c stay; the removed
    # nodes are marked in today's bars and absent from after's, node-c in both; two configurations repacked
    "consolidate": {"#removable tbody tr": 2, "#moves tbody tr": 1, "#blocked tbody tr": 3,
                    "#allocation svg.chart": 2, "#allocation text:text-is('+ node-d')": 1,
                    "#allocation text:text-is('node-e')": 0, "#allocation text:text-is('node-c')": 2, "#repack svg.chart": 1, "#repack tbody tr": 2},
    "tune": {"#history circle.trial": 6, "#history circle.baseline": 2, "#history circle.best": 1, "#baselines svg.chart": 1, "#time svg.chart": 1,
             "#config pre": 1, "#holdout tbody tr": 5},
    "dra": {"#devices svg.chart": 1, "#devices tbody tr": 10, ".device-table tbody tr": 8, "#queue th:text-is('devices (claim: driver/pool/device)')": 1},
    "ordered-ready": {"#queue .not-created": 1, "#not-created tbody tr": 1, "#queue .pending": 1},
    # three workloads rewritten from the usage file, their seven pods recreated; request-vs-usage bars for cpu and
    # memory; the node counts today, today consolidated and right-sized
    "rightsize": {"#usage svg.chart": 2, "#changes tbody tr": 3, "#moves tbody tr": 7, "#risk tbody tr": 3,
                  "#nodes svg.chart": 1, "#nodes svg.chart rect": 3},
    # the VPAs: web recreated, api resized in place on node-2 and deferred (then recreated) on node-3
    "rightsize-vpa": {"#resizes tbody tr": 2, "#changes tbody tr": 2, "#moves tbody tr": 5, "#usage svg.chart": 0},
}
FIRST_COLOUR = "#0072B2"  # svg.PALETTE[0]: the first resource's bars, the first line, the first series


def run(capsys, args: list[str]) -> str:
    code = main(args)
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    return out.out


@pytest.mark.parametrize("case", list(CASES))
def test_report_renders_the_json_numbers_without_error_or_network(case, browser, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.chdir(ROOT)
    path = tmp_path / f"{case}.html"
    data = json.loads(run(capsys, [*CASES[case], "-o", "json", "--report", str(path)]))
    opened = open_page(browser, path)
    try:
        page = opened.page
        assert opened.errors == [] and opened.dialogs == []
        assert opened.requests == [opened.url]  # the file itself, nothing else
        values = page.eval_on_selector_all("[data-json]", "els => els.map(e => [e.dataset.json, e.textContent])")
        assert page.locator(".headline [data-json]").count() >= 1
        assert len(values) >= 3
        for at, text in values:
            assert shown(text) == at_pointer(data, at), at
        charts = page.locator("svg.chart")
        assert charts.count() >= 1
        for i in range(charts.count()):
            box = charts.nth(i).bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 20
        assert has_colour(screenshot_pixels(charts.first), FIRST_COLOUR)  # drawn, not blank
        for selector, count in SHOWN.get(case, {}).items():
            assert page.locator(selector).count() == count, selector
        warnings = data.get("warnings") or []
        assert page.locator(".warnings li").all_inner_texts() == warnings
        if warnings:  # the first thing on the page, in view without scrolling
            assert page.evaluate("document.querySelector('main').firstElementChild.className") == "warnings"
            assert page.locator(".warnings").bounding_box()["y"] < 900
        assert warnings or case != "schedule-warned"
    finally:
        opened.close()


HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


DRA_OBJECTS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
---
"""


@pytest.mark.parametrize("verb", ["simulate", "tune"])
def test_hostile_names_stay_text(browser, tmp_path, capsys, verb):  # noqa: F811
    """Pod, node, file, DRA pool and claim names holding markup and script are shown as the text they
    are: nothing runs, no element is made of them, nothing is fetched."""
    folder = tmp_path / '"><svg onload=window.__pwned=3>'
    folder.mkdir()
    scenario = folder / f"{HOSTILE.replace('/', '_')}.yaml"
    node, pool, claim = (json.dumps(prefix + HOSTILE) for prefix in ("node", "pool", "claim"))
    scenario.write_text(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {node}}}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n" + DRA_OBJECTS
        + f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: gpus}}\n"
          f"spec: {{driver: gpu.example.com, nodeName: {node}, pool: {{name: {pool}, resourceSliceCount: 1}}, "
          "devices: [{name: gpu-0}]}\n---\n"
        + "".join(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {json.dumps(name)}}}\n"
                  f"spec: {{containers: [{{name: c, resources: {{requests: {{cpu: {cpu!r}}}{claims}}}}}]{pod_claims}}}\n---\n"
                  for name, cpu, claims, pod_claims in (
                      ("pod" + HOSTILE, "500m", f", claims: [{{name: {claim}}}]",
                       f", resourceClaims: [{{name: {claim}, resourceClaimTemplateName: one-gpu}}]"),
                      ("big" + HOSTILE, "2", "", ""))))
    path = tmp_path / "hostile.html"
    run(capsys, [verb, "-f", str(scenario), "--report", str(path),
                 *(["--trials", "4", "--tie-break", "first", "--workers", "1"] if verb == "tune" else [])])
    opened = open_page(browser, path)
    try:
        page = opened.page
        assert page.evaluate("window.__pwned") is None
        assert opened.dialogs == [] and opened.errors == [] and opened.requests == [opened.url]
        assert page.locator("img").count() == 0 and page.locator("script").count() == 1
        assert page.locator("svg").count() == page.locator("svg.chart").count()  # only the charts
        text = page.inner_text("body")
        if verb == "simulate":
            for name in ("pod" + HOSTILE, "big" + HOSTILE, "node" + HOSTILE, "claim" + HOSTILE, "pool" + HOSTILE):
                assert name in text
        assert str(scenario) in text  # the file name, in the inputs
    finally:
        opened.close()


def test_a_large_cluster_is_drawn_as_sorted_profiles(browser, tmp_path):  # noqa: F811
    """Beyond a few hundred nodes no bar per node: one sorted profile per resource, still drawn."""
    from kubefit.report import write_html
    from tests_support import many_nodes_result

    result = many_nodes_result(400)
    path = tmp_path / "large.html"
    write_html(result, path)
    opened = open_page(browser, path)
    try:
        page = opened.page
        assert opened.errors == [] and opened.requests == [opened.url]
        charts = page.locator("svg.chart")
        assert charts.count() == 3  # cpu, memory, pods
        assert page.locator("svg.chart polyline").count() == 3 and page.locator("svg.chart rect.track").count() == 0
        assert has_colour(screenshot_pixels(charts.first), FIRST_COLOUR)
    finally:
        opened.close()


def test_the_report_prints(browser, tmp_path, capsys, monkeypatch):  # noqa: F811
    """In print: no navigation, every collapsed block opened, the charts kept; a PDF comes out."""
    monkeypatch.chdir(ROOT)
    path = tmp_path / "simulate.html"
    run(capsys, [*CASES["simulate"], "--report", str(path)])
    opened = open_page(browser, path)
    try:
        page = opened.page
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        assert page.evaluate("[...document.querySelectorAll('details')].every(d => d.open)")
        page.emulate_media(media="print")
        assert page.locator("nav").is_hidden()
        assert page.locator("svg.chart").first.is_visible()
        pdf = page.pdf(format="A4")
        assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
        assert opened.errors == []
    finally:
        opened.close()
