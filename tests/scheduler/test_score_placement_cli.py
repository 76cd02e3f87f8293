"""Every single-pod case of golden/kube-scheduler/placement-cases.jsonl through the user's path.

The case becomes a scenario file (golden_scenario.case_scenario_docs) and goes through
`kubefit score -f FILE -o json --detail`; every per-plugin output of the real scheduler that the CLI
emits is compared: node statuses with the failing plugin, each Filter plugin alone, PreFilter node
names and skips, normalised and raw scores over the feasible nodes, skipped score plugins, totals,
best nodes, and the cycle error of a score plugin (exit 1 with the scheduler's message).

An incoming pod that carries `spec.nodeName` (the NodeName filter's cases) is annotated
`kubefit.io/queued: "true"` by the helper: in a scenario file it is then pending, not running there.
"""

from __future__ import annotations

import pytest

from golden_scenario import nothing, run_case, same, score_detail
from tests_support import golden_cases

ALL = golden_cases("kube-scheduler/placement-cases.jsonl")
SINGLE = [c for c in ALL if c.get("mode") != "sequence"]
REFUSED = [c for c in SINGLE if c["expect"].get("validation")]
CASES = [c for c in SINGLE if c not in REFUSED]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_score_detail_matches_kube_scheduler(case, tmp_path, capsys):
    expect = case["expect"]
    # a score plugin may fail the cycle (PreScore error, score out of range): the input is valid, the cycle
    # itself fails with the scheduler's text and exit 1, as SchedulingCycleError says (checked by score_detail)
    got = score_detail(case, tmp_path, capsys)
    if got is None:
        return
    assert got["filter"] == expect["filter"]
    if expect.get("preFilter"):
        # PreFilter rejected the pod: the scheduler ran no Filter plugin, so there is no per-plugin map
        assert nothing(got.get("filterByPlugin")), "filterByPlugin"
    else:
        assert got["filterByPlugin"] == expect["filterByPlugin"]
    for key in ("preFilterNodeNames", "skippedFilterPlugins", "feasible", "score", "scoreRaw",
                "skippedScorePlugins", "total", "best"):
        assert same(got[key], expect.get(key)), key


@pytest.mark.parametrize("case", REFUSED, ids=[c["id"] for c in REFUSED])
def test_refused_added_affinity(case, tmp_path, capsys):
    """Args the real validation refused: `kubefit score` refuses them too, exit 2, the same messages."""
    rc, out, err = run_case(case, ["score", "-o", "json", "--detail"], tmp_path, capsys)
    assert rc == 2, out
    for message in case["expect"]["validationDetail"]["config"]:
        assert message in err


def test_case_accounting():
    """300 single-pod cases: 2 refused configs, 298 scored, 27 of them for a pod naming its node."""
    assert len(SINGLE) == 300
    assert len(REFUSED) == 2
    assert len(CASES) == 298
    assert sum(1 for c in CASES if (c["pod"].get("spec") or {}).get("nodeName")) == 27
