"""What `kubefit check` asserts: the `SchedulingExpectations` file (kubefit.io/v1alpha1) and the same assertions
given as options, decoded strictly into `Assertion`s.

The file is versioned like a Kubernetes object so that it can change without breaking the ones in Git::

    apiVersion: kubefit.io/v1alpha1
    kind: SchedulingExpectations
    metadata: {name: shop}            # optional: names the JUnit test suite
    files: [cluster/]                 # optional: the candidate scenario (-f), relative to this file
    baseline: [base/]                 # optional: the scenario before the change (--baseline): files, or a git ref
    recursive: true                   # optional: read the folders' sub-folders too (-R)
    namespace: shop                   # optional: the namespace of a workload named without one (-n)
    kubeVersions: ["1.34", "1.37"]    # optional ("all"): every assertion is checked on each version
    nodeTemplates: [small-node.yaml]  # for maxNodesAdded, relative to this file
    maxNodes: 50                      # optional: plan adds at most this many nodes of each template (--max-nodes)
    failOn: error                     # optional: `warning` fails on an assertion of severity warning too
    assertions:
      maxPending: 0                   # simulate: pods left pending ≤ 0 (or `baseline`: no more than the baseline)
      fullyPlaced: [deployment/web]   # simulate: every pod of these workloads (or pods) bound
      maxNodesAdded: 1                # plan: nodes of the templates to add ≤ 1 (and no pod that cannot fit)
      minRemovableNodes: 1            # consolidate: removable nodes ≥ 1
      minCapacity: {deployment/web: 2}   # capacity: more copies that fit ≥ 2 (the pending pods placed first)
      minAllocation: {cpu: 50}        # simulate: requested / allocatable of the cluster ≥ 50 %
      configValid: true               # config validate: the scenario's configuration accepted
      maxPodMoves: 0                  # simulate: pods placed elsewhere than in the baseline ≤ 0
      claimZones: true                # simulate: no pod on another zone than its claim's volume
      noWarnings: true                # kubefit told no warning about the scenario (--strict)
      gangsPlaced: [ml/train-0]       # simulate: each of these pod groups placed whole (GenericWorkload on)

Each bound has a long form that also gives the assertion's `severity` (error, the default, or warning: a failed
warning is reported, not failed, unless `failOn: warning` / `--fail-on warning`): `maxPodMoves: {max: 5,
severity: warning}`, `minCapacity: {deployment/web: {min: 2, severity: warning}}`, `fullyPlaced: [{workload:
deployment/web, severity: warning}]`, `configValid: {severity: warning}`; `maxNodesAdded: {max: 1,
allowCannotFit: true}` lets pods that fit on no count of the templates stay pending.

A workload is named as kubectl names it (`deployment/web`) or with its namespace (`shop/deployment/web`); a pod
by its name or `namespace/name`. A field kubefit does not know, a wrong type or a bad value is an `InputError`
naming the file, the object and the field (exit 2), as the API server refuses a manifest: a typo never silently
asserts nothing.
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
TOP_FIELDS = frozenset({"apiVersion", "kind", "metadata", "files", "baseline", "recursive", "namespace",
                        "kubeVersions", "nodeTemplates", "maxNodes", "failOn", "assertions"})
METADATA_FIELDS = frozenset({"name", "labels", "annotations"})
BASELINE = "baseline"  # maxPending: no more than the baseline leaves pending
ERROR, WARNING = "error", "warning"  # an assertion's severity (as linters and code scanning name levels)
SEVERITIES = (ERROR, WARNING)
DEFAULT_NAME = "kubefit check"

# Each assertion: the verb whose answer it reads, and how its bound reads ("≤", "≥", or a yes/no).
VERB_OF = {"maxPending": "simulate", "fullyPlaced": "simulate", "maxNodesAdded": "plan",
           "minRemovableNodes": "consolidate", "minCapacity": "capacity", "minAllocation": "simulate",
           "configValid": "config validate", "maxPodMoves": "simulate", "claimZones": "simulate",
           "noWarnings": "check", "gangsPlaced": "simulate"}
OPTION_OF = {"maxPending": "--max-pending", "fullyPlaced": "--fully-placed", "maxNodesAdded": "--max-nodes-added",
             "minRemovableNodes": "--min-removable-nodes", "minCapacity": "--min-capacity",
             "minAllocation": "--min-allocation", "configValid": "--config-valid", "maxPodMoves": "--max-pod-moves",
             "claimZones": "--claim-zones", "noWarnings": "--strict", "gangsPlaced": "--gang-placed"}
BOUND_KEY = {"maxPending": "max", "maxNodesAdded": "max", "maxPodMoves": "max", "minRemovableNodes": "min",
             "minCapacity": "min", "minAllocation": "min"}  # the long form's key for the bound
FLAGS = ("configValid", "claimZones", "noWarnings")  # assertions that are on or off


@dataclass(frozen=True)
class Assertion:
    """One assertion: its `kind` (a field of `assertions`), what it is about (`target`: a workload, a pod, a
    resource; None), its `bound` (N, X %, True, or `baseline`), where it was given (`source` file or
    "command line", `field` path or option) for messages and annotations, its `severity` (error or warning), and
    for maxNodesAdded whether pods that fit on no count of the templates may stay pending (`allow_cannot_fit`)."""

    kind: str
    bound: int | float | str | bool
    target: str | None = None
    source: str = "command line"
    field: str = ""
    severity: str = ERROR
    allow_cannot_fit: bool = False

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
                "noWarnings": "no warning about the scenario",
                "gangsPlaced": f"pod group {t} placed whole"}[self.kind]

    @property
    def needs_baseline(self) -> bool:
        return self.kind == "maxPodMoves" or (self.kind == "maxPending" and self.bound == BASELINE)

    @property
    def given_in_file(self) -> bool:
        return self.source != "command line"


@dataclass
class Expectations:
    """What to check: the assertions in order, the node templates `maxNodesAdded` plans with, the versions."""

    assertions: list[Assertion] = field(default_factory=list)
    node_templates: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # the scenario, when the file names it (`-f` replaces it)
    baseline: list[str] = field(default_factory=list)  # ... and the baseline (`--baseline` replaces it)
    kube_versions: str | None = None  # "1.34,1.37" or "all"; None: the verbs' own default
    name: str = DEFAULT_NAME
    source: str | None = None  # the expectation file
    namespace: str | None = None  # of a workload or pod named without one (None: any, if only one has it)
    max_nodes: int | None = None  # plan's --max-nodes
    recursive: bool = False
    fail_on: str = ERROR  # `warning`: an assertion of severity warning that fails fails the check


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
    out = Expectations(name=string(meta.get("name"), doc, "metadata.name") or DEFAULT_NAME, source=str(path))
    out.kube_versions = _versions(doc)
    out.node_templates, out.files = _paths(doc, "nodeTemplates"), _paths(doc, "files")
    out.baseline = _paths(doc, "baseline", refs=True)
    out.recursive = bool(boolean(doc.body.get("recursive"), doc, "recursive"))
    out.namespace = string(doc.body.get("namespace"), doc, "namespace") or None
    if doc.body.get("maxNodes") is not None:
        out.max_nodes = _count(doc.body["maxNodes"], doc, "maxNodes")
    out.fail_on = _severity(doc.body.get("failOn"), doc, "failOn")
    raw = mapping(doc.body.get("assertions"), doc, "assertions")
    check_fields(raw, frozenset(VERB_OF), doc, "assertions")
    for kind, value in raw.items():
        out.assertions += _decode(kind, value, doc)
    if not out.assertions:
        raise fail(doc, "assertions", f"names no assertion (one of {', '.join(VERB_OF)})")
    return out


def _paths(doc: Document, name: str, *, refs: bool = False) -> list[str]:
    """A list of files or folders, each relative to the expectation file's folder and checked now (a missing one
    named with the expectation file); with `refs`, an entry that is no file may be a git ref (read later)."""
    base = Path(doc.source).parent
    out = []
    for i, given in enumerate(sequence(doc.body.get(name), doc, name)):
        text = string(given, doc, f"{name}[{i}]")
        path = base / text
        if path.exists():
            out.append(str(path))
        elif refs:
            out.append(text)  # a git ref, such as origin/main (kubefit.checks.gitref); else refused there
        else:
            raise fail(doc, f"{name}[{i}]", f"{text}: no such file or folder (relative to {base or '.'})")
    return out


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


def _severity(value: Any, doc: Document, where: str) -> str:
    text = string(value, doc, where) or ERROR
    if text not in SEVERITIES:
        raise fail(doc, where, f"must be error or warning, got {text!r}")
    return text


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


def allocation_resource(name: str) -> str | None:
    """Why `name` cannot be a resource of `minAllocation` (None when it can): kube-scheduler accounts for cpu,
    memory, ephemeral-storage, pods and the scalar resources (a domain-prefixed extended resource, hugepages-*,
    *kubernetes.io/*); any other name is a typo (`cpux`), which would otherwise fail as 'no node has it'."""
    from kubefit.k8s.resourcenames import is_schedulable

    if is_schedulable(name):
        return None
    return (f"{name!r} is not a resource kube-scheduler counts (cpu, memory, ephemeral-storage, pods, hugepages-<size>, "
            f"or an extended resource with its domain, such as nvidia.com/gpu)")


class _LongForm:
    """An assertion's value in its short form (the bound) or its long form (a mapping: the bound under `max`/`min`,
    `severity`, and for maxNodesAdded `allowCannotFit`), read with the field named."""

    def __init__(self, kind: str, value: Any, doc: Document, where: str) -> None:
        self.kind, self.doc, self.where = kind, doc, where
        self.severity, self.allow_cannot_fit = ERROR, False
        self.value = value
        if isinstance(value, dict):
            key = BOUND_KEY.get(kind)
            known = {"severity", *((key,) if key else ()), *(("allowCannotFit",) if kind == "maxNodesAdded" else ())}
            check_fields(value, frozenset(known), doc, where)
            self.severity = _severity(value.get("severity"), doc, f"{where}.severity")
            self.allow_cannot_fit = bool(boolean(value.get("allowCannotFit"), doc, f"{where}.allowCannotFit"))
            if key is None:
                self.value = True  # `configValid: {severity: warning}`: on
            elif key not in value:
                raise fail(doc, f"{where}.{key}", "is required (the bound)")
            else:
                self.value, self.where = value[key], f"{where}.{key}"


def _decode(kind: str, value: Any, doc: Document) -> list[Assertion]:
    """The assertions one field of `assertions` gives (a mapping gives one per entry)."""
    where = f"assertions.{kind}"
    if kind in NAMED_ITEMS:
        return [_named(kind, item, doc, f"{where}[{i}]") for i, item in enumerate(sequence(value, doc, where))]
    if kind in ("minCapacity", "minAllocation"):
        return [_targeted(kind, str(k), v, doc, f"{where}.{k}") for k, v in mapping(value, doc, where).items()]
    form = _LongForm(kind, value, doc, where)
    at = {"source": doc.source, "field": where, "severity": form.severity}
    if kind == "maxPending" and form.value == BASELINE:
        return [Assertion(kind, BASELINE, **at)]
    if kind in FLAGS:
        return [Assertion(kind, True, **at)] if boolean(form.value, doc, form.where) else []
    return [Assertion(kind, _count(form.value, doc, form.where), allow_cannot_fit=form.allow_cannot_fit, **at)]


NAMED_ITEMS = {  # the assertions that list names: the long form's key, what an empty name is told
    "fullyPlaced": ("workload", "must name a workload (deployment/web, shop/deployment/web) or a pod"),
    "gangsPlaced": ("podGroup", "must name a pod group (NAMESPACE/NAME)"),
}


def _named(kind: str, item: Any, doc: Document, where: str) -> Assertion:
    """One entry of `fullyPlaced` or `gangsPlaced`: a name, or `{workload|podGroup: NAME, severity: ...}`."""
    key, empty = NAMED_ITEMS[kind]
    severity = ERROR
    if isinstance(item, dict):
        check_fields(item, frozenset({key, "severity"}), doc, where)
        severity = _severity(item.get("severity"), doc, f"{where}.severity")
        item, where = item.get(key), f"{where}.{key}"
    name = string(item, doc, where)
    if not name.strip():
        raise fail(doc, where, empty)
    return Assertion(kind, True, name, doc.source, where, severity)


def _targeted(kind: str, target: str, value: Any, doc: Document, where: str) -> Assertion:
    """One entry of `minCapacity` (copies of a workload or pod) or `minAllocation` (percent of a resource)."""
    form = _LongForm(kind, value, doc, where)
    if kind == "minAllocation" and (why := allocation_resource(target)) is not None:
        raise fail(doc, where, why)
    bound = _count(form.value, doc, form.where) if kind == "minCapacity" else _percent(form.value, doc, form.where)
    return Assertion(kind, bound, target, doc.source, where, form.severity)


def from_options(*, max_pending: str | None = None, fully_placed: list[str] = (), max_nodes_added: int | None = None,
                 min_removable_nodes: int | None = None, min_capacity: list[str] = (), min_allocation: list[str] = (),
                 config_valid: bool = False, max_pod_moves: int | None = None,
                 claim_zones: bool = False, allow_cannot_fit: bool = False, strict: bool = False,
                 gangs_placed: list[str] = ()) -> list[Assertion]:
    """The assertions given as options (`--max-pending 0`, `--min-capacity deployment/web=3`, ...), each bad value
    refused naming its option."""
    out: list[Assertion] = []

    def add(kind: str, bound: Any, target: str | None = None, **more: Any) -> None:
        out.append(Assertion(kind, bound, target, "command line", OPTION_OF[kind], **more))

    if max_pending is not None:
        text = str(max_pending).strip()
        if text != BASELINE and not (text.isdigit()):
            raise InputError(f"must be a count (0 or more) or {BASELINE}, got {max_pending!r}", field="--max-pending")
        add("maxPending", BASELINE if text == BASELINE else int(text))
    for name in fully_placed:
        if not str(name).strip():
            raise InputError("must name a workload (deployment/web, shop/deployment/web) or a pod",
                             field="--fully-placed")
        add("fullyPlaced", True, name)
    if allow_cannot_fit and max_nodes_added is None:
        raise InputError("applies to --max-nodes-added: give it too", field="--allow-cannot-fit")
    for name in gangs_placed:
        if not str(name).strip():
            raise InputError(NAMED_ITEMS["gangsPlaced"][1], field="--gang-placed")
        add("gangsPlaced", True, name)
    for kind, n in (("maxNodesAdded", max_nodes_added), ("minRemovableNodes", min_removable_nodes),
                    ("maxPodMoves", max_pod_moves)):
        if n is not None:
            if n < 0:
                raise InputError(f"must be 0 or more, got {n}", field=OPTION_OF[kind])
            add(kind, n, allow_cannot_fit=allow_cannot_fit and kind == "maxNodesAdded")
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
            if kind == "minAllocation" and (why := allocation_resource(name)) is not None:
                raise InputError(why, field=OPTION_OF[kind])
            add(kind, int(bound) if bound == int(bound) else bound, name)
    for kind, on in (("configValid", config_valid), ("claimZones", claim_zones), ("noWarnings", strict)):
        if on:
            add(kind, True)
    return out


def combined(file: Expectations | None, options: list[Assertion], node_templates: list[str],
             kube_versions: str | None, files: list[str] = (), baseline: list[str] = (), *,
             namespace: str | None = None, max_nodes: int | None = None, recursive: bool = False,
             fail_on: str | None = None) -> Expectations:
    """The file's expectations with the options on top: an option replaces the file's assertion of the same kind
    and target; `-f`, `--baseline`, `--node-template` and `--kube-version` replace the file's lists, `-n`,
    `--max-nodes` and `--fail-on` its values; `-R` reads sub-folders when either asks."""
    base = file or Expectations()
    given = {(a.kind, a.target) for a in options}
    kept = [a for a in base.assertions if (a.kind, a.target) not in given]
    out = replace(base, assertions=kept + options, node_templates=list(node_templates) or base.node_templates,
                  kube_versions=kube_versions or base.kube_versions, files=list(files) or base.files,
                  baseline=list(baseline) or base.baseline, namespace=namespace or base.namespace,
                  max_nodes=max_nodes if max_nodes is not None else base.max_nodes,
                  recursive=recursive or base.recursive, fail_on=fail_on or base.fail_on)
    if out.fail_on not in SEVERITIES:
        raise InputError(f"must be error or warning, got {out.fail_on!r}", field="--fail-on")
    if not out.files:
        raise InputError("no scenario to check: give -f FILE (or files in the expectation file)", field="-f")
    if not out.assertions:
        raise InputError("nothing to check: give --expect FILE or an assertion option (--max-pending 0, ...)",
                         field="--expect")
    planned = next((a for a in out.assertions if a.kind == "maxNodesAdded"), None)
    if planned is not None and not out.node_templates:
        raise InputError("plan adds copies of node templates: give nodeTemplates or --node-template",
                         file=planned.source if planned.given_in_file else None, field=planned.field)
    return out
