"""`kubefit check`'s judgement: each assertion's verb asked once per Kubernetes version, its answer compared with
the assertion's bound, the evidence of the answer kept (pods, nodes, messages) and the objects that cause a
failure named, for the findings to point at their file and line.

Every number is a verb's own answer (`kubefit.checks.answers`: simulate, plan, consolidate, capacity; `config
validate`'s verdict; `kubefit.checks.changes` for the pods placed differently from the baseline): nothing here
schedules. A scheduler configuration that kube-scheduler refuses makes the assertions that need it `error` (with
its messages), not bad input: the configuration is part of what is checked.

No false green: a pod that would not exist (refused by admission or a ResourceQuota, never created by its
controller) fails every assertion that covers its workload — every assertion about the cluster's pods, and
`fullyPlaced` of that workload — with the API server's message, though the run itself, in which the pod does not
exist, would pass it. The API server's refusals are known at load and cover every verb's assertions; a pod the
simulation's controllers never create covers the simulate-based ones (plan, consolidate and capacity run their
own simulations, whose answers say what they place).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubefit.checks.answers import Answers, Refusal, Verbs
from kubefit.checks.baseline import BaselineNames, BaselineRun
from kubefit.checks.changes import pending_steps
from kubefit.checks.expectations import BASELINE, ERROR, WARNING, Assertion, Expectations
from kubefit.checks.targets import Target, Workload
from kubefit.errors import ConfigError, InputError

if TYPE_CHECKING:
    from kubefit.manifests.load import Scenario
    from kubefit.manifests.positions import Positions

EVIDENCE_LINES = 20  # lines of evidence per assertion; the rest are counted
FINDINGS = 50  # objects named per assertion; the rest are counted in the last
PASSED, FAILED, ERRORED = "passed", "failed", "error"
# assertions about every pod of the cluster: a pod that would not exist fails them all (`fullyPlaced`: its own)
COVERS_ALL = frozenset({"maxPending", "maxNodesAdded", "minRemovableNodes", "minCapacity", "minAllocation",
                        "maxPodMoves", "claimZones"})


@dataclass(frozen=True)
class Subject:
    """An object of the scenario a finding points at: its file, kind, name and namespace (None: cluster-scoped)."""

    file: str
    kind: str
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind.lower()}/{self.name}" if self.namespace else f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class Finding:
    """Where a failure points — the file and line of the object that causes it, else the assertion's own — and
    what about it."""

    file: str | None
    line: int | None
    object: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "object": self.object, "message": self.message}


@dataclass
class Judged:
    """A judge's answer: whether the assertion holds, the verb's answer, a one-line message, the evidence, and the
    objects that make it fail (with what about each)."""

    holds: bool
    actual: Any
    message: str
    evidence: list[str] = field(default_factory=list)
    subjects: list[tuple[Subject, str]] = field(default_factory=list)


@dataclass
class Outcome:
    """One assertion judged on one version: `status` passed/failed/error, the verb's `actual` answer, a one-line
    `message`, the `evidence` lines, the `findings` (objects at their file and line), and how long it took
    (`seconds`, JUnit's time; not in `to_dict`)."""

    assertion: Assertion
    status: str
    actual: Any
    message: str
    evidence: list[str] = field(default_factory=list)
    kube_version: str | None = None
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    @property
    def severity(self) -> str:
        return self.assertion.severity

    def fails(self, fail_on: str = ERROR) -> bool:
        """Whether this outcome fails the check: it did not pass, and its severity is error (or `fail_on`
        warning)."""
        return self.status != PASSED and (self.severity == ERROR or fail_on == WARNING)

    def to_dict(self) -> dict:
        a = self.assertion
        return {"assertion": a.kind, "title": a.title, "verb": a.verb, **({"target": a.target} if a.target else {}),
                "bound": a.bound, **({"allowCannotFit": True} if a.allow_cannot_fit else {}), "severity": a.severity,
                "source": a.source, "field": a.field, **({"kubeVersion": self.kube_version} if self.kube_version else {}),
                "status": self.status, "actual": self.actual, "message": self.message, "evidence": self.evidence,
                "findings": [f.to_dict() for f in self.findings]}


@dataclass
class CheckResult:
    """Every assertion's outcome (in order, version by version), the pods the candidate places differently from
    the baseline (per version label, `moves`) and each workload's figures before and after (`changes`),
    `warnings` and `inputs`; `fail_on` says whether a failed warning fails the check."""

    name: str
    outcomes: list[Outcome]
    moves: dict[str, list[dict]] | None = None
    warnings: list[str] | None = None
    inputs: dict | None = None
    changes: dict[str, dict] | None = None
    fail_on: str = ERROR
    versions: list[str] = field(default_factory=list)  # the kube-scheduler patch versions answered for
    started: str = ""  # when the check started, UTC (`2026-11-29T01:02:03`: JUnit's timestamp)
    told_at: list[Finding] = field(default_factory=list)  # where each warning points (its annotation's place)

    @property
    def passed(self) -> bool:
        return not any(o.fails(self.fail_on) for o in self.outcomes)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def to_dict(self) -> dict:
        from kubefit.told import told_keys

        reported = sum(1 for o in self.outcomes if o.status != PASSED and not o.fails(self.fail_on))
        return {"name": self.name, "passed": self.passed,
                "summary": {"assertions": len(self.outcomes), PASSED: self.count(PASSED), FAILED: self.count(FAILED),
                            "errors": self.count(ERRORED), "warnings": reported, "failOn": self.fail_on},
                "assertions": [o.to_dict() for o in self.outcomes],
                **({"moves": self.moves} if self.moves is not None else {}),
                **({"changes": self.changes} if self.changes is not None else {}),
                **({"warningFindings": [f.to_dict() for f in self.told_at]} if self.told_at else {}),
                **told_keys(self.warnings, None, self.inputs)}


def _shown(lines: list[str], most: int = EVIDENCE_LINES) -> list[str]:
    """At most `most` lines, the rest counted."""
    if len(lines) <= most:
        return lines
    return [*lines[:most], f"… and {len(lines) - most} more"]


def workload_subject(answers: Answers, pod: Any) -> Subject:
    """The workload of `pod` as a finding's object, in the file it came from."""
    w = answers.owners.of(pod)
    return Subject(pod.source, w.kind, w.name, w.namespace)


def by_workload(answers: Answers, pods: Sequence[tuple[Any, str]], what: str) -> list[tuple[Subject, str]]:
    """One subject per workload of `pods` ((pod, message) pairs), most pods first: `N pod(s) <what>: <the first
    message>`."""
    groups: dict[Subject, list[str]] = {}
    for pod, message in pods:
        groups.setdefault(workload_subject(answers, pod), []).append(message)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    return [(s, f"{len(ms)} pod(s) {what}" + (f": {ms[0]}" if ms[0] else "")) for s, ms in ordered]


# --------------------------------------------------------------------------- the judges

def _max_pending(a: Assertion, answers: Answers) -> Judged:
    pending = pending_steps(answers.simulation())
    subjects = by_workload(answers, pending, "pending")
    if a.bound == BASELINE:
        before = answers.placed(True)
        was = {new: before.where[old] for old, new in _pairs(answers)}
        base = answers.baseline_run().pending
        bound, said = base, f"the baseline's {base}"
        evidence = [f"{p.key}{'' if p.key in was and was[p.key] is None else ' (newly pending)'}: {m}"
                    for p, m in pending]
    else:
        bound, said = int(a.bound), str(a.bound)
        evidence = [f"{p.key}: {m}" for p, m in pending]
    return Judged(len(pending) <= bound, len(pending), f"simulate leaves {len(pending)} pod(s) pending (at most {said})",
                  evidence, subjects)


def _pairs(answers: Answers) -> list[tuple[str, str]]:
    from kubefit.checks.changes import matched

    return matched(answers.placed(True), answers.placed())


def _resolved(a: Assertion, answers: Answers, namespace: str | None) -> tuple[Target, Workload]:
    """The workload (or pod) the assertion names, in one namespace; a name that names none is bad input."""
    target = Target.parse(str(a.target), namespace)
    where = {"file": a.source if a.given_in_file else answers.candidate.files, "field": a.field}
    found = target.resolve(answers.owners, answers.pods(), where)
    if found is None:
        raise InputError(f"no pod of {a.target} in the scenario (a workload as kubectl names it, deployment/web or "
                         f"shop/deployment/web, or a pod)", **where)
    return target, found


def _fully_placed(a: Assertion, answers: Answers, namespace: str | None) -> Judged:
    from kubefit.checks.changes import EVICTED, NOT_CREATED

    target, workload = _resolved(a, answers, namespace)
    placed = answers.placed()
    ours = [k for k, w in placed.workload.items()
            if (w == workload if target.kind is not None else (placed.pods[k].namespace, placed.pods[k].name) ==
                (workload.namespace, workload.name))]
    steps = {s.pod.key: s.message or "" for s in answers.simulation().steps if s.node is None}
    steps.update({k: EVICTED for k in ours if placed.where[k] == EVICTED})
    missing = [k for k in ours if placed.where[k] in (None, EVICTED)]
    evidence = [f"{k}: {steps.get(k, '')}" for k in missing]
    on = [k for k in ours if placed.where[k] not in (None, NOT_CREATED, EVICTED)]
    evidence += [f"{k} on {placed.where[k]}" for k in on]
    count = len(on)
    source = placed.pods[ours[0]].source if ours else ""
    subject = Subject(source, workload.kind, workload.name, workload.namespace)
    subjects = [(subject, f"{len(missing)} of {len(ours)} pod(s) not placed: {steps.get(missing[0], '')}")] \
        if missing else []
    name = target.spelled(workload)
    return Judged(count == len(ours), count, f"simulate places {count} of {name}'s {len(ours)} pod(s)", evidence,
                  subjects)


def _gang_placed(a: Assertion, answers: Answers, namespace: str | None) -> Judged:
    """`gangsPlaced`: the pod group `NAMESPACE/NAME` (NAME alone: in `-n`'s namespace, else default) placed whole by
    simulate, every pod of it bound (its record, `groupqueue.GroupRecord`; the run schedules groups only with
    GenericWorkload on). The pods left pending are the findings, at their workloads."""
    sim = answers.simulation()
    target = str(a.target)
    key = target if "/" in target else f"{namespace or 'default'}/{target}"
    record = next((g for g in sim.groups if g.key == key), None)
    if record is None:
        known = ", ".join(g.key for g in sim.groups) or "none: GenericWorkload is off or no pod names a pod group"
        raise InputError(f"no pod group {key} in the run (pod groups: {known})",
                         file=a.source if a.given_in_file else answers.candidate.files, field=a.field)
    evidence = [record.why] + [f"{record.namespace}/{pod} on {node}" for pod, node in record.bound]
    evidence += [f"{record.namespace}/{pod} pending" for pod in record.pending]
    whole = not record.pending and record.gated is None
    pods = {p.key: p for p in answers.pods()}
    pending = [(pods[k], record.why) for k in (f"{record.namespace}/{pod}" for pod in record.pending) if k in pods]
    subjects = [] if whole else by_workload(answers, pending, f"of pod group {key} not placed")
    return Judged(whole, len(record.bound), f"simulate binds {len(record.bound)} of pod group {key}'s "
                  f"{len(record.pods)} pod(s)", evidence, subjects)


def _max_nodes_added(a: Assertion, answers: Answers) -> Judged:
    from kubefit.manifests.workloads import daemon_pod

    planned = answers.plan()
    names = planned.result.state.node_names
    counts = {t.name: c for t, c in zip(planned.templates, planned.counts, strict=True)}
    added = sum(planned.counts)
    cannot = pending_steps(planned.result)
    evidence = [f"add {name}: {n}" for name, n in counts.items() if n]
    new = planned.result.state.nodes[planned.existing:]
    per_node = planned.result.placement()
    evidence += [f"{n.name}: {per_node.get(n.name, 0)} pod(s) placed" for n in new]
    evidence += [f"{p.key} cannot fit on any count of the templates: {m}" for p, m in cannot]
    evidence += list(planned.notes)
    holds = added <= int(a.bound) and (a.allow_cannot_fit or not cannot)
    message = f"plan adds {added} node(s) (at most {a.bound})"
    if cannot:
        message += (f"; {len(cannot)} pod(s) cannot fit on any count of the templates"
                    + (" (allowed)" if a.allow_cannot_fit else " (allowCannotFit: true would allow it)"))
    subjects = [] if a.allow_cannot_fit else by_workload(answers, cannot, "cannot fit on any count of the templates")
    if added > int(a.bound):  # the pods on the nodes plan adds (their DaemonSet pods come with them)
        on_new = [(s.pod, f"placed on {names[s.node]}, a node plan adds") for s in planned.result.steps
                  if s.node is not None and s.node >= planned.existing and not daemon_pod(s.pod)]
        subjects += by_workload(answers, on_new, "need the nodes plan adds")
    return Judged(holds, added, message, evidence, subjects)


def _min_removable(a: Assertion, answers: Answers) -> Judged:
    result = answers.consolidation()
    n = len(result.removable)
    evidence = [f"removable: {node}" for node in result.removable]
    evidence += [f"{node} stays: {reason}" for node, reason in result.blocked.items()] + list(result.notes)
    sources = {node.name: node.source for node in answers.candidate.nodes}
    subjects = [(Subject(sources.get(node, ""), "Node", node), f"stays: {reason}")
                for node, reason in result.blocked.items()] if n < int(a.bound) else []
    return Judged(n >= int(a.bound), n, f"consolidate finds {n} removable node(s) (at least {a.bound})", evidence,
                  subjects)


def _min_capacity(a: Assertion, answers: Answers, namespace: str | None) -> Judged:
    target, workload = _resolved(a, answers, namespace)
    name = target.spelled(workload)
    result = answers.capacity(name)
    _, prepared = answers.prepared()
    statement = list(result.warnings[len(prepared.notes):])  # capacity's note: the pending pods placed first
    evidence = statement + [f"{node}: {n} cop{'y' if n == 1 else 'ies'}" for node, n in result.per_node.items()]
    evidence.append(f"stopped ({result.stop_reason}): {result.message}")
    holds = result.count >= int(a.bound)
    source = next((p.source for p in answers.pods() if answers.owners.of(p) == workload or (
        target.kind is None and p.name == workload.name and p.namespace == workload.namespace)), "")
    subjects = [] if holds else [(Subject(source, workload.kind, workload.name, workload.namespace),
                                  f"{result.count} more cop{'y' if result.count == 1 else 'ies'} fit: {result.message}")]
    return Judged(holds, result.count, f"capacity fits {result.count} more cop{'y' if result.count == 1 else 'ies'} of "
                  f"{name} beside the scenario's pods (at least {a.bound})", evidence, subjects)


def _min_allocation(a: Assertion, answers: Answers) -> Judged:
    metrics = answers.simulation().metrics()
    share = metrics["allocation"].get(str(a.target))
    evidence = ["allocation: " + ", ".join(f"{r} {p} %" for r, p in metrics["allocation"].items()),
                "allocation of used nodes: " + ", ".join(f"{r} {p} %" for r, p in metrics["allocationOfUsedNodes"].items()),
                f"nodes used: {metrics['nodesUsed']} of {metrics['nodes']}"]
    if share is None:
        return Judged(False, None, f"no node has {a.target} allocatable", evidence)
    return Judged(share >= a.bound, share, f"simulate allocates {share} % of the cluster's {a.target} (at least "
                  f"{a.bound} %)", evidence)


def _config_valid(a: Assertion, answers: Answers) -> Judged:
    from kubefit.k8s.version import resolve
    from kubefit.scheduler.config import verdict

    doc = answers.candidate.scheduler_config
    if doc is None:
        return Judged(True, True, "no scheduler configuration: kube-scheduler's defaults")
    version = resolve(answers.version, answers.feature_gates)
    found = verdict(doc, version)
    where = f"{doc.source}: {doc.label}"
    if found["valid"]:
        return Judged(True, True, f"kube-scheduler {version.patch} accepts {where}", list(found["notes"]))
    subject = Subject(doc.source, doc.kind, doc.name)
    return Judged(False, False, f"kube-scheduler {version.patch} refuses {where}", list(found["messages"]),
                  [(subject, "; ".join(found["messages"][:3]))])


def _max_pod_moves(a: Assertion, answers: Answers) -> Judged:
    moves = answers.moves()
    placed = answers.placed()
    evidence = [f"{m['pod']}{' (was ' + m['baselinePod'] + ')' if 'baselinePod' in m else ''}: "
                f"{m['baseline'] or 'pending'} → {m['candidate'] or 'pending'}" for m in moves]
    subjects = by_workload(answers, [(placed.pods[m["pod"]], f"{m['baseline'] or 'pending'} → "
                                      f"{m['candidate'] or 'pending'}") for m in moves], "moved")
    return Judged(len(moves) <= int(a.bound), len(moves),
                  f"simulate places {len(moves)} pod(s) elsewhere than the baseline (at most {a.bound})", evidence,
                  subjects)


def _claim_zones(a: Assertion, answers: Answers) -> Judged:
    from kubefit.checks.zones import claim_zones

    sim = answers.simulation()
    found = claim_zones(sim.state)
    wrong = [z for z in found if not z.fits]
    evidence = [z.line() for z in wrong] + [z.line() for z in found if z.fits]
    pods = {p.key: p for pods in sim.state.pods for p in pods}
    subjects = by_workload(answers, [(pods[z.pod], z.line()) for z in wrong], "on another zone than their claim")
    return Judged(not wrong, len(wrong), f"simulate leaves {len(wrong)} of {len(found)} pod(s) using a zoned volume on "
                  f"another zone than their claim's volume", evidence, subjects)


_WARNING_IN_FILE = re.compile(r"^(?:baseline: )?(?P<file>[^:\n]+): (?P<kind>[A-Z][A-Za-z]*)/(?P<name>[^\s:,]+)")
_WARNING_OF_WORKLOAD = re.compile(r"^(?P<kind>[A-Z][A-Za-z]*)/(?P<name>[^\s:,]+): ")


def warning_subject(message: str, scenario: Scenario) -> Subject | None:
    """The object a warning names, when it names one of the scenario's: `FILE: Kind/name: …` (a file read), or
    `Kind/name: …` for a workload found in one namespace (`Deployment/web: its controller cannot create …`)."""
    hit = _WARNING_IN_FILE.match(message)
    if hit is not None and hit["file"] in scenario.sources:
        return Subject(hit["file"], hit["kind"], hit["name"])
    hit = _WARNING_OF_WORKLOAD.match(message)
    if hit is None:
        return None
    docs = [d for d in scenario.workloads if (d.kind, d.name) == (hit["kind"], hit["name"])]
    spaces = {str((d.body.get("metadata") or {}).get("namespace") or "default") for d in docs}
    if len(spaces) != 1:
        return None
    return Subject(docs[0].source, hit["kind"], hit["name"], spaces.pop())


def _no_warnings(a: Assertion, answers: Answers) -> Judged:
    """kubefit told nothing about the scenario that could change an answer (every verb asked has run)."""
    answers.simulation()  # at least the load, the compilation and the run have told theirs
    told = list(answers.told)
    subjects = [(subject, message) for message in told
                if (subject := warning_subject(message, answers.candidate)) is not None]
    return Judged(not told, len(told), f"kubefit told {len(told)} warning(s) about the scenario (--strict: none)",
                  told, subjects)


JUDGES: dict[str, Callable[..., Judged]] = {
    "maxPending": _max_pending, "fullyPlaced": _fully_placed, "maxNodesAdded": _max_nodes_added,
    "minRemovableNodes": _min_removable, "minCapacity": _min_capacity, "minAllocation": _min_allocation,
    "configValid": _config_valid, "maxPodMoves": _max_pod_moves, "claimZones": _claim_zones,
    "noWarnings": _no_warnings, "gangsPlaced": _gang_placed}
NAMED = frozenset({"fullyPlaced", "minCapacity", "gangsPlaced"})  # judges that resolve a name (`-n` applies)


def _covered(a: Assertion, answers: Answers, namespace: str | None) -> list[Refusal]:
    """The pods that would not exist among those the assertion covers (see the module's docstring)."""
    run = a.verb == "simulate"  # the simulation's own not-created pods too (the run is there)
    if a.kind in COVERS_ALL:
        return answers.refusals(run)
    if a.kind == "fullyPlaced":
        _, workload = _resolved(a, answers, namespace)
        return [r for r in answers.refusals(run) if r.workload == workload]
    return []


def _refused(judged: Judged, refusals: list[Refusal]) -> Judged:
    """The judgement with the pods that would not exist: the assertion fails, each named with its message."""
    if not refusals:
        return judged
    groups: dict[Workload, list[Refusal]] = {}
    for r in refusals:
        groups.setdefault(r.workload, []).append(r)
    lines = [f"{w}: {len(rs)} pod(s) would not be created: {rs[0].message}" for w, rs in groups.items()]
    subjects = [(Subject(rs[0].pod.source, w.kind, w.name, w.namespace),
                 f"{len(rs)} pod(s) would not be created: {rs[0].message}") for w, rs in groups.items()]
    return Judged(False, judged.actual, f"{judged.message}; {len(refusals)} pod(s) of {len(groups)} workload(s) would "
                  f"not be created", lines + judged.evidence, subjects + judged.subjects)


class Locator:
    """Findings from subjects: each object at its file and line (`kubefit.manifests.positions`), the assertion's
    own line when no object causes the failure."""

    def __init__(self, positions: Positions, rename: Callable[[str], str]) -> None:
        self.positions, self.rename = positions, rename

    def findings(self, a: Assertion, subjects: list[tuple[Subject, str]], message: str) -> list[Finding]:
        out = []
        for subject, said in subjects[:FINDINGS]:
            line = self.positions.line(subject.file, subject.kind, subject.name, subject.namespace) if subject.file \
                else None
            out.append(Finding(self.rename(subject.file) or None, line, str(subject), said))
        if len(subjects) > FINDINGS:
            out[-1] = Finding(out[-1].file, out[-1].line, out[-1].object,
                              f"{out[-1].message} (and {len(subjects) - FINDINGS} more objects)")
        if out:
            return out
        if a.given_in_file:
            return [Finding(a.source, self.positions.field_line(a.source, a.field), None, message)]
        return [Finding(None, None, None, message)]


def judge(a: Assertion, answers: Answers, label: str | None, locator: Locator, namespace: str | None) -> Outcome:
    """One assertion on one version's answers; a configuration kube-scheduler refuses is an `error` outcome."""
    start = time.perf_counter()
    try:
        judged = JUDGES[a.kind](a, answers, namespace) if a.kind in NAMED else JUDGES[a.kind](a, answers)
        judged = _refused(judged, _covered(a, answers, namespace))
        status = PASSED if judged.holds else FAILED
    except ConfigError as exc:
        judged = Judged(False, None, f"{a.verb} cannot run: {exc}", list(exc.errors))
        status = ERRORED
    findings = [] if status == PASSED else locator.findings(a, judged.subjects, judged.message)
    return Outcome(a, status, judged.actual, judged.message, _shown(judged.evidence), label,
                   time.perf_counter() - start, findings)


Elsewhere = Callable[[Sequence[str], bool, list], Callable[[int], tuple[BaselineNames, "BaselineRun | Exception"]]]
"""Starts the baseline's runs (its files, -R, the versions) away from this process; what it returns gives the i-th
version's (`kubefit.checks.baseline.baseline_runs`), waiting for it."""


class _Remote:
    """The baseline's runs made elsewhere, read per version; the first read checks that it is comparable."""

    def __init__(self, fetch: Callable[[int], tuple[BaselineNames, BaselineRun | Exception]], candidate: Scenario,
                 files: Sequence[str], given: Sequence[str]) -> None:
        self.fetch, self.candidate, self.files, self.given = fetch, candidate, files, given
        self.checked = False

    def of(self, i: int) -> Callable[[], BaselineRun]:
        def run() -> BaselineRun:
            names, found = self.fetch(i)
            if not self.checked:
                comparable(self.candidate, names, self.files, self.given)
                self.checked = True
            if isinstance(found, Exception):
                raise found
            return found
        return run


def comparable(candidate: Scenario, baseline: BaselineNames, files: Sequence[str], given: Sequence[str]) -> None:
    """A baseline of another cluster cannot be compared: it must share a node or a pod with the candidate."""
    nodes = {n.name for n in candidate.nodes} & baseline.nodes
    pods = {p.key for p in candidate.pods} & baseline.pods
    if not nodes and not pods:
        raise InputError(f"shares no node and no pod with the candidate ({', '.join(files)}): another "
                         f"cluster, which cannot be compared", file=", ".join(given), field="--baseline")


def unread_folders(files: Sequence[str], recursive: bool) -> list[str]:
    """A warning per folder given without -R whose sub-folders hold manifests: they would be left out silently
    (a GitOps repository nests its apps), so the check says so."""
    from kubefit.manifests.documents import MANIFEST_EXTENSIONS

    if recursive:
        return []
    out = []
    for given in files:
        folder = Path(given)
        if given == "-" or not folder.is_dir():
            continue
        nested = sorted({f.relative_to(folder).parts[0] for f in folder.glob("*/**/*")
                         if f.is_file() and f.suffix in MANIFEST_EXTENSIONS})
        if nested:
            out.append(f"{given}: its sub-folder(s) {', '.join(nested[:4])}{' …' if len(nested) > 4 else ''} hold "
                       f"manifests that are not read (give -R, or recursive: true in the expectation file)")
    return out


def _stdin_once(files: Sequence[str], baseline: Sequence[str]) -> None:
    if [*files, *baseline].count("-") > 1:
        raise InputError("standard input can be read once: give the candidate or the baseline as '-', not both",
                         field="--baseline")


def run_check(verbs: Verbs, expectations: Expectations, *, feature_gates: str | None = None,
              warn: Callable[[str], None] = print, positions: Positions | None = None,
              rename: Callable[[str], str] = str, elsewhere: Elsewhere | None = None) -> CheckResult:
    """Judge every assertion of `expectations` on the `verbs`' answers for its scenario (and its baseline), on
    each version `expectations.kube_versions` names (the verbs' default version when none); `rename` gives the
    name a finding shows for a file read (a baseline extracted from git: the ref's path). `elsewhere`: the
    baseline's runs are started there (Dask workers: `kubefit.checks.baseline`) before the candidate is read,
    and this process reads and runs the candidate meanwhile."""
    from datetime import UTC, datetime

    from kubefit.k8s.version import resolve_each
    from kubefit.manifests.positions import Positions

    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    files, baseline = [str(f) for f in expectations.files], [str(f) for f in expectations.baseline]
    _stdin_once(files, baseline)
    needs = next((a for a in expectations.assertions if a.needs_baseline), None)
    if needs is not None and not baseline:
        raise InputError("compares with a baseline: give --baseline FILE or REF",
                         file=needs.source if needs.given_in_file else None, field=needs.field)
    told: list[str] = []

    def once(message: str) -> None:  # several versions and verbs tell the same note: tell each once
        if message not in told:
            told.append(message)
            warn(message)

    unread = unread_folders(files, expectations.recursive)
    for message in unread:
        once(message)
    versions = ([v.name for v in resolve_each(expectations.kube_versions, feature_gates)]
                if expectations.kube_versions else [None])
    fetch = elsewhere(baseline, expectations.recursive, versions) if elsewhere is not None and baseline else None
    candidate = verbs.load(files, expectations.recursive)
    base = verbs.load(baseline, expectations.recursive) if baseline and fetch is None else None
    given = [rename(b) for b in baseline]
    if base is not None:
        comparable(candidate, BaselineNames.of(base), files, given)
    remote = None if fetch is None else _Remote(fetch, candidate, files, given)
    planning = any(a.kind == "maxNodesAdded" for a in expectations.assertions)
    templates = verbs.templates(expectations.node_templates) if planning else []
    locator = Locator(positions or Positions(), rename)
    outcomes: list[Outcome] = []
    moves: dict[str, list[dict]] = {}
    changes: dict[str, dict] = {}
    used: list[str] = []
    for i, version in enumerate(versions):
        answers = Answers(verbs, candidate, base, templates, version, feature_gates=feature_gates,
                          max_nodes=expectations.max_nodes, tell=once, tell_baseline=lambda m: once(f"baseline: {m}"),
                          remote=None if remote is None else remote.of(i))
        for message in unread:
            answers.tell(message)
        label = version if len(versions) > 1 else None
        last = sorted(expectations.assertions, key=lambda a: a.kind == "noWarnings")  # after every verb has told
        judged = {id(a): judge(a, answers, label, locator, expectations.namespace) for a in last}
        outcomes += [judged[id(a)] for a in expectations.assertions]
        if baseline:
            try:
                moves[version or "default"], changes[version or "default"] = answers.moves(), answers.changes()
            except ConfigError:
                pass
        used.append(_answered(answers, feature_gates))
    result = CheckResult(expectations.name, outcomes, moves if baseline else None, told,
                         changes=changes if baseline else None, fail_on=expectations.fail_on)
    result.told_at = [_warning_finding(m, candidate, locator) for m in told]
    result.versions, result.started = used, started
    return result


def _warning_finding(message: str, candidate: Scenario, locator: Locator) -> Finding:
    """Where a warning points (`warning_subject`: the object it names, at its line), for its annotation."""
    subject = warning_subject(message, candidate)
    if subject is None:
        return Finding(None, None, None, message)
    line = locator.positions.line(subject.file, subject.kind, subject.name, subject.namespace)
    return Finding(locator.rename(subject.file), line, str(subject), message)


def _answered(answers: Answers, feature_gates: str | None) -> str:
    """The kube-scheduler patch version the answers are for (a configuration it refuses: the version asked)."""
    from kubefit.k8s.version import resolve

    try:
        return answers.prepared()[1].config.version.patch
    except ConfigError:
        return resolve(answers.version, feature_gates).patch
