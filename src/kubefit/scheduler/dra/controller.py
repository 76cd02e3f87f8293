"""The resourceclaim controller of one run: the claim it makes for each template a pod names, through the API server.

`pkg/controller/resourceclaim/controller.go` (`handleClaim`, the same in v1.34 to v1.37 for a pod's own claims),
for one pod claim that names a ResourceClaimTemplate and has no claim yet:

1. an orphan first (`findPodResourceClaim`): a claim owned by the pod (controller owner reference, `v1` Pod,
   its uid) with the annotation `resource.kubernetes.io/pod-claim-name` naming the pod claim — one the
   controller made before it could write the pod's status — is the pod's;
2. else the template (`resource claim template "t": resourceclaimtemplate.resource.k8s.io "t" not found`), and
   with `DRAAdminAccess` off a template asking for admin access is refused (`admin access is requested, but
   the feature is disabled`);
3. the claim is created with `generateName` `<pod>-<pod claim>-` (both parts cut proportionally when longer
   than 57 characters, then no trailing `-`), the annotation above, the pod as its controller owner, the
   template's labels and spec. The API server then validates it (`AuthorizedForAdmin`: admin access only in a
   namespace labelled `resource.kubernetes.io/admin-access: "true"`) and admits it (ResourceQuota:
   `kubefit.manifests.claimquota`); a refusal leaves the pod without its claim, and DynamicResources keeps it
   out of the queue (`pod "ns/p": ResourceClaim not created yet`). kubefit names the claim with a stable
   suffix (seeded by the pod and claim names) and, as the API server names a refused object by what it had,
   words a refusal with the `generateName`.

What kubefit does not model: the controller's retries are the pod's next cycles (each tries again, so a quota
freed meanwhile lets the claim be created); with `DRAWorkloadResourceClaims` (off by default in v1.36 and
v1.37) the claims of a PodGroup's pods are made for the group, which kubefit does not do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubefit.api.cluster import ClusterObjects, ObjectMeta
from kubefit.api.core import Pod
from kubefit.api.dra import ClaimSpec, ResourceClaim, ResourceClaimTemplate
from kubefit.errors import InputError
from kubefit.k8s.names import generate_name
from kubefit.k8s.validation import go_quote
from kubefit.manifests.claimquota import ClaimQuota, forbidden_claim

ClaimKey = tuple[str, str]  # (namespace, name)
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"  # DRAAdminNamespaceLabelKey (v1.34+)
MAX_GENERATED_BASE = 57  # the controller's maxBaseLen: 63 characters less "-" and 5 random ones


def generate_name_base(pod_name: str, pod_claim: str) -> str:
    """The `generateName` of the claim made for `pod_claim` of pod `pod_name` (`handleClaim`)."""
    base = f"{pod_name}-{pod_claim}-"
    if len(base) > MAX_GENERATED_BASE:  # both cut by the length before the cut; no "-" at the end then
        base = (pod_name[:len(pod_name) * MAX_GENERATED_BASE // len(base)] + "-"
                + pod_claim[:len(pod_claim) * MAX_GENERATED_BASE // len(base)])
    return base


def generated_claim_name(pod: Pod, pod_claim: str) -> str:
    """The name the API server gives that claim (kubefit's suffix: stable, seeded by the pod and claim names)."""
    return generate_name(generate_name_base(pod.name, pod_claim), "ResourceClaim", pod.namespace, pod.name, pod_claim)


def admin_access_error(spec: ClaimSpec, kind: str, name: str, namespace: str,
                       admin_namespaces: frozenset[str]) -> str | None:
    """`AuthorizedForAdmin` (pkg/registry/resource utils.go): the first `exactly` request asking for admin access,
    refused unless the namespace has the label `resource.kubernetes.io/admin-access: "true"`; the API server's
    `ResourceClaim.resource.k8s.io "x" is invalid: spec.devices.requests[i].adminAccess: Forbidden: ...`."""
    if namespace in admin_namespaces:
        return None
    for i, request in enumerate(spec.requests):
        if request.exactly is not None and request.exactly.admin_access:
            return (f"{kind}.resource.k8s.io {go_quote(name)} is invalid: spec.devices.requests[{i}].adminAccess: "
                    f"Forbidden: admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the "
                    f"containing namespace")
    return None


def orphans_of(claims: dict[ClaimKey, ResourceClaim]) -> dict[tuple[str, str], ClaimKey]:
    """The claims `findPodResourceClaim` can adopt: (owning pod's uid, pod claim) → claim, for each claim a pod
    controls that has the annotation `resource.kubernetes.io/pod-claim-name` (the first of each pair)."""
    out: dict[tuple[str, str], ClaimKey] = {}
    for key, claim in claims.items():
        if claim.controller_kind == "Pod" and claim.controller_uid and claim.pod_claim_name:
            out.setdefault((claim.controller_uid, claim.pod_claim_name), key)
    return out


def needs_admin_access(spec: ClaimSpec) -> bool:
    return any(r.exactly is not None and r.exactly.admin_access for r in spec.requests)


@dataclass
class ClaimController:
    """The controller and the API server of one run, for the claims made from templates: the templates, the
    orphans it would adopt, the namespaces allowed admin access (None: not checked: admission off), the claims'
    ResourceQuotas (None: none or admission off) and whether the DRAAdminAccess gate is on."""

    templates: dict[ClaimKey, ResourceClaimTemplate]
    orphans: dict[tuple[str, str], ClaimKey] = field(default_factory=dict)  # (pod uid, pod claim) → claim
    admin_namespaces: frozenset[str] | None = None
    quota: ClaimQuota | None = None
    admin_access: bool = True

    def copy(self) -> ClaimController:
        """The same controller with its own quota usage (one run's)."""
        return ClaimController(self.templates, self.orphans, self.admin_namespaces,
                               None if self.quota is None else self.quota.copy(), self.admin_access)

    def orphan(self, pod: Pod, pod_claim: str) -> ClaimKey | None:
        """`findPodResourceClaim`: the claim owned by the pod, annotated for this pod claim."""
        return self.orphans.get((pod.uid, pod_claim)) if pod.uid else None

    def create(self, pod: Pod, pod_claim: dict[str, Any]) -> tuple[ResourceClaim | None, str | None]:
        """The claim made for the pod's template reference, or why none is (the controller's or the API
        server's error)."""
        template_name = pod_claim.get("resourceClaimTemplateName") or ""
        template = self.templates.get((pod.namespace, template_name))
        if template is None:
            return None, (f"resource claim template {go_quote(template_name)}: resourceclaimtemplate.resource.k8s.io "
                          f"{go_quote(template_name)} not found")
        if not self.admin_access and needs_admin_access(template.spec):
            return None, "admin access is requested, but the feature is disabled"
        claim_name = pod_claim.get("name") or ""
        base = generate_name_base(pod.name, claim_name)
        if self.admin_namespaces is not None and self.admin_access:
            invalid = admin_access_error(template.spec, "ResourceClaim", base, pod.namespace, self.admin_namespaces)
            if invalid is not None:
                return None, invalid
        if self.quota is not None:
            refused = self.quota.admit(pod.namespace, template.spec)
            if refused is not None:
                return None, forbidden_claim(base, refused)
        name = generated_claim_name(pod, claim_name)
        meta = ObjectMeta(name, pod.namespace, f"uid-claim-{pod.namespace}-{name}", dict(template.labels))
        return ResourceClaim(meta, template.spec, controller_uid=pod.uid, controller_kind="Pod",
                             controller_name=pod.name, pod_claim_name=claim_name), None

    def release(self, claim: ResourceClaim) -> None:
        """A claim deleted: the quota controller no longer counts it."""
        if self.quota is not None:
            self.quota.release(claim.meta.namespace, claim.spec)


def admin_namespaces(objects: ClusterObjects) -> frozenset[str]:
    """The namespaces labelled `resource.kubernetes.io/admin-access: "true"` (a namespace the scenario does not
    have carries no label)."""
    return frozenset(ns.meta.name for ns in objects.of("Namespace") if ns.meta.labels.get(ADMIN_ACCESS_LABEL) == "true")


def refuse_created(objects: ClusterObjects, allowed: frozenset[str]) -> None:
    """The API server's validation of the DRA objects the scenario creates (no `metadata.uid`: not stored yet):
    a ResourceClaim or ResourceClaimTemplate asking for admin access outside a labelled namespace is refused,
    exit 2 (`AuthorizedForAdmin`, from `Validate` of both kinds' registry strategies)."""
    for kind in ("ResourceClaimTemplate", "ResourceClaim"):
        for obj in objects.of(kind):
            if obj.meta.uid or (kind == "ResourceClaim" and obj.allocation is not None):
                continue  # stored: the API server admitted it when it was created
            invalid = admin_access_error(obj.spec, kind, obj.meta.name, obj.meta.namespace, allowed)
            if invalid is not None:
                index = invalid.index("spec.devices")
                raise InputError(invalid, file=obj.meta.source, obj=f"{kind}/{obj.meta.name}",
                                 field=invalid[index:invalid.index(":", index)])


def stored_admin_notes(objects: ClusterObjects, allowed: frozenset[str]) -> list[str]:
    """Stored claims asking for admin access outside a labelled namespace (the label removed since): the API
    server refuses the scheduler's allocation of such a claim (`AuthorizedForAdminStatus`), which kubefit does not
    model."""
    return [f"ResourceClaim {c.meta.namespace}/{c.meta.name} asks for admin access but namespace "
            f"{c.meta.namespace} lacks the label `{ADMIN_ACCESS_LABEL}: true`: the API server would refuse its "
            f"allocation (PreBind's status update), kubefit allocates it" for c in objects.of("ResourceClaim")
            if (c.meta.uid or c.allocation is not None) and c.allocation is None and c.meta.namespace not in allowed
            and needs_admin_access(c.spec)]


def unknown_class_notes(objects: ClusterObjects) -> list[str]:
    """ResourceQuotas limiting the devices of a class the scenario does not have: the API server takes them (any
    qualified name is a valid quota resource), but they limit nothing a claim of the scenario can use."""
    from kubefit.manifests.claimquota import PER_CLASS

    classes = {c.meta.name for c in objects.of("DeviceClass")}
    notes = []
    for q in objects.of("ResourceQuota"):
        for name in sorted(q.hard):
            cls = name[:-len(PER_CLASS)] if name.endswith(PER_CLASS) else None
            if cls and cls not in classes:
                notes.append(f"ResourceQuota {q.meta.namespace}/{q.meta.name}: spec.hard[{name}] names DeviceClass "
                             f"{cls!r}, which the scenario does not have: no claim of the scenario uses its devices")
    return notes


def claim_controller(objects: ClusterObjects, claims: dict[ClaimKey, ResourceClaim]) -> ClaimController:
    """The run's controller over the scenario's objects and the API server in front of them
    (`objects.api_server`): without admission, nothing is checked."""
    templates = {(t.meta.namespace, t.meta.name): t for t in objects.of("ResourceClaimTemplate")}
    server = objects.api_server
    controller = ClaimController(templates, orphans_of(claims), admin_access=server.admin_access)
    if not server.admission:
        return controller
    controller.admin_namespaces = admin_namespaces(objects)
    if server.admin_access:
        refuse_created(objects, controller.admin_namespaces)
    quota = ClaimQuota.of(objects.of("ResourceQuota"), objects.of("DeviceClass"), server.extended_resource)
    controller.quota = quota or None
    return controller


def count_existing(controller: ClaimController, claims: Sequence[ResourceClaim], pods: Sequence[Pod]) -> None:
    """The claims' quota usage as the quota controller computes it for quotas given without a status: the stored
    claims (with a uid, or allocated) and the claims of the running pods that kubefit only knows by their template
    (no status names them); the other claims of the files are being created: admitted in document order, a
    refused one is refused as the API server refuses it (exit 2)."""
    quota = controller.quota
    if quota is None:
        return
    created = []
    for claim in claims:
        if claim.meta.uid or claim.allocation is not None:
            quota.count(claim.meta.namespace, claim.spec)
        else:
            created.append(claim)
    for pod in pods:
        if not pod.bound:
            continue
        named = {n for n, _c in pod.resource_claim_statuses}
        for pod_claim in pod.resource_claims:
            template = controller.templates.get((pod.namespace, pod_claim.get("resourceClaimTemplateName") or ""))
            if template is not None and pod_claim.get("name") not in named and \
                    controller.orphan(pod, pod_claim.get("name") or "") is None:
                quota.count(pod.namespace, template.spec)
    for claim in created:
        refused = quota.admit(claim.meta.namespace, claim.spec)
        if refused is not None:
            raise InputError(forbidden_claim(claim.meta.name, refused), file=claim.meta.source,
                             obj=f"ResourceClaim/{claim.meta.name}", field="spec.devices.requests")


def after_deleting(objects: ClusterObjects, pods: Sequence[Pod]) -> ClusterObjects:
    """The cluster objects once `pods` are deleted (drained, or with their removed node) before a run: the claims
    made for them go with them (owned by them: deleted), and other claims are no longer reserved for them — one
    reserved by no one is deallocated (`syncClaim`), as `DraState.release` does to a pod leaving during a run."""
    gone = {(p.namespace, p.uid) for p in pods if p.uid}
    names = {(p.namespace, p.name, p.uid) for p in pods}
    claims = objects.of("ResourceClaim")
    if not claims or not pods:
        return objects
    kept = []
    for claim in claims:
        ns = claim.meta.namespace
        if claim.controller_kind == "Pod" and (ns, claim.controller_uid) in gone:
            continue
        reserved = tuple(r for r in claim.reserved_for if (ns, r.name, r.uid) not in names)
        if len(reserved) != len(claim.reserved_for):
            claim = replace(claim, reserved_for=reserved, allocation=claim.allocation if reserved else None)
        kept.append(claim)
    return ClusterObjects({**objects.by_kind, "ResourceClaim": kept}, api_server=objects.api_server)
