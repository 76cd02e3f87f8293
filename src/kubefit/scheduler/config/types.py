"""The configuration's types, as kube-scheduler's `apis/config` declares them (types.go,
types_pluginargs.go) in the form kubefit runs them, and the in-tree plugin registry they name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubefit.k8s.version import KubeVersion

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Plugins kubefit evaluates; any other enabled plugin is listed once on stderr as "not simulated".
SIMULATED_PLUGINS = frozenset({
    "NodeResourcesFit", "NodeResourcesBalancedAllocation",
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "PrioritySort", "DefaultBinder",
    "SchedulingGates", "NodePorts", "PodTopologySpread", "InterPodAffinity", "ImageLocality",
    "DynamicResources",  # pods without claims; a pod with claims is refused (not modelled)
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DefaultPreemption",
    "NodeDeclaredFeatures",  # v1.35+
    "GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount",  # workload-aware scheduling (groupcycle.py)
})


@dataclass(frozen=True)
class ResourceWeight:
    name: str
    weight: int


@dataclass(frozen=True)
class ShapePoint:
    utilization: int
    score: int  # 0..10 (MaxCustomPriorityScore scale)


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    """Defaulted `NodeResourcesFitArgs`."""

    scoring_type: str = "LeastAllocated"  # LeastAllocated | MostAllocated | RequestedToCapacityRatio
    resources: tuple[ResourceWeight, ...] = (ResourceWeight("cpu", 1), ResourceWeight("memory", 1))
    shape: tuple[ShapePoint, ...] | None = None  # scoringStrategy.requestedToCapacityRatio.shape
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class BalancedAllocationArgs:
    """Defaulted `NodeResourcesBalancedAllocationArgs`."""

    resources: tuple[ResourceWeight, ...] = (ResourceWeight("cpu", 1), ResourceWeight("memory", 1))


@dataclass(frozen=True)
class NodeAffinityArgs:
    """`NodeAffinityArgs`: `addedAffinity` (a v1 NodeAffinity, as given) or None."""

    added_affinity: dict[str, Any] | None = None


@dataclass(frozen=True)
class ScorePlugin:
    name: str
    weight: int  # as the framework applies it: 0/unset → 1, negatives kept


@dataclass(frozen=True)
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    filter_plugins: tuple[str, ...] = ()  # enabled Filter plugins, in run order
    score_plugins: tuple[ScorePlugin, ...] = ()  # enabled Score plugins, in order
    plugin_args: dict[str, Any] = field(default_factory=dict)  # plugin name → args dataclass / dict
    percentage_of_nodes_to_score: int | None = None  # the profile's own; None = use the global one
    not_simulated: tuple[str, ...] = ()  # enabled plugins kubefit does not model
    # Every extension point after the framework's multiPoint expansion: point (v1 key, e.g. "preFilter",
    # "filter", "preScore", "score", "bind") → plugin names in run order.
    extension_points: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # placementScore plugins with their weights (`placementScorePluginWeight`, v1.36+ workload-aware scheduling)
    placement_score_plugins: tuple[ScorePlugin, ...] = ()


@dataclass(frozen=True)
class SchedulerConfiguration:
    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int | None = None  # global; None/0 = adaptive
    source: str | None = None  # file it came from; None for the built-in defaults
    dialect: str = "v1"  # v1 | v1beta3 | v1beta2 | v1beta1 | Policy | default
    notes: tuple[str, ...] = ()  # what could not be expressed exactly, said to the user
    legacy_scoring: bool = False  # score on the pre-1.17 0..10 scale (SPEC §11)
    parallelism: int = 16
    effective: dict[str, Any] | None = field(default=None, compare=False, repr=False)  # defaulted v1 body
    version: KubeVersion | None = None  # the Kubernetes version it was decoded for (None: not decoded yet)

    def profile(self, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Profile:
        """The profile a pod with `spec.schedulerName` is scheduled by (the first one by default)."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return self.profiles[0]


GROUP = "kubescheduler.config.k8s.io"
V1 = f"{GROUP}/v1"
KIND = "KubeSchedulerConfiguration"

# v1 Plugins keys; FRAMEWORK_ORDER is the framework's getExtensionPoints order (expansion, errors).
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind")
FRAMEWORK_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
                   "postBind", "permit", "preEnqueue", "queueSort")
# v1.36's `Plugins` adds the extension points of a pod group cycle (`getExtensionPoints`, after queueSort): a
# configuration of an earlier version cannot name them (its decoding refuses the fields)
PLACEMENT_POINTS = ("placementGenerate", "placementScore")
GO_PLUGIN_TYPE = {ep: ep[0].upper() + ep[1:] + "Plugin" for ep in (*EXTENSION_POINTS, *PLACEMENT_POINTS)}

# The in-tree registry of v1.34 and the extension points each plugin implements.
PLUGIN_EXTENSIONS: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DynamicResources": frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}),
    "DefaultPreemption": frozenset({"preEnqueue", "postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}

SCORING_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")  # sets.List order

# --------------------------------------------------------------------------- the v1 fields, for strict decoding
# A schema is a dict (object: field → schema), a one-element list (list of), or a leaf name.

_PLUGIN = {"name": "str", "weight": "int32"}
_PLUGIN_SET = {"enabled": [_PLUGIN], "disabled": [_PLUGIN]}
_PLUGINS = {ep: _PLUGIN_SET for ep in (*EXTENSION_POINTS, "multiPoint")}
_PROFILE = {"schedulerName": "str", "percentageOfNodesToScore": "int32", "plugins": _PLUGINS,
            "pluginConfig": [{"name": "str", "args": "raw"}]}
_LEADER_ELECTION = {"leaderElect": "bool", "leaseDuration": "duration", "renewDeadline": "duration", "retryPeriod": "duration",
                    "resourceLock": "str", "resourceName": "str", "resourceNamespace": "str"}
_CLIENT_CONNECTION = {"kubeconfig": "str", "acceptContentTypes": "str", "contentType": "str", "qps": "float",
                      "burst": "int32"}
_EXTENDER = {"urlPrefix": "str", "filterVerb": "str", "preemptVerb": "str", "prioritizeVerb": "str",
             "weight": "int64", "bindVerb": "str", "enableHTTPS": "bool",
             "tlsConfig": {"insecure": "bool", "serverName": "str", "certFile": "str", "keyFile": "str",
                           "caFile": "str", "certData": "str", "keyData": "str", "caData": "str"},
             "httpTimeout": "duration", "nodeCacheCapable": "bool",
             "managedResources": [{"name": "str", "ignoredByScheduler": "bool"}], "ignorable": "bool"}
CONFIG_SCHEMA = {"apiVersion": "str", "kind": "str", "parallelism": "int32", "leaderElection": _LEADER_ELECTION,
                 "clientConnection": _CLIENT_CONNECTION, "enableProfiling": "bool",
                 "enableContentionProfiling": "bool", "percentageOfNodesToScore": "int32",
                 "podInitialBackoffSeconds": "int64", "podMaxBackoffSeconds": "int64", "profiles": [_PROFILE],
                 "extenders": [_EXTENDER], "delayCacheUntilActive": "bool"}

_TYPE_META = {"apiVersion": "str", "kind": "str"}
_RESOURCE_SPEC = {"name": "str", "weight": "int64"}
_SHAPE = [{"utilization": "int32", "score": "int32"}]
_REQUIREMENT = {"key": "str", "operator": "str", "values": ["str"]}
_TERM = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
_NODE_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_TERM]},
                  "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": "int32", "preference": _TERM}]}
ARGS_SCHEMAS: dict[str, dict[str, Any]] = {
    "NodeResourcesFit": {**_TYPE_META, "ignoredResources": ["str"], "ignoredResourceGroups": ["str"],
                         "scoringStrategy": {"type": "str", "resources": [_RESOURCE_SPEC],
                                             "requestedToCapacityRatio": {"shape": _SHAPE}}},
    "NodeResourcesBalancedAllocation": {**_TYPE_META, "resources": [_RESOURCE_SPEC]},
    "NodeAffinity": {**_TYPE_META, "addedAffinity": _NODE_AFFINITY},
    "DefaultPreemption": {**_TYPE_META, "minCandidateNodesPercentage": "int32", "minCandidateNodesAbsolute": "int32"},
    "InterPodAffinity": {**_TYPE_META, "hardPodAffinityWeight": "int32", "ignorePreferredTermsOfExistingPods": "bool"},
    "PodTopologySpread": {**_TYPE_META, "defaultConstraints": ["any"], "defaultingType": "str"},
    "VolumeBinding": {**_TYPE_META, "bindTimeoutSeconds": "int64", "shape": _SHAPE},
    "DynamicResources": {**_TYPE_META, "filterTimeout": "duration"},
}
