"""Scheduler configuration v1: defaults, kube-scheduler's plugin merge semantics, validation messages, CLI."""

from __future__ import annotations

import json
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.errors import ConfigError, InputError
from kubefit.manifests.documents import Document
from kubefit.scheduler.config import (
    DEFAULT_MULTIPOINT,
    PLUGIN_EXTENSIONS,
    BalancedAllocationArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    ResourceWeight,
    ScorePlugin,
    ShapePoint,
    args_to_v1,
    decode_plugin_args,
    load_configuration,
)

V1 = "kubescheduler.config.k8s.io/v1"


def _load(**top):
    body = {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", **top}
    return load_configuration(Document(body, "test.yaml", 1))


def _profile(**profile):
    return _load(profiles=[profile]).profiles[0]


def _refusal(**top) -> list[str]:
    with pytest.raises(ConfigError) as info:
        _load(**top)
    return info.value.errors


def _names(score_plugins):
    return [(s.name, s.weight) for s in score_plugins]


DEFAULT_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                   "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                   "PodTopologySpread", "InterPodAffinity", "DynamicResources")
DEFAULT_SCORES = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
                  ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1),
                  ("ImageLocality", 1)]


# --------------------------------------------------------------------------- defaults

def test_no_configuration_is_the_default_profile():
    config = load_configuration(None)
    assert config.dialect == "default" and config.source is None
    profile = config.profile()
    assert profile.scheduler_name == "default-scheduler"
    assert profile.filter_plugins == DEFAULT_FILTERS
    assert _names(profile.score_plugins) == DEFAULT_SCORES
    assert profile.plugin_args["NodeResourcesFit"] == NodeResourcesFitArgs()
    assert profile.plugin_args["NodeResourcesBalancedAllocation"] == BalancedAllocationArgs()
    assert profile.plugin_args["NodeAffinity"] == NodeAffinityArgs(None)
    assert "NodeResourcesFit" not in profile.not_simulated
    assert profile.not_simulated == ()  # every plugin of the default profile is evaluated
    assert profile.extension_points["queueSort"] == ("PrioritySort",)
    assert profile.extension_points["bind"] == ("DefaultBinder",)
    assert config.percentage_of_nodes_to_score == 0 and config.parallelism == 16


def test_empty_v1_document_equals_the_defaults():
    assert _load().profiles == load_configuration(None).profiles


def test_fit_args_defaulting():
    assert decode_plugin_args("NodeResourcesFit", None) == NodeResourcesFitArgs()
    args = decode_plugin_args("NodeResourcesFit", {"scoringStrategy": {
        "type": "MostAllocated", "resources": [{"name": "cpu"}, {"name": "memory", "weight": 0},
                                               {"name": "nvidia.com/gpu", "weight": -3}]}})
    assert args.resources == (ResourceWeight("cpu", 1), ResourceWeight("memory", 1),
                              ResourceWeight("nvidia.com/gpu", -3))
    empty = decode_plugin_args("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated"}})
    assert empty.resources == NodeResourcesFitArgs().resources
    untyped = decode_plugin_args("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu"}]}})
    assert untyped.scoring_type == ""  # not defaulted: rejected at construction
    rtc = decode_plugin_args("NodeResourcesFit", {"scoringStrategy": {
        "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [{"utilization": 100,
                                                                                   "score": 10}]}}})
    assert rtc.shape == (ShapePoint(100, 10),)
    assert args_to_v1(rtc)["scoringStrategy"]["requestedToCapacityRatio"] == {
        "shape": [{"utilization": 100, "score": 10}]}


def test_balanced_args_defaulting():
    assert decode_plugin_args("NodeResourcesBalancedAllocation", {"resources": []}) == BalancedAllocationArgs()
    args = decode_plugin_args("NodeResourcesBalancedAllocation", {"resources": [{"name": "nvidia.com/gpu"}]})
    assert args_to_v1(args) == {"resources": [{"name": "nvidia.com/gpu", "weight": 1}]}


# --------------------------------------------------------------------------- merge semantics

def test_specific_score_point_overrides_weight_and_runs_first():
    profile = _profile(plugins={"score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 5}]}})
    names = _names(profile.score_plugins)
    assert names[0] == ("NodeResourcesBalancedAllocation", 5)
    assert names[1:] == [p for p in DEFAULT_SCORES if p[0] != "NodeResourcesBalancedAllocation"]


def test_disabling_all_score_plugins_keeps_filters():
    profile = _profile(plugins={"score": {"disabled": [{"name": "*"}]}})
    assert profile.score_plugins == ()
    assert profile.filter_plugins == DEFAULT_FILTERS
    assert "NodeResourcesBalancedAllocation" in profile.extension_points["preScore"]


def test_disable_at_one_point_only():
    profile = _profile(plugins={"filter": {"disabled": [{"name": "NodeResourcesFit"}]}})
    assert "NodeResourcesFit" not in profile.filter_plugins
    assert "NodeResourcesFit" in profile.extension_points["preFilter"]
    assert ("NodeResourcesFit", 1) in _names(profile.score_plugins)


def test_multipoint_reconfiguration_replaces_in_place():
    profile = _profile(plugins={"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 7},
                                                           {"name": "ImageLocality", "weight": -2}]},
                                "score": {"disabled": [{"name": "TaintToleration"}]}})
    assert _names(profile.score_plugins) == [("NodeAffinity", 2), ("NodeResourcesFit", 7), ("VolumeBinding", 1),
                                             ("PodTopologySpread", 2), ("InterPodAffinity", 2),
                                             ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", -2)]
    assert profile.filter_plugins == DEFAULT_FILTERS


def test_multipoint_disable_removes_everywhere():
    profile = _profile(plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"},
                                                            {"name": "TaintToleration"}]}})
    assert "TaintToleration" not in profile.filter_plugins
    assert [n for n, _ in _names(profile.score_plugins)] == [
        "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread", "InterPodAffinity", "ImageLocality"]


def test_zero_weight_means_one():
    profile = _profile(plugins={"multiPoint": {"enabled": [{"name": "PrioritySort"},
                                                           {"name": "NodeResourcesFit", "weight": 0},
                                                           {"name": "DefaultBinder"}],
                                               "disabled": [{"name": "*"}]}})
    assert profile.score_plugins == (ScorePlugin("NodeResourcesFit", 1),)
    assert profile.filter_plugins == ("NodeResourcesFit",)
    assert profile.not_simulated == ()


def test_framework_structure_errors():
    only_fit = {"multiPoint": {"enabled": [{"name": "NodeResourcesFit"}], "disabled": [{"name": "*"}]}}
    assert _refusal(profiles=[{"plugins": only_fit}]) == [
        "initializing profiles: creating profile for scheduler name default-scheduler: only one queue sort plugin "
        'required for profile with scheduler name "default-scheduler", but got 0']
    twice = {"multiPoint": {"enabled": [{"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]}}
    assert _refusal(profiles=[{"plugins": twice}])[0].endswith(
        'plugin "NodeResourcesFit" already registered as "PreFilterPlugin"')
    assert _refusal(profiles=[{"plugins": {"filter": {"enabled": [{"name": "Foo"}]}}}])[0].endswith(
        'FilterPlugin "Foo" does not exist')
    assert _refusal(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "Foo"}]}}}])[0].endswith(
        'PreFilterPlugin "Foo" does not exist')
    assert _refusal(profiles=[{"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}])[0].endswith(
        'plugin "ImageLocality" does not extend FilterPlugin plugin')


def test_removed_plugins_are_refused_by_validation():
    errors = _refusal(profiles=[{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}])
    assert errors[0] == ('profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
                         f'"{V1}" (KubeSchedulerConfiguration is version "{V1}")')


# --------------------------------------------------------------------------- validation

def test_percentage_of_nodes_to_score():
    config = _load(percentageOfNodesToScore=30, profiles=[{"percentageOfNodesToScore": 50}])
    assert config.percentage_of_nodes_to_score == 30
    assert config.profiles[0].percentage_of_nodes_to_score == 50
    assert _refusal(percentageOfNodesToScore=101, profiles=[{"percentageOfNodesToScore": -1}]) == [
        "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]


def test_strict_decoding_collects_every_unknown_field_in_go_order():
    errors = _refusal(foo=1, profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "X", "wieght": 2}]}},
                                        "pluginConfig": [{"name": "NodeResourcesBalancedAllocation",
                                                          "args": {"resources": [{"name": "cpu", "wieght": 1}],
                                                                   "extra": True}}]}])
    assert errors == ['strict decoding error: unknown field "foo", unknown field '
                      '"profiles[0].plugins.multiPoint.enabled[0].wieght", decoding .profiles[0].pluginConfig[0]: '
                      "strict decoding error: decoding args for plugin NodeResourcesBalancedAllocation: strict "
                      'decoding error: unknown field "extra", unknown field "resources[0].wieght"']


def test_wrong_types_are_input_errors_with_the_field():
    with pytest.raises(InputError) as info:
        _load(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit",
                                           "args": {"scoringStrategy": {"resources": [{"name": "cpu",
                                                                                       "weight": "high"}]}}}]}])
    assert info.value.field == "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight"


def test_fit_args_are_checked_only_when_the_plugin_is_built():
    bad = {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "LeastAllocated",
                                                                   "resources": [{"name": "cpu", "weight": 500}]}}}
    assert _refusal(profiles=[{"pluginConfig": [bad]}]) == [
        'initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
        '"NodeResourcesFit": scoringStrategy.resources[0].weight: Invalid value: 500: resource weight of cpu not in '
        'valid range (0, 100]']
    without_fit = _profile(pluginConfig=[bad], plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}})
    assert "NodeResourcesFit" not in without_fit.filter_plugins


def test_requested_to_capacity_ratio_without_shape_is_refused_like_the_crash():
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}]}}
    [message] = _refusal(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}])
    assert ('initializing plugin "NodeResourcesFit": panic: runtime error: invalid memory address or nil pointer '
            "dereference") in message
    assert "requestedToCapacityRatio is not set" in message


def test_balanced_args_are_validated_at_load_with_full_paths():
    args = {"resources": [{"name": "cpu", "weight": 2}, {"name": "cpu"}]}
    assert _refusal(profiles=[{"pluginConfig": [{"name": "NodeResourcesBalancedAllocation", "args": args}]}]) == [
        "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
        'profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: "cpu"']


def test_node_affinity_args_messages():
    term = {"matchExpressions": [{"key": "disk", "operator": "Exists", "values": ["ssd"]},
                                 {"key": "zone", "operator": "In", "values": []},
                                 {"key": "gpu", "operator": "Foo"}]}
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}, term]}}}
    errors = _refusal(profiles=[{"pluginConfig": [{"name": "NodeAffinity", "args": args}]}])
    base = ("profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms[1].matchExpressions")
    assert errors == [
        f'{base}[0].values: Invalid value: ["ssd"]: values set must be empty for exists and does not exist',
        f"{base}[1].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        f'{base}[2].operator: Unsupported value: "Foo": supported values: "In", "NotIn", "Exists", '
        '"DoesNotExist", "Gt", "Lt"']
    preferred = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "x", "operator": "Bad"}]}},
        {"weight": 1, "preference": {"matchExpressions": [{"key": "gpu-count", "operator": "Gt",
                                                           "values": ["-1"]}]}}]}}
    [message] = _refusal(profiles=[{"pluginConfig": [{"name": "NodeAffinity", "args": preferred}]}])
    assert message.startswith("profiles[0].pluginConfig[0].args.addedAffinity.preferredDuringSchedulingIgnored"
                              'DuringExecution[1].matchExpressions[0].values[0][gpu-count]: Invalid value: "-1": '
                              "a valid label must be an empty string")


def test_profiles_need_names_when_several():
    errors = _refusal(profiles=[{}, {"schedulerName": "b"}])
    assert errors[0] == "profiles[0].schedulerName: Required value"
    config = _load(profiles=[{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {
        "score": {"disabled": [{"name": "*"}]}}}])
    assert config.profile("b").score_plugins == ()
    assert config.profile("unknown").scheduler_name == "a"


def test_other_versions_go_through_the_dialects(monkeypatch):
    body = {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"}
    config = load_configuration(Document(body, "old.yaml", 1))
    assert config.dialect == "v1beta3"
    monkeypatch.setitem(sys.modules, "kubefit.scheduler.config.dialects", None)
    with pytest.raises(InputError, match="unsupported apiVersion"):
        load_configuration(Document(body, "old.yaml", 1))


# --------------------------------------------------------------------------- properties

ORDER = [n for n, _ in DEFAULT_MULTIPOINT if n not in ("PrioritySort", "DefaultBinder")]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(ORDER), st.integers(-5, 100), min_size=1))
def test_multipoint_with_star_disabled_enables_exactly_the_listed_plugins(weights):
    enabled = [{"name": "PrioritySort"}, *({"name": n, "weight": w} for n, w in weights.items()),
               {"name": "DefaultBinder"}]
    profile = _profile(plugins={"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}})
    listed = list(weights)
    assert profile.filter_plugins == tuple(n for n in listed if "filter" in PLUGIN_EXTENSIONS[n])
    assert _names(profile.score_plugins) == [(n, weights[n] or 1) for n in listed if "score" in PLUGIN_EXTENSIONS[n]]


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from([n for n, _ in DEFAULT_SCORES]), st.integers(1, 50), min_size=1))
def test_score_point_weights_take_precedence_over_multipoint(weights):
    profile = _profile(plugins={"score": {"enabled": [{"name": n, "weight": w} for n, w in weights.items()]}})
    names = _names(profile.score_plugins)
    assert names[:len(weights)] == list(weights.items())  # overrides first, in the score list's order
    assert dict(names) == {**dict(DEFAULT_SCORES), **weights}


# --------------------------------------------------------------------------- CLI

def _write(tmp_path, body) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def test_cli_validate_and_view(tmp_path, capsys):
    good = _write(tmp_path, {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [
        {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]})
    assert main(["config", "validate", "-f", good]) == 0
    assert capsys.readouterr().out.strip().endswith("valid")
    assert main(["config", "view", "-f", good, "-o", "json"]) == 0
    view = json.loads(capsys.readouterr().out)
    [fit] = [pc for pc in view["profiles"][0]["pluginConfig"] if pc["name"] == "NodeResourcesFit"]
    assert fit["args"] == {"scoringStrategy": {"type": "MostAllocated",
                                               "resources": [{"name": "cpu", "weight": 1},
                                                             {"name": "memory", "weight": 1}]}}
    assert main(["config", "view", "-f", good]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == view
    bad = _write(tmp_path, {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 120})
    assert main(["config", "validate", "-f", bad]) == 2
    assert "percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]" in capsys.readouterr().out
    assert main(["config", "view", "-f", bad]) == 2


def test_ignored_settings_are_noted():
    config = _load(extenders=[{"urlPrefix": "http://x", "filterVerb": "filter"}], profiles=[{
        "plugins": {"multiPoint": {"enabled": [{"name": "NodeName", "weight": 4}],
                                   "disabled": [{"name": "NodeResourcesFit"}]}},
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {}}]}])
    assert any("extenders are not simulated" in n for n in config.notes)
    assert any("pluginConfig for NodeResourcesFit is not used" in n for n in config.notes)
    assert any("the weight of NodeName is ignored" in n for n in config.notes)
    assert load_configuration(None).notes == ()


# --------------------------------------------------------------------------- apimachinery messages

def test_qualified_name_messages():
    from kubefit.k8s.validation import qualified_name_errors

    assert qualified_name_errors("intel.com/foo") == []
    assert qualified_name_errors("a/") == [
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
    assert qualified_name_errors("/x") == ["prefix part must be non-empty"]
    assert qualified_name_errors("x" * 64) == ["name part must be no more than 63 characters"]
    assert qualified_name_errors("a/b/c")[0].startswith("a qualified name must consist of")
    assert qualified_name_errors("a/b/c")[0].endswith("with an optional DNS subdomain prefix and '/' "
                                                      "(e.g. 'example.com/MyName')")


def test_go_formatting():
    from kubefit.k8s.validation import INVALID, FieldError, aggregate, go_quote

    assert go_quote('a"b\\c\n\x01é') == '"a\\"b\\\\c\\n\\x01é"'
    errors = [FieldError("x", INVALID, 1, "bad"), FieldError("x", INVALID, 1, "bad"), FieldError("", INVALID, "v")]
    assert aggregate(errors) == '[x: Invalid value: 1: bad, Invalid value: "v"]'
    assert aggregate(errors[:1]) == "x: Invalid value: 1: bad"
    assert str(FieldError("v", INVALID, ["a"], "d")) == 'v: Invalid value: ["a"]: d'


def test_other_plugin_args_are_validated_at_load():
    config = [{"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 0,
                                                     "minCandidateNodesAbsolute": 0}},
              {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}},
              {"name": "PodTopologySpread", "args": {"defaultingType": "Nope"}},
              {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": -1}}]
    assert _refusal(leaderElection={"resourceLock": "endpoints"}, profiles=[{"pluginConfig": config}]) == [
        'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the "
        "same time as minCandidateNodesAbsolute",
        "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the "
        "same time as minCandidateNodesPercentage",
        "profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
        'profiles[0].pluginConfig[2].args.defaultingType: Unsupported value: "Nope": supported values: "List", '
        '"System"',
        "profiles[0].pluginConfig[3].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, "
        "should not be a negative value"]
    assert _load(leaderElection={"leaderElect": False, "resourceLock": "endpoints"}).profiles
