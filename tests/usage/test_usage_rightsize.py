"""`kubefit rightsize` end to end on examples/rightsize, every figure derived by hand (or, for the usage
strategy, from the usage file read by the json module and numpy, not by kubefit's decoder).

The example: node-1 runs two web pods (1 cpu, 2Gi; limits 2, 2Gi) and db-0 (2 cpu, 8Gi); node-2 two web pods and
api-1 (500m, 1Gi; limits 1, 1Gi); node-3 api-2 and a 14Gi cache pod without controller. 4 cpu, 16Gi each.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import kubefit
from kubefit.manifests.usage.requestsfrom import RequestsFrom

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rightsize"
FILES = [str(EXAMPLES / "cluster.yaml"), str(EXAMPLES / "vpa.yaml")]
GI, MI = 1 << 30, 1 << 20


@pytest.fixture(scope="module")
def vpa_result():
    return kubefit.rightsize(FILES, "vpa", warn=lambda _: None, baseline=True)


def test_vpa_changes(vpa_result):
    """web: target 250m / 700Mi; limits at the template's ratio: 2 × 250m / 1 = 500m, memory limit = request
    (2Gi = 2Gi) → 700Mi. api: target 300m / 3500Mi capped to maxAllowed 3Gi; cpu limit 1 × 300m / 500m = 600m,
    memory limit = request (1Gi = 1Gi) → 3Gi."""
    by = {c["name"]: c for c in vpa_result.changes}
    web, api = by["web"]["containers"][0], by["api"]["containers"][0]
    assert web["requests"]["after"] == {"cpu": "250m", "memory": "700Mi"}
    assert web["limits"]["after"] == {"cpu": "500m", "memory": "700Mi"}
    assert api["requests"]["after"] == {"cpu": "300m", "memory": "3Gi"}
    assert api["limits"]["after"] == {"cpu": "600m", "memory": "3Gi"}
    assert api["capped"] == ["memory capped to maxAllowed"]
    assert (by["web"]["updateMode"], by["api"]["updateMode"], by["web"]["pods"]) == ("Recreate", "InPlaceOrRecreate", 4)
    assert "db" not in by  # no VPA: untouched


def test_in_place_resizes_as_the_kubelet_admits_them(vpa_result):
    """api-1 on node-2: the web pods there are recreated (they leave first); nothing else requests memory on
    node-2, 3Gi fits: resized in place. api-2 on node-3 beside the 14Gi cache: 14Gi + 3Gi > 16Gi: Deferred with
    the kubelet's message (used: the cache's 15032385536 B), then recreated by the updater."""
    resizes = {r["pod"]: r for r in vpa_result.resizes}
    assert resizes["default/api-5b7c9d4f8-q9w2e"]["decision"] == "InPlace"
    deferred = resizes["default/api-5b7c9d4f8-z4r8t"]
    assert deferred["decision"] == "Deferred" and deferred["recreatedAs"]
    assert deferred["message"] == ("Node didn't have enough resource: memory, requested: 3221225472, used: "
                                   "15032385536, capacity: 17179869184")


def test_moves_and_nothing_pending(vpa_result):
    """Five pods recreated (four web, api-2), each placed; none pending."""
    moved = {m["pod"] for m in vpa_result.moves}
    assert moved == {f"default/web-6d8f5c7b9-{s}" for s in ("x2k9p", "7fq4m", "c8n2v", "m4t7w")} | {
        "default/api-5b7c9d4f8-z4r8t"}
    assert all(m["to"] for m in vpa_result.moves) and vpa_result.pending == []


def test_allocation_today_and_after(vpa_result):
    """Requests today: cpu 4 + 1 + 2 + 0.5 = 7.5 of 12 (62.5 %), memory 8 + 2 + 8 + 14 = 32Gi of 48Gi; after:
    cpu 4 × 250m + 2 × 300m + 2 + 0.5 = 4.1 (34.17 %), memory 4 × 700Mi + 2 × 3Gi + 8Gi + 14Gi = 31472Mi."""
    today = vpa_result.today["allocation"]["cluster"]
    after = vpa_result.after["allocation"]["cluster"]
    assert (today["cpu"]["requested"], today["memory"]["requested"]) == (7500, 32 * GI)
    assert (after["cpu"]["requested"], after["memory"]["requested"]) == (4100, 31472 * MI)
    assert (today["cpu"]["percent"], after["cpu"]["percent"]) == (62.5, 34.17)
    assert list(vpa_result.today["allocation"]["pools"]) == ["general"]


def test_nodes_that_go(vpa_result):
    """After: node-3 must stay (the cache declares no controller); node-1 and node-3 hold everything (node-3:
    14Gi + two web pods' 1400Mi; node-1: db 8Gi + 2 × 3Gi + two web pods) and one node cannot hold the cache and
    db: 3 → 2. Today (the baseline) no node can go: the 32Gi requested fill two nodes' memory exactly, and every
    such packing puts more than 4 cpu on one node. So right-sizing frees one node."""
    assert (vpa_result.nodes_before, vpa_result.nodes_after) == (3, 2)
    data = vpa_result.to_dict()
    assert data["baseline"]["nodesAfter"] == 3 and data["nodesFreedByRightsizing"] == 1
    assert data["consolidation"]["verification"]["simulations"] >= 1


def _expected_usage_requests() -> dict[str, tuple[int, int]]:
    """The usage file by the json module: per container, every pod's cpu rates (counter increase / 300 s; no
    reset in the file) and memory samples; KRR's simple strategy: p95 of cpu (numpy's linear interpolation),
    max of memory + 15 %, rounded up to the millicore and the megabyte."""
    body = json.loads((EXAMPLES / "usage" / "prometheus.json").read_text())
    cpu: dict[str, list[float]] = {}
    memory: dict[str, list[float]] = {}
    for s in body["data"]["result"]:
        container = s["metric"]["container"]
        times = [float(t) for t, _ in s["values"]]
        values = [float(v) for _, v in s["values"]]
        if s["metric"]["__name__"] == "container_cpu_usage_seconds_total":
            cpu.setdefault(container, []).extend((b - a) / (tb - ta) for a, b, ta, tb in
                                                 zip(values, values[1:], times, times[1:], strict=False))
        else:
            memory.setdefault(container, []).extend(values)
    return {c: (math.ceil(round(float(np.percentile(cpu[c], 95)) * 1000, 9)),
                math.ceil(round(max(memory[c]) * 1.15 / 1e6, 9)) * 10**6) for c in cpu}


def test_usage_strategy_requests():
    result = kubefit.rightsize([str(EXAMPLES / "cluster.yaml")], RequestsFrom(
        "usage", usage=(str(EXAMPLES / "usage" / "prometheus.json"),)), warn=lambda _: None, consolidate=False)
    expected = _expected_usage_requests()
    for change in result.changes:
        [c] = change["containers"]
        milli, memory = expected[c["container"]]
        assert c["requests"]["after"]["cpu"] == f"{milli}m"
        assert c["requests"]["after"]["memory"] == str(memory)
    assert len(result.changes) == 3


def test_usage_risk_over_the_window():
    """api's memory today: every sample (1800–2600Mi) is above its 1Gi request and limit: 100 % OOM risk; after
    (max + 15 %) none is."""
    result = kubefit.rightsize([str(EXAMPLES / "cluster.yaml")], RequestsFrom(
        "usage", usage=(str(EXAMPLES / "usage" / "prometheus.json"),)), warn=lambda _: None, consolidate=False)
    [api] = [r for r in result.risk if r["container"] == "api"]
    assert api["memory"]["overLimitBefore"] == 1.0 and api["memory"]["overLimitAfter"] == 0.0
    assert api["memory"]["usage"]["samples"] == 2 * 288


def test_in_place_override_for_usage():
    """--update-mode InPlaceOrRecreate: every running pod's resize judged by the kubelet instead of a rollout."""
    result = kubefit.rightsize([str(EXAMPLES / "cluster.yaml")], RequestsFrom(
        "usage", usage=(str(EXAMPLES / "usage" / "prometheus.json"),), update_mode="InPlaceOrRecreate"), warn=lambda _: None,
        consolidate=False)
    assert len(result.resizes) == 7
    assert {r["decision"] for r in result.resizes} <= {"InPlace", "Deferred", "Infeasible"}


def test_other_verbs_answer_for_the_right_sized_cluster():
    """The same rewrite through `simulate` (the recreated pods queued and placed) and `consolidate`."""
    requests = RequestsFrom("vpa")
    sim = kubefit.simulate(FILES, requests=requests, warn=lambda _: None)
    assert sim.scheduled == 5 and sim.unschedulable == 0
    assert kubefit.consolidate(FILES, requests=requests, warn=lambda _: None).nodes_after == 2
    assert kubefit.consolidate(FILES, warn=lambda _: None).nodes_after == 3


def test_requests_from_vpa_without_vpas_refused():
    with pytest.raises(kubefit.InputError, match="needs VerticalPodAutoscaler objects"):
        kubefit.rightsize([str(EXAMPLES / "cluster.yaml")], "vpa", warn=lambda _: None)


def test_strategy_options_refused_with_vpa():
    with pytest.raises(kubefit.InputError, match="--cpu, --memory and --limits are for --requests-from usage"):
        kubefit.rightsize(FILES, RequestsFrom("vpa", cpu="p90"), warn=lambda _: None)


def test_pods_created_later_from_a_template_get_the_new_requests():
    """`capacity --pod deployment/web` copies the Deployment's template: rewritten too (the webhook rewrites every
    pod its controller creates), 250m / 700Mi with limits 500m / 700Mi; the template as the files give it
    without --requests-from."""
    mi = 1 << 20
    after = kubefit.capacity(FILES, "deployment/web", requests=RequestsFrom("vpa"), warn=lambda _: None)
    assert after.pod.containers[0].requests == {"cpu": 250 * 10**6, "memory": 700 * mi * 10**9}
    limits = after.pod.raw["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"cpu": "500m", "memory": "700Mi"}
    today = kubefit.capacity(FILES, "deployment/web", warn=lambda _: None)
    assert today.pod.containers[0].requests == {"cpu": 10**9, "memory": 2 * 1024 * mi * 10**9}


def test_check_judges_the_right_sized_candidate_against_today():
    """`kubefit check --requests-from vpa`: the candidate is right-sized (a node can go), the baseline (the same
    files by default) is today's (no node can go, and the recreated pods are placed: pending ≤ baseline)."""
    from kubefit.checks.expectations import from_options

    assertions = from_options(min_removable_nodes=1, max_pending="baseline")
    right = kubefit.check(FILES, assertions=assertions, requests=RequestsFrom("vpa"), warn=lambda _: None)
    assert right.passed
    today = kubefit.check(FILES, assertions=from_options(min_removable_nodes=1), warn=lambda _: None)
    assert not today.passed


def test_float_noise_is_not_usage_above_the_request():
    """A rate that Prometheus extrapolated to 0.25000000000000006 cores is at a 250m request, not above it; one
    millicore more is above."""
    from kubefit.planning.rightsize import _share

    assert _share(np.array([0.25000000000000006, 0.25, 0.2]), 0.25) == 0.0
    assert _share(np.array([0.251, 0.25, 0.2, 0.1]), 0.25) == 0.25
