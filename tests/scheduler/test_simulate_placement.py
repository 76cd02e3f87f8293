"""Every sequence case of golden/kube-scheduler/placement-cases.jsonl through `kubefit simulate`.

The case becomes a scenario file (golden_scenario.case_scenario_docs: the v1 configuration with the
node placement plugins and their args, nodes, bound pods, the queue) and goes through
`kubefit simulate -f FILE -o json --tie-break first`. Each step's node, tied nodes and the message of a
pending pod, then the placement and the final per-node usage must be the real scheduler's.

Queued pods that already carry `spec.nodeName` (the NodeName plugin's cases) are annotated
`kubefit.io/queued: "true"` by the helper, so they wait in the queue instead of running there.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from golden_scenario import case_scenario_docs
from kubefit.cli import main
from tests_support import golden_cases

CASES = [c for c in golden_cases("kube-scheduler/placement-cases.jsonl") if c.get("mode") == "sequence"]


def simulate_case(case: dict[str, Any], tmp_path, capsys) -> dict[str, Any]:
    path = tmp_path / f"{case['id']}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": case_scenario_docs(case)}))
    capsys.readouterr()
    rc = main(["simulate", "-f", str(path), "-o", "json", "--tie-break", "first", "--no-admission"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def golden_step(step: dict[str, Any]) -> dict[str, Any]:
    """What kubefit's step states, taken from the golden step (totals aside)."""
    return {k: step[k] for k in ("pod", "node", "feasible", "ties", "message") if k in step}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_placement_sequence(case, tmp_path, capsys):
    got = simulate_case(case, tmp_path, capsys)
    expect = case["expect"]
    assert len(got["steps"]) == len(expect["steps"]) == len(case["queue"])
    for i, (g, e) in enumerate(zip(got["steps"], expect["steps"], strict=True)):
        assert g == golden_step(e), f"step {i}"
    for key in ("scheduled", "unschedulable", "placement", "final"):
        assert got[key] == expect[key], key


def test_sequence_cases_cover_node_name_and_pending():
    """The 30 cases queue pods naming a node (8 cases) and pods that stay pending with a message."""
    assert len(CASES) == 30
    named = [c for c in CASES if any((p.get("spec") or {}).get("nodeName") for p in c["queue"])]
    assert len(named) == 8
    assert any(s.get("message") for c in CASES for s in c["expect"]["steps"])
