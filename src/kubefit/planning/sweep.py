"""The sweeps a user runs when one machine is not enough — `simulate --compare` over many configurations,
`simulate --compare-versions`, `consolidate --repack --compare` — on the Dask workers `tune` uses
(`kubefit.planning.workers`): a LocalCluster of `--workers N` processes, or an existing cluster reached by
`--dask-scheduler ADDRESS` (its workers must run this kubefit, checked as for `tune`).

In one process by default: neither option given (or `--workers 1`), the verbs run today's in-process loop
and Dask is never imported; a single comparison would otherwise pay for starting worker processes (1–3 s,
more than most comparisons take). With workers, what every run reads goes to each worker once
(`Workers.ship`: the compiled state and the queue; for versions the scenario itself, each version
preparing its own), and a run is one task naming a configuration (or a version). Each run seeds its own
tie-break (`simulate(seed=...)` builds its own `random.Random`), so which worker runs it, and after which
other run, changes nothing: the results are the `SimulationResult`s (or, for repack, the dicts) the
in-process loop makes, in the same order, and `-o json` is byte-identical (the options `--workers` and
`--dask-scheduler` are not among the result's `inputs` for that reason).
"""

from __future__ import annotations

import io
import operator
import pickle
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from kubefit.api.core import Pod
from kubefit.collector import collector_paused
from kubefit.errors import InputError

if TYPE_CHECKING:
    from kubefit.k8s.version import KubeVersion
    from kubefit.manifests.load import Scenario
    from kubefit.scheduler.compare import Candidate
    from kubefit.scheduler.config import SchedulerConfiguration
    from kubefit.scheduler.simulate import SimulationResult
    from kubefit.scheduler.state import ClusterState


class Sweep:
    """Where the runs of one sweep go: `with Sweep(dask_scheduler, workers, runs) as sweep:` around loading the
    scenario and running it. `sweep.distributed` says whether the runs go to Dask workers: not for neither
    option or `workers` 1 (nor for more `workers` than `runs` can use: capped at `runs`). The options are
    checked on construction, before any file is read; entering the sweep starts the workers in a thread,
    so that the worker processes start (import Python, numpy, kubefit: 1–2 s) while this process loads and
    compiles the scenario, and `sweep.pool` waits for them (None: this process)."""

    def __init__(self, dask_scheduler: str | None = None, workers: int | None = None, runs: int | None = None) -> None:
        if dask_scheduler is not None and workers is not None:
            raise InputError("give either a Dask scheduler address or a number of local workers, not both",
                             field="--workers")
        if workers is not None and workers < 1:
            raise InputError(f"must be at least 1, got {workers}", field="--workers")
        if dask_scheduler is not None and not isinstance(dask_scheduler, str):
            raise InputError(f"must be tcp://HOST:PORT, got {dask_scheduler!r}", field="--dask-scheduler")
        self.address, self.requested, self.runs = dask_scheduler, workers, runs
        self._starting: Any = None  # the Future of the started `Workers`

    @property
    def distributed(self) -> bool:
        """Whether the runs go to Dask workers (else this process runs them, as without the options)."""
        if self.address is not None:
            return True
        return self.requested is not None and min(self.requested, self.runs or self.requested) > 1

    def __enter__(self) -> Sweep:
        if self.distributed:
            from concurrent.futures import ThreadPoolExecutor

            starter = ThreadPoolExecutor(1, thread_name_prefix="kubefit-workers")
            self._starting = starter.submit(self._start)
            starter.shutdown(wait=False)  # not waited for here: the thread ends once the workers are up
        return self

    def _start(self) -> Any:
        from kubefit.planning.workers import Workers

        count = None if self.address is not None else min(self.requested or 1, self.runs or self.requested or 1)
        return Workers(self.address, count).__enter__()

    @property
    def pool(self) -> Any:
        """The started `Workers` (waited for; their error raised here), or None: this process runs the runs."""
        return None if self._starting is None else self._starting.result()

    def __exit__(self, *exc: object) -> None:
        if self._starting is not None:
            starting, self._starting = self._starting, None
            if starting.exception() is None:  # (one that failed was closed, its error raised by `pool`)
                starting.result().close()

    def map(self, fn: Callable[[Any, Any], Any], data: Any, items: Sequence[Any],
            done: Callable[[int, Any], None] | None = None) -> list[Any]:
        """`fn(data, item)` for each item on the workers (`data` shipped to each once), in the order of `items`;
        `done(number, result)` as each finishes."""
        assert self.pool is not None, "Sweep.map runs on Dask workers: enter the sweep with workers first"
        shipped = self.pool.ship(data)
        return self.pool.run(fn, shipped, list(items), done=done)


# --------------------------------------------------------------------------- results, by reference to what was shipped

# the per-state memos the plugins attach to a ClusterState and rebuild from its pods when absent (each from the
# length of the state's change log): a result's state goes back without them (they were 4 of its 7 MB)
STATE_MEMOS = ("_affinity_terms", "_node_columns", "_pod_counts", "_pod_label_groups", "_matching_counters",
               "_log_arrays", "_port_index")


class _Referring(pickle.Pickler):
    """Pickles a run's result with the objects the worker was shipped (nodes, pods, cluster objects) as their
    place in `Work.shared()` (this process holds the same objects at the same places), and a pod the run
    derived from a shipped one (bound: the same pod with its start time) as that pod's place and the
    attributes that differ. (`reducer_override` is not asked about ints, strings, lists, dicts, tuples:
    `persistent_id`, asked about every object, made pickling a result 3 times slower.)"""

    def __init__(self, file: io.BytesIO, places: dict[int, int], keys: dict[str, int], shared: list[Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.places, self.keys, self.shared = places, keys, shared

    def reducer_override(self, obj: Any) -> Any:  # noqa: D102 - pickle's hook
        place = self.places.get(id(obj))
        if place is not None:
            return _shared, (place,)
        if type(obj) is np.ndarray and not obj.dtype.hasobject:  # numpy's own reduce: 4 times slower (steps' ties)
            return _array, (obj.tobytes(), obj.dtype.str, obj.shape)
        if type(obj) is not Pod:
            return NotImplemented
        place = self.keys.get(obj.key)
        if place is None:
            return NotImplemented
        base, mine = self.shared[place].__dict__, obj.__dict__
        if tuple(mine) == tuple(base):  # the same attributes (a dataclass `replace`): those that differ, by position
            values = list(mine.values())
            at = list(compress(range(len(values)), map(operator.is_not, values, base.values())))
            return _replaced, (place, at, [values[i] for i in at])
        names = list(mine)
        differ = map(operator.is_not, map(mine.__getitem__, names), map(base.get, names, repeat(_ABSENT)))
        return _derived, (place, [k for k in base if k not in mine], dict(compress(mine.items(), differ)))


_ABSENT = object()
_receiving = threading.local()  # the shared objects of the result being unpickled (`Work.receive`)


def _shared(place: int) -> Any:
    return _receiving.shared[place]


def _array(data: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(data, dtype).reshape(shape).copy()  # writable, as the run's was


def _replaced(place: int, at: list[int], values: list[Any]) -> Pod:
    base = _receiving.shared[place].__dict__
    mine = list(base.values())
    for i, value in zip(at, values, strict=True):
        mine[i] = value
    pod = object.__new__(Pod)
    pod.__dict__.update(zip(base, mine, strict=True))
    return pod


def _derived(place: int, removed: list[str], changed: dict[str, Any]) -> Pod:
    attributes = dict(_receiving.shared[place].__dict__)
    for key in removed:
        del attributes[key]
    attributes.update(changed)
    pod = object.__new__(Pod)
    pod.__dict__.update(attributes)
    return pod


class Work:
    """What each worker holds for a sweep. A run's result goes back pickled with the shipped objects it
    references (`shared`: the nodes, the pods, the cluster objects) named by their place, and is rebuilt
    here on this process's own objects: the steps and the final state of 8,000 pods took 16 MB and
    twice the run's time to pickle and unpickle when they carried the pods with them; and the results
    share the scenario's objects, as in-process runs do."""

    def shared(self) -> list[Any]:
        raise NotImplementedError

    def send(self, result: Any) -> bytes:
        """On a worker: `result` pickled, the shared objects by place, its states without their memos (the
        result is dropped after)."""
        tables = self.__dict__.get("_tables")
        if tables is None:  # once per worker's copy of the work
            shared = self.shared()
            places: dict[int, int] = {}
            keys: dict[str, int] = {}
            for i, obj in enumerate(shared):
                places.setdefault(id(obj), i)
                if type(obj) is Pod:
                    keys.setdefault(obj.key, i)
            tables = self.__dict__["_tables"] = (places, keys, shared)
        for state in _states(result):
            for memo in STATE_MEMOS:
                state.__dict__.pop(memo, None)
        buffer = io.BytesIO()
        _Referring(buffer, *tables).dump(result)
        return buffer.getvalue()

    def receive(self, blob: bytes) -> Any:
        """Here: a result `send` pickled, rebuilt on this process's objects."""
        shared = self.__dict__.get("_shared")
        if shared is None:
            shared = self.__dict__["_shared"] = self.shared()
        _receiving.shared = shared
        try:
            return pickle.loads(blob)
        finally:
            _receiving.shared = None

    def __getstate__(self) -> dict[str, Any]:  # shipped without the tables of either side
        return {k: v for k, v in self.__dict__.items() if k not in ("_tables", "_shared")}


def _states(result: Any) -> list[Any]:
    inner = getattr(result, "result", result)  # a VersionRun holds its SimulationResult
    state = getattr(inner, "state", None)
    return [] if state is None else [state]


# --------------------------------------------------------------------------- simulate --compare

@dataclass
class CompareWork(Work):
    """What each worker holds for `simulate --compare`: the compiled nodes and bound pods, the queue."""

    state: ClusterState
    queue: list[Pod]
    tie_break: str
    seed: int | None
    controllers: Any = None  # the scenario's (`Controllers.of`), which replace preemption victims (None: not)

    def shared(self) -> list[Any]:
        s = self.state
        return [s.objects, s._demands, *s.nodes, *(p for pods in s.pods for p in pods), *self.queue]


def run_candidate(work: CompareWork, cand: Candidate) -> bytes:
    """On a worker: the queue under one configuration, on a copy of the compiled state (as the in-process
    loop runs it on a state compiled afresh: the same arrays, pods and objects); the result as `Work.send`
    makes it."""
    from kubefit.scheduler.simulate import simulate

    with collector_paused():  # a run leaves no reference cycles; its result is sent and dropped here
        return work.send(simulate(work.state.copy(), cand.config, work.queue, tie_break=work.tie_break,
                                  seed=work.seed, label=cand.label, controllers=_controllers(work.controllers)))


@dataclass
class RunSummary:
    """A configuration's run as `simulate --compare -o json` reads it (`comparison_to_dict`, the verb's notes),
    made on the worker that ran it: a few hundred kilobytes where the whole result (steps, final state) took
    megabytes, and sending and rebuilding it a quarter of the run's own time. `allocatable` is the first
    run's only (the same nodes in every run; set here from the compiled state)."""

    label: str
    scheduled: int
    unschedulable: int
    not_created: int
    placed: dict[str, int]
    usage: dict[str, dict]
    measured: dict
    run_notes: list[str]
    allocatable: dict[str, dict[str, int]] | None = None
    warnings: list[str] | None = None
    inputs: dict | None = None

    def placement(self) -> dict[str, int]:
        return self.placed

    def final(self) -> dict[str, dict]:
        return self.usage

    def metrics(self) -> dict:
        return self.measured


def summarize(result: SimulationResult) -> RunSummary:
    from kubefit.scheduler.simulate import run_notes

    return RunSummary(result.label, result.scheduled, result.unschedulable, result.not_created, result.placement(),
                      result.final(), result.metrics(), run_notes(result))


def run_summary(work: CompareWork, cand: Candidate) -> RunSummary:
    """On a worker: the queue under one configuration (as `run_candidate`), summarized there."""
    from kubefit.scheduler.simulate import simulate

    with collector_paused():
        return summarize(simulate(work.state.copy(), cand.config, work.queue, tie_break=work.tie_break,
                                  seed=work.seed, label=cand.label, controllers=_controllers(work.controllers)))


def _controllers(controllers: Any) -> Any:
    """A run's own copy of the scenario's controllers (as `scheduler.compare.compare` makes them): no Job
    failure counted, the quotas' usage as loading left it."""
    return None if controllers is None else controllers.afresh()


def compare_on(sweep: Sweep, work: CompareWork, cands: Sequence[Candidate],
               done: Callable[[int, Any], None] | None = None,
               summaries: bool = False) -> list[SimulationResult] | list[RunSummary]:
    """Each candidate's run on the sweep's workers: the results as the in-process loop makes them, or
    (`summaries`) what `comparison_to_dict` reads of them."""
    if not summaries:
        return _received(sweep, run_candidate, work, cands, done)
    from kubefit.scheduler.simulate import node_allocatable

    out: list[RunSummary] = sweep.map(run_summary, work, cands, done)
    out[0].allocatable = node_allocatable(work.state)  # never changed by a run: binds change what is requested
    return out


# --------------------------------------------------------------------------- simulate --compare-versions

@dataclass
class VersionWork(Work):
    """What each worker holds for `simulate --compare-versions`: the scenario (after the node actions), which
    each version prepares (decodes the configuration, compiles the state) as the in-process loop does."""

    scenario: Scenario
    tie_break: str
    seed: int | None
    replace_victims: bool = True  # the scenario's controllers replace preemption victims
    gangs_as_workloads: bool = False  # coscheduling's and Volcano's PodGroups as the version's own (`prepare`)

    def shared(self) -> list[Any]:
        return [self.scenario.objects, *self.scenario.nodes, *self.scenario.pods]


@dataclass
class VersionRun:
    """One version's run, as it comes back: the result, what `prepare` noted, the configuration decoded."""

    result: SimulationResult
    notes: list[str]
    config: SchedulerConfiguration


def version_label(version: KubeVersion) -> str:
    return f"{version.name} ({version.patch})"


def run_version(work: VersionWork, version: KubeVersion) -> bytes:
    """On a worker: the scenario prepared for `version` and its queue scheduled (a `VersionRun`, sent)."""
    from kubefit.manifests.controllers import Controllers
    from kubefit.scheduler.scenario import prepare
    from kubefit.scheduler.simulate import simulate

    this = prepare(work.scenario, version=version, gangs_as_workloads=work.gangs_as_workloads)
    with collector_paused():
        result = simulate(this.state, this.config, work.scenario.pending_pods, tie_break=work.tie_break,
                          seed=work.seed, label=version_label(version),
                          controllers=Controllers.of(work.scenario) if work.replace_victims else None)
        return work.send(VersionRun(result, this.notes, this.config))


def versions_on(sweep: Sweep, work: VersionWork, versions: Sequence[KubeVersion],
                done: Callable[[int, Any], None] | None = None) -> list[VersionRun]:
    return _received(sweep, run_version, work, versions, done)


def _received(sweep: Sweep, fn: Callable[[Any, Any], bytes], work: Work, items: Sequence[Any],
              done: Callable[[int, Any], None] | None) -> list[Any]:
    """`fn`'s results rebuilt here as each arrives, while the workers run the others (not after the last)."""
    out: dict[int, Any] = {}

    def arrived(number: int, blob: bytes) -> None:
        out[number] = work.receive(blob)
        if done is not None:
            done(number, out[number])

    sweep.map(fn, work, items, arrived)
    return [out[i] for i in range(len(items))]
