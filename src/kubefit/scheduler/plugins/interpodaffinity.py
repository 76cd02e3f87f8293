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
from kubefit.labels import NOTHING, Selector, SelectorError, parse_selector
from kubefit.scheduler.plugins.base import (
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
)
from kubefit.scheduler.plugins.podcounts import counts_of
from kubefit.scheduler.plugins.selectors import cached_on, freeze, node_labels
from kubefit.scheduler.state import ClusterState

NAME = "InterPodAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


@dataclass(frozen=True)
class AffinityTerm:
    """`framework.AffinityTerm`: namespaces, selector, topology key, namespace selector."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector
    weight: int = 0

    def matches(self, pod: Pod, ns_labels: dict[str, str] | None) -> bool:
        """`AffinityTerm.Matches`: the pod's namespace is in the set or selected, and its labels match."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels):
            return self.selector.matches(pod.labels)
        return False


def _selector(raw: Any) -> Selector:
    try:
        return parse_selector(raw)
    except SelectorError:
        return NOTHING


def _term(pod: Pod, raw: dict[str, Any], weight: int = 0) -> AffinityTerm:
    """`newAffinityTerm`: no namespaces and no namespaceSelector means the pod's own namespace."""
    namespaces = frozenset(str(n) for n in raw.get("namespaces") or ())
    ns_selector = raw.get("namespaceSelector")
    if not namespaces and ns_selector is None:
        namespaces = frozenset({pod.namespace})
    return AffinityTerm(namespaces, _selector(raw.get("labelSelector")), str(raw.get("topologyKey") or ""),
                        _selector(ns_selector), weight)


@dataclass(frozen=True)
class PodTerms:
    """`framework.PodInfo`'s affinity terms of one pod."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[AffinityTerm, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.required_affinity or self.required_anti_affinity or self.preferred_affinity
                    or self.preferred_anti_affinity)


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's terms, parsed once per pod object."""
    cached = pod.__dict__.get("_affinity_terms")
    if cached is not None:
        return cached
    affinity = pod.affinity or {}
    parts = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        parts.append(tuple(_term(pod, t or {}) for t in section.get(REQUIRED) or ()))
        parts.append(tuple(_term(pod, (w or {}).get("podAffinityTerm") or {}, int((w or {}).get("weight") or 0))
                           for w in section.get(PREFERRED) or ()))
    terms = PodTerms(parts[0], parts[2], parts[1], parts[3])
    pod.__dict__["_affinity_terms"] = terms
    return terms


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


KINDS = ("required_affinity", "required_anti_affinity", "preferred_affinity", "preferred_anti_affinity")


def carries_affinity_terms(pod: Pod) -> bool:
    """Whether binding `pod` can change InterPodAffinity's verdicts for pods without terms of their own."""
    return not pod_terms(pod).empty


def term_carriers(state: ClusterState, kind: str, term: AffinityTerm) -> np.ndarray:
    """int64 [N]: per node, how many of its pods carry `term` among their `kind` terms."""
    return counts_of(state, ("carries", kind, term), lambda p: getattr(pod_terms(p), kind).count(term))


def distinct_terms(state: ClusterState) -> dict[tuple[str, AffinityTerm], None]:
    """Every (kind, term) some pod bound so far carries, in first-seen order (kept up to date by binds)."""
    memo = state.__dict__.get("_affinity_terms")
    if memo is None:
        memo = state.__dict__["_affinity_terms"] = {"seen": len(state.changes), "terms": {}}
        new = state.all_pods()
    else:
        new = [p for _n, p, delta in state.changes[memo["seen"]:] if delta > 0]
        memo["seen"] = len(state.changes)
    for p in new:
        terms = pod_terms(p)
        if not terms.empty:
            for kind in KINDS:
                for t in getattr(terms, kind):
                    memo["terms"].setdefault((kind, t), None)
    return memo["terms"]


def matched_counts(state: ClusterState, terms: tuple[AffinityTerm, ...]) -> np.ndarray:
    """int64 [N]: per node, its pods that match every one of `terms` (namespace selectors already merged)."""
    return counts_of(state, ("matches", terms), lambda p: int(all(t.matches(p, None) for t in terms)),
                     by_labels=True)


def domain_sums(state: ClusterState, key: str, per_node: np.ndarray) -> np.ndarray:
    """int64 [N]: per node, Σ per_node over the nodes of its `key` domain (0 when it lacks the label)."""
    column = node_labels(state).column(key)
    codes = column.codes
    has = codes >= 0
    sums = np.bincount(codes[has], weights=per_node[has], minlength=len(column.vocab)).astype(np.int64)
    return np.where(has, sums[np.maximum(codes, 0)] if len(sums) else 0, 0)


@dataclass
class PreFilterState:
    terms: PodTerms
    existing_anti: np.ndarray  # bool [N]: an existing pod's required anti-affinity matches in the node's domain
    affinity: dict[str, np.ndarray] = field(default_factory=dict)  # key → domain count of pods matching all terms
    anti: list[np.ndarray] = field(default_factory=list)  # per required anti-affinity term: domain counts
    any_existing_anti: bool = False
    any_affinity: bool = False
    any_anti: bool = False


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
        key = f"{NAME}/pre"
        if key in ctx.cache:
            return ctx.cache[key]  # type: ignore[return-value]
        pod, objects = ctx.pod, self._objects()
        raw = pod_terms(pod)
        terms = PodTerms(tuple(_merged(t, objects) for t in raw.required_affinity),
                         tuple(_merged(t, objects) for t in raw.required_anti_affinity))
        ns_labels = namespace_labels(objects, pod.namespace)
        n = len(state)
        existing = np.zeros(n, dtype=bool)
        any_existing = False
        for kind, t in distinct_terms(state):
            if kind == "required_anti_affinity" and t.matches(pod, ns_labels):
                carriers = term_carriers(state, kind, t)
                if carriers.any() and node_labels(state).column(t.topology_key).present[carriers > 0].any():
                    any_existing = True
                    existing |= domain_sums(state, t.topology_key, carriers) > 0
        s = PreFilterState(terms, existing, any_existing_anti=any_existing)
        if terms.required_affinity:
            matched = matched_counts(state, terms.required_affinity)
            for t in terms.required_affinity:
                s.affinity[t.topology_key] = domain_sums(state, t.topology_key, matched)
                s.any_affinity |= bool(node_labels(state).column(t.topology_key).present[matched > 0].any())
        for t in terms.required_anti_affinity:
            matched = matched_counts(state, (t,))
            s.anti.append(domain_sums(state, t.topology_key, matched))
            s.any_anti |= bool(node_labels(state).column(t.topology_key).present[matched > 0].any())
        ctx.cache[key] = s
        return s

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
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
    def _topology_score(self, state: ClusterState, ctx: CycleContext) -> np.ndarray | None:
        """int64 [N]: every node's raw score (None: no term contributes anywhere, PreScore skips)."""
        key = f"{NAME}/score"
        if key in ctx.cache:
            return ctx.cache[key]  # type: ignore[return-value]
        pod, objects = ctx.pod, self._objects()
        raw = pod_terms(pod)
        ns_labels = namespace_labels(objects, pod.namespace)
        table = node_labels(state)
        labelled = cached_on(state, "labelled", lambda nodes: np.array([bool(n.labels) for n in nodes], dtype=bool))
        total = np.zeros(len(state), dtype=np.int64)
        contributed = False

        def add(term: AffinityTerm, per_node: np.ndarray, weight: int) -> None:
            nonlocal total, contributed
            per_node = np.where(labelled, per_node, 0)
            if weight and (per_node[table.column(term.topology_key).present] != 0).any():
                contributed = True
                total = total + weight * domain_sums(state, term.topology_key, per_node)

        for t in raw.preferred_affinity:
            merged = _merged(t, objects)
            add(merged, matched_counts(state, (merged,)), t.weight)
        for t in raw.preferred_anti_affinity:
            merged = _merged(t, objects)
            add(merged, matched_counts(state, (merged,)), -t.weight)
        for kind, t in distinct_terms(state):
            if kind == "required_anti_affinity" or not t.matches(pod, ns_labels):
                continue
            if kind == "required_affinity":
                if self.hard_pod_affinity_weight > 0:
                    add(t, term_carriers(state, kind, t), self.hard_pod_affinity_weight)
            else:
                add(t, term_carriers(state, kind, t), t.weight if kind == "preferred_affinity" else -t.weight)
        result = total if contributed else None
        ctx.cache[key] = result
        return result

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Skip when nothing scores: no preferences anywhere (or ignored, as the args say)."""
        terms = pod_terms(ctx.pod)
        has_constraints = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return True
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
