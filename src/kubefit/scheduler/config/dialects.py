"""Older scheduler configuration dialects → the equivalent v1 KubeSchedulerConfiguration body.

Handles `kubescheduler.config.k8s.io/v1beta1` (separate resource score plugins), `v1beta2` and
`v1beta3` (the `scoringStrategy` form) and the legacy `kind: Policy` (predicates and priorities,
removed in Kubernetes 1.23). `to_v1(doc)` returns the v1 body plus a note for every choice without an
exact v1 equivalent; what an old version refused is refused here with that version's message
(SPEC-kube-scheduler §11): `ConfigError`, exit 2.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

from kubefit.errors import ConfigError, InputError
from kubefit.manifests.documents import Document

GROUP = "kubescheduler.config.k8s.io"
V1 = f"{GROUP}/v1"
BETA_VERSIONS = ("v1beta1", "v1beta2", "v1beta3")
EXTENSION_POINTS = ("queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
                    "permit", "preBind", "bind", "postBind")

# v1beta1 resource score plugins → NodeResourcesFit scoringStrategy.type (removed in v1beta2).
V1BETA1_STRATEGY_PLUGINS = {
    "NodeResourcesLeastAllocated": "LeastAllocated",
    "NodeResourcesMostAllocated": "MostAllocated",
    "RequestedToCapacityRatio": "RequestedToCapacityRatio",
}
# Plugins of the beta versions that v1 no longer has.
REMOVED_PLUGINS = {
    "NodePreferAvoidPods": "removed in Kubernetes 1.24 (the preferAvoidPods annotation is ignored)",
    "NodeLabel": "removed in Kubernetes 1.23 (use NodeAffinity)",
    "ServiceAffinity": "removed in Kubernetes 1.23 (use InterPodAffinity)",
    "SelectorSpread": "removed in Kubernetes 1.27 (PodTopologySpread's system default constraints replace it)",
}
# The in-tree volume limit plugins v1 refuses by name (validation.go invalidPluginsByVersion).
for _name in ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"):
    REMOVED_PLUGINS[_name] = ("removed from kube-scheduler (v1 refuses the name); NodeVolumeLimits, in the default "
                              "profile, counts these volumes through their CSI drivers")
# Default score weights of v1beta1/v1beta2 that v1beta3 and v1 raised.
BETA_DEFAULT_SCORE_WEIGHTS = {"TaintToleration": 1, "NodeAffinity": 1, "PodTopologySpread": 1,
                              "InterPodAffinity": 1}
V1_DEFAULT_SCORE_WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "PodTopologySpread": 2,
                            "InterPodAffinity": 2}
V1_PLUGIN_ORDER = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                   "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                   "VolumeZone", "PodTopologySpread", "InterPodAffinity",
                   "NodeResourcesBalancedAllocation", "ImageLocality")

# Legacy Policy predicates → v1 filter plugins (v1.16 names; kubernetes legacy_registry.go).
PREDICATES: dict[str, tuple[str, ...]] = {
    "PodFitsResources": ("NodeResourcesFit",),
    "PodFitsHost": ("NodeName",),
    "PodFitsHostPorts": ("NodePorts",),
    "PodFitsPorts": ("NodePorts",),
    "HostName": ("NodeName",),
    "MatchNodeSelector": ("NodeAffinity",),
    "GeneralPredicates": ("NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity"),
    "PodToleratesNodeTaints": ("TaintToleration",),
    "CheckNodeUnschedulable": ("NodeUnschedulable",),
    "NoVolumeZoneConflict": ("VolumeZone",),
    "NoDiskConflict": ("VolumeRestrictions",),
    "MaxEBSVolumeCount": ("NodeVolumeLimits",),
    "MaxGCEPDVolumeCount": ("NodeVolumeLimits",),
    "MaxAzureDiskVolumeCount": ("NodeVolumeLimits",),
    "MaxCinderVolumeCount": ("NodeVolumeLimits",),
    "MaxCSIVolumeCountPred": ("NodeVolumeLimits",),
    "MatchInterPodAffinity": ("InterPodAffinity",),
    "CheckVolumeBinding": ("VolumeBinding",),
    "EvenPodsSpread": ("PodTopologySpread",),
}
# Predicates that existed but have no v1 filter plugin.
PREDICATES_GONE = {
    "CheckNodeCondition": "node conditions became taints (node.kubernetes.io/not-ready etc.), see TaintToleration",
    "CheckNodeMemoryPressure": "memory pressure became the node.kubernetes.io/memory-pressure taint",
    "CheckNodeDiskPressure": "disk pressure became the node.kubernetes.io/disk-pressure taint",
    "CheckNodePIDPressure": "PID pressure became the node.kubernetes.io/pid-pressure taint",
    "CheckServiceAffinity": "ServiceAffinity was removed in Kubernetes 1.23",
    "CheckNodeLabelPresence": "NodeLabel was removed in Kubernetes 1.23",
}
# v1.16 default provider predicates, used when a Policy has no `predicates` key.
DEFAULT_PREDICATES = ("NoVolumeZoneConflict", "MaxEBSVolumeCount", "MaxGCEPDVolumeCount",
                      "MaxAzureDiskVolumeCount", "MaxCSIVolumeCountPred", "MatchInterPodAffinity",
                      "NoDiskConflict", "GeneralPredicates", "CheckNodeUnschedulable",
                      "PodToleratesNodeTaints", "CheckVolumeBinding")
# v1.16 register_predicates.go: RegisterMandatoryFitPredicate — run whatever the Policy lists
# (factory/plugins.go getFitPredicateFunctions: "Always include mandatory fit predicates").
MANDATORY_PREDICATES = ("CheckNodeUnschedulable", "PodToleratesNodeTaints")

# Legacy priorities → (v1 score plugin, NodeResourcesFit strategy or None).
PRIORITIES: dict[str, tuple[str, str | None]] = {
    "LeastRequestedPriority": ("NodeResourcesFit", "LeastAllocated"),
    "MostRequestedPriority": ("NodeResourcesFit", "MostAllocated"),
    "RequestedToCapacityRatioPriority": ("NodeResourcesFit", "RequestedToCapacityRatio"),
    "BalancedResourceAllocation": ("NodeResourcesBalancedAllocation", None),
    "NodeAffinityPriority": ("NodeAffinity", None),
    "TaintTolerationPriority": ("TaintToleration", None),
    "InterPodAffinityPriority": ("InterPodAffinity", None),
    "ImageLocalityPriority": ("ImageLocality", None),
    "SelectorSpreadPriority": ("PodTopologySpread", None),
    "EvenPodsSpreadPriority": ("PodTopologySpread", None),
}
PRIORITIES_GONE = {
    "NodePreferAvoidPodsPriority": "NodePreferAvoidPods was removed in Kubernetes 1.24",
    "EqualPriority": "a constant score changes no ranking; it has no v1 plugin",
    "ResourceLimitsPriority": "ResourceLimits was removed in Kubernetes 1.19",
    "ServiceSpreadingPriority": "ServiceSpreading was removed; PodTopologySpread's default constraints replace it",
}
DEFAULT_PRIORITIES = (("SelectorSpreadPriority", 1), ("InterPodAffinityPriority", 1),
                      ("LeastRequestedPriority", 1), ("BalancedResourceAllocation", 1),
                      ("NodePreferAvoidPodsPriority", 10000), ("NodeAffinityPriority", 1),
                      ("TaintTolerationPriority", 1), ("ImageLocalityPriority", 1))
MAX_WEIGHT = (2**63 - 1) // 10  # schedulerapi.MaxWeight = MaxInt64 / MaxPriority (v1.16)
DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def dialect_of(doc: Document) -> str:
    """`Policy`, `v1`, `v1beta1`, `v1beta2` or `v1beta3`; InputError for anything else."""
    body = doc.body
    if body.get("kind") == "Policy":
        return "Policy"
    api = str(body.get("apiVersion", ""))
    group, _, version = api.rpartition("/")
    if group == GROUP and version in (*BETA_VERSIONS, "v1"):
        return version
    raise InputError(f'unsupported scheduler configuration apiVersion "{api}" (supported: {V1}, '
                     + ", ".join(f"{GROUP}/{v}" for v in BETA_VERSIONS) + ", and kind: Policy)",
                     file=doc.source, obj=_obj(doc), field="apiVersion")


def is_legacy_dialect(doc: Document) -> bool:
    """Whether the document is a legacy Policy, scored on the pre-1.17 0..10 scale by default."""
    return doc.body.get("kind") == "Policy"


def to_v1(doc: Document) -> tuple[dict[str, Any], list[str]]:
    """The equivalent v1 KubeSchedulerConfiguration body and a note for every inexact choice."""
    dialect = dialect_of(doc)
    notes: list[str] = []
    if dialect == "Policy":
        body = _policy_to_v1(doc, notes)
    elif dialect == "v1":
        body = copy.deepcopy(doc.body)
    else:
        body = _beta_to_v1(doc, dialect, notes)
    return body, notes


# ---------------------------------------------------------------- helpers


def _obj(doc: Document) -> str:
    return str(doc.body.get("kind") or "KubeSchedulerConfiguration")


def _list(value: Any, doc: Document, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {type(value).__name__}", file=doc.source, obj=_obj(doc),
                         field=field)
    return value


def _map(value: Any, doc: Document, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"expected a mapping, got {type(value).__name__}", file=doc.source,
                         obj=_obj(doc), field=field)
    return value


def _int(value: Any, doc: Document, field: str, default: int = 0) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected an integer, got {value!r}", file=doc.source, obj=_obj(doc), field=field)
    return value


def _aggregate(errors: list[str]) -> list[str]:
    """Duplicates removed, order kept (apimachinery's aggregate)."""
    return list(dict.fromkeys(errors))


def _invalid(path: str, value: Any, detail: str) -> str:
    """A field.Invalid error as Go prints it."""
    shown = f'"{value}"' if isinstance(value, str) else value
    return f"{path}: Invalid value: {shown}: {detail}"


def _resources(raw: Any, doc: Document, field: str) -> list[dict[str, Any]]:
    """A `[{name, weight}]` list (v1beta1 ResourceSpec); empty → cpu, memory weight 1; weights not defaulted."""
    items = _list(raw, doc, field)
    out = []
    for i, item in enumerate(items):
        item = _map(item, doc, f"{field}[{i}]")
        unknown = sorted(set(item) - {"name", "weight"})
        if unknown:
            raise InputError(f'unknown field "{unknown[0]}"', file=doc.source, obj=_obj(doc),
                             field=f"{field}[{i}]")
        weight = _int(item.get("weight"), doc, f"{field}[{i}].weight")
        out.append({"name": str(item.get("name", "")), "weight": weight})
    return out or copy.deepcopy(DEFAULT_RESOURCES)


def _shape(raw: Any, doc: Document, field: str, notes: list[str] | None = None) -> list[dict[str, int]]:
    """Shape points `[{utilization, score}]` as integers; an unknown field is refused (strict decoding of
    the beta versions) or, with `notes` (a Policy, decoded leniently by v1.16), noted as ignored."""
    points = []
    for i, item in enumerate(_list(raw, doc, field)):
        item = _map(item, doc, f"{field}[{i}]")
        if notes is None:
            unknown = sorted(set(item) - {"utilization", "score"})
            if unknown:
                raise InputError(f'strict decoding error: unknown field "{unknown[0]}"', file=doc.source,
                                 obj=_obj(doc), field=f"{field}[{i}]")
        else:
            _note_unknown_policy_fields(item, {"utilization", "score"}, f"{field}[{i}]", notes)
        points.append({"utilization": _int(item.get("utilization"), doc, f"{field}[{i}].utilization"),
                       "score": _int(item.get("score"), doc, f"{field}[{i}].score")})
    return points


def _beta_shape_errors(shape: list[dict[str, int]], path: str) -> list[str]:
    """v1beta1 (1.21/1.22) `validateFunctionShape` messages."""
    if not shape:
        return [f"{path}: Required value: at least one point must be specified"]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1]["utilization"] >= shape[i]["utilization"]:
            errs.append(_invalid(f"{path}[{i}].utilization", shape[i]["utilization"],
                                 "utilization values must be sorted in increasing order"))
            break
    for i, p in enumerate(shape):
        if not 0 <= p["utilization"] <= 100:
            errs.append(_invalid(f"{path}[{i}].utilization", p["utilization"], "not in valid range [0, 100]"))
        if not 0 <= p["score"] <= 10:
            errs.append(_invalid(f"{path}[{i}].score", p["score"], "not in valid range [0, 10]"))
    return errs


def _legacy_shape_error(shape: list[dict[str, int]]) -> str | None:
    """v1.16 `NewFunctionShape`: the first problem, in that version's words (typo included)."""
    if not shape:
        return "at least one point must be specified"
    for i in range(1, len(shape)):
        a, b = shape[i - 1]["utilization"], shape[i]["utilization"]
        if a >= b:
            return f"utilization values must be sorted. Utilization[{i - 1}]=={a} >= Utilization[{i}]=={b}"
    for i, p in enumerate(shape):
        if p["utilization"] < 0:
            return f"utilization values must not be less than 0. Utilization[{i}]=={p['utilization']}"
        if p["utilization"] > 100:
            return f"utilization values must not be greater than 100. Utilization[{i}]=={p['utilization']}"
        if p["score"] < 0:
            return f"score values must not be less than 0. Score[{i}]=={p['score']}"
        if p["score"] > 10:
            return f"score valuses not be greater than 10. Score[{i}]=={p['score']}"
    return None


def _v1_resources_note(resources: list[dict[str, Any]], where: str, notes: list[str]) -> None:
    """Weights v1 refuses (above 100) are kept and reported: v1 validation will reject them."""
    for r in resources:
        if r["weight"] > 100:
            notes.append(f"{where}: resource {r['name']} weight {r['weight']} is above v1's limit of 100; "
                         "kept as is, so v1 refuses it (scale the weights down by a common factor)")


# ---------------------------------------------------------------- v1beta1 / v1beta2 / v1beta3


def _beta_to_v1(doc: Document, version: str, notes: list[str]) -> dict[str, Any]:
    body = copy.deepcopy(doc.body)
    body["apiVersion"] = V1
    for key in ("healthzBindAddress", "metricsBindAddress"):
        if key in body:
            notes.append(f"{key}: {body.pop(key)!r} dropped: v1 has no such field (health and metrics are "
                         "served on kube-scheduler's --secure-port)")
    profiles = body.get("profiles")
    if profiles is not None and not isinstance(profiles, list):
        raise InputError(f"expected a list of profiles, got {type(profiles).__name__} (is `- ` missing "
                         "before the profile's first field?)", file=doc.source, obj=_obj(doc), field="profiles")
    if not profiles:
        profiles = body["profiles"] = [{}]
    errors: list[str] = []
    for i, prof in enumerate(profiles):
        prof = _map(prof, doc, f"profiles[{i}]")
        profiles[i] = _beta_profile(doc, version, prof, f"profiles[{i}]", notes, errors)
    if errors:
        raise ConfigError(_aggregate(errors), file=doc.source)
    if version in ("v1beta1", "v1beta2"):
        notes.append(f"{version} defaults were kept where v1's differ: TaintToleration, NodeAffinity, "
                     "PodTopologySpread and InterPodAffinity score with weight 1 (v1 defaults 3, 2, 2, 2)")
    return body


def _refuse_unknown(value: dict[str, Any], known: set[str], doc: Document, path: str) -> None:
    """The beta versions decode strictly, as v1 does: an unknown field is kube-scheduler's decoding error."""
    unknown = sorted(str(k) for k in set(value) - known)
    if unknown:
        raise ConfigError([f'strict decoding error: unknown field "{path}.{unknown[0]}"'], file=doc.source)


def _beta_profile(doc: Document, version: str, prof: dict[str, Any], path: str, notes: list[str],
                  errors: list[str]) -> dict[str, Any]:
    """One profile: rename removed plugins, fold the v1beta1 strategies into NodeResourcesFit."""
    plugins = _map(prof.get("plugins"), doc, f"{path}.plugins")
    configs = _list(prof.get("pluginConfig"), doc, f"{path}.pluginConfig")
    args: dict[str, dict[str, Any]] = {}
    for j, cfg in enumerate(configs):
        cfg = _map(cfg, doc, f"{path}.pluginConfig[{j}]")
        _refuse_unknown(cfg, {"name", "args"}, doc, f"{path}.pluginConfig[{j}]")
        args[str(cfg.get("name", ""))] = _map(cfg.get("args"), doc, f"{path}.pluginConfig[{j}].args")
    score = _map(plugins.get("score"), doc, f"{path}.plugins.score")
    _refuse_unknown(score, {"enabled", "disabled"}, doc, f"{path}.plugins.score")
    for key in ("enabled", "disabled"):
        for j, plugin in enumerate(_list(score.get(key), doc, f"{path}.plugins.score.{key}")):
            _refuse_unknown(_map(plugin, doc, f"{path}.plugins.score.{key}[{j}]"), {"name", "weight"}, doc,
                            f"{path}.plugins.score.{key}[{j}]")
    enabled = [_map(p, doc, f"{path}.plugins.score.enabled") for p in _list(score.get("enabled"), doc,
                                                                              f"{path}.plugins.score.enabled")]
    disabled = {str(_map(p, doc, f"{path}.plugins.score.disabled").get("name", ""))
                for p in _list(score.get("disabled"), doc, f"{path}.plugins.score.disabled")}
    all_off = "*" in disabled

    fit_args = _fit_args_beta(doc, version, args, path, notes, errors)
    strategy_weight: tuple[str, int] | None = None
    if version == "v1beta1":
        strategy_weight = _v1beta1_strategy(doc, enabled, disabled, path, notes)
        if strategy_weight is not None:
            kind = strategy_weight[0]
            plugin = next(p for p, t in V1BETA1_STRATEGY_PLUGINS.items() if t == kind)
            strategy = _v1beta1_strategy_args(doc, plugin, args.get(plugin), path, notes, errors)
            if plugin in args or kind != "LeastAllocated":  # else v1's default is the same
                fit_args["scoringStrategy"] = strategy
        for plugin in V1BETA1_STRATEGY_PLUGINS:
            chosen = strategy_weight and V1BETA1_STRATEGY_PLUGINS[plugin] == strategy_weight[0]
            if plugin in args and not chosen:
                _v1beta1_strategy_args(doc, plugin, args[plugin], path, [], errors)  # still validated
                notes.append(f"{path}: args of {plugin} are not used (the plugin is not enabled in "
                             "plugins.score); kube-scheduler ignored them, so they are not converted")
    renamed = V1BETA1_STRATEGY_PLUGINS if version == "v1beta1" else {}
    new_enabled = []
    for p in enabled:
        name = str(p.get("name", ""))
        if name in renamed or name in REMOVED_PLUGINS:
            if name in REMOVED_PLUGINS:
                notes.append(f"{path}: score plugin {name} dropped: {REMOVED_PLUGINS[name]}")
            continue
        new_enabled.append(p)
    new_disabled = [d for d in disabled if d not in renamed and d not in REMOVED_PLUGINS]
    if version == "v1beta1":
        if strategy_weight is None:
            if not all_off:
                new_disabled.append("NodeResourcesFit")
        elif strategy_weight[1] != 1 or all_off:
            new_enabled.append({"name": "NodeResourcesFit", "weight": strategy_weight[1]})
    if version in ("v1beta1", "v1beta2") and not all_off:
        named = {str(p.get("name", "")) for p in new_enabled}
        for name, w in BETA_DEFAULT_SCORE_WEIGHTS.items():
            if name not in named and name not in disabled:
                new_enabled.append({"name": name, "weight": w})
    _drop_removed_elsewhere(plugins, path, notes)
    if new_enabled or new_disabled:
        new_score: dict[str, Any] = {}
        if new_disabled:
            new_score["disabled"] = [{"name": d} for d in sorted(new_disabled, key=_order_key)]
        if new_enabled:
            new_score["enabled"] = sorted(new_enabled, key=lambda p: _order_key(str(p.get("name", ""))))
        plugins["score"] = new_score
    else:
        plugins.pop("score", None)
    out = dict(prof)
    if plugins:
        out["plugins"] = plugins
    new_configs = []
    for cfg in configs:
        name = str(cfg.get("name", ""))
        if name in renamed or name == "NodeResourcesFit" or name in REMOVED_PLUGINS:
            continue
        new_configs.append(cfg)
    if fit_args:
        new_configs.insert(0, {"name": "NodeResourcesFit", "args": fit_args})
    for name in REMOVED_PLUGINS:
        if name in args:
            notes.append(f"{path}: pluginConfig of {name} dropped: {REMOVED_PLUGINS[name]}")
    if new_configs:
        out["pluginConfig"] = new_configs
    else:
        out.pop("pluginConfig", None)
    return out


def _order_key(name: str) -> tuple[int, str]:
    return (V1_PLUGIN_ORDER.index(name) if name in V1_PLUGIN_ORDER else len(V1_PLUGIN_ORDER), name)


def _drop_removed_elsewhere(plugins: dict[str, Any], path: str, notes: list[str]) -> None:
    """Removed plugins named at extension points other than score (multiPoint too) are dropped, each with a note."""
    for point in (*EXTENSION_POINTS, "multiPoint"):
        if point == "score" or not isinstance(plugins.get(point), dict):
            continue
        for key in ("enabled", "disabled"):
            items = plugins[point].get(key)
            if not isinstance(items, list):
                continue
            keep = [p for p in items if not (isinstance(p, dict) and p.get("name") in REMOVED_PLUGINS)]
            for p in items:
                if isinstance(p, dict) and p.get("name") in REMOVED_PLUGINS:
                    what = "plugin" if key == "enabled" else "disabled entry for"
                    notes.append(f"{path}: {point} {what} {p['name']} dropped: {REMOVED_PLUGINS[p['name']]}")
            plugins[point][key] = keep


def _v1beta1_strategy(doc: Document, enabled: list[dict[str, Any]], disabled: set[str], path: str,
                      notes: list[str]) -> tuple[str, int] | None:
    """Which v1beta1 resource strategy scores (type, weight): the default LeastAllocated unless
    disabled, then each enabled one; v1 keeps one (the last enabled) and notes the rest."""
    active: list[tuple[str, str, int]] = []
    if "*" not in disabled and "NodeResourcesLeastAllocated" not in disabled:
        active.append(("NodeResourcesLeastAllocated", "LeastAllocated", 1))
    for i, p in enumerate(enabled):
        name = str(p.get("name", ""))
        if name in V1BETA1_STRATEGY_PLUGINS:
            weight = _int(p.get("weight"), doc, f"{path}.plugins.score.enabled[{i}].weight") or 1
            active = [a for a in active if a[0] != name]
            active.append((name, V1BETA1_STRATEGY_PLUGINS[name], weight))
    if not active:
        return None
    if len(active) > 1:
        names = ", ".join(a[0] for a in active)
        notes.append(f"{path}: {names} all scored in v1beta1 but v1's NodeResourcesFit has a single "
                     f"scoring strategy; kept {active[-1][0]} (weight {active[-1][2]}), dropped the others")
    return active[-1][1], active[-1][2]


def _v1beta1_strategy_args(doc: Document, plugin: str, raw: dict[str, Any] | None, path: str,
                           notes: list[str], errors: list[str]) -> dict[str, Any]:
    """v1beta1 args of a resource strategy plugin → v1 `scoringStrategy`, validated as v1beta1 did."""
    raw = raw or {}
    field = f"{path}.pluginConfig[{plugin}].args"
    kind = V1BETA1_STRATEGY_PLUGINS[plugin]
    allowed = {"resources", "shape"} if kind == "RequestedToCapacityRatio" else {"resources"}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise InputError(f'strict decoding error: unknown field "{unknown[0]}"', file=doc.source,
                         obj=_obj(doc), field=field)
    is_rtcr = kind == "RequestedToCapacityRatio"
    resources = _resources(raw.get("resources"), doc, f"{field}.resources")
    out: dict[str, Any] = {"type": kind, "resources": resources}
    if is_rtcr:
        shape = _shape(raw.get("shape"), doc, f"{field}.shape")
        errors.extend(_beta_shape_errors(shape, "shape"))
        for i, r in enumerate(resources):
            if r["weight"] < 1:
                errors.append(_invalid(f"resources[{i}].weight", r["weight"],
                                       f"resource weight of {r['name']} not in valid range [1, inf)"))
        out["requestedToCapacityRatio"] = {"shape": shape}
    else:
        for i, r in enumerate(resources):
            if not 0 < r["weight"] <= 100:
                errors.append(_invalid(f"resources[{i}].weight", r["weight"],
                                       f"resource weight of {r['name']} not in valid range (0, 100]"))
    _v1_resources_note(resources, f"{path}: {plugin}", notes)
    return out


def _fit_args_beta(doc: Document, version: str, args: dict[str, dict[str, Any]], path: str,
                   notes: list[str], errors: list[str]) -> dict[str, Any]:
    """NodeResourcesFit args: v1beta1 knew only ignoredResources(Groups); later ones are v1's form."""
    raw = dict(args.get("NodeResourcesFit") or {})
    if version == "v1beta1":
        unknown = sorted(set(raw) - {"ignoredResources", "ignoredResourceGroups"})
        if unknown:
            raise InputError(f'strict decoding error: unknown field "{unknown[0]}"', file=doc.source,
                             obj=_obj(doc), field=f"{path}.pluginConfig[NodeResourcesFit].args")
    return raw


# ---------------------------------------------------------------- legacy Policy


def _policy_to_v1(doc: Document, notes: list[str]) -> dict[str, Any]:
    body = doc.body
    known = {"apiVersion", "kind", "predicates", "priorities", "extenders", "extenderConfigs",
             "hardPodAffinitySymmetricWeight", "alwaysCheckAllPredicates"}
    _note_unknown_policy_fields(body, known, "", notes)
    errors: list[str] = []
    scores = _policy_priorities(doc, notes, errors)
    filters = _policy_predicates(doc, notes, errors)
    hard = body.get("hardPodAffinitySymmetricWeight")
    if hard is not None:
        hard = _int(hard, doc, "hardPodAffinitySymmetricWeight")
        if not 0 <= hard <= 100:
            errors.append(_invalid("hardPodAffinitySymmetricWeight", hard, "not in valid range [0-100]"))
    if errors:
        raise ConfigError(_aggregate(errors), file=doc.source)
    for key in ("extenders", "extenderConfigs"):
        if body.get(key):
            notes.append(f"Policy {key}: not converted; kubefit does not simulate scheduler extenders "
                         "(copy them to v1 `extenders` by hand: httpTimeout becomes a duration string)")
    if body.get("alwaysCheckAllPredicates"):
        notes.append("Policy alwaysCheckAllPredicates: v1 filter plugins always run in order and stop at "
                     "the first failure; the flag has no v1 equivalent")
    notes.append("legacy Policy: scored on the pre-1.17 0..10 scale by default (kubefit --scoring "
                 "legacy); priority weights multiply 0..100 scores in v1")
    return _policy_body(filters, scores, hard)


def _note_unknown_policy_fields(item: dict[str, Any], known: set[str], path: str, notes: list[str]) -> None:
    """v1.16 decoded a Policy leniently (unknown fields ignored); kubefit says so for each, never silently."""
    for key in sorted(str(k) for k in set(item) - known):
        notes.append(f'Policy field "{f"{path}.{key}" if path else key}" is not part of the Policy API; ignored')


def _policy_priorities(doc: Document, notes: list[str], errors: list[str]) -> dict[str, Any]:
    """Priorities → {plugin: weight}, plus `_fit` (scoringStrategy) when a resource priority is kept."""
    raw = doc.body.get("priorities")
    items: list[Any]
    if raw is None:
        items = [{"name": n, "weight": w} for n, w in DEFAULT_PRIORITIES]
        notes.append("Policy has no priorities: v1.16's default priorities were used")
    else:
        items = _list(raw, doc, "priorities")
    weights: dict[str, int] = {}
    strategies: list[tuple[str, int, dict[str, Any]]] = []
    for i, item in enumerate(items):
        item = _map(item, doc, f"priorities[{i}]")
        _note_unknown_policy_fields(item, {"name", "weight", "argument"}, f"priorities[{i}]", notes)
        name = str(item.get("name", ""))
        weight = _int(item.get("weight"), doc, f"priorities[{i}].weight")
        if weight <= 0 or weight >= MAX_WEIGHT:
            errors.append(f"Priority {name} should have a positive weight applied to it or it has overflown")
        argument = _map(item.get("argument"), doc, f"priorities[{i}].argument")
        _note_unknown_policy_fields(argument, {"serviceAntiAffinity", "labelPreference",
                                               "requestedToCapacityRatioArguments"}, f"priorities[{i}].argument",
                                    notes)
        if name in PRIORITIES_GONE:
            notes.append(f"priority {name} (weight {weight}) dropped: {PRIORITIES_GONE[name]}")
            continue
        if "serviceAntiAffinity" in argument or "labelPreference" in argument:
            notes.append(f"custom priority {name} ({next(iter(argument))}) dropped: ServiceAntiAffinity and "
                         "NodeLabel priorities were removed in Kubernetes 1.23")
            continue
        if name not in PRIORITIES and "requestedToCapacityRatioArguments" not in argument:
            errors.append(f"invalid priority name {name} specified - no corresponding function found")
            continue
        plugin, strategy = PRIORITIES.get(name, ("NodeResourcesFit", "RequestedToCapacityRatio"))
        if name in ("SelectorSpreadPriority",):
            notes.append(f"priority {name} → PodTopologySpread with its system default constraints "
                         "(not simulated by kubefit)")
        if strategy is not None:
            args = _policy_strategy(doc, name, strategy, argument, f"priorities[{i}]", notes, errors)
            strategies.append((name, weight, args))
            continue
        if plugin in weights:
            notes.append(f"priority {name}: {plugin} already scores; weights added ({weights[plugin]} + {weight})")
        weights[plugin] = weights.get(plugin, 0) + weight
    if strategies:
        if len(strategies) > 1:
            names = ", ".join(s[0] for s in strategies)
            notes.append(f"priorities {names} all scored in v1.16 but v1's NodeResourcesFit has a single "
                         f"scoring strategy; kept {strategies[0][0]} (weight {strategies[0][1]}), dropped the others")
        weights["NodeResourcesFit"] = strategies[0][1]
        return {"weights": weights, "fit": strategies[0][2]}
    return {"weights": weights, "fit": None}


def _policy_strategy(doc: Document, name: str, strategy: str, argument: dict[str, Any], path: str,
                     notes: list[str], errors: list[str]) -> dict[str, Any]:
    """A resource priority → v1 scoringStrategy (Least/Most on cpu+memory, RTCR from its arguments)."""
    if strategy != "RequestedToCapacityRatio":
        return {"type": strategy, "resources": copy.deepcopy(DEFAULT_RESOURCES)}
    rargs = _map(argument.get("requestedToCapacityRatioArguments"), doc,
                 f"{path}.argument.requestedToCapacityRatioArguments")
    field = f"{path}.argument.requestedToCapacityRatioArguments"
    _note_unknown_policy_fields(rargs, {"shape", "utilizationShape", "resources"}, field, notes)
    if "shape" in rargs:
        shape = _shape(rargs["shape"], doc, f"{field}.shape", notes)
        if "utilizationShape" in rargs:
            notes.append(f"{name}: both shape and utilizationShape given; shape used (v1.16 read only shape)")
    elif "utilizationShape" in rargs:
        shape = _shape(rargs["utilizationShape"], doc, f"{field}.utilizationShape", notes)
        notes.append(f"{name}: utilizationShape is the v1.15 form (cpu and memory only); converted to shape")
    else:
        shape = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
        notes.append(f"{name}: no shape given; v1.16's default shape {{0,10}},{{100,0}} used")
    problem = _legacy_shape_error(shape)
    if problem:
        errors.append(f"invalid RequestedToCapacityRatioPriority arguments: {problem}")
    resources = []
    for i, r in enumerate(_list(rargs.get("resources"), doc, f"{field}.resources")):
        r = _map(r, doc, f"{field}.resources[{i}]")
        _note_unknown_policy_fields(r, {"name", "weight"}, f"{field}.resources[{i}]", notes)
        rname = str(r.get("name", ""))
        weight = _int(r.get("weight"), doc, f"{field}.resources[{i}].weight")
        if weight == 0:
            weight = 1  # v1.16 buildScoringFunctionShapeFromRequestedToCapacityRatioArguments
        if weight < 1:
            errors.append(f"resource {rname} weight {weight} must not be less than 1")
        if rname.lower() in ("cpu", "memory") and rname not in ("cpu", "memory"):
            notes.append(f'{name}: resource name "{rname}" is not "{rname.lower()}" (names are case-sensitive); '
                         "v1.16 scored a resource the node lacks as fully used, v1 ignores it")
        if any(r["name"] == rname for r in resources):
            notes.append(f"{name}: resource {rname} listed twice; v1.16 kept the last weight ({weight}) in its map")
            resources = [r for r in resources if r["name"] != rname]
        resources.append({"name": rname, "weight": weight})
    if not resources:
        resources = copy.deepcopy(DEFAULT_RESOURCES)
    _v1_resources_note(resources, name, notes)
    return {"type": strategy, "resources": resources, "requestedToCapacityRatio": {"shape": shape}}


def _policy_predicates(doc: Document, notes: list[str], errors: list[str]) -> list[str]:
    """Predicates → v1 filter plugins, in v1's order."""
    raw = doc.body.get("predicates")
    if raw is None:
        items: list[Any] = [{"name": n} for n in DEFAULT_PREDICATES]
        notes.append("Policy has no predicates: v1.16's default predicates were used")
    else:
        items = _list(raw, doc, "predicates")
    plugins: set[str] = set()
    for i, item in enumerate(items):
        item = _map(item, doc, f"predicates[{i}]")
        _note_unknown_policy_fields(item, {"name", "argument"}, f"predicates[{i}]", notes)
        name = str(item.get("name", ""))
        argument = _map(item.get("argument"), doc, f"predicates[{i}].argument")
        _note_unknown_policy_fields(argument, {"serviceAffinity", "labelsPresence"}, f"predicates[{i}].argument",
                                    notes)
        if name in PREDICATES_GONE:
            notes.append(f"predicate {name} dropped: {PREDICATES_GONE[name]}")
        elif "serviceAffinity" in argument or "labelsPresence" in argument:
            notes.append(f"custom predicate {name} ({next(iter(argument))}) dropped: ServiceAffinity and "
                         "NodeLabel were removed in Kubernetes 1.23")
        elif name in PREDICATES:
            plugins.update(PREDICATES[name])
        else:
            errors.append(f'Invalid predicate name "{name}" specified - no corresponding function found')
    _add_mandatory(plugins, notes)
    return sorted(plugins, key=_order_key)


def _add_mandatory(plugins: set[str], notes: list[str]) -> None:
    """v1.16 always ran the mandatory predicates, listed or not; their v1 filters are kept."""
    for name in MANDATORY_PREDICATES:
        (plugin,) = PREDICATES[name]
        if plugin not in plugins:
            notes.append(f"predicate {name} is mandatory in v1.16 (run even when the Policy does not list it); "
                         f"kept as the {plugin} filter")
            plugins.add(plugin)


def _policy_body(filters: list[str], scores: dict[str, Any], hard: int | None) -> dict[str, Any]:
    """One explicit v1 profile: multiPoint disables '*' and enables exactly the Policy's plugins."""
    weights: dict[str, int] = scores["weights"]
    names = sorted(set(filters) | set(weights), key=_order_key)
    enabled: list[dict[str, Any]] = [{"name": "PrioritySort"}]
    for n in names:
        enabled.append({"name": n, "weight": weights[n]} if n in weights else {"name": n})
    enabled.append({"name": "DefaultBinder"})
    plugins: dict[str, Any] = {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}
    not_filter = [n for n in names if n in weights and n not in filters and n in _FILTERS]
    not_score = [n for n in names if n not in weights and n in _SCORERS]
    if not_filter:
        plugins["filter"] = {"disabled": [{"name": n} for n in not_filter]}
    if not_score:
        plugins["score"] = {"disabled": [{"name": n} for n in not_score]}
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": plugins}
    configs = []
    if scores["fit"] is not None:
        configs.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": scores["fit"]}})
    if hard is not None and "InterPodAffinity" in names:
        configs.append({"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": hard}})
    if configs:
        profile["pluginConfig"] = configs
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                      "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                      "VolumeZone", "PodTopologySpread", "InterPodAffinity"})
_SCORERS = frozenset({"TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                      "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation",
                      "ImageLocality"})


def print_notes(notes: list[str]) -> None:
    """Each note on stderr, as `note: …`."""
    from kubefit.errors import escape_control

    for n in notes:
        print(f"note: {escape_control(n)}", file=sys.stderr)


# ---------------------------------------------------------------- out-of-tree plugins


def out_of_tree_plugins(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(profile path, name) of every plugin a v1 body names that kube-scheduler v1.34 does not build in."""
    from kubefit.scheduler.config.types import PLUGIN_EXTENSIONS

    found: list[tuple[str, str]] = []
    for i, prof in enumerate(_listed(body.get("profiles"))):
        if not isinstance(prof, dict):
            continue
        for name in _plugin_names(prof):
            if name not in PLUGIN_EXTENSIONS and name != "*" and (f"profiles[{i}]", name) not in found:
                found.append((f"profiles[{i}]", name))
    return found


def _plugin_names(prof: dict[str, Any]) -> list[str]:
    """Names a profile enables or disables at any extension point, then those of its pluginConfig."""
    names = []
    plugins = prof.get("plugins") if isinstance(prof.get("plugins"), dict) else {}
    for point in (*EXTENSION_POINTS, "multiPoint"):
        sets = plugins.get(point) if isinstance(plugins.get(point), dict) else {}
        for key in ("enabled", "disabled"):
            names += [str(p.get("name", "")) for p in _listed(sets.get(key)) if isinstance(p, dict)]
    return names + [str(c.get("name", "")) for c in _listed(prof.get("pluginConfig")) if isinstance(c, dict)]


def _listed(value: Any) -> list:
    """A list field's items; nothing when it is no list (v1 validation, which runs next, names it)."""
    return value if isinstance(value, list) else []


def without_plugins(body: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """A copy of the v1 body with the named plugins removed from every plugin list and pluginConfig."""
    out = copy.deepcopy(body)
    for prof in _listed(out.get("profiles")):
        if not isinstance(prof, dict):
            continue
        plugins = prof.get("plugins")
        for sets in plugins.values() if isinstance(plugins, dict) else ():  # else: v1 validation names it
            for key in ("enabled", "disabled"):
                if isinstance(sets, dict) and isinstance(sets.get(key), list):
                    sets[key] = [p for p in sets[key] if not _named(p, names)]
        if isinstance(prof.get("pluginConfig"), list):
            prof["pluginConfig"] = [c for c in prof["pluginConfig"] if not _named(c, names)]
    return out


def _named(entry: Any, names: set[str]) -> bool:
    """Whether a plugin list's or pluginConfig's entry names one of `names` (a name that is no string names
    none: v1 validation, which runs next, refuses it by its path)."""
    return isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"] in names
