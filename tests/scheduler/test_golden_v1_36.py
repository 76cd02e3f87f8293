"""Every golden case of `golden/kube-scheduler-v1.36/` (the real kube-scheduler v1.36.3) through the user's
path under `--kube-version 1.36`: the same cases as `kube-scheduler/` (v1.34.1, the other golden suites),
mapped onto kubefit the same way (golden/README.md), with v1.36's expectations.

What differs from v1.34.1 (golden/README.md, "kube-scheduler v1.36.3"): NodeResourcesBalancedAllocation's
formula (kubernetes#135573), opportunistic batching in sequences (KEP-5598: `batchHint` steps), the unnamed
TaintToleration reason (#134740), NodeResourcesFitArgs validation (#132120), DynamicResources' Score
(#134711) and `bindingTimeout` default, and the NodeDeclaredFeatures Filter.
"""

from __future__ import annotations

import json

import pytest

from golden_scenario import SINGLE_KEYS, case_config, case_scenario_docs, same
from kubefit.cli import main
from kubefit.k8s.version import for_minor
from kubefit.manifests.documents import Document
from kubefit.scheduler.config import args_to_v1, load_configuration
from tests_support import golden_cases

VERSION = "1.36"
DIR = "kube-scheduler-v1.36"


def _cases(name: str, sequence: bool) -> list[dict]:
    return [c for c in golden_cases(f"{DIR}/{name}") if (c.get("mode") == "sequence") == sequence]


SINGLE = [c for name in ("cases.jsonl", "docs-example.jsonl", "placement-cases.jsonl", "default-profile-cases.jsonl",
                         "dra-cases.jsonl") for c in _cases(name, False)]
SEQUENCES = [c for name in ("cases.jsonl", "placement-cases.jsonl", "default-profile-cases.jsonl")
             for c in _cases(name, True)]
TRACE = golden_cases(f"{DIR}/trace-alibaba.jsonl")
SAMPLING = golden_cases(f"{DIR}/sampling-cases.jsonl")
# what a sequence step states (golden/README.md); `batchHint` marks a pod bound to the batch's hint, unscored
STEP_KEYS = ("pod", "namespace", "node", "feasible", "ties", "message", "victims", "nominatedNode",
             "nominatedNodeFirst", "preEnqueue", "batchHint")


def _run(case: dict, verb: list[str], tmp_path, capsys, *, every_node: bool = True,
         admission: bool = False) -> tuple[int, str, str]:
    docs = case_scenario_docs(case)
    if every_node:
        docs[0]["percentageOfNodesToScore"] = 100  # golden sequences evaluate every node (README, SPEC §7)
    else:
        docs[0].pop("percentageOfNodesToScore", None)  # kube-scheduler's adaptive sampling
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    capsys.readouterr()
    rc = main([verb[0], "-f", str(path), *verb[1:], "--kube-version", VERSION,
               *([] if admission else ["--no-admission"]),
               *(["--no-replace-victims"] if verb[0] == "simulate" else [])])  # kube-scheduler alone (golden_scenario)
    out, err = capsys.readouterr()
    return rc, out, err


def _refused(expect: dict) -> list[str] | None:
    detail = expect.get("validationDetail") or {}
    if expect.get("validation") or any(detail.values()):
        return expect.get("validation") or [detail["frameworkError"]]
    return None


@pytest.mark.parametrize("case", SINGLE, ids=[c["id"] for c in SINGLE])
def test_single_pod(case, tmp_path, capsys):
    """`kubefit score --detail`: every node's verdict (with the failing plugin where the case names it), each
    plugin's raw and normalized scores, totals, best nodes, PostFilter; or the configuration refused."""
    expect = case["expect"]
    rc, out, err = _run(case, ["score", "-o", "json", "--detail"], tmp_path, capsys, every_node=False)
    refused = _refused(expect)
    if refused is not None:
        assert rc == 2, out
        for message in refused:
            assert message in err
        return
    if expect.get("error"):
        assert rc == 1 and expect["error"] in err
        return
    assert rc == 0, err
    got = json.loads(out)
    want_filter = expect.get("filter") or {}  # none for a pod SchedulingGates keeps out of the queue
    assert {n: {k: v for k, v in got["filter"][n].items() if k in want} for n, want in want_filter.items()} \
        == want_filter
    for key in SINGLE_KEYS:
        if key == "filter" or key not in expect or (key == "filterByPlugin" and expect.get("preFilter")):
            continue  # (no Filter plugin ran alone when PreFilter rejected the pod)
        assert same(got.get(key), expect[key]), key


@pytest.mark.parametrize("case", [c for c in SINGLE if c["expect"].get("effectiveArgs")],
                         ids=[c["id"] for c in SINGLE if c["expect"].get("effectiveArgs")])
def test_effective_args(case):
    """The defaulted args of v1.36.3 (`bindingTimeout: 10m0s` of DynamicResources among them)."""
    if _refused(case["expect"]) is not None:
        return
    config = load_configuration(Document(case_config(case), f"golden:{case['id']}", 1), for_minor(36))
    effective = {pc["name"]: pc["args"] for pc in config.effective["profiles"][0]["pluginConfig"]}
    for name, want in case["expect"]["effectiveArgs"].items():
        assert effective.get(name, args_to_v1(config.profiles[0].plugin_args.get(name))) == want, name


def _check_steps(case: dict, got: dict, ties_shown: int | None = None, keys: tuple = STEP_KEYS) -> None:
    expect = case["expect"]
    assert len(got["steps"]) == len(expect["steps"])
    for i, (g, e) in enumerate(zip(got["steps"], expect["steps"], strict=True)):
        mine = {k: g[k] for k in keys if k in g}
        if ties_shown is not None and "ties" in mine:
            assert g.get("tieCount", len(g["ties"])) == e.get("tieCount", len(e["ties"])), f"step {i} tie count"
            mine["ties"] = mine["ties"][:ties_shown]
        assert mine == {k: e[k] for k in keys if k in e}, f"step {i}"
    for key in ("scheduled", "unschedulable", "placement", "final"):
        if key in expect:
            assert got[key] == expect[key], key


@pytest.mark.parametrize("case", SEQUENCES, ids=[c["id"] for c in SEQUENCES])
def test_sequence(case, tmp_path, capsys):
    """`kubefit simulate --tie-break first`, every node evaluated: each step, then the totals."""
    rc, out, err = _run(case, ["simulate", "-o", "json", "--tie-break", "first"], tmp_path, capsys)
    assert rc == 0, err
    _check_steps(case, json.loads(out))


@pytest.mark.parametrize("case", TRACE, ids=[c["id"] for c in TRACE])
def test_trace_alibaba(case, tmp_path, capsys):
    """The Alibaba GPU trace (1,213 nodes, 8,152 pods) under each strategy: hundreds of batched steps."""
    rc, out, err = _run(case, ["simulate", "-o", "json", "--tie-break", "first"], tmp_path, capsys)
    assert rc == 0, err
    _check_steps(case, json.loads(out), ties_shown=8)


@pytest.mark.parametrize("case", SAMPLING, ids=[c["id"] for c in SAMPLING])
def test_sampling(case, tmp_path, capsys):
    """kube-scheduler's own node sampling: batched steps take the hint alone and leave the start index."""
    rc, out, err = _run(case, ["simulate", "-o", "json", "--tie-break", "first"], tmp_path, capsys,
                        every_node=False, admission=True)
    assert rc == 0, err
    _check_steps(case, json.loads(out), keys=("pod", "node", "feasible", "batchHint"))


def test_case_accounting():
    """The v1.36 files hold the v1.34 files' cases, id for id; the batched steps are where the README says."""
    for name in ("cases.jsonl", "docs-example.jsonl", "placement-cases.jsonl", "default-profile-cases.jsonl",
                 "dra-cases.jsonl", "trace-alibaba.jsonl", "sampling-cases.jsonl"):
        assert [c["id"] for c in golden_cases(f"{DIR}/{name}")] == \
            [c["id"] for c in golden_cases(f"kube-scheduler/{name}")]
    hinted = {c["id"] for c in SEQUENCES + TRACE + SAMPLING if any(s.get("batchHint") for s in c["expect"]["steps"])}
    assert hinted and not any(c["id"] in hinted for c in SEQUENCES if c.get("profile") == "default")
    assert len(SINGLE) == 400 + 16 + 300 + 126 + 120
