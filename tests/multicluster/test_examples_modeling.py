"""The doc's three-grade model and its classification examples under examples/karmada/ run as the doc says."""

from __future__ import annotations

from pathlib import Path

import pytest
from karmada_golden import run_json

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "karmada"
CLUSTER = str(EXAMPLES / "three-grade-cluster.yaml")


def test_three_grade_model_is_valid(capsys):
    rc, got, _ = run_json(capsys, ["models", "validate", "-f", CLUSTER])
    assert rc == 0 and got["valid"] and got["errors"] == [] and got["warnings"] == []


@pytest.mark.parametrize(("member", "counts"), [
    ("node-0.5C-2Gi.yaml", [1, 0, 0]), ("node-1.5C-10Gi.yaml", [0, 1, 0]), ("member1-nodes-and-pods.yaml", [1, 1, 0])])
def test_doc_classification_examples(member, counts, capsys):
    rc, got, _ = run_json(capsys, ["models", "classify", "-f", CLUSTER, "-f", str(EXAMPLES / member)])
    assert rc == 0
    assert got == {"allocatableModelings": [{"grade": g, "count": c} for g, c in enumerate(counts)]}


def test_member_summary(capsys):
    rc, got, _ = run_json(capsys, ["summary", "-f", CLUSTER, "-f", str(EXAMPLES / "member1-nodes-and-pods.yaml")])
    assert rc == 0
    assert got["resourceSummary"]["allocatable"] == {"cpu": "6", "memory": "28Gi", "pods": "220"}
    assert got["resourceSummary"]["allocated"] == {"cpu": "4", "memory": "16Gi", "pods": "2"}
    assert got["nodeSummary"] == {"totalNum": 2, "readyNum": 2}
