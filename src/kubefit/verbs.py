"""One function per `kubefit` verb: what the command computes, returned as the result objects it renders.

The command line is a thin layer over these functions (it adds option parsing, the tables and exit
codes). Every function reads scenario files as the command does (YAML, JSON, `kind: List`, several
files), raises `kubefit.InputError` for bad input and reports what the user should know (ignored
objects, plugins not simulated, Karmada's int64 wrap-around) through `warn`: by default a
`KubefitWarning` through Python's `warnings`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubefit.errors import InputError

if TYPE_CHECKING:
    from kubefit.api.core import Pod
    from kubefit.manifests.load import Scenario
    from kubefit.multicluster.fleet import FleetEstimate, FleetSchedule
    from kubefit.multicluster.member import ModelsVerdict
    from kubefit.planning.consolidate import Consolidation
    from kubefit.planning.plan import Plan
    from kubefit.scheduler.capacity import CapacityResult
    from kubefit.scheduler.nodeactions import Evictions, NodeActions
    from kubefit.scheduler.scenario import Prepared
    from kubefit.scheduler.simulate import SimulationResult
    from kubefit.scheduler.timeline import TimelineResult

Files = Sequence[str | Path]
Warn = Callable[[str], None]
Loading = Callable[[str, int, int], None]  # (file, documents read, documents in the file)
Progress = Callable[[int, int], None]  # (pods scheduled so far, pods queued)
Nodes = Sequence[str]  # node names for cordon / drain / remove


class KubefitWarning(UserWarning):
    """Something the input holds that kubefit reads differently from, or not at all like, the real system."""


def python_warning(message: str) -> None:
    """The default `warn`: a `KubefitWarning` (shown once per message by Python's warnings filter)."""
    warnings.warn(message, KubefitWarning, stacklevel=3)


def prepare_files(files: Files, verb: str, warn: Warn = python_warning, *, scoring: str | None = None,
                  progress: Loading | None = None, recursive: bool = False,
                  actions: NodeActions | None = None) -> tuple[Scenario, Prepared, Evictions]:
    """Load the scenario files, apply the node `actions`, compile them for scheduling (what every
    kube-scheduler verb starts with).

    Objects the verb does not read and the configuration's notes (plugins not simulated, ...) go to `warn`
    and into `prepared.notes` (the results' ``warnings``);
    `progress` follows the loading (see `kubefit.manifests.scenario.load_scenario`). Returns the scenario (after the
    actions), its prepared form and what the actions evicted (replacements queued, pods lost, drains refused).
    """
    from kubefit.manifests.load import unread_objects
    from kubefit.manifests.scenario import load_scenario
    from kubefit.scheduler.nodeactions import Evictions, apply_node_actions
    from kubefit.scheduler.scenario import prepare

    scenario = load_scenario([str(f) for f in files], progress, recursive=recursive)
    unread = unread_objects(scenario, verb, config=True, members=True)
    evicted = Evictions()
    if actions:
        scenario, evicted = apply_node_actions(scenario, actions)
    prepared = prepare(scenario, scoring=scoring)
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


def _every(progress: Progress | None, total: int) -> Callable[[int], None] | None:
    """The engine's progress callback (pods done) as the API's (pods done, pods queued)."""
    return None if progress is None else (lambda done: progress(done, total))


def score(files: Files, pod: str | None = None, *, scoring: str | None = None, detail: bool = False,
          explain: bool = False, warn: Warn = python_warning, recursive: bool = False) -> dict[str, Any]:
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
    from kubefit.scheduler.scenario import find_pending_pod, score_pod

    scenario, prepared, _ = prepare_files(files, "score", warn, scoring=scoring, recursive=recursive)
    target = find_pending_pod(scenario, pod)
    result = score_pod(prepared, target)
    data = cycle_to_dict(result, prepared.state, detail=detail)
    data["warnings"] = list(prepared.notes)
    details = explain_cycle(prepared.framework(target), prepared.state, target, result.feasible) if explain else None
    if details is not None:
        data["explain"] = details
    return data


def simulate(files: Files, *, tie_break: str = "random", seed: int | None = 0, cordon: Nodes = (),
             drain: Nodes = (), remove: Nodes = (), recursive: bool = False, progress: Progress | None = None,
             loading: Loading | None = None, warn: Warn = python_warning) -> SimulationResult:
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
    from kubefit.scheduler.simulate import simulate as run

    actions = node_actions(cordon, drain, remove)
    scenario, prepared, evicted = prepare_files(files, "simulate", warn, progress=loading, recursive=recursive,
                                                actions=actions)
    queue = scenario.pending_pods
    result = run(prepared.state, prepared.config, queue, tie_break=tie_break, seed=seed,
                 progress=_every(progress, len(queue)))
    result.label = "scenario"
    result.warnings = list(prepared.notes) + _run_notes(result, warn)
    if actions:
        result.node_actions = eviction_report(result, actions, evicted)
    return result


def compare(files: Files, configurations: Sequence[str], *, tie_break: str = "random", seed: int | None = 0,
            cordon: Nodes = (), drain: Nodes = (), remove: Nodes = (), recursive: bool = False,
            progress: Callable[[str, int, int], None] | None = None, loading: Loading | None = None,
            warn: Warn = python_warning) -> list[SimulationResult]:
    """The scenario's workload under its own configuration and under each of `configurations`
    (`kubefit simulate --compare`).

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders.
    configurations : sequence of str
        Scoring strategies (LeastAllocated, MostAllocated, RequestedToCapacityRatio) or configuration files.
    cordon, drain, remove, recursive, loading, warn
        As for `simulate`.
    progress : callable, optional
        Called with (configuration label, pods scheduled so far, pods queued).

    Returns
    -------
    list of SimulationResult
        The scenario's run first, then one per configuration, labelled, each with the ``warnings`` of its
        configuration; ``kubefit.scheduler.compare.comparison_to_dict`` is `-o json`.

    Examples
    --------
    >>> import kubefit
    >>> runs = kubefit.compare(["examples/workload/cluster.yaml"], ["MostAllocated"], tie_break="first")
    >>> [(r.label, r.scheduled) for r in runs]
    [('scenario', 20), ('MostAllocated', 21)]
    """
    from kubefit.scheduler.compare import candidates
    from kubefit.scheduler.compare import compare as run_compare

    scenario, prepared, _ = prepare_files(files, "simulate", warn, progress=loading, recursive=recursive,
                                          actions=node_actions(cordon, drain, remove))
    cands = candidates(prepared.config, configurations)
    for cand in cands[1:]:
        for note in cand.notes:
            warn(note)
    queue = scenario.pending_pods
    tick = None if progress is None else (lambda label, done: progress(label, done, len(queue)))
    results = run_compare(scenario.nodes, scenario.pods, queue, cands, tie_break=tie_break, seed=seed,
                          progress=tick, objects=scenario.objects)
    for result, cand in zip(results, cands, strict=True):
        result.warnings = list(cand.notes)
    results[0].warnings = list(prepared.notes)
    for result in results:
        result.warnings += _run_notes(result, warn)
    return results


def _run_notes(result: SimulationResult, warn: Warn) -> list[str]:
    """What the run itself found to tell (a preemption kube-scheduler may resolve differently), told via `warn`."""
    from kubefit.scheduler.simulate import preemption_note

    note = preemption_note(result)
    if note is None:
        return []
    warn(f"{result.label}: {note}" if result.label not in ("", "scenario") else note)
    return [note]


def timeline(files: Files, *, tie_break: str = "random", seed: int | None = 0, cordon: Nodes = (),
             drain: Nodes = (), remove: Nodes = (), recursive: bool = False, progress: Progress | None = None,
             loading: Loading | None = None, warn: Warn = python_warning) -> TimelineResult:
    """Replay the workload in time: pods arrive, run and leave (`kubefit simulate --timeline`).

    A pod arrives at its `kubefit.io/arrival` annotation (seconds) and runs for `kubefit.io/duration`;
    a pod that fits nowhere waits and is tried again when a completion frees capacity.

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders.
    tie_break, seed, cordon, drain, remove, recursive, loading, warn
        As for `simulate`.
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
    from kubefit.scheduler.timeline import timeline as run_timeline
    from kubefit.scheduler.timeline import timeline_warnings

    scenario, prepared, _ = prepare_files(files, "simulate", warn, progress=loading, recursive=recursive,
                                          actions=node_actions(cordon, drain, remove))
    queue = scenario.pending_pods
    result = run_timeline(prepared.state, prepared.config, queue, scenario.bound_pods, tie_break=tie_break,
                          seed=seed, progress=_every(progress, len(queue)))
    told = timeline_warnings(prepared.config, queue, scenario.bound_pods)
    for note in told:
        warn(note)
    result.warnings = list(prepared.notes) + told
    return result


def plan(files: Files, node_templates: Files, *, max_nodes: int | None = None, tie_break: str = "random",
         seed: int = 0, cordon: Nodes = (), drain: Nodes = (), remove: Nodes = (), recursive: bool = False,
         warn: Warn = python_warning) -> Plan:
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
    tie_break, seed, cordon, drain, remove, recursive, warn
        As for `simulate`: with node actions, the nodes to add so that the evicted pods fit too.

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
    from kubefit.planning.plan import plan as run_plan
    from kubefit.scheduler.nodeactions import eviction_report

    if tie_break not in ("random", "first"):
        raise InputError(f"must be random or first, got {tie_break!r}", field="--tie-break")
    templates = load_templates(node_templates)
    actions = node_actions(cordon, drain, remove)
    scenario, prepared, evicted = prepare_files(files, "plan", warn, recursive=recursive, actions=actions)
    result = run_plan(scenario, prepared.config, templates, max_nodes=max_nodes, tie_break=tie_break, seed=seed)
    for note in result.notes:
        warn(note)
    result.warnings = list(prepared.notes) + result.notes
    if actions:
        result.node_actions = eviction_report(result.result, actions, evicted)
    return result


def consolidate(files: Files, *, config: str | None = None, strategy: str | None = None,
                order: str = "utilization", utilization_threshold: float | None = None, max_nodes: int | None = None,
                force: bool = False, skip_kube_system_check: bool = False, repack: bool = False,
                compare: Sequence[str] = (), tie_break: str = "random", seed: int | None = 0, recursive: bool = False,
                progress: Progress | None = None, loading: Loading | None = None,
                warn: Warn = python_warning) -> Consolidation:
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
    tie_break, seed, recursive, loading, warn
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
    from kubefit.planning.consolidate import consolidate as run_consolidate
    from kubefit.planning.drainability import DrainOptions
    from kubefit.scheduler.compare import STRATEGIES, Candidate, candidates, config_from_file

    if config is not None and strategy is not None:
        raise InputError("give --config or --strategy, not both", field="--strategy")
    if strategy is not None and strategy.lower() not in {s.lower() for s in STRATEGIES}:
        raise InputError(f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}", field="--strategy")
    if compare and not repack:
        raise InputError("--compare names configurations to repack under: give --repack too", field="--compare")
    options = ConsolidateOptions(order, utilization_threshold, max_nodes, DrainOptions(force, skip_kube_system_check),
                                 tie_break, seed)
    options.check()
    scenario, prepared, _ = prepare_files(files, "consolidate", warn, progress=loading, recursive=recursive)
    chosen = Candidate("scenario", prepared.config)
    if config is not None:
        loaded = config_from_file(config)
        chosen = Candidate(config, loaded, loaded.notes)
    elif strategy is not None:
        chosen = candidates(prepared.config, [strategy])[1]
    runs = [chosen, *candidates(chosen.config, list(compare))[1:]] if repack else [chosen]
    told = [note for cand in runs for note in cand.notes]
    for note in told:
        warn(note)
    result = run_consolidate(scenario, chosen.config, options, state=prepared.state,
                             repack_configs=runs if repack else (), configuration=chosen.label, progress=progress)
    for note in result.notes:
        warn(note)
    result.warnings = list(prepared.notes) + told + result.notes
    return result


def capacity(files: Files, pod: str | None = None, *, limit: int | None = None, tie_break: str = "first",
             seed: int | None = 0, replay: bool = False, recursive: bool = False, loading: Loading | None = None,
             warn: Warn = python_warning) -> CapacityResult:
    """How many more copies of a pod fit (`kubefit capacity`, as cluster-capacity counts them).

    Parameters
    ----------
    files : sequence of str or Path
        Scenario files or folders.
    pod : str, optional
        The pod to copy (`name` or `namespace/name`, pending or bound); default the first pending pod.
    limit : int, optional
        Stop after this many copies (`--max`).
    replay : bool
        Place the copies one by one even where the count is closed-form (`--check`; same answer).
    recursive, loading, warn
        As for `simulate`.

    Returns
    -------
    kubefit.scheduler.capacity.CapacityResult
        ``count``, ``per_node``, ``stop_reason``, the FitError ``message`` and ``warnings``;
        ``to_dict()`` is `-o json`.

    Examples
    --------
    >>> import kubefit
    >>> result = kubefit.capacity(["examples/workload/cluster.yaml"], "report-0")
    >>> result.count, result.per_node
    (2, {'highmem-1': 1, 'highmem-2': 1})
    """
    from kubefit.scheduler.capacity import estimate_capacity

    scenario, prepared, _ = prepare_files(files, "capacity", warn, progress=loading, recursive=recursive)
    target = find_pod(scenario, pod)
    result = estimate_capacity(prepared.state, prepared.config, target, limit=limit, tie_break=tie_break, seed=seed,
                               replay=replay)
    result.warnings = list(prepared.notes)
    return result


def find_pod(scenario: Scenario, name: str | None) -> Pod:
    """The pod named `name` (`pod` or `namespace/pod`, pending or bound) as a new pending pod, else the
    first pending pod in queue order."""
    if name is None:
        pending = scenario.pending_pods
        if not pending:
            raise InputError("the scenario has no pending pod (a Pod without spec.nodeName); name one with --pod",
                             file=scenario.files)
        return pending[0]
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
    return estimate_fleet(load_fleet(files, warn), request, members, gates, explain=explain, warn=warn)


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
    return schedule_fleet(load_fleet(files, warn), scores, gates, warn=warn)


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
