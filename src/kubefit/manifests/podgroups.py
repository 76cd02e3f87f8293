"""Documents → `scheduling.k8s.io` Workload, PodGroup and CompositePodGroup, and a pod's reference to its group.

Decoded strictly with the fields of the API version the document names (an unknown field is refused by its
path, as `kubectl apply --validate=strict` refuses it) and validated as the API server validates them on create
(`pkg/apis/scheduling/validation`: the `schedulingPolicy` union, `minCount`, template names, at most 8
templates, at most one topology constraint, the `disruptionMode` and `preemptionPolicy` enums; their messages).

Which API versions a Kubernetes version serves, with which feature gates, is decided once the version is known
(`kubefit.scheduler.podgroups`): here every shape is read.

| apiVersion | Kubernetes | Workload | PodGroup |
|---|---|---|---|
| `scheduling.k8s.io/v1alpha1` | 1.35 | `spec.podGroups[]{name, policy}` | – (pods name `spec.workloadRef`) |
| `scheduling.k8s.io/v1alpha2` | 1.36 | `spec.podGroupTemplates[]` | `spec.podGroupTemplateRef.workload`, `disruptionMode: Pod\\|PodGroup` |
| `scheduling.k8s.io/v1beta1`, `v1alpha3` | 1.37 | + `compositePodGroupTemplates[]` | `spec.workloadRef`, `disruptionMode: {single\\|all}`, `preemptionPolicy` |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubefit.api.cluster import ObjectMeta
from kubefit.api.workload import (
    BASIC,
    DISRUPT_POD,
    DISRUPT_POD_GROUP,
    GANG,
    CompositePodGroup,
    GroupCondition,
    PodGroup,
    PodGroupTemplate,
    SchedulingPolicy,
    Workload,
)
from kubefit.k8s.validation import dns1123_subdomain_errors, go_quote
from kubefit.manifests.cluster import object_meta
from kubefit.manifests.decode import check_fields, entries, fail, integer, mapping, string
from kubefit.manifests.documents import Document
from kubefit.manifests.schedulinggroup import name_errors as _name_errors
from kubefit.manifests.schedulinggroup import required_name as _required_name

GROUP = "scheduling.k8s.io"
V1ALPHA1, V1ALPHA2, V1ALPHA3, V1BETA1 = (f"{GROUP}/{v}" for v in ("v1alpha1", "v1alpha2", "v1alpha3", "v1beta1"))
KINDS = ("Workload", "PodGroup", "CompositePodGroup")
# The API versions of each kind in any supported Kubernetes version (`served` says which one serves which).
API_VERSIONS = {"Workload": (V1ALPHA1, V1ALPHA2, V1BETA1, V1ALPHA3), "PodGroup": (V1ALPHA2, V1BETA1, V1ALPHA3),
                "CompositePodGroup": (V1ALPHA3,)}
MAX_TEMPLATES = 8  # WorkloadMaxPodGroupTemplates (v1alpha1: WorkloadMaxPodGroups)
MAX_TOPOLOGY = 1  # "Right now, we only support a single topology constraint on the API level" (topology_placement.go)
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
CONDITION_TYPES = ("PodGroupScheduled", "PodGroupInitiallyScheduled")  # v1.36, v1.37 (kubernetes#139743)

_OBJECT = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_CONTROLLER_REF = frozenset({"apiGroup", "kind", "name"})
_POLICY = frozenset({"basic", "gang"})
_GANG = frozenset({"minCount"})
_COMPOSITE_GANG = frozenset({"minGroupCount"})
_CONSTRAINTS = frozenset({"topology"})
_TOPOLOGY = frozenset({"key"})
_CLAIM = frozenset({"name", "resourceClaimName", "resourceClaimTemplateName"})
_DISRUPTION_UNION = frozenset({"single", "all"})
_CONDITION = frozenset({"type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"})
_STATUS = frozenset({"conditions", "resourceClaimStatuses"})
_TEMPLATE_V2 = frozenset({"name", "schedulingPolicy", "schedulingConstraints", "resourceClaims", "disruptionMode",
                          "priorityClassName", "priority"})
_TEMPLATE_V3 = _TEMPLATE_V2 | {"preemptionPolicy"}
_COMPOSITE_TEMPLATE = frozenset({"name", "schedulingPolicy", "schedulingConstraints", "disruptionMode",
                                 "priorityClassName", "priority", "preemptionPolicy", "podGroupTemplates",
                                 "compositePodGroupTemplates"})
WORKLOAD_SPEC = {V1ALPHA1: frozenset({"controllerRef", "podGroups"}),
                 V1ALPHA2: frozenset({"controllerRef", "podGroupTemplates"}),
                 V1BETA1: frozenset({"controllerRef", "podGroupTemplates", "compositePodGroupTemplates"}),
                 V1ALPHA3: frozenset({"controllerRef", "podGroupTemplates", "compositePodGroupTemplates"})}
POD_GROUP_SPEC = {V1ALPHA2: _TEMPLATE_V2 - {"name"} | {"podGroupTemplateRef"},
                  V1BETA1: _TEMPLATE_V3 - {"name"} | {"workloadRef", "parentCompositePodGroupName"},
                  V1ALPHA3: _TEMPLATE_V3 - {"name"} | {"workloadRef", "parentCompositePodGroupName"}}
COMPOSITE_SPEC = frozenset({"parentCompositePodGroupName", "workloadRef", "schedulingPolicy", "schedulingConstraints",
                            "disruptionMode", "priorityClassName", "priority", "preemptionPolicy"})
# Fields of each shape that a feature gate guards (path relative to the spec or template): `served` drops them,
# as the registry strategy drops disabled fields on create, when the gate is off.
GATED = {"schedulingConstraints": "TopologyAwareWorkloadScheduling", "resourceClaims": "DRAWorkloadResourceClaims",
         "disruptionMode": "WorkloadAwarePreemption", "priorityClassName": "WorkloadAwarePreemption",
         "priority": "WorkloadAwarePreemption", "preemptionPolicy": "PodGroupPreemptionPolicy",
         "compositePodGroupTemplates": "CompositePodGroup", "parentCompositePodGroupName": "CompositePodGroup"}


def _check_version(doc: Document) -> str:
    """The document's apiVersion, one of its kind's (`API_VERSIONS`); another is refused as the API server does."""
    version = doc.body.get("apiVersion")
    known = API_VERSIONS[doc.kind]
    if version is None:
        raise fail(doc, "apiVersion", f"apiVersion is required ({' or '.join(repr(v) for v in known)} for {doc.kind})")
    if version not in known:
        raise fail(doc, "apiVersion", f'no matches for kind "{doc.kind}" in version "{version}" (kinds of '
                                      f"{GROUP}: {', '.join(known)})")
    return version


def _meta(doc: Document) -> tuple[ObjectMeta, dict[str, Any], dict[str, Any]]:
    check_fields(doc.body, _OBJECT, doc, "")
    meta, spec, status = object_meta(doc)
    _name_errors(doc, "metadata.name", meta.name, dns1123_subdomain_errors)
    return meta, spec, status


def _policy(value: Any, doc: Document, path: str, *, composite: bool = False) -> SchedulingPolicy:
    """`validatePodGroupSchedulingPolicy`: exactly one of `basic` / `gang`; a gang's `minCount` (a composite's
    `minGroupCount`) required and at least 1."""
    policy = mapping(value, doc, path)
    check_fields(policy, _POLICY, doc, path)
    given = [f"`{k}`" for k in ("basic", "gang") if policy.get(k) is not None]
    if not given:
        raise fail(doc, path, 'Invalid value: "": must specify one of: `basic`, `gang`')
    if len(given) > 1:
        raise fail(doc, path, f'Invalid value: "{{{", ".join(given)}}}": exactly one of `basic`, `gang` is required, '
                              f"but multiple fields are set")
    if policy.get("basic") is not None:
        check_fields(mapping(policy["basic"], doc, f"{path}.basic"), frozenset(), doc, f"{path}.basic")
        return SchedulingPolicy(BASIC)
    gang = mapping(policy["gang"], doc, f"{path}.gang")
    key = "minGroupCount" if composite else "minCount"
    check_fields(gang, _COMPOSITE_GANG if composite else _GANG, doc, f"{path}.gang")
    count = integer(gang.get(key), doc, f"{path}.gang.{key}")
    if count == 0:
        raise fail(doc, f"{path}.gang.{key}", "Required value")
    if count < 0:
        raise fail(doc, f"{path}.gang.{key}", f"Invalid value: {count}: must be greater than zero")
    if count > 2**31 - 1:
        raise fail(doc, f"{path}.gang.{key}", f"must be an int32, got {count}")
    return SchedulingPolicy(GANG, count)


def _topology(value: Any, doc: Document, path: str) -> tuple[str, ...]:
    constraints = mapping(value, doc, path)
    check_fields(constraints, _CONSTRAINTS, doc, path)
    keys = []
    for where, item in entries(constraints.get("topology"), doc, f"{path}.topology", _TOPOLOGY,
                               "a topology constraint (a mapping with key)"):
        key = string(item.get("key"), doc, f"{where}.key")
        if not key:
            raise fail(doc, f"{where}.key", "Required value")
        keys.append(key)
    if len(keys) > MAX_TOPOLOGY:
        raise fail(doc, f"{path}.topology", f"Too many: {len(keys)}: must have at most {MAX_TOPOLOGY} items")
    return tuple(keys)


def _disruption(value: Any, doc: Document, path: str, union: bool) -> str:
    """`disruptionMode`: v1alpha2's `Pod` / `PodGroup`; v1beta1's union `{single: {}}` / `{all: {}}`."""
    if value is None:
        return DISRUPT_POD
    if not union:
        mode = string(value, doc, path)
        if mode not in (DISRUPT_POD, DISRUPT_POD_GROUP):
            raise fail(doc, path, f'Unsupported value: {go_quote(mode)}: supported values: "Pod", "PodGroup"')
        return mode
    modes = mapping(value, doc, path)
    check_fields(modes, _DISRUPTION_UNION, doc, path)
    given = [k for k in ("single", "all") if modes.get(k) is not None]
    if len(given) != 1:
        raise fail(doc, path, union_error(("single", "all"), given))
    return DISRUPT_POD_GROUP if given[0] == "all" else DISRUPT_POD


def union_error(members: tuple[str, ...], given: list[str]) -> str:
    """The declarative `+k8s:union` error (apimachinery `validate.Union`, v1.37's v1beta1 and v1alpha3 types): none
    set, or several (their names in braces)."""
    every = ", ".join(f"`{m}`" for m in members)
    if not given:
        return f'Invalid value: "": must specify one of: {every}'
    return f'Invalid value: "{{{", ".join(given)}}}": must specify exactly one of: {every}'


def _priority(spec: dict[str, Any], doc: Document, path: str) -> int | None:
    if spec.get("priority") is None:
        return None
    value = integer(spec.get("priority"), doc, f"{path}.priority")
    if value > HIGHEST_USER_DEFINABLE_PRIORITY or value < -(2**31):
        raise fail(doc, f"{path}.priority", f"Invalid value: {value}: must be less than or equal to "
                                            f"{HIGHEST_USER_DEFINABLE_PRIORITY}")
    return value


def _preemption_policy(spec: dict[str, Any], doc: Document, path: str) -> str | None:
    if spec.get("preemptionPolicy") is None:
        return None
    policy = string(spec.get("preemptionPolicy"), doc, f"{path}.preemptionPolicy")
    if policy not in PREEMPTION_POLICIES:
        raise fail(doc, f"{path}.preemptionPolicy", f"Unsupported value: {go_quote(policy)}: supported values: "
                                                    f'"Never", "PreemptLowerPriority"')
    return policy


def _claims(spec: dict[str, Any], doc: Document, path: str) -> None:
    """`resourceClaims[]` (at most 4, a name and exactly one of the two references): read, not used."""
    items = list(entries(spec.get("resourceClaims"), doc, f"{path}.resourceClaims", _CLAIM,
                         "a resource claim (a mapping with name)"))
    if len(items) > 4:
        raise fail(doc, f"{path}.resourceClaims", f"Too many: {len(items)}: must have at most 4 items")
    for where, claim in items:
        _required_name(claim, "name", doc, where)
        refs = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(k) is not None]
        if len(refs) != 1:
            raise fail(doc, where, "exactly one of `resourceClaimName`, `resourceClaimTemplateName` is required")


def _group_fields(spec: dict[str, Any], doc: Document, path: str, version: str) -> dict[str, Any]:
    """What a PodGroup and a pod group template share: policy, constraints, disruption, priority."""
    policy_key = "policy" if version == V1ALPHA1 else "schedulingPolicy"
    _claims(spec, doc, path)
    class_name = string(spec.get("priorityClassName"), doc, f"{path}.priorityClassName")
    if class_name:
        _name_errors(doc, f"{path}.priorityClassName", class_name, dns1123_subdomain_errors)
    return {"policy": _policy(spec.get(policy_key), doc, f"{path}.{policy_key}"),
            "topology_keys": _topology(spec.get("schedulingConstraints"), doc, f"{path}.schedulingConstraints"),
            "disruption_mode": _disruption(spec.get("disruptionMode"), doc, f"{path}.disruptionMode",
                                           union=version in (V1BETA1, V1ALPHA3)),
            "priority_class_name": class_name, "priority": _priority(spec, doc, path),
            "preemption_policy": _preemption_policy(spec, doc, path)}


def _gated(spec: dict[str, Any], path: str) -> list[str]:
    return [f"{path}.{key}" for key in spec if key in GATED and spec[key] not in (None, "", [], {})]


def decode_workload(doc: Document, warnings: list[str]) -> Workload:
    """A Workload: its pod group templates (v1alpha1 `podGroups`), validated as `ValidateWorkload` does."""
    version = _check_version(doc)
    meta, spec, _status = _meta(doc)
    check_fields(spec, WORKLOAD_SPEC[version], doc, "spec")
    if spec.get("controllerRef") is not None:
        ref = mapping(spec["controllerRef"], doc, "spec.controllerRef")
        check_fields(ref, _CONTROLLER_REF, doc, "spec.controllerRef")
        for key in ("kind", "name"):
            if not string(ref.get(key), doc, f"spec.controllerRef.{key}"):
                raise fail(doc, f"spec.controllerRef.{key}", "Required value")
    key = "podGroups" if version == V1ALPHA1 else "podGroupTemplates"
    fields = frozenset({"name", "policy"}) if version == V1ALPHA1 else (
        _TEMPLATE_V2 if version == V1ALPHA2 else _TEMPLATE_V3)
    items = list(entries(spec.get(key), doc, f"spec.{key}", fields, "a pod group template (a mapping with name)"))
    composite = _composite_templates(spec, doc, version)
    if version in (V1BETA1, V1ALPHA3) and (not items) == (not composite):  # v1.37: a union of the two lists
        raise fail(doc, "spec", union_error(("podGroupTemplates", "compositePodGroupTemplates"),
                                            [k for k, v in (("podGroupTemplates", items),
                                                            ("compositePodGroupTemplates", composite)) if v]))
    if not items and not composite:
        raise fail(doc, f"spec.{key}", "Required value: must have at least one item")
    if len(items) > MAX_TEMPLATES:
        raise fail(doc, f"spec.{key}", f"Too many: {len(items)}: must have at most {MAX_TEMPLATES} items")
    templates, gated = [], []
    for where, item in items:
        name = _required_name(item, "name", doc, where)
        if any(t.name == name for t in templates):
            raise fail(doc, where, f"Duplicate value: {go_quote(name)}")
        templates.append(PodGroupTemplate(name=name, **_group_fields(item, doc, where, version)))
        gated += _gated(item, where)
    gated += _gated(spec, "spec")
    return Workload(meta, version, tuple(templates), composite, tuple(gated))


def _composite_templates(spec: dict[str, Any], doc: Document, version: str) -> tuple[str, ...]:
    """v1.37's `compositePodGroupTemplates[]` (names checked, their policy validated; not scheduled)."""
    if version not in (V1BETA1, V1ALPHA3):
        return ()
    names = []
    for where, item in entries(spec.get("compositePodGroupTemplates"), doc, "spec.compositePodGroupTemplates",
                               _COMPOSITE_TEMPLATE, "a composite pod group template (a mapping with name)"):
        names.append(_required_name(item, "name", doc, where))
        _policy(item.get("schedulingPolicy"), doc, f"{where}.schedulingPolicy", composite=True)
    return tuple(names)


def decode_pod_group(doc: Document, warnings: list[str]) -> PodGroup:
    """A PodGroup (v1alpha2, v1beta1, v1alpha3), validated as `ValidatePodGroup` does; its status's scheduling
    condition is kept (a group the scheduler already scheduled keeps `PodGroupScheduled=True`)."""
    version = _check_version(doc)
    meta, spec, status = _meta(doc)
    check_fields(spec, POD_GROUP_SPEC[version], doc, "spec")
    check_fields(status, _STATUS, doc, "status")
    workload = _template_ref(spec, doc, version)
    parent = string(spec.get("parentCompositePodGroupName"), doc, "spec.parentCompositePodGroupName") or None
    conditions = tuple(GroupCondition(string(c.get("type"), doc, f"{w}.type"), string(c.get("status"), doc,
                                      f"{w}.status"), string(c.get("reason"), doc, f"{w}.reason"),
                                      string(c.get("message"), doc, f"{w}.message"))
                       for w, c in entries(status.get("conditions"), doc, "status.conditions", _CONDITION,
                                           "a condition (a mapping with type and status)"))
    return PodGroup(meta, version, workload=workload, parent=parent, conditions=conditions,
                    gated=tuple(_gated(spec, "spec")), **_group_fields(spec, doc, "spec", version))


def _template_ref(spec: dict[str, Any], doc: Document, version: str) -> tuple[str, str] | None:
    """v1alpha2 `podGroupTemplateRef.workload{workloadName, podGroupTemplateName}`; v1beta1 `workloadRef{workloadName,
    templateName}` (kubernetes#140080)."""
    if version == V1ALPHA2:
        ref = spec.get("podGroupTemplateRef")
        if ref is None:
            return None
        ref = mapping(ref, doc, "spec.podGroupTemplateRef")
        check_fields(ref, frozenset({"workload"}), doc, "spec.podGroupTemplateRef")
        if ref.get("workload") is None:  # a union of one member (`+k8s:union`)
            raise fail(doc, "spec.podGroupTemplateRef", union_error(("workload",), []))
        path, fields, template_key = "spec.podGroupTemplateRef.workload", ("workloadName", "podGroupTemplateName"), \
            "podGroupTemplateName"
        ref = mapping(ref.get("workload"), doc, path)
    else:
        if spec.get("workloadRef") is None:
            return None
        path, fields, template_key = "spec.workloadRef", ("workloadName", "templateName"), "templateName"
        ref = mapping(spec["workloadRef"], doc, path)
    check_fields(ref, frozenset(fields), doc, path)
    return _required_name(ref, "workloadName", doc, path), _required_name(ref, template_key, doc, path)


def decode_composite_pod_group(doc: Document, warnings: list[str]) -> CompositePodGroup:
    """A CompositePodGroup (v1alpha3, v1.37 with the CompositePodGroup gate): its policy and parent."""
    version = _check_version(doc)
    meta, spec, _status = _meta(doc)
    check_fields(spec, COMPOSITE_SPEC, doc, "spec")
    ref = None
    if spec.get("workloadRef") is not None:
        raw = mapping(spec["workloadRef"], doc, "spec.workloadRef")
        check_fields(raw, frozenset({"workloadName", "templateName"}), doc, "spec.workloadRef")
        ref = (_required_name(raw, "workloadName", doc, "spec.workloadRef"),
               _required_name(raw, "templateName", doc, "spec.workloadRef"))
    class_name = string(spec.get("priorityClassName"), doc, "spec.priorityClassName")
    if class_name:
        _name_errors(doc, "spec.priorityClassName", class_name, dns1123_subdomain_errors)
    return CompositePodGroup(meta, version, _policy(spec.get("schedulingPolicy"), doc, "spec.schedulingPolicy",
                                                    composite=True),
                             string(spec.get("parentCompositePodGroupName"), doc,
                                    "spec.parentCompositePodGroupName") or None, ref, _priority(spec, doc, "spec"),
                             class_name, _preemption_policy(spec, doc, "spec"))


DECODERS: dict[str, Callable[[Document, list[str]], Any]] = {
    "Workload": decode_workload, "PodGroup": decode_pod_group, "CompositePodGroup": decode_composite_pod_group}
