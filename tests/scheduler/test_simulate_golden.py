"""Every golden sequence case through `kubefit simulate -o json --tie-break first` (golden/README.md).

(The placement sequence cases run through the CLI in test_simulate_placement.py.)
"""

from __future__ import annotations

import json

import pytest

from golden_scenario import case_scenario_docs
from kubefit.cli import main
from tests_support import golden_cases

SEQUENCE = [c for c in golden_cases("kube-scheduler/cases.jsonl") if c.get("mode") == "sequence"]
TRACE = golden_cases("kube-scheduler/trace-alibaba.jsonl")


def run_case(case: dict, tmp_path, capsys) -> dict:
    path = tmp_path / f"{case['id']}.json"
    docs = case_scenario_docs(case)
    docs[0]["percentageOfNodesToScore"] = 100  # golden sequences evaluate every node (README, SPEC §7)
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    capsys.readouterr()
    rc = main(["simulate", "-f", str(path), "-o", "json", "--tie-break", "first", "--no-admission"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def check(case: dict, got: dict, ties_shown: int | None = None) -> None:
    """Steps, then the totals; with `ties_shown` the golden lists only the first ties plus `tieCount`."""
    expect = case["expect"]
    assert len(got["steps"]) == len(expect["steps"])
    for i, (g, e) in enumerate(zip(got["steps"], expect["steps"], strict=True)):
        want = {k: e[k] for k in ("pod", "node", "feasible", "ties", "message") if k in e}
        if ties_shown is not None and "ties" in g:
            count = g.pop("tieCount", len(g["ties"]))
            g["ties"] = g["ties"][:ties_shown]
            assert count == e.get("tieCount", len(e["ties"])), f"step {i} tie count"
        assert g == want, f"step {i}"
    for key in ("scheduled", "unschedulable", "placement", "final"):
        assert got[key] == expect[key], key


@pytest.mark.parametrize("case", SEQUENCE, ids=[c["id"] for c in SEQUENCE])
def test_sequence_case(case, tmp_path, capsys):
    check(case, run_case(case, tmp_path, capsys))


@pytest.mark.parametrize("case", TRACE, ids=[c["id"] for c in TRACE])
def test_trace_alibaba(case, tmp_path, capsys):
    """The Alibaba GPU trace (1,213 nodes, 8,152 pods) under each strategy, as the real scheduler placed it."""
    check(case, run_case(case, tmp_path, capsys), ties_shown=8)
