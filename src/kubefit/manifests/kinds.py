"""Which kinds of object a scenario reads as workloads, and which it skips (named once to the user).

Workload controllers (Deployment, ReplicaSet, StatefulSet, ReplicationController, Job, DaemonSet) are
expanded into the pods they create (workloads.py).  Objects that place no pod themselves (Secret,
ConfigMap, RBAC, custom resources, …) are kept aside and named in one note, never dropped
silently; a kind that is neither is a typo and refused.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

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

# Built-in kinds that create no pod when a scenario is loaded.
SKIPPED_KINDS = frozenset({
    "Secret", "ConfigMap", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
    "CustomResourceDefinition", "Endpoints", "EndpointSlice", "Ingress", "IngressClass",
    "NetworkPolicy", "LimitRange", "ResourceQuota", "PersistentVolumeClaim",
    "CSIStorageCapacity", "VolumeAttachment",
    "PriorityClass", "HorizontalPodAutoscaler", "CronJob", "ControllerRevision", "Event", "Lease",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "APIService", "PodTemplate", "RuntimeClass", "PodSecurityPolicy",
    "CertificateSigningRequest", "FlowSchema", "PriorityLevelConfiguration", "ResourceClaim",
    "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"})

# Of those, the ones a real cluster would let change where or whether pods run and kubefit does not
# evaluate; the note says so.  (PriorityClass is read: priority.py gives pods their class's value.)
AFFECTS_SCHEDULING = frozenset({
    "LimitRange", "ResourceQuota", "PersistentVolumeClaim",
    "CSIStorageCapacity",
    "HorizontalPodAutoscaler", "CronJob", "RuntimeClass", "ResourceClaim", "ResourceClaimTemplate",
    "DeviceClass", "ResourceSlice"})


def custom_resource(body: dict[str, Any]) -> bool:
    """An object of a CustomResourceDefinition: its API group is not a Kubernetes one (`*.k8s.io`)."""
    version = body.get("apiVersion")
    if not isinstance(version, str) or "/" not in version:
        return False
    group = version.split("/", 1)[0]
    return "." in group and not group.endswith(".k8s.io") and group != "k8s.io"


def skipped_kind(doc: Any) -> bool:
    """A document (load.Document) of a kind that places no pod: kept aside, named once."""
    return doc.kind in SKIPPED_KINDS or custom_resource(doc.body)


def skipped_note(docs: list[Any]) -> str | None:
    """One note naming every skipped kind with its count (None when nothing was skipped)."""
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
