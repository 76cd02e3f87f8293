"""Run a profile for one pod (kube-scheduler's framework): PreFilter, Filter, PreScore, Score, weights, host.

Everything is computed for all evaluated nodes at once; a node's status is the first Filter plugin
(in profile order) that rejects it, as the framework stops at the first failure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Pod
from kubefit.k8s.requests import PodDemand, pod_demand
from kubefit.k8s.version import PREEMPTION_PLACEMENT_MESSAGE, KubeVersion, default_version
from kubefit.scheduler.config import Profile, SchedulerConfiguration
from kubefit.scheduler.plugins import registry
from kubefit.scheduler.plugins.base import (
    CODE_NAMES,
    SUCCESS,
    UNRESOLVABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
    SchedulingCycleError,
    StatusError,
    normalize_scores,
)
from kubefit.scheduler.plugins.legacy import LEGACY_PLUGINS
from kubefit.scheduler.state import ClusterState

MAX_NODE_SCORE, MIN_NODE_SCORE = 100, 0


@dataclass
class Framework:
    """A profile's plugins, built once and reused for every pod."""

    profile: Profile
    filters: list = field(default_factory=list)  # (name, plugin) in profile order
    scorers: list = field(default_factory=list)  # (name, plugin, weight) in profile order
    pre_enqueue: list = field(default_factory=list)  # (name, plugin): PreEnqueue plugins (SchedulingGates)
    reserves_claims: bool = False  # DynamicResources runs: a bound pod's claims are allocated and reserved
    preemption_says_where: bool = False  # DefaultPreemption names the node it found (v1.37, kubernetes#140180)

    @classmethod
    def build(cls, profile: Profile, *, legacy: bool = False, objects: ClusterObjects | None = None,
              version: KubeVersion | None = None) -> Framework:
        """Construct the profile's plugins (one object per plugin, shared by its extension points) as
        `version` builds them (None: the default version); `legacy` scores the resource plugins on the
        v1.16 0..10 scale; `objects` feed their listers."""
        fw = cls(profile)
        fw.preemption_says_where = (version or default_version()).has(PREEMPTION_PLACEMENT_MESSAGE)
        objects = objects if objects is not None else ClusterObjects()
        built: dict[str, object] = {}

        def plugin_of(name: str):
            if name not in built:
                built[name] = registry.build(name, profile.plugin_args.get(name), objects, version)
            return built[name]

        for name in profile.extension_points.get("preEnqueue", ()):
            plugin = plugin_of(name)
            if plugin is not None and hasattr(plugin, "pre_enqueue"):
                fw.pre_enqueue.append((name, plugin))
        for name in profile.filter_plugins:
            plugin = plugin_of(name)
            if plugin is not None and hasattr(plugin, "filter"):
                fw.filters.append((name, plugin))
        fw.reserves_claims = "DynamicResources" in profile.extension_points.get("reserve", ())
        for sp in profile.score_plugins:
            plugin = plugin_of(sp.name)
            if legacy and sp.name in LEGACY_PLUGINS:
                plugin = LEGACY_PLUGINS[sp.name](plugin.args)
            if plugin is not None and hasattr(plugin, "score"):
                fw.scorers.append((sp.name, plugin, sp.weight if sp.weight else 1))
        return fw


@dataclass
class CycleResult:
    """The outcome of one scheduling cycle; node arrays index `state.nodes`."""

    pod: Pod
    num_nodes: int
    codes: np.ndarray  # int8 [N]: Success / Unschedulable / UnschedulableAndUnresolvable
    failed_plugin: list[str | None]  # per node: plugin that rejected it (None: passed, or PreFilter)
    reasons: dict[int, list[str]]  # per rejected node
    feasible: np.ndarray  # node indices, in node order
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # plugin → normalized score over feasible
    raw_scores: dict[str, np.ndarray] = field(default_factory=dict)
    skipped_score_plugins: list[str] = field(default_factory=list)
    skipped_filter_plugins: list[str] = field(default_factory=list)
    pre_filter_node_names: list[str] | None = None
    pre_filter_message: str | None = None
    filter_by_plugin: dict[str, FilterOutcome] = field(default_factory=dict)
    total: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # over feasible
    best: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # node indices
    weights: dict[str, int] = field(default_factory=dict)
    post_filter: object | None = None  # postfilter.PostFilterOutcome when no node fit (set by the caller)

    def code_name(self, node: int) -> str:
        return CODE_NAMES[int(self.codes[node])]

    def fit_error(self) -> str:
        """kube-scheduler's FitError text: `0/N nodes are available: 2 Insufficient cpu, 1 Too many pods.`"""
        counts = Counter(chain.from_iterable(self.reasons.values()))  # one count per (node, reason)
        return fit_error_text(self.num_nodes, self.pre_filter_message, counts)


def fit_error_text(num_nodes: int, pre_filter_message: str | None, counts: Counter[str]) -> str:
    """`FitError.Error()`: the PreFilter message, else the sorted histogram of the nodes' reasons, each
    part appended as " %v." (none: the head alone)."""
    head = f"0/{num_nodes} nodes are available:"
    if pre_filter_message:
        return f"{head} {pre_filter_message}."
    histogram = sorted(f"{c} {r}" for r, c in counts.items() if c > 0)
    return f"{head} {', '.join(histogram)}." if histogram else head


def profile_framework(cache: dict[str, Framework], config: SchedulerConfiguration, pod: Pod, *,
                      legacy: bool = False, objects: ClusterObjects | None = None) -> Framework:
    """The (cached) framework of the profile that schedules `pod` (`spec.schedulerName`)."""
    profile = config.profile(pod.scheduler_name)
    fw = cache.get(profile.scheduler_name)
    if fw is None:
        fw = cache[profile.scheduler_name] = Framework.build(profile, legacy=legacy, objects=objects,
                                                             version=config.version)
    return fw


def new_context(state: ClusterState, pod: Pod, demand: PodDemand | None = None) -> CycleContext:
    demand = demand or pod_demand(pod)
    return CycleContext(pod, demand, state.demand_vector(demand))


def run_pre_filters(fw: Framework, state: ClusterState, ctx: CycleContext, restricting: list[str] | None = None,
                    ) -> tuple[list, tuple[str, PreFilterOutcome] | None, set[str] | None, list[str]]:
    """PreFilter of every filter plugin, as RunPreFilterPlugins: the plugins whose Filter still runs, the
    first failure (plugin, outcome) if any, the intersection of the node names they restrict to (None:
    all nodes), and the plugins that asked to be skipped. `restricting`: a list the names of the plugins that
    restricted the node set are appended to (`pluginsWithNodes`: named in "didn't satisfy plugin(s) [...]")."""
    active, skipped, names = [], [], None
    for name, plugin in fw.filters:
        pre = plugin.pre_filter(state, ctx) if hasattr(plugin, "pre_filter") else None
        if pre is None:
            active.append((name, plugin))
            continue
        if pre.code != SUCCESS:
            return active, (name, pre), names, skipped
        if pre.skip:
            skipped.append(name)
            continue
        active.append((name, plugin))
        if pre.node_names is not None:
            names = set(pre.node_names) if names is None else names & pre.node_names
            if restricting is not None:
                restricting.append(name)
    return active, None, names, skipped


def run_filters(fw: Framework, state: ClusterState, ctx: CycleContext, result: CycleResult,
                idx: np.ndarray) -> np.ndarray:
    """PreFilter + Filter over nodes `idx`; fills statuses in `result`, returns the feasible node indices."""
    restricting: list[str] = []
    active, failure, names, skipped = run_pre_filters(fw, state, ctx, restricting)
    result.skipped_filter_plugins = skipped
    if failure is not None:
        plugin_name, failure = failure
        result.pre_filter_message = ", ".join(failure.reasons)
        result.codes[idx] = failure.code
        for n in idx:
            result.reasons[int(n)] = list(failure.reasons)
            result.failed_plugin[int(n)] = plugin_name
        return np.zeros(0, dtype=np.int64)
    ok = np.ones(len(idx), dtype=bool)
    if names is not None:
        result.pre_filter_node_names = sorted(names)  # the PreFilterResult set, names that are no node included
        outside = np.array([state.nodes[int(n)].name not in names for n in idx], dtype=bool)
        if outside.any():
            reason = f"node(s) didn't satisfy plugin(s) [{', '.join(restricting)}]"
            for node in idx[outside].tolist():
                result.codes[node] = UNRESOLVABLE
                result.reasons[node] = [reason]
        ok &= ~outside
    for name, plugin in active:
        outcome = plugin.filter(state, ctx, idx)
        result.filter_by_plugin[name] = outcome
        newly = ok & (outcome.codes != SUCCESS)
        rows = np.flatnonzero(newly)
        if len(rows):
            result.codes[idx[rows]] = outcome.codes[rows]
            patterns, which = _distinct_rows(outcome.matrix[rows])  # reason lists per pattern, not per node
            texts = [[label for label, hit in zip(outcome.labels, p, strict=True) if hit] for p in patterns]
            for node, k in zip(idx[rows].tolist(), which.tolist(), strict=True):
                result.failed_plugin[node] = name
                result.reasons[node] = list(texts[k])
        ok &= ~newly
    return idx[ok]


def _distinct_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a bool matrix and, per row, which of them it is."""
    if matrix.shape[1] <= 62:
        keys = matrix.astype(np.int64) @ (np.int64(1) << np.arange(matrix.shape[1], dtype=np.int64))
        _, first, which = np.unique(keys, return_index=True, return_inverse=True)
        return matrix[first], which.ravel()
    patterns, which = np.unique(matrix, axis=0, return_inverse=True)
    return patterns, which.ravel()


def run_scores(fw: Framework, state: ClusterState, ctx: CycleContext, result: CycleResult,
               feasible: np.ndarray) -> None:
    """PreScore, Score, NormalizeScore, weights and totals over the feasible nodes."""
    total = np.zeros(len(feasible), dtype=np.int64)
    scoring = []
    for name, plugin, weight in fw.scorers:  # every PreScore runs before any Score
        try:
            skip = plugin.pre_score(state, ctx)
        except StatusError as err:
            raise SchedulingCycleError(f"running PreScore plugin \"{name}\": {err}") from None
        if skip:
            result.skipped_score_plugins.append(name)
        else:
            scoring.append((name, plugin, weight))
    for name, plugin, weight in scoring:
        raw = plugin.score(state, ctx, feasible)
        norm = normalize_scores(plugin, raw, ctx)
        bad = (norm < MIN_NODE_SCORE) | (norm > MAX_NODE_SCORE)
        if bad.any():
            value = int(norm[np.flatnonzero(bad)[0]])
            raise SchedulingCycleError(
                f"applying score defaultWeights on Score plugins: plugin \"{name}\" returns an invalid score "
                f"{value}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing")
        result.raw_scores[name] = raw
        result.scores[name] = norm
        result.weights[name] = weight
        total += weight * norm
    result.total = total
    result.best = feasible[total == total.max()] if len(feasible) else feasible


def run_pre_enqueue(fw: Framework, pod: Pod, state: ClusterState | None = None) -> tuple[str, PreFilterOutcome] | None:
    """PreEnqueue plugins in order: the first that rejects the pod, with its status (None: it may be queued).
    `state`: the run's (DynamicResources reads the claims made in it)."""
    for name, plugin in fw.pre_enqueue:
        status = plugin.pre_enqueue(pod, state)
        if status is not None:
            return name, status
    return None


def gate_message(gate: tuple[str, PreFilterOutcome], pod: Pod, state: ClusterState) -> str:
    """The PreEnqueue plugin's reasons; for a pod whose claim the resourceclaim controller could not create, also
    why (the API server's refusal: a quota, admin access), which kube-scheduler's status does not say."""
    message = ", ".join(gate[1].reasons)
    why = state.dra.refusal(pod) if gate[0] == "DynamicResources" and state.dra is not None else None
    return f"{message} (resourceclaim controller: {why})" if why else message


def claims_gate(fw: Framework, pod: Pod, state: ClusterState) -> str | None:
    """DynamicResources' PreEnqueue on a pod created during a run (a copy, an arrival retried), its claims made as it
    is created: why it gets no cycle (a claim the API server refused: a quota, admin access), None when it may be
    queued. The other PreEnqueue plugins are the caller's."""
    gate = run_pre_enqueue(fw, pod, state)
    return gate_message(gate, pod, state) if gate is not None and gate[0] == "DynamicResources" else None


def schedule_one(fw: Framework, state: ClusterState, pod: Pod, *, demand: PodDemand | None = None,
                 nodes: np.ndarray | None = None, score: bool = True) -> CycleResult:
    """One scheduling cycle of `pod` over `nodes` (default: every node, in order)."""
    ctx = new_context(state, pod, demand)
    n = len(state)
    idx = np.arange(n, dtype=np.int64) if nodes is None else np.asarray(nodes, dtype=np.int64)
    result = CycleResult(pod, n, np.zeros(n, dtype=np.int8), [None] * n, {}, np.zeros(0, dtype=np.int64))
    result.pre_enqueue = run_pre_enqueue(fw, pod, state)
    if result.pre_enqueue is not None:
        return result  # the pod never gets a scheduling cycle
    feasible = run_filters(fw, state, ctx, result, idx)
    result.feasible = feasible
    if score and len(feasible):
        run_scores(fw, state, ctx, result, feasible)
    return result
