"""The scheduling engine: kube-scheduler's cycle for pod after pod on one evolving ClusterState, fast.

Each cycle gives exactly what `framework.schedule_one` would (filter verdicts, scores, FitError text),
but speed comes from what stays unchanged between pods: only the bound node's row of the state changes.
Pods are grouped by *shape* (everything the plugins read of a pod); per shape the engine keeps each
Filter plugin's verdict and each Score plugin's raw score for every node and, on the shape's next
cycle, re-evaluates only the rows bound since (rows.py does that in Python scalars for the resource
plugins).  A cycle is then a handful of whole-array operations (mask, max, ties).

Node sampling follows `schedule_one.go` (SPEC §7) as kube-scheduler runs it with `parallelism: 1`:
`numFeasibleNodesToFind`, `nextStartNodeIndex` round robin over the zone-round-robin node list and
advanced by `processedNodes`, the nominated node tried first, one feasible node chosen without scoring.
The search window is read off each shape's cached verdicts over every node.

Planning trials (`kubefit.planning.consolidate`): `remove_node` deletes a node as kube-scheduler would see it
deleted (no candidate for any pod, out of the node list that sampling walks and FitError counts);
`checkpoint` / `rollback` take a trial back, state and caches, and `commit` keeps it.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import random
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Node, Pod
from kubefit.k8s.requests import PodDemand, pod_demand
from kubefit.k8s.version import BATCH_RESCORES_LAST_NODE, OPPORTUNISTIC_BATCHING
from kubefit.scheduler.batch import OpportunisticBatch, RankedNodes, signature
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Framework,
    fit_error_text,
    new_context,
    profile_framework,
    run_pre_filters,
    schedule_one,
)
from kubefit.scheduler.plugins.affinityterms import carries_affinity_terms
from kubefit.scheduler.plugins.balanced import NodeResourcesBalancedAllocation
from kubefit.scheduler.plugins.base import (
    SUCCESS,
    UNRESOLVABLE,
    CycleContext,
    HashedKey,
    SignPlugin,
    normalize_scores,
)
from kubefit.scheduler.plugins.fit import NodeResourcesFit
from kubefit.scheduler.plugins.interpodaffinity import LIVE_SCORE
from kubefit.scheduler.plugins.interpodaffinity import MATCHING as IPA_MATCHING
from kubefit.scheduler.plugins.interpodaffinity import PRE_FILTER as IPA_PRE_FILTER
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.plugins.topologyspread import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
from kubefit.scheduler.plugins.topologyspread import NAME as SPREAD
from kubefit.scheduler.plugins.topologyspread import STATIC as SPREAD_STATIC
from kubefit.scheduler.plugins.volumebinding import VolumeBinding
from kubefit.scheduler.plugins.volumes import ClaimAliases
from kubefit.scheduler.rows import compiled_spec, evaluate_compiled, filter_kernel, score_kernel
from kubefit.scheduler.state import ClusterState
from kubefit.scheduler.staticnorm import static_normalized

try:  # `_changed_rows` and `_best` in C (_countkernels.c), built when the package is installed with a C compiler
    from kubefit.scheduler._countkernels import best as _best_c
    from kubefit.scheduler._countkernels import distinct as _distinct
except ImportError:  # pragma: no cover - the same rows, sorted in Python or marked in a mask; numpy's sums
    _best_c = _distinct = None

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
TIE_BREAKS = ("random", "first")
_INT64_MIN = np.iinfo(np.int64).min
_array_max, _array_min = np.maximum.reduce, np.minimum.reduce  # `a.max()`, `a.min()` without numpy's Python-level
# wrappers (a few times per cycle)
# Score plugins whose NormalizeScore is the identity: their totals can be cached per node.
_IDENTITY_NORMALIZE = (NodeResourcesFit, NodeResourcesBalancedAllocation)
_CACHE_BYTES = 256 << 20  # budget for the per-shape caches
_SHAPE_BYTES_PER_NODE = 85  # what a shape holds per node, measured (tracemalloc, 1,265 shapes of the default
# profile on 5,000 nodes: 538 MiB): raw scores, filter codes, totals and its plugins' cycle state
_FEW_ROWS = 64  # up to this many stale rows, re-evaluate them one by one in Python scalars (≈ 3.5 µs a row;
# the plugins' whole-array path costs ≈ 230 µs for 20 to 100 rows)
_FEW_LABELS = 12  # a Filter outcome with at most this many reason labels: its bit keys counted (`_pattern_ids`)
# cycle-context entries of the plugins that read other nodes kept when a shape is redone: those that depend on
# the pod (and the scenario's objects) alone, and those that bring themselves up to date with the binds since
_CARRIED_CACHE = frozenset({f"{SPREAD}/{DO_NOT_SCHEDULE}", f"{SPREAD}/{SCHEDULE_ANYWAY}", SPREAD_STATIC, LIVE_SCORE,
                            IPA_PRE_FILTER, IPA_MATCHING})
_SIGNS: dict[int, tuple[Framework, list | None]] = {}  # id(framework) → (framework, its plugins if all sign)
_PINNERS: dict[int, tuple[Framework, list]] = {}  # id(framework) → (framework, its Filter plugins' `pins`)
_DEMAND_KEYS: dict[tuple, tuple] = {}  # ids of a pod's request inputs → (those objects, `demand_key`)
_DEMAND_KEYS_MAX = 4096
_STATIC_MAX = 256  # static plugins' results kept per engine (`Engine._shared`)


# --------------------------------------------------------------------------- node order, sampling

def zone_key(node: Node) -> str:
    """`utilnode.GetZoneKey`: region + ":\\x00:" + zone, "" when the node has neither label (the first of
    each pair of labels that is set and not empty)."""
    labels = node.labels
    zone = labels.get(ZONE_LABELS[0]) or labels.get(ZONE_LABELS[1]) or ""
    region = labels.get(REGION_LABELS[0]) or labels.get(REGION_LABELS[1]) or ""
    return "" if not zone and not region else f"{region}:\x00:{zone}"


def zone_order(nodes: Sequence[Node]) -> np.ndarray:
    """The snapshot's node list (`nodeTree.list`): one node per zone in turn, zones in first-seen order."""
    zones: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        zones.setdefault(zone_key(node), []).append(i)
    order: list[int] = []
    for k in range(max((len(z) for z in zones.values()), default=0)):
        order.extend(z[k] for z in zones.values() if k < len(z))
    return np.asarray(order, dtype=np.int64)


def present_zone_order(zones: np.ndarray, present: np.ndarray) -> np.ndarray:
    """`zone_order` of the present nodes only (indices into all nodes), from each node's zone id: what
    `nodeTree.list` gives for the cluster without the others (zones in first-seen order among the present)."""
    idx = np.flatnonzero(present)
    z = zones[idx]
    by_zone = np.argsort(z, kind="stable")
    ranked = z[by_zone]
    rank = np.empty(len(z), dtype=np.int64)
    rank[by_zone] = np.arange(len(z)) - np.searchsorted(ranked, ranked, side="left")  # position within its zone
    first = np.full(int(zones.max()) + 1 if len(zones) else 0, len(z), dtype=np.int64)
    np.minimum.at(first, z, np.arange(len(z)))
    return idx[np.lexsort((first[z], rank))]


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """`numFeasibleNodesToFind`: all below 100 nodes, else the (adaptive) percentage, at least 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


def percentage_of_nodes_to_score(config: SchedulerConfiguration, profile) -> int | None:
    """The percentage `numFeasibleNodesToFind` reads: the profile's own when set, else the global one."""
    pct = profile.percentage_of_nodes_to_score
    return config.percentage_of_nodes_to_score if pct is None else pct


# --------------------------------------------------------------------------- per-shape cache

def _containers_key(containers: Sequence) -> tuple:
    return tuple((tuple(c.requests.items()), c.restart_policy, c.image, c.ports) for c in containers)


def _reads_other_nodes(plugin, state: ClusterState, ctx: CycleContext) -> bool:
    """Whether a bind on another node can change the plugin's verdicts or scores for this pod."""
    decide = getattr(plugin, "reads_other_nodes_for", None)
    return decide(state, ctx) if decide is not None else bool(getattr(plugin, "reads_other_nodes", False))


def demand_key(pod: Pod) -> tuple:
    """What the engine itself reads of a pod: the inputs of its request vector.

    Pods decoded from equal specs share these objects (`load.decode_pod`), so the key is remembered by
    their identity (the entry holds them, so their ids cannot be reused while it lives)."""
    parts = (pod.containers, pod.init_containers, pod.overhead, pod.pod_requests)
    ids = (id(parts[0]), id(parts[1]), id(parts[2]), id(parts[3]))
    known = _DEMAND_KEYS.get(ids)
    if known is not None:
        return known[1]
    key = (_containers_key(parts[0]), _containers_key(parts[1]), tuple(parts[2].items()),
           None if parts[3] is None else tuple(parts[3].items()))
    if len(_DEMAND_KEYS) >= _DEMAND_KEYS_MAX:
        _DEMAND_KEYS.clear()
    _DEMAND_KEYS[ids] = (parts, key)
    return key


def signature_key(fw: Framework, pod: Pod) -> tuple | None:
    """The profile's plugins' signatures of `pod` plus its demand; None when a plugin does not sign."""
    known = _SIGNS.get(id(fw))
    if known is None or known[0] is not fw:  # runtime Protocol checks are slow: once per framework
        plugins = [p for _n, p in fw.filters] + [p for _n, p, _w in fw.scorers] + [p for _n, p in fw.pre_enqueue]
        unique = list({id(p): p for p in plugins}.values())  # a plugin at several extension points signs once
        known = _SIGNS[id(fw)] = (fw, unique if all(isinstance(p, SignPlugin) for p in unique) else None)
    if known[1] is None:
        return None
    return (pod.scheduler_name, demand_key(pod), tuple(p.signature(pod) for p in known[1]))


def _pins(fw: Framework, pod: Pod) -> bool:
    """Whether a Filter plugin of the profile says its PreFilter leaves `pod` one node name (`pins`: NodeAffinity's
    `metadata.name In [node]`), without running it: `Engine._pinned_shape` then."""
    known = _PINNERS.get(id(fw))
    if known is None or known[0] is not fw:
        known = _PINNERS[id(fw)] = (fw, [p.pins for _n, p in fw.filters if hasattr(p, "pins")])
    return any(pins(pod) for pins in known[1])


# what neither a signature nor `shape_key` reads of a pod (its identity, provenance and times: the queue and the
# timeline read those): pods equal in every other field are replicas, with one shape key
_IDENTITY_FIELDS = frozenset({"name", "uid", "raw", "source", "created", "start_time", "arrival", "duration",
                              "created_by", "ordered_after"})
_pod_spec = operator.attrgetter(*(f.name for f in dataclasses.fields(Pod) if f.name not in _IDENTITY_FIELDS))
_SPEC_KEYS_MAX = 4096  # pod templates whose shape key an engine remembers (`Engine._replica_key`)


def _best(total: np.ndarray, feasible: np.ndarray, normed: np.ndarray, scale: int = 1,
          extra: int | np.ndarray = 0) -> tuple[np.ndarray, np.ndarray]:
    """The feasible nodes' scores (`total[feasible] + normed · scale + extra`, int64 products and sums wrapping as
    numpy's) and the nodes among them with the highest (`selectHost`'s candidates), in feasible's order: one pass
    in C when built (`_countkernels.best`), else with numpy (the reference)."""
    if _best_c is not None:
        m = len(feasible)
        both = np.empty(2 * m, dtype=np.int64)  # (one allocation for the two)
        summed, top = both[:m], both[m:]
        try:
            return summed, top[:_best_c(total, feasible, normed, summed, top, scale, extra)]
        except (BufferError, TypeError, ValueError, OverflowError):  # what it cannot read as given (not C-contiguous
            pass  # int64 arrays, ints beyond int64)
    if scale != 1 or type(extra) is not int or extra:
        normed = np.multiply(normed, scale, dtype=np.int64)
        normed += extra
    summed = total[feasible] + normed
    return summed, feasible[summed == _array_max(summed)]


def _same_nodes(a: np.ndarray, b: np.ndarray) -> bool:
    """`np.array_equal` of two arrays of nodes, its wrappers skipped when their lengths or first nodes differ (the
    windows a sampled search finds: k nodes each, from a start that moves)."""
    return len(a) == len(b) and (not len(a) or a[0] == b[0]) and bool((a == b).all())


def _global_plugin(plugin) -> bool:
    """A plugin whose verdicts or scores may follow binds on other nodes (redone over every node)."""
    return bool(getattr(plugin, "reads_other_nodes", False)) or hasattr(plugin, "reads_other_nodes_for")


def _next_context(sh: Shape, pod: Pod) -> CycleContext:
    """The shape's cycle context for its next pod: what the plugins that read other nodes computed is
    dropped (but `_CARRIED_CACHE`); the other plugins' entries depend on the pod alone and stay."""
    ctx, cache = sh.ctx, sh.ctx.cache
    ctx.pod = pod
    known = sh.dropped
    if known is None or cache.keys() != known[0]:  # the plugins fill the same entries cycle after cycle
        known = sh.dropped = (frozenset(cache), [k for k in cache if k not in _CARRIED_CACHE
                                                 and k.partition("/")[0] in sh.global_names])
    for k in known[1]:
        del cache[k]
    return ctx


def shape_key(pod: Pod) -> tuple:
    """Everything a plugin reads of a pod (its name aside): pods with equal keys behave alike."""
    return (pod.scheduler_name, pod.node_name, _containers_key(pod.containers), _containers_key(pod.init_containers),
            tuple(pod.overhead.items()), None if pod.pod_requests is None else tuple(pod.pod_requests.items()),
            None if pod.node_selector is None else tuple(sorted(pod.node_selector.items())),
            None if pod.affinity is None else json.dumps(pod.affinity, sort_keys=True, default=str),
            pod.tolerations, pod.namespace, tuple(sorted(pod.labels.items())), pod.owner_references,
            json.dumps(pod.topology_spread_constraints, sort_keys=True, default=str), pod.scheduling_gates,
            bool(pod.resource_claims), json.dumps(pod.volumes, sort_keys=True, default=str), pod.priority,
            pod.preemption_policy, pod.required_features)


@dataclass
class RowKernels:
    """A shape's scalar row kernels (rows.py): how `Engine._evaluate_rows` redoes one node's row."""

    live_filters: list  # (index into Shape.filters, row fn): verdicts that follow the node's requests
    static_filters: list  # indices into Shape.filters whose verdicts binds never change
    live_scorers: list  # (index into Shape.scorers, row fn, weight) of the identity-normalized scorers
    static_scorers: list  # (index into Shape.scorers, weight): identity-normalized, raw score fixed
    monotone: bool = False  # every live filter refuses a node for good once it does, as long as pods are only added
    spec: np.ndarray | None = None  # the same kernels for `evaluate_compiled` (rows.compiled_spec)


@dataclass
class Shape:
    """What one pod shape's cycle needs, for every node; valid up to bind-log position `seen`."""

    fw: Framework
    ctx: CycleContext
    seen: int = 0
    failure: str | None = None  # PreFilter rejected the pod on every node
    batch_signature: object = None  # the pods' scheduling signature (`Engine._batch_signature`), once asked
    claims_aliased: bool = False  # its pods differ in their claims' names (`ClaimAliases`): signed pod by pod
    allowed: np.ndarray | None = None  # PreFilter node-name subset
    names: set | None = None  # PreFilter's node names (None: every node)
    names_mask: np.ndarray | None = None  # bool [N]: the nodes `names` has (None: every node)
    outside_reason: str = ""
    filters: list = field(default_factory=list)  # active (name, plugin)
    codes: np.ndarray | None = None  # int8 [P, N]
    ok: np.ndarray | None = None  # bool [N]
    scorers: list = field(default_factory=list)  # non-skipped (name, plugin, weight)
    raw: np.ndarray | None = None  # int64 [S, N]
    identity: bool = True
    total: np.ndarray | None = None  # int64 [N]  Σ weight·score of `direct` scorers, INT64_MIN if infeasible
    summed: np.ndarray | None = None  # int64 [N]  Σ weight·score of `direct` scorers, feasible or not
    n_ok: int = 0
    bad: np.ndarray | None = None  # bool [N]: a score outside [0, 100]
    n_bad: int = 0
    message: str | None = None  # FitError text, valid at `message_seen`
    message_seen: int = -1
    reasons_of: np.ndarray | None = None  # int64 [N]: per node the id of its reasons in `patterns` (0: it passes),
    # valid at `message_seen`
    patterns: tuple = field(default_factory=lambda: ([()], {(): 0}))  # (sets of reasons, their ids)
    status_codes: np.ndarray | None = None  # int8 [N]: the code that goes with them (0 when it passes)
    reason_counts: Counter | None = None
    pattern_bits: dict = field(default_factory=dict)  # (a Filter outcome's labels, the bits of those set) → its
    # id in `patterns` (`_pattern_ids`)
    kept_reasons: tuple | None = None  # (`reasons_of`, `status_codes`, the log position and the engine's `presence`
    # they are valid at): kept across `_redo` when every active Filter plugin is row-local (`_reasons_since`)
    prescore_error: bool = False
    kernels: RowKernels | None = None  # when every filter and identity scorer has a row kernel (rows.py)
    direct: list = field(default_factory=list)  # scorer indices with identity NormalizeScore (in `total`)
    normed: list = field(default_factory=list)  # the others: normalized over the feasible nodes per cycle
    norm_version: int = 0  # bumped when feasibility or a normalized plugin's raw score may have changed
    norm_seen: int = -1
    norm_total: tuple | None = None  # (feasible nodes, Σ weight·normalized score of `normed`), at `norm_seen`
    ok_version: int = 0  # bumped when `ok` may have changed
    feasible_at: tuple = (-1, None)  # (`ok_version`, the feasible nodes then): `_feasible`
    global_: bool = False  # a plugin reads other nodes' pods for this shape (spread, inter-pod affinity)
    epoch: int = 0  # the engine's epoch when `global_` was decided
    per_cycle: list = field(default_factory=list)  # scorer indices whose raw score depends on the feasible set
    # (scored over each cycle's feasible nodes by `_normalized_sum`; their rows of `raw` stay unused)
    global_names: frozenset = frozenset()  # the profile's plugins that read other nodes (`_global_plugin`)
    static_norm: tuple | None = None  # (feasible nodes, Σ weight·normalized score of the normed static scorers)
    static_fixed: object = None  # that sum over any feasible set (`staticnorm.static_normalized`), False when it is
    # normalized over each feasible set as it comes (then `static_norm`); None: not decided yet
    plan: RedoPlan | None = None  # how `Engine._redo` brings it up to date
    kernels_of: tuple = ((), ())  # (filter kernels, score kernels) of `filters` / `scorers` (rows.py)
    dropped: tuple | None = None  # (the context's cache keys, those `_next_context` drops) at its last call
    normed_split: tuple = ((), ())  # `normed` split: (static scorers: raw scores fixed for the shape, the others)
    adds_only: bool = True  # its request row has no negative amount: binding its pods only adds to a node
    nonzero: np.ndarray | None = None  # its pods' non-zero (cpu, memory), once bound (`ClusterState.nonzero_pair`)
    presence: int = 0  # the engine's `presence` its scores of plugins that read the node set are valid for
    row_kernels: RowKernels | None = None  # `_row_kernels` (the filters without one read as static)
    filter_keys: dict = field(default_factory=dict)  # index into `filters` → the `codes_key` its row of `codes`
    # was computed at over every node (`_redo`); emptied when rows of a global plugin are written otherwise
    pinned: np.ndarray | None = None  # int64 [0 or 1]: the one candidate node PreFilter leaves its pod, if any:
    # filtered there alone, never scored, never cached (`Engine._pinned_shape`); None: not such a shape


@dataclass
class RedoPlan:
    """How `Engine._redo` brings a shape whose plugins read other nodes up to date (built by `_plan`)."""

    pre_filters: list  # (name, plugin) of the profile's Filter plugins that read other nodes: PreFilter again (but
    # those whose outcome binds never change: `pre_static_for`)
    filtering: frozenset  # the names of the shape's active Filter plugins
    pre_scores: list  # (name, plugin) of the profile's Score plugins that read other nodes: PreScore again (idem)
    scoring: frozenset  # the names of the shape's (non-skipped) Score plugins
    deciders: list  # `reads_other_nodes_for` of the profile's plugins (but those of `pre_static_for` ones)
    always_global: bool  # a running plugin declares `reads_other_nodes` without deciding per pod, or a plugin
    # whose PreFilter / PreScore outcomes binds never change (`pre_static_for`) decides it reads other nodes
    global_filters: list  # indices into `Shape.filters`: redone over every node (unless their `codes_key` says
    # their codes are those already there: `keyed`)
    local_filters: list  # indices into `Shape.filters` of row-local plugins whose verdicts binds change
    global_scorers: list  # indices into `Shape.scorers`: redone over every node (but the per-cycle ones and those
    # whose raw scores binds never change: `rows.score_kernel` "static", `static_score_for`)
    local_scorers: list  # indices into `Shape.scorers` of row-local plugins whose scores binds change
    compiled: bool = False  # the shape's `row_kernels` redo every local filter and scorer (`_evaluate_compiled`),
    # after the local filters without a row kernel (`plain_filters`), which they read as static
    plain_filters: list = field(default_factory=list)
    keyed: frozenset = frozenset()  # indices into `Shape.filters` whose plugin has `codes_key` and `keyed_codes`


def _plan(sh: Shape, state: ClusterState) -> RedoPlan | None:
    """The shape's `RedoPlan` (None when an identity-normalized scorer reads other nodes: `_full` then). PreFilter
    and PreScore are asked again only of the plugins that read other nodes and do not say, through
    `pre_static_for`, that binds can never change their outcomes for this pod (what they leave in the cycle
    context is then what they left at `_full`)."""
    fw, (fk, sk) = sh.fw, sh.kernels_of
    if any(_global_plugin(sh.scorers[s][1]) for s in sh.direct):
        return None
    plugins = list({id(p): p for p in [p for _n, p in fw.filters] + [p for _n, p, _w in fw.scorers]}.values())
    running = [p for _n, p in sh.filters] + [p for _n, p, _w in sh.scorers]
    fixed = {id(p) for p in plugins if _global_plugin(p) and getattr(p, "pre_static_for", None) is not None
             and p.pre_static_for(state, sh.ctx)}
    plan = RedoPlan(
        pre_filters=[(n, p) for n, p in fw.filters if _global_plugin(p) and id(p) not in fixed],
        filtering=frozenset(n for n, _p in sh.filters),
        pre_scores=[(n, p) for n, p, _w in fw.scorers if _global_plugin(p) and id(p) not in fixed],
        scoring=frozenset(n for n, _p, _w in sh.scorers),
        deciders=[p.reads_other_nodes_for for p in plugins if hasattr(p, "reads_other_nodes_for") and id(p) not in fixed],
        # a plugin that only declares `reads_other_nodes`, running; or one of the `pre_static_for` ones deciding so
        # (what they decide reads what their PreFilter / PreScore read: binds never change it either)
        always_global=any(bool(getattr(p, "reads_other_nodes", False)) for p in running
                          if not hasattr(p, "reads_other_nodes_for"))
        or any(p.reads_other_nodes_for(state, sh.ctx) for p in plugins
               if id(p) in fixed and hasattr(p, "reads_other_nodes_for")),
        global_filters=[k for k, (_n, p) in enumerate(sh.filters) if _global_plugin(p)],
        local_filters=[k for k, (_n, p) in enumerate(sh.filters) if not _global_plugin(p) and fk[k] != "static"],
        global_scorers=[k for k, (_n, p, _w) in enumerate(sh.scorers)
                        if _global_plugin(p) and k not in sh.per_cycle and sk[k] != "static"],
        local_scorers=[k for k, (_n, p, _w) in enumerate(sh.scorers)
                       if not _global_plugin(p) and sk[k] != "static" and k not in sh.per_cycle])
    plan.keyed = frozenset(p for p in plan.global_filters if hasattr(sh.filters[p][1], "codes_key"))
    k = sh.row_kernels
    plan.plain_filters = [p for p in plan.local_filters if fk[p] is None]  # (NodePorts: the node's used ports)
    plan.compiled = (k is not None and k.spec is not None
                     and set(plan.local_filters) - set(plan.plain_filters) <= {p for p, _fn in k.live_filters}
                     and set(plan.plain_filters) <= set(k.static_filters)
                     and set(plan.local_scorers) <= {s for s, _fn, _w in k.live_scorers})
    return plan


def _row_kernels(sh: Shape, fk: list, sk: list) -> RowKernels | None:
    """The shape's row kernels (rows.py) for one evaluation of given rows: a Filter plugin without one
    counts as static (`_evaluate_with_kernels` has it give its verdicts first). None when an
    identity-normalized scorer has none (`total` could not be summed)."""
    if any(sk[s] is None for s in sh.direct):
        return None
    k = RowKernels(
        live_filters=[(p, fn) for p, fn in enumerate(fk) if callable(fn)],
        static_filters=[p for p, fn in enumerate(fk) if not callable(fn)],
        live_scorers=[(s, sk[s], sh.scorers[s][2]) for s in sh.direct if sk[s] != "static"],
        static_scorers=[(s, sh.scorers[s][2]) for s in sh.direct if sk[s] == "static"],
        monotone=all(getattr(fn, "monotone", False) for fn in fk if fn != "static"))
    k.spec = compiled_spec(k.static_filters, k.live_filters, k.static_scorers, k.live_scorers)
    return k


# --------------------------------------------------------------------------- the engine

@dataclass
class Checkpoint:
    """What `Engine.rollback` restores beside the state: the tie-break generator, the sampling start and the
    opportunistic batch (with the cycle count)."""

    rng: tuple
    next_start: int
    batch: tuple | None = None
    cycles: int = 0


@dataclass
class Decision:
    """One cycle's outcome: the selected node (None: pending), the tied best nodes, the feasible nodes found
    (upstream's `len(feasibleNodes)`), and whether the pod's nominated node took it unscored."""

    node: int | None
    best: np.ndarray
    feasible: int
    shape: Shape
    nominated_first: bool = False
    processed: int = 0  # how far the cycle moved the start index (`processedNodes`)
    batch_hint: bool = False  # bound to the opportunistic batch's hint, unscored (v1.35+)
    scored: tuple | None = None  # (feasible nodes, their totals) when they were scored: the batch's next list


class Engine:
    """Runs cycles for many pods against one evolving ClusterState, caching per pod shape."""

    def __init__(self, state: ClusterState, config: SchedulerConfiguration, *, tie_break: str = "random",
                 seed: int | None = 0, sampling: bool = True, legacy: bool | None = None) -> None:
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie-break must be one of {', '.join(TIE_BREAKS)}")
        self.state, self.config, self.tie_break = state, config, tie_break
        self.rng = random.Random(seed)  # the standard library's: numpy.random alone takes 17 ms to import
        self.sampling = sampling
        self.legacy = config.legacy_scoring if legacy is None else legacy  # the pre-1.17 0..10 scale
        self.frameworks: dict[str, Framework] = {}
        self.shapes: OrderedDict[HashedKey, Shape] = OrderedDict()
        self.log: list[int] = []  # node of every bind, in order
        self.epoch = 0  # bumped when a pod with pod (anti-)affinity terms is bound: every shape is redone once
        self.last_removal = -1  # log position of the latest pod removed from a node (before it: binds only)
        n = len(state)
        self._zones: np.ndarray | None = None  # per node its zone's id (first-seen order), once a node is removed
        self.order = zone_order(state.nodes)  # the present nodes' zone-round-robin order (`_present_changed`)
        self._order2 = np.concatenate([self.order, self.order])
        if state.removed is not None:
            self._present_changed()
        self.next_start = 0
        self._max_shapes = max(8, _CACHE_BYTES // max(1, n * _SHAPE_BYTES_PER_NODE))
        self._every = np.arange(n, dtype=np.int64)
        self._every_list: list[int] | None = None  # `_every.tolist()`, once asked (`_evaluate_with_kernels`)
        self._spec_keys: dict[int, list] = {}  # id of a pod's containers → [(framework, `_pod_spec`, shape key)]
        # of the pods seen with them (replicas decoded from one template share their containers: `load.decode_pod`)
        self._aliases: dict[int, tuple] = {}  # per framework id: (framework, its ClaimAliases or None)
        self._demands: dict[tuple, PodDemand] = {}  # `_demand`
        self.presence = 0  # bumped when `remove_node` / `rollback` change which nodes the cluster has
        self._static: dict[tuple, np.ndarray] = {}  # a static plugin's verdicts or raw scores over every node,
        # by (extension, plugin, its signature of the pod, presence): shapes equal in that signature share them
        version = config.version  # the queue of the version: opportunistic batching from v1.35 (its gate on)
        self.batch = OpportunisticBatch(rescore_last_node=version.has(BATCH_RESCORES_LAST_NODE)) if (
            version is not None and version.has(OPPORTUNISTIC_BATCHING)) else None
        self.cycles = 0  # scheduling cycles run (`SchedulingQueue.SchedulingCycle`)
        # bool [N]: the nodes of the placement a pod group cycle assumed (`Snapshot.AssumePlacement`, v1.36+
        # TopologyAwareWorkloadScheduling): the only candidates, the `0/N nodes` of a FitError; None: every node
        self.placement: np.ndarray | None = None
        self._k: dict[int, tuple] = {}  # per framework id: (framework, node order, `_window`'s k over that order)

    # ---------------------------------------------------------------- shapes
    def framework(self, pod: Pod) -> Framework:
        """The framework of the pod's profile (built once; `frameworks` is keyed by the profiles' names)."""
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:  # not built yet, or no profile of that name (the first profile's then)
            fw = profile_framework(self.frameworks, self.config, pod, legacy=self.legacy, objects=self.state.objects)
        return fw

    def shape(self, pod: Pod, demand: PodDemand | None = None) -> Shape:
        """The cached shape of `pod`, brought up to date with every bind so far."""
        fw = self.framework(pod)
        aliases = self._claim_aliases(fw) if pod.volumes else None
        keyed = pod
        # a replica of a pod seen before: the same key; not for pods with claims, whose key follows whether their
        # claims are in use (`ClaimAliases`)
        key = self._replica_key(fw, pod) if aliases is None else None
        if key is None:
            pinned = self._pinned_shape(fw, pod, demand) if _pins(fw, pod) else None
            if pinned is not None:
                return pinned
            keyed = pod if aliases is None else aliases.keyed(self.state, pod)
            key = HashedKey(signature_key(fw, keyed) or shape_key(keyed))
            if aliases is None:
                self._remember_key(fw, pod, key)
        sh = self.shapes.get(key)
        if sh is None:
            sh = Shape(self.framework(pod), new_context(self.state, pod, demand or self._demand(pod)))
            sh.claims_aliased = keyed is not pod
            self._full(sh)
            self.shapes[key] = sh
            if len(self.shapes) > self._max_shapes:
                self.shapes.popitem(last=False)
        else:
            self.shapes.move_to_end(key)
            if sh.presence != self.presence:
                self._node_set_changed(sh)
            if (sh.global_ or sh.epoch != self.epoch) and sh.seen != len(self.log):  # redo all
                if not self._redo(sh, pod):
                    sh = Shape(sh.fw, new_context(self.state, pod, sh.ctx.demand), claims_aliased=sh.claims_aliased)
                    self._full(sh)
                    self.shapes[key] = sh
            else:
                self._sync(sh)
        return sh

    def _pinned_shape(self, fw: Framework, pod: Pod, demand: PodDemand | None) -> Shape | None:
        """The shape of a pod whose PreFilter leaves it one node (a DaemonSet pod's `metadata.name In [node]`
        term, `_pins`), for this cycle alone; None when it leaves more (nodes sharing the name): the cached shape.

        Upstream's cycle for such a pod is PreFilter, Filter of that node and no scoring: `schedulePod` returns a
        single feasible node before `prioritizeNodes` runs PreScore and Score (`if len(feasibleNodes) == 1`,
        schedule_one.go), and `evaluateNominatedNode` gives one node too. So every PreFilter runs (their state and
        failures are real), every active Filter plugin on that node alone (all of them: `capacity` reads each
        one's verdict), nothing else: no raw scores, totals or row kernels (`_decide_all` / `_decide_found` return
        before reading them with one feasible node), and no key, as no other pod has its shape (the key would
        cost every plugin's signature; the entry would evict shapes that are reused). Each call sees the state as
        it is, so nothing has to be brought up to date."""
        sh = Shape(fw, new_context(self.state, pod, demand or self._demand(pod)))
        sh.adds_only = bool((sh.ctx.row >= 0).all())
        sh.pinned = rows = np.zeros(0, dtype=np.int64)
        if self._pre_filter(sh):
            sh.pinned = rows = np.flatnonzero(sh.allowed)
            if len(rows) > 1:
                return None
            n = len(self.state)
            sh.codes = np.zeros((len(sh.filters), n), dtype=np.int8)
            sh.ok = np.zeros(n, dtype=bool)
            if len(rows):
                sh.n_ok = int(self._filter_row(sh, rows))
                sh.ok[rows] = sh.n_ok == 1
        return sh

    def _filter_row(self, sh: Shape, rows: np.ndarray) -> bool:
        """Every active Filter plugin of the shape on the one node `rows` has (its row of `codes`: non-zero when it
        rejects), through the plugin's row kernel when it has one (rows.py: the verdicts the cached shapes keep);
        whether they all pass."""
        state, ctx, node = self.state, sh.ctx, int(rows[0])
        ok = True
        for p, (name, plugin) in enumerate(sh.filters):
            fn = filter_kernel(state, ctx, name, plugin)
            code = fn(*state.row_lists(node)) if callable(fn) else int(plugin.filter(state, ctx, rows).codes[0])
            sh.codes[p, node] = code
            ok = ok and code == SUCCESS
        return ok

    def _demand(self, pod: Pod) -> PodDemand:
        """`pod_demand` of a pod to schedule, once per distinct value of what it reads (`demand_key`, which
        `signature_key` asks of the same pod next: a DaemonSet's pods have equal requests in containers of their
        own), the memo emptied when it holds `_DEMAND_KEYS_MAX` of them."""
        key = demand_key(pod)
        known = self._demands.get(key)
        if known is None:
            if len(self._demands) >= _DEMAND_KEYS_MAX:
                self._demands.clear()
            known = self._demands[key] = pod_demand(pod)
        return known

    def _replica_key(self, fw: Framework, pod: Pod) -> HashedKey | None:
        """The shape key of an earlier pod of `fw` equal to `pod` in every field a key reads (`_pod_spec`), if any:
        the queue interleaves the replicas of a few templates, and a key costs every plugin's signature."""
        known = self._spec_keys.get(id(pod.containers))
        if known:
            spec = _pod_spec(pod)
            for framework, other, key in known:
                if framework is fw and other == spec:
                    return key
        return None

    def _remember_key(self, fw: Framework, pod: Pod, key: HashedKey) -> None:
        """`_replica_key` finds `key` for the pods equal to `pod` from now on (the entry holds the pod's containers
        in its `_pod_spec`, so their id stays theirs)."""
        if len(self._spec_keys) >= _SPEC_KEYS_MAX:
            self._spec_keys.clear()
        self._spec_keys.setdefault(id(pod.containers), []).append((fw, _pod_spec(pod), key))

    def _claim_aliases(self, fw: Framework) -> ClaimAliases | None:
        """The profile's `ClaimAliases` (over its VolumeBinding's storage), None without VolumeBinding."""
        known = self._aliases.get(id(fw))
        if known is None or known[0] is not fw:
            storage = next((p.storage for _n, p in fw.filters if isinstance(p, VolumeBinding)), None)
            known = self._aliases[id(fw)] = (fw, None if storage is None else ClaimAliases(storage))
        return known[1]

    def _full(self, sh: Shape) -> None:
        """Evaluate every node for the shape (PreFilter, Filter, PreScore, Score)."""
        state, ctx, fw = self.state, sh.ctx, sh.fw
        n = len(state)
        sh.adds_only = bool((ctx.row >= 0).all())
        # PreFilter/PreScore skips of such plugins also depend on other nodes' pods: any of them in the profile
        plugins = [p for _n, p in fw.filters] + [p for _n, p, _w in fw.scorers]
        sh.global_ = any(_reads_other_nodes(p, state, ctx) for p in plugins)
        sh.epoch = self.epoch
        if not self._pre_filter(sh):
            return
        active, names = sh.filters, sh.names
        try:
            sh.scorers = [(name, plugin, w) for name, plugin, w in fw.scorers if not plugin.pre_score(state, ctx)]
        except Exception:  # noqa: BLE001 - a PreScore error status: the framework raises it when scoring
            sh.prescore_error, sh.scorers = True, []
        # plugins that only declare `reads_other_nodes` matter when they run for this pod (their PreFilter /
        # PreScore skips depend on the pod alone); those that decide per pod said so above
        running = [p for _n, p in active] + [p for _n, p, _w in sh.scorers]
        sh.global_ = any(getattr(p, "reads_other_nodes_for", None) is not None and p.reads_other_nodes_for(state, ctx)
                         for p in plugins) or any(_reads_other_nodes(p, state, ctx) for p in running)
        sh.per_cycle = [s for s, (_n, p, _w) in enumerate(sh.scorers) if getattr(p, "scores_feasible_set", False)]
        sh.direct = [s for s, (_n, p, _w) in enumerate(sh.scorers) if type(p) in _IDENTITY_NORMALIZE]
        sh.normed = [s for s in range(len(sh.scorers)) if s not in sh.direct]
        sh.identity = not sh.normed
        fk = [filter_kernel(state, ctx, name, plugin) for name, plugin in active]
        sk = [score_kernel(state, ctx, name, plugin) for name, plugin, _w in sh.scorers]
        sh.kernels_of = (fk, sk)
        sh.normed_split = ([s for s in sh.normed if sk[s] == "static"], [s for s in sh.normed if sk[s] != "static"])
        sh.dropped = None  # (`_next_context`: which entries go depends on `global_names`)
        sh.global_names = frozenset(n for n, p in [*fw.filters, *[(n, p) for n, p, _w in fw.scorers]]
                                    if _global_plugin(p))
        kernels = sh.row_kernels = _row_kernels(sh, fk, sk)
        if kernels is not None and None not in fk and all(sk[s] == "static" for s in sh.normed):
            sh.kernels = kernels  # every row's verdicts and `total` follow from them: `_sync` uses them too
        # PreFilter's node names: only those nodes are filtered and scored (`findNodesThatFitPod` evaluates them
        # alone); every other row stays infeasible (total INT64_MIN) and is read by nothing until a bind there
        # brings it up to date (`_sync`) or `_node_reasons` filters it for the FitError (it gives them PreFilter's
        # reason). A pod named to a few nodes then costs those rows, not the whole cluster (one named to a single
        # node, a DaemonSet pod, is not cached at all: `_pinned_shape`)
        idx = (self._every if len(self._every) == n else np.arange(n, dtype=np.int64)) if names is None else (
            np.flatnonzero(sh.names_mask))
        sh.codes = np.zeros((len(active), n), dtype=np.int8)
        sh.raw = np.zeros((len(sh.scorers), n), dtype=np.int64)
        sh.ok, sh.bad = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        sh.total = np.zeros(n, dtype=np.int64) if names is None else np.full(n, _INT64_MIN, dtype=np.int64)
        sh.summed = np.zeros(n, dtype=np.int64)
        sh.plan = _plan(sh, state)
        self._evaluate(sh, idx, kernels=kernels)

    def _pre_filter(self, sh: Shape) -> bool:
        """PreFilter of every plugin for the shape's pod (`run_pre_filters`): its active Filter plugins and its
        candidate nodes (`names`, `allowed`: less the deleted nodes); False when a plugin rejected the pod
        (`failure`, no node feasible)."""
        state = self.state
        sh.seen, sh.presence = len(self.log), self.presence
        restricting: list[str] = []
        active, failure, names, _skipped = run_pre_filters(sh.fw, state, sh.ctx, restricting)
        if failure is not None:
            pre = failure[1] if isinstance(failure, tuple) else failure  # (plugin, outcome) or outcome
            sh.failure = ", ".join(pre.reasons)
            sh.ok = np.zeros(len(state), dtype=bool)
            sh.filters, sh.scorers = [], []
            return False
        sh.filters = active
        sh.names = names
        if names is not None:
            sh.allowed = sh.names_mask = node_labels(state).named(*names)
            sh.outside_reason = f"node(s) didn't satisfy plugin(s) [{', '.join(restricting)}]"
        if state.removed is not None:  # a deleted node is no candidate (`remove_node`)
            sh.allowed = ~state.removed if sh.allowed is None else sh.allowed & ~state.removed
        return True

    def _changed_rows(self, seen: int) -> list[int]:
        """The distinct nodes bound or unbound since log entry `seen`, ascending (a long log, as planning
        trials leave, marked in a mask rather than sorted as a set)."""
        if _distinct is not None and len(self.log) - seen <= 4 * len(self.state.nodes):
            return _distinct(self.log, seen)
        changed = self.log[seen:]
        if len(changed) <= _FEW_ROWS:
            return sorted(set(changed)) if len(changed) > 1 else changed
        marked = np.zeros(len(self.state), dtype=bool)
        marked[changed] = True
        return np.flatnonzero(marked).tolist()

    def _redo(self, sh: Shape, pod: Pod) -> bool:
        """Bring a shape whose plugins read other nodes up to date: PreFilter and PreScore again for those
        plugins (the others' outcomes depend on the pod alone), the plugins that read other nodes over every
        node, the others over the rows bound since (what `_full` gives, as they are row-local). False,
        nothing usable: a PreFilter / PreScore outcome differs from the shape's, `_full` must redo it."""
        if sh.failure is not None or sh.prescore_error or sh.plan is None:
            return False
        state, plan = self.state, sh.plan
        ctx = _next_context(sh, pod)
        for name, plugin in plan.pre_filters:
            pre = plugin.pre_filter(state, ctx) if hasattr(plugin, "pre_filter") else None
            if pre is not None and (pre.code != SUCCESS or pre.node_names is not None):
                return False
            if (pre is None or not pre.skip) != (name in plan.filtering):
                return False
        try:
            for name, plugin in plan.pre_scores:
                if plugin.pre_score(state, ctx) == (name in plan.scoring):
                    return False
        except Exception:  # noqa: BLE001 - a PreScore error status: `_full` records it
            return False
        sh.global_ = plan.always_global or any(decide(state, ctx) for decide in plan.deciders)
        sh.epoch = self.epoch
        rows = self._changed_rows(sh.seen)
        # pods only added since, and no Filter plugin that reads other nodes: a row the shape could not use stays
        # unusable when its local filters are `monotone` (the rule `_sync` follows; `_evaluate_rows`)
        binds_only = not plan.global_filters and self.last_removal < sh.seen
        sh.seen = len(self.log)
        n = len(state.nodes)
        every = self._every if len(self._every) == n else np.arange(n, dtype=np.int64)
        whole = self._redo_global_filters(sh, ctx, every)
        for s in plan.global_scorers:
            sh.raw[s] = sh.scorers[s][1].score(state, ctx, every)
        if rows:  # the local plugins over the rows bound since: compiled, or the rows it left in Python
            if plan.compiled:
                for p in plan.plain_filters:  # their verdicts first: the compiled kernels read them as static
                    at = np.asarray(rows, dtype=np.int64)
                    sh.codes[p, at] = sh.filters[p][1].filter(state, ctx, at).codes
            left = self._evaluate_compiled(sh, rows, binds_only, sh.row_kernels) if plan.compiled else rows
            if len(left):
                self._redo_rows(sh, np.asarray(left, dtype=np.int64), whole)
        if whole:  # a global plugin's verdicts changed: feasibility may change anywhere
            ok = (sh.codes == SUCCESS).all(axis=0)
            if sh.allowed is not None:
                ok &= sh.allowed
            sh.ok = ok
            sh.ok_version += 1
            sh.n_ok = int(np.count_nonzero(ok))
            sh.total = np.where(ok, sh.summed, _INT64_MIN)
        sh.norm_version += 1
        sh.message, sh.message_seen, sh.reasons_of, sh.reason_counts = None, -1, None, None
        return True

    def _redo_global_filters(self, sh: Shape, ctx: CycleContext, every: np.ndarray) -> bool:
        """`_redo`'s Filter plugins that read other nodes, over every node; whether a row of `codes` changed (then
        feasibility is redone over every node). A plugin with a `codes_key` is asked that first: a key equal to the
        one its row was computed at (the same first element, equal second) means the same codes on every node, and
        its row stays (a bind that moved a topology domain's count without flipping a verdict costs its own row,
        not the cluster's); another key gives the row (`keyed_codes`) without filtering again."""
        plan, state, keys = sh.plan, self.state, sh.filter_keys
        whole = False
        for p in plan.global_filters:
            plugin = sh.filters[p][1]
            key = plugin.codes_key(state, ctx) if p in plan.keyed else None
            known = keys.get(p)
            if key is not None and known is not None and known[0] is key[0] and known[1] == key[1]:
                continue
            sh.codes[p] = plugin.filter(state, ctx, every).codes if key is None else plugin.keyed_codes(key, every)
            keys[p] = key
            whole = True
        return whole

    def _redo_rows(self, sh: Shape, rows: np.ndarray, whole: bool) -> None:
        """`_redo`'s local Filter and Score plugins over `rows` (rows.py's scalar kernels when few), and the rows'
        feasibility unless `whole` (a global Filter plugin's verdicts changed: `_redo` redoes it over every node)."""
        state, plan, ctx = self.state, sh.plan, sh.ctx
        fk, sk = sh.kernels_of
        few = [state.row_lists(i) for i in rows.tolist()] if len(rows) <= _FEW_ROWS else None
        for p in plan.local_filters:
            if not self._by_rows(sh.codes, p, rows, fk[p], few):
                sh.codes[p, rows] = sh.filters[p][1].filter(state, ctx, rows).codes
        for s in plan.local_scorers:
            if not self._by_rows(sh.raw, s, rows, sk[s], few):
                sh.raw[s, rows] = sh.scorers[s][1].score(state, ctx, rows)
        self._sum_direct(sh, rows)  # the identity-normalized scorers are row-local (`_plan`)
        if whole:
            return
        ok = (sh.codes[:, rows] == SUCCESS).all(axis=0) if len(sh.filters) else np.ones(len(rows), dtype=bool)
        if sh.allowed is not None:
            ok &= sh.allowed[rows]
        sh.ok[rows] = ok
        sh.ok_version += 1
        sh.n_ok = int(np.count_nonzero(sh.ok))
        sh.total[rows] = np.where(ok, sh.summed[rows], _INT64_MIN)

    @staticmethod
    def _by_rows(out: np.ndarray, k: int, rows: np.ndarray, fn, few: list | None) -> bool:
        """out[k, rows] from a scalar row kernel (rows.py) when there are few rows; False: not done."""
        if few is None or not callable(fn):
            return False
        try:
            out[k, rows] = [fn(a, r, z) for a, r, z in few]
        except OverflowError:  # int64 wrap-around territory: let the plugin do it
            return False
        return True

    def _evaluate(self, sh: Shape, rows: np.ndarray, compiled: bool = True, kernels: RowKernels | None = None) -> None:
        """(Re)compute filter codes (non-zero: rejected) and raw scores of `rows` through the plugins, or for
        the plugins with a compiled row kernel (`compiled`: those of `kernels`, default the shape's) through it."""
        kernels = kernels if kernels is not None else sh.kernels
        sh.filter_keys.clear()  # the global Filter plugins' rows are rewritten here (as the state is now)
        if compiled and kernels is not None and kernels.spec is not None:
            return self._evaluate_with_kernels(sh, rows, kernels)
        for p in range(len(sh.filters)):
            sh.codes[p, rows] = self._filter_codes(sh, p, rows)
        ok = (sh.codes[:, rows] == SUCCESS).all(axis=0) if len(sh.filters) else np.ones(len(rows), dtype=bool)
        if sh.allowed is not None:
            ok &= sh.allowed[rows]
        sh.ok[rows] = ok
        sh.ok_version += 1
        sh.n_ok = int(np.count_nonzero(sh.ok))
        for s in range(len(sh.scorers)):
            if s not in sh.per_cycle:  # those score each cycle's feasible nodes (`_normalized_sum`)
                sh.raw[s, rows] = self._raw_scores(sh, s, rows)
        sh.norm_version += 1  # feasibility or normalized plugins' raw scores may have changed
        self._sum_direct(sh, rows)
        sh.total[rows] = np.where(ok, sh.summed[rows], _INT64_MIN)

    def _evaluate_with_kernels(self, sh: Shape, rows: np.ndarray, k: RowKernels) -> None:
        """`_evaluate` with the compiled row kernels `k` for their plugins, the plugins' own code first for the
        others (`k`'s static ones); all through the plugins if the kernels hand rows on."""
        live_filters = {p for p, _fn in k.live_filters}
        live_scorers = {s for s, _fn, _w in k.live_scorers}
        every = rows is self._every  # a new shape's every node (`_full`): written by slices, listed once per engine
        at = slice(None) if every else rows
        for p in range(len(sh.filters)):
            if p not in live_filters:
                sh.codes[p, at] = self._filter_codes(sh, p, rows)
        for s in range(len(sh.scorers)):
            if s not in live_scorers and s not in sh.per_cycle:
                sh.raw[s, at] = self._raw_scores(sh, s, rows)
        sh.norm_version += 1
        if every and self._every_list is None:
            self._every_list = rows.tolist()
        if self._evaluate_compiled(sh, self._every_list if every else rows.tolist(), False, k):
            self._evaluate(sh, rows, compiled=False)

    def _filter_codes(self, sh: Shape, p: int, rows: np.ndarray) -> np.ndarray:
        """The shape's Filter plugin p's status codes of `rows`; over every node, a static plugin's (rows.py:
        binds never change them) are shared by the shapes its signature of the pod does not tell apart."""
        plugin = sh.filters[p][1]
        if sh.kernels_of[0][p] != "static" or len(rows) != len(self.state):
            return plugin.filter(self.state, sh.ctx, rows).codes
        return self._shared(("filter", id(plugin), plugin.signature(sh.ctx.pod), self.presence),
                            lambda: plugin.filter(self.state, sh.ctx, rows).codes)

    def _raw_scores(self, sh: Shape, s: int, rows: np.ndarray) -> np.ndarray:
        """The shape's Score plugin s's raw scores of `rows` (a static plugin's shared as `_filter_codes`)."""
        plugin = sh.scorers[s][1]
        if sh.kernels_of[1][s] != "static" or len(rows) != len(self.state):
            return plugin.score(self.state, sh.ctx, rows)
        return self._shared(("score", id(plugin), plugin.signature(sh.ctx.pod), self.presence),
                            lambda: plugin.score(self.state, sh.ctx, rows))

    def _shared(self, key: tuple, compute) -> np.ndarray:
        """`compute()` once per key (the plugin is kept by the framework, so its id stays its own), kept in
        the narrowest integer type that holds it exactly (scores in [0, 100]: one byte a node)."""
        known = self._static.get(key)
        if known is None:
            if len(self._static) >= _STATIC_MAX:
                self._static.clear()
            known = compute()
            if len(known) and known.dtype.itemsize > 1:
                lo, hi = int(known.min()), int(known.max())
                narrow = next((t for t in (np.int8, np.int16, np.int32) if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max),
                              None)
                known = known.astype(narrow) if narrow is not None else known
            self._static[key] = known
        return known

    @staticmethod
    def _sum_direct(sh: Shape, rows: np.ndarray) -> None:
        """`summed` and `bad` of `rows` from the identity-normalized scorers' raw scores."""
        raw = sh.raw[:, rows][sh.direct]
        total = np.zeros(len(rows), dtype=np.int64)
        for k, s in enumerate(sh.direct):
            total += sh.scorers[s][2] * raw[k]
        sh.summed[rows] = total
        sh.bad[rows] = ((raw < MIN_NODE_SCORE) | (raw > MAX_NODE_SCORE)).any(axis=0)
        sh.n_bad = int(np.count_nonzero(sh.bad))

    def _evaluate_rows(self, sh: Shape, rows: list[int], binds_only: bool = False) -> None:
        """`_evaluate` for a few rows with the scalar kernels of rows.py (same verdicts and feasible scores).

        With `binds_only` (pods were only added to these rows since) a node the shape could not use is left
        as it is: its filters are static or `monotone` (more requests, still refused); its scores, unread
        while it is infeasible, are redone when a removal makes it a candidate again."""
        row_lists, k = self.state.row_lists, sh.kernels
        codes, raw, allowed, feasible, bad = sh.codes, sh.raw, sh.allowed, sh.ok, sh.bad
        skip_infeasible = binds_only and k.monotone
        for i in rows:
            if skip_infeasible and not feasible[i]:
                continue
            a, r, z = row_lists(i)
            ok = True if allowed is None else bool(allowed[i])
            for p in k.static_filters:
                ok = ok and int(codes[p, i]) == SUCCESS
            for p, fn in k.live_filters:
                c = codes[p, i] = fn(a, r, z)
                ok = ok and c == SUCCESS
            total, out = 0, False  # out: a score outside [MIN_NODE_SCORE, MAX_NODE_SCORE]
            for s, w in k.static_scorers:  # the others' raw scores never change
                v = int(raw[s, i])
                total += w * v
                out = out or not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE
            for s, fn, w in k.live_scorers:
                v = raw[s, i] = fn(a, r, z)
                total += w * v
                out = out or not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE
            if ok is not bool(feasible[i]):  # (a numpy bool compared with a Python one is slow)
                sh.n_ok += 1 if ok else -1
                feasible[i] = ok
                sh.norm_version += 1
                sh.ok_version += 1
            sh.summed[i] = total
            sh.total[i] = total if ok else _INT64_MIN
            if out is not bool(bad[i]):
                sh.n_bad += 1 if out else -1
                bad[i] = out

    def _sync(self, sh: Shape) -> None:
        """Re-evaluate the rows bound since the shape was last brought up to date."""
        log = self.log
        if sh.seen == len(log) or sh.failure is not None:
            sh.seen = len(log)
            return
        binds_only = self.last_removal < sh.seen
        changed = log[sh.seen:]
        sh.seen = len(log)
        rows = sorted(set(changed)) if len(changed) > 1 else changed
        kernels = sh.kernels
        if kernels is not None and kernels.spec is not None:
            left = self._evaluate_compiled(sh, rows, binds_only)
            if not left:
                return
        else:
            left = rows
        if kernels is not None and len(left) <= _FEW_ROWS:
            try:
                return self._evaluate_rows(sh, left, binds_only)
            except OverflowError:  # int64 wrap-around territory: let the plugins do it
                pass
        self._evaluate(sh, np.asarray(rows, dtype=np.int64), compiled=False)

    def _evaluate_compiled(self, sh: Shape, rows: list[int], binds_only: bool,
                           kernels: RowKernels | None = None) -> list[int]:
        """`_evaluate_rows` in C (any number of rows) with `kernels` (default the shape's); returns the rows it
        left to Python (from the first whose values leave the range where its int64 arithmetic is exact)."""
        state, k = self.state, kernels if kernels is not None else sh.kernels
        try:
            done, d_ok, d_bad, d_feasibility = evaluate_compiled(
                k.spec, rows, state.allocatable, state.requested, state.nonzero_requested, sh.codes,
                sh.raw, sh.allowed, sh.ok, sh.summed, sh.total, sh.bad, binds_only and k.monotone)
        except (BufferError, TypeError, ValueError):  # arrays it cannot read as given (not C-contiguous int64)
            return rows
        sh.n_ok += d_ok
        sh.n_bad += d_bad
        sh.norm_version += d_feasibility
        sh.ok_version += d_feasibility
        return rows[done:]

    # ---------------------------------------------------------------- one cycle
    def cycle(self, pod: Pod, demand: PodDemand | None = None) -> Decision:
        """`schedulePod` for `pod` (nothing is bound): PreFilter; the pod's nominated node alone first
        (`evaluateNominatedNode`); else Filter from the start index until `numFeasibleNodesToFind` feasible
        nodes are found (`findNodesThatPassFilters`, sequentially), Score over those, `selectHost`.

        The start index moves as `findNodesThatFitPod` moves it (SPEC §7, "How far the start index moves"):
        not when PreFilter rejects the pod or the nominated node takes it, else by the nodes searched up to
        the (k+1)-th feasible one (which cancels the search), plus a nominated node that failed and lies
        beyond them (its status is in the same `NodeToStatus`)."""
        self.cycles += 1
        sh = self.shape(pod, demand)
        if sh.failure is not None:  # findNodesThatFitPod returns before the start index moves
            return self._decide_all(sh)
        if self.batch is None:
            return self._find(sh, pod, None)
        # opportunistic batching (batch.py): a hint after PreFilter, the results stored after a bind. A pinned
        # shape's signature is never needed: its NodeAffinity fragment names the one node, so a pod that stored
        # the batch with that signature had one feasible node at most, and stored nothing; its own cycle scores
        # nothing (`_others`: None) and clears the batch whatever its signature
        signed = None if sh.pinned is not None else self._batch_signature(sh, pod)
        hint = self.batch.hint(self, sh, signed, self.cycles)
        decision = self._find(sh, pod, hint)
        if decision.node is not None:
            others = self._others(decision) if signed is not None else None
            self.batch.store(signed, hint, decision.node, others, self.cycles)
        return decision

    def _find(self, sh: Shape, pod: Pod, hint: int | None) -> Decision:
        """`findNodesThatFitPod` + `schedulePod` after PreFilter: the nominated node, else the batch's `hint`,
        alone first (`evaluateNominatedNode`); else the search and the scores."""
        nominated = self.state.node_index.get(pod.nominated_node_name) if pod.nominated_node_name else None
        if nominated is not None and self.state.removed is not None and self.state.removed[nominated]:
            nominated = None  # evaluateNominatedNode: the snapshot has no such node any more, the search goes on
        if self.placement is not None:  # a nominated node or hint outside the placement is passed over
            nominated = None if nominated is None or not self.placement[nominated] else nominated
            hint = None if hint is None or not self.placement[hint] else hint
        if nominated is not None and self._nominated_fits(sh, nominated):
            return Decision(nominated, np.asarray([nominated], dtype=np.int64), 1, sh, nominated_first=True)
        if hint is not None and not pod.nominated_node_name and self._nominated_fits(sh, hint):
            return Decision(hint, np.asarray([hint], dtype=np.int64), self._hinted_feasible(sh), sh, batch_hint=True)
        if not self.sampling:
            return self._decide_all(sh)
        # PreFilter node subset: kube-scheduler searches only those nodes (in map order, which Go
        # randomises; here in list order) and advances the start index by the nodes it processed.
        order, m, k = self._window(sh)
        n_ok = sh.n_ok if self.placement is None else int(np.count_nonzero(sh.ok[order]))
        if k >= m or n_ok <= k:  # the search never cancels, every candidate is searched: the cached feasible set
            outside = nominated is not None and sh.names_mask is not None and not sh.names_mask[nominated]
            feasible, processed = None, m + int(outside)  # a failed nominated node outside them counts too
            if self.placement is not None:
                feasible = np.sort(order[sh.ok[order]])
        else:
            feasible, processed = self._search(sh, k, order, nominated)
        self.advance(processed)  # before scoring, whose errors end the cycle later
        decision = self._decide_all(sh) if feasible is None else self._decide_found(sh, feasible)
        decision.processed = processed
        return decision

    def _window(self, sh: Shape) -> tuple[np.ndarray, int, int]:
        """The candidate nodes in search order, how many, and how many feasible ones end the search (k)."""
        if sh.names is None and sh.pinned is None and self.placement is None:  # every present node: k once per
            known = self._k.get(id(sh.fw))  # profile and node order (a new order when nodes come and go)
            if known is None or known[0] is not sh.fw or known[1] is not self.order:
                known = self._k[id(sh.fw)] = (sh.fw, self.order, self._k_of(sh.fw, len(self.order)))
            return self.order, len(self.order), known[2]
        if sh.pinned is not None:  # its one candidate node, if any: no walk of the node list
            order = sh.pinned
        else:
            order = self.order if sh.names is None else self.order[sh.allowed[self.order]]
        if self.placement is not None:  # `ListNodesInPlacement` (the PreFilter subset of it: `GetNodeInPlacement`)
            order = order[self.placement[order]]
        return order, len(order), self._k_of(sh.fw, len(order))

    def _k_of(self, fw: Framework, m: int) -> int:
        """`numFeasibleNodesToFind` of the profile among m candidate nodes: how many feasible ones end the search."""
        k = num_feasible_nodes_to_find(percentage_of_nodes_to_score(self.config, fw.profile), m)
        if not fw.scorers and self.tie_break == "first":
            # no Score plugin: upstream stops at the first feasible node from nextStartNodeIndex (its 16
            # filter goroutines race for it); "random" lets every feasible node tie instead
            k = min(k, 1)
        return k

    def _hinted_feasible(self, sh: Shape) -> int:
        """`feasible` of a pod bound to its batch hint: the hint alone when kube-scheduler samples nodes; every
        feasible node when it evaluates them all (percentageOfNodesToScore 100, or fewer nodes than it
        would search), as the reference runs of v1.36.3 report it (golden/README.md)."""
        if not self.sampling:
            return sh.n_ok
        _order, m, k = self._window(sh)
        return sh.n_ok if k >= m else 1

    @staticmethod
    def _batch_signature(sh: Shape, pod: Pod):
        """The pod's scheduling signature (`batch.signature`), once per shape: a shape's pods are alike in
        everything a signature reads, but the names of aliased claims."""
        if sh.claims_aliased:  # `VolumesSigner` names the claims
            return signature(sh.fw, pod, sh.ctx.demand)
        if sh.batch_signature is None:
            sh.batch_signature = (signature(sh.fw, pod, sh.ctx.demand),)
        return sh.batch_signature[0]

    def _others(self, d: Decision) -> RankedNodes | None:
        """The batch's list after a scored cycle: its other feasible nodes by total, best first, ties in node
        order (`newSortedNodeScores` less the popped host), sorted when first read; None when nothing was
        scored."""
        if d.scored is None:
            return None
        feasible, total = d.scored
        if feasible is None:  # every feasible node, identity-normalized totals: read when the next pod asks,
            sh = d.shape  # when only the host's row has changed (a hint is given to the very next cycle only)

            def load() -> tuple[np.ndarray, np.ndarray]:
                nodes = np.flatnonzero(sh.ok)
                return nodes, sh.total[nodes]
            return RankedNodes(None, None, d.node, size=d.feasible - 1, load=load)
        return RankedNodes(np.asarray(feasible, dtype=np.int64), np.asarray(total, dtype=np.int64), d.node)

    def ranked(self, sh: Shape, last: int, rest) -> RankedNodes:
        """v1.37's rescoring: the node chosen last rejoins the list `rest` with its new score, NormalizeScore
        over the list alone, sorted again (an identity-normalized profile: the node inserted in its place)."""
        if sh.identity and isinstance(rest, RankedNodes):
            return rest.with_node(last, int(sh.total[last]))
        feasible = np.asarray([last, *rest], dtype=np.int64)
        total = sh.total[feasible]
        if not sh.identity:
            total = total + self._normalized(sh, feasible)
        return RankedNodes(feasible, total, -1)

    def node_removed(self, node: int) -> bool:
        """Whether `remove_node` deleted the node (the snapshot no longer has it)."""
        return self.state.removed is not None and bool(self.state.removed[node])

    def passes_filters(self, sh: Shape, node: int) -> bool:
        """`RunFilterPlugins` for the shape's pod on one node."""
        return self._nominated_fits(sh, node)

    def _nominated_fits(self, sh: Shape, node: int) -> bool:
        """`evaluateNominatedNode`: whether the Filter plugins pass the nominated node (which a PreFilter
        result does not restrict: findNodesThatPassFilters runs on it alone)."""
        if sh.allowed is None or sh.allowed[node]:
            return bool(sh.ok[node])
        one = np.asarray([node], dtype=np.int64)
        return all(int(plugin.filter(self.state, sh.ctx, one).codes[0]) == SUCCESS for _n, plugin in sh.filters)

    def advance(self, processed: int) -> None:
        """`nextStartNodeIndex = (nextStartNodeIndex + processedNodes) % len(allNodes)` (a caller that knows
        a cycle's outcome without running it, such as a replay's repeated failure, moves it the same way)."""
        size = len(self.order) if self.placement is None else int(np.count_nonzero(self.placement[self.order]))
        if size:  # allNodes: the present nodes (of the placement)
            self.next_start = (self.next_start + processed) % size

    def _decide_all(self, sh: Shape) -> Decision:
        ok = sh.ok
        count = sh.n_ok
        if count == 0:
            return Decision(None, np.zeros(0, dtype=np.int64), 0, sh)
        if count == 1:  # a single feasible node is chosen without scoring
            only = np.flatnonzero(ok)
            return Decision(int(only[0]), only, 1, sh)
        if sh.prescore_error:
            self._raise_score_error(sh)
        if sh.n_bad and bool((sh.bad & ok).any()):
            self._raise_score_error(sh)
        if sh.identity:
            best = (sh.total == sh.total[sh.total.argmax()]).nonzero()[0]
            scored = (None, None)  # every feasible node, `sh.total` (`_others`)
        else:  # normalized plugins: over the feasible set, redone only when that set changed
            if sh.norm_seen != sh.norm_version:
                feasible = self._feasible(sh)
                sh.norm_total = (feasible, self._normalized_parts(sh, feasible))
                sh.norm_seen = sh.norm_version
            feasible, (normed, scale, extra) = sh.norm_total
            total, best = _best(sh.total, feasible, normed, scale, extra)  # (the parts summed in its one pass)
            scored = (feasible, total)
        return Decision(self._select(best), best, count, sh, scored=scored)

    @staticmethod
    def _feasible(sh: Shape) -> np.ndarray:
        """The shape's feasible nodes, ascending: one array object while `ok` has not changed (so that what is
        computed over them, the static scorers' normalized sum, is known again by identity)."""
        version, feasible = sh.feasible_at
        if version != sh.ok_version or feasible is None:
            feasible = sh.ok.nonzero()[0]
            sh.feasible_at = (sh.ok_version, feasible)
        return feasible

    def _search(self, sh: Shape, k: int, order: np.ndarray, nominated: int | None) -> tuple[np.ndarray, int]:
        """`findNodesThatPassFilters` run sequentially: from the start index, keep the first k feasible nodes;
        the (k+1)-th cancels the search. `processedNodes` = the nodes before it (every failing one among
        them too), or all when there are at most k, and a failed `nominated` node the search did not reach.
        The window is read off the shape's cached verdicts, not filtered again: (feasible, processed); there
        are more than k feasible nodes (`cycle`)."""
        n, m = len(self.order), len(order)  # the present nodes (all but those `remove_node` deleted)
        if order is self.order:
            rotated = self._order2[self.next_start:self.next_start + n]
        else:
            start = self.next_start % m
            rotated = np.concatenate([order[start:], order[:start]])
        # read only as far as the (k+1)-th feasible node would lie were they spread evenly (with a margin)
        span = min(m, (k + 1) * m // sh.n_ok + (k + 1) // 4 + 64)
        pos = np.flatnonzero(sh.ok[rotated[:span]])
        if len(pos) <= k and span < m:  # spread unevenly: the whole list
            pos = np.flatnonzero(sh.ok[rotated])
        processed = int(pos[k]) if len(pos) > k else m
        feasible = rotated[pos[:k]]
        if nominated is not None and not (rotated[:processed] == nominated).any():
            processed += 1
        return feasible, processed

    def _decide_found(self, sh: Shape, feasible: np.ndarray) -> Decision:
        """Score the feasible nodes the search found and select the host (one is chosen without scoring)."""
        if len(feasible) == 0:
            return Decision(None, feasible, 0, sh)
        if len(feasible) == 1:
            return Decision(int(feasible[0]), feasible, 1, sh)
        if sh.prescore_error:
            self._raise_score_error(sh, feasible)
        if sh.n_bad and bool(sh.bad[feasible].any()):
            self._raise_score_error(sh, feasible)
        if sh.identity:
            total = sh.total[feasible]  # all feasible: no INT64_MIN among them
            best = feasible[total == _array_max(total)]
        else:  # the sums and the best in one pass (`_best`)
            total, best = _best(sh.total, feasible, *self._normalized_parts(sh, feasible))
        best = best if len(best) == 1 else np.sort(best)  # (the search's order is the window's)
        return Decision(self._select(best), best, len(feasible), sh, scored=(feasible, total))

    def _normalized(self, sh: Shape, feasible: np.ndarray) -> np.ndarray:
        """Σ weight·NormalizeScore over `feasible` of the plugins whose normalization is not the identity."""
        normed, scale, extra = self._normalized_parts(sh, feasible)
        out = np.multiply(normed, scale, dtype=np.int64)  # (a new array: summed into in place)
        out += extra
        return out

    def _normalized_parts(self, sh: Shape, feasible: np.ndarray) -> tuple[np.ndarray, int, int | np.ndarray]:
        """`_normalized` as (normed, scale, extra), the sum being normed · scale + extra (int64 [len(feasible)] each,
        an int for the same value on every node): a per-cycle plugin's own normalized scores and weight (when it is
        the one scorer normalized per cycle) and the static scorers' sum, so that `_best` adds them in its pass."""
        static, live = sh.normed_split
        if sh.static_fixed is None:
            sh.static_fixed = static_normalized(sh.scorers, sh.raw, static, sh.ctx) or False
        fixed, cached = sh.static_fixed, sh.static_norm
        if cached is not None and (cached[0] is feasible or _same_nodes(cached[0], feasible)):
            total = cached[1]  # (never written to: the sum below is a new array)
        else:
            total = None if fixed is False else fixed.total(feasible)  # type: ignore[union-attr]
            if total is None:
                total = self._normalized_sum(sh, feasible, static)
            sh.static_norm = (feasible, total)
        if not live:
            return np.zeros(len(feasible), dtype=np.int64), 1, total
        _name, plugin, w = sh.scorers[live[0]]
        if len(live) == 1 and live[0] in sh.per_cycle and hasattr(plugin, "normalized_scores"):
            norm = plugin.normalized_scores(self.state, sh.ctx, feasible)  # (within range: the plugin's own)
            if norm is not None:
                return norm, w, total
        return self._normalized_sum(sh, feasible, live), 1, total

    def _normalized_sum(self, sh: Shape, feasible: np.ndarray, scorers: list[int]) -> np.ndarray:
        """Σ weight·NormalizeScore over `feasible` of the scorers `scorers` (indices into `sh.scorers`)."""
        total = None
        for s in scorers:
            _name, plugin, w = sh.scorers[s]
            # a per-cycle scorer's own incremental Score + NormalizeScore, within range (None: not available)
            norm = plugin.normalized_scores(self.state, sh.ctx, feasible) if (
                s in sh.per_cycle and hasattr(plugin, "normalized_scores")) else None
            if norm is None:
                raw = plugin.score(self.state, sh.ctx, feasible) if s in sh.per_cycle else sh.raw[s, feasible]
                norm = normalize_scores(plugin, raw, sh.ctx)
                if len(norm) and (_array_min(norm) < MIN_NODE_SCORE or _array_max(norm) > MAX_NODE_SCORE):
                    self._raise_score_error(sh, feasible)
            if total is None:  # a new array: the plugin's may be cached, or written again by its next call
                total = np.multiply(norm, w, dtype=np.int64)
            else:
                total += w * norm
        return np.zeros(len(feasible), dtype=np.int64) if total is None else total

    def _raise_score_error(self, sh: Shape, feasible: np.ndarray | None = None) -> None:
        """Let the plain framework raise its exact SchedulingCycleError."""
        schedule_one(sh.fw, self.state, sh.ctx.pod, demand=sh.ctx.demand, nodes=feasible)
        raise AssertionError("score out of range not reproduced by the framework")  # pragma: no cover

    def _select(self, best: np.ndarray) -> int:
        """`selectHost`: uniformly at random among the best (seeded), or the first in node order."""
        if len(best) == 1 or self.tie_break == "first":
            return int(best[0])
        return int(best[self.rng.randrange(len(best))])

    # ---------------------------------------------------------------- bind, FitError
    def bind(self, node: int, sh: Shape, pod: Pod | None = None) -> None:
        """Assume `pod` (default: the shape's first pod) on `node`: its row changes, and it joins the node's
        pods; every shape sees it on its next cycle."""
        if len(sh.ctx.row) != len(self.state.resources):  # a later pod added a resource column
            sh.ctx.row = self.state.demand_vector(sh.ctx.demand)
        pod = pod if pod is not None else sh.ctx.pod
        if sh.nonzero is None:
            sh.nonzero = self.state.nonzero_pair(sh.ctx.demand)
        self.state.bind(node, sh.ctx.demand, sh.ctx.row, pod=pod, nonzero=sh.nonzero)
        if self.state.dra is not None and sh.fw.reserves_claims and self.state.dra.needs(pod):  # DynamicResources'
            self.state.dra.reserve(node, self.state.nodes[node].name, pod)  # Reserve + PreBind
        if not sh.adds_only:  # a negative request (the API refuses it; a Pod built in Python may hold one)
            self.last_removal = len(self.log)
        self.log.append(node)
        if carries_affinity_terms(pod):
            self.epoch += 1

    def evict(self, node: int, pod: Pod) -> None:
        """Delete `pod` from `node` (a preemption victim): its row changes, every shape sees it next cycle."""
        self.state.unbind(node, pod)
        self.log_removal(node)

    def unbind(self, node: int, sh: Shape, pod: Pod) -> np.ndarray:
        """`pod`, of the shape, ended on `node`: its row changes back; returns the request vector freed."""
        if len(sh.ctx.row) != len(self.state.resources):
            sh.ctx.row = self.state.demand_vector(sh.ctx.demand)
        self.state.unbind(node, pod, sh.ctx.demand, sh.ctx.row)
        self.log_removal(node)
        return sh.ctx.row

    def log_removal(self, node: int) -> None:
        """Record that a pod left `node` (its row changed back): every shape sees it on its next cycle."""
        self.last_removal = len(self.log)
        self.log.append(node)

    # ---------------------------------------------------------------- planning trials
    def remove_node(self, node: int) -> list[Pod]:
        """Delete `node` (`ClusterState.remove_node`): its pods are gone (returned), no pod can choose it, and
        the node list that sampling walks and FitError counts (`0/N nodes`) no longer has it."""
        return self.remove_nodes([node])

    def remove_nodes(self, nodes: Sequence[int]) -> list[Pod]:
        """`remove_node` for several nodes at once (the node lists redone once)."""
        pods: list[Pod] = []
        for node in nodes:
            pods += self.state.remove_node(node)
            self.log_removal(node)
        self._present_changed()
        return pods

    def checkpoint(self) -> Checkpoint:
        """Open a trial (`ClusterState.checkpoint`); `rollback` takes it back, `commit` keeps it."""
        self.state.checkpoint()
        batch = None if self.batch is None else self.batch.snapshot()
        return Checkpoint(self.rng.getstate(), self.next_start, batch, self.cycles)

    def commit(self) -> None:
        self.state.commit()

    def rollback(self, checkpoint: Checkpoint) -> None:
        """Take the trial back: the state as at `checkpoint` (`ClusterState.rollback`), its restored rows
        re-evaluated by every shape on its next cycle like any other change, the node lists, the tie-break
        generator and the sampling start as they were. The engine then decides as if the trial never ran."""
        nodes, bound_back = self.state.rollback()
        for node in nodes:
            self.log_removal(node)
        if any(carries_affinity_terms(p) for p in bound_back):
            self.epoch += 1  # as `bind` does: shapes that decided to ignore other nodes' pods look again
        self._present_changed()
        self.rng.setstate(checkpoint.rng)
        self.next_start = checkpoint.next_start
        if self.batch is not None and checkpoint.batch is not None:
            self.batch.restore(checkpoint.batch)
        self.cycles = checkpoint.cycles

    def _present_changed(self) -> None:
        """After nodes were removed or restored (each logged as a change of its row): the node order of the
        present nodes; each cached shape catches up on its next cycle."""
        state = self.state
        removed = state.removed
        if removed is None:
            self.order = zone_order(state.nodes)
        else:
            if self._zones is None:
                ids: dict[str, int] = {}
                self._zones = np.array([ids.setdefault(zone_key(n), len(ids)) for n in state.nodes], dtype=np.int64)
            self.order = present_zone_order(self._zones, ~removed)
        self._order2 = np.concatenate([self.order, self.order])
        self.presence += 1  # each shape's candidate nodes are redone on its next cycle (`_node_set_changed`)

    def _node_set_changed(self, sh: Shape) -> None:
        """After `remove_node` / `rollback`: the shape's candidate nodes (`allowed`: PreFilter's node names, less
        the removed nodes), and, over every node, the raw scores of its Score plugins that read the node set
        (`reads_node_set`: ImageLocality's spread, nodes holding an image / nodes), which binds never change;
        the rows whose node came or went are in the log: `_sync` / `_redo` evaluate them next."""
        sh.presence = self.presence
        removed = self.state.removed
        if sh.failure is None:
            present = None if removed is None else ~removed
            sh.allowed = present if sh.names_mask is None else (
                sh.names_mask if present is None else sh.names_mask & present)
        redo = [s for s, (_n, plugin, _w) in enumerate(sh.scorers) if getattr(plugin, "reads_node_set", False)]
        if not redo or sh.failure is not None:
            return
        every = np.arange(len(self.state), dtype=np.int64)
        for s in redo:
            sh.raw[s] = sh.scorers[s][1].score(self.state, sh.ctx, every)
        sh.static_norm, sh.static_fixed, sh.norm_version = None, None, sh.norm_version + 1
        if any(s in sh.direct for s in redo):
            self._sum_direct(sh, every)
            sh.total = np.where(sh.ok, sh.summed, _INT64_MIN)

    def fit_error(self, sh: Shape) -> str:
        """kube-scheduler's `0/N nodes are available: …` for the shape, as the nodes are now.

        Each node's reasons are kept per shape and, like verdicts, redone only for rows bound since.
        """
        if self.placement is not None:  # the nodes of the placement alone (`NumNodesInPlacement`), not cached
            within = np.flatnonzero(self.placement & (self.state.removed is None or ~self.state.removed))
            if sh.failure is not None:
                return fit_error_text(len(within), sh.failure, Counter())
            self._reason_counts(sh)
            sh.message, sh.message_seen = None, len(self.log)  # (the reasons are valid; the all-nodes text is not)
            return fit_error_text(len(within), None, self._tally(sh, sh.reasons_of[within]))
        if sh.message is not None and sh.message_seen == len(self.log):
            return sh.message
        counts = Counter() if sh.failure is not None else self._reason_counts(sh)
        sh.message = fit_error_text(len(self.order), sh.failure, counts)
        sh.message_seen = len(self.log)
        return sh.message

    def filter_codes(self, sh: Shape) -> np.ndarray | None:
        """Per node the status code of its first failing Filter plugin (`CycleResult.codes` of the shape's
        pod, as the nodes are now: what PostFilter reads), kept with the FitError's reasons; None when
        PreFilter rejected the pod (the framework's cycle says with which plugin)."""
        if sh.failure is not None:
            return None
        self.fit_error(sh)
        return sh.status_codes

    def _reason_counts(self, sh: Shape) -> Counter[str]:
        """Per reason string, how many nodes give it (each node: its first failing Filter plugin): each node's
        set of reasons kept as an id into the shape's `patterns`, redone for the rows changed since, and counted
        per id (a node's reasons are one of few patterns: the FitError of a pod that fits nowhere is asked for
        every pending pod, over every node)."""
        n = len(self.state)
        since = self._reasons_since(sh)
        rows = None if since is None else self._changed_rows(since)
        if rows is None or len(rows) > n // 4:
            sh.reasons_of, sh.status_codes = self._node_reasons(sh, np.arange(n, dtype=np.int64))
        else:
            sh.reasons_of, sh.status_codes = sh.kept_reasons[0], sh.kept_reasons[1]
            if rows:
                at = np.asarray(rows, dtype=np.int64)
                sh.reasons_of[at], sh.status_codes[at] = self._node_reasons(sh, at)
        sh.kept_reasons = (sh.reasons_of, sh.status_codes, len(self.log), self.presence)
        sh.reason_counts = self._tally(sh, sh.reasons_of)
        return sh.reason_counts

    def _reasons_since(self, sh: Shape) -> int | None:
        """The log position the shape's kept reasons (`kept_reasons`) are valid at, None when there are none
        to build on: only the rows bound or unbound since can give other reasons.

        A node's reasons are its first failing Filter plugin's, computed from the node and the pod. Row-local
        plugins (not `_global_plugin`) read that node alone, and only a bind or removal there (a log entry)
        changes it; a pod of the same shape gets the same verdicts and reasons (what the shape cache rests on:
        `_sync` / `_redo` redo the codes of those rows alone). So the kept reasons stay valid across `_redo`,
        which drops `reasons_of` because a plugin that reads other nodes may also filter: then nothing is kept.
        A change of the node set (`presence`) is logged too; it is checked all the same."""
        kept = sh.kept_reasons
        if kept is None or kept[3] != self.presence:
            return None
        if sh.reasons_of is None and any(_global_plugin(plugin) for _name, plugin in sh.filters):
            return None
        return kept[2]

    @staticmethod
    def _tally(sh: Shape, ids: np.ndarray) -> Counter[str]:
        """Per reason string, how many of the nodes whose pattern ids are `ids` give it."""
        tally = np.bincount(ids, minlength=len(sh.patterns[0]))
        counts: Counter[str] = Counter()
        for pattern in tally.nonzero()[0].tolist():
            for reason in sh.patterns[0][pattern]:
                counts[reason] += int(tally[pattern])
        return counts

    @staticmethod
    def _pattern(sh: Shape, reasons: tuple[str, ...]) -> int:
        """The id of a set of reasons among the shape's `patterns` (added when new; 0 is no reason)."""
        patterns, index = sh.patterns
        known = index.get(reasons)
        if known is None:
            known = index[reasons] = len(patterns)
            patterns.append(reasons)
        return known

    def _pattern_ids(self, sh: Shape, outcome, failed: np.ndarray) -> np.ndarray | list[int]:
        """The pattern id of each failed position of a Filter `outcome`: its reasons, the labels whose column
        of the outcome's matrix is set, grouped by those bits (a few distinct keys among many nodes), each
        key's id looked up once per shape (`pattern_bits`)."""
        matrix = outcome.matrix[failed]
        width = matrix.shape[1]
        if width > 62:
            return [self._pattern(sh, tuple(outcome.reasons(pos))) for pos in failed.tolist()]
        keys = (matrix.astype(np.int64) << np.arange(width, dtype=np.int64)).sum(axis=1)
        if width <= _FEW_LABELS:  # the distinct keys by counting, each node's id by a table (no sort)
            uniq = np.flatnonzero(np.bincount(keys))
        else:
            uniq, inverse = np.unique(keys, return_inverse=True)
        labels, known = tuple(outcome.labels), sh.pattern_bits
        ids = []
        for u in uniq.tolist():
            pattern = known.get((labels, u))
            if pattern is None:
                pattern = known[labels, u] = self._pattern(sh, tuple(lab for b, lab in enumerate(labels) if (u >> b) & 1))
            ids.append(pattern)
        if width <= _FEW_LABELS:
            table = np.zeros(int(uniq[-1]) + 1, dtype=np.int64)
            table[uniq] = ids
            return table[keys]
        return np.asarray(ids, dtype=np.int64)[inverse.reshape(-1)]

    def _node_reasons(self, sh: Shape, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row: the id of its first failing Filter plugin's reasons (or of PreFilter's node set) among the
        shape's `patterns`, 0 when it passes, and that status code (int8, as `CycleResult.codes`)."""
        out = np.zeros(len(rows), dtype=np.int64)
        codes = np.zeros(len(rows), dtype=np.int8)
        pending = np.ones(len(rows), dtype=bool)
        if self.state.removed is not None:  # a deleted node is in no NodeToStatus: no reason, no candidate
            gone = self.state.removed[rows]
            codes[gone] = UNRESOLVABLE
            pending &= ~gone
        if sh.allowed is not None:
            outside = ~sh.allowed[rows] & pending
            out[outside] = self._pattern(sh, (sh.outside_reason,))
            codes[outside] = UNRESOLVABLE
            pending &= ~outside
        sub = pending.nonzero()[0]  # the positions no plugin rejected yet
        for _name, plugin in sh.filters:
            if not len(sub):
                break
            outcome = plugin.filter(self.state, sh.ctx, rows[sub])
            rejected = outcome.codes != SUCCESS
            failed = rejected.nonzero()[0]
            if not len(failed):
                continue
            at = sub[failed]
            out[at] = self._pattern_ids(sh, outcome, failed)
            codes[at] = outcome.codes[failed]
            sub = sub[~rejected]
        return out, codes
