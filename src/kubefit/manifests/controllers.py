"""What a deleted pod's controller creates instead: the one path for every pod kubefit takes off a node.

Preemption victims (`simulate`), drained and removed nodes' pods (`--drain`/`--remove`, `consolidate`) all ask
`Controllers.replacement_for` (or `replacement`, for a pod alone). A pod that declares no controller
(`metav1.GetControllerOf`: the owner reference with `controller: true`, or the workload kubefit expanded it
from) is not recreated. Otherwise its controller creates one new pod, pending, with no status:

- ReplicaSet / ReplicationController (a Deployment's pods are its ReplicaSet's): `manageReplicas`
  (pkg/controller/replicaset/replica_set.go) creates `replicas − active` pods, one for the pod gone, named
  from the template's `generateName` `<owner>-` (`metadata.generateName` of the pod when it has one).
- StatefulSet: the same ordinal under the same name (stateful_set_control.go `processReplica` recreates a
  missing ordinal); its claims `<template>-<set>-<ordinal>` are not deleted with the pod, so the replacement
  mounts the same claims (and, for a bound local volume, can only return where the volume is).
- DaemonSet: `manage` (pkg/controller/daemon/daemon_controller.go) creates a pod for each node that should run
  one and has none: the replacement is pinned to the deleted pod's node only (the `metadata.name` node
  affinity the controller sets, `ReplaceDaemonSetPodNodeNameNodeAffinity`); it may then be unschedulable there.
- Job: a deleted pod that had not succeeded counts as failed (pkg/controller/job/job_controller.go,
  `trackJobStatusAndRemoveFinalizers`; a pod the scheduler preempts or an eviction removes has the
  `DisruptionTarget` condition). A `podFailurePolicy` rule on that condition decides first (`Ignore`: not
  counted, replaced; `FailJob`/`FailIndex`: no replacement); otherwise the Job fails once `failed >
  backoffLimit` (`syncJob`'s `exceedsBackoffLimit`, backoffLimit defaulted to 6), and until then the
  controller creates a replacement (after its backoff delay, which kubefit does not model: the pod is queued at
  once). `status.failed` of the Job in the files counts the failures before the run. An Indexed Job's
  replacement keeps its completion index (`<job>-<index>-` + 5 characters).
- Any other controller (an operator's resource) is assumed to recreate the same name.

The new pod is created through the API server: with the scenario's ResourceQuotas (`Controllers.of`), the pods
deleted together are released from `status.used` first (`QuotaAdmission.release`), then each new pod is admitted
or refused (`Controllers.deleted`): a refused one is not created, with the API server's error (`pods "web-" is
forbidden: exceeded quota: ...`, what the controller's failed create reports). The controller's retries after a
refusal are not modelled: within the run the pod stays not created.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubefit.api.core import Pod
from kubefit.errors import InputError
from kubefit.k8s.names import generate_name
from kubefit.k8s.validation import go_quote
from kubefit.manifests.admission import forbidden_error
from kubefit.manifests.documents import Document
from kubefit.manifests.quota import QuotaAdmission
from kubefit.manifests.timing import ARRIVAL_ANNOTATION, DURATION_ANNOTATION, DurationError, parse_duration
from kubefit.manifests.workloads import COMPLETION_INDEX, pinned_affinity, pod_owned_by

RENAMING_CONTROLLERS = ("ReplicaSet", "ReplicationController", "Job", "DaemonSet")  # generateName `<owner>-`
DEFAULT_BACKOFF_LIMIT = 6  # SetDefaults_Job
DISRUPTION_TARGET = "DisruptionTarget"


def controller_of(pod: Pod) -> tuple[str, str] | None:
    """`metav1.GetControllerOf`: the (kind, name) of the owner reference with `controller: true`; a pod kubefit
    expanded from a workload is its workload's."""
    ref = _controller_ref(pod.raw)
    if ref is not None:
        return ref
    if pod.created_by:
        kind, _, name = pod.created_by.partition("/")
        return kind, name
    return None


def _prefix(pod: Pod, owner: tuple[str, str]) -> str | None:
    """The `generateName` the controller creates `pod`'s successor with (None: the same name, a StatefulSet's)."""
    meta = pod.raw.get("metadata") or {}
    prefix = meta.get("generateName") if isinstance(meta.get("generateName"), str) else None
    if owner[0] in RENAMING_CONTROLLERS and not prefix:
        index = (pod.labels or {}).get(COMPLETION_INDEX) if owner[0] == "Job" else None
        prefix = f"{owner[1]}-{index}-" if index is not None else f"{owner[1]}-"
    return prefix


def _controller_ref(body: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, name) of an object's owner reference with `controller: true`."""
    for ref in (body.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("kind")), str(ref.get("name"))
    return None


def _new_pod(pod: Pod, owner: tuple[str, str], seed: str, node: str) -> Pod:
    """The pod the controller creates for `pod`, pending: a StatefulSet's under the same name, a renaming
    controller's under `generateName` + 5 characters (seeded by `seed` and the pod), a DaemonSet's pinned to
    the pod's node `node`. None of the deleted pod's status (container statuses, conditions, nominated node, start
    time, `resourceClaimStatuses`: the resourceclaim controller makes the new pod claims of its own from its
    templates) is carried over, nor the identity the API server gave the deleted pod (`metadata.uid`,
    `resourceVersion`): the new pod is being created (admission treats it so)."""
    meta = dict(pod.raw.get("metadata") or {})
    prefix = _prefix(pod, owner)
    name = pod.name if owner[0] == "StatefulSet" or not prefix else generate_name(prefix, seed, pod.key)
    spec = {k: v for k, v in (pod.raw.get("spec") or {}).items() if k != "nodeName"}
    affinity = pod.affinity
    if owner[0] == "DaemonSet" and node:  # recreated for that node alone
        affinity = spec["affinity"] = pinned_affinity(pod.affinity, node)
    meta = {k: v for k, v in meta.items() if k not in ("uid", "resourceVersion")}
    raw = {**pod.raw, "metadata": {**meta, "name": name}, "spec": spec, "status": {"phase": "Pending"}}
    return replace(pod, name=name, node_name="", phase="Pending", raw=raw, affinity=affinity, container_statuses=(),
                   init_container_statuses=(), conditions=(), nominated_node_name="", start_time="", uid="",
                   resource_claim_statuses=())


def _count(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _disruption_rule(spec: dict[str, Any]) -> str | None:
    """The action of the first `podFailurePolicy` rule matching a pod deleted with the `DisruptionTarget`
    condition (`matchPodFailurePolicy`: rules in order; an `onExitCodes` rule is not evaluated, the deleted
    pod's exit codes being unknown); None when none matches."""
    for rule in ((spec.get("podFailurePolicy") or {}).get("rules") or []):
        if not isinstance(rule, dict):
            continue
        for cond in rule.get("onPodConditions") or []:
            if isinstance(cond, dict) and cond.get("type") == DISRUPTION_TARGET and cond.get("status", "True") == "True":
                return str(rule.get("action"))
    return None


@dataclass
class Controllers:
    """The scenario's controllers as they react, during one run, to the pods deleted from it."""

    workloads: Sequence[Document] = ()
    failed: dict[str, int] = field(default_factory=dict)  # Job (ns/name) → its pods failed so far in this run
    seed: str = "evicted"  # seeds the new pods' names
    quota: QuotaAdmission | None = None  # the scenario's ResourceQuota admission, this run's usage (None: no quota)
    recreate: bool = True  # False: the controllers create nothing (`--no-replace-victims`); quota usage still moves

    @classmethod
    def of(cls, scenario: Any, recreate: bool = True) -> Controllers:
        """The controllers of a loaded scenario (`kubefit.manifests.load.Scenario`): its workloads, and its
        ResourceQuota admission as loading left it (`status.used` after the pods created at load)."""
        return cls(scenario.workloads, quota=scenario.quota or None, recreate=recreate).afresh()

    def afresh(self) -> Controllers:
        """These controllers for a new run: no failures counted yet, the quotas' usage of their own."""
        return Controllers(self.workloads, seed=self.seed, quota=None if self.quota is None else self.quota.copy(),
                           recreate=self.recreate)

    def created(self, pod: Pod) -> str | None:
        """ResourceQuota admission of `pod` created now (a timeline's arrival): None when admitted (charged),
        else the API server's error (`pods "web-" is forbidden: exceeded quota: ...`)."""
        if self.quota is None:
            return None
        message = self.quota.admit(pod)
        return None if message is None else forbidden_error(pod, message)

    def deleted(self, pods: Sequence[Pod], node: str | None = None) -> list[tuple[Pod, Pod, str | None]]:
        """`pods` deleted together (from `node`, default each one's own): their quota usage released, then
        each one's controller's new pod created, in the order given: (deleted pod, new pod, None when the API
        server admits it, else its error) for each pod that gets one (`replacement_for`)."""
        if self.quota is not None:
            for pod in pods:
                self.quota.release(pod)
        made = []
        for pod in pods:
            new = self.replacement_for(pod, node)
            if new is not None:
                made.append((pod, new, self.refusal(pod, new)))
        return made

    def removed(self, pod: Pod) -> None:
        """`pod` deleted with its owner (nothing recreates it): its quota usage released."""
        if self.quota is not None:
            self.quota.release(pod)

    def completed(self, pod: Pod) -> None:
        """`pod` ran to completion (`Succeeded`, still stored): the quota controller's resync counts it in
        `count/pods` only (`PodUsageFunc` of a terminal pod)."""
        if self.quota is not None:
            self.quota.release(pod, terminal=True)

    def refusal(self, pod: Pod, new: Pod) -> str | None:
        """ResourceQuota admission of `new`, the pod `pod`'s controller creates (charged when admitted): None,
        or the API server's error (`admission.NewForbidden`: `pods "<generateName>" is forbidden: ...`, the
        object having no name yet when the controller gives a `generateName`)."""
        if self.quota is None:
            return None
        message = self.quota.admit(new)
        if message is None:
            return None
        owner = controller_of(pod)
        return f"pods {go_quote((owner and _prefix(pod, owner)) or new.name)} is forbidden: {message}"

    def _job(self, pod: Pod, name: str) -> Document | None:
        return next((d for d in self.workloads if d.kind == "Job" and d.name == name and pod_owned_by(pod, d)), None)

    def _job_replaces(self, pod: Pod, name: str) -> bool:
        """Whether the Job creates a pod for its deleted, failed `pod` (see the module's text)."""
        job = self._job(pod, name)
        if job is None:  # not in the files: assumed to go on
            return True
        spec = job.body.get("spec") if isinstance(job.body.get("spec"), dict) else {}
        action = _disruption_rule(spec)
        if action == "Ignore":
            return True
        if action in ("FailJob", "FailIndex"):
            return False
        key = f"{pod.namespace}/{name}"
        status = job.body.get("status") if isinstance(job.body.get("status"), dict) else {}
        self.failed[key] = self.failed.get(key, _count(status.get("failed"), 0)) + 1
        return self.failed[key] <= _count(spec.get("backoffLimit"), DEFAULT_BACKOFF_LIMIT)

    def replacement_for(self, pod: Pod, node: str | None = None) -> Pod | None:
        """The pod `pod`'s controller creates once `pod` is deleted from `node` (default its `spec.nodeName`; a
        pod bound during a simulation has none); None: no controller, or it creates none."""
        owner = controller_of(pod)
        if not self.recreate or owner is None or (owner[0] == "Job" and not self._job_replaces(pod, owner[1])):
            return None
        return _new_pod(pod, owner, self.seed, node or pod.node_name)


def replacement(pod: Pod, workloads: Sequence[Document] = ()) -> Pod | None:
    """`Controllers.replacement_for` of a pod alone, with the scenario's `workloads` when known."""
    return Controllers(workloads).replacement_for(pod)


# --------------------------------------------------------------------------- owners deleted (a timeline's)

def restarts_always(pod: Pod) -> bool:
    """`spec.restartPolicy` Always (the default; what a ReplicaSet's, StatefulSet's or DaemonSet's template must
    say: pkg/apis/apps/validation `ValidatePodTemplateSpecForReplicaSet`, `ValidateStatefulSetSpec`,
    `ValidateDaemonSetSpec`): the kubelet restarts its containers when they exit (pkg/kubelet/kuberuntime
    `computePodActions`), so the pod never ends by itself — it leaves only when deleted. A Job's pod (Never or
    OnFailure) completes instead."""
    return str((pod.raw.get("spec") or {}).get("restartPolicy") or "Always") == "Always"


def _namespace(doc: Document) -> str:
    meta = doc.body.get("metadata") if isinstance(doc.body.get("metadata"), dict) else {}
    return str(meta.get("namespace") or "default")


class Owners:
    """The scenario's workloads as owners: each pod's chain of controllers (a Deployment's pod: its ReplicaSet,
    then the Deployment) and when an owner is deleted (`kubefit.io/duration` on the workload itself, from its
    `kubefit.io/arrival`, default 0). Deleting an owner deletes its dependents, the pods down its chain
    (the garbage collector's cascading deletion, pkg/controller/garbagecollector `attemptToDeleteItem`: a
    dependent whose owner is gone is deleted), and no controller recreates them."""

    def __init__(self, workloads: Sequence[Document]) -> None:
        self.docs = {(d.kind, _namespace(d), d.name): d for d in workloads}
        self.deleted_at: dict[tuple[str, str, str], int] = {}
        for key, doc in self.docs.items():
            meta = doc.body.get("metadata") if isinstance(doc.body.get("metadata"), dict) else {}
            annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
            if annotations.get(DURATION_ANNOTATION) is not None:
                self.deleted_at[key] = (_time(doc, annotations, ARRIVAL_ANNOTATION) or 0) + (
                    _time(doc, annotations, DURATION_ANNOTATION) or 0)

    def chain(self, pod: Pod) -> tuple[tuple[str, str, str], ...]:
        """(kind, namespace, name) of the pod's controller, its controller's, ... (the workload kubefit expanded
        it from included)."""
        out: list[tuple[str, str, str]] = []
        if pod.created_by:
            kind, _, name = pod.created_by.partition("/")
            out.append((kind, pod.namespace, name))
        owner = controller_of(pod)
        while owner is not None:
            key = (owner[0], pod.namespace, owner[1])
            if key in out:
                break
            out.append(key)
            doc = self.docs.get(key)
            owner = None if doc is None else _controller_ref(doc.body)
        return tuple(out)


def _time(doc: Document, annotations: dict[str, Any], key: str) -> int | None:
    value = annotations.get(key)
    if value is None:
        return None
    try:
        return parse_duration(str(value))
    except DurationError as exc:
        raise InputError(str(exc), file=doc.source, obj=doc.label, field=f"metadata.annotations.{key}") from None
