"""`kubefit score --scoring legacy` prints the docs' own numbers; v1.34 scoring gives today's 60 and 69."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubefit.cli import main

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "docs-bin-packing" / "cluster.yaml")
RTCR = str(ROOT / "examples" / "docs-bin-packing" / "requested-to-capacity-ratio.yaml")
POLICY = str(ROOT / "examples" / "configs" / "policy-docs-worked-example.yaml")


def _score(capsys, *args: str) -> dict:
    rc = main(["score", "-f", CLUSTER, *args, "-o", "json", "--explain"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def _per_resource(data: dict, node: str) -> dict[str, int]:
    rows = data["explain"][node]["NodeResourcesFit"]["resources"]
    return {r["resource"]: r["score"] for r in rows}


def test_legacy_reproduces_the_docs_lines(capsys):
    data = _score(capsys, "-f", RTCR, "--scoring", "legacy")
    # the docs: intel.com/foo 7, memory 5, cpu 3 → node1 5; 5, 7, 10 → node2 7
    assert _per_resource(data, "node1") == {"intel.com/foo": 7, "memory": 5, "cpu": 3}
    assert _per_resource(data, "node2") == {"intel.com/foo": 5, "memory": 7, "cpu": 10}
    assert data["score"]["NodeResourcesFit"] == {"node1": 5, "node2": 7}
    assert data["explain"]["node1"]["NodeResourcesFit"]["formula"] == "round(49/9) = 5"
    assert data["explain"]["node2"]["NodeResourcesFit"]["formula"] == "round(62/9) = 7"


def test_v134_scores_the_same_example_60_and_69(capsys):
    data = _score(capsys, "-f", RTCR)
    assert _per_resource(data, "node1") == {"intel.com/foo": 75, "memory": 50, "cpu": 37}
    assert data["score"]["NodeResourcesFit"] == {"node1": 60, "node2": 69}


@pytest.mark.parametrize(("scoring", "expected"), [(None, {"node1": 5, "node2": 7}),
                                                   ("v1.34", {"node1": 60, "node2": 69})])
def test_policy_file_defaults_to_legacy_scoring(capsys, scoring, expected):
    extra = ["--scoring", scoring] if scoring else []
    data = _score(capsys, "-f", POLICY, *extra)
    assert data["score"]["NodeResourcesFit"] == expected


def test_unknown_scoring_is_refused(capsys):
    rc = main(["score", "-f", CLUSTER, "-f", RTCR, "--scoring", "v2"])
    assert rc == 2
    assert "--scoring must be v1.34 or legacy" in capsys.readouterr().err
