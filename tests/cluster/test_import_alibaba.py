"""`kubefit import alibaba-gpu`: the imported trace equals what the real scheduler was given."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.manifests.documents import Document, parse_documents, read_documents
from kubefit.manifests.importers.alibaba import import_alibaba_gpu
from kubefit.manifests.load import decode_node, decode_pod
from kubefit.manifests.scenario import load_scenario
from tests_support import SHARED_ABSENT

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TRACE = SHARED / "traces" / "alibaba-gpu-v2023"
GOLDEN = SHARED / "golden" / "kube-scheduler" / "trace-alibaba.jsonl"
NODES_CSV = TRACE / "openb_node_list_gpu_node.csv"
PODS_CSV = TRACE / "openb_pod_list_default.csv"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason=SHARED_ABSENT)


@pytest.fixture(scope="module")
def golden_cases() -> list[dict[str, Any]]:
    with GOLDEN.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """The default trace imported once through the CLI, read back from the YAML it wrote."""
    out = tmp_path_factory.mktemp("alibaba") / "trace.yaml"
    assert main(["import", "alibaba-gpu", str(NODES_CSV), str(PODS_CSV), "-o", str(out)]) == 0
    docs = [d.body for d in read_documents(out)]
    return {"path": [str(out)],
            "nodes": [d for d in docs if d["kind"] == "Node"],
            "pods": [d for d in docs if d["kind"] == "Pod"]}


def _differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Every field where two parsed objects differ, as `path: ours != theirs`."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out: list[str] = []
        for key in sorted(set(ours) | set(theirs)):
            out += _differences(ours.get(key, "<absent>"), theirs.get(key, "<absent>"), f"{path}.{key}")
        return out
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
                for d in _differences(a, b, f"{path}[{i}]")]
    return [] if ours == theirs else [f"{path}: {ours!r} != {theirs!r}"]


def _compare_all(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], what: str) -> None:
    assert len(ours) == len(theirs), f"{len(ours)} {what} imported, the golden queue has {len(theirs)}"
    problems = [f"{what}[{i}] {theirs[i]['metadata']['name']}{d}"
                for i in range(len(theirs)) for d in _differences(ours[i], theirs[i])]
    assert not problems, f"{len(problems)} differences, first: " + "; ".join(problems[:10])


def test_golden_cases_share_one_cluster_and_queue(golden_cases: list[dict[str, Any]]) -> None:
    """The three strategy runs replay the same nodes and queue, so one import serves them all."""
    assert len(golden_cases) == 3
    first = golden_cases[0]
    for case in golden_cases[1:]:
        assert case["nodes"] == first["nodes"], case["id"]
        assert case["queue"] == first["queue"], case["id"]
        assert case["pods"] == [], case["id"]


def test_nodes_equal_golden_field_by_field(imported: dict[str, Any], golden_cases: list[dict[str, Any]]) -> None:
    _compare_all(imported["nodes"], golden_cases[0]["nodes"], "nodes")
    assert len(imported["nodes"]) == 1213


def _without_times(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod without the timeline annotations (the golden queue is a one-shot replay and has none)."""
    meta = dict(pod["metadata"])
    annotations = {k: v for k, v in (meta.pop("annotations", None) or {}).items()
                   if k not in ("kubefit.io/arrival", "kubefit.io/duration")}
    if annotations:
        meta["annotations"] = annotations
    return {**pod, "metadata": meta}


def test_pods_equal_golden_queue_field_by_field(imported: dict[str, Any],
                                                golden_cases: list[dict[str, Any]]) -> None:
    _compare_all([_without_times(p) for p in imported["pods"]], golden_cases[0]["queue"], "pods")
    assert len(imported["pods"]) == 8152


def test_pod_times_come_from_creation_and_deletion(imported: dict[str, Any]) -> None:
    """arrival = creation_time, duration = deletion_time − creation_time (none when the pod never ended)."""
    with open(PODS_CSV, newline="", encoding="utf-8") as fh:
        rows = {r["name"]: r for r in csv.DictReader(fh)}
    for pod in imported["pods"]:
        row, annotations = rows[pod["metadata"]["name"]], pod["metadata"]["annotations"]
        assert annotations["kubefit.io/arrival"] == f"{int(row['creation_time'])}s"
        if row["deletion_time"]:
            assert annotations["kubefit.io/duration"] == f"{int(row['deletion_time']) - int(row['creation_time'])}s"
        else:
            assert "kubefit.io/duration" not in annotations


def test_scenario_decodes_like_golden(imported: dict[str, Any], golden_cases: list[dict[str, Any]]) -> None:
    """What kubefit schedules from the import equals what it decodes from the golden objects."""
    scenario = load_scenario(imported["path"], admission=False)  # the golden pods are used as given
    case = golden_cases[0]
    warnings: list[str] = []
    golden_nodes = [decode_node(Document(n, "golden", i), warnings) for i, n in enumerate(case["nodes"])]
    golden_pods = [decode_pod(Document(p, "golden", i), warnings) for i, p in enumerate(case["queue"])]

    def strip(obj: Any) -> tuple[Any, ...]:  # times: the timeline's, absent from the one-shot golden queue
        fields = {k: v for k, v in vars(obj).items() if k not in ("raw", "source", "arrival", "duration")}
        return tuple(sorted(fields.items(), key=lambda kv: kv[0]))

    assert [strip(n) for n in scenario.nodes] == [strip(n) for n in golden_nodes]
    assert [strip(p) for p in scenario.pending_pods] == [strip(p) for p in golden_pods]
    assert scenario.bound_pods == []
    assert not scenario.warnings


def test_trace_stats_match_golden(imported: dict[str, Any], golden_cases: list[dict[str, Any]]) -> None:
    """Whole-GPU, shared-GPU-as-one and CPU-only pod counts equal the golden `traceStats`."""
    import csv

    stats = golden_cases[0]["traceStats"]
    with PODS_CSV.open(newline="") as handle:
        rows = {r["name"]: r for r in csv.DictReader(handle)}
    gpu = {p["metadata"]["name"]: p["spec"]["containers"][0]["resources"]["requests"].get("nvidia.com/gpu")
           for p in imported["pods"]}
    shared = sum(1 for n, r in rows.items() if 0 < int(r["gpu_milli"]) < 1000 and gpu[n] == "1")
    cpu_only = sum(1 for g in gpu.values() if g is None)
    assert (len(gpu), shared, cpu_only) == (stats["pods"], stats["sharedGpuPodsAsOneGpu"], stats["cpuOnlyPods"])
    assert len(gpu) - shared - cpu_only == stats["wholeGpuPods"]


# --------------------------------------------------------------------------- hand-made traces

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"
POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"


def _write(tmp_path: Path, nodes: str, pods: str) -> tuple[Path, Path]:
    (tmp_path / "nodes.csv").write_text(nodes)
    (tmp_path / "pods.csv").write_text(pods)
    return tmp_path / "nodes.csv", tmp_path / "pods.csv"


def test_hand_made_trace(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path, NODE_HEADER + "n-a,96000,786432,8,V100M32\nn-cpu,32000,131072,0,\n",
                         POD_HEADER
                         + "p-late,1000,2048,0,0,,BE,Running,50,60,50\n"
                         + "p-share,500,1024,1,250,T4|G2,LS,Running,10,,10\n"
                         + "p-b,4000,8192,2,1000,,LS,Running,10,,10\n"
                         + "p-a,88,99,1,1000,V100M16|V100M32,LS,Pending,10,,\n")
    trace = import_alibaba_gpu(nodes, pods)
    assert trace.nodes[0]["status"]["allocatable"] == {"cpu": "96000m", "memory": "786432Mi", "pods": "110",
                                                       "nvidia.com/gpu": "8"}
    assert trace.nodes[0]["metadata"]["labels"] == {"gpu-model": "V100M32"}
    assert trace.nodes[1]["status"]["capacity"] == {"cpu": "32000m", "memory": "131072Mi", "pods": "110"}
    assert "labels" not in trace.nodes[1]["metadata"]
    # creation time first, ties by name
    assert [p["metadata"]["name"] for p in trace.pods] == ["p-a", "p-b", "p-share", "p-late"]
    requests = [p["spec"]["containers"][0]["resources"]["requests"] for p in trace.pods]
    assert requests == [{"cpu": "88m", "memory": "99Mi", "nvidia.com/gpu": "1"},
                        {"cpu": "4000m", "memory": "8192Mi", "nvidia.com/gpu": "2"},
                        {"cpu": "500m", "memory": "1024Mi", "nvidia.com/gpu": "1"},
                        {"cpu": "1000m", "memory": "2048Mi"}]
    terms = trace.pods[2]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "gpu-model", "operator": "In", "values": ["T4", "G2"]}]}]}
    assert "affinity" not in trace.pods[3]["spec"]
    assert any("qos, pod_phase, scheduled_time" in w for w in trace.warnings)


def test_multigpu_variant_without_times_keeps_file_order(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path, NODE_HEADER + "n,1000,1024,1,T4\n",
                         "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nz,1,1,1,1000\na,1,1,0,0\n")
    trace = import_alibaba_gpu(nodes, pods)
    assert [p["metadata"]["name"] for p in trace.pods] == ["z", "a"]
    assert any("file order" in w for w in trace.warnings)


def test_json_output_loads(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path, NODE_HEADER + "n,1000,1024,1,T4\n", POD_HEADER + "p,1,1,1,500,T4,LS,Running,0,,\n")
    out = tmp_path / "s.json"
    assert main(["import", "alibaba-gpu", str(nodes), str(pods), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["kind"] == "List"
    scenario = load_scenario([out])
    assert [n.name for n in scenario.nodes] == ["n"] and [p.name for p in scenario.pending_pods] == ["p"]


def test_stdout_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = _write(tmp_path, NODE_HEADER + "n,1000,1024,1,T4\n", POD_HEADER + "p,1,1,1,500,,LS,Running,0,,\n")
    assert main(["import", "alibaba-gpu", str(nodes), str(pods)]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in docs] == ["Node", "Pod"]


@pytest.mark.parametrize(("which", "text", "expected"), [
    ("nodes", "sn,cpu_milli,gpu,model\nn,1,1,T4\n", "nodes.csv: line 1: missing column(s) memory_mib"),
    ("pods", "name,cpu_milli,memory_mib,gpu_milli\np,1,1,0\n", "pods.csv: line 1: missing column(s) num_gpu"),
    ("nodes", NODE_HEADER + "n,1,1,1,T4\nm,12x,1,1,T4\n", "nodes.csv: line 3: column cpu_milli: must be an integer, got '12x'"),
    ("pods", POD_HEADER + "p,1,1,1,1000,,LS,Running,0,,\nq,1,1,-1,0,,LS,Running,0,,\n",
     "pods.csv: line 3: column num_gpu: must be at least 0, got '-1'"),
    ("pods", POD_HEADER + "p,1,1,1,1000,,LS,Running,soon,,\n",
     "pods.csv: line 2: column creation_time: must be an integer, got 'soon'"),
    ("pods", POD_HEADER + "p,1,1,1,1500,,LS,Running,0,,\n",
     "pods.csv: line 2: column gpu_milli: must be at most 1000 (a whole GPU), got 1500"),
    ("pods", POD_HEADER + "p,1,1,1\n", "pods.csv: line 2: column gpu_milli: missing value"),
    ("nodes", NODE_HEADER + "n,1,1,1,T4,extra\n", "nodes.csv: line 2: 6 fields, the header has 5"),
    ("nodes", NODE_HEADER + ",1,1,1,T4\n", "nodes.csv: line 2: column sn: a name is required"),
    ("pods", POD_HEADER + "p,1,1,1,1000,,LS,Running,0,,\nq,1,1,1,1000,,LS,Running,0,,\np,2,2,0,0,,LS,Running,1,,\n",
     "pods.csv: line 4: column name: duplicate name 'p' (first on line 2)"),
], ids=["node-missing-column", "pod-missing-column", "bad-number", "negative", "bad-time", "share-over-1000",
        "short-row", "long-row", "no-name", "duplicate"])
def test_bad_csv_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    which: str, text: str, expected: str) -> None:
    good = {"nodes": NODE_HEADER + "n,1,1,1,T4\n", "pods": POD_HEADER + "p,1,1,1,1000,,LS,Running,0,,\n"}
    good[which] = text
    nodes, pods = _write(tmp_path, good["nodes"], good["pods"])
    assert main(["import", "alibaba-gpu", str(nodes), str(pods)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err


def test_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "alibaba-gpu", str(tmp_path / "no.csv"), str(PODS_CSV)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'no.csv'}: no such file"


_pod_rows = st.lists(
    st.tuples(st.integers(0, 10**6), st.integers(0, 10**7), st.integers(0, 8), st.integers(0, 1000),
              st.integers(0, 50), st.sampled_from(["", "T4", "G2|T4", "V100M16|V100M32"])),
    min_size=1, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=_pod_rows)
def test_imported_requests_are_exact(tmp_path: Path, rows: list[tuple[int, int, int, int, int, str]]) -> None:
    """Any pod record: exact cpu and memory, whole GPUs (a share counts one), creation-time then name order."""
    lines = [f"pod-{i:03d},{c},{m},{g},{s},{spec},LS,Running,{t},," for i, (c, m, g, s, t, spec) in enumerate(rows)]
    nodes, pods = _write(tmp_path, NODE_HEADER + "n,1,1,1,T4\n", POD_HEADER + "\n".join(lines) + "\n")
    trace = import_alibaba_gpu(nodes, pods)
    expected_order = sorted(range(len(rows)), key=lambda i: (rows[i][4], f"pod-{i:03d}"))
    assert [p["metadata"]["name"] for p in trace.pods] == [f"pod-{i:03d}" for i in expected_order]
    decoded = [decode_pod(d, []) for d in parse_documents(json.dumps(trace.pods))]
    for i, pod in zip(expected_order, decoded, strict=True):
        cpu, memory, gpus, share, _, spec = rows[i]
        whole = max(gpus, 1) if 0 < share < 1000 else gpus
        want = {"cpu": cpu * 10**6, "memory": memory * 2**20 * 10**9}
        if whole:
            want["nvidia.com/gpu"] = whole * 10**9
        assert pod.containers[0].requests == want
        affinity = (pod.affinity or {}).get("nodeAffinity", {})
        terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
        assert [e["values"] for t in terms for e in t["matchExpressions"]] == ([spec.split("|")] if spec else [])
