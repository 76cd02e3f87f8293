"""A pod's reference to its pod group: v1.36+ `spec.schedulingGroup{podGroupName}` (core/v1 PodSchedulingGroup,
a union of one field, a DNS subdomain) and v1.35 `spec.workloadRef{name, podGroup, podGroupReplicaKey}` (core/v1
WorkloadReference: a DNS subdomain and DNS labels), decoded strictly with the API server's messages. Which version
knows which field is `kubefit.scheduler.podgroups`' to say; the objects they name are `manifests/podgroups.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubefit.k8s.validation import dns1123_label_errors, dns1123_subdomain_errors, go_quote
from kubefit.manifests.decode import check_fields, fail, mapping, string
from kubefit.manifests.documents import Document

POD_SCHEDULING_GROUP = frozenset({"podGroupName"})  # core/v1 PodSchedulingGroup (v1.36+)
POD_WORKLOAD_REF = frozenset({"name", "podGroup", "podGroupReplicaKey"})  # core/v1 WorkloadReference (v1.35)


def name_errors(doc: Document, path: str, value: str, rule: Callable[[str], list[str]]) -> None:
    """A name that breaks `rule` (a DNS-1123 label: `k8s-short-name`, or subdomain) is refused with its first error."""
    errors = rule(value)
    if errors:
        raise fail(doc, path, f"Invalid value: {go_quote(value)}: {errors[0]}")


def required_name(obj: dict[str, Any], key: str, doc: Document, path: str,
                   rule: Callable[[str], list[str]] = dns1123_label_errors) -> str:
    value = string(obj.get(key), doc, f"{path}.{key}")
    if not value:
        raise fail(doc, f"{path}.{key}", "Required value")
    name_errors(doc, f"{path}.{key}", value, rule)
    return value



def pod_group_reference(spec: dict[str, Any], doc: Document) -> dict[str, Any]:
    """A pod's `spec.schedulingGroup{podGroupName}` (v1.36+: exactly one field, a DNS subdomain) and
    `spec.workloadRef{name, podGroup, podGroupReplicaKey}` (v1.35: a DNS subdomain and DNS labels), as `Pod`
    fields; which version knows which is `kubefit.scheduler.podgroups`' to say."""
    out: dict[str, Any] = {}
    if spec.get("schedulingGroup") is not None:
        group = mapping(spec["schedulingGroup"], doc, "spec.schedulingGroup")
        check_fields(group, POD_SCHEDULING_GROUP, doc, "spec.schedulingGroup")
        if group.get("podGroupName") is None:
            raise fail(doc, "spec.schedulingGroup", "Invalid value: \"\": must specify one of: `podGroupName`")
        name = string(group.get("podGroupName"), doc, "spec.schedulingGroup.podGroupName")
        name_errors(doc, "spec.schedulingGroup.podGroupName", name, dns1123_subdomain_errors)
        out["scheduling_group"] = name
    if spec.get("workloadRef") is not None:
        ref = mapping(spec["workloadRef"], doc, "spec.workloadRef")
        check_fields(ref, POD_WORKLOAD_REF, doc, "spec.workloadRef")
        name = required_name(ref, "name", doc, "spec.workloadRef", dns1123_subdomain_errors)
        group = required_name(ref, "podGroup", doc, "spec.workloadRef")
        replica = string(ref.get("podGroupReplicaKey"), doc, "spec.workloadRef.podGroupReplicaKey")
        if replica:
            name_errors(doc, "spec.workloadRef.podGroupReplicaKey", replica, dns1123_label_errors)
        out["workload_ref"] = (name, group, replica)
    return out
