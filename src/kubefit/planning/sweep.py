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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubefit.collector import collector_paused
from kubefit.errors import InputError

if TYPE_CHECKING:
    from kubefit.api.core import Pod
    from kubefit.k8s.version import KubeVersion
    from kubefit.manifests.load import Scenario
    from kubefit.scheduler.compare import Candidate
    from kubefit.scheduler.config import SchedulerConfiguration
    from kubefit.scheduler.simulate import SimulationResult
    from kubefit.scheduler.state import ClusterState


class Sweep:
    """Where the runs of one sweep go: `with Sweep(dask_scheduler, workers, runs) as sweep:` — `sweep.pool` is
    None for this process (neither option, or `workers` 1; also `workers` capped at `runs`: more would idle),
    else the started `Workers`. The options are checked on construction (before any file is read)."""

    def __init__(self, dask_scheduler: str | None = None, workers: int | None = None, runs: int | None = None) -> None:
        if dask_scheduler is not None and workers is not None:
            raise InputError("give either a Dask scheduler address or a number of local workers, not both",
                             field="--workers")
        if workers is not None and workers < 1:
            raise InputError(f"must be at least 1, got {workers}", field="--workers")
        if dask_scheduler is not None and not isinstance(dask_scheduler, str):
            raise InputError(f"must be tcp://HOST:PORT, got {dask_scheduler!r}", field="--dask-scheduler")
        self.address, self.requested, self.runs = dask_scheduler, workers, runs
        self.pool: Any = None

    @property
    def distributed(self) -> bool:
        """Whether the runs go to Dask workers (else this process runs them, as without the options)."""
        if self.address is not None:
            return True
        return self.requested is not None and min(self.requested, self.runs or self.requested) > 1

    def __enter__(self) -> Sweep:
        if self.distributed:
            from kubefit.planning.workers import Workers

            count = None if self.address is not None else min(self.requested or 1, self.runs or self.requested or 1)
            self.pool = Workers(self.address, count).__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def map(self, fn: Callable[[Any, Any], Any], data: Any, items: Sequence[Any],
            done: Callable[[int, Any], None] | None = None) -> list[Any]:
        """`fn(data, item)` for each item on the workers (`data` shipped to each once), in the order of `items`;
        `done(number, result)` as each finishes."""
        assert self.pool is not None, "Sweep.map runs on Dask workers: enter the sweep with workers first"
        shipped = self.pool.ship(data)
        return self.pool.run(fn, shipped, list(items), done=done)


# --------------------------------------------------------------------------- simulate --compare

@dataclass
class CompareWork:
    """What each worker holds for `simulate --compare`: the compiled nodes and bound pods, the queue."""

    state: ClusterState
    queue: list[Pod]
    tie_break: str
    seed: int | None


def run_candidate(work: CompareWork, cand: Candidate) -> SimulationResult:
    """On a worker: the queue under one configuration, on a copy of the compiled state (as the in-process
    loop runs it on a state compiled afresh: the same arrays, pods and objects)."""
    from kubefit.scheduler.simulate import simulate

    with collector_paused():  # a run leaves no reference cycles; its result is sent and dropped here
        return simulate(work.state.copy(), cand.config, work.queue, tie_break=work.tie_break, seed=work.seed,
                        label=cand.label)


# --------------------------------------------------------------------------- simulate --compare-versions

@dataclass
class VersionWork:
    """What each worker holds for `simulate --compare-versions`: the scenario (after the node actions), which
    each version prepares (decodes the configuration, compiles the state) as the in-process loop does."""

    scenario: Scenario
    tie_break: str
    seed: int | None


@dataclass
class VersionRun:
    """One version's run, as it comes back: the result, what `prepare` noted, the configuration decoded."""

    result: SimulationResult
    notes: list[str]
    config: SchedulerConfiguration


def version_label(version: KubeVersion) -> str:
    return f"{version.name} ({version.patch})"


def run_version(work: VersionWork, version: KubeVersion) -> VersionRun:
    """On a worker: the scenario prepared for `version` and its queue scheduled."""
    from kubefit.scheduler.scenario import prepare
    from kubefit.scheduler.simulate import simulate

    this = prepare(work.scenario, version=version)
    with collector_paused():
        result = simulate(this.state, this.config, work.scenario.pending_pods, tie_break=work.tie_break,
                          seed=work.seed, label=version_label(version))
    return VersionRun(result, this.notes, this.config)
