"""Cluster resource models: the default 9 grades, standardization (PrepareForCreate), validation with
Karmada's exact messages, and classification of nodes into grades (SPEC-karmada §2–3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kubefit.api.karmada import Cluster, ResourceModel
from kubefit.k8s import goquantity as gq
from kubefit.multicluster.summary import Resource, _get, _raw, subtract_quantity

GiB = 2**30

# --------------------------------------------------------------------------- Go-level model lists


@dataclass
class GoRange:
    name: str
    min: gq.GoQuantity
    max: gq.GoQuantity


@dataclass
class GoModel:
    grade: int
    ranges: list[GoRange] = field(default_factory=list)


def go_models(models: tuple[ResourceModel, ...] | list[ResourceModel]) -> list[GoModel]:
    """API models (quantities as written) → Go Quantities as the API server decodes them."""
    return [GoModel(m.grade, [GoRange(r.name, gq.parse(r.min.text), gq.parse(r.max.text)) for r in m.ranges])
            for m in models]


def to_json(models: list[GoModel]) -> list[dict[str, Any]]:
    """Models with JSON field names, each quantity as Go serializes it (String())."""
    return [{"grade": m.grade, "ranges": [{"name": r.name, "min": r.min.string(), "max": r.max.string()}
                                          for r in m.ranges]} for m in models]


# --------------------------------------------------------------------------- §3.1 defaults

def default_models() -> list[GoModel]:
    """`SetDefaultClusterResourceModels`: grades 0..8, cpu 0,1,2,4,…,128 cores, memory 0,4,16,…,1Ti."""
    cpu = [0, 1, 2, 4, 8, 16, 32, 64, 128]
    mem = [0, 4, 16, 32, 64, 128, 256, 512, 1024]
    out = []
    for g in range(9):
        last = g == 8
        cmax = gq.MAX_INT64 if last else cpu[g + 1]
        mmax = gq.MAX_INT64 if last else mem[g + 1] * GiB
        out.append(GoModel(g, [
            GoRange("cpu", gq.from_int64(cpu[g], 0, gq.DECIMAL_SI), gq.from_int64(cmax, 0, gq.DECIMAL_SI)),
            GoRange("memory", gq.from_int64(mem[g] * GiB, 0, gq.BINARY_SI), gq.from_int64(mmax, 0, gq.BINARY_SI)),
        ]))
    return out


# --------------------------------------------------------------------------- §3.2 standardize

def standardize(models: list[GoModel]) -> list[GoModel]:
    """`StandardizeClusterResourceModels`: sort by grade, first mins → 0, last maxes → MaxInt64."""
    if not models:
        return []
    out = [GoModel(m.grade, [GoRange(r.name, r.min, r.max) for r in m.ranges])
           for m in sorted(models, key=lambda m: m.grade)]  # sort.Slice on ≤12 items is insertion sort: stable
    for r in out[0].ranges:
        r.min = r.min.set_int64(0)
    for r in out[-1].ranges:
        r.max = r.max.set_int64(gq.MAX_INT64)
    return out


def prepare_for_create(models: list[GoModel]) -> list[GoModel]:
    """`Strategy.PrepareForCreate` (gate CustomizedClusterResourceModeling on): defaults or standardize."""
    return default_models() if not models else standardize(models)


# --------------------------------------------------------------------------- §3.3 validation

GRADE_SAME = "The grade of each models should not be the same"
RANGES_COUNT = "The number of resource types should be the same"
MAX_LE_MIN = "The max value of each resource must be greater than the min value"
FIRST_MIN = "The min value of each resource in the first model should be 0"
NAMES_DIFFER = "The resource types of each models should be the same"
NOT_CONTIGUOUS = "Model intervals for resources must be contiguous and non-overlapping"
LAST_MAX = "The max value of each resource in the last model should be MaxInt64"


def _go_json_string(s: str) -> str:
    """encoding/json string escaping (HTML-safe: <, >, & escaped)."""
    return json.dumps(s).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_models_go(models: list[GoModel]) -> str:
    """The bad value of the error: JSON of the internal type (Go field names, no json tags)."""
    parts = []
    for m in models:
        ranges = ",".join(f'{{"Name":{_go_json_string(r.name)},"Min":{_go_json_string(r.min.string())},'
                          f'"Max":{_go_json_string(r.max.string())}}}' for r in m.ranges)
        parts.append(f'{{"Grade":{m.grade},"Ranges":[{ranges}]}}')
    return "[" + ",".join(parts) + "]"


@dataclass(frozen=True)
class ModelsError:
    """A `field.Error` of type FieldValueInvalid on `spec.resourceModels`."""

    detail: str
    error: str
    field: str = "spec.resourceModels"
    type: str = "FieldValueInvalid"

    def as_dict(self) -> dict[str, str]:
        return {"detail": self.detail, "error": self.error, "field": self.field, "type": self.type}


def first_failing_rule(models: list[GoModel]) -> str | None:
    """The message of the first rule `ValidateClusterResourceModels` finds broken, or None."""
    n = len(models)
    for i, model in enumerate(models):
        if i > 0 and model.grade == models[i - 1].grade:
            return GRADE_SAME
        if i > 0 and len(model.ranges) != len(models[i - 1].ranges):
            return RANGES_COUNT
        for j, r in enumerate(model.ranges):
            if gq.compare(r.max, r.min) <= 0:
                return MAX_LE_MIN
            if i == 0:
                if not r.min.is_zero():
                    return FIRST_MIN
            elif models[i - 1].ranges[j].name != r.name:
                return NAMES_DIFFER
            elif not gq.struct_equal(models[i - 1].ranges[j].max, r.min):
                return NOT_CONTIGUOUS
            if i == n - 1 and r.max.int_value() != gq.MAX_INT64:
                return LAST_MAX
    return None


def validate_models(models: list[GoModel], field_path: str = "spec.resourceModels") -> ModelsError | None:
    """`ValidateClusterResourceModels`: the first failing rule as Karmada's field error, or None."""
    if not models:
        return None
    detail = first_failing_rule(models)
    if detail is None:
        return None
    return ModelsError(detail, f"{field_path}: Invalid value: {render_models_go(models)}: {detail}", field_path)


@dataclass
class Verdict:
    """What `kubefit models validate` reports for one Cluster."""

    valid: bool
    errors: list[str]
    warnings: list[str]
    resource_models: list[GoModel]
    models_error: ModelsError | None
    raw_models_error: ModelsError | None

    def as_dict(self, models_json: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The verdict as JSON; `models_json`: `to_json(self.resource_models)` when already made."""
        return {"valid": self.valid, "errors": self.errors, "warnings": self.warnings,
                "resourceModels": to_json(self.resource_models) if models_json is None else models_json}


@dataclass(frozen=True)
class _ModelsJudged:
    """What `validate_cluster` finds in one set of resource models, whichever Cluster holds it."""

    prepared: list[GoModel]
    after: ModelsError | None
    raw_error: ModelsError | None
    rendered: str  # the prepared models as Go prints them (part of the zone/zones message)
    warnings: tuple[str, ...]


def _judge_models(models: tuple[ResourceModel, ...]) -> _ModelsJudged:
    raw = go_models(models)
    raw_error = validate_models(raw)
    prepared = prepare_for_create(raw)
    after = validate_models(prepared)
    warnings = []
    if raw_error is not None and (after is None or after.detail != raw_error.detail):
        warnings.append(f"as written, spec.resourceModels breaks a rule Karmada's create path repairs "
                        f"(sort by grade, first mins set to 0, last maxes to MaxInt64): {raw_error.detail}")
    if not raw:
        warnings.append("spec.resourceModels is empty: Karmada fills in the 9 default grades")
    if after is not None and after.detail == NOT_CONTIGUOUS:
        warnings.extend(_equal_but_different(prepared))
    return _ModelsJudged(prepared, after, raw_error, render_models_go(prepared) if prepared else "null",
                         tuple(warnings))


def validate_cluster(cluster: Cluster, judged: dict[int, tuple[Any, _ModelsJudged]] | None = None) -> Verdict:
    """Karmada's API create path: PrepareForCreate, then ValidateCluster; warnings for repaired rules.

    `judged`: a memo shared over many Clusters, each set of resource models judged once (by identity:
    `manifests.karmada` decodes equal sets once); their verdicts then share the prepared models."""
    from kubefit.multicluster.clustervalidation import validate_cluster_fields

    models = cluster.resource_models
    seen = None if judged is None else judged.get(id(models))
    if seen is None:
        seen = (models, _judge_models(models))  # (models kept: its id stays its own)
        if judged is not None:
            judged[id(models)] = seen
    j = seen[1]
    errors = validate_cluster_fields(cluster.raw, j.rendered)
    if j.after is not None:
        errors.append(j.after.error)
    return Verdict(not errors, errors, list(j.warnings), j.prepared, j.after, j.raw_error)


def _equal_but_different(models: list[GoModel]) -> list[str]:
    """Hints for contiguity failures between bounds that are equal by value but not as Go structs."""
    hints = []
    for prev, model in zip(models, models[1:], strict=False):
        for a, b in zip(prev.ranges, model.ranges, strict=False):
            if a.name == b.name and not gq.struct_equal(a.max, b.min) and gq.compare(a.max, b.min) == 0:
                hints.append(f"grade {prev.grade} max and grade {model.grade} min of {a.name} are equal in value "
                             f"but Karmada compares the parsed Go structs (same spelling required, and values "
                             f"that need a big decimal such as 1.5Gi never compare equal): write both bounds the "
                             f"same way, e.g. as an integer in base units")
    return hints


# --------------------------------------------------------------------------- §2 classification

class InitError(Exception):
    """`modeling.InitSummary` refused the models."""


@dataclass
class ModelingSummary:
    """`modeling.ResourceSummary` after `InitSummary`: names, per-name sorted mins, per-model counts."""

    names: list[str]
    sortings: list[list[gq.GoQuantity]]
    quantity: list[int]
    distinct: list[set[tuple[int, ...]]]

    def index(self, resources: dict[str, gq.GoQuantity]) -> int:
        """`getIndex`: min over the names of `searchLastLessElement` (−1 when below every min)."""
        zero = gq.GoQuantity()
        return min((search_last_less_element(s, resources.get(name, zero))
                    for name, s in zip(self.names, self.sortings, strict=True)), default=-1)

    def add(self, resources: dict[str, gq.GoQuantity], count: int = 1) -> int:
        """`AddToResourceSummary` (a node skipped when its index is −1); returns the index."""
        idx = self.index(resources)
        if 0 <= idx < len(self.quantity):
            self.quantity[idx] += count
            self.distinct[idx].add(tuple(resources.get(n, gq.GoQuantity()).nanos() for n in self.names))
        return idx


def init_summary(models: list[GoModel]) -> ModelingSummary:
    """`modeling.InitSummary`: resource-name order from the collection loop, mins per name."""
    names: list[str] = []
    mins: list[dict[str, gq.GoQuantity]] = []
    for m in models:
        tmp: dict[str, gq.GoQuantity] = {}
        for r in m.ranges:
            if len(names) != len(m.ranges):
                names.append(r.name)
            tmp[r.name] = r.min
        mins.append(tmp)
    if names and mins and len(names) != len(mins[0]):
        raise InitError("the number of resourceName is not equal the number of resourceList")
    sortings = [[lst.get(name, gq.GoQuantity()) for lst in mins] for name in names]
    return ModelingSummary(names, sortings, [0] * len(mins), [set() for _ in mins])


def search_last_less_element(nums: list[gq.GoQuantity], target: gq.GoQuantity) -> int:
    """`searchLastLessElement`: Karmada's binary search for the last `nums[i] <= target` (−1 if none)."""
    low, high = 0, len(nums) - 1
    while low <= high:
        mid = low + ((high - low) >> 1)
        diff1 = gq.compare(nums[mid], target)
        diff2 = gq.compare(nums[mid + 1], target) if mid != len(nums) - 1 else 0
        if diff1 < 1:
            if mid == len(nums) - 1 or diff2 == 1:
                return mid
            low = mid + 1
        else:
            high = mid - 1
    return -1


MODELED_NAMES = ("cpu", "memory", "storage", "ephemeral-storage")


def node_available(allocatable: dict[str, Any], used: Resource | None) -> dict[str, gq.GoQuantity] | None:
    """`getNodeAvailable`: allocatable minus the node's pod requests; None when no pod slot is left."""
    free = {name: gq.parse_value(v) for name, v in (allocatable or {}).items()}
    if used is None:
        return free
    used_list = used.resource_list()
    if used_list is None:
        return free
    pods = free.get("pods", gq.GoQuantity()).int_value()
    if pods - used_list.get("pods", gq.GoQuantity()).int_value() <= 0:
        return None
    for name, q in used_list.items():
        if name in free:
            free[name] = subtract_quantity(free[name], q)
    return free


def classify_nodes(models: list[GoModel], nodes: list[Any], pods: list[Any]) -> tuple[list[int] | None, list[dict]]:
    """Per-position node counts (None when InitSummary fails) and a per-node trace."""
    if not models:
        return None, []
    try:
        summary = init_summary(models)
    except InitError:
        return None, []
    used: dict[str, Resource] = {}
    for pod in map(_raw, pods):
        node_name = _get(pod, "spec", "nodeName")
        if node_name and _get(pod, "status", "phase") not in ("Succeeded", "Failed"):
            acc = used.setdefault(node_name, Resource())
            acc.add_pod_request(pod.get("spec") or {})
            acc.add_pods(1)
    trace = []
    for node in map(_raw, nodes):
        name = _get(node, "metadata", "name") or ""
        free = node_available(_get(node, "status", "allocatable") or {}, used.get(name))
        if free is None:
            trace.append({"name": name, "stop": True})
            break
        modeled = {k: v for k, v in free.items() if k in MODELED_NAMES}
        idx = summary.add(modeled)
        trace.append({"name": name, "index": idx, "free": {k: v.string() for k, v in free.items()}})
    return summary.quantity, trace


def allocatable_modelings(cluster: Cluster, nodes: list[Any], pods: list[Any]) -> list[dict[str, int]] | None:
    """`getAllocatableModelings`: one {grade, count} per spec model, in spec order; None if none."""
    counts, _ = classify_nodes(go_models(cluster.resource_models), nodes, pods)
    if counts is None:
        return None
    return [{"grade": m.grade, "count": c} for m, c in zip(cluster.resource_models, counts, strict=True)]
