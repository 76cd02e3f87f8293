"""What each verb says of the version it answers for: the DRA features a version evaluates that kubefit's
allocator does not (said, not answered silently), `config validate` on several versions, and what an upgrade
changes (`simulate --compare-versions`), derived by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubefit.cli import main

ROOT = Path(__file__).resolve().parents[2]
DRA = ROOT / "examples" / "dra" / "cluster.yaml"
VERSIONS = ROOT / "examples" / "versions"


def _json(capsys, *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = main([*args, "-o", "json"])
    out = capsys.readouterr().out
    return rc, (json.loads(out) if out.strip() else {})


def _tainted_dra(tmp_path: Path) -> Path:
    """examples/dra with a NoSchedule taint on one device of node-a (DRADeviceTaints: off in v1.34, on in v1.36)."""
    docs = list(yaml.safe_load_all(DRA.read_text()))
    for doc in docs:
        if doc and doc.get("kind") == "ResourceSlice" and doc["metadata"]["name"] == "node-a-gpus":
            doc["spec"]["devices"][0]["taints"] = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]
    path = tmp_path / "tainted.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.mark.parametrize(("version", "train", "serve"), [
    ("1.34", ["gpu-0", "gpu-1"], "node-a"), ("1.35", ["gpu-0", "gpu-1"], "node-b"),
    ("1.36", ["gpu-2", "gpu-3"], "node-b"), ("1.37", ["gpu-2", "gpu-3"], "node-b")])
def test_device_taints_answer_per_version(version, train, serve, tmp_path, capsys):
    """A NoSchedule taint on node-a's gpu-0 (numa 0; gpu-1 numa 0, gpu-2/gpu-3 numa 1). v1.34/v1.35 (DRADeviceTaints
    off) ignore it: train-0's same-NUMA pair is the first two devices, gpu-0 and gpu-1. v1.36/v1.37 keep the
    request off gpu-0: gpu-1 finds no second numa-0 device, so the pair is gpu-2 and gpu-3; serve-0 then needs an
    H100 or two free 40Gi GPUs, and node-a has one left (gpu-1, gpu-0 tainted): only node-b fits. (v1.35 sends
    serve-0 to node-b too, untainted node-a fitting: its DynamicResources Score, weight 2, ranks node-b's H100,
    the first subrequest, above node-a's pair.) Nothing is said of the taint: it is evaluated."""
    rc, got = _json(capsys, "simulate", "-f", str(_tainted_dra(tmp_path)), "--kube-version", version)
    assert rc == 0
    steps = {s["pod"].split("/")[-1]: s for s in got["steps"]}
    assert steps["train-0"]["node"] == "node-a"
    assert [d.rsplit("/", 1)[1] for d in steps["train-0"]["devices"]["gpus"]] == train
    assert steps["serve-0"]["node"] == serve
    assert not [w for w in got["warnings"] if "DRADeviceTaints" in w]


def test_device_taints_turned_on_before_v136_are_said(tmp_path, capsys):
    """v1.35 with DRADeviceTaints turned on: kubefit evaluates the taint with v1.36.3's allocator and says so."""
    rc, got = _json(capsys, "simulate", "-f", str(_tainted_dra(tmp_path)), "--kube-version", "1.35",
                    "--feature-gates", "DRADeviceTaints=true")
    assert rc == 0
    notes = [w for w in got["warnings"] if "DRADeviceTaints" in w]
    assert notes and notes[0].startswith("ResourceSlice/node-a-gpus: device gpu-0 has taints (DRADeviceTaints")
    steps = {s["pod"].split("/")[-1]: s for s in got["steps"]}
    assert [d.rsplit("/", 1)[1] for d in steps["train-0"]["devices"]["gpus"]] == ["gpu-2", "gpu-3"]


def test_config_validate_on_every_version(capsys):
    """kubernetes#132120 (v1.36): `requestedToCapacityRatio` with another strategy is forbidden; v1.34 and v1.35
    ignore it. Valid on some versions only: exit 2, each version's verdict in -o json."""
    path = VERSIONS / "most-allocated-with-shape.yaml"
    rc, got = _json(capsys, "config", "validate", "-f", str(path), "--kube-version", "all")
    assert rc == 2 and got["valid"] is False
    assert {v: got["versions"][v]["valid"] for v in got["versions"]} == {
        "1.34": True, "1.35": True, "1.36": False, "1.37": False}
    assert got["versions"]["1.36"]["patch"] == "v1.36.3"
    assert got["versions"]["1.36"]["messages"] == [
        'initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
        '"NodeResourcesFit": scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not '
        'RequestedToCapacityRatio']
    rc, got = _json(capsys, "config", "validate", "-f", str(path), "--kube-version", "1.34,1.35")
    assert rc == 0 and got["valid"] is True


def test_rtc_without_its_args_panics_in_1_35_and_is_refused_in_1_36(tmp_path, capsys):
    """v1.35.4's NewFit still dereferences a missing `requestedToCapacityRatio` (the research notes: v1.35.4's
    validation equals v1.34.1's); v1.36 refuses it in validation."""
    path = tmp_path / "rtc.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                    "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                                        {"name": "NodeResourcesFit",
                                         "args": {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}}]}]}))
    rc, got = _json(capsys, "config", "validate", "-f", str(path), "--kube-version", "1.35,1.36")
    assert rc == 2
    assert got["versions"]["1.35"]["messages"][0].endswith(
        'initializing plugin "NodeResourcesFit": panic: runtime error: invalid memory address or nil pointer '
        'dereference (kube-scheduler v1.35.4 crashes here: scoringStrategy.type is RequestedToCapacityRatio but '
        'scoringStrategy.requestedToCapacityRatio is not set)')
    assert got["versions"]["1.36"]["messages"][0].endswith(
        'scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is '
        'RequestedToCapacityRatio')


def test_what_an_upgrade_changes(capsys):
    """examples/versions/cluster.yaml, the first analytics pod (500m, 6Gi) under the default profile
    (LeastAllocated + BalancedAllocation, weight 1 each; the other plugins score alike on every node):

    node-a (5 cpu / 2Gi used): after 5.5/8 = 0.6875 cpu, 8/32 = 0.25 memory → Fit (31 + 75) / 2 = 53;
      balance |0.6875 − 0.25| / 2 = 0.21875 → 78; before 0.625, 0.0625 → 71; v1.36: 50 + (50 + 78 − 71) / 2 = 78
    node-c (3.5 cpu / 14Gi used): after 0.5, 0.625 → Fit (50 + 37) / 2 = 43; balance 93; before 0.4375 both → 100;
      v1.36: 50 + (50 + 93 − 100) / 2 = 71
    v1.34: node-a 53 + 78 = 131 < node-c 43 + 93 = 136 → node-c; v1.37: 131 > 43 + 71 = 114 → node-a.
    """
    rc, got = _json(capsys, "simulate", "-f", str(VERSIONS / "cluster.yaml"), "--compare-versions", "1.34,1.37",
                    "--tie-break", "first")
    assert rc == 0
    assert [c["name"] for c in got["configurations"]] == ["1.34 (v1.34.1)", "1.37 (v1.37.0)"]
    first = next(d for d in got["differences"] if d["pod"] == "default/analytics-1")
    assert first["nodes"] == {"1.34 (v1.34.1)": "node-c", "1.37 (v1.37.0)": "node-a"}
    assert got["configurations"][1]["moved"] == len(got["differences"]) == 3
    assert got["inputs"]["options"]["compareVersions"] == ["1.34", "1.37"]


@pytest.mark.parametrize("versions", ["1.36", "1.36,1.36", "1.34,1.40"])
def test_compare_versions_needs_two_supported_versions(versions, capsys):
    rc = main(["simulate", "-f", str(VERSIONS / "cluster.yaml"), "--compare-versions", versions])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: --")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_pod_level_resize_status_loads_and_is_said(fmt, tmp_path, capsys):
    """A bound pod with pod-level resources in the middle of an in-place resize (`status.resources`,
    `status.allocatedResources` at pod level, served from v1.35): the API server accepts it, so it loads (both
    readers), and the answer says kubefit accounts the pod from its spec."""
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
             "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "resizing"},
             "spec": {"nodeName": "node-1", "resources": {"requests": {"cpu": "1"}},
                      "containers": [{"name": "c", "image": "i"}]},
             "status": {"resources": {"requests": {"cpu": "2"}}, "allocatedResources": {"cpu": "2"}}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending"},
             "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}]
    path = tmp_path / f"resize.{fmt}"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}) if fmt == "json"
                    else yaml.safe_dump_all(docs))
    rc, got = _json(capsys, "score", "-f", str(path))
    assert rc == 0
    assert [w for w in got["warnings"] if "Pod/resizing: status.resources/allocatedResources at pod level" in w]


def test_placement_extension_points_exist_from_1_36(tmp_path, capsys):
    """v1.36's `Plugins` has `placementGenerate` and `placementScore` (kube-scheduler/config/v1/types.go of
    v1.36.3; not in v1.35.4's): v1.35's strict decoding refuses them, v1.36 loads them and runs them (a pod group
    cycle's placements, `groupcycle.py`): nothing to say."""
    path = tmp_path / "placement.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                    "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                                        "placementGenerate": {"enabled": [{"name": "TopologyPlacementGenerator"}]}}}]}))
    rc, got = _json(capsys, "config", "validate", "-f", str(path), "--kube-version", "1.35,1.36")
    assert rc == 2
    assert got["versions"]["1.35"]["messages"] == [
        'strict decoding error: unknown field "profiles[0].plugins.placementGenerate"']
    assert got["versions"]["1.36"]["valid"] is True
    assert got["versions"]["1.36"]["notes"] == []
