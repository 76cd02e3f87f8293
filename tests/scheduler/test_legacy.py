"""Legacy (pre-1.17, 0..10) resource priorities: the docs' worked example and Go-exact arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.k8s.quantity import milli_value, parse_quantity, value
from kubefit.scheduler.plugins.legacy import (
    legacy_balanced_scores,
    legacy_broken_linear,
    legacy_least_requested_scores,
    legacy_most_requested_scores,
    legacy_rtcr_scores,
    legacy_utilization,
)

BIN_PACKING = [(0, 0), (100, 10)]
RESOURCES = ("intel.com/foo", "memory", "cpu")
WEIGHTS = (5, 1, 3)


def _units(name: str, quantity: str) -> int:
    n = parse_quantity(quantity)
    return milli_value(n) if name == "cpu" else value(n)


def _docs_arrays(mem_unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Requested (used + the pod's 2 / 256 / 2) and available of the docs' node1 and node2."""
    pod = {"intel.com/foo": "2", "memory": f"256{mem_unit}", "cpu": "2"}
    used = [{"intel.com/foo": "1", "memory": f"256{mem_unit}", "cpu": "1"},
            {"intel.com/foo": "2", "memory": f"512{mem_unit}", "cpu": "6"}]
    one = "1Gi" if mem_unit == "Mi" else "1G"
    avail = [{"intel.com/foo": "4", "memory": one, "cpu": "8"},
             {"intel.com/foo": "8", "memory": one, "cpu": "8"}]
    req = np.array([[_units(r, u[r]) + _units(r, pod[r]) for r in RESOURCES] for u in used], dtype=np.int64)
    cap = np.array([[_units(r, a[r]) for r in RESOURCES] for a in avail], dtype=np.int64)
    return req, cap


@pytest.mark.parametrize("mem_unit", ["Mi", "M"], ids=["binary-units", "docs-MB-as-decimal"])
def test_docs_worked_example_per_resource_and_node(mem_unit: str) -> None:
    """intel.com/foo 7, memory 5, cpu 3 → node1 5; 5, 7, 10 → node2 7 (seeds 001/004)."""
    req, cap = _docs_arrays(mem_unit)
    node, per = legacy_rtcr_scores(req, cap, WEIGHTS, BIN_PACKING)
    assert per.tolist() == [[7, 5, 3], [5, 7, 10]]
    assert node.tolist() == [5, 7]


def test_docs_utilisation_rounds_up() -> None:
    """cpu 3 of 8 is 38 in v1.16 (100 − 500/8), not 37 as today; foo 75, memory 50; node2 50, 75, 100."""
    req, cap = _docs_arrays("Mi")
    assert legacy_utilization(req, cap).tolist() == [[75, 50, 38], [50, 75, 100]]


def test_docs_node2_rounds_not_floors() -> None:
    """62/9 = 6.89: the code rounded to 7 although the docs' formula reads as a floor."""
    req, cap = _docs_arrays("Mi")
    node, _ = legacy_rtcr_scores(req[1:], cap[1:], WEIGHTS, BIN_PACKING)
    assert node.tolist() == [7]


def test_least_requested_shape_reverses() -> None:
    """The docs' reversed shape {0,10},{100,0}: f(75) = 10 + (−10·75)/100 truncated = 3."""
    req, cap = _docs_arrays("Mi")
    node, per = legacy_rtcr_scores(req, cap, WEIGHTS, [(0, 10), (100, 0)])
    assert per.tolist() == [[3, 5, 7], [5, 3, 0]]
    assert node.tolist() == [round(41 / 9), round(28 / 6)]  # cpu on node2 scores 0 → left out


def test_zero_scores_leave_the_average_and_missing_capacity_counts_as_full() -> None:
    """A resource the node lacks is f(100) in v1.16; a 0 score drops out of the weight sum."""
    req = np.array([[0, 50], [0, 0]], dtype=np.int64)
    cap = np.array([[0, 100], [10, 100]], dtype=np.int64)
    node, per = legacy_rtcr_scores(req, cap, (1, 1), BIN_PACKING)
    assert per.tolist() == [[10, 5], [0, 0]]
    assert node.tolist() == [round(15 / 2), 0]  # 7.5 rounds half away from zero → 8


def test_legacy_least_most_balanced_on_docs_nodes() -> None:
    """v1.16 Least/MostRequested `(cpu + memory)/2` on 0..10 and BalancedResourceAllocation."""
    req, cap = _docs_arrays("Mi")
    cpu_mem_req, cpu_mem_cap = req[:, [2, 1]], cap[:, [2, 1]]
    least, least_per = legacy_least_requested_scores(cpu_mem_req, cpu_mem_cap)
    assert least_per.tolist() == [[6, 5], [0, 2]] and least.tolist() == [5, 1]
    most, most_per = legacy_most_requested_scores(cpu_mem_req, cpu_mem_cap)
    assert most_per.tolist() == [[3, 5], [10, 7]] and most.tolist() == [4, 8]
    balanced, fractions = legacy_balanced_scores(cpu_mem_req, cpu_mem_cap)
    assert fractions.tolist() == [[0.375, 0.5], [1.0, 0.75]]
    assert balanced.tolist() == [8, 0]  # node2's cpu is full: "never preferred"


def _go_broken_linear(p: int, shape: list[tuple[int, int]]) -> int:
    """Scalar transcription of v1.16 buildBrokenLinearFunction (Go truncating division)."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            num, den = (s - s0) * (p - u0), u - u0
            q = abs(num) // den
            return s0 + (q if num >= 0 else -q)
    return shape[-1][1]


@st.composite
def shapes(draw: st.DrawFn) -> list[tuple[int, int]]:
    utils = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=6)))
    return [(u, draw(st.integers(0, 10))) for u in utils]


@settings(max_examples=200, deadline=None)
@given(shape=shapes(), points=st.lists(st.integers(0, 100), min_size=1, max_size=20))
def test_broken_linear_matches_go(shape: list[tuple[int, int]], points: list[int]) -> None:
    got = legacy_broken_linear(np.array(points), shape).tolist()
    assert got == [_go_broken_linear(p, shape) for p in points]


@settings(max_examples=200, deadline=None)
@given(shape=shapes(), data=st.data())
def test_scores_stay_on_the_0_to_10_scale(shape: list[tuple[int, int]], data: st.DataObject) -> None:
    n, k = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4))
    cap = np.array(data.draw(st.lists(st.integers(0, 10**12), min_size=n * k, max_size=n * k))).reshape(n, k)
    req = np.array(data.draw(st.lists(st.integers(0, 2 * 10**12), min_size=n * k, max_size=n * k))).reshape(n, k)
    weights = data.draw(st.lists(st.integers(1, 100), min_size=k, max_size=k))
    node, per = legacy_rtcr_scores(req, cap, weights, shape)
    assert ((per >= 0) & (per <= 10)).all() and ((node >= 0) & (node <= 10)).all()
    if k == 2:
        for fn in (legacy_least_requested_scores, legacy_most_requested_scores, legacy_balanced_scores):
            scores, _ = fn(req, cap)
            assert ((scores >= 0) & (scores <= 10)).all()


# ------------------------------------------------------------------ over a scenario's ClusterState


def _docs_state(case_id: str, config_file: str):
    """State, incoming pod demand and Fit args of a golden docs case under one example config."""
    import json
    from pathlib import Path

    from kubefit.k8s.requests import pod_demand
    from kubefit.manifests.documents import Document, read_documents
    from kubefit.manifests.load import decode_node, decode_pod
    from kubefit.scheduler.config import load_configuration
    from kubefit.scheduler.state import compile_state

    root = Path(__file__).resolve().parents[2]
    with open(root.parent / "shared" / "golden" / "kube-scheduler" / "docs-example.jsonl", encoding="utf-8") as fh:
        case = next(c for c in map(json.loads, fh) if c["id"] == case_id)
    warnings: list[str] = []
    nodes = [decode_node(Document(n, "case", 1), warnings) for n in case["nodes"]]
    pods = [decode_pod(Document(p, "case", 1), warnings) for p in case.get("pods") or []]
    state = compile_state(nodes, pods)
    demand = pod_demand(decode_pod(Document(case["pod"], "case", 1), warnings))
    config = load_configuration(read_documents(root / "examples" / "configs" / config_file)[0])
    return state, demand, config


@pytest.mark.parametrize("case_id", ["docs-RequestedToCapacityRatio-fit-only",
                                     "docs-RequestedToCapacityRatio-fit-only-decimal-units"])
def test_policy_docs_example_scores_5_and_7_on_the_scenario(case_id: str) -> None:
    from kubefit.scheduler.plugins.legacy import legacy_fit_scores

    state, demand, config = _docs_state(case_id, "policy-docs-worked-example.yaml")
    assert config.legacy_scoring
    args = config.profiles[0].plugin_args["NodeResourcesFit"]
    node, per, alloc, req = legacy_fit_scores(state, np.arange(len(state)), args, demand.score_requests)
    assert per.tolist() == [[7, 5, 3], [5, 7, 10]]
    assert node.tolist() == [5, 7]


def test_legacy_least_most_balanced_on_the_scenario() -> None:
    from kubefit.scheduler.config import NodeResourcesFitArgs
    from kubefit.scheduler.plugins.legacy import legacy_balanced_node_scores, legacy_fit_scores

    state, demand, _ = _docs_state("docs-LeastAllocated-fit+balanced", "v1-docs-worked-example.yaml")
    idx = np.arange(len(state))
    least = legacy_fit_scores(state, idx, NodeResourcesFitArgs("LeastAllocated"), demand.score_requests)
    most = legacy_fit_scores(state, idx, NodeResourcesFitArgs("MostAllocated"), demand.score_requests)
    assert least[0].tolist() == [5, 1] and most[0].tolist() == [4, 8]
    assert legacy_balanced_node_scores(state, idx, demand.score_requests)[0].tolist() == [8, 0]


def test_missing_scalar_counts_as_fully_used_in_v1_16() -> None:
    """intel.com/bar (on no node) had capacity 0 → f(100) = 10 for every node in v1.16."""
    from kubefit.scheduler.config import NodeResourcesFitArgs, ResourceWeight, ShapePoint
    from kubefit.scheduler.plugins.legacy import legacy_fit_scores

    state, demand, _ = _docs_state("docs-RequestedToCapacityRatio-fit-only", "v1-docs-worked-example.yaml")
    args = NodeResourcesFitArgs("RequestedToCapacityRatio",
                                (ResourceWeight("intel.com/foo", 3), ResourceWeight("intel.com/bar", 5)),
                                (ShapePoint(0, 0), ShapePoint(100, 10)))
    node, per, _, _ = legacy_fit_scores(state, np.arange(len(state)), args, demand.score_requests)
    assert per.tolist() == [[7, 10], [5, 10]]
    assert node.tolist() == [round((21 + 50) / 8), round((15 + 50) / 8)]
