"""A pod's affinity terms (`framework.PodInfo`'s `RequiredAffinityTerms` … `PreferredAntiAffinityTerms`), parsed.

A term selects pods by labels in a set of namespaces (`namespaces`, else `namespaceSelector` over the Namespace
objects, else the pod's own namespace) and groups nodes by `topologyKey` (pkg/scheduler/framework/types.go
`newAffinityTerm`, `AffinityTerm.Matches`). InterPodAffinity reads them of the incoming pod and of every bound
pod; the change log's pod classes (`podclasses`) include them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubefit.api.core import Pod
from kubefit.k8s.labels import NOTHING, Selector, SelectorError, parse_selector

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


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


_NO_TERMS = PodTerms()
_TERMS: dict[tuple[int, str], tuple[dict, PodTerms]] = {}  # (id of an affinity, namespace) → (it, its terms)
_TERMS_MAX = 4096


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's terms, parsed once per pod object, and once per `affinity` object and namespace (replicas
    decoded from one template share their affinity: `load.decode_pod`); the terms read nothing else of the pod."""
    cached = pod.__dict__.get("_affinity_terms")
    if cached is not None:
        return cached
    if not pod.affinity:
        pod.__dict__["_affinity_terms"] = _NO_TERMS
        return _NO_TERMS
    key = (id(pod.affinity), pod.namespace)
    known = _TERMS.get(key)
    if known is not None:  # the entry holds the affinity alive: its id cannot be reused while it lives
        pod.__dict__["_affinity_terms"] = known[1]
        return known[1]
    terms = _parsed_terms(pod)
    if len(_TERMS) >= _TERMS_MAX:
        _TERMS.clear()
    _TERMS[key] = (pod.affinity, terms)
    pod.__dict__["_affinity_terms"] = terms
    return terms


def _parsed_terms(pod: Pod) -> PodTerms:
    """`framework.NewPodInfo`'s terms of the pod's `affinity` (in its namespace)."""
    affinity = pod.affinity or {}
    parts = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        parts.append(tuple(_term(pod, t or {}) for t in section.get(REQUIRED) or ()))
        parts.append(tuple(_term(pod, (w or {}).get("podAffinityTerm") or {}, int((w or {}).get("weight") or 0))
                           for w in section.get(PREFERRED) or ()))
    return PodTerms(parts[0], parts[2], parts[1], parts[3])


KINDS = ("required_affinity", "required_anti_affinity", "preferred_affinity", "preferred_anti_affinity")


def carries_affinity_terms(pod: Pod) -> bool:
    """Whether binding `pod` can change InterPodAffinity's verdicts for pods without terms of their own."""
    affinity = pod.affinity
    if not affinity or not (affinity.get("podAffinity") or affinity.get("podAntiAffinity")):
        return False  # the usual pod, once per bind: no terms to parse
    return not pod_terms(pod).empty
