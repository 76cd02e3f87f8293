"""The search space of `kubefit tune`: scheduler configurations as points, each one a valid v1
KubeSchedulerConfiguration.

A point fixes what packing depends on in kube-scheduler's resource scoring:

- NodeResourcesFit's `scoringStrategy.type` (LeastAllocated, MostAllocated, RequestedToCapacityRatio);
- its `scoringStrategy.resources` weights (1..100, as `ValidateNodeResourcesFitArgs` allows; weight 0 in
  a space means "the resource is left out of the list", never written as 0, which v1 defaulting would
  turn into 1: `SetDefaults_NodeResourcesFitArgs`);
- the RequestedToCapacityRatio `shape` (points of utilization 0..100 strictly increasing, score 0..10, as
  `validateFunctionShape` requires);
- the Score plugin weights of NodeResourcesFit, NodeResourcesBalancedAllocation and, where the workload
  uses them, PodTopologySpread and InterPodAffinity.

A point becomes a v1 document by changing only those fields of the scenario's own configuration (its
v1 body; an older dialect converted first), and that document goes through kubefit's decoding and
validation (`kubefit.scheduler.config.decode_v1`, what `kubefit config validate` runs) before any trial
uses it.  The space itself is written as YAML (`--space FILE`, see `load_space`).
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kubefit.api.core import Pod
from kubefit.errors import ConfigError, InputError
from kubefit.k8s.requests import pod_demand
from kubefit.k8s.resourcenames import CPU, MEMORY, PODS
from kubefit.k8s.version import KubeVersion
from kubefit.scheduler.compare import DEFAULT_SHAPE as STOCK_SHAPE
from kubefit.scheduler.config import (
    DEFAULT_SCHEDULER_NAME,
    KIND,
    SCORING_TYPES,
    V1,
    NodeResourcesFitArgs,
    Profile,
    SchedulerConfiguration,
    decode_v1,
)

FIT = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"
SPREAD = "PodTopologySpread"
AFFINITY = "InterPodAffinity"
RTCR = "RequestedToCapacityRatio"
TUNED_PLUGINS = (FIT, BALANCED, SPREAD, AFFINITY)  # the Score plugins whose weight a space may tune
DEFAULT_SHAPE = tuple((p.utilization, p.score) for p in STOCK_SHAPE)  # `simulate --compare`'s 0 → 0, 100 → 10
MAX_PLUGIN_WEIGHT = 10_000  # a bound for --space (v1 allows int32; the framework refuses overflowing sums)
MAX_SHAPE_POINTS = 10
SPACE_KEYS = ("strategies", "resources", "shape", "pluginWeights")


# --------------------------------------------------------------------------- dimensions

@dataclass(frozen=True)
class Dimension:
    """One integer setting: a range `low..high` or explicit `values`."""

    low: int
    high: int
    values: tuple[int, ...] | None = None

    def choices(self) -> tuple[int, ...]:
        return self.values if self.values is not None else tuple(range(self.low, self.high + 1))

    def size(self) -> int:
        return len(self.values) if self.values is not None else self.high - self.low + 1

    def contains(self, value: int) -> bool:
        return value in self.values if self.values is not None else self.low <= value <= self.high

    def to_dict(self) -> Any:
        if self.size() == 1:
            return self.choices()[0]
        return list(self.values) if self.values is not None else {"min": self.low, "max": self.high}


def fixed(value: int) -> Dimension:
    return Dimension(value, value)


@dataclass(frozen=True)
class ShapeSpace:
    """RequestedToCapacityRatio shapes: how many points, their utilizations and scores (ranges), or one
    `fixed` shape."""

    points: Dimension = Dimension(2, 4)
    utilization: Dimension = Dimension(0, 100)
    score: Dimension = Dimension(0, 10)
    fixed: tuple[tuple[int, int], ...] | None = None

    def shapes(self) -> Iterator[tuple[tuple[int, int], ...]]:
        """Every shape, fewest points first (utilizations strictly increasing)."""
        if self.fixed is not None:
            yield self.fixed
            return
        for n in self.points.choices():
            for utils in itertools.combinations(range(self.utilization.low, self.utilization.high + 1), n):
                for scores in itertools.product(self.score.choices(), repeat=n):
                    yield tuple(zip(utils, scores, strict=True))

    def size(self) -> int:
        if self.fixed is not None:
            return 1
        span = self.utilization.size()
        return sum(math.comb(span, n) * self.score.size() ** n for n in self.points.choices())

    def to_dict(self) -> Any:
        if self.fixed is not None:
            return [{"utilization": u, "score": s} for u, s in self.fixed]
        return {"points": self.points.to_dict(), "utilization": self.utilization.to_dict(),
                "score": self.score.to_dict()}


@dataclass(frozen=True)
class Space:
    """What `kubefit tune` varies."""

    strategies: tuple[str, ...]
    resources: tuple[tuple[str, Dimension], ...]  # NodeResourcesFit resource weights (0: not scored)
    shape: ShapeSpace
    plugin_weights: tuple[tuple[str, Dimension], ...]  # Score plugin weights

    def size(self) -> int:
        """How many distinct configurations the space holds."""
        rest = math.prod(d.size() for _, d in (*self.resources, *self.plugin_weights))
        return sum(rest * (self.shape.size() if s == RTCR else 1) for s in self.strategies)

    def grid(self) -> Iterator[Point]:
        """Every point, in a fixed order: strategy, resource weights, plugin weights, shape."""
        names = [n for n, _ in self.resources]
        plugins = [n for n, _ in self.plugin_weights]
        for strategy in self.strategies:
            for weights in itertools.product(*(d.choices() for _, d in self.resources)):
                for pw in itertools.product(*(d.choices() for _, d in self.plugin_weights)):
                    for shape in (self.shape.shapes() if strategy == RTCR else [None]):
                        yield Point(strategy, tuple(zip(names, weights, strict=True)), shape,
                                    tuple(zip(plugins, pw, strict=True)))

    def to_dict(self) -> dict[str, Any]:
        return {"strategies": list(self.strategies),
                "resources": {n: d.to_dict() for n, d in self.resources},
                "shape": self.shape.to_dict(),
                "pluginWeights": {n: d.to_dict() for n, d in self.plugin_weights}}


@dataclass(frozen=True)
class Point:
    """One configuration of the space."""

    strategy: str
    resources: tuple[tuple[str, int], ...]  # weight per resource, 0 = not scored
    shape: tuple[tuple[int, int], ...] | None  # (utilization, score) points; RequestedToCapacityRatio only
    plugin_weights: tuple[tuple[str, int], ...]

    def summary(self) -> str:
        """`MostAllocated cpu=3 memory=1; NodeResourcesFit 7`: the point in one line, for tables."""
        weights = " ".join(f"{n}={w}" for n, w in self.resources if w)
        shape = "" if self.shape is None else " shape " + ",".join(f"{u}:{s}" for u, s in self.shape)
        plugins = ", ".join(f"{n} {w}" for n, w in self.plugin_weights)
        return f"{self.strategy} {weights}{shape}" + (f"; {plugins}" if plugins else "")


# --------------------------------------------------------------------------- Optuna's view of a space

def suggest(trial: Any, space: Space) -> Point:
    """The point an Optuna trial proposes (define-by-run: shape parameters only for RequestedToCapacityRatio;
    a dimension with one value is no parameter)."""
    strategy = _suggest(trial, "strategy", space.strategies)
    resources = tuple((n, _suggest(trial, f"weight:{n}", d)) for n, d in space.resources)
    plugins = tuple((n, _suggest(trial, f"plugin:{n}", d)) for n, d in space.plugin_weights)
    shape = None
    if strategy == RTCR:
        sh = space.shape
        if sh.fixed is not None:
            shape = sh.fixed
        else:
            n = _suggest(trial, "shape.points", sh.points)
            utils = [_suggest(trial, f"shape.utilization.{i}", sh.utilization) for i in range(n)]
            scores = [_suggest(trial, f"shape.score.{i}", sh.score) for i in range(n)]
            shape = increasing_shape(utils, scores, sh.utilization)
    return Point(strategy, resources, shape, plugins)


def _suggest(trial: Any, name: str, dim: Dimension | Sequence[str]) -> Any:
    if not isinstance(dim, Dimension):
        return dim[0] if len(dim) == 1 else trial.suggest_categorical(name, list(dim))
    if dim.size() == 1:
        return dim.choices()[0]
    if dim.values is not None:
        return trial.suggest_categorical(name, list(dim.values))
    return trial.suggest_int(name, dim.low, dim.high)


def increasing_shape(utils: Sequence[int], scores: Sequence[int], bounds: Dimension) -> tuple[tuple[int, int], ...]:
    """Points sorted by utilization, each pushed up to one above the one before and, from the end, down to
    stay within `bounds`: strictly increasing as v1 validation requires (a valid shape is left as it is)."""
    order = sorted(range(len(utils)), key=lambda i: (utils[i], i))
    us = [utils[i] for i in order]
    for i in range(1, len(us)):
        us[i] = max(us[i], us[i - 1] + 1)
    for i in range(len(us) - 1, -1, -1):
        us[i] = min(us[i], bounds.high - (len(us) - 1 - i))
    return tuple((u, scores[i]) for u, i in zip(us, order, strict=True))


def params(point: Point, space: Space) -> dict[str, Any] | None:
    """The Optuna parameters naming `point` (see `suggest`), or None when the point lies outside the space."""
    if point.strategy not in space.strategies:
        return None
    out: dict[str, Any] = {}
    if len(space.strategies) > 1:
        out["strategy"] = point.strategy
    given = dict(point.resources)
    if set(given) - {n for n, _ in space.resources}:
        return None
    for prefix, dims, values in (("weight", space.resources, given), ("plugin", space.plugin_weights,
                                                                       dict(point.plugin_weights))):
        for name, dim in dims:
            value = values.get(name, 0)
            if not dim.contains(value):
                return None
            if dim.size() > 1:
                out[f"{prefix}:{name}"] = value
    if point.strategy == RTCR:
        sh = space.shape
        if sh.fixed is not None:
            return out if point.shape == sh.fixed else None
        shape = point.shape or ()
        if not sh.points.contains(len(shape)) or any(not sh.utilization.contains(u) or not sh.score.contains(s)
                                                     for u, s in shape):
            return None
        if sh.points.size() > 1:
            out["shape.points"] = len(shape)
        for i, (u, s) in enumerate(shape):
            if sh.utilization.size() > 1:
                out[f"shape.utilization.{i}"] = u
            if sh.score.size() > 1:
                out[f"shape.score.{i}"] = s
    return out


def distributions(names: Sequence[str], space: Space) -> dict[str, Any]:
    """Optuna's distribution of each parameter name `suggest` uses."""
    import optuna

    dims = {**{f"weight:{n}": d for n, d in space.resources}, **{f"plugin:{n}": d for n, d in space.plugin_weights},
            "shape.points": space.shape.points}
    out: dict[str, Any] = {}
    for name in names:
        if name == "strategy":
            out[name] = optuna.distributions.CategoricalDistribution(list(space.strategies))
            continue
        dim = dims.get(name) or (space.shape.utilization if name.startswith("shape.utilization.")
                                 else space.shape.score)
        out[name] = (optuna.distributions.CategoricalDistribution(list(dim.values)) if dim.values is not None
                     else optuna.distributions.IntDistribution(dim.low, dim.high))
    return out


def distance(point: Point, base: Point, space: Space) -> tuple[int, float]:
    """How far `point` is from the scenario's configuration: (settings changed, the changes summed, each
    as a share of its dimension's span); ties in the objective go to the smallest."""
    changed, total = 0, 0.0
    if point.strategy != base.strategy:
        changed, total = 1, 1.0
    spans = {n: max(1, d.high - d.low) for n, d in (*space.resources, *space.plugin_weights)}
    for mine, theirs in ((point.resources, base.resources), (point.plugin_weights, base.plugin_weights)):
        other = dict(theirs)
        for name, value in mine:
            if value != other.get(name, 0):
                changed += 1
                total += abs(value - other.get(name, 0)) / spans.get(name, 100)
    if point.shape is not None and base.shape is not None and point.shape != base.shape:
        changed += 1
        pairs = itertools.zip_longest(point.shape, base.shape, fillvalue=(100, 10))
        total += sum(abs(a[0] - b[0]) / 100 + abs(a[1] - b[1]) / 10 for a, b in pairs)
    return changed, round(total, 9)


# --------------------------------------------------------------------------- the default space

def fit_profile(config: SchedulerConfiguration) -> Profile:
    """The profile whose NodeResourcesFit the space starts from: the first one scoring with it (else the first)."""
    for profile in config.profiles:
        if any(sp.name == FIT for sp in profile.score_plugins):
            return profile
    return config.profiles[0]


def fit_args(profile: Profile) -> NodeResourcesFitArgs:
    args = profile.plugin_args.get(FIT)
    return args if isinstance(args, NodeResourcesFitArgs) else NodeResourcesFitArgs()


def point_of(config: SchedulerConfiguration, space: Space) -> Point:
    """The point of a configuration: its (first Fit-scoring) profile's strategy, weights and shape."""
    profile = fit_profile(config)
    args = fit_args(profile)
    weights = {r.name: r.weight for r in args.resources}
    names = [n for n, _ in space.resources] + [n for n in weights if n not in dict(space.resources)]
    shape = None
    if args.scoring_type == RTCR:
        shape = tuple((p.utilization, p.score) for p in args.shape or ())
    scored = {sp.name: sp.weight for sp in profile.score_plugins}
    return Point(args.scoring_type, tuple((n, weights.get(n, 0)) for n in names), shape,
                 tuple((n, scored.get(n, 0)) for n, _ in space.plugin_weights))


def requested_resources(queue: Sequence[Pod]) -> list[str]:
    """cpu and memory, then every other resource a queued pod requests (first-seen order; not `pods`)."""
    names = {CPU: None, MEMORY: None}
    for pod in queue:
        for name, amount in pod_demand(pod).requests.items():
            if amount and name != PODS:
                names.setdefault(name, None)
    return list(names)


def default_space(config: SchedulerConfiguration, queue: Sequence[Pod], pods: Sequence[Pod]) -> Space:
    """Every strategy; a weight 1..100 for each resource the configuration scores and 0..100 (0: not
    scored) for the others the workload requests; shapes of 2–4 points; the weights 1..100 of
    NodeResourcesFit, NodeResourcesBalancedAllocation and, when the workload uses them, PodTopologySpread
    (a queued pod with constraints, or with an owner, whose Service/ReplicaSet/StatefulSet selects it for
    the default constraints) and InterPodAffinity (a pod with pod (anti-)affinity), each only where the
    profile scores with it."""
    profile = fit_profile(config)
    scored = {r.name for r in fit_args(profile).resources}
    names = requested_resources(queue) + [n for n in (r.name for r in fit_args(profile).resources)]
    resources = tuple((n, Dimension(1 if n in scored else 0, 100)) for n in dict.fromkeys(names))
    used = {FIT, BALANCED}
    if any(p.topology_spread_constraints or p.owner_references for p in queue):  # or the default constraints
        used.add(SPREAD)
    if any(p.affinity and (p.affinity.get("podAffinity") or p.affinity.get("podAntiAffinity")) for p in pods):
        used.add(AFFINITY)
    plugins = tuple((sp.name, Dimension(1, 100)) for sp in profile.score_plugins if sp.name in used)
    return Space(SCORING_TYPES, resources, ShapeSpace(), plugins)


# --------------------------------------------------------------------------- --space FILE

def load_space(body: Any, source: str, default: Space) -> Space:
    """A space written as YAML (`--space`); each key given replaces the default's, the others stay.

    ```yaml
    strategies: [MostAllocated, RequestedToCapacityRatio]
    resources: {cpu: {min: 1, max: 100}, memory: 1, nvidia.com/gpu: [0, 1, 10, 100]}
    shape: {points: {min: 2, max: 3}, utilization: {min: 0, max: 100}, score: {min: 0, max: 10}}
    pluginWeights: {NodeResourcesFit: {min: 1, max: 100}, NodeResourcesBalancedAllocation: 1}
    ```

    A setting is a number (fixed), `{min, max}` (every integer between) or a list of numbers; `shape` may
    also be one fixed shape, a list of `{utilization, score}` points.
    """
    if not isinstance(body, dict):
        raise InputError("a search space must be a mapping with keys " + ", ".join(SPACE_KEYS), file=source)
    unknown = [k for k in body if k not in SPACE_KEYS]
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r} (known: {', '.join(SPACE_KEYS)})", file=source,
                         field=str(unknown[0]))
    space = default
    if "strategies" in body:
        space = replace(space, strategies=_strategies(body["strategies"], source))
    if "resources" in body:
        res = _named_dimensions(body["resources"], source, "resources", 0, 100)
        if not any(d.low >= 1 and (d.values is None or min(d.values) >= 1) for _, d in res):
            raise InputError("at least one resource must always be scored (a weight of 1 or more): with no "
                             "resource listed, v1 defaulting scores cpu and memory", file=source, field="resources")
        space = replace(space, resources=res)
    if "shape" in body:
        space = replace(space, shape=_shape_space(body["shape"], source))
    if "pluginWeights" in body:
        weights = _named_dimensions(body["pluginWeights"], source, "pluginWeights", 1, MAX_PLUGIN_WEIGHT)
        other = [n for n, _ in weights if n not in TUNED_PLUGINS]
        if other:
            raise InputError(f"{other[0]!r} is not a plugin whose weight kubefit tunes ({', '.join(TUNED_PLUGINS)})",
                             file=source, field=f"pluginWeights.{other[0]}")
        space = replace(space, plugin_weights=weights)
    return space


def _strategies(value: Any, source: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise InputError("give at least one strategy", file=source, field="strategies")
    for i, item in enumerate(items):
        if item not in SCORING_TYPES:
            raise InputError(f"must be one of {', '.join(SCORING_TYPES)}, got {item!r}", file=source,
                             field=f"strategies[{i}]")
    return tuple(dict.fromkeys(items))


def _named_dimensions(value: Any, source: str, field: str, low: int, high: int) -> tuple[tuple[str, Dimension], ...]:
    if not isinstance(value, dict) or not value:
        raise InputError("must be a non-empty mapping of name to setting", file=source, field=field)
    return tuple((str(name), dimension(v, source, f"{field}.{name}", low, high)) for name, v in value.items())


def dimension(value: Any, source: str, field: str, low: int, high: int) -> Dimension:
    """A setting: a number, `{min, max}` or a list of numbers, each within `low..high`."""
    def number(v: Any, where: str) -> int:
        if not isinstance(v, int) or isinstance(v, bool):
            raise InputError(f"must be an integer, got {v!r}", file=source, field=where)
        if not low <= v <= high:
            raise InputError(f"must be within {low}..{high}, got {v}", file=source, field=where)
        return v

    if isinstance(value, dict):
        extra = [k for k in value if k not in ("min", "max")]
        if extra or "min" not in value or "max" not in value:
            raise InputError("a range is {min: N, max: M}" + (f"; unknown field {extra[0]!r}" if extra else ""),
                             file=source, field=field)
        lo, hi = number(value["min"], f"{field}.min"), number(value["max"], f"{field}.max")
        if lo > hi:
            raise InputError(f"min {lo} is above max {hi}", file=source, field=field)
        return Dimension(lo, hi)
    if isinstance(value, list):
        if not value:
            raise InputError("give at least one value", file=source, field=field)
        values = tuple(dict.fromkeys(number(v, f"{field}[{i}]") for i, v in enumerate(value)))
        return Dimension(min(values), max(values), values if len(values) > 1 else None)
    return fixed(number(value, field))


def _shape_space(value: Any, source: str) -> ShapeSpace:
    if isinstance(value, list):  # one fixed shape
        points = []
        for i, p in enumerate(value):
            if not isinstance(p, dict) or set(p) != {"utilization", "score"}:
                raise InputError("a shape point is {utilization: U, score: S}", file=source, field=f"shape[{i}]")
            points.append((dimension(p["utilization"], source, f"shape[{i}].utilization", 0, 100).low,
                           dimension(p["score"], source, f"shape[{i}].score", 0, 10).low))
        if not points or any(a[0] >= b[0] for a, b in itertools.pairwise(points)):
            raise InputError("utilization must be strictly increasing, at least one point", file=source, field="shape")
        return ShapeSpace(fixed=tuple(points))
    if not isinstance(value, dict):
        raise InputError("must be {points, utilization, score} or a list of points", file=source, field="shape")
    extra = [k for k in value if k not in ("points", "utilization", "score")]
    if extra:
        raise InputError(f"unknown field {extra[0]!r} (known: points, utilization, score)", file=source,
                         field=f"shape.{extra[0]}")
    default = ShapeSpace()
    util = dimension(value.get("utilization", {"min": 0, "max": 100}), source, "shape.utilization", 0, 100)
    if util.values is not None:
        raise InputError("a utilization range is {min, max} (points are spread within it)", file=source,
                         field="shape.utilization")
    shape = ShapeSpace(dimension(value["points"], source, "shape.points", 1, MAX_SHAPE_POINTS)
                       if "points" in value else default.points, util,
                       dimension(value["score"], source, "shape.score", 0, 10) if "score" in value else default.score)
    if max(shape.points.choices()) > util.size():
        raise InputError(f"{max(shape.points.choices())} points cannot have distinct utilizations within "
                         f"{util.low}..{util.high}", file=source, field="shape.points")
    return shape


# --------------------------------------------------------------------------- points → v1 documents

def v1_body(config: SchedulerConfiguration, doc_body: dict[str, Any] | None) -> dict[str, Any]:
    """The scenario configuration's v1 document (kube-scheduler's defaults: an empty one, one profile)."""
    body = copy.deepcopy(doc_body) if doc_body is not None else {"apiVersion": V1, "kind": KIND}
    if not body.get("profiles"):
        body["profiles"] = [{"schedulerName": DEFAULT_SCHEDULER_NAME}]
    return body


def _profiles(body: dict[str, Any]) -> list[dict[str, Any]]:
    profiles = body["profiles"]
    for i, p in enumerate(profiles):
        if not isinstance(p, dict):
            profiles[i] = {}
    return profiles


def _fit_args_body(profile: dict[str, Any]) -> dict[str, Any]:
    """The profile's NodeResourcesFit `args` (a pluginConfig entry added when there is none)."""
    entries = profile.get("pluginConfig") or []
    profile["pluginConfig"] = entries
    for entry in entries:
        if isinstance(entry, dict) and entry.get("name") == FIT:
            if not isinstance(entry.get("args"), dict):
                entry["args"] = {}
            return entry["args"]
    entry = {"name": FIT, "args": {}}
    entries.append(entry)
    return entry["args"]


def _set_strategy(args: dict[str, Any], strategy: str, resources: Sequence[tuple[str, int]],
                  shape: Sequence[tuple[int, int]] | None) -> None:
    out: dict[str, Any] = {"type": strategy, "resources": [{"name": n, "weight": w} for n, w in resources if w]}
    if strategy == RTCR:
        out["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape or ()]}
    args["scoringStrategy"] = out


def _set_weight(profile: dict[str, Any], plugin: str, weight: int) -> None:
    """The plugin's Score weight: where the profile lists it for `score` or `multiPoint`, else a `multiPoint`
    entry (which replaces the default one in place: `mergePluginSet`)."""
    plugins = profile.get("plugins") if isinstance(profile.get("plugins"), dict) else {}
    profile["plugins"] = plugins
    for point in ("score", "multiPoint"):
        for entry in (plugins.get(point) or {}).get("enabled") or []:
            if isinstance(entry, dict) and entry.get("name") == plugin:
                entry["weight"] = weight
                return
    multi = plugins.get("multiPoint") if isinstance(plugins.get("multiPoint"), dict) else {}
    plugins["multiPoint"] = multi
    multi["enabled"] = [*(multi.get("enabled") or []), {"name": plugin, "weight": weight}]


def point_body(base: dict[str, Any], config: SchedulerConfiguration, point: Point) -> dict[str, Any]:
    """`base` (the scenario's v1 document) with the point's strategy, resources and shape in every profile
    that has NodeResourcesFit, and its plugin weights where a profile scores with the plugin."""
    body = copy.deepcopy(base)
    weights = dict(point.plugin_weights)
    for raw, profile in zip(_profiles(body), config.profiles, strict=True):
        if FIT in profile.plugin_args:
            _set_strategy(_fit_args_body(raw), point.strategy, point.resources, point.shape)
        for sp in profile.score_plugins:
            if weights.get(sp.name):
                _set_weight(raw, sp.name, weights[sp.name])
    return body


def stock_body(base: dict[str, Any], config: SchedulerConfiguration, strategy: str) -> dict[str, Any]:
    """`base` with every profile's NodeResourcesFit scoring type set to `strategy`, its resources kept and,
    for RequestedToCapacityRatio, its shape or 0 → 0, 100 → 10 (as `simulate --compare STRATEGY`)."""
    body = copy.deepcopy(base)
    for raw, profile in zip(_profiles(body), config.profiles, strict=True):
        if FIT in profile.plugin_args:
            args = fit_args(profile)
            shape = tuple((p.utilization, p.score) for p in args.shape) if args.shape else DEFAULT_SHAPE
            _set_strategy(_fit_args_body(raw), strategy, [(r.name, r.weight) for r in args.resources],
                          shape if strategy == RTCR else None)
    return body


def checked_config(body: dict[str, Any], source: str, version: KubeVersion | None = None) -> SchedulerConfiguration:
    """Decode and validate a candidate as kube-scheduler of `version` would (`decode_v1`); a refusal is a
    kubefit bug or a space no configuration of which kube-scheduler accepts, said with kube-scheduler's
    messages. The configuration carries the version to the workers (a trial answers for it)."""
    try:
        return decode_v1(copy.deepcopy(body), source, version)
    except ConfigError as exc:
        raise InputError("kube-scheduler would refuse this candidate configuration: " + "; ".join(exc.errors),
                         file=source) from None


__all__ = ["Dimension", "Point", "ShapeSpace", "Space", "checked_config", "default_space",
           "distance", "load_space", "params", "point_body", "point_of", "stock_body", "suggest", "v1_body"]
