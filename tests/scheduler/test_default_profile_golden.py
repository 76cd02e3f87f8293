"""Every case of golden/kube-scheduler/default-profile-cases.jsonl through the user's path.

A case becomes one scenario file (golden_scenario.case_scenario_docs: a v1 configuration with
`percentageOfNodesToScore: 100` and the default profile unchanged, then the extra cluster objects,
the nodes, the bound pods and the pending pod(s)). Single cases go through
`kubefit score -f FILE -o json --detail` and compare every field of the real scheduler's cycle
(filter verdicts with the failing plugin, each Filter plugin alone, PreFilter, scores raw and
normalised, totals, best nodes, the PreEnqueue rejection, the FitError text with its PostFilter part,
DefaultPreemption's nominated node and victims). Sequence cases go through
`kubefit simulate -f FILE -o json --tie-break first` and compare each step (node, feasible, ties, message,
victims, nominated node) and the final placement and usage.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from golden_scenario import check_single_case, run_case
from tests_support import golden_cases

ALL = golden_cases("kube-scheduler/default-profile-cases.jsonl")
SINGLE = [c for c in ALL if c.get("mode") != "sequence"]
SEQUENCES = [c for c in ALL if c.get("mode") == "sequence"]
STEP_KEYS = ("pod", "namespace", "node", "feasible", "ties", "message", "victims", "nominatedNode", "nominatedNodeFirst",
             "preEnqueue")


@pytest.mark.parametrize("case", SINGLE, ids=[c["id"] for c in SINGLE])
def test_default_profile_single(case, tmp_path, capsys):
    check_single_case(case, tmp_path, capsys)


def _golden_step(step: dict[str, Any]) -> dict[str, Any]:
    return {k: step[k] for k in STEP_KEYS if k in step}


@pytest.mark.parametrize("case", SEQUENCES, ids=[c["id"] for c in SEQUENCES])
def test_default_profile_sequence(case, tmp_path, capsys):
    expect = case["expect"]
    rc, out, err = run_case(case, ["simulate", "-o", "json", "--tie-break", "first"], tmp_path, capsys)
    assert rc == 0, err
    got = json.loads(out)
    assert len(got["steps"]) == len(expect["steps"])
    for i, (g, e) in enumerate(zip(got["steps"], expect["steps"], strict=True)):
        assert {k: g[k] for k in STEP_KEYS if k in g} == _golden_step(e), f"step {i}"
    for key in ("scheduled", "unschedulable", "placement", "final"):
        assert got[key] == expect[key], key


def test_case_accounting():
    """126 single-pod and 24 sequence cases (12 of them with preemption), every one run above."""
    assert len(SINGLE) == 126 and len(SEQUENCES) == 24
    assert sum(1 for c in SEQUENCES if "preempt" in c["id"]) == 12
