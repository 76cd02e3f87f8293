"""Every case of golden/kube-scheduler/dra-cases.jsonl through the user's path.

A case is a default-profile single-pod case with DeviceClasses, ResourceSlices and ResourceClaims
(golden_scenario.case_scenario_docs puts them in the scenario file); it goes through
`kubefit score -f FILE -o json --detail` and every field of the real scheduler's cycle is compared: each
node's verdict with the failing plugin ("cannot allocate all claims" from DynamicResources), each Filter
plugin alone, the scores, totals and best nodes, and when no node fits the FitError text with
DynamicResources' PostFilter part ("still not schedulable") and DefaultPreemption's answer.
"""

from __future__ import annotations

import pytest

from golden_scenario import check_single_case
from tests_support import golden_cases

CASES = golden_cases("kube-scheduler/dra-cases.jsonl")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_dra_single(case, tmp_path, capsys):
    check_single_case(case, tmp_path, capsys)


def test_case_accounting():
    """120 single-pod cases: one claim, two requests, two claims, firstAvailable, matchAttribute constraints."""
    assert len(CASES) == 120
    tags = {t for c in CASES for t in c["tags"]}
    assert {"dra:first-available", "dra:constraint", "dra:two-claims", "dra:two-requests"} <= tags
