"""The HTML reports opened in a real headless Chromium: no script error, charts drawn, the numbers of
`-o json`, nothing fetched, hostile names shown as text.

Each case runs the command twice in-process, once with `-o json` and once with `--report`, and opens
the page from disk as a person would. Every element tagged with a JSON Pointer (`data-json`: the
headline numbers and the tables' values) must show the value `-o json` holds there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser import browser, has_colour, open_page, screenshot_pixels  # noqa: F401 (browser: a fixture)
from kubefit.cli import main

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = "examples/workload/cluster.yaml"
KARMADA = "examples/karmada"
NGINX = [f"{KARMADA}/samples-nginx/{f}.yaml" for f in ("clusters", "deployment", "propagationpolicy")]
CASES = {
    "simulate": ["simulate", "-f", WORKLOAD],
    "compare": ["simulate", "-f", WORKLOAD, "--compare", "MostAllocated", "RequestedToCapacityRatio"],
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
}
FIRST_COLOUR = "#0072B2"  # svg.PALETTE[0]: the first resource's bars, the first line, the first series


def resolve(data, at: str):
    """The value at JSON Pointer `at` (RFC 6901)."""
    for part in at.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        data = data[int(key)] if isinstance(data, list) else data[key]
    return data


def shown(text: str):
    """A number as the page prints it (`1,234`, `64.25 %`, `yes`) back as a JSON value."""
    t = text.replace(",", "").replace("%", "").strip()
    return t == "yes" if t in ("yes", "no") else json.loads(t)


def run(capsys, args: list[str]) -> str:
    code = main(args)
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    return out.out


@pytest.mark.parametrize("case", list(CASES))
def test_report_renders_the_json_numbers_without_error_or_network(case, browser, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.chdir(ROOT)
    data = json.loads(run(capsys, [*CASES[case], "-o", "json"]))
    path = tmp_path / f"{case}.html"
    run(capsys, [*CASES[case], "-o", "json", "--report", str(path)])
    opened = open_page(browser, path)
    try:
        page = opened.page
        assert opened.errors == [] and opened.dialogs == []
        assert opened.requests == [opened.url]  # the file itself, nothing else
        values = page.eval_on_selector_all("[data-json]", "els => els.map(e => [e.dataset.json, e.textContent])")
        assert page.locator(".headline [data-json]").count() >= 1
        assert len(values) >= 3
        for at, text in values:
            assert shown(text) == resolve(data, at), at
        charts = page.locator("svg.chart")
        assert charts.count() >= 1
        for i in range(charts.count()):
            box = charts.nth(i).bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 20
        assert has_colour(screenshot_pixels(charts.first), FIRST_COLOUR)  # drawn, not blank
        warnings = data.get("warnings") or []
        assert page.locator(".warnings li").all_inner_texts() == warnings
        if warnings:  # the first thing on the page, in view without scrolling
            assert page.evaluate("document.querySelector('main').firstElementChild.className") == "warnings"
            assert page.locator(".warnings").bounding_box()["y"] < 900
        assert warnings or case != "schedule-warned"
    finally:
        opened.close()


HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def test_hostile_names_stay_text(browser, tmp_path, capsys):  # noqa: F811
    """Pod, node and file names holding markup and script are shown as the text they are: nothing runs,
    no element is made of them, nothing is fetched."""
    folder = tmp_path / '"><svg onload=window.__pwned=3>'
    folder.mkdir()
    scenario = folder / f"{HOSTILE.replace('/', '_')}.yaml"
    scenario.write_text(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {json.dumps('node' + HOSTILE)}}}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n"
        + "".join(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {json.dumps(name)}}}\n"
                  f"spec: {{containers: [{{name: c, resources: {{requests: {{cpu: {cpu!r}}}}}}}]}}\n---\n"
                  for name, cpu in (("pod" + HOSTILE, "500m"), ("big" + HOSTILE, "2"))))
    path = tmp_path / "hostile.html"
    run(capsys, ["simulate", "-f", str(scenario), "--report", str(path)])
    opened = open_page(browser, path)
    try:
        page = opened.page
        assert page.evaluate("window.__pwned") is None
        assert opened.dialogs == [] and opened.errors == [] and opened.requests == [opened.url]
        assert page.locator("img").count() == 0 and page.locator("script").count() == 1
        assert page.locator("svg").count() == page.locator("svg.chart").count()  # only the charts
        text = page.inner_text("body")
        for name in ("pod" + HOSTILE, "big" + HOSTILE, "node" + HOSTILE):
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
