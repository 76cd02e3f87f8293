"""`kubefit serve` with gangs (v1.36, GenericWorkload on): the groups in the queue and a group's decision, over
HTTP and in a real headless Chromium, as `kubefit simulate` reports them (its `podGroups`)."""

from __future__ import annotations

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips every test, with BROWSER_ABSENT
    expect = None
from serve_support import ROOT

import kubefit
from browser import browser  # noqa: F401 (browser: a fixture)

GANGS = str(ROOT / "examples" / "gangs" / "cluster.yaml")
GATES = "GenericWorkload=true,GangScheduling=true"
TUNE_WHY = "gang ml/tune-0: 2 of minCount 4 fit: 3 nodes Insufficient nvidia.com/gpu"


@pytest.fixture
def gangs(serve_files):
    return serve_files([GANGS], kube_version="1.36", feature_gates=GATES)


def test_the_summary_has_the_groups_as_simulate_reports_them(gangs):
    expected = kubefit.simulate([GANGS], kube_version="1.36", feature_gates=GATES, warn=lambda _m: None)
    summary = gangs.get("/api/summary")
    assert summary["podGroups"] == expected.to_dict()["podGroups"]
    assert [g["why"] for g in summary["podGroups"]][1] == TUNE_WHY


def test_a_members_decision_carries_its_groups(gangs):
    decision = gangs.get("/api/decision?pod=ml/tune-1")
    assert decision["group"]["name"] == "tune-0" and decision["group"]["why"] == TUNE_WHY
    assert decision["step"]["podGroup"] == "ml/tune-0"


def test_the_capacity_of_a_group_from_the_planning_tab(gangs):
    reply = gangs.post("/api/planning", {"verb": "capacity", "pod": "podgroup/tune-0"})
    assert reply.status == 200 and reply.json()["headline"]["count"] == 2


@pytest.fixture
def page(browser, gangs):  # noqa: F811 (the fixture)
    context = browser.new_context(viewport={"width": 1400, "height": 900}, service_workers="block")
    p = context.new_page()
    p.errors = []
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    p.goto(gangs.url + "/")
    p.wait_for_selector("body[data-ready=true]")
    yield p
    assert p.errors == []
    context.close()


def test_the_queue_tab_shows_the_groups_and_a_groups_decision(page):
    page.click("#tabs button[data-tab=queue]")
    expect(page.locator("#groups-pane")).to_be_visible()
    expect(page.locator("#groups tbody tr")).to_have_count(2)
    tune = page.locator("#groups tbody tr[data-group='ml/tune-0']")
    expect(tune.locator("[data-field=bound]")).to_have_text("0 of 4")
    expect(tune.locator(".why")).to_have_text(TUNE_WHY)
    expect(page.locator("#pods tbody tr[data-pod='ml/tune-1'] small.group")).to_have_text(" ml/tune-0, cycle 2")
    page.click("#pods tbody tr[data-pod='ml/tune-1'] a")
    expect(page.locator("#decision-group")).to_have_text(f"Pod group ml/tune-0: {TUNE_WHY}")


def test_no_groups_no_pane(browser, serve_files):  # noqa: F811 (the fixture)
    served = serve_files([GANGS], kube_version="1.36")  # GenericWorkload off: pods one by one
    context = browser.new_context()
    p = context.new_page()
    p.goto(served.url + "/")
    p.wait_for_selector("body[data-ready=true]")
    p.click("#tabs button[data-tab=queue]")
    expect(p.locator("#groups-pane")).to_be_hidden()
    context.close()
