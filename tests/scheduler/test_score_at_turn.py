"""`kubefit score --at-turn`: a pod scored at its turn in `simulate`'s queue sees the cluster the simulation
gave it — the node the simulation chose is among the best, as many nodes tie, and a pod that preempted
shows the same victims."""

from __future__ import annotations

import pytest

import kubefit
from kubefit.cli import main

QUIET = {"warn": lambda _: None}


@pytest.mark.parametrize("scenario", ["examples/workload/cluster.yaml", "examples/plan/cluster.yaml",
                                      "examples/dra/cluster.yaml"])
def test_the_simulation_chose_among_the_best_at_each_turn(scenario):
    run = kubefit.simulate([scenario], **QUIET)
    names = run.state.node_names
    for step in run.steps:
        if step.node is None:
            continue
        cycle = kubefit.score([scenario], step.pod.key, at_turn=True, **QUIET)
        assert names[step.node] in cycle["best"], step.pod.key
        assert len(cycle["best"]) == max(step.tie_count, 1), step.pod.key


def test_a_preempting_pod_shows_its_victims():
    scenario = ["examples/preemption/cluster.yaml"]
    run = kubefit.simulate(scenario, **QUIET)
    first = next(s for s in run.steps if s.victims)
    cycle = kubefit.score(scenario, first.pod.key, at_turn=True, **QUIET)
    assert cycle["postFilter"]["victims"] == list(first.victims)
    assert cycle["postFilter"]["nominatedNode"] == run.state.node_names[first.nominated_node]


def test_the_first_pod_is_scored_as_without_the_option(capsys):
    args = ["score", "-f", "examples/workload/cluster.yaml", "-o", "json"]
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert main([*args, "--at-turn"]) == 0
    at_turn = capsys.readouterr().out
    assert plain.split('"inputs"')[0] == at_turn.split('"inputs"')[0]
