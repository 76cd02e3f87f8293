"""NodeAffinity: nodeSelector, required/preferred node affinity and the `addedAffinity` args (§13.5).

PreFilter skips pods with nothing required (nil nodeSelector, no required affinity, no added required
terms) and narrows the candidates to the `metadata.name In` sets of the required terms; Filter checks
the scheduler-enforced terms, then the pod's selector and required terms; Score sums the weights of
the matching preferred terms, normalised to the best node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kubefit.errors import ConfigError
from kubefit.k8s.nodeaffinity import (
    OBJECT_NAME_FIELD,
    NodeLabels,
    NodeSelector,
    PreferredTerms,
    freeze,
    label_set_mask,
)
from kubefit.k8s.validation import aggregate, is_empty_term
from kubefit.scheduler.config import NodeAffinityArgs, validate_node_affinity_args
from kubefit.scheduler.plugins.base import (
    UNRESOLVABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
    StatusError,
)
from kubefit.scheduler.plugins.selectors import node_labels
from kubefit.scheduler.plugins.tainttoleration import default_normalize
from kubefit.scheduler.state import ClusterState

NAME = "NodeAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"
_FEW_ROWS = 4  # Filter of up to this many nodes matches them alone (`_pod_rows`), not every node


def added_affinity(args: Any) -> dict[str, Any] | None:
    """`addedAffinity` from the plugin args: a NodeAffinityArgs object, the raw args mapping, or None."""
    if args is None:
        return None
    if isinstance(args, dict):
        return args.get("addedAffinity")
    return getattr(args, "added_affinity", None)


def pod_node_affinity(ctx: CycleContext) -> dict[str, Any]:
    return node_affinity_of(ctx.pod)


def node_affinity_of(pod) -> dict[str, Any]:
    """The pod's `spec.affinity.nodeAffinity` ({} without one)."""
    return (pod.affinity or {}).get("nodeAffinity") or {}


def required_name_sets(terms: list[dict[str, Any]]) -> set[str] | None:
    """The PreFilter node-name set: ∪ over terms of ∩ of their `metadata.name In` values; None = no limit."""
    union: set[str] = set()
    for term in terms:
        names: set[str] | None = None
        for req in (term or {}).get("matchFields") or []:
            if req.get("key") == OBJECT_NAME_FIELD and req.get("operator") == "In":
                values = {str(v) for v in req.get("values") or []}
                names = values if names is None else names & values
        if names is None:
            return None
        union |= names
    return union


@dataclass
class NodeAffinity:
    added_required: NodeSelector | None = None
    added_preferred: PreferredTerms | None = None
    name: str = NAME

    @classmethod
    def from_args(cls, args: Any) -> NodeAffinity:
        """The plugin as `New` builds it; args that fail validation refuse the profile."""
        added = added_affinity(args)
        errors = validate_node_affinity_args(NodeAffinityArgs(added))
        if errors:
            raise ConfigError([f'initializing plugin "{NAME}": {aggregate(errors)}'])
        required = NodeSelector.parse(added[REQUIRED]) if added and added.get(REQUIRED) is not None else None
        preferred = PreferredTerms.parse(added[PREFERRED]) if added and added.get(PREFERRED) else None
        return cls(required, preferred)

    # ------------------------------------------------------------------ Filter
    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        required = pod_node_affinity(ctx).get(REQUIRED)
        if required is None and self.added_required is None and ctx.pod.node_selector is None:
            return PreFilterOutcome(skip=True)
        terms = (required or {}).get("nodeSelectorTerms") or []
        if not terms:
            return PreFilterOutcome()
        names = required_name_sets(terms)
        if names is None:
            return PreFilterOutcome()
        if not names:
            return PreFilterOutcome(code=UNRESOLVABLE, reasons=(REASON_CONFLICT,))
        return PreFilterOutcome(node_names=names)

    def pins(self, pod) -> bool:
        """Whether `pre_filter` restricts `pod` to exactly one node name (`PreFilterResult.NodeNames` of size one: a
        DaemonSet pod's `metadata.name In [node]` term), read off the pod without a cycle (`Engine.shape`)."""
        terms = (node_affinity_of(pod).get(REQUIRED) or {}).get("nodeSelectorTerms") or []
        names = required_name_sets(terms) if terms else None
        return names is not None and len(names) == 1

    def _pod_mask(self, state: ClusterState, ctx: CycleContext) -> np.ndarray:
        """`RequiredNodeAffinity.Match` for every node: nodeSelector map AND required terms."""
        return self._match(node_labels(state), ctx)

    @staticmethod
    def _match(table: NodeLabels, ctx: CycleContext, selector: NodeSelector | None = None) -> np.ndarray:
        """`_pod_mask` over the nodes of `table` (`selector`: the required terms parsed, default
        `NodeSelector.parse`)."""
        mask = table.everything()
        if ctx.pod.node_selector:
            mask &= label_set_mask(table, ctx.pod.node_selector)
        required = pod_node_affinity(ctx).get(REQUIRED)
        if required is not None:
            mask &= (selector or NodeSelector.parse(required)).mask(table)
        return mask

    def _pod_rows(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        """`_pod_mask` of the nodes `idx` alone, over a table of just those nodes (a pinned pod's one node:
        `Engine._pinned_shape`): the same matching, no work over every node and nothing memoised on the state's
        table (its term names one node and no other pod has it). The throwaway table's memo is keyed by the
        terms' positions instead of their frozen content."""
        table = NodeLabels([state.nodes[i] for i in idx.tolist()])
        terms = tuple(t for t in (pod_node_affinity(ctx).get(REQUIRED) or {}).get("nodeSelectorTerms") or []
                      if not is_empty_term(t))
        return self._match(table, ctx, NodeSelector(terms, tuple(range(len(terms)))))

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        table = node_labels(state)
        enforced = self.added_required.mask(table)[idx] if self.added_required else np.ones(len(idx), dtype=bool)
        pod_ok = (self._pod_rows(state, ctx, idx) if len(idx) <= _FEW_ROWS
                  else self._match(table, ctx)[idx])
        matrix = np.column_stack([~enforced, enforced & ~pod_ok])
        codes = np.where(matrix.any(axis=1), UNRESOLVABLE, 0).astype(np.int8)
        return FilterOutcome(codes, [REASON_ENFORCED, REASON_POD], matrix)

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Skip when neither the pod nor the args prefer anything; a bad pod term fails the cycle."""
        terms = pod_node_affinity(ctx).get(PREFERRED)
        parsed = PreferredTerms.parse(terms) if terms is not None else None
        if parsed is not None and parsed.error:
            raise StatusError(parsed.error)
        ctx.cache[f"{NAME}/preferred"] = parsed
        return parsed is None and self.added_preferred is None

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        """Raw score: Σ weights of the matching added and pod preferred terms."""
        table = node_labels(state)
        raw = np.zeros(len(table), dtype=np.int64)
        if self.added_preferred is not None:
            raw += self.added_preferred.score(table)
        parsed = ctx.cache.get(f"{NAME}/preferred")
        if parsed is not None:
            raw += parsed.score(table)
        return raw[idx]

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return default_normalize(raw, reverse=False)

    def signature(self, pod) -> tuple:
        """What this plugin reads of a pod (kube-scheduler's SignPlugin): nodeSelector, nodeAffinity."""
        return (None if pod.node_selector is None else tuple(sorted(pod.node_selector.items())),
                freeze((pod.affinity or {}).get("nodeAffinity")))
