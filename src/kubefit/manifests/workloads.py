"""Workload controllers → the pods they would still create (Deployment, ReplicaSet, StatefulSet, …).

Each controller compares what it wants with the active pods it already owns (`ownerReferences` uid,
else kind and name) and creates only the difference, named as it names them:

- Deployment → its ReplicaSet `<deployment>-<pod-template-hash>` (unless one it owns is given; a paused
  Deployment creates none), which the ReplicaSet rule then expands;
- ReplicaSet / ReplicationController → `<name>-<5 chars>` until `spec.replicas` pods are active;
- StatefulSet → `<name>-<ordinal>` for each missing ordinal (`spec.ordinals.start` first);
- Job → `min(parallelism, completions − succeeded) − active` pods `<job>-<5 chars>` (none when suspended;
  an Indexed Job's `<job>-<index>-<5 chars>`, lowest free indexes first);
- DaemonSet → one pod per eligible node without one, pinned by the `matchFields metadata.name` required
  node affinity kube-scheduler sees, with the controller's default tolerations.

Random suffixes come from a generator seeded by the object, so a scenario loads the same every time.
The workload objects stay in `Scenario.workloads` (a generated ReplicaSet is added there too).
"""

from __future__ import annotations

import json
import os
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from kubefit.api.core import Node, Pod, copied, raw_may_name
from kubefit.errors import InputError
from kubefit.k8s.labels import SelectorError, parse_selector
from kubefit.k8s.names import random_suffix, safe_encode, seeded
from kubefit.k8s.nodeaffinity import NodeLabels, NodeSelector, label_set_mask
from kubefit.k8s.taints import NodeTaints
from kubefit.k8s.validation import (
    INVALID,
    REQUIRED,
    TOO_LONG,
    FieldError,
    aggregate,
    domain_prefixed_path_errors,
    not_supported,
)
from kubefit.manifests.admission import claim_refusal, create_claims
from kubefit.manifests.autoscaling import apply_replica_bounds
from kubefit.manifests.cluster import TEMPLATE_FIELDS, decode_replica_set
from kubefit.manifests.decode import check_fields as _check_fields
from kubefit.manifests.decode import entries
from kubefit.manifests.decode import fail as _fail
from kubefit.manifests.decode import mapping as _mapping
from kubefit.manifests.documents import Document
from kubefit.manifests.kinds import (
    SPEC_FIELDS,
    STATUS_FIELDS,
    WORKLOAD_KINDS,
    kustomize_note,
    skipped_note,
    usage_note,
)
from kubefit.manifests.load import (
    METADATA_FIELDS,
    OBJECT_FIELDS,
    TERMINAL_PHASES,
    Scenario,
    decode_pod,
    kept_manifest,
    label_selector,
)
from kubefit.manifests.operators import makes_pods, operator_note
from kubefit.manifests.podresources import template_errors
from kubefit.manifests.storage import decode_pvc

POD_TEMPLATE_HASH = "pod-template-hash"
INT32_MAX = 2**31 - 1  # replicas, parallelism, completions, ordinals.start are int32 in the API
MAX_WORKLOAD_PODS = 200_000  # pods the controllers of one scenario may create (Kubernetes' own scale limit: 150,000)
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# util.AddOrUpdateDaemonPodTolerations (pkg/controller/daemon/util), in its order
DAEMON_TOLERATIONS = (("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
                      ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                      ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                      ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                      ("node.kubernetes.io/unschedulable", "NoSchedule"))
HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")
SELECTOR_REQUIRED = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
# ValidateDeploymentSpec / ValidateReplicaSetSpec (which reuses the Deployment's words) / ValidateStatefulSetSpec /
# ValidateDaemonSetSpec: a selector with neither matchLabels nor matchExpressions
EMPTY_SELECTOR_KIND = {"Deployment": "deployment", "ReplicaSet": "deployment", "StatefulSet": "statefulset",
                       "DaemonSet": "daemonset"}


# --------------------------------------------------------------------------- names

def pod_template_hash(template: dict[str, Any]) -> str:
    """`controller.ComputeHash`: FNV-32a of the template, rendered with `rand.SafeEncodeString`.

    Go hashes its own printing of the struct; kubefit hashes the template's canonical JSON, so the value
    differs from a live cluster's but is stable and changes when the template does.
    """
    h = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True, default=str).encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(h))


# --------------------------------------------------------------------------- reading a workload

def _count(doc: Document, spec: dict[str, Any], key: str, default: int | None) -> int | None:
    """A non-negative integer field of the spec (None stays None when there is no default)."""
    value = spec.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(doc, f"spec.{key}", f"must be a non-negative integer, got {value!r}")
    if value > INT32_MAX:
        raise _fail(doc, f"spec.{key}", f"must be at most {INT32_MAX} (an int32, as the API server reads it), "
                    f"got {value}")
    return value


def max_workload_pods() -> int:
    """The bound on pods created from workloads: `KUBEFIT_MAX_WORKLOAD_PODS` (a plain integer) or 200,000."""
    raw = os.environ.get("KUBEFIT_MAX_WORKLOAD_PODS", "")
    return int(raw) if raw.strip().isdigit() else MAX_WORKLOAD_PODS


@dataclass
class PodBudget:
    """How many more pods the scenario's controllers may create (a hostile `replicas` must not exhaust memory)."""

    limit: int
    used: int = 0

    def take(self, doc: Document, field: str, count: int) -> int:
        """`count` more pods for `doc`, or an error naming `field` when they pass the limit."""
        if self.used + count > self.limit:
            raise _fail(doc, field, f"would create {count} pods, past the {self.limit} pods kubefit creates from "
                        "the workloads of one scenario (KUBEFIT_MAX_WORKLOAD_PODS raises the limit)")
        self.used += count
        return count


def _meta(doc: Document) -> dict[str, Any]:
    return _mapping(doc.body.get("metadata"), doc, "metadata")


def _namespace(doc: Document) -> str:
    return str(_meta(doc).get("namespace") or "default")


def _names_of(doc: Document, *more: str) -> random.Random:
    """The generator of a workload's pod-name suffixes, seeded by the object itself (kind, namespace, name: one
    object in a scenario), not by the file it came in: the same objects get the same names from a file, a
    folder, standard input or `kubefit serve`'s session."""
    return seeded(doc.kind, _namespace(doc), doc.name, *more)


def _uid(doc: Document) -> str:
    """The object's uid, or a stable one made from its kind, namespace and name."""
    uid = _meta(doc).get("uid")
    return str(uid) if uid else str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc.kind}/{_namespace(doc)}/{doc.name}"))


def _spec(doc: Document) -> dict[str, Any]:
    """The workload's spec, its apiVersion and fields checked."""
    expected = WORKLOAD_KINDS[doc.kind]
    if doc.body.get("apiVersion") != expected:
        raise _fail(doc, "apiVersion", f"unsupported apiVersion {doc.body.get('apiVersion')!r} for {doc.kind} "
                    f"(expected {expected!r})")
    if not doc.name:
        raise _fail(doc, "metadata.name", "a name is required")
    _check_fields(doc.body, OBJECT_FIELDS, doc, "")
    _check_fields(_meta(doc), METADATA_FIELDS, doc, "metadata")
    _check_fields(_mapping(doc.body.get("status"), doc, "status"), STATUS_FIELDS[doc.kind], doc, "status")
    spec = _mapping(doc.body.get("spec"), doc, "spec")
    _check_fields(spec, SPEC_FIELDS[doc.kind], doc, "spec")
    return spec


def _template(doc: Document, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """`spec.template` and its labels; the selector must select them and the pod-level resources cover the
    containers', as the API server checks."""
    template = _mapping(spec.get("template"), doc, "spec.template")
    if not template:
        raise _fail(doc, "spec.template", "a pod template is required")
    _check_fields(template, TEMPLATE_FIELDS, doc, "spec.template")
    given = _mapping(template.get("metadata"), doc, "spec.template.metadata").get("labels")
    labels = {str(k): str(v) for k, v in _mapping(given, doc, "spec.template.metadata.labels").items()}
    shown = None if given is None else labels  # Go's nil map
    selector = spec.get("selector")
    if doc.kind == "ReplicationController":  # a plain label map there
        selector = {"matchLabels": _mapping(selector, doc, "spec.selector")} if selector else None
    else:
        label_selector(selector, doc, "spec.selector")
    if selector is not None and not (doc.kind == "Job" and not spec.get("manualSelector")):
        try:
            ok = parse_selector(selector).matches(labels)
        except SelectorError as exc:
            raise _fail(doc, "spec.selector", str(exc)) from None
        errors = [] if ok else [_not_selected(shown)]
        if not selector.get("matchLabels") and not selector.get("matchExpressions") and doc.kind != "Job":
            errors.insert(0, FieldError("spec.selector", INVALID, {},
                                        f"empty selector is invalid for {EMPTY_SELECTOR_KIND[doc.kind]}"))
        if errors:
            raise InputError(aggregate(errors), file=doc.source, obj=doc.label)
    elif selector is None and doc.kind in SELECTOR_REQUIRED:
        # the apps validations: a nil selector is required (but a DaemonSet's), and selects nothing, so the
        # template's labels do not match it either (ValidatePodTemplateSpecForReplicaSet/...StatefulSet)
        errors = [FieldError("spec.selector", REQUIRED)] if doc.kind != "DaemonSet" else []
        raise InputError(aggregate([*errors, _not_selected(shown)]), file=doc.source, obj=doc.label)
    # ValidatePodTemplateSpec → ValidatePodSpec → validatePodResourceConsistency, on the template as written
    errors = template_errors(_mapping(template.get("spec"), doc, "spec.template.spec"), doc, "spec.template.spec")
    if errors:
        raise InputError(aggregate(errors), file=doc.source, obj=doc.label)
    return template, labels


def _not_selected(labels: dict[str, str] | None) -> FieldError:
    """`field.Invalid(spec.template.metadata.labels, template.Labels, ...)`: v1.34 prints the map as JSON (Go
    sorts its keys; no labels at all is `null`)."""
    return FieldError("spec.template.metadata.labels", INVALID, None if labels is None else dict(sorted(labels.items())),
                      "`selector` does not match template `labels`")


def _owner_reference(doc: Document) -> dict[str, Any]:
    return {"apiVersion": WORKLOAD_KINDS[doc.kind], "kind": doc.kind, "name": doc.name, "uid": _uid(doc),
            "controller": True, "blockOwnerDeletion": True}


def owned_by(body: dict[str, Any], owner: Document) -> bool:
    """An object's `ownerReferences` name `owner`: by uid when both have one, else by kind and name."""
    meta = body.get("metadata") or {}
    if not isinstance(meta, dict) or str(meta.get("namespace") or "default") != _namespace(owner):
        return False
    owner_uid = _meta(owner).get("uid")
    for ref in meta.get("ownerReferences") or []:
        if not isinstance(ref, dict):
            continue
        if owner_uid and ref.get("uid"):
            if ref["uid"] == owner_uid:
                return True
        elif ref.get("kind") == owner.kind and ref.get("name") == owner.name:
            return True
    return False


_UNSET = object()
_OWNER_INDEX: list = []  # [(pods, len(pods), index)]: the last pod list indexed by `_owned`


def pod_owned_by(pod: Pod, owner: Document, namespace: str | None = None, owner_uid: Any = _UNSET) -> bool:
    """`owned_by` of a decoded pod, from its typed `metadata.ownerReferences` (the loader checked their shape and
    types, an absent string reads "") and its namespace: the same answer without reading its manifest.
    `namespace`, `owner_uid`: the owner's, when the caller asks about many pods."""
    if pod.namespace != (_namespace(owner) if namespace is None else namespace):
        return False
    if owner_uid is _UNSET:
        owner_uid = _meta(owner).get("uid")
    for ref in pod.owner_references:
        if owner_uid and ref.uid:
            if ref.uid == owner_uid:
                return True
        elif ref.kind == owner.kind and ref.name == owner.name:
            return True
    return False


def _owner_index(pods: list[Pod]) -> dict:
    """Pod positions per owner reference uid and per (kind, name)."""
    keyed: dict = {}
    for i, pod in enumerate(pods):
        for ref in pod.owner_references:
            if ref.uid:
                keyed.setdefault(("uid", ref.uid), []).append(i)
            keyed.setdefault(("ref", ref.kind, ref.name), []).append(i)
    return keyed


def _owned(pods: list[Pod], owner: Document) -> list[Pod]:
    """The pods of `pods` that `owner` owns (`owned_by`), in list order; one index per pod list."""
    if not _OWNER_INDEX or _OWNER_INDEX[0][0] is not pods or _OWNER_INDEX[0][1] != len(pods):
        _OWNER_INDEX[:] = [(pods, len(pods), _owner_index(pods))]
    keyed = _OWNER_INDEX[0][2]
    uid = _meta(owner).get("uid")
    candidates: set[int] | range = set()
    if uid and isinstance(uid, str):
        candidates = set(keyed.get(("uid", uid), ()))
    elif uid:
        candidates = range(len(pods))
    candidates = set(candidates) | set(keyed.get(("ref", owner.kind, owner.name), ()))
    namespace = _namespace(owner)
    return [pods[i] for i in sorted(candidates) if pod_owned_by(pods[i], owner, namespace, uid)]


def _active(pod: Pod) -> bool:
    """`controller.IsPodActive`: not Succeeded/Failed, not being deleted (its manifest read only if it may say so)."""
    return pod.phase not in TERMINAL_PHASES and not (
        raw_may_name(pod, "deletionTimestamp") and (pod.raw.get("metadata") or {}).get("deletionTimestamp"))


# --------------------------------------------------------------------------- pods from a template

class PodFactory:
    """Pods of one workload's template: decoded once, then copied under each new name."""

    def __init__(self, doc: Document, template: dict[str, Any], labels: dict[str, str], owner: Document,
                 warnings: list[str], memo: dict[bytes, tuple] | None = None, creator: str | None = None) -> None:
        """`memo`: decode_pod's memo of pod specs (`Scenario.pod_specs`), so that a template whose spec a pod of
        the files gave already (a ReplicaSet's existing replicas) is not decoded again. `creator`: the pods'
        `created_by` (the workload's label; a Deployment's for the pods of the ReplicaSet it creates)."""
        self.doc, self.owner, self.memo = doc, owner, memo
        self.creator = doc.label if creator is None else creator
        meta = _mapping(template.get("metadata"), doc, "spec.template.metadata")
        self.meta = {k: v for k, v in meta.items() if k not in ("name", "generateName", "namespace")}
        self.meta["labels"] = labels
        self.meta["namespace"] = _namespace(owner)
        self.meta["ownerReferences"] = [_owner_reference(owner)]
        self.spec = _mapping(template.get("spec"), doc, "spec.template.spec")
        self.base = self._decode(self._body(f"{owner.name}-template", self.spec), warnings)
        # what every pod of the template shares, set once (`pod` then changes its name and manifest only)
        self.proto = copied(self.base, source=doc.source, created_by=self.creator)

    def _body(self, name: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
        meta = {**self.meta, "name": name}
        if labels:
            meta["labels"] = {**self.meta["labels"], **labels}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def _decode(self, body: dict[str, Any], warnings: list[str] | None = None) -> Pod:
        """The template as a pod; its problems (and warnings) are named at the workload's `spec.template`."""
        notes: list[str] = []
        try:
            pod = decode_pod(Document(body, self.doc.source, self.doc.index), notes, self.memo)
        except InputError as exc:
            where = f"spec.template.{exc.field}" if exc.field else "spec.template"
            raise InputError(exc.message, file=self.doc.source, obj=self.doc.label, field=where) from None
        if warnings is not None:
            label = f"Pod/{body['metadata']['name']}: "
            warnings += [w.replace(label + "spec.", f"{self.doc.label}: spec.template.spec.") for w in notes]
        return pod

    def pod(self, name: str, labels: dict[str, str] | None = None, spec: dict[str, Any] | None = None) -> Pod:
        """A pod of the template named `name`, with extra labels (the controller's: a StatefulSet's
        `apps.kubernetes.io/pod-index` and `statefulset.kubernetes.io/pod-name`, an Indexed Job's completion
        index) in its manifest and in the labels selectors match, or a changed spec."""
        body = self._body(name, self.spec if spec is None else spec, labels)
        if spec is not None:
            return replace(self._decode(body), source=self.doc.source, created_by=self.creator)
        if labels:
            return copied(self.proto, name=name, raw=body, labels={**self.base.labels, **labels})
        return copied(self.proto, name=name, raw=body)


# --------------------------------------------------------------------------- the controllers

def _replica_pods(doc: Document, pods: list[Pod], warnings: list[str], budget: PodBudget,
                  memo: dict[bytes, tuple] | None = None, creator: str | None = None) -> list[Pod]:
    """ReplicaSet / ReplicationController: new pods until `spec.replicas` are active (`memo`, `creator`:
    `PodFactory`'s)."""
    spec = _spec(doc)
    template, labels = _template(doc, spec)
    replicas = _count(doc, spec, "replicas", 1) or 0
    active = sum(1 for p in _owned(pods, doc) if _active(p))
    count = budget.take(doc, "spec.replicas", max(replicas - active, 0))
    factory = PodFactory(doc, template, labels, doc, warnings, memo, creator)
    rng = _names_of(doc)
    return [factory.pod(f"{doc.name}-{random_suffix(rng)}") for _ in range(count)]


class ReplicaSets:
    """A namespace's ReplicaSets as its Deployments look for their own among them (`owned_by`): those of the
    files one by one, those created for the Deployments before by their one owner reference's uid and name
    (`_owner_reference`: a string uid always), a set lookup where reading each again made the namespace's
    Deployments quadratic (105 Deployments a namespace: 5,500 `owned_by` each)."""

    def __init__(self) -> None:
        self.given: list[Document] = []
        self.uids: set[str] = set()  # the created ones' owners'
        self.names: set[str] = set()

    def add(self, rs: Document, created_for: Document | None = None) -> None:
        """A ReplicaSet of the files, or (`created_for`: its Deployment) one `expand_workloads` created."""
        if created_for is None:
            self.given.append(rs)
            return
        self.uids.add(_uid(created_for))
        self.names.add(created_for.name)

    def owned_by(self, owner: Document) -> bool:
        """Whether one of them is `owner`'s: `any(owned_by(rs.body, owner))`. A created one's reference has a
        uid, a string: an owner with a uid matches it by that uid (one that is no string never equals it), one
        without by kind (Deployment) and name."""
        if any(owned_by(rs.body, owner) for rs in self.given):
            return True
        uid = _meta(owner).get("uid")
        if not uid:
            return owner.kind == "Deployment" and owner.name in self.names
        return isinstance(uid, str) and uid in self.uids


def _deployment_replica_set(doc: Document, replica_sets: dict[str, ReplicaSets]) -> Document | None:
    """The ReplicaSet a Deployment would create (None: it owns one already, or it is paused); `replica_sets`: the
    scenario's ReplicaSets by namespace (only those of the Deployment's can be its own)."""
    spec = _spec(doc)
    template, labels = _template(doc, spec)
    if spec.get("paused") is True:
        return None
    namespace = replica_sets.get(_namespace(doc))
    if namespace is not None and namespace.owned_by(doc):
        return None
    digest = pod_template_hash(template)
    meta = _mapping(template.get("metadata"), doc, "spec.template.metadata")
    selector = _mapping(spec.get("selector"), doc, "spec.selector")
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": f"{doc.name}-{digest}", "namespace": _namespace(doc),
                       "labels": {**labels, POD_TEMPLATE_HASH: digest}, "ownerReferences": [_owner_reference(doc)]},
          "spec": {"replicas": _count(doc, spec, "replicas", 1),
                   "selector": {**selector, "matchLabels": {**(selector.get("matchLabels") or {}),
                                                            POD_TEMPLATE_HASH: digest}},
                   "template": {**template, "metadata": {**meta, "labels": {**labels, POD_TEMPLATE_HASH: digest}}}}}
    return Document(rs, doc.source, doc.index, doc.position)


def _stateful_pods(doc: Document, pods: list[Pod], warnings: list[str], budget: PodBudget,
                   claims: list[Any], refusal: Callable[[Any], str | None]) -> list[Pod]:
    """StatefulSet: `<name>-<ordinal>` for the lowest ordinals without a pod (from `spec.ordinals.start`),
    until `spec.replicas` pods it owns are active (a snapshot's owned pods count whatever their names).

    Each pod it creates gets, per `spec.volumeClaimTemplates` entry, the claim `<template>-<name>-<ordinal>`
    (`getPersistentVolumeClaimName`), created in `claims` unless one of that name exists (it is reused), and the
    pod volume that names it (`updateStorage`). Under `podManagementPolicy: OrderedReady` (the default) a
    created pod waits for every lower ordinal to be running (`Pod.ordered_after`: the simulation reports it not
    created while one is not); `Parallel` creates them all at once.

    A claim the API server refuses (`refusal`: LimitRanger) is not created, and neither is its pod
    (stateful_pod_control.go `CreateStatefulPod`: the pod is created only once `createPersistentVolumeClaims`
    created every claim; the others of that ordinal are created); under OrderedReady the controller stops at
    that ordinal (`processReplica`'s error ends the monotonic pass), under Parallel it tries every ordinal. The
    pods not created are named in a note with the controller's FailedCreate event."""
    spec = _spec(doc)
    template, labels = _template(doc, spec)
    start = _count(doc, _mapping(spec.get("ordinals"), doc, "spec.ordinals"), "start", 0) or 0
    replicas = _count(doc, spec, "replicas", 1) or 0
    ordered = _pod_management_policy(doc, spec) == ORDERED_READY
    templates = _claim_templates(doc, spec)
    namespace = _namespace(doc)
    existing = {p.name: p for p in pods if p.namespace == namespace}
    missing = budget.take(doc, "spec.replicas", max(replicas - sum(1 for p in _owned(pods, doc) if _active(p)), 0))
    factory = PodFactory(doc, template, labels, doc, warnings)
    claimed = {c.meta.key for c in claims}
    out: list[Pod] = []
    given_lower: list[str] = []  # the given pods of lower ordinals: each must run first
    attempted, failed, first_event, stopped = 0, [], "", False
    for ordinal in range(start, start + replicas):
        name = f"{doc.name}-{ordinal}"
        given = existing.get(name)
        created = given is None and attempted < missing
        attempted += created
        if stopped:
            failed += [name] if created else []
            continue
        refused: list[str] = []
        if created or (given is not None and not given.bound):  # a pending pod's missing claims are created too
            for claim in _new_claims(doc, templates, spec, ordinal, namespace, claimed, warnings):
                message = refusal(claim)
                if message is None:
                    claims.append(claim)
                else:
                    refused.append(f"failed to create PVC {claim.meta.name}: {message}")
        if refused:
            failed += [name] if created else []
            first_event = first_event or (f"{'create' if created else 'update'} Pod {name} in StatefulSet "
                                          f"{doc.name} failed error: {aggregate(refused)}")
            stopped = ordered
        elif created:
            pod = factory.pod(name, {"apps.kubernetes.io/pod-index": str(ordinal),
                                     "statefulset.kubernetes.io/pod-name": name},
                              spec=_with_claims(factory.spec, templates, doc.name, ordinal) if templates else None)
            # the previous created pod stands for the created ones below it: it waited for them
            lower = (*given_lower, *(out[-1].key for _ in out[-1:]))
            out.append(replace(pod, ordered_after=lower) if ordered and lower else pod)
        if given is not None:
            given_lower.append(given.key)
    if first_event:
        what = f"{len(failed)} pod(s)" if failed else "a pending pod's claims"
        warnings.append(f"{doc.label}: its controller cannot create {what}: {first_event}")
    return out


ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"


def _pod_management_policy(doc: Document, spec: dict[str, Any]) -> str:
    """`spec.podManagementPolicy` (defaulted to OrderedReady), one of the two the API server accepts."""
    policy = spec.get("podManagementPolicy")
    if policy is None:
        return ORDERED_READY
    if policy not in (ORDERED_READY, PARALLEL):
        raise InputError(str(not_supported("spec.podManagementPolicy", policy, (ORDERED_READY, PARALLEL))),
                         file=doc.source, obj=doc.label)
    return policy


CLAIM_TEMPLATE_FIELDS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})


def _claim_templates(doc: Document, spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """`spec.volumeClaimTemplates` as (name, template), each a PersistentVolumeClaim body (fields checked)."""
    out = []
    for path, raw in entries(spec.get("volumeClaimTemplates"), doc, "spec.volumeClaimTemplates",
                             CLAIM_TEMPLATE_FIELDS, "a claim template (a mapping with metadata and spec)"):
        name = _mapping(raw.get("metadata"), doc, f"{path}.metadata").get("name")
        if not isinstance(name, str) or not name:
            raise _fail(doc, f"{path}.metadata.name", "Required value")
        out.append((name, raw))
    return out


def _with_claims(spec: dict[str, Any], templates: list[tuple[str, dict[str, Any]]], owner: str,
                 ordinal: int) -> dict[str, Any]:
    """`updateStorage`: a volume per claim template naming its claim (in template order), then the template's
    own volumes of other names."""
    names = {name for name, _ in templates}
    volumes = [{"name": name, "persistentVolumeClaim": {"claimName": f"{name}-{owner}-{ordinal}"}}
               for name, _ in templates]
    volumes += [v for v in spec.get("volumes") or [] if not (isinstance(v, dict) and v.get("name") in names)]
    return {**spec, "volumes": volumes}


def _new_claims(doc: Document, templates: list[tuple[str, dict[str, Any]]], spec: dict[str, Any], ordinal: int,
                namespace: str, claimed: set[str], warnings: list[str]) -> list[Any]:
    """The claims of one ordinal the controller creates (`getPersistentVolumeClaims`: the template named
    `<template>-<set>-<ordinal>` in the set's namespace, labelled with the template's labels and the selector's
    matchLabels); a claim of that name in the scenario is reused, not created."""
    match = _mapping(spec.get("selector"), doc, "spec.selector").get("matchLabels") or {}
    out = []
    for i, (name, raw) in enumerate(templates):
        claim = f"{name}-{doc.name}-{ordinal}"
        if f"{namespace}/{claim}" in claimed:
            continue
        meta = _mapping(raw.get("metadata"), doc, f"spec.volumeClaimTemplates[{i}].metadata")
        body = {**raw, "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {**meta, "name": claim, "namespace": namespace,
                             "labels": {**(meta.get("labels") or {}), **match}}}
        try:
            out.append(decode_pvc(Document(body, doc.source, doc.index), warnings))
        except InputError as exc:
            raise InputError(exc.message, file=doc.source, obj=doc.label,
                             field=f"spec.volumeClaimTemplates[{i}].{exc.field}" if exc.field else None) from None
        claimed.add(f"{namespace}/{claim}")
    return out


JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"  # batch.JobControllerName
MAX_MANAGED_BY_LENGTH = 63  # pkg/apis/batch/validation maxManagedByLength


def _managed_by(doc: Document, spec: dict[str, Any]) -> str | None:
    """`spec.managedBy` when another controller than the Job controller manages the Job, validated as the API
    server validates it (`validateJobSpec`: a domain-prefixed path of at most 63 characters); None otherwise.

    The Job controller skips such a Job (`managedByExternalController`, pkg/controller/job/job_controller.go:
    "Skip syncing the job as it is managed by an external controller"): JobManagedBy is beta and on in v1.34,
    GA and locked on from v1.35, so in every supported version."""
    value = spec.get("managedBy")
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(doc, "spec.managedBy", f"must be a string, got {value!r}")
    errors = domain_prefixed_path_errors("spec.managedBy", value)
    if len(value) > MAX_MANAGED_BY_LENGTH:
        errors.append(FieldError("spec.managedBy", TOO_LONG, value,
                                 f"may not be more than {MAX_MANAGED_BY_LENGTH} bytes"))
    if errors:
        raise InputError(aggregate(errors), file=doc.source, obj=doc.label)
    return None if value == JOB_CONTROLLER_NAME else value


def _job_pods(doc: Document, pods: list[Pod], warnings: list[str], budget: PodBudget) -> list[Pod]:
    """Job: as many new pods as `min(parallelism, completions − succeeded) − active` (none when suspended, or
    managed by another controller: `_managed_by`); an Indexed Job's are `<job>-<index>-<5 chars>` for the lowest
    indexes without a pod."""
    spec = _spec(doc)
    template, labels = _template(doc, spec)
    manager = _managed_by(doc, spec)
    if manager is not None:
        warnings.append(f"{doc.source}: {doc.label}: spec.managedBy is {manager!r}: the Job controller leaves the Job "
                        f"to that controller (JobManagedBy) and creates none of its pods, nor does kubefit")
        return []
    parallelism = _count(doc, spec, "parallelism", 1) or 0
    completions = _count(doc, spec, "completions", None)
    if spec.get("completions") is None and spec.get("parallelism") is None:
        completions = 1  # the API server defaults both to 1
    owned = _owned(pods, doc)
    succeeded = sum(1 for p in owned if p.phase == "Succeeded")
    active = sum(1 for p in owned if _active(p))
    if spec.get("suspend") is True:
        return []
    wanted = parallelism if completions is None else min(parallelism, max(completions - succeeded, 0))
    if completions is None and succeeded:
        wanted = 0  # a work-queue Job is done once one pod succeeded
    uid = _uid(doc)
    factory = PodFactory(doc, template, {**labels, "batch.kubernetes.io/controller-uid": uid,
                                         "batch.kubernetes.io/job-name": doc.name, "controller-uid": uid,
                                         "job-name": doc.name}, doc, warnings)
    rng = _names_of(doc)
    count = budget.take(doc, "spec.parallelism", max(wanted - active, 0))
    if spec.get("completionMode") != "Indexed" or completions is None:
        return [factory.pod(f"{doc.name}-{random_suffix(rng)}") for _ in range(count)]
    taken = {p.raw.get("metadata", {}).get("labels", {}).get(COMPLETION_INDEX) for p in owned
             if p.phase == "Succeeded" or _active(p)}
    indexes = list(islice((i for i in range(completions) if str(i) not in taken), count))
    return [factory.pod(f"{doc.name}-{i}-{random_suffix(rng)}", {COMPLETION_INDEX: str(i)}) for i in indexes]


def _daemon_tolerations(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The template's tolerations with the DaemonSet controller's defaults added or updated."""
    out = [dict(t) for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    defaults = [*DAEMON_TOLERATIONS, *([HOST_NETWORK_TOLERATION] if spec.get("hostNetwork") else [])]
    for key, effect in defaults:
        wanted = {"key": key, "operator": "Exists", "effect": effect}
        same = [i for i, t in enumerate(out) if t.get("key") == key and t.get("effect") == effect]
        if same:  # AddOrUpdateTolerationInPodSpec: replace an existing one for the same key and effect
            out[same[0]] = wanted
        else:
            out.append(wanted)
    return out


def pinned_affinity(affinity: dict[str, Any] | None, node: str) -> dict[str, Any]:
    """`ReplaceDaemonSetPodNodeNameNodeAffinity`: the required terms become one `metadata.name In [node]`."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = dict(affinity or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    required = dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    required["nodeSelectorTerms"] = [term]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    affinity["nodeAffinity"] = node_affinity
    return affinity


def daemon_nodes(pod: Pod, nodes: list[Node]) -> tuple[list[int], list[int]]:
    """`NodeShouldRunDaemonPod`'s predicates: (nodes the selector and required affinity match, of those the
    ones whose NoSchedule/NoExecute taints the pod tolerates)."""
    table = NodeLabels(nodes)
    mask = label_set_mask(table, pod.node_selector or {})
    required = ((pod.affinity or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        mask &= NodeSelector.parse(required).mask(table)
    taints = NodeTaints.build(nodes)
    tolerated = taints.tolerated(pod.tolerations)[taints.filtering].all(axis=1)
    matched = [int(i) for i in mask.nonzero()[0]]
    return matched, [i for i in matched if tolerated[i]]


class DaemonSetPods:
    """One DaemonSet's pods: its template with the controller's tolerations, pinned per node.

    The first pod is decoded whole; the others are copies of it with their name, their affinity and their
    manifest: pinning changes only `spec.affinity`'s required node terms to one `matchFields` on the node's
    name, which the loader checks for its types alone (`load._check_affinity`), so every pod of the DaemonSet
    decodes alike but for `affinity` (2,000 nodes: 0.4 ms a pod saved)."""

    def __init__(self, doc: Document, warnings: list[str]) -> None:
        spec = _spec(doc)
        template, labels = _template(doc, spec)
        self.doc = doc
        self.factory = PodFactory(doc, template, labels, doc, warnings)
        self.spec = {**self.factory.spec, "tolerations": _daemon_tolerations(self.factory.spec)}
        self.probe = self.factory.pod(f"{doc.name}-probe", spec=self.spec)
        self.pinned: Pod | None = None  # the first pinned pod as decoded, kept apart (admission sets a pod's fields)

    def pod(self, node: str, rng: Any) -> Pod:
        """A pod `<daemonset>-<5 chars>` pinned to `node`."""
        name = f"{self.doc.name}-{random_suffix(rng)}"
        node_spec = {**self.spec, "affinity": pinned_affinity(self.spec.get("affinity"), node)}
        if self.pinned is None:
            self.pinned = self.factory.pod(name, spec=node_spec)
            return copied(self.pinned)
        body = kept_manifest(self.factory._body(name, node_spec))
        # a tuple of its own, as a decoding gives: kube-scheduler's pods of one template are found by their
        # containers' identity and then compared whole (`engine._replica_key`), which 2,000 pods differing in
        # their affinity alone would make quadratic
        containers = tuple([*self.pinned.containers])
        return copied(self.pinned, name=name, affinity=node_spec["affinity"], raw=body, containers=containers)

    def eligible(self, nodes: list[Node]) -> tuple[list[int], list[int]]:
        """`daemon_nodes` of the DaemonSet's pod among `nodes`."""
        return daemon_nodes(self.probe, nodes) if nodes else ([], [])


class IdleDaemonSets:
    """DaemonSets whose controller creates no pod, by reason: one note per reason, naming them all (an install
    of five DaemonSets planned from zero says it once)."""

    def __init__(self) -> None:
        self.by_reason: dict[str, list[Document]] = {}

    def add(self, doc: Document, reason: str) -> None:
        self.by_reason.setdefault(reason, []).append(doc)

    def notes(self) -> list[str]:
        out = []
        for reason, docs in self.by_reason.items():
            if len(docs) == 1:
                out.append(f"{docs[0].source}: {docs[0].label}: {reason.format(which='the DaemonSet creates')}")
                continue
            named = ", ".join(d.label for d in docs[:4]) + (f" and {len(docs) - 4} more" if len(docs) > 4 else "")
            out.append(f"{named}: {reason.format(which=f'these {len(docs)} DaemonSets create')}")
        return out


def _daemon_pods(doc: Document, pods: list[Pod], nodes: list[Node], warnings: list[str],
                 budget: PodBudget, idle: IdleDaemonSets) -> list[Pod]:
    """DaemonSet: one pod per eligible node that has none, pinned to it by node affinity."""
    daemon = DaemonSetPods(doc, warnings)
    if not nodes:
        idle.add(doc, "the scenario has no Node objects; {which} no pod (and one on each node that joins)")
        return []
    matched, eligible = daemon.eligible(nodes)
    if not matched:  # the controller creates no pod, and one per matching node as soon as one joins (`plan`)
        probe = daemon.probe
        by_labels = bool(probe.node_selector) and not daemon_nodes(replace(probe, affinity=None), nodes)[0]
        field = "nodeSelector" if by_labels else "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        idle.add(doc, f"spec.template.spec.{field} matches no node of the scenario; {{which}} no pod (and one on "
                      f"each matching node that joins)")
        return []
    if not eligible:
        idle.add(doc, "every node it selects has a taint it does not tolerate; {which} no pod")
    served = {p.node_name for p in _owned(pods, doc) if p.node_name and _active(p)}
    targets = [i for i in eligible if nodes[i].name not in served]
    budget.take(doc, "spec.template", len(targets))
    rng = _names_of(doc)
    return [daemon.pod(nodes[i].name, rng) for i in targets]


class NewNodeDaemons:
    """The scenario's DaemonSets as their controller meets a node added later (`plan`'s nodes): the pods of
    every DaemonSet whose selector, required affinity and taint check admit the node, named and pinned as
    for the scenario's own nodes (suffixes seeded by the DaemonSet and the node)."""

    def __init__(self, workloads: list[Document], admit: Callable[[Pod], Pod | None] = lambda pod: pod) -> None:
        self.daemons = [DaemonSetPods(d, []) for d in workloads if d.kind == "DaemonSet"]
        self.admit = admit  # the API server's admission of each pod (None: forbidden, not created)
        self.made: dict[tuple[str, str, str], list[Pod]] = {}
        self.keys: set[str] = set()  # every pod made so far, as `Pod.key`

    def pods_for(self, nodes: list[Node]) -> list[Pod]:
        """The DaemonSet pods the controller creates for `nodes`, node by node, DaemonSets in document order."""
        out: list[Pod] = []
        for node in nodes:
            key = (node.name, repr(sorted(node.labels.items())), repr(node.taints))
            if key not in self.made:
                made = [self.admit(d.pod(node.name, _names_of(d.doc, node.name)))
                        for d in self.daemons if d.eligible([node])[1]]
                self.made[key] = [p for p in made if p is not None]
                self.keys.update(p.key for p in self.made[key])
            out += self.made[key]
        return out


# --------------------------------------------------------------------------- one more replica

# kubectl's names of the workload kinds (`kubectl get deploy/web`), singular, plural, short and with their group
KIND_NAMES = {alias: kind for kind, aliases in {
    "Deployment": ("deployment", "deployments", "deploy", "deployment.apps"),
    "StatefulSet": ("statefulset", "statefulsets", "sts", "statefulset.apps"),
    "ReplicaSet": ("replicaset", "replicasets", "rs", "replicaset.apps"),
    "ReplicationController": ("replicationcontroller", "replicationcontrollers", "rc"),
    "Job": ("job", "jobs", "job.batch"),
    "DaemonSet": ("daemonset", "daemonsets", "ds", "daemonset.apps")}.items() for alias in aliases}


def workload_kind(text: str) -> str | None:
    """The workload kind a kubectl resource name stands for (`deploy` → Deployment), None when none does."""
    return KIND_NAMES.get(text.lower())


def workload_name(text: str) -> tuple[str | None, str, str] | None:
    """(namespace or None, kind, name) of a workload named as kubectl names it, `deployment/web`, or with its
    namespace, `shop/deployment/web`; None when `text` names no workload kind (a pod's `name` or `namespace/name`).

    >>> workload_name("deploy/web"), workload_name("shop/sts/db"), workload_name("shop/web")
    ((None, 'Deployment', 'web'), ('shop', 'StatefulSet', 'db'), None)
    """
    parts = text.split("/")
    if len(parts) == 2 and parts[1] and workload_kind(parts[0]):
        return None, str(workload_kind(parts[0])), parts[1]
    if len(parts) == 3 and parts[0] and parts[2] and workload_kind(parts[1]):
        return parts[0], str(workload_kind(parts[1])), parts[2]
    return None


def replica_of(scenario: Scenario, kind: str, name: str, later: int = 0, namespace: str | None = None) -> Pod:
    """One more replica of a workload's template, as its controller would create it on a scale-up (named and
    labelled as its own). A StatefulSet's is its next ordinal (`later` ordinals further: the copies that
    follow), created after the claims of its templates (`<template>-<set>-<ordinal>`, stateful_pod_control.go
    `createPersistentVolumeClaims`), which are admitted, bound or provisioned as any new claim is
    (`admission.create_claims`). `namespace`: the workload's (None: the one namespace that has it)."""
    found = [d for d in scenario.workloads if d.kind == kind and d.name == name
             and (namespace is None or _namespace(d) == namespace)]
    if kind == "DaemonSet":
        raise InputError("a DaemonSet runs one pod per matching node, it has no replicas to add; name one of its "
                         "pods or another workload", field="--pod")
    if not found:
        have = sorted(f"{d.kind.lower()}/{d.name}" for d in scenario.workloads if d.kind != "DaemonSet")
        where = f" in namespace {namespace}" if namespace is not None else ""
        raise InputError(f"no {kind} named {name!r}{where} in the scenario (workloads: "
                         f"{', '.join(have[:10]) or 'none'})", field="--pod")
    if len({_namespace(d) for d in found}) > 1:
        named = ", ".join(sorted(f"{_namespace(d)}/{kind.lower()}/{name}" for d in found))
        raise InputError(f"{kind.lower()}/{name} exists in several namespaces: give one of {named}", field="--pod")
    doc = found[0]
    if kind == "Deployment":  # its pods come from its ReplicaSet (the one it owns, or the one kubefit created)
        doc = next((w for w in scenario.workloads if w.kind == "ReplicaSet" and owned_by(w.body, doc)), doc)
    spec = _spec(doc)
    template, labels = _template(doc, spec)
    factory = PodFactory(doc, template, labels, doc, [])
    owner = found[0].label
    if kind != "StatefulSet":
        pod = factory.pod(f"{doc.name}-{random_suffix(_names_of(doc, 'replica'))}")
        return replace(pod, created_by=owner)
    ordinal = (_count(doc, _mapping(spec.get("ordinals"), doc, "spec.ordinals"), "start", 0) or 0) + \
        (_count(doc, spec, "replicas", 1) or 0) + later
    templates = _claim_templates(doc, spec)
    claims = scenario.objects.by_kind.setdefault("PersistentVolumeClaim", [])
    name = f"{doc.name}-{ordinal}"
    new = _new_claims(doc, templates, spec, ordinal, _namespace(doc), {c.meta.key for c in claims}, [])
    refusal = claim_refusal(scenario)
    refused = [f"failed to create PVC {c.meta.name}: {message}" for c in new if (message := refusal(c))]
    if refused:  # CreateStatefulPod: no pod without its claims
        raise InputError(f"{owner}: its controller cannot create {name}: create Pod {name} in StatefulSet "
                         f"{doc.name} failed error: {aggregate(refused)}", field="--pod")
    scenario.warnings += create_claims(scenario, new)
    return factory.pod(name, {"apps.kubernetes.io/pod-index": str(ordinal), "statefulset.kubernetes.io/pod-name": name},
                       spec=_with_claims(factory.spec, templates, doc.name, ordinal) if templates else None)


def daemon_pod(pod: Pod) -> bool:
    """A DaemonSet's pod (kubefit made it, or its controller reference says so): pinned to one node."""
    return pod.created_by.startswith("DaemonSet/") or any(
        ref.controller and ref.kind == "DaemonSet" for ref in pod.owner_references)


# --------------------------------------------------------------------------- the scenario

def expand_workloads(scenario: Scenario) -> None:
    """Insert into `scenario.pods`, at each workload's document position, the pods its controller would
    still create; note the skipped kinds once."""
    scenario.warnings += [n for n in (operator_note(scenario.skipped), kustomize_note(scenario.skipped),
                                      skipped_note(scenario.skipped, makes_pods), usage_note(scenario.skipped)) if n]
    if not scenario.workloads:
        return
    scenario.warnings += apply_replica_bounds(scenario)  # the HPA controller scales its targets at once
    given = list(scenario.pods)
    budget = PodBudget(max_workload_pods())
    idle = IdleDaemonSets()
    refusal = claim_refusal(scenario)
    expanders: dict[str, Callable[[Document], list[Pod]]] = {
        "ReplicaSet": lambda d: _replica_pods(d, given, scenario.warnings, budget, scenario.pod_specs),
        "ReplicationController": lambda d: _replica_pods(d, given, scenario.warnings, budget, scenario.pod_specs),
        "StatefulSet": lambda d: _stateful_pods(d, given, scenario.warnings, budget,
                                                scenario.objects.by_kind.setdefault("PersistentVolumeClaim", []),
                                                refusal),
        "Job": lambda d: _job_pods(d, given, scenario.warnings, budget),
        "DaemonSet": lambda d: _daemon_pods(d, given, scenario.nodes, scenario.warnings, budget, idle),
    }
    created: list[tuple[int, list[Pod]]] = []
    replica_sets: dict[str, ReplicaSets] = {}  # by namespace: a Deployment looks for its own among them only
    for doc in scenario.workloads:
        if doc.kind == "ReplicaSet":
            replica_sets.setdefault(_namespace(doc), ReplicaSets()).add(doc)
    for doc in list(scenario.workloads):
        if doc.kind != "Deployment":
            created.append((doc.position, expanders[doc.kind](doc)))
            continue
        rs = _deployment_replica_set(doc, replica_sets)
        if rs is not None:
            scenario.workloads.append(rs)
            replica_sets.setdefault(_namespace(rs), ReplicaSets()).add(rs, created_for=doc)
            scenario.objects.add("ReplicaSet", decode_replica_set(rs, scenario.warnings))
            try:  # its pods are the Deployment's (`created_by`)
                pods = _replica_pods(rs, given, scenario.warnings, budget, scenario.pod_specs, creator=doc.label)
            except InputError as exc:  # the template is the Deployment's: name it there
                raise InputError(exc.message, file=doc.source, obj=doc.label, field=exc.field) from None
            created.append((doc.position, pods))
    scenario.warnings += idle.notes()
    pods: list[Pod] = []
    start = 0
    for position, new in sorted(created, key=lambda c: c[0]):  # stable: document order among equals
        pods += given[start:position] + new
        start = max(start, position)
    scenario.pods = pods + given[start:]
