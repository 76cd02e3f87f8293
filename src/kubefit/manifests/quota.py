"""ResourceQuota: the objects decoded and validated as the API server validates them, and the ResourceQuota
admission plugin applied to the pods a scenario creates.

Decoding (`decode_resource_quota`) follows `ValidateResourceQuota` (pkg/apis/core/validation/validation.go): each
`spec.hard` name a standard quota resource or a qualified name, never negative, a whole number where it counts
objects or extended resources; `spec.scopes` and `spec.scopeSelector` only standard scopes, valid for the
resources limited, not conflicting (BestEffort with NotBestEffort, Terminating with NotTerminating), operators
and values as `validateScopedResourceSelectorRequirement` allows. A quota the API server refuses is refused
with its message, file, object and field (exit 2).

Admission (`QuotaAdmission`) is `CheckRequest` (staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/
controller.go) with the pod evaluator of pkg/quota/v1/evaluator/core/pods.go:

- a quota matches a pod when one of its `status.hard` names is a pod resource (`MatchingResources`: pods,
  count/pods, cpu, memory, ephemeral-storage, their `requests.` and `limits.` forms, hugepages, extended
  `requests.<name>`) and every scope matches (`podMatchesScopeFunc`: Terminating is `activeDeadlineSeconds`
  ≥ 0, BestEffort the pod's QoS, PriorityClass its `priorityClassName` against In / NotIn / Exists /
  DoesNotExist, CrossNamespacePodAffinity a pod (anti-)affinity term naming namespaces or a namespace selector);
- a matching quota limiting cpu or memory (requests, limits or bare) needs every container and init container to
  say it (`Constraints`): `failed quota: <quota>: must specify limits.memory for: app`;
- the pod's usage (`PodUsageFunc`: `count/pods` always; `pods` and the compute resources unless the pod is
  terminal, from `PodRequests` / `PodLimits`, overhead and pod-level resources included) masked to the quota's
  hard names is added to `status.used`; any name then above its hard limit refuses the pod:
  `exceeded quota: <quota>, requested: pods=1, used: pods=2, limited: pods=2`. Quotas of a namespace are
  checked in name order (the API server's lister gives them in no set order); the pod counts in every
  quota that matches it once admitted.

What counts as used: a quota given with a `status` (a live snapshot) keeps its `status.used` as the quota
controller wrote it; one written without is given `status.hard` = `spec.hard` and, as the quota controller
computes it (`CalculateUsageStats`), the usage of the pods the cluster runs already (a stored pod, with
`metadata.uid`, or one bound by `spec.nodeName`). Every other pod is created in document order (a workload's
pods where the workload stands) and is admitted or refused against what the pods created before it used.

During a run (`copy`: each run its own usage) a deleted pod — a preemption victim, an evicted or removed node's
pod — is released (`release`): the quota controller's `replenishQuota` on the pod's delete event
(pkg/controller/resourcequota/resource_quota_controller.go) resyncs the quota, and `CalculateUsageStats` no
longer counts it; the pod its controller creates instead is admitted (`admit`) against `status.used` as it
stands then, or refused as any create is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from kubefit.api.core import Pod, Quantity
from kubefit.api.policy import ResourceQuota, ScopeRequirement
from kubefit.errors import InputError
from kubefit.k8s import goquantity as gq
from kubefit.k8s.resourcenames import is_native
from kubefit.k8s.validation import INVALID, FieldError, aggregate, go_quote, qualified_name_errors
from kubefit.manifests.cluster import object_meta
from kubefit.manifests.decode import (
    check_api_version,
    check_fields,
    decode_quantities,
    entries,
    mapping,
    sequence,
)
from kubefit.manifests.decode import string as _string
from kubefit.manifests.documents import Document
from kubefit.manifests.podresources import Resources, add, aggregate_container, shown

KIND = "ResourceQuota"
SPEC_FIELDS = frozenset({"hard", "scopes", "scopeSelector"})
STATUS_FIELDS = frozenset({"hard", "used"})
REQUIREMENT_FIELDS = frozenset({"scopeName", "operator", "values"})

TERMINATING, NOT_TERMINATING = "Terminating", "NotTerminating"
BEST_EFFORT, NOT_BEST_EFFORT = "BestEffort", "NotBestEffort"
PRIORITY_CLASS, CROSS_NAMESPACE = "PriorityClass", "CrossNamespacePodAffinity"
VOLUME_ATTRIBUTES_CLASS = "VolumeAttributesClass"
STANDARD_SCOPES = (TERMINATING, NOT_TERMINATING, BEST_EFFORT, NOT_BEST_EFFORT, PRIORITY_CLASS, CROSS_NAMESPACE,
                   VOLUME_ATTRIBUTES_CLASS)
EXISTS_ONLY = (BEST_EFFORT, NOT_BEST_EFFORT, TERMINATING, NOT_TERMINATING, CROSS_NAMESPACE)
IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "In", "NotIn", "Exists", "DoesNotExist"

PODS, COUNT_PODS = "pods", "count/pods"
REQUESTS, LIMITS, HUGEPAGES = "requests.", "limits.", "hugepages-"
# standardQuotaResources (pkg/apis/core/helper): the names a quota may limit without a domain
STANDARD_QUOTA_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
    "resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims", "configmaps",
    "services.nodeports", "services.loadbalancers"})
INTEGER_RESOURCES = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
                               "configmaps", "persistentvolumeclaims", "services.nodeports",
                               "services.loadbalancers"})
POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"})
# podResources (pods.go): what the pod evaluator counts, beside hugepages and extended `requests.<name>`
POD_RESOURCES = frozenset({COUNT_PODS, "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                           "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
                           PODS})
VALIDATION_SET = POD_COMPUTE  # `validationSet`: cpu or memory quotas require every container to state them
ONE = Quantity("1", 10**9)
ZERO = Quantity("0", 0)
# a pod → its containers, init containers and pod-level (requests, limits) as the API server stores it
Resolver = Callable[[Pod], tuple[list[Resources], list[Resources],
                                 tuple[dict[str, Quantity], dict[str, Quantity]] | None]]


# --------------------------------------------------------------------------- decoding and validation

def decode_resource_quota(doc: Document, warnings: list[str]) -> ResourceQuota:
    """A v1 ResourceQuota, checked as `ValidateResourceQuota` checks it (the API server's messages)."""
    check_api_version(doc, "v1")
    meta, spec, status = object_meta(doc)
    check_fields(spec, SPEC_FIELDS, doc, "spec")
    check_fields(status, STATUS_FIELDS, doc, "status")
    hard = decode_quantities(spec.get("hard"), doc, "spec.hard") or {}
    scopes = [_string(s, doc, f"spec.scopes[{i}]") for i, s in enumerate(sequence(spec.get("scopes"), doc,
                                                                                    "spec.scopes"))]
    selector = mapping(spec.get("scopeSelector"), doc, "spec.scopeSelector")
    check_fields(selector, frozenset({"matchExpressions"}), doc, "spec.scopeSelector")
    expressions = []
    for path, raw in entries(selector.get("matchExpressions"), doc, "spec.scopeSelector.matchExpressions",
                             REQUIREMENT_FIELDS, "a scope selector requirement (scopeName, operator, values)"):
        values = tuple(_string(v, doc, f"{path}.values[{i}]")
                       for i, v in enumerate(sequence(raw.get("values"), doc, f"{path}.values")))
        expressions.append(ScopeRequirement(_string(raw.get("scopeName"), doc, f"{path}.scopeName"),
                                            _string(raw.get("operator"), doc, f"{path}.operator"), values))
    status_hard = decode_quantities(status.get("hard"), doc, "status.hard")
    status_used = decode_quantities(status.get("used"), doc, "status.used")
    errors = _hard_errors(hard, "spec.hard") + _scope_errors(hard, scopes)
    if spec.get("scopeSelector") is not None:
        errors += _selector_errors(hard, expressions)
    errors += _hard_errors(status_hard or {}, "status.hard") + _hard_errors(status_used or {}, "status.used")
    if errors:
        raise InputError(f"ResourceQuota {go_quote(meta.name)} is invalid: {aggregate(errors)}", file=doc.source,
                         obj=doc.label, field=errors[0].path)
    return ResourceQuota(meta, hard, tuple(ScopeRequirement(s, EXISTS) for s in scopes) + tuple(expressions),
                         status_hard, status_used)


def _hard_errors(hard: dict[str, Quantity], path: str) -> list[FieldError]:
    """`ValidateResourceQuotaResourceName` and `ValidateResourceQuantityValue` of each name (Go walks the map in
    no set order: kubefit by name)."""
    errors = []
    for name in sorted(hard):
        where, q = f"{path}[{name}]", hard[name]
        naming = [FieldError(where, INVALID, name, m) for m in qualified_name_errors(name)]
        if not naming and "/" not in name and not _standard_resource(name):
            naming.append(FieldError(where, INVALID, name, "must be a standard resource type or fully qualified"))
        if not naming and "/" not in name and not _standard_quota_resource(name):
            naming.append(FieldError(where, INVALID, name, "must be a standard resource for quota"))
        errors += naming
        if q.nanos < 0:
            errors.append(FieldError(where, INVALID, shown(q), "must be greater than or equal to 0"))
        if (name in INTEGER_RESOURCES or _extended(name)) and q.nanos % 10**9:
            errors.append(FieldError(where, INVALID, shown(q), "must be an integer"))
    return errors


def _standard_resource(name: str) -> bool:
    """`IsStandardResourceName`: standardResources (the quota ones, storage, requests.storage) or hugepages."""
    return name in STANDARD_QUOTA_RESOURCES or name in ("storage",) or _hugepages_quota(name)


def _standard_quota_resource(name: str) -> bool:
    return name in STANDARD_QUOTA_RESOURCES or _hugepages_quota(name)


def _hugepages_quota(name: str) -> bool:
    return name.startswith(HUGEPAGES) or name.startswith(REQUESTS + HUGEPAGES)


def _extended(name: str) -> bool:
    """`IsExtendedResourceName`: not native, not `requests.`-prefixed (its quota name is then qualified)."""
    return not is_native(name) and not name.startswith(REQUESTS) and not qualified_name_errors(REQUESTS + name)


def _scope_valid_for(scope: str, resource: str) -> bool:
    """`IsResourceQuotaScopeValidForResource`."""
    if scope in (TERMINATING, NOT_TERMINATING, NOT_BEST_EFFORT, PRIORITY_CLASS, CROSS_NAMESPACE):
        return resource == PODS or resource in POD_COMPUTE
    if scope == BEST_EFFORT:
        return resource == PODS
    return True


def _conflicts(scopes: set[str], path: str, value: Any) -> list[FieldError]:
    return [FieldError(path, INVALID, value, "conflicting scopes")
            for pair in ((BEST_EFFORT, NOT_BEST_EFFORT), (TERMINATING, NOT_TERMINATING)) if set(pair) <= scopes]


def _scope_errors(hard: dict[str, Quantity], scopes: list[str]) -> list[FieldError]:
    """`validateResourceQuotaScopes`."""
    errors = []
    for scope in scopes:
        if scope not in STANDARD_SCOPES:
            errors.append(FieldError("spec.scopes", INVALID, scopes, "unsupported scope"))
        errors += [FieldError("spec.scopes", INVALID, scopes, "unsupported scope applied to resource")
                   for name in sorted(hard) if _standard_quota_resource(name) and not _scope_valid_for(scope, name)]
    return errors + _conflicts(set(scopes), "spec.scopes", scopes)


def _selector_errors(hard: dict[str, Quantity], expressions: list[ScopeRequirement]) -> list[FieldError]:
    """`validateScopedResourceSelectorRequirement`."""
    path = "spec.scopeSelector.matchExpressions"
    shown_selector = {"matchExpressions": [{"scopeName": e.scope_name, "operator": e.operator,
                                            **({"values": list(e.values)} if e.values else {})} for e in expressions]}
    errors = []
    for e in expressions:
        if e.scope_name not in STANDARD_SCOPES:
            errors.append(FieldError(f"{path}.scopeName", INVALID, e.scope_name, "unsupported scope"))
        errors += [FieldError(path, INVALID, shown_selector, "unsupported scope applied to resource")
                   for name in sorted(hard) if _standard_quota_resource(name)
                   and not _scope_valid_for(e.scope_name, name)]
        if e.scope_name in EXISTS_ONLY and e.operator != EXISTS:
            errors.append(FieldError(f"{path}.operator", INVALID, e.operator,
                                     "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                                     "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                                     "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
        if e.operator in (IN, NOT_IN):
            if not e.values:
                errors.append(FieldError(f"{path}.values", "Required value", None,
                                         "must be at least one value when `operator` is 'In' or 'NotIn' for "
                                         "scope selector"))
        elif e.operator in (EXISTS, DOES_NOT_EXIST):
            if e.values:
                errors.append(FieldError(f"{path}.values", INVALID, list(e.values),
                                         "must be no value when `operator` is 'Exist' or 'DoesNotExist' for "
                                         "scope selector"))
        else:
            errors.append(FieldError(f"{path}.operator", INVALID, e.operator, "not a valid selector operator"))
    return errors + _conflicts({e.scope_name for e in expressions}, path, [])


DECODERS: dict[str, Callable[[Document, list[str]], Any]] = {KIND: decode_resource_quota}


# --------------------------------------------------------------------------- what a pod uses

@dataclass
class PodFacts:
    """What the pod evaluator reads of one pod, as the API server stores it (after defaulting and LimitRanger)."""

    requests: dict[str, Quantity]  # PodRequests: aggregate or pod-level, overhead added
    limits: dict[str, Quantity]  # PodLimits
    stated: list[tuple[str, frozenset[str]]]  # per container and init container: the compute names it states
    best_effort: bool
    terminating: bool
    priority_class: str
    cross_namespace: bool
    terminal: bool


def _stated(c: Resources) -> frozenset[str]:
    """`podComputeUsageHelper`'s names of one container's requests and limits (those Constraints compares)."""
    names = set()
    for r in ("cpu", "memory", "ephemeral-storage"):
        if r in c.requests:
            names |= {r, REQUESTS + r}
        if r in c.limits:
            names.add(LIMITS + r)
    return frozenset(names)


def pod_facts(pod: Pod, containers: list[Resources], inits: list[Resources],
              pod_level: tuple[dict[str, Quantity], dict[str, Quantity]] | None, default_class: str, *,
              created: bool) -> PodFacts:
    """The pod's requests, limits and scope facts from its containers and pod-level requests and limits as the
    API server stores them (after defaulting and LimitRanger: `kubefit.manifests.admission.quota_resources`).
    `created`: a pod being created, given the global default PriorityClass's name when it names none (the
    Priority plugin sets it)."""
    spec = pod.raw.get("spec") or {}
    requests = aggregate_container(containers, inits, "requests")
    limits = aggregate_container(containers, inits, "limits")
    pod_requests, pod_limits = pod_level or ({}, {})
    for name, q in pod_requests.items():  # PodRequests: IsSupportedPodLevelResource ones replace the aggregate
        if name in ("cpu", "memory") or name.startswith(HUGEPAGES):
            requests[name] = q
    for name, q in pod_limits.items():
        if name in ("cpu", "memory") or name.startswith(HUGEPAGES):
            limits[name] = q
    for name, nanos in (pod.overhead or {}).items():
        q = _from_nanos(nanos)
        requests[name] = add(requests[name], q) if name in requests else q
        if name in limits:
            limits[name] = add(limits[name], q)
    if pod_requests or pod_limits:  # ComputePodQOS on the pod-level resources
        best_effort = not any(q.nanos for r in (pod_requests, pod_limits) for n, q in r.items()
                              if n in ("cpu", "memory"))
    else:
        best_effort = not any(q.nanos for c in (*containers, *inits) for r in (c.requests, c.limits)
                              for n, q in r.items() if n in ("cpu", "memory"))
    deadline = spec.get("activeDeadlineSeconds")
    name = spec.get("priorityClassName") or (default_class if created else "")
    return PodFacts(requests, limits, [(c.name, _stated(c)) for c in (*containers, *inits)], best_effort,
                    isinstance(deadline, int) and not isinstance(deadline, bool) and deadline >= 0,
                    str(name or ""), _cross_namespace(spec.get("affinity")), pod.phase in ("Succeeded", "Failed"))


def _from_nanos(nanos: int) -> Quantity:
    return Quantity(gq.canonical(gq.GoQuantity(gq.DECIMAL_SI, value=nanos, scale=-9)), nanos)


def _cross_namespace(affinity: Any) -> bool:
    """`usesCrossNamespacePodAffinity`: a (anti-)affinity term, required or preferred, naming namespaces or with
    a namespace selector."""
    if not isinstance(affinity, dict):
        return False
    for kind in ("podAffinity", "podAntiAffinity"):
        part = affinity.get(kind) if isinstance(affinity.get(kind), dict) else {}
        terms = list(part.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [t.get("podAffinityTerm") for t in part.get("preferredDuringSchedulingIgnoredDuringExecution") or []
                  if isinstance(t, dict)]
        if any(isinstance(t, dict) and (t.get("namespaces") or t.get("namespaceSelector") is not None)
               for t in terms):
            return True
    return False


def pod_usage(facts: PodFacts) -> dict[str, Quantity]:
    """`PodUsageFunc`: `count/pods` always; unless terminal, `pods` and `podComputeUsageHelper` of the pod's
    requests and limits (hugepages also as `requests.hugepages-*`, an extended resource as `requests.<name>`)."""
    usage = {COUNT_PODS: ONE}
    if facts.terminal:
        return usage
    usage[PODS] = ONE
    for r in ("cpu", "memory", "ephemeral-storage"):
        if r in facts.requests:
            usage[r] = usage[REQUESTS + r] = facts.requests[r]
        if r in facts.limits:
            usage[LIMITS + r] = facts.limits[r]
    for name, q in facts.requests.items():
        if name.startswith(HUGEPAGES):
            usage[name] = usage[REQUESTS + name] = q
        elif _extended(name):
            usage[REQUESTS + name] = q
    return usage


def _pod_resource(name: str) -> bool:
    """`MatchingResources` of the pod evaluator for one hard name."""
    return (name in POD_RESOURCES or _hugepages_quota(name)
            or (not is_native(name) and name.startswith(REQUESTS)))


def _scope_matches(req: ScopeRequirement, facts: PodFacts) -> bool:
    """`podMatchesScopeFunc` (the operator is read for PriorityClass only)."""
    if req.scope_name == TERMINATING:
        return facts.terminating
    if req.scope_name == NOT_TERMINATING:
        return not facts.terminating
    if req.scope_name == BEST_EFFORT:
        return facts.best_effort
    if req.scope_name == NOT_BEST_EFFORT:
        return not facts.best_effort
    if req.scope_name == CROSS_NAMESPACE:
        return facts.cross_namespace
    if req.scope_name == PRIORITY_CLASS:
        name = facts.priority_class
        if req.operator == EXISTS:
            return bool(name)
        if req.operator == DOES_NOT_EXIST:
            return not name
        if req.operator == IN:
            return bool(name) and name in req.values
        return not name or name not in req.values  # NotIn: a pod with no class has no such label
    return False


# --------------------------------------------------------------------------- admission

@dataclass
class QuotaUsage:
    """One ResourceQuota as admission reads it: `status.hard`, `status.used` (this run's), and the hard names the
    pod evaluator matches (`MatchingResources`)."""

    quota: ResourceQuota
    hard: dict[str, Quantity]  # status.hard (the quota controller copies spec.hard)
    used: dict[str, Quantity]
    pod_names: list[str] = field(default_factory=list)  # hard names the pod evaluator counts

    def matches(self, facts: PodFacts) -> bool:
        return bool(self.pod_names) and all(_scope_matches(r, facts) for r in self.quota.scopes)

    def status_unknown(self, names: list[str]) -> str | None:
        """`hasUsageStats`: a quota given with a status must say what it uses of every name the evaluator matches."""
        if self.quota.status_used is not None and any(n not in self.used for n in names):
            return f"status unknown for quota: {self.quota.meta.name}, resources: {','.join(sorted(names))}"
        return None

    def exceeded(self, requested: dict[str, Quantity]) -> str | None:
        """`CheckRequest` on this quota: the names whose `used + requested` would pass `hard`, as the API server
        words the refusal (None: within the quota)."""
        exceeded = sorted(n for n, u in requested.items()
                          if (self.used[n].nanos if n in self.used else 0) + u.nanos > self.hard[n].nanos)
        if not exceeded:
            return None
        return (f"exceeded quota: {self.quota.meta.name}, requested: "
                f"{pretty_usage({n: requested[n] for n in exceeded})}, used: "
                f"{pretty_usage({n: self.used[n] for n in exceeded if n in self.used})}, limited: "
                f"{pretty_usage({n: self.hard[n] for n in exceeded})}")

    def copies_left(self, usage: dict[str, Quantity]) -> int | None:
        """How many more objects of `usage` (non-zero amounts) fit under this quota (None: it limits none)."""
        bound = None
        for n, u in usage.items():
            if n in self.hard:
                fits = max(0, (self.hard[n].nanos - (self.used[n].nanos if n in self.used else 0)) // u.nanos)
                bound = fits if bound is None else min(bound, fits)
        return bound


def pretty_usage(items: dict[str, Quantity]) -> str:
    """`prettyPrint`: `name=value` by name, comma-separated."""
    return ",".join(f"{k}={shown(items[k])}" for k in sorted(items))


class QuotaAdmission:
    """The ResourceQuota plugin over one scenario's quotas: `status.used` as it stands, charged as pods are
    admitted (`admit`), or by the pods the cluster runs already (`count`) for quotas given without a status."""

    def __init__(self, quotas: list[ResourceQuota], resources: Resolver, default_class: str) -> None:
        self.by_namespace: dict[str, list[QuotaUsage]] = {}
        for q in sorted(quotas, key=lambda q: q.meta.name):
            hard = dict(q.status_hard if q.status_hard is not None else q.hard)
            pod_names = [n for n in hard if _pod_resource(n)]
            used = dict(q.status_used) if q.status_used is not None else zero_usage(pod_names)
            self.by_namespace.setdefault(q.meta.namespace, []).append(QuotaUsage(q, hard, used, pod_names))
        self.resources = resources
        self.default_class = default_class

    def __bool__(self) -> bool:
        return bool(self.by_namespace)

    def governs(self, pod: Pod) -> bool:
        return pod.namespace in self.by_namespace

    def copy(self) -> QuotaAdmission:
        """The same quotas with their own `status.used` (one run's: what it admits and releases stays there)."""
        new = QuotaAdmission([], self.resources, self.default_class)
        new.by_namespace = {ns: [replace(q, used=dict(q.used)) for q in qs] for ns, qs in self.by_namespace.items()}
        return new

    def release(self, pod: Pod, terminal: bool = False) -> None:
        """A pod deleted: the quota controller's resync after its delete event (`replenishQuota`, then
        `CalculateUsageStats` over the pods left) no longer counts it: `PodUsageFunc` of the pod, masked to each
        matching quota's hard names, taken off its `status.used` (`quota.Subtract`; a snapshot's usage that did
        not count it stays at zero). `terminal`: the pod finished (Succeeded) and is still stored: all but its
        `count/pods` (`PodUsageFunc` of a terminal pod)."""
        quotas = self.by_namespace.get(pod.namespace)
        if not quotas:
            return
        facts = self.facts(pod)
        usage = pod_usage(facts)
        for q in quotas:
            if q.matches(facts):
                for n, u in usage.items():
                    if n in q.hard and n in q.used and not (terminal and n == COUNT_PODS):
                        q.used[n] = subtract(q.used[n], u)

    def facts(self, pod: Pod) -> PodFacts:
        return pod_facts(pod, *self.resources(pod), self.default_class, created=not pod.uid)

    def count(self, pod: Pod) -> None:
        """A pod the cluster runs already: the quota controller counts it in the quotas given without a status
        (`CalculateUsageStats`; a live snapshot's `status.used` counts it already)."""
        quotas = [q for q in self.by_namespace.get(pod.namespace, []) if q.quota.status_used is None]
        if not quotas:
            return
        facts = self.facts(pod)
        usage = pod_usage(facts)
        for q in quotas:
            if all(_scope_matches(r, facts) for r in q.quota.scopes):
                charge(q.used, {n: u for n, u in usage.items() if n in q.hard})

    def refusal(self, pod: Pod, facts: PodFacts | None = None, copies: int = 1) -> tuple[str | None, list]:
        """`CheckRequest` for `copies` more pods like `pod` (None: admitted) and the (quota, usage) charges it
        would make."""
        facts = facts or self.facts(pod)
        quotas = [q for q in self.by_namespace.get(pod.namespace, []) if q.matches(facts)]
        for q in quotas:  # Constraints, then hasUsageStats, quota by quota
            required = {n for n in q.pod_names if n in VALIDATION_SET}
            missing: dict[str, list[str]] = {}
            for name, stated in facts.stated:
                for r in sorted(required - stated):
                    missing.setdefault(r, []).append(name)
            if missing:
                parts = "; ".join(f"{r} for: {','.join(sorted(set(names)))}" for r, names in sorted(missing.items()))
                return f"failed quota: {q.quota.meta.name}: must specify {parts}", []
            unknown = q.status_unknown(q.pod_names)
            if unknown is not None:
                return unknown, []
        return charged(quotas, {n: u for n, u in pod_usage(facts).items() if u.nanos}, copies)  # RemoveZeros

    def admit(self, pod: Pod) -> str | None:
        """The pod created: None when admitted (the quotas matching it charged), else the API server's error
        (`exceeded quota: ...`, `failed quota: ...`)."""
        message, charges = self.refusal(pod)
        if message is None:
            for q, requested in charges:
                charge(q.used, requested)
        return message

    def headroom(self, pod: Pod, limit: int | None = None) -> tuple[int, str] | None:
        """How many copies of `pod` the quotas admit, and the refusal of the next one; None when no quota
        limits it (or `limit` copies are admitted first)."""
        facts = self.facts(pod)
        message, _ = self.refusal(pod, facts)
        if message is not None:
            return 0, message
        usage = {n: u for n, u in pod_usage(facts).items() if u.nanos}
        bound = fewest(q.copies_left(usage) for q in self.by_namespace.get(pod.namespace, []) if q.matches(facts))
        if bound is None or (limit is not None and bound >= limit):
            return None
        message, _ = self.refusal(pod, facts, bound + 1)
        if message is None:  # pragma: no cover - the closed form and CheckRequest agree
            return None
        return bound, self._after(pod, facts, bound)

    def _after(self, pod: Pod, facts: PodFacts, copies: int) -> str:
        """The refusal of the copy after `copies` admitted ones (their usage charged to a copy of the quotas)."""
        saved = {id(q): dict(q.used) for qs in self.by_namespace.values() for q in qs}
        try:
            _, charges = self.refusal(pod, facts, copies)
            for q, requested in charges:
                charge(q.used, requested)
            return self.refusal(pod, facts)[0] or ""
        finally:
            for qs in self.by_namespace.values():
                for q in qs:
                    q.used = saved[id(q)]


def charged(quotas: list[QuotaUsage], usage: dict[str, Quantity], copies: int = 1
            ) -> tuple[str | None, list[tuple[QuotaUsage, dict[str, Quantity]]]]:
    """`CheckRequest`'s last part for `copies` objects of `usage` (zero amounts removed) under the quotas that
    match them, in order: the first refusal (`exceeded quota: ...`), or None and what each quota is charged."""
    charges = []
    for q in quotas:
        requested = {n: (_scaled(u, copies) if copies != 1 else u) for n, u in usage.items() if n in q.hard}
        if not requested:
            continue
        message = q.exceeded(requested)
        if message is not None:
            return message, []
        charges.append((q, requested))
    return None, charges


def zero_usage(names: list[str]) -> dict[str, Quantity]:
    """`CalculateUsageStats`' start: each name the evaluator tracks used 0 (DecimalSI), as the quota controller
    writes it into a quota given without a status."""
    return {n: ZERO for n in names}


def fewest(bounds: Any) -> int | None:
    """The smallest of the bounds that are not None (None: none is given)."""
    known = [b for b in bounds if b is not None]
    return min(known) if known else None


def _scaled(q: Quantity, n: int) -> Quantity:
    """`n` copies of `q` added up, printed in `q`'s format (`Quantity.Add`)."""
    nanos = q.nanos * n
    fmt = gq.parse(q.text).format
    return Quantity(gq.canonical(gq.GoQuantity(fmt, value=nanos, scale=-9)), nanos)


def subtract(a: Quantity, b: Quantity) -> Quantity:
    """`a.Sub(b)` printed in `a`'s format, floored at zero."""
    nanos = max(0, a.nanos - b.nanos)
    return Quantity(gq.canonical(gq.GoQuantity(gq.parse(a.text).format, value=nanos, scale=-9)), nanos)


def charge(used: dict[str, Quantity], requested: dict[str, Quantity]) -> None:
    """`quota.Add(used, requested)` (a name not used yet starts at zero, DecimalSI)."""
    for n, u in requested.items():
        used[n] = add(used[n], u) if n in used else add(Quantity("0", 0), u)


def default_class_name(docs: list[Document]) -> str:
    """The global default PriorityClass's name (the lowest value among those marked `globalDefault`), which the
    Priority plugin writes into a pod naming none; "" without one."""
    defaults = [(d.body.get("value"), d.name) for d in docs
                if d.kind == "PriorityClass" and d.body.get("globalDefault") is True
                and isinstance(d.body.get("value"), int)]
    return min(defaults)[1] if defaults else ""
