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

from collections.abc import Iterable
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
from kubefit.scheduler.plugins.selectors import node_labels
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


def _bump(counts: dict[tuple[str, str], int], node_labels_map: dict[str, str], key: str, value: int) -> None:
    if key in node_labels_map:
        pair = (key, node_labels_map[key])
        counts[pair] = counts.get(pair, 0) + value


@dataclass
class PreFilterState:
    terms: PodTerms
    existing_anti: dict[tuple[str, str], int] = field(default_factory=dict)
    affinity: dict[tuple[str, str], int] = field(default_factory=dict)
    anti: dict[tuple[str, str], int] = field(default_factory=dict)


def _with_affinity(state: ClusterState) -> Iterable[tuple[int, Pod]]:
    for n, pods in enumerate(state.pods):
        for p in pods:
            if p.affinity and (p.affinity.get("podAffinity") or p.affinity.get("podAntiAffinity")):
                yield n, p


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

    # ------------------------------------------------------------------ Filter
    def _pre_filter_state(self, state: ClusterState, ctx: CycleContext) -> PreFilterState:
        key = f"{NAME}/pre"
        if key in ctx.cache:
            return ctx.cache[key]  # type: ignore[return-value]
        pod, objects = ctx.pod, self._objects()
        raw = pod_terms(pod)
        terms = PodTerms(tuple(_merged(t, objects) for t in raw.required_affinity),
                         tuple(_merged(t, objects) for t in raw.required_anti_affinity))
        s = PreFilterState(terms)
        ns_labels = namespace_labels(objects, pod.namespace)
        nodes = state.nodes
        for n, existing in _with_affinity(state):
            for t in pod_terms(existing).required_anti_affinity:
                if t.matches(pod, ns_labels):
                    _bump(s.existing_anti, nodes[n].labels, t.topology_key, 1)
        if terms.required_affinity or terms.required_anti_affinity:
            for n, pods in enumerate(state.pods):
                labels = nodes[n].labels
                for existing in pods:
                    if terms.required_affinity and all(t.matches(existing, None) for t in terms.required_affinity):
                        for t in terms.required_affinity:
                            _bump(s.affinity, labels, t.topology_key, 1)
                    for t in terms.required_anti_affinity:
                        if t.matches(existing, None):
                            _bump(s.anti, labels, t.topology_key, 1)
        ctx.cache[key] = s
        return s

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        s = self._pre_filter_state(state, ctx)
        skip = not s.existing_anti and not s.terms.required_affinity and not s.terms.required_anti_affinity
        return PreFilterOutcome(skip=skip)

    @staticmethod
    def _domain_hits(state: ClusterState, counts: dict[tuple[str, str], int], key: str) -> np.ndarray:
        """bool [N]: the node carries `key` and its domain has a positive count."""
        column = node_labels(state).column(key)
        hit = np.zeros(len(column.vocab) + 1, dtype=bool)
        for value, code in column.vocab.items():
            hit[code] = counts.get((key, value), 0) > 0
        return hit[column.codes]

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        s = self._pre_filter_state(state, ctx)
        table = node_labels(state)
        n = len(state)
        affinity_ok = np.ones(n, dtype=bool)
        if s.terms.required_affinity:
            has_keys = np.logical_and.reduce([table.column(t.topology_key).present for t in s.terms.required_affinity])
            exist = np.logical_and.reduce([self._domain_hits(state, s.affinity, t.topology_key)
                                           for t in s.terms.required_affinity])
            self_ok = not s.affinity and all(t.matches(ctx.pod, None) for t in s.terms.required_affinity)
            affinity_ok = has_keys & (exist | self_ok)
        anti_ok = np.ones(n, dtype=bool)
        if s.anti:
            for t in s.terms.required_anti_affinity:
                anti_ok &= ~self._domain_hits(state, s.anti, t.topology_key)
        existing_ok = np.ones(n, dtype=bool)
        if s.existing_anti:
            for key in {k for k, _ in s.existing_anti}:
                existing_ok &= ~self._domain_hits(state, s.existing_anti, key)
        a, b, c = ~affinity_ok[idx], affinity_ok[idx] & ~anti_ok[idx], affinity_ok[idx] & anti_ok[idx] & ~existing_ok[idx]
        codes = np.where(a, UNRESOLVABLE, np.where(b | c, UNSCHEDULABLE, 0)).astype(np.int8)
        return FilterOutcome(codes, [REASON_AFFINITY, REASON_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY],
                             np.column_stack([a, b, c]))

    # ------------------------------------------------------------------ Score
    def _topology_score(self, state: ClusterState, ctx: CycleContext) -> dict[tuple[str, str], int]:
        key = f"{NAME}/score"
        if key in ctx.cache:
            return ctx.cache[key]  # type: ignore[return-value]
        pod, objects = ctx.pod, self._objects()
        raw = pod_terms(pod)
        preferred = tuple(_merged(t, objects) for t in raw.preferred_affinity)
        preferred_anti = tuple(_merged(t, objects) for t in raw.preferred_anti_affinity)
        ns_labels = namespace_labels(objects, pod.namespace)
        scores: dict[tuple[str, str], int] = {}
        if preferred or preferred_anti:
            candidates: Iterable[tuple[int, Pod]] = ((n, p) for n, pods in enumerate(state.pods) for p in pods)
        else:
            candidates = _with_affinity(state)
        for n, existing in candidates:
            labels = state.nodes[n].labels
            if not labels:
                continue
            for t in preferred:
                if t.matches(existing, None):
                    _bump(scores, labels, t.topology_key, t.weight)
            for t in preferred_anti:
                if t.matches(existing, None):
                    _bump(scores, labels, t.topology_key, -t.weight)
            theirs = pod_terms(existing)
            if self.hard_pod_affinity_weight > 0:
                for t in theirs.required_affinity:
                    if t.matches(pod, ns_labels):
                        _bump(scores, labels, t.topology_key, self.hard_pod_affinity_weight)
            for t in theirs.preferred_affinity:
                if t.matches(pod, ns_labels):
                    _bump(scores, labels, t.topology_key, t.weight)
            for t in theirs.preferred_anti_affinity:
                if t.matches(pod, ns_labels):
                    _bump(scores, labels, t.topology_key, -t.weight)
        ctx.cache[key] = scores
        return scores

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Skip when nothing scores: no preferences anywhere (or ignored, as the args say)."""
        terms = pod_terms(ctx.pod)
        has_constraints = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return True
        return not self._topology_score(state, ctx)

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        scores = self._topology_score(state, ctx)
        table = node_labels(state)
        out = np.zeros(len(idx), dtype=np.int64)
        for key in {k for k, _ in scores}:
            column = table.column(key)
            per_code = np.zeros(len(column.vocab) + 1, dtype=np.int64)
            for value, code in column.vocab.items():
                per_code[code] = scores.get((key, value), 0)
            out += per_code[column.codes[idx]]
        return out

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        if not len(raw):
            return raw
        lo, hi = int(raw.min()), int(raw.max())
        if hi - lo <= 0:
            return np.zeros(len(raw), dtype=np.int64)
        return (100.0 * ((raw - lo).astype(np.float64) / float(hi - lo))).astype(np.int64)

    def signature(self, pod: Pod) -> tuple:
        return (pod.namespace, tuple(sorted(pod.labels.items())), repr(pod.affinity))
