"""Requests rewritten from usage: the scenario as it is once the new requests are applied, as the real actors
apply them (a scenario transformation: every verb then answers for the right-sized cluster, no special path).

Who rewrites a pod's requests:

- `--requests-from vpa`: the VPA admission controller, when the pod's controller creates it
  (`vpaadmission.admit`), from the VPA whose `targetRef` is the pod's workload (`owners.Workloads.of`; several: the
  earliest created, then by name, `utils/vpa/api.go` `Stronger`) and its `status.recommendation` (or, without
  one, what the recommender computes from the VPA's checkpoints: `recommender.recommend`).
- `--requests-from usage`: the workload's template changed by hand from the usage (`strategy`), its pods
  recreated by their controller (a rollout).

How a running pod gets them depends on the update mode (the VPA's `updatePolicy.updateMode`, `--update-mode`
for all):

- Recreate / Auto (the updater evicts the pod, its controller recreates it, the webhook rewrites it), Initial
  (only pods created from now on: kubefit answers for the cluster once every pod has been recreated) and Off (the
  recommendation applied as if the VPA were switched to Recreate; said in a note): the pod is deleted and its
  controller's new pod (`manifests.controllers`, through ResourceQuota admission) is queued with the new requests.
- InPlaceOrRecreate: the updater patches the running pod's resources; the kubelet admits the resize on the pod's
  node or not (`kubeletresize.judge`, resizes that raise no request first, the pods recreated on the node having
  left it first). Admitted: the pod stays, with the new requests. Infeasible: the updater evicts it at once;
  Deferred: after 5 minutes (`updater/restriction/pods_inplace_restriction.go` `CanEvictInPlacingPod`): recreated,
  and its room is free for the resizes judged after it. InPlace: never evicted, a resize not admitted leaves the
  pod as it is.

Pods still to be created (pending) get the new requests; a pod that declares no controller has none to recreate
it and is left as it is. Only `spec.containers` are rewritten (the webhook never touches init or sidecar
containers). Every change is listed per workload and container (`WorkloadChange`), every resize judged
(`Resize`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubefit.api.core import Container, Pod
from kubefit.k8s.goquantity import BINARY_SI, DECIMAL_SI, canonical, from_int64
from kubefit.k8s.quantity import QuantityError, parse_quantity
from kubefit.k8s.requests import pod_demand
from kubefit.manifests.controllers import Controllers
from kubefit.manifests.load import Scenario
from kubefit.manifests.usage import kubeletresize
from kubefit.manifests.usage.owners import Workload, Workloads, label
from kubefit.manifests.usage.vpaadmission import Admitted, Resources

RECREATE_MODES = ("Recreate", "Auto", "Initial", "Off")
IN_PLACE_MODES = ("InPlaceOrRecreate", "InPlace")
MODES = (*RECREATE_MODES, *IN_PLACE_MODES)
NANO, MILLI = 10**9, 10**6


def quantity(name: str, nanos: int) -> str:
    """A quantity as the VPA writes it: cpu a milli-quantity (`QuantityFromCPUAmount`), memory bytes in BinarySI
    (`QuantityFromMemoryAmount`), anything else whole units."""
    if name == "cpu" and nanos % MILLI == 0:
        return canonical(from_int64(nanos // MILLI, -3, DECIMAL_SI))
    if nanos % NANO == 0:
        return canonical(from_int64(nanos // NANO, 0, BINARY_SI if name == "memory" else DECIMAL_SI))
    return canonical(from_int64(nanos, -9, DECIMAL_SI))


@dataclass
class ContainerChange:
    """One container's requests and limits before and after (nano-units), how they were capped, and from what."""

    name: str
    requests_before: dict[str, int]
    requests_after: dict[str, int]
    limits_before: dict[str, int]
    limits_after: dict[str, int]
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.requests_before != self.requests_after or self.limits_before != self.limits_after

    def to_dict(self) -> dict[str, Any]:
        def texts(values: dict[str, int]) -> dict[str, str]:
            return {k: quantity(k, v) for k, v in sorted(values.items())}
        return {"container": self.name, "requests": {"before": texts(self.requests_before),
                                                     "after": texts(self.requests_after)},
                "limits": {"before": texts(self.limits_before), "after": texts(self.limits_after)},
                **({"capped": list(self.notes)} if self.notes else {})}


@dataclass
class WorkloadChange:
    """What one workload's containers get, from where (`source`: a VPA or the usage strategy), how its running
    pods get it (`mode`), and its pods rewritten."""

    workload: Workload
    source: str
    mode: str
    containers: list[ContainerChange]
    pods: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        ns, kind, name = self.workload
        return {"namespace": ns, "kind": kind, "name": name, "source": self.source, "updateMode": self.mode,
                "pods": len(self.pods), "containers": [c.to_dict() for c in self.containers]}


@dataclass
class Resize:
    """A running pod's in-place resize as the kubelet judges it on its node, and what followed (`replacement`:
    the pod its controller created when the updater evicted it)."""

    pod: str
    node: str
    decision: str
    message: str = ""
    replacement: str | None = None
    requests_before: dict[str, int] = field(default_factory=dict)
    requests_after: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "node": self.node, "decision": self.decision, "message": self.message,
                "recreatedAs": self.replacement, "requests": {"before": self.requests_before,
                                                              "after": self.requests_after}}


@dataclass
class Rightsized:
    """The scenario with the new requests applied, and what was done to it."""

    scenario: Scenario
    changes: list[WorkloadChange]
    resizes: list[Resize]
    recreated: list[tuple[Pod, Pod | None, str | None]]  # (the pod before, its replacement, a quota refusal)
    notes: list[str]


# (workload, pod) → each rewritten container's Admitted, or None: the pod is not controlled
Recommend = Callable[[Workload, Pod, list[Resources]], list[Admitted] | None]


@dataclass
class Plan:
    """Where the new requests come from: `recommend` per pod, the update mode and source per workload."""

    recommend: Recommend
    mode_of: Callable[[Workload], str]
    source_of: Callable[[Workload], str]


def container_resources(pod: Pod) -> list[Resources]:
    """The pod's `spec.containers` requests and limits (nano-units; limits from the manifest)."""
    spec = (pod.raw.get("spec") or {}) if isinstance(pod.raw, dict) else {}
    limits: dict[str, dict[str, int]] = {}
    for c in spec.get("containers") or []:
        if not isinstance(c, dict):
            continue
        raw = ((c.get("resources") or {}).get("limits") or {}) if isinstance(c.get("resources"), dict) else {}
        try:
            limits[str(c.get("name"))] = {str(k): parse_quantity(v) for k, v in raw.items()}
        except QuantityError:
            limits[str(c.get("name"))] = {}
    return [Resources(c.name, dict(c.requests), limits.get(c.name, {})) for c in pod.containers]


def rightsize(scenario: Scenario, plan: Plan, *, mode: str | None = None) -> Rightsized:
    """The scenario with the new requests applied (see the module's docstring); `mode` overrides every
    workload's update mode (`--update-mode`)."""
    workloads = Workloads(scenario.workloads, scenario.pods)
    changes: dict[Workload, WorkloadChange] = {}
    rewritten: dict[int, Pod] = {}  # id(pod) → the pod with its new containers
    memo: dict[tuple, tuple[tuple[Container, ...], dict[str, Any], list[ContainerChange]] | None] = {}
    uncontrolled = 0
    for pod in scenario.pods:
        if pod.phase in ("Succeeded", "Failed"):
            continue
        workload = workloads.of(pod)
        if workload is None:
            uncontrolled += 1
            continue
        key = (workload, id(pod.containers), _raw_key(pod))
        if key not in memo:
            memo[key] = _new_containers(pod, workload, plan)
        made = memo[key]
        if made is None:
            continue
        containers, raw_spec, container_changes = made
        change = changes.get(workload)
        if change is None:
            change = changes[workload] = WorkloadChange(workload, plan.source_of(workload),
                                                        mode or plan.mode_of(workload), container_changes)
        change.pods.append(pod.key)
        rewritten[id(pod)] = replace(pod, containers=containers, raw={**pod.raw, "spec": raw_spec})
    notes: list[str] = []
    if uncontrolled:
        notes.append(f"{uncontrolled} pod(s) declare no controller: nothing would recreate them with new requests, "
                     f"left as they are")
    return _apply(scenario, rewritten, changes, workloads, notes)


def _raw_key(pod: Pod) -> int:
    """What else the new containers depend on: the manifest's containers (limits)."""
    spec = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    return id(spec.get("containers")) if isinstance(spec, dict) else 0


def _new_containers(pod: Pod, workload: Workload, plan: Plan
                    ) -> tuple[tuple[Container, ...], dict[str, Any], list[ContainerChange]] | None:
    """The pod's containers with the admitted requests and limits, its manifest's spec likewise, and the changes
    (None: nothing changes)."""
    resources = container_resources(pod)
    admitted = plan.recommend(workload, pod, resources)
    if not admitted:
        return None
    by_name = {a.name: a for a in admitted}
    containers: list[Container] = []
    changes: list[ContainerChange] = []
    for c, res in zip(pod.containers, resources, strict=True):
        a = by_name.get(c.name)
        if a is None:
            containers.append(c)
            continue
        requests = {**res.requests, **a.requests}
        limits = {k: v for k, v in {**res.limits, **a.limits}.items() if v is not None}
        for dropped in [k for k, v in a.limits.items() if v is None]:
            limits.pop(dropped, None)
        change = ContainerChange(c.name, dict(res.requests), requests, dict(res.limits), limits, list(a.notes))
        changes.append(change)
        containers.append(replace(c, requests=requests) if requests != res.requests else c)
    if not any(ch.changed for ch in changes):
        return None
    return tuple(containers), _raw_spec(pod, {ch.name: ch for ch in changes}), changes


def _raw_spec(pod: Pod, changes: dict[str, ContainerChange]) -> dict[str, Any]:
    """The pod manifest's spec with the new requests and limits written in its containers."""
    spec = dict(pod.raw.get("spec") or {})
    out = []
    for c in spec.get("containers") or []:
        ch = changes.get(c.get("name")) if isinstance(c, dict) else None
        if ch is None:
            out.append(c)
            continue
        resources = dict(c.get("resources") or {})
        resources["requests"] = {k: quantity(k, v) for k, v in ch.requests_after.items()}
        if ch.limits_after:
            resources["limits"] = {k: quantity(k, v) for k, v in ch.limits_after.items()}
        else:
            resources.pop("limits", None)
        out.append({**c, "resources": resources})
    spec["containers"] = out
    return spec


def _apply(scenario: Scenario, rewritten: dict[int, Pod], changes: dict[Workload, WorkloadChange],
           workloads: Workloads, notes: list[str]) -> Rightsized:
    """The new scenario: pending pods rewritten, running ones resized in place or recreated per their mode."""
    mode_of = {pod_key: change.mode for change in changes.values() for pod_key in change.pods}
    leaving: list[Pod] = []  # bound pods recreated (with their new containers)
    resizes: list[Resize] = []
    stays: dict[int, Pod] = {}
    in_place = [p for p in scenario.pods if id(p) in rewritten and p.bound and mode_of[p.key] in IN_PLACE_MODES]
    for p in scenario.pods:
        if id(p) not in rewritten:
            continue
        if not p.bound:
            stays[id(p)] = rewritten[id(p)]
        elif mode_of[p.key] in RECREATE_MODES:
            leaving.append(p)
    judged = _judge_resizes(scenario, in_place, rewritten, {id(p) for p in leaving}, mode_of)
    for pod, verdict in judged:
        resizes.append(Resize(pod.key, pod.node_name, verdict.decision, verdict.message,
                              requests_before=_units(pod), requests_after=_units(rewritten[id(pod)])))
        if verdict.decision == kubeletresize.ADMITTED:
            stays[id(pod)] = _resized(rewritten[id(pod)])
        elif mode_of[pod.key] == "InPlaceOrRecreate":
            leaving.append(pod)
    controllers = Controllers.of(scenario)
    if controllers.quota is not None:
        for pod in leaving:
            controllers.quota.release(pod)
    recreated: list[tuple[Pod, Pod | None, str | None]] = []
    for pod in leaving:
        new = controllers.replacement_for(rewritten[id(pod)])
        recreated.append((pod, new, None if new is None else controllers.refusal(pod, new)))
    by_resize = {r.pod: r for r in resizes}
    for old, new, _ in recreated:
        if old.key in by_resize and new is not None:
            by_resize[old.key].replacement = new.name
    gone = {id(p) for p in leaving}
    pods = [stays.get(id(p), p) for p in scenario.pods if id(p) not in gone]
    pods += [new for _, new, refused in recreated if new is not None and refused is None]
    refused = [(new, error) for _, new, error in recreated if new is not None and error is not None]
    out = replace(scenario, pods=pods, warnings=list(scenario.warnings), quota=controllers.quota,
                  refused=[*scenario.refused, *refused], workloads=_templates(scenario, changes, workloads))
    if any(c.mode == "Off" for c in changes.values()):
        off = [label(c.workload) for c in changes.values() if c.mode == "Off"]
        notes.append(f"{len(off)} VPA(s) in updateMode Off (e.g. {off[0]}): their recommendation applied as if "
                     f"switched to Recreate")
    if any(c.mode == "Initial" for c in changes.values()):
        notes.append("updateMode Initial rewrites only pods created from now on: the running pods are taken as "
                     "recreated (the cluster once every pod has been)")
    return Rightsized(out, list(changes.values()), resizes, recreated, notes)


def _templates(scenario: Scenario, changes: dict[Workload, WorkloadChange], workloads: Workloads) -> list[Any]:
    """The workloads with their pod templates rewritten as their pods were: the pods created later from a template
    (`capacity --pod deployment/web`, a new node's DaemonSet pod, a StatefulSet's later ordinal) get the new
    requests too, as the VPA's webhook (or the changed template) gives them. A Deployment's ReplicaSets are its
    workload's."""
    from kubefit.manifests.documents import Document

    out = []
    for doc in scenario.workloads:
        meta = doc.body.get("metadata") if isinstance(doc.body.get("metadata"), dict) else {}
        owner = workloads.top(str(meta.get("namespace") or "default"), (doc.kind, doc.name))
        change = changes.get(owner)
        template = (doc.body.get("spec") or {}).get("template") if isinstance(doc.body.get("spec"), dict) else None
        if change is None or not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
            out.append(doc)
            continue
        fake = Pod(doc.name, raw={"spec": template["spec"]})
        spec = _raw_spec(fake, {c.name: c for c in change.containers})
        body = {**doc.body, "spec": {**doc.body["spec"], "template": {**template, "spec": spec}}}
        out.append(Document(body, doc.source, doc.index, doc.position))
    return out


def _units(pod: Pod) -> dict[str, int]:
    """The pod's cpu (millicores) and memory (bytes) requests, as kube-scheduler counts them."""
    demand = pod_demand(pod).requests
    return {"cpu": demand.get("cpu", 0), "memory": demand.get("memory", 0)}


def _resized(pod: Pod) -> Pod:
    """A pod whose in-place resize was admitted and actuated: its status carries the new resources (so a
    resize in progress no longer counts the old ones), no resize condition is left."""
    statuses = {c.name: c for c in pod.containers}
    containers = tuple(replace(s, requests=dict(statuses[s.name].requests), allocated_resources=dict(
        statuses[s.name].requests)) if s.name in statuses and s.requests is not None else s
        for s in pod.container_statuses)
    conditions = tuple(c for c in pod.conditions if c.type not in ("PodResizePending", "PodResizeInProgress"))
    return replace(pod, container_statuses=containers, conditions=conditions)


def _judge_resizes(scenario: Scenario, candidates: Sequence[Pod], rewritten: dict[int, Pod], leaving: set[int],
                   mode_of: dict[str, str]) -> list[tuple[Pod, kubeletresize.Verdict]]:
    """Each in-place candidate's verdict on its node (see `kubeletresize`), node by node: the pods recreated from
    the node left first; resizes raising no request first, then by priority, Guaranteed QoS, scenario order; a pod
    the updater then evicts (InPlaceOrRecreate, not admitted) leaves its room to the ones judged after it."""
    if not candidates:
        return []
    nodes = {n.name: n for n in scenario.nodes}
    by_node: dict[str, list[Pod]] = {}
    for pod in scenario.pods:
        if pod.bound and pod.phase not in ("Succeeded", "Failed"):
            by_node.setdefault(pod.node_name, []).append(pod)
    chosen = {id(p) for p in candidates}
    out: list[tuple[Pod, kubeletresize.Verdict]] = []
    for name, pods in by_node.items():
        mine = [p for p in pods if id(p) in chosen]
        if not mine or name not in nodes:
            continue
        allocatable = _allocatable(nodes[name])
        used: dict[str, int] = {}
        count = 0
        for p in pods:
            if id(p) in leaving:
                continue
            count += 1
            for k, v in pod_demand(p, use_status_resources=True).requests.items():
                used[k] = used.get(k, 0) + v
        order = sorted(range(len(mine)), key=lambda i: (
            kubeletresize.increases(_units(mine[i]), _units(rewritten[id(mine[i])])), -mine[i].priority,
            not _guaranteed(mine[i]), i))
        for i in order:
            pod = mine[i]
            old = pod_demand(pod, use_status_resources=True).requests
            new = pod_demand(rewritten[id(pod)]).requests
            others = {k: used.get(k, 0) - old.get(k, 0) for k in set(used) | set(old)}
            verdict = kubeletresize.judge(new, allocatable, others, count - 1)
            out.append((pod, verdict))
            if verdict.decision == kubeletresize.ADMITTED:
                used = {k: others.get(k, 0) + new.get(k, 0) for k in set(others) | set(new)}
            elif mode_of[pod.key] == "InPlaceOrRecreate":
                used, count = others, count - 1
    return out


def _allocatable(node: Any) -> dict[str, int]:
    from kubefit.k8s.quantity import scheduler_units

    return {k: scheduler_units(k, v) for k, v in node.allocatable.items()}


def _guaranteed(pod: Pod) -> bool:
    """QoS Guaranteed (approximated from the manifest: every container limits cpu and memory to its requests)."""
    for res in container_resources(pod):
        for name in ("cpu", "memory"):
            if not res.limits.get(name) or res.requests.get(name, res.limits[name]) != res.limits[name]:
                return False
    return bool(pod.containers)
