"""Every single-pod golden case through the user's path: scenario file → `kubefit score -o json`."""

from __future__ import annotations

import json

import pytest

from golden_scenario import case_scenario_docs
from kubefit.cli import main
from tests_support import golden_cases

CASES = [c for c in golden_cases("kube-scheduler/cases.jsonl") + golden_cases("kube-scheduler/docs-example.jsonl")
         if c.get("mode") != "sequence"]


def _write(tmp_path, case) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": case_scenario_docs(case)}))
    return str(path)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_score_matches_kube_scheduler(case, tmp_path, capsys):
    expect = case["expect"]
    rc = main(["score", "-f", _write(tmp_path, case), "-o", "json", "--no-admission"])  # pods as given
    out, err = capsys.readouterr()
    detail = expect.get("validationDetail") or {}
    if expect.get("validation") or any(detail.values()):
        # kube-scheduler refused the configuration: kubefit refuses it too, with the same messages
        assert rc == 2, out
        for message in expect.get("validation") or [detail["frameworkError"]]:
            assert message in err
        return
    assert rc == 0, err
    got = json.loads(out)
    assert got["pod"] == f"{case['pod']['metadata'].get('namespace', 'default')}/{case['pod']['metadata']['name']}"
    assert got["filter"] == {n: {"code": v["code"], "reasons": v["reasons"]} for n, v in expect["filter"].items()}
    assert got["feasible"] == expect["feasible"]
    assert got["score"] == (expect.get("score") or {})
    assert got["skippedScorePlugins"] == (expect.get("skippedScorePlugins") or [])
    assert got["total"] == (expect.get("total") or {})
    assert got["best"] == (expect.get("best") or [])
