"""PodTopologySpread (v1.34.1): spread matching pods evenly over topology domains.

Constraints are the pod's own `topologySpreadConstraints` (DoNotSchedule ones filter, ScheduleAnyway
ones score) or, when it has none, the args' defaults: `defaultingType: System` gives hostname (maxSkew 3)
and zone (maxSkew 5) ScheduleAnyway constraints whose selector is built from the Services,
ReplicationControllers, ReplicaSets and StatefulSets selecting the pod (`helper.DefaultSelector`).

Filter: per constraint, the matching pods of the pod's namespace are counted per domain over the nodes
that carry every constraint's key and pass the inclusion policies (nodeAffinityPolicy Honor: the pod's
required node affinity; nodeTaintsPolicy Honor: no untolerated NoSchedule/NoExecute taint); a node is
rejected when `count(domain) + selfMatch − globalMin > maxSkew` (globalMin is 0 below `minDomains`).
Score: per node Σ count·log(domains + 2) + (maxSkew − 1) over the constraints, rounded; normalized as
`100·(max + min − s) / max`; nodes missing a key are ignored (0). Everything is a whole-array operation
over the nodes (label codes per key, counts per node from `podcounts`). As upstream's PreFilterExtensions
(`AddPod` / `RemovePod`) do, the per-domain counts are kept from cycle to cycle and follow the binds
(`DomainCounts`); so is each node's cell in Score's table (`ClusterCells`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Pod
from kubefit.k8s.labels import Requirement, Selector, SelectorError, parse_selector
from kubefit.k8s.nodeaffinity import freeze
from kubefit.scheduler.plugins.base import (
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
    StatusError,
)
from kubefit.scheduler.plugins.domaincounts import FOLLOW_MAX, DomainCounts
from kubefit.scheduler.plugins.nodeaffinity import NodeAffinity
from kubefit.scheduler.plugins.podclasses import follow
from kubefit.scheduler.plugins.podcounts import MatchingCounter, matching_counter
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.plugins.tainttoleration import node_taints
from kubefit.scheduler.state import ClusterState

try:  # `_occupied` and `_few_cells` in C (_countkernels.c), built when the package is installed with a C compiler
    from kubefit.scheduler._countkernels import cell_scores as _cell_scores
    from kubefit.scheduler._countkernels import occupied as _occupied_c
except ImportError:  # pragma: no cover - the same list and scores in Python and with whole-array operations
    _cell_scores = _occupied_c = None

NAME = "PodTopologySpread"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REASON_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
SYSTEM_DEFAULTS = ({"maxSkew": 3, "topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY},
                   {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY})
MAX_INT32 = 2**31 - 1
_array_min, _array_max = np.minimum.reduce, np.maximum.reduce  # without numpy's Python-level wrappers
# Filter's reasons (missing label, skew) of each status code: a node's row of the reason matrix, by its code
_REASONS_BY_CODE = np.zeros((3, 2), dtype=bool)
_REASONS_BY_CODE[UNRESOLVABLE, 0] = _REASONS_BY_CODE[UNSCHEDULABLE, 1] = True
IGNORED = f"{NAME}/ignored"  # the nodes of the cycle's last Score ignored (lacking a key every constraint needs)
_KEYS = {DO_NOT_SCHEDULE: f"{NAME}/{DO_NOT_SCHEDULE}", SCHEDULE_ANYWAY: f"{NAME}/{SCHEDULE_ANYWAY}"}  # `_cached`'s
STATIC = f"{NAME}/nodes"  # per pod, the node-side inputs of its constraints (`ConstraintNodes`), by action
CONTROLLER_KINDS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}


@dataclass(frozen=True)
class Constraint:
    """`topologySpreadConstraint`: the parsed form the plugin works with."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy Honor (default)
    honor_taints: bool = False  # nodeTaintsPolicy Ignore (default)


def _merge_match_label_keys(selector: Selector, keys: list[str], labels: dict[str, str]) -> Selector:
    """`mergeLabelSetWithSelector`: the pod's values of `matchLabelKeys` join the selector."""
    extra = tuple(Requirement(k, "In", frozenset({labels[k]})) for k in keys if k in labels)
    return Selector(extra + selector.requirements, selector.nothing) if extra else selector


def parse_constraints(raw: tuple[dict[str, Any], ...] | list[dict[str, Any]], labels: dict[str, str],
                      action: str) -> list[Constraint]:
    """`filterTopologySpreadConstraints`: the constraints whose whenUnsatisfiable is `action`, parsed."""
    out = []
    for c in raw:
        if c.get("whenUnsatisfiable") != action:
            continue
        try:
            selector = parse_selector(c.get("labelSelector"))
        except SelectorError as exc:
            raise StatusError(str(exc)) from None
        selector = _merge_match_label_keys(selector, list(c.get("matchLabelKeys") or []), labels)
        min_domains = c.get("minDomains")
        out.append(Constraint(int(c.get("maxSkew") or 0), str(c.get("topologyKey") or ""), selector,
                              1 if min_domains is None else int(min_domains),
                              (c.get("nodeAffinityPolicy") or "Honor") == "Honor",
                              (c.get("nodeTaintsPolicy") or "Ignore") == "Honor"))
    return out


def default_selector(pod: Pod, objects: ClusterObjects) -> Selector:
    """`helper.DefaultSelector`: Services selecting the pod (their selectors merged), then the controller
    owning it (ReplicationController selector merged; ReplicaSet/StatefulSet requirements added)."""
    label_set: dict[str, str] = {}
    for svc in objects.services_selecting(pod.namespace, pod.labels):  # an empty selector adds nothing
        label_set.update(svc.selector)
    requirements = [Requirement(k, "In", frozenset({v})) for k, v in sorted(label_set.items())]
    owner = next((r for r in pod.owner_references if r.controller), None)
    if owner is None or (owner.api_version, owner.kind) not in CONTROLLER_KINDS:
        return Selector(tuple(requirements))
    ctrl = objects.named(owner.kind, pod.namespace, owner.name)
    if ctrl is None:
        return Selector(tuple(requirements))
    if owner.kind == "ReplicationController":
        label_set.update((ctrl.selector or {}).get("matchLabels") or {})
        return Selector(tuple(Requirement(k, "In", frozenset({v})) for k, v in sorted(label_set.items())))
    try:
        other = parse_selector(ctrl.selector)
    except SelectorError:
        return Selector(tuple(requirements))
    if other.nothing:
        return Selector(tuple(requirements))
    return Selector(tuple(requirements) + other.requirements)


@dataclass
class ConstraintNodes:
    """What one pod's constraints of one action read of the nodes, which binds never change: per constraint
    the label codes of its key and the inclusion-policy mask, and the nodes lacking a key; and the per-domain
    matching counts Filter and Score read, kept up to date bind by bind (`DomainCounts`)."""

    nodes: list  # the node list these were computed for
    removed: np.ndarray | None  # ... and its deleted nodes (`ClusterState.removed`): never a domain's member
    codes: list[np.ndarray]  # per constraint, int32 [N] (-1: the node lacks the key)
    inclusion: list[np.ndarray]  # per constraint, bool [N] (`matchNodeInclusionPolicies`)
    has_all: np.ndarray  # bool [N]: the node carries every constraint's key (and is not deleted)
    hostname: list[bool]  # per constraint: its key is the hostname (counted per node, not per domain)
    counters: list[MatchingCounter]  # per constraint, its matching pods' counts per node (`podcounts`)
    scored: tuple | None = None  # (nodes, require_all, `ScoredNodes`) of the last Score call
    domain: list[np.ndarray] = field(default_factory=list)  # per constraint, int32 [N]: code + 1 (0: no key)
    size: list[int] = field(default_factory=list)  # per constraint, its domains + 1 (`domain`'s bound)
    filtered: list[tuple[DomainCounts, np.ndarray]] | None = None  # Filter's counts (`filter_counts`)
    totals: tuple[bool, list[DomainCounts | None]] | None = None  # (require_all, Score's: `score_totals`)
    cells: ClusterCells | None = None  # Score's cell of every node (`cluster_cells`)

    def __post_init__(self) -> None:
        self.domain = [code.astype(np.int32) + 1 for code in self.codes]
        self.size = [int(_array_max(d)) + 1 if len(d) else 1 for d in self.domain]

    def filter_counts(self, state: ClusterState) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per constraint, Filter's matching pods per domain (`TpValueToMatchNum`: over the nodes carrying every
        key that pass the inclusion policies; by `domain`) and the domains those nodes have, followed bind by
        bind from the first call (`DomainCounts`: what `updateWithPod` does upstream)."""
        if self.filtered is None:
            self.filtered = []
            for domain, size, inclusion, counter in zip(self.domain, self.size, self.inclusion, self.counters,
                                                        strict=True):
                counted = self.has_all & inclusion
                live = DomainCounts.build(domain, size, counted, counter.weight, counter.counts(state), state)
                self.filtered.append((live, np.flatnonzero(np.bincount(domain[counted], minlength=size))))
            return [(live.sums, domains) for live, domains in self.filtered]
        return [(live.advance(state, counter.counts), domains)
                for (live, domains), counter in zip(self.filtered, self.counters, strict=True)]

    def score_totals(self, state: ClusterState, require_all: bool) -> list[np.ndarray | None]:
        """Per constraint over a domain key (None for the hostname), Score's matching pods per domain over every
        node that passes the inclusion policies (and carries every key when `require_all`), followed bind by
        bind; a domain counts in Score only when a filtered node has it (`ScoredNodes.domain_sums`)."""
        if self.totals is None or self.totals[0] != require_all:
            live: list[DomainCounts | None] = []
            for domain, size, inclusion, counter, host in zip(self.domain, self.size, self.inclusion, self.counters,
                                                              self.hostname, strict=True):
                counted = inclusion & self.has_all if require_all else inclusion
                live.append(None if host else DomainCounts.build(domain, size, counted, counter.weight,
                                                                 counter.counts(state), state))
            self.totals = (require_all, live)
            return [None if d is None else d.sums for d in live]
        return [None if d is None else d.advance(state, counter.counts)
                for d, counter in zip(self.totals[1], self.counters, strict=True)]

    def cluster_cells(self, state: ClusterState, require_all: bool) -> ClusterCells | None:
        """Score's cell of every node (`ClusterCells`), followed bind by bind; None when there is no small table."""
        cells = self.cells
        if cells is None or cells.require_all != require_all or not cells.advance(self, state):
            cells = self.cells = ClusterCells.build(self, state, require_all)
        return cells

    def scored_nodes(self, idx: np.ndarray, require_all: bool) -> ScoredNodes:
        """The `ScoredNodes` of the filtered nodes `idx` (kept while the next cycles filter the same nodes)."""
        if self.scored is not None and self.scored[1] == require_all and np.array_equal(self.scored[0], idx):
            return self.scored[2]
        view = ScoredNodes.of(self, idx, require_all)
        self.scored = (idx.copy(), require_all, view)
        return view


@dataclass
class ScoredNodes:
    """What Score reads of the nodes beside the pod counts, for one set of filtered nodes `idx`: the nodes
    ignored (lacking a key when every key is required), per constraint whether each node of `idx` has the
    key, its domain, the domains that count (those of the nodes not ignored) and log(domains + 2)."""

    ignored: np.ndarray  # bool [len(idx)]
    any_ignored: bool
    present: list[np.ndarray | None]  # per constraint, bool [len(idx)] (None: all present)
    domain: list[np.ndarray | None]  # per constraint, the domain (code + 1) of each node of idx (None: hostname)
    weights: list[float]  # per constraint, log(size + 2)
    known: list[np.ndarray | None] = field(default_factory=list)  # per domain constraint, bool: its domains
    # among the nodes not ignored (by domain, code + 1)
    outer: int | None = None  # the hostname constraint, when there is at most one (`table_scores`)
    inner: np.ndarray | None = None  # int64 [len(idx)]: each node's cell among the domain constraints' domains
    cells: int = 1  # how many such cells

    def domain_sums(self, k: int, totals: np.ndarray) -> np.ndarray:
        """int64 [domains + 1]: constraint k's matching pods per domain that counts (`known`), 0 for the others:
        `TopologyPairToPodCounts`, whose pairs PreScore makes from the filtered nodes not ignored, summed
        over every node whose pair is among them (`totals`: `ConstraintNodes.score_totals`)."""
        return np.where(self.known[k], totals, 0)  # type: ignore[arg-type]

    def table_scores(self, constraints: list[Constraint], counts: list[np.ndarray], idx: np.ndarray,
                     totals: list[np.ndarray | None]) -> np.ndarray | None:
        """Score's raw values (before ignoring nodes) from a table: a node's value depends only on its own
        count for the hostname constraint and its domains for the others, so each distinct (count, domains)
        cell is summed and rounded once, in the plugin's order of operations, and the nodes read their cell.
        None when the table would not be small (then Score computes node by node)."""
        if self.inner is None:
            return None
        slots, cell = 1, self.inner
        if self.outer is not None:
            cnt = counts[self.outer][idx]
            top = int(cnt.max()) if len(cnt) else 0
            if top + 2 > _slots_max(len(idx)):
                return None
            slots = top + 2  # the last slot: nodes lacking the key
            present = self.present[self.outer]
            if present is not None:
                cnt = np.where(present, cnt, top + 1)
            cell = cnt * self.cells + self.inner
        per_domain = [None if k == self.outer else self.domain_sums(k, totals[k])  # type: ignore[arg-type]
                      for k in range(len(constraints))]
        return _cell_table(constraints, self.outer, self.weights, per_domain, slots, absent_first=False)[cell]

    @classmethod
    def of(cls, nodes: ConstraintNodes, idx: np.ndarray, require_all: bool) -> ScoredNodes:
        ignored = ~nodes.has_all[idx] if require_all else np.zeros(len(idx), dtype=bool)
        considered = idx[~ignored]
        view = cls(ignored, bool(ignored.any()), [], [], [])
        for domain, size, host in zip(nodes.domain, nodes.size, nodes.hostname, strict=True):
            dom = domain[idx]  # 0: the label is absent (Go reads it as "")
            present = dom > 0
            view.present.append(None if present.all() else present)
            if host:
                view.domain.append(None)
                view.known.append(None)
                view.weights.append(math.log(len(considered) + 2))
                continue
            known = np.zeros(size, dtype=bool)
            known.put(domain[considered], True)  # (`put` / `take`: int32 indexes without a cast to intp)
            view.domain.append(dom)
            view.known.append(known)
            view.weights.append(math.log(int(np.count_nonzero(known)) + 2))
        view._cells(nodes.hostname, len(idx))
        return view

    def _cells(self, hostname: list[bool], m: int) -> None:
        """`outer`, `inner` and `cells` for `table_scores` (left unset with several hostname constraints)."""
        if sum(hostname) > 1:
            return
        self.outer = hostname.index(True) if any(hostname) else None
        inner = np.zeros(m, dtype=np.int64)
        cells = 1
        for k in reversed(range(len(hostname))):
            if k != self.outer:
                inner += self.domain[k] * cells
                cells *= len(self.known[k])  # type: ignore[arg-type]
                if cells > _CELLS_MAX:
                    return
        self.inner, self.cells = inner, cells


_CELLS_MAX = 1 << 16  # the most cells a table of Score's values has (beyond, Score computes node by node)


@dataclass
class ClusterCells:
    """Score's cell of every node for one pod's ScheduleAnyway constraints (at most one over the hostname), kept up
    to date bind by bind. A node's raw score depends only on its hostname count and its domains (the weights and
    the domain counts are the cycle's), so Score + NormalizeScore of any filtered nodes is one small table of the
    cells (`_cell_table`) gathered by the nodes. A node's cell: its domains' position among the domain constraints'
    (`inner`) plus `cells` · slot, the slot its hostname count + 1 (0 when it lacks the key); -1 when it is
    ignored whatever the filtered nodes (lacking a key while every key is required)."""

    require_all: bool
    outer: int | None  # the hostname constraint, if any
    inner: np.ndarray  # int32 [N] (cells never exceed `_CELLS_MAX`)
    cells: int  # the domain constraints' cells (the product of their domains + 1)
    cell: np.ndarray  # int32 [N]
    slots: int  # 1 + the largest slot a node has had
    changes: list  # the `ClusterState.changes` followed
    seen: int  # ... up to this position
    moves: np.ndarray | None = None  # bool [N]: the nodes whose cell follows their hostname count (not ignored,
    # carrying the key); None without a hostname constraint
    kernel_args: tuple | None = None  # `_compiled_cells`' arguments that depend on the constraints alone, once

    @classmethod
    def build(cls, nodes: ConstraintNodes, state: ClusterState, require_all: bool) -> ClusterCells | None:
        """The cells as the counts are now; None with several hostname constraints or more than `_CELLS_MAX` cells."""
        if sum(nodes.hostname) > 1:
            return None
        outer = nodes.hostname.index(True) if any(nodes.hostname) else None
        inner, cells = np.zeros(len(nodes.has_all), dtype=np.int32), 1
        for k in reversed(range(len(nodes.hostname))):  # the last constraint's domain varies fastest (`_cell_table`)
            if k != outer:
                inner += nodes.domain[k] * cells
                cells *= nodes.size[k]
                if cells > _CELLS_MAX:
                    return None
        cell, slots = inner.copy(), 1
        if outer is not None:
            host = nodes.counters[outer].counts(state)
            slots = (int(_array_max(host)) if len(host) else 0) + 2
            if slots * cells > _CELLS_MAX:
                return None
            cell += (np.where(nodes.domain[outer] > 0, host + 1, 0) * cells).astype(np.int32)
        if require_all:
            cell[~nodes.has_all] = -1
        moves = None if outer is None else (cell >= 0) & (nodes.domain[outer] > 0)
        return cls(require_all, outer, inner, cells, cell, slots, state.changes, len(state.changes), moves)

    def advance(self, nodes: ConstraintNodes, state: ClusterState) -> bool:
        """Follow the changes since `seen`: a bound (removed) pod the hostname constraint's selector matches moves
        its node's cell one slot up (down) (False: another log, too many changes, or a count beyond the table:
        build again). `slots` then covers every node's slot as it is now (the table's size: a longer one has the
        same values in the cells in use)."""
        log = state.changes
        if self.changes is not log or len(log) - self.seen > FOLLOW_MAX:
            return False
        if self.outer is not None and len(log) > self.seen:
            # the stretch by pod class (`podclasses`): a node keeps its cell -1 (ignored) or its key whatever its
            # pods, so the nodes that move are those of the matching changes; the table reaches their highest slot
            top = follow(state, nodes.counters[self.outer].weight, self.seen, self.cell, mask=self.moves,
                         mult=self.cells, offset=self.inner)
            if top is not None:
                self.slots = max(self.slots, top // self.cells + 1)
            if self.slots * self.cells > _CELLS_MAX:
                return False
        self.seen = len(log)
        return True


_FEW_CELLS = 256  # up to this many occupied cells, `normalized_scores` computes them one by one in Python floats


def _occupied(cc: ClusterCells, idx: np.ndarray) -> tuple[list[int], int]:
    """The distinct cells >= 0 the nodes `idx` occupy, ascending, and how many of them are ignored (cell -1); in
    C when built (`_countkernels.occupied`)."""
    if _occupied_c is not None and idx.dtype == np.int64 and idx.flags.c_contiguous:
        return _occupied_c(cc.cell, idx, cc.slots * cc.cells)
    cell = cc.cell[idx]
    present = np.zeros(cc.slots * cc.cells + 1, dtype=bool)  # (-1: the last)
    present[cell] = True
    return present[:-1].nonzero()[0].tolist(), int(np.count_nonzero(cell < 0))


def _few_cells(constraints: list[Constraint], cc: ClusterCells, nodes: ConstraintNodes, totals: list[np.ndarray | None],
               occupied: list[int], considered: int) -> np.ndarray | None:
    """`normalized_scores`' table over the `occupied` cells only (the filtered nodes not ignored occupy them;
    `considered`: how many such nodes), one cell at a time in Python floats: the same IEEE operations, in the same
    order, as `_cell_table` (count · weight + maxSkew − 1 per constraint, summed in the constraints' order from 0,
    rounded half up), and `NormalizeScore` in Python ints. int64 [slots · cells + 1]: each occupied cell's
    normalized score, 0 elsewhere (the last entry: an ignored node); None when a raw score is negative."""
    digits = []  # per occupied cell: its slot and its domain of each domain constraint (last one fastest)
    for c in occupied:
        slot, rest = divmod(c, cc.cells)
        domains = [0] * len(constraints)
        for k in reversed(range(len(constraints))):
            if k != cc.outer:
                rest, domains[k] = divmod(rest, nodes.size[k])
        digits.append((slot, domains))
    weights, sums = [], []
    for k, total in enumerate(totals):
        if total is None:  # the hostname: weighed by the nodes not ignored
            weights.append(math.log(considered + 2))
            sums.append(None)
            continue
        known = {domains[k] for _slot, domains in digits}  # `TopologyPairToPodCounts`' pairs (absent: "")
        weights.append(math.log(len(known) + 2))
        sums.append(total.tolist())
    values = []
    for slot, domains in digits:
        acc: float | int = 0
        for k, c in enumerate(constraints):
            if k == cc.outer:
                part = 0.0 if slot == 0 else (float(slot) - 1.0) * weights[k] + float(c.max_skew - 1)
            else:
                d = domains[k]
                part = 0.0 if d == 0 else float(sums[k][d]) * weights[k] + float(c.max_skew - 1)  # type: ignore[index]
            acc = acc + part
        values.append(math.floor(acc + 0.5))
    lookup = np.zeros(cc.slots * cc.cells + 1, dtype=np.int64)
    if not values:  # every node ignored
        return lookup
    lo, hi = min(values), max(max(values), 0)
    if lo < 0:
        return None
    lookup[occupied] = [100 * (hi + lo - v) // hi for v in values] if hi else 100
    return lookup


def _compiled_cells(constraints: list[Constraint], cc: ClusterCells, nodes: ConstraintNodes,
                    totals: list[np.ndarray | None], idx: np.ndarray) -> tuple[np.ndarray, int] | None:
    """`_occupied`, `_few_cells` and the gather of `normalized_scores` in one call of `_countkernels.cell_scores`
    (upstream's `podtopologyspread/scoring.go` `Score` per cell and `NormalizeScore`, with the same IEEE operations
    in the same order as `_few_cells`, libm's log as math.log's): each node of idx's normalized score and how many
    are ignored; None when a raw score is negative or beyond 10^15 (the Python path then answers, as it would)."""
    out = np.empty(len(idx), dtype=np.int64)
    if cc.kernel_args is None:  # (what the kernel reads of the constraints and their domains: fixed for the cells)
        cc.kernel_args = (-1 if cc.outer is None else cc.outer,
                          [0 if k == cc.outer else nodes.size[k] for k in range(len(constraints))],
                          [c.max_skew for c in constraints])
    outer, sizes, skews = cc.kernel_args
    try:
        ignored = _cell_scores(cc.cell, idx, cc.slots * cc.cells, cc.cells, outer, sizes, skews, totals, out)
    except (BufferError, TypeError, ValueError):  # arrays it cannot read as given (not C-contiguous integers)
        return None
    return None if ignored is None else (out, ignored)


def _many_cells(constraints: list[Constraint], cc: ClusterCells, nodes: ConstraintNodes,
                totals: list[np.ndarray | None], cell: np.ndarray, ignored: np.ndarray,
                idx: np.ndarray) -> np.ndarray | None:
    """`_few_cells` with whole-array operations, for many occupied cells (the table of every cell, `_cell_table`)."""
    any_ignored = bool(ignored.any())
    considered = idx[~ignored] if any_ignored else idx
    weights: list[float] = []
    per_domain: list[np.ndarray | None] = []
    for k, sums in enumerate(totals):
        if sums is None:  # the hostname: weighed by the nodes not ignored
            weights.append(math.log(len(considered) + 2))
            per_domain.append(None)
            continue
        known = np.zeros(nodes.size[k], dtype=bool)  # `TopologyPairToPodCounts`' pairs
        known.put(nodes.domain[k][considered], True)
        weights.append(math.log(int(np.count_nonzero(known)) + 2))
        per_domain.append(np.where(known, sums, 0))
    table = _cell_table(constraints, cc.outer, weights, per_domain, cc.slots, absent_first=True)
    used = table.take(cell[~ignored] if any_ignored else cell)
    lookup = np.zeros(len(table) + 1, dtype=np.int64)  # the last: cell -1, an ignored node
    if not len(used):  # every node ignored
        return lookup
    lo, hi = int(_array_min(used)), max(int(_array_max(used)), 0)
    if lo < 0:
        return None
    lookup[:-1] = 100 * (hi + lo - table) // hi if hi else 100
    return lookup


def _host_values(c: Constraint, weight: float, slots: int, absent_first: bool) -> np.ndarray:
    """The hostname constraint's part of each slot: count · log(nodes + 2) + maxSkew − 1, 0 for the slot of the
    nodes lacking the key (slot 0 and counts from slot 1 with `absent_first`, else the last slot)."""
    counts = np.arange(slots, dtype=np.float64) - (1.0 if absent_first else 0.0)
    vals = counts * weight + float(c.max_skew - 1)
    vals[0 if absent_first else slots - 1] = 0.0
    return vals


def _cell_table(constraints: list[Constraint], outer: int | None, weights: list[float],
                per_domain: list[np.ndarray | None], slots: int, absent_first: bool) -> np.ndarray:
    """int64 [slots · cells]: Score's raw value of each cell, summed in the constraints' order (as Score does per
    node) and rounded: the hostname constraint `outer`'s slot is the node's count (`absent_first`: count + 1, slot
    0 for nodes lacking the key; else the last slot is theirs), each domain constraint's axis its domain
    (`per_domain`: its matching pods per domain, domain 0 standing for a node lacking the key)."""
    acc: Any = 0.0
    axis = 0 if outer is None else 1  # axis 0: the hostname count, then one per domain constraint
    for k, c in enumerate(constraints):
        shape = [1] * len(constraints)  # one axis per constraint
        if k == outer:
            vals = _host_values(c, weights[k], slots, absent_first)
            shape[0] = slots
        else:
            vals = per_domain[k].astype(np.float64) * weights[k] + float(c.max_skew - 1)  # type: ignore[union-attr]
            vals[0] = 0.0  # domain 0: the node lacks the key
            shape[axis] = len(vals)
            axis += 1
        acc = acc + vals.reshape(shape)
    return np.floor(np.asarray(acc, dtype=np.float64) + 0.5).astype(np.int64).reshape(-1)


def _domain_verdicts(c: Constraint, sums: np.ndarray, domains: np.ndarray, self_match: bool) -> np.ndarray:
    """int8 [domains + 1]: Filter's status for a node of each domain (`sums`: its matching pods; `domains`: those
    of the counted nodes, whose least count is `minMatchNum`; domain 0, lacking the key: unresolvable)."""
    global_min = int(_array_min(sums[domains])) if len(domains) else MAX_INT32
    if len(domains) < c.min_domains:
        global_min = 0
    verdicts = (sums > c.max_skew - int(self_match) + global_min).astype(np.int8)  # skew > maxSkew: UNSCHEDULABLE
    verdicts[0] = UNRESOLVABLE
    return verdicts


def _slots_max(m: int) -> int:
    """The longest hostname axis a table of m filtered nodes gets (beyond, Score computes node by node)."""
    return 4 * m + 64


@dataclass
class PodTopologySpread:
    defaulting_type: str = "System"
    default_constraints: tuple[dict[str, Any], ...] = ()
    objects: ClusterObjects | None = None
    name: str = NAME
    reads_other_nodes = True  # a bind on any node can change its verdicts and scores
    scores_feasible_set = True  # its raw scores depend on which nodes passed the filters
    normalize_needs_context = True

    @classmethod
    def from_args(cls, args: Any, objects: ClusterObjects) -> PodTopologySpread:
        args = args or {}
        kind = args.get("defaultingType") or "System"
        listed = tuple(args.get("defaultConstraints") or ()) if kind == "List" else SYSTEM_DEFAULTS
        return cls(kind, listed, objects)

    # ------------------------------------------------------------------ constraints
    def constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """`getConstraints` / `buildDefaultConstraints` for one action (DoNotSchedule or ScheduleAnyway)."""
        if pod.topology_spread_constraints:
            return parse_constraints(pod.topology_spread_constraints, pod.labels, action)
        defaults = parse_constraints(self.default_constraints, pod.labels, action)
        if not defaults:
            return []
        selector = default_selector(pod, self.objects or ClusterObjects())
        if selector.nothing or not selector.requirements:
            return []
        return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.honor_affinity, c.honor_taints)
                for c in defaults]

    def _cached(self, ctx: CycleContext, action: str) -> list[Constraint]:
        key = _KEYS[action]
        known = ctx.cache.get(key)
        if known is None:
            known = ctx.cache[key] = self.constraints(ctx.pod, action)
        return known  # type: ignore[return-value]

    def reads_other_nodes_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Whether binds elsewhere can change this pod's verdicts: only when it has constraints."""
        return bool(self._cached(ctx, DO_NOT_SCHEDULE) or self._cached(ctx, SCHEDULE_ANYWAY))

    def pre_static_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Binds never change PreFilter's and PreScore's outcomes: they read the pod's constraints (the pod, its
        Services and controllers) and the node count alone; what they compute is carried from cycle to cycle
        (`_cached`, `_nodes`). The engine does not ask them again after each bind."""
        return True

    # ------------------------------------------------------------------ node sets
    @staticmethod
    def _codes(state: ClusterState, constraints: list[Constraint]) -> list[np.ndarray]:
        table = node_labels(state)
        return [table.column(c.topology_key).codes for c in constraints]

    @staticmethod
    def _inclusion(state: ClusterState, ctx: CycleContext, c: Constraint) -> np.ndarray:
        """`matchNodeInclusionPolicies` for every node."""
        mask = np.ones(len(state), dtype=bool)
        if c.honor_affinity:
            mask &= NodeAffinity()._pod_mask(state, ctx)
        if c.honor_taints:
            taints = node_taints(state)
            mask &= taints.tolerated(ctx.pod.tolerations)[taints.filtering].all(axis=1)
        return mask

    def _nodes(self, state: ClusterState, ctx: CycleContext, action: str) -> ConstraintNodes:
        """The pod's `ConstraintNodes` for `action`, computed once per pod shape and node list."""
        memo = ctx.cache.get(STATIC)
        if memo is None:
            memo = ctx.cache[STATIC] = {}
        hit = memo.get(action)  # type: ignore[union-attr]
        if (hit is None or hit.nodes is not state.nodes or len(hit.has_all) != len(state.nodes)
                or hit.removed is not state.removed):
            constraints = self._cached(ctx, action)
            codes = self._codes(state, constraints)
            has_all = np.logical_and.reduce([c >= 0 for c in codes]) if codes else np.ones(len(state), dtype=bool)
            if state.removed is not None:  # a deleted node is in no node list (`RemoveNodeInfo`)
                has_all = has_all & ~state.removed
            hit = memo[action] = ConstraintNodes(  # type: ignore[index]
                state.nodes, state.removed, codes, [self._inclusion(state, ctx, c) for c in constraints], has_all,
                [c.topology_key == HOSTNAME for c in constraints],
                [matching_counter(state, c.selector, ctx.pod.namespace) for c in constraints])
        return hit

    # ------------------------------------------------------------------ Filter
    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        return PreFilterOutcome(skip=not self._cached(ctx, DO_NOT_SCHEDULE))

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        """Filter of the nodes `idx`, constraint after constraint (the first that fails decides): a node lacking
        the key is UnschedulableAndUnresolvable; else Unschedulable when its domain's matching pods + selfMatch
        − minMatchNum > maxSkew (minMatchNum: the least over the counted domains, 0 below minDomains). The
        per-domain counts follow the binds (`ConstraintNodes.filter_counts`); each constraint is then one
        verdict per domain, which the nodes gather."""
        key = self.codes_key(state, ctx)
        codes = np.zeros(len(idx), dtype=np.int8) if key is None else self.keyed_codes(key, idx)
        return FilterOutcome(codes, [REASON_MISSING_LABEL, REASON_NOT_MATCH], _REASONS_BY_CODE.take(codes, axis=0))

    def codes_key(self, state: ClusterState, ctx: CycleContext) -> tuple | None:
        """What Filter's codes are a function of: the pod's `ConstraintNodes` (each node's domain per constraint,
        fixed for a node list), the bytes of the verdicts, and per DoNotSchedule constraint Filter's status for a
        node of each of its domains (`_domain_verdicts`, the counts brought up to date with the binds since:
        `ConstraintNodes.filter_counts`). Keys with the same `ConstraintNodes` object and equal bytes give equal
        codes on every node: a bind that moved a domain's count without flipping a verdict changes no node's (the
        engine's `_redo` keeps its row; `keyed_codes` gives them otherwise). None without DoNotSchedule
        constraints (every node passes)."""
        constraints = self._cached(ctx, DO_NOT_SCHEDULE)
        if not constraints:
            return None
        nodes = self._nodes(state, ctx, DO_NOT_SCHEDULE)
        verdicts = [_domain_verdicts(c, sums, domains, c.selector.matches(ctx.pod.labels))
                    for c, (sums, domains) in zip(constraints, nodes.filter_counts(state), strict=True)]
        # (each constraint's verdicts have its domains + 1 entries: the bytes split one way only)
        return nodes, b"".join(v.tobytes() for v in verdicts), verdicts

    @staticmethod
    def keyed_codes(key: tuple, idx: np.ndarray) -> np.ndarray:
        """int8 [len(idx)]: Filter's codes of the nodes `idx` from a `codes_key` (each node its domain's verdict per
        constraint, the first that fails deciding)."""
        nodes, _bytes, verdicts = key
        codes: np.ndarray | None = None
        for domain, verdict in zip(nodes.domain, verdicts, strict=True):
            mine = verdict.take(domain[idx])
            codes = mine if codes is None else np.where(codes != 0, codes, mine)
        return codes  # type: ignore[return-value]

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        return len(state) == 0 or not self._cached(ctx, SCHEDULE_ANYWAY)

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        """Raw scores of the nodes `idx`, which are the filtered nodes of the cycle (PreScore's input)."""
        constraints = self._cached(ctx, SCHEDULE_ANYWAY)
        require_all = bool(ctx.pod.topology_spread_constraints) or self.defaulting_type != "System"
        nodes = self._nodes(state, ctx, SCHEDULE_ANYWAY)
        view = nodes.scored_nodes(idx, require_all)
        counts = [counter.counts(state) for counter in nodes.counters]
        totals = nodes.score_totals(state, require_all)
        raw = view.table_scores(constraints, counts, idx, totals)
        if raw is None:
            raw = self._node_scores(constraints, counts, view, idx, totals)
        ctx.cache[IGNORED] = view.ignored
        return np.where(view.ignored, 0, raw) if view.any_ignored else raw

    def normalized_scores(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray | None:
        """`normalize(score(idx))` over the filtered nodes `idx`, from the cells of every node kept up to date bind
        by bind (`ClusterCells`): PreScore's weights and domain counts from the nodes of idx not ignored, Score's
        value of each cell once (`_cell_table`), normalized once per cell (`NormalizeScore`: 100·(max + min − s)
        / max over the nodes not ignored, integer division; 0 for the ignored ones), each node reading its cell.
        The same integers as Score then NormalizeScore node by node (properties check it), always within
        [0, 100]; None when there is no small table or a raw score is negative (the caller then scores,
        normalizes and checks the range)."""
        require_all = bool(ctx.pod.topology_spread_constraints) or self.defaulting_type != "System"
        nodes = self._nodes(state, ctx, SCHEDULE_ANYWAY)
        cc = nodes.cluster_cells(state, require_all)
        if cc is None:
            return None
        constraints, totals = self._cached(ctx, SCHEDULE_ANYWAY), nodes.score_totals(state, require_all)
        if _cell_scores is not None:  # (it reads C-contiguous int64 nodes, handing any other idx on: None)
            out = _compiled_cells(constraints, cc, nodes, totals, idx)
            if out is not None:
                scores, n_ignored = out
                ctx.cache[IGNORED] = cc.cell[idx] < 0 if n_ignored else None  # (None: none, as `normalize` reads it)
                return scores
        occupied, n_ignored = _occupied(cc, idx)  # the cells the nodes of idx occupy (but -1: ignored)
        cell = cc.cell[idx]
        if len(occupied) <= _FEW_CELLS:
            lookup = _few_cells(constraints, cc, nodes, totals, occupied, len(idx) - n_ignored)
        else:
            lookup = _many_cells(constraints, cc, nodes, totals, cell, cell < 0, idx)
        if lookup is None:
            return None
        ctx.cache[IGNORED] = cell < 0 if n_ignored else None
        return lookup.take(cell)  # (-1, an ignored node: the last, 0)

    @staticmethod
    def _node_scores(constraints: list[Constraint], all_counts: list[np.ndarray], view: ScoredNodes,
                     idx: np.ndarray, totals: list[np.ndarray | None]) -> np.ndarray:
        """Score's raw values (before ignoring nodes) node by node: per constraint the node's count (its own
        for the hostname, its domain's otherwise) · log(domains + 2) + maxSkew − 1, summed and rounded."""
        total = np.zeros(len(idx), dtype=np.float64)
        for k, c in enumerate(constraints):
            sums = totals[k]
            if sums is None:  # hostname: every node its own domain
                cnt = all_counts[k][idx]
            else:
                cnt = view.domain_sums(k, sums).take(view.domain[k])
            part = cnt.astype(np.float64) * view.weights[k] + float(c.max_skew - 1)
            present = view.present[k]
            total = total + (part if present is None else np.where(present, part, 0.0))
        return np.floor(total + 0.5).astype(np.int64)  # math.Round: half away from zero (scores are >= 0)

    def normalize(self, raw: np.ndarray, ctx: CycleContext | None = None) -> np.ndarray:
        ignored = (ctx.cache.get(IGNORED) if ctx is not None else None)
        if ignored is None or len(ignored) != len(raw) or not ignored.any():
            ignored = None
        valid = raw if ignored is None else raw[~ignored]
        if not len(valid):
            return np.zeros(len(raw), dtype=np.int64)
        lo, hi = int(valid.min()), max(int(valid.max()), 0)
        if hi == 0:
            out = np.full(len(raw), 100, dtype=np.int64)
        else:
            out = 100 * (hi + lo - raw) // hi
        return out.astype(np.int64, copy=False) if ignored is None else np.where(ignored, 0, out).astype(np.int64)

    def signature(self, pod: Pod) -> tuple:
        return (pod.namespace, tuple(sorted(pod.labels.items())), pod.owner_references,
                freeze(list(pod.topology_spread_constraints)), pod.tolerations,  # taints / affinity policies
                None if pod.node_selector is None else tuple(sorted(pod.node_selector.items())),
                freeze((pod.affinity or {}).get("nodeAffinity")))
