"""Every case of golden/kube-scheduler/sampling-cases.jsonl: kube-scheduler's own node sampling, step by step.

The cases are the Alibaba trace (1,213 nodes, 8,152 pods) under the three strategies and a 600-node
default-profile replay (4,000 pods, three zones), run by the real framework with `percentageOfNodesToScore`
unset (adaptive: 41 % = 497 and 46 % = 276 feasible nodes to find), filtering sequentially (parallelism 1),
ties to the first tied node in input order. As the golden README says, a case becomes its usual scenario
(golden_scenario.case_scenario_docs) *without* `percentageOfNodesToScore` and goes through
`kubefit simulate -f FILE -o json --tie-break first`; every step's node and `feasible` (the feasible nodes
found, upstream's `len(feasibleNodes)`) must be the real scheduler's. Since each step's window starts where
the previous cycle's search stopped (`nextStartNodeIndex`), a single wrong start index shows up within a
few dozen pods (issue 28: at pod 31 of the trace).

Each case is compiled and simulated once; its 4,000-8,152 steps are compared as whole lists, and only a
failure walks them to name the first step that differs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from golden_scenario import case_scenario_docs
from kubefit.cli import main
from tests_support import golden_cases

CASES = golden_cases("kube-scheduler/sampling-cases.jsonl")
STEP = ("pod", "node", "feasible")  # what the golden steps state


def sampled_scenario(case: dict[str, Any]) -> dict[str, Any]:
    """The case's scenario as one `kind: List`, its configuration without `percentageOfNodesToScore`."""
    docs = case_scenario_docs(case)
    docs[0].pop("percentageOfNodesToScore", None)  # the default profile's helper sets 100
    assert docs[0]["kind"] == "KubeSchedulerConfiguration" and "percentageOfNodesToScore" not in docs[0]
    for profile in docs[0]["profiles"]:
        assert "percentageOfNodesToScore" not in profile
    return {"apiVersion": "v1", "kind": "List", "items": docs}


def columns(steps: list[dict[str, Any]]) -> list[tuple]:
    return [tuple(s.get(k) for k in STEP) for s in steps]


def first_difference(got: list[tuple], want: list[tuple]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g != w:
            return f"step {i}: kubefit {dict(zip(STEP, g, strict=True))} != golden {dict(zip(STEP, w, strict=True))}"
    return ""


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_sampling_sequence(case, tmp_path, capsys):
    assert case["sampling"] == "adaptive" and case["mode"] == "sequence"
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(sampled_scenario(case)))
    capsys.readouterr()
    rc = main(["simulate", "-f", str(path), "-o", "json", "--tie-break", "first"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    got = json.loads(out)
    expect = case["expect"]
    assert len(got["steps"]) == len(expect["steps"]) == len(case["queue"])
    mine, theirs = columns(got["steps"]), columns(expect["steps"])
    assert mine == theirs, first_difference(mine, theirs)
    assert (got["scheduled"], got["unschedulable"]) == (expect["scheduled"], expect["unschedulable"])


def test_case_accounting():
    """Four cases, 28,456 steps; every step is a cycle of a sampled search (the node count is at least 100)."""
    assert [c["id"] for c in CASES] == [
        "trace-alibaba-default-LeastAllocated-adaptive", "trace-alibaba-default-MostAllocated-adaptive",
        "trace-alibaba-default-RequestedToCapacityRatio-adaptive", "default-replay-600x4000-adaptive"]
    assert sum(len(c["expect"]["steps"]) for c in CASES) == 28_456
    assert all(len(c["nodes"]) >= 100 for c in CASES)
    # the adaptive number of feasible nodes to find (SPEC §7): 1,213 nodes → 41 % → 497; 600 → 46 % → 276
    assert {max(s["feasible"] for s in c["expect"]["steps"]) for c in CASES} == {497, 276}
