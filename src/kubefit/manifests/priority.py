"""Pod priority as the API server's Priority admission sets it: `priorityClassName` → `spec.priority` and
`spec.preemptionPolicy`.

A pod given without `spec.priority` takes the value and the preemption policy of its PriorityClass (the
scenario's `scheduling.k8s.io/v1` PriorityClass objects, plus the built-in `system-cluster-critical` and
`system-node-critical`), or, naming none, the global default class's (the lowest value if several are
marked `globalDefault`; with none, 0 and `PreemptLowerPriority`), as `admitPod` of
plugin/pkg/admission/priority/admission.go does. A class that does not exist forbids the pod ("no
PriorityClass with name X was found"), and so does a `spec.preemptionPolicy` other than the class's
("the string value of PreemptionPolicy (Never) must not be provided in pod spec; ..."): a Pod document is
refused, a workload's controller creates none of its pods (`kubefit.manifests.admission`). Pods that carry
`spec.priority` (everything `kubectl get -o yaml` prints) are used as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from kubefit.api.core import Pod
from kubefit.errors import Forbidden, InputError
from kubefit.k8s.validation import aggregate, not_supported
from kubefit.manifests.documents import Document
from kubefit.manifests.fastpod import names_priority, spec_head
from kubefit.manifests.load import Scenario

PREEMPT_LOWER_PRIORITY, NEVER = "PreemptLowerPriority", "Never"
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000


@dataclass(frozen=True)
class PriorityClass:
    """What a pod takes from its class: `value` and `preemptionPolicy` (defaulted to PreemptLowerPriority,
    `SetDefaults_PriorityClass`)."""

    value: int
    preemption_policy: str = PREEMPT_LOWER_PRIORITY


SYSTEM_CLASSES = {"system-cluster-critical": PriorityClass(2000000000),
                  "system-node-critical": PriorityClass(2000001000)}
NO_DEFAULT = PriorityClass(0)  # getDefaultPriority without a default class


def _decode(doc: Document) -> PriorityClass:
    """One PriorityClass document, checked as `ValidatePriorityClass` checks `value` and `preemptionPolicy`."""
    value = doc.body.get("value")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be an integer, got {value!r}", file=doc.source, obj=doc.label, field="value")
    if value > HIGHEST_USER_DEFINABLE_PRIORITY and doc.name not in SYSTEM_CLASSES:
        raise InputError(f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
                         file=doc.source, obj=doc.label, field="value")
    policy = doc.body.get("preemptionPolicy")
    if policy is None:
        return PriorityClass(value)
    if policy not in (PREEMPT_LOWER_PRIORITY, NEVER):
        raise InputError(aggregate([not_supported("preemptionPolicy", policy, (PREEMPT_LOWER_PRIORITY, NEVER))]),
                         file=doc.source, obj=doc.label)
    return PriorityClass(value, policy)


def _classes(docs: list[Document]) -> tuple[dict[str, PriorityClass], PriorityClass]:
    """PriorityClass name → class, and what a pod naming none takes (`getDefaultPriority`: the global default
    of lowest value, else 0 and PreemptLowerPriority)."""
    classes = dict(SYSTEM_CLASSES)
    default: PriorityClass | None = None
    for doc in docs:
        pc = classes[doc.name] = _decode(doc)
        if doc.body.get("globalDefault") is True and (default is None or pc.value < default.value):
            default = pc
    return classes, default or NO_DEFAULT


def priority_classes(scenario: Scenario) -> tuple[dict[str, PriorityClass], PriorityClass]:
    """The scenario's PriorityClasses by name (the system ones included) and what an object naming none takes."""
    return _classes([d for d in scenario.skipped if d.kind == "PriorityClass"])


def priority_admission(scenario: Scenario) -> Callable[[Pod], Pod]:
    """The Priority admission of the scenario's PriorityClasses: a function giving a pod without `spec.priority`
    its class's (or the default's) value and preemption policy, raising `Forbidden` as `admitPod` does (the
    pod itself when it carries `spec.priority`)."""
    classes, default = _classes([d for d in scenario.skipped if d.kind == "PriorityClass"])

    def admit(pod: Pod) -> Pod:
        if names_priority(pod):  # (a pod still its JSON: the text says)
            return pod
        spec = spec_head(pod)
        if spec.priority is not None:
            return pod
        name = spec.priorityClassName
        pc = classes.get(name) if name else default
        if pc is None:
            raise Forbidden(f"no PriorityClass with name {name} was found", "spec.priorityClassName")
        given = spec.preemptionPolicy
        if given is not None and given != pc.preemption_policy:
            raise Forbidden(f"the string value of PreemptionPolicy ({given}) must not be provided in pod spec; "
                            f"priority admission controller computed {pc.preemption_policy} from the given "
                            f"PriorityClass name", "spec.preemptionPolicy")
        if (pod.priority, pod.preemption_policy) == (pc.value, pc.preemption_policy):
            return pod  # as decoded: no copy (a large scenario's pods mostly take the defaults)
        return replace(pod, priority=pc.value, preemption_policy=pc.preemption_policy)
    return admit
