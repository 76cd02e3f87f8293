"""Decoding a `kubescheduler.config.k8s.io/v1` document as kube-scheduler's scheme does: strict decoding
(unknown fields, types), then defaulting, validation and the profiles' construction; and the way back
to v1 (`args_to_v1`, the effective configuration `config view` prints)."""

from __future__ import annotations

from typing import Any

from kubefit.errors import ConfigError, InputError
from kubefit.k8s.duration import DurationError, parse_duration
from kubefit.k8s.version import KubeVersion, default_version
from kubefit.scheduler.config.defaults import (
    DefaultedProfile,
    PluginList,
    default_args,
    default_profile,
    default_top_level,
)
from kubefit.scheduler.config.profile import build_profile, explain_crash, profile_notes, without_args_of
from kubefit.scheduler.config.scheme import Scheme, scheme_for
from kubefit.scheduler.config.types import (
    EXTENSION_POINTS,
    GROUP,
    KIND,
    PLACEMENT_POINTS,
    V1,
    BalancedAllocationArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    Profile,
    SchedulerConfiguration,
)
from kubefit.scheduler.config.validation import validate_configuration

# --------------------------------------------------------------------------- strict decoding

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
        if kind == "duration":  # metav1.Duration: a string `time.ParseDuration` reads (`Duration.UnmarshalJSON`)
            if isinstance(value, str):
                try:
                    parse_duration(value)
                except DurationError as exc:
                    raise InputError(str(exc), file=self.source, obj=self.obj, field=self._field(path)) from None
                return
            kind = "str"
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

def decode_plugin_args(name: str, raw: Any, *, source: str = "<args>", field_path: str = "args",
                       scheme: Scheme | None = None) -> Any:
    """Strictly decode and default one plugin's v1 args (`None` = absent); unknown args stay a raw dict.

    Raises `ConfigError` with kube-scheduler's strict decoding message for unknown fields
    (relative form `strict decoding error: decoding args for plugin X: ...`).
    """
    scheme = scheme or scheme_for()
    unknown = check_args(name, raw, source=source, field_path=field_path, scheme=scheme)
    if unknown:
        raise ConfigError([_args_strict_error(name, unknown)], file=source)
    return default_args(name, raw, scheme)


def check_args(name: str, raw: Any, *, source: str, field_path: str, scheme: Scheme | None = None) -> list[str]:
    """Unknown field paths of plugin args (type errors raise `InputError`)."""
    schema = (scheme or scheme_for()).args_schemas.get(name)
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


def describe(config: SchedulerConfiguration) -> dict[str, Any]:
    """The configuration as a result names it (`inputs.configuration`): its file (or kube-scheduler's
    defaults) and, per profile, the Score plugins with their weights and NodeResourcesFit's scoring
    strategy in its v1 form (type, resource weights, shape), as `config view` prints them."""
    profiles = []
    for p in config.profiles:
        d: dict[str, Any] = {"schedulerName": p.scheduler_name,
                             "scorePlugins": {s.name: s.weight for s in p.score_plugins}}
        fit = p.plugin_args.get("NodeResourcesFit")
        if fit is not None:
            d["scoringStrategy"] = args_to_v1(fit)["scoringStrategy"]
        percentage = p.percentage_of_nodes_to_score
        if percentage is None:
            percentage = config.percentage_of_nodes_to_score
        if percentage:
            d["percentageOfNodesToScore"] = percentage
        if p.not_simulated:
            d["notSimulated"] = list(p.not_simulated)
        profiles.append(d)
    return {"source": config.source or "kube-scheduler defaults", "dialect": config.dialect, "profiles": profiles}


# --------------------------------------------------------------------------- a v1 document

def decode_document(body: dict[str, Any], source: str,
                    scheme: Scheme | None = None) -> tuple[list[DefaultedProfile], dict[str, Any]]:
    """Strict decoding and v1 defaulting; returns the profiles and the defaulted top-level fields."""
    scheme = scheme or scheme_for()
    obj = KIND
    dec = _Decoder(source, obj)
    dec.walk(body, scheme.config_schema, "")
    strict = _unknown(dec.unknown)
    raw_profiles = body.get("profiles") or [{}]
    for i, prof in enumerate(raw_profiles):
        for j, pc in enumerate((prof or {}).get("pluginConfig") or []):
            name = str(pc.get("name") or "")
            unknown = check_args(name, pc.get("args"), source=source,
                                 field_path=f"profiles[{i}].pluginConfig[{j}].args", scheme=scheme)
            if unknown:
                strict.append(f"decoding .profiles[{i}].pluginConfig[{j}]: strict decoding error: "
                              + _args_strict_error(name, unknown))
    if strict:
        raise ConfigError([_strict_message(strict)], file=source)
    profiles = [default_profile(i, prof or {}, single=len(raw_profiles) == 1, scheme=scheme)
                for i, prof in enumerate(raw_profiles)]
    top = default_top_level(body)
    return profiles, top


def decode_v1(body: dict[str, Any], source: str, version: KubeVersion | None = None) -> SchedulerConfiguration:
    """Decode, default and validate a `kubescheduler.config.k8s.io/v1` body as kube-scheduler of `version`
    does (None: `version.default_version()`).

    Refusals are `ConfigError` with kube-scheduler's messages: strict decoding, configuration
    validation (full field paths), then plugin construction (`initializing profiles: creating profile
    for scheduler name …: initializing plugin "X": …`), which is where Fit args are checked.
    """
    version = version or default_version()
    scheme = scheme_for(version)
    profiles, top = decode_document(body, source, scheme)
    messages, refused = validate_configuration(profiles, top, version)
    built: list[Profile] = []
    for prof in profiles:
        if any(p == prof.index for p, _ in refused) and messages:
            # kube-scheduler stops at validation; still report the other plugins' construction errors
            prof = without_args_of(prof, {n for p, n in refused if p == prof.index}, scheme)
        profile, errors = build_profile(prof, scheme)
        messages.extend(f"initializing profiles: creating profile for scheduler name {prof.name}: {e}"
                        for e in errors)
        if profile is not None:
            built.append(profile)
    messages = [explain_crash(m, version) for m in messages]
    if messages:
        raise ConfigError(messages, file=source)
    effective = effective_v1(body, profiles, top)
    notes = [n for prof, profile in zip(profiles, built, strict=True) for n in profile_notes(prof, profile, scheme)]
    if body.get("extenders"):
        notes.append(f"{len(body['extenders'])} scheduler extender(s) configured: extenders are not simulated "
                     f"(their filter and prioritize verbs are ignored)")
    return SchedulerConfiguration(profiles=tuple(built), percentage_of_nodes_to_score=top["percentageOfNodesToScore"],
                                  source=source, dialect="v1", parallelism=top["parallelism"], effective=effective,
                                  notes=tuple(notes), version=version)


def _plugin_list_v1(plugins: PluginList) -> list[dict[str, Any]]:
    return [{"name": n} if w is None else {"name": n, "weight": w} for n, w in plugins]


def effective_v1(body: dict[str, Any], profiles: list[DefaultedProfile], top: dict[str, Any]) -> dict[str, Any]:
    """The defaulted v1 configuration (what `kubefit config view` prints)."""
    out: dict[str, Any] = {"apiVersion": V1, "kind": KIND, "parallelism": top["parallelism"],
                           "percentageOfNodesToScore": top["percentageOfNodesToScore"],
                           "podInitialBackoffSeconds": top["podInitialBackoffSeconds"],
                           "podMaxBackoffSeconds": top["podMaxBackoffSeconds"], "profiles": []}
    for prof in profiles:
        plugins: dict[str, Any] = {}
        for ep in (*EXTENSION_POINTS, *PLACEMENT_POINTS, "multiPoint"):
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
