"""The runnable Karmada examples under examples/karmada/ give the doc's numbers (golden docs-example)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubefit.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "karmada"
GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "karmada" / "docs-example.jsonl"
DOC = {c["id"]: c for c in map(json.loads, GOLDEN.read_text().splitlines())}

ESTIMATES = [("estimate-general-500m.yaml", "doc-general-500m"),
             ("estimate-customized-3C-20Gi.yaml", "doc-custom-3C-20Gi"),
             ("estimate-customized-5C-60Gi.yaml", "doc-custom-5C-60Gi")]
SCHEDULES = [("schedule-general-prefers-member1.yaml", "doc-general-scheduler-prefers-member1"),
             ("schedule-customized-prefers-member3.yaml", "doc-custom-scheduler-prefers-member3"),
             ("schedule-customized-divided-20.yaml", "doc-custom-3C-20Gi-divided-20")]


@pytest.mark.parametrize("name, case_id", ESTIMATES)
def test_estimate_example(name: str, case_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "-f", str(EXAMPLES / name), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["availableReplicas"] == DOC[case_id]["expect"]


@pytest.mark.parametrize("name, case_id", SCHEDULES)
def test_schedule_example(name: str, case_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "-f", str(EXAMPLES / name), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["clusters"] == DOC[case_id]["expect"]["clusters"]


def test_fragmentation_example(capsys: pytest.CaptureFixture[str]) -> None:
    """100 nodes with 1 CPU free each: the summary says 100 CPU → 50 replicas of 2 CPU; none fits."""
    member = EXAMPLES / "estimate-fragmentation-member.yaml"
    rc = main(["estimate", "-f", str(EXAMPLES / "estimate-fragmentation.yaml"),
               "--member", f"fragmented={member}", "-o", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert data.pop("inputs")["options"] == {"member": [f"fragmented={member}"]}
    assert data == {"availableReplicas": {"fragmented": 50}, "exactReplicas": {"fragmented": 0},
                    "estimateError": {"fragmented": 50}, "warnings": []}


def test_customized_explain_shows_per_grade_floors(capsys: pytest.CaptureFixture[str]) -> None:
    """The doc's `1*min(2/3,16/20)` terms are per-node floors; --explain prints them per grade."""
    assert main(["estimate", "-f", str(EXAMPLES / "estimate-customized-3C-20Gi.yaml"), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "grade 2: 1 × min(110 pods, 2/3, 16Gi/20Gi) = 1 × 0 = 0" in out
    assert "grade 3: 6 × min(110 pods, 4/3, 32Gi/20Gi) = 6 × 1 = 6" in out
