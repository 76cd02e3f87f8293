"""The disruption controller's PodDisruptionBudget status, for budgets written without one.

An install manifest's PodDisruptionBudget has no `status`: in a cluster the disruption controller writes it
at once (`pkg/controller/disruption/disruption.go` `trySync`), and the eviction API, preemption
(`filterPodsWithPDBViolation`) and the autoscalers read `status.disruptionsAllowed`. kubefit computes it as
`trySync` does, from the pods the budget selects in the cluster as it is at that moment (bound pods, and the
pod being scheduled), each time a reader asks:

- `getPodsForPdb`: the pods of the budget's namespace its selector matches (`LabelSelectorAsSelector`: absent
  selects none, `{}` every pod);
- `getExpectedPodCount`: with `maxUnavailable`, expectedPods is the sum of the scales of the pods' controllers
  (`getExpectedScale`) and desiredHealthy = expectedPods − maxUnavailable (a percentage of expectedPods rounded
  up, `GetScaledValueFromIntOrPercent(..., true)`), not below 0; with an integer `minAvailable`, desiredHealthy
  is it and expectedPods the number of pods; with a percentage, expectedPods is the controllers' scale and
  desiredHealthy the percentage of it rounded up; with neither, both are 0;
- `getExpectedScale`: a pod without a controller is skipped (`unmanagedPods`); a controller's scale is its
  `spec.replicas` (a ReplicaSet a Deployment owns counts as the Deployment); a controller kubefit does not
  hold, or one without a scale subresource (DaemonSet, Job), is an error: the controller's `failSafe` then
  writes disruptionsAllowed 0;
- `countHealthyPods`: the pods that are ready (`IsPodReady`): kubefit takes a bound pod as started and ready
  unless its status says otherwise (a `Ready` condition that is not `True`; a Succeeded or Failed pod), and a
  pod not bound as not ready; a pod the simulation placed is bound (an install's pods, pending in its
  manifest, are the budget's healthy pods once placed: Gatekeeper's `minAvailable: 1` of 3 replicas allows 2);
- `updatePdbStatus`: disruptionsAllowed = currentHealthy − desiredHealthy, 0 when that is negative or when
  expectedPods is 0.

A budget written with a status (a live snapshot) keeps it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kubefit.api.core import Pod
from kubefit.api.storage import PodDisruptionBudget
from kubefit.k8s.labels import NOTHING, Selector, SelectorError, parse_selector
from kubefit.manifests.documents import Document
from kubefit.manifests.load import TERMINAL_PHASES

SCALED_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet")  # `finders()` with listers
PDB = "PodDisruptionBudget"
UNSCALED = {"DaemonSet": "daemonsets.apps", "Job": "jobs.batch", "CronJob": "cronjobs.batch"}  # GroupResource


@dataclass(frozen=True)
class BudgetStatus:
    """`PodDisruptionBudgetStatus` as `updatePdbStatus` (or `failSafe`, with `error`) writes it."""

    current_healthy: int
    desired_healthy: int
    expected_pods: int
    disruptions_allowed: int
    error: str | None = None


def scaled_value(value: int | str, total: int) -> int:
    """`intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)`: an int as it is, a percentage of
    `total` rounded up (float64 arithmetic, as Go's `math.Ceil(float64(v) * float64(total) / 100)`)."""
    if isinstance(value, int):
        return value
    return int(math.ceil(float(int(value[:-1])) * float(total) / 100))


def controller_scales(workloads: Iterable[Document]) -> dict[str, dict[tuple[str, str], tuple[tuple[str, str],
                                                                                             int | None]]]:
    """Per namespace: each workload (kind, name) → (the controller whose scale counts, its scale), as
    `getExpectedScale`'s finders resolve a pod's controller: a ReplicaSet owned by a Deployment of the scenario
    counts as that Deployment (`getPodDeployment`), the other scaled kinds as themselves (`spec.replicas`,
    default 1), DaemonSets and Jobs have no scale (None: `does not implement the scale subresource`)."""
    out: dict[str, dict[tuple[str, str], tuple[tuple[str, str], int | None]]] = {}
    replica_sets: dict[tuple[str, str], Document] = {}  # (namespace, name) → the first ReplicaSet so named
    for doc in workloads:
        meta = doc.body.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        spec = doc.body.get("spec") or {}
        replicas = spec.get("replicas", 1) if doc.kind in SCALED_KINDS else None
        out.setdefault(namespace, {})[(doc.kind, doc.name)] = (
            (doc.kind, doc.name), replicas if isinstance(replicas, int) or replicas is None else 1)
        if doc.kind == "ReplicaSet":
            replica_sets.setdefault((namespace, doc.name), doc)
    for namespace, table in out.items():
        for (kind, name), _entry in list(table.items()):
            if kind != "ReplicaSet":
                continue
            doc = replica_sets[(namespace, name)]
            refs = (doc.body.get("metadata") or {}).get("ownerReferences") or []
            owner = next((r for r in refs if isinstance(r, dict) and r.get("controller") is True), None)
            if owner is not None and owner.get("kind") == "Deployment":
                deployment = table.get(("Deployment", str(owner.get("name"))))
                if deployment is not None:
                    table[(kind, name)] = deployment
    return out


def resolve_budgets(pdbs: list[Any], workloads: Iterable[Document]) -> None:
    """Give each budget written without a status the scale table of its namespace (in place)."""
    if not any(p.computed for p in pdbs):
        return
    scales = controller_scales(workloads)
    for i, pdb in enumerate(pdbs):
        if pdb.computed:
            pdbs[i] = replace(pdb, scales=scales.get(pdb.meta.namespace, {}))


def _selector(pdb: PodDisruptionBudget) -> Selector:
    try:
        return parse_selector(pdb.selector)
    except SelectorError:  # pragma: no cover - the decoder refuses a malformed selector
        return NOTHING


def _controller(pod: Pod) -> tuple[str, str] | None:
    """`metav1.GetControllerOf`, else the workload kubefit expanded the pod from."""
    for ref in pod.owner_references:
        if ref.controller:
            return ref.kind, ref.name
    if pod.created_by:
        kind, _, name = pod.created_by.partition("/")
        return kind, name
    return None


def ready(pod: Pod) -> bool:
    """`IsPodReady` for a pod bound in the simulated cluster (given with spec.nodeName, or placed by the
    simulation): not terminal, and its status's `Ready` condition (when it has one) `True`."""
    if pod.phase in TERMINAL_PHASES:
        return False
    if not any(c.type == "Ready" for c in pod.conditions):
        return True
    conditions = (pod.raw.get("status") or {}).get("conditions") or []
    return all(c.get("status") == "True" for c in conditions if isinstance(c, dict) and c.get("type") == "Ready")


def _expected_scale(pdb: PodDisruptionBudget, pods: Sequence[Pod]) -> tuple[int, str | None]:
    """`getExpectedScale`: the sum of the scales of the pods' controllers, or the error."""
    table = pdb.scales or {}
    seen: dict[tuple[str, str], int] = {}
    for pod in pods:
        owner = _controller(pod)
        if owner is None:
            continue  # unmanagedPods
        found = table.get(owner)
        if found is None:
            return 0, f"found no controllers for pod {pod.name!r}"
        if found[1] is None:
            return 0, f"{UNSCALED.get(owner[0], owner[0].lower() + 's')} does not implement the scale subresource"
        seen[found[0]] = found[1]
    return sum(seen.values()), None


class Selectable:
    """Pods of one namespace, in their order, each with the index of its label set among the distinct ones: a
    selector is matched once per distinct label set (a workload's pods share theirs), not once per pod (116
    budgets over 22,000 pods: 3 s of a consolidate before)."""

    def __init__(self, pods: Iterable[Pod]) -> None:
        self.pods = list(pods)
        index: dict[tuple, int] = {}
        self.labels: list[dict[str, str]] = []
        self.sets: list[int] = []
        for pod in self.pods:
            labels = pod.labels or {}
            key = tuple(labels.items())  # equal sets written in another order: two entries, the same verdicts
            at = index.get(key)
            if at is None:
                at = index[key] = len(self.labels)
                self.labels.append(labels)
            self.sets.append(at)

    def selected(self, selector: Selector) -> list[Pod]:
        """The pods the selector matches, in their order (`getPodsForPdb`'s list)."""
        hits = [selector.matches(labels) for labels in self.labels]
        return [pod for pod, at in zip(self.pods, self.sets, strict=True) if hits[at]]


def by_namespace(pods: Iterable[Pod], namespaces: set[str] | None = None) -> dict[str, Selectable]:
    """The pods of each namespace (of `namespaces` only, when given), in their order."""
    grouped: dict[str, list[Pod]] = {}
    for pod in pods:
        if namespaces is None or pod.namespace in namespaces:
            grouped.setdefault(pod.namespace, []).append(pod)
    return {ns: Selectable(members) for ns, members in grouped.items()}


_NONE = Selectable(())


def budget_status(pdb: PodDisruptionBudget, pods: Sequence[Pod], pending: Sequence[Pod] = ()) -> BudgetStatus:
    """`trySync` for one budget over the cluster's pods of its namespace, any order: `pods` bound (given on a
    node or placed by the simulation), `pending` not bound yet (counted, never healthy)."""
    namespace = {pdb.meta.namespace}
    return _status(pdb, by_namespace(pods, namespace), by_namespace(pending, namespace))


def _status(pdb: PodDisruptionBudget, present: dict[str, Selectable], waiting: dict[str, Selectable]) -> BudgetStatus:
    """`trySync` for one budget, the cluster's pods (bound, and pending) grouped by namespace (`by_namespace`)."""
    selector = _selector(pdb)
    bound = present.get(pdb.meta.namespace, _NONE).selected(selector)
    matched = bound + waiting.get(pdb.meta.namespace, _NONE).selected(selector)
    expected = desired = 0
    error = None
    if pdb.max_unavailable is not None:
        expected, error = _expected_scale(pdb, matched)
        desired = max(expected - scaled_value(pdb.max_unavailable, expected), 0)
    elif isinstance(pdb.min_available, int):
        desired, expected = pdb.min_available, len(matched)
    elif pdb.min_available is not None:
        expected, error = _expected_scale(pdb, matched)
        desired = scaled_value(pdb.min_available, expected)
    if error is not None:  # failSafe: disruptionsAllowed 0 (the other fields as they were: none)
        return BudgetStatus(0, 0, 0, 0, error)
    current = sum(1 for p in bound if ready(p))
    allowed = current - desired
    return BudgetStatus(current, desired, expected, allowed if expected > 0 and allowed > 0 else 0)


def current_budgets(pdbs: Sequence[PodDisruptionBudget], pods: Iterable[Pod],
                    pending: Iterable[Pod] = ()) -> list[PodDisruptionBudget]:
    """The budgets as the disruption controller has them for the cluster running `pods` (bound; `pending`: the
    pods it holds not bound yet): a budget written with a status as it is, one without with `disruptionsAllowed`
    computed (`budget_status`)."""
    if not any(p.computed for p in pdbs):
        return list(pdbs)
    namespaces = {p.meta.namespace for p in pdbs if p.computed}
    present, waiting = by_namespace(pods, namespaces), by_namespace(pending, namespaces)
    return [replace(p, disruptions_allowed=_status(p, present, waiting).disruptions_allowed) if p.computed
            else p for p in pdbs]
