"""Gangs people have today (coscheduling's and Volcano's PodGroups, `kubefit.manifests.schedulergangs`) as
kube-scheduler sees them, and `--gangs-as-workloads`: the same groups as the in-tree objects of the version answered
for, to see what kube-scheduler's own gang scheduling would do with those jobs.

Without the option (`scheduler_gang_notes`): kube-scheduler reads neither CRD. A member pod whose `schedulerName`
names the other scheduler is that scheduler's (no profile serves it: it stays pending, with the scenario's note on
unserved scheduler names); any other member is scheduled one by one like every pod, its group ignored.

With it (`translate`), each PodGroup becomes what a controller using the in-tree API would create, its name and
namespace kept, one pod group template named `gang`:

| Kubernetes | objects | a member pod names it in |
|---|---|---|
| 1.35 | `scheduling.k8s.io/v1alpha1` Workload, `spec.podGroups[{name: gang}]` | `spec.workloadRef{name, podGroup: gang}` |
| 1.36 | `v1alpha2` Workload (`podGroupTemplates`) and PodGroup (`podGroupTemplateRef.workload`) | `spec.schedulingGroup.podGroupName` |
| 1.37 | `v1beta1` Workload and PodGroup | `spec.schedulingGroup.podGroupName` |

`minMember` becomes `schedulingPolicy: {gang: {minCount}}`; `minMember` 0 or absent (a group that needs no quorum)
the `basic` policy. The PodGroup takes the priority its members share, where the version's PodGroup has the field
(v1.37's group cycle refuses a group whose pods' priority is not its PodGroup's). The member pods are handed to the configuration's first profile when their `schedulerName` is
one no profile serves (the jobs as if submitted to kube-scheduler). With `GenericWorkload` off (and on v1.34, which
has no such API) nothing is translated: the members are scheduled one by one, and a note says so. What does not
translate is said per group: coscheduling's `minResources` and `scheduleTimeoutSeconds`; Volcano's `queue`,
`priorityClassName`, `minResources`, `minTaskMember`, `networkTopology` and `subGroupPolicy`.
"""

from __future__ import annotations

import dataclasses

from kubefit.api.cluster import ClusterObjects, ObjectMeta
from kubefit.api.core import Pod
from kubefit.api.workload import (
    BASIC,
    GANG,
    PodGroup,
    PodGroupTemplate,
    SchedulerGang,
    SchedulingPolicy,
    Workload,
)
from kubefit.errors import InputError
from kubefit.k8s.version import KubeVersion
from kubefit.manifests.podgroups import V1ALPHA1
from kubefit.manifests.schedulergangs import (
    COSCHEDULING_LABEL,
    KIND_OF,
    SCHEDULER,
    VOLCANO_ANNOTATION,
    pod_gang,
)
from kubefit.scheduler.podgroups import GENERIC_WORKLOAD, WorkloadGates, field_gate_on, served_api_versions

TEMPLATE = "gang"  # the one pod group template of a translated Workload
TRANSLATED = "kubefit.io/translated-from:"  # the uid prefix of the objects `translate` made (made again per version)
UNTRANSLATED = {  # spec field -> what kube-scheduler's gang scheduling has not of it
    "minResources": "minResources (kube-scheduler checks no minimum of resources for a group)",
    "scheduleTimeoutSeconds": "scheduleTimeoutSeconds (kube-scheduler has no per-group timeout: v1.35's "
                              "GangScheduling Permit waits its fixed 5 minutes, v1.36+ decide a group in one cycle)",
    "queue": "queue (Volcano's queues and their quotas)",
    "priorityClassName": "priorityClassName (the pods keep their own priority, and the PodGroup takes theirs)",
    "minTaskMember": "minTaskMember (per-task minimums)",
    "networkTopology": "networkTopology (Volcano's HyperNode tiers)",
    "subGroupPolicy": "subGroupPolicy (Volcano's sub-group gangs)",
}
_NAMED_BY = {"coscheduling": f"label {COSCHEDULING_LABEL}", "Volcano": f"annotation {VOLCANO_ANNOTATION}"}


def scheduler_gangs(objects: ClusterObjects) -> list[SchedulerGang]:
    """The scenario's coscheduling and Volcano PodGroups, coscheduling's first, each in document order."""
    return [g for kind in KIND_OF.values() for g in objects.of(kind)]


def members(gangs: list[SchedulerGang], pods: list[Pod]) -> list[tuple[int, Pod, SchedulerGang]]:
    """The pods that join one of `gangs` (their label or annotation names a PodGroup of their namespace of that
    scheduler), bound ones too (they count towards the quorum as the in-tree group's bound pods do), with their index
    in `pods`."""
    by_key = {(g.scheduler, g.meta.namespace, g.meta.name): g for g in gangs}
    found = []
    for i, pod in enumerate(pods):
        joined = pod_gang(pod)
        if joined is not None:
            gang = by_key.get((SCHEDULER[joined[0]], pod.namespace, joined[1]))
            if gang is not None:
                found.append((i, pod, gang))
    return found


def scheduler_gang_notes(objects: ClusterObjects, pods: list[Pod], served: set[str], version: KubeVersion) -> list[str]:
    """What kube-scheduler does with the scenario's coscheduling and Volcano PodGroups and their pods (nothing of the
    groups): one note per scheduler that has some."""
    gangs = scheduler_gangs(objects)
    if not gangs:
        return []
    joined = members(gangs, pods)
    notes = []
    for scheduler in ("coscheduling", "Volcano"):
        own = [g for g in gangs if g.scheduler == scheduler]
        if not own:
            continue
        pending = [p for _, p, g in joined if g.scheduler == scheduler and not p.bound]
        elsewhere = sum(1 for p in pending if p.scheduler_name not in served)
        first = own[0]
        notes.append(f"{first.meta.source}: PodGroup/{first.meta.name}"
                     f"{f' and {len(own) - 1} more' if len(own) > 1 else ''} ({first.api_version}): {scheduler}'s "
                     f"objects, not kube-scheduler's: it ignores them; of the {len(pending)} pending pod(s) joining "
                     f"them "
                     f"({_NAMED_BY[scheduler]}), {elsewhere} name a schedulerName no profile serves ({scheduler}'s "
                     f"scheduler's: pending here) and {len(pending) - elsewhere} are scheduled one by one, not as "
                     f"gangs; --gangs-as-workloads translates the groups into Kubernetes {version.name}'s Workload and "
                     f"PodGroup to show what kube-scheduler's gang scheduling would do")
    return notes


def translate(objects: ClusterObjects, pods: list[Pod], version: KubeVersion, served: list[str]) -> list[str]:
    """`--gangs-as-workloads` (see the module's text): the in-tree objects added to `objects`, the member pods'
    references (and unserved scheduler names) set in `pods`, in place; the notes saying what was translated and
    what does not translate. `served`: the profiles' scheduler names, the first taking the members no profile
    serves."""
    _forget_translated(objects, pods)
    gangs = scheduler_gangs(objects)
    if not gangs:
        return ["--gangs-as-workloads: the scenario has no coscheduling (scheduling.x-k8s.io) or Volcano "
                "(scheduling.volcano.sh) PodGroup to translate"]
    joined = members(gangs, pods)
    renamed = _hand_to_profile(pods, joined, served)
    if not WorkloadGates.of(version).generic:
        gates = f"{GENERIC_WORKLOAD}=true" + (",GangScheduling=true" if version.minor in (35, 36) else "")
        why = (f"with the {GENERIC_WORKLOAD} feature gate off (--feature-gates {gates})" if version.minor >= 35
               else "(no scheduling.k8s.io Workload before 1.35)")
        return [f"--gangs-as-workloads: Kubernetes {version.name} schedules no Workload or PodGroup {why}: the "
                f"{len(gangs)} PodGroup(s) are not translated and their {_pending(joined)} pending pod(s) are "
                f"scheduled one by one by profile {served[0]!r}"]
    api = next(v for v, kinds in served_api_versions(version).items() if "Workload" in kinds)
    priority = field_gate_on("priority", version)
    for gang in gangs:
        _add_objects(objects, gang, api, _members_priority(gang, joined) if priority else None)
    kept = 0
    for i, pod, gang in joined:
        if pod.workload_ref is not None or pod.scheduling_group is not None:
            kept += 1  # the pod names an in-tree group itself: its own reference wins
            continue
        ref = (dict(workload_ref=(gang.meta.name, TEMPLATE, ""), scheduling_group=None) if api == V1ALPHA1 else
               dict(scheduling_group=gang.meta.name, workload_ref=None))
        pods[i] = dataclasses.replace(pods[i], **ref)
    return _notes(gangs, _pending(joined), kept, renamed, served, api, version)


def _pending(joined: list[tuple[int, Pod, SchedulerGang]]) -> int:
    return sum(1 for _, pod, _gang in joined if not pod.bound)


def _hand_to_profile(pods: list[Pod], joined: list[tuple[int, Pod, SchedulerGang]], served: list[str]) -> list[str]:
    """The members whose schedulerName no profile serves, given to the first profile (bound ones too: a group's pods
    agree on their scheduler): the names the pending ones had."""
    renamed = []
    for i, pod, _gang in joined:
        if pod.scheduler_name not in served:
            if not pod.bound:
                renamed.append(pod.scheduler_name)
            pods[i] = dataclasses.replace(pod, scheduler_name=served[0])
    return renamed


def _members_priority(gang: SchedulerGang, joined: list[tuple[int, Pod, SchedulerGang]]) -> int | None:
    """The priority its members share (None when they disagree or it has none): what a controller gives the
    PodGroup it makes for them, so that the group's pods have the PodGroup's priority (v1.37's group cycle refuses a
    group whose pods do not: "all pods in a single pod group should have the same priority ...")."""
    found = {pod.priority for _, pod, g in joined if g is gang}
    return found.pop() if len(found) == 1 else None


def _add_objects(objects: ClusterObjects, gang: SchedulerGang, api: str, priority: int | None) -> None:
    """The Workload (one template `gang`) and, from v1.36, the PodGroup carrying `gang`'s minMember and its
    members' priority (where the version's PodGroup has the field); refused when the scenario has a
    `scheduling.k8s.io` object of that kind and name already (the API server's AlreadyExists)."""
    policy = SchedulingPolicy(GANG, gang.min_member) if gang.min_member > 0 else SchedulingPolicy(BASIC)
    meta = ObjectMeta(gang.meta.name, gang.meta.namespace, f"{TRANSLATED}{gang.meta.uid}", {}, gang.meta.source)
    made: list[tuple[str, object]] = [("Workload", Workload(meta, api, (PodGroupTemplate(TEMPLATE, policy),)))]
    if api != V1ALPHA1:
        made.append(("PodGroup", PodGroup(meta, api, policy, priority=priority, workload=(gang.meta.name, TEMPLATE))))
    for kind, obj in made:
        there = objects.named(kind, gang.meta.namespace, gang.meta.name)
        if there is not None:
            raise InputError(f'--gangs-as-workloads: {kind}.scheduling.k8s.io "{gang.meta.name}" already exists '
                             f"({there.meta.source}): the {gang.scheduler} PodGroup cannot be translated under its "
                             f"name", file=gang.meta.source, obj=f"PodGroup/{gang.meta.name}")
        objects.add(kind, obj)


def _forget_translated(objects: ClusterObjects, pods: list[Pod]) -> None:
    """What an earlier translation (for another version, `--compare-versions`) made is not this version's: its
    objects removed, its pods' references cleared."""
    names = {(g.meta.namespace, g.meta.name) for g in scheduler_gangs(objects)}
    for kind in ("Workload", "PodGroup"):
        if any(o.meta.uid.startswith(TRANSLATED) for o in objects.of(kind)):
            objects.replace_kind(kind, [o for o in objects.of(kind) if not o.meta.uid.startswith(TRANSLATED)])
    for i, pod in enumerate(pods):
        ref = pod.scheduling_group or (pod.workload_ref[0] if pod.workload_ref and pod.workload_ref[1] == TEMPLATE
                                       else None)
        if ref is not None and (pod.namespace, ref) in names and pod_gang(pod) is not None:
            pods[i] = dataclasses.replace(pod, scheduling_group=None, workload_ref=None)


def _notes(gangs: list[SchedulerGang], joined: int, kept: int, renamed: list[str], served: list[str], api: str,
           version: KubeVersion) -> list[str]:
    """The translation's notes: one for the whole, one per group with what does not translate."""
    kinds = "Workload" if api == V1ALPHA1 else "Workload and PodGroup"
    names = ", ".join(repr(n) for n in dict.fromkeys(renamed))
    handed = (f"; {len(renamed)} of them named schedulerName {names} (no profile's), scheduled by profile "
              f"{served[0]!r} instead" if renamed else "")
    own = f"; {kept} keep the in-tree group they name themselves" if kept else ""
    notes = [f"--gangs-as-workloads: {len(gangs)} PodGroup(s) of other gang schedulers translated into Kubernetes "
             f"{version.name}'s {api} {kinds} (minMember → gang minCount), joined by {joined} pending pod(s)"
             f"{handed}{own}"]
    for gang in gangs:
        left = [UNTRANSLATED[f] for f in gang.fields if f in UNTRANSLATED]
        if gang.min_member == 0:
            left.insert(0, "minMember 0 (no quorum: the basic policy, its pods scheduled one by one)")
        if left:
            notes.append(f"{gang.meta.source}: PodGroup/{gang.meta.name} ({gang.scheduler}): does not translate: "
                         f"{'; '.join(left)}")
    return notes
