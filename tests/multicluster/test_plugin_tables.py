"""Karmada's own unit-test tables for its scheduler plugins and selectors (tests/multicluster/data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubefit.multicluster.affinity import cluster_matches, match_zones
from kubefit.multicluster.divide import Candidate
from kubefit.multicluster.filters import FILTERS, fit_error
from kubefit.multicluster.resourceselector import selector_priority
from kubefit.multicluster.scores import SCORES
from kubefit.multicluster.spread import SpreadError, select_best_clusters

DATA = Path(__file__).parent / "data" / "karmada-scheduler-plugin-tests.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text().splitlines()]


def _run(row: dict) -> dict:
    op = row["op"]
    if op == "filter":
        reason = dict(FILTERS)[row["plugin"]](row.get("spec") or {}, row.get("status") or {}, row["cluster"])
        return {"code": "Success" if reason is None else "Unschedulable", "reason": reason}
    if op == "score":
        name = (row["cluster"].get("metadata") or {}).get("name", "")
        return {"score": dict(SCORES)[row["plugin"]](row.get("spec") or {}, name)}
    if op == "selectorPriority":
        return {"priority": selector_priority(row["resource"], row["selector"])}
    if op == "selectBestClusters":
        cands = [Candidate(c["name"], c["availableReplicas"], c["availableReplicas"], score=c["score"],
                           cluster={"metadata": {"name": c["name"]}, "spec": {"region": c.get("region", "")}})
                 for c in row["candidates"]]
        cands.sort(key=lambda c: (-c.score, -c.available_replicas, c.name))  # candidate order
        try:
            return {"clusters": [c.name for c in select_best_clusters(cands, row["placement"], row["needReplicas"])]}
        except SpreadError as exc:
            return {"error": str(exc)}
    if op == "fitError":
        return {"error": fit_error(row["numAllClusters"], row["reasons"])}
    if op == "clusterMatches":
        return {"matches": cluster_matches(row["cluster"], row["affinity"])}
    return {"matched": match_zones(row["operator"], row["values"], row["zones"])}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['op']}:{r.get('plugin', '')}:{r['name']}" for r in ROWS])
def test_karmada_table_row(row: dict) -> None:
    got = _run(row)
    expect = dict(row["expect"])
    contains = expect.pop("reasonContains", None)
    prefix, parts, count = (expect.pop(k, None) for k in ("errorPrefix", "errorContains", "reasonCount"))
    assert {k: got[k] for k in expect} == expect
    if contains is not None:
        assert contains in got["reason"]
    if prefix is not None:  # TestFitError_Error's own checks: prefix, each reason, their number
        assert got["error"].startswith(prefix) and all(p in got["error"] for p in parts)
        assert len(got["error"].removeprefix(prefix).split(",")) == count


def test_every_filter_and_score_plugin_has_rows() -> None:
    plugins = {(r["op"], r.get("plugin")) for r in ROWS}
    assert {("filter", name) for name, _ in FILTERS} <= plugins
    assert {("score", name) for name, _ in SCORES} <= plugins
