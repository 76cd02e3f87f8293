"""The baseline's run, what `kubefit check` reads of it, in this process or on a Dask worker beside the candidate's.

A check with a baseline simulates two scenarios, the baseline and the candidate, which share nothing but the
machine: with `--workers N` (a LocalCluster) or `--dask-scheduler ADDRESS` the baseline is loaded, prepared and
simulated by a worker while this process loads and simulates the candidate, so the check takes about the time
of the longer of the two instead of their sum. Of the baseline's run the assertions read only `BaselineRun`:
where each pod ended (`Placed`), how many stayed pending, the run's metrics and what it told; the worker sends
that back, not the run (its final state and steps). A LocalCluster's workers read the baseline's files
themselves (the same machine); a remote cluster's are sent the scenario loaded here, and so is every worker when
the baseline is standard input.

The answer is the same wherever it runs: `baseline_runs` is what `Answers` calls in this process, and each
version's run seeds its own tie-break (`simulate(seed=...)`), so `-o json` is byte-identical with and without
workers (which are not among the result's `inputs`, as for the sweeps of `kubefit.planning.sweep`). A version
whose configuration kube-scheduler refuses comes back as its `ConfigError`, raised for every assertion that reads
it, as in this process; any other error (a baseline without nodes, a file that does not load) is raised when the
baseline is first read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kubefit.checks.changes import Placed, pending_steps
from kubefit.checks.targets import Owners
from kubefit.errors import ConfigError, InputError

if TYPE_CHECKING:
    from kubefit.checks.answers import Verbs
    from kubefit.manifests.load import Scenario
    from kubefit.scheduler.scenario import Prepared


@dataclass
class BaselineRun:
    """What the assertions read of the baseline's run on one version."""

    placed: Placed | None = None
    pending: int = 0  # the run's pods left pending (`pending_steps`)
    metrics: dict[str, Any] = field(default_factory=dict)  # `SimulationResult.metrics()`
    told: list[str] = field(default_factory=list)  # what preparing and running it told, in order
    error: ConfigError | None = None  # the version's configuration refused: raised for every reader


@dataclass
class BaselineNames:
    """The baseline's node names and pod keys: whether it shares any with the candidate (`comparable`)."""

    nodes: set[str]
    pods: set[str]

    @classmethod
    def of(cls, scenario: Scenario) -> BaselineNames:
        return cls({n.name for n in scenario.nodes}, {p.key for p in scenario.pods})


def baseline_run(verbs: Verbs, scenario: Scenario, version: str | None, feature_gates: str | None,
                 tell: Callable[[str], None]) -> BaselineRun:
    """Prepare the baseline for `version` (`verbs.baseline_prepare`, else `verbs.prepare`) and simulate it on a copy
    of its state, without stranded capacity (no assertion reads it): what `Answers` reads of it."""
    told: list[str] = []

    def both(message: str) -> None:
        told.append(message)
        tell(message)
    prepare = verbs.baseline_prepare or verbs.prepare
    try:
        loaded, prepared, _ = prepare(scenario, "check", both, nodes_required=False, kube_version=version,
                                      feature_gates=feature_gates)
        result = verbs.simulate(*own_state(loaded, prepared), warn=both, stranded=False)
    except ConfigError as exc:
        return BaselineRun(told=told, error=exc)
    return BaselineRun(Placed.of(scenario, result, Owners(scenario.workloads)), len(pending_steps(result)),
                       result.metrics(), told)


def own_state(scenario: Scenario, prepared: Prepared) -> tuple[Scenario, Prepared]:
    """A prepared scenario with a state of its own (a verb that runs changes its state); one without nodes is
    refused."""
    if not scenario.nodes:
        raise InputError("the scenario has no Node objects", file=scenario.files)
    return scenario, replace(prepared, state=prepared.state.copy())


def baseline_runs(work: tuple[Verbs, Any, bool, str | None], versions: Sequence[str | None]
                  ) -> tuple[BaselineNames, list[BaselineRun | Exception]]:
    """On a worker: the baseline (`work`: the verbs, its files or the scenario loaded, -R, the feature gates) loaded
    once, and run on each version; an error of one version's run is returned in its place."""
    verbs, source, recursive, feature_gates = work
    scenario = verbs.load(source, recursive) if isinstance(source, list) else source
    runs: list[BaselineRun | Exception] = []
    for version in versions:
        try:
            runs.append(baseline_run(verbs, scenario, version, feature_gates, tell=_drop))
        except Exception as exc:  # noqa: BLE001 - raised in the checking process when that version's baseline is read
            runs.append(exc)
    return BaselineNames.of(scenario), runs


def _drop(_message: str) -> None:
    """On a worker nothing is told: the messages go back in `BaselineRun.told`."""
