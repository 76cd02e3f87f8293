"""Every case of golden/kube-scheduler-v1.36/dra136-cases.jsonl (the real v1.36.3 allocator) under
`--kube-version 1.36`, one test per case id.

The 61 cases exercise what v1.36 turns on by default (golden/README.md, "dra136-cases.jsonl"): partitionable
devices (shared counters across the slices of a pool), consumable capacity (`allowMultipleAllocations`,
request policies, shares held by bound pods), device taints and tolerations, extended resources backed by
devices (the claim the scheduler makes, NodeResourcesFit leaving them out on DRA nodes and scoring them), and
mixes of those with CEL selectors, `firstAvailable`, `allocationMode: All`, admin access and constraints.

Single cases go through `kubefit score --detail` (every node's verdict with the failing plugin, each Filter
plugin alone, the raw and normalized scores, totals, best nodes, the FitError text with its PostFilter part);
sequences through `kubefit simulate --tie-break first` with every node evaluated (each step, then the totals):
a bound pod's claims are allocated, and the claim for its device-backed extended resources made, before the
next pod is scheduled.
"""

from __future__ import annotations

import json

import pytest

from golden_scenario import SINGLE_KEYS, case_scenario_docs, same
from kubefit.cli import main
from tests_support import golden_cases

VERSION = "1.36"
CASES = golden_cases("kube-scheduler-v1.36/dra136-cases.jsonl")
SINGLE = [c for c in CASES if c.get("mode") != "sequence"]
SEQUENCES = [c for c in CASES if c.get("mode") == "sequence"]
STEP_KEYS = ("pod", "namespace", "node", "feasible", "ties", "message", "victims", "nominatedNode",
             "nominatedNodeFirst", "preEnqueue", "batchHint")


def _run(case: dict, verb: list[str], tmp_path, capsys) -> tuple[int, str, str]:
    """The case as one scenario file (golden_scenario.case_scenario_docs) through `kubefit VERB … --kube-version
    1.36`, pods as given (no admission), kube-scheduler alone (no controller replaces preemption victims)."""
    path = tmp_path / f"{case['id']}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": case_scenario_docs(case)}))
    capsys.readouterr()
    alone = ["--no-replace-victims"] if verb[0] == "simulate" else []
    rc = main([verb[0], "-f", str(path), *verb[1:], "--kube-version", VERSION, "--no-admission", *alone])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("case", SINGLE, ids=[c["id"] for c in SINGLE])
def test_dra136_single(case, tmp_path, capsys):
    expect = case["expect"]
    rc, out, err = _run(case, ["score", "-o", "json", "--detail"], tmp_path, capsys)
    if expect.get("error"):
        assert rc == 1 and expect["error"] in err
        return
    assert rc == 0, err
    got = json.loads(out)
    for key in SINGLE_KEYS:
        if key == "filterByPlugin" and expect.get("preFilter"):
            continue  # PreFilter rejected the pod: no Filter plugin ran
        assert same(got.get(key), expect.get(key)), key


def _step(step: dict) -> dict:
    return {k: step[k] for k in STEP_KEYS if k in step}


@pytest.mark.parametrize("case", SEQUENCES, ids=[c["id"] for c in SEQUENCES])
def test_dra136_sequence(case, tmp_path, capsys):
    expect = case["expect"]
    rc, out, err = _run(case, ["simulate", "-o", "json", "--tie-break", "first"], tmp_path, capsys)
    assert rc == 0, err
    got = json.loads(out)
    assert len(got["steps"]) == len(expect["steps"])
    for i, (g, e) in enumerate(zip(got["steps"], expect["steps"], strict=True)):
        assert _step(g) == _step(e), f"step {i}"
    for key in ("scheduled", "unschedulable", "placement", "final"):
        assert got[key] == expect[key], key


def test_case_accounting():
    """61 cases: 45 single-pod cases (5 probes) and 16 sequences (4 probes)."""
    assert len(CASES) == 61 and len(SEQUENCES) == 16 and len(SINGLE) == 45
    features = {t for c in CASES for t in c["tags"] if t.startswith("dra136:")}
    assert features == {"dra136:partition", "dra136:capacity", "dra136:taint", "dra136:extended", "dra136:mixed"}
