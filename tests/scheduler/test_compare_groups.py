"""What turning gangs on changes (`simulate --compare-feature-gates`) and pod groups placed differently between runs
(`groupDifferences` of `--compare-versions` and `--compare-feature-gates`).

Hand-derived on the gangs example (three 4-GPU nodes, 2 GPUs held): pod by pod (GenericWorkload off) train's 8 pods
take 8 of the 10 free GPUs and tune binds 2 of its 4 pods (stranding 2 GPUs a 4-worker job cannot use); as groups
tune binds none.
"""

from __future__ import annotations

import kubefit
from gangs_support import GATES, gang, gpu_node, run
from tests_support import ROOT, run_json

EXAMPLE = str(ROOT / "examples" / "gangs" / "cluster.yaml")
OFF, ON = "1.36 (v1.36.3)", f"1.36 (v1.36.3) {GATES}"


def test_turning_gangs_on_in_the_example(capsys):
    rc, out, _ = run_json(capsys, "simulate", "-f", EXAMPLE, "--kube-version", "1.36", "--tie-break", "first",
                          "--compare-feature-gates", GATES)
    assert rc == 0
    assert [(c["name"], c["scheduled"]) for c in out["configurations"]] == [(OFF, 10), (ON, 8)]
    groups = {g["podGroup"]: g for g in out["groupDifferences"]}
    assert groups["ml/tune-0"] == {"podGroup": "ml/tune-0", "policy": "gang", "minCount": 4, "pods": 4, "runs": {
        OFF: {"bound": 2, "asGroup": False, "placedWhole": False},
        ON: {"bound": 0, "asGroup": True, "placedWhole": False}}}
    assert "ml/train-0" not in groups  # 2 pods on gpu-a, 3 on gpu-b and gpu-c either way
    assert {d["pod"] for d in out["differences"]} >= {"ml/tune-0", "ml/tune-1"}
    assert any("spec.schedulingGroup dropped" in w for w in out["warnings"])


def test_a_group_placed_alike_is_not_listed(tmp_path, capsys):
    # one 4-GPU node: the gang's 2 pods land there pod by pod and as a group alike
    rc, out, _ = run(tmp_path, capsys, "simulate", [gpu_node("a", 4), *gang("pg", 2)], "--kube-version", "1.36",
                     "--compare-feature-gates", GATES)
    assert rc == 0 and "groupDifferences" not in out and out["differences"] == []


def test_the_table_lists_the_groups(capsys):
    from kubefit.cli import main

    assert main(["simulate", "-f", EXAMPLE, "--kube-version", "1.36", "--tie-break", "first",
                 "--compare-feature-gates", GATES]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Pod groups placed differently (1)" in out  # train: the same nodes (another order of its pods)
    assert "ml/tune-0 (minCount 4) │ 2 of 4 bound, pod by pod │ 0 of 4 bound, as a group" in out


def test_bad_uses_are_refused(capsys):
    rc, _, err = run_json(capsys, "simulate", "-f", EXAMPLE, "--compare-feature-gates", GATES, "--timeline")
    assert rc == 2 and "--compare-feature-gates" in err
    rc, _, err = run_json(capsys, "simulate", "-f", EXAMPLE, "--compare-feature-gates", "GenericWorkload")
    assert rc == 2 and "missing bool value for GenericWorkload" in err
    rc, _, err = run_json(capsys, "simulate", "-f", EXAMPLE, "--compare-feature-gates", ",")
    assert rc == 2 and "name the gates to turn on or off" in err


def test_the_python_api():
    runs = kubefit.compare_feature_gates([EXAMPLE], GATES, kube_version="1.36", tie_break="first",
                                         warn=lambda _m: None)
    assert [r.unschedulable for r in runs] == [2, 4]
