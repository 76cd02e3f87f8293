"""The fleet fast paths against the reference paths they stand in for: `FleetEstimator` (max_available_replicas
with steps=False) against `estimate_cluster`, number for number, on random fleets and on the golden cases'."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.k8s.quantity import quantity_text
from kubefit.manifests.karmada import decode_cluster
from kubefit.multicluster.estimate import max_available_replicas, parse_assumed, parse_request

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "karmada"

QUANTITIES = {
    "cpu": ["0", "1", "500m", "2", "3", "4", "16", "-1", "1.5", "9223372036854775807", "4611686018427388"],
    "memory": ["0", "1Gi", "4Gi", "16Gi", "20Gi", "512Mi", "-1Gi", "1Ti", "9223372036854775807", "5e18"],
    "pods": ["0", "1", "10", "110", "770", "-3", "4611686018427387904"],
    "nvidia.com/gpu": ["0", "1", "2", "8"],
}


def _fields(est: Any) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(est).items() if k != "steps"}


def _compare(clusters: list[Any], request: dict[str, int] | None, gates: dict[str, bool] | None,
             texts: dict[str, str] | None = None) -> None:
    reference = max_available_replicas(clusters, request, None, gates, texts)
    fast = max_available_replicas(clusters, request, None, gates, texts, steps=False)
    assert [_fields(e) for e in fast] == [_fields(e) for e in reference]


@st.composite
def _resource_list(draw: st.DrawFn) -> dict[str, str] | None:
    if draw(st.integers(0, 5)) == 0:
        return None
    names = draw(st.lists(st.sampled_from(sorted(QUANTITIES)), unique=True, max_size=4))
    return {n: draw(st.sampled_from(QUANTITIES[n])) for n in names}


@st.composite
def _models(draw: st.DrawFn) -> list[dict[str, Any]]:
    grades = draw(st.lists(st.integers(0, 6), max_size=5))
    names = draw(st.lists(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), unique=True, min_size=1, max_size=3))
    return [{"grade": g, "ranges": [{"name": n, "min": draw(st.sampled_from(QUANTITIES[n])),
                                     "max": draw(st.sampled_from(QUANTITIES[n]))} for n in names]}
            for g in grades]


@st.composite
def _cluster(draw: st.DrawFn, i: int, model_sets: list[list[dict[str, Any]]]) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                            "metadata": {"name": f"m{i}"}, "spec": {"syncMode": "Push"}}
    models = draw(st.sampled_from(model_sets))
    if models:
        body["spec"]["resourceModels"] = models
    if draw(st.integers(0, 6)):
        summary: dict[str, Any] = {}
        for key in ("allocatable", "allocated", "allocating"):
            rl = draw(_resource_list())
            if key == "allocatable" and draw(st.integers(0, 4)):  # mostly room for pods: the paths past the quota
                rl = (rl or {}) | {"pods": draw(st.sampled_from(["110", "770", "1", "0"]))}
            if rl is not None:
                summary[key] = rl
        if draw(st.booleans()):
            counts = st.integers(-1, 40) | st.sampled_from([2**25, 2**31, 2**40])
            summary["allocatableModelings"] = [{"grade": draw(st.integers(0, 7)), "count": draw(counts)}
                                               for _ in range(draw(st.integers(0, 4)))]
        body["status"] = {"resourceSummary": summary}
    return body


@st.composite
def _fleet(draw: st.DrawFn) -> tuple[list[Any], dict[str, str] | None, dict[str, bool]]:
    model_sets = draw(st.lists(_models(), min_size=1, max_size=3))
    bodies = [draw(_cluster(i, model_sets)) for i in range(draw(st.integers(1, 8)))]
    request = draw(_resource_list())
    gates = {"CustomizedClusterResourceModeling": draw(st.booleans()),
             "SchedulingOvercommitProtection": draw(st.booleans())}
    return [decode_cluster(b) for b in bodies], request, gates


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fleet())
def test_fleet_estimator_matches_estimate_cluster(fleet: tuple[list[Any], dict[str, str] | None, dict]) -> None:
    clusters, texts, gates = fleet
    _compare(clusters, None if texts is None else parse_request(texts), gates, texts)


def _golden_fleets() -> list[tuple[str, dict]]:
    out = []
    for name in ("cases.jsonl", "docs-example.jsonl", "spec-checks.jsonl", "upstream-tests.jsonl"):
        for n, line in enumerate((GOLDEN / name).read_text().splitlines()):
            case = json.loads(line)
            if case["op"] in ("estimate", "schedule") and case.get("clusters"):
                out.append((f"{name}:{n}", case))
    return out


GOLDEN_FLEETS = _golden_fleets()


@pytest.mark.parametrize("case", [c for _, c in GOLDEN_FLEETS], ids=[n for n, _ in GOLDEN_FLEETS])
def test_fleet_estimator_on_golden_clusters(case: dict) -> None:
    clusters = [decode_cluster(c, require_name=False) for c in case["clusters"]]
    rr = case.get("replicaRequirements") or (case.get("binding") or case.get("spec") or {}).get("replicaRequirements")
    texts = None if rr is None else {str(k): quantity_text(v) for k, v in (rr.get("resourceRequest") or {}).items()}
    assumed = {k: parse_assumed(v) for k, v in (case.get("assumedWorkloads") or {}).items()}
    request = None if texts is None else parse_request(texts)
    reference = max_available_replicas(clusters, request, assumed, case.get("featureGates"), texts)
    fast = max_available_replicas(clusters, request, assumed, case.get("featureGates"), texts, steps=False)
    assert [_fields(e) for e in fast] == [_fields(e) for e in reference]
