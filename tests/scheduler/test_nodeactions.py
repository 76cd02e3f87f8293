"""`--cordon/--drain/--remove` on simulate and plan: which pods move, where they go, the answer's exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubefit.cli import main
from tests_support import run_json

ROOT = Path(__file__).resolve().parents[2]
DRAIN = ROOT / "examples" / "drain" / "cluster.yaml"
SMALL = ROOT / "examples" / "plan" / "small.yaml"



def test_drain_moves_all_but_daemon_set_pods(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "--drain", "node-a")
    assert rc == 0, err
    moves = {m["pod"]: (m["from"], m["to"]) for m in data["nodeActions"]["evicted"]}
    # api (3 cpu) fits only on the empty node-c; debug (500m) then fits on node-b or node-c, never node-a
    assert moves["api-x7k2p"] == ("node-a", "node-c")
    assert set(moves) == {"api-x7k2p", "debug"} and moves["debug"][1] in ("node-b", "node-c")
    assert data["nodeActions"]["allPlaced"] is True
    assert "no controller to recreate them" in err and "default/debug" in err
    # the DaemonSet's pod for node-a still goes there: it tolerates the cordon's taint
    agents = {s["node"] for s in data["steps"] if s["pod"].startswith("agent-")}
    assert agents == {"node-a", "node-b", "node-c"}


def test_drain_that_cannot_fit_answers_no_with_exit_1(capsys):
    rc, data, _err = run_json(capsys, "simulate", "-f", str(DRAIN), "--drain", "node-a", "node-c")
    assert rc == 1
    moves = {m["pod"]: m["to"] for m in data["nodeActions"]["evicted"]}
    assert moves == {"api-x7k2p": None, "debug": "node-b"}  # node-b has 1 cpu left after its api pod
    assert data["nodeActions"]["allPlaced"] is False


def test_cordon_keeps_pods_and_turns_new_ones_away(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "--cordon", "node-c,node-b")
    assert rc == 0, err
    assert data["nodeActions"]["evicted"] == []
    assert data["final"]["node-a"]["pods"] == 3 and data["final"]["node-b"]["pods"] == 2  # own pods + agent


def test_remove_drops_the_node_and_its_daemon_pods(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "--remove", "node-a")
    assert rc == 0, err
    assert "node-a" not in data["final"]
    assert sorted(m["pod"] for m in data["nodeActions"]["evicted"]) == ["api-x7k2p", "debug"]
    assert sorted(s["node"] for s in data["steps"] if s["pod"].startswith("agent-")) == ["node-b", "node-c"]


def test_plan_after_drain_adds_what_the_evicted_pods_need(capsys):
    rc, data, err = run_json(capsys, "plan", "-f", str(DRAIN), "--drain", "node-a", "node-c",
                             "--node-template", str(SMALL))
    assert rc == 0, err
    assert data["add"] == {"small": 1}
    assert data["nodeActions"]["allPlaced"] is True
    assert {m["pod"]: m["to"] for m in data["nodeActions"]["evicted"]}["api-x7k2p"] == "small-1"


@pytest.mark.parametrize("option", ["--cordon", "--drain", "--remove"])
def test_unknown_node_is_one_clear_error(capsys, option):
    rc = main(["simulate", "-f", str(DRAIN), option, "node-z"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("error:") == 1 and option in err and "node-z" in err
