"""What the configuration API of one Kubernetes version holds: its default plugins, its in-tree registry
(the extension points each plugin implements) and its plugin args' fields.

One `Scheme` per `KubeVersion`, built from the v1.34 tables of `types`/`defaults` and the version's
variants (`kubefit.k8s.version`), so defaulting, strict decoding and `NewFramework` ask it instead of
module constants. Sources: `pkg/scheduler/apis/config/v1/default_plugins.go` (`getDefaultPlugins`,
`applyFeatureGates`), `pkg/scheduler/framework/plugins/registry.go`, `apis/config/types_pluginargs.go`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from kubefit.k8s.version import (
    DRA_BINDING_TIMEOUT,
    GANG_GATES_MERGED,
    STORAGE_CAPACITY_SCORING,
    KubeVersion,
    default_version,
)
from kubefit.scheduler.config.types import ARGS_SCHEMAS, CONFIG_SCHEMA, PLACEMENT_POINTS, PLUGIN_EXTENSIONS

# getDefaultPlugins() of v1.34 (DynamicResources inserted before DefaultPreemption: DRA gate on).
DEFAULT_MULTIPOINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", None), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
)


@dataclass(frozen=True)
class Scheme:
    """One version's configuration API: default multiPoint plugins, registry, args fields."""

    version: KubeVersion
    default_multipoint: tuple[tuple[str, int | None], ...]
    plugin_extensions: dict[str, frozenset[str]]
    args_schemas: dict[str, dict[str, Any]]
    config_schema: dict[str, Any] = field(default_factory=lambda: CONFIG_SCHEMA)

    def defaults_binding_timeout(self) -> bool:
        """`SetDefaults_DynamicResourcesArgs` sets `bindingTimeout: 10m` (binding conditions and device
        status gates on, v1.36+)."""
        return self.version.has(DRA_BINDING_TIMEOUT)

    def scores_storage_capacity(self) -> bool:
        """StorageCapacityScoring is on: `SetDefaults_VolumeBindingArgs` defaults `shape` (when empty) and
        `ValidateVolumeBindingArgs` validates it instead of refusing it."""
        return self.version.has(STORAGE_CAPACITY_SCORING)


def scheme_for(version: KubeVersion | None = None) -> Scheme:
    """The scheme of `version` (None: the version answered for by default, `version.default_version`)."""
    return _scheme(version or default_version())


@cache
def _scheme(version: KubeVersion) -> Scheme:
    """The scheme of `version` (cached: a version is immutable)."""
    multipoint = list(DEFAULT_MULTIPOINT)
    extensions = dict(PLUGIN_EXTENSIONS)
    schemas = dict(ARGS_SCHEMAS)
    if version.minor >= 35:
        # NodeDeclaredFeatures joins the registry in v1.35 (KEP-5328); its gate adds it to the default
        # profile, appended after DefaultBinder (`applyFeatureGates`).
        extensions["NodeDeclaredFeatures"] = frozenset({"preFilter", "filter"})
        if version.gate("NodeDeclaredFeatures"):
            multipoint.append(("NodeDeclaredFeatures", None))
        schemas["DynamicResources"] = {**schemas["DynamicResources"], "bindingTimeout": "duration"}
    if version.minor >= 35:
        # DynamicResources is a Score plugin (kubernetes#134711), weighted 2 in the default profile; whether it
        # scores anything is the plugin's `DRA_SCORE` (its gate). It has no PreScore (`var _ fwk.ScorePlugin`
        # alone in v1.35.4 and v1.36.3 `dynamicresources.go`): `preScore.enabled` naming it is refused.
        extensions["DynamicResources"] = extensions["DynamicResources"] | {"score"}
        multipoint = [("DynamicResources", 2) if name == "DynamicResources" else (name, w) for name, w in multipoint]
    multipoint += _workload_plugins(version, extensions)
    config = CONFIG_SCHEMA
    if version.minor >= 36:
        profile = config["profiles"][0]
        plugin_set = profile["plugins"]["multiPoint"]
        plugins = {**profile["plugins"], **dict.fromkeys(PLACEMENT_POINTS, plugin_set)}
        config = {**config, "profiles": [{**profile, "plugins": plugins}]}
    return Scheme(version, tuple(multipoint), extensions, schemas, config)


def _workload_plugins(version: KubeVersion, extensions: dict[str, frozenset[str]]) -> list[tuple[str, int | None]]:
    """The workload-aware scheduling plugins: registered from the version that has them (GangScheduling v1.35,
    PreEnqueue + Reserve + Permit; v1.36 PreEnqueue + Permit, TopologyPlacementGenerator and PodGroupPodsCount),
    appended to the default profile by their gates (`applyGangScheduling`, `applyTopologyAwareWorkloadScheduling`
    of v1.36.3 `default_plugins.go`; v1.37: GangScheduling with GenericWorkload, kubernetes#139520)."""
    added: list[tuple[str, int | None]] = []
    if version.minor >= 35:
        extensions["GangScheduling"] = frozenset({"preEnqueue", "permit"} | ({"reserve"} if version.minor == 35 else set()))
        gate = "GenericWorkload" if version.has(GANG_GATES_MERGED) else "GangScheduling"
        if version.gate(gate):
            added.append(("GangScheduling", None))
    if version.minor >= 36:
        extensions["TopologyPlacementGenerator"] = frozenset({"placementGenerate"})
        extensions["PodGroupPodsCount"] = frozenset({"placementScore"})
        if version.gate("TopologyAwareWorkloadScheduling"):
            added += [("TopologyPlacementGenerator", None), ("PodGroupPodsCount", 1)]
    return added
