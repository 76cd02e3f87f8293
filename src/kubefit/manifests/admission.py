"""API-server admission of the pods and claims a scenario creates: the defaulting and the admission plugins
that change where or whether a pod runs, in the API server's order, each named in a note when it changed
something.

For a pod being created (defaulting at decoding, then the mutating plugins in the order of
`pkg/kubeapiserver/options/plugins.go`, then the validating ones):

1. `SetDefaults_Pod` (pkg/apis/core/v1/defaults.go): a container's or init container's limits become its
   requests where it has none;
2. LimitRanger (plugin/pkg/admission/limitranger, `PodMutateLimitFunc`): each LimitRange of the pod's
   namespace gives containers and init containers without them its `default` limits and `defaultRequest`
   requests;
3. Priority (`kubefit.manifests.priority`): `priorityClassName` → `spec.priority`;
4. DefaultTolerationSeconds: `node.kubernetes.io/not-ready` and `unreachable` NoExecute tolerations (300 s)
   unless the pod tolerates them already;
5. RuntimeClass (`setOverhead`, `setScheduling`): `overhead.podFixed` becomes `spec.overhead` (a different
   one is forbidden), `scheduling.nodeSelector` is merged in (a conflicting value is forbidden),
   `scheduling.tolerations` merged (`tolerations.MergeTolerations`);
6. validation: LimitRanger's min / max / maxLimitRequestRatio (`PodValidateLimitFunc`) and RuntimeClass's
   `validateOverhead` (an overhead no RuntimeClass defines is forbidden).

A claim without `storageClassName` gets the default StorageClass (DefaultStorageClass admission; the PV
controller does the same for an unbound claim stored without one); then the PV controller binds the new
volumes and claims (`kubefit.manifests.provisioning`).

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

from kubefit.api.core import Container, Node, Pod, Quantity
from kubefit.api.policy import CONTAINER, POD, LimitRange, RuntimeClass
from kubefit.api.storage import StorageClass
from kubefit.errors import InputError
from kubefit.k8s import goquantity as gq
from kubefit.k8s.quantity import milli_value, value
from kubefit.k8s.validation import aggregate, go_quote
from kubefit.manifests.decode import decode_quantities
from kubefit.manifests.documents import Document
from kubefit.manifests.load import Scenario, _toleration
from kubefit.manifests.priority import priority_admission, resolve_priorities
from kubefit.manifests.provisioning import bind_volumes

NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300  # --default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds
NO_EXECUTE = "NoExecute"
MAX_MILLI_VALUE = (2**63 - 1) // 1000  # resource.MaxMilliValue
# the controllers whose pods are named from a prefix (`generateName`), as the API server names them in a refusal
GENERATED_NAMES = ("ReplicaSet", "ReplicationController", "Job", "DaemonSet", "Deployment")


class Forbidden(Exception):
    """The admission chain refused a pod: `message` is the plugin's error, `field` where it points (if one)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.field = message, field


# --------------------------------------------------------------------------- one pod's resources

@dataclass
class Resources:
    """One container's (or init container's) requests and limits while the chain runs, as Quantities (their
    text is what the API server's messages print)."""

    name: str
    requests: dict[str, Quantity]
    limits: dict[str, Quantity]
    sidecar: bool = False


def _containers(pod: Pod, key: str) -> list[Resources]:
    """`spec.containers` / `spec.initContainers` of the pod's manifest as `Resources` (decoded already once:
    no error can arise here)."""
    doc = Document(pod.raw, pod.source, 0)
    out = []
    for i, raw in enumerate((pod.raw.get("spec") or {}).get(key) or []):
        resources = raw.get("resources") or {}
        path = f"spec.{key}[{i}].resources"
        out.append(Resources(str(raw.get("name") or ""),
                             decode_quantities(resources.get("requests"), doc, f"{path}.requests") or {},
                             decode_quantities(resources.get("limits"), doc, f"{path}.limits") or {},
                             raw.get("restartPolicy") == "Always"))
    return out


def _shown(q: Quantity) -> str:
    """`Quantity.String()` of what was written: Go's canonical form."""
    return gq.parse(q.text).string()


# --------------------------------------------------------------------------- defaulting and LimitRanger

def default_requests(containers: list[Resources]) -> list[str]:
    """`SetDefaults_Pod`: limits copied into missing requests; the names of what was set, per container."""
    set_ = []
    for c in containers:
        missing = [k for k in c.limits if k not in c.requests]
        c.requests.update((k, c.limits[k]) for k in missing)
        if missing:
            set_.append(f"{', '.join(sorted(missing))} for container {c.name}")
    return set_


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
            errors.append(f"minimum {name} usage per {kind} is {_shown(bound)}.  No request is specified")
        elif r < b:
            errors.append(f"minimum {name} usage per {kind} is {_shown(bound)}, but request is {_shown(req)}")
        elif lim is not None and li < b:
            errors.append(f"minimum {name} usage per {kind} is {_shown(bound)}, but limit is {_shown(lim)}")
    for name, bound in item.max.items():
        req, lim = requests.get(name), limits.get(name)
        r, li, b = _compared(req, lim, bound)
        if lim is None:
            errors.append(f"maximum {name} usage per {kind} is {_shown(bound)}.  No limit is specified")
        elif li > b:
            errors.append(f"maximum {name} usage per {kind} is {_shown(bound)}, but limit is {_shown(lim)}")
        elif req is not None and r > b:
            errors.append(f"maximum {name} usage per {kind} is {_shown(bound)}, but request is {_shown(req)}")
    for name, bound in item.max_limit_request_ratio.items():
        req, lim = requests.get(name), limits.get(name)
        r, li, _ = _compared(req, lim, bound)
        if req is None or r == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {_shown(bound)}, but no request is "
                          f"specified or request is 0")
        elif lim is None or li == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {_shown(bound)}, but no limit is "
                          f"specified or limit is 0")
        else:
            ratio = float(li) / float(r)
            enforced, scaled = float(value(bound.nanos)), ratio
            if value(bound.nanos) <= MAX_MILLI_VALUE:
                enforced, scaled = float(milli_value(bound.nanos)), ratio * 1000
            if scaled > enforced:
                errors.append(f"{name} max limit to request ratio per {kind} is {_shown(bound)}, but provided "
                              f"ratio is {ratio:f}")
    return errors


def _pod_total(containers: list[Resources], inits: list[Resources], which: str) -> dict[str, Quantity]:
    """`podRequests` / `podLimits` of limitranger (the spec only): containers and sidecars summed, then the
    larger of that and each init container's peak; a sum keeps the format of its first term."""
    def add(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:
        for k, q in other.items():
            into[k] = _sum(into[k], q) if k in into else q

    def peak(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:
        for k, q in other.items():
            if k not in into or q.nanos > into[k].nanos:
                into[k] = q
    total: dict[str, Quantity] = {}
    for c in containers:
        add(total, getattr(c, which))
    sidecars: dict[str, Quantity] = {}
    inits_peak: dict[str, Quantity] = {}
    for c in inits:
        own = getattr(c, which)
        if c.sidecar:
            add(total, own)
            add(sidecars, own)
            candidate = sidecars
        else:
            candidate = dict(own)
            add(candidate, sidecars)
        peak(inits_peak, candidate)
    peak(total, inits_peak)
    return total


def _sum(a: Quantity, b: Quantity) -> Quantity:
    """`a.Add(b)`: the exact sum, printed in `a`'s format (its cached string dropped)."""
    nanos = a.nanos + b.nanos
    return Quantity(gq.canonical(gq.GoQuantity(gq.parse(a.text).format, value=nanos, scale=-9)), nanos)


def limit_range_errors(limit_range: LimitRange, containers: list[Resources], inits: list[Resources]) -> list[str]:
    """`PodValidateLimitFunc` of one LimitRange (a create: nothing is compared with an old pod)."""
    errors = []
    for item in limit_range.limits:
        if item.type == CONTAINER:
            for c in (*containers, *inits):
                errors += _constraint_errors(CONTAINER, item, c.requests, c.limits)
        elif item.type == POD:
            errors += _constraint_errors(POD, item, _pod_total(containers, inits, "requests"),
                                         _pod_total(containers, inits, "limits"))
    return errors


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
        spec = pod.raw.get("spec") or {}
        runtime_class = spec.get("runtimeClassName")
        # pods of one spec share their decoded objects (load's memo, a workload's replicas) or their manifest's
        # (a DaemonSet's pods, one spec per node): either identity says the chain's outcome is the same
        decoded = (id(pod.containers), id(pod.init_containers), id(pod.tolerations), id(pod.node_selector),
                   id(pod.overhead), pod.namespace, runtime_class)
        outcome = self.outcomes.get(decoded)
        if outcome is None:
            given = (id(spec.get("containers")), id(spec.get("initContainers")), id(spec.get("tolerations")),
                     id(spec.get("nodeSelector")), id(spec.get("overhead")), pod.namespace, runtime_class)
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
        containers, inits = _containers(pod, "containers"), _containers(pod, "initContainers")
        defaulted = default_requests([*containers, *inits])
        if defaulted:
            out.done["defaulting"] = "; ".join(defaulted)
        ranges = self.limit_ranges.get(pod.namespace, [])
        set_ = [part for lr in ranges for part in limit_range_defaults(lr, containers, inits)]
        if set_:
            out.done["LimitRanger"] = "; ".join(set_)  # the kubernetes.io/limit-ranger annotation's words
        if defaulted or set_:
            out.fields["containers"] = _requests_into(pod.containers, containers)
            out.fields["init_containers"] = _requests_into(pod.init_containers, inits)
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
            doc = Document(pod.raw, pod.source, 0)
            out.fields["tolerations"] = tuple(_toleration(t, doc, "spec.tolerations") for t in tolerations)
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
    """DefaultStorageClass: the default class for claims without `storageClassName` not yet bound; notes."""
    default = default_storage_class(scenario.objects.of("StorageClass"))
    claims = scenario.objects.by_kind.get("PersistentVolumeClaim", [])
    if default is None:
        return []
    changed = []
    for i, claim in enumerate(claims):
        if claim.storage_class_name is None and claim.beta_class_annotation is None and not claim.volume_name:
            claims[i] = replace(claim, storage_class_name=default.meta.name)
            changed.append(claim.meta.key)
    if not changed:
        return []
    return [f"DefaultStorageClass admission: claim(s) without storageClassName given the default class "
            f"{default.meta.name!r} ({', '.join(changed[:4])}{' …' if len(changed) > 4 else ''})"]


def admit_scenario(scenario: Scenario, *, enabled: bool = True) -> None:
    """Admission of the scenario's pods and claims (Priority always; the rest when `enabled`): pods changed in
    place, a forbidden Pod document refused, a workload's forbidden pods left out; the notes appended."""
    resolve_priorities(scenario)
    scenario.admission = enabled
    if not enabled:
        return
    scenario.warnings += admit_claims(scenario)
    scenario.warnings += bind_volumes(scenario)  # the PV controller, right after the claims are created
    admission = Admission.of(scenario)
    kept: list[Pod] = []
    refused: dict[str, tuple[str, int]] = {}
    for pod in scenario.pods:
        if pod.uid:  # stored by an API server (only it sets a uid): admitted when it was created
            kept.append(pod)
            continue
        try:
            kept.append(admission.admit(pod))
        except Forbidden as exc:
            if not pod.created_by:
                raise InputError(f"pods {go_quote(pod.name)} is forbidden: {exc.message}", file=pod.source,
                                 obj=f"Pod/{pod.name}", field=exc.field) from None
            message, count = refused.get(pod.created_by, (f"pods {go_quote(_create_name(pod))} is forbidden: "
                                                          f"{exc.message}", 0))
            refused[pod.created_by] = (message, count + 1)
    scenario.pods = kept
    scenario.warnings += admission.notes(scenario.nodes)
    scenario.warnings += [f"{owner}: its controller cannot create {count} pod(s): {message}"
                          for owner, (message, count) in refused.items()]


def admitter(scenario: Scenario) -> Callable[[Pod], Pod | None]:
    """For pods a controller creates later (a plan's DaemonSet pods, capacity's replica): a function giving
    each as the API server admits it, None when it forbids it (admission off: Priority only, as at load)."""
    priority = priority_admission(scenario)
    if not scenario.admission:
        return priority
    admission = Admission.of(scenario)

    def admit(pod: Pod) -> Pod | None:
        try:
            return admission.admit(replace(priority(pod)))
        except Forbidden:
            return None
    return admit


def _create_name(pod: Pod) -> str:
    """The name the refusal names: a generated name's prefix (the object has no name yet) or the pod's own."""
    if pod.created_by.partition("/")[0] in GENERATED_NAMES and "-" in pod.name:
        return pod.name.rsplit("-", 1)[0] + "-"
    return pod.name
