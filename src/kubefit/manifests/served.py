"""The kinds each supported kube-apiserver serves, per version, as data: what a scenario may hold.

kube-apiserver tells objects apart by API group and version, then kind: `storage.k8s.io/v1
VolumeAttributesClass` is a built-in object of v1.34 (GA), `certificates.k8s.io/v1 ClusterTrustBundle` one of
v1.37 only (v1.34–v1.36 serve it as v1alpha1/v1beta1), and `apps.kruise.io/v1alpha1 StatefulSet` a custom
resource, not a StatefulSet. An object the API server serves loads: kubefit reads it, or skips it and names it.
One it serves in no version is refused with its words (`no matches for kind "X" in version "Y"`).

`SERVED` is the list of every (apiVersion, kind) a supported kube-apiserver registers: the round-trip fixtures of
`k8s.io/api` (`testdata/HEAD/<group>.<version>.<Kind>.json`) at v0.34.1, v0.35.4, v0.36.3 and v0.37.0-beta.0 (the
API types of each minor), without the types that are no resource (`*Options`, `Status`, `WatchEvent`,
`APIGroup`, `AdmissionReview`, `ImageReview`, `RangeAllocation`, `SerializedReference`, `PodStatusResult`) or
only a subresource (`Scale`, `Eviction`, `TokenRequest`, `DeploymentRollback`), and without the versions no
longer served, which `k8s.io/api` keeps for clients (they are refused with the release that removed them:
`kinds.REMOVED_API_VERSIONS`); plus the two groups of kube-apiserver's own extension and aggregation servers
(`apiextensions.k8s.io/v1 CustomResourceDefinition`, `apiregistration.k8s.io/v1 APIService`). Alpha and beta
versions are listed too: the API server serves them when `--runtime-config` enables them, so an object of one
is loaded (skipped and named), never refused.
"""

from __future__ import annotations

from functools import cache

MINORS = (34, 35, 36, 37)
_ALL = MINORS

# (apiVersion, kinds, minors serving them)
SERVED: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("v1", "Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node PersistentVolume "
           "PersistentVolumeClaim Pod PodTemplate ReplicationController ResourceQuota Secret Service ServiceAccount",
     _ALL),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration ValidatingAdmissionPolicy "
                                        "ValidatingAdmissionPolicyBinding ValidatingWebhookConfiguration", _ALL),
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding", (36, 37)),
    ("admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding "
                                              "ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding", _ALL),
    ("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding "
                                             "ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding", _ALL),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", _ALL),  # k8s.io/apiextensions-apiserver
    ("apiregistration.k8s.io/v1", "APIService", _ALL),  # k8s.io/kube-aggregator
    ("apps/v1", "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet", _ALL),
    ("authentication.k8s.io/v1", "SelfSubjectReview TokenReview", _ALL),
    ("authentication.k8s.io/v1beta1", "SelfSubjectReview", _ALL),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview "
                                "SubjectAccessReview", _ALL),
    ("autoscaling/v1", "HorizontalPodAutoscaler", _ALL),
    ("autoscaling/v2", "HorizontalPodAutoscaler", _ALL),
    ("batch/v1", "CronJob Job", _ALL),
    ("certificates.k8s.io/v1", "CertificateSigningRequest", _ALL),
    ("certificates.k8s.io/v1", "ClusterTrustBundle", (37,)),  # GA in v1.37 (KEP-3257)
    ("certificates.k8s.io/v1alpha1", "ClusterTrustBundle", _ALL),
    ("certificates.k8s.io/v1alpha1", "PodCertificateRequest", (34,)),
    ("certificates.k8s.io/v1beta1", "ClusterTrustBundle", _ALL),
    ("certificates.k8s.io/v1beta1", "PodCertificateRequest", (35, 36, 37)),
    ("coordination.k8s.io/v1", "Lease", _ALL),
    ("coordination.k8s.io/v1alpha2", "LeaseCandidate", _ALL),
    ("coordination.k8s.io/v1beta1", "LeaseCandidate", _ALL),
    ("discovery.k8s.io/v1", "EndpointSlice", _ALL),
    ("events.k8s.io/v1", "Event", _ALL),
    ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema PriorityLevelConfiguration", _ALL),
    ("internal.apiserver.k8s.io/v1alpha1", "StorageVersion", _ALL),
    ("networking.k8s.io/v1", "IPAddress Ingress IngressClass NetworkPolicy ServiceCIDR", _ALL),  # IPAddress, ServiceCIDR: GA v1.33
    ("networking.k8s.io/v1beta1", "IPAddress ServiceCIDR", _ALL),
    ("node.k8s.io/v1", "RuntimeClass", _ALL),
    ("node.k8s.io/v1alpha1", "RuntimeClass", _ALL),
    ("policy/v1", "PodDisruptionBudget", _ALL),
    ("rbac.authorization.k8s.io/v1", "ClusterRole ClusterRoleBinding Role RoleBinding", _ALL),
    ("resource.k8s.io/v1", "DeviceClass ResourceClaim ResourceClaimTemplate ResourceSlice", _ALL),
    ("resource.k8s.io/v1", "DeviceTaintRule", (37,)),
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule", _ALL),
    ("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest", (36, 37)),
    ("resource.k8s.io/v1beta1", "DeviceClass ResourceClaim ResourceClaimTemplate ResourceSlice", _ALL),
    ("resource.k8s.io/v1beta2", "DeviceClass ResourceClaim ResourceClaimTemplate ResourceSlice", _ALL),
    ("resource.k8s.io/v1beta2", "DeviceTaintRule", (36, 37)),
    ("scheduling.k8s.io/v1", "PriorityClass", _ALL),
    ("scheduling.k8s.io/v1alpha1", "Workload", (35,)),
    ("scheduling.k8s.io/v1alpha2", "PodGroup Workload", (36,)),
    ("scheduling.k8s.io/v1alpha3", "CompositePodGroup PodGroup Workload", (37,)),
    ("storage.k8s.io/v1", "CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment VolumeAttributesClass",
     _ALL),  # VolumeAttributesClass: GA v1.34
    ("storage.k8s.io/v1alpha1", "CSIStorageCapacity VolumeAttachment VolumeAttributesClass", _ALL),
    ("storage.k8s.io/v1beta1", "VolumeAttributesClass", _ALL),
    ("storagemigration.k8s.io/v1", "StorageVersionMigration", (37,)),  # GA in v1.37 (KEP-4192)
    ("storagemigration.k8s.io/v1alpha1", "StorageVersionMigration", (34,)),
    ("storagemigration.k8s.io/v1beta1", "StorageVersionMigration", (35, 36, 37)),
)


@cache
def _table() -> dict[tuple[str, str], frozenset[int]]:
    table: dict[tuple[str, str], frozenset[int]] = {}
    for api_version, kinds, minors in SERVED:
        for kind in kinds.split():
            table[(api_version, kind)] = table.get((api_version, kind), frozenset()) | frozenset(minors)
    return table


def serving_minors(api_version: str, kind: str) -> frozenset[int]:
    """The supported minors whose kube-apiserver serves `kind` in `api_version` (empty: none does).

    >>> sorted(serving_minors("certificates.k8s.io/v1", "ClusterTrustBundle"))
    [37]
    """
    return _table().get((api_version, kind), frozenset())


@cache
def builtin_kind_groups() -> dict[str, frozenset[str]]:
    """Each built-in kind → the API groups kube-apiserver serves it in (any supported version; "" the core
    group): a custom resource of the same kind in another group is another kind (an OpenKruise
    `apps.kruise.io` StatefulSet, a Knative `serving.knative.dev` Service)."""
    out: dict[str, set[str]] = {}
    for (api_version, kind) in _table():
        out.setdefault(kind, set()).add(api_version.rpartition("/")[0])
    return {kind: frozenset(groups) for kind, groups in out.items()}


def serving_versions(kind: str, minor: int | None = None) -> list[str]:
    """The apiVersions a supported kube-apiserver (that of `minor`, else any) serves `kind` in."""
    return sorted(v for (v, k), minors in _table().items() if k == kind and (minor is None or minor in minors))


def unserved_message(api_version: str, kind: str, minor: int | None = None) -> str:
    """kube-apiserver's refusal of a kind it does not serve in that version (kubectl's `resource mapping not
    found … no matches for kind`), with where it does serve that kind (that of `minor`, else any)."""
    message = f'no matches for kind "{kind}" in version "{api_version}"'
    elsewhere = serving_versions(kind, minor)
    where = "" if minor is None else f"Kubernetes 1.{minor} "
    if elsewhere:
        message += f" ({where}kube-apiserver serves {kind} in {', '.join(elsewhere)}"
        others = sorted(serving_minors(api_version, kind))
        if others:
            message += f"; {api_version} in Kubernetes {', '.join(f'1.{m}' for m in others)}"
        message += ")"
    return message
