"""How many more copies of a pod fit (what cluster-capacity reports), placed one by one through the profile.

Each copy is a full scheduling cycle on the cluster as it is (bound pods accounted, other pending pods
ignored), bound to the selected node before the next copy, until a copy fits nowhere or `limit` copies
were placed. Copies never preempt: the count is what fits beside the pods already running.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kubefit.api.core import Pod
from kubefit.errors import InputError
from kubefit.requests import PodDemand, pod_demand
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.postfilter import post_filter_cycle
from kubefit.scheduler.state import ClusterState

UNSCHEDULABLE = "Unschedulable"
LIMIT_REACHED = "LimitReached"


@dataclass
class CapacityResult:
    """The copies placed, per node, and why placing stopped."""

    pod: Pod
    count: int
    per_node: dict[str, int] = field(default_factory=dict)  # node → copies, in node order
    stop_reason: str = UNSCHEDULABLE  # Unschedulable | LimitReached
    message: str = ""

    def to_dict(self) -> dict:
        return {"pod": self.pod.key, "count": self.count, "perNode": self.per_node,
                "stopReason": self.stop_reason, "message": self.message}


def estimate_capacity(state: ClusterState, config: SchedulerConfiguration, pod: Pod, *, limit: int | None = None,
                      tie_break: str = "first", seed: int | None = 0) -> CapacityResult:
    """Place copies of `pod` on a copy of `state` until one fits nowhere (or `limit` is reached)."""
    profile = config.profile(pod.scheduler_name)
    if limit is None and "NodeResourcesFit" not in profile.filter_plugins:
        raise InputError(f"profile {profile.scheduler_name} does not filter with NodeResourcesFit: every copy "
                         f"would fit; give --max")
    count, nodes, message = count_copies(state.copy(), config, pod, pod_demand(pod), limit=limit,
                                         tie_break=tie_break, seed=seed)
    names = state.node_names
    per = Counter(nodes)
    per_node = {names[i]: per[i] for i in sorted(per)}
    if message is None:
        return CapacityResult(pod, count, per_node, LIMIT_REACHED,
                              f"the limit of {limit} cop{'y' if limit == 1 else 'ies'} (--max) was reached")
    return CapacityResult(pod, count, per_node, UNSCHEDULABLE, message)


def count_copies(state: ClusterState, config: SchedulerConfiguration, pod: Pod, demand: PodDemand, *,
                 limit: int | None = None, tie_break: str = "first", seed: int | None = 0,
                 ) -> tuple[int, list[int], str | None]:
    """Place copies of `pod` one by one on `state` until one fits nowhere: (count, nodes, FitError)."""
    engine = Engine(state, config, tie_break=tie_break, seed=seed)
    nodes: list[int] = []
    while limit is None or len(nodes) < limit:
        decision = engine.cycle(pod, demand)
        if decision.node is None:  # kube-scheduler's message, PostFilter part included (nothing is evicted)
            return len(nodes), nodes, post_filter_cycle(engine, pod)[0]
        engine.bind(decision.node, decision.shape)
        nodes.append(decision.node)
    return len(nodes), nodes, None
