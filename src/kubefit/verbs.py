"""One function per `kubefit` verb: what the command computes, returned as the result objects it renders.

The command line is a thin layer over these functions (it adds option parsing, the tables and exit
codes). Every function reads scenario files as the command does (YAML, JSON, `kind: List`, several
files), raises `kubefit.InputError` for bad input and reports what the user should know (ignored
objects, plugins not simulated, Karmada's int64 wrap-around) through `warn`: by default a
`KubefitWarning` through Python's `warnings`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubefit.collector import kept
from kubefit.errors import InputError, KubefitError

if TYPE_CHECKING:
    from kubefit.api.core import Pod
    from kubefit.checks.evaluate import CheckResult
    from kubefit.manifests.load import Scenario
    from kubefit.manifests.usage.requestsfrom import RequestsFrom
    from kubefit.multicluster.fleet import FleetEstimate, FleetSchedule
    from kubefit.multicluster.member import ModelsVerdict
    from kubefit.planning.consolidate import Consolidation
    from kubefit.planning.plan import Plan
    from kubefit.planning.rightsize import Rightsizing
    from kubefit.planning.sweep import RunSummary
    from kubefit.planning.tune import TuneResult
    from kubefit.scheduler.capacity import CapacityResult
    from kubefit.scheduler.nodeactions import Evictions, NodeActions
    from kubefit.scheduler.scenario import Prepared
    from kubefit.scheduler.simulate import SimulationResult
    from kubefit.scheduler.timeline import TimelineResult

Files = Sequence[str | Path]
Warn = Callable[[str], None]
Loading = Callable[[str, int, int], None]  # (file, documents read, documents in the file)
Progress = Callable[[int, int], None]  # (pods scheduled so far, pods queued)
# ("plan", simulations so far, about how many in all or None, what the last one found): `plan`'s search
PlanProgress = Callable[[str, int, "int | None", str], None]
Nodes = Sequence[str]  # node names for cordon / drain / remove


class KubefitWarning(UserWarning):
    """Something the input holds that kubefit reads differently from, or not at all like, the real system."""


def python_warning(message: str) -> None:
    """The default `warn`: a `KubefitWarning` (shown once per message by Python's warnings filter)."""
    warnings.warn(message, KubefitWarning, stacklevel=3)


def prepare_files(files: Files, verb: str, warn: Warn = python_warning, *, scoring: str | None = None,
                  progress: Loading | None = None, recursive: bool = False, actions: NodeActions | None = None,
                  admission: bool = True, nodes_required: bool = True, kube_version: str | None = None,
                  feature_gates: str | None = None, quota_at_arrival: bool = False,
                  requests: RequestsFrom | None = None, gangs_as_workloads: bool = False
                  ) -> tuple[Scenario, Prepared, Evictions]:
    """Load the scenario files, apply the node `actions`, compile them for scheduling (what every
    kube-scheduler verb starts with).

    Objects the verb does not read and the configuration's notes (plugins not simulated, ...) go to `warn`
    and into `prepared.notes` (the results' ``warnings``);
    `progress` follows the loading (see `kubefit.manifests.scenario.load_scenario`); `admission=False` takes the
    pods as given, without the API server's admission (`--no-admission`); `kube_version` and `feature_gates`
    name the Kubernetes version answered for (`kubefit.k8s.version.resolve`: default the newest);
    `quota_at_arrival`: the pods being created are charged to their ResourceQuotas when they arrive (a timeline),
    not at load; `requests`: the new requests applied first (`--requests-from`, see
    `kubefit.manifests.usage.requestsfrom`: every verb answers for the right-sized cluster). Returns the scenario
    (after the new requests and the actions), its prepared form and what the actions evicted (replacements queued,
    pods lost, drains refused). `gangs_as_workloads`: coscheduling's and Volcano's PodGroups translated into the
    version's Workload and PodGroup (`--gangs-as-workloads`, `kubefit.scheduler.gangtranslation`).
    """
    from kubefit.k8s.version import resolve
    from kubefit.manifests.scenario import load_scenario

    resolve(kube_version, feature_gates)  # refused before any file is read
    if requests is not None:
        requests.check()
    scenario = load_scenario([str(f) for f in files], progress, recursive=recursive, admission=admission,
                             quota_at_arrival=quota_at_arrival)
    return prepare_loaded(scenario, verb, warn, scoring=scoring, actions=actions, nodes_required=nodes_required,
                          kube_version=kube_version, feature_gates=feature_gates, requests=requests,
                          gangs_as_workloads=gangs_as_workloads)


def prepare_loaded(scenario: Scenario, verb: str, warn: Warn = python_warning, *, scoring: str | None = None,
                   actions: NodeActions | None = None, nodes_required: bool = True, kube_version: str | None = None,
                   feature_gates: str | None = None, requests: RequestsFrom | None = None,
                   gangs_as_workloads: bool = False) -> tuple[Scenario, Prepared, Evictions]:
    """`prepare_files` for a scenario loaded already (`kubefit check` loads its files once and prepares them for
    each version it judges): the new requests (`requests`) and the node actions applied, compiled for the version,
    the notes told."""
    from kubefit.k8s.version import ENV, resolve, scenario_note
    from kubefit.manifests.load import unread_objects
    from kubefit.scheduler.nodeactions import Evictions, apply_node_actions
    from kubefit.scheduler.scenario import prepare

    version = resolve(kube_version, feature_gates)
    recorded = scenario.kube_version  # a snapshot's cluster version answers unless told otherwise
    chosen = not kube_version and not os.environ.get(ENV)
    if recorded and chosen:
        version = resolve(None, feature_gates, scenario_version=recorded)
    told = scenario_note(version, recorded, chosen)
    unread = unread_objects(scenario, verb, config=True, members=True)
    evicted = Evictions()
    if requests is not None:
        from kubefit.manifests.usage.requestsfrom import requests_from

        scenario = requests_from(scenario, requests).rightsized.scenario
    if actions:
        scenario, evicted = apply_node_actions(scenario, actions)
    prepared = prepare(scenario, scoring=scoring, nodes_required=nodes_required, version=version,
                       gangs_as_workloads=gangs_as_workloads)
    if told:
        prepared.notes.insert(0, told)
    if unread:
        prepared.notes.insert(0, unread)  # also in the result's warnings (`-o json`), not only on stderr
    for note in prepared.notes:
        warn(note)
    return scenario, prepared, evicted


def node_actions(cordon: Nodes = (), drain: Nodes = (), remove: Nodes = ()) -> NodeActions:
    """The what-if on the node set: nodes to cordon, to drain and to remove (see `kubefit.scheduler.nodeactions`)."""
    from kubefit.scheduler.nodeactions import NodeActions

    for option, names in (("cordon", cordon), ("drain", drain), ("remove", remove)):
        if isinstance(names, str):  # one name, not its letters
            raise InputError(f"{option} takes a sequence of node names, got the string {names!r}", field=option)
    return NodeActions(list(cordon), list(drain), list(remove))


def _inputs(files: Files, config: Any = None, *, configurations: Sequence[tuple[str, Any]] = (),
            requests: RequestsFrom | None = None, **options: Any) -> dict[str, Any]:
    """A kube-scheduler verb's `inputs`: files, options (the new requests' too, `--requests-from`), the
    configuration (or each compared one) and versions."""
    from kubefit.scheduler.config import describe
    from kubefit.told import inputs

    if requests is not None:
        options = {**options, **requests.describe()}
    more: dict[str, Any] = {"configuration": describe(config)} if config is not None else {}
    if configurations:
        more["configurations"] = [{"name": name, **describe(c)} for name, c in configurations]
    answered = config if config is not None else (configurations[0][1] if configurations else None)
    version = getattr(answered, "version", None)
    if version is not None:
        more["kubeVersion"] = version.describe()
    return inputs(files, "kube-scheduler", options, reproduces=None if version is None else version.patch, **more)


def _every(progress: Progress | None, total: int) -> Callable[[int], None] | None:
    """The engine's progress callback (pods done) as the API's (pods done, pods queued)."""
    return None if progress is None else (lambda done: progress(done, total))


def score(files: Files, pod: str | None = None, *, scoring: str | None = None, detail: bool = False,
          explain: bool = False, warn: Warn = python_warning, kube_version: str | None = None,
    feature_gates: str | None = None, recursive: bool = False,
          admission: bool = True, cordon: Nodes = (), drain: Nodes = (), remove: Nodes = (), at_turn: bool = False,
          tie_break: str = "random", seed: int | None = 0, gangs_as_workloads: bool = False) -> dict[str, Any]:
    """Where would this pod go, and why (`kubefit score`).

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files: nodes, pods, at most one scheduler configuration.
    pod : str, optional
        The pending pod to score (`name` or `namespace/name`); default the first in queue order.
    scoring : {"v1.34", "legacy"}, optional
        The score scale; default legacy (0..10) for a `Policy` file, v1.34 (0..100) otherwise.
    detail, explain : bool
        Add the failing plugins and raw scores / the per-resource arithmetic (`--detail`, `--explain`).
    admission : bool
        Pods not stored yet go through the API server's admission (defaults, LimitRanger, RuntimeClass,
        DefaultTolerationSeconds); False (`--no-admission`): pods as given, as kube-scheduler's tests make them.
    cordon, drain, remove : sequence of str
        The node actions of `simulate`, applied first (a drained node's pods are queued again and may be
        scored); `kubefit serve` scores a pod of its what-if this way.
    at_turn : bool
        Score the pod at its turn in `simulate`'s queue (`--at-turn`): the pending pods queued before it are
        scheduled first, with `tie_break` and `seed`, as `simulate` schedules them (preemption included; the
        replacements of victims preempted before its turn are scheduled before it too). Default: the pod
        against the cluster as the files give it.
    gangs_as_workloads : bool
        As for `simulate`: a member of a translated coscheduling or Volcano gang is scored in its group's cycle.
    warn : callable, optional
        Told what the user should know; default a `KubefitWarning`.

    Returns
    -------
    dict
        The fields of the golden cases: ``pod``, ``filter``, ``feasible``, ``score``, ``total``, ``best``...

    Examples
    --------
    The worked example of the Kubernetes "Resource Bin Packing" docs, as kube-scheduler v1.34 scores it:

    >>> import kubefit
    >>> out = kubefit.score(["examples/docs-bin-packing/cluster.yaml",
    ...                      "examples/docs-bin-packing/requested-to-capacity-ratio.yaml"])
    >>> out["total"], out["best"]
    ({'node1': 60, 'node2': 69}, ['node2'])
    """
    from kubefit.report.scheduler import cycle_to_dict
    from kubefit.scheduler.explain import explain as explain_cycle
    from kubefit.scheduler.scenario import find_pending_pod, sampling_note, score_pod

    actions = node_actions(cordon, drain, remove)
    scenario, prepared, _ = prepare_files(files, "score", warn, kube_version=kube_version, feature_gates=feature_gates,
                                                  scoring=scoring, recursive=recursive,
                                          admission=admission, actions=actions or None, gangs_as_workloads=gangs_as_workloads)
    target = find_pending_pod(scenario, pod)
    if at_turn:
        _schedule_before(scenario, prepared, target, tie_break, seed)
    group_note = _group_cycle_view(scenario, prepared, target, tie_break, seed)
    result = score_pod(prepared, target)
    data = cycle_to_dict(result, prepared.state, detail=detail)
    if target.resource_claims and prepared.state.dra is not None:  # what Reserve would allocate on each node
        data["deviceAllocations"] = prepared.state.dra.preview(target, result.feasible.tolist(),
                                                               prepared.state.node_names)
    data["warnings"] = list(prepared.notes) + ([group_note] if group_note else [])
    if group_note:
        warn(group_note)
    turn = {"atTurn": True, "tieBreak": tie_break, "seed": seed} if at_turn else {}
    data["inputs"] = _inputs(files, prepared.config, pod=pod, scoring=scoring, detail=detail, explain=explain,
                             recursive=recursive, gangsAsWorkloads=gangs_as_workloads, **turn)
    note = sampling_note(prepared, target, result)
    if note is not None:
        warn(note)
        data["warnings"].append(note)
    details = explain_cycle(prepared.framework(target), prepared.state, target, result.feasible) if explain else None
    if details is not None:
        data["explain"] = details
    return data


def _group_cycle_view(scenario: Scenario, prepared: Prepared, target: Pod, tie_break: str,
                      seed: int | None) -> str | None:
    """A pod group member is scored in its group's cycle: the members before it assumed (`groupqueue.cycle_view`)."""
    from kubefit.scheduler.engine import Engine
    from kubefit.scheduler.groupqueue import cycle_view

    if target.scheduling_group is None and target.workload_ref is None:
        return None
    engine = Engine(prepared.state, prepared.config, tie_break=tie_break, seed=seed)
    return cycle_view(engine, target, scenario.pending_pods)


def _schedule_before(scenario: Scenario, prepared: Prepared, target: Pod, tie_break: str, seed: int | None) -> None:
    """Bind the pending pods queued before `target` into `prepared.state` as `simulate` binds them."""
    from kubefit.manifests.controllers import Controllers
    from kubefit.scheduler.simulate import simulate as run

    queue = scenario.pending_pods
    before = next(i for i, p in enumerate(queue) if p.key == target.key)
    with kept():
        run(prepared.state, prepared.config, queue[:before], tie_break=tie_break, seed=seed, stranded=False,
            controllers=Controllers(scenario.workloads))


def simulate(files: Files, *, tie_break: str = "random", seed: int | None = 0, cordon: Nodes = (),
             drain: Nodes = (), remove: Nodes = (), recursive: bool = False, progress: Progress | None = None,
             loading: Loading | None = None, warn: Warn = python_warning, kube_version: str | None = None,
    feature_gates: str | None = None, admission: bool = True, replace_victims: bool = True, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False) -> SimulationResult:
    """Schedule every pending pod in queue order, binding each before the next (`kubefit simulate`).

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders: nodes, bound and pending pods, at most one scheduler configuration.
    tie_break : {"random", "first"}
        Among nodes sharing the best total: seeded random (kube-scheduler) or the first in node order.
    seed : int, optional
        Seed of the random tie-break.
    cordon, drain, remove : sequence of str
        What-if on the node set first (`--cordon/--drain/--remove`): mark nodes unschedulable; also queue
        their pods again (DaemonSet and mirror pods stay, as `kubectl drain --ignore-daemonsets`); delete them.
    recursive : bool
        Read the folders among `files` and their sub-folders (`-R`).
    progress : callable, optional
        Called with (pods scheduled so far, pods queued), every 256 pods and at the end.
    loading : callable, optional
        Called with (file, documents read, documents) while the files load.
    warn : callable, optional
        Told what the user should know; default a `KubefitWarning`.
    admission : bool
        As for `score`.
    replace_victims : bool
        A preemption victim's controller creates its replacement, queued like any new pod
        (`kubefit.manifests.controllers`); False: victims are deleted and nothing recreates them, as
        kube-scheduler alone does (`--no-replace-victims`).
    requests : kubefit.RequestsFrom, optional
        New requests applied to the scenario first (`--requests-from vpa|usage`, see
        `kubefit.manifests.usage.requestsfrom`): the pods the VPA (or the usage strategy) rewrites, running ones
        recreated or resized in place; the run answers for the right-sized cluster. The other verbs take it too.
    gangs_as_workloads : bool
        Coscheduling's (`scheduling.x-k8s.io`) and Volcano's (`scheduling.volcano.sh`) PodGroups translated into
        the version's own Workload and PodGroup, `minMember` as `gang: {minCount}` (`--gangs-as-workloads`,
        `kubefit.scheduler.gangtranslation`; with GenericWorkload off nothing is translated, and a warning says
        so); False: they are read as their own schedulers' objects, which kube-scheduler ignores. The other verbs
        that schedule take it too.

    Returns
    -------
    kubefit.scheduler.simulate.SimulationResult
        Every step, the final state and the packing metrics, ``warnings`` and, with node actions,
        ``node_actions`` (the evicted pods and where they went); ``to_dict()`` is `-o json`.

    Examples
    --------
    >>> import kubefit
    >>> result = kubefit.simulate(["examples/workload/cluster.yaml"], tie_break="first")
    >>> result.scheduled, result.unschedulable
    (20, 1)
    >>> message = result.steps[-1].message
    >>> message.split(". ")[0]
    '0/7 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 4 Insufficient memory, 6 Insufficient cpu'
    >>> message.split(". ")[1]
    'no new claims to deallocate, preemption: 0/7 nodes are available: 2 No preemption victims found for incoming pod, 5 Preemption is not helpful for scheduling.'

    Can node-a be drained? Its api pod's ReplicaSet creates a replacement, which lands elsewhere:

    >>> drained = kubefit.simulate(["examples/drain/cluster.yaml"], drain=["node-a"], warn=lambda _: None)
    >>> [(m["pod"], m["replacement"], m["to"]) for m in drained.node_actions["evicted"]]
    [('api-x7k2p', 'api-w49dg', 'node-c')]
    >>> drained.node_actions["allPlaced"]
    True
    """
    from kubefit.scheduler.nodeactions import eviction_report

    actions = node_actions(cordon, drain, remove)
    scenario, prepared, evicted = prepare_files(files, "simulate", warn, kube_version=kube_version, feature_gates=feature_gates,
                                                        progress=loading, recursive=recursive,
                                                actions=actions, admission=admission, requests=requests,
                                                gangs_as_workloads=gangs_as_workloads)
    result = simulate_prepared(scenario, prepared, tie_break=tie_break, seed=seed, progress=progress, warn=warn,
                               replace_victims=replace_victims)
    result.inputs = _inputs(files, prepared.config, tieBreak=tie_break, seed=seed, cordon=list(cordon),
                            drain=list(drain), remove=list(remove), recursive=recursive, requests=requests,
                            gangsAsWorkloads=gangs_as_workloads)
    if actions:
        result.node_actions = eviction_report(result, actions, evicted)
    return result


def simulate_prepared(scenario: Scenario, prepared: Prepared, *, tie_break: str = "random", seed: int | None = 0,
                      progress: Progress | None = None, warn: Warn = python_warning,
                      replace_victims: bool = True, stranded: bool = True) -> SimulationResult:
    """`simulate`'s run on a scenario loaded and prepared already (`prepare_files`; its state is changed): every
    pending pod scheduled, the pods the API server refused reported not created, the notes told. `stranded=False`
    leaves `result.stranded` empty, for callers that read no stranded capacity (`check`: one trial per pending
    shape, ≈ 5 % of a 2,000 × 20,000 run)."""
    from kubefit.manifests.controllers import Controllers
    from kubefit.scheduler.simulate import simulate as run

    queue = scenario.pending_pods
    with kept():  # the steps and the bound pods live on; the cycles' own objects form no reference cycle
        result = run(prepared.state, prepared.config, queue, tie_break=tie_break, seed=seed,
                     progress=_every(progress, len(queue)),
                     controllers=Controllers.of(scenario) if replace_victims else None, stranded=stranded)
    result.steps += refused_steps(scenario)
    result.label = "scenario"
    result.warnings = list(prepared.notes) + _run_notes(result, warn)
    return result


def compare(files: Files, configurations: Sequence[str], *, tie_break: str = "random", seed: int | None = 0,
            cordon: Nodes = (), drain: Nodes = (), remove: Nodes = (), recursive: bool = False,
            progress: Callable[[str, int, int], None] | None = None, loading: Loading | None = None,
            warn: Warn = python_warning, kube_version: str | None = None,
    feature_gates: str | None = None, admission: bool = True,
            replace_victims: bool = True, workers: int | None = None,
            dask_scheduler: str | None = None, summaries: bool = False, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False) -> list[SimulationResult]:
    """The scenario's workload under its own configuration and under each of `configurations`
    (`kubefit simulate --compare`), in this process or on Dask workers.

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders.
    configurations : sequence of str
        Scoring strategies (LeastAllocated, MostAllocated, RequestedToCapacityRatio) or configuration files.
    cordon, drain, remove, recursive, loading, warn, admission, replace_victims, gangs_as_workloads
        As for `simulate`.
    progress : callable, optional
        Called with (configuration label, pods scheduled so far, pods queued); on Dask workers once per
        configuration, when its run comes back.
    workers : int, optional
        Run the configurations on a `distributed.LocalCluster` of this many worker processes (at most one
        per configuration; 1, or neither option: in this process, without Dask). See `kubefit.planning.sweep`.
    dask_scheduler : str, optional
        ``tcp://HOST:PORT`` of a running Dask scheduler whose workers run this kubefit, as for `tune`.
    summaries : bool
        With workers, each run comes back as a `kubefit.planning.sweep.RunSummary`: what
        `comparison_to_dict` reads (counts, placement, final usage, metrics, notes), made on the worker,
        instead of the whole result (its steps and final state), which costs a quarter of a run to send
        back. In this process the results are whole either way.

    Returns
    -------
    list of SimulationResult
        The scenario's run first, then one per configuration, labelled, each with the ``warnings`` of its
        configuration; ``kubefit.scheduler.compare.comparison_to_dict`` is `-o json` (the same wherever
        the runs went).

    Examples
    --------
    >>> import kubefit
    >>> runs = kubefit.compare(["examples/workload/cluster.yaml"], ["MostAllocated"], tie_break="first")
    >>> [(r.label, r.scheduled) for r in runs]
    [('scenario', 20), ('MostAllocated', 21)]
    """
    from kubefit.manifests.controllers import Controllers
    from kubefit.planning.sweep import Sweep
    from kubefit.scheduler.compare import candidates
    from kubefit.scheduler.compare import compare as run_compare

    # the options refused before any file is read; with workers, they start while the files load
    with Sweep(dask_scheduler, workers, 1 + len(configurations)) as sweep:
        scenario, prepared, _ = prepare_files(files, "simulate", warn, kube_version=kube_version, feature_gates=feature_gates,
                                                      progress=loading, recursive=recursive,
                                              actions=node_actions(cordon, drain, remove), admission=admission, requests=requests,
                                              gangs_as_workloads=gangs_as_workloads)
        cands = candidates(prepared.config, configurations)
        for cand in cands[1:]:
            for note in cand.notes:
                warn(note)
        queue = scenario.pending_pods
        controllers = Controllers.of(scenario) if replace_victims else None  # preemption victims' controllers
        if sweep.distributed:
            from kubefit.planning.sweep import CompareWork, compare_on

            finished = None if progress is None else (lambda i, r: progress(cands[i].label, len(queue), len(queue)))
            with kept():
                results = compare_on(sweep, CompareWork(prepared.state, queue, tie_break, seed, controllers), cands,
                                     finished, summaries)
        else:
            tick = None if progress is None else (lambda label, done: progress(label, done, len(queue)))
            with kept():  # as `simulate` and `compare_versions` run (the collector's passes cost ~15 % of a run)
                results = run_compare(scenario.nodes, scenario.pods, queue, cands, tie_break=tie_break, seed=seed,
                                      progress=tick, objects=scenario.objects, controllers=controllers)
    for result, cand in zip(results, cands, strict=True):
        result.warnings = list(cand.notes)
    results[0].warnings = list(prepared.notes)
    told = _inputs(files, configurations=[(c.label, c.config) for c in cands], tieBreak=tie_break, seed=seed,
                   cordon=list(cordon), drain=list(drain), remove=list(remove), recursive=recursive, requests=requests,
                   gangsAsWorkloads=gangs_as_workloads)
    for result in results:
        result.warnings += _run_notes(result, warn)
        result.inputs = told
    return results


def compare_versions(files: Files, versions: Sequence[str], *, tie_break: str = "random", seed: int | None = 0,
                     cordon: Nodes = (), drain: Nodes = (), remove: Nodes = (), recursive: bool = False,
                     progress: Callable[[str, int, int], None] | None = None, loading: Loading | None = None,
                     warn: Warn = python_warning, admission: bool = True,
                     feature_gates: str | None = None, replace_victims: bool = True, workers: int | None = None,
                     dask_scheduler: str | None = None, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False) -> list[SimulationResult]:
    """What an upgrade changes: the scenario's workload under its configuration, as kube-scheduler of each of
    `versions` schedules it (`kubefit simulate --compare-versions 1.34,1.37`).

    Parameters
    ----------
    versions : sequence of str
        At least two supported versions (`1.34` … `1.37`), each answered at its patch; `feature_gates` applies to
        every one of them (a gate one of them does not know is refused).
    tie_break, seed, cordon, drain, remove, recursive, loading, warn, admission, replace_victims, gangs_as_workloads
        As for `simulate`.
    progress : callable, optional
        Called with (version label, pods scheduled so far, pods queued); on Dask workers once per version.
    workers, dask_scheduler
        As for `compare`: each version prepared and run on a Dask worker (the scenario shipped to each once).

    Returns
    -------
    list of SimulationResult
        One per version, labelled `1.34 (v1.34.1)`; `kubefit.scheduler.compare.version_comparison_to_dict` is
        `-o json` (the metrics side by side and every pod placed differently).

    Examples
    --------
    >>> import kubefit
    >>> runs = kubefit.compare_versions(["examples/workload/cluster.yaml"], ["1.34", "1.37"], tie_break="first",
    ...                                 warn=lambda _: None)
    >>> [(r.label, r.scheduled) for r in runs]
    [('1.34 (v1.34.1)', 20), ('1.37 (v1.37.0)', 20)]
    """
    from kubefit.k8s.version import for_minor, parse_gate_overrides, parse_minor
    from kubefit.manifests.controllers import Controllers
    from kubefit.planning.sweep import Sweep, VersionRun, version_label
    from kubefit.scheduler.scenario import prepare
    from kubefit.scheduler.simulate import simulate as run

    labels = [str(v).strip() for v in versions if str(v).strip()]
    gates = parse_gate_overrides(feature_gates)
    # every version refused before any file is read, naming the option that gave it
    resolved = [for_minor(parse_minor(v, field_name="--compare-versions"), gates) for v in labels]
    if len({v.minor for v in resolved}) < 2:
        raise InputError("name at least two different versions, e.g. 1.34,1.37", field="--compare-versions")
    with Sweep(dask_scheduler, workers, len(resolved)) as sweep:  # the workers start while the files load
        scenario, prepared, _ = prepare_files(files, "simulate", warn, progress=loading, recursive=recursive,
                                              actions=node_actions(cordon, drain, remove), admission=admission,
                                              kube_version=labels[0], feature_gates=feature_gates, requests=requests,
                                              gangs_as_workloads=gangs_as_workloads)
        queue = scenario.pending_pods
        remote: list[VersionRun] = []
        if sweep.distributed:
            from kubefit.planning.sweep import VersionWork, versions_on

            finished = None if progress is None else (
                lambda i, r: progress(version_label(resolved[i]), len(queue), len(queue)))
            with kept():
                remote = versions_on(sweep, VersionWork(scenario, tie_break, seed, replace_victims,
                                                             gangs_as_workloads), resolved, finished)
    results = []
    for i, version in enumerate(resolved):
        label = version_label(version)
        if remote:  # run there as below: the first version's configuration and notes are `prepared`'s
            this_is_prepared = version == prepared.config.version
            result, this_notes = remote[i].result, remote[i].notes
            config = prepared.config if this_is_prepared else remote[i].config
        else:
            this = prepared if version == prepared.config.version else prepare(scenario, version=version,
                                                                                     gangs_as_workloads=gangs_as_workloads)
            this_is_prepared, this_notes, config = this is prepared, this.notes, this.config
            tick = None if progress is None else (lambda done, label=label: progress(label, done, len(queue)))
            with kept():
                result = run(this.state, this.config, queue, tie_break=tie_break, seed=seed, progress=tick,
                             label=label, controllers=Controllers.of(scenario) if replace_victims else None)
        notes = list(prepared.notes) if this_is_prepared else [n for n in this_notes if n not in prepared.notes]
        for note in notes if not this_is_prepared else ():
            warn(note)
        result.warnings = notes + _run_notes(result, warn)
        result.inputs = _inputs(files, config, tieBreak=tie_break, seed=seed, cordon=list(cordon),
                                drain=list(drain), remove=list(remove), recursive=recursive,
                                compareVersions=labels, featureGates=feature_gates, requests=requests,
                                gangsAsWorkloads=gangs_as_workloads)
        results.append(result)
    return results


def compare_feature_gates(files: Files, gates: str, *, tie_break: str = "random", seed: int | None = 0,
                          cordon: Nodes = (), drain: Nodes = (), remove: Nodes = (), recursive: bool = False,
                          loading: Loading | None = None, warn: Warn = python_warning, admission: bool = True,
                          kube_version: str | None = None, feature_gates: str | None = None,
                          replace_victims: bool = True, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False) -> list[SimulationResult]:
    """What turning feature gates on (or off) changes: the scenario's workload under its version as given
    (`feature_gates`), then with `gates` set on top (`kubefit simulate --compare-feature-gates
    GenericWorkload=true,GangScheduling=true`), side by side as `compare_versions` shows versions
    (`version_comparison_to_dict`: the pods and the pod groups placed differently).

    The files are read once per run: each version of the API server decides what it serves (with GenericWorkload
    off the pods' `schedulingGroup` is dropped, with it on their PodGroups are served).

    Examples
    --------
    >>> import kubefit
    >>> runs = kubefit.compare_feature_gates(["examples/gangs/cluster.yaml"], "GenericWorkload=true,GangScheduling=true",
    ...                                      kube_version="1.36", tie_break="first", warn=lambda _: None)
    >>> [(r.label, r.scheduled) for r in runs]
    [('1.36 (v1.36.3)', 10), ('1.36 (v1.36.3) GenericWorkload=true,GangScheduling=true', 8)]
    """
    from kubefit.k8s.version import parse_gate_overrides
    from kubefit.manifests.controllers import Controllers
    from kubefit.planning.sweep import version_label
    from kubefit.scheduler.simulate import simulate as run

    if not parse_gate_overrides(gates):
        raise InputError("name the gates to turn on or off, e.g. GenericWorkload=true,GangScheduling=true",
                         field="--compare-feature-gates")
    turned = ",".join(g for g in (feature_gates, gates) if g)  # the later setting of a gate wins
    results = []
    for label_gates, given in ((None, feature_gates), (gates, turned)):
        told: list[str] = []
        scenario, prepared, _ = prepare_files(files, "simulate", told.append if results else warn, progress=loading,
                                              recursive=recursive, actions=node_actions(cordon, drain, remove),
                                              admission=admission, kube_version=kube_version, feature_gates=given,
                                              requests=requests, gangs_as_workloads=gangs_as_workloads)
        with kept():
            result = run(prepared.state, prepared.config, scenario.pending_pods, tie_break=tie_break, seed=seed,
                         controllers=Controllers.of(scenario) if replace_victims else None)
        base = version_label(prepared.config.version)
        result.label = base if label_gates is None else f"{base} {label_gates}"
        notes = list(prepared.notes) if not results else [n for n in told if n not in results[0].warnings]
        for note in notes if results else ():
            warn(note)
        result.warnings = notes + _run_notes(result, warn)
        result.inputs = _inputs(files, prepared.config, tieBreak=tie_break, seed=seed, cordon=list(cordon),
                                drain=list(drain), remove=list(remove), recursive=recursive,
                                compareFeatureGates=gates, featureGates=feature_gates, requests=requests,
                                gangsAsWorkloads=gangs_as_workloads)
        results.append(result)
    return results


def refused_steps(scenario: Scenario) -> list[Any]:
    """The pods the API server refused to create (ResourceQuota admission), after the queue's: not created, with
    its error (they never reach the scheduler)."""
    from kubefit.scheduler.simulate import Step

    return [Step(pod, None, message=error, feasible=None, not_created=True) for pod, error in scenario.refused]


def _run_notes(result: SimulationResult | RunSummary, warn: Warn) -> list[str]:
    """What the run itself found to tell (a preemption kube-scheduler may resolve differently, a DRA pool order
    that may have mattered: `run_notes`, or what a worker found in its run), told via `warn`."""
    from kubefit.scheduler.simulate import run_notes

    found = getattr(result, "run_notes", None)  # a RunSummary: found where it ran
    notes = list(found) if found is not None else run_notes(result)
    for note in notes:
        warn(f"{result.label}: {note}" if result.label not in ("", "scenario") else note)
    return notes


def timeline(files: Files, *, tie_break: str = "random", seed: int | None = 0, cordon: Nodes = (),
             drain: Nodes = (), remove: Nodes = (), recursive: bool = False, progress: Progress | None = None,
             loading: Loading | None = None, warn: Warn = python_warning, kube_version: str | None = None,
             feature_gates: str | None = None, admission: bool = True, replace_victims: bool = True, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False) -> TimelineResult:
    """Replay the workload in time: pods arrive, run and leave (`kubefit simulate --timeline`).

    A pod arrives at its `kubefit.io/arrival` annotation (seconds) and runs for `kubefit.io/duration`;
    a pod that fits nowhere waits and is tried again when a completion frees capacity. A ReplicaSet's,
    StatefulSet's or DaemonSet's pod (restartPolicy Always) is deleted at the end of its duration and its
    controller creates a new one then; a workload's own `kubefit.io/duration` deletes it with its pods
    (`kubefit.scheduler.timeline`).

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders.
    tie_break, seed, cordon, drain, remove, recursive, loading, warn, admission, gangs_as_workloads
        As for `simulate`.
    replace_victims : bool
        A deleted pod's controller creates its replacement (False: nothing recreates it, `--no-replace-victims`).
    progress : callable, optional
        Called with (scheduling attempts so far, pods queued).

    Returns
    -------
    kubefit.scheduler.timeline.TimelineResult
        Every pod's run, the metrics over time, the completions and ``warnings``; ``to_dict()`` is `-o json`.

    Examples
    --------
    One 4-cpu node; `b` (3 cpu, arrives at 1 s) waits until `a` (2 cpu, 0 s to 10 s) leaves:

    >>> import kubefit
    >>> result = kubefit.timeline(["examples/timeline/cluster.yaml"])
    >>> [(p["pod"], p["start"], p["end"], p["attempts"]) for p in result.to_dict()["pods"]]
    [('a', 0, 10, 1), ('b', 10, 15, 2), ('c', 2, None, 1)]
    """
    from kubefit.manifests.controllers import Controllers, Owners
    from kubefit.scheduler.timeline import timeline as run_timeline
    from kubefit.scheduler.timeline import timeline_warnings

    scenario, prepared, evicted = prepare_files(files, "simulate", warn, kube_version=kube_version,
                                                feature_gates=feature_gates, progress=loading, recursive=recursive,
                                                actions=node_actions(cordon, drain, remove), admission=admission,
                                                quota_at_arrival=True, requests=requests,
                                                gangs_as_workloads=gangs_as_workloads)
    queue = scenario.pending_pods
    controllers = Controllers.of(scenario, recreate=replace_victims)
    result = run_timeline(prepared.state, prepared.config, queue, scenario.bound_pods, tie_break=tie_break,
                          seed=seed, progress=_every(progress, len(queue)), controllers=controllers,
                          owners=Owners(scenario.workloads),
                          admitted={id(e.replacement) for e in evicted.evictions if e.replacement is not None})
    told = timeline_warnings(prepared.config, queue, scenario.bound_pods)
    for note in told:
        warn(note)
    result.warnings = list(prepared.notes) + told
    result.inputs = _inputs(files, prepared.config, timeline=True, tieBreak=tie_break, seed=seed,
                            cordon=list(cordon), drain=list(drain), remove=list(remove), recursive=recursive, requests=requests,
                            gangsAsWorkloads=gangs_as_workloads)
    return result


def plan(files: Files, node_templates: Files, *, max_nodes: int | None = None, tie_break: str = "random",
         seed: int = 0, cordon: Nodes = (), drain: Nodes = (), remove: Nodes = (), recursive: bool = False,
         warn: Warn = python_warning, kube_version: str | None = None,
    feature_gates: str | None = None, admission: bool = True, requests: RequestsFrom | None = None,
         workers: int | None = None, dask_scheduler: str | None = None, gangs_as_workloads: bool = False,
         progress: PlanProgress | None = None, loading: Loading | None = None) -> Plan:
    """The fewest nodes of the templates to add so every pending pod that can fit is scheduled (`kubefit plan`).

    Every candidate cluster is judged by a full simulation with the scenario's profile.

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders.
    node_templates : sequence of str or Path
        Node manifests to add copies of; with several, each one's cost in the label `kubefit.io/cost` (default 1).
    max_nodes : int, optional
        At most this many nodes of each template (default: one per queued pod).
    tie_break, seed, cordon, drain, remove, recursive, warn, admission, gangs_as_workloads
        As for `simulate`: with node actions, the nodes to add so that the evicted pods fit too. A scenario
        without Node objects is planned from zero.
    workers, dask_scheduler : optional
        Run the plan's simulations on this many local Dask worker processes (a LocalCluster), or on the Dask
        cluster of this scheduler (tcp://HOST:PORT, its workers running this kubefit): side by side, the counts
        the search may ask next started ahead and the runs it no longer needs stopped; the same answer. A
        cluster that cannot be reached or fails is told (`warn`) and the plan runs in this process.
    progress, loading : callable, optional
        Told after each simulation of the search ("plan", simulations so far, about how many in all or None
        while unknown, what the last one found: its counts, whether they hold, the range the answer lies in);
        `loading` as for `simulate`.

    Returns
    -------
    kubefit.planning.plan.Plan
        Nodes to add per template (``counts``), the simulation of the planned cluster (``result``),
        ``warnings`` and ``node_actions``; ``to_dict()`` is `-o json`.

    Examples
    --------
    One 4-cpu node runs a 2-cpu web pod; ten more are pending (nine of 2 cpu, one of 32 cpu):

    >>> import kubefit
    >>> planned = kubefit.plan(["examples/plan/cluster.yaml"],
    ...                        ["examples/plan/small.yaml", "examples/plan/large.yaml"])
    >>> out = planned.to_dict()
    >>> out["add"], out["cost"], [row["pod"] for row in out["cannotFit"]]
    ({'small': 1, 'large': 1}, 4, ['batch-huge'])
    """
    from kubefit.manifests.templates import load_templates
    from kubefit.planning.sweep import Sweep
    from kubefit.scheduler.nodeactions import eviction_report

    if tie_break not in ("random", "first"):
        raise InputError(f"must be random or first, got {tie_break!r}", field="--tie-break")
    templates = load_templates(node_templates)
    actions = node_actions(cordon, drain, remove)
    told: list[str] = []
    with Sweep(dask_scheduler, workers) as sweep:  # the workers start while the files load
        scenario, prepared, evicted = prepare_files(files, "plan", warn, kube_version=kube_version,
                                                    feature_gates=feature_gates, recursive=recursive, actions=actions,
                                                    admission=admission, nodes_required=False, requests=requests,
                                                    gangs_as_workloads=gangs_as_workloads, progress=loading)
        result = plan_prepared(scenario, prepared, templates, max_nodes=max_nodes, tie_break=tie_break, seed=seed,
                               warn=warn, pool=_pool(sweep, told), told=told, progress=progress)
    result.inputs = _inputs(files, prepared.config, nodeTemplates=[str(t) for t in node_templates],
                            maxNodes=max_nodes, tieBreak=tie_break, seed=seed, cordon=list(cordon),
                            drain=list(drain), remove=list(remove), recursive=recursive, requests=requests,
                            gangsAsWorkloads=gangs_as_workloads)
    if actions:
        result.node_actions = eviction_report(result.result, actions, evicted)
    return result


def plan_prepared(scenario: Scenario, prepared: Prepared, templates: Sequence[Any], *, max_nodes: int | None = None,
                  tie_break: str = "random", seed: int = 0, warn: Warn = python_warning, pool: Any = None,
                  told: list[str] | None = None, progress: PlanProgress | None = None) -> Plan:
    """`plan`'s search on a scenario loaded and prepared already (`prepare_files`), with templates loaded
    (`kubefit.manifests.templates.load_templates`); the notes told. `pool`: Dask workers to run the simulations
    on (`kubefit.planning.plan.DaskPlanner`; None: this process); `told`: what was said before (the workers)."""
    from kubefit.manifests.registration import registration_notes
    from kubefit.planning.plan import plan as run_plan

    told = list(told or ())
    unregistered = registration_notes(scenario.pending_pods, [t.node for t in templates], "the node templates")
    for note in unregistered:
        warn(note)
    result = run_plan(scenario, prepared.config, list(templates), max_nodes=max_nodes, tie_break=tie_break, seed=seed,
                      pool=pool, warn=told.append, progress=progress)
    for note in told + result.notes:
        warn(note)
    result.warnings = list(prepared.notes) + unregistered + told + result.notes
    return result


def _pool(sweep: Any, told: list[str]) -> Any:
    """The sweep's started workers, None for this process; a cluster that cannot be reached or started is told
    (in `told`) and the work runs here."""
    if not sweep.distributed:
        return None
    try:
        return sweep.pool
    except Exception as exc:  # noqa: BLE001 - whatever Dask raises: the answer is computed here all the same
        told.append(f"the Dask workers could not be used ({exc}); computed in this process, with the same answer")
        return None


def consolidate(files: Files, *, config: str | None = None, strategy: str | None = None,
                order: str = "utilization", utilization_threshold: float | None = None, max_nodes: int | None = None,
                force: bool = False, skip_kube_system_check: bool = False, repack: bool = False,
                compare: Sequence[str] = (), tie_break: str = "random", seed: int | None = 0, recursive: bool = False,
                progress: Progress | None = None, loading: Loading | None = None,
                warn: Warn = python_warning, kube_version: str | None = None,
    feature_gates: str | None = None, workers: int | None = None, dask_scheduler: str | None = None, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False) -> Consolidation:
    """Which nodes can today's workload do without (`kubefit consolidate`)?

    Candidates are tried one by one, empty nodes first, then by ascending utilization (as cluster-autoscaler
    measures it); a node goes when cluster-autoscaler's and Karpenter's drainability rules let its pods go and
    the profile places every pod that must move on the remaining nodes (the moves stay for the next
    candidates). The answer is checked with `simulate --remove` of the removable nodes.

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders: nodes, pods (bound and pending), PodDisruptionBudgets, a configuration.
    config : str, optional
        A scheduler configuration file to consolidate with instead of the scenario's (`--config`).
    strategy : str, optional
        The scenario's configuration with this NodeResourcesFit scoring strategy (LeastAllocated,
        MostAllocated, RequestedToCapacityRatio; `--strategy`).
    order : {"utilization", "cost"}
        Candidate order: empty nodes, then ascending utilization; "cost": the dearest first
        (label `kubefit.io/cost`, default 1), then that order.
    utilization_threshold : float, optional
        Only nodes whose utilization is below it are candidates (cluster-autoscaler's
        `--scale-down-utilization-threshold`, whose default is 0.5); default: every node.
    max_nodes : int, optional
        Remove at most this many nodes.
    force : bool
        Delete pods that declare no controller with their node (`kubectl drain --force`) instead of blocking it.
    skip_kube_system_check : bool
        Let kube-system pods without a PodDisruptionBudget move.
    repack : bool
        Also schedule every pod from scratch onto empty nodes (DaemonSet and mirror pods stay) under the
        configuration and each of `compare`, and count the nodes used.
    compare : sequence of str
        With `repack`: further strategies or configuration files, as `simulate --compare`.
    workers, dask_scheduler
        With `repack`: each configuration's repack on Dask workers, as for `compare` (the consolidation
        itself, one candidate after the other, runs in this process).
    tie_break, seed, recursive, loading, warn, gangs_as_workloads
        As for `simulate`.
    progress : callable, optional
        Called with (candidates tried, candidates).

    Returns
    -------
    kubefit.planning.consolidate.Consolidation
        ``removable`` (in removal order), ``blocked`` (node → reason), ``moves``, ``lost``, ``nodes_before``,
        ``nodes_after``, ``lower_bound``, the costs, per-node usage before and after, ``warnings``;
        ``to_dict()`` is `-o json`.

    Examples
    --------
    Five 4-cpu nodes (`examples/consolidate/`): node-d runs only a DaemonSet's agent, node-e one 1.5-cpu api
    pod, node-c a worker pod that declares no controller:

    >>> import kubefit
    >>> result = kubefit.consolidate(["examples/consolidate/cluster.yaml"])
    >>> result.removable, result.nodes_before, result.nodes_after, result.lower_bound
    (['node-d', 'node-e'], 5, 3, 3)
    >>> [(m["pod"], m["from"], m["to"]) for m in result.moves]
    [('api-t5h8r', 'node-e', 'node-c')]
    >>> result.blocked["node-c"].split(",")[0]
    'pod default/worker declares no controller'
    """
    from kubefit.planning.consolidate import ConsolidateOptions
    from kubefit.planning.drainability import DrainOptions
    from kubefit.scheduler.compare import STRATEGIES, Candidate, candidates, config_from_file

    if config is not None and strategy is not None:
        raise InputError("give --config or --strategy, not both", field="--strategy")
    if strategy is not None and strategy.lower() not in {s.lower() for s in STRATEGIES}:
        raise InputError(f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}", field="--strategy")
    if compare and not repack:
        raise InputError("--compare names configurations to repack under: give --repack too", field="--compare")
    if (workers is not None or dask_scheduler is not None) and not repack:
        raise InputError("Dask workers run the repack of each configuration: give --repack too",
                         field="--dask-scheduler" if dask_scheduler is not None else "--workers")
    from kubefit.planning.sweep import Sweep

    options = ConsolidateOptions(order, utilization_threshold, max_nodes, DrainOptions(force, skip_kube_system_check),
                                 tie_break, seed)
    options.check()
    # with workers for the repacks, they start while the files load and the consolidation runs
    with Sweep(dask_scheduler, workers, 1 + len(compare)) as sweep:
        scenario, prepared, _ = prepare_files(files, "consolidate", warn, kube_version=kube_version, feature_gates=feature_gates,
                                                      progress=loading, recursive=recursive, requests=requests,
                                              gangs_as_workloads=gangs_as_workloads)
        chosen = Candidate("scenario", prepared.config)
        if config is not None:
            loaded = config_from_file(config, prepared.config.version)
            chosen = Candidate(config, loaded, loaded.notes)
        elif strategy is not None:
            chosen = candidates(prepared.config, [strategy])[1]
        runs = [chosen, *candidates(chosen.config, list(compare))[1:]] if repack else [chosen]
        told = [note for cand in runs for note in cand.notes]
        for note in told:
            warn(note)
        result = consolidate_prepared(scenario, prepared, options, chosen=chosen, repack_configs=runs if repack else (),
                                      told=told, progress=progress, sweep=sweep, warn=warn)
    compared = len(runs) > 1  # the page names each configuration then
    result.inputs = _inputs(files, None if compared else chosen.config,
                            configurations=[(c.label, c.config) for c in runs] if compared else (), order=order, utilizationThreshold=utilization_threshold, maxNodes=max_nodes, force=force,
                            skipKubeSystemCheck=skip_kube_system_check, repack=repack, tieBreak=tie_break, seed=seed, requests=requests,
                            gangsAsWorkloads=gangs_as_workloads)
    return result


def rightsize(files: Files, requests: RequestsFrom | str = "vpa", *, usage: Files = (), consolidate: bool = True,
              baseline: bool = False, pool_label: str | None = None, order: str = "utilization",
              utilization_threshold: float | None = None, max_nodes: int | None = None, force: bool = False,
              skip_kube_system_check: bool = False, tie_break: str = "random", seed: int | None = 0,
              recursive: bool = False, loading: Loading | None = None, warn: Warn = python_warning,
              kube_version: str | None = None, feature_gates: str | None = None,
              admission: bool = True, gangs_as_workloads: bool = False) -> Rightsizing:
    """The cluster today and with requests from real usage, through the exact scheduler (`kubefit rightsize`).

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders (VerticalPodAutoscalers among them are read as usage too).
    requests : RequestsFrom or str
        Where the new requests come from: "vpa" (the VPA admission controller's rewrite of each pod its VPA
        controls), "usage" (KRR-style strategies on the usage series), or a `RequestsFrom` with every option
        (`kubefit.manifests.usage.requestsfrom`: usage files, a Prometheus to ask, the strategies, the update
        mode).
    usage : sequence of str or Path
        Usage files (`[cpu=|memory=]FILE`) when `requests` is a string.
    consolidate : bool
        Also find the nodes the right-sized cluster can do without (`consolidate` on it, verified).
    baseline : bool
        Also consolidate today's cluster, so the nodes right-sizing frees are told apart from those
        consolidation alone frees.
    pool_label : str, optional
        The node label naming a node's pool (default: Karpenter's, GKE's, EKS's, AKS's, then the instance type).
    order, utilization_threshold, max_nodes, force, skip_kube_system_check
        As for `consolidate`.
    tie_break, seed, recursive, loading, warn, admission, gangs_as_workloads
        As for `simulate` (`gangs_as_workloads`: the groups translated in today's cluster and in the right-sized
        one alike).

    Returns
    -------
    kubefit.planning.rightsize.Rightsizing
        The changes per workload and container, in-place resizes, allocation today and after (cluster and per
        pool), moves, pods now pending, the consolidation, the risk per workload container; ``to_dict()`` is
        `-o json`.

    Examples
    --------
    Three nodes; web's VPA shrinks its four pods, api's raises its memory in place where the kubelet admits it:

    >>> import kubefit
    >>> result = kubefit.rightsize(["examples/rightsize/cluster.yaml", "examples/rightsize/vpa.yaml"],
    ...                            warn=lambda _: None)
    >>> [(r["pod"], r["decision"]) for r in result.resizes]
    [('default/api-5b7c9d4f8-q9w2e', 'InPlace'), ('default/api-5b7c9d4f8-z4r8t', 'Deferred')]
    >>> result.nodes_before, result.nodes_after
    (3, 2)
    """
    from kubefit.manifests.usage.requestsfrom import RequestsFrom, read_all, requests_from
    from kubefit.planning.consolidate import ConsolidateOptions
    from kubefit.planning.drainability import DrainOptions
    from kubefit.planning.rightsize import rightsize as run_rightsize
    from kubefit.scheduler.scenario import prepare

    options = requests if isinstance(requests, RequestsFrom) else RequestsFrom(
        str(requests), usage=tuple(str(u) for u in usage))
    options.check()
    consolidation = ConsolidateOptions(order, utilization_threshold, max_nodes,
                                       DrainOptions(force, skip_kube_system_check), tie_break, seed)
    consolidation.check()
    scenario, prepared, _ = prepare_files(files, "rightsize", warn, kube_version=kube_version,
                                          feature_gates=feature_gates, progress=loading, recursive=recursive,
                                          admission=admission, gangs_as_workloads=gangs_as_workloads)
    applied = requests_from(scenario, options, read_all(options, scenario))
    for note in applied.notes:
        warn(note)
    after = prepare(applied.rightsized.scenario, prepared.config, version=prepared.config.version,
                    gangs_as_workloads=gangs_as_workloads)
    with kept():
        result = run_rightsize(scenario, applied, prepared.config, prepared.state, after.state,
                               options=consolidation, consolidate=consolidate, baseline=baseline,
                               pool_label=pool_label)
    for note in result.notes[len(applied.notes):]:
        warn(note)
    result.warnings = list(prepared.notes) + result.notes
    result.inputs = _inputs(files, prepared.config, **options.describe(), consolidate=consolidate,
                            baseline=baseline, poolLabel=pool_label, order=order,
                            utilizationThreshold=utilization_threshold, maxNodes=max_nodes, force=force,
                            skipKubeSystemCheck=skip_kube_system_check, tieBreak=tie_break, seed=seed,
                            recursive=recursive, gangsAsWorkloads=gangs_as_workloads)
    return result


def consolidate_prepared(scenario: Scenario, prepared: Prepared, options: Any = None, *, chosen: Any = None,
                         repack_configs: Sequence[Any] = (), told: Sequence[str] = (), progress: Progress | None = None,
                         sweep: Any = None, warn: Warn = python_warning) -> Consolidation:
    """`consolidate`'s greedy removal on a scenario loaded and prepared already (`prepare_files`; its state is
    changed), under the `chosen` configuration (a `Candidate`; default the scenario's) with `options`
    (`ConsolidateOptions`, default its defaults); `told`: the notes told already (they lead the warnings)."""
    from kubefit.planning.consolidate import consolidate as run_consolidate
    from kubefit.scheduler.compare import Candidate

    chosen = chosen if chosen is not None else Candidate("scenario", prepared.config)
    result = run_consolidate(scenario, chosen.config, options, state=prepared.state, repack_configs=repack_configs,
                             configuration=chosen.label, progress=progress, sweep=sweep)
    for note in result.notes:
        warn(note)
    result.warnings = list(prepared.notes) + list(told) + result.notes
    return result


def tune(files: Files, objective: str = "pending", *, trials: int = 50, seed: int = 0, batch: int = 8,
         space: str | Path | None = None, tie_break: str = "random", repeats: int | None = None,
         validate: Files = (), dask_scheduler: str | None = None, workers: int | None = None,
         recursive: bool = False, progress: Progress | None = None, warn: Warn = python_warning,
         kube_version: str | None = None, feature_gates: str | None = None, cordon: Nodes = (),
         drain: Nodes = (), remove: Nodes = (), gangs_as_workloads: bool = False) -> TuneResult:
    """The scheduler configuration that packs this workload best (`kubefit tune`).

    Candidates vary NodeResourcesFit's scoring strategy, its resource weights and RequestedToCapacityRatio
    shape, and Score plugin weights; each is a valid v1 KubeSchedulerConfiguration judged by exact
    simulation of the workload. The scenario's configuration and the three stock strategies are the first
    trials, then Optuna's seeded TPE sampler (a grid for a space of at most `trials` configurations) in
    batches of `batch`, on Dask workers; the same seed gives the same answer on any number of workers.

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders: nodes, bound and pending pods, at most one scheduler configuration
        (the one tuned; kube-scheduler's defaults when none).
    objective : {"pending", "nodes", "stranded", "gpu-fragmentation"}
        What to minimise (see `kubefit.planning.objectives`).
    trials : int
        Configurations to try, the baselines included (a smaller space is tried whole).
    seed : int
        Seed of the TPE sampler and of the random tie-break (trial seeds are seed, seed + 1, …).
    batch : int
        Trials asked of the sampler at a time (and run in parallel); part of what the answer depends on.
    space : str or Path, optional
        A YAML search space (see `kubefit.planning.space.load_space`); default: every strategy, the
        weights of the resources the workload requests, shapes of 2–4 points, plugin weights.
    tie_break : {"random", "first"}
        As for `simulate`; with "first" a trial is one deterministic simulation.
    repeats : int, optional
        Seeds per trial with the random tie-break (default 3); the value is their mean.
    validate : sequence of str or Path
        A hold-out workload (nodes and pods) on which the best configuration and the baselines are re-scored.
    dask_scheduler : str, optional
        ``tcp://HOST:PORT`` of a running Dask scheduler whose workers import kubefit; default a
        `distributed.LocalCluster` of `workers` processes.
    workers : int, optional
        Local worker processes (default: this machine's cores; 1 runs in this process).
    cordon, drain, remove : sequence of str
        As for `simulate` (`--cordon/--drain/--remove`): applied to the scenario once, before the baselines
        and every trial, so a trial under a configuration is `simulate` under it with the same actions (not
        to the `validate` hold-out workload).
    recursive, warn, gangs_as_workloads
        As for `simulate` (`gangs_as_workloads`: the hold-out workload's groups are translated too).
    progress : callable, optional
        Called with (trials done, trials planned) after each batch.

    Returns
    -------
    kubefit.planning.tune.TuneResult
        ``best`` (its v1 document in ``best.body``), ``baselines``, ``trials`` (value, configuration,
        seconds each), ``validation`` and ``warnings``; ``to_dict()`` is `-o json`.

    Notes
    -----
    With more than one local worker, the trials run in worker processes that Python starts anew
    (multiprocessing's spawn): a script calling `tune` needs the usual ``if __name__ == "__main__":`` guard.

    Examples
    --------
    The bundled workload leaves its last pod (6 cpu) pending under the default profile; MostAllocated
    packs the small pods tighter and schedules it:

    >>> import kubefit
    >>> result = kubefit.tune(["examples/workload/cluster.yaml"], "pending", trials=12, tie_break="first",
    ...                       workers=1)
    >>> out = result.to_dict()
    >>> out["baselines"]
    {'scenario': 1, 'LeastAllocated': 1, 'MostAllocated': 0, 'RequestedToCapacityRatio': 0}
    >>> out["best"]["value"], out["best"]["summary"]
    (0, 'MostAllocated cpu=1 memory=1; NodeResourcesFit 1, NodeResourcesBalancedAllocation 1')
    """
    from kubefit.planning.objectives import objective as find_objective
    from kubefit.planning.space import checked_config, default_space, load_space, v1_body
    from kubefit.planning.tune import HoldOut, check_settings, scenario_body
    from kubefit.planning.tune import tune as run_tune
    from kubefit.planning.workers import Workers

    goal = find_objective(objective)
    repeats = check_settings(trials, batch, tie_break, repeats)
    scenario, prepared, _ = prepare_files(files, "tune", warn, recursive=recursive, kube_version=kube_version,
                                          feature_gates=feature_gates, actions=node_actions(cordon, drain, remove),
                                          gangs_as_workloads=gangs_as_workloads)
    body = scenario_body(scenario.scheduler_config)
    told = list(prepared.notes)
    if body is not None and prepared.config.dialect not in ("v1", "default"):
        told.append(f"the scenario's {prepared.config.dialect} configuration is tuned as its v1 conversion (what "
                    f"`kubefit config convert` writes), scored the way kube-scheduler {prepared.config.version.patch} scores it")
    base_body = v1_body(prepared.config, body)
    base = checked_config(base_body, prepared.config.source or "<kube-scheduler defaults>", prepared.config.version)
    if not any(sp.name == "NodeResourcesFit" for p in base.profiles for sp in p.score_plugins):
        told.append("no profile scores with NodeResourcesFit: its strategy, resource weights and shape change "
                    "nothing here; only the other plugins' weights can")
    queue = scenario.pending_pods
    if not queue:
        raise InputError("the scenario has no pending pod (a Pod without spec.nodeName): nothing to tune for",
                         file=scenario.files)
    search_space = default_space(base, queue, scenario.pods)
    if space is not None:
        from kubefit.manifests.documents import read_documents

        docs = read_documents(space, allow_empty=False)
        if len(docs) != 1:
            raise InputError(f"a search space is one YAML mapping, found {len(docs)} documents", file=str(space))
        search_space = load_space(docs[0].body, str(space), search_space)
    holdout = None
    if validate:
        held, held_prepared, _ = prepare_files(validate, "tune", warn, recursive=recursive,
                                               kube_version=kube_version, feature_gates=feature_gates,
                                               gangs_as_workloads=gangs_as_workloads)
        if held.scheduler_config is not None:
            told.append(f"--validate: {held.scheduler_config.source}: {held.scheduler_config.label} is not used "
                        f"(the hold-out workload is scored under the tuned configuration and the baselines)")
        holdout = HoldOut([str(f) for f in validate], held_prepared.state, held.pending_pods)
    for note in told[len(prepared.notes):]:
        warn(note)
    with Workers(dask_scheduler, workers) as pool:
        if pool.count > batch:
            told.append(f"batches of {batch} keep at most {batch} of the {pool.count} Dask workers busy (a larger "
                        f"--batch uses them all, and changes what the seed gives)")
            warn(told[-1])
        result = run_tune(prepared.state, queue, base_body, base, search_space, pool, goal=goal, trials=trials,
                          seed=seed, batch=batch, tie_break=tie_break, repeats=repeats, holdout=holdout,
                          progress=progress)
    result.warnings = told
    result.inputs = _inputs(files, prepared.config, objective=goal.name, trials=trials, seed=seed, batch=batch,
                            space=None if space is None else str(space), tieBreak=tie_break, repeats=repeats,
                            validate=[str(f) for f in validate], daskScheduler=dask_scheduler, workers=workers,
                            cordon=list(cordon), drain=list(drain), remove=list(remove), recursive=recursive,
                            gangsAsWorkloads=gangs_as_workloads)
    return result


def capacity(files: Files, pod: str | None = None, *, limit: int | None = None, tie_break: str = "first",
             seed: int | None = 0, replay: bool = False, recursive: bool = False, loading: Loading | None = None,
             warn: Warn = python_warning, kube_version: str | None = None,
    feature_gates: str | None = None, admission: bool = True, place_pending: bool = False,
    node_templates: Files = (), nodes: int = 1, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False) -> CapacityResult:
    """How many more copies of a pod fit (`kubefit capacity`, as cluster-capacity counts them).

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders.
    pod : str, optional
        The pod to copy (`name` or `namespace/name`, pending or bound), or a workload as kubectl names it
        (`deployment/web`, `statefulset/db`: one more replica of its template); default the first pending pod
        that is not a DaemonSet's.
    limit : int, optional
        Stop after this many copies (`--max`).
    replay : bool
        Place the copies one by one even where the count is closed-form (`--check`; same answer).
    place_pending : bool
        Schedule the scenario's pending pods first, as `simulate` does (an install's own pods), and count the
        copies beside them (`--place-pending`); by default, as cluster-capacity, beside the bound pods only.
    node_templates : sequence of str or Path
        Node templates (`--node-template`, as for `plan`, with their ResourceSlices): `nodes` copies of each are
        added to the cluster first (`--nodes`, default 1), their DaemonSet pods placed on them.
    recursive, loading, warn, admission, gangs_as_workloads
        As for `simulate`.

    Returns
    -------
    kubefit.scheduler.capacity.CapacityResult
        ``count``, ``per_node``, ``stop_reason``, the FitError ``message`` and ``warnings``;
        ``to_dict()`` is `-o json`.

    Examples
    --------
    >>> import kubefit
    >>> result = kubefit.capacity(["examples/workload/cluster.yaml"], "report-0", warn=lambda _: None)
    >>> result.count, result.per_node
    (2, {'highmem-1': 1, 'highmem-2': 1})
    """
    scenario, prepared, _ = prepare_files(files, "capacity", warn, kube_version=kube_version, feature_gates=feature_gates,
                                                  progress=loading, recursive=recursive,
                                          admission=admission, requests=requests, gangs_as_workloads=gangs_as_workloads)
    result = capacity_prepared(scenario, prepared, pod, limit=limit, tie_break=tie_break, seed=seed, replay=replay,
                               place_pending=place_pending, node_templates=node_templates, nodes=nodes, warn=warn)
    result.inputs = _inputs(files, prepared.config, pod=pod, max=limit, tieBreak=tie_break, seed=seed, check=replay,
                            recursive=recursive, placePending=place_pending, requests=requests, gangsAsWorkloads=gangs_as_workloads,
                            **({"nodeTemplates": [str(t) for t in node_templates], "nodes": nodes}
                               if node_templates else {}))
    return result


def capacity_prepared(scenario: Scenario, prepared: Prepared, pod: str | None = None, *, limit: int | None = None,
                      tie_break: str = "first", seed: int | None = 0, replay: bool = False,
                      place_pending: bool = False, node_templates: Files = (), nodes: int = 1,
                      warn: Warn = python_warning) -> CapacityResult:
    """`capacity`'s count on a scenario loaded and prepared already (`prepare_files`; its state is left as it
    was): the copies of `pod` that fit, the notes told."""
    from kubefit.scheduler.simulate import simulate as run

    members = _group_members(scenario, prepared, pod)
    target = members[0] if members else find_pod(scenario, pod)
    state, notes, queue = prepared.state, list(prepared.notes), scenario.pending_pods
    copied = {p.key for p in members} or {target.key}
    others = [p for p in queue if p.key not in copied]  # pending beside the pod (or group) copied
    if node_templates:
        state = _template_nodes(scenario, prepared, node_templates, nodes, notes, tie_break, seed)
    if place_pending and queue:
        state = state.copy()
        placed = run(state, prepared.config, queue, tie_break=tie_break, seed=seed, stranded=False)
        notes.append(f"the scenario's pending pods placed first, as simulate places them: {placed.scheduled} of "
                     f"{len(queue)} scheduled; the copies are counted beside them")
    elif others:
        notes.append(f"the scenario's {len(others)} other pending pod(s) are not placed first: the copies are counted "
                     f"beside the bound pods only, as cluster-capacity counts them; --place-pending places them "
                     f"first, as simulate would (an install's own pods)")
    if members:
        result = _group_capacity(scenario, prepared, state, members, limit, tie_break, seed)
        if scenario.quota:  # not evaluated: said, never silently
            notes.append(f"the scenario's ResourceQuotas are not applied to the copies of pod group "
                         f"{result.group['podGroup']}: the count is what the nodes hold")
    else:
        result = _copies_within_quota(scenario, prepared, state, pod, target, limit, tie_break, seed, replay)
    for note in notes[len(prepared.notes):]:
        warn(note)
    result.warnings = notes
    return result


def _copies_within_quota(scenario: Scenario, prepared: Prepared, state: Any, pod: str | None, target: Pod,
                         limit: int | None, tie_break: str, seed: int | None, replay: bool) -> CapacityResult:
    """The copies of `target` that fit, counted up to what the scenario's ResourceQuotas admit: creating the next
    copy fails with the API server's quota error when they stop the count."""
    from kubefit.scheduler.capacity import (
        FAILED_CREATING_POD,
        LIMIT_REACHED,
        CapacityResult,
        estimate_capacity,
    )

    quota = scenario.quota.headroom(target, limit) if scenario.quota else None  # the copies ResourceQuota admits
    if quota is not None and quota[0] == 0:
        result = CapacityResult(target, 0, {}, FAILED_CREATING_POD, quota[1])
    else:
        result = estimate_capacity(state, prepared.config, target, limit=limit if quota is None else quota[0],
                                   tie_break=tie_break, seed=seed, replay=replay,
                                   copies=_ordinals(scenario, pod, target))
    if quota is not None and result.stop_reason == LIMIT_REACHED:  # creating the next copy fails
        result.stop_reason, result.message = FAILED_CREATING_POD, _quota_error(target, quota[1])
    elif quota is not None and quota[0] == 0:
        result.message = _quota_error(target, quota[1])
    return result


def _template_nodes(scenario: Scenario, prepared: Any, node_templates: Files, count: int, notes: list[str],
                    tie_break: str, seed: int | None) -> Any:
    """`capacity --node-template`: the cluster with `count` nodes of each template added, their DaemonSet pods
    placed on them (the controller creates those as a node registers)."""
    from kubefit.manifests.templates import load_templates
    from kubefit.planning.plan import with_template_nodes
    from kubefit.scheduler.simulate import simulate as run

    if count < 1:
        raise InputError(f"--nodes must be at least 1, got {count}", field="--nodes")
    templates = load_templates(node_templates)
    state, daemons = with_template_nodes(scenario, templates, count)
    if daemons:
        placed = run(state, prepared.config, daemons, tie_break=tie_break, seed=seed, stranded=False)
        notes.append(f"{placed.scheduled} of the added nodes' {len(daemons)} DaemonSet pod(s) placed on them first")
    notes.append(f"{count} node(s) of each template added ({', '.join(t.name for t in templates)}), with "
                 f"{sum(len(t.slices) for t in templates) * count} ResourceSlice(s)")
    return state


def _group_members(scenario: Scenario, prepared: Prepared, name: str | None) -> list[Pod]:
    """`capacity --pod` of a pod group (`podgroup/NAME`, `podgroup/NAMESPACE/NAME`) or of one of its pods, where the
    version schedules groups (GenericWorkload on): every pod of the group (bound ones too), in queue order; [] for
    a pod of no group (its copies are single pods)."""
    from kubefit.scheduler.podgroups import WorkloadGates, group_key

    prefix, _, rest = (name or "").partition("/")
    wanted = prefix.lower() in ("podgroup", "podgroups", "pg")
    if not WorkloadGates.of(prepared.config.version).generic:
        if wanted:
            raise InputError(f"{name}: pod groups are scheduled as groups only with the GenericWorkload feature gate "
                             f"on (--feature-gates GenericWorkload=true)", field="--pod")
        return []
    pods = [*scenario.bound_pods, *scenario.pending_pods]
    if wanted:
        namespace, _, group = rest.rpartition("/")
        keys = {k for p in pods if (k := group_key(p)) is not None and k[1] == group and namespace in ("", k[0])}
        if len(keys) != 1:
            have = sorted({f"{k[0]}/{k[1]}" for p in pods if (k := group_key(p)) is not None})
            raise InputError(f"{name}: {'several pod groups have that name (give podgroup/NAMESPACE/NAME)' if keys else 'no pod names that pod group'} "
                             f"(pod groups: {', '.join(have[:10]) or 'none'})", field="--pod")
        key = keys.pop()
    else:
        target = find_pod(scenario, name)
        key = group_key(target)
        if key is None:
            return []
    return [p for p in pods if group_key(p) == key]


def _group_capacity(scenario: Scenario, prepared: Prepared, state: Any, members: list[Pod], limit: int | None,
                    tie_break: str, seed: int | None) -> CapacityResult:
    """Copies of the whole group the members form (`kubefit.scheduler.capacity.group_capacity`)."""
    from kubefit.scheduler.capacity import group_capacity
    from kubefit.scheduler.podgroups import GroupTable, group_key

    key = group_key(members[0])
    table = GroupTable.build(scenario.objects, prepared.config.version, members)
    return group_capacity(state, prepared.config, key, table.specs.get(key), members, limit=limit,
                          tie_break=tie_break, seed=seed)


def check(files: Files, expect: str | Path | None = None, *, baseline: Files = (), assertions: Sequence[Any] = (),
          node_templates: Files = (), kube_versions: str | None = None, feature_gates: str | None = None,
          recursive: bool = False, namespace: str | None = None, max_nodes: int | None = None,
          fail_on: str | None = None, warn: Warn = python_warning, requests: RequestsFrom | None = None,
    gangs_as_workloads: bool = False, workers: int | None = None, dask_scheduler: str | None = None) -> CheckResult:
    """Do the scheduling expectations hold for this scenario (`kubefit check`)?

    Each assertion reads one verb's answer (simulate, plan, consolidate, capacity, `config validate`) on the
    scenario `files`, compared with the `baseline` where it says so; see `kubefit.checks.expectations`. The files
    are loaded once and compiled once per version; each verb's own function answers on them.

    Parameters
    ----------
    files : sequence of str or Path
        The candidate scenario (files or folders, `-` for standard input); empty: the expectation file's `files`.
    expect : str or Path, optional
        A `SchedulingExpectations` file (kubefit.io/v1alpha1).
    baseline : sequence of str or Path
        The scenario as it is before the change (`--baseline`): files or folders, or a git ref (`origin/main`:
        the candidate's files as they are at that commit, `kubefit.checks.gitref`); what `maxPending: baseline` and
        `maxPodMoves` compare with; it must share a node or a pod with the candidate (empty: the expectation
        file's `baseline`).
    assertions : sequence of `kubefit.checks.expectations.Assertion`
        Further assertions (`from_options` makes them from the command's options); one of the same kind and
        target replaces the file's.
    node_templates : sequence of str or Path
        The node templates `maxNodesAdded` plans with (instead of the file's `nodeTemplates`); one per zone for
        workloads spread over zones.
    kube_versions : str, optional
        `1.34,1.37` or `all`: every assertion is judged on each (instead of the file's `kubeVersions`).
    namespace : str, optional
        The namespace of a workload or pod named without one (`-n`; else the one namespace that has it).
    max_nodes : int, optional
        `plan`'s `--max-nodes` for `maxNodesAdded` (at most this many nodes of each template).
    fail_on : {"error", "warning"}, optional
        `warning`: an assertion of severity warning that does not hold fails the check too.
    feature_gates, recursive, warn, gangs_as_workloads
        As for `simulate`.
    workers : int, optional
        With a baseline: the baseline is read and simulated on a `distributed.LocalCluster` of this many worker
        processes (one per version at most) while this process reads and simulates the candidate (1, or neither
        option: one after the other here). The answers are the same; see `kubefit.checks.baseline`.
    dask_scheduler : str, optional
        ``tcp://HOST:PORT`` of a running Dask scheduler whose workers run this kubefit, instead of `workers`.
    requests : kubefit.RequestsFrom, optional
        The candidate is the scenario with these new requests (`--requests-from`); the baseline is taken as it is,
        and defaults to the candidate's files: `maxPending: baseline` then asks whether right-sizing leaves more
        pods pending than today.

    Returns
    -------
    kubefit.checks.evaluate.CheckResult
        Every assertion's outcome (status, the verb's answer, a message, the evidence, the findings at their file
        and line), the pods placed differently from the baseline (``moves``) and each workload before and after
        (``changes``), ``warnings``; ``passed``; ``to_dict()`` is `-o json`.

    Examples
    --------
    >>> import kubefit
    >>> from kubefit.checks.expectations import from_options
    >>> result = kubefit.check(["examples/workload/cluster.yaml"], assertions=from_options(max_pending="0"),
    ...                        warn=lambda _: None)
    >>> result.passed, result.outcomes[0].message
    (False, 'simulate leaves 1 pod(s) pending (at most 0)')
    >>> finding = result.outcomes[0].findings[0]  # the pod left pending, where its document starts
    >>> finding.object, finding.file, finding.line
    ('shop/pod/report-0', 'examples/workload/cluster.yaml', 424)
    """
    import tempfile

    from kubefit.checks.answers import Verbs
    from kubefit.checks.evaluate import run_check
    from kubefit.checks.expectations import combined, load_expectations
    from kubefit.checks.gitref import baseline_files, renamer
    from kubefit.manifests.templates import load_templates
    from kubefit.told import inputs

    given = load_expectations(expect) if expect is not None else None
    wanted = combined(given, list(assertions), [str(t) for t in node_templates], kube_versions,
                      [str(f) for f in files], [str(f) for f in baseline], namespace=namespace, max_nodes=max_nodes,
                      recursive=recursive, fail_on=fail_on)
    from functools import partial

    # both sides see coscheduling's and Volcano's PodGroups alike (`--gangs-as-workloads`)
    baseline_prepare = partial(prepare_loaded, gangs_as_workloads=gangs_as_workloads)
    prepare: Callable[..., Any] = baseline_prepare
    if requests is not None:  # the candidate right-sized; the baseline (by default the same files) as it is
        requests.check()
        prepare = partial(prepare_loaded, requests=requests, gangs_as_workloads=gangs_as_workloads)
        if not wanted.baseline:
            wanted = replace(wanted, baseline=list(wanted.files))
    verbs = Verbs(_load_check, prepare, simulate_prepared, plan_prepared, consolidate_prepared,
                  capacity_prepared, load_templates, baseline_prepare=baseline_prepare)
    away = _BaselineAway(verbs, workers, dask_scheduler, feature_gates, warn)
    if away.distributed and not wanted.baseline:
        raise InputError("runs the baseline on Dask workers beside the candidate: give --baseline (or baseline: in "
                         "the expectation file)", field="--dask-scheduler" if dask_scheduler else "--workers")
    with tempfile.TemporaryDirectory(prefix="kubefit-baseline-") as tmp:
        read, names = baseline_files(wanted.baseline, wanted.files, Path(tmp))
        try:
            result = run_check(verbs, replace(wanted, baseline=read), feature_gates=feature_gates, warn=warn,
                               rename=renamer(names), elsewhere=away if away.distributed else None)
        finally:
            away.close()
    result.inputs = inputs(wanted.files, "kube-scheduler", {
        "baseline": wanted.baseline, "expect": None if expect is None else str(expect),
        "nodeTemplates": wanted.node_templates, "kubeVersions": wanted.kube_versions, "featureGates": feature_gates,
        "recursive": wanted.recursive, "namespace": wanted.namespace, "maxNodes": wanted.max_nodes,
        "failOn": wanted.fail_on, "gangsAsWorkloads": gangs_as_workloads,
        **({} if requests is None else requests.describe())},
        reproduces=", ".join(dict.fromkeys(result.versions)) or None)
    return result


class _BaselineAway:
    """`check --workers N` / `--dask-scheduler`: the baseline's runs (`kubefit.checks.baseline.baseline_runs`) on Dask
    workers (`kubefit.planning.workers.Background`) while this process reads and runs the candidate. A LocalCluster's
    workers read the baseline's files (standard input excepted); a remote cluster's are sent it, read here. A
    cluster that fails is said once and the baseline runs here, with the same answers."""

    def __init__(self, verbs: Any, workers: int | None, dask_scheduler: str | None, feature_gates: str | None,
                 warn: Warn) -> None:
        from kubefit.planning.sweep import Sweep

        # the options' own errors, before any file is read; one local worker: here, without Dask
        self.distributed = Sweep(dask_scheduler, workers).distributed
        self.verbs, self.workers, self.address, self.gates, self.warn = verbs, workers, dask_scheduler, feature_gates, warn
        self.background: Any = None
        self.work: tuple | None = None
        self.versions: list[str | None] = []
        self.failed = False

    def __call__(self, files: Sequence[str], recursive: bool, versions: list[str | None]) -> Callable[[int], Any]:
        from kubefit.checks.baseline import baseline_runs
        from kubefit.planning.workers import Background

        source: Any = list(files)
        if self.address is not None or "-" in source:
            source = self.verbs.load(source, recursive)
        self.work = (self.verbs, source, recursive, self.gates)
        self.versions = versions
        self.background = Background(self.address, self.workers).start(baseline_runs, self.work,
                                                                       [[v] for v in versions])
        return self._fetch

    def _fetch(self, i: int) -> Any:
        from kubefit.checks.baseline import baseline_runs

        if not self.failed:
            try:
                names, runs = self.background.result(i)
                return names, runs[0]
            except KubefitError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure of the cluster: the baseline runs here
                self.failed = True
                self.warn(f"the Dask workers failed ({type(exc).__name__}: {exc}); the baseline runs in this "
                          f"process, with the same answers")
        verbs, source, recursive, gates = self.work
        if isinstance(source, list):
            source = self.verbs.load(source, recursive)
            self.work = (verbs, source, recursive, gates)
        names, runs = baseline_runs(self.work, [self.versions[i]])
        return names, runs[0]

    def close(self) -> None:
        if self.background is not None:
            self.background.close()


def _load_check(files: Files, recursive: bool) -> Scenario:
    """`kubefit check`'s one load of a scenario (admission on, as every verb it asks has it)."""
    from kubefit.manifests.scenario import load_scenario

    return load_scenario([str(f) for f in files], None, recursive=recursive)


def _quota_error(pod: Pod, message: str) -> str:
    """The API server's refusal of the next copy (ResourceQuota admission)."""
    from kubefit.manifests.admission import forbidden_error

    return forbidden_error(pod, message)


def _ordinals(scenario: Scenario, name: str | None, first: Pod) -> Callable[[int], Pod] | None:
    """For `--pod statefulset/NAME` with claim templates: the i-th copy is the StatefulSet's next ordinal but i,
    created after its own claims (stateful_pod_control.go); None for any other pod (copies of it alike)."""
    from kubefit.manifests.admission import admitter
    from kubefit.manifests.workloads import replica_of, workload_name

    named = workload_name(name or "")
    if named is None or named[1] != "StatefulSet" or not any("persistentVolumeClaim" in v for v in first.volumes):
        return None
    namespace, _, rest = named
    admit = admitter(scenario)

    def copy(i: int) -> Pod:
        if i == 0:
            return first
        replica = admit(replica_of(scenario, "StatefulSet", rest, later=i, namespace=namespace))
        if replica is None:
            raise InputError(f"the API server forbids {name}'s pods (see the warnings)", field="--pod")
        return replica
    return copy


def find_pod(scenario: Scenario, name: str | None) -> Pod:
    """The pod to copy: `name` as kubectl names a workload (`deployment/web`, `sts/db`, or with its namespace,
    `shop/deployment/web`: one more replica of its template, admitted as its controller's pods are), else the pod
    named `name` (`pod` or `namespace/pod`, pending or bound) as a new pending pod; without a name, the first
    pending pod in queue order that is not a DaemonSet's (a DaemonSet pod is pinned to its node: one copy at most
    would fit)."""
    from kubefit.manifests.admission import admitter
    from kubefit.manifests.workloads import daemon_pod, replica_of, workload_name

    if name is None:
        pending = [p for p in scenario.pending_pods if not daemon_pod(p)]
        if not pending:
            raise InputError("the scenario has no pending pod (a Pod without spec.nodeName) that is not a DaemonSet's; "
                             "name one with --pod (a pod, or a workload such as deployment/web)", file=scenario.files)
        return pending[0]
    named = workload_name(name)
    if named is not None:
        namespace, kind, rest = named
        replica = admitter(scenario)(replica_of(scenario, kind, rest, namespace=namespace))
        if replica is None:
            raise InputError(f"the API server forbids {name}'s pods (see the warnings)", field="--pod")
        return replica
    for p in (*scenario.pending_pods, *scenario.bound_pods):
        if name in (p.name, p.key):
            return replace(p, node_name="")  # a copy is a new, pending pod
    raise InputError(f"no pod named {name!r} in the scenario", file=scenario.files)


def estimate(files: Files, *, request: str | None = None, members: Sequence[str] = (),
             feature_gates: str | None = None, explain: bool = False,
             warn: Warn = python_warning) -> FleetEstimate:
    """Available replicas per member cluster, as Karmada's general estimator computes them (`kubefit estimate`).

    Parameters
    ----------
    files : sequence of str or Path
        Karmada `Cluster` objects, and a `ResourceBinding` (or a workload with its `PropagationPolicy`).
    request : str, optional
        Per-replica request such as ``"cpu=3,memory=20Gi"``; default the binding's.
    members : sequence of str
        ``NAME=FILE``: a member's nodes and pods, for the exact node-level count beside Karmada's.
    feature_gates : str, optional
        Karmada feature gates, e.g. ``"CustomizedClusterResourceModeling=false"``.

    Returns
    -------
    kubefit.multicluster.fleet.FleetEstimate
        Per cluster its estimate (path, replicas, the arithmetic); ``to_dict()`` is `-o json`.

    Examples
    --------
    The docs' example: 500m per replica on three member clusters.

    >>> import kubefit
    >>> kubefit.estimate(["examples/karmada/estimate-general-500m.yaml"]).to_dict()["availableReplicas"]
    {'member1': 6, 'member2': 4, 'member3': 0}
    """
    from kubefit.multicluster.fleet import estimate_fleet, load_fleet, parse_gates

    gates = parse_gates(feature_gates)
    told, tee = _telling(warn)
    with kept():  # a fleet's Clusters and estimates live on (43,000 clusters: the collector's passes, 1.3 s)
        result = estimate_fleet(load_fleet(files, tee), request, members, gates, explain=explain, warn=tee)
    result.warnings = told
    result.inputs = _fleet_inputs(files, request=request, member=list(members), featureGates=feature_gates,
                                  explain=explain)
    return result


def schedule(files: Files, *, scores: Sequence[str] = (), feature_gates: str | None = None,
             warn: Warn = python_warning) -> FleetSchedule:
    """How Karmada's scheduler divides a binding's replicas among the clusters (`kubefit schedule`).

    Parameters
    ----------
    files : sequence of str or Path
        Karmada `Cluster` objects and a `ResourceBinding` (or a workload with its `PropagationPolicy`).
    scores : sequence of str
        ``NAME=N``: the scheduler's score of a cluster (default 0).

    Returns
    -------
    kubefit.multicluster.fleet.FleetSchedule
        ``result`` holds the candidates, the assignment (``clusters``) or the ``error``.

    Examples
    --------
    >>> import kubefit
    >>> told = []  # the example's Clusters have no status.apiEnablements: said through `warn`
    >>> out = kubefit.schedule(["examples/karmada/schedule-general-prefers-member1.yaml"], warn=told.append).result
    >>> [(c["name"], c["availableReplicas"]) for c in out["candidates"]], out["clusters"]
    ([('member1', 6), ('member2', 4), ('member3', 0)], [{'name': 'member1', 'replicas': 1}])
    >>> "APIEnablement filter was not evaluated" in told[0]
    True
    """
    from kubefit.multicluster.fleet import load_fleet, parse_gates, schedule_fleet

    gates = parse_gates(feature_gates)
    told, tee = _telling(warn)
    with kept():  # as in `estimate`
        result = schedule_fleet(load_fleet(files, tee), scores, gates, warn=tee)
    result.warnings = told
    result.inputs = _fleet_inputs(files, score=list(scores), featureGates=feature_gates)
    return result


def _telling(warn: Warn) -> tuple[list[str], Warn]:
    """A list and a `warn` that adds each message to it before passing it on: what a fleet verb told."""
    told: list[str] = []

    def tee(message: str) -> None:
        told.append(message)
        warn(message)
    return told, tee


def _fleet_inputs(files: Files, **options: Any) -> dict[str, Any]:
    """A fleet verb's `inputs`: files, options and versions (Karmada's configuration is in the files)."""
    from kubefit.told import inputs

    return inputs(files, "karmada", options)


def divide(candidates: Sequence[dict[str, Any]], spec: dict[str, Any],
           status: dict[str, Any] | None = None) -> dict[str, Any]:
    """Karmada's replica division for a binding `spec` among candidate clusters and their estimates.

    Parameters
    ----------
    candidates : sequence of dict
        ``{"name", "availableReplicas", "allocatableReplicas", "score"?, "cluster"?}`` per selected cluster.
    spec, status : dict
        The ResourceBinding's spec (``replicas``, ``placement``...) and status.

    Returns
    -------
    dict
        ``{"clusters": [{"name", "replicas"}...] or None, "error": None or Karmada's message}``.

    Examples
    --------
    Aggregated: as few clusters as possible, the most available first.

    >>> import kubefit
    >>> spec = {"replicas": 5, "placement": {"replicaScheduling": {
    ...     "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}}
    >>> kubefit.divide([{"name": "a", "availableReplicas": 3, "allocatableReplicas": 3},
    ...                 {"name": "b", "availableReplicas": 10, "allocatableReplicas": 10}], spec)
    {'clusters': [{'name': 'b', 'replicas': 5}], 'error': None}
    """
    from kubefit.multicluster.divide import candidate_from_dict
    from kubefit.multicluster.divide import divide as run_divide

    return run_divide([candidate_from_dict(c) for c in candidates], spec, status)


def models_defaults() -> list[dict[str, Any]]:
    """The 9 default resource models Karmada gives a Cluster without `spec.resourceModels`.

    Returns
    -------
    list of dict
        ``{"grade", "ranges": [{"name", "min", "max"}...]}`` per grade, as `kubefit models defaults -o json`.

    Examples
    --------
    >>> import kubefit
    >>> models = kubefit.models_defaults()
    >>> len(models), models[1]["ranges"][0]
    (9, {'name': 'cpu', 'min': '1', 'max': '2'})
    """
    from kubefit.multicluster.models import default_models, to_json

    return to_json(default_models())


def models_validate(files: Files, *, warn: Warn = python_warning) -> ModelsVerdict:
    """Karmada's verdict on creating each Cluster of the files (`kubefit models validate`).

    Returns
    -------
    kubefit.multicluster.member.ModelsVerdict
        ``valid``, and per Cluster its errors, warnings and models after `PrepareForCreate`.

    Examples
    --------
    >>> import kubefit
    >>> kubefit.models_validate(["examples/karmada/three-grade-cluster.yaml"]).valid
    True
    """
    from kubefit.multicluster.member import validate_models

    return validate_models(files, warn)


def models_classify(files: Files, *, warn: Warn = python_warning) -> list[dict[str, int]] | None:
    """A member's nodes classified into its Cluster's grades (`kubefit models classify`).

    Returns
    -------
    list of dict or None
        ``status.resourceSummary.allocatableModelings``: ``{"grade", "count"}`` per grade; None when
        Karmada reports none.

    Examples
    --------
    >>> import kubefit
    >>> kubefit.models_classify(["examples/karmada/three-grade-cluster.yaml",
    ...                          "examples/karmada/member1-nodes-and-pods.yaml"])
    [{'grade': 0, 'count': 1}, {'grade': 1, 'count': 1}, {'grade': 2, 'count': 0}]
    """
    from kubefit.multicluster.member import classify_nodes

    return classify_nodes(files, warn)


def summary(files: Files, *, feature_gates: str | None = None, warn: Warn = python_warning) -> dict[str, Any]:
    """A member's `resourceSummary` and `nodeSummary`, as Karmada's cluster status controller sets them
    (`kubefit summary`).

    Examples
    --------
    >>> import kubefit
    >>> out = kubefit.summary(["examples/karmada/member1-nodes-and-pods.yaml"])
    >>> out["nodeSummary"], out["resourceSummary"]["allocated"]
    ({'totalNum': 2, 'readyNum': 2}, {'cpu': '4', 'memory': '16Gi', 'pods': '2'})
    """
    from kubefit.multicluster.fleet import parse_gates
    from kubefit.multicluster.member import member_summary

    return member_summary(files, parse_gates(feature_gates), warn)
