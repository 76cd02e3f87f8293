"""`kubefit check --gang-placed` / `gangsPlaced`: a pod group placed whole by simulate (GenericWorkload on).

On the gangs example (see README "Gangs"): train's 8 pods bind in one cycle (placed whole), tune finds 2 of the 4
GPUs it needs and binds none.
"""

from __future__ import annotations

from gangs_support import GATES
from tests_support import ROOT, run_json

EXAMPLE = str(ROOT / "examples" / "gangs" / "cluster.yaml")
ARGS = ("-f", EXAMPLE, "--kube-version", "1.36", "--feature-gates", GATES)


def test_train_is_placed_whole_and_tune_is_not(capsys):
    rc, out, _ = run_json(capsys, "check", *ARGS, "--gang-placed", "ml/train-0", "--gang-placed", "ml/tune-0")
    assert rc == 1
    outcomes = {o["title"]: o for o in out["assertions"]}
    assert outcomes["pod group ml/train-0 placed whole"]["status"] == "passed"
    tune = outcomes["pod group ml/tune-0 placed whole"]
    assert tune["status"] == "failed" and tune["actual"] == 0
    assert tune["message"] == "simulate binds 0 of pod group ml/tune-0's 4 pod(s)"
    assert tune["evidence"][0] == "gang ml/tune-0: 2 of minCount 4 fit: 3 nodes Insufficient nvidia.com/gpu"


def test_the_expectation_file_field(tmp_path, capsys):
    expect = tmp_path / "expect.yaml"
    expect.write_text(f"apiVersion: kubefit.io/v1alpha1\nkind: SchedulingExpectations\nfiles: [{EXAMPLE}]\n"
                      "assertions:\n  gangsPlaced: [ml/train-0]\n")
    rc, out, _ = run_json(capsys, "check", "--expect", str(expect), "--kube-version", "1.36", "--feature-gates", GATES)
    assert rc == 0 and [o["status"] for o in out["assertions"]] == ["passed"]
    expect.write_text("apiVersion: kubefit.io/v1alpha1\nkind: SchedulingExpectations\nassertions:\n"
                      "  gangsPlaced: ['']\n")
    rc, _, err = run_json(capsys, "check", "--expect", str(expect), "-f", EXAMPLE)
    assert rc == 2 and "assertions.gangsPlaced[0]" in err and "must name a pod group (NAMESPACE/NAME)" in err


def test_an_unknown_group_or_the_gate_off_is_bad_input(capsys):
    rc, _, err = run_json(capsys, "check", *ARGS, "--gang-placed", "ml/nope")
    assert rc == 2 and "no pod group ml/nope in the run (pod groups: ml/train-0, ml/tune-0)" in err
    rc, _, err = run_json(capsys, "check", "-f", EXAMPLE, "--kube-version", "1.36", "--gang-placed", "ml/train-0")
    assert rc == 2 and "GenericWorkload is off or no pod names a pod group" in err


def test_min_count_met_is_not_whole(tmp_path, capsys):
    # a gang of 3 with minCount 2 on a 2-GPU node: its cycle binds 2 (minCount met), the third stays pending: the
    # group is not placed whole.
    from gangs_support import gang, gpu_node, run

    rc, out, _ = run(tmp_path, capsys, "check", [gpu_node("a", 2), *gang("pg", 3, 2)], "--kube-version", "1.36",
                     "--feature-gates", GATES, "--gang-placed", "ml/pg")
    assert rc == 1 and out["assertions"][0]["actual"] == 2 and out["assertions"][0]["status"] == "failed"
