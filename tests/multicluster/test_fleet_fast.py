"""The fleet fast paths against the reference paths they stand in for: `FleetEstimator` (max_available_replicas
with steps=False) against `estimate_cluster`, number for number, on random fleets and on the golden cases';
the fleet verbs on a file read by the stream (fast members, shared resourceModels) against the reference
reader, byte for byte."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.k8s.quantity import quantity_text
from kubefit.manifests.karmada import decode_cluster
from kubefit.multicluster.estimate import max_available_replicas, parse_assumed, parse_request

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "karmada"

QUANTITIES = {
    "cpu": ["0", "1", "500m", "2", "3", "4", "16", "-1", "1.5", "9223372036854775807", "4611686018427388"],
    "memory": ["0", "1Gi", "4Gi", "16Gi", "20Gi", "512Mi", "-1Gi", "1Ti", "9223372036854775807", "5e18"],
    "pods": ["0", "1", "10", "110", "770", "-3", "4611686018427387904"],
    "nvidia.com/gpu": ["0", "1", "2", "8"],
}


def _fields(est: Any) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(est).items() if k != "steps"}


def _compare(clusters: list[Any], request: dict[str, int] | None, gates: dict[str, bool] | None,
             texts: dict[str, str] | None = None) -> None:
    reference = max_available_replicas(clusters, request, None, gates, texts)
    fast = max_available_replicas(clusters, request, None, gates, texts, steps=False)
    assert [_fields(e) for e in fast] == [_fields(e) for e in reference]


@st.composite
def _resource_list(draw: st.DrawFn) -> dict[str, str] | None:
    if draw(st.integers(0, 5)) == 0:
        return None
    names = draw(st.lists(st.sampled_from(sorted(QUANTITIES)), unique=True, max_size=4))
    return {n: draw(st.sampled_from(QUANTITIES[n])) for n in names}


@st.composite
def _models(draw: st.DrawFn) -> list[dict[str, Any]]:
    grades = draw(st.lists(st.integers(0, 6), max_size=5))
    names = draw(st.lists(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), unique=True, min_size=1, max_size=3))
    return [{"grade": g, "ranges": [{"name": n, "min": draw(st.sampled_from(QUANTITIES[n])),
                                     "max": draw(st.sampled_from(QUANTITIES[n]))} for n in names]}
            for g in grades]


@st.composite
def _cluster(draw: st.DrawFn, i: int, model_sets: list[list[dict[str, Any]]]) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                            "metadata": {"name": f"m{i}"}, "spec": {"syncMode": "Push"}}
    models = draw(st.sampled_from(model_sets))
    if models:
        body["spec"]["resourceModels"] = models
    if draw(st.integers(0, 6)):
        summary: dict[str, Any] = {}
        for key in ("allocatable", "allocated", "allocating"):
            rl = draw(_resource_list())
            if key == "allocatable" and draw(st.integers(0, 4)):  # mostly room for pods: the paths past the quota
                rl = (rl or {}) | {"pods": draw(st.sampled_from(["110", "770", "1", "0"]))}
            if rl is not None:
                summary[key] = rl
        if draw(st.booleans()):
            counts = st.integers(-1, 40) | st.sampled_from([2**25, 2**31, 2**40])
            summary["allocatableModelings"] = [{"grade": draw(st.integers(0, 7)), "count": draw(counts)}
                                               for _ in range(draw(st.integers(0, 4)))]
        body["status"] = {"resourceSummary": summary}
    return body


@st.composite
def _fleet(draw: st.DrawFn) -> tuple[list[Any], dict[str, str] | None, dict[str, bool]]:
    model_sets = draw(st.lists(_models(), min_size=1, max_size=3))
    bodies = [draw(_cluster(i, model_sets)) for i in range(draw(st.integers(1, 8)))]
    request = draw(_resource_list())
    gates = {"CustomizedClusterResourceModeling": draw(st.booleans()),
             "SchedulingOvercommitProtection": draw(st.booleans())}
    return [decode_cluster(b) for b in bodies], request, gates


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fleet())
def test_fleet_estimator_matches_estimate_cluster(fleet: tuple[list[Any], dict[str, str] | None, dict]) -> None:
    clusters, texts, gates = fleet
    _compare(clusters, None if texts is None else parse_request(texts), gates, texts)


def _golden_fleets() -> list[tuple[str, dict]]:
    out = []
    for name in ("cases.jsonl", "docs-example.jsonl", "spec-checks.jsonl", "upstream-tests.jsonl"):
        for n, line in enumerate((GOLDEN / name).read_text().splitlines()):
            case = json.loads(line)
            if case["op"] in ("estimate", "schedule") and case.get("clusters"):
                out.append((f"{name}:{n}", case))
    return out


GOLDEN_FLEETS = _golden_fleets()


@pytest.mark.parametrize("case", [c for _, c in GOLDEN_FLEETS], ids=[n for n, _ in GOLDEN_FLEETS])
def test_fleet_estimator_on_golden_clusters(case: dict) -> None:
    clusters = [decode_cluster(c, require_name=False) for c in case["clusters"]]
    rr = case.get("replicaRequirements") or (case.get("binding") or case.get("spec") or {}).get("replicaRequirements")
    texts = None if rr is None else {str(k): quantity_text(v) for k, v in (rr.get("resourceRequest") or {}).items()}
    assumed = {k: parse_assumed(v) for k, v in (case.get("assumedWorkloads") or {}).items()}
    request = None if texts is None else parse_request(texts)
    reference = max_available_replicas(clusters, request, assumed, case.get("featureGates"), texts)
    fast = max_available_replicas(clusters, request, assumed, case.get("featureGates"), texts, steps=False)
    assert [_fields(e) for e in fast] == [_fields(e) for e in reference]


def _fleet_file(tmp_path: Path) -> Path:
    """bench_scale's fleet of 30 Clusters, with Clusters of their own models (one set refused by the API)."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    import bench_scale

    with mock.patch.object(bench_scale, "WORK", tmp_path):
        path = bench_scale.write_fleet(30)
    text = path.read_text()
    own = ("---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: own{n}\nspec:\n"
           "  syncMode: Pull\n  resourceModels:\n  - grade: 0\n    ranges:\n    - name: cpu\n      min: '0'\n"
           "      max: '{top}'\n  - grade: 1\n    ranges:\n    - name: cpu\n      min: '{top}'\n"
           "      max: '9223372036854775807'\nstatus:\n  resourceSummary:\n    allocatable:\n      cpu: '40'\n"
           "      pods: '100'\n    allocatableModelings:\n    - grade: 1\n      count: 3\n")
    extra = "".join(own.format(n=n, top=top) for n, top in enumerate(["4", "8", "4", "0"]))
    binding = text.index("---\napiVersion: work.karmada.io")
    path.write_text(text[:binding] + extra + text[binding:])
    return path


VERBS = [["schedule"], ["estimate"], ["estimate", "--explain"], ["estimate", "--request", "cpu=3,memory=20Gi"],
         ["models", "validate"]]


@pytest.mark.parametrize("verb", VERBS, ids=[" ".join(v) for v in VERBS])
def test_fleet_verbs_read_by_the_stream_are_the_references(verb: list[str], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A fleet file read by the stream (its members by the fast scanner, equal resourceModels shared, the
    estimates by FleetEstimator) and by the reference reader: the same output, byte for byte, and the
    same warnings and exit code."""
    path = _fleet_file(tmp_path)
    outputs = []
    for stream in ("always", "0"):
        monkeypatch.setenv("KUBEFIT_STREAM", stream)
        code = main([*verb, "-f", str(path), "-o", "json"])
        captured = capsys.readouterr()
        outputs.append((code, captured.out, captured.err))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] in (0, 1) and outputs[0][1].startswith("{")


def test_a_streamed_fleet_shares_equal_resource_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream's documents are the reference's; Clusters with equal resourceModels hold one list, and
    decode to one tuple of models."""
    from kubefit.manifests import documents, stream

    path = _fleet_file(tmp_path)
    monkeypatch.setenv("KUBEFIT_STREAM", "always")
    streamed = stream.read_documents(path)
    reference = documents.read_documents(path)
    assert [d.body for d in streamed] == [d.body for d in reference]
    clusters = [d for d in streamed if d.kind == "Cluster"]
    distinct = {json.dumps(d.body["spec"]["resourceModels"]) for d in clusters}
    assert len(distinct) == 1 + 3  # the fleet's one set, and the own Clusters' three distinct ones
    assert len({id(d.body["spec"]["resourceModels"]) for d in clusters}) == len(distinct)
    assert len({id(decode_cluster(d).resource_models) for d in clusters}) == len(distinct)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=3),
                       st.tuples(st.integers(-5, 40) | st.sampled_from([2**31 - 1, 2**40, -(2**31)]),
                                 st.integers(-3, 6) | st.sampled_from([2**31 - 1, 2**31 - 2, -(2**31)])),
                       min_size=1, max_size=12),
       st.integers(0, 30), st.booleans())
def test_webster_by_arrays_is_seat_by_seat(parties: dict[str, tuple[int, int]], seats: int, ascending: bool) -> None:
    """The Webster seats found over arrays are Karmada's loop's, ties (equal priorities, seats, names' order)
    and int32-wrapped seat counts included."""
    from kubefit.multicluster.divide import Party, _seat_by_arrays, _seat_by_seat, allocate_webster_seats

    sign = 1 if ascending else -1
    by_loop = [Party(n, v, s) for n, (v, s) in parties.items()]
    by_arrays = [Party(n, v, s) for n, (v, s) in parties.items()]
    reference = allocate_webster_seats(seats, {n: v for n, (v, _) in parties.items()},
                                       {n: s for n, (_, s) in parties.items()}, ascending,
                                       tie_breaker=lambda a, b: _default_better(a, b, sign))
    better = lambda a, b: _default_better(a, b, sign)  # noqa: E731
    _seat_by_seat(by_loop, seats, better)
    assert _seat_by_arrays(by_arrays, seats, sign)
    assert by_arrays == by_loop
    assert allocate_webster_seats(seats, {n: v for n, (v, _) in parties.items()},
                                  {n: s for n, (_, s) in parties.items()}, ascending) == reference


def _default_better(a: Any, b: Any, sign: int) -> bool:
    """`allocate_webster_seats`' default order, as a custom tie-breaker gives it (the loop's path)."""
    pa, pb = float(a.votes) / float(2 * a.seats + 1), float(b.votes) / float(2 * b.seats + 1)
    if pa != pb:
        return pa > pb
    if a.seats != b.seats:
        return a.seats < b.seats
    return a.name < b.name if sign > 0 else a.name > b.name
