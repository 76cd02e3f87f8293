"""kubefit: where do these pods go, and how much more fits — kube-scheduler v1.34 and Karmada, exactly.

The Python API and the `kubefit` command are thin layers over the same functions:

    >>> import kubefit
    >>> scenario = kubefit.load_scenario(["examples/docs-bin-packing/cluster.yaml",
    ...                                   "examples/docs-bin-packing/requested-to-capacity-ratio.yaml"])
    >>> prepared = kubefit.prepare(scenario)
    >>> result = kubefit.score_pod(prepared, kubefit.find_pending_pod(scenario, None))
    >>> dict(zip(result.feasible.tolist(), result.total.tolist()))
    {0: 60, 1: 69}
"""

from kubefit.errors import ConfigError, InputError, KubefitError
from kubefit.load import Scenario, load_scenario
from kubefit.quantity import milli_value, parse_quantity, value
from kubefit.requests import PodDemand, pod_demand
from kubefit.scheduler.scenario import Prepared, find_pending_pod, prepare, score_pod

__all__ = [
    "ConfigError", "InputError", "KubefitError", "PodDemand", "Prepared", "Scenario",
    "find_pending_pod", "load_scenario", "milli_value", "parse_quantity", "pod_demand", "prepare",
    "score_pod", "value",
]
