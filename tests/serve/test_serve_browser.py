"""`kubefit serve` in a real headless Chromium (Debian's, through Playwright), against the real server:
a pod's decision shows `kubefit score`'s per-plugin scores, an invalid configuration shows kube-scheduler's
message as it is typed, MostAllocated moves the pods exactly as `kubefit simulate` does, cordoning a node
moves its pods, two configurations compare, undo goes back; the page loads nothing from elsewhere and
raises no script error (its CSP forbids inline script)."""

from __future__ import annotations

import json

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips every test, with BROWSER_ABSENT
    expect = None
from serve_support import ROOT, SCALED, WORKLOAD, batched

import kubefit
from browser import browser  # noqa: F401 (browser: a fixture)
from kubefit.cli import main

QUIET = {"warn": lambda _: None}
REFUSED = "status of 400 (Bad Request)"  # the browser's own line for an edit the server refused (shown in the page)


def where(run) -> dict[str, str | None]:
    names = run.state.node_names
    return {s.pod.key: None if s.node is None else names[s.node] for s in run.steps}


@pytest.fixture
def page(browser, served):  # noqa: F811 (the fixture)
    """The served page loaded, with the console's errors and every request recorded."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, service_workers="block")
    p = context.new_page()
    p.errors, p.requests = [], []
    p.on("console", lambda m: p.errors.append(m.text) if m.type == "error" and REFUSED not in m.text else None)
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    p.on("request", lambda r: p.requests.append(r.url))
    p.goto(served.url + "/")
    p.wait_for_selector("body[data-ready=true]")
    yield p
    assert p.errors == []
    assert all(url.startswith(served.url) for url in p.requests), p.requests
    context.close()


def queue(page) -> dict[str, str | None]:
    """The queue tab's placements: pod → node (None: pending)."""
    page.click("#tabs button[data-tab=queue]")
    rows = page.eval_on_selector_all("#pods tbody tr", "rs => rs.map(r => [r.dataset.pod, r.querySelector('.node').textContent])")
    return {pod: None if node == "pending" else node for pod, node in rows}


def after_edit(page, action) -> None:
    """Do `action` and wait until the page has rendered the server's answer."""
    with page.expect_response(lambda r: r.request.method == "POST"):
        action()  # the page is busy from the click until every request it makes for the answer is drawn
    page.wait_for_selector("body:not(.busy)", state="attached")


def test_first_page_shows_the_cluster_and_queue(page, served):
    expected = kubefit.simulate([WORKLOAD], **QUIET)
    assert page.text_content("#summary [data-field=scheduled]") == str(expected.scheduled)
    assert page.locator("#nodes tbody tr").count() == 7
    assert page.locator("#nodes tbody tr[data-node=gpu-1] .bar[data-resource='nvidia.com/gpu']").count() == 1
    page.fill("#node-selector", "pool=highmem")
    expect(page.locator("#nodes tbody tr")).to_have_count(2)
    page.click("#nodes tbody tr[data-node=highmem-1] a")
    page.wait_for_selector("#node-detail")
    shown = set(page.eval_on_selector_all("#node-detail li", "ls => ls.map(l => l.dataset.pod)"))
    assert shown == {p.key for p in expected.state.pods[expected.state.node_index["highmem-1"]]}
    assert queue(page) == where(expected)


def test_decision_shows_kubefit_score(page, capsys):
    pod = "shop/web-3"  # the 6th in the queue: scored at its turn, after the five before it bound
    assert main(["score", "-f", WORKLOAD, "--pod", pod, "--at-turn", "--detail", "-o", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    queue(page)
    page.click(f"#pods tr[data-pod='{pod}'] a")
    page.wait_for_selector("#decision-nodes")
    shown = page.eval_on_selector_all(
        "#decision-nodes > tbody > tr",
        "rs => rs.map(r => [r.dataset.node, Object.fromEntries([...r.querySelectorAll('td[data-plugin]')]"
        ".filter(c => c.querySelector('[data-kind=score]')).map(c => [c.dataset.plugin, "
        "+c.querySelector('[data-kind=score]').textContent])), r.querySelector('[data-kind=total]').textContent])")
    assert len(shown) == len(expected["filter"])
    for node, scores, total in shown:
        assert scores == {p: v[node] for p, v in expected["score"].items() if node in v}
        assert total == (str(expected["total"][node]) if node in expected["total"] else "")
    for node, verdict in expected["filter"].items():
        assert verdict["code"] in page.text_content(f"#decision-nodes tr[data-node='{node}'] .verdict")
    page.click("#decision-nodes tr[data-node='general-1'] details.explain summary")
    fit = page.locator("#decision-nodes tr[data-node='general-1'] .explain [data-plugin=NodeResourcesFit]")
    assert main(["score", "-f", WORKLOAD, "--pod", pod, "--at-turn", "--explain", "-o", "json"]) == 0
    arithmetic = json.loads(capsys.readouterr().out)["explain"]["general-1"]["NodeResourcesFit"]
    expect(fit).to_contain_text(arithmetic["formula"])
    assert fit.locator("tbody tr").count() == len(arithmetic["resources"])


def test_invalid_configuration_shows_kube_schedulers_message(page):
    page.click("#tabs button[data-tab=config]")
    page.fill("#config-text", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                              "profiles:\n- schedulerName: ''\n")
    expect(page.locator("#config-message")).to_contain_text("schedulerName")
    assert "profiles[0].schedulerName: Required value" in page.text_content("#config-message")
    assert "invalid" in page.get_attribute("#config-message", "class")
    after_edit(page, lambda: page.click("#config-apply"))
    assert "schedulerName" in page.text_content("#config-message")
    assert page.text_content("#history") == "the files as given"  # refused: nothing changed


def test_most_allocated_places_as_simulate_says(page):
    page.click("#tabs button[data-tab=config]")
    page.click("[data-preset=MostAllocated]")
    expect(page.locator("#config-message")).to_have_text("valid")
    after_edit(page, lambda: page.click("#config-apply"))
    expected = kubefit.compare([WORKLOAD], ["MostAllocated"], **QUIET)[1]
    before = where(kubefit.simulate([WORKLOAD], **QUIET))
    assert queue(page) == where(expected) != before


def test_cordon_compare_and_undo(page):
    before = queue(page)
    page.click("#tabs button[data-tab=cluster]")
    page.click("#nodes tbody tr[data-node=highmem-2] a")
    page.wait_for_selector("#node-detail")
    after_edit(page, lambda: page.click("#node-detail [data-node-action=cordon]"))
    moved = page.eval_on_selector_all("#moved li", "ls => ls.map(l => l.textContent)")
    assert any("highmem-2 →" in m for m in moved)
    assert queue(page) == where(kubefit.simulate([WORKLOAD], cordon=["highmem-2"], **QUIET))
    assert "highmem-2" not in set(queue(page).values()) - set(before.values()) | {None}

    page.click("#tabs button[data-tab=compare]")
    page.select_option("#compare-preset", "MostAllocated")
    with page.expect_response("**/api/compare"):
        page.click("#compare-run")
    page.wait_for_selector("#differences")
    runs = kubefit.compare([WORKLOAD], ["MostAllocated"], cordon=["highmem-2"], **QUIET)
    first, second = where(runs[0]), where(runs[1])
    shown = page.eval_on_selector_all("#differences tbody tr", "rs => rs.map(r => r.dataset.pod)")
    assert shown == [k for k in first if first[k] != second.get(k)]

    page.select_option("#compare-second", "RequestedToCapacityRatio")  # three runs side by side
    with page.expect_response("**/api/compare"):
        page.click("#compare-run")
    expect(page.locator("#differences thead th")).to_have_count(4)
    three = page.locator("#differences tbody tr").count()
    page.select_option("#compare-second", "")
    page.select_option("#compare-preset", "pasted")
    page.fill("#compare-text", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                               "profiles:\n- schedulerName: ''\n")
    with page.expect_response("**/api/compare"):
        page.click("#compare-run")
    expect(page.locator("#compare-message")).to_contain_text("profiles[0].schedulerName: Required value")
    assert page.locator("#differences tbody tr").count() == three  # the last comparison stays

    after_edit(page, lambda: page.click("#undo"))
    assert queue(page) == before
    assert page.is_disabled("#undo")


def test_planning_paste_and_export(page, served):
    page.click("#tabs button[data-tab=planning]")
    page.fill("#plan-pod", "report-0")
    with page.expect_response("**/api/planning"):
        page.click("#plan-run")
    expected = kubefit.capacity([WORKLOAD], "report-0", **QUIET)
    expect(page.locator("#plan-headline")).to_contain_text(f"count{expected.to_dict()['count']}")
    report = page.frame_locator("iframe.report")
    expect(report.locator("h1")).to_have_count(1)  # the capacity report, drawn in its sandbox

    page.click("#tabs button[data-tab=whatif]")
    page.fill("#add-yaml", "kind: Pod\nmetadata: {name: [broken\n")
    after_edit(page, lambda: page.click("#add-apply"))
    assert "pasted" in page.text_content("#add-message") and "invalid" in page.get_attribute("#add-message", "class")
    page.fill("#add-yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: extra, namespace: shop}\n"
                           "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n")
    after_edit(page, lambda: page.click("#add-apply"))
    assert "shop/extra" in queue(page)

    page.click("#tabs button[data-tab=export]")
    for link in ("#export-yaml", "#export-report"):
        with page.expect_download() as download:
            page.click(link)
        assert download.value.path().stat().st_size > 1000


def test_screenshot_tool_writes_a_small_png(browser, tmp_path):  # noqa: F811 (the fixture)
    import importlib.util

    spec = importlib.util.spec_from_file_location("serve_screenshot", ROOT / "tools" / "serve_screenshot.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    out = tmp_path / "serve.png"
    tool.screenshot(out, browser=browser)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and 20_000 < len(data) < 400_000


HOSTILE = SCALED.replace("pool: a}", 'pool: a, note: "<img src=x onerror=alert(1)>"}')


def test_scale_add_nodes_and_hostile_text(browser, serve_files, tmp_path):  # noqa: F811 (the fixture)
    """Scaling and node copies from the What-if tab; a label holding markup is shown as text, never run."""
    path = tmp_path / "hostile.yaml"
    path.write_text(HOSTILE)
    served = serve_files([str(path)])
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(served.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    page.click("#nodes tbody tr[data-node=n1] a")
    expect(page.locator("#node-detail .labels")).to_contain_text("note=<img src=x onerror=alert(1)>")
    assert page.locator("#detail img").count() == 0
    page.click("#tabs button[data-tab=whatif]")
    page.fill("#workloads tr[data-workload='default/web'] input", "9")
    after_edit(page, lambda: page.click("#workloads tr[data-workload='default/web'] button"))
    assert page.text_content("#summary [data-field=unschedulable]") == "1"  # 9 pods of 1 cpu, 8 cpus
    page.fill("#add-count", "1")
    page.fill("#add-template", "n1")
    after_edit(page, lambda: page.click("#add-nodes"))
    assert page.text_content("#summary [data-field=unschedulable]") == "0"
    assert page.eval_on_selector_all("#nodes tbody tr", "rs => rs.map(r => r.dataset.node)") == ["n1", "n1-1", "n2"]
    assert dialogs == []
    context.close()


def test_drain_shows_where_the_evicted_pods_went(browser, serve_files):  # noqa: F811 (the fixture)
    served = serve_files([str(ROOT / "examples" / "drain" / "cluster.yaml")])
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(served.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    page.click("#tabs button[data-tab=whatif]")
    page.fill("#whatif-node", "node-a")
    after_edit(page, lambda: page.click("[data-action=drain]"))
    expected = kubefit.simulate([str(ROOT / "examples" / "drain" / "cluster.yaml")], drain=["node-a"], **QUIET)
    (evicted,) = expected.node_actions["evicted"]
    assert page.text_content(f"#evicted li[data-pod='{evicted['pod']}']") == (
        f"{evicted['pod']} evicted from node-a: replaced by {evicted['replacement']}, now on {evicted['to']}")
    assert "drain: node-a" in page.text_content("#whatif-actions")
    context.close()


def open_served(browser, served):  # noqa: F811 (the fixture)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(served.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    return page


def test_dra_devices_are_bars_per_node(browser, serve_files):  # noqa: F811 (the fixture)
    """examples/dra: a bar per DRA driver beside cpu, memory and pods, each node's devices allocated / in its
    ResourceSlices as simulate reports them; sorting by it; a node lists the devices it has allocated."""
    dra = str(ROOT / "examples" / "dra" / "cluster.yaml")
    page = open_served(browser, serve_files([dra]))
    expected = kubefit.simulate([dra], **QUIET).to_dict()["devices"]
    expect(page.locator("#nodes thead th")).to_contain_text(["node", "cpu", "memory", "pods", "gpu.example.com devices"])
    for node, use in expected.items():
        driver = use["drivers"]["gpu.example.com"]
        cell = page.locator(f"#nodes tr[data-node={node}] td:has(.bar[data-driver='gpu.example.com'])")
        assert cell.locator(".amount").text_content() == f"{driver['allocated']}/{driver['devices']}"
        pct = 100 * driver["allocated"] / driver["devices"]
        assert float(cell.locator(".fill").get_attribute("data-pct")) == pytest.approx(pct)
    assert page.text_content("#nodes tr[data-node=node-c] td:has(.bar[data-driver]) .amount") == "–"
    # an idle node's cpu reads as the API's quantity does (0, not 0m; 12 cores as 12)
    assert page.text_content("#nodes tr[data-node=node-c] td:has(.bar[data-resource=cpu]) .amount") == "0/32"
    assert page.text_content("#nodes tr[data-node=node-a] td:has(.bar[data-resource=cpu]) .amount") == "12/32"
    page.select_option("#node-sort", "devices:gpu.example.com")
    page.check("#node-desc")
    expect(page.locator("#nodes tbody tr").last).to_have_attribute("data-node", "node-c")
    page.click("#nodes tbody tr[data-node=node-b] a")
    expect(page.locator("#node-devices")).to_have_text("DRA devices allocated: " + ", ".join(expected["node-b"]["allocated"]))
    assert page.errors == []
    page.context.close()


def test_a_node_shows_its_devices_one_by_one(browser, serve_files):  # noqa: F811 (the fixture)
    """examples/dra, node-b: a row per device of its pool, allocated or free as simulate's `devices[node].pools`
    says, who holds it (the inference pod its H100 gpu-0) and its capacity; free ones marked free."""
    dra = str(ROOT / "examples" / "dra" / "cluster.yaml")
    page = open_served(browser, serve_files([dra]))
    [pool] = kubefit.simulate([dra], **QUIET).to_dict()["devices"]["node-b"]["pools"]
    page.click("#nodes tbody tr[data-node=node-b] a")
    rows = page.locator("#node-device-pools tbody tr")
    expect(rows).to_have_count(len(pool["devices"]))
    for device in pool["devices"]:
        row = page.locator(f"#node-device-pools tr[data-device='gpu.example.com/node-b/{device['name']}']")
        cells = row.locator("td").all_text_contents()
        assert cells[1] == ("allocated" if device["allocated"] else "free")
        assert cells[2] == (", ".join(device.get("pods") or device.get("claims") or []) or "–")
        assert cells[3] == "memory 80Gi"
    assert page.locator("#node-device-pools tr[data-device='gpu.example.com/node-b/gpu-0'] td").nth(2) \
        .text_content() == "default/inference"
    assert page.locator("#node-device-pools tr.free").count() == sum(not d["allocated"] for d in pool["devices"])
    assert page.errors == []
    page.context.close()


def test_batch_hint_shows_in_queue_and_decision(browser, serve_files, tmp_path):  # noqa: F811 (the fixture)
    """tests/scheduler/test_batch.py's full-node scenario on v1.36: p2 and p3 were bound to the batch's hint,
    unscored, as simulate's steps say; the queue marks them and p2's decision says so."""
    path = tmp_path / "batched.json"
    path.write_text(batched())
    page = open_served(browser, serve_files([str(path)], kube_version="1.36"))
    steps = kubefit.simulate([str(path)], kube_version="1.36", **QUIET).to_dict()["steps"]
    queue(page)
    hinted = page.eval_on_selector_all("#pods tbody tr[data-batch-hint=true]", "rs => rs.map(r => r.dataset.pod)")
    assert hinted == [f"default/{s['pod']}" for s in steps if s.get("batchHint")] == ["default/p2", "default/p3"]
    expect(page.locator("#pods tr[data-pod='default/p2'] .why")).to_have_text("batch hint (bound unscored)")
    page.click("#pods tr[data-pod='default/p2'] a")
    expect(page.locator("#batch-hint")).to_contain_text("Bound to the batch's hint, unscored")
    assert page.text_content("#decision-node") == "n2"
    page.click("#pods tr[data-pod='default/p1'] a")
    expect(page.locator("#decision h2")).to_have_text("Pod default/p1")
    assert page.locator("#batch-hint").count() == 0
    assert page.errors == []
    page.context.close()


def test_tune_on_the_planning_page(browser, serve_files):  # noqa: F811 (the fixture)
    """tune runs in the background with its trials counted, then shows kubefit tune's headline, its report in
    the sandboxed frame, and its configuration ready for the editor (where kube-scheduler accepts it)."""
    from kubefit.report.tune import config_yaml

    page = open_served(browser, serve_files(tie_break="first"))
    page.click("#tabs button[data-tab=planning]")
    assert page.is_hidden("#tune-trials")
    page.select_option("#plan-verb", "tune")
    assert page.is_hidden("#plan-pod") and page.input_value("#tune-trials") == "16"
    assert page.input_value("#tune-objective") == "pending"
    page.fill("#tune-trials", "6")
    page.fill("#tune-batch", "3")
    with page.expect_response("**/api/tune/start"):
        page.click("#plan-run")
    expect(page.locator("#tune-text")).to_have_text("6 of 6 trials · done", timeout=120_000)
    expected = kubefit.tune([WORKLOAD], "pending", trials=6, batch=3, tie_break="first", workers=1, **QUIET).to_dict()
    headline = dict(zip(page.eval_on_selector_all("#plan-headline dt", "ds => ds.map(d => d.textContent)"),
                        page.eval_on_selector_all("#plan-headline dd", "ds => ds.map(d => d.textContent)"), strict=True))
    assert headline["best"] == str(expected["best"]["value"]) and headline["bestBaseline"] == expected["bestBaseline"]
    assert page.get_attribute("#tune-progress", "value") == "6"
    expect(page.frame_locator("iframe.report").locator("#history")).to_have_count(1)  # the tune report's trials
    assert "[object" not in page.text_content("#plan-result")  # elements drawn, not their names
    page.click("#tune-edit")
    assert page.input_value("#config-text") == config_yaml(expected)
    expect(page.locator("#config-message")).to_have_text("valid")
    assert page.errors == []
    page.context.close()


def test_column_headers_sort_the_cluster(page):
    """A click on a column's heading sorts the nodes by it (again: the other way), as the Sort by choice
    does, which follows; the choice still works on its own."""
    data = kubefit.simulate([WORKLOAD], **QUIET).to_dict()

    def by(resource: str, descending: bool) -> list[str]:
        fraction = {n: data["final"][n]["requested"].get(resource, 0) / data["allocatable"][n][resource]
                    for n in data["final"]}
        return sorted(fraction, key=lambda n: (fraction[n], n), reverse=descending)

    def shown(action, asked: str) -> list[str]:
        """The nodes in the order drawn after `action`, once the page has drawn the answer to `asked`."""
        with page.expect_response(f"**/api/nodes?*{asked}*"):
            action()
        page.wait_for_selector("body:not(.busy)", state="attached")
        return page.eval_on_selector_all("#nodes tbody tr", "rs => rs.map(r => r.dataset.node)")

    assert shown(lambda: page.click("#nodes th[data-sort=cpu]"), "sort=cpu") == by("cpu", False)
    assert page.input_value("#node-sort") == "cpu"
    assert page.get_attribute("#nodes th[data-sort=cpu]", "aria-sort") == "ascending"
    assert shown(lambda: page.click("#nodes th[data-sort=cpu]"), "order=desc") == by("cpu", True)
    assert page.is_checked("#node-desc")
    assert shown(lambda: page.select_option("#node-sort", "memory"), "sort=memory") == by("memory", True)
    assert page.get_attribute("#nodes th[data-sort=memory]", "aria-sort") == "descending"
    assert page.get_attribute("#nodes th[data-sort=cpu]", "aria-sort") is None


def test_rightsize_on_the_planning_page(browser, serve_files):  # noqa: F811 (the fixture)
    """Requests from usage, in the browser: `kubefit serve -f examples/rightsize --requests-from usage --usage
    prometheus.json`; the planning page's rightsize shows `kubefit rightsize`'s headline (nodes 3 → 2) and its
    report, with the request-vs-usage bars, in the sandboxed frame; the VPA choice reads the scenario's VPAs."""
    from kubefit.manifests.usage.requestsfrom import RequestsFrom

    usage = str(ROOT / "examples" / "rightsize" / "usage" / "prometheus.json")
    page = open_served(browser, serve_files([str(ROOT / "examples" / "rightsize")],
                                            requests=RequestsFrom("usage", usage=(usage,))))
    page.click("#tabs button[data-tab=planning]")
    page.select_option("#plan-verb", "rightsize")
    assert page.is_visible("#plan-requests") and page.is_hidden("#plan-pod")
    page.select_option("#plan-requests", "usage")
    with page.expect_response("**/api/planning"):
        page.click("#plan-run")
    expected = kubefit.rightsize([str(ROOT / "examples" / "rightsize")], RequestsFrom("usage", usage=(usage,)),
                                 **QUIET).to_dict()
    expect(page.locator("#plan-headline")).to_contain_text(f"nodesBefore{expected['nodesBefore']}")
    expect(page.locator("#plan-headline")).to_contain_text(f"nodesAfter{expected['nodesAfter']}")
    report = page.frame_locator("iframe.report")
    expect(report.locator("#usage svg.chart")).to_have_count(2)  # request against usage p50 / p95 / max, new
    page.select_option("#plan-requests", "vpa")
    with page.expect_response("**/api/planning"):
        page.click("#plan-run")
    expect(page.frame_locator("iframe.report").locator("#resizes tbody tr")).to_have_count(2)
    assert page.errors == []
    page.context.close()
