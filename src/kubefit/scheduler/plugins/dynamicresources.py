"""DynamicResources: pods without `spec.resourceClaims` are not its concern (PreFilter Skip).

kubefit does not model DRA (ResourceClaims, DeviceClasses, ResourceSlices): a pod that has claims is
refused by PreFilter on every node with a message that says so, never placed as if it had none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubefit.api.core import Pod
from kubefit.scheduler.plugins.base import UNRESOLVABLE, CycleContext, FilterOutcome, PreFilterOutcome
from kubefit.scheduler.state import ClusterState

NAME = "DynamicResources"
NOT_MODELLED = "pod has resource claims, which kubefit does not evaluate (DynamicResources is not modelled)"


@dataclass
class DynamicResources:
    name: str = NAME

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        if not ctx.pod.resource_claims:
            return PreFilterOutcome(skip=True)
        return PreFilterOutcome(code=UNRESOLVABLE, reasons=(NOT_MODELLED,))

    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        return FilterOutcome.passing(len(idx))

    def signature(self, pod: Pod) -> tuple:
        return (bool(pod.resource_claims),)
