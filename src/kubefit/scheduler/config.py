"""Scheduler configuration → profiles: decoding, defaulting and validation (SPEC-kube-scheduler §8–9).

CONTRACT (used by the framework, simulate and the CLI; keep these names and fields):
- `load_configuration(doc: Document | None) -> SchedulerConfiguration`; `None` = kube-scheduler defaults.
  Raises `ConfigError(messages)` for what kube-scheduler refuses (exact messages), `InputError` for
  files it could not even decode as a configuration.
- A `Profile` lists its enabled filter plugins in order and its score plugins with weights (0/unset
  already turned into 1); `plugin_args[name]` holds the args dataclass of each enabled plugin.
- `decode_v1(body, source)` is the v1 decoder the dialect converters feed; `args_to_v1(args)` prints
  args back in their v1 form; `SchedulerConfiguration.effective` is the defaulted v1 body (`config view`).
- Refusals follow kube-scheduler's order of checks: strict decoding (unknown fields), configuration
  validation (BalancedAllocation and NodeAffinity args, percentages, names), then plugin construction
  (Fit args, whose validator v1.34.1 registers under the wrong key) and the framework's plugin lists.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from typing import Any

from kubefit.errors import ConfigError, InputError
from kubefit.load import Document
from kubefit.validation import (
    DUPLICATE,
    INVALID,
    REQUIRED,
    FieldError,
    aggregate,
    child,
    dedup,
    dedup_errors,
    index,
    label_name_errors,
    node_selector_errors,
    not_supported,
    preferred_terms_errors,
)

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Plugins kubefit evaluates; any other enabled plugin is listed once on stderr as "not simulated".
SIMULATED_PLUGINS = frozenset({
    "NodeResourcesFit", "NodeResourcesBalancedAllocation",
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "PrioritySort", "DefaultBinder",
    "SchedulingGates", "NodePorts", "PodTopologySpread", "InterPodAffinity", "ImageLocality",
    "DynamicResources",  # pods without claims; a pod with claims is refused (not modelled)
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DefaultPreemption",
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

    def profile(self, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Profile:
        """The profile a pod with `spec.schedulerName` is scheduled by (the first one by default)."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return self.profiles[0]


# =========================================================================== implementation

GROUP = "kubescheduler.config.k8s.io"
V1 = f"{GROUP}/v1"
KIND = "KubeSchedulerConfiguration"

# v1 Plugins keys; FRAMEWORK_ORDER is the framework's getExtensionPoints order (expansion, errors).
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind")
FRAMEWORK_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
                   "postBind", "permit", "preEnqueue", "queueSort")
GO_PLUGIN_TYPE = {ep: ep[0].upper() + ep[1:] + "Plugin" for ep in EXTENSION_POINTS}

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

# getDefaultPlugins() of v1.34 (DynamicResources inserted before DefaultPreemption: DRA gate on).
DEFAULT_MULTIPOINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", None), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
)
# Plugins v1 refuses by name (validation.go invalidPluginsByVersion).
INVALID_V1_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
SCORING_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")  # sets.List order
NIL_DEREFERENCE = "panic: runtime error: invalid memory address or nil pointer dereference"

# --------------------------------------------------------------------------- strict decoding schemas
# A schema is a dict (object: field → schema), a one-element list (list of), or a leaf name.

_PLUGIN = {"name": "str", "weight": "int32"}
_PLUGIN_SET = {"enabled": [_PLUGIN], "disabled": [_PLUGIN]}
_PLUGINS = {ep: _PLUGIN_SET for ep in (*EXTENSION_POINTS, "multiPoint")}
_PROFILE = {"schedulerName": "str", "percentageOfNodesToScore": "int32", "plugins": _PLUGINS,
            "pluginConfig": [{"name": "str", "args": "raw"}]}
_LEADER_ELECTION = {"leaderElect": "bool", "leaseDuration": "str", "renewDeadline": "str", "retryPeriod": "str",
                    "resourceLock": "str", "resourceName": "str", "resourceNamespace": "str"}
_CLIENT_CONNECTION = {"kubeconfig": "str", "acceptContentTypes": "str", "contentType": "str", "qps": "float",
                      "burst": "int32"}
_EXTENDER = {"urlPrefix": "str", "filterVerb": "str", "preemptVerb": "str", "prioritizeVerb": "str",
             "weight": "int64", "bindVerb": "str", "enableHTTPS": "bool",
             "tlsConfig": {"insecure": "bool", "serverName": "str", "certFile": "str", "keyFile": "str",
                           "caFile": "str", "certData": "str", "keyData": "str", "caData": "str"},
             "httpTimeout": "str", "nodeCacheCapable": "bool",
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
    "DynamicResources": {**_TYPE_META, "filterTimeout": "str"},
}
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


class _Decoder:
    """Strict decoding of one YAML/JSON object against a schema: unknown fields and type errors."""

    def __init__(self, source: str, obj: str, field_prefix: str = "") -> None:
        self.unknown: list[str] = []
        self.source, self.obj, self.prefix = source, obj, field_prefix

    def walk(self, value: Any, schema: Any, path: str) -> None:
        if value is None or schema in ("any", "raw"):
            return
        if isinstance(schema, dict):
            if not isinstance(value, dict):
                self._type_error(path, "an object", value)
            for key in sorted(value, key=str):  # Go decodes the JSON form, whose keys are sorted
                sub = schema.get(str(key))
                where = f"{path}.{key}" if path else str(key)
                if sub is None:
                    self.unknown.append(where)
                else:
                    self.walk(value[key], sub, where)
        elif isinstance(schema, list):
            if not isinstance(value, list):
                self._type_error(path, "a list", value)
            for i, item in enumerate(value):
                if item is None and isinstance(schema[0], dict):
                    value[i] = item = {}  # Go decodes null in a list of structs as the zero struct
                self.walk(item, schema[0], f"{path}[{i}]")
        else:
            self._leaf(value, schema, path)

    def _leaf(self, value: Any, kind: str, path: str) -> None:
        if kind == "str":
            ok = isinstance(value, str)
        elif kind == "bool":
            ok = isinstance(value, bool)
        elif kind == "float":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        else:
            lo, hi = _INT_RANGES[kind]
            ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
            if isinstance(value, int) and not isinstance(value, bool) and not ok:
                raise InputError(f"{value} does not fit in an {kind}", file=self.source, obj=self.obj,
                                 field=self._field(path))
        if not ok:
            expected = {"str": "a string", "bool": "a boolean", "float": "a number"}.get(kind, "an integer")
            self._type_error(path, expected, value)

    def _field(self, path: str) -> str:
        return f"{self.prefix}.{path}" if self.prefix and path else (self.prefix or path)

    def _type_error(self, path: str, expected: str, value: Any) -> None:
        raise InputError(f"must be {expected}, got {value!r}", file=self.source, obj=self.obj,
                         field=self._field(path))


def _strict_message(errors: list[str]) -> str:
    return "strict decoding error: " + ", ".join(errors)


def _unknown(paths: list[str]) -> list[str]:
    return [f'unknown field "{p}"' for p in paths]


# --------------------------------------------------------------------------- plugin args

def decode_plugin_args(name: str, raw: Any, *, source: str = "<args>", field_path: str = "args") -> Any:
    """Strictly decode and default one plugin's v1 args (`None` = absent); unknown args stay a raw dict.

    Raises `ConfigError` with kube-scheduler's strict decoding message for unknown fields
    (relative form `strict decoding error: decoding args for plugin X: ...`).
    """
    unknown = check_args(name, raw, source=source, field_path=field_path)
    if unknown:
        raise ConfigError([_args_strict_error(name, unknown)], file=source)
    return default_args(name, raw)


def check_args(name: str, raw: Any, *, source: str, field_path: str) -> list[str]:
    """Unknown field paths of plugin args (type errors raise `InputError`)."""
    schema = ARGS_SCHEMAS.get(name)
    if raw is not None and not isinstance(raw, dict):
        raise InputError(f"args must be an object, got {type(raw).__name__}", file=source, field=field_path)
    if schema is None or raw is None:
        return []
    dec = _Decoder(source, f"{name}Args", field_path)
    dec.walk(raw, schema, "")
    kind = raw.get("kind")
    if kind not in (None, "", f"{name}Args"):
        raise ConfigError([f"args for plugin {name} were not of type {name}Args.{GROUP}, got {kind}.{GROUP}"],
                          file=source)
    return dec.unknown


def _args_strict_error(name: str, unknown: list[str]) -> str:
    return f"decoding args for plugin {name}: " + _strict_message(_unknown(unknown))


def _resources(raw: Any) -> tuple[ResourceWeight, ...]:
    """`[{name, weight}]` with weight 0/unset → 1; empty → cpu:1, memory:1."""
    items = raw or []
    if not items:
        return (ResourceWeight("cpu", 1), ResourceWeight("memory", 1))
    return tuple(ResourceWeight(str(r.get("name") or ""), int(r.get("weight") or 0) or 1) for r in items)


def default_args(name: str, raw: dict[str, Any] | None) -> Any:
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
            resources=_resources(strategy.get("resources")),
            shape=shape,
            ignored_resources=tuple(str(r) for r in raw.get("ignoredResources") or ()),
            ignored_resource_groups=tuple(str(g) for g in raw.get("ignoredResourceGroups") or ()),
        )
    if name == "NodeResourcesBalancedAllocation":
        return BalancedAllocationArgs(resources=_resources(raw.get("resources")))
    if name == "NodeAffinity":
        return NodeAffinityArgs(added_affinity=raw.get("addedAffinity"))
    return _default_other_args(name, dict(raw))


def _default_other_args(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    raw = {k: v for k, v in raw.items() if v is not None and k not in ("apiVersion", "kind")}
    if name == "DefaultPreemption":
        raw.setdefault("minCandidateNodesPercentage", 10)
        raw.setdefault("minCandidateNodesAbsolute", 100)
    elif name == "InterPodAffinity":
        raw.setdefault("hardPodAffinityWeight", 1)
    elif name == "PodTopologySpread":
        raw["defaultingType"] = raw.get("defaultingType") or "System"
    elif name == "VolumeBinding":
        raw.setdefault("bindTimeoutSeconds", 600)
    return raw


def args_to_v1(args: Any) -> dict[str, Any]:
    """Args dataclass → its v1 YAML form (Go `omitempty` rules), as `config view` prints it."""
    if isinstance(args, NodeResourcesFitArgs):
        out: dict[str, Any] = {}
        if args.ignored_resources:
            out["ignoredResources"] = list(args.ignored_resources)
        if args.ignored_resource_groups:
            out["ignoredResourceGroups"] = list(args.ignored_resource_groups)
        strategy: dict[str, Any] = {}
        if args.scoring_type:
            strategy["type"] = args.scoring_type
        strategy["resources"] = [{"name": r.name, "weight": r.weight} for r in args.resources]
        if args.shape is not None:
            strategy["requestedToCapacityRatio"] = (
                {"shape": [{"utilization": p.utilization, "score": p.score} for p in args.shape]}
                if args.shape else {})
        out["scoringStrategy"] = strategy
        return out
    if isinstance(args, BalancedAllocationArgs):
        return {"resources": [{"name": r.name, "weight": r.weight} for r in args.resources]}
    if isinstance(args, NodeAffinityArgs):
        return {} if args.added_affinity is None else {"addedAffinity": args.added_affinity}
    return dict(args or {})


# --------------------------------------------------------------------------- args validation

def validate_fit_args(args: NodeResourcesFitArgs, path: str = "") -> list[FieldError]:
    """`ValidateNodeResourcesFitArgs` of v1.34.1 (shape path `scoringStrategy.shape`, no RTC check)."""
    errs: list[FieldError] = []
    for i, res in enumerate(args.ignored_resources):
        errs.extend(label_name_errors(res, index(child(path, "ignoredResources"), i)))
    for i, group in enumerate(args.ignored_resource_groups):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(FieldError(p, INVALID, group, "resource group name can't contain '/'"))
        errs.extend(label_name_errors(group, p))
    strategy = child(path, "scoringStrategy")
    if args.scoring_type not in SCORING_TYPES:
        errs.append(not_supported(child(strategy, "type"), args.scoring_type, SCORING_TYPES))
    for i, res in enumerate(args.resources):
        if res.weight <= 0 or res.weight > 100:
            errs.append(FieldError(child(index(child(strategy, "resources"), i), "weight"), INVALID, res.weight,
                                   f"resource weight of {res.name} not in valid range (0, 100]"))
    if args.shape is not None:
        errs.extend(validate_shape(args.shape, child(strategy, "shape")))
    return dedup_errors(errs)


def validate_shape(shape: tuple[ShapePoint, ...], path: str) -> list[FieldError]:
    """`validateFunctionShape`: required, sorted (first violation), ranges per point."""
    if not shape:
        return [FieldError(path, REQUIRED, None, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(FieldError(child(index(path, i), "utilization"), INVALID, shape[i].utilization,
                                   "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(FieldError(child(index(path, i), "utilization"), INVALID, point.utilization,
                                   "not in valid range [0, 100]"))
        if not 0 <= point.score <= 10:
            errs.append(FieldError(child(index(path, i), "score"), INVALID, point.score,
                                   "not in valid range [0, 10]"))
    return errs


def validate_balanced_args(args: BalancedAllocationArgs, path: str = "") -> list[FieldError]:
    """`ValidateNodeResourcesBalancedAllocationArgs`: unique names, every weight 1."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, res in enumerate(args.resources):
        p = index(child(path, "resources"), i)
        if res.name in seen:
            errs.append(FieldError(child(p, "name"), DUPLICATE, res.name))
        seen.add(res.name)
        if res.weight != 1:
            errs.append(FieldError(child(p, "weight"), INVALID, res.weight, "must be 1"))
    return dedup_errors(errs)


def validate_node_affinity_args(args: NodeAffinityArgs, path: str = "") -> list[FieldError]:
    """`ValidateNodeAffinityArgs`: the parse errors of `addedAffinity`'s selectors."""
    affinity = args.added_affinity
    if not affinity:
        return []
    base = child(path, "addedAffinity")
    errs: list[FieldError] = []
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        errs.extend(node_selector_errors(required, child(base, "requiredDuringSchedulingIgnoredDuringExecution")))
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    if preferred:
        errs.extend(preferred_terms_errors(preferred, child(base, "preferredDuringSchedulingIgnoredDuringExecution")))
    return errs


def validate_default_preemption_args(args: dict[str, Any], path: str = "") -> list[FieldError]:
    """`ValidateDefaultPreemptionArgs`."""
    pct, absolute = args.get("minCandidateNodesPercentage", 10), args.get("minCandidateNodesAbsolute", 100)
    pct_path, abs_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    errs = []
    if not 0 <= pct <= 100:
        errs.append(FieldError(pct_path, INVALID, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(FieldError(abs_path, INVALID, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(FieldError(pct_path, INVALID, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(FieldError(abs_path, INVALID, absolute,
                               "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def validate_inter_pod_affinity_args(args: dict[str, Any], path: str = "") -> list[FieldError]:
    """`ValidateInterPodAffinityArgs`: hardPodAffinityWeight in [0, 100]."""
    weight = args.get("hardPodAffinityWeight", 1)
    if not 0 <= weight <= 100:
        return [FieldError(child(path, "hardPodAffinityWeight"), INVALID, weight, "not in valid range [0, 100]")]
    return []


def validate_pod_topology_spread_args(args: dict[str, Any], path: str = "") -> list[FieldError]:
    """`ValidatePodTopologySpreadArgs`, the defaultingType part (constraints are not simulated)."""
    kind = args.get("defaultingType") or "System"
    p = child(path, "defaultingType")
    if kind not in ("System", "List"):
        return [not_supported(p, kind, ("List", "System"))]
    if kind == "System" and args.get("defaultConstraints"):
        return [FieldError(p, INVALID, kind, "when .defaultConstraints are not empty")]
    return []


def validate_volume_binding_args(args: dict[str, Any], path: str = "") -> list[FieldError]:
    """`ValidateVolumeBindingArgs` with StorageCapacityScoring off (its v1.34 default)."""
    errs = []
    timeout = args.get("bindTimeoutSeconds", 600)
    if timeout < 0:
        errs.append(FieldError(child(path, "bindTimeoutSeconds"), INVALID, timeout,
                               "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.get("shape") is not None:
        errs.append(FieldError(child(path, "shape"), INVALID, args["shape"],
                               "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return errs


# Validators run by ValidateKubeSchedulerConfiguration (the Fit one sits under the wrong key
# "NodeResourcesFitArgs" in v1.34.1, so Fit args are only checked by the plugin constructor).
CONFIG_ARGS_VALIDATORS = {
    "DefaultPreemption": validate_default_preemption_args,
    "InterPodAffinity": validate_inter_pod_affinity_args,
    "NodeAffinity": validate_node_affinity_args,
    "NodeResourcesBalancedAllocation": validate_balanced_args,
    "PodTopologySpread": validate_pod_topology_spread_args,
    "VolumeBinding": validate_volume_binding_args,
}
CONSTRUCTOR_VALIDATORS = {
    "NodeResourcesFit": validate_fit_args,
    "NodeResourcesBalancedAllocation": validate_balanced_args,
    "NodeAffinity": validate_node_affinity_args,
}


def construct_plugin(name: str, args: Any) -> str | None:
    """What the plugin's constructor (`New…`) returns as error for these args, or None."""
    validator = CONSTRUCTOR_VALIDATORS.get(name)
    if validator is None:
        return None
    errs = validator(args)
    if errs:
        return aggregate(errs)
    if name == "NodeResourcesFit" and args.scoring_type == "RequestedToCapacityRatio" and args.shape is None:
        return NIL_DEREFERENCE  # NewFit dereferences the missing requestedToCapacityRatio
    return None


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


def merged_plugins(raw_plugins: Any) -> dict[str, dict[str, Any]]:
    """The profile's plugins after v1 defaulting (`mergePlugins(getDefaultPlugins(), custom)`)."""
    defaults = {ep: {"enabled": [], "disabled": []} for ep in (*EXTENSION_POINTS, "multiPoint")}
    defaults["multiPoint"]["enabled"] = list(DEFAULT_MULTIPOINT)
    if raw_plugins is None:
        return defaults
    return {ep: merge_plugin_set(defaults[ep], _plugin_set(raw_plugins.get(ep))) for ep in defaults}


def _needed(plugins: dict[str, dict[str, Any]]) -> list[str]:
    """Plugin names enabled anywhere (`pluginsNeeded`), first-seen order, multiPoint last."""
    names: dict[str, None] = {}
    for ep in (*FRAMEWORK_ORDER, "multiPoint"):
        for name, _ in plugins[ep]["enabled"]:
            names.setdefault(name, None)
    return list(names)


def expand_extension_points(plugins: dict[str, dict[str, Any]], built: set[str]) -> dict[str, list[str]]:
    """`updatePluginList` + `expandMultiPointPlugins`: every point's plugins in run order.

    Raises `_FrameworkError` with the framework's message on the first problem.
    """
    points: dict[str, list[str]] = {}
    for ep in FRAMEWORK_ORDER:
        go_type = GO_PLUGIN_TYPE[ep]
        listed: list[str] = []
        for name, _ in plugins[ep]["enabled"]:
            if name not in built:
                raise _FrameworkError(f'{go_type} "{name}" does not exist')
            if ep not in PLUGIN_EXTENSIONS[name]:
                raise _FrameworkError(f'plugin "{name}" does not extend {go_type} plugin')
            if name in listed:
                raise _FrameworkError(f'plugin "{name}" already registered as "{go_type}"')
            listed.append(name)
        points[ep] = listed
    if not plugins["multiPoint"]["enabled"]:
        return points
    for ep in FRAMEWORK_ORDER:
        go_type = GO_PLUGIN_TYPE[ep]
        specific = points[ep]
        disabled = set(plugins[ep]["disabled"])
        if "*" in disabled:
            continue
        overrides: list[str] = []
        multi: list[str] = []
        for name, _ in plugins["multiPoint"]["enabled"]:
            if name not in built:
                raise _FrameworkError(f'{go_type} "{name}" does not exist')
            if ep not in PLUGIN_EXTENSIONS[name] or name in disabled:
                continue
            if name in specific:
                if name not in overrides:
                    overrides.append(name)
                continue
            if name in multi:
                raise _FrameworkError(f'plugin "{name}" already registered as "{go_type}"')
            multi.append(name)
        first = [n for n in specific if n in overrides]
        rest = [n for n in specific if n not in overrides]
        points[ep] = first + multi + rest
    return points


def score_weights(plugins: dict[str, dict[str, Any]], built: set[str]) -> dict[str, int]:
    """`getScoreWeights`: score.enabled then multiPoint.enabled, first wins, 0/unset → 1."""
    weights: dict[str, int] = {}
    total = 0
    for name, weight in [*plugins["score"]["enabled"], *plugins["multiPoint"]["enabled"]]:
        if name not in built or "score" not in PLUGIN_EXTENSIONS[name] or name in weights:
            continue
        weights[name] = int(weight or 0) or 1
        if weights[name] * 100 > 2**63 - 1 - total:
            raise _FrameworkError("total score of Score plugins could overflow")
        total += weights[name] * 100
    return weights


class _FrameworkError(Exception):
    """An error `NewFramework` returns for a profile."""


# --------------------------------------------------------------------------- decoding a v1 document

@dataclass
class _Profile:
    index: int
    name: str | None
    percentage: int | None
    plugins: dict[str, dict[str, Any]]
    plugin_config: list[tuple[str, Any]]  # (name, args dataclass / dict), given ones first, then defaults
    given_args: int  # how many of plugin_config came from the document


def _decode_document(body: dict[str, Any], source: str) -> tuple[list[_Profile], dict[str, Any]]:
    """Strict decoding and v1 defaulting; returns the profiles and the defaulted top-level fields."""
    obj = KIND
    dec = _Decoder(source, obj)
    dec.walk(body, CONFIG_SCHEMA, "")
    strict = _unknown(dec.unknown)
    raw_profiles = body.get("profiles") or [{}]
    for i, prof in enumerate(raw_profiles):
        for j, pc in enumerate((prof or {}).get("pluginConfig") or []):
            name = str(pc.get("name") or "")
            unknown = check_args(name, pc.get("args"), source=source,
                                 field_path=f"profiles[{i}].pluginConfig[{j}].args")
            if unknown:
                strict.append(f"decoding .profiles[{i}].pluginConfig[{j}]: strict decoding error: "
                              + _args_strict_error(name, unknown))
    if strict:
        raise ConfigError([_strict_message(strict)], file=source)
    profiles = [_default_profile(i, prof or {}, single=len(raw_profiles) == 1)
                for i, prof in enumerate(raw_profiles)]
    top = {
        "parallelism": 16 if body.get("parallelism") is None else body["parallelism"],
        "percentageOfNodesToScore": body.get("percentageOfNodesToScore") or 0,
        "podInitialBackoffSeconds": 1 if body.get("podInitialBackoffSeconds") is None
        else body["podInitialBackoffSeconds"],
        "podMaxBackoffSeconds": 10 if body.get("podMaxBackoffSeconds") is None else body["podMaxBackoffSeconds"],
        "leaderElection": body.get("leaderElection") or {},
    }
    return profiles, top


def _default_profile(i: int, raw: dict[str, Any], *, single: bool) -> _Profile:
    """`setDefaults_KubeSchedulerProfile`: merged plugins, defaulted args, default args appended."""
    name = raw.get("schedulerName")
    if name is None and single:
        name = DEFAULT_SCHEDULER_NAME
    plugins = merged_plugins(raw.get("plugins"))
    config = [(str(pc.get("name") or ""), default_args(str(pc.get("name") or ""), pc.get("args")))
              for pc in raw.get("pluginConfig") or []]
    given = {n for n, _ in config}
    for plugin in sorted({n for ep in plugins.values() for n, _ in ep["enabled"]}):
        if plugin not in given and plugin in ARGS_SCHEMAS:
            config.append((plugin, default_args(plugin, None)))
    return _Profile(i, name, raw.get("percentageOfNodesToScore"), plugins, config, len(raw.get("pluginConfig") or []))


def _validate_configuration(profiles: list[_Profile], top: dict[str, Any]) -> tuple[list[str], set[tuple[int, str]]]:
    """`ValidateKubeSchedulerConfiguration` (the parts kubefit reads); also which args it refused."""
    errs: list[FieldError] = []
    refused: set[tuple[int, str]] = set()
    election = top.get("leaderElection") or {}
    lock = election.get("resourceLock") or "leases"
    if election.get("leaderElect") is not False and lock != "leases":
        errs.append(FieldError("leaderElection.resourceLock", INVALID, lock, 'resourceLock value must be "leases"'))
    if top["parallelism"] <= 0:
        errs.append(FieldError("parallelism", INVALID, top["parallelism"], "should be an integer value greater than zero"))
    seen: dict[str | None, int] = {}
    for prof in profiles:
        path = f"profiles[{prof.index}]"
        if not prof.name:
            errs.append(FieldError(f"{path}.schedulerName", REQUIRED))
        errs.extend(_percentage_errors(f"{path}.percentageOfNodesToScore", prof.percentage))
        errs.extend(_invalid_plugin_errors(path, prof))
        names_seen: set[str] = set()
        for j, (name, args) in enumerate(prof.plugin_config[:prof.given_args]):
            pc_path = f"{path}.pluginConfig[{j}]"
            if name in names_seen:
                errs.append(FieldError(pc_path, DUPLICATE, name))
            names_seen.add(name)
            if name in INVALID_V1_PLUGINS:
                errs.append(FieldError(pc_path, INVALID, name, _invalid_in_v1()))
            elif name in CONFIG_ARGS_VALIDATORS:
                found = CONFIG_ARGS_VALIDATORS[name](args, f"{pc_path}.args")
                if found:
                    refused.add((prof.index, name))
                errs.extend(found)
        if prof.name in seen:
            errs.append(FieldError(f"{path}.schedulerName", DUPLICATE, {}))
        seen[prof.name] = prof.index
    errs.extend(_queue_sort_errors(profiles))
    errs.extend(_percentage_errors("percentageOfNodesToScore", top["percentageOfNodesToScore"]))
    if top["podInitialBackoffSeconds"] <= 0:
        errs.append(FieldError("podInitialBackoffSeconds", INVALID, top["podInitialBackoffSeconds"], "must be greater than 0"))
    if top["podMaxBackoffSeconds"] < top["podInitialBackoffSeconds"]:
        errs.append(FieldError("podMaxBackoffSeconds", INVALID, top["podMaxBackoffSeconds"],
                               "must be greater than or equal to PodInitialBackoffSeconds"))
    return dedup(str(e) for e in errs), refused


def _percentage_errors(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [FieldError(path, INVALID, value, "not in valid range [0-100]")]
    return []


def _invalid_in_v1() -> str:
    return f'was invalid in version "{V1}" (KubeSchedulerConfiguration is version "{V1}")'


def _invalid_plugin_errors(path: str, prof: _Profile) -> list[FieldError]:
    errs = []
    for ep in EXTENSION_POINTS:  # multiPoint is not checked by validation
        for k, (name, _) in enumerate(prof.plugins[ep]["enabled"]):
            if name in INVALID_V1_PLUGINS:
                errs.append(FieldError(f"{path}.plugins.{ep}.enabled[{k}]", INVALID, name, _invalid_in_v1()))
    return errs


def _queue_sort_errors(profiles: list[_Profile]) -> list[FieldError]:
    errs = []
    canon = profiles[0].plugins["queueSort"]
    if len(canon["enabled"]) > 1:
        errs.append(FieldError("profiles[0].plugins.queueSort.Enabled", INVALID, len(canon["enabled"]),
                               "only one queue sort plugin can be enabled"))
    for prof in profiles[1:]:
        if prof.plugins["queueSort"] != canon:
            errs.append(FieldError(f"profiles[{prof.index}].plugins.queueSort", INVALID, None,
                                   "must be the same for all profiles"))
    return errs


def _build_profile(prof: _Profile) -> tuple[Profile | None, list[str]]:
    """`NewFramework` for one profile: construct the needed plugins, expand, weigh."""
    needed = _needed(prof.plugins)
    args_by_name: dict[str, Any] = {}
    for name, args in prof.plugin_config:
        args_by_name.setdefault(name, args)
    errors = []
    built: set[str] = set()
    for name in needed:
        if name not in PLUGIN_EXTENSIONS:
            continue
        problem = construct_plugin(name, args_by_name.get(name, default_args(name, None)))
        if problem:
            errors.append(f'initializing plugin "{name}": {problem}')
        built.add(name)
    if errors:
        return None, errors
    try:
        points = expand_extension_points(prof.plugins, built)
        if len(points["queueSort"]) != 1:
            raise _FrameworkError(f'only one queue sort plugin required for profile with scheduler name '
                                  f'"{prof.name}", but got {len(points["queueSort"])}')
        if not points["bind"]:
            raise _FrameworkError(f'at least one bind plugin is needed for profile with scheduler name "{prof.name}"')
        weights = score_weights(prof.plugins, built)
    except _FrameworkError as exc:
        return None, [str(exc)]
    running_set = {n for ep in EXTENSION_POINTS for n in points[ep]}
    running = [n for n in needed if n in running_set]
    profile = Profile(
        scheduler_name=str(prof.name),
        filter_plugins=tuple(points["filter"]),
        score_plugins=tuple(ScorePlugin(n, weights[n]) for n in points["score"]),
        plugin_args={n: args_by_name.get(n, default_args(n, None)) for n in running if n in ARGS_SCHEMAS},
        percentage_of_nodes_to_score=prof.percentage,
        not_simulated=tuple(n for n in running if n not in SIMULATED_PLUGINS),
        extension_points={ep: tuple(points[ep]) for ep in EXTENSION_POINTS},
    )
    return profile, []


def decode_v1(body: dict[str, Any], source: str) -> SchedulerConfiguration:
    """Decode, default and validate a `kubescheduler.config.k8s.io/v1` body as kube-scheduler v1.34.1 does.

    Refusals are `ConfigError` with kube-scheduler's messages: strict decoding, configuration
    validation (full field paths), then plugin construction (`initializing profiles: creating profile
    for scheduler name …: initializing plugin "X": …`), which is where Fit args are checked.
    """
    profiles, top = _decode_document(body, source)
    messages, refused = _validate_configuration(profiles, top)
    built: list[Profile] = []
    for prof in profiles:
        if any(p == prof.index for p, _ in refused) and messages:
            # kube-scheduler stops at validation; still report the other plugins' construction errors
            prof = _without_args_of(prof, {n for p, n in refused if p == prof.index})
        profile, errors = _build_profile(prof)
        messages.extend(f"initializing profiles: creating profile for scheduler name {prof.name}: {e}"
                        for e in errors)
        if profile is not None:
            built.append(profile)
    messages = [_explain(m) for m in messages]
    if messages:
        raise ConfigError(messages, file=source)
    effective = _effective_v1(body, profiles, top)
    notes = [n for prof, profile in zip(profiles, built, strict=True) for n in _profile_notes(prof, profile)]
    if body.get("extenders"):
        notes.append(f"{len(body['extenders'])} scheduler extender(s) configured: extenders are not simulated "
                     f"(their filter and prioritize verbs are ignored)")
    return SchedulerConfiguration(profiles=tuple(built), percentage_of_nodes_to_score=top["percentageOfNodesToScore"],
                                  source=source, dialect="v1", parallelism=top["parallelism"], effective=effective,
                                  notes=tuple(notes))


def _profile_notes(prof: _Profile, profile: Profile) -> list[str]:
    """What the profile says that kube-scheduler ignores: args of idle plugins, weights of non-Score plugins."""
    running = {n for names in profile.extension_points.values() for n in names}
    notes = []
    for name, _ in prof.plugin_config[:prof.given_args]:
        if name not in running:
            notes.append(f"profile {profile.scheduler_name}: pluginConfig for {name} is not used: the plugin is "
                         f"not enabled in this profile")
    for ep in ("multiPoint", *EXTENSION_POINTS):
        for name, weight in prof.plugins[ep]["enabled"]:
            if weight and "score" not in PLUGIN_EXTENSIONS.get(name, ()):
                notes.append(f"profile {profile.scheduler_name}: plugins.{ep}: the weight of {name} is ignored "
                             f"(it is not a Score plugin)")
    return notes


def _without_args_of(prof: _Profile, names: set[str]) -> _Profile:
    """The profile with the args validation already refused replaced by defaults (no double report)."""
    config = [(n, default_args(n, None) if n in names else a) for n, a in prof.plugin_config]
    return _Profile(prof.index, prof.name, prof.percentage, prof.plugins, config, prof.given_args)


def _explain(message: str) -> str:
    if message.endswith(f'initializing plugin "NodeResourcesFit": {NIL_DEREFERENCE}'):
        return (message + " (kube-scheduler v1.34.1 crashes here: scoringStrategy.type is RequestedToCapacityRatio "
                "but scoringStrategy.requestedToCapacityRatio is not set)")
    return message


def _plugin_list_v1(plugins: PluginList) -> list[dict[str, Any]]:
    return [{"name": n} if w is None else {"name": n, "weight": w} for n, w in plugins]


def _effective_v1(body: dict[str, Any], profiles: list[_Profile], top: dict[str, Any]) -> dict[str, Any]:
    """The defaulted v1 configuration (what `kubefit config view` prints)."""
    out: dict[str, Any] = {"apiVersion": V1, "kind": KIND, "parallelism": top["parallelism"],
                           "percentageOfNodesToScore": top["percentageOfNodesToScore"],
                           "podInitialBackoffSeconds": top["podInitialBackoffSeconds"],
                           "podMaxBackoffSeconds": top["podMaxBackoffSeconds"], "profiles": []}
    for prof in profiles:
        plugins: dict[str, Any] = {}
        for ep in (*EXTENSION_POINTS, "multiPoint"):
            pset: dict[str, Any] = {}
            if prof.plugins[ep]["enabled"]:
                pset["enabled"] = _plugin_list_v1(prof.plugins[ep]["enabled"])
            if prof.plugins[ep]["disabled"]:
                pset["disabled"] = [{"name": n} for n in prof.plugins[ep]["disabled"]]
            if pset:
                plugins[ep] = pset
        entry: dict[str, Any] = {"schedulerName": prof.name}
        if prof.percentage is not None:
            entry["percentageOfNodesToScore"] = prof.percentage
        entry["plugins"] = plugins
        entry["pluginConfig"] = [{"name": n, "args": args_to_v1(a)} for n, a in prof.plugin_config]
        out["profiles"].append(entry)
    for key in ("leaderElection", "clientConnection", "extenders", "enableProfiling",
                "enableContentionProfiling", "delayCacheUntilActive"):
        if key in body:
            out[key] = body[key]
    return out


# --------------------------------------------------------------------------- entry point

def default_configuration() -> SchedulerConfiguration:
    """kube-scheduler's configuration when none is given (one default-scheduler profile)."""
    config = decode_v1({"apiVersion": V1, "kind": KIND}, "<defaults>")
    return SchedulerConfiguration(profiles=config.profiles, percentage_of_nodes_to_score=0, source=None,
                                  dialect="default", parallelism=16, effective=config.effective)


def load_configuration(doc: Document | None) -> SchedulerConfiguration:
    """Decode, default and validate a configuration document (None = kube-scheduler's defaults)."""
    if doc is None:
        return default_configuration()
    body = doc.body
    if not isinstance(body, dict):
        raise InputError("a scheduler configuration must be an object", file=doc.source)
    kind = body.get("kind")
    version = body.get("apiVersion")
    if kind == KIND and version == V1:
        return decode_v1(body, doc.source)
    try:
        dialects = importlib.import_module("kubefit.scheduler.dialects")
    except ImportError:
        dialects = None
    if dialects is None or not hasattr(dialects, "to_v1"):
        raise InputError(f"unsupported apiVersion {version!r} for {kind} (kubefit reads {V1})",
                         file=doc.source, obj=doc.label, field="apiVersion")
    v1_body, notes = dialects.to_v1(doc)
    config = decode_v1(v1_body, doc.source)
    dialect = "Policy" if kind == "Policy" else str(version or "").rsplit("/", 1)[-1]
    legacy = bool(getattr(dialects, "is_legacy_dialect", lambda _d: False)(doc))
    return replace(config, dialect=dialect, notes=(*notes, *config.notes), legacy_scoring=legacy)
