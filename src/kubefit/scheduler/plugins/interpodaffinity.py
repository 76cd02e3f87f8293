"""InterPodAffinity (v1.34.1): required and preferred pod affinity / anti-affinity, both directions.

A term selects pods by labels in a set of namespaces (`namespaces`, else `namespaceSelector` over the
Namespace objects, else the pod's own namespace) and groups nodes by `topologyKey`.
Filter (PreFilter counts per (key, value) over all nodes): the incoming pod's required affinity needs a
matching pod in the node's domain for every term (or, if no pod matches anywhere, the pod matching its
own terms); its required anti-affinity needs none; no existing pod's required anti-affinity may match
the incoming pod in the node's domain.
Score: Σ over existing pods of the weights of the incoming pod's preferred terms they match, minus the
anti-affinity ones, plus existing pods' required affinity terms matching the incoming pod
(× hardPodAffinityWeight) and their preferred terms (±weight), credited to every node of the existing
pod's domain; normalized to 0..100 between the minimum and the maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Pod
from kubefit.k8s.labels import NOTHING
from kubefit.k8s.nodeaffinity import freeze
from kubefit.scheduler.plugins.affinityterms import (
    KINDS,
    AffinityTerm,
    PodTerms,
    carries_affinity_terms,
    pod_terms,
)
from kubefit.scheduler.plugins.base import (
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
)
from kubefit.scheduler.plugins.podclasses import ClassMemo, log_arrays, required_label
from kubefit.scheduler.plugins.podcounts import counts_of
from kubefit.scheduler.plugins.selectors import cached_on, node_labels
from kubefit.scheduler.state import ClusterState

NAME = "InterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


def _merged(term: AffinityTerm, objects: ClusterObjects) -> AffinityTerm:
    """`mergeAffinityTermNamespacesIfNotEmpty`: a namespaceSelector that is not "everything" becomes the
    names of the Namespace objects it selects."""
    if term.namespace_selector.everything:
        return term
    names = {ns.meta.name for ns in objects.of("Namespace") if term.namespace_selector.matches(ns.meta.labels)}
    return AffinityTerm(term.namespaces | names, term.selector, term.topology_key, NOTHING, term.weight)


def namespace_labels(objects: ClusterObjects, namespace: str) -> dict[str, str] | None:
    """`GetNamespaceLabelsSnapshot`: the labels of the pod's Namespace object (None when there is none)."""
    for ns in objects.of("Namespace"):
        if ns.meta.name == namespace:
            return dict(ns.meta.labels)
    return None


def term_carriers(state: ClusterState, kind: str, term: AffinityTerm) -> np.ndarray:
    """int64 [N]: per node, how many of its pods carry `term` among their `kind` terms (do not modify)."""
    return distinct_terms(state)[(kind, term)]


def distinct_terms(state: ClusterState) -> dict[tuple[str, AffinityTerm], np.ndarray]:
    """Every (kind, term) some pod bound so far carries, in first-seen order, with its carriers per node
    (`term_carriers`); kept up to date by binds and removals, each touching its pod's terms only."""
    memo = state.__dict__.get("_affinity_terms")
    if memo is not None and memo["seen"] == len(state.changes) and memo["size"] == len(state.nodes):
        return memo["terms"]  # (no bind or removal since: asked again within a cycle, by PreFilter then PreScore)
    if memo is None or memo["size"] != len(state.nodes):
        memo = state.__dict__["_affinity_terms"] = {"seen": len(state.changes), "terms": {}, "size": len(state),
                                                    "kinds": set()}
        new = [(n, p, 1) for n, pods in enumerate(state.pods) for p in pods if carries_affinity_terms(p)]
    else:
        new = state.changes[memo["seen"]:]
        memo["seen"] = len(state.changes)
    terms = memo["terms"]
    for node, p, delta in new:
        if not carries_affinity_terms(p):  # most pods: no pod (anti-)affinity section to parse
            continue
        carried = pod_terms(p)
        for kind in KINDS:
            for t in getattr(carried, kind):
                counts = terms.get((kind, t))
                if counts is None:
                    counts = terms[(kind, t)] = np.zeros(len(state), dtype=np.int64)
                    memo["kinds"].add(kind)
                counts[node] += delta
    return terms


def _carried(state: ClusterState) -> set[str]:
    """The kinds of terms some bound pod carries (`distinct_terms`: kept by binds and removals; a term whose
    carriers all left keeps its entry, counted 0, so a kind may be here when none is left, never missing wrongly).
    The kinds of its entries are kept beside them (entries are never dropped), not found again each cycle."""
    distinct_terms(state)
    return state.__dict__["_affinity_terms"]["kinds"]


def terms_matching(state: ClusterState, pod: Pod, ns_labels: dict[str, str] | None) -> list[tuple[str, AffinityTerm]]:
    """The (kind, term)s of `distinct_terms` that match `pod` (`AffinityTerm.matches`), in first-seen order:
    the existing pods' terms that `getExistingAntiAffinityCounts` (filtering.go, PreFilter) and
    `processExistingPod` (scoring.go, PreScore) count for the incoming pod.

    Only the terms whose selector requires a label the pod carries (`required_label`), or requires none,
    are tried: each term is indexed once under that label as it first appears. A pod without terms of its
    own still gets them: upstream's PreFilter skips only when none matches it and it has no required term
    (`len(s.existingAntiAffinityCounts) == 0 && no RequiredAffinityTerms / RequiredAntiAffinityTerms`)."""
    terms = distinct_terms(state)
    memo = state.__dict__["_affinity_terms"]
    index = memo.setdefault("by_label", {})
    indexed = memo.get("indexed", 0)
    if indexed < len(terms):
        for position, (kind, t) in enumerate(list(terms)[indexed:], indexed):
            index.setdefault(required_label(t.selector), []).append((position, kind, t))
        memo["indexed"] = len(terms)
    hits = [*index.get(None, ()), *(h for pair in pod.labels.items() for h in index.get(pair, ()))]
    hits.sort(key=lambda hit: hit[0])
    return [(kind, t) for _position, kind, t in hits if t.matches(pod, ns_labels)]


def matched_counts(state: ClusterState, terms: tuple[AffinityTerm, ...]) -> np.ndarray:
    """int64 [N]: per node, its pods that match every one of `terms` (namespace selectors already merged)."""
    return counts_of(state, ("matches", terms), lambda p: int(all(t.matches(p, None) for t in terms)),
                     by_labels=True, needs=required_label(terms[0].selector) if terms else None)


def domain_sums(state: ClusterState, key: str, per_node: np.ndarray) -> np.ndarray:
    """int64 [N]: per node, Σ per_node over the nodes of its `key` domain (0 when it lacks the label)."""
    column = node_labels(state).column(key)
    codes = column.codes
    has = codes >= 0
    sums = np.bincount(codes[has], weights=per_node[has], minlength=len(column.vocab)).astype(np.int64)
    return np.where(has, sums[np.maximum(codes, 0)] if len(sums) else 0, 0)


# carried from cycle to cycle of one pod shape (the engine's `_redo`): they bring themselves up to date
LIVE_SCORE, PRE_FILTER, MATCHING = f"{NAME}/live-score", f"{NAME}/pre", f"{NAME}/matching"
REPLAY_MAX = 128  # further behind the change log (planning trials move many pods), they are computed again


@dataclass
class LiveScore:
    """One pod shape's raw scores for every node, valid up to position `seen` of `state.changes`.

    Scores are sums over bound pods, so a later bind of pod p on node n only adds: the weight of each of
    the incoming pod's preferred terms p matches, and of each of p's own terms that match the incoming
    pod, to the nodes of n's domain; its removal takes the same back. `credits` counts those (pod, term)
    pairs on a node carrying the term's key: PreScore skips when there are none. Another state makes the
    caller start from scratch.
    """

    state: ClusterState
    size: int
    seen: int
    total: np.ndarray  # int64 [N]
    credits: int  # (bound pod, term) pairs that score somewhere (none: PreScore skips)
    own: list[tuple[AffinityTerm, int]]  # the incoming pod's preferred terms (merged) and signed weights
    ns_labels: dict[str, str] | None  # the labels of the incoming pod's Namespace object
    by_class: ClassMemo = field(default_factory=ClassMemo, repr=False)  # per pod class: its credits (`_credits`)

    @property
    def contributed(self) -> bool:
        return self.credits > 0

    def advance(self, plugin: InterPodAffinity, state: ClusterState, ctx: CycleContext) -> bool:
        """Add the binds and take back the removals since `seen`; False when it cannot (another state) or
        should not (more than `REPLAY_MAX` changes behind)."""
        if self.state is not state or self.size != len(state):
            return False
        behind = len(state.changes) - self.seen
        if behind > REPLAY_MAX:
            return False
        log = log_arrays(state)
        nodes, klass, sign = log.segment(self.seen, len(state.changes))
        self.seen = len(state.changes)
        own = [term.selector for term, weight in self.own if weight]
        credits = self.by_class.update(log.classes, lambda p: self._credits(plugin, p, ctx), could=lambda a, b:
                                       log.classes.could_match(a, b, ctx.pod.labels, own), empty=())
        scoring = credits.nonempty[klass].nonzero()[0] if len(nodes) else ()
        if not len(scoring):  # no pod of the stretch scores
            return True
        if len(scoring) < len(nodes):  # only the changes whose pods score, in log order
            nodes, klass, sign = nodes[scoring], klass[scoring], sign[scoring]
        domains = DomainDeltas(node_labels(state))
        for node, c, delta in zip(nodes.tolist(), klass.tolist(), sign.tolist(), strict=True):
            for topology_key, weight in credits.values[c]:
                if domains.add(topology_key, node, delta * weight):
                    self.credits += delta
        for domain, amount in domains.masks():
            self.total[domain] += amount
        return True

    def _credits(self, plugin: InterPodAffinity, p: Pod, ctx: CycleContext) -> list[tuple[str, int]]:
        """(topology key, weight) of what bound pod p adds on its node's domain: each of the incoming pod's
        preferred terms p matches, and each of p's own terms that matches the incoming pod (a function of
        p's namespace, labels and terms: its pod class)."""
        out = [(term.topology_key, weight) for term, weight in self.own if weight and term.matches(p, None)]
        terms = pod_terms(p)
        if not terms.empty:
            for kind in KINDS[0], KINDS[2], KINDS[3]:  # every kind but required anti-affinity
                for t in getattr(terms, kind):
                    weight = plugin._existing_weight(kind, t)
                    if weight and t.matches(ctx.pod, self.ns_labels):
                        out.append((t.topology_key, weight))
        return out


_NO_READS = ((), False, ())  # `PreFilterState._reads` of a class whose pods count for nothing


def _reads_anything(reads: tuple[list[str], bool, list[int]]) -> bool:
    """Whether a bound pod's `PreFilterState._reads` count for anything."""
    keys, affine, matched = reads
    return bool(keys or affine or matched)


@dataclass
class PreFilterState:
    """PreFilter's counts for one pod shape, valid up to position `seen` of `state.changes`; later binds
    add to them and removals take back (`advance`)."""

    terms: PodTerms
    existing_anti: np.ndarray  # bool [N]: an existing pod's required anti-affinity matches in the node's domain
    affinity: dict[str, np.ndarray] = field(default_factory=dict)  # key → domain count of pods matching all terms
    anti: list[np.ndarray] = field(default_factory=list)  # per required anti-affinity term: domain counts
    any_existing_anti: bool = False
    any_affinity: bool = False
    any_anti: bool = False
    state: ClusterState | None = None
    size: int = 0
    seen: int = 0
    ns_labels: dict[str, str] | None = None
    by_class: ClassMemo = field(default_factory=ClassMemo, repr=False)  # per pod class: what it counts for

    def _reads(self, p: Pod, pod: Pod) -> tuple[list[str], bool, list[int]]:
        """What bound pod p counts for: the keys of its required anti-affinity terms matching the incoming
        pod, whether it matches every required affinity term, which required anti-affinity terms it matches
        (a function of p's namespace, labels and terms: its pod class)."""
        anti_keys = [t.topology_key for t in pod_terms(p).required_anti_affinity if t.matches(pod, self.ns_labels)]
        affine = bool(self.terms.required_affinity) and all(t.matches(p, None) for t in self.terms.required_affinity)
        anti = [i for i, t in enumerate(self.terms.required_anti_affinity) if t.matches(p, None)]
        return anti_keys, affine, anti

    def advance(self, state: ClusterState, pod: Pod) -> bool:
        """Add the binds and take back the removals since `seen`; False when it cannot (another node list, or a
        removed pod whose required anti-affinity matched: `existing_anti` is a mask, not a count)."""
        if self.size != len(state) or len(state.changes) - self.seen > REPLAY_MAX:
            return False
        log = log_arrays(state)
        nodes, klass, sign = log.segment(self.seen, len(state.changes))
        selectors = [t.selector for t in (*self.terms.required_affinity, *self.terms.required_anti_affinity)]
        by_class = self.by_class.update(log.classes, lambda p: self._reads(p, pod), _reads_anything, lambda a, b:
                                        log.classes.could_match(a, b, pod.labels, selectors), _NO_READS)
        counting = by_class.nonempty[klass].nonzero()[0] if len(nodes) else ()
        if not len(counting):
            self.seen = len(state.changes)  # no count reads these pods (a replica of a pod without terms, ...)
            return True
        if len(counting) < len(nodes):  # only the changes whose pods count for something, in log order
            nodes, klass, sign = nodes[counting], klass[counting], sign[counting]
        table = node_labels(state)
        reads = [(node, delta, by_class.values[c])
                 for node, c, delta in zip(nodes.tolist(), klass.tolist(), sign.tolist(), strict=True)]
        if any(delta < 0 and table.column(k).codes[node] >= 0 for node, delta, (keys, _a, _t) in reads for k in keys):
            return False
        self.seen = len(state.changes)
        existing, affinity = DomainDeltas(table), DomainDeltas(table)
        anti = [DomainDeltas(table) for _ in self.anti]
        for node, delta, (anti_keys, affine, matched) in reads:
            for k in anti_keys if delta > 0 else ():
                self.any_existing_anti |= existing.add(k, node, 1)
            for k in self.affinity if affine else ():
                self.any_affinity |= affinity.add(k, node, delta)
            for i in matched:
                self.any_anti |= anti[i].add(self.terms.required_anti_affinity[i].topology_key, node, delta)
        for domain, _amount in existing.masks():
            self.existing_anti[domain] = True
        for (k, _code), (domain, amount) in zip(affinity.amounts, affinity.masks(), strict=True):
            self.affinity[k][domain] += amount
        for deltas, sums in zip(anti, self.anti, strict=True):
            for domain, amount in deltas.masks():
                sums[domain] += amount
        removed = any(delta < 0 for _n, delta, _r in reads)
        if removed:  # matched pods in some domain, as PreFilter from scratch finds them
            self.any_affinity = any(bool((sums > 0).any()) for sums in self.affinity.values())
            self.any_anti = any(bool((sums > 0).any()) for sums in self.anti)
        return True


class DomainDeltas:
    """Amounts added to topology domains, (key, domain code) → amount, applied as one mask per domain."""

    def __init__(self, table) -> None:
        self.table = table
        self.amounts: dict[tuple[str, int], int] = {}

    def add(self, key: str, node: int, amount: int) -> bool:
        """`amount` to `node`'s `key` domain; False (nothing) when the node lacks the label."""
        code = int(self.table.column(key).codes[node])
        if code < 0:
            return False
        self.amounts[(key, code)] = self.amounts.get((key, code), 0) + amount
        return True

    def masks(self) -> list[tuple[np.ndarray, int]]:
        """(the domain's nodes, ascending, as indices: a hostname's is its node alone, not a mask over every node;
        amount), in the order the domains were first added to."""
        return [(domain_members(self.table, key)[code], amount) for (key, code), amount in self.amounts.items()]


def domain_members(table, key: str) -> list[np.ndarray]:
    """Per code of the label column `key` (its value), the nodes carrying it, ascending (int64): the nodes of each
    topology domain, indexed once per node list (kept on the `NodeLabels`)."""
    memo = table.__dict__.setdefault("_domain_members", {})
    members = memo.get(key)
    if members is None:
        codes = table.column(key).codes
        order = np.argsort(codes, kind="stable")  # (stable: each domain's nodes ascending)
        bounds = np.searchsorted(codes[order], np.arange(len(table.column(key).vocab) + 1))
        members = memo[key] = [order[bounds[c]:bounds[c + 1]].astype(np.int64) for c in range(len(bounds) - 1)]
    return members


@dataclass
class InterPodAffinity:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False
    objects: ClusterObjects | None = None
    name: str = NAME
    reads_other_nodes = True  # a bind on any node can change its verdicts and scores
    scores_feasible_set = False  # its raw scores depend on which nodes passed the filters
    normalize_needs_context = False

    @classmethod
    def from_args(cls, args: Any, objects: ClusterObjects) -> InterPodAffinity:
        args = args or {}
        weight = args.get("hardPodAffinityWeight")
        return cls(1 if weight is None else int(weight), bool(args.get("ignorePreferredTermsOfExistingPods")),
                   objects)

    def _objects(self) -> ClusterObjects:
        return self.objects if self.objects is not None else ClusterObjects()

    def reads_other_nodes_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Whether binds elsewhere can change this pod's verdicts: when it or a bound pod has affinity terms
        (the engine redoes every shape once a pod with terms is bound: `carries_affinity_terms`)."""
        return not pod_terms(ctx.pod).empty or bool(distinct_terms(state))

    # ------------------------------------------------------------------ Filter
    def _pre_filter_state(self, state: ClusterState, ctx: CycleContext) -> PreFilterState:
        live = ctx.cache.get(PRE_FILTER)
        if isinstance(live, PreFilterState) and (live.state is not state or live.advance(state, ctx.pod)):
            return live  # on another state: the cycle's PreFilter state as computed (`filters_after_preemption`)
        pod, objects = ctx.pod, self._objects()
        raw = pod_terms(pod)
        terms = PodTerms(tuple(_merged(t, objects) for t in raw.required_affinity),
                         tuple(_merged(t, objects) for t in raw.required_anti_affinity))
        ns_labels = namespace_labels(objects, pod.namespace)
        n = len(state)
        existing = np.zeros(n, dtype=bool)
        any_existing = False
        for kind, t in terms_matching(state, pod, ns_labels):
            if kind == "required_anti_affinity":
                carriers = term_carriers(state, kind, t)
                if carriers.any() and node_labels(state).column(t.topology_key).present[carriers > 0].any():
                    any_existing = True
                    existing |= domain_sums(state, t.topology_key, carriers) > 0
        s = PreFilterState(terms, existing, any_existing_anti=any_existing, state=state, size=n,
                           seen=len(state.changes), ns_labels=ns_labels)
        if isinstance(live, PreFilterState) and live.state is state:
            s.by_class = live.by_class  # what each class counts for: a function of the pod shape, still true
        if terms.required_affinity:
            matched = matched_counts(state, terms.required_affinity)
            for t in terms.required_affinity:
                s.affinity[t.topology_key] = domain_sums(state, t.topology_key, matched)
                s.any_affinity |= bool(node_labels(state).column(t.topology_key).present[matched > 0].any())
        for t in terms.required_anti_affinity:
            matched = matched_counts(state, (t,))
            s.anti.append(domain_sums(state, t.topology_key, matched))
            s.any_anti |= bool(node_labels(state).column(t.topology_key).present[matched > 0].any())
        ctx.cache[PRE_FILTER] = s
        return s

    def _matching_kinds(self, state: ClusterState, ctx: CycleContext) -> frozenset[str]:
        """The kinds of the bound pods' terms that match the incoming pod (`terms_matching`), kept for the pod shape
        (`MATCHING`, carried from cycle to cycle) until a term appears: entries of `distinct_terms` are never
        dropped, so their count says whether the answer can have changed."""
        terms = distinct_terms(state)
        known = ctx.cache.get(MATCHING)
        if known is not None and known[0] is terms and known[1] == len(terms):
            return known[2]
        ns_labels = namespace_labels(self._objects(), ctx.pod.namespace)
        kinds = frozenset(kind for kind, _t in terms_matching(state, ctx.pod, ns_labels))
        ctx.cache[MATCHING] = (terms, len(terms), kinds)
        return kinds

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        terms = pod_terms(ctx.pod)
        if not (terms.required_affinity or terms.required_anti_affinity) and (
                "required_anti_affinity" not in _carried(state)
                or "required_anti_affinity" not in self._matching_kinds(state, ctx)):
            # no required term of its own, none of a bound pod that matches it: no existing pod's anti-affinity
            # can count (`getExistingAntiAffinityCounts` finds none), PreFilter skips without counting anything
            return PreFilterOutcome(skip=True)
        s = self._pre_filter_state(state, ctx)
        skip = not s.any_existing_anti and not s.terms.required_affinity and not s.terms.required_anti_affinity
        return PreFilterOutcome(skip=skip)

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        s = self._pre_filter_state(state, ctx)
        table = node_labels(state)
        n = len(state)
        affinity_ok = np.ones(n, dtype=bool)
        if s.terms.required_affinity:
            has_keys = np.logical_and.reduce([table.column(t.topology_key).present for t in s.terms.required_affinity])
            exist = np.logical_and.reduce([s.affinity[t.topology_key] > 0 for t in s.terms.required_affinity])
            self_ok = not s.any_affinity and all(t.matches(ctx.pod, None) for t in s.terms.required_affinity)
            affinity_ok = has_keys & (exist | self_ok)
        anti_ok = np.ones(n, dtype=bool)
        if s.any_anti:
            for sums in s.anti:
                anti_ok &= ~(sums > 0)
        existing_ok = ~s.existing_anti
        a, b, c = ~affinity_ok[idx], affinity_ok[idx] & ~anti_ok[idx], affinity_ok[idx] & anti_ok[idx] & ~existing_ok[idx]
        codes = np.where(a, UNRESOLVABLE, np.where(b | c, UNSCHEDULABLE, 0)).astype(np.int8)
        return FilterOutcome(codes, [REASON_AFFINITY, REASON_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY],
                             np.column_stack([a, b, c]))

    # ------------------------------------------------------------------ Score
    def _own_preferred(self, ctx: CycleContext) -> list[tuple[AffinityTerm, int]]:
        """The incoming pod's preferred terms, namespace selectors merged, with their signed weights."""
        raw, objects = pod_terms(ctx.pod), self._objects()
        return ([(_merged(t, objects), t.weight) for t in raw.preferred_affinity]
                + [(_merged(t, objects), -t.weight) for t in raw.preferred_anti_affinity])

    def _existing_weight(self, kind: str, term: AffinityTerm) -> int:
        """What an existing pod's `kind` term matching the incoming pod adds to its domain's nodes."""
        if kind == "required_affinity":
            return self.hard_pod_affinity_weight if self.hard_pod_affinity_weight > 0 else 0
        return {"preferred_affinity": term.weight, "preferred_anti_affinity": -term.weight}.get(kind, 0)

    def _topology_score(self, state: ClusterState, ctx: CycleContext) -> np.ndarray | None:
        """int64 [N]: every node's raw score (None: no term contributes anywhere, PreScore skips)."""
        key = f"{NAME}/score"
        if key in ctx.cache:
            return ctx.cache[key]  # type: ignore[return-value]
        live = ctx.cache.get(LIVE_SCORE)
        if not (isinstance(live, LiveScore) and live.advance(self, state, ctx)):
            old = live if isinstance(live, LiveScore) and live.state is state else None
            live = ctx.cache[LIVE_SCORE] = self._score_from_scratch(state, ctx, old)
        result = live.total if live.contributed else None
        ctx.cache[key] = result
        return result

    def _score_from_scratch(self, state: ClusterState, ctx: CycleContext, old: LiveScore | None = None) -> LiveScore:
        """The raw scores over every bound pod (`processExistingPod` for each, as counts per node); `old`: the
        shape's previous scores, whose memos (what matches the incoming pod) still hold."""
        pod = ctx.pod
        ns_labels = namespace_labels(self._objects(), pod.namespace)
        table = node_labels(state)
        labelled = cached_on(state, "labelled", lambda nodes: np.array([bool(n.labels) for n in nodes], dtype=bool))
        total = np.zeros(len(state), dtype=np.int64)
        credits = 0

        def add(term: AffinityTerm, per_node: np.ndarray, weight: int) -> None:
            nonlocal total, credits
            per_node = np.where(labelled, per_node, 0)
            scoring = int(per_node[table.column(term.topology_key).present].sum()) if weight else 0
            if scoring:
                credits += scoring
                total = total + weight * domain_sums(state, term.topology_key, per_node)

        own = self._own_preferred(ctx)
        for merged, weight in own:
            add(merged, matched_counts(state, (merged,)), weight)
        for kind, t in terms_matching(state, pod, ns_labels):
            if kind == "required_anti_affinity":
                continue
            weight = self._existing_weight(kind, t)
            if weight:
                add(t, term_carriers(state, kind, t), weight)
        return LiveScore(state, len(state), len(state.changes), total, credits, own, ns_labels,
                         ClassMemo() if old is None else old.by_class)

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Skip when nothing scores: no preferences anywhere (or ignored, as the args say)."""
        terms = pod_terms(ctx.pod)
        has_constraints = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return True
        if not has_constraints and not _carried(state) - {"required_anti_affinity"}:
            return True  # no term of its own, none of a bound pod that could credit a node: no credits
        if not has_constraints and not self._matching_kinds(state, ctx) - {"required_anti_affinity"}:
            return True  # no term of its own, no bound pod's term that scores matches it: no credits
        return self._topology_score(state, ctx) is None

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        scores = self._topology_score(state, ctx)
        return np.zeros(len(idx), dtype=np.int64) if scores is None else scores[idx]

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        if not len(raw):
            return raw
        lo, hi = int(raw.min()), int(raw.max())
        if hi - lo <= 0:
            return np.zeros(len(raw), dtype=np.int64)
        return (100.0 * ((raw - lo).astype(np.float64) / float(hi - lo))).astype(np.int64)

    def signature(self, pod: Pod) -> tuple:
        return (pod.namespace, tuple(sorted(pod.labels.items())),
                freeze((pod.affinity or {}).get("podAffinity")), freeze((pod.affinity or {}).get("podAntiAffinity")))
