"""SchedulingGates (PreEnqueue): a pod with `spec.schedulingGates` never gets a scheduling cycle."""

from __future__ import annotations

from dataclasses import dataclass

from kubefit.api.core import Pod
from kubefit.scheduler.plugins.base import UNRESOLVABLE, PreFilterOutcome

NAME = "SchedulingGates"


@dataclass
class SchedulingGates:
    name: str = NAME

    def pre_enqueue(self, pod: Pod, state: object = None) -> PreFilterOutcome | None:
        """None: the pod may be queued; else UnschedulableAndUnresolvable `waiting for scheduling gates: [a b]`."""
        if not pod.scheduling_gates:
            return None
        return PreFilterOutcome(code=UNRESOLVABLE,
                                reasons=(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]",))

    def signature(self, pod: Pod) -> tuple:
        return pod.scheduling_gates
