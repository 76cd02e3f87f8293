"""Fleet verbs over Karmada objects: `estimate` (available replicas per cluster) and `schedule`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from kubefit.api.karmada import quantity_text
from kubefit.cli import FilesOption, OutputFormat, OutputOption, app, warn, warn_ignored
from kubefit.errors import InputError
from kubefit.load import Document, Scenario, add_document, decode_pod, load_scenario, read_documents
from kubefit.quantity import QuantityError, parse_quantity
from kubefit.report.output import emit
from kubefit.requests import pod_requests_nanos

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "Job")

RequestOption = Annotated[str | None, typer.Option(
    "--request", help="Per-replica request, e.g. cpu=3,memory=20Gi (overrides the binding's).")]
GatesOption = Annotated[str | None, typer.Option(
    "--feature-gates", help="Karmada feature gates, e.g. CustomizedClusterResourceModeling=false.")]


@dataclass
class Fleet:
    """The Karmada objects of the scenario files."""

    clusters: list[Any] = field(default_factory=list)
    binding: dict[str, Any] | None = None  # {"spec", "status"} of a ResourceBinding (given or built)
    binding_source: str = ""


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
    """`K=bool,…` → {K: bool}."""
    gates = {}
    for k, v in _pairs(text, "--feature-gates"):
        if v.lower() not in ("true", "false"):
            raise InputError(f"{k}: expected true or false, got {v!r}", field="--feature-gates")
        gates[k] = v.lower() == "true"
    return gates


def parse_request_option(text: str) -> dict[str, str]:
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
    _check_shape(workload.body.get("spec"), WORKLOAD_SHAPE, workload, "spec")
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


class Complete(dict):
    """A shape listing every field of its Karmada type: any other field is refused (strict decoding)."""


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
# The Cluster fields Karmada's filters read (decode_cluster checks the rest).
CLUSTER_SPEC_SHAPE = {"taints": [Complete({"key": str, "value": str, "effect": str, "timeAdded": str})]}
CLUSTER_STATUS_SHAPE = {"apiEnablements": [Complete({"groupVersion": str, "resources": [Complete({"name": str, "kind": str})]})]}
POLICY_SHAPE = {"resourceSelectors": [Complete({"apiVersion": str, "kind": str, "name": str, "namespace": str,
                                                "labelSelector": _SELECTOR})],
                "priority": int, "placement": PLACEMENT_SHAPE}
WORKLOAD_SHAPE = {"replicas": int, "template": {"metadata": dict, "spec": dict}}


def _check_shape(value: Any, shape: Any, doc: Document, path: str) -> None:
    """`value` has the expected type at every known field (null is absent); else an InputError there."""
    if value is None:
        return
    expected = dict if isinstance(shape, dict) else list if isinstance(shape, list) else shape
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        word = {dict: "a mapping", list: "a list", str: "a string", int: "an integer"}[expected]
        raise InputError(f"must be {word}, got {value!r}", file=doc.source, obj=doc.label, field=path)
    if isinstance(shape, Complete):
        unknown = sorted(str(k) for k in value if k not in shape)
        if unknown:
            raise InputError(f"unknown field {unknown[0]!r}", file=doc.source, obj=doc.label,
                             field=f"{path}.{unknown[0]}")
    if isinstance(shape, dict):
        for key, sub in shape.items():
            _check_shape(value.get(key), sub, doc, f"{path}.{key}")
    elif isinstance(shape, list):
        for i, item in enumerate(value):
            _check_shape(item, shape[0], doc, f"{path}[{i}]")


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


def _check_models(cluster: Any, doc: Document) -> None:
    """Warn for resourceModels Karmada's API refuses (its estimator still computes with them, as golden cases show)."""
    from kubefit.multicluster.models import go_models, prepare_for_create, validate_models

    error = validate_models(prepare_for_create(go_models(cluster.resource_models)))
    if error is not None:
        warn(f"{doc.source}: {doc.label}: {error.field}: {error.detail}; Karmada's API refuses this Cluster "
             f"(see kubefit models validate), the numbers below are what its estimator computes anyway")


def _check_requests(binding: Any, doc: Document) -> None:
    """Warn for negative requests: a ResourceBinding may carry them; Karmada computes with them as given."""
    requests = (binding.spec.get("replicaRequirements") or {}).get("resourceRequest") or {}
    for name, raw in requests.items():
        if parse_quantity(quantity_text(raw)) < 0:
            warn(f"{doc.source}: {doc.label}: spec.replicaRequirements.resourceRequest.{name}: negative request "
                 f"{raw!r}; Karmada computes with it as given")


def load_fleet(files: list[str]) -> Fleet:
    """Clusters plus one ResourceBinding (or a workload and the PropagationPolicy selecting it)."""
    from kubefit.api.karmada import decode_cluster, decode_resource_binding
    from kubefit.multicluster.resourceselector import claiming_policy
    from kubefit.multicluster.schedule import binding_from_workload

    fleet = Fleet()
    workloads: list[Document] = []
    policies: list[Document] = []
    for path in files:
        for doc in read_documents(path, allow_empty=False):
            if doc.kind == "Cluster":
                fleet.clusters.append(decode_cluster(doc))
                _check_shape(doc.body.get("spec"), CLUSTER_SPEC_SHAPE, doc, "spec")
                _check_shape(doc.body.get("status"), CLUSTER_STATUS_SHAPE, doc, "status")
                _check_models(fleet.clusters[-1], doc)
            elif doc.kind == "ResourceBinding":
                rb = decode_resource_binding(doc)
                _check_shape(rb.spec, BINDING_SHAPE, doc, "spec")
                _check_shape(rb.status, {"lastScheduledTime": str, "schedulerObservingAffinityName": str},
                             doc, "status")
                _check_times(rb, doc)
                _check_requests(rb, doc)
                if fleet.binding is not None:
                    raise InputError("more than one ResourceBinding; give one per run", file=doc.source, obj=doc.label)
                fleet.binding = {"spec": rb.spec, "status": rb.status}
                fleet.binding_source = f"{doc.source}: {doc.label}"
            elif doc.kind in WORKLOAD_KINDS:
                workloads.append(doc)
            elif doc.kind in ("PropagationPolicy", "ClusterPropagationPolicy"):
                _check_shape(doc.body.get("spec"), POLICY_SHAPE, doc, "spec")
                policies.append(doc)
            elif doc.kind in ("Node", "Pod"):
                raise InputError("member nodes and pods go in a separate file given with --member NAME=FILE",
                                 file=doc.source, obj=doc.label, field="kind")
            elif doc.kind in ("KubeSchedulerConfiguration", "Policy"):
                warn(f"{doc.source}: {doc.label}: a kube-scheduler configuration plays no part in Karmada's "
                     f"estimate and schedule; ignored")
            else:
                skipped = Scenario()
                add_document(skipped, doc)  # reports an unknown or missing kind
                for other in skipped.skipped + skipped.workloads:
                    warn(f"{other.source}: {other.label}: plays no part in Karmada's estimate and schedule; ignored")
    if not fleet.clusters:
        raise InputError("no Karmada Cluster objects in the files", file=", ".join(files))
    names = [c.name for c in fleet.clusters]
    dup = {n for n in names if names.count(n) > 1}
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


def _warn_overflow(names: list[str]) -> None:
    for name in names:
        warn(f"cluster {name}: a quantity of 2^62 base units or more (cpu in millicores) makes Karmada's int64 "
             f"arithmetic wrap; Karmada's number for this cluster is not meaningful")


@app.command()
def estimate(
    files: FilesOption,
    request: RequestOption = None,
    feature_gates: GatesOption = None,
    member: Annotated[list[str] | None, typer.Option(
        "--member", help="NAME=FILE: a member's nodes and pods, for the exact node-level count.")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show the arithmetic behind each number.")] = False,
    output: OutputOption = OutputFormat.table,
) -> None:
    """Available replicas per member cluster, as Karmada's general estimator computes them."""
    from kubefit.multicluster.estimate import exact_estimate, max_available_replicas, parse_request

    gates = parse_gates(feature_gates)
    fleet = load_fleet(files)
    texts: dict[str, str] | None = None
    if request is not None:
        texts = parse_request_option(request)
    elif fleet.binding is not None:
        rr = fleet.binding["spec"].get("replicaRequirements")
        if rr is not None:
            texts = {str(k): quantity_text(v) for k, v in (rr.get("resourceRequest") or {}).items()}
    where = "--request" if request is not None else "spec.replicaRequirements.resourceRequest"
    req = None if texts is None else parse_request(texts, where)
    members = {}
    for item in member or []:
        if "=" not in item:
            raise InputError(f"expected NAME=FILE, got {item!r}", field="--member")
        name, path = item.split("=", 1)
        if name not in {c.name for c in fleet.clusters}:
            raise InputError(f"unknown cluster {name!r} (clusters: {', '.join(c.name for c in fleet.clusters)})",
                             field="--member")
        members[name] = load_scenario([path])
        warn_ignored(members[name], f"estimate --member {name}", members=True)
    if members and req is None:
        raise InputError("the exact count needs a request (a binding with replicaRequirements or --request)",
                         field="--member")
    estimates = max_available_replicas(fleet.clusters, req, None, gates, texts)
    data: dict[str, Any] = {"availableReplicas": {e.name: e.replicas for e in estimates}}
    exact: dict[str, int] = {}
    for name, scen in members.items():
        exact[name] = exact_estimate(scen.nodes, scen.pods, req or {})
    if members:
        data["exactReplicas"] = exact
        data["estimateError"] = {n: data["availableReplicas"][n] - exact[n] for n in exact}
    overflow = [e.name for e in estimates if e.overflow]
    if overflow:
        data["overflow"] = overflow
        _warn_overflow(overflow)
    if explain:
        data["explain"] = {e.name: e.steps for e in estimates}

    def table(console: Console) -> None:
        t = Table(title="available replicas (Karmada general estimator)")
        for col in ("cluster", "path", "allowed pods", "Karmada", *(("exact", "error") if members else ())):
            t.add_column(col, justify="left" if col in ("cluster", "path") else "right")
        for e in estimates:
            row = [e.name, e.path, "" if e.allowed_pods is None else str(e.allowed_pods),
                   str(e.replicas) + (" (overflow)" if e.overflow else "")]
            if members:
                row += [str(exact.get(e.name, "")),
                        "" if e.name not in exact else f"{e.replicas - exact[e.name]:+d}"]
            t.add_row(*row)
        console.print(t)
        if explain:
            for e in estimates:
                console.print(f"[bold]{e.name}[/bold]")
                for step in e.steps:
                    console.print(f"  {step}")

    emit(data, output, table)


@app.command()
def schedule(
    files: FilesOption,
    feature_gates: GatesOption = None,
    score: Annotated[list[str] | None, typer.Option(
        "--score", help="NAME=N: a cluster's score, replacing the Score plugins (ClusterLocality, "
                   "ClusterAffinity); clusters not named score 0.")] = None,
    output: OutputOption = OutputFormat.table,
) -> None:
    """Candidates and the replica assignment Karmada's scheduler gives the binding; exit 1 when it fails."""
    from kubefit.multicluster.schedule import schedule_binding

    gates = parse_gates(feature_gates)
    fleet = load_fleet(files)
    if fleet.binding is None:
        raise InputError("no ResourceBinding, and no workload with a PropagationPolicy, in the files",
                         file=", ".join(files))
    scores = _parse_scores(score)
    result = schedule_binding(fleet.clusters, fleet.binding["spec"], fleet.binding["status"], scores, gates)
    overflow = result.pop("overflow")
    if overflow:
        _warn_overflow(overflow)
    result["replicas"] = {c.name: 0 for c in fleet.clusters} | {c["name"]: c["replicas"]
                                                               for c in result["clusters"] or []}
    for w in _unchecked_api(fleet):
        warn(w)

    def table(console: Console) -> None:
        _schedule_table(console, fleet, result)

    emit(result, output, table)
    if result["error"]:
        raise typer.Exit(1)


def _parse_scores(items: list[str] | None) -> dict[str, int] | None:
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
    return [f"cluster(s) {', '.join(names)}: no status.apiEnablements, so the APIEnablement filter was not "
            f"evaluated (Karmada would find no {res.get('apiVersion', '')} {res.get('kind', '')} there and reject "
            f"them: \"cluster(s) did not have the API resource\")"]


def _schedule_table(console: Console, fleet: Fleet, result: dict[str, Any]) -> None:
    """Every cluster: the filter that rejected it (and why), or its estimate, score and replicas."""
    t = Table(title=f"clusters for {fleet.binding_source}")
    for col in ("cluster", "filter", "score", "available", "allocatable", "replicas"):
        t.add_column(col, justify="left" if col in ("cluster", "filter") else "right")
    cands = {c["name"]: c for c in result["candidates"]}
    for c in fleet.clusters:
        rej = result["filter"].get(c.name)
        cand = cands.get(c.name, {})
        t.add_row(c.name, f"{rej['plugin']}: {rej['reason']}" if rej else "fits",
                  str(result["scores"].get(c.name, "")), str(cand.get("availableReplicas", "")),
                  str(cand.get("allocatableReplicas", "")), str(result["replicas"][c.name]))
    console.print(t)
    for attempt in result.get("affinityAttempts") or []:
        console.print(f"clusterAffinities term {attempt['affinityName']!r}: "
                      f"{attempt['error'] or 'scheduled'}", markup=False)
    if result["error"]:
        console.print(f"[red]scheduling failed:[/red] {result['error']}")
