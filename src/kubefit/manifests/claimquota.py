"""ResourceQuota on ResourceClaims: the claim evaluator and the admission of the claims a run creates.

The evaluator is `pkg/quota/v1/evaluator/core/resource_claims.go` (`claimEvaluator`), the same in v1.34.1
to v1.37 for what it counts of a claim (`Usage`):

- `count/resourceclaims.resource.k8s.io`: 1 per claim (`ClaimObjectCountName`);
- `<class>.deviceclass.resource.k8s.io/devices` (`V1ResourceByDeviceClass`): per request, the devices it may
  take of its class — an `exactly` request its `count` (`ExactCount`) or 32 (`All`: `AllocationResultsMaxSize`,
  the worst case); a `firstAvailable` request, per class, the largest of its subrequests' counts (each
  alternative may be the one allocated); summed over the requests of the claim.

With `DRAExtendedResource` (alpha in v1.34 and v1.35, on in v1.36, GA in v1.37: kubernetes#134210,
`addExtendedResourceQuota`), each class's devices also count as `requests.deviceclass.resource.kubernetes.io/<class>`
(`ResourceImplicitExtendedClaimsPerClass`) and, for a class with `spec.extendedResourceName`, as
`requests.<that name>`; the claim a scheduler makes for a pod's extended resources subtracts what the pod
evaluator charges already (`getVerifiedPodUsage`: not made by kubefit's runs yet). `MatchingResources` then
also matches the implicit name of a class that has an extended resource name, and `requests.<name>` of a name
some class maps to (`ExtendedResourceCache`: every class's implicit name, and each explicit name, a clash resolved
to the newest class, then the lowest name — kubefit reads no creation time: the lowest name).

A quota matches a claim when one of its `status.hard` names is one of these (`generic.Matches`) and it has no
scope (`MatchesNoScopeFunc`: a scoped quota never matches a claim). `CheckRequest` is the pods' (a quota
given with a status must state the usage of every name it matches, `status unknown for quota: ...`; then the
quotas in name order, `exceeded quota: q, requested: ..., used: ..., limited: ...`); the API server's refusal of
a claim being created is `resourceclaims.resource.k8s.io "<name>" is forbidden: <that>`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from kubefit.api.core import Quantity
from kubefit.api.dra import ALL, ALLOCATION_RESULTS_MAX_SIZE, ClaimSpec, DeviceClass
from kubefit.api.policy import ResourceQuota
from kubefit.k8s.resourcenames import is_native
from kubefit.k8s.validation import go_quote
from kubefit.manifests.quota import REQUESTS, QuotaUsage, charge, charged, fewest, subtract, zero_usage

COUNT_CLAIMS = "count/resourceclaims.resource.k8s.io"  # generic.ObjectCountQuotaResourceNameFor
PER_CLASS = ".deviceclass.resource.k8s.io/devices"  # corev1.ResourceClaimsPerClass
IMPLICIT_PER_CLASS = REQUESTS + "deviceclass.resource.kubernetes.io/"  # corev1.ResourceImplicitExtendedClaimsPerClass
CLAIMS_RESOURCE = "resourceclaims.resource.k8s.io"


def devices_of_request(allocation_mode: str, count: int) -> int:
    """The devices one request or subrequest may take: its count, or 32 for `All` (the worst case)."""
    return ALLOCATION_RESULTS_MAX_SIZE if allocation_mode == ALL else count


def claim_usage(spec: ClaimSpec, extended_names: dict[str, str] | None = None) -> dict[str, int]:
    """`claimEvaluator.Usage` of a claim with `spec`, in whole units; `extended_names` (DRAExtendedResource on):
    each class's `extendedResourceName` ("" for none), for `addExtendedResourceQuota`."""
    usage = {COUNT_CLAIMS: 1}
    for request in spec.requests:
        if request.first_available:
            most: dict[str, int] = {}
            for sub in request.first_available:
                name = sub.device_class_name + PER_CLASS
                most[name] = max(most.get(name, 0), devices_of_request(sub.allocation_mode, sub.count))
            for name, n in most.items():
                if n:  # a zero never enters the map (`q.Cmp(max) > 0`)
                    usage[name] = usage.get(name, 0) + n
        elif request.exactly is not None:
            name = request.exactly.device_class_name + PER_CLASS
            usage[name] = usage.get(name, 0) + devices_of_request(request.exactly.allocation_mode,
                                                                  request.exactly.count)
    if extended_names is not None:
        for name, n in list(usage.items()):
            if name.endswith(PER_CLASS) and len(name) > len(PER_CLASS):
                cls = name[:-len(PER_CLASS)]
                usage[IMPLICIT_PER_CLASS + cls] = n
                if extended_names.get(cls):
                    usage[REQUESTS + extended_names[cls]] = n
    return usage


def extended_resource_names(classes: Iterable[DeviceClass]) -> tuple[dict[str, str], dict[str, str]]:
    """`ExtendedResourceCache`: class → its `extendedResourceName`, and resource name → the class it maps to: every
    class's implicit `deviceclass.resource.kubernetes.io/<class>`, and each explicit name (one class per name: the
    newest class wins, then the lowest name; kubefit reads no creation time: the lowest name)."""
    classes = sorted(classes, key=lambda c: c.meta.name)
    of_class = {c.meta.name: c.extended_resource_name for c in classes if c.extended_resource_name}
    to_class: dict[str, str] = {IMPLICIT_PER_CLASS[len(REQUESTS):] + c.meta.name: c.meta.name for c in classes}
    for cls, name in of_class.items():
        to_class.setdefault(name, cls)
    return of_class, to_class


def matching_resources(names: Iterable[str], extended: tuple[dict[str, str], dict[str, str]] | None) -> list[str]:
    """`claimEvaluator.MatchingResources` of a quota's hard names (`extended`: `extended_resource_names`, with
    DRAExtendedResource on): an implicit name whose class has an extended resource name, or any `requests.` name
    `isExtendedResourceNameForQuota` accepts (not native, or implicit) that maps to a class."""
    out = []
    for name in names:
        if name == COUNT_CLAIMS or name.endswith(PER_CLASS):
            out.append(name)
        elif extended is not None and name.startswith(REQUESTS):
            of_class, to_class = extended
            implicit = name.startswith(IMPLICIT_PER_CLASS)
            if (implicit and of_class.get(name[len(IMPLICIT_PER_CLASS):])) or (
                    (implicit or not is_native(name)) and name[len(REQUESTS):] in to_class):
                out.append(name)
    return out


def _quantity(n: int) -> Quantity:
    return Quantity(str(n), n * 10**9)  # resource.NewQuantity(n, DecimalSI)


def forbidden_claim(name: str, message: str) -> str:
    """The API server's refusal of a ResourceClaim being created (`admission.NewForbidden`)."""
    return f"{CLAIMS_RESOURCE} {go_quote(name)} is forbidden: {message}"


@dataclass
class ClaimQuota:
    """The ResourceQuota plugin for the claims of one run: each namespace's quotas that have a name the claim
    evaluator matches (and no scope), with this run's `status.used`."""

    by_namespace: dict[str, list[tuple[QuotaUsage, list[str]]]] = field(default_factory=dict)
    extended: tuple[dict[str, str], dict[str, str]] | None = None  # DRAExtendedResource on: the class mapping

    @classmethod
    def of(cls, quotas: Iterable[ResourceQuota], classes: Iterable[DeviceClass], extended: bool) -> ClaimQuota:
        mapping = extended_resource_names(classes) if extended else None
        out = cls(extended=mapping)
        for q in sorted(quotas, key=lambda q: q.meta.name):
            hard = dict(q.status_hard if q.status_hard is not None else q.hard)
            names = matching_resources(hard, mapping)
            if names and not q.scopes:
                used = dict(q.status_used) if q.status_used is not None else zero_usage(names)
                out.by_namespace.setdefault(q.meta.namespace, []).append((QuotaUsage(q, hard, used), names))
        return out

    def __bool__(self) -> bool:
        return bool(self.by_namespace)

    def copy(self) -> ClaimQuota:
        """The same quotas with their own `status.used` (one run's)."""
        return ClaimQuota({ns: [(replace(q, used=dict(q.used)), names) for q, names in qs]
                           for ns, qs in self.by_namespace.items()}, self.extended)

    def usage(self, spec: ClaimSpec) -> dict[str, Quantity]:
        """`Usage` of a claim as quantities (zero amounts removed, as `CheckRequest` does)."""
        extended = None if self.extended is None else self.extended[0]
        return {n: _quantity(v) for n, v in claim_usage(spec, extended).items() if v}

    def refusal(self, namespace: str, spec: ClaimSpec, copies: int = 1) -> tuple[str | None, list]:
        """`CheckRequest` for `copies` claims of `spec` in `namespace`: the refusal (None: admitted) and the
        charges it would make."""
        quotas = self.by_namespace.get(namespace, [])
        for q, names in quotas:
            unknown = q.status_unknown(names)
            if unknown is not None:
                return unknown, []
        return charged([q for q, _names in quotas], self.usage(spec), copies)

    def admit(self, namespace: str, spec: ClaimSpec) -> str | None:
        """A claim created: None when admitted (the quotas charged), else the API server's error message."""
        message, charges = self.refusal(namespace, spec)
        if message is None:
            for q, requested in charges:
                charge(q.used, requested)
        return message

    def count(self, namespace: str, spec: ClaimSpec) -> None:
        """A claim the cluster has already: counted by the quota controller in the quotas given without a status
        (`CalculateUsageStats`; a snapshot's `status.used` counts it already)."""
        usage = self.usage(spec)
        for q, _names in self.by_namespace.get(namespace, []):
            if q.quota.status_used is None:
                charge(q.used, {n: u for n, u in usage.items() if n in q.hard})

    def release(self, namespace: str, spec: ClaimSpec) -> None:
        """A claim deleted (with the pod it was made for): the quota controller's resync no longer counts it."""
        usage = self.usage(spec)
        for q, _names in self.by_namespace.get(namespace, []):
            for n, u in usage.items():
                if n in q.hard and n in q.used:
                    q.used[n] = subtract(q.used[n], u)

    def headroom(self, namespace: str, spec: ClaimSpec) -> tuple[int, str] | None:
        """How many more claims of `spec` the quotas admit and the refusal of the next one (None: no limit)."""
        message, _ = self.refusal(namespace, spec)
        if message is not None:
            return 0, message
        usage = self.usage(spec)
        bound = fewest(q.copies_left(usage) for q, _names in self.by_namespace.get(namespace, []))
        if bound is None:
            return None
        after = self.copy()
        for q, requested in after.refusal(namespace, spec, bound)[1]:
            charge(q.used, requested)
        return bound, after.refusal(namespace, spec)[0] or ""
