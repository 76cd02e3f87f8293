"""A scenario made ready for scheduling: its configuration, one Framework per profile, the cluster state."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kubefit.api.core import Pod
from kubefit.errors import InputError
from kubefit.k8s.requests import resize_footprint_may_differ
from kubefit.k8s.version import RESIZE_FOOTPRINT_MAX_OF_SUMS, KubeVersion, default_version
from kubefit.manifests.kinds import unserved_in
from kubefit.manifests.load import Scenario, pending_in_order
from kubefit.manifests.priority import priority_classes
from kubefit.scheduler.config import SchedulerConfiguration, load_configuration
from kubefit.scheduler.dra.notes import unevaluated_device_features
from kubefit.scheduler.engine import num_feasible_nodes_to_find, percentage_of_nodes_to_score
from kubefit.scheduler.framework import CycleResult, Framework, profile_framework, schedule_one
from kubefit.scheduler.gangtranslation import scheduler_gang_notes, translate
from kubefit.scheduler.podgroups import WORKLOAD_WITH_JOB, prepare_groups
from kubefit.scheduler.postfilter import filters_after_preemption, post_filter_for
from kubefit.scheduler.state import ClusterState, compile_state


@dataclass
class Prepared:
    scenario: Scenario
    config: SchedulerConfiguration
    state: ClusterState
    frameworks: dict[str, Framework] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # said once to the user (stderr)
    legacy: bool = False  # score on the v1.16 0..10 scale (`--scoring legacy`)

    def framework(self, pod: Pod) -> Framework:
        """The framework of the profile that schedules `pod` (`spec.schedulerName`)."""
        return profile_framework(self.frameworks, self.config, pod, legacy=self.legacy,
                                 objects=self.state.objects)


def prepare(scenario: Scenario, config: SchedulerConfiguration | None = None, *,
            scoring: str | None = None, nodes_required: bool = True, version: KubeVersion | None = None,
            gangs_as_workloads: bool = False) -> Prepared:
    """Load the configuration, compile nodes and bound pods; collect what the user should be told.

    `scoring` is "v1.34" or "legacy" (the pre-1.17 0..10 scale); None means legacy for a `Policy`
    file (the dialect it was written for) and v1.34 otherwise. `nodes_required=False`: a scenario
    without Node objects is prepared too (`plan` sizes a cluster from zero). `version`: the Kubernetes version
    the configuration is decoded and the plugins are built for (None: `kubefit.k8s.version.default_version()`).
    `gangs_as_workloads`: coscheduling's and Volcano's PodGroups translated into the version's Workload and
    PodGroup (`kubefit.scheduler.gangtranslation`); else they are said to be another scheduler's.
    """
    if not scenario.nodes and nodes_required:
        raise InputError("the scenario has no Node objects", file=scenario.files)
    config = config or load_configuration(scenario.scheduler_config, version)
    answered = config.version or version or default_version()
    refuse_unserved(scenario, answered)
    known = {n.name for n in scenario.nodes}
    notes = list(scenario.warnings) + list(config.notes)
    served = [p.scheduler_name for p in config.profiles]
    if gangs_as_workloads:  # coscheduling's and Volcano's PodGroups as the version's own (`--gangs-as-workloads`)
        notes += translate(scenario.objects, scenario.pods, answered, served)
    else:
        notes += scheduler_gang_notes(scenario.objects, scenario.pods, set(served), answered)
    notes += prepare_groups(scenario.objects, scenario.pods, answered, priority_classes(scenario))
    notes += job_workload_notes(scenario, answered)
    for pod in scenario.pods:  # one pass over the pods, `bound` asked only of those on an unknown node
        if pod.node_name not in known and pod.bound:
            notes.append(f"{pod.source}: Pod/{pod.name}: spec.nodeName {pod.node_name!r} is not a node of the "
                         f"scenario; the pod is not counted anywhere")
    profiles = {p.scheduler_name for p in config.profiles}
    strangers = pending_in_order([p for p in scenario.pods if p.scheduler_name not in profiles])
    if strangers:
        notes.append(f"{len(strangers)} pending pod(s) name a schedulerName no profile has (e.g. {strangers[0].key}: "
                     f"{strangers[0].scheduler_name!r}); kube-scheduler leaves them pending, and so does kubefit "
                     f"(`score` still scores them with profile {config.profiles[0].scheduler_name})")
    for profile in config.profiles:
        if profile.not_simulated:
            notes.append(f"profile {profile.scheduler_name}: plugins not simulated by kubefit: "
                         f"{', '.join(profile.not_simulated)}")
    notes += unevaluated_pod_fields(scenario.pods)
    notes += unevaluated_device_features(list(scenario.objects.of("ResourceSlice")), config.version,
                                         list(scenario.objects.of("DeviceClass")))
    if answered.has(RESIZE_FOOTPRINT_MAX_OF_SUMS):
        notes += resize_footprint_notes(scenario.pods)
    if scoring not in (None, "v1.34", "legacy"):
        raise InputError(f"--scoring must be v1.34 or legacy, got {scoring!r}")
    legacy = config.legacy_scoring if scoring is None else scoring == "legacy"
    scenario.objects.api_server = replace(scenario.objects.api_server,  # the gates of what runs create
                                          extended_resource=answered.gate("DRAExtendedResource"),
                                          admin_access=answered.gate("DRAAdminAccess"))
    state = compile_state(scenario.nodes, scenario.pods, scenario.objects)
    if state.dra is not None and scenario.objects.api_server.admission and answered.gate("DRAAdminAccess"):
        from kubefit.scheduler.dra.controller import admin_namespaces, stored_admin_notes, unknown_class_notes

        notes += stored_admin_notes(scenario.objects, admin_namespaces(scenario.objects))
        notes += unknown_class_notes(scenario.objects)
    return Prepared(scenario, config, state, notes=notes, legacy=legacy)


def job_workload_notes(scenario: Scenario, version: KubeVersion) -> list[str]:
    """With WorkloadWithJob on (v1.36+, alpha), the Job controller makes a Workload and a PodGroup for a Job it
    manages (kubernetes#137032, #140188, `workloadbuilder`); kubefit does not make them, so a Job's pods are
    scheduled as ungrouped pods: said once, naming the first Job."""
    if not version.gate(WORKLOAD_WITH_JOB):
        return []
    jobs = [d for d in scenario.workloads if d.kind == "Job"]
    if not jobs:
        return []
    return [f"{jobs[0].source}: {jobs[0].label}: with WorkloadWithJob on, the Job controller makes a Workload and a "
            f"PodGroup for each of the {len(jobs)} Job(s) (kubernetes#137032), which kubefit does not: their pods "
            f"are scheduled one by one, not as pod groups"]


def refuse_unserved(scenario: Scenario, version: KubeVersion) -> None:
    """What this version's API server refuses and another supported one serves: a kind in an API version it does
    not serve (`certificates.k8s.io/v1 ClusterTrustBundle` before v1.37), a field a gate of its keeps off
    (`minReplicas: 0` without HPAScaleToZero); refused with the API server's words."""
    unserved = unserved_in(scenario.skipped, version.minor)
    if unserved is not None:
        raise InputError(unserved[1], file=unserved[0].source, obj=unserved[0].label, field="apiVersion")
    for refusal in scenario.gated_refusals:
        error = refusal.when_on if version.gate(refusal.gate) else refusal.when_off
        if error is not None:
            raise error


def resize_footprint_notes(pods: list[Pod]) -> list[str]:
    """v1.37 counts a resizing pod's requests as the max of sums (kubernetes#140047), which kubefit does not
    reproduce: one note naming the bound pods whose count can differ (only pods with resized statuses read)."""
    differing = [p for p in pods if p.bound and p.container_statuses and resize_footprint_may_differ(p)]
    if not differing:
        return []
    return [f"{differing[0].source}: Pod/{differing[0].name}: {len(differing)} bound pod(s) are being resized in "
            f"several containers; Kubernetes 1.37 counts their requests as the largest of the sums of desired, "
            f"allocated and actuated requests (kubernetes#140047), which kubefit does not reproduce: it counts "
            f"each container's largest, as 1.36 does, which can be more"]


def unevaluated_pod_fields(pods: list[Pod]) -> list[str]:
    """One note per pod field kubefit does not evaluate the way a cluster would (the first pod named)."""
    notes = []
    keyed = [p for p in pods if p.affinity and any(term.get(k) for term in _pod_affinity_terms(p)
                                    for k in ("matchLabelKeys", "mismatchLabelKeys"))]
    if keyed:
        notes.append(f"{keyed[0].source}: Pod/{keyed[0].name}: pod (anti-)affinity matchLabelKeys/mismatchLabelKeys "
                     f"are merged into the labelSelector by the API server when a pod is created, not by the "
                     f"scheduler; kubefit uses the {len(keyed)} pod(s) as given (their keys are not applied)")
    resized = next((p for p in pods if p.bound and p.pod_requests is not None
                    and any(k in ((p.raw.get("status") or {})) for k in ("resources", "allocatedResources"))), None)
    if resized is not None:
        notes.append(f"{resized.source}: Pod/{resized.name}: status.resources/allocatedResources at pod level (an "
                     f"in-place resize of pod-level resources, InPlacePodLevelResourcesVerticalScaling) are not "
                     f"evaluated: kubefit accounts the pod from spec.resources")
    return notes


def _pod_affinity_terms(pod: Pod) -> list[dict]:
    out = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = (pod.affinity or {}).get(kind) or {}
        out += list(section.get("requiredDuringSchedulingIgnoredDuringExecution") or ())
        out += [(w or {}).get("podAffinityTerm") or {} for w in
                section.get("preferredDuringSchedulingIgnoredDuringExecution") or ()]
    return out


def find_pending_pod(scenario: Scenario, name: str | None) -> Pod:
    """The pod to score: `name` (`pod` or `namespace/pod`), else the first pending pod in queue order."""
    pending = scenario.pending_pods
    if name is None:
        if not pending:
            raise InputError("the scenario has no pending pod (a Pod without spec.nodeName) to schedule",
                             file=scenario.files)
        return pending[0]
    for pod in pending:
        if name in (pod.name, pod.key):
            return pod
    bound = [p for p in scenario.bound_pods if name in (p.name, p.key)]
    if bound:
        raise InputError(f"pod {name!r} is already bound to node {bound[0].node_name!r}; "
                         f"only pending pods (no spec.nodeName) are scheduled", file=bound[0].source)
    names = ", ".join(p.key for p in pending[:10]) or "none"
    raise InputError(f"no pending pod named {name!r} (pending pods: {names})", file=scenario.files)


def score_pod(prepared: Prepared, pod: Pod) -> CycleResult:
    """One scheduling cycle over every node, scoring the feasible ones (what `kubefit score` shows)."""
    if not prepared.state.nodes:
        raise InputError("the scenario has no Node objects", file=prepared.scenario.files)
    fw = prepared.framework(pod)
    result = schedule_one(fw, prepared.state, pod)
    if not len(result.feasible) and not getattr(result, "pre_enqueue", None):
        post = result.post_filter = post_filter_for(fw, prepared.state, pod, result)  # PostFilter: preemption
        if post.nominated_node is not None:  # victims deleted: each plugin alone now sees them gone
            result.filter_by_plugin = filters_after_preemption(fw, prepared.state, pod, post)
    return result


def sampling_note(prepared: Prepared, pod: Pod, result: CycleResult) -> str | None:
    """What `score` (every node) shows beyond kube-scheduler's cycle: when the pod has more feasible nodes
    than `numFeasibleNodesToFind`, the real cycle scores only that many (SPEC §7); None otherwise."""
    fw = prepared.framework(pod)
    names = result.pre_filter_node_names
    searched = len(prepared.state) if names is None else sum(1 for n in prepared.state.nodes if n.name in names)
    pct = percentage_of_nodes_to_score(prepared.config, fw.profile)
    k = num_feasible_nodes_to_find(pct, searched) if fw.scorers else 1
    if len(result.feasible) <= k:
        return None
    setting = f"percentageOfNodesToScore {pct}" if pct else "percentageOfNodesToScore unset: adaptive"
    return (f"kube-scheduler stops searching the {searched} nodes for pod {pod.key} at {k} feasible ones ({setting}) "
            f"and scores only those, from where its previous cycle stopped; `score` shows all {len(result.feasible)} "
            f"feasible nodes, `simulate` searches as kube-scheduler does")
