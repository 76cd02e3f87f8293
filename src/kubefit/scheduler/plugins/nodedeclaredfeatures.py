"""NodeDeclaredFeatures (KEP-5328, v1.35+): a pod's required features must be among the node's declared ones
(`pkg/scheduler/framework/plugins/nodedeclaredfeatures`; the matching is `kubefit.k8s.declaredfeatures`).

- Built with its gate off (v1.35's default), the plugin is disabled: PreFilter Skip for every pod.
- PreFilter: the features the pod requires in this version (`InferForPodScheduling`); none: Skip.
- Filter: UnschedulableAndUnresolvable on a node missing one. The node's set is v1.35's
  `NewFeatureSet(status.declaredFeatures...)` (every name), v1.36's `DefaultFramework.TryMap` (the known
  names, by a merge walk over the sorted list the API server keeps). v1.35 names the missing features in
  its reason (`MatchNodeFeatureSet`, from a Go map: one feature at most can be required there, as
  RestartAllContainersOnContainerExits alone infers one); v1.36 gives one fixed reason.

Its verdict depends on the node's status alone (rows.STATIC_PLUGINS): binds never change it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Node, Pod
from kubefit.k8s.declaredfeatures import try_map
from kubefit.scheduler.plugins.base import UNRESOLVABLE, CycleContext, FilterOutcome, PreFilterOutcome
from kubefit.scheduler.plugins.selectors import cached_on
from kubefit.scheduler.state import ClusterState

NAME = "NodeDeclaredFeatures"
REASON = "node(s) didn't match Pod's required features"  # v1.36 errReasonUnsatisfiedRequirements
REASON_V135 = "node declared features check failed - unsatisfied requirements: {}"  # + ", "-joined names


@dataclass
class NodeDeclaredFeatures:
    """`registry`: the version's feature names, sorted; `enabled`: its gate; `maps`: v1.36's TryMap of the
    node's list (else every declared name counts); `names_missing`: v1.35's reason."""

    registry: tuple[str, ...] = ()
    enabled: bool = False
    maps: bool = True
    names_missing: bool = False
    name: str = NAME

    def required(self, pod: Pod) -> tuple[str, ...]:
        """The features `pod` requires in this version (sorted; none when the plugin is disabled)."""
        if not self.enabled or not pod.required_features:
            return ()
        return tuple(f for f in pod.required_features if f in self.registry)

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        return PreFilterOutcome(skip=not self.required(ctx.pod))

    def _declared(self, nodes: Sequence[Node]) -> list[frozenset[str]]:
        if self.maps:
            return [try_map(n.declared_features, self.registry) for n in nodes]
        return [frozenset(n.declared_features) for n in nodes]

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        required = self.required(ctx.pod)
        if not required:  # (disabled: Filter passes every node)
            return FilterOutcome.passing(len(idx))
        declared = cached_on(state, f"{NAME}/{','.join(self.registry) if self.maps else '*'}", self._declared)
        missing = [tuple(f for f in required if f not in declared[n]) for n in idx.tolist()]
        labels = ([REASON_V135.format(", ".join(m)) for m in dict.fromkeys(m for m in missing if m)]
                  if self.names_missing else [REASON])
        matrix = np.zeros((len(idx), len(labels)), dtype=bool)
        for k, m in enumerate(missing):
            if m:
                matrix[k, labels.index(REASON_V135.format(", ".join(m))) if self.names_missing else 0] = True
        bad = matrix.any(axis=1)
        return FilterOutcome(np.where(bad, UNRESOLVABLE, 0).astype(np.int8), labels, matrix)

    def signature(self, pod: Pod) -> tuple[str, ...]:
        """What this plugin reads of a pod (upstream's SignPod: the inferred features)."""
        return self.required(pod)
