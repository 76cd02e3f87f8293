"""Resource models: every `defaults`, `standardize`, `validate`, `classify` case of the Karmada golden
files (through `kubefit models …` where a verb exists), and the modeling helpers through Python."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from karmada_golden import assert_subset, by_value, cases, ids, run_json, scenario_file

from kubefit.k8s import goquantity as gq
from kubefit.manifests.documents import Document
from kubefit.manifests.karmada import decode_cluster, decode_resource_models
from kubefit.multicluster.models import (
    InitError,
    ModelingSummary,
    go_models,
    init_summary,
    node_available,
    search_last_less_element,
    standardize,
    to_json,
    validate_cluster,
)
from kubefit.multicluster.summary import Resource

DEFAULTS, STANDARDIZE = cases("defaults"), cases("standardize")
VALIDATE, CLASSIFY = cases("validate"), cases("classify")
MODELING, SEARCH, NODE_AVAILABLE = cases("modeling"), cases("searchLastLessElement"), cases("nodeAvailable")


def _models(raw):
    return go_models(decode_resource_models(raw, Document({}, "case", 1)))


@pytest.mark.parametrize("case", DEFAULTS, ids=ids(DEFAULTS))
def test_defaults_golden(case, capsys):
    rc, got, _ = run_json(capsys, ["models", "defaults"])
    assert rc == 0
    assert got == {"resourceModels": case["expect"]["resourceModels"]}  # exact strings too


@pytest.mark.parametrize("case", STANDARDIZE, ids=ids(STANDARDIZE))
def test_standardize_golden(case):
    got = to_json(standardize(_models(case["resourceModels"])))
    assert by_value(got) == by_value(case["expect"]["resourceModels"])


# --------------------------------------------------------------------------- validate

def _verdict_view(case):
    """The golden `expect` shape computed through the Python API (for peer subset matching)."""
    verdict = validate_cluster(decode_cluster(case["cluster"], require_name=False))
    from kubefit.multicluster.clustervalidation import validate_cluster_fields

    raw_errors = validate_cluster_fields(case["cluster"])
    if verdict.raw_models_error:
        raw_errors.append(verdict.raw_models_error.error)
    return {"clusterErrors": raw_errors,
            "resourceModelsError": verdict.raw_models_error.as_dict() if verdict.raw_models_error else None,
            "afterPrepareForCreate": {
                "clusterErrors": verdict.errors, "resourceModels": to_json(verdict.resource_models),
                "resourceModelsError": verdict.models_error.as_dict() if verdict.models_error else None}}


@pytest.mark.parametrize("case", VALIDATE, ids=ids(VALIDATE))
def test_validate_golden(case, tmp_path, capsys):
    path = scenario_file(tmp_path, case, cluster_name=None)
    rc, got, err = run_json(capsys, ["models", "validate", "-f", path])
    view = _verdict_view(case)
    if case["_file"] == "upstream-tests.jsonl":
        assert_subset(case["expect"], view, case)
        oracle = case.get("oracleExpect", case["expect"])["afterPrepareForCreate"]
        assert got["errors"] == oracle["clusterErrors"]  # the real code's full answer, exactly
        assert got["valid"] == (not oracle["clusterErrors"])
        assert rc == (0 if got["valid"] else 1)
        return
    expect = case["expect"]
    after = expect["afterPrepareForCreate"]
    assert got["errors"] == after["clusterErrors"]  # Karmada's exact message strings
    assert got["valid"] == (not after["clusterErrors"]) and rc == (0 if got["valid"] else 1)
    assert by_value(got["resourceModels"]) == by_value(after["resourceModels"])
    assert view["resourceModelsError"] == expect["resourceModelsError"]  # the rule as written
    raw, repaired = expect["resourceModelsError"], after["resourceModelsError"]
    if raw and (repaired is None or repaired["detail"] != raw["detail"]):  # a rule the create path repairs
        assert any(expect["resourceModelsError"]["detail"] in w for w in got["warnings"]), got["warnings"]


# --------------------------------------------------------------------------- classify

@pytest.mark.parametrize("case", CLASSIFY, ids=ids(CLASSIFY))
def test_classify_golden(case, tmp_path, capsys):
    rc, got, err = run_json(capsys, ["models", "classify", "-f", scenario_file(tmp_path, case)])
    assert rc == 0, err
    if case["_file"] == "upstream-tests.jsonl":
        assert_subset(case["expect"], got, case)
    else:
        assert got == {"allocatableModelings": case["expect"]["allocatableModelings"]}


# --------------------------------------------------------------------------- modeling helpers

@pytest.mark.parametrize("case", MODELING, ids=ids(MODELING))
def test_modeling_golden(case):
    models = _models(case["resourceModels"])
    got: dict = {"initError": None}
    try:
        summary = init_summary(models)
    except InitError as exc:
        got.update(initError=str(exc), rms=[])
    else:
        got["indices"] = [_add(summary, n) for n in case.get("nodes") or []] or None
        got["rms"] = [{"quantity": q, "nodeNum": len(d)} for q, d in zip(summary.quantity, summary.distinct,
                                                                       strict=True)]
    got["rmsLen"] = len(got["rms"])
    assert_subset(case["expect"], got, case)


def _add(summary: ModelingSummary, node: dict) -> int:
    resources = {k: gq.parse(v) for k, v in node["resources"].items()}
    return summary.add(resources, node.get("quantity", 1))


@pytest.mark.parametrize("case", SEARCH, ids=ids(SEARCH))
def test_search_last_less_element_golden(case):
    nums = [gq.parse(n) for n in case["nums"]]
    assert search_last_less_element(nums, gq.parse(case["target"])) == case["expect"]["index"]


@pytest.mark.parametrize("case", NODE_AVAILABLE, ids=ids(NODE_AVAILABLE))
def test_node_available_golden(case):
    pr = case["podResources"]
    used = None if pr is None else Resource(pr["milliCPU"], pr["memory"], pr["ephemeralStorage"],
                                            pr["allowedPodNumber"], dict(pr["scalarResources"] or {}))
    free = node_available(case["allocatable"], used)
    got = None if free is None else {k: v.string() for k, v in free.items()}
    assert by_value(got) == by_value(case["expect"]["availableExact"])


# --------------------------------------------------------------------------- hand-computed

THREE_GRADES = [{"grade": g, "ranges": [{"name": "cpu", "min": c0, "max": c1}, {"name": "memory", "min": m0, "max": m1}]}
                for g, c0, c1, m0, m1 in ((0, "0", "1", "0", "4Gi"), (1, "1", "2", "4Gi", "16Gi"),
                                          (2, "2", "9223372036854775807", "16Gi", "9223372036854775807"))]


def test_validation_message_renders_cached_and_canonical_strings():
    models = [{"grade": 0, "ranges": [{"name": "memory", "min": "0", "max": "1024Mi"}]},
              {"grade": 1, "ranges": [{"name": "memory", "min": "1Gi", "max": "9223372036854775807"}]}]
    cluster = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m"},
               "spec": {"syncMode": "Push", "resourceModels": models}}
    v = validate_cluster(decode_cluster(cluster))
    assert v.errors == ['spec.resourceModels: Invalid value: [{"Grade":0,"Ranges":[{"Name":"memory","Min":"0",'
                        '"Max":"1Gi"}]},{"Grade":1,"Ranges":[{"Name":"memory","Min":"1Gi",'
                        '"Max":"9223372036854775807"}]}]: Model intervals for resources must be contiguous and '
                        'non-overlapping']
    assert any("equal in value" in w for w in v.warnings)


def test_unsorted_grades_are_repaired_with_a_warning(tmp_path, capsys):
    models = list(reversed(json.loads(json.dumps(THREE_GRADES))))
    case = {"cluster": {"metadata": {"name": "m"}, "spec": {"syncMode": "Push", "resourceModels": models}}}
    rc, got, err = run_json(capsys, ["models", "validate", "-f", scenario_file(tmp_path, case)])
    assert rc == 0 and got["valid"] and got["errors"] == []
    assert [m["grade"] for m in got["resourceModels"]] == [0, 1, 2]
    assert got["warnings"] and "warning" in err


def test_classify_doc_three_grade_examples():
    """The doc: 0.5C/2Gi free → grade 0; 1.5C/10Gi free → grade 1 (max is never consulted)."""
    cluster = decode_cluster({"kind": "Cluster", "metadata": {"name": "m"},
                              "spec": {"syncMode": "Push", "resourceModels": THREE_GRADES}})
    from kubefit.multicluster.models import allocatable_modelings

    nodes = [{"metadata": {"name": n}, "status": {"allocatable": {"cpu": c, "memory": m, "pods": "110"}}}
             for n, c, m in (("a", "500m", "2Gi"), ("b", "1500m", "10Gi"), ("c", "64", "1Ti"))]
    assert allocatable_modelings(cluster, nodes, []) == [
        {"grade": 0, "count": 1}, {"grade": 1, "count": 1}, {"grade": 2, "count": 1}]


def test_classify_needs_exactly_one_cluster(tmp_path, capsys):
    rc, _, err = run_json(capsys, ["models", "classify", "-f", scenario_file(tmp_path, {"nodes": []})])
    assert rc == 2 and "exactly one Cluster" in err


def test_mismatched_range_quantity_is_input_error(tmp_path, capsys):
    bad = tmp_path / "c.yaml"
    bad.write_text("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m}\n"
                   "spec:\n  resourceModels:\n  - grade: 0\n    ranges: [{name: cpu, min: '0', max: 'x1'}]\n")
    rc, _, err = run_json(capsys, ["models", "validate", "-f", str(bad)])
    assert rc == 2 and "spec.resourceModels[0].ranges[0].max" in err


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=12, unique=True), st.integers(-10, 10**6 + 10))
def test_search_is_highest_grade_whose_min_fits(mins, free):
    """For ascending mins, Karmada's binary search = the last index with min ≤ free (−1 if none)."""
    mins = sorted(mins)
    expected = max((i for i, m in enumerate(mins) if m <= free), default=-1)
    assert search_last_less_element([gq.from_int64(m) for m in mins], gq.from_int64(free)) == expected
