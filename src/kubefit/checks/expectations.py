"""What `kubefit check` asserts: the `SchedulingExpectations` file (kubefit.io/v1alpha1) and the same assertions
given as options, decoded strictly into `Assertion`s.

The file is versioned like a Kubernetes object so that it can change without breaking the ones in Git::

    apiVersion: kubefit.io/v1alpha1
    kind: SchedulingExpectations
    metadata: {name: shop}            # optional: names the JUnit test suite
    files: [cluster/]                 # optional: the candidate scenario (-f), relative to this file
    baseline: [base/]                 # optional: the scenario before the change (--baseline)
    kubeVersions: ["1.34", "1.37"]    # optional ("all"): every assertion is checked on each version
    nodeTemplates: [small-node.yaml]  # for maxNodesAdded, relative to this file
    assertions:
      maxPending: 0                   # simulate: pods left pending ≤ 0 (or `baseline`: no more than the baseline)
      fullyPlaced: [deployment/web]   # simulate: every pod of these workloads (or pods) bound
      maxNodesAdded: 1                # plan: nodes of the templates to add ≤ 1
      minRemovableNodes: 1            # consolidate: removable nodes ≥ 1
      minCapacity: {deployment/web: 2}   # capacity: more copies that fit ≥ 2
      minAllocation: {cpu: 50}        # simulate: requested / allocatable of the cluster ≥ 50 %
      configValid: true               # config validate: the scenario's configuration accepted
      maxPodMoves: 0                  # simulate: pods placed elsewhere than in the baseline ≤ 0
      claimZones: true                # simulate: no pod on another zone than its claim's volume
      gangsPlaced: [ml/train-0]       # simulate: each of these pod groups placed whole (GenericWorkload on)

A field kubefit does not know, a wrong type or a bad value is an `InputError` naming the file, the object and
the field (exit 2), as the API server refuses a manifest: a typo never silently asserts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubefit.errors import InputError
from kubefit.manifests.decode import (
    boolean,
    check_api_version,
    check_fields,
    fail,
    integer,
    mapping,
    sequence,
    string,
    type_name,
)
from kubefit.manifests.documents import Document, read_documents

API_VERSION = "kubefit.io/v1alpha1"
KIND = "SchedulingExpectations"
TOP_FIELDS = frozenset({"apiVersion", "kind", "metadata", "files", "baseline", "kubeVersions", "nodeTemplates",
                        "assertions"})
METADATA_FIELDS = frozenset({"name", "labels", "annotations"})
BASELINE = "baseline"  # maxPending: no more than the baseline leaves pending

# Each assertion: the verb whose answer it reads, and how its bound reads ("≤", "≥", or a yes/no).
VERB_OF = {"maxPending": "simulate", "fullyPlaced": "simulate", "maxNodesAdded": "plan",
           "minRemovableNodes": "consolidate", "minCapacity": "capacity", "minAllocation": "simulate",
           "configValid": "config validate", "maxPodMoves": "simulate", "claimZones": "simulate",
           "gangsPlaced": "simulate"}
OPTION_OF = {"maxPending": "--max-pending", "fullyPlaced": "--fully-placed", "maxNodesAdded": "--max-nodes-added",
             "minRemovableNodes": "--min-removable-nodes", "minCapacity": "--min-capacity",
             "minAllocation": "--min-allocation", "configValid": "--config-valid", "maxPodMoves": "--max-pod-moves",
             "claimZones": "--claim-zones", "gangsPlaced": "--gang-placed"}


@dataclass(frozen=True)
class Assertion:
    """One assertion: its `kind` (a field of `assertions`), what it is about (`target`: a workload, a pod, a
    resource; None), its `bound` (N, X %, True, or `baseline`), and where it was given (`source` file or
    "command line", `field` path or option) for messages and annotations."""

    kind: str
    bound: int | float | str | bool
    target: str | None = None
    source: str = "command line"
    field: str = ""

    @property
    def verb(self) -> str:
        return VERB_OF[self.kind]

    @property
    def title(self) -> str:
        """`pending pods ≤ 0`: the assertion in words (a JUnit test case's name)."""
        b, t = self.bound, self.target
        return {"maxPending": f"pending pods ≤ {'the baseline' if b == BASELINE else b}",
                "fullyPlaced": f"{t} fully placed",
                "maxNodesAdded": f"nodes added by plan ≤ {b}",
                "minRemovableNodes": f"removable nodes ≥ {b}",
                "minCapacity": f"capacity of {t} ≥ {b} copies",
                "minAllocation": f"{t} allocation ≥ {b} %",
                "configValid": "scheduler configuration valid",
                "maxPodMoves": f"pods moved from the baseline ≤ {b}",
                "claimZones": "no pod on another zone than its claim",
                "gangsPlaced": f"pod group {t} placed whole"}[self.kind]

    @property
    def needs_baseline(self) -> bool:
        return self.kind == "maxPodMoves" or (self.kind == "maxPending" and self.bound == BASELINE)


@dataclass
class Expectations:
    """What to check: the assertions in order, the node templates `maxNodesAdded` plans with, the versions."""

    assertions: list[Assertion] = field(default_factory=list)
    node_templates: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # the scenario, when the file names it (`-f` replaces it)
    baseline: list[str] = field(default_factory=list)  # ... and the baseline (`--baseline` replaces it)
    kube_versions: str | None = None  # "1.34,1.37" or "all"; None: the verbs' own default
    name: str = "kubefit check"
    source: str | None = None  # the expectation file


def load_expectations(path: str | Path) -> Expectations:
    """The expectation file at `path`, decoded strictly (one `SchedulingExpectations` document)."""
    docs = read_documents(path, allow_empty=False)
    if len(docs) != 1:
        raise InputError(f"an expectation file holds one {KIND} document, found {len(docs)}", file=str(path))
    doc = docs[0]
    if doc.kind != KIND:
        raise fail(doc, "kind", f"must be {KIND}, got {doc.body.get('kind')!r}")
    check_api_version(doc, API_VERSION)
    check_fields(doc.body, TOP_FIELDS, doc, "")
    meta = mapping(doc.body.get("metadata"), doc, "metadata")
    check_fields(meta, METADATA_FIELDS, doc, "metadata")
    out = Expectations(name=string(meta.get("name"), doc, "metadata.name") or "kubefit check", source=str(path))
    out.kube_versions = _versions(doc)
    out.node_templates, out.files, out.baseline = (_paths(doc, name) for name in ("nodeTemplates", "files", "baseline"))
    raw = mapping(doc.body.get("assertions"), doc, "assertions")
    check_fields(raw, frozenset(VERB_OF), doc, "assertions")
    for kind, value in raw.items():
        out.assertions += _decode(kind, value, doc)
    if not out.assertions:
        raise fail(doc, "assertions", f"names no assertion (one of {', '.join(VERB_OF)})")
    return out


def _paths(doc: Document, name: str) -> list[str]:
    """A list of files or folders, each relative to the expectation file's folder."""
    base = Path(doc.source).parent
    return [str(base / string(t, doc, f"{name}[{i}]")) for i, t in enumerate(sequence(doc.body.get(name), doc, name))]


def _versions(doc: Document) -> str | None:
    """`kubeVersions`: a list of versions, or `all`; each checked now, naming its field."""
    from kubefit.k8s.version import parse_minor

    raw = doc.body.get("kubeVersions")
    if raw is None:
        return None
    if isinstance(raw, str) and raw.strip().lower() == "all":
        return "all"
    names = []
    for i, item in enumerate(sequence(raw, doc, "kubeVersions")):
        text = string(item if not isinstance(item, float) else str(item), doc, f"kubeVersions[{i}]")
        try:
            parse_minor(text)
        except InputError as exc:
            raise fail(doc, f"kubeVersions[{i}]", exc.message) from None
        names.append(text)
    return ",".join(names) or None


def _count(value: Any, doc: Document, where: str) -> int:
    """A bound that counts something: an integer ≥ 0."""
    n = integer(value, doc, where, default=None)
    if n < 0:
        raise fail(doc, where, f"must be 0 or more, got {n}")
    return n


def _percent(value: Any, doc: Document, where: str) -> float:
    """A bound in percent: a number from 0 to 100."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(doc, where, f"must be a number of percent (0 to 100), got {type_name(value)} {value!r}")
    if not 0 <= value <= 100:
        raise fail(doc, where, f"must be from 0 to 100 (percent), got {value}")
    return value


def _decode(kind: str, value: Any, doc: Document) -> list[Assertion]:
    """The assertions one field of `assertions` gives (a mapping gives one per entry)."""
    where = f"assertions.{kind}"
    at = {"source": doc.source, "field": where}
    if kind == "maxPending" and value == BASELINE:
        return [Assertion(kind, BASELINE, **at)]
    if kind in ("maxPending", "maxNodesAdded", "minRemovableNodes", "maxPodMoves"):
        return [Assertion(kind, _count(value, doc, where), **at)]
    if kind in ("configValid", "claimZones"):
        return [Assertion(kind, True, **at)] if boolean(value, doc, where) else []
    if kind in ("fullyPlaced", "gangsPlaced"):
        names = [string(v, doc, f"{where}[{i}]") for i, v in enumerate(sequence(value, doc, where))]
        for i, name in enumerate(names):
            if not name.strip():
                raise fail(doc, f"{where}[{i}]", "must name a workload (deployment/web) or a pod"
                           if kind == "fullyPlaced" else "must name a pod group (NAMESPACE/NAME)")
        return [Assertion(kind, True, n, doc.source, f"{where}[{i}]") for i, n in enumerate(names)]
    read = _count if kind == "minCapacity" else _percent
    return [Assertion(kind, read(v, doc, f"{where}.{k}"), str(k), doc.source, f"{where}.{k}")
            for k, v in mapping(value, doc, where).items()]


def from_options(*, max_pending: str | None = None, fully_placed: list[str] = (), max_nodes_added: int | None = None,
                 min_removable_nodes: int | None = None, min_capacity: list[str] = (), min_allocation: list[str] = (),
                 config_valid: bool = False, max_pod_moves: int | None = None,
                 claim_zones: bool = False, gangs_placed: list[str] = ()) -> list[Assertion]:
    """The assertions given as options (`--max-pending 0`, `--min-capacity deployment/web=3`, ...), each bad value
    refused naming its option."""
    out: list[Assertion] = []

    def add(kind: str, bound: Any, target: str | None = None) -> None:
        out.append(Assertion(kind, bound, target, "command line", OPTION_OF[kind]))

    if max_pending is not None:
        text = str(max_pending).strip()
        if text != BASELINE and not (text.isdigit()):
            raise InputError(f"must be a count (0 or more) or {BASELINE}, got {max_pending!r}", field="--max-pending")
        add("maxPending", BASELINE if text == BASELINE else int(text))
    for name in fully_placed:
        add("fullyPlaced", True, name)
    for name in gangs_placed:
        add("gangsPlaced", True, name)
    for kind, n in (("maxNodesAdded", max_nodes_added), ("minRemovableNodes", min_removable_nodes),
                    ("maxPodMoves", max_pod_moves)):
        if n is not None:
            if n < 0:
                raise InputError(f"must be 0 or more, got {n}", field=OPTION_OF[kind])
            add(kind, n)
    for kind, items, read in (("minCapacity", min_capacity, int), ("minAllocation", min_allocation, float)):
        for item in items:
            name, sep, raw = str(item).rpartition("=")
            try:
                bound = read(raw)
            except ValueError:
                bound = None
            if not sep or not name or bound is None or bound < 0 or (kind == "minAllocation" and bound > 100):
                what = "POD=COPIES (deployment/web=3)" if kind == "minCapacity" else "RESOURCE=PERCENT (cpu=50)"
                raise InputError(f"must be {what}, got {item!r}", field=OPTION_OF[kind])
            add(kind, int(bound) if bound == int(bound) else bound, name)
    if config_valid:
        add("configValid", True)
    if claim_zones:
        add("claimZones", True)
    return out


def combined(file: Expectations | None, options: list[Assertion], node_templates: list[str],
             kube_versions: str | None, files: list[str] = (), baseline: list[str] = ()) -> Expectations:
    """The file's expectations with the options on top: an option replaces the file's assertion of the same kind
    and target; `-f`, `--baseline`, `--node-template` and `--kube-version` replace the file's lists."""
    base = file or Expectations()
    given = {(a.kind, a.target) for a in options}
    kept = [a for a in base.assertions if (a.kind, a.target) not in given]
    out = replace(base, assertions=kept + options, node_templates=list(node_templates) or base.node_templates,
                  kube_versions=kube_versions or base.kube_versions, files=list(files) or base.files,
                  baseline=list(baseline) or base.baseline)
    if not out.files:
        raise InputError("no scenario to check: give -f FILE (or files in the expectation file)", field="-f")
    if not out.assertions:
        raise InputError("nothing to check: give --expect FILE or an assertion option (--max-pending 0, ...)",
                         field="--expect")
    planned = next((a for a in out.assertions if a.kind == "maxNodesAdded"), None)
    if planned is not None and not out.node_templates:
        raise InputError("plan adds copies of node templates: give nodeTemplates or --node-template",
                         file=None if planned.source == "command line" else planned.source, field=planned.field)
    return out
