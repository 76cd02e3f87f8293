"""Usage decoded from every format, strictly: values read exactly, bad input refused in one line naming file,
object (series) and field, never a silent zero."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kubefit.errors import InputError
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.usage import read
from kubefit.manifests.usage.prometheus import counter_rate, decode_response
from kubefit.manifests.usage.vpa import decode_checkpoint, decode_vpa


def answer(series: list[dict], kind: str = "matrix", status: str = "success", **more) -> bytes:
    return json.dumps({"status": status, "data": {"resultType": kind, "result": series}, **more}).encode()


def cpu_series(pod: str, values: list[tuple[float, str]], container: str = "web", **labels: str) -> dict:
    metric = {"namespace": "default", "pod": pod, "container": container, **labels}
    return {"metric": metric, "values": [[t, v] for t, v in values]}


def test_matrix_values_read_exactly(tmp_path):
    """A rate() answer given as cpu=: cores as written; memory from its metric name."""
    data = answer([cpu_series("web-1", [(1000, "0.25"), (1300, "0.5"), (1600.5, "1e-3")]),
                   {"metric": {"__name__": "container_memory_working_set_bytes", "namespace": "default",
                               "pod": "web-1", "container": "web"}, "values": [[1000, "1e9"], [1300, "2147483648"]]}])
    out = decode_response(data, "f.json", measures="cpu")
    [c] = out.containers
    assert c.cpu.values.tolist() == [0.25, 0.5, 0.001] and c.cpu.times.tolist() == [1000, 1300, 1600.5]
    assert c.memory.values.tolist() == [1e9, 2147483648.0]
    assert (out.start, out.end, out.step) == (1000.0, 1600.5, 300.0)


def test_counter_is_read_as_a_rate_with_resets():
    """The raw counter: 10 → 40 in 60 s is 0.5 cores; 40 → 5 is a reset (5 since the restart, over 60 s)."""
    times, rates = counter_rate(np.array([0.0, 60.0, 120.0]), np.array([10.0, 40.0, 5.0]))
    assert times.tolist() == [60.0, 120.0] and rates.tolist() == [0.5, 5 / 60]
    data = answer([{"metric": {"__name__": "container_cpu_usage_seconds_total", "namespace": "default", "pod": "p",
                               "container": "c"}, "values": [[0, "10"], [60, "40"], [120, "5"]]}])
    [c] = decode_response(data, "f.json").containers
    assert c.cpu.values.tolist() == [0.5, 5 / 60]


def test_gaps_said():
    """Samples every 60 s but a hole of 4 minutes (3 samples missing): said, statistics over what is there."""
    out = decode_response(answer([cpu_series("p", [(0, "0.1"), (60, "0.2"), (300, "0.3"), (360, "0.4")])]),
                          "f.json", "cpu")
    assert out.containers[0].cpu.values.tolist() == [0.1, 0.2, 0.3, 0.4]
    assert any("1 series have gaps (3 samples missing at the answer's 60 s step)" in n for n in out.notes)


def test_nan_dropped_and_counted_never_zero():
    out = decode_response(answer([cpu_series("p", [(0, "0.1"), (60, "NaN"), (120, "0.3")])]), "f.json", "cpu")
    assert out.containers[0].cpu.values.tolist() == [0.1, 0.3]
    assert any("1 NaN sample(s) dropped" in n for n in out.notes)


@pytest.mark.parametrize("value,field", [("+Inf", "data.result[0].values"), ("-Inf", "data.result[0].values"),
                                         ("-0.5", "data.result[0].values")])
def test_infinite_or_negative_refused(value, field):
    with pytest.raises(InputError) as exc:
        decode_response(answer([cpu_series("web-1", [(0, "0.1"), (60, value)])]), "f.json", "cpu")
    assert exc.value.field == field and "web-1" in str(exc.value) and "at least 0" in str(exc.value)


def test_a_value_that_is_no_number_is_refused():
    with pytest.raises(InputError, match="samples must be .* pairs") as exc:
        decode_response(answer([cpu_series("p", [(0, "0.1"), (60, "lots")])]), "f.json", "cpu")
    assert exc.value.file == "f.json" and exc.value.field == "data.result[0].values"


def test_error_answer_said_with_prometheus_words():
    data = json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error at char 5"}).encode()
    with pytest.raises(InputError, match="Prometheus answered error: bad_data: parse error at char 5"):
        decode_response(data, "f.json")


def test_unnamed_series_needs_to_be_told_what_it_measures():
    with pytest.raises(InputError, match="--usage cpu=FILE or --usage memory=FILE"):
        decode_response(answer([cpu_series("p", [(0, "0.1")])]), "f.json")


def test_other_metrics_refused_by_name():
    s = {"metric": {"__name__": "up", "namespace": "d", "pod": "p", "container": "c"}, "values": [[0, "1"]]}
    with pytest.raises(InputError, match="kubefit reads container_cpu_usage_seconds_total") as exc:
        decode_response(answer([s]), "f.json")
    assert exc.value.field == "data.result[0].metric.__name__"


def test_sandbox_and_pod_cgroup_series_left_out_with_a_note():
    out = decode_response(answer([cpu_series("p", [(0, "1")], container="POD"), cpu_series("p", [(0, "1")], "")]),
                          "f.json", "cpu")
    assert out.containers == [] and any("2 series of the pod sandbox" in n for n in out.notes)


def test_vector_is_one_sample_said():
    s = {"metric": {"namespace": "d", "pod": "p", "container": "c"}, "value": [5, "0.2"]}
    out = decode_response(answer([s], kind="vector"), "f.json", "memory")
    assert out.containers[0].memory.values.tolist() == [0.2]
    assert any("an instant vector" in n for n in out.notes)


def test_scalar_answer_refused():
    with pytest.raises(InputError, match="holds no series"):
        decode_response(json.dumps({"status": "success", "data": {"resultType": "scalar", "result": [1, "2"]}})
                        .encode(), "f.json")


def test_unknown_field_named():
    data = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [], "extra": 1}}).encode()
    with pytest.raises(InputError, match="extra"):
        decode_response(data, "f.json")


def test_workload_labels_name_the_owner():
    s = cpu_series("", [(0, "1")], owner_kind="Deployment", owner_name="web")
    del s["metric"]["pod"]
    [c] = decode_response(answer([s]), "f.json", "cpu").containers
    assert c.owner == ("Deployment", "web") and c.pod is None


# ---------------------------------------------------------------------------------------------- VPA objects

VPA = """
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  updatePolicy: {updateMode: Recreate}
  resourcePolicy:
    containerPolicies:
    - containerName: web
      minAllowed: {cpu: 100m}
      maxAllowed: {cpu: "2", memory: 2Gi}
status:
  recommendation:
    containerRecommendations:
    - {containerName: web, target: {cpu: 250m, memory: 1Gi}}
"""


def test_vpa_decoded():
    vpa = decode_vpa(parse_documents(VPA, "v.yaml")[0])
    assert (vpa.key, vpa.target_kind, vpa.target_name, vpa.mode) == ("shop/web", "Deployment", "web", "Recreate")
    assert vpa.policy("web").max_allowed == {"cpu": 2 * 10**9, "memory": 2 * 2**30 * 10**9}
    assert vpa.recommendations[0].target == {"cpu": 250 * 10**6, "memory": 2**30 * 10**9}


@pytest.mark.parametrize("change,field,message", [
    ("updateMode: Recreate", "spec.updatePolicy.updateMode",
     'Unsupported value: "Sometimes": supported values: "InPlace", "InPlaceOrRecreate", "Initial", "Off", "Recreate"'),
    ("minAllowed: {cpu: 100m}", "spec.resourcePolicy.containerPolicies[0].maxAllowed[cpu]",
     'max resource for cpu is lower than min of "3"'),
    ("containerName: web\n      minAllowed", "spec.resourcePolicy.containerPolicies[0].minAllowed[cpu]",
     "must be a whole number of milli CPUs"),
    ("target: {cpu: 250m", "status.recommendation.containerRecommendations[0].target.cpu",
     "a recommendation below zero"),
    ("updatePolicy: {updateMode: Recreate}", "spec.updatePolicy.updateMod", "unknown field"),
])
def test_vpa_refusals(change, field, message):
    replacement = {"updateMode: Recreate": "updateMode: Sometimes",
                   "minAllowed: {cpu: 100m}": "minAllowed: {cpu: \"3\"}",
                   "containerName: web\n      minAllowed": "containerName: web\n      minAllowed: {cpu: 100.5m}\n      x",
                   "target: {cpu: 250m": "target: {cpu: -250m",
                   "updatePolicy: {updateMode: Recreate}": "updatePolicy: {updateMod: Recreate}"}[change]
    text = VPA.replace(change, replacement)
    if "x:" in text or "\n      x" in text:
        text = text.replace("\n      x: {cpu: 100m}", "")
    with pytest.raises(InputError) as exc:
        decode_vpa(parse_documents(text, "v.yaml")[0])
    assert exc.value.file == "v.yaml" and exc.value.obj == "VerticalPodAutoscaler/web"
    assert exc.value.field.startswith(field) and message in str(exc.value)


def test_v1beta2_refused():
    with pytest.raises(InputError, match="v1beta2 is served no more"):
        decode_vpa(parse_documents(VPA.replace("autoscaling.k8s.io/v1", "autoscaling.k8s.io/v1beta2"))[0])


def test_checkpoint_version_refused_with_the_recommender_s_words():
    text = """
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscalerCheckpoint
metadata: {name: c}
spec: {vpaObjectName: web, containerName: web}
status: {version: v2}
"""
    with pytest.raises(InputError, match="unsupported checkpoint version v2") as exc:
        decode_checkpoint(parse_documents(text)[0])
    assert exc.value.field == "status.version"


# ---------------------------------------------------------------------------------------------- OpenCost

def opencost(allocations: dict, code: int = 200) -> bytes:
    return json.dumps({"code": code, "data": [allocations]}).encode()


def _alloc(pod: str | None, cpu: float, ram: float, end: str = "2026-01-02T00:00:00Z", **props) -> dict:
    p = {"namespace": "default", "container": "web", **props}
    if pod:
        p["pod"] = pod
    return {"name": "x", "properties": p, "window": {"start": "2026-01-01T00:00:00Z", "end": end},
            "cpuCoreUsageAverage": cpu, "ramByteUsageAverage": ram, "cpuCoreRequestAverage": 2.0,
            "ramByteRequestAverage": 4e9, "totalCost": 1.0}


def test_opencost_per_container(tmp_path):
    f = tmp_path / "oc.json"
    f.write_bytes(opencost({"a": _alloc("web-1", 0.2, 3e8), "__idle__": {"name": "__idle__"}}))
    out = read.read_usage([str(f)])
    [c] = out.containers
    assert (c.pod, c.cpu.values.tolist(), c.memory.values.tolist()) == ("web-1", [0.2], [3e8])
    assert out.formats == ["opencost"] and any("averages over each step" in n for n in out.notes)
    assert any("__idle__" in n for n in out.notes)


def test_opencost_controller_aggregate_kept_as_a_sum():
    from kubefit.manifests.usage.opencost import decode_allocations

    body = json.loads(opencost({"a": _alloc(None, 1.0, 2e9, controller="web", controllerKind="deployment")}))
    [c] = decode_allocations(body, "oc.json").containers
    assert c.owner == ("Deployment", "web") and c.summed == {"cpu": 2.0, "memory": 4e9}


@pytest.mark.parametrize("bad,field", [(-1.0, "cpuCoreUsageAverage"), ("0.2", "cpuCoreUsageAverage")])
def test_opencost_bad_numbers(bad, field, tmp_path):
    a = _alloc("web-1", 0.2, 3e8)
    a["cpuCoreUsageAverage"] = bad
    f = tmp_path / "oc.json"
    f.write_bytes(opencost({"a": a}))
    with pytest.raises(InputError) as exc:
        read.read_usage([str(f)])
    assert exc.value.field == f"data[0].a.{field}"


def test_opencost_error_code(tmp_path):
    f = tmp_path / "oc.json"
    f.write_text(json.dumps({"code": 500, "message": "boom", "data": [{"cpuCoreUsageAverage": 1}]}))
    with pytest.raises(InputError, match="OpenCost answered code 500: boom"):
        read.read_usage([str(f)])


# ---------------------------------------------------------------------------------------------- metrics-server

POD_METRICS = """
apiVersion: metrics.k8s.io/v1beta1
kind: PodMetrics
metadata: {name: web-1, namespace: default}
timestamp: "2026-01-01T00:00:00Z"
window: 30s
containers:
- name: web
  usage: {cpu: 3415101n, memory: 21060Ki}
"""


def test_pod_metrics_one_sample_said(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text(POD_METRICS)
    out = read.read_usage([str(f)])
    [c] = out.containers
    assert c.cpu.values.tolist() == [0.003415101] and c.memory.values.tolist() == [21060 * 1024.0]
    assert c.measured == "sample" and any("one sample each" in n for n in out.notes)


def test_pod_metrics_over_time_make_a_series(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text(POD_METRICS + "---" + POD_METRICS.replace("00:00:00Z", "00:01:00Z").replace("21060Ki", "30000Ki"))
    [c] = read.read_usage([str(f)]).containers
    assert c.measured == "series" and c.memory.values.tolist() == [21060 * 1024.0, 30000 * 1024.0]


def test_pod_metrics_unknown_field(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text(POD_METRICS.replace("window: 30s", "windows: 30s"))
    with pytest.raises(InputError, match="unknown field 'windows'"):
        read.read_usage([str(f)])


def test_usage_file_of_another_kind_refused(tmp_path):
    f = tmp_path / "n.yaml"
    f.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n")
    with pytest.raises(InputError, match="kind 'Node' is no usage") as exc:
        read.read_usage([str(f)])
    assert exc.value.obj == "Node/node-1"


def test_usage_file_bounded(tmp_path, monkeypatch):
    f = tmp_path / "big.json"
    f.write_bytes(answer([cpu_series("p", [(i, "0.1") for i in range(100)])]))
    monkeypatch.setenv("KUBEFIT_MAX_USAGE_BYTES", "100")
    with pytest.raises(InputError, match="larger than 100 bytes"):
        read.read_usage([f"cpu={f}"])


def test_cli_bad_usage_is_one_line_exit_2(tmp_path):
    f = tmp_path / "u.json"
    f.write_bytes(answer([cpu_series("p", [(0, "+Inf")])]))
    examples = Path(__file__).resolve().parents[2] / "examples" / "rightsize" / "cluster.yaml"
    run = subprocess.run([sys.executable, "-m", "kubefit.cli", "rightsize", "-f", str(examples), "--requests-from",
                          "usage", "--usage", f"cpu={f}"], capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {f}: data.result[0].values: sample +Inf")
