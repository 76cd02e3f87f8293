"""The public API: one documented function per verb, returning what the command renders."""

from __future__ import annotations

import json
import pydoc
from pathlib import Path

import pytest

import kubefit
from kubefit.cli import main
from tests_support import run_json

VERBS = ("score", "simulate", "compare", "timeline", "capacity", "plan", "summary", "estimate", "schedule",
         "divide", "models_defaults", "models_validate", "models_classify")


def test_help_lists_every_verb_with_a_runnable_example():
    text = pydoc.render_doc(kubefit, renderer=pydoc.plaintext)
    for name in VERBS:
        assert name in kubefit.__all__
        assert f"\n    {name}(" in text, name
        assert ">>> " in (getattr(kubefit, name).__doc__ or ""), name  # run by --doctest-modules


def test_every_exported_name_exists():
    assert sorted(set(kubefit.__all__)) == sorted(kubefit.__all__)
    for name in kubefit.__all__:
        assert getattr(kubefit, name) is not None


def cli_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main([*argv, "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


WORKLOAD = "examples/workload/cluster.yaml"


def same_as_cli(api_data: dict, told: list[str], cli: dict) -> bool:
    """The command's JSON is the API's result plus `warnings`: what the API told its `warn`."""
    warnings = cli.pop("warnings", [])
    return set(warnings) <= set(told) and {k: v for k, v in api_data.items() if k != "warnings"} == cli


def test_the_api_returns_what_the_command_prints(capsys):
    told: list[str] = []
    assert same_as_cli(kubefit.capacity([WORKLOAD], "report-0", warn=told.append).to_dict(), told,
                       cli_json(capsys, "capacity", "-f", WORKLOAD, "--pod", "report-0"))
    assert same_as_cli(kubefit.simulate([WORKLOAD], tie_break="first", warn=told.append).to_dict(), told,
                       cli_json(capsys, "simulate", "-f", WORKLOAD, "--tie-break", "first"))
    docs = ["examples/docs-bin-packing/cluster.yaml", "examples/docs-bin-packing/most-allocated.yaml"]
    assert same_as_cli(kubefit.score(docs, warn=told.append), told, cli_json(capsys, "score", "-f", docs[0],
                                                                             "-f", docs[1]))
    fleet = "examples/karmada/estimate-general-500m.yaml"
    assert same_as_cli(kubefit.estimate([fleet], warn=told.append).to_dict(), told,
                       cli_json(capsys, "estimate", "-f", fleet))


def test_warnings_reach_the_callback_or_pythons_warnings(tmp_path):
    extra = tmp_path / "cluster.yaml"  # a Karmada Cluster: simulate and capacity do not read it
    extra.write_text("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member1}\n")
    told: list[str] = []
    kubefit.simulate([WORKLOAD, extra], warn=told.append)
    assert any("does not read" in t and "Cluster/member1" in t for t in told)
    with pytest.warns(kubefit.KubefitWarning, match="Cluster/member1"):
        kubefit.capacity([WORKLOAD, extra])


def as_json(data: dict) -> dict:
    """The result as `-o json` writes it (tuples become lists, numpy-free)."""
    from kubefit.report.output import to_json

    return json.loads(to_json(data))


DRAIN = "examples/drain/cluster.yaml"
PLAN = "examples/plan/"


@pytest.mark.parametrize(("api", "argv"), [
    (lambda warn: kubefit.simulate([DRAIN], drain=["node-a"], warn=warn).to_dict(),
     ("simulate", "-f", DRAIN, "--drain", "node-a")),
    (lambda warn: kubefit.simulate([DRAIN], cordon=["node-b"], remove=["node-a"], tie_break="first",
                                   warn=warn).to_dict(),
     ("simulate", "-f", DRAIN, "--cordon", "node-b", "--remove", "node-a", "--tie-break", "first")),
    (lambda warn: kubefit.timeline(["examples/timeline/cluster.yaml"], warn=warn).to_dict(),
     ("simulate", "-f", "examples/timeline/cluster.yaml", "--timeline")),
    (lambda warn: kubefit.plan([PLAN + "cluster.yaml"], [PLAN + "small.yaml", PLAN + "large.yaml"],
                               warn=warn).to_dict(),
     ("plan", "-f", PLAN + "cluster.yaml", "--node-template", PLAN + "small.yaml", PLAN + "large.yaml")),
    (lambda warn: kubefit.plan([DRAIN], [PLAN + "small.yaml"], drain=["node-a", "node-c"], warn=warn).to_dict(),
     ("plan", "-f", DRAIN, "--drain", "node-a,node-c", "--node-template", PLAN + "small.yaml")),
    (lambda warn: __import__("kubefit.scheduler.compare").scheduler.compare.comparison_to_dict(
        kubefit.compare([WORKLOAD], ["MostAllocated", "examples/configs/v1-requested-to-capacity-ratio.yaml"],
                        tie_break="first", warn=warn)),
     ("simulate", "-f", WORKLOAD, "--compare", "MostAllocated", "examples/configs/v1-requested-to-capacity-ratio.yaml",
      "--tie-break", "first")),
    (lambda warn: kubefit.capacity([WORKLOAD], "report-0", limit=1, warn=warn).to_dict(),
     ("capacity", "-f", WORKLOAD, "--pod", "report-0", "--max", "1")),
], ids=["drain", "cordon-remove", "timeline", "plan", "plan-drain", "compare", "capacity-max"])
def test_the_library_call_is_the_commands_json(capsys, api, argv):
    told: list[str] = []
    data = as_json(api(told.append))
    rc, cli, err = run_json(capsys, *argv)
    assert rc == 0, err
    assert data == cli  # warnings included: the result carries them
    assert "warnings" in data and set(data["warnings"]) <= set(told)
    assert [line for line in err.splitlines() if line.startswith("warning: ")] == [f"warning: {t}" for t in told]


def test_node_actions_answer_where_the_evicted_pods_go():
    told: list[str] = []
    result = kubefit.simulate([DRAIN], drain=["node-a"], warn=told.append)
    moves = result.node_actions["evicted"]
    assert [m["pod"] for m in moves] == ["api-x7k2p"]  # the DaemonSet's agent stays
    assert all(m["from"] == "node-a" and m["to"] not in (None, "node-a") for m in moves)  # cordoned first
    assert result.node_actions["allPlaced"] is True
    refused = kubefit.simulate([DRAIN, "examples/drain/debug.yaml"], drain=["node-a"], warn=told.append)
    assert refused.node_actions["refused"] == {"node-a": "cannot delete Pods that declare no controller (use "
                                                         "--force to override): default/debug"}
    assert any("drain of node-a refused" in t for t in told)  # the bare pod: kubectl drain needs --force
    removed = kubefit.simulate([DRAIN], remove=["node-a", "node-b"], warn=told.append)  # 6 cpu for node-c's 4
    assert removed.node_actions["allPlaced"] is False
    assert [m["to"] for m in removed.node_actions["evicted"]].count(None) == 1
    with pytest.raises(kubefit.InputError, match="no node named 'nope'"):
        kubefit.simulate([DRAIN], cordon=["nope"])
    with pytest.raises(kubefit.InputError, match="sequence of node names"):
        kubefit.simulate([DRAIN], drain="node-a")


def test_recursive_reads_sub_folders_as_the_command_does(tmp_path, capsys):
    source = (Path(WORKLOAD)).read_text()
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "cluster.yaml").write_text(source)
    with pytest.raises(kubefit.InputError, match="sub-folders are read with -R"):
        kubefit.simulate([tmp_path / "a"])
    data = as_json(kubefit.simulate([tmp_path / "a"], recursive=True, tie_break="first", warn=lambda _: None).to_dict())
    assert data["scheduled"] == 20
    rc, cli, err = run_json(capsys, "simulate", "-R", "-f", str(tmp_path / "a"), "--tie-break", "first")
    assert rc == 0 and cli == data
    assert kubefit.capacity([tmp_path / "a"], "report-0", recursive=True, warn=lambda _: None).count == 2


def test_progress_reports_done_and_total():
    calls: list[tuple] = []
    result = kubefit.simulate([WORKLOAD], progress=lambda *a: calls.append(a))
    assert calls[-1] == (len(result.steps), len(result.steps))
    calls.clear()
    runs = kubefit.compare([WORKLOAD], ["MostAllocated"], progress=lambda *a: calls.append(a))
    assert [c[0] for c in calls] == [r.label for r in runs]  # one call at the end of each short run
    assert all(done == total for _, done, total in calls)
