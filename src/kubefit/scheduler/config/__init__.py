"""Scheduler configuration → profiles: decoding, defaulting and validation (SPEC-kube-scheduler §8–9).

Split as kube-scheduler splits `pkg/scheduler/apis/config`: `types` (the types and the plugin registry),
`defaults` (v1 defaulting), `validation`, `profile` (what `NewFramework` checks and builds), `decoding`
(strict decoding of a v1 document and the way back to v1) and `dialects` (v1beta1..v1beta3 and the
legacy Policy, converted to v1). This module holds the entry points and names the public parts.

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

import importlib
from dataclasses import replace

from kubefit.errors import ConfigError, InputError
from kubefit.k8s.version import KubeVersion
from kubefit.manifests.documents import Document
from kubefit.scheduler.config.decoding import (
    args_to_v1,
    check_args,
    decode_plugin_args,
    decode_v1,
    describe,
)
from kubefit.scheduler.config.defaults import (
    PluginList,
    default_args,
    merge_plugin_set,
    merged_plugins,
)
from kubefit.scheduler.config.profile import (
    NIL_DEREFERENCE,
    construct_plugin,
    expand_extension_points,
    score_weights,
)
from kubefit.scheduler.config.scheme import DEFAULT_MULTIPOINT, Scheme, scheme_for
from kubefit.scheduler.config.types import (
    ARGS_SCHEMAS,
    CONFIG_SCHEMA,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    FRAMEWORK_ORDER,
    GO_PLUGIN_TYPE,
    GROUP,
    KIND,
    PLUGIN_EXTENSIONS,
    SCORING_TYPES,
    SIMULATED_PLUGINS,
    V1,
    BalancedAllocationArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    Profile,
    ResourceWeight,
    SchedulerConfiguration,
    ScorePlugin,
    ShapePoint,
)
from kubefit.scheduler.config.validation import (
    CONFIG_ARGS_VALIDATORS,
    CONSTRUCTOR_VALIDATORS,
    INVALID_V1_PLUGINS,
    validate_balanced_args,
    validate_default_preemption_args,
    validate_fit_args,
    validate_inter_pod_affinity_args,
    validate_node_affinity_args,
    validate_pod_topology_spread_args,
    validate_shape,
    validate_volume_binding_args,
)

__all__ = [
    # types (types.go, types_pluginargs.go) and the plugin registry
    "DEFAULT_SCHEDULER_NAME", "EXTENSION_POINTS", "FRAMEWORK_ORDER", "GO_PLUGIN_TYPE", "GROUP", "KIND",
    "PLUGIN_EXTENSIONS", "SCORING_TYPES", "SIMULATED_PLUGINS", "V1", "BalancedAllocationArgs", "NodeAffinityArgs",
    "NodeResourcesFitArgs", "Profile", "ResourceWeight", "SchedulerConfiguration", "ScorePlugin", "ShapePoint",
    # defaults (v1/defaults.go, default_plugins.go)
    "DEFAULT_MULTIPOINT", "PluginList", "default_args", "merge_plugin_set", "merged_plugins",
    # validation (validation/validation.go, validation_pluginargs.go)
    "CONFIG_ARGS_VALIDATORS", "CONSTRUCTOR_VALIDATORS", "INVALID_V1_PLUGINS", "validate_balanced_args",
    "validate_default_preemption_args", "validate_fit_args", "validate_inter_pod_affinity_args",
    "validate_node_affinity_args", "validate_pod_topology_spread_args", "validate_shape",
    "validate_volume_binding_args",
    # building a profile (NewFramework)
    "NIL_DEREFERENCE", "construct_plugin", "expand_extension_points", "score_weights",
    # the configuration API of each version
    "Scheme", "scheme_for",
    # decoding (scheme, strict decoding) and the entry points
    "ARGS_SCHEMAS", "CONFIG_SCHEMA", "args_to_v1", "check_args", "decode_plugin_args", "decode_v1",
    "default_configuration", "describe", "load_configuration", "verdict",
]

def default_configuration(version: KubeVersion | None = None) -> SchedulerConfiguration:
    """kube-scheduler's configuration when none is given (one default-scheduler profile), in `version`
    (None: `kubefit.k8s.version.default_version()`)."""
    config = decode_v1({"apiVersion": V1, "kind": KIND}, "<defaults>", version)
    return SchedulerConfiguration(profiles=config.profiles, percentage_of_nodes_to_score=0, source=None,
                                  dialect="default", parallelism=16, effective=config.effective,
                                  version=config.version)


def load_configuration(doc: Document | None, version: KubeVersion | None = None) -> SchedulerConfiguration:
    """Decode, default and validate a configuration document (None = kube-scheduler's defaults) as
    kube-scheduler of `version` does (None: `kubefit.k8s.version.default_version()`)."""
    if doc is None:
        return default_configuration(version)
    body = doc.body
    if not isinstance(body, dict):
        raise InputError("a scheduler configuration must be an object", file=doc.source)
    kind = body.get("kind")
    api_version = body.get("apiVersion")
    if kind == KIND and api_version == V1:
        return decode_v1(body, doc.source, version)
    try:
        dialects = importlib.import_module("kubefit.scheduler.config.dialects")
    except ImportError:
        dialects = None
    if dialects is None or not hasattr(dialects, "to_v1"):
        raise InputError(f"unsupported apiVersion {api_version!r} for {kind} (kubefit reads {V1})",
                         file=doc.source, obj=doc.label, field="apiVersion")
    v1_body, notes = dialects.to_v1(doc)
    config = decode_v1(v1_body, doc.source, version)
    dialect = "Policy" if kind == "Policy" else str(api_version or "").rsplit("/", 1)[-1]
    legacy = bool(getattr(dialects, "is_legacy_dialect", lambda _d: False)(doc))
    return replace(config, dialect=dialect, notes=(*notes, *config.notes), legacy_scoring=legacy)


def verdict(doc: Document, version: KubeVersion | None = None) -> dict:
    """Whether kube-scheduler of `version` accepts the configuration `doc`: `{valid, messages, notes, dialect}`
    (its own messages when it refuses it; `kubefit config validate`, `kubefit check`'s configValid)."""
    try:
        config = load_configuration(doc, version)
    except ConfigError as exc:
        return {"valid": False, "messages": list(exc.errors), "notes": []}
    return {"valid": True, "messages": [], "notes": list(config.notes), "dialect": config.dialect}
