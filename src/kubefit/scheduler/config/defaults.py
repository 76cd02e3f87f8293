"""v1 defaulting (`apis/config/v1/defaults.go`, `default_plugins.go`): default plugins, merged plugin
sets, defaulted plugin args and profiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubefit.scheduler.config.scheme import Scheme, scheme_for
from kubefit.scheduler.config.types import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    PLACEMENT_POINTS,
    BalancedAllocationArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    ResourceWeight,
    ShapePoint,
)


def resource_weights(raw: Any) -> tuple[ResourceWeight, ...]:
    """`[{name, weight}]` with weight 0/unset → 1; empty → cpu:1, memory:1."""
    items = raw or []
    if not items:
        return (ResourceWeight("cpu", 1), ResourceWeight("memory", 1))
    return tuple(ResourceWeight(str(r.get("name") or ""), int(r.get("weight") or 0) or 1) for r in items)


def default_args(name: str, raw: dict[str, Any] | None, scheme: Scheme | None = None) -> Any:
    """`SetDefaults_<Name>Args` of v1 → kubefit's args dataclass (raw dict for plugins not modelled)."""
    raw = raw or {}
    if name == "NodeResourcesFit":
        strategy = raw.get("scoringStrategy")
        if strategy is None:
            return NodeResourcesFitArgs(ignored_resources=tuple(raw.get("ignoredResources") or ()),
                                        ignored_resource_groups=tuple(raw.get("ignoredResourceGroups") or ()))
        rtc = strategy.get("requestedToCapacityRatio")
        shape = None if rtc is None else tuple(
            ShapePoint(int(p.get("utilization") or 0), int(p.get("score") or 0)) for p in (rtc.get("shape") or ()))
        return NodeResourcesFitArgs(
            scoring_type=str(strategy.get("type") or ""),
            resources=resource_weights(strategy.get("resources")),
            shape=shape,
            ignored_resources=tuple(str(r) for r in raw.get("ignoredResources") or ()),
            ignored_resource_groups=tuple(str(g) for g in raw.get("ignoredResourceGroups") or ()),
        )
    if name == "NodeResourcesBalancedAllocation":
        return BalancedAllocationArgs(resources=resource_weights(raw.get("resources")))
    if name == "NodeAffinity":
        return NodeAffinityArgs(added_affinity=raw.get("addedAffinity"))
    return _default_other_args(name, dict(raw), scheme or scheme_for())


def _default_other_args(name: str, raw: dict[str, Any], scheme: Scheme) -> dict[str, Any]:
    raw = {k: v for k, v in raw.items() if v is not None and k not in ("apiVersion", "kind")}
    if name == "DefaultPreemption":
        raw.setdefault("minCandidateNodesPercentage", 10)
        raw.setdefault("minCandidateNodesAbsolute", 100)
    elif name == "InterPodAffinity":
        raw.setdefault("hardPodAffinityWeight", 1)
        raw.setdefault("ignorePreferredTermsOfExistingPods", False)  # a bool without omitempty: always printed
    elif name == "PodTopologySpread":
        raw["defaultingType"] = raw.get("defaultingType") or "System"
    elif name == "VolumeBinding":  # SetDefaults_VolumeBindingArgs (fields in VolumeBindingArgs' order)
        raw = {"bindTimeoutSeconds": raw.get("bindTimeoutSeconds", 600), **raw}
        if not raw.get("shape") and scheme.scores_storage_capacity():
            raw["shape"] = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    elif name == "DynamicResources":  # SetDefaults_DynamicResourcesArgs
        if scheme.version.gate("DRASchedulerFilterTimeout"):
            raw.setdefault("filterTimeout", "10s")  # DynamicResourcesFilterTimeoutDefault
        if scheme.defaults_binding_timeout():
            raw.setdefault("bindingTimeout", "10m0s")  # DynamicResourcesBindingTimeoutDefault (v1.35+)
    return raw


# --------------------------------------------------------------------------- plugin sets

PluginList = list[tuple[str, int | None]]


def _plugin_set(raw: Any) -> dict[str, Any]:
    raw = raw or {}
    enabled = [(str(p.get("name") or ""), p.get("weight")) for p in raw.get("enabled") or []]
    disabled = [str(p.get("name") or "") for p in raw.get("disabled") or []]
    return {"enabled": enabled, "disabled": disabled}


def merge_plugin_set(default: dict[str, Any], custom: dict[str, Any]) -> dict[str, Any]:
    """`mergePluginSet`: defaults minus disabled (or none with `*`), re-configured in place, then custom."""
    disabled = list(custom["disabled"]) + list(default["disabled"])
    custom_index = {name: (i, (name, w)) for i, (name, w) in enumerate(custom["enabled"])}
    replaced: set[int] = set()
    enabled: PluginList = []
    if "*" not in disabled:
        for plugin in default["enabled"]:
            if plugin[0] in disabled:
                continue
            if plugin[0] in custom_index:
                i, plugin = custom_index[plugin[0]]
                replaced.add(i)
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom["enabled"]) if i not in replaced)
    return {"enabled": enabled, "disabled": disabled}


def merged_plugins(raw_plugins: Any, scheme: Scheme | None = None) -> dict[str, dict[str, Any]]:
    """The profile's plugins after v1 defaulting (`mergePlugins(getDefaultPlugins(), custom)`)."""
    defaults = {ep: {"enabled": [], "disabled": []} for ep in (*EXTENSION_POINTS, *PLACEMENT_POINTS, "multiPoint")}
    defaults["multiPoint"]["enabled"] = list((scheme or scheme_for()).default_multipoint)
    if raw_plugins is None:
        return defaults
    return {ep: merge_plugin_set(defaults[ep], _plugin_set(raw_plugins.get(ep))) for ep in defaults}


@dataclass
class DefaultedProfile:
    index: int
    name: str | None
    percentage: int | None
    plugins: dict[str, dict[str, Any]]
    plugin_config: list[tuple[str, Any]]  # (name, args dataclass / dict), given ones first, then defaults
    given_args: int  # how many of plugin_config came from the document


def default_profile(i: int, raw: dict[str, Any], *, single: bool, scheme: Scheme | None = None) -> DefaultedProfile:
    """`setDefaults_KubeSchedulerProfile`: merged plugins, defaulted args, default args appended."""
    scheme = scheme or scheme_for()
    name = raw.get("schedulerName")
    if name is None and single:
        name = DEFAULT_SCHEDULER_NAME
    plugins = merged_plugins(raw.get("plugins"), scheme)
    config = [(str(pc.get("name") or ""), default_args(str(pc.get("name") or ""), pc.get("args"), scheme))
              for pc in raw.get("pluginConfig") or []]
    given = {n for n, _ in config}
    for plugin in sorted({n for ep in plugins.values() for n, _ in ep["enabled"]}):
        if plugin not in given and plugin in scheme.args_schemas:
            config.append((plugin, default_args(plugin, None, scheme)))
    return DefaultedProfile(i, name, raw.get("percentageOfNodesToScore"), plugins, config, len(raw.get("pluginConfig") or []))


def default_top_level(body: dict[str, Any]) -> dict[str, Any]:
    """`SetDefaults_KubeSchedulerConfiguration` for the top-level fields kubefit reads."""
    return {
        "parallelism": 16 if body.get("parallelism") is None else body["parallelism"],
        "percentageOfNodesToScore": body.get("percentageOfNodesToScore") or 0,
        "podInitialBackoffSeconds": 1 if body.get("podInitialBackoffSeconds") is None
        else body["podInitialBackoffSeconds"],
        "podMaxBackoffSeconds": 10 if body.get("podMaxBackoffSeconds") is None else body["podMaxBackoffSeconds"],
        "leaderElection": body.get("leaderElection") or {},
    }
