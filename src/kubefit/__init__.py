"""kubefit: where do these pods go, and how much more fits — kube-scheduler v1.34–v1.37 and Karmada, exactly.

The Python API and the `kubefit` command are thin layers over the same functions. One function per
verb reads scenario files as the command does and returns the result the command renders:

- kube-scheduler: `score`, `simulate` (with `cordon`/`drain`/`remove` for a what-if on the nodes),
  `compare`, `timeline`, `capacity`, `plan`, `consolidate`, `rightsize` (requests from real usage; `RequestsFrom`
  gives any verb the right-sized cluster), `tune`, `check` (assertions on their answers);
- Karmada: `summary`, `estimate`, `schedule`, `divide`, `models_defaults`, `models_validate`,
  `models_classify`.

Step by step, the same pipeline is `load_scenario` → `prepare` → `score_pod`:

    >>> import kubefit
    >>> scenario = kubefit.load_scenario(["examples/docs-bin-packing/cluster.yaml",
    ...                                   "examples/docs-bin-packing/requested-to-capacity-ratio.yaml"])
    >>> prepared = kubefit.prepare(scenario)
    >>> result = kubefit.score_pod(prepared, kubefit.find_pending_pod(scenario, None))
    >>> dict(zip(result.feasible.tolist(), result.total.tolist()))
    {0: 60, 1: 69}
"""

from typing import TYPE_CHECKING

# Where each public name lives. `import kubefit` imports none of them: a name is imported when first read
# (PEP 562), so that the `kubefit` command imports only what its verb runs, after it has tuned the
# collector (`kubefit.cli.run`), and `import kubefit.cli` stays light.
_HOMES = {
    "kubefit.errors": ("ConfigError", "InputError", "KubefitError"),
    "kubefit.k8s.quantity": ("milli_value", "parse_quantity", "value"),
    "kubefit.k8s.requests": ("PodDemand", "pod_demand"),
    "kubefit.manifests.load": ("Scenario",),
    "kubefit.manifests.scenario": ("load_scenario",),
    "kubefit.scheduler.scenario": ("Prepared", "find_pending_pod", "prepare", "score_pod"),
    "kubefit.k8s.version": ("KubeVersion", "for_minor", "resolve"),
    "kubefit.verbs": ("KubefitWarning", "capacity", "check", "compare", "compare_feature_gates", "compare_versions",
                      "consolidate", "divide", "estimate", "models_classify",
                      "models_defaults", "models_validate", "plan", "rightsize", "schedule", "score", "simulate",
                      "summary", "timeline", "tune"),
    "kubefit.manifests.usage.requestsfrom": ("PrometheusQuery", "RequestsFrom"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

if TYPE_CHECKING:  # what type checkers and editors see: the names as if imported here
    from kubefit.errors import ConfigError, InputError, KubefitError
    from kubefit.k8s.quantity import milli_value, parse_quantity, value
    from kubefit.k8s.requests import PodDemand, pod_demand
    from kubefit.k8s.version import KubeVersion, for_minor, resolve
    from kubefit.manifests.load import Scenario
    from kubefit.manifests.scenario import load_scenario
    from kubefit.manifests.usage.requestsfrom import PrometheusQuery, RequestsFrom
    from kubefit.scheduler.scenario import Prepared, find_pending_pod, prepare, score_pod
    from kubefit.verbs import (
        KubefitWarning,
        capacity,
        check,
        compare,
        compare_feature_gates,
        compare_versions,
        consolidate,
        divide,
        estimate,
        models_classify,
        models_defaults,
        models_validate,
        plan,
        rightsize,
        schedule,
        score,
        simulate,
        summary,
        timeline,
        tune,
    )

__all__ = [
    # one function per verb
    "capacity", "check", "compare", "compare_feature_gates", "compare_versions", "consolidate", "divide", "estimate",
    "models_classify", "models_defaults", "models_validate",
    "plan", "rightsize", "schedule", "score", "simulate", "summary", "timeline", "tune",
    # where new requests come from (`rightsize` and every verb's `requests`)
    "PrometheusQuery", "RequestsFrom",
    # the pipeline step by step
    "PodDemand", "Prepared", "Scenario", "find_pending_pod", "load_scenario", "pod_demand", "prepare", "score_pod",
    # quantities
    "milli_value", "parse_quantity", "value",
    # Kubernetes versions
    "KubeVersion", "for_minor", "resolve",
    # errors and warnings
    "ConfigError", "InputError", "KubefitError", "KubefitWarning",
]


def __getattr__(name: str) -> object:
    """A public name, imported from its module when first read (then kept here)."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'kubefit' has no attribute {name!r}")
    from importlib import import_module

    value = globals()[name] = getattr(import_module(home), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
