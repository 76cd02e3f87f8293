"""`tune`: the scheduler configuration that packs a workload best, searched by Optuna and judged by exact
simulation on Dask workers.

The scenario is loaded and compiled once; the compiled workload (cluster state, queue, what the objective
needs) is shipped to every worker once, and a trial is one simulation of it per seed under a candidate
configuration (`evaluate`).

The search (`Search`):

1. The baselines come first: the scenario's own configuration (kube-scheduler's defaults when it has
   none) and each stock strategy with the scenario's resources (`simulate --compare`'s
   LeastAllocated, MostAllocated, RequestedToCapacityRatio), evaluated on the same seeds. The best
   configuration is the best trial, so it is never worse than any of them.
2. A space with at most `trials` configurations is tried whole (a grid, in a fixed order). Otherwise
   Optuna's TPE sampler, seeded, proposes the rest; the baselines inside the space are told to it first.
3. Trials are asked in batches of a fixed size and told in the order they were asked, whichever worker
   finished first: the result depends on the seed alone, not on the number or the speed of the workers.
   A configuration seen before (the same profiles after decoding) is not simulated again. With TPE the
   baselines run together with the first batch, which the sampler draws at random whatever they measure
   (`Search.tpe`); each batch is read by the workers while it is still being asked.
4. Ties in the objective go to the configuration closest to the scenario's (`space.distance`), then to
   the earlier trial.

With the random tie-break each trial runs `repeats` seeds (seed, seed + 1, …) and its value is their
mean; with `first` one deterministic simulation is the trial.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from statistics import fmean, pstdev
from typing import Any

from kubefit.api.core import Pod
from kubefit.collector import collector_paused
from kubefit.errors import InputError
from kubefit.manifests.documents import Document
from kubefit.planning.objectives import GpuWorkload, Objective, gpu_workload, measure, objective
from kubefit.planning.space import (
    Point,
    Space,
    checked_config,
    distance,
    distributions,
    point_body,
    point_of,
    stock_body,
    suggest,
)
from kubefit.planning.space import params as point_params
from kubefit.scheduler.config import SCORING_TYPES, SchedulerConfiguration
from kubefit.scheduler.simulate import simulate
from kubefit.scheduler.state import ClusterState
from kubefit.told import told_keys

SCENARIO = "scenario"  # the baseline name of the scenario's own configuration
DEFAULT_TRIALS = 50
DEFAULT_BATCH = 8
DEFAULT_REPEATS = 3  # seeds per trial with the random tie-break
STARTUP_TRIALS = 10  # complete trials before TPE models them (Optuna's default; random sampling until then)
MAX_TRIALS = 100_000
MAX_REPEATS = 100


# --------------------------------------------------------------------------- one trial, on a worker

@dataclass
class Workload:
    """What a worker needs for trials: the compiled cluster, the queue, how to run and measure them."""

    state: ClusterState
    queue: list[Pod]
    objective: str
    tie_break: str
    seeds: tuple[int, ...]
    target: GpuWorkload | None = None  # gpu-fragmentation's target workload


@dataclass(frozen=True)
class Outcome:
    """A trial's measures: the mean over its seeds, each seed's value, the (CPU) seconds its simulations took."""

    value: float
    rank: float
    values: tuple[float, ...]
    pending: float
    nodes_used: float
    seconds: float
    cpu_seconds: float = 0.0  # the worker process's CPU time over the trial (the figure on a shared machine)


def evaluate(workload: Workload, config: SchedulerConfiguration) -> Outcome:
    """One trial: the workload simulated under `config` once per seed, each run on a copy of the compiled state.

    Python's cyclic garbage collector is paused during the trial (`collector_paused`): a trial leaves no
    reference cycles (its garbage goes by reference counting; `test_a_trial_leaves_no_cyclic_garbage`),
    and the collections its allocations would trigger cost 10-15 % of a trace trial and made its time vary
    by a quarter from one trial to the next (a batch then waits for the worker that drew the collections).
    """
    goal = objective(workload.objective)
    start, cpu = time.perf_counter(), time.process_time()
    runs = []
    with collector_paused():
        for seed in workload.seeds:
            result = simulate(workload.state.copy(), config, workload.queue, tie_break=workload.tie_break,
                              seed=seed, stranded=goal.stranded, messages=False)  # objectives never read why
            runs.append(measure(result, goal, workload.target))
    return Outcome(fmean(m.value for m in runs), fmean(m.rank for m in runs), tuple(m.value for m in runs),
                   fmean(m.pending for m in runs), fmean(m.nodes_used for m in runs), time.perf_counter() - start,
                   time.process_time() - cpu)


def compile_workload(state: ClusterState, queue: Sequence[Pod], goal: Objective, tie_break: str,
                     seeds: Sequence[int]) -> Workload:
    """The workload as shipped: the compiled state (never changed by a trial: each copies it) and queue."""
    target = gpu_workload(state, queue) if goal.gpus else None
    return Workload(state, list(queue), goal.name, tie_break, tuple(seeds), target)


# --------------------------------------------------------------------------- the search

@dataclass
class Trial:
    """One configuration tried: its place in the search, the v1 document, what it measured."""

    number: int
    point: Point
    body: dict[str, Any]
    config: SchedulerConfiguration
    outcome: Outcome
    baselines: list[str] = field(default_factory=list)  # the baseline names this configuration is
    duplicate_of: int | None = None  # the earlier trial with the same configuration (not simulated again)

    def to_dict(self, repeats: int) -> dict[str, Any]:
        o = self.outcome
        out: dict[str, Any] = {"number": self.number, "value": _number(o.value), "config": self.body,
                               "seconds": round(o.seconds, 4), "cpuSeconds": round(o.cpu_seconds, 4),
                               "summary": self.point.summary(),
                               "pending": _number(o.pending), "nodesUsed": _number(o.nodes_used)}
        if repeats > 1:
            out["values"] = [_number(v) for v in o.values]
            out["spread"] = _number(pstdev(o.values))
        if self.baselines:
            out["baselines"] = list(self.baselines)
        if self.duplicate_of is not None:
            out["duplicateOf"] = self.duplicate_of
        return out


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(float(x), 4)


@dataclass
class Validation:
    """The best configuration and the baselines re-scored on a hold-out workload."""

    files: list[str]
    best: Outcome
    baselines: dict[str, Outcome]

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "best": _number(self.best.value),
                "baselines": {n: _number(o.value) for n, o in self.baselines.items()},
                "pending": {"best": _number(self.best.pending),
                            **{n: _number(o.pending) for n, o in self.baselines.items()}}}


@dataclass
class TuneResult:
    """The tuned configuration, the baselines, every trial; ``to_dict()`` is `kubefit tune -o json`."""

    objective: Objective
    search: str  # "tpe" or "grid"
    seed: int
    tie_break: str
    repeats: int
    batch: int
    workers: int
    space: Space
    trials: list[Trial]
    best: Trial
    baselines: dict[str, Trial]
    seconds: float
    validation: Validation | None = None
    best_so_far: list[int] = field(default_factory=list)  # per trial, the best trial up to it (`Search.best_so_far`)
    warnings: list[str] | None = None
    inputs: dict | None = None  # the files, options, configuration and versions (set by `kubefit.verbs`)

    def best_baseline(self) -> str:
        """The baseline ranked best, ties to the first named (the scenario's configuration comes first)."""
        return min(self.baselines, key=lambda name: self.baselines[name].outcome.rank)

    def to_dict(self) -> dict[str, Any]:
        best = self.best.to_dict(self.repeats)
        return {
            "objective": self.objective.name,
            "unit": self.objective.unit,
            "best": {"value": best["value"], "config": self.best.body, "trial": self.best.number,
                     "summary": best["summary"], "pending": best["pending"], "nodesUsed": best["nodesUsed"]},
            "baselines": {name: _number(t.outcome.value) for name, t in self.baselines.items()},
            "baselineTrials": {name: t.number for name, t in self.baselines.items()},
            "bestBaseline": self.best_baseline(),
            "trials": [t.to_dict(self.repeats) for t in self.trials],
            "bestSoFar": self.best_so_far,
            "search": self.search, "seed": self.seed, "tieBreak": self.tie_break, "repeats": self.repeats,
            "batch": self.batch, "workers": self.workers, "seconds": round(self.seconds, 3),
            "space": self.space.to_dict(),
            **({"validation": self.validation.to_dict()} if self.validation is not None else {}),
            **told_keys(self.warnings, None, self.inputs),
        }


class Search:
    """The trials of one tuning run: candidates built and validated here, evaluated by `run_batch` (which
    reads the configurations as it needs them: those asked last are still being asked while the first run)."""

    def __init__(self, base_body: dict[str, Any], base: SchedulerConfiguration, space: Space,
                 run_batch: Callable[[Iterable[SchedulerConfiguration]], list[Outcome]]) -> None:
        self.base_body, self.base, self.space, self.run_batch = base_body, base, space, run_batch
        self.origin = point_of(base, space)
        self.trials: list[Trial] = []
        self.seen: dict[str, Trial] = {}  # configuration key → the first trial of it

    def candidate(self, body: dict[str, Any], number: int | None = None) -> SchedulerConfiguration:
        return checked_config(body, f"<kubefit tune: trial {len(self.trials) if number is None else number}>",
                              self.base.version)

    def run(self, bodies: Iterable[dict[str, Any]], names: Sequence[list[str]] = ()) -> list[Trial]:
        """Evaluate one batch in order, each configuration not seen before once, and record its trials. The
        first `len(names)` are baselines, named: a configuration seen before is that trial again; after
        them, a configuration seen before is a trial of its own (`duplicateOf`). `bodies` is read while the
        first configurations run."""
        made: list[tuple[dict[str, Any], SchedulerConfiguration, str]] = []
        fresh: set[str] = set()

        def configs() -> Iterator[SchedulerConfiguration]:
            for body in bodies:
                config = self.candidate(body, len(self.trials) + len(made))
                key = config_key(config)
                made.append((body, config, key))
                if key not in self.seen and key not in fresh:
                    fresh.add(key)
                    yield config

        outcomes = iter(self.run_batch(configs()))
        out = []
        for i, (body, config, key) in enumerate(made):
            earlier = self.seen.get(key)
            if earlier is None:
                trial = self.seen[key] = Trial(len(self.trials), point_of(config, self.space), body, config,
                                               next(outcomes))
            elif i >= len(names):
                trial = Trial(len(self.trials), earlier.point, earlier.body, earlier.config,
                              replace_seconds(earlier.outcome), duplicate_of=earlier.number)
            else:
                trial = earlier
            if i < len(names):
                self.seen[key].baselines.extend(names[i])
            if trial is not earlier:
                self.trials.append(trial)
            out.append(trial)
        return out

    def baseline_bodies(self) -> tuple[list[dict[str, Any]], list[list[str]]]:
        """The scenario's configuration and the three stock strategies, with their baseline names."""
        bodies = [self.base_body] + [stock_body(self.base_body, self.base, s) for s in SCORING_TYPES]
        return bodies, [[SCENARIO], *([s] for s in SCORING_TYPES)]

    def baselines(self) -> dict[str, Trial]:
        """The baselines run first, alone (one trial per distinct configuration)."""
        bodies, names = self.baseline_bodies()
        return named(names, self.run(bodies, names))

    def order(self, trial: Trial) -> tuple[float, float, int]:
        """What `best` minimises: the rank; ties to the configuration closest to the scenario's, then the earliest."""
        return trial.outcome.rank, distance(trial.point, self.origin, self.space), trial.number

    def best(self) -> Trial:
        """The trial of the lowest `order` (a repeated configuration counts as its first trial)."""
        return min((t for t in self.trials if t.duplicate_of is None), key=self.order)

    def best_so_far(self) -> list[int]:
        """Per trial, the number of the trial `best` would pick among it and those before it (the last is `best`)."""
        out: list[int] = []
        leader: Trial | None = None
        for trial in self.trials:  # the first is a baseline, never a repeat
            if leader is None or (trial.duplicate_of is None and self.order(trial) < self.order(leader)):
                leader = trial
            out.append(leader.number)
        return out

    def grid(self) -> list[dict[str, Any]]:
        """The documents of every point of a small space not tried yet (each configuration once)."""
        bodies, keys = [], set(self.seen)
        for point in self.space.grid():
            body = point_body(self.base_body, self.base, point)
            key = config_key(self.candidate(body))
            if key not in keys:
                keys.add(key)
                bodies.append(body)
        return bodies

    def tpe(self, trials: int, batch: int, seed: int, progress: Callable[[int, int], None] | None) -> dict[str, Trial]:
        """Optuna's seeded TPE sampler proposes the trials after the baselines, `batch` asked at a time, each
        batch told (in the order asked) before the next is asked; the baselines' trials.

        The baselines run with the first batch, which does not depend on them: the sampler is told what
        the baselines measured (those the space can name) before anything else, but it draws the first
        batch at random whatever they measured (`STARTUP_TRIALS`: Optuna's TPE samples independently at
        random until that many trials are complete, and the baselines are at most four), so that batch is
        asked with the baselines' trials added as running and each is told its value once known, before
        the batch. The study then holds the same trials, values and numbers, and the sampler has drawn
        the same numbers, as when the baselines ran and were told first: the same search, one wait less.
        """
        import optuna

        study = new_study(seed)
        bodies, names = self.baseline_bodies()
        distinct: dict[str, Point] = {}  # the baselines' trials to be, in order
        for i, body in enumerate(bodies):
            config = self.candidate(body, i)
            distinct.setdefault(config_key(config), point_of(config, self.space))
        told = []  # (the study's trial number, the baseline's configuration key)
        for key, point in distinct.items():  # the baselines the space can name, in order
            p = point_params(point, self.space)
            if p is not None:
                study.add_trial(optuna.trial.create_trial(
                    params=p, distributions=distributions(list(p), self.space), state=optuna.trial.TrialState.RUNNING))
                told.append((len(told), key))
        assert len(told) < STARTUP_TRIALS, "the first batch would depend on what the baselines measured"
        total = max(trials, len(distinct))
        if progress is not None:
            progress(0, total)
        baselines: dict[str, Trial] = {}
        first = True
        while first or len(self.trials) < total:
            asked: list[Any] = []  # the batch's Optuna trials, in the order asked
            count = min(batch, total - len(self.trials) - (len(distinct) if first else 0))
            if first:
                made = self.run(chain(bodies, self.ask(study, count, asked)), names)
                baselines, made = named(names, made[:len(bodies)]), made[len(bodies):]
                for number, key in told:
                    study.tell(number, self.seen[key].outcome.rank, state=optuna.trial.TrialState.COMPLETE)
                first = False
            else:
                made = self.run(self.ask(study, count, asked))
            for asked_trial, trial in zip(asked, made, strict=True):
                study.tell(asked_trial, trial.outcome.rank)
            if progress is not None:
                progress(len(self.trials), total)
        return baselines

    def ask(self, study: Any, count: int, asked: list[Any]) -> Iterator[dict[str, Any]]:
        """`count` configurations from the sampler, each asked when the workers read it (added to `asked`)."""
        for _ in range(count):
            asked.append(study.ask())
            yield point_body(self.base_body, self.base, suggest(asked[-1], self.space))


def named(names: Sequence[list[str]], trials: Sequence[Trial]) -> dict[str, Trial]:
    """Baseline name → its trial (`Search.baseline_bodies`' names, one each, and the trials run for them)."""
    return {n[0]: t for n, t in zip(names, trials, strict=False)}


def new_study(seed: int) -> Any:
    """An Optuna study minimising, its TPE sampler seeded and multivariate with groups: it models the
    weights together (their ratios are what scoring reads) and the shape only where the strategy has one
    (on the bundled mixed workload it reached 0 pending in 3 of 5 seeds where the univariate one did in 1).
    `multivariate`/`group` are marked experimental by Optuna; their warning is not the user's concern."""
    import warnings

    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True,
                                             n_startup_trials=STARTUP_TRIALS)
    return optuna.create_study(direction="minimize", sampler=sampler)


def replace_seconds(outcome: Outcome) -> Outcome:
    """A repeated configuration's outcome: the same measures, no simulation time."""
    return replace(outcome, seconds=0.0, cpu_seconds=0.0)


def config_key(config: SchedulerConfiguration) -> str:
    """Two documents that decode to the same profiles are one configuration."""
    return repr((config.profiles, config.percentage_of_nodes_to_score, config.parallelism))


def scenario_body(doc: Document | None) -> dict[str, Any] | None:
    """The scenario configuration's v1 document (an older dialect converted: its notes are the loaded
    configuration's already), or None for kube-scheduler's defaults."""
    if doc is None:
        return None
    from kubefit.scheduler.config.dialects import to_v1

    return to_v1(doc)[0]


def quiet_optuna() -> Callable[[], None]:
    """Optuna's INFO line per trial off (kubefit draws its own progress); returns what puts it back."""
    import optuna

    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return lambda: optuna.logging.set_verbosity(before)


def check_settings(trials: int, batch: int, tie_break: str, repeats: int | None) -> int:
    """The number of seeds per trial; an error for settings out of range."""
    if not 1 <= trials <= MAX_TRIALS:
        raise InputError(f"must be within 1..{MAX_TRIALS}, got {trials}", field="--trials")
    if batch < 1:
        raise InputError(f"must be at least 1, got {batch}", field="--batch")
    if tie_break not in ("random", "first"):
        raise InputError(f"must be random or first, got {tie_break!r}", field="--tie-break")
    if repeats is None:
        return DEFAULT_REPEATS if tie_break == "random" else 1
    if not 1 <= repeats <= MAX_REPEATS:
        raise InputError(f"must be within 1..{MAX_REPEATS}, got {repeats}", field="--repeats")
    if tie_break == "first" and repeats > 1:
        raise InputError("several seeds are for the random tie-break; with --tie-break first every run is the same",
                         field="--repeats")
    return repeats


# --------------------------------------------------------------------------- the whole run

@dataclass
class HoldOut:
    """A workload to re-score the best configuration on (`--validate`)."""

    files: list[str]
    state: ClusterState
    queue: list[Pod]


def tune(state: ClusterState, queue: Sequence[Pod], base_body: dict[str, Any], base: SchedulerConfiguration,
         space: Space, workers: Any, *, goal: Objective, trials: int = DEFAULT_TRIALS, seed: int = 0,
         batch: int = DEFAULT_BATCH, tie_break: str = "random", repeats: int = 1, holdout: HoldOut | None = None,
         progress: Callable[[int, int], None] | None = None) -> TuneResult:
    """Search `space` for the configuration `goal` likes best on the workload (see the module docstring).

    `base_body` is the scenario's v1 configuration document and `base` its decoded form; `workers` runs
    the trials (a started `kubefit.planning.workers.Workers`); `progress(done, total)` follows the trials.
    """
    start = time.perf_counter()
    seeds = tuple(seed + i for i in range(repeats))
    shipped = workers.ship(compile_workload(state, queue, goal, tie_break, seeds))
    search = Search(base_body, base, space, lambda configs: workers.run(evaluate, shipped, configs))
    grid = space.size() <= trials
    if grid:
        baselines = search.baselines()
        bodies = search.grid()
        total = len(search.trials) + len(bodies)
        if progress is not None:
            progress(len(search.trials), total)
        for at in range(0, len(bodies), batch):
            search.run(bodies[at:at + batch])
            if progress is not None:
                progress(len(search.trials), total)
    else:
        restore = quiet_optuna()
        try:
            baselines = search.tpe(trials, batch, seed, progress)
        finally:
            restore()
    best = search.best()
    validation = None
    if holdout is not None:
        held = workers.ship(compile_workload(holdout.state, holdout.queue, goal, tie_break, seeds))
        configs = {config_key(t.config): t.config for t in (best, *baselines.values())}  # each one once
        outcomes = dict(zip(configs, workers.run(evaluate, held, list(configs.values())), strict=True))
        validation = Validation(holdout.files, outcomes[config_key(best.config)],
                                {n: outcomes[config_key(t.config)] for n, t in baselines.items()})
    return TuneResult(goal, "grid" if grid else "tpe", seed, tie_break, repeats, batch, workers.count, space,
                      search.trials, best, baselines, time.perf_counter() - start, validation, search.best_so_far())
