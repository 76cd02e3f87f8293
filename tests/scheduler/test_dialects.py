"""Old configuration dialects (v1beta1–3, legacy Policy) → v1: seeds, golden args, old error messages."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubefit.errors import ConfigError, InputError
from kubefit.manifests.documents import Document, read_documents
from kubefit.scheduler.config.dialects import dialect_of, is_legacy_dialect, to_v1

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
GOLDEN = SHARED / "golden" / "kube-scheduler"
EXAMPLES = ROOT / "examples" / "configs"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))


def _doc(body: dict[str, Any], source: str = "test.yaml") -> Document:
    return Document(body=body, source=source, index=1)


def _example(name: str) -> Document:
    return read_documents(EXAMPLES / name)[0]


def _fit_args(body: dict[str, Any]) -> dict[str, Any]:
    """The NodeResourcesFit pluginConfig args of the first profile ({} when absent)."""
    for cfg in body["profiles"][0].get("pluginConfig", []):
        if cfg["name"] == "NodeResourcesFit":
            return cfg["args"]
    return {}


# ------------------------------------------------------------------ seeds, read in place


def _seed(prefix: str) -> str:
    return next(SEEDS.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8")


@cache
def seed_configs() -> dict[str, list[dict[str, Any]]]:
    """Every complete configuration snippet of seeds 000, 001 and 004, parsed."""
    fenced = re.compile(r"```\s*yaml\n(.*?)```", re.S)
    out: dict[str, list[dict[str, Any]]] = {}
    for prefix in ("000", "001"):
        blocks = [yaml.safe_load(b) for b in fenced.findall(_seed(prefix))]
        out[prefix] = [b for b in blocks if isinstance(b, dict) and "kind" in b]
    text = _seed("004")
    start = text.index("apiVersion: kubescheduler.config.k8s.io/v1beta1")
    out["004"] = [yaml.safe_load(text[start:text.index("\n\n", start)])]
    return out


def test_seed_snippets_found() -> None:
    got = seed_configs()
    assert [len(got[k]) for k in ("000", "001", "004")] == [2, 2, 1]
    assert got["001"][0] == got["001"][1]  # the English original and its translation


@pytest.mark.parametrize(("seed", "i", "example"), [
    ("000", 0, "v1-most-allocated.yaml"),
    ("000", 1, "v1-requested-to-capacity-ratio.yaml"),
    ("001", 0, "policy-requested-to-capacity-ratio.yaml"),
], ids=["000-most-allocated", "000-requested-to-capacity-ratio", "001-policy"])
def test_every_seed_snippet_is_an_example_file(seed: str, i: int, example: str) -> None:
    assert _example(example).body == seed_configs()[seed][i]


def test_seed_004_as_printed_is_refused_and_the_example_fixes_only_the_list() -> None:
    """The Japanese docs indent `pluginConfig` under `profiles:` without `- `: not decodable."""
    printed = seed_configs()["004"][0]
    with pytest.raises(InputError, match="expected a list of profiles"):
        to_v1(_doc(printed))
    fixed = _example("v1beta1-requested-to-capacity-ratio.yaml").body
    assert fixed == {**printed, "profiles": [printed["profiles"]]}


# ------------------------------------------------------------------ every example converts and loads


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.name for p in EXAMPLE_FILES])
def test_example_converts_and_validates_as_v1(path: Path) -> None:
    from kubefit.scheduler.config import load_configuration

    doc = read_documents(path)[0]
    body, notes = to_v1(doc)
    assert body["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert all(isinstance(n, str) and n for n in notes)
    if dialect_of(doc) == "v1":
        assert body == doc.body and notes == []
    converted = load_configuration(_doc(body, str(path)))
    original = load_configuration(doc)
    assert converted.profiles[0].plugin_args.get("NodeResourcesFit") == \
        original.profiles[0].plugin_args.get("NodeResourcesFit")
    assert original.legacy_scoring == is_legacy_dialect(doc)


@pytest.mark.parametrize("old", ["v1beta1-most-allocated.yaml", "v1beta2-most-allocated.yaml"])
def test_most_allocated_forms_equal_the_v1_snippet_of_seed_000(old: str) -> None:
    from kubefit.scheduler.config import load_configuration

    body, _ = to_v1(_example(old))
    assert _fit_args(body) == seed_configs()["000"][0]["profiles"][0]["pluginConfig"][0]["args"]
    v1 = load_configuration(_doc(seed_configs()["000"][0]))
    got = load_configuration(_doc(body))
    fit = {p.name: p.weight for p in got.profiles[0].score_plugins}["NodeResourcesFit"]
    assert fit == {p.name: p.weight for p in v1.profiles[0].score_plugins}["NodeResourcesFit"]
    assert got.profiles[0].plugin_args["NodeResourcesFit"] == v1.profiles[0].plugin_args["NodeResourcesFit"]


def test_policy_docs_example_equals_the_v1_docs_example() -> None:
    """Seed 001's worked example as a Policy gives the v1 args of seed 000's worked example."""
    body, notes = to_v1(_example("policy-docs-worked-example.yaml"))
    assert _fit_args(body) == _fit_args(_example("v1-docs-worked-example.yaml").body)
    assert any("0..10 scale" in n for n in notes)
    # PodFitsResources plus v1.16's mandatory CheckNodeUnschedulable and PodToleratesNodeTaints
    assert body["profiles"][0]["plugins"]["multiPoint"] == {
        "enabled": [{"name": "PrioritySort"}, {"name": "NodeUnschedulable"}, {"name": "TaintToleration"},
                    {"name": "NodeResourcesFit", "weight": 1}, {"name": "DefaultBinder"}],
        "disabled": [{"name": "*"}]}


def test_v1beta1_rtcr_args_without_the_plugin_enabled_are_not_used() -> None:
    body, notes = to_v1(_example("v1beta1-requested-to-capacity-ratio.yaml"))
    assert _fit_args(body) == {}
    assert any("RequestedToCapacityRatio are not used" in n for n in notes)
    enabled, _ = to_v1(_example("v1beta1-requested-to-capacity-ratio-enabled.yaml"))
    assert _fit_args(enabled)["scoringStrategy"] == {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                               {"utilization": 100, "score": 0}]}}


def test_v1beta1_keeps_its_default_score_weights() -> None:
    body, notes = to_v1(_doc({"apiVersion": "kubescheduler.config.k8s.io/v1beta1",
                              "kind": "KubeSchedulerConfiguration"}))
    score = body["profiles"][0]["plugins"]["score"]["enabled"]
    assert {p["name"]: p["weight"] for p in score} == {
        "TaintToleration": 1, "NodeAffinity": 1, "PodTopologySpread": 1, "InterPodAffinity": 1}
    assert any("weight 1" in n for n in notes)


def test_v1beta1_two_strategies_keep_one_and_say_so() -> None:
    body, notes = to_v1(_doc({
        "apiVersion": "kubescheduler.config.k8s.io/v1beta1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeResourcesMostAllocated", "weight": 4}]}}}]}))
    assert _fit_args(body)["scoringStrategy"]["type"] == "MostAllocated"
    assert {"name": "NodeResourcesFit", "weight": 4} in body["profiles"][0]["plugins"]["score"]["enabled"]
    assert any("NodeResourcesLeastAllocated, NodeResourcesMostAllocated" in n for n in notes)


def test_v1beta1_all_strategies_disabled_disables_fit_scoring() -> None:
    body, _ = to_v1(_doc({
        "apiVersion": "kubescheduler.config.k8s.io/v1beta1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"disabled": [{"name": "NodeResourcesLeastAllocated"}]}}}]}))
    assert body["profiles"][0]["plugins"]["score"]["disabled"] == [{"name": "NodeResourcesFit"}]


def test_removed_plugins_and_priorities_are_reported_by_name() -> None:
    _, notes = to_v1(_doc({
        "apiVersion": "v1", "kind": "Policy",
        "predicates": [{"name": "PodFitsResources"}, {"name": "CheckNodeMemoryPressure"}],
        "priorities": [{"name": "LeastRequestedPriority", "weight": 1},
                       {"name": "MostRequestedPriority", "weight": 2},
                       {"name": "EqualPriority", "weight": 1},
                       {"name": "NodePreferAvoidPodsPriority", "weight": 10000}],
        "extenders": [{"urlPrefix": "http://x"}]}))
    text = "\n".join(notes)
    for name in ("CheckNodeMemoryPressure", "EqualPriority", "NodePreferAvoidPodsPriority",
                 "MostRequestedPriority", "extenders"):
        assert name in text
    _, beta = to_v1(_doc({
        "apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"enabled": [{"name": "NodePreferAvoidPods", "weight": 10000}]}}}]}))
    assert any("NodePreferAvoidPods dropped" in n for n in beta)


def test_utilization_shape_form_and_case_of_resource_names() -> None:
    body, notes = to_v1(_doc({"apiVersion": "v1", "kind": "Policy", "priorities": [{
        "name": "RequestedToCapacityRatioPriority", "weight": 1,
        "argument": {"requestedToCapacityRatioArguments": {
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
            "resources": [{"name": "CPU", "weight": 3}, {"name": "Memory", "weight": 1}]}}}]}))
    assert [r["name"] for r in _fit_args(body)["scoringStrategy"]["resources"]] == ["CPU", "Memory"]
    assert sum('"CPU" is not "cpu"' in n or '"Memory" is not "memory"' in n for n in notes) == 2
    old, old_notes = to_v1(_example("policy-least-requested-shape.yaml"))
    assert _fit_args(old)["scoringStrategy"]["resources"] == [{"name": "cpu", "weight": 1},
                                                              {"name": "memory", "weight": 1}]
    assert any("utilizationShape" in n for n in old_notes)


# ------------------------------------------------------------------ golden single-pod args via v1beta1


@cache
def _golden_single() -> tuple[dict[str, Any], ...]:
    with open(GOLDEN / "cases.jsonl", encoding="utf-8") as fh:
        cases = (json.loads(line) for line in fh if line.strip())
        return tuple(c for c in cases if c.get("mode") != "sequence" and c["expect"].get("validation") is None)


def _as_v1beta1(case: dict[str, Any]) -> dict[str, Any] | None:
    """The case's Fit args and weight written as v1beta1, or None where v1beta1 cannot say it."""
    fit = case.get("fitArgs") or {}
    strategy = fit.get("scoringStrategy") or {"type": "LeastAllocated"}
    kind = strategy["type"]
    plugin = {"LeastAllocated": "NodeResourcesLeastAllocated", "MostAllocated": "NodeResourcesMostAllocated",
              "RequestedToCapacityRatio": "RequestedToCapacityRatio"}[kind]
    resources = strategy.get("resources")
    if resources is not None and any(not 0 < (r.get("weight") or 0) <= 100 for r in resources):
        return None  # v1beta1 Least/Most do not default a 0 weight; v1 would refuse > 100
    args: dict[str, Any] = {} if resources is None else {"resources": resources}
    if kind == "RequestedToCapacityRatio":
        if not (strategy.get("requestedToCapacityRatio") or {}).get("shape"):
            return None  # v1 panics here; v1beta1 refused the empty shape
        args["shape"] = strategy["requestedToCapacityRatio"]["shape"]
    weight = (case.get("pluginWeights") or {}).get("NodeResourcesFit", 1) or 1
    configs = [{"name": plugin, "args": args}]
    ignored = {k: fit[k] for k in ("ignoredResources", "ignoredResourceGroups") if k in fit}
    if ignored:
        configs.append({"name": "NodeResourcesFit", "args": ignored})
    return {"apiVersion": "kubescheduler.config.k8s.io/v1beta1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"score": {
                "disabled": [{"name": "NodeResourcesLeastAllocated"}],
                "enabled": [{"name": plugin, "weight": weight}]}}, "pluginConfig": configs}]}


def _expressible() -> list[dict[str, Any]]:
    return [c for c in _golden_single()
            if "NodeResourcesFit" in (c.get("pluginWeights") or {"NodeResourcesFit": 1})
            and _as_v1beta1(c) is not None]


@pytest.mark.parametrize("case", _expressible(), ids=lambda c: c["id"])
def test_v1beta1_conversion_gives_the_golden_effective_args(case: dict[str, Any]) -> None:
    body, _ = to_v1(_doc(_as_v1beta1(case), case["id"]))
    effective = case["expect"]["effectiveArgs"]["NodeResourcesFit"]
    args = _fit_args(body)
    strategy = dict(args["scoringStrategy"])
    want = dict(effective["scoringStrategy"])
    assert strategy == want
    for key in ("ignoredResources", "ignoredResourceGroups"):
        assert args.get(key, []) == effective.get(key, [])
    weight = (case.get("pluginWeights") or {}).get("NodeResourcesFit", 1) or 1
    score = body["profiles"][0]["plugins"]["score"]
    assert ({"name": "NodeResourcesFit", "weight": weight} in score.get("enabled", [])) == (weight != 1)


# ------------------------------------------------------------------ invalid old files


POLICY_RTCR = {"apiVersion": "v1", "kind": "Policy", "priorities": [{
    "name": "RequestedToCapacityRatioPriority", "weight": 1,
    "argument": {"requestedToCapacityRatioArguments": {"shape": None}}}]}


def _policy_shape(shape: list[tuple[int, int]]) -> dict[str, Any]:
    body = json.loads(json.dumps(POLICY_RTCR))
    body["priorities"][0]["argument"]["requestedToCapacityRatioArguments"]["shape"] = [
        {"utilization": u, "score": s} for u, s in shape]
    return body


def _v1beta1_rtcr(shape: list[tuple[int, int]], weight: int = 1) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1beta1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"score": {"enabled": [{"name": "RequestedToCapacityRatio"}]}},
                          "pluginConfig": [{"name": "RequestedToCapacityRatio", "args": {
                              "shape": [{"utilization": u, "score": s} for u, s in shape],
                              "resources": [{"name": "cpu", "weight": weight}]}}]}]}


INVALID = {
    "policy-shape-order": (_policy_shape([(50, 1), (20, 2)]), [
        "invalid RequestedToCapacityRatioPriority arguments: utilization values must be sorted. "
        "Utilization[0]==50 >= Utilization[1]==20"]),
    "policy-score-above-10": (_policy_shape([(0, 0), (100, 11)]), [
        "invalid RequestedToCapacityRatioPriority arguments: score valuses not be greater than 10. Score[1]==11"]),
    "policy-negative-weight": ({"apiVersion": "v1", "kind": "Policy", "priorities": [
        {"name": "LeastRequestedPriority", "weight": -1}, {"name": "BalancedResourceAllocation"}]}, [
        "Priority LeastRequestedPriority should have a positive weight applied to it or it has overflown",
        "Priority BalancedResourceAllocation should have a positive weight applied to it or it has overflown"]),
    "policy-unknown-priority": ({"apiVersion": "v1", "kind": "Policy", "priorities": [
        {"name": "FooPriority", "weight": 1}]}, [
        "invalid priority name FooPriority specified - no corresponding function found"]),
    "policy-unknown-predicate": ({"apiVersion": "v1", "kind": "Policy", "predicates": [
        {"name": "PodFitsFoo"}], "priorities": []}, [
        'Invalid predicate name "PodFitsFoo" specified - no corresponding function found']),
    "policy-negative-resource-weight": ({"apiVersion": "v1", "kind": "Policy", "priorities": [{
        "name": "RequestedToCapacityRatioPriority", "weight": 1, "argument": {
            "requestedToCapacityRatioArguments": {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
                "resources": [{"name": "cpu", "weight": -2}]}}}]}, [
        "resource cpu weight -2 must not be less than 1"]),
    "v1beta1-shape-order-and-score": (_v1beta1_rtcr([(50, 1), (20, 11)]), [
        "shape[1].utilization: Invalid value: 20: utilization values must be sorted in increasing order",
        "shape[1].score: Invalid value: 11: not in valid range [0, 10]"]),
    "v1beta1-negative-weight": (_v1beta1_rtcr([(0, 0), (100, 10)], weight=-3), [
        "resources[0].weight: Invalid value: -3: resource weight of cpu not in valid range [1, inf)"]),
    "v1beta1-most-weight-0": ({
        "apiVersion": "kubescheduler.config.k8s.io/v1beta1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeResourcesMostAllocated"}]}},
                      "pluginConfig": [{"name": "NodeResourcesMostAllocated", "args": {
                          "resources": [{"name": "cpu", "weight": 0}]}}]}]}, [
        "resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]"]),
}


@pytest.mark.parametrize("name", sorted(INVALID), ids=sorted(INVALID))
def test_invalid_old_files_give_that_versions_messages(name: str) -> None:
    body, messages = INVALID[name]
    with pytest.raises(ConfigError) as err:
        to_v1(_doc(body))
    assert err.value.errors == messages


@pytest.mark.parametrize("name", ["policy-shape-order", "policy-unknown-priority", "v1beta1-negative-weight"])
def test_convert_cli_refuses_invalid_files_with_exit_2(name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from kubefit.cli import main

    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(INVALID[name][0]))
    assert main(["config", "convert", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert INVALID[name][1][0] in err and str(path) in err


@pytest.mark.parametrize("plugins", ["name", ["score"], 3], ids=["string", "list", "number"])
def test_convert_cli_refuses_plugins_that_are_not_a_mapping(plugins, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A v1 profile whose `plugins` is not a mapping: v1's own decoding error, not an internal one (fuzzing)."""
    from kubefit.cli import main

    path = tmp_path / "v1.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                    "kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": plugins}]}))
    assert main(["config", "convert", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and str(path) in err and "profiles[0].plugins" in err, err


def test_unsupported_api_version_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unsupported scheduler configuration apiVersion"):
        to_v1(_doc({"apiVersion": "kubescheduler.config.k8s.io/v1alpha1", "kind": "KubeSchedulerConfiguration"}))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.name for p in EXAMPLE_FILES])
def test_convert_cli_prints_v1_with_notes(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kubefit.cli import main

    assert main(["config", "convert", "-f", str(path), "--to", "v1"]) == 0
    captured = capsys.readouterr()
    printed = yaml.safe_load(captured.out)
    body, notes = to_v1(read_documents(path)[0])
    assert printed == body
    for n in notes:
        assert f"# note: {n}" in captured.out and f"note: {n}" in captured.err


# ------------------------------------------------------------------ converted files score like the originals


@cache
def _docs_cases() -> dict[str, dict[str, Any]]:
    with open(GOLDEN / "docs-example.jsonl", encoding="utf-8") as fh:
        return {c["id"]: c for c in (json.loads(line) for line in fh if line.strip())}


def _score(config: dict[str, Any], case: dict[str, Any], tmp_path: Path) -> Any:
    """One scheduling cycle of the case's pod under `config` (the user's path: a scenario file)."""
    from kubefit.manifests.scenario import load_scenario
    from kubefit.scheduler.scenario import find_pending_pod, prepare, score_pod

    path = tmp_path / f"{abs(hash(json.dumps(config, sort_keys=True)))}.json"
    items = [config, *case["nodes"], *(case.get("pods") or []), case["pod"]]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    scenario = load_scenario([path], admission=False)  # the golden pods are used as given
    prepared = prepare(scenario)
    result = score_pod(prepared, find_pending_pod(scenario, None))
    names = [prepared.state.nodes[i].name for i in result.feasible]
    return {plugin: dict(zip(names, map(int, s), strict=True)) for plugin, s in result.scores.items()}, names


def test_converted_policy_scores_the_docs_example_like_the_v1_snippet(tmp_path: Path) -> None:
    """v1.34 arithmetic on the converted Policy: 60 / 69, as the v1 form of the same example."""
    case = _docs_cases()["docs-RequestedToCapacityRatio-fit-only"]
    policy, _ = to_v1(_example("policy-docs-worked-example.yaml"))
    v1 = _example("v1-docs-worked-example.yaml").body
    got, _ = _score(policy, case, tmp_path)
    want, _ = _score(v1, case, tmp_path)
    assert got["NodeResourcesFit"] == want["NodeResourcesFit"] == case["expect"]["score"]["NodeResourcesFit"]


SCORE_CASES = [c for c in _expressible() if (c["expect"].get("score") or {}).get("NodeResourcesFit")]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c["id"])
def test_v1beta1_files_score_the_golden_cases_like_kube_scheduler(case: dict[str, Any], tmp_path: Path) -> None:
    """A v1beta1 file with the case's strategy, converted, gives the golden NodeResourcesFit scores."""
    body, _ = to_v1(_doc(_as_v1beta1(case), case["id"]))
    scores, feasible = _score(body, case, tmp_path)
    assert feasible == case["expect"]["feasible"]
    assert scores["NodeResourcesFit"] == case["expect"]["score"]["NodeResourcesFit"]


def test_policy_resource_weight_0_is_1_and_duplicates_keep_the_last() -> None:
    """v1.16 turned an unset weight into 1 and kept resources in a map (last weight wins)."""
    body, notes = to_v1(_doc({"apiVersion": "v1", "kind": "Policy", "priorities": [{
        "name": "RequestedToCapacityRatioPriority", "weight": 1,
        "argument": {"requestedToCapacityRatioArguments": {
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}, {"name": "cpu", "weight": 4}]}}}]}))
    assert _fit_args(body)["scoringStrategy"]["resources"] == [{"name": "memory", "weight": 1},
                                                               {"name": "cpu", "weight": 4}]
    assert any("cpu listed twice" in n for n in notes)


def test_v1beta1_rtcr_weight_is_not_defaulted() -> None:
    """v1beta1 RequestedToCapacityRatioArgs kept a missing weight as 0, which its validation refused."""
    body = _v1beta1_rtcr([(0, 0), (100, 10)])
    del body["profiles"][0]["pluginConfig"][0]["args"]["resources"][0]["weight"]
    with pytest.raises(ConfigError) as err:
        to_v1(_doc(body))
    assert err.value.errors == [
        "resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range [1, inf)"]


def test_beta_bind_addresses_are_dropped_with_a_note() -> None:
    body, notes = to_v1(_doc({"apiVersion": "kubescheduler.config.k8s.io/v1beta2",
                              "kind": "KubeSchedulerConfiguration", "healthzBindAddress": "0.0.0.0:10251"}))
    assert "healthzBindAddress" not in body
    assert any(n.startswith("healthzBindAddress") for n in notes)
