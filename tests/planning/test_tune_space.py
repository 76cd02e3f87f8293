"""`tune`'s search space: every candidate is the v1 document it claims to be (decoded and validated by
kubefit's own validation), stock strategies match `simulate --compare`, `--space` errors name the field,
small spaces are searched whole, ties go to the scenario's configuration."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tune_support import node, pod, write

import kubefit
from kubefit.cli import main
from kubefit.errors import InputError
from kubefit.manifests.documents import Document
from kubefit.planning.space import (
    RTCR,
    Dimension,
    Point,
    checked_config,
    default_space,
    increasing_shape,
    load_space,
    point_body,
    stock_body,
    v1_body,
)
from kubefit.scheduler.compare import strategy_config
from kubefit.scheduler.config import SCORING_TYPES, load_configuration

ROOT = Path(__file__).resolve().parents[2]
V1 = "kubescheduler.config.k8s.io/v1"

# Base configurations the candidates are written over: none (kube-scheduler's defaults), the Alibaba study's
# (multiPoint with '*' disabled), one listing the weights under `score`, and two profiles.
BASES = {
    "defaults": None,
    "alibaba": yaml.safe_load((ROOT / "examples/alibaba/scheduler-config.yaml").read_text()),
    "score-point": {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {
        "score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 5}]}},
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/foo"]}}]}]},
    "two-profiles": {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "packer", "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}}]},
}


def base_config(name: str):
    body = BASES[name]
    config = load_configuration(None if body is None else Document(copy.deepcopy(body), name, 1))
    return v1_body(config, copy.deepcopy(body)), config


QUEUE = kubefit.load_scenario([str(ROOT / "examples/workload/cluster.yaml")])


@st.composite
def points(draw, space):
    strategy = draw(st.sampled_from(space.strategies))
    resources = tuple((n, draw(st.integers(d.low, d.high))) for n, d in space.resources)
    plugins = tuple((n, draw(st.integers(d.low, d.high))) for n, d in space.plugin_weights)
    shape = None
    if strategy == RTCR:
        n = draw(st.integers(2, 4))
        shape = increasing_shape(draw(st.lists(st.integers(0, 100), min_size=n, max_size=n)),
                                 draw(st.lists(st.integers(0, 10), min_size=n, max_size=n)), Dimension(0, 100))
    return Point(strategy, resources, shape, plugins)


@pytest.mark.parametrize("base", list(BASES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_candidate_decodes_to_its_point(base, data):
    body, config = base_config(base)
    space = default_space(config, QUEUE.pending_pods, QUEUE.pods)
    point = data.draw(points(space))
    decoded = checked_config(point_body(body, config, point), "candidate")
    weights = dict(point.plugin_weights)
    for before, after in zip(config.profiles, decoded.profiles, strict=True):
        assert [sp.name for sp in after.score_plugins] == [sp.name for sp in before.score_plugins]
        for sp in after.score_plugins:
            assert sp.weight == weights.get(sp.name, dict((s.name, s.weight) for s in before.score_plugins)[sp.name])
        if "NodeResourcesFit" not in before.plugin_args:
            continue
        fit = after.plugin_args["NodeResourcesFit"]
        assert fit.scoring_type == point.strategy
        assert [(r.name, r.weight) for r in fit.resources] == [(n, w) for n, w in point.resources if w]
        assert fit.ignored_resources == before.plugin_args["NodeResourcesFit"].ignored_resources
        if point.strategy == RTCR:
            assert [(p.utilization, p.score) for p in fit.shape] == list(point.shape)


@pytest.mark.parametrize("base", list(BASES))
@pytest.mark.parametrize("strategy", SCORING_TYPES)
def test_stock_configurations_are_simulate_compares(base, strategy):
    """The same profiles as `simulate --compare STRATEGY` builds, but for the RequestedToCapacityRatio shape
    that compare carries along into the other strategies (which never read it) and tune leaves out."""
    body, config = base_config(base)

    def shape_read(profiles):
        return [replace(p, plugin_args={n: replace(a, shape=None) if n == "NodeResourcesFit" and strategy != RTCR
                                        else a for n, a in p.plugin_args.items()}) for p in profiles]

    assert shape_read(checked_config(stock_body(body, config, strategy), "stock").profiles) == \
        shape_read(strategy_config(config, strategy).profiles)


@given(utils=st.lists(st.integers(0, 100), min_size=1, max_size=6), low=st.integers(0, 40), data=st.data())
def test_increasing_shape_is_valid_and_keeps_valid_shapes(utils, low, data):
    bounds = Dimension(low, 100)
    utils = [max(u, low) for u in utils]
    scores = data.draw(st.lists(st.integers(0, 10), min_size=len(utils), max_size=len(utils)))
    shape = increasing_shape(utils, scores, bounds)
    us = [u for u, _ in shape]
    assert all(a < b for a, b in zip(us, us[1:], strict=False)) and low <= us[0] and us[-1] <= 100
    assert sorted(s for _, s in shape) == sorted(scores)
    if len(set(utils)) == len(utils):  # already distinct: only sorted
        assert shape == tuple(sorted(zip(utils, scores, strict=True)))


SPACE_ERRORS = [
    ({"strategy": ["MostAllocated"]}, "strategy", "unknown field 'strategy'"),
    ({"strategies": ["Spread"]}, "strategies[0]", "must be one of"),
    ({"resources": {"cpu": 101}}, "resources.cpu", "must be within 0..100, got 101"),
    ({"resources": {"cpu": {"min": 5, "max": 2}}}, "resources.cpu", "min 5 is above max 2"),
    ({"resources": {"cpu": 0, "memory": [0, 3]}}, "resources", "at least one resource must always be scored"),
    ({"resources": {"cpu": {"min": 1, "top": 3}}}, "resources.cpu", "unknown field 'top'"),
    ({"shape": {"points": 5, "utilization": {"min": 0, "max": 3}}}, "shape.points", "cannot have distinct"),
    ({"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]}, "shape", "strictly increasing"),
    ({"pluginWeights": {"TaintToleration": 3}}, "pluginWeights.TaintToleration", "not a plugin whose weight"),
    ({"pluginWeights": {"NodeResourcesFit": 0}}, "pluginWeights.NodeResourcesFit", "must be within 1..10000"),
]


@pytest.mark.parametrize(("space", "field", "message"), SPACE_ERRORS, ids=[e[1] for e in SPACE_ERRORS])
def test_bad_space_is_one_clear_error(tmp_path, capsys, space, field, message):
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(space))
    rc = main(["tune", "-f", str(ROOT / "examples/workload/cluster.yaml"), "--space", str(path), "--workers", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: ")
    assert str(path) in err[0] and field in err[0] and message in err[0]


def test_space_keys_replace_the_defaults():
    _, config = base_config("defaults")
    default = default_space(config, QUEUE.pending_pods, QUEUE.pods)
    space = load_space({"strategies": "MostAllocated", "resources": {"cpu": [1, 10], "memory": 1}}, "s.yaml", default)
    assert space.strategies == ("MostAllocated",)
    assert space.to_dict()["resources"] == {"cpu": [1, 10], "memory": 1}
    assert space.plugin_weights == default.plugin_weights and space.shape == default.shape
    with pytest.raises(InputError, match="must be a mapping"):
        load_space(["MostAllocated"], "s.yaml", default)


def test_default_space_scores_what_the_workload_requests():
    """The bundled workload: cpu and memory (scored by the defaults: 1..100) and nvidia.com/gpu (requested by
    the trainers, not scored by the defaults: 0..100); no pod spreads or has pod affinity."""
    _, config = base_config("defaults")
    space = default_space(config, QUEUE.pending_pods, QUEUE.pods).to_dict()
    assert space["resources"] == {"cpu": {"min": 1, "max": 100}, "memory": {"min": 1, "max": 100},
                                  "nvidia.com/gpu": {"min": 0, "max": 100}}
    assert list(space["pluginWeights"]) == ["NodeResourcesFit", "NodeResourcesBalancedAllocation"]
    assert space["strategies"] == list(SCORING_TYPES)


def test_small_space_is_searched_whole(tmp_path):
    """Strategies {MostAllocated, LeastAllocated} × cpu weight {1, 2} (memory 1, plugin weights fixed) is 4
    configurations: with 10 trials every one is tried once (a grid), after the baselines."""
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump({"strategies": ["MostAllocated", "LeastAllocated"],
                                     "resources": {"cpu": [1, 2], "memory": 1},
                                     "pluginWeights": {"NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}},
                                    sort_keys=False))
    out = kubefit.tune([str(ROOT / "examples/workload/cluster.yaml")], trials=10, space=space, tie_break="first",
                       workers=1).to_dict()
    assert out["search"] == "grid"
    summaries = [t["summary"] for t in out["trials"]]
    assert len(summaries) == len(set(summaries))  # each configuration once
    grid = {f"{s} cpu={c} memory=1; NodeResourcesFit 1, NodeResourcesBalancedAllocation 1"
            for s in ("MostAllocated", "LeastAllocated") for c in (1, 2)}
    assert grid <= set(summaries)
    assert len(summaries) == 3 + 2  # baselines: LeastAllocated (= scenario), MostAllocated, RTCR; then cpu=2 twice


def test_ties_go_to_the_scenarios_configuration(tmp_path):
    """Everything fits under any configuration (pending 0 everywhere): the best is the scenario's own, trial 0."""
    path = write(tmp_path / "w.json", [node("n1", "8"), node("n2", "8"), pod("a", "1"), pod("b", "2")])
    out = kubefit.tune([path], trials=12, tie_break="first", workers=1).to_dict()
    assert {t["value"] for t in out["trials"]} == {0}
    assert out["best"]["trial"] == 0 and out["baselineTrials"]["scenario"] == 0
    assert json.dumps(out["best"]["config"]) == json.dumps(out["trials"][0]["config"])
