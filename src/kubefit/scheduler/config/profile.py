"""A profile as `NewFramework` builds it: construct the plugins (their args checked), expand multiPoint,
weigh the Score plugins; and what the profile says that kube-scheduler ignores."""

from __future__ import annotations

from typing import Any

from kubefit.k8s.validation import aggregate
from kubefit.k8s.version import FIT_ARGS_RTC_VALIDATION, KubeVersion
from kubefit.scheduler.config.defaults import DefaultedProfile, default_args
from kubefit.scheduler.config.scheme import Scheme, scheme_for
from kubefit.scheduler.config.types import (
    EXTENSION_POINTS,
    FRAMEWORK_ORDER,
    GO_PLUGIN_TYPE,
    PLACEMENT_POINTS,
    SIMULATED_PLUGINS,
    Profile,
    ScorePlugin,
)
from kubefit.scheduler.config.validation import constructor_validators

NIL_DEREFERENCE = "panic: runtime error: invalid memory address or nil pointer dereference"


def construct_plugin(name: str, args: Any, scheme: Scheme | None = None) -> str | None:
    """What the plugin's constructor (`New…`) returns as error for these args, or None."""
    scheme = scheme or scheme_for()
    validator = constructor_validators(scheme.version).get(name)
    if validator is None:
        return None
    errs = validator(args)
    if errs:
        return aggregate(errs)
    if (name == "NodeResourcesFit" and args.scoring_type == "RequestedToCapacityRatio" and args.shape is None
            and not scheme.version.has(FIT_ARGS_RTC_VALIDATION)):
        return NIL_DEREFERENCE  # v1.34's NewFit dereferences the missing requestedToCapacityRatio
    return None


def _needed(plugins: dict[str, dict[str, Any]]) -> list[str]:
    """Plugin names enabled anywhere (`pluginsNeeded`), first-seen order, multiPoint last."""
    names: dict[str, None] = {}
    for ep in (*FRAMEWORK_ORDER, *PLACEMENT_POINTS, "multiPoint"):
        for name, _ in plugins[ep]["enabled"]:
            names.setdefault(name, None)
    return list(names)


def expand_extension_points(plugins: dict[str, dict[str, Any]], built: set[str],
                            scheme: Scheme | None = None) -> dict[str, list[str]]:
    """`updatePluginList` + `expandMultiPointPlugins`: every point's plugins in run order.

    Raises `_FrameworkError` with the framework's message on the first problem.
    """
    extensions = (scheme or scheme_for()).plugin_extensions
    points: dict[str, list[str]] = {}
    for ep in (*FRAMEWORK_ORDER, *PLACEMENT_POINTS):
        go_type = GO_PLUGIN_TYPE[ep]
        listed: list[str] = []
        for name, _ in plugins[ep]["enabled"]:
            if name not in built:
                raise _FrameworkError(f'{go_type} "{name}" does not exist')
            if ep not in extensions[name]:
                raise _FrameworkError(f'plugin "{name}" does not extend {go_type} plugin')
            if name in listed:
                raise _FrameworkError(f'plugin "{name}" already registered as "{go_type}"')
            listed.append(name)
        points[ep] = listed
    if not plugins["multiPoint"]["enabled"]:
        return points
    for ep in (*FRAMEWORK_ORDER, *PLACEMENT_POINTS):
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
            if ep not in extensions[name] or name in disabled:
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


def score_weights(plugins: dict[str, dict[str, Any]], built: set[str],
                  scheme: Scheme | None = None, point: str = "score") -> dict[str, int]:
    """`getValidScoreWeights`: `point`.enabled (score, v1.36+ placementScore) then multiPoint.enabled, first wins,
    0/unset → 1."""
    extensions = (scheme or scheme_for()).plugin_extensions
    weights: dict[str, int] = {}
    total = 0
    for name, weight in [*plugins[point]["enabled"], *plugins["multiPoint"]["enabled"]]:
        if name not in built or point not in extensions[name] or name in weights:
            continue
        weights[name] = int(weight or 0) or 1
        if weights[name] * 100 > 2**63 - 1 - total:
            raise _FrameworkError("total score of Score plugins could overflow")
        total += weights[name] * 100
    return weights


class _FrameworkError(Exception):
    """An error `NewFramework` returns for a profile."""


def build_profile(prof: DefaultedProfile, scheme: Scheme | None = None) -> tuple[Profile | None, list[str]]:
    """`NewFramework` for one profile: construct the needed plugins, expand, weigh."""
    scheme = scheme or scheme_for()
    needed = _needed(prof.plugins)
    args_by_name: dict[str, Any] = {}
    for name, args in prof.plugin_config:
        args_by_name.setdefault(name, args)
    errors = []
    built: set[str] = set()
    for name in needed:
        if name not in scheme.plugin_extensions:
            continue
        problem = construct_plugin(name, args_by_name.get(name, default_args(name, None, scheme)), scheme)
        if problem:
            errors.append(f'initializing plugin "{name}": {problem}')
        built.add(name)
    if errors:
        return None, errors
    try:
        points = expand_extension_points(prof.plugins, built, scheme)
        if len(points["queueSort"]) != 1:
            raise _FrameworkError(f'only one queue sort plugin required for profile with scheduler name '
                                  f'"{prof.name}", but got {len(points["queueSort"])}')
        if not points["bind"]:
            raise _FrameworkError(f'at least one bind plugin is needed for profile with scheduler name "{prof.name}"')
        weights = score_weights(prof.plugins, built, scheme)
        if len(points["placementGenerate"]) > 1:
            raise _FrameworkError(f'at most one placement generate plugin is allowed for profile with scheduler name '
                                  f'"{prof.name}"')
        try:
            placement_weights = score_weights(prof.plugins, built, scheme, "placementScore")
        except _FrameworkError as exc:
            raise _FrameworkError(f"placement score plugins: {exc}") from None
    except _FrameworkError as exc:
        return None, [str(exc)]
    running_set = {n for ep in (*EXTENSION_POINTS, *PLACEMENT_POINTS) for n in points[ep]}
    running = [n for n in needed if n in running_set]
    profile = Profile(
        scheduler_name=str(prof.name),
        filter_plugins=tuple(points["filter"]),
        score_plugins=tuple(ScorePlugin(n, weights[n]) for n in points["score"]),
        plugin_args={n: args_by_name.get(n, default_args(n, None, scheme)) for n in running
                     if n in scheme.args_schemas},
        percentage_of_nodes_to_score=prof.percentage,
        not_simulated=tuple(n for n in running if n not in SIMULATED_PLUGINS),
        extension_points={ep: tuple(points[ep]) for ep in (*EXTENSION_POINTS, *PLACEMENT_POINTS)},
        placement_score_plugins=tuple(ScorePlugin(n, placement_weights[n]) for n in points["placementScore"]),
    )
    return profile, []


def profile_notes(prof: DefaultedProfile, profile: Profile, scheme: Scheme | None = None) -> list[str]:
    """What the profile says that kube-scheduler ignores: args of idle plugins, weights of non-Score plugins."""
    extensions = (scheme or scheme_for()).plugin_extensions
    running = {n for names in profile.extension_points.values() for n in names}
    notes = []
    for name, _ in prof.plugin_config[:prof.given_args]:
        if name not in running:
            notes.append(f"profile {profile.scheduler_name}: pluginConfig for {name} is not used: the plugin is "
                         f"not enabled in this profile")
    for ep in ("multiPoint", *EXTENSION_POINTS, *PLACEMENT_POINTS):
        for name, weight in prof.plugins[ep]["enabled"]:
            if weight and not {"score", "placementScore"} & extensions.get(name, frozenset()):
                notes.append(f"profile {profile.scheduler_name}: plugins.{ep}: the weight of {name} is ignored "
                             f"(it is not a Score plugin)")
    return notes


def without_args_of(prof: DefaultedProfile, names: set[str], scheme: Scheme | None = None) -> DefaultedProfile:
    """The profile with the args validation already refused replaced by defaults (no double report)."""
    config = [(n, default_args(n, None, scheme) if n in names else a) for n, a in prof.plugin_config]
    return DefaultedProfile(prof.index, prof.name, prof.percentage, prof.plugins, config, prof.given_args)


def explain_crash(message: str, version: KubeVersion) -> str:
    """The constructor's panic, explained (only v1.34 panics: later versions refuse it in validation)."""
    if message.endswith(f'initializing plugin "NodeResourcesFit": {NIL_DEREFERENCE}'):
        return (message + f" (kube-scheduler {version.patch} crashes here: scoringStrategy.type is RequestedToCapacityRatio "
                "but scoringStrategy.requestedToCapacityRatio is not set)")
    return message
