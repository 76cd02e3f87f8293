"""A Karmada fleet read from files: Clusters, one ResourceBinding (or a workload and the PropagationPolicy
selecting it), the shapes of the Karmada fields kubefit reads, and the request an estimate is for."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubefit.errors import InputError
from kubefit.k8s.quantity import QuantityError, parse_quantity, quantity_text
from kubefit.k8s.requests import pod_requests_nanos
from kubefit.manifests.decode import Complete, check_shape
from kubefit.manifests.documents import Document
from kubefit.manifests.load import Scenario, decode_pod
from kubefit.manifests.scenario import add_document
from kubefit.manifests.stream import read_documents
from kubefit.told import told_keys

Warn = Callable[[str], None]
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "Job")


def _ignore(message: str) -> None:
    """The default `warn` of library callers that do not ask to be told."""


@dataclass
class Fleet:
    """The Karmada objects of the scenario files."""

    clusters: list[Any] = field(default_factory=list)
    binding: dict[str, Any] | None = None  # {"spec", "status"} of a ResourceBinding (given or built)
    binding_source: str = ""
    files: list[str] = field(default_factory=list)  # where it was read, for messages


def _pairs(text: str | None, option: str) -> list[tuple[str, str]]:
    out = []
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise InputError(f"expected NAME=VALUE, got {item!r}", field=option)
        k, v = item.split("=", 1)
        out.append((k.strip(), v.strip()))
    return out


def parse_gates(text: str | None) -> dict[str, bool]:
    """`Name=bool,…` (`--feature-gates`) → Karmada's gates, defaults filled in; unknown names and values
    other than true/false are errors."""
    from kubefit.multicluster.estimate import feature_gates

    gates = {}
    for k, v in _pairs(text, "--feature-gates"):
        if v.lower() not in ("true", "false"):
            raise InputError(f"{k}: expected true or false, got {v!r}", field="--feature-gates")
        gates[k] = v.lower() == "true"
    return feature_gates(gates)


def parse_request_option(text: str, warn: Warn = _ignore) -> dict[str, str]:
    """`cpu=3,memory=20Gi` → {name: quantity string}; a bad quantity is an InputError."""
    out = {}
    for k, v in _pairs(text, "--request"):
        try:
            parse_quantity(v)
        except QuantityError as exc:
            raise InputError(str(exc), field=f"--request {k}") from None
        if parse_quantity(v) < 0:
            warn(f"--request {k}: negative request {v!r}; Karmada computes with it as given")
        out[k] = v
    if not out:
        raise InputError("no resource given", field="--request")
    return out


def _template_requests(workload: Document) -> dict[str, str]:
    """The pod template's effective request, as quantity strings in nano-units."""
    check_shape(workload.body.get("spec"), WORKLOAD_SHAPE, workload, "spec")
    template = ((workload.body.get("spec") or {}).get("template") or {})
    pod_doc = Document({"apiVersion": "v1", "kind": "Pod", "metadata": template.get("metadata") or {"name": "template"},
                        "spec": template.get("spec") or {}}, workload.source, workload.index)
    if not (pod_doc.body["metadata"] or {}).get("name"):
        pod_doc.body["metadata"] = {**pod_doc.body["metadata"], "name": "template"}
    try:
        pod = decode_pod(pod_doc, [])
    except InputError as exc:  # located in the workload, under spec.template
        raise InputError(exc.message, file=workload.source, obj=workload.label,
                         field=f"spec.template.{exc.field}" if exc.field else "spec.template") from None
    return {k: f"{v}n" for k, v in pod_requests_nanos(pod).items()}


# Expected types of the Karmada fields kubefit reads (other fields of an open shape pass untouched).
_EXPRESSIONS = [Complete({"key": str, "operator": str, "values": [str]})]
_SELECTOR = Complete({"matchLabels": dict, "matchExpressions": _EXPRESSIONS})
_AFFINITY = Complete({"clusterNames": [str], "exclude": [str], "labelSelector": _SELECTOR,
                      "fieldSelector": Complete({"matchExpressions": _EXPRESSIONS})})
PLACEMENT_SHAPE = Complete({
    "clusterAffinity": _AFFINITY,
    "clusterAffinities": [Complete({"affinityName": str, **_AFFINITY})],
    "clusterTolerations": [dict],
    "spreadConstraints": [Complete({"spreadByField": str, "spreadByLabel": str, "maxGroups": int,
                                    "minGroups": int})],
    "replicaScheduling": Complete({
        "replicaSchedulingType": str, "replicaDivisionPreference": str,
        "weightPreference": Complete({"staticWeightList": [Complete({"targetCluster": _AFFINITY, "weight": int})],
                                      "dynamicWeight": str})}),
})
BINDING_SHAPE = {"resource": Complete({"apiVersion": str, "kind": str, "name": str, "namespace": str, "uid": str,
                                       "resourceVersion": str}),
                 "placement": PLACEMENT_SHAPE, "rescheduleTriggeredAt": str,
                 "gracefulEvictionTasks": [{"fromCluster": str}]}
POLICY_SHAPE = {"resourceSelectors": [Complete({"apiVersion": str, "kind": str, "name": str, "namespace": str,
                                                "labelSelector": _SELECTOR})],
                "priority": int, "placement": PLACEMENT_SHAPE}
WORKLOAD_SHAPE = {"replicas": int, "template": {"metadata": dict, "spec": dict}}


def _check_times(binding: Any, doc: Document) -> None:
    """RFC 3339 timestamps (spec.rescheduleTriggeredAt, status.lastScheduledTime)."""
    from datetime import datetime

    for part, key in (("spec", "rescheduleTriggeredAt"), ("status", "lastScheduledTime")):
        text = getattr(binding, part).get(key)
        try:
            if text is not None:
                datetime.fromisoformat(str(text).replace("Z", "+00:00"))
        except ValueError:
            raise InputError(f"must be an RFC 3339 time such as 2025-01-01T00:00:00Z, got {text!r}",
                             file=doc.source, obj=doc.label, field=f"{part}.{key}") from None


def _check_models(cluster: Any, doc: Document, warn: Warn, verdicts: dict[Any, Any]) -> None:
    """Warn for resourceModels Karmada's API refuses (its estimator still computes with them, as golden
    cases show); judged once per distinct set of models (`verdicts`: a fleet's clusters share a few), looked
    up by identity first (`manifests.karmada` decodes equal sets once; hashing one is ~10 µs)."""
    from kubefit.multicluster.models import go_models, prepare_for_create, validate_models

    models = cluster.resource_models
    seen = verdicts.get(id(models))
    if seen is None:
        if models not in verdicts:
            verdicts[models] = validate_models(prepare_for_create(go_models(models)))
        seen = verdicts[id(models)] = (models, verdicts[models])  # (models kept: its id stays its own)
    error = seen[1]
    if error is not None:
        warn(f"{doc.source}: {doc.label}: {error.field}: {error.detail}; Karmada's API refuses this Cluster "
             f"(see kubefit models validate), the numbers below are what its estimator computes anyway")


def _check_requests(binding: Any, doc: Document, warn: Warn) -> None:
    """Warn for negative requests: a ResourceBinding may carry them; Karmada computes with them as given."""
    requests = (binding.spec.get("replicaRequirements") or {}).get("resourceRequest") or {}
    for name, raw in requests.items():
        if parse_quantity(quantity_text(raw)) < 0:
            warn(f"{doc.source}: {doc.label}: spec.replicaRequirements.resourceRequest.{name}: negative request "
                 f"{raw!r}; Karmada computes with it as given")


def load_fleet(files: Sequence[str | Path], warn: Warn = _ignore) -> Fleet:
    """Clusters plus one ResourceBinding (or a workload and the PropagationPolicy selecting it).

    `warn` is told what Karmada would accept but the user should know (refused models, negative requests).
    """
    files = [str(f) for f in files]
    from kubefit.manifests.karmada import decode_cluster, decode_resource_binding
    from kubefit.manifests.kinds import foreign_kind
    from kubefit.multicluster.resourceselector import claiming_policy
    from kubefit.multicluster.schedule import binding_from_workload

    fleet = Fleet(files=files)
    workloads: list[Document] = []
    policies: list[Document] = []
    verdicts: dict[Any, Any] = {}
    for path in files:
        for doc in read_documents(path, allow_empty=False):
            if foreign_kind(doc):  # a custom resource of a fleet or workload kind's name (a CNPG Cluster)
                warn(f"{doc.source}: {doc.label}: a {doc.body.get('apiVersion')} custom resource, not Karmada's "
                     f"nor a built-in kind: plays no part in Karmada's estimate and schedule; ignored")
            elif doc.kind == "Cluster":
                fleet.clusters.append(decode_cluster(doc))
                _check_models(fleet.clusters[-1], doc, warn, verdicts)
            elif doc.kind == "ResourceBinding":
                rb = decode_resource_binding(doc)
                check_shape(rb.spec, BINDING_SHAPE, doc, "spec")
                check_shape(rb.status, {"lastScheduledTime": str, "schedulerObservingAffinityName": str},
                             doc, "status")
                _check_times(rb, doc)
                _check_requests(rb, doc, warn)
                if fleet.binding is not None:
                    raise InputError("more than one ResourceBinding; give one per run", file=doc.source, obj=doc.label)
                fleet.binding = {"spec": rb.spec, "status": rb.status}
                fleet.binding_source = f"{doc.source}: {doc.label}"
            elif doc.kind in WORKLOAD_KINDS:
                workloads.append(doc)
            elif doc.kind in ("PropagationPolicy", "ClusterPropagationPolicy"):
                check_shape(doc.body.get("spec"), POLICY_SHAPE, doc, "spec")
                policies.append(doc)
            elif doc.kind in ("Node", "Pod"):
                raise InputError("member nodes and pods go in a separate file given with --member NAME=FILE",
                                 file=doc.source, obj=doc.label, field="kind")
            elif doc.kind in ("KubeSchedulerConfiguration", "Policy"):
                warn(f"{doc.source}: {doc.label}: a kube-scheduler configuration plays no part in Karmada's "
                     f"estimate and schedule; ignored")
            else:
                other = Scenario()
                add_document(other, doc)  # reports an unknown or missing kind
                if other.skipped or other.workloads or other.objects.by_kind:
                    warn(f"{doc.source}: {doc.label}: plays no part in Karmada's estimate and schedule; ignored")
    if not fleet.clusters:
        raise InputError("no Karmada Cluster objects in the files", file=", ".join(files))
    dup = {n for n, count in Counter(c.name for c in fleet.clusters).items() if count > 1}
    if dup:
        raise InputError(f"cluster names must be unique: {', '.join(sorted(dup))}", file=", ".join(files))
    if fleet.binding is None and workloads:
        wl = workloads[0]
        chosen = claiming_policy([p.body for p in policies], wl.body)
        if chosen is None:
            raise InputError("no PropagationPolicy selects this workload (Karmada's ResourceMatches: apiVersion, "
                             "kind and namespace equal, then the name, else the labelSelector)",
                             file=wl.source, obj=wl.label)
        pol = policies[chosen]
        fleet.binding = {"spec": binding_from_workload(wl.body, pol.body, _template_requests(wl)), "status": {}}
        fleet.binding_source = f"{wl.source}: {wl.label} with {pol.label}"
    return fleet


def warn_overflow(names: list[str], warn: Warn) -> None:
    """Tell `warn` which clusters' numbers Karmada's int64 arithmetic wrapped."""
    for name in names:
        warn(f"cluster {name}: a quantity of 2^62 base units or more (cpu in millicores) makes Karmada's int64 "
             f"arithmetic wrap; Karmada's number for this cluster is not meaningful")


def request_texts(fleet: Fleet, request: str | None, warn: Warn = _ignore) -> tuple[dict[str, str] | None, str]:
    """The per-replica request an estimate is for, as quantity strings, and where it came from: `--request`
    (`cpu=3,memory=20Gi`) when given, else the binding's `spec.replicaRequirements.resourceRequest`."""
    if request is not None:
        return parse_request_option(request, warn), "--request"
    where = "spec.replicaRequirements.resourceRequest"
    if fleet.binding is not None:
        rr = fleet.binding["spec"].get("replicaRequirements")
        if rr is not None:
            return {str(k): quantity_text(v) for k, v in (rr.get("resourceRequest") or {}).items()}, where
    return None, where


@dataclass
class FleetEstimate:
    """Karmada's available replicas per cluster and, for members given with their nodes, the exact count."""

    estimates: list[Any]  # estimate.ClusterEstimate, in cluster order
    exact: dict[str, int] = field(default_factory=dict)  # member → replicas that really fit on its nodes
    explain: bool = False
    warnings: list[str] | None = None  # what the user was told (set by `kubefit.verbs`; then in to_dict)
    inputs: dict | None = None  # the files, options and versions (set by `kubefit.verbs`)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"availableReplicas": {e.name: e.replicas for e in self.estimates}}
        if self.exact:
            data["exactReplicas"] = dict(self.exact)
            data["estimateError"] = {n: data["availableReplicas"][n] - v for n, v in self.exact.items()}
        overflow = [e.name for e in self.estimates if e.overflow]
        if overflow:
            data["overflow"] = overflow
        if self.explain:
            data["explain"] = {e.name: e.steps for e in self.estimates}
        return data | told_keys(self.warnings, None, self.inputs)


def estimate_fleet(fleet: Fleet, request: str | None = None, members: Sequence[str] = (),
                   gates: dict[str, bool] | None = None, *, explain: bool = False,
                   warn: Warn = _ignore) -> FleetEstimate:
    """Karmada's general estimate for every cluster of `fleet` and, for each `NAME=FILE` of `members`,
    the exact count on that member's nodes and pods (`kubefit estimate`)."""
    from kubefit.manifests.load import unread_objects
    from kubefit.manifests.scenario import load_scenario
    from kubefit.multicluster.estimate import exact_estimate, max_available_replicas, parse_request

    texts, where = request_texts(fleet, request, warn)
    req = None if texts is None else parse_request(texts, where)
    scenarios = {}
    for item in members:
        if "=" not in item:
            raise InputError(f"expected NAME=FILE, got {item!r}", field="--member")
        name, path = item.split("=", 1)
        if name not in {c.name for c in fleet.clusters}:
            raise InputError(f"unknown cluster {name!r} (clusters: {', '.join(c.name for c in fleet.clusters)})",
                             field="--member")
        scenarios[name] = load_scenario([path], admission=False)  # the member's stored pods, as listed
        unread = unread_objects(scenarios[name], f"estimate --member {name}", members=True, skipped=True)
        if unread:
            warn(unread)
    if scenarios and req is None:
        raise InputError("the exact count needs a request (a binding with replicaRequirements or --request)",
                         field="--member")
    estimates = max_available_replicas(fleet.clusters, req, None, gates, texts, steps=explain)
    exact = {name: exact_estimate(s.nodes, s.pods, req or {}) for name, s in scenarios.items()}
    warn_overflow([e.name for e in estimates if e.overflow], warn)
    return FleetEstimate(estimates, exact, explain)


@dataclass
class FleetSchedule:
    """Karmada's filter verdicts, scores, candidates and replica assignment for the fleet's binding."""

    fleet: Fleet
    result: dict[str, Any]  # {"filter", "scores", "candidates", "clusters", "replicas", "error", ...}
    warnings: list[str] | None = None  # what the user was told (set by `kubefit.verbs`; then in to_dict)
    inputs: dict | None = None  # the files, options and versions (set by `kubefit.verbs`)

    @property
    def binding_source(self) -> str:
        return self.fleet.binding_source

    def to_dict(self) -> dict[str, Any]:
        return self.result | told_keys(self.warnings, None, self.inputs)


def schedule_fleet(fleet: Fleet, scores: Sequence[str] = (), gates: dict[str, bool] | None = None, *,
                   warn: Warn = _ignore) -> FleetSchedule:
    """How Karmada's scheduler places the binding's replicas (`kubefit schedule`); `scores`: `NAME=N`,
    replacing the Score plugins (clusters not named score 0)."""
    from kubefit.multicluster.schedule import schedule_binding

    if fleet.binding is None:
        raise InputError("no ResourceBinding, and no workload with a PropagationPolicy, in the files",
                         file=", ".join(fleet.files))
    result = schedule_binding(fleet.clusters, fleet.binding["spec"], fleet.binding["status"],
                              _parse_scores(scores), gates)
    warn_overflow(result.pop("overflow"), warn)
    result["replicas"] = {c.name: 0 for c in fleet.clusters} | {c["name"]: c["replicas"]
                                                               for c in result["clusters"] or []}
    for w in _unchecked_api(fleet):
        warn(w)
    return FleetSchedule(fleet, result)


def _parse_scores(items: Sequence[str]) -> dict[str, int] | None:
    """`--score NAME=N` → {name: N}; None when not given (the Score plugins decide)."""
    if not items:
        return None
    scores = {}
    for item in items:
        k, _, v = item.partition("=")
        try:
            scores[k] = int(v)
        except ValueError:
            raise InputError(f"expected NAME=INTEGER, got {item!r}", field="--score") from None
    return scores


def _unchecked_api(fleet: Fleet) -> list[str]:
    """Clusters APIEnablement could not check (no status.apiEnablements), as one warning."""
    names = [c.name for c in fleet.clusters if ((c.raw or {}).get("status") or {}).get("apiEnablements") is None]
    if not names:
        return []
    res = (fleet.binding or {}).get("spec", {}).get("resource") or {}
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return [f"cluster(s) {shown}: no status.apiEnablements, so the APIEnablement filter was not "
            f"evaluated (Karmada would find no {res.get('apiVersion', '')} {res.get('kind', '')} there and reject "
            f"them: \"cluster(s) did not have the API resource\")"]
