"""`kubefit import alibaba-gpu --dra`: the trace's GPUs as DRA devices, and the property that makes it
faithful: a claim asking N devices of a class that selects every GPU fits exactly the nodes the
extended resource `nvidia.com/gpu: N` fits, so whole simulations place every pod alike (the default
profile scores cpu and memory only, so the scores agree too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.manifests.importers.alibaba import DRA_CLASS, GPU_RESOURCE, import_alibaba_gpu
from tests_support import SHARED_ABSENT, run_json

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TRACE = SHARED / "traces" / "alibaba-gpu-v2023"
NODES_CSV = TRACE / "openb_node_list_gpu_node.csv"
PODS_CSV = TRACE / "openb_pod_list_default.csv"


def _run(tmp_path: Path, docs: list, name: str, capsys) -> dict:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    rc, out, err = run_json(capsys, "simulate", "-f", str(path), "--tie-break", "first")
    assert rc == 0, err
    return out


def _same_runs(tmp_path: Path, nodes_csv: Path, pods_csv: Path, capsys) -> tuple[dict, dict]:
    extended, dra = import_alibaba_gpu(nodes_csv, pods_csv), import_alibaba_gpu(nodes_csv, pods_csv, dra=True)
    a = _run(tmp_path, extended.documents(), "extended", capsys)
    b = _run(tmp_path, dra.documents(), "dra", capsys)
    assert [(s["node"], s.get("message") is None) for s in a["steps"]] == \
        [(s["node"], s.get("message") is None) for s in b["steps"]]
    return a, b


@pytest.mark.skipif(not SHARED.is_dir(), reason=SHARED_ABSENT)
def test_dra_form_of_the_trace(tmp_path: Path) -> None:
    """One DeviceClass, one ResourceSlice per GPU node holding its GPUs, one claim per GPU pod asking its
    GPUs; no nvidia.com/gpu anywhere."""
    trace = import_alibaba_gpu(NODES_CSV, PODS_CSV, dra=True)
    plain = import_alibaba_gpu(NODES_CSV, PODS_CSV)
    kinds = [d["kind"] for d in trace.devices]
    assert kinds.count("DeviceClass") == 1 and trace.devices[0]["metadata"]["name"] == DRA_CLASS
    slices = {d["spec"]["nodeName"]: d for d in trace.devices if d["kind"] == "ResourceSlice"}
    want = {n["metadata"]["name"]: int(n["status"]["allocatable"][GPU_RESOURCE]) for n in plain.nodes
            if GPU_RESOURCE in n["status"]["allocatable"]}
    assert {name: len(s["spec"]["devices"]) for name, s in slices.items()} == want
    claims = {d["metadata"]["name"]: d["spec"]["devices"]["requests"][0]["exactly"]["count"]
              for d in trace.devices if d["kind"] == "ResourceClaim"}
    asked = {p["metadata"]["name"] + "-gpu": int(p["spec"]["containers"][0]["resources"]["requests"][GPU_RESOURCE])
             for p in plain.pods if GPU_RESOURCE in p["spec"]["containers"][0]["resources"]["requests"]}
    assert claims == asked
    assert GPU_RESOURCE not in json.dumps([*trace.nodes, *trace.pods])


@pytest.mark.skipif(not SHARED.is_dir(), reason=SHARED_ABSENT)
def test_the_first_pods_of_the_trace_land_alike(tmp_path: Path, capsys) -> None:
    """Every GPU node of the trace and its first 400 pods: both forms place every pod on the same node."""
    pods = tmp_path / "pods.csv"
    pods.write_text("".join(PODS_CSV.read_text().splitlines(keepends=True)[:401]))
    a, b = _same_runs(tmp_path, NODES_CSV, pods, capsys)
    assert a["scheduled"] == b["scheduled"] > 300


node_rows = st.lists(st.tuples(st.integers(1, 16), st.integers(0, 8)), min_size=1, max_size=5)
pod_rows = st.lists(st.tuples(st.integers(1, 8), st.integers(0, 8), st.sampled_from([0, 300, 1000])),
                    min_size=1, max_size=14)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nodes=node_rows, pods=pod_rows)
def test_property_dra_fits_where_the_extended_resource_fits(tmp_path: Path, capsys, nodes, pods) -> None:
    """Random clusters (0..8 GPUs per node) and queues (0..8 GPUs per pod, some sharing one): the DRA form
    and the extended-resource form schedule every pod onto the same node, or both leave it pending."""
    nodes_csv, pods_csv = tmp_path / "n.csv", tmp_path / "p.csv"
    nodes_csv.write_text("sn,cpu_milli,memory_mib,gpu,model\n" + "".join(
        f"node-{i},{cpu * 1000},65536,{gpu},V100\n" for i, (cpu, gpu) in enumerate(nodes)))
    pods_csv.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\n" + "".join(
        f"pod-{i:02d},{cpu * 500},1024,{gpu},{milli if gpu <= 1 else 1000},{i}\n"
        for i, (cpu, gpu, milli) in enumerate(pods)))
    _same_runs(tmp_path, nodes_csv, pods_csv, capsys)
