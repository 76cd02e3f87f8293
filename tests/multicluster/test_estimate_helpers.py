"""The estimator's internal steps against the golden cases that probe them one at a time:
`estimateSets` (multi-template), `modelSets`, `modelEstimate`, `summaryEstimate`, `allowedPods`,
`deductAssumed` (subset matching for upstream cases, SPEC-karmada §10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubefit.k8s.quantity import parse_quantity
from kubefit.manifests.documents import Document
from kubefit.manifests.karmada import decode_cluster, decode_resource_summary
from kubefit.multicluster.estimate import (
    ModelError,
    add_assumed,
    allowed_pods,
    estimate_sets,
    model_estimate,
    model_sets,
    parse_assumed,
    parse_components,
    parse_request,
    resource_list_nanos,
    summary_estimate,
)

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "karmada"
FILES = ("cases.jsonl", "spec-checks.jsonl", "upstream-tests.jsonl")
OPS = ("estimateSets", "modelSets", "modelEstimate", "summaryEstimate", "allowedPods", "deductAssumed")
CASES = [c for name in FILES for c in map(json.loads, (GOLDEN / name).read_text().splitlines()) if c["op"] in OPS]


def _assumed(raw: Any) -> Any:
    if isinstance(raw, dict):
        return {k: parse_assumed(v) for k, v in raw.items()}
    return parse_assumed(raw or [])


def _summary_lists(case: dict) -> tuple[dict, dict, dict]:
    doc = Document({"kind": "Cluster", "metadata": {"name": "x"}}, "case", 1)
    s = decode_resource_summary(case["resourceSummary"], doc)
    if s is None:
        return {}, {}, {}
    return resource_list_nanos(s.allocatable), resource_list_nanos(s.allocated), resource_list_nanos(s.allocating)


def run_case(case: dict) -> dict[str, Any]:
    op = case["op"]
    if op == "estimateSets":
        clusters = [decode_cluster(c, require_name=False) for c in case["clusters"]]
        assumed = _assumed(case.get("assumedWorkloads") or {})
        comps = parse_components(case["components"])
        return {c.name: estimate_sets(c, comps, assumed.get(c.name, ()), case.get("featureGates")) for c in clusters}
    if op in ("modelSets", "modelEstimate"):
        cluster = decode_cluster(case["cluster"], require_name=False)
        assumed = _assumed(case.get("assumedWorkloads"))
        key = "sets" if op == "modelSets" else "replicas"
        try:
            if op == "modelSets":
                n = model_sets(cluster, parse_components(case["components"]), case["upperBound"], assumed)
            else:
                n = model_estimate(cluster, parse_request(case["replicaRequirements"].get("resourceRequest") or {}),
                                   assumed)
        except ModelError as exc:
            return {key: -1, "hasError": True, "error": str(exc)}
        return {key: n, "hasError": False, "error": None}
    allocatable, allocated, allocating = _summary_lists(case)
    if op == "allowedPods":
        return {"allowedPods": max(0, allowed_pods(allocatable, allocated, allocating))}
    if op == "summaryEstimate":
        request = parse_request(case["replicaRequirements"]["resourceRequest"])
        return {"replicas": summary_estimate(request, allocatable, allocated, allocating)}
    add_assumed(allocating, parse_assumed(case["assumedWorkloads"]))
    return {"allocatingExact": allocating}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_estimator_step(case: dict) -> None:
    got = run_case(case)
    expect = case["expect"]
    if case["op"] == "deductAssumed":
        assert got["allocatingExact"] == {k: parse_quantity(v) for k, v in expect["allocatingExact"].items()}
        return
    for key, want in expect.items():
        if key == "expectKeysExact":
            continue
        assert got[key] == want, (key, got)
    if "oracleExpect" in case and "error" in case["oracleExpect"]:
        assert got.get("error") == case["oracleExpect"]["error"]
