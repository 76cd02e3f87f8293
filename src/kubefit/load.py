"""Files → API objects: multi-document YAML/JSON, `kind: List`, several files; nothing about scheduling.

Every problem is reported as an `InputError` naming the file, the object (kind/name) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubefit.api.core import Container, Node, Pod, ResourceList, Taint, Toleration
from kubefit.errors import InputError
from kubefit.quantity import QuantityError, parse_quantity
from kubefit.resourcenames import is_schedulable

try:  # the C loader is ~10x faster on large snapshots and traces
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

QUEUED_ANNOTATION = "kubefit.io/queued"  # "true": a pod with spec.nodeName that is still to be scheduled
SCHEDULER_CONFIG_KINDS = ("KubeSchedulerConfiguration", "Policy")
LIST_KINDS = ("List", "NodeList", "PodList")
# Kinds read by other layers (Karmada fleets, workloads); kept as raw documents for them to decode.
FLEET_KINDS = ("Cluster", "ResourceBinding", "PropagationPolicy", "ClusterPropagationPolicy",
               "Deployment", "StatefulSet", "ReplicaSet", "Job")


@dataclass
class Document:
    """One object of an input file, still as parsed YAML, with where it came from."""

    body: dict[str, Any]
    source: str
    index: int  # position among the documents of `source` (1-based), for messages

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        meta = self.body.get("metadata")
        return str(meta.get("name", "")) if isinstance(meta, dict) else ""

    @property
    def label(self) -> str:
        """`Kind/name` (or `Kind #i` when unnamed), the object part of an error message."""
        return f"{self.kind}/{self.name}" if self.name else f"{self.kind or 'document'} #{self.index}"


@dataclass
class Scenario:
    """What the user described: at most one scheduler configuration, nodes, pods, fleet objects."""

    scheduler_config: Document | None = None
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)  # document order, bound and pending
    fleet: list[Document] = field(default_factory=list)  # Karmada / workload objects, raw
    warnings: list[str] = field(default_factory=list)

    @property
    def bound_pods(self) -> list[Pod]:
        """Pods with `spec.nodeName`: they run there."""
        return [p for p in self.pods if p.bound]

    @property
    def pending_pods(self) -> list[Pod]:
        """Pods without `spec.nodeName` (or annotated `kubefit.io/queued`), in queue order: higher `spec.priority` first, then document order."""
        pending = [p for p in self.pods if not p.bound]
        return sorted(pending, key=lambda p: -p.priority)  # sort is stable: document order kept

    def fleet_objects(self, *kinds: str) -> list[Document]:
        return [d for d in self.fleet if d.kind in kinds]


# --------------------------------------------------------------------------- files → documents

def read_documents(path: str | Path) -> list[Document]:
    """Parse one file (YAML, multi-document YAML, JSON; `-` is stdin) into top-level documents."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8") if source != "-" else _read_stdin()
    except FileNotFoundError:
        raise InputError("no such file", file=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", file=source) from None
    return parse_documents(text, source)


def _read_stdin() -> str:
    import sys

    return sys.stdin.read()


def parse_documents(text: str, source: str = "<string>") -> list[Document]:
    """Parse text holding YAML or JSON documents; `kind: List` items are expanded in order."""
    stripped = text.lstrip()
    try:
        if stripped.startswith(("{", "[")):
            bodies: list[Any] = [json.loads(text)]
        else:
            bodies = list(yaml.load_all(text, Loader=_Loader))
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                         file=source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"malformed YAML{where}: {problem}", file=source) from None
    docs: list[Document] = []
    for i, body in enumerate(bodies, start=1):
        if body is None:
            continue
        if isinstance(body, list):  # a JSON array of objects
            docs.extend(_expand(item, source, i) for item in body)
            continue
        docs.extend(_flatten(body, source, i))
    return docs


def _expand(body: Any, source: str, index: int) -> Document:
    if not isinstance(body, dict):
        raise InputError(f"expected an object (a mapping with kind), got {type(body).__name__}",
                         file=source, obj=f"document #{index}")
    return Document(body, source, index)


def _flatten(body: Any, source: str, index: int) -> Iterator[Document]:
    doc = _expand(body, source, index)
    if doc.kind in LIST_KINDS or (not doc.kind and isinstance(body.get("items"), list)):
        items = body.get("items")
        if not isinstance(items, list):
            raise InputError("items must be a list", file=source, obj=doc.label, field="items")
        for item in items:
            yield from _flatten(item, source, index)
        return
    yield doc


# --------------------------------------------------------------------------- documents → scenario

def load_scenario(paths: Iterable[str | Path]) -> Scenario:
    """Read every file and sort its objects into a `Scenario` (see DESIGN.md, "The scenario file")."""
    scenario = Scenario()
    for path in paths:
        for doc in read_documents(path):
            add_document(scenario, doc)
    return scenario


def add_document(scenario: Scenario, doc: Document) -> None:
    kind = doc.kind
    if kind == "Node":
        scenario.nodes.append(decode_node(doc, scenario.warnings))
    elif kind == "Pod":
        scenario.pods.append(decode_pod(doc, scenario.warnings))
    elif kind in SCHEDULER_CONFIG_KINDS:
        if scenario.scheduler_config is not None:
            first = scenario.scheduler_config
            raise InputError(f"a scenario holds at most one scheduler configuration; the first is "
                             f"{first.label} in {first.source}", file=doc.source, obj=doc.label)
        scenario.scheduler_config = doc
    elif kind in FLEET_KINDS:
        scenario.fleet.append(doc)
    elif not kind:
        raise InputError("object has no kind", file=doc.source, obj=doc.label, field="kind")
    else:
        supported = ", ".join(("Node", "Pod", *SCHEDULER_CONFIG_KINDS, *LIST_KINDS, *FLEET_KINDS))
        raise InputError(f"unknown kind {kind!r} (kubefit reads {supported})",
                         file=doc.source, obj=doc.label, field="kind")


def _mapping(value: Any, doc: Document, field_path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"must be a mapping, got {type(value).__name__}", file=doc.source,
                         obj=doc.label, field=field_path)
    return value


def _list(value: Any, doc: Document, field_path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"must be a list, got {type(value).__name__}", file=doc.source,
                         obj=doc.label, field=field_path)
    return value


def _name(doc: Document) -> str:
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("a name is required", file=doc.source, obj=doc.label, field="metadata.name")
    return name


def decode_resource_list(value: Any, doc: Document, field_path: str, warnings: list[str] | None = None,
                         *, allow_negative: bool = False) -> ResourceList:
    """A `ResourceList` mapping → {name: nanos}; bad or negative quantities are errors."""
    out: ResourceList = {}
    for name, raw in _mapping(value, doc, field_path).items():
        where = f"{field_path}.{name}"
        try:
            nanos = parse_quantity(raw)
        except QuantityError as exc:
            raise InputError(str(exc), file=doc.source, obj=doc.label, field=where) from None
        if nanos < 0 and not allow_negative:
            raise InputError(f"must be greater than or equal to 0, got {raw!r}", file=doc.source,
                             obj=doc.label, field=where)
        if warnings is not None and not is_schedulable(str(name)):
            warnings.append(f"{doc.source}: {doc.label}: {where}: resource {name!r} is not one kube-scheduler "
                            f"accounts for (not cpu, memory, ephemeral-storage, pods, extended or hugepages); "
                            f"it is ignored, as kube-scheduler ignores it")
        out[str(name)] = nanos
    return out


def decode_node(doc: Document, warnings: list[str]) -> Node:
    _check_api_version(doc, "v1")
    name = _name(doc)
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    spec = _mapping(doc.body.get("spec"), doc, "spec")
    status = _mapping(doc.body.get("status"), doc, "status")
    if "allocatable" in status:
        allocatable = decode_resource_list(status["allocatable"], doc, "status.allocatable", warnings)
    elif "capacity" in status:
        allocatable = decode_resource_list(status["capacity"], doc, "status.capacity", warnings)
        warnings.append(f"{doc.source}: {doc.label}: status.allocatable is absent; using status.capacity")
    else:
        allocatable = {}
        warnings.append(f"{doc.source}: {doc.label}: node has neither status.allocatable nor status.capacity;"
                        f" nothing fits on it")
    taints = tuple(
        Taint(key=str(t.get("key", "")), value=str(t.get("value", "") or ""), effect=str(t.get("effect", "")))
        for t in (_mapping(t, doc, f"spec.taints[{i}]") for i, t in enumerate(_list(spec.get("taints"), doc, "spec.taints")))
    )
    labels = {str(k): str(v) for k, v in _mapping(meta.get("labels"), doc, "metadata.labels").items()}
    return Node(name=name, allocatable=allocatable, labels=labels, unschedulable=bool(spec.get("unschedulable")),
                taints=taints, raw=doc.body, source=doc.source)


def _container(raw: Any, doc: Document, path: str, warnings: list[str]) -> Container:
    c = _mapping(raw, doc, path)
    resources = _mapping(c.get("resources"), doc, f"{path}.resources")
    requests = decode_resource_list(resources.get("requests"), doc, f"{path}.resources.requests", warnings)
    limits = decode_resource_list(resources.get("limits"), doc, f"{path}.resources.limits")
    missing = sorted(set(limits) - set(requests))
    if missing:
        warnings.append(f"{doc.source}: {doc.label}: {path}.resources: limits without requests for "
                        f"{', '.join(missing)}; the API server would copy them into requests, kubefit uses "
                        f"the pod as given (no request)")
    return Container(name=str(c.get("name", "")), requests=requests, restart_policy=c.get("restartPolicy"))


def decode_pod(doc: Document, warnings: list[str]) -> Pod:
    _check_api_version(doc, "v1")
    name = _name(doc)
    meta = _mapping(doc.body.get("metadata"), doc, "metadata")
    spec = _mapping(doc.body.get("spec"), doc, "spec")
    raw_containers = _list(spec.get("containers"), doc, "spec.containers")
    if not raw_containers:
        raise InputError("a pod needs at least one container", file=doc.source, obj=doc.label,
                         field="spec.containers")
    containers = tuple(_container(c, doc, f"spec.containers[{i}]", warnings) for i, c in enumerate(raw_containers))
    inits = tuple(_container(c, doc, f"spec.initContainers[{i}]", warnings)
                  for i, c in enumerate(_list(spec.get("initContainers"), doc, "spec.initContainers")))
    pod_resources = _mapping(spec.get("resources"), doc, "spec.resources")
    pod_requests = (decode_resource_list(pod_resources["requests"], doc, "spec.resources.requests", warnings)
                    if pod_resources.get("requests") is not None else None)
    priority = spec.get("priority", 0) or 0
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise InputError(f"must be an integer, got {priority!r}", file=doc.source, obj=doc.label,
                         field="spec.priority")
    selector = spec.get("nodeSelector")
    node_selector = None if selector is None else {
        str(k): str(v) for k, v in _mapping(selector, doc, "spec.nodeSelector").items()}
    tolerations = tuple(
        Toleration(key=str(t.get("key", "") or ""), operator=str(t.get("operator", "") or ""),
                   value=str(t.get("value", "") or ""), effect=str(t.get("effect", "") or ""))
        for t in (_mapping(t, doc, f"spec.tolerations[{i}]")
                  for i, t in enumerate(_list(spec.get("tolerations"), doc, "spec.tolerations"))))
    affinity = spec.get("affinity")
    status = _mapping(doc.body.get("status"), doc, "status")
    return Pod(
        name=name,
        namespace=str(meta.get("namespace") or "default"),
        node_name=str(spec.get("nodeName") or ""),
        priority=priority,
        containers=containers,
        init_containers=inits,
        overhead=decode_resource_list(spec.get("overhead"), doc, "spec.overhead", warnings),
        pod_requests=pod_requests,
        node_selector=node_selector,
        affinity=_mapping(affinity, doc, "spec.affinity") if affinity is not None else None,
        tolerations=tolerations,
        phase=str(status.get("phase") or ""),
        scheduler_name=str(spec.get("schedulerName") or "default-scheduler"),
        queued=_queued(doc, meta),
        raw=doc.body,
        source=doc.source,
    )


def _queued(doc: Document, meta: dict[str, Any]) -> bool:
    """`kubefit.io/queued: "true"` keeps a pod with spec.nodeName in the queue (to simulate NodeName)."""
    value = _mapping(meta.get("annotations"), doc, "metadata.annotations").get(QUEUED_ANNOTATION)
    if value is None:
        return False
    if str(value).lower() not in ("true", "false"):
        raise InputError(f'must be "true" or "false", got {value!r}', file=doc.source, obj=doc.label,
                         field=f"metadata.annotations.{QUEUED_ANNOTATION}")
    return str(value).lower() == "true"


def _check_api_version(doc: Document, expected: str) -> None:
    version = doc.body.get("apiVersion", expected)
    if version != expected:
        raise InputError(f"unsupported apiVersion {version!r} for {doc.kind} (expected {expected!r})",
                         file=doc.source, obj=doc.label, field="apiVersion")
