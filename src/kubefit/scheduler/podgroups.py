"""The pod groups of a scenario as one Kubernetes version serves and schedules them (workload-aware scheduling).

Serving (`prepare_groups`, run by `scheduler.scenario.prepare` once the version is known): each version serves
its own API versions of `scheduling.k8s.io` (v1.35 v1alpha1 Workload; v1.36 v1alpha2 Workload and PodGroup;
v1.37 v1beta1, and v1alpha3 with CompositePodGroup), and only with `GenericWorkload` on. An API version the
Kubernetes version does not serve at all is refused with the API server's words (exit 2); a served kind with its
gate off is not created (told); a pod's `spec.schedulingGroup` (v1.36+) or `spec.workloadRef` (v1.35) is a field
of that version's core/v1 only (the other is an unknown field, refused) and is dropped with `GenericWorkload` off,
as the API server drops disabled fields (`dropDisabledPodFields`): those pods are then scheduled one by one.
Fields of a group that a further gate guards (`schedulingConstraints`: TopologyAwareWorkloadScheduling;
`disruptionMode`, `priorityClassName`, `priority`: WorkloadAwarePreemption in v1.36; `preemptionPolicy`:
PodGroupPreemptionPolicy in v1.37) are dropped likewise.

Scheduling (`GroupTable`): which group a pod belongs to, its policy, the PreEnqueue of the GangScheduling plugin
(`gangscheduling.go`: the group's object must exist, and a gang needs `minCount` pods known to the scheduler,
bound ones included) and the order of a group's pods in its cycle (`podGroupInfoForPod`: by priority, then by
`InitialAttemptTimestamp`, see `member_order`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kubefit.api.cluster import ClusterObjects, ObjectMeta
from kubefit.api.core import Pod
from kubefit.api.workload import DISRUPT_POD, PodGroup, Workload, priority_of
from kubefit.errors import InputError
from kubefit.k8s.version import (
    GANG_GATES_MERGED,
    POD_GROUP_VALIDATION,
    POD_SCHEDULING_GROUP,
    WORKLOAD_API_BETA,
    KubeVersion,
)
from kubefit.manifests.podgroups import GATED, KINDS, V1ALPHA1, V1ALPHA2, V1ALPHA3, V1BETA1

GENERIC_WORKLOAD = "GenericWorkload"
GANG_SCHEDULING = "GangScheduling"
WORKLOAD_AWARE_PREEMPTION = "WorkloadAwarePreemption"
TOPOLOGY_AWARE = "TopologyAwareWorkloadScheduling"
COMPOSITE_POD_GROUP = "CompositePodGroup"
WORKLOAD_WITH_JOB = "WorkloadWithJob"  # the Job controller's Workload and PodGroup (v1.36+, alpha)
# PreEnqueue's rejections (`gangscheduling.go` PreEnqueue, v1.36.3 and v1.35.4), UnschedulableAndUnresolvable
WAITING_FOR_QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"


def waiting_for_group(name: str) -> str:
    return f"waiting for pods's pod group \"{name}\" to appear in scheduling queue"


def waiting_for_workload(name: str) -> str:  # v1.35
    return f"waiting for pods's workload \"{name}\" to appear in scheduling queue"


def no_such_template(group: str, workload: str) -> str:  # v1.35
    return f"pod group \"{group}\" doesn't exist for a workload \"{workload}\""


@dataclass(frozen=True)
class WorkloadGates:
    """What the version's gates turn on: the pod group cycle (GenericWorkload), the GangScheduling plugin in the
    default profile, workload-aware preemption, topology-aware placement, composite groups."""

    generic: bool = False
    gang: bool = False
    preemption: bool = False
    topology: bool = False
    composite: bool = False

    @classmethod
    def of(cls, version: KubeVersion | None) -> WorkloadGates:
        if version is None or not version.gate(GENERIC_WORKLOAD):
            return cls()
        merged = version.has(GANG_GATES_MERGED)  # v1.37: GangScheduling and WorkloadAwarePreemption are GenericWorkload
        return cls(True, merged or version.gate(GANG_SCHEDULING), merged or version.gate(WORKLOAD_AWARE_PREEMPTION),
                   version.gate(TOPOLOGY_AWARE), version.gate(COMPOSITE_POD_GROUP))


# --------------------------------------------------------------------------- serving (API server side)

def served_api_versions(version: KubeVersion) -> dict[str, tuple[str, ...]]:
    """apiVersion → the kinds of `scheduling.k8s.io` the version's kube-apiserver has in it (its gates aside)."""
    if version.has(WORKLOAD_API_BETA):
        return {V1BETA1: ("Workload", "PodGroup"), V1ALPHA3: ("Workload", "PodGroup", "CompositePodGroup")}
    if version.has(POD_SCHEDULING_GROUP):
        return {V1ALPHA2: ("Workload", "PodGroup")}
    return {V1ALPHA1: ("Workload",)}


def _not_served(kind: str, api_version: str, version: KubeVersion) -> str:
    serving = [v for v, kinds in served_api_versions(version).items() if kind in kinds]
    there = (f"Kubernetes {version.name} serves {kind} as {' and '.join(serving)}" if serving else
             f"Kubernetes {version.name} has no {kind} (it comes with v1.36's PodGroup API)")
    return f'no matches for kind "{kind}" in version "{api_version}": {there}'


def prepare_groups(objects: ClusterObjects, pods: list[Pod], version: KubeVersion, classes=None) -> list[str]:
    """Apply what the version's API server does to the scenario's Workloads, PodGroups and CompositePodGroups and to
    the pods' group references (the module's text): `objects` and `pods` changed in place; the notes to tell.
    `classes`: the scenario's PriorityClasses (`manifests.priority.priority_classes`) for the Priority admission of
    groups."""
    gates = WorkloadGates.of(version)
    notes: list[str] = []
    kept: dict[str, list] = {}
    dropped: list[str] = []
    for kind in KINDS:
        for obj in objects.of(kind):
            served = served_api_versions(version)
            where = f"{obj.meta.source}: {kind}/{obj.meta.name}"
            if kind not in served.get(obj.api_version, ()):
                raise InputError(_not_served(kind, obj.api_version, version), file=obj.meta.source,
                                 obj=f"{kind}/{obj.meta.name}", field="apiVersion")
            if not gates.generic or ((kind == "CompositePodGroup" or obj.api_version == V1ALPHA3)
                                     and not gates.composite):
                dropped.append(where)
                continue
            kept.setdefault(kind, []).append(_admit_priority(_without_gated(obj, version, notes), version, classes))
    for kind in KINDS:
        if kind in objects.by_kind:
            objects.replace_kind(kind, kept.get(kind, []))
    if dropped:
        gate = GENERIC_WORKLOAD if not gates.generic else COMPOSITE_POD_GROUP
        notes.append(f"{dropped[0]}{f' and {len(dropped) - 1} more' if len(dropped) > 1 else ''}: not served by "
                     f"kube-apiserver {version.patch} with the {gate} feature gate off (`--feature-gates {gate}=true` "
                     f"turns it on): not created")
    if _none_grouped(pods):  # no pod names a group (the usual scenario): nothing to refuse, drop or tell of them
        return notes + _composite_notes(objects)
    notes += _pod_references(pods, version, gates)
    notes += _composite_notes(objects) + _priority_notes(pods, version)
    return notes


_GROUP_FIELDS = operator.attrgetter("scheduling_group", "workload_ref")


def _none_grouped(pods: list[Pod]) -> bool:
    """Whether no pod has a group reference of either version (`scheduling_group`, `workload_ref` both None): then
    `_pod_references` and `_priority_notes` find nothing. One pass in C over the pods (a scenario of 7,500 pods:
    ≈ 1 ms, where their two passes took ≈ 6)."""
    try:
        return {(None, None)}.issuperset(map(_GROUP_FIELDS, pods))
    except TypeError:  # a reference that cannot be hashed (a Pod built in Python): the passes decide
        return False


def _composite_notes(objects: ClusterObjects) -> list[str]:
    """CompositePodGroups (v1.37 alpha, kept only with their gate on, then scheduled as hierarchies by
    `compositecycle.py`): name a cycle of parents, under which no pod is scheduled."""
    composites = objects.of("CompositePodGroup")
    if not composites:
        return []
    notes: list[str] = []
    parents = {(c.meta.namespace, c.meta.name): c.parent for c in composites}
    for start in parents:
        seen, at = [start[1]], parents[start]
        while at is not None and (start[0], at) in parents and at not in seen:
            seen.append(at)
            at = parents[(start[0], at)]
        if at is not None and at == start[1]:
            notes.append(f"CompositePodGroup/{start[1]}: its parents form a cycle ({' -> '.join([*seen, at])}): no "
                         f"pod under it can be scheduled as a hierarchy")
            break
    return notes


def _priority_notes(pods: list[Pod], version: KubeVersion) -> list[str]:
    """Pods of one group with different priorities: v1.36 sorts them in the group's cycle by priority (v1.37 refuses
    the group, kubernetes#139920: its pods fail with the error, which says it)."""
    if version.has(POD_GROUP_VALIDATION):
        return []
    seen: dict[GroupKey, set[int]] = {}
    for pod in pods:
        key = group_key(pod)
        if key is not None and not pod.bound:
            seen.setdefault(key, set()).add(pod.priority)
    mixed = [(key, sorted(values)) for key, values in seen.items() if len(values) > 1]
    return [f"pod group {key[0]}/{key[1]}: its pods have different priorities ({', '.join(map(str, values))}): "
            f"its cycle takes them in priority order" for key, values in mixed[:3]]


def _without_gated(obj, version: KubeVersion, notes: list[str]):
    """`obj` without the fields whose gate is off (the registry strategy's dropDisabledFields), told once per object."""
    off = [path for path in getattr(obj, "gated", ()) if not field_gate_on(path.rsplit(".", 1)[-1], version)]
    if not off:
        return obj
    notes.append(f"{obj.meta.source}: {type(obj).__name__}/{obj.meta.name}: {', '.join(off)} dropped: "
                 f"{'; '.join(sorted({_gate_for(p.rsplit('.', 1)[-1], version) + ' is off' for p in off}))} "
                 f"in Kubernetes {version.name} (the API server drops disabled fields)")
    fields = {p.rsplit(".", 1)[-1] for p in off}
    if isinstance(obj, Workload):
        templates = tuple(dataclasses.replace(t, **_cleared(fields)) for t in obj.templates)
        return dataclasses.replace(obj, templates=templates, gated=(),
                                   composite_templates=() if "compositePodGroupTemplates" in fields else
                                   obj.composite_templates)
    return dataclasses.replace(obj, gated=(), **_cleared(fields))


def _admit_priority(obj, version: KubeVersion, classes):
    """The Priority admission of a PodGroup or CompositePodGroup being created (its priority field's gate on): without
    `spec.priority` it takes its PriorityClass's value, or the global default's (0 without one); a class that does
    not exist forbids the object (`plugin/pkg/admission/priority`, its PodGroup cases). An object that carries
    `spec.priority` (as `kubectl get` prints it) is used as it is."""
    if classes is None or isinstance(obj, Workload) or obj.priority is not None or not field_gate_on("priority", version):
        return obj
    known, default = classes
    name = obj.priority_class_name
    found = known.get(name) if name else default
    if found is None:
        resource = "podgroups" if isinstance(obj, PodGroup) else "compositepodgroups"
        raise InputError(f'{resource}.scheduling.k8s.io "{obj.meta.name}" is forbidden: no PriorityClass with name '
                         f"{name} was found", file=obj.meta.source, obj=f"{type(obj).__name__}/{obj.meta.name}",
                         field="spec.priorityClassName")
    return dataclasses.replace(obj, priority=found.value)


def _cleared(fields: set[str]) -> dict:
    out: dict = {}
    if "schedulingConstraints" in fields:
        out["topology_keys"] = ()
    if "disruptionMode" in fields:
        out["disruption_mode"] = DISRUPT_POD
    if "priorityClassName" in fields:
        out["priority_class_name"] = ""
    if "priority" in fields:
        out["priority"] = None
    if "preemptionPolicy" in fields:
        out["preemption_policy"] = None
    if "parentCompositePodGroupName" in fields:
        out["parent"] = None
    return out


def _gate_for(name: str, version: KubeVersion) -> str:
    gate = GATED[name]
    return GENERIC_WORKLOAD if gate == WORKLOAD_AWARE_PREEMPTION and version.has(GANG_GATES_MERGED) else gate


def field_gate_on(name: str, version: KubeVersion) -> bool:
    """Whether the feature gate of a Workload/PodGroup field (`priority`, `disruptionMode`, ...) is on."""
    return version.gate(_gate_for(name, version))


def _pod_references(pods: list[Pod], version: KubeVersion, gates: WorkloadGates) -> list[str]:
    """Each pod's group reference as the version's core/v1 has it: the other version's field refused (unknown field),
    the version's own dropped with GenericWorkload off (a note)."""
    own, other = ("scheduling_group", "workload_ref") if version.has(POD_SCHEDULING_GROUP) else (
        "workload_ref", "scheduling_group")
    json_name = {"scheduling_group": "schedulingGroup", "workload_ref": "workloadRef"}
    stripped = []
    for i, pod in enumerate(pods):
        if getattr(pod, other) is not None and not pod.bound:
            raise InputError(f"unknown field {json_name[other]!r} (core/v1 PodSpec of Kubernetes {version.name} has "
                             f"{json_name[own]}{'' if own == 'workload_ref' else ' instead'})",
                             file=pod.source, obj=f"Pod/{pod.name}", field=f"spec.{json_name[other]}")
        if getattr(pod, other) is not None:
            pods[i] = pod = dataclasses.replace(pod, **{other: None})
        if getattr(pod, own) is not None and not gates.generic:
            stripped.append(pod)
            pods[i] = dataclasses.replace(pod, **{own: None})
    if not stripped:
        return []
    first = stripped[0]
    return [f"{first.source}: Pod/{first.name}: spec.{json_name[own]} dropped from {len(stripped)} pod(s): the "
            f"{GENERIC_WORKLOAD} feature gate is off in Kubernetes {version.name} (the API server drops the field): "
            f"they are scheduled one by one, not as groups"]


# --------------------------------------------------------------------------- the scheduler's view

GroupKey = tuple[str, str]  # (namespace, group name); v1.35: the name is "workload/podGroup[/replicaKey]"


def group_key(pod: Pod) -> GroupKey | None:
    """The group a pod belongs to (`spec.schedulingGroup.podGroupName`, v1.35 `spec.workloadRef`), None: none."""
    if pod.scheduling_group is not None:
        return pod.namespace, pod.scheduling_group
    if pod.workload_ref is not None:
        name, group, replica = pod.workload_ref
        return pod.namespace, f"{name}/{group}" + (f"/{replica}" if replica else "")
    return None


@dataclass
class GroupTable:
    """The pod groups one run schedules: each group's PodGroup (v1.35: made from its Workload's pod group), the
    pods the scheduler knows in it (`podGroupState.allPods`, bound ones included) and the gates."""

    gates: WorkloadGates
    specs: dict[GroupKey, PodGroup] = field(default_factory=dict)
    missing: dict[GroupKey, str] = field(default_factory=dict)  # groups with no object: PreEnqueue's message
    known: Counter = field(default_factory=Counter)  # group → pods the scheduler knows in it

    @classmethod
    def build(cls, objects: ClusterObjects, version: KubeVersion | None, pods: Iterable[Pod]) -> GroupTable:
        table = cls(WorkloadGates.of(version))
        if not table.gates.generic:
            return table
        for pod in pods:
            key = group_key(pod)
            if key is None:
                continue
            table.known[key] += 1
            if key in table.specs or key in table.missing:
                continue
            spec = _spec_of(objects, pod)
            if isinstance(spec, str):
                table.missing[key] = spec
            else:
                table.specs[key] = spec
        return table

    def __bool__(self) -> bool:
        return bool(self.known)

    def pre_enqueue(self, key: GroupKey) -> str | None:
        """GangScheduling's PreEnqueue for a pod of group `key`: None (it may enter the queue) or the rejection."""
        if key in self.missing:
            return self.missing[key]
        spec = self.specs[key]
        if self.gates.gang and spec.policy.gang and self.known[key] < spec.policy.min_count:
            return WAITING_FOR_QUORUM
        return None

    def label(self, key: GroupKey) -> str:
        return f"{key[0]}/{key[1]}"


def _spec_of(objects: ClusterObjects, pod: Pod) -> PodGroup | str:
    """The pod's PodGroup (v1.35: its Workload's pod group as one), or the PreEnqueue message of it missing."""
    if pod.scheduling_group is not None:
        found = objects.named("PodGroup", pod.namespace, pod.scheduling_group)
        return found if found is not None else waiting_for_group(pod.scheduling_group)
    name, group, replica = pod.workload_ref  # type: ignore[misc]
    workload = objects.named("Workload", pod.namespace, name)
    if workload is None:
        return waiting_for_workload(name)
    template = workload.template(group)
    if template is None:
        return no_such_template(group, name)
    label = f"{name}/{group}" + (f"/{replica}" if replica else "")
    return PodGroup(ObjectMeta(label, pod.namespace, source=workload.meta.source), workload.api_version,
                    template.policy, template.topology_keys, template.disruption_mode,
                    template.priority_class_name, template.priority, template.preemption_policy, (name, group))


def member_order(pods: Sequence[Pod], quorum: int) -> list[Pod]:
    """The order of a group's pods in its cycle (`podGroupInfoForPod`: higher priority first, then earlier
    `InitialAttemptTimestamp`). That timestamp is set when a pod first passes PreEnqueue: a gang's pods created one
    after another wait until the one that completes `minCount` (the `quorum`-th, which enters the queue at once),
    then the others are moved in (in Go map order: kubefit keeps their queue order), and pods created after it each
    enter as they come. `pods` are in queue order; `quorum` 1 (or 0) keeps them so."""
    if quorum > 1 and len(pods) >= quorum:
        pods = [pods[quorum - 1], *pods[:quorum - 1], *pods[quorum:]]
    return sorted(pods, key=lambda p: -p.priority)  # a stable sort: the order above among equal priorities


PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def validation_error(pods: Sequence[Pod], bound: Iterable[Pod], spec: PodGroup | None, profiles: set[str],
                     policy_gate: bool) -> str | None:
    """v1.37's `validatePodGroup` (kubernetes#139920, #140359): the group's pods, in cycle order, then its bound ones,
    must name one scheduler, have the PodGroup's priority (`util.PodGroupPriority`) and one preemption policy (with
    PodGroupPreemptionPolicy: the PodGroup's, PreemptLowerPriority unset); the first breach, else a scheduler name no
    profile has, is the error every pod of the group fails with (None: none)."""
    scheduler = pods[0].scheduler_name if pods else ""
    group_priority = priority_of(spec)
    group_policy = (getattr(spec, "preemption_policy", None) or PREEMPT_LOWER_PRIORITY) if policy_gate else ""
    for pod in (*pods, *bound):
        if pod.scheduler_name != scheduler:
            return (f"all pods in a single pod group should have the same .spec.schedulerName set, got: "
                    f'"{pod.scheduler_name}" and "{scheduler}"')
        if pod.priority != group_priority:
            return (f"all pods in a single pod group should have the same priority as the pod group's priority, got "
                    f"{pod.priority} and {group_priority}")
        policy = pod.preemption_policy or PREEMPT_LOWER_PRIORITY
        if policy_gate and policy != group_policy:
            return (f"all pods in a single pod group should have the same preemption policy as the pod group's "
                    f"preemption policy, got {policy} and {group_policy}")
        if not policy_gate and group_policy and policy != group_policy:
            return f"all pods in a single pod group should have the same preemption policy, got {policy} and {group_policy}"
        group_policy = group_policy or policy
    if scheduler not in profiles:
        return f'profile not found for scheduler name "{scheduler}"'
    return None


def group_priority(spec: PodGroup | None) -> int:
    return priority_of(spec)
