"""`plan`: the fewest template nodes to add so that every pending pod that can fit is scheduled.

Every candidate cluster is judged by a full simulation with the real profile (the queue, scores and
tie-breaks of `simulate`), never by a resource sum.  The target is the whole queue when some probed cluster
schedules it (no cluster schedules more), else what the most generous cluster schedules: `--max-nodes`
copies of every template (default: one per queued pod, so each pod finds an empty node of every template at
its turn; the bound is per template), simulated only then.  The search (`_search`):

- trial 0 is the cluster as it is (s₀ of the queue scheduled); nothing pending, nothing to add;
- the lower bound `L` is the requests' bound for the whole queue (`addbound`: no fewer copies can hold its
  requests beside what today's nodes leave; with several templates the smallest uniform count u with
  [u, …, u] not below it): no probe is ever under it;
- the estimate `E` (`_estimate`) starts the search next to its answer: trial 0's pending pods alone, in queue
  order, are simulated with the real profile on fresh copies of the templates (nothing else in the cluster;
  the copies' DaemonSet pods first), from their requests' bound on the copies (`addbound.copies_bound`: f of
  them ask no more than a copy has; u₀, E itself with no run when u₀ ≤ L) up to the first uniform count on
  which all f are scheduled (from u, the larger of ⌈u·f/s⌉ for s placed and u plus a doubling increment), or
  the count before the first that schedules no more than it.  These runs hold only the pending pods: cheap
  beside a run of the whole queue (0.1–0.5 s against 2–15 s on the bench files), counted among the
  simulations.  E is a guess that picks the probes, never an answer: the copies alone miss today's room
  (E may be too high) and the pods the added copies draw away from today's nodes (too low);
- the first probe is max(E, L) (`_Climb`).  Each probe gives up once it has left as many queue pods pending as
  trial 0 did (it cannot beat the cluster as it is), so every probe is either known exactly or known to
  schedule at most s₀.  Short, but placing more than trial 0 and g ≥ m, it is followed by a jump: u + ⌈m·u / g⌉
  (m pods still missing of what the estimate expects, g placed beyond trial 0's by u copies; with g < m the
  copies do not hold in the cluster what they hold alone, the jump would more than double u on a rate that
  does not hold: the generous cluster comes next, as for a futile probe), then a gallop from
  there (+1, +3, +7, …, the increment doubling) below `limit`, then the most generous cluster, stopping at
  the first that schedules the whole queue.  A probe that schedules no more than the one before it (trial 0
  for the first), or every pod the estimate expects and not the target (the rest fit on no copy alone), is
  futile and the generous cluster comes next: the pods left pending are not short of room, or so far from
  it that a bisection of the whole range (log₂(limit) simulations) is the better bet than galloping on.
  When the generous cluster falls short of the whole queue, its count is the target and every probe is
  judged against it (a target of s₀ or less: trial 0 holds, nothing is added), and the search runs again
  from max(E, L′) with the target's own bound L′ ≤ L, the probes known answering at once;
- from the first count that holds: when it was a guess (E or the jump), a gallop down (one fewer, then the
  pending pods' requests bound on the copies, then one fewer each time twice as far: `_cut`) to the first
  count short, and the bisection between it and the last that held; else the bisection between the largest
  count seen short of the target (or L) and it.  Once the target is known for good, runs give up as soon as
  it is out of reach (the whole queue: at the first pod left pending).

So, with one template, the answer `k` holds and `k − 1` was simulated short, or k is the requests' bound
(`addbound`: below it nothing holds).  Placement is not monotone in the count (a cluster with more copies
may schedule fewer: an empty node scores highest and pulls the queue elsewhere), so where it is not, this
answer may differ from the one a bisection of the whole range [0, limit] finds; both satisfy "k holds, k − 1
does not".

With several templates the estimate, the probes and the bisection are on uniform vectors [u, …, u] and find
the smallest holding uniform u, but when a single uniform count u − 1 is left between the first count that holds
and the largest seen short (or the requests' bound), it is not asked (its run costs what each
of the descent's one-fewer runs from [u, …, u] costs, and those are asked in any case, by the descent and the
pruning: one run fewer when they are all short, as they are where the landscape is flat); from that cluster
each template is cut to the fewest copies that still hold the target
(`_descend`: a gallop down from its count, then a bisection; the others fixed) in every order for up to
three templates when the cluster has at most `SMALL_CLUSTER` added nodes, else in two orders (dearest
template first, cheapest first: one when the costs are equal); a greedy build-up (one node at a time, the
template that schedules the most further pods per unit of cost, as the cluster-autoscaler's expander
compares options) joins the candidates only on such a small cluster (n simulations per node added, at most
`SMALL_CLUSTER` nodes); each candidate is pruned node by node while the target holds, so removing any one
planned node loses a pod; the cheapest candidate wins.  "Fewest" is the best of these searches, each answer
checked by simulation, not a proof of optimality.  The simulations are bounded: the estimate's runs about
log₂(f); the probes from it and their bisection about 2·log₂(limit), about 2·log₂(d) + 1 for an answer d
from the first guess; each descent about 2·log₂(u) per template and order (log₂ of how deep it
cuts, twice, plus one); the greedy n·SMALL_CLUSTER; the pruning n per node it removes, and n more.

Pods the target leaves pending cannot fit on any count of the templates; their FitError says why.

A gang (a pod group with `gang: {minCount}`, GenericWorkload on) counts only when it is placed whole, all its pods
bound (`queue_scheduled`): kube-scheduler binds at least `minCount` of its pods or none, and a gang some of whose
pods the most generous cluster still leaves pending counts as not fitting (its pods are in `cannotFit`, the group
in `podGroups` with `placedWhole: false` and why), so no node is added for a part of it.

Each added node brings the pods of every DaemonSet of the scenario that admits it (`NodeShouldRunDaemonPod`:
nodeSelector, required node affinity, NoSchedule/NoExecute taints against the controller's tolerations),
named and pinned as `kubefit.manifests.workloads` makes them for the scenario's nodes.  The DaemonSet controller
creates them when the node appears, so they are queued before the pending pods and take the node's
resources first; they are not part of the goal (only the scenario's queue is counted).  A template that
cannot hold its own DaemonSet pods is named in the notes (each checked alone on one copy).

A template may come with ResourceSlices (DRA devices) naming it in `spec.nodeName`: each copy gets them,
renamed for the copy (`copy_slices`), so pods with ResourceClaims are planned onto the devices new nodes
bring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from itertools import permutations
from typing import Any

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Node, Pod
from kubefit.collector import collector_paused
from kubefit.errors import InputError
from kubefit.manifests.admission import admitter
from kubefit.manifests.load import Scenario
from kubefit.manifests.templates import Template, copy_names, renamed_for
from kubefit.manifests.workloads import NewNodeDaemons
from kubefit.planning.addbound import TemplateBound, copies_bound, template_bound
from kubefit.planning.sweep import Work
from kubefit.planning.workers import result_while_workers
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.simulate import SimulationResult, simulate
from kubefit.scheduler.state import ClusterState, compile_state
from kubefit.told import told_keys

HOSTNAME_LABEL = "kubernetes.io/hostname"
MAX_ORDERS_TEMPLATES = 3  # up to this many templates every order of cutting down is tried (on a small cluster)
SMALL_CLUSTER = 12  # added nodes up to which several templates get every order and the greedy build-up
KEPT_RUNS = 2  # simulations that scheduled the target kept for the answer (each holds a whole run)
WAIT_FOR_WORKERS = 30.0  # seconds without any worker after which a plan goes on in this process


def copy_slices(template: Template, node_name: str) -> list:
    """The template's ResourceSlices for one copy: `nodeName` the copy, and the template's name in the slice
    and pool names replaced by the copy's (a driver publishes one pool per node)."""
    return [replace(s, meta=replace(s.meta, name=renamed_for(s.meta.name, template.name, node_name)),
                    pool=renamed_for(s.pool, template.name, node_name), node_name=node_name) for s in template.slices]


def with_objects(objects: ClusterObjects, extra: dict[str, list]) -> ClusterObjects:
    """The scenario's cluster objects plus `extra` (kind → objects): a new store, the scenario's untouched."""
    out = ClusterObjects({kind: list(items) for kind, items in objects.by_kind.items()}, api_server=objects.api_server)
    for kind, items in extra.items():
        for obj in items:
            out.add(kind, obj)
    return out


@dataclass
class Plan:
    """Nodes to add per template, the simulation of the planned cluster and what still cannot fit."""

    templates: list[Template]
    counts: list[int]
    result: SimulationResult
    target: int  # pods of the queue the plan schedules: all of them, or what the most generous cluster does
    pending_before: int  # pods pending on the cluster as it is
    existing: int  # nodes of the cluster as it is (the planned ones follow them in the state)
    simulations: int = 0
    notes: list[str] = field(default_factory=list)
    not_created_before: int = 0  # pods an OrderedReady StatefulSet had not created on the cluster as it is
    warnings: list[str] | None = None  # what the user was told (set by `kubefit.verbs`; then in to_dict)
    node_actions: dict | None = None  # cordon/drain/remove and where the evicted pods went
    inputs: dict | None = None  # the files, templates, options, configuration and versions (set by `kubefit.verbs`)

    @property
    def cost(self) -> Decimal:
        return sum((t.cost * c for t, c in zip(self.templates, self.counts, strict=True)), Decimal(0))

    def to_dict(self) -> dict:
        sim = self.result.to_dict()
        added = [n.name for n in self.result.state.nodes[self.existing:]]
        return {
            "add": {t.name: c for t, c in zip(self.templates, self.counts, strict=True)},
            "cost": _number(self.cost),
            "templates": [{"name": t.name, "cost": _number(t.cost)} for t in self.templates],
            "nodesAdded": added,
            "pendingBefore": self.pending_before,
            **({"notCreatedBefore": self.not_created_before} if self.not_created_before else {}),
            "scheduled": sim["scheduled"],
            "cannotFit": [{"pod": s["pod"], "message": s["message"]} for s in sim["steps"]
                          if s["node"] is None and not s.get("notCreated")],
            "notCreated": [{"pod": s["pod"], "message": s["message"]} for s in sim["steps"] if s.get("notCreated")],
            **({"podGroups": group_rows(self.result)} if self.result.groups else {}),
            "simulations": self.simulations,
            "placement": sim["placement"],
            "simulation": sim,
            **told_keys(self.warnings, self.node_actions, self.inputs),
        }


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def copies(template: Template, count: int, taken: set[str]) -> list[Node]:
    """`count` nodes made from the template, named `<template>-<i>` (skipping the names in `taken`: the cluster's
    and the copies made before; each new name is added), labelled as the kubelet registers a node: its own
    `kubernetes.io/hostname`, the template's other labels kept."""
    return [copy_of(template, name) for name in copy_names(template.name, count, taken)]


def copy_of(template: Template, name: str) -> Node:
    """The template's node as the copy `name`: the kubelet registers it with its own `kubernetes.io/hostname`."""
    return replace(template.node, name=name, labels={**template.node.labels, HOSTNAME_LABEL: name})


@dataclass
class Trial:
    """What a plan learns of one cluster: the queue pods it placed, the pods left pending and never created,
    whether the run gave up (then `scheduled` is what it had placed), the run itself when kept, and for trial 0
    the keys of the queue pods it left without a node (`left_pending`: they start the estimate)."""

    scheduled: int
    pending: int = 0
    not_created: int = 0
    stopped: bool = False
    result: SimulationResult | None = None
    left: frozenset[str] = frozenset()


class Planner:
    """Simulates the scenario with some count of each template added (in this process; `DaskPlanner`: on Dask
    workers)."""

    def __init__(self, scenario: Scenario, config: SchedulerConfiguration, templates: list[Template], *,
                 tie_break: str = "random", seed: int = 0) -> None:
        self.scenario, self.config, self.templates = scenario, config, templates
        self.tie_break, self.seed = tie_break, seed
        self.queue = scenario.pending_pods
        self.taken = {n.name for n in scenario.nodes}
        self.daemons = NewNodeDaemons(scenario.workloads, admitter(scenario))
        self.runs = 0
        self.memo: dict[tuple[int, ...], int] = {}  # counts → pods scheduled (a simulation is deterministic)
        self.target: int | None = None  # what the plan must schedule (`aim`)
        self.give_up: int | None = None  # a probe's runs stop once more queue pods than this are pending (`aim`)
        self.worth = 0  # runs scheduling at least this many are kept: they may be the answer (`aim`)
        self.floor: TemplateBound | None = None  # the requests' lower bound for the target
        self.kept: dict[tuple[int, ...], SimulationResult] = {}  # the last runs that scheduled the target
        self.short: set[tuple[int, ...]] = set()  # counts known not to schedule the target (a run gave up)
        self.guess = 0  # the estimate: fewer copies (of one template) are not expected to hold (`predict`)
        self.generous: tuple[int, ...] = ()  # the counts of the most generous cluster (`_plan`)
        self.reach: int | None = None  # queue pods the estimate expects placed (`_search`; what `prefetch` guesses
        # the generous cluster places before it is known)
        # (template index, copy name) → the copy, its ResourceSlices and its DaemonSet pods (`_copies`)
        self._made: dict[tuple[int, str], tuple[Node, list, list[Pod]]] = {}
        # told (label, runs so far, about how many in all or None, what the last run said) after each trial
        self.progress: Callable[[str, int, int | None, str], None] | None = None

    def aim(self, target: int, give_up: int | None = None, worth: int | None = None) -> None:
        """From now on the plan must schedule `target` pods of the queue: the requests' lower bound for it
        (`addbound`) refuses counts below it without a simulation, and a run gives up once it cannot reach it
        (`give_up`: once more than this many queue pods are pending, never fewer than the target allows, so
        that a run that gave up is short of it; `worth`: keep the runs that schedule this many, the target's by
        default)."""
        if self.floor is None or target != self.target:
            state = compile_state(self.scenario.nodes, self.scenario.pods, self.scenario.objects)
            self.floor = template_bound(state, self.config, self.queue, target,
                                        [compile_state([t.node]) for t in self.templates])
        self.target = target
        self.give_up = len(self.queue) - target if give_up is None else max(give_up, len(self.queue) - target)
        self.worth = target if worth is None else worth

    def holds(self, counts: list[int]) -> bool:
        """Whether the cluster with `counts` schedules the target: refused below the requests' bound, else by a
        simulation that stops as soon as more pods of the queue are left pending than `aim` allows (the most
        generous cluster is always simulated, whole: its count may become the target)."""
        key = tuple(counts)
        if key == self.generous:
            return self.scheduled(counts) >= self.target  # type: ignore[operator]
        if self.known(key) is None and not self.below_floor(counts):
            self.record(key, self.trial(counts, give_up=self.give_up))
        return bool(self.known(key))

    def known(self, key: tuple[int, ...]) -> bool | None:
        """Whether the cluster with these counts holds the target, as far as a run told it (None: not run)."""
        if key in self.memo:
            return self.memo[key] >= self.target  # type: ignore[operator]
        return False if key in self.short else None

    def below_floor(self, counts: Sequence[int]) -> bool:
        """Whether some template's count is below the requests' bound for the target (`addbound`): it cannot hold."""
        return self.floor is not None and any(c < self.floor.fewest(t, counts) for t, c in enumerate(counts))

    def scheduled(self, counts: list[int]) -> int:
        """Pods of the scenario's queue the cluster with `counts` schedules (the added nodes' DaemonSet pods
        are not the goal: they come with the nodes)."""
        key = tuple(counts)
        if key not in self.memo:
            self.record(key, self.trial(counts))
        return self.memo[key]

    def trial(self, counts: list[int], give_up: int | None = None, keep: bool = False,
              check: Callable[[int], None] | None = None) -> Trial:
        """One cluster's `Trial` (`keep`: the plan reads its run, trial 0's: with the keys of the pods it left
        pending, `left`; `check`: as `run`'s)."""
        result = self.run(counts, give_up, check)
        left = left_pending(result, self.queue) if keep and not result.stopped else frozenset()
        return Trial(queue_scheduled(result, self.daemons.keys), result.unschedulable, result.not_created,
                     result.stopped, result, left)

    def run_of(self, trial: Trial) -> SimulationResult | None:
        """The run of a trial asked with `keep` (`DaskPlanner`: sent from its worker now)."""
        return trial.result

    def prefetch(self, counts: Sequence[list[int]], then: Sequence[list[int]] = (), whole: bool = False) -> None:
        """The clusters the search is about to ask about, likeliest first (workers start them: `DaskPlanner`);
        `then`: less likely ones, asked only once the whole queue is the target (a probe held); `whole`: asked
        for the pods they place (`scheduled`), their runs never giving up."""

    def close(self) -> None:
        """The search is over (`DaskPlanner`: what runs ahead is cancelled)."""

    def lookahead(self) -> int:
        """Levels of a bisection's decision tree `prefetch` is told (`DaskPlanner`: enough for every worker)."""
        return 2

    def predict(self, count: int) -> bool:
        """Whether `count` copies (of one template) are likely to hold the target: at least the estimate's
        (`guess`), and more than any count seen short of the target as it is now (what `prefetch` is told
        first; the search's path does not depend on it)."""
        return count >= self.guess and all(count > k[0] for k in (*self.memo, *self.short)
                                           if len(k) == 1 and not self.known(k))

    def record(self, key: tuple[int, ...], trial: Trial) -> None:
        """A trial's answer: its count when whole, else the count known short; its run kept when it schedules
        the target (the answer is one of those runs). `progress` is told of it."""
        self._remember(key, trial)
        if self.progress is not None:
            bracket = self.bracket()
            left = self.left(bracket)
            self.progress("plan", self.runs, self.runs + left if left else None, self.said(key, bracket))

    def _remember(self, key: tuple[int, ...], trial: Trial) -> None:
        if trial.stopped:
            self.short.add(key)
            return
        self.memo[key] = trial.scheduled
        if self.target is not None and trial.scheduled >= self.worth and trial.result is not None:
            self.kept = {**dict(list(self.kept.items())[-(KEPT_RUNS - 1):]), key: trial.result}

    def bracket(self) -> tuple[int, int | None]:
        """Where the uniform count that holds the target lies, from the runs so far: above the largest uniform
        count seen short and not below the requests' bound, up to the smallest seen holding above it (None: none
        yet, or no target yet: trial 0 comes first)."""
        if self.target is None:
            return 0, None
        uniform = [(k[0], self.known(k)) for k in [*self.memo, *self.short] if len(set(k)) == 1]
        low = max((u + 1 for u, held in uniform if held is False), default=0)
        high = min((u for u, held in uniform if held and u >= low), default=None)
        if high is not None and self.floor is not None:  # nothing below the requests' bound holds (no run asked)
            low = max(low, _uniform_floor(self, high))
        return low, high

    def left(self, bracket: tuple[int, int | None] | None = None) -> int:
        """About how many more runs a bisection of `bracket` (the planner's now when not given) asks (0: unknown,
        before any count holds)."""
        low, high = self.bracket() if bracket is None else bracket
        return 0 if high is None else (high - low).bit_length()

    def said(self, key: tuple[int, ...], bracket: tuple[int, int | None] | None = None) -> str:
        """A run as the progress display says it: the counts, whether they hold the target, the bracket (the
        planner's now when not given)."""
        counts = " + ".join(f"{c:,} × {t.name}" for c, t in zip(key, self.templates, strict=True))
        if key == self.generous and key in self.memo:  # (its count may become the target)
            verdict = f"the most generous cluster, places {self.memo[key]:,} of {len(self.queue):,}"
        else:
            verdict = "the cluster as it is" if not any(key) else "holds" if self.known(key) else "falls short"
        low, high = self.bracket() if bracket is None else bracket
        where = "" if high is None or len(self.templates) > 1 else (
            f"; the answer: {high:,}" if low >= high else f"; the answer lies in {low:,}–{high:,}")
        return f"plan: {counts}: {verdict}{where}"

    def result(self, counts: list[int]) -> SimulationResult:
        """The simulation of the cluster with `counts` (kept from the search when it ran there)."""
        return self.kept.get(tuple(counts)) or self.run(counts)

    def run(self, counts: list[int], give_up: int | None = None,
            check: Callable[[int], None] | None = None) -> SimulationResult:
        """The scenario with `counts` copies of the templates added, each copy's DaemonSet pods queued first
        (`give_up`: as `simulate`'s, the added nodes' DaemonSet pods not counted; `check`: `simulate`'s progress
        hook, called every 256 pods, and once the cluster is built: on a worker it stops a run cancelled,
        `stop_when_cancelled`)."""
        with collector_paused():  # a run leaves no reference cycles: the collector's passes are pure cost (in a
            # server, `kubefit serve`, at Python's default thresholds, they walked the session's whole heap)
            added, slices, daemons = self._copies(counts)
            state = compile_state([*self.scenario.nodes, *added], self.scenario.pods, self._objects(slices))
            self.runs += 1
            queue = [*daemons, *self.queue]
            if check is not None:
                check(0)
            return simulate(state, self.config, queue, tie_break=self.tie_break, seed=self.seed, stranded=False,
                            give_up=give_up, exempt=self.daemons.keys, progress=check)

    def _copies(self, counts: Sequence[int]) -> tuple[list[Node], list, list[Pod]]:
        """`counts` copies of the templates, named after the cluster's nodes (`copies`), the ResourceSlices they
        bring and the DaemonSet pods the controller creates for them (`NewNodeDaemons.pods_for`, node by node).
        Each copy is made once per plan (`_made`, by template and name: what a copy is depends on nothing else),
        so a trial on thousands of copies does not rebuild them (≈ 0.05 s a trial at 7,000 copies)."""
        added: list[Node] = []
        slices: list = []
        daemons: list[Pod] = []
        taken = set(self.taken)
        for t, (template, count) in enumerate(zip(self.templates, counts, strict=True)):
            for name in copy_names(template.name, count, taken):
                made = self._made.get((t, name))
                if made is None:
                    node = copy_of(template, name)
                    made = self._made[(t, name)] = (node, copy_slices(template, name), self.daemons.pods_for([node]))
                added.append(made[0])
                slices += made[1]
                daemons += made[2]
        return added, slices, daemons

    def on_copies(self, pods: list[Pod], count: int) -> int:
        """Of `pods` (trial 0's pending pods), how many a simulation with the real profile schedules on `count`
        fresh copies of each template alone (nothing else in the cluster; each copy's DaemonSet pods queued
        first): `_estimate`'s step, a run of the pending pods only, counted among the plan's simulations."""
        added, slices, daemons = self._copies([count] * len(self.templates))
        state = compile_state(added, (), self._objects(slices))
        self.runs += 1
        with collector_paused():
            result = simulate(state, self.config, [*daemons, *pods], tie_break=self.tie_break,
                              seed=self.seed, stranded=False, messages=False, exempt=self.daemons.keys)
        return queue_scheduled(result, self.daemons.keys)

    def _objects(self, slices: list) -> ClusterObjects:
        """The scenario's objects (claims, volumes, namespaces, PDBs, …) with the added nodes' ResourceSlices."""
        if not slices:
            return self.scenario.objects
        return with_objects(self.scenario.objects, {"ResourceSlice": slices})

    def daemon_misfits(self) -> list[str]:
        """For each template, the DaemonSet pods one copy of it cannot hold on its own (a note per pod)."""
        notes = []
        for template in self.templates:
            node = copies(template, 1, set(self.taken))
            daemons = self.daemons.pods_for(node)
            if not daemons:
                continue
            state = compile_state([*self.scenario.nodes, *node], self.scenario.pods,
                                  self._objects(copy_slices(template, node[0].name)))
            result = simulate(state, self.config, daemons, tie_break=self.tie_break, seed=self.seed, stranded=False)
            self.runs += 1
            notes += [f"node template {template.name} cannot hold its DaemonSet pod {s.pod.name} "
                      f"({s.pod.created_by}): {s.message}" for s in result.steps if s.node is None and s.message]
        return notes


def with_template_nodes(scenario: Scenario, templates: list[Template], count: int) -> tuple[ClusterState, list[Pod]]:
    """The scenario's cluster with `count` copies of each template added (named and with their devices as `plan`
    adds them), and the DaemonSet pods the controller creates for the new nodes (to place first)."""
    taken = {n.name for n in scenario.nodes}
    added, slices = [], []
    for template in templates:
        made = copies(template, count, taken)
        added += made
        slices += [s for node in made for s in copy_slices(template, node.name)]
    objects = with_objects(scenario.objects, {"ResourceSlice": slices}) if slices else scenario.objects
    state = compile_state([*scenario.nodes, *added], scenario.pods, objects)
    return state, NewNodeDaemons(scenario.workloads, admitter(scenario)).pods_for(added)


def queue_scheduled(result: SimulationResult, daemon_keys: set[str]) -> int:
    """Pods scheduled but the added nodes' DaemonSet pods (named by `daemon_keys`); a gang's pods only when the
    gang is placed whole (`partly_placed`: a gang is placed whole or counts as not fitting)."""
    partly = partly_placed(result)
    return sum(1 for s in result.steps if s.node is not None and s.pod.key not in daemon_keys
               and s.pod.key not in partly)


def partly_placed(result: SimulationResult) -> set[str]:
    """The keys of the pods of gangs (pod groups with `gang: {minCount}`) that the run did not place whole (a pod
    of the gang left pending, or the gang never queued): such a gang counts as not fitting. A `basic` group's pods
    count one by one, as they bind."""
    return {f"{g.namespace}/{pod}" for g in result.groups if g.policy == "gang" and (g.pending or g.gated)
            for pod in g.pods}


def group_rows(result: SimulationResult) -> list[dict]:
    """Per pod group of the planned cluster's run: its record (`GroupRecord.to_dict`) and `placedWhole`."""
    return [{**g.to_dict(), "placedWhole": not g.pending and g.gated is None} for g in result.groups]


def _smallest(ok: Callable[[int], bool], high: int, ahead: Callable[[list[int]], None] | None = None,
              predict: Callable[[int], bool] | None = None, low: int = 0, levels: int = 2) -> int:
    """The smallest k in [low, high] with ok(k), given ok(high); ok(k − 1) was seen false unless k = low. `ahead`
    is told the counts about to be asked before each ask (`bisection_counts`: this one, then the next `levels` − 1
    levels of the bisection's decision tree, the likelier way by `predict` first), so that workers may run them
    side by side: the search asks the same counts."""
    while low < high:
        mid = (low + high) // 2
        if ahead is not None:
            ahead(bisection_counts(low, high, levels, predict))
        if ok(mid):
            high = mid
        else:
            low = mid + 1
    return low


def bisection_counts(low: int, high: int, levels: int, predict: Callable[[int], bool] | None = None) -> list[int]:
    """The counts a bisection of [low, high] (`_smallest`) may ask, breadth first down `levels` levels of its
    decision tree: the middle, then the middles of the two halves it leaves (the half below when it holds, first
    when `predict` says it holds or there is no `predict`), then theirs, ….

    >>> bisection_counts(0, 10, 3), bisection_counts(0, 10, 2, predict=lambda k: False), bisection_counts(4, 4, 2)
    ([5, 2, 8, 1, 4, 7, 9], [5, 8, 2], [])
    """
    counts: list[int] = []
    level = [(low, high)]
    for _ in range(levels):
        below: list[tuple[int, int]] = []
        for lo, hi in level:
            if lo < hi:
                mid = (lo + hi) // 2
                counts.append(mid)
                held, short = (lo, mid), (mid + 1, hi)
                below += [held, short] if predict is None or predict(mid) else [short, held]
        level = below
    return counts


def gallop_counts(low: int, limit: int) -> list[int]:
    """The gallop's probes: low, low + 1, low + 3, low + 7, … (the increment doubling) while below `limit`, then
    `limit` (the most generous cluster).

    >>> gallop_counts(0, 100), gallop_counts(5, 6), gallop_counts(4, 4)
    ([0, 1, 3, 7, 15, 31, 63, 100], [5, 6], [4])
    """
    probes, step = [low], 1
    while probes[-1] + step < limit:
        probes.append(probes[-1] + step)
        step *= 2
    return probes if probes[-1] >= limit else [*probes, limit]


def _gallop(ok: Callable[[int], bool], probes: Sequence[int], ahead: Callable[[list[int]], None] | None = None,
            futile: Callable[[int], bool] = lambda _: False) -> int | None:
    """The first of `probes` with ok (None: none), straight to the last probe (the most generous cluster) after
    a probe that was `futile`; `ahead` is told each probe and the ones after it before it is asked (workers run
    them side by side, as many as there are)."""
    probes = list(probes)
    for i, count in enumerate(probes):
        if ahead is not None:
            ahead(probes[i:])
        if ok(count):
            return count
        if futile(count) and i < len(probes) - 2:
            return _gallop(ok, probes[-1:], ahead)
    return None


def _search(planner: Planner, limit: int, pending: list[Pod]) -> list[int]:
    """The plan's counts (the module's docstring): from the estimate (`_estimate`, from trial 0's `pending` pods,
    never under the requests' bound for the whole queue) up (`_Climb`), the most generous cluster only when no
    probe schedules the whole queue (its count is then the target); from the first probe that holds, down
    (`_cut`, by way of the copies' requests bound) when it was a guess of the estimate's, else the bisection
    between the largest count seen short of the target and it; with several templates, on uniform vectors, then
    `_several` from the smallest uniform one that holds."""
    n, queue = len(planner.templates), len(planner.queue)
    today = planner.memo[(0,) * n]
    planner.aim(queue, give_up=queue - today - 1, worth=today + 1)  # (a probe gives up when it cannot beat today)

    def ok(u: int) -> bool:
        return planner.holds([u] * n)

    def ahead(us: list[int], then: Sequence[int] = ()) -> None:
        planner.prefetch([[u] * n for u in us], [[u] * n for u in then])

    levels = planner.lookahead()

    low = _uniform_floor(planner, limit)
    guess = _estimate(planner, pending, low, limit)
    planner.guess, planner.reach = guess.copies, today + guess.fits
    climb = _Climb(planner, ok, ahead, today, planner.reach, limit)
    first, guessed = climb.first(min(max(guess.copies, low), limit))
    if first is None:  # the generous cluster, run whole, falls short of the queue: its count is the target
        planner.aim(planner.memo[planner.generous])
        if planner.memo[(0,) * n] >= planner.target:  # type: ignore[operator]
            return [0] * n
        low, climb.best = _uniform_floor(planner, limit), today  # again from the estimate (or the target's own
        first, guessed = climb.first(min(max(guess.copies, low), limit))  # bound), what was run known
        assert first is not None  # (the generous cluster holds its own count)
    else:  # the whole queue is the target for good: a run now gives up at its first pod left pending
        planner.aim(queue)
    short = [k[0] for k in [*planner.memo, *planner.short] if len(set(k)) == 1 and k[0] < first
             and planner.known(k) is False]
    low = max([low, *(k + 1 for k in short)])
    if n > 1 and first - low == 1:  # one uniform count left between: its run is no cheaper than the descent's
        u = first  # one-fewer runs of each template, asked from [first, …] in any case (`_several`)
    elif guessed and first > low:  # a guess that holds: down from it, by way of the copies' requests bound
        u = _cut(ok, first, low, hint=guess.bound, ahead=ahead, levels=levels)
    else:
        u = _smallest(ok, first, ahead, planner.predict if n == 1 else None, low=low, levels=levels)
    return [u] if n == 1 else _several(planner, [u] * n)


@dataclass
class _Climb:
    """`_search`'s way up to the first uniform count that holds the target: the estimate; then, when it is short
    but places more than trial 0 did and at least half of what the estimate expects beyond it (`off`), a jump by
    the pods still missing at the rate it placed them per copy (`jump`); then the gallop from there (+1, +3,
    +7, …, then the most generous cluster). A probe that places no more than the one before it (trial 0 for the
    first), or every pod the estimate expects to fit (`expected`) and not the target, is futile: the most
    generous cluster next (the pods left are not short of room, or fit on no count of the templates)."""

    planner: Planner
    ok: Callable[[int], bool]
    ahead: Callable[..., None]  # (the counts the search may ask next; then those asked once the queue is the target)
    today: int  # queue pods trial 0 places
    expected: int  # trial 0's and the pending pods that the estimate places on the copies
    limit: int
    best: int = -1

    def __post_init__(self) -> None:
        self.best = self.today

    def first(self, start: int) -> tuple[int | None, bool]:
        """The first count that holds from `start` (None: not even the most generous cluster), and whether it was
        a guess (the estimate or the jump) rather than a gallop's probe. Told ahead: `start`, the most generous
        cluster (asked whenever `start` is short and futile, or no probe of the gallop holds), `_cut`'s first probe
        (asked when `start` holds) and the bisection above `start` (when it is short and futile)."""
        above = bisection_counts(start + 1, self.limit, self.planner.lookahead())
        self.ahead([start, self.limit], [*([start - 1] if start > 0 else []), *above])
        if self.ok(start):
            return start, True
        if self.futile(start) or self.off(start):  # (told ahead: the bisection above `start` that follows)
            return _gallop(self.ok, [self.limit], lambda us: self.ahead(us, above)), False
        jump = self.jump(start)
        first = _gallop(self.ok, gallop_counts(jump, self.limit), self.ahead, self.futile)
        return first, first == jump and jump < self.limit

    def placed(self, u: int) -> int:
        """Queue pods the uniform count u places (a run that gave up: no more than trial 0)."""
        return self.planner.memo.get((u,) * len(self.planner.templates), self.today)

    def futile(self, u: int) -> bool:
        done = self.placed(u)
        stalled, self.best = done <= self.best, max(self.best, done)
        goal = self.planner.target
        return u > 0 and (stalled or self.expected < goal and done >= self.expected)  # type: ignore[operator]

    def off(self, u: int) -> bool:
        """Whether the estimate u placed fewer pods beyond trial 0's than are still missing of what the estimate
        expects (under half of them): the copies do not hold in the cluster what they hold alone (the queue is
        drawn to the empty copies, or held back by other than room), so the rate a jump would extrapolate does
        not hold either (the jump would more than double u): the most generous cluster next."""
        done = self.placed(u)
        return done - self.today < min(self.planner.target, self.expected) - done  # type: ignore[type-var]

    def jump(self, u: int) -> int:
        """From a count u short of the target that places more than trial 0: u + ⌈missing · u / gained⌉ (the pods
        still missing of what the estimate expects, or of the target, at the rate u copies placed beyond trial
        0's), at least u + 1, at most the limit."""
        done, goal = self.placed(u), self.planner.target
        want = min(goal, self.expected) if done < self.expected else goal  # type: ignore[type-var]
        gained = max(done - self.today, 1)
        return min(self.limit, u + max(1, -(-(want - done) * u // gained)))


@dataclass
class Estimate:
    """`_estimate`'s guess: uniform copies, the pending pods it expects them to place, and the copies' requests
    bound it started from."""

    copies: int
    fits: int
    bound: int


def left_pending(result: SimulationResult, queue: list[Pod]) -> frozenset[str]:
    """The keys of the queue pods a run left without a node (pending, never created, of a gang not placed whole)."""
    placed = {s.pod.key for s in result.steps if s.node is not None} - partly_placed(result)
    return frozenset(p.key for p in queue if p.key not in placed)


def pending_after(left: frozenset[str], queue: list[Pod]) -> list[Pod]:
    """The queue pods a run left without a node (`left`, their keys: `left_pending`), in queue order, each waiting
    (OrderedReady) only for the lower ordinals among them: the others run already."""
    pending = [p for p in queue if p.key in left]
    keys = {p.key for p in pending}
    return [replace(p, ordered_after=tuple(k for k in p.ordered_after if k in keys)) if p.ordered_after else p
            for p in pending]


def _estimate(planner: Planner, pending: list[Pod], low: int, limit: int) -> Estimate:
    """Where the answer likely lies, from trial 0's `pending` pods (`low`: the requests' bound for the whole
    queue): a uniform count of fresh copies of the templates alone on which a simulation with the real profile
    schedules as many of them as fit a copy by requests (`copies_bound`: f of them). From their requests' bound
    on the copies u₀ (u₀ itself, no run, when u₀ ≤ low), each run of the pending pods only (and the copies'
    DaemonSet pods; cheap beside a run of the whole queue) places s of them, and the next count is the larger of
    ⌈u·f/s⌉ (as many copies per pod placed) and u plus an increment that doubles (1, 2, 4, …), up to the first
    count that places all f, or the first that places no more than the one before it (the rest fit on no count:
    the one before is the estimate). A guess that picks `_search`'s first probe, never an answer."""
    n = len(planner.templates)
    alone = [compile_state([t.node]) for t in planner.templates]
    overhead = [planner.daemons.pods_for(copies(t, 1, set(planner.taken))) for t in planner.templates]
    bound, fits = copies_bound(planner.config, pending, alone, overhead)
    high = min(limit, len(pending))
    start = _smallest(lambda u: all(u >= bound.fewest(t, [u] * n) for t in range(n)), high) if high else 0
    if fits == 0 or start <= low:
        return Estimate(start, fits, start)
    u, step, last = start, 1, (start, -1)
    while True:
        placed = planner.on_copies(pending, u)
        if placed >= fits:
            return Estimate(u, fits, start)
        if placed <= last[1] or u >= high:
            return Estimate(*(last if placed <= last[1] else (u, placed)), start)
        last = (u, placed)
        u, step = min(high, max(u + step, -(-u * fits // placed) if placed else 0)), step * 2


def _uniform_floor(planner: Planner, limit: int) -> int:
    """The smallest u in [0, limit] such that [u, …, u] is not below the requests' bound, `limit` when none is (the
    bound of one template given the others falls as they grow: the first such u is found by bisection)."""
    n = len(planner.templates)
    return _smallest(lambda u: not planner.below_floor([u] * n), limit)


def _greedy(planner: Planner, target: int, limit: int) -> list[int] | None:
    """From nothing, one node at a time: the template scheduling the most further pods per unit of cost
    (ties: cheaper, then first); None when no single node helps any more before the target."""
    counts = [0] * len(planner.templates)
    done = planner.scheduled(counts)
    while done < target and sum(counts) < limit:
        best: tuple | None = None
        planner.prefetch([_with(counts, t, counts[t] + 1) for t in range(len(counts))], whole=True)  # (the step's
        for t, template in enumerate(planner.templates):  # runs, side by side)
            gain = planner.scheduled(_with(counts, t, counts[t] + 1)) - done
            rate = Decimal(gain) / template.cost if template.cost else Decimal("Infinity")
            key = (rate, -template.cost, -t)
            if gain > 0 and (best is None or key > best[0]):
                best = (key, t, gain)
        if best is None:
            return None
        counts[best[1]] += 1
        done += best[2]
    return counts if done >= target else None


def _descend(planner: Planner, counts: list[int], order: Sequence[int]) -> list[int]:
    """From a cluster that holds the target: each template in `order` cut to the fewest copies that still hold
    it (`_cut`, the others fixed)."""
    counts = counts.copy()
    for i, t in enumerate(order):
        def holds(k: int, t: int = t) -> bool:
            return planner.holds(_with(counts, t, k))

        def ahead(ks: list[int], t: int = t, i: int = i) -> None:  # (then the next templates' first probes, as
            planner.prefetch([*(_with(counts, t, k) for k in ks),  # if this cut ended at its count)
                              *(_with(counts, s, counts[s] - 1) for s in order[i + 1:] if counts[s])])
        counts[t] = _cut(holds, counts[t], ahead=ahead, levels=planner.lookahead())
    return counts


def _with(counts: Sequence[int], t: int, k: int) -> list[int]:
    """`counts` with `k` copies of template `t`."""
    return [*counts[:t], k, *counts[t + 1:]]


def _cut(ok: Callable[[int], bool], high: int, low: int = 0, hint: int | None = None,
         ahead: Callable[[list[int]], None] | None = None, levels: int = 2) -> int:
    """The fewest k in [low, high] with ok(k), given ok(high): a gallop down (high − 1, high − 3, high − 7, … down
    to low) to the first count that fails, then the bisection between it and the last that held; ok(k − 1) was
    seen false unless k = low. As many probes as a bisection of [0, high] when the cut is deep, far fewer when it is
    shallow (a template the others cannot stand in for: one copy fewer already fails). `hint`: a likelier answer
    below high − 1, probed once high − 1 holds (then the gallop goes on from it, the increment back to 1). `ahead` is
    told before each probe the probe, the next one if it holds and `levels` − 1 levels of the bisection if it fails
    (workers may run them side by side; the same probes are asked).

    >>> seen = []
    >>> _cut(lambda k: seen.append(k) or k >= 37, 40), seen
    (37, [39, 37, 33, 35, 36])
    >>> seen = []
    >>> _cut(lambda k: seen.append(k) or k >= 40, 44, hint=40), seen
    (40, [43, 40, 39])
    """
    held, step = high, 1
    while held > low:
        probe, then_step, then_hint = _cut_probe(high, low, held, step, hint)
        if ahead is not None:
            after = [_cut_probe(high, low, probe, then_step, then_hint)[0]] if probe > low else []
            ahead([probe, *after, *bisection_counts(probe + 1, held, levels - 1)])
        if not ok(probe):
            return _smallest(ok, held, ahead, low=probe + 1, levels=levels)
        held, step, hint = probe, then_step, then_hint
    return held


def _cut_probe(high: int, low: int, held: int, step: int, hint: int | None) -> tuple[int, int, int | None]:
    """`_cut`'s next probe below `held` (the least count seen to hold), and the step and hint it goes on with when
    that probe holds: the hint once (a jump, the increment back to 1), else the gallop's next step down."""
    if hint is not None and held < high and max(hint, low) < held - step:
        return max(hint, low), 1, None
    return max(held - step, low), step * 2, hint


def _prune(planner: Planner, counts: list[int], target: int) -> list[int]:
    """Remove single nodes while the target still holds (dearest templates first), until none can go: then one
    node fewer of any template loses a pod (each such cluster was simulated)."""
    order = sorted(range(len(counts)), key=lambda i: (-planner.templates[i].cost, i))
    changed = True
    while changed:
        changed = False
        for i, t in enumerate(order):
            if counts[t] == 0:
                continue
            planner.prefetch([_with(counts, s, counts[s] - 1) for s in order[i:] if counts[s]])  # (then the next
            trial = _with(counts, t, counts[t] - 1)  # removals, as if this one fails)
            if planner.holds(trial):
                counts, changed = trial, True
    return counts


class DaskPlanner(Planner):
    """A `Planner` whose trials run on Dask workers (`Sweep`): the search asks the same counts in the same order
    and gets the same answers. What the search says it may ask next (`prefetch`, likeliest first: the bisection's
    next levels, the gallop's next probes, the most generous cluster beside trial 0) keeps every worker busy, and
    a run the search has ruled out is cancelled: it stops on its worker at its next check (`run_trial`), so that
    worker is free for the next count at once. A run that may be the answer stays on its worker (`_Run`), sent
    here only when the plan is its cluster's. A worker or a cluster that fails (a worker killed, the cluster gone,
    no worker for `WAIT_FOR_WORKERS` seconds) is said once (`warn`) and the rest of the plan runs in this
    process, from what the workers answered."""

    def __init__(self, scenario: Scenario, config: SchedulerConfiguration, templates: list[Template], *,
                 tie_break: str = "random", seed: int = 0, pool: Any, warn: Callable[[str], None]) -> None:
        super().__init__(scenario, config, templates, tie_break=tie_break, seed=seed)
        self.pool, self.warn = pool, warn
        self.work = PlanWork(scenario, config, templates, tie_break, seed)
        self.shipped: Any = None
        self.running: dict[tuple[tuple[int, ...], int | None], _Run] = {}  # (counts, give_up) → its run
        self.told: list[tuple[tuple[int, ...], int | None]] = []  # (counts, give_up) the search may ask next
        self.workers = 0

    def lookahead(self) -> int:
        """Levels of a bisection's decision tree that hold a count for every worker (2ᴸ − 1 ≥ workers), two at
        least: the search, told them, keeps all the workers busy."""
        return max(2, self.workers.bit_length())

    def prefetch(self, counts: Sequence[list[int]], then: Sequence[list[int]] = (), whole: bool = False) -> None:
        """The counts the search may ask next, likeliest first (`counts`, their runs giving up as the search's probes
        now do, `aim`, or never when `whole`; then `then`, asked only once the target is settled by a probe that holds or by the most
        generous cluster: `_settled_give_up`). The runs of any other count are cancelled (the search has ruled
        them out, or they give up sooner than it now allows); then the likeliest not known nor running start, on
        idle workers, or, those of `counts`, in place of a less likely one (cancelled) when none is idle."""
        if self.pool is None:
            return
        try:
            self._ship()
            self.told = [(k, self._give_up(k, None if whole else self.give_up)) for k in map(tuple, counts)]
            if then:
                settled = self._settled_give_up()
                self.told += [(k, self._give_up(k, settled)) for k in map(tuple, then)]
            self._cancel([r for (k, g), r in self.running.items() if not any(
                k == t and _answers(g, asked) for t, asked in self.told)])
            for i, (key, give_up) in enumerate(self.told):
                if not self._wanted(key, give_up):
                    continue
                if self._idle() == 0 and (i >= len(counts) or not self._make_room([k for k, _g in self.told[i + 1:]])):
                    break  # (a count of `then` only on an idle worker)
                self._submit(key, give_up)
        except Exception as exc:  # noqa: BLE001 - any failure of the cluster: the plan goes on here
            self._lost(exc)

    def _ship(self) -> None:
        """The work on every worker, once (the first `prefetch`)."""
        if self.shipped is None:
            self.shipped = self.pool.ship(self.work)
            self.workers = max(1, self.pool.count)

    def _give_up(self, key: tuple[int, ...], give_up: int | None) -> int | None:
        """When a run asked ahead gives up: at `give_up`, but the most generous cluster, which runs whole."""
        return None if key == self.generous else give_up

    def _settled_give_up(self) -> int:
        """When the runs of the search's last part give up (`_search`: `aim` once the first count holds): at the
        first queue pod left pending, or, when the most generous cluster (asked, or its run ahead done; else as
        the estimate expects, `reach`) falls short of the queue, once more are pending than it leaves."""
        placed = self.memo.get(self.generous)
        run = self._future(self.generous, None)
        if placed is None and run is not None and run.trial.done() and run.trial.status == "finished":
            out = run.trial.result()
            placed = None if out is None else out[0].scheduled
        if placed is None:  # (not known yet: the estimate's guess of it)
            placed = self.reach
        return len(self.queue) - min(len(self.queue), len(self.queue) if placed is None else placed)

    def _wanted(self, key: tuple[int, ...], give_up: int | None) -> bool:
        """Whether a run of `key` is still to start: not known, not refused by the requests' bound, not running."""
        if key in self.memo or key in self.short or self._future(key, give_up) is not None:
            return False
        return key == self.generous or not self.below_floor(key)

    def _future(self, key: tuple[int, ...], give_up: int | None) -> _Run | None:
        """The run of `key` that answers a trial giving up at `give_up` (None: none runs)."""
        return self.running.get((key, give_up)) or next(
            (r for (k, g), r in self.running.items() if k == key and _answers(g, give_up)), None)

    def _idle(self) -> int:
        """Workers without a run of this plan (a run cancelled is no longer counted: it stops at once)."""
        return self.workers - sum(1 for r in self.running.values() if not r.run.done())

    def _make_room(self, less_likely: Sequence[tuple[int, ...]]) -> bool:
        """Cancel the least likely run still running among the counts `less_likely`; whether there was one."""
        rank = {key: i for i, key in enumerate(less_likely)}
        busy = [(rank[k], r) for (k, _g), r in self.running.items() if k in rank and not r.run.done()]
        if not busy:
            return False
        self._cancel([max(busy, key=lambda b: b[0])[1]])
        return True

    def _cancel(self, runs: list[_Run]) -> None:
        """Forget these runs and cancel them: Dask tells their workers, where each stops at its next check
        (`run_trial`), or never starts."""
        if runs:
            self.running = {k: r for k, r in self.running.items() if all(r is not c for c in runs)}
            self.pool.client.cancel([f for r in runs for f in (r.trial, r.run)])

    def _submit(self, key: tuple[int, ...], give_up: int | None) -> _Run:
        """The trial on the least busy worker, naming that worker's copy of the work: its run stays there (kept
        when it may be the answer: it placed what it was asked to, not the most generous cluster's), its `Trial`
        comes here."""
        busy = {w: 0 for w in self.pool.addresses()}
        for r in self.running.values():
            if not r.run.done() and r.worker in busy:
                busy[r.worker] += 1
        worker = min(busy, key=busy.__getitem__) if busy else None
        keep = key != self.generous  # (the most generous cluster's run is rarely the answer's: then it runs here)
        client = self.pool.client
        run = client.submit(run_trial, self.shipped.on(worker), (key, give_up, keep), pure=False,
                            workers=None if worker is None else [worker], allow_other_workers=True)
        self.running[(key, give_up)] = _Run(client.submit(trial_of, run, pure=False), run, worker)
        return self.running[(key, give_up)]

    def close(self) -> None:
        """Cancel the runs asked ahead that the search did not need."""
        if self.pool is not None:
            try:
                self._cancel(list(self.running.values()))
            except Exception:  # noqa: BLE001,S110 - a cluster gone: nothing runs there any more
                pass
        self.running = {}

    def trial(self, counts: list[int], give_up: int | None = None, keep: bool = False,
              check: Callable[[int], None] | None = None) -> Trial:
        key = tuple(counts)
        run = None
        if self.pool is not None:
            try:
                self._ship()
                if all(k != key for k, _g in self.told):  # the search went where it did not say: what runs
                    self.told = [(key, give_up)]  # ahead is ruled out
                    self._cancel([r for (k, _g), r in self.running.items() if k != key])
                if self._wanted(key, give_up):
                    if self._idle() == 0:  # (the count asked first, in place of the least likely run)
                        self._make_room([k for k, _g in self.told if k != key])
                    self._submit(key, give_up)
                run = self._future(key, give_up)
            except Exception as exc:  # noqa: BLE001 - as in `prefetch`
                self._lost(exc)
        if run is not None:
            try:
                out = self._wait(run.trial)
                if out is None:  # (stopped on its worker though this process did not cancel it)
                    raise RuntimeError("a worker stopped a run the plan needs")
                trial, kept = out
                self.running = {k: r for k, r in self.running.items() if r is not run}
                self.runs += 1
                trial.result = run if kept else None  # type: ignore[assignment] # (sent when needed: `run_of`)
                return trial
            except Exception as exc:  # noqa: BLE001 - as in `prefetch`
                self._lost(exc)
        return super().trial(counts, give_up, keep, check)

    def run_of(self, trial: Trial) -> SimulationResult | None:
        return self._here(trial.result)

    def result(self, counts: list[int]) -> SimulationResult:
        return self._here(self.kept.get(tuple(counts))) or self.run(counts)

    def _here(self, run: SimulationResult | _Run | None) -> SimulationResult | None:
        """A run, sent here when its worker kept it (None when the workers failed: the caller runs it here)."""
        if not isinstance(run, _Run):
            return run
        if self.pool is None:
            return None
        try:
            return self._fetch(run)
        except Exception as exc:  # noqa: BLE001 - as in `prefetch`
            self._lost(exc)
            return None

    def _fetch(self, run: _Run) -> SimulationResult:
        """A run kept on its worker, sent here (`Work.send`, by that worker's copy of the work)."""
        client = self.pool.client
        return self.work.receive(self._wait(client.submit(send_run, self.shipped.on(run.worker), run.run,
                                                          pure=False)))

    def _wait(self, future: Any) -> Any:
        """The future's result; an error when the cluster has had no worker for `WAIT_FOR_WORKERS` seconds."""
        return result_while_workers(future, self.pool, WAIT_FOR_WORKERS)

    def _lost(self, exc: BaseException) -> None:
        """The workers failed: said once, the rest of the plan in this process."""
        self.warn(f"the Dask workers failed ({type(exc).__name__}: {exc}); the rest of the plan runs in this "
                  f"process, with the same answer")
        for run in self.running.values():
            run.trial.cancel()
            run.run.cancel()
        self.running, self.pool = {}, None


@dataclass
class _Run:
    """A trial on a Dask worker: the future of its `Trial` (`trial_of`, small, sent here), that of the whole
    run (`run_trial`: the `Trial` and the simulation, which stays on the worker until the plan needs it or
    drops it), and the worker it was given to."""

    trial: Any
    run: Any
    worker: str | None


def _answers(give_up: int | None, asked: int | None) -> bool:
    """Whether a run giving up at `give_up` answers a trial asked to give up at `asked`: it gives up no sooner (a
    run that gave up later tells as much)."""
    return give_up is None or asked is not None and give_up >= asked


def _several(planner: Planner, start: list[int]) -> list[int]:
    """Candidates from cutting `start` (a cluster that holds the target) down in several template orders and,
    on a small cluster, from the greedy build-up; each pruned, the cheapest kept (then the fewest nodes, then the
    first found)."""
    n, target = len(planner.templates), planner.target
    small = sum(start) <= SMALL_CLUSTER
    by_cost = [sorted(range(n), key=lambda i: (-planner.templates[i].cost, i)),
               sorted(range(n), key=lambda i: (planner.templates[i].cost, i))]
    orders = list(permutations(range(n))) if small and n <= MAX_ORDERS_TEMPLATES else list(
        dict.fromkeys(tuple(o) for o in by_cost))
    starts = [_descend(planner, start, order) for order in orders]
    greedy = _greedy(planner, target, SMALL_CLUSTER) if small else None  # type: ignore[arg-type]
    if greedy is not None:
        starts.insert(0, greedy)
    found = [_prune(planner, c, target) for c in starts]  # type: ignore[arg-type]
    cost = [sum((t.cost * k for t, k in zip(planner.templates, c, strict=True)), Decimal(0)) for c in found]
    best = min(range(len(found)), key=lambda i: (cost[i], sum(found[i]), i))
    return found[best]


def plan(scenario: Scenario, config: SchedulerConfiguration, templates: list[Template], *,
         max_nodes: int | None = None, tie_break: str = "random", seed: int = 0, pool: Any = None,
         warn: Callable[[str], None] = lambda _: None,
         progress: Callable[[str, int, int | None, str], None] | None = None) -> Plan:
    """The fewest nodes of the templates to add so that every pod that can fit is scheduled (`pool`: the started
    `Workers` of a `Sweep`, to run the trials on; `warn`: told when they fail and the plan goes on here;
    `progress`: told after each trial, as `Planner.progress`)."""
    if not templates:
        raise InputError("give at least one node template (--node-template FILE)")
    planner = (Planner(scenario, config, templates, tie_break=tie_break, seed=seed) if pool is None else
               DaskPlanner(scenario, config, templates, tie_break=tie_break, seed=seed, pool=pool, warn=warn))
    planner.progress = progress
    try:
        return _plan(planner, scenario, templates, max_nodes)
    finally:
        planner.close()


def _plan(planner: Planner, scenario: Scenario, templates: list[Template], max_nodes: int | None) -> Plan:
    zero = [0] * len(templates)
    limit = max_nodes if max_nodes is not None else len(planner.queue)  # an empty node for every queued pod
    planner.generous = (limit,) * len(templates)
    # trial 0 and, beside it, the most generous cluster (the first probe, the estimate, is known only from trial 0;
    # the generous cluster is asked whenever that probe is short and futile, and cancelled when it holds)
    planner.prefetch([zero, list(planner.generous)])
    notes = planner.daemon_misfits()
    before = planner.trial(zero, keep=True)
    planner.record(tuple(zero), before)
    pending = before.pending
    if pending == 0 or limit == 0:
        result = planner.run_of(before) or planner.run(zero)
        return Plan(templates, zero, result, before.scheduled, pending, len(scenario.nodes), planner.runs, notes,
                    before.not_created)
    counts = _search(planner, limit, pending_after(before.left, planner.queue))
    result = (planner.run_of(before) if counts == zero else None) or planner.result(counts)
    return Plan(templates, counts, result, planner.target, pending, len(scenario.nodes), planner.runs, notes,  # type: ignore[arg-type]
                before.not_created)


# --------------------------------------------------------------------------- on Dask workers

@dataclass
class PlanWork(Work):
    """What each worker holds for `plan`: the scenario (after the node actions), the configuration, the templates;
    each worker builds its own `Planner` once, and a trial is one of its runs."""

    scenario: Scenario
    config: SchedulerConfiguration
    templates: list
    tie_break: str
    seed: int

    def shared(self) -> list[Any]:
        return [self.scenario.objects, *self.scenario.nodes, *self.scenario.pods]

    def planner(self) -> Any:
        planner = self.__dict__.get("_planner")
        if planner is None:
            planner = self.__dict__["_planner"] = Planner(self.scenario, self.config, self.templates,
                                                          tie_break=self.tie_break, seed=self.seed)
        return planner

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in super().__getstate__().items() if k != "_planner"}


class TrialCancelled(Exception):
    """A run on a Dask worker that the plan no longer needs (`DaskPlanner._cancel`): it stops."""


def run_trial(work: PlanWork, item: tuple[tuple[int, ...], int | None, bool]) -> tuple[Any, Any] | None:
    """On a worker: the cluster with `counts` copies (`give_up` as `simulate`'s); its `Trial` without the run, and
    the run when it is to be kept (`keep`: whenever it placed what it was asked to), left on the worker
    (`trial_of`, `send_run`). None when the plan cancelled it: it stops at its next check
    (`stop_when_cancelled`), its worker free for the next."""
    counts, give_up, keep = item
    stop = stop_when_cancelled()
    try:
        if stop is not None:
            stop(0)  # (cancelled before it started: the copies are not even made)
        trial = work.planner().trial(list(counts), give_up, keep=not any(counts), check=stop)  # (trial 0: `left`)
    except TrialCancelled:
        return None
    run, trial.result = trial.result, None
    return trial, (run if keep and not trial.stopped else None)


def trial_of(out: tuple[Any, Any] | None) -> tuple[Any, bool] | None:
    """On the worker of a `run_trial`: its `Trial`, and whether it kept the run (None: it was cancelled)."""
    return None if out is None else (out[0], out[1] is not None)


def send_run(work: PlanWork, out: tuple[Any, Any]) -> bytes:
    """On the worker of a `run_trial` that kept its run: the run, sent (`Work.send`)."""
    return work.send(out[1])


def stop_when_cancelled() -> Callable[[int], None] | None:
    """On a Dask worker: a `simulate` progress hook (called every 256 pods) that raises `TrialCancelled` once the
    worker no longer wants the task it runs. `Client.cancel` of its future reaches the worker as the scheduler's
    `free-keys` message, handled on the worker's event loop while the run holds the task's thread, and the
    worker's state machine marks the task `cancelled` (distributed's `WorkerState`; a task forgotten is gone from
    its `tasks`): the run sees it within ≈ 25 ms, with no message of its own. None outside a worker (the hook
    never stops a run whose state it cannot read)."""
    try:
        from distributed import get_worker

        worker = get_worker()
        key, tasks = worker.get_current_task(), worker.state.tasks
    except (ImportError, ValueError, KeyError, AttributeError):
        return None

    def check(_done: int) -> None:
        task = tasks.get(key)
        if task is None or getattr(task, "state", None) in ("cancelled", "released", "forgotten"):
            raise TrialCancelled

    return check
