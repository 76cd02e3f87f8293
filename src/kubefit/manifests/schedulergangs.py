"""The PodGroups of the gang schedulers people run today, read as what they are: another scheduler's objects.

- coscheduling's `scheduling.x-k8s.io/v1alpha1` PodGroup (the Coscheduling plugin of kubernetes-sigs/scheduler-plugins,
  run as a second scheduler): `spec{minMember, minResources, scheduleTimeoutSeconds}` (`apis/scheduling/v1alpha1/
  types.go`; its CRD `manifests/coscheduling/crd.yaml`: `minMember` at least 1). A pod joins by the label
  `scheduling.x-k8s.io/pod-group: NAME` (`v1alpha1.PodGroupLabel`, read by `pkg/util/podgroup.go`
  `GetPodGroupLabel`).
- Volcano's `scheduling.volcano.sh/v1beta1` PodGroup: `spec{minMember, minTaskMember, queue, priorityClassName,
  minResources, networkTopology, subGroupPolicy}` (volcano-sh/apis `pkg/apis/scheduling/v1beta1/types.go`; its CRD
  volcano-sh/volcano `config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml`: `minMember` at least 0, `queue`
  a DNS subdomain of at most 253 characters, `networkTopology.mode` hard or soft). A pod joins by the annotation
  `scheduling.k8s.io/group-name: NAME`: the one Volcano's scheduler reads (`pkg/scheduler/api/job_info.go`
  `getJobID`, `v1beta1.KubeGroupNameAnnotationKey`); `scheduling.volcano.sh/group-name` is read only by its vGPU
  device plugin, so it makes no member here.

Decoded strictly (an unknown field refused by its path, as `kubectl apply`'s strict field validation refuses it) and
validated as the API server validates a custom resource against its CRD's openAPI schema (the schema's messages).
kube-scheduler reads neither: `kubefit.scheduler.gangtranslation` says so, or translates them
(`--gangs-as-workloads`) into the in-tree Workload and PodGroup of the version answered for.
"""

from __future__ import annotations

from typing import Any

from kubefit.api.core import Pod, raw_may_name
from kubefit.api.workload import SchedulerGang
from kubefit.k8s.validation import dns1123_subdomain_errors
from kubefit.manifests.cluster import label_selector, object_meta
from kubefit.manifests.decode import (
    check_fields,
    decode_quantities,
    entries,
    fail,
    integer,
    mapping,
    sequence,
    string,
)
from kubefit.manifests.documents import Document

COSCHEDULING, VOLCANO = "scheduling.x-k8s.io", "scheduling.volcano.sh"
COSCHEDULING_LABEL = f"{COSCHEDULING}/pod-group"  # v1alpha1.PodGroupLabel
VOLCANO_ANNOTATION = "scheduling.k8s.io/group-name"  # v1beta1.KubeGroupNameAnnotationKey
# the kind each is stored under in the scenario's ClusterObjects (kubectl's kind.group)
KIND_OF = {COSCHEDULING: f"PodGroup.{COSCHEDULING}", VOLCANO: f"PodGroup.{VOLCANO}"}
API_VERSION = {COSCHEDULING: f"{COSCHEDULING}/v1alpha1", VOLCANO: f"{VOLCANO}/v1beta1"}  # the one each CRD serves
SCHEDULER = {COSCHEDULING: "coscheduling", VOLCANO: "Volcano"}
MIN_MEMBER = {COSCHEDULING: 1, VOLCANO: 0}  # the CRDs' `minimum`

_OBJECT = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_SPEC = {COSCHEDULING: ("minMember", "minResources", "scheduleTimeoutSeconds"),
         VOLCANO: ("minMember", "minTaskMember", "queue", "priorityClassName", "minResources", "networkTopology",
                   "subGroupPolicy")}
_STATUS = {COSCHEDULING: frozenset({"phase", "occupiedBy", "running", "succeeded", "failed", "scheduleStartTime"}),
           VOLCANO: frozenset({"phase", "conditions", "running", "succeeded", "failed"})}
_VOLCANO_PHASES = ("Pending", "Running", "Unknown", "Inqueue", "Completed")
_VOLCANO_CONDITION = frozenset({"type", "status", "transitionID", "lastTransitionTime", "reason", "message"})
_NETWORK_TOPOLOGY = frozenset({"mode", "highestTierAllowed", "highestTierName"})
_SUB_GROUP = frozenset({"name", "networkTopology", "subGroupSize", "minSubGroups", "labelSelector", "matchLabelKeys"})
_MAX_LENGTH = 253
INT32_MAX = 2**31 - 1


def group_of(doc: Document) -> str | None:
    """The API group of a coscheduling or Volcano PodGroup document, None for any other document."""
    if doc.kind != "PodGroup":
        return None
    version = doc.body.get("apiVersion")
    group = version.split("/", 1)[0] if isinstance(version, str) else ""
    return group if group in KIND_OF else None


def decode_scheduler_gang(doc: Document) -> SchedulerGang:
    """A coscheduling or Volcano PodGroup, its fields checked as the API server checks them against its CRD."""
    group = group_of(doc)
    assert group is not None
    version = doc.body.get("apiVersion")
    if version != API_VERSION[group]:
        raise fail(doc, "apiVersion", f'no matches for kind "PodGroup" in version "{version}" (the {SCHEDULER[group]} '
                                      f"CRD serves {API_VERSION[group]})")
    check_fields(doc.body, _OBJECT, doc, "")
    meta, spec, status = object_meta(doc)
    check_fields(spec, frozenset(_SPEC[group]), doc, "spec")
    member = _int32(spec.get("minMember"), doc, "spec.minMember", MIN_MEMBER[group])
    decode_quantities(spec.get("minResources"), doc, "spec.minResources")
    if group == COSCHEDULING:
        _int32(spec.get("scheduleTimeoutSeconds"), doc, "spec.scheduleTimeoutSeconds")
    else:
        _volcano_spec(spec, doc)
    _status(status, group, doc)
    fields = tuple(k for k in _SPEC[group] if k != "minMember" and spec.get(k) not in (None, "", {}, []))
    return SchedulerGang(meta, SCHEDULER[group], API_VERSION[group], member, fields)


def pod_gang(pod: Pod) -> tuple[str, str] | None:
    """(API group, PodGroup name) of the group a pod joins by coscheduling's label or Volcano's annotation; None:
    neither (a pod carrying both is coscheduling's: its label is read first, as its scheduler would)."""
    name = pod.labels.get(COSCHEDULING_LABEL)
    if name:
        return COSCHEDULING, name
    if not raw_may_name(pod, VOLCANO_ANNOTATION):  # a snapshot's manifest not decoded for nothing
        return None
    annotations = (pod.raw.get("metadata") or {}).get("annotations") or {}
    name = annotations.get(VOLCANO_ANNOTATION)
    return (VOLCANO, str(name)) if name else None


def _int32(value: Any, doc: Document, path: str, minimum: int | None = None) -> int:
    """An optional int32 field (absent: 0, the Go zero value, whose `minimum` the schema does not check)."""
    if value is None:
        return 0
    number = integer(value, doc, path)
    if minimum is not None and number < minimum:
        raise fail(doc, path, f"Invalid value: {number}: {path} in body should be greater than or equal to {minimum}")
    if not -INT32_MAX - 1 <= number <= INT32_MAX:
        raise fail(doc, path, f"Invalid value: {number}: must be an int32 (format int32)")
    return number


def _bounded_string(value: Any, doc: Document, path: str) -> str:
    """A string of at most 253 characters (the CRD's `maxLength`)."""
    text = string(value, doc, path)
    if len(text) > _MAX_LENGTH:
        raise fail(doc, path, f"Too long: may not be more than {_MAX_LENGTH} bytes")
    return text


def _volcano_spec(spec: dict[str, Any], doc: Document) -> None:
    """Volcano's own fields: minTaskMember's counts, the queue's name, networkTopology, subGroupPolicy."""
    for task, count in mapping(spec.get("minTaskMember"), doc, "spec.minTaskMember").items():
        _int32(count, doc, f"spec.minTaskMember.{task}")
    queue = _bounded_string(spec.get("queue"), doc, "spec.queue")
    if queue and dns1123_subdomain_errors(queue):
        pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
        raise fail(doc, "spec.queue", f'Invalid value: "{queue}": spec.queue in body should match \'{pattern}\'')
    _bounded_string(spec.get("priorityClassName"), doc, "spec.priorityClassName")
    _network_topology(spec.get("networkTopology"), doc, "spec.networkTopology")
    for where, sub in entries(spec.get("subGroupPolicy"), doc, "spec.subGroupPolicy", _SUB_GROUP,
                              "a sub-group policy (a mapping)"):
        _bounded_string(sub.get("name"), doc, f"{where}.name")
        _network_topology(sub.get("networkTopology"), doc, f"{where}.networkTopology")
        _int32(sub.get("subGroupSize"), doc, f"{where}.subGroupSize", 1)
        _int32(sub.get("minSubGroups"), doc, f"{where}.minSubGroups", 0)
        label_selector(sub.get("labelSelector"), doc, f"{where}.labelSelector")
        for i, key in enumerate(sequence(sub.get("matchLabelKeys"), doc, f"{where}.matchLabelKeys")):
            string(key, doc, f"{where}.matchLabelKeys[{i}]")


def _network_topology(value: Any, doc: Document, path: str) -> None:
    """`NetworkTopologySpec`: mode hard or soft, highestTierAllowed at least 0, highestTierName."""
    topology = mapping(value, doc, path)
    check_fields(topology, _NETWORK_TOPOLOGY, doc, path)
    mode = string(topology.get("mode"), doc, f"{path}.mode")
    if mode and mode not in ("hard", "soft"):
        raise fail(doc, f"{path}.mode", f'Unsupported value: "{mode}": supported values: "hard", "soft"')
    _int32(topology.get("highestTierAllowed"), doc, f"{path}.highestTierAllowed", 0)
    _bounded_string(topology.get("highestTierName"), doc, f"{path}.highestTierName")


def _status(status: dict[str, Any], group: str, doc: Document) -> None:
    """The status the other scheduler's controller writes: its fields known, Volcano's phase one of its enum."""
    check_fields(status, _STATUS[group], doc, "status")
    phase = string(status.get("phase"), doc, "status.phase")
    if group == VOLCANO and phase and phase not in _VOLCANO_PHASES:
        supported = ", ".join(f'"{p}"' for p in _VOLCANO_PHASES)
        raise fail(doc, "status.phase", f'Unsupported value: "{phase}": supported values: {supported}')
    for count in ("running", "succeeded", "failed"):
        _int32(status.get(count), doc, f"status.{count}", 0 if group == VOLCANO else None)
    if group == VOLCANO:
        for where, condition in entries(status.get("conditions"), doc, "status.conditions", _VOLCANO_CONDITION,
                                        "a condition (a mapping with type and status)"):
            for key in ("type", "status", "transitionID", "lastTransitionTime", "reason", "message"):
                string(condition.get(key), doc, f"{where}.{key}")
    else:
        for key in ("occupiedBy", "scheduleStartTime"):
            string(status.get(key), doc, f"status.{key}")
