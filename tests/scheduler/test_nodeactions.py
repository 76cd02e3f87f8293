"""`--cordon/--drain/--remove` on simulate and plan: which pods move, where they go, the answer's exit code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kubefit.api.core import Pod
from kubefit.cli import main
from kubefit.manifests.documents import Document
from kubefit.manifests.load import decode_pod
from kubefit.scheduler.nodeactions import replacement
from tests_support import run_json

ROOT = Path(__file__).resolve().parents[2]
DRAIN = ROOT / "examples" / "drain" / "cluster.yaml"
DEBUG = ROOT / "examples" / "drain" / "debug.yaml"  # a bare pod on node-a
SMALL = ROOT / "examples" / "plan" / "small.yaml"



def test_drain_replaces_all_but_daemon_set_pods(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "--drain", "node-a")
    assert rc == 0, err
    [move] = data["nodeActions"]["evicted"]
    # the ReplicaSet's replacement: `api-` + 5 new characters; 3 cpu fit only on the empty node-c
    assert move["pod"] == "api-x7k2p" and re.fullmatch(r"api-[bcdfghjklmnpqrstvwxz2456789]{5}", move["replacement"])
    assert move["replacement"] != "api-x7k2p" and (move["from"], move["to"]) == ("node-a", "node-c")
    assert data["nodeActions"]["allPlaced"] is True and data["nodeActions"]["lost"] == []
    steps = [s["pod"] for s in data["steps"]]
    assert move["replacement"] in steps and "api-x7k2p" not in steps  # never re-queued under the old identity
    # the DaemonSet's pod for node-a still goes there: it tolerates the cordon's taint
    agents = {s["node"] for s in data["steps"] if s["pod"].startswith("agent-")}
    assert agents == {"node-a", "node-b", "node-c"}


def test_drain_of_a_node_with_a_bare_pod_is_refused_as_kubectl_does(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "-f", str(DEBUG), "--drain", "node-a")
    assert rc == 1  # the answer is no
    actions = data["nodeActions"]
    assert actions["refused"] == {"node-a": "cannot delete Pods that declare no controller (use --force to "
                                            "override): default/debug"}
    assert actions["evicted"] == [] and actions["allPlaced"] is False
    assert data["final"]["node-a"]["pods"] == 3  # api, debug and the agent stay on the cordoned node
    assert "drain of node-a refused" in err


def test_remove_loses_the_bare_pod_and_replaces_the_others(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "-f", str(DEBUG), "--remove", "node-a")
    assert rc == 1
    actions = data["nodeActions"]
    assert actions["lost"] == [{"pod": "debug", "from": "node-a"}]
    assert [m["pod"] for m in actions["evicted"]] == ["api-x7k2p"]
    assert "debug" not in [s["pod"] for s in data["steps"]]  # gone, not queued
    assert "lost" in err and "default/debug" in err


def test_replacement_names_follow_the_controller():
    base = {"apiVersion": "v1", "kind": "Pod", "spec": {"nodeName": "n", "containers": [{"name": "c"}]}}

    def pod(name: str, kind: str | None, owner: str = "own", generate: str | None = None) -> Pod:
        meta: dict = {"name": name, "namespace": "default"}
        if kind:
            meta["ownerReferences"] = [{"apiVersion": "v1", "kind": kind, "name": owner, "uid": "u",
                                        "controller": True}]
        if generate:
            meta["generateName"] = generate
        return decode_pod(Document({**base, "metadata": meta}, "t.yaml", 0), [])

    assert replacement(pod("db-0", "StatefulSet", "db")).name == "db-0"
    job = replacement(pod("etl-0-abcde", "Job", "etl", generate="etl-0-"))
    assert job.name.startswith("etl-0-") and len(job.name) == len("etl-0-abcde") and job.name != "etl-0-abcde"
    rs = replacement(pod("web-5d8f7c6b9-abcde", "ReplicaSet", "web-5d8f7c6b9"))
    assert rs.name.startswith("web-5d8f7c6b9-") and rs.name != "web-5d8f7c6b9-abcde"
    assert not rs.bound and rs.phase == "Pending" and "nodeName" not in rs.raw["spec"]
    assert replacement(pod("x", "MyOperator")).name == "x"
    assert replacement(pod("bare", None)) is None
    # not a controller reference: still a bare pod for kubectl drain
    loose = pod("loose", "ReplicaSet")
    loose.raw["metadata"]["ownerReferences"][0]["controller"] = False
    assert replacement(loose) is None


def test_cordon_keeps_pods_and_turns_new_ones_away(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "--cordon", "node-c,node-b")
    assert rc == 0, err
    assert data["nodeActions"]["evicted"] == []
    assert data["final"]["node-a"]["pods"] == 2 and data["final"]["node-b"]["pods"] == 2  # own api pod + agent


def test_remove_drops_the_node_and_its_daemon_pods(capsys):
    rc, data, err = run_json(capsys, "simulate", "-f", str(DRAIN), "--remove", "node-a")
    assert rc == 0, err
    assert "node-a" not in data["final"]
    assert [m["pod"] for m in data["nodeActions"]["evicted"]] == ["api-x7k2p"]
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
