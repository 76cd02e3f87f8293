"""Validation (`apis/config/validation`): the configuration and each plugin's args, with kube-scheduler's
field paths and messages."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from kubefit.k8s.duration import SECOND, format_duration, parse_duration
from kubefit.k8s.validation import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    REQUIRED,
    FieldError,
    child,
    dedup,
    dedup_errors,
    index,
    label_name_errors,
    node_selector_errors,
    not_supported,
    preferred_terms_errors,
)
from kubefit.k8s.version import (
    DRA_BINDING_TIMEOUT,
    FIT_ARGS_RTC_VALIDATION,
    LABEL_KEY_MESSAGES,
    STORAGE_CAPACITY_SCORING,
    KubeVersion,
)
from kubefit.scheduler.config.defaults import DefaultedProfile
from kubefit.scheduler.config.types import (
    EXTENSION_POINTS,
    SCORING_TYPES,
    V1,
    BalancedAllocationArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    ShapePoint,
)

# Plugins v1 refuses by name (validation.go invalidPluginsByVersion).
INVALID_V1_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


# --------------------------------------------------------------------------- args validation

def validate_fit_args(args: NodeResourcesFitArgs, path: str = "", *, label_key: bool = False) -> list[FieldError]:
    """`ValidateNodeResourcesFitArgs` of v1.34.1 (shape path `scoringStrategy.shape`, no RTC check; `label_key`:
    the names checked in v1.35+'s words, `LABEL_KEY_MESSAGES`)."""
    errs: list[FieldError] = []
    for i, res in enumerate(args.ignored_resources):
        errs.extend(label_name_errors(res, index(child(path, "ignoredResources"), i), label_key))
    for i, group in enumerate(args.ignored_resource_groups):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(FieldError(p, INVALID, group, "resource group name can't contain '/'"))
        errs.extend(label_name_errors(group, p, label_key))
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


def validate_fit_args_v135(args: NodeResourcesFitArgs, path: str = "", *, label_key: bool = False) -> list[FieldError]:
    """`ValidateNodeResourcesFitArgs` from v1.36 (kubernetes#132120; the name is older than the finding that
    v1.35.4 still has v1.34's rules): the shape is validated under
    `scoringStrategy.requestedToCapacityRatio.shape`, and only for RequestedToCapacityRatio, which now
    requires `requestedToCapacityRatio` (v1.34.1 and v1.35.4 panic); another type with it set is forbidden.

    `args.shape` is None exactly when `requestedToCapacityRatio` is absent (`defaults.default_args`).
    """
    errs = validate_fit_args(replace(args, shape=None), path, label_key=label_key)
    strategy = child(path, "scoringStrategy")
    rtc = child(strategy, "requestedToCapacityRatio")
    if args.scoring_type == "RequestedToCapacityRatio":
        if args.shape is None:
            errs.append(FieldError(rtc, REQUIRED, None, "must be specified when type is RequestedToCapacityRatio"))
        else:
            errs.extend(validate_shape(args.shape, child(rtc, "shape")))
    elif args.shape is not None:
        errs.append(FieldError(rtc, FORBIDDEN, None, "must be nil when type is not RequestedToCapacityRatio"))
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


def validate_node_affinity_args(args: NodeAffinityArgs, path: str = "", *, label_key: bool = False
                                ) -> list[FieldError]:
    """`ValidateNodeAffinityArgs`: the parse errors of `addedAffinity`'s selectors (`label_key`: v1.35+'s words)."""
    affinity = args.added_affinity
    if not affinity:
        return []
    base = child(path, "addedAffinity")
    errs: list[FieldError] = []
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        errs.extend(node_selector_errors(required, child(base, "requiredDuringSchedulingIgnoredDuringExecution"),
                                         label_key))
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    if preferred:
        errs.extend(preferred_terms_errors(preferred, child(base, "preferredDuringSchedulingIgnoredDuringExecution"),
                                           label_key))
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


def validate_volume_binding_args(args: dict[str, Any], path: str = "", *,
                                 scores_capacity: bool = False) -> list[FieldError]:
    """`ValidateVolumeBindingArgsWithOptions`: without StorageCapacityScoring (`scores_capacity`; off by default
    before v1.37) any `shape` is refused; with it, the (defaulted) shape is validated as a function shape."""
    errs = []
    timeout = args.get("bindTimeoutSeconds", 600)
    if timeout < 0:
        errs.append(FieldError(child(path, "bindTimeoutSeconds"), INVALID, timeout,
                               "invalid BindTimeoutSeconds, should not be a negative value"))
    if scores_capacity:
        shape = tuple(ShapePoint(int(p.get("utilization") or 0), int(p.get("score") or 0))
                      for p in args.get("shape") or ())
        errs.extend(validate_shape(shape, child(path, "shape")))
    elif args.get("shape") is not None:
        errs.append(FieldError(child(path, "shape"), INVALID, args["shape"],
                               "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return errs


def _volume_binding_args_with_capacity_scoring(args: dict[str, Any], path: str = "") -> list[FieldError]:
    return validate_volume_binding_args(args, path, scores_capacity=True)


def validate_dynamic_resources_args(args: dict[str, Any], path: str = "", *, filter_timeout: bool = True,
                                    binding_conditions: bool = False) -> list[FieldError]:
    """`ValidateDynamicResourcesArgs` (`validation_pluginargs.go`, run by DynamicResources' `New`): with the
    DRASchedulerFilterTimeout gate (`filter_timeout`) `filterTimeout` must be zero or positive, without it it is
    forbidden; from v1.35 with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    (`binding_conditions`) `bindingTimeout` must be at least 1 second, without them it is forbidden. A duration
    is shown as `Duration.MarshalJSON` writes it (`"-5s"`)."""
    errs: list[FieldError] = []
    for name, enabled, least, too_short, gates in (
            ("filterTimeout", filter_timeout, 0, "must be zero or positive", "DRASchedulingFilterTimeout feature gate"),
            ("bindingTimeout", binding_conditions, SECOND, "must be at least 1 second",
             "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate")):
        raw = args.get(name)
        if raw is None:
            continue
        if not enabled:
            errs.append(FieldError(child(path, name), FORBIDDEN, detail=f"{gates} is disabled"))
        elif (nanos := parse_duration(raw)) < least:
            errs.append(FieldError(child(path, name), INVALID, format_duration(nanos), too_short))
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
_CHECK_LABEL_KEYS = (validate_fit_args, validate_fit_args_v135, validate_node_affinity_args)


def _label_key_words(validators: dict[str, Any], version: KubeVersion | None) -> dict[str, Any]:
    """`validators` with those checking label keys in `version`'s words (v1.35+: `LABEL_KEY_MESSAGES`)."""
    if version is None or not version.has(LABEL_KEY_MESSAGES):
        return validators
    return {name: partial(check, label_key=True) if check in _CHECK_LABEL_KEYS else check
            for name, check in validators.items()}


def config_args_validators(version: KubeVersion | None) -> dict[str, Any]:
    """The args validators `ValidateKubeSchedulerConfiguration` runs in `version` (VolumeBinding's follows the
    StorageCapacityScoring gate; label keys in its words)."""
    validators = CONFIG_ARGS_VALIDATORS
    if version is not None and version.has(STORAGE_CAPACITY_SCORING):
        validators = {**validators, "VolumeBinding": _volume_binding_args_with_capacity_scoring}
    return _label_key_words(validators, version)


def constructor_validators(version: KubeVersion) -> dict[str, Any]:
    """The validators the plugins' constructors run in `version` (Fit's changed in v1.35; label keys in its
    words)."""
    validators = {**CONSTRUCTOR_VALIDATORS, "DynamicResources": partial(
        validate_dynamic_resources_args, filter_timeout=version.gate("DRASchedulerFilterTimeout"),
        binding_conditions=version.has(DRA_BINDING_TIMEOUT))}
    if version.has(FIT_ARGS_RTC_VALIDATION):
        validators = {**validators, "NodeResourcesFit": validate_fit_args_v135}
    return _label_key_words(validators, version)


def validate_configuration(profiles: list[DefaultedProfile], top: dict[str, Any],
                           version: KubeVersion | None = None) -> tuple[list[str], set[tuple[int, str]]]:
    """`ValidateKubeSchedulerConfiguration` (the parts kubefit reads) in `version` (None: the args validated
    as v1.34 does by default); also which args it refused."""
    validators = config_args_validators(version)
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
            elif name in validators:
                found = validators[name](args, f"{pc_path}.args")
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


def _invalid_plugin_errors(path: str, prof: DefaultedProfile) -> list[FieldError]:
    errs = []
    for ep in EXTENSION_POINTS:  # multiPoint is not checked by validation
        for k, (name, _) in enumerate(prof.plugins[ep]["enabled"]):
            if name in INVALID_V1_PLUGINS:
                errs.append(FieldError(f"{path}.plugins.{ep}.enabled[{k}]", INVALID, name, _invalid_in_v1()))
    return errs


def _queue_sort_errors(profiles: list[DefaultedProfile]) -> list[FieldError]:
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
