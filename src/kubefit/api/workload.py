"""Workload-aware scheduling objects of `scheduling.k8s.io` as kube-scheduler reads them: Workload (its pod group
templates), PodGroup (the runtime group a pod names in `spec.schedulingGroup`) and CompositePodGroup (v1.37).

One shape for every served API version: v1alpha1 (v1.35: `Workload.spec.podGroups[]`, no PodGroup object: a pod
names `spec.workloadRef{name, podGroup, podGroupReplicaKey}`), v1alpha2 (v1.36: `podGroupTemplates[]` and PodGroup
with `podGroupTemplateRef.workload`, `disruptionMode` a string), v1beta1 / v1alpha3 (v1.37: `workloadRef`,
`disruptionMode: {single|all}`, `preemptionPolicy`, `parentCompositePodGroupName`). Sources: `k8s.io/api`
`scheduling/v1alpha1/types.go` of v0.35 (openshift-kni/scheduler-plugins' vendor tree), `scheduling/v1alpha2` of
v0.36.3 (kubernetes-sigs/kueue's), `scheduling/v1beta1` and `v1alpha3` of kubernetes/api (v0.37).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubefit.api.cluster import ObjectMeta

GANG, BASIC = "gang", "basic"
DISRUPT_POD, DISRUPT_POD_GROUP = "Pod", "PodGroup"  # v1alpha2's values; v1beta1's `single` / `all` map to them


@dataclass(frozen=True)
class SchedulingPolicy:
    """`schedulingPolicy` (v1alpha1: `policy`): exactly one of `basic: {}` and `gang: {minCount}`."""

    kind: str = BASIC
    min_count: int = 0  # gang only

    @property
    def gang(self) -> bool:
        return self.kind == GANG


@dataclass(frozen=True)
class PodGroupTemplate:
    """One pod group of a Workload (v1alpha1 `podGroups[]`, later `podGroupTemplates[]`)."""

    name: str
    policy: SchedulingPolicy
    topology_keys: tuple[str, ...] = ()  # schedulingConstraints.topology[].key
    disruption_mode: str = DISRUPT_POD
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None  # v1.37 (PodGroupPreemptionPolicy)


@dataclass(frozen=True)
class Workload:
    """`scheduling.k8s.io` Workload: the templates a controller makes its PodGroups from."""

    meta: ObjectMeta
    api_version: str
    templates: tuple[PodGroupTemplate, ...] = ()
    composite_templates: tuple[str, ...] = ()  # names of compositePodGroupTemplates (v1.37, read not scheduled)
    gated: tuple[str, ...] = field(default=(), compare=False)  # gated fields present (field paths), `served.py`

    def template(self, name: str) -> PodGroupTemplate | None:
        return next((t for t in self.templates if t.name == name), None)


@dataclass(frozen=True)
class GroupCondition:
    """The `PodGroupScheduled` (v1.37: `PodGroupInitiallyScheduled`) condition of a PodGroup's status."""

    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class PodGroup:
    """`scheduling.k8s.io` PodGroup (v1.36+): the runtime group its pods name in `spec.schedulingGroup`."""

    meta: ObjectMeta
    api_version: str
    policy: SchedulingPolicy
    topology_keys: tuple[str, ...] = ()
    disruption_mode: str = DISRUPT_POD
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None
    workload: tuple[str, str] | None = None  # (workloadName, template name) it was made from
    parent: str | None = None  # spec.parentCompositePodGroupName (v1.37)
    conditions: tuple[GroupCondition, ...] = ()
    gated: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class CompositePodGroup:
    """`scheduling.k8s.io/v1alpha3` CompositePodGroup (v1.37, gate CompositePodGroup): a group of groups."""

    meta: ObjectMeta
    api_version: str
    policy: SchedulingPolicy  # gang: minGroupCount (in min_count)
    parent: str | None = None
    workload: tuple[str, str] | None = None
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None


def priority_of(group: PodGroup | None) -> int:
    """`util.PodGroupPriority`: `spec.priority`, 0 when unset (v1.36.3 `pkg/scheduler/util/utils.go`)."""
    return 0 if group is None or group.priority is None else group.priority


@dataclass(frozen=True)
class SchedulerGang:
    """A PodGroup of another gang scheduler: coscheduling's `scheduling.x-k8s.io/v1alpha1` (kubernetes-sigs/
    scheduler-plugins, its pods labelled `scheduling.x-k8s.io/pod-group`) or Volcano's `scheduling.volcano.sh/v1beta1`
    (its pods annotated `scheduling.k8s.io/group-name`). `fields`: the spec fields set beside `minMember` (what a
    translation into the in-tree objects cannot carry), in the order the spec names them."""

    meta: ObjectMeta
    scheduler: str  # "coscheduling" / "Volcano"
    api_version: str
    min_member: int
    fields: tuple[str, ...] = ()
