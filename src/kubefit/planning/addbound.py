"""A lower bound on the template nodes a plan adds, from requests: below it no simulation can succeed.

`plan` looks for the fewest copies of the templates with which the scenario's queue schedules its target (what
the most generous cluster schedules). Whatever the scheduler does, the queue pods it schedules are bound at once
with the pods that stay on the nodes, and NodeResourcesFit's Filter keeps every node within its allocatable
(`fitsRequest`: requested + the pod's request ≤ allocatable, pkg/scheduler/framework/plugins/noderesources/fit.go)
for every resource it checks, the number of pods among them. So for each such resource r:

    Σ over the scheduled queue pods of their request of r  ≤  what the cluster's nodes leave for them  +  Σ_t k_t · allocatable_t(r)

- the scheduled pods number at least `target`, so their requests add up to at least the `target` smallest
  requests of r among the queued pods (each resource on its own);
- on each of today's nodes they get at most its allocatable less what the pods that stay there request (never
  less than nothing: a node already over its allocatable takes no more): a bound pod leaves only when
  DefaultPreemption evicts it for a pod of higher priority, so the pods whose priority no queued pod exceeds
  (with a preemption policy other than Never) stay; the others are counted as gone;
- a template copy gives at most its allocatable (its DaemonSet pods, counted as nothing, only take from it).

With one template that is k ≥ ⌈(need − left) / allocatable⌉ for every resource, the bound being the largest; with
several, the same inequality with the other templates' counts fixed (`TemplateBound.fewest`). The bound is
valid whatever the placement (it reads requests only), and tight when pods pack: the search starts there
(`plan`), and a count below it needs no simulation to be refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Pod
from kubefit.k8s.requests import pod_demand
from kubefit.k8s.resourcenames import PODS
from kubefit.planning.lowerbound import bounded_resources
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.state import ClusterState

NEVER = "Never"


@dataclass
class TemplateBound:
    """Per bounded resource: what the queue's `target` smallest requests need beyond what today's nodes leave
    them, and each template's allocatable of it."""

    resources: list[str]
    need: list[int]  # per resource: Σ of the target smallest requests − what the nodes leave (may be ≤ 0)
    allocatable: list[list[int]]  # per template, per resource

    def fewest(self, t: int, counts: Sequence[int]) -> int:
        """The fewest copies of template t that can hold the target, the other templates' counts as `counts`
        (0 when requests alone do not tell; never more than is needed: a lower bound)."""
        low = 0
        for r, need in enumerate(self.need):
            rest = need - sum(self.allocatable[u][r] * c for u, c in enumerate(counts) if u != t)
            per_copy = self.allocatable[t][r]
            if rest > 0 and per_copy > 0:
                low = max(low, -(-rest // per_copy))
        return low


def template_bound(state: ClusterState, config: SchedulerConfiguration, queue: Sequence[Pod], target: int,
                   templates: Sequence[ClusterState]) -> TemplateBound:
    """The bound of `queue` (the pods waiting, in order) scheduling `target` of its pods on `state` (today's
    nodes and their pods) plus copies of the templates (each compiled alone: `templates`, one node each, its
    columns named by `templates[t].resources`)."""
    names = [r for r in bounded_resources(state, config) if r in state.index]
    if target <= 0 or not names or not queue:
        return TemplateBound(names, [0] * len(names), [[0] * len(names) for _ in templates])
    demands = np.array([_requests(state, pod, names) for pod in queue], dtype=object)  # Python ints: never wrap
    top = max((p.priority for p in queue if p.preemption_policy != NEVER), default=None)
    present = np.ones(len(state), dtype=bool) if state.removed is None else ~state.removed
    left = [0] * len(names)  # what today's nodes leave the queue: each node's room, never below 0
    for n in np.flatnonzero(present).tolist():
        held = [0] * len(names)
        for pod in state.pods[n]:
            if top is None or pod.priority >= top:  # stays: no queued pod may evict it
                held = [a + b for a, b in zip(held, _bound(state, pod, names), strict=True)]
        for r, name in enumerate(names):
            left[r] += max(int(state.allocatable[n, state.index[name]]) - held[r], 0)
    need = []
    for r in range(len(names)):
        smallest = sorted(int(d) for d in demands[:, r])[:target]
        need.append(sum(smallest) - left[r])
    allocatable = [[int(t.allocatable[0, t.index[n]]) if n in t.index else 0 for n in names] for t in templates]
    return TemplateBound(names, need, allocatable)


def _requests(state: ClusterState, pod: Pod, names: list[str]) -> list[int]:
    """What the pod asks of each resource as NodeResourcesFit checks it (one pod of the pods resource)."""
    requests = pod_demand(pod).requests
    return [1 if n == PODS else int(requests.get(n, 0)) for n in names]


def _bound(state: ClusterState, pod: Pod, names: list[str]) -> list[int]:
    """What a bound pod holds of each resource on its node (`bound_demand`: its status resources counted)."""
    requests = state.bound_demand(pod).requests
    return [1 if n == PODS else int(requests.get(n, 0)) for n in names]


def copies_bound(config: SchedulerConfiguration, pods: Sequence[Pod], templates: Sequence[ClusterState],
                 daemons: Sequence[Sequence[Pod]]) -> tuple[TemplateBound, int]:
    """The requests' bound of `pods` (trial 0's pending pods) on fresh copies of the templates alone, each copy
    less what its DaemonSet pods (`daemons[t]`, created with the node and queued first) request: `plan`'s first
    estimate of its answer (issue 47), and how many of the pods it counts. A pod that asks more of some resource
    than every copy has left after its DaemonSet pods fits no copy and is left out (it is pending for want of
    no count of the templates); the others are counted whatever their zone or affinity. Not a bound of `plan`'s
    answer (today's nodes are not counted, and the pods trial 0 placed may move): a guess that `_estimate`
    verifies on the copies by simulation."""
    names = sorted({r for t in templates for r in bounded_resources(t, config) if r in t.index})
    if not names or not pods:
        return TemplateBound(names, [0] * len(names), [[0] * len(names) for _ in templates]), len(pods)
    free = []
    for t, pods_of_copy in zip(templates, daemons, strict=True):
        taken = [sum(col) for col in zip(*([0] * len(names), *(_requests(t, p, names) for p in pods_of_copy)),
                                          strict=True)]
        free.append([(int(t.allocatable[0, t.index[n]]) if n in t.index else 0) - taken[r] for r, n in enumerate(names)])
    asked = [_requests(templates[0], pod, names) for pod in pods]
    fitting = [a for a in asked if any(all(x <= f for x, f in zip(a, room, strict=True)) for room in free)]
    need = [sum(col) for col in zip(*([0] * len(names), *fitting), strict=True)]
    return TemplateBound(names, need, [[max(f, 0) for f in room] for room in free]), len(fitting)
