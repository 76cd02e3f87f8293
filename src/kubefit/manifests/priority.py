"""Pod priority as the API server's Priority admission sets it: `priorityClassName` → `spec.priority`.

A pod given without `spec.priority` takes the value of its PriorityClass (the scenario's
`scheduling.k8s.io/v1` PriorityClass objects, plus the built-in `system-cluster-critical` and
`system-node-critical`), or, naming none, the global default class's (the lowest value if several are
marked `globalDefault`).  A class that does not exist is refused, as the API server refuses the pod.
Pods that carry `spec.priority` (everything `kubectl get -o yaml` prints) are used as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kubefit.api.core import Pod
from kubefit.errors import InputError
from kubefit.manifests.documents import Document
from kubefit.manifests.load import Scenario

SYSTEM_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000


def _classes(docs: list[Document]) -> tuple[dict[str, int], int | None]:
    """PriorityClass name → value, and the global default's value (None when no class is the default)."""
    classes = dict(SYSTEM_CLASSES)
    default: int | None = None
    for doc in docs:
        value = doc.body.get("value")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"must be an integer, got {value!r}", file=doc.source, obj=doc.label, field="value")
        if value > HIGHEST_USER_DEFINABLE_PRIORITY and doc.name not in SYSTEM_CLASSES:
            raise InputError(f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
                             file=doc.source, obj=doc.label, field="value")
        classes[doc.name] = value
        if doc.body.get("globalDefault") is True:
            default = value if default is None else min(default, value)
    return classes, default


def _where(pod: Any) -> tuple[str, str]:
    """The object and field path that name a pod's priority class (its workload's template when generated)."""
    if pod.created_by:
        return pod.created_by, "spec.template.spec.priorityClassName"
    return f"Pod/{pod.name}", "spec.priorityClassName"


def priority_admission(scenario: Scenario) -> Callable[[Pod], Pod]:
    """The Priority admission of the scenario's PriorityClasses: a function giving a pod without `spec.priority`
    the value of its (or the default) PriorityClass (the pod itself when it has one or no class applies)."""
    classes, default = _classes([d for d in scenario.skipped if d.kind == "PriorityClass"])

    def admit(pod: Pod) -> Pod:
        spec = pod.raw.get("spec") or {}
        if spec.get("priority") is not None:
            return pod
        name = spec.get("priorityClassName")
        if name:
            if name not in classes:
                obj, field = _where(pod)
                raise InputError(f"no PriorityClass with name {name} was found", file=pod.source, obj=obj,
                                 field=field)
            return replace(pod, priority=classes[name])
        return pod if default is None else replace(pod, priority=default)
    return admit


def resolve_priorities(scenario: Scenario) -> None:
    """Give each pod without `spec.priority` the value of its (or the default) PriorityClass."""
    admit = priority_admission(scenario)
    scenario.pods = [admit(pod) for pod in scenario.pods]
