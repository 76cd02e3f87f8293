"""Which kinds of object a scenario reads as workloads, and which it skips (named once to the user).

Workload controllers (Deployment, ReplicaSet, StatefulSet, ReplicationController, Job, DaemonSet) are
expanded into the pods they create (workloads.py).  Objects that place no pod themselves (Secret,
ConfigMap, RBAC, custom resources, …) are kept aside and named in one note, never dropped
silently; a kind that is neither is a typo and refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from kubefit.manifests.served import builtin_kind_groups, serving_minors, unserved_message

# The scheduler configuration: at most one per scenario (any supported version, or a legacy Policy).
SCHEDULER_CONFIG_KINDS = ("KubeSchedulerConfiguration", "Policy")
# Lists whose `items` are read as if each item were a document of its own, as kubectl flattens them: these
# and any other object with `items` (a `ConfigMapList`, a `RoleBindingList`; see documents._flatten).
LIST_KINDS = ("List", "NodeList", "PodList")
# Kinds read by other layers (Karmada fleets); kept as raw documents for them to decode.
FLEET_KINDS = ("Cluster", "ResourceBinding", "PropagationPolicy", "ClusterPropagationPolicy")

# kind → the apiVersion its controller reads
WORKLOAD_KINDS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                  "DaemonSet": "apps/v1", "ReplicationController": "v1", "Job": "batch/v1"}

# The spec fields of the workload controllers (v1.34 API types), refused when unknown.
_REPLICA_SPEC = frozenset({"replicas", "minReadySeconds", "selector", "template"})
SPEC_FIELDS: dict[str, frozenset[str]] = {
    "Deployment": frozenset({"replicas", "selector", "template", "strategy", "minReadySeconds",
                             "revisionHistoryLimit", "paused", "progressDeadlineSeconds"}),
    "ReplicaSet": _REPLICA_SPEC,
    "ReplicationController": _REPLICA_SPEC,
    "StatefulSet": frozenset({"serviceName", "replicas", "selector", "template", "volumeClaimTemplates",
                              "podManagementPolicy", "updateStrategy", "revisionHistoryLimit", "minReadySeconds",
                              "persistentVolumeClaimRetentionPolicy", "ordinals"}),
    "DaemonSet": frozenset({"selector", "template", "updateStrategy", "minReadySeconds", "revisionHistoryLimit"}),
    "Job": frozenset({"parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy", "successPolicy",
                      "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector",
                      "template", "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy",
                      "managedBy"}),
}

# The status fields of the kinds kubefit reads but whose status it does not (v1.34 API types): checked like
# their spec, so a typo there is refused by name rather than kept unread. (Pod, Node and
# PodDisruptionBudget statuses are read, and checked by their decoders.)
_CONTROLLER_STATUS = frozenset({"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                                "observedGeneration", "conditions"})
STATUS_FIELDS: dict[str, frozenset[str]] = {
    "Namespace": frozenset({"phase", "conditions"}),
    "Service": frozenset({"loadBalancer", "conditions"}),
    "ReplicationController": _CONTROLLER_STATUS,
    "ReplicaSet": _CONTROLLER_STATUS | {"terminatingReplicas"},
    "Deployment": frozenset({"observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                             "availableReplicas", "unavailableReplicas", "terminatingReplicas", "conditions",
                             "collisionCount"}),
    "StatefulSet": frozenset({"observedGeneration", "replicas", "readyReplicas", "currentReplicas",
                              "updatedReplicas", "currentRevision", "updateRevision", "collisionCount",
                              "conditions", "availableReplicas"}),
    "DaemonSet": frozenset({"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                            "numberReady", "observedGeneration", "updatedNumberScheduled", "numberAvailable",
                            "numberUnavailable", "collisionCount", "conditions"}),
    "Job": frozenset({"conditions", "startTime", "completionTime", "active", "succeeded", "failed",
                      "terminating", "completedIndexes", "failedIndexes", "uncountedTerminatedPods", "ready"}),
    "PersistentVolumeClaim": frozenset({"phase", "accessModes", "capacity", "conditions", "allocatedResources",
                                        "allocatedResourceStatuses", "currentVolumeAttributesClassName",
                                        "modifyVolumeStatus"}),
    "PersistentVolume": frozenset({"phase", "message", "reason", "lastPhaseTransitionTime"}),
}

# Built-in kinds that create no pod when a scenario is loaded: every kind a supported kube-apiserver serves
# (`served.SERVED`) that kubefit does not read is skipped and named; these are the common ones, named here for
# the reader (a test checks each is served).
SKIPPED_KINDS = frozenset({
    "Secret", "ConfigMap", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
    "CustomResourceDefinition", "Endpoints", "EndpointSlice", "Ingress", "IngressClass",
    "NetworkPolicy", "PersistentVolumeClaim",
    "CSIStorageCapacity", "VolumeAttachment",
    "PriorityClass", "HorizontalPodAutoscaler", "CronJob", "ControllerRevision", "Event", "Lease",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "APIService",
    "PodTemplate", "VolumeAttributesClass", "ServiceCIDR", "IPAddress", "ClusterTrustBundle",
    "StorageVersionMigration", "CertificateSigningRequest", "FlowSchema", "PriorityLevelConfiguration"})

# Of those, the ones a real cluster would let change where or whether pods run and kubefit does not
# evaluate; the note says so.  (PriorityClass is read: priority.py gives pods their class's value.)
AFFECTS_SCHEDULING = frozenset({
    "PersistentVolumeClaim",
    "CSIStorageCapacity",
    "HorizontalPodAutoscaler", "CronJob",
    # admission kubefit does not run: webhooks and policies may change pods (a sidecar's requests) or refuse them
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "MutatingAdmissionPolicy"})


# The API groups kube-apiserver serves itself (v1.34 … v1.37, `served.SERVED`); every other dotted group is a
# CustomResourceDefinition's, `*.k8s.io` ones included (gateway.networking.k8s.io, snapshot.storage.k8s.io,
# metrics.k8s.io, ...).
BUILTIN_GROUPS = frozenset(g for groups in builtin_kind_groups().values() for g in groups if "." in g)
# The API group of each Karmada kind a fleet reads (`kubefit.api.karmada`, Karmada's pkg/apis).
FLEET_GROUPS = {"Cluster": "cluster.karmada.io", "ResourceBinding": "work.karmada.io",
                "PropagationPolicy": "policy.karmada.io", "ClusterPropagationPolicy": "policy.karmada.io"}


def custom_resource(body: dict[str, Any]) -> bool:
    """An object of a CustomResourceDefinition: its API group is dotted and not one kube-apiserver serves."""
    version = body.get("apiVersion")
    if not isinstance(version, str) or "/" not in version:
        return False
    group = version.split("/", 1)[0]
    return "." in group and group not in BUILTIN_GROUPS


def api_group(body: dict[str, Any]) -> str:
    """The API group of an object's apiVersion ("" for the core group's `v1`)."""
    version = body.get("apiVersion")
    return version.rpartition("/")[0] if isinstance(version, str) else ""


def foreign_kind(doc: Any) -> bool:
    """A custom resource whose kind is also a kind kubefit reads, of another API group: an OpenKruise
    `apps.kruise.io` StatefulSet, a Knative `serving.knative.dev` Service, a CloudNativePG `postgresql.cnpg.io`
    Cluster (not Karmada's). The API server tells kinds apart by group: it is a custom resource, skipped (and
    named with what its operator creates, `operators.operator_note`), not the built-in kind."""
    if not custom_resource(doc.body):
        return False
    groups = builtin_kind_groups().get(doc.kind)
    if groups is None and doc.kind in FLEET_GROUPS:
        groups = frozenset({FLEET_GROUPS[doc.kind]})
    return groups is not None and api_group(doc.body) not in groups


def skipped_kind(doc: Any) -> bool:
    """A document (load.Document) of a kind that places no pod: a custom resource, or a kind some supported
    kube-apiserver serves in that version (`served`): kept aside, named once."""
    return custom_resource(doc.body) or bool(serving_minors(str(doc.body.get("apiVersion")), doc.kind))


def unserved_in(docs: list[Any], minor: int) -> tuple[Any, str] | None:
    """The first skipped document (with kube-apiserver's refusal) whose apiVersion the answered minor does not
    serve although another supported minor does (`certificates.k8s.io/v1 ClusterTrustBundle` on v1.36): the
    scenario loads for every version, and the version's own API server is asked once the version is known."""
    for doc in docs:
        version = str(doc.body.get("apiVersion"))
        minors = serving_minors(version, doc.kind)
        if minors and minor not in minors:
            return doc, unserved_message(version, doc.kind, minor)
    return None


# Kinds a scenario reads although they place no pod, so not named as skipped (PriorityClass: priority.py).
READ_ASIDE = frozenset({"PriorityClass"})
# Usage kubefit reads with --requests-from (kubefit.manifests.usage): named by `usage_note`, not as skipped.
USAGE_KINDS = frozenset({"VerticalPodAutoscaler", "VerticalPodAutoscalerCheckpoint", "PodMetrics"})


def usage_note(docs: list[Any]) -> str | None:
    """The note for usage objects among the files (None when there are none): a VPA's admission controller
    rewrites its pods' requests in a real cluster; kubefit does so with `--requests-from vpa` only."""
    vpas = [d for d in docs if d.kind == "VerticalPodAutoscaler"]
    others = Counter(d.kind for d in docs if d.kind in USAGE_KINDS and d.kind != "VerticalPodAutoscaler")
    if not vpas and not others:
        return None
    parts = [f"{len(vpas)} VerticalPodAutoscaler(s)"] if vpas else []
    parts += [f"{n} {kind}(s)" for kind, n in sorted(others.items())]
    return (f"{', '.join(parts)} in the files: usage, read by --requests-from (kubefit rightsize and the verbs' "
            f"option), ignored otherwise" + ("; in a real cluster a VPA's admission controller rewrites the requests "
                                             "of the pods it creates" if vpas else ""))
KUSTOMIZE_GROUP = "kustomize.config.k8s.io"


def kustomization(doc: Any) -> bool:
    """kustomize's own file (`kustomization.yaml`: Kustomization, Component), not an object an API server serves."""
    version = doc.body.get("apiVersion")
    return isinstance(version, str) and version.split("/", 1)[0] == KUSTOMIZE_GROUP


def kustomize_note(docs: list[Any]) -> str | None:
    """The warning for kustomization files read with a folder (None when there are none): `kubectl apply -f`
    refuses them (no such API), and what they would do to the other files is not done."""
    found = [d for d in docs if kustomization(d)]
    if not found:
        return None
    named = ", ".join(d.source for d in found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return (f"{named}: a {found[0].kind} is kustomize's build file, not an API object (kubectl apply -f refuses "
            f"it): the other files were read as they are, without its namespace, patches, images or replicas; "
            f"`kubectl kustomize DIR | kubefit ... -f -` reads what kubectl apply -k would send")


def skipped_note(docs: list[Any], named_apart: Callable[[Any], bool] = lambda _doc: False) -> str | None:
    """One note naming every skipped kind with its count (None when nothing was skipped), those `named_apart`
    (custom resources an operator turns into pods: `operators.operator_note`), kustomization files
    (`kustomize_note`) and kinds read aside (`READ_ASIDE`) apart."""
    docs = [d for d in docs if not named_apart(d) and not kustomization(d) and d.kind not in READ_ASIDE
            and d.kind not in USAGE_KINDS]
    if not docs:
        return None
    counts = Counter(d.kind for d in docs)
    named = ", ".join(f"{kind} ({n})" for kind, n in sorted(counts.items()))
    note = f"skipped {len(docs)} object(s) that place no pod: {named}"
    relevant = sorted(k for k in counts if k in AFFECTS_SCHEDULING)
    if relevant:
        note += (f"; in a real cluster {', '.join(relevant)} can still change where or whether pods run, "
                 f"kubefit does not evaluate them")
    return note


# API versions no supported kube-apiserver (v1.34 … v1.37) serves any more, with the release that removed them
# and the version to use (kubernetes.io "Deprecated API Migration Guide"): the API server answers `no matches for
# kind … in version …`, so a scenario holding one is refused rather than read as if it were served.
_REMOVED = {
    "1.16": {"extensions/v1beta1": ("DaemonSet", "Deployment", "ReplicaSet", "NetworkPolicy", "PodSecurityPolicy"),
             "apps/v1beta1": ("Deployment", "StatefulSet", "ControllerRevision"),
             "apps/v1beta2": ("DaemonSet", "Deployment", "ReplicaSet", "StatefulSet", "ControllerRevision")},
    "1.22": {"extensions/v1beta1": ("Ingress",), "networking.k8s.io/v1beta1": ("Ingress", "IngressClass"),
             "authentication.k8s.io/v1beta1": ("TokenReview",),
             "authorization.k8s.io/v1beta1": ("LocalSubjectAccessReview", "SelfSubjectAccessReview",
                                              "SelfSubjectRulesReview", "SubjectAccessReview"),
             "admissionregistration.k8s.io/v1beta1": ("MutatingWebhookConfiguration",
                                                      "ValidatingWebhookConfiguration"),
             "apiextensions.k8s.io/v1beta1": ("CustomResourceDefinition",),
             "apiregistration.k8s.io/v1beta1": ("APIService",),
             "certificates.k8s.io/v1beta1": ("CertificateSigningRequest",),
             "coordination.k8s.io/v1beta1": ("Lease",),
             "rbac.authorization.k8s.io/v1beta1": ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
             "scheduling.k8s.io/v1beta1": ("PriorityClass",),
             "storage.k8s.io/v1beta1": ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment")},
    # kubernetes#104248 (v1.23): "The rbac.authorization.k8s.io/v1alpha1 API version is removed ...
    # The scheduling.k8s.io/v1alpha1 API version is removed"
    "1.23": {"rbac.authorization.k8s.io/v1alpha1": ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
             "scheduling.k8s.io/v1alpha1": ("PriorityClass",)},
    "1.25": {"batch/v1beta1": ("CronJob",), "discovery.k8s.io/v1beta1": ("EndpointSlice",),
             "events.k8s.io/v1beta1": ("Event",), "autoscaling/v2beta1": ("HorizontalPodAutoscaler",),
             "policy/v1beta1": ("PodDisruptionBudget", "PodSecurityPolicy"), "node.k8s.io/v1beta1": ("RuntimeClass",)},
    "1.26": {"flowcontrol.apiserver.k8s.io/v1beta1": ("FlowSchema", "PriorityLevelConfiguration"),
             "autoscaling/v2beta2": ("HorizontalPodAutoscaler",)},
    "1.27": {"storage.k8s.io/v1beta1": ("CSIStorageCapacity",)},
    "1.29": {"flowcontrol.apiserver.k8s.io/v1beta2": ("FlowSchema", "PriorityLevelConfiguration")},
    "1.32": {"flowcontrol.apiserver.k8s.io/v1beta3": ("FlowSchema", "PriorityLevelConfiguration")},
}
REMOVED_API_VERSIONS: dict[tuple[str, str], str] = {
    (version, kind): release for release, groups in _REMOVED.items() for version, kinds in groups.items()
    for kind in kinds}
_SERVED = {"PodSecurityPolicy": None, "Ingress": "networking.k8s.io/v1", "NetworkPolicy": "networking.k8s.io/v1",
           "CronJob": "batch/v1", "HorizontalPodAutoscaler": "autoscaling/v2", "PodDisruptionBudget": "policy/v1",
           "FlowSchema": "flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration": "flowcontrol.apiserver.k8s.io/v1"}


def removed_api_message(api_version: str, kind: str) -> str | None:
    """The API server's refusal of a kind in an API version no supported release serves, or None.

    >>> removed_api_message("batch/v1beta1", "CronJob")
    'no matches for kind "CronJob" in version "batch/v1beta1" (removed in Kubernetes v1.25; use batch/v1)'
    """
    release = REMOVED_API_VERSIONS.get((api_version, kind))
    if release is None:
        return None
    group = api_version.split("/")[0] if "/" in api_version else ""
    served = _SERVED.get(kind, f"{group}/v1" if group not in ("extensions",) else "apps/v1")
    if kind in ("Deployment", "DaemonSet", "ReplicaSet", "StatefulSet", "ControllerRevision"):
        served = "apps/v1"
    advice = f"use {served}" if served else "it has no successor"
    return f'no matches for kind "{kind}" in version "{api_version}" (removed in Kubernetes v{release}; {advice})'
