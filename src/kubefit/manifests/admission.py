"""API-server admission of the pods and claims a scenario creates: the defaulting and the admission plugins
that change where or whether a pod runs, in the API server's order, each named in a note when it changed
something.

For a pod being created (defaulting at decoding, then the mutating plugins in the order of
`pkg/kubeapiserver/options/plugins.go`, then the validating ones):

1. `SetDefaults_Pod` (pkg/apis/core/v1/defaults.go): a container's or init container's limits become its
   requests where it has none; then, PodLevelResources being on (beta in v1.34), a pod with pod-level
   `spec.resources` gets the pod-level requests `defaultHugePagePodLimits` and `defaultPodRequests` give it
   (what the scheduler then counts instead of its containers'); with `hostNetwork`, a port without
   `hostPort` gets its `containerPort` (`defaultHostNetworkPorts`), which NodePorts then reads;
2. LimitRanger (plugin/pkg/admission/limitranger, `PodMutateLimitFunc`): each LimitRange of the pod's
   namespace gives containers and init containers without them its `default` limits and `defaultRequest`
   requests;
3. Priority (`kubefit.manifests.priority`, also with admission off): `priorityClassName` → `spec.priority` and
   `spec.preemptionPolicy`;
4. DefaultTolerationSeconds: `node.kubernetes.io/not-ready` and `unreachable` NoExecute tolerations (300 s)
   unless the pod tolerates them already;
5. RuntimeClass (`setOverhead`, `setScheduling`): `overhead.podFixed` becomes `spec.overhead` (a different
   one is forbidden), `scheduling.nodeSelector` is merged in (a conflicting value is forbidden),
   `scheduling.tolerations` merged (`tolerations.MergeTolerations`);
6. the pod's validation (`ValidatePodCreate`): pod-level `spec.resources` must cover the containers'
   (`validatePodResourceConsistency`, `kubefit.manifests.podresources`), else `Pod "p" is invalid: ...`;
7. validation: LimitRanger's min / max / maxLimitRequestRatio (`PodValidateLimitFunc`) and RuntimeClass's
   `validateOverhead` (an overhead no RuntimeClass defines is forbidden).

A claim without `storageClassName` gets the default StorageClass (DefaultStorageClass admission; the PV
controller does the same for an unbound claim stored without one), and LimitRanger bounds its storage
request (`PersistentVolumeClaimValidateLimitFunc`: a PersistentVolumeClaim document it forbids is refused;
a StatefulSet's claims are checked as its controller creates them, `claim_refusal`); then the PV controller
binds the new volumes and claims (`kubefit.manifests.provisioning`).

A forbidden Pod document is refused with the API server's message (`pods "web" is forbidden: ...`); a
workload's pods that would be forbidden are not created (its controller's creates fail) and named in a
note. A pod the API server has stored already (it carries `metadata.uid`, which only the API server sets:
a snapshot, `kubectl get -o yaml`) was admitted when it was created and is used as given; so is every
pod when admission is off (`--no-admission`: pods as kube-scheduler's own tests create them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Container, Node, Pod, Quantity
from kubefit.api.policy import CONTAINER, POD, PVC, LimitRange, RuntimeClass
from kubefit.api.storage import PersistentVolumeClaim, StorageClass
from kubefit.errors import Forbidden, InputError, Invalid
from kubefit.k8s.quantity import milli_value, value
from kubefit.k8s.requests import is_supported_pod_level_resource
from kubefit.k8s.resourcenames import CPU, MEMORY, is_hugepages
from kubefit.k8s.validation import aggregate, go_quote
from kubefit.manifests.decode import decode_quantities
from kubefit.manifests.documents import Document
from kubefit.manifests.fastpod import spec_head
from kubefit.manifests.load import Scenario, _toleration
from kubefit.manifests.podresources import (
    Resources,
    aggregate_container,
    consistency_errors,
    containers_of,
    shown,
)
from kubefit.manifests.priority import priority_admission
from kubefit.manifests.provisioning import bind_volumes
from kubefit.manifests.quota import QuotaAdmission, default_class_name

NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300  # --default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds
NO_EXECUTE = "NoExecute"
MAX_MILLI_VALUE = (2**63 - 1) // 1000  # resource.MaxMilliValue
# the controllers whose pods are named from a prefix (`generateName`), as the API server names them in a refusal
GENERATED_NAMES = ("ReplicaSet", "ReplicationController", "Job", "DaemonSet", "Deployment")


# --------------------------------------------------------------------------- defaulting and LimitRanger

def default_host_network_ports(containers: tuple[Container, ...]) -> tuple[Container, ...]:
    """`defaultHostNetworkPorts`: with host networking every port without a `hostPort` takes its
    `containerPort` (the same tuple when nothing changes)."""
    changed = tuple(replace(c, ports=tuple(p if p.host_port else replace(p, host_port=p.container_port)
                                           for p in c.ports))
                    if any(not p.host_port and p.container_port for p in c.ports) else c for c in containers)
    return containers if all(a is b for a, b in zip(changed, containers, strict=True)) else changed


def default_requests(containers: list[Resources]) -> list[str]:
    """`SetDefaults_Pod`: limits copied into missing requests; the names of what was set, per container."""
    set_ = []
    for c in containers:
        missing = [k for k in c.limits if k not in c.requests]
        c.requests.update((k, c.limits[k]) for k in missing)
        if missing:
            set_.append(f"{', '.join(sorted(missing))} for container {c.name}")
    return set_


def default_pod_level_resources(resources: dict[str, Any], containers: list[Resources], inits: list[Resources],
                                doc: Document) -> tuple[dict[str, Quantity], dict[str, Quantity], list[str]]:
    """`SetDefaults_Pod`'s pod-level part (PodLevelResources on) for a pod with `spec.resources`, after its
    containers' limits were copied into their requests: its pod-level requests and limits once defaulted, and the
    names of the requests it set.

    `defaultHugePagePodLimits`: with pod-level requests or limits given, a `hugepages-*` the containers limit
    (`AggregateContainerLimits`) and the pod neither requests nor limits is limited at the pod level to their
    aggregate. `defaultPodRequests`: with pod-level limits, a cpu or memory request the pod lacks becomes its
    containers' aggregate request (`AggregateContainerRequests`; `IsOvercommitAllowed`), then any supported
    resource (cpu, memory, hugepages) it still lacks becomes its pod-level limit. A pod limiting `cpu: 2` at
    the pod level with containers that request nothing requests 2 cpus (kube-scheduler counts pod-level
    requests in place of its containers', `PodRequests`).
    """
    requests = decode_quantities(resources.get("requests"), doc, "spec.resources.requests") or {}
    limits = decode_quantities(resources.get("limits"), doc, "spec.resources.limits") or {}
    if not requests and not limits:
        return requests, limits, []
    for name, q in aggregate_container(containers, inits, "limits").items():
        if is_hugepages(name) and name not in requests:
            limits.setdefault(name, q)
    if not limits:
        return requests, limits, []
    defaulted = dict(requests)
    for name, q in aggregate_container(containers, inits, "requests").items():
        if name in (CPU, MEMORY):  # IsSupportedPodLevelResource and IsOvercommitAllowed
            defaulted.setdefault(name, q)
    for name, q in limits.items():
        if is_supported_pod_level_resource(name):
            defaulted.setdefault(name, q)
    return defaulted, limits, [name for name in defaulted if name not in requests]


def limit_range_defaults(limit_range: LimitRange, containers: list[Resources], inits: list[Resources]) -> list[str]:
    """`PodMutateLimitFunc`: the Container items' `default` limits and `defaultRequest` requests where a container
    has none; the annotation parts `mergePodResourceRequirements` writes ("cpu request for container app")."""
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    for item in limit_range.limits:
        if item.type == CONTAINER:
            requests.update(item.default_request)
            limits.update(item.default)
    notes = []
    for group, prefix in ((containers, "container"), (inits, "init container")):
        for c in group:
            set_limits = sorted(k for k in limits if k not in c.limits)
            c.limits.update((k, limits[k]) for k in set_limits)
            set_requests = sorted(k for k in requests if k not in c.requests)
            c.requests.update((k, requests[k]) for k in set_requests)
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {prefix} {c.name}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {prefix} {c.name}")
    return notes


def _compared(*quantities: Quantity | None) -> list[int]:
    """`requestLimitEnforcedValues`: milli-units when every value allows them, else whole units."""
    values = [value(q.nanos) if q else 0 for q in quantities]
    if all(v <= MAX_MILLI_VALUE for v in values):
        return [milli_value(q.nanos) if q else 0 for q in quantities]
    return values


def _constraint_errors(kind: str, item: Any, requests: dict[str, Quantity], limits: dict[str, Quantity]) -> list[str]:
    """`minConstraint`, `maxConstraint`, `limitRequestRatioConstraint` of one item over one request/limit set."""
    errors = []
    for name, bound in item.min.items():
        req, lim = requests.get(name), limits.get(name)
        r, li, b = _compared(req, lim, bound)
        if req is None:
            errors.append(f"minimum {name} usage per {kind} is {shown(bound)}.  No request is specified")
        elif r < b:
            errors.append(f"minimum {name} usage per {kind} is {shown(bound)}, but request is {shown(req)}")
        elif lim is not None and li < b:
            errors.append(f"minimum {name} usage per {kind} is {shown(bound)}, but limit is {shown(lim)}")
    for name, bound in item.max.items():
        req, lim = requests.get(name), limits.get(name)
        r, li, b = _compared(req, lim, bound)
        if lim is None:
            errors.append(f"maximum {name} usage per {kind} is {shown(bound)}.  No limit is specified")
        elif li > b:
            errors.append(f"maximum {name} usage per {kind} is {shown(bound)}, but limit is {shown(lim)}")
        elif req is not None and r > b:
            errors.append(f"maximum {name} usage per {kind} is {shown(bound)}, but request is {shown(req)}")
    for name, bound in item.max_limit_request_ratio.items():
        req, lim = requests.get(name), limits.get(name)
        r, li, _ = _compared(req, lim, bound)
        if req is None or r == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {shown(bound)}, but no request is "
                          f"specified or request is 0")
        elif lim is None or li == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {shown(bound)}, but no limit is "
                          f"specified or limit is 0")
        else:
            ratio = float(li) / float(r)
            enforced, scaled = float(value(bound.nanos)), ratio
            if value(bound.nanos) <= MAX_MILLI_VALUE:
                enforced, scaled = float(milli_value(bound.nanos)), ratio * 1000
            if scaled > enforced:
                errors.append(f"{name} max limit to request ratio per {kind} is {shown(bound)}, but provided "
                              f"ratio is {ratio:f}")
    return errors


def limit_range_errors(limit_range: LimitRange, containers: list[Resources], inits: list[Resources]) -> list[str]:
    """`PodValidateLimitFunc` of one LimitRange (a create: nothing is compared with an old pod)."""
    errors = []
    for item in limit_range.limits:
        if item.type == CONTAINER:
            for c in (*containers, *inits):
                errors += _constraint_errors(CONTAINER, item, c.requests, c.limits)
        elif item.type == POD:
            errors += _constraint_errors(POD, item, aggregate_container(containers, inits, "requests"),
                                         aggregate_container(containers, inits, "limits"))
    return errors


def claim_limit_errors(limit_range: LimitRange, requests: dict[str, Quantity]) -> list[str]:
    """`PersistentVolumeClaimValidateLimitFunc` of one LimitRange for a claim's `spec.resources.requests` (its
    limits are not read): each PersistentVolumeClaim item's `min` by `minConstraint` (with no limits), its `max`
    by `maxRequestConstraint`, both comparing `requestLimitEnforcedValues`."""
    errors = []
    for item in limit_range.limits:
        if item.type != PVC:
            continue
        for name, bound in item.min.items():
            req = requests.get(name)
            r, _, b = _compared(req, None, bound)
            if req is None:
                errors.append(f"minimum {name} usage per {PVC} is {shown(bound)}.  No request is specified")
            elif r < b:
                errors.append(f"minimum {name} usage per {PVC} is {shown(bound)}, but request is {shown(req)}")
        for name, bound in item.max.items():
            req = requests.get(name)
            r, _, b = _compared(req, None, bound)
            if req is None:
                errors.append(f"maximum {name} usage per {PVC} is {shown(bound)}.  No request is specified")
            elif r > b:
                errors.append(f"maximum {name} usage per {PVC} is {shown(bound)}, but request is {shown(req)}")
    return errors


def claim_refusal(scenario: Scenario) -> Callable[[PersistentVolumeClaim], str | None]:
    """LimitRanger's validation of a claim being created (`runLimitFunc`: the first LimitRange of its namespace it
    breaks refuses it): a function giving the API server's error, `persistentvolumeclaims "data" is forbidden:
    minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`, or None (admitted; always,
    with admission off)."""
    ranges: dict[str, list[LimitRange]] = {}
    if scenario.admission:
        for lr in scenario.objects.of("LimitRange"):
            if any(item.type == PVC for item in lr.limits):
                ranges.setdefault(lr.meta.namespace, []).append(lr)

    def refusal(claim: PersistentVolumeClaim) -> str | None:
        for lr in ranges.get(claim.meta.namespace, []):
            errors = claim_limit_errors(lr, claim.requests or {})
            if errors:
                return f"persistentvolumeclaims {go_quote(claim.meta.name)} is forbidden: {aggregate(errors)}"
        return None
    return refusal


# --------------------------------------------------------------------------- tolerations

def _tolerates_no_execute(tolerations: Iterable[dict[str, Any]], key: str) -> bool:
    return any(t.get("key", "") in (key, "") and t.get("effect", "") in (NO_EXECUTE, "") for t in tolerations)


def default_toleration_seconds(tolerations: list[dict[str, Any]]) -> list[str]:
    """DefaultTolerationSeconds: a not-ready / unreachable NoExecute toleration (300 s) for each the pod does not
    tolerate yet; the keys added."""
    added = []
    for key in (NOT_READY, UNREACHABLE):
        if not _tolerates_no_execute(tolerations, key):
            tolerations.append({"key": key, "operator": "Exists", "effect": NO_EXECUTE,
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
            added.append(key)
    return added


def _superset(ss: dict[str, Any], t: dict[str, Any]) -> bool:
    """`tolerations.isSuperset`: `ss` tolerates everything `t` does."""
    if ss == t:
        return True
    if t.get("key", "") != ss.get("key", "") and (ss.get("key", "") or ss.get("operator", "") != "Exists"):
        return False
    if t.get("effect", "") != ss.get("effect", "") and ss.get("effect", ""):
        return False
    if ss.get("effect") == NO_EXECUTE and ss.get("tolerationSeconds") is not None:
        if t.get("tolerationSeconds") is None or t["tolerationSeconds"] > ss["tolerationSeconds"]:
            return False
    if ss.get("operator", "") in ("Equal", ""):
        return t.get("operator", "") == "Equal" and t.get("value", "") == ss.get("value", "")
    return ss.get("operator") == "Exists"


def merge_tolerations(first: list[dict[str, Any]], second: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tolerations.MergeTolerations`: both lists, a toleration dropped when another one is its superset."""
    everything = [*first, *second]
    merged: list[dict[str, Any]] = []
    for i, t in enumerate(everything):
        if any(_superset(m, t) for m in merged):
            continue
        if any(t != later and _superset(later, t) for later in everything[i + 1:]):
            continue
        merged.append(t)
    return merged


# --------------------------------------------------------------------------- RuntimeClass

def runtime_class_changes(pod: Pod, spec: dict[str, Any], rc: RuntimeClass | None, selector: dict[str, str] | None,
                          tolerations: list[dict[str, Any]]) -> tuple[dict[str, int] | None, dict[str, str] | None,
                                                                      list[dict[str, Any]]]:
    """`setOverhead` and `setScheduling`: the pod's overhead (None: left as it is), node selector and tolerations
    after its RuntimeClass."""
    overhead: dict[str, int] | None = None
    if rc is not None and rc.overhead is not None:
        overhead = {k: q.nanos for k, q in rc.overhead.items()}
        if _overhead_given(spec) and overhead != pod.overhead:
            raise Forbidden("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                            "spec.overhead")
    if rc is None or (not rc.node_selector and not rc.tolerations):
        return overhead, selector, tolerations
    merged = dict(rc.node_selector) if selector is None else dict(selector)
    if selector is not None:
        for key, wanted in rc.node_selector.items():
            if key in merged and merged[key] != wanted:
                raise Forbidden(f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {wanted}; "
                                f"pod.spec.nodeSelector[{key}] = {merged[key]}", f"spec.nodeSelector.{key}")
            merged[key] = wanted
    return overhead, merged, merge_tolerations(tolerations, rc.tolerations)


def validate_overhead(spec: dict[str, Any], rc: RuntimeClass | None) -> None:
    """`validateOverhead`: a pod may carry an overhead only from a RuntimeClass that defines one."""
    if (rc is None or rc.overhead is None) and _overhead_given(spec):
        raise Forbidden("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
                        "spec.overhead")


def _overhead_given(spec: dict[str, Any]) -> bool:
    """`pod.Spec.Overhead != nil`: an explicit `overhead: {}` is set too."""
    return spec.get("overhead") is not None


# --------------------------------------------------------------------------- the chain

@dataclass
class Outcome:
    """What the chain made of one pod spec: the fields that changed, what each plugin did, or the refusal."""

    fields: dict[str, Any] = field(default_factory=dict)
    done: dict[str, str] = field(default_factory=dict)  # plugin → what it set (for the notes)
    forbidden: Forbidden | None = None


@dataclass
class Admission:
    """The admission chain over one scenario's LimitRanges, RuntimeClasses and StorageClasses; remembers what
    it did for the notes. Pods of one spec (the same decoded objects) are admitted once."""

    limit_ranges: dict[str, list[LimitRange]]
    runtime_classes: dict[str, RuntimeClass]
    outcomes: dict[tuple, Outcome] = field(default_factory=dict)
    applied: dict[str, list] = field(default_factory=dict)  # plugin → [pods it changed, the first, what it did]

    @classmethod
    def of(cls, scenario: Scenario) -> Admission:
        limit_ranges: dict[str, list[LimitRange]] = {}
        for lr in scenario.objects.of("LimitRange"):
            limit_ranges.setdefault(lr.meta.namespace, []).append(lr)
        return cls(limit_ranges, {rc.meta.name: rc for rc in scenario.objects.of("RuntimeClass")})

    def admit(self, pod: Pod) -> Pod:
        """The pod as the API server stores it (changed in place), or `Forbidden`."""
        head = spec_head(pod)  # (a pod still its JSON is read whole only when its outcome is not known yet)
        runtime_class = head.runtimeClassName
        # pods of one spec share their decoded objects (load's memo, a workload's replicas) or their manifest's
        # (a DaemonSet's pods, one spec per node): either identity says the chain's outcome is the same
        decoded = (id(pod.containers), id(pod.init_containers), id(pod.tolerations), id(pod.node_selector),
                   id(pod.overhead), id(pod.pod_requests), pod.namespace, runtime_class, head.hostNetwork is True)
        outcome = self.outcomes.get(decoded)
        if outcome is None:
            spec = pod.raw.get("spec") or {}
            given = (id(spec.get("containers")), id(spec.get("initContainers")), id(spec.get("tolerations")),
                     id(spec.get("nodeSelector")), id(spec.get("overhead")), id(spec.get("resources")),
                     pod.namespace, runtime_class, spec.get("hostNetwork") is True)
            outcome = self.outcomes.get(given) or self._chain(pod, spec)
            self.outcomes[decoded] = self.outcomes[given] = outcome
        if outcome.forbidden is not None:
            raise outcome.forbidden
        for name, new in outcome.fields.items():
            setattr(pod, name, new)
        for plugin, what in outcome.done.items():
            seen = self.applied.get(plugin)
            if seen is None:
                self.applied[plugin] = [1, pod.created_by or f"Pod/{pod.name}", what]
            else:
                seen[0] += 1
        return pod

    def _chain(self, pod: Pod, spec: dict[str, Any]) -> Outcome:
        out = Outcome()
        try:
            self._mutate_and_validate(pod, spec, out)
        except Forbidden as exc:
            out.forbidden = exc
        return out

    def _mutate_and_validate(self, pod: Pod, spec: dict[str, Any], out: Outcome) -> None:
        doc = Document(pod.raw, pod.source, 0)
        containers, inits = containers_of(spec, doc, "containers"), containers_of(spec, doc, "initContainers")
        defaulted = default_requests([*containers, *inits])
        if defaulted:
            out.done["defaulting"] = "; ".join(defaulted)
        pod_level = isinstance(spec.get("resources"), dict)
        if pod_level:
            pod_requests, pod_limits, set_ = default_pod_level_resources(spec["resources"], containers, inits, doc)
            if set_:
                out.fields["pod_requests"] = {name: q.nanos for name, q in pod_requests.items()}
                out.done["pod-level defaulting"] = ", ".join(
                    f"{name}={pod_requests[name].text}" for name in set_)
        if spec.get("hostNetwork") is True:
            ports = default_host_network_ports(pod.containers), default_host_network_ports(pod.init_containers)
            if ports != (pod.containers, pod.init_containers):
                out.fields["containers"], out.fields["init_containers"] = ports
                given = {(c.name, p.container_port) for c in (*pod.containers, *pod.init_containers)
                         for p in c.ports if p.host_port}
                out.done["hostNetwork ports"] = ", ".join(
                    f"hostPort {p.container_port} for container {c.name}" for c in (*ports[0], *ports[1])
                    for p in c.ports if (c.name, p.container_port) not in given)
        ranges = self.limit_ranges.get(pod.namespace, [])
        set_ = [part for lr in ranges for part in limit_range_defaults(lr, containers, inits)]
        if set_:
            out.done["LimitRanger"] = "; ".join(set_)  # the kubernetes.io/limit-ranger annotation's words
        if defaulted or set_:
            out.fields["containers"] = _requests_into(out.fields.get("containers", pod.containers), containers)
            out.fields["init_containers"] = _requests_into(out.fields.get("init_containers", pod.init_containers),
                                                           inits)
        tolerations = [dict(t) for t in spec.get("tolerations") or [] if isinstance(t, dict)]
        added = default_toleration_seconds(tolerations)
        if added:
            out.done["DefaultTolerationSeconds"] = ", ".join(added)
        rc = self._runtime_class(spec)
        overhead, selector, tolerations = runtime_class_changes(pod, spec, rc, pod.node_selector, tolerations)
        if rc is not None and (overhead is not None or selector != pod.node_selector):
            out.done[f"RuntimeClass {rc.meta.name}"] = _runtime_class_summary(rc)
        if overhead is not None:
            out.fields["overhead"] = overhead
        if selector is not pod.node_selector:
            out.fields["node_selector"] = selector
        if added or rc is not None:
            out.fields["tolerations"] = tuple(_toleration(t, doc, "spec.tolerations") for t in tolerations)
        if pod_level:  # validation (ValidatePodCreate), after the mutating plugins, before the validating ones
            invalid = consistency_errors(pod_requests, pod_limits, containers, inits)
            if invalid:
                raise Invalid(aggregate(invalid), "spec.resources")
        for lr in ranges:  # runLimitFunc: the first LimitRange a pod breaks forbids it
            errors = limit_range_errors(lr, containers, inits)
            if errors:
                raise Forbidden(aggregate(errors), "spec.containers")
        validate_overhead(spec, rc)

    def _runtime_class(self, spec: dict[str, Any]) -> RuntimeClass | None:
        name = spec.get("runtimeClassName")
        if name is None:
            return None
        if not isinstance(name, str) or name not in self.runtime_classes:
            raise Forbidden(f"pod rejected: RuntimeClass {go_quote(str(name))} not found", "spec.runtimeClassName")
        return self.runtime_classes[name]

    def notes(self, nodes: list[Node]) -> list[str]:
        """One note per plugin that changed pods, `admission: <plugin>: <what> (<pods>, e.g. <first>: <detail>)`;
        DefaultTolerationSeconds only when a node carries a taint its tolerations tolerate (elsewhere they change
        no answer)."""
        tainted = [n.name for n in nodes if any(t.effect == NO_EXECUTE and t.key in (NOT_READY, UNREACHABLE)
                                                for t in n.taints)]
        what = {"defaulting": "container limits copied into the missing requests",
                "pod-level defaulting": "pod-level requests defaulted from the containers' requests and the "
                                        "pod-level limits (defaultPodRequests), which the scheduler counts",
                "hostNetwork ports": "ports of host-network pods without a hostPort given their containerPort "
                                     "(SetDefaults_Pod), so NodePorts counts them",
                "LimitRanger": "the namespace's LimitRange defaults applied",
                "DefaultTolerationSeconds": f"NoExecute tolerations of {NOT_READY} and {UNREACHABLE} "
                                            f"({DEFAULT_TOLERATION_SECONDS} s) added, so pods may go to the "
                                            f"node(s) tainted so ({', '.join(tainted[:3])})"}
        out = []
        for plugin, (count, first, done) in self.applied.items():
            if plugin == "DefaultTolerationSeconds" and not tainted:
                continue
            detail = "" if plugin == "DefaultTolerationSeconds" else f": {done}"
            pods = f"{count} pod" + ("s" if count != 1 else "")
            out.append(f"admission: {plugin}: {what.get(plugin, 'merged in')} ({pods}, e.g. {first}{detail})")
        return out


def _runtime_class_summary(rc: RuntimeClass) -> str:
    parts = []
    if rc.overhead is not None:
        parts.append("spec.overhead " + ", ".join(f"{k}={q.text}" for k, q in rc.overhead.items()))
    if rc.node_selector:
        parts.append("nodeSelector " + ", ".join(f"{k}={v}" for k, v in rc.node_selector.items()))
    if rc.tolerations:
        parts.append(f"{len(rc.tolerations)} toleration(s)")
    return "; ".join(parts) or "nothing to add"


def _requests_into(decoded: tuple[Container, ...], admitted: list[Resources]) -> tuple[Container, ...]:
    """The decoded containers with the requests the chain gave them."""
    return tuple(c if c.requests.keys() == a.requests.keys() else
                 replace(c, requests={k: q.nanos for k, q in a.requests.items()})
                 for c, a in zip(decoded, admitted, strict=True))


# --------------------------------------------------------------------------- the scenario

def default_storage_class(classes: list[StorageClass]) -> StorageClass | None:
    """`util.GetDefaultClass`: of the classes marked default, the newest (kubefit reads no creation time:
    then the first by name, upstream's tie-break)."""
    marked = sorted((c for c in classes if c.default_class), key=lambda c: c.meta.name)
    return marked[0] if marked else None


def admit_claims(scenario: Scenario) -> list[str]:
    """DefaultStorageClass: the default class for claims without `storageClassName`; notes.

    A new claim gets it whatever else it says, `spec.volumeName` included (plugin/pkg/admission/storage/
    storageclass/setdefault/admission.go `Admit` looks at the class only: a claim pre-bound to a volume of no
    class then no longer matches it, `checkVolumeSatisfyClaim`). A stored claim (`metadata.uid`) still unbound
    and naming no volume gets it from the PV controller (`assignDefaultStorageClass`, the retroactive default).
    """
    default = default_storage_class(scenario.objects.of("StorageClass"))
    claims = scenario.objects.by_kind.get("PersistentVolumeClaim", [])
    if default is None:
        return []
    changed = []
    for i, claim in enumerate(claims):
        if claim.storage_class_name is not None or claim.beta_class_annotation is not None:
            continue
        if not claim.meta.uid or not (claim.volume_name or claim.bind_completed):
            claims[i] = replace(claim, storage_class_name=default.meta.name)
            changed.append(claim.meta.key)
    if not changed:
        return []
    return [f"DefaultStorageClass admission: claim(s) without storageClassName given the default class "
            f"{default.meta.name!r} ({', '.join(changed[:4])}{' …' if len(changed) > 4 else ''})"]


def create_claims(scenario: Scenario, new: list[PersistentVolumeClaim]) -> list[str]:
    """Claims a controller creates once the scenario is loaded (a StatefulSet's next ordinal, `capacity --pod
    statefulset/NAME`), as any claim is created: DefaultStorageClass, then the PV controller binds or
    provisions them (`bind_volumes`); added to the scenario's objects, and to the volume plugins' index when
    one was built already. The notes."""
    objects = scenario.objects
    volumes = objects.by_kind.setdefault("PersistentVolume", [])
    fresh = Scenario(objects=ClusterObjects(by_kind={"StorageClass": objects.of("StorageClass"),
                                                     "PersistentVolume": volumes, "PersistentVolumeClaim": list(new)}),
                     admission=scenario.admission)
    notes = admit_claims(fresh) + bind_volumes(fresh) if scenario.admission else []
    created = fresh.objects.of("PersistentVolumeClaim")
    objects.by_kind.setdefault("PersistentVolumeClaim", []).extend(created)
    for kind in ("PersistentVolumeClaim", "PersistentVolume"):
        objects._named.pop(kind, None)
    storage = objects.__dict__.get("_memo", {}).get("storage")  # the volume plugins' StorageIndex
    if storage is not None:
        storage.claims.update(((c.meta.namespace, c.meta.name), c) for c in created)
        storage.volumes.update((v.meta.name, v) for v in volumes)  # the ones bound to a new claim, the new ones
    return notes


def refuse_claims(scenario: Scenario) -> None:
    """LimitRanger on the claims being created (no `metadata.uid`): a PersistentVolumeClaim document it forbids
    is refused with the API server's error, exit 2 (a StatefulSet's claims were checked as its controller
    created them, `kubefit.manifests.workloads`)."""
    refusal = claim_refusal(scenario)
    for claim in scenario.objects.by_kind.get("PersistentVolumeClaim", []):
        message = None if claim.meta.uid else refusal(claim)
        if message is not None:
            raise InputError(message, file=claim.meta.source, obj=f"PersistentVolumeClaim/{claim.meta.name}",
                             field="spec.resources.requests")


def admit_scenario(scenario: Scenario, *, enabled: bool = True, quota_at_arrival: bool = False) -> None:
    """Admission of the scenario's pods and claims (Priority always; the rest when `enabled`): pods changed in
    place, a forbidden Pod document refused, a workload's forbidden pods left out; the notes appended.
    `quota_at_arrival`: ResourceQuota counts the pods running already but charges no pod being created — a
    timeline creates each when it arrives (`kubefit.scheduler.timeline`), against the usage then."""
    priority = priority_admission(scenario)
    scenario.admission = enabled
    scenario.objects.api_server = replace(scenario.objects.api_server, admission=enabled,
                                          quota_at_arrival=quota_at_arrival)  # what runs create goes through it
    admission = None
    if enabled:
        scenario.warnings += admit_claims(scenario)
        refuse_claims(scenario)
        scenario.warnings += bind_volumes(scenario)  # the PV controller, right after the claims are created
        admission = Admission.of(scenario)
    quotas = resource_quotas(scenario) if enabled else None
    kept: list[Pod] = []
    refused: dict[str, tuple[str, int]] = {}
    for pod in scenario.pods:
        try:
            pod = priority(pod)
            # stored by an API server (only it sets a uid): admitted when it was created
            kept.append(pod if admission is None or pod.uid else admission.admit(pod))
        except Forbidden as exc:
            if not pod.created_by:
                raise InputError(_refusal(exc, pod), file=pod.source, obj=f"Pod/{pod.name}",
                                 field=exc.field) from None
            scenario.forbidden.append((pod, _refusal(exc, pod)))
            message, count = refused.get(pod.created_by, (scenario.forbidden[-1][1], 0))
            refused[pod.created_by] = (message, count + 1)
    if quotas:  # ResourceQuota, the last validating plugin: the pods running already first, then each creation
        kept = _admit_quota(scenario, quotas, kept, refused, creates=not quota_at_arrival)
    scenario.pods = kept
    scenario.quota = quotas
    if admission is not None:
        scenario.warnings += admission.notes(scenario.nodes)
        scenario.warnings += pod_security_note(scenario)
    scenario.warnings += [f"{owner}: its controller cannot create {count} pod(s): {message}"
                          for owner, (message, count) in refused.items()]
    if not enabled and scenario.objects.of("ResourceQuota"):
        scenario.warnings.append(f"{len(scenario.objects.of('ResourceQuota'))} ResourceQuota(s) not enforced: "
                                 f"admission is off (--no-admission), pods are taken as given")


@dataclass(frozen=True)
class _StoredResources:
    """The resources a pod is stored with, the resolver ResourceQuota admission charges: a class, not a closure,
    so that a scenario holding its quota admission pickles (shipped to Dask workers)."""

    limit_ranges: dict[str, list[LimitRange]]

    def __call__(self, pod: Pod) -> tuple[list[Resources], list[Resources],
                                          tuple[dict[str, Quantity], dict[str, Quantity]] | None]:
        """The pod's containers (requests and limits) and pod-level resources as the API server stores it: after
        `SetDefaults_Pod` and, for a pod being created (no uid), LimitRanger's defaults."""
        spec = pod.raw.get("spec") or {}
        doc = Document(pod.raw, pod.source, 0)
        containers, inits = containers_of(spec, doc, "containers"), containers_of(spec, doc, "initContainers")
        default_requests([*containers, *inits])
        if not pod.uid:
            for lr in self.limit_ranges.get(pod.namespace, []):
                limit_range_defaults(lr, containers, inits)
        pod_level = None
        if isinstance(spec.get("resources"), dict):
            requests, limits, _ = default_pod_level_resources(spec["resources"], containers, inits, doc)
            pod_level = requests, limits
        return containers, inits, pod_level


def resource_quotas(scenario: Scenario) -> QuotaAdmission:
    """The ResourceQuota admission over the scenario's quotas (empty, and false, without any)."""
    limit_ranges: dict[str, list[LimitRange]] = {}
    for lr in scenario.objects.of("LimitRange"):
        limit_ranges.setdefault(lr.meta.namespace, []).append(lr)
    return QuotaAdmission(scenario.objects.of("ResourceQuota"), _StoredResources(limit_ranges),
                          default_class_name([d for d in scenario.skipped if d.kind == "PriorityClass"]))


def _admit_quota(scenario: Scenario, quotas: QuotaAdmission, pods: list[Pod],
                 refused: dict[str, tuple[str, int]], creates: bool = True) -> list[Pod]:
    """The pods the quotas admit, in document order: those the cluster runs already (stored, or bound by
    `spec.nodeName`) counted first, as the quota controller counts them, then (`creates`) each pod created
    charged or refused. A refused pod is not created: kept in `scenario.refused` with the API server's error,
    named in a note (a workload's: its controller reports the failed create)."""
    governed = [p for p in pods if quotas.governs(p)]
    for pod in governed:
        if pod.uid or pod.bound:
            quotas.count(pod)
    if not creates:
        return pods
    denied: set[int] = set()
    for pod in governed:
        if pod.uid or pod.bound:
            continue
        message = quotas.admit(pod)
        if message is None:
            continue
        denied.add(id(pod))
        error = forbidden_error(pod, message)
        scenario.refused.append((pod, error))
        owner = pod.created_by or f"Pod/{pod.name}"
        if pod.created_by:
            first, count = refused.get(owner, (error, 0))
            refused[owner] = (first, count + 1)
        else:
            scenario.warnings.append(f"Pod/{pod.name} ({pod.source}) is not created: {error}")
    return [p for p in pods if id(p) not in denied] if denied else pods


POD_SECURITY_ENFORCE = "pod-security.kubernetes.io/enforce"


def pod_security_note(scenario: Scenario) -> list[str]:
    """The warning for namespaces whose `pod-security.kubernetes.io/enforce` label asks the PodSecurity admission
    (enabled by default) for the `baseline` or `restricted` level, where new pods run: it forbids pods that break
    the level (k8s.io/pod-security-admission), which kubefit does not check."""
    used = {p.namespace for p in scenario.pods if not p.uid}
    enforced = [f"{ns.meta.name} ({ns.meta.labels[POD_SECURITY_ENFORCE]})" for ns in scenario.objects.of("Namespace")
                if ns.meta.name in used and ns.meta.labels.get(POD_SECURITY_ENFORCE, "privileged") != "privileged"]
    if not enforced:
        return []
    return [f"PodSecurity admission: namespace(s) {', '.join(enforced[:4])}{' …' if len(enforced) > 4 else ''} "
            f"enforce a Pod Security Standard: the API server forbids pods that break it, and kubefit does not "
            f"check them (a forbidden pod would not exist)"]


def admitter(scenario: Scenario) -> Callable[[Pod], Pod | None]:
    """For pods a controller creates later (a plan's DaemonSet pods, capacity's replica): a function giving
    each as the API server admits it, None when it forbids it (admission off: Priority only, as at load)."""
    priority = priority_admission(scenario)
    admission = Admission.of(scenario) if scenario.admission else None

    def admit(pod: Pod) -> Pod | None:
        try:
            pod = priority(pod)
            return pod if admission is None else admission.admit(replace(pod))
        except Forbidden:
            return None
    return admit


def _refusal(exc: Forbidden, pod: Pod) -> str:
    """The API server's error for a pod it refuses: `pods "web-" is forbidden: ...` (an admission plugin, before a
    generated name exists), `Pod "web-x7k2p" is invalid: ...` (validation, `errors.NewInvalid`: the kind, and
    the name generated before it runs)."""
    if isinstance(exc, Invalid):
        return f"Pod {go_quote(pod.name)} is invalid: {exc.message}"
    return f"pods {go_quote(_create_name(pod))} is forbidden: {exc.message}"


def forbidden_error(pod: Pod, message: str) -> str:
    """An admission plugin's refusal of a pod being created, as the API server words it: `pods "web-" is
    forbidden: <message>`."""
    return f"pods {go_quote(_create_name(pod))} is forbidden: {message}"


def _create_name(pod: Pod) -> str:
    """The name the refusal names: a generated name's prefix (the object has no name yet) or the pod's own."""
    if pod.created_by.partition("/")[0] in GENERATED_NAMES and "-" in pod.name:
        return pod.name.rsplit("-", 1)[0] + "-"
    return pod.name
