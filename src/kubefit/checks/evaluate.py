"""`kubefit check`'s judgement: each assertion's verb asked once per Kubernetes version, its answer compared with
the assertion's bound, and the evidence of the answer kept (pods, nodes, messages).

Every number is a verb's own answer (`kubefit.verbs`: simulate, plan, consolidate, capacity; `config validate`'s
verdict; `version_differences` for the pods placed differently from the baseline): nothing here schedules. A
verb's answer is computed once per version and read by every assertion on it. A scheduler configuration that
kube-scheduler refuses makes the assertions that need it `error` (with its messages), not bad input: the
configuration is part of what is checked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubefit.checks.expectations import BASELINE, Assertion, Expectations
from kubefit.errors import ConfigError, InputError

if TYPE_CHECKING:
    from kubefit.scheduler.simulate import SimulationResult

EVIDENCE_LINES = 20  # lines of evidence per assertion; the rest are counted
PASSED, FAILED, ERROR = "passed", "failed", "error"


@dataclass
class Outcome:
    """One assertion judged on one version: `status` passed/failed/error, the verb's `actual` answer, a one-line
    `message`, the `evidence` lines, and how long it took (`seconds`, JUnit's time; not in `to_dict`)."""

    assertion: Assertion
    status: str
    actual: Any
    message: str
    evidence: list[str] = field(default_factory=list)
    kube_version: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict:
        a = self.assertion
        return {"assertion": a.kind, "title": a.title, "verb": a.verb, **({"target": a.target} if a.target else {}),
                "bound": a.bound, "source": a.source, "field": a.field,
                **({"kubeVersion": self.kube_version} if self.kube_version else {}),
                "status": self.status, "actual": self.actual, "message": self.message, "evidence": self.evidence}


@dataclass
class CheckResult:
    """Every assertion's outcome (in order, version by version), the pods the candidate places differently from
    the baseline (per version label, `moves`), `warnings` and `inputs`."""

    name: str
    outcomes: list[Outcome]
    moves: dict[str, list[dict]] | None = None
    warnings: list[str] | None = None
    inputs: dict | None = None

    @property
    def passed(self) -> bool:
        return all(o.status == PASSED for o in self.outcomes)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def to_dict(self) -> dict:
        from kubefit.told import told_keys

        return {"name": self.name, "passed": self.passed,
                "summary": {"assertions": len(self.outcomes), PASSED: self.count(PASSED), FAILED: self.count(FAILED),
                            "errors": self.count(ERROR)},
                "assertions": [o.to_dict() for o in self.outcomes],
                **({"moves": self.moves} if self.moves is not None else {}),
                **told_keys(self.warnings, None, self.inputs)}


@dataclass(frozen=True)
class Verbs:
    """The verb functions whose answers are judged: `kubefit.verbs`' own, handed down by `kubefit.verbs.check`
    (this package sits below the public API, as planning does: it calls the verbs back, never imports them)."""

    simulate: Callable[..., Any]
    plan: Callable[..., Any]
    consolidate: Callable[..., Any]
    capacity: Callable[..., Any]


class Answers:
    """The verbs' answers for one version, each asked once (an error, such as a configuration kube-scheduler
    refuses, is kept and raised again for every assertion that reads that answer)."""

    def __init__(self, verbs: Verbs, files: Sequence[str], baseline: Sequence[str], templates: Sequence[str],
                 version: str | None, options: dict[str, Any]) -> None:
        self.verbs = verbs
        self.files, self.baseline, self.templates, self.version = list(files), list(baseline), list(templates), version
        self.options = options  # warn, feature_gates, recursive
        self._memo: dict[str, Any] = {}

    def _once(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            try:
                self._memo[key] = compute()
            except ConfigError as exc:
                self._memo[key] = exc
        found = self._memo[key]
        if isinstance(found, ConfigError):
            raise found
        return found

    def _common(self) -> dict[str, Any]:
        return {"kube_version": self.version, **self.options}

    def simulation(self) -> SimulationResult:
        return self._once("simulate", lambda: self.verbs.simulate(self.files, **self._common()))

    def baseline_simulation(self) -> SimulationResult:
        return self._once("baseline", lambda: self.verbs.simulate(self.baseline, **self._common()))

    def plan(self) -> Any:
        return self._once("plan", lambda: self.verbs.plan(self.files, self.templates, **self._common()))

    def consolidation(self) -> Any:
        gates, warn = self.options["feature_gates"], self.options["warn"]
        return self._once("consolidate", lambda: self.verbs.consolidate(
            self.files, kube_version=self.version, feature_gates=gates, warn=warn, recursive=self.options["recursive"]))

    def capacity(self, pod: str) -> Any:
        return self._once(f"capacity {pod}", lambda: self.verbs.capacity(self.files, pod, **self._common()))

    def moves(self) -> list[dict]:
        """The pods queued in both runs that the candidate places elsewhere than the baseline (or leaves pending
        where the baseline bound them, or the other way round): `version_differences` of the two runs."""
        from kubefit.scheduler.compare import version_differences

        def compute() -> list[dict]:
            base, cand = self.baseline_simulation(), self.simulation()
            both = {s.pod.key for s in base.steps} & {s.pod.key for s in cand.steps}
            diff = version_differences([_labelled(base, "baseline"), _labelled(cand, "candidate")])
            return [{"pod": d["pod"], **d["nodes"]} for d in diff if d["pod"] in both]
        return self._once("moves", compute)


def _labelled(result: SimulationResult, label: str) -> SimulationResult:
    from dataclasses import replace

    return replace(result, label=label)


def _shown(lines: list[str]) -> list[str]:
    """At most `EVIDENCE_LINES` lines, the rest counted."""
    if len(lines) <= EVIDENCE_LINES:
        return lines
    return [*lines[:EVIDENCE_LINES], f"… and {len(lines) - EVIDENCE_LINES} more"]


def pending_steps(result: SimulationResult) -> list[tuple[str, str]]:
    """(pod, message) of every pod the run left pending (what `unschedulable` counts)."""
    return [(s.pod.key, s.message or "") for s in result.steps
            if s.node is None and s.nominated_node is None and not s.not_created]


Judged = tuple[bool, Any, str, list[str]]  # holds, actual, message, evidence


def _max_pending(a: Assertion, answers: Answers) -> Judged:
    sim = answers.simulation()
    pending = pending_steps(sim)
    if a.bound == BASELINE:
        before = {pod for pod, _ in pending_steps(answers.baseline_simulation())}
        bound, said = len(before), f"the baseline's {len(before)}"
        evidence = [f"{pod}{'' if pod in before else ' (newly pending)'}: {m}" for pod, m in pending]
    else:
        bound, said = int(a.bound), str(a.bound)
        evidence = [f"{pod}: {m}" for pod, m in pending]
    return len(pending) <= bound, len(pending), f"simulate leaves {len(pending)} pod(s) pending (at most {said})", evidence


def _fully_placed(a: Assertion, answers: Answers) -> Judged:
    from kubefit.manifests.workloads import workload_kind

    sim = answers.simulation()
    target = str(a.target)
    prefix, _, rest = target.partition("/")
    kind = workload_kind(prefix) if rest else None
    label = f"{kind}/{rest}" if kind else None

    def ours(pod: Any) -> bool:
        return pod.created_by == label if label else target in (pod.name, pod.key)

    names = sim.state.node_names
    where: dict[str, str | None] = {p.key: names[i] for i, pods in enumerate(sim.state.pods) for p in pods if ours(p)}
    why: dict[str, str] = {}
    for step in sim.steps:  # bound pods are in the final state above; the others' last step says why
        if ours(step.pod) and step.pod.key not in where:
            where[step.pod.key], why[step.pod.key] = None, step.message or ""
    if not where:
        raise InputError(f"no pod of {target} in the scenario (a workload as kubectl names it, deployment/web, or a "
                         f"pod)", file=None if a.source == "command line" else a.source, field=a.field)
    missing = [k for k, node in where.items() if node is None]
    evidence = [f"{k}: {why[k]}" for k in missing] + [f"{k} on {node}" for k, node in where.items() if node]
    placed = len(where) - len(missing)
    return not missing, placed, f"simulate places {placed} of {target}'s {len(where)} pod(s)", evidence


def _gang_placed(a: Assertion, answers: Answers) -> Judged:
    """`gangsPlaced`: the pod group `NAMESPACE/NAME` (NAME: in default) placed whole by simulate, every pod of it
    bound (its record, `groupqueue.GroupRecord`; the run schedules groups only with GenericWorkload on)."""
    sim = answers.simulation()
    target = str(a.target)
    key = target if "/" in target else f"default/{target}"
    record = next((g for g in sim.groups if g.key == key), None)
    if record is None:
        known = ", ".join(g.key for g in sim.groups) or "none: GenericWorkload is off or no pod names a pod group"
        raise InputError(f"no pod group {key} in the run (pod groups: {known})",
                         file=None if a.source == "command line" else a.source, field=a.field)
    evidence = [record.why] + [f"{record.namespace}/{pod} on {node}" for pod, node in record.bound]
    evidence += [f"{record.namespace}/{pod} pending" for pod in record.pending]
    whole = not record.pending and record.gated is None
    return (whole, len(record.bound), f"simulate binds {len(record.bound)} of pod group {key}'s {len(record.pods)} "
            f"pod(s)", evidence)


def _max_nodes_added(a: Assertion, answers: Answers) -> Judged:
    data = answers.plan().to_dict()
    added = sum(data["add"].values())
    evidence = [f"add {name}: {n}" for name, n in data["add"].items() if n]
    added_nodes = set(data["nodesAdded"])
    evidence += [f"{node}: {n} pod(s) placed" for node, n in data["placement"].items() if node in added_nodes]
    evidence += [f"{row['pod']} cannot fit on any count of the templates: {row['message']}" for row in data["cannotFit"]]
    return added <= int(a.bound), added, f"plan adds {added} node(s) (at most {a.bound})", evidence


def _min_removable(a: Assertion, answers: Answers) -> Judged:
    result = answers.consolidation()
    n = len(result.removable)
    evidence = [f"removable: {node}" for node in result.removable]
    evidence += [f"{node} stays: {reason}" for node, reason in result.blocked.items()]
    return n >= int(a.bound), n, f"consolidate finds {n} removable node(s) (at least {a.bound})", evidence


def _min_capacity(a: Assertion, answers: Answers) -> Judged:
    result = answers.capacity(str(a.target))
    evidence = [f"{node}: {n} cop{'y' if n == 1 else 'ies'}" for node, n in result.per_node.items()]
    evidence.append(f"stopped ({result.stop_reason}): {result.message}")
    return (result.count >= int(a.bound), result.count,
            f"capacity fits {result.count} more cop{'y' if result.count == 1 else 'ies'} of {a.target} "
            f"(at least {a.bound})", evidence)


def _min_allocation(a: Assertion, answers: Answers) -> Judged:
    metrics = answers.simulation().metrics()
    share = metrics["allocation"].get(str(a.target))
    evidence = ["allocation: " + ", ".join(f"{r} {p} %" for r, p in metrics["allocation"].items()),
                "allocation of used nodes: " + ", ".join(f"{r} {p} %" for r, p in metrics["allocationOfUsedNodes"].items()),
                f"nodes used: {metrics['nodesUsed']} of {metrics['nodes']}"]
    if share is None:
        return False, None, f"no node has {a.target} allocatable", evidence
    return (share >= a.bound, share, f"simulate allocates {share} % of the cluster's {a.target} (at least {a.bound} %)",
            evidence)


def _config_valid(a: Assertion, answers: Answers) -> Judged:
    from kubefit.k8s.version import resolve
    from kubefit.scheduler.config import verdict

    doc = scheduler_configuration(answers.files, answers.options["recursive"])
    if doc is None:
        return True, True, "no scheduler configuration: kube-scheduler's defaults", []
    version = resolve(answers.version, answers.options["feature_gates"])
    found = verdict(doc, version)
    where = f"{doc.source}: {doc.label}"
    if found["valid"]:
        return True, True, f"kube-scheduler {version.patch} accepts {where}", list(found["notes"])
    return False, False, f"kube-scheduler {version.patch} refuses {where}", list(found["messages"])


def _max_pod_moves(a: Assertion, answers: Answers) -> Judged:
    moves = answers.moves()
    evidence = [f"{m['pod']}: {m['baseline'] or 'pending'} → {m['candidate'] or 'pending'}" for m in moves]
    return (len(moves) <= int(a.bound), len(moves),
            f"simulate places {len(moves)} pod(s) elsewhere than the baseline (at most {a.bound})", evidence)


def _claim_zones(a: Assertion, answers: Answers) -> Judged:
    from kubefit.checks.zones import claim_zones

    found = claim_zones(answers.simulation().state)
    wrong = [z for z in found if not z.fits]
    evidence = [z.line() for z in wrong] + [z.line() for z in found if z.fits]
    return (not wrong, len(wrong), f"simulate leaves {len(wrong)} of {len(found)} pod(s) using a zoned volume on "
            f"another zone than their claim's volume", evidence)


JUDGES: dict[str, Callable[[Assertion, Answers], Judged]] = {
    "maxPending": _max_pending, "fullyPlaced": _fully_placed, "maxNodesAdded": _max_nodes_added,
    "minRemovableNodes": _min_removable, "minCapacity": _min_capacity, "minAllocation": _min_allocation,
    "configValid": _config_valid, "maxPodMoves": _max_pod_moves,
    "claimZones": _claim_zones, "gangsPlaced": _gang_placed}


def scheduler_configuration(files: Sequence[str], recursive: bool) -> Any:
    """The one scheduler configuration document among `files` (None: kube-scheduler's defaults)."""
    from kubefit.manifests.documents import manifest_files, read_documents
    from kubefit.manifests.kinds import SCHEDULER_CONFIG_KINDS

    docs = [d for f in files for path in manifest_files(f, recursive=recursive) for d in read_documents(path)
            if d.kind in SCHEDULER_CONFIG_KINDS]
    if len(docs) > 1:
        raise InputError(f"expected at most one KubeSchedulerConfiguration or Policy, found {len(docs)} "
                         f"(the first is {docs[0].label} of {docs[0].source})", file=docs[1].source, obj=docs[1].label)
    return docs[0] if docs else None


def judge(a: Assertion, answers: Answers, label: str | None) -> Outcome:
    """One assertion on one version's answers; a configuration kube-scheduler refuses is an `error` outcome."""
    start = time.perf_counter()
    try:
        holds, actual, message, evidence = JUDGES[a.kind](a, answers)
        status = PASSED if holds else FAILED
    except ConfigError as exc:
        status, actual, message, evidence = ERROR, None, f"{a.verb} cannot run: {exc}", list(exc.errors)
    return Outcome(a, status, actual, message, _shown(evidence), label, time.perf_counter() - start)


def comparable(answers: Answers) -> None:
    """A baseline of another cluster cannot be compared: it must share a node or a pod with the candidate."""
    try:
        base, cand = answers.baseline_simulation(), answers.simulation()
    except ConfigError:
        return  # said by the assertions that need the runs

    def keys(result: SimulationResult) -> tuple[set[str], set[str]]:
        pods = {p.key for pods in result.state.pods for p in pods} | {s.pod.key for s in result.steps}
        return set(result.state.node_names), pods

    (base_nodes, base_pods), (nodes, pods) = keys(base), keys(cand)
    if not base_nodes & nodes and not base_pods & pods:
        raise InputError(f"shares no node and no pod with the candidate ({', '.join(answers.files)}): another "
                         f"cluster, which cannot be compared", file=", ".join(answers.baseline), field="--baseline")


def run_check(verbs: Verbs, files: Sequence[str], expectations: Expectations, *, baseline: Sequence[str] = (),
              feature_gates: str | None = None, recursive: bool = False,
              warn: Callable[[str], None] = print) -> CheckResult:
    """Judge every assertion of `expectations` on the `verbs`' answers for the scenario `files` (and the
    `baseline` files), on each version `expectations.kube_versions` names (the verbs' default version when none)."""
    from kubefit.k8s.version import resolve_each

    for given in (*files, *baseline):
        if str(given) == "-":
            raise InputError("kubefit check reads its files once per verb: give files, not stdin", field="-f")
    needs = next((a for a in expectations.assertions if a.needs_baseline), None)
    if needs is not None and not baseline:
        raise InputError("compares with a baseline: give --baseline FILE",
                         file=None if needs.source == "command line" else needs.source, field=needs.field)
    told: list[str] = []

    def once(message: str) -> None:  # each verb loads the files again: tell each note once
        if message not in told:
            told.append(message)
            warn(message)

    versions = ([v.name for v in resolve_each(expectations.kube_versions, feature_gates)]
                if expectations.kube_versions else [None])
    options = {"feature_gates": feature_gates, "recursive": recursive, "warn": once}
    outcomes: list[Outcome] = []
    moves: dict[str, list[dict]] = {}
    for version in versions:
        answers = Answers(verbs, [str(f) for f in files], [str(f) for f in baseline], expectations.node_templates,
                          version, options)
        label = version if len(versions) > 1 else None
        if baseline:
            comparable(answers)
        outcomes += [judge(a, answers, label) for a in expectations.assertions]
        if baseline:
            try:
                moves[version or "default"] = answers.moves()
            except ConfigError:
                pass
    return CheckResult(expectations.name, outcomes, moves if baseline else None, told)
