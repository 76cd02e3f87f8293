"""The verbs' answers `kubefit check` judges, each computed once: the files loaded once, compiled once per
Kubernetes version, and every answer asked of the verbs' own functions on that compiled scenario.

The candidate (and the baseline) are loaded once for the whole check (`Verbs.load`), whatever the number of
assertions and versions; per version they are prepared once (`kubefit.verbs.prepare_loaded`: the configuration
decoded, the cluster compiled), and each verb runs on a copy of that state (`simulate_prepared`,
`plan_prepared`, `consolidate_prepared`, `capacity_prepared`: exactly what `kubefit simulate|plan|consolidate|
capacity` run after loading), so check inherits every speed-up of the verbs. The simulation is shared by every
assertion that reads it.

What the verbs tell about the input (objects not read, plugins not simulated, pods the API server refuses, a
run's uncertain preemption) are the check's warnings (`tell`): `::warning` annotations, and failures under
`--strict`. What a verb says about its own answer (consolidate's and capacity's notes: the pending pods placed
first, the removals verified) is evidence of that answer, not a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubefit.checks.baseline import BaselineRun, baseline_run, own_state
from kubefit.checks.targets import Owners, Workload
from kubefit.errors import ConfigError

if TYPE_CHECKING:
    from kubefit.api.core import Pod
    from kubefit.manifests.load import Scenario
    from kubefit.scheduler.scenario import Prepared
    from kubefit.scheduler.simulate import SimulationResult


@dataclass(frozen=True)
class Verbs:
    """The verb functions whose answers are judged: `kubefit.verbs`' own, handed down by `kubefit.verbs.check`
    (this package sits below the public API, as planning does: it calls the verbs back, never imports them)."""

    load: Callable[..., Any]  # (files, recursive) → Scenario
    prepare: Callable[..., Any]  # prepare_loaded
    simulate: Callable[..., Any]  # simulate_prepared
    plan: Callable[..., Any]  # plan_prepared
    consolidate: Callable[..., Any]  # consolidate_prepared
    capacity: Callable[..., Any]  # capacity_prepared
    templates: Callable[..., Any]  # load_templates
    baseline_prepare: Callable[..., Any] | None = None  # the baseline's prepare_loaded, when it differs (no new requests)


@dataclass(frozen=True)
class Refusal:
    """A pod that would not exist: the API server refused it (admission, ResourceQuota) or its controller never
    created it; with the API server's (or the controller's) message."""

    pod: Pod
    workload: Workload
    message: str


def _drop(_message: str) -> None:
    """A verb's note about its own answer: kept as the answer's evidence, not told as a warning."""


class Answers:
    """The verbs' answers for one version, each asked once (an error, such as a configuration kube-scheduler
    refuses, is kept and raised again for every assertion that reads that answer)."""

    def __init__(self, verbs: Verbs, candidate: Scenario, baseline: Scenario | None, templates: list[Any],
                 version: str | None, *, feature_gates: str | None, max_nodes: int | None,
                 tell: Callable[[str], None], tell_baseline: Callable[[str], None],
                 remote: Callable[[], BaselineRun] | None = None) -> None:
        """`remote`: the baseline's run on this version as a Dask worker made it (`kubefit.checks.baseline`),
        waited for when first read (`baseline` is None then: the worker loaded it)."""
        self.verbs, self.candidate, self.baseline, self.templates = verbs, candidate, baseline, templates
        self.remote = remote
        self.version, self.feature_gates, self.max_nodes = version, feature_gates, max_nodes
        self.told: list[str] = []  # the candidate's warnings for this version (what `noWarnings` reads)
        self.tell_baseline = tell_baseline
        self._tell = tell
        self._memo: dict[str, Any] = {}

    def tell(self, message: str) -> None:
        if message not in self.told:
            self.told.append(message)
        self._tell(message)

    def _once(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            try:
                self._memo[key] = compute()
            except ConfigError as exc:
                self._memo[key] = exc
        found = self._memo[key]
        if isinstance(found, ConfigError):
            raise found
        return found

    # ------------------------------------------------------------------ the scenario, compiled once
    def prepared(self) -> tuple[Scenario, Prepared]:
        """The candidate prepared for this version: configuration decoded, cluster compiled (the baseline is
        prepared by `baseline_run`)."""
        def compute() -> tuple[Scenario, Prepared]:
            scenario, prepared, _ = self.verbs.prepare(self.candidate, "check", self.tell, nodes_required=False,
                                                       kube_version=self.version, feature_gates=self.feature_gates)
            return scenario, prepared
        return self._once("prepared", compute)

    def _fresh(self) -> tuple[Scenario, Prepared]:
        """The prepared scenario with a state of its own (a verb that runs changes its state)."""
        return own_state(*self.prepared())

    @property
    def owners(self) -> Owners:
        return self._once("owners", lambda: Owners(self.candidate.workloads))

    # ------------------------------------------------------------------ the verbs' answers
    def simulation(self) -> SimulationResult:
        """`simulate`'s run, without its stranded capacity (no assertion reads it)."""
        return self._once("simulate", lambda: self.verbs.simulate(*self._fresh(), warn=self.tell, stranded=False))

    def baseline_run(self) -> BaselineRun:
        """What the assertions read of the baseline's run: made here, or by a worker (its messages told now, when
        first read, as they would be here)."""
        def compute() -> BaselineRun:
            if self.remote is None:
                assert self.baseline is not None
                return baseline_run(self.verbs, self.baseline, self.version, self.feature_gates, self.tell_baseline)
            run = self.remote()
            for message in run.told:
                self.tell_baseline(message)
            return run
        run = self._once("baseline", compute)
        if run.error is not None:
            raise run.error
        return run

    def plan(self) -> Any:
        return self._once("plan", lambda: self.verbs.plan(*self.prepared(), self.templates, max_nodes=self.max_nodes,
                                                          warn=self.tell))

    def consolidation(self) -> Any:
        return self._once("consolidate", lambda: self.verbs.consolidate(*self._fresh(), warn=_drop))

    def capacity(self, pod: str) -> Any:
        """`capacity --place-pending --pod POD`: the repository's own pending pods placed first (in a GitOps
        repository nothing runs yet: counted beside the bound pods only, the copies would fill empty nodes)."""
        return self._once(f"capacity {pod}", lambda: self.verbs.capacity(*self.prepared(), pod, place_pending=True,
                                                                         warn=_drop))

    def refusals(self, run: bool = False) -> list[Refusal]:
        """The pods that would not exist: those the API server refuses to create (a workload's pods an admission
        plugin forbids, those a ResourceQuota refuses: known at load, whatever the verb), and with `run` those the
        simulation reports not created besides (an OrderedReady StatefulSet's later ordinals, a victim's
        replacement its controller could not create): what a simulate-based assertion covers."""
        def compute() -> list[Refusal]:
            owners = self.owners
            found = [Refusal(pod, owners.of(pod), message)
                     for pod, message in [*self.candidate.forbidden, *self.candidate.refused]]
            if run:
                known = {r.pod.key for r in found}
                found += [Refusal(s.pod, owners.of(s.pod), s.message or "") for s in self.simulation().steps
                          if s.not_created and s.pod.key not in known]
            return found
        return self._once(f"refusals {run}", compute)

    def pods(self) -> list[Pod]:
        """Every pod of the candidate's files: the scenario's and those the API server refuses to create."""
        def compute() -> list[Pod]:
            seen: dict[str, Pod] = {p.key: p for p in self.candidate.pods}
            for pod, _ in [*self.candidate.forbidden, *self.candidate.refused]:
                seen.setdefault(pod.key, pod)
            return list(seen.values())
        return self._once("pods", compute)

    # ------------------------------------------------------------------ the baseline beside the candidate
    def placed(self, baseline: bool = False) -> Any:
        """Where each pod of the candidate's (or the baseline's) run ends (`kubefit.checks.changes.Placed`)."""
        from kubefit.checks.changes import Placed

        def compute() -> Any:
            if baseline:
                return self.baseline_run().placed
            return Placed.of(self.candidate, self.simulation(), self.owners)
        return self._once("baseline placed" if baseline else "placed", compute)

    def moves(self) -> list[dict[str, Any]]:
        """The pods of both runs (matched by name, else by workload and ordinal) the candidate places elsewhere."""
        from kubefit.checks.changes import pod_moves

        return self._once("moves", lambda: pod_moves(self.placed(True), self.placed()))

    def changes(self) -> dict[str, Any]:
        """Per workload and in total, the baseline's figures and the candidate's."""
        from kubefit.checks.changes import before_after

        return self._once("changes", lambda: before_after(self.placed(True), self.placed(),
                                                          self.baseline_run().metrics, self.simulation().metrics()))
