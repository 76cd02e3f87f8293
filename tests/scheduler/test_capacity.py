"""`kubefit capacity`: copies of a pod placed one by one (cluster-capacity), against hand-computed
cases and against `simulate` of the same copies."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.scheduler.capacity import estimate_capacity
from kubefit.scheduler.config import SchedulerConfiguration, load_configuration
from kubefit.scheduler.simulate import simulate
from kubefit.scheduler.state import compile_state


def node(name: str, cpu: str, memory: str, pods: str = "110") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}


def pod(name: str, cpu: str, memory: str, node_name: str | None = None) -> dict:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def write(tmp_path, docs: list[dict]) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    return str(path)


def run(capsys, *argv: str) -> tuple[int, dict | str]:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if rc == 0 and "-o" in argv else out.err)


CLUSTER = [node("a", "2", "4Gi"), node("b", "4", "2Gi", pods="3")]


# the PostFilter part of the default profile's FitError when no pod has a lower priority to preempt
NO_VICTIMS = (" no new claims to deallocate, preemption: 0/2 nodes are available: "
              "2 No preemption victims found for incoming pod.")

def test_hand_computed(tmp_path, capsys):
    """a: 2 cpu / 500m = 4 copies (memory would allow 8); b: 3 pods max (cpu 8, memory 4): 7 in all."""
    path = write(tmp_path, [*CLUSTER, pod("web", "500m", "512Mi")])
    rc, out = run(capsys, "capacity", "-f", path, "-o", "json")
    assert rc == 0
    assert out == {"pod": "default/web", "count": 7, "perNode": {"a": 4, "b": 3}, "stopReason": "Unschedulable",
                   # the default profile's PostFilter adds its part: no pod of lower priority to preempt
                   "message": "0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods." + NO_VICTIMS,
                   "warnings": []}


def test_bound_pods_are_accounted_and_pending_ones_ignored(tmp_path, capsys):
    docs = [*CLUSTER, pod("web", "500m", "512Mi"), pod("busy", "1", "1Gi", node_name="a"),
            pod("other", "3", "1Gi")]
    rc, out = run(capsys, "capacity", "-f", write(tmp_path, docs), "-o", "json")
    assert (out["count"], out["perNode"]) == (5, {"a": 2, "b": 3})
    rc, out = run(capsys, "capacity", "-f", write(tmp_path, docs), "-o", "json", "--pod", "busy")
    # a copy of a running pod is a new pending pod: a has 1 cpu left (1 copy), b memory for 2
    assert (out["pod"], out["count"], out["perNode"]) == ("default/busy", 3, {"a": 1, "b": 2})
    assert out["message"] == "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory." + NO_VICTIMS


def test_max(tmp_path, capsys):
    rc, out = run(capsys, "capacity", "-f", write(tmp_path, [*CLUSTER, pod("web", "500m", "512Mi")]),
                  "-o", "json", "--max", "3")
    assert out["count"] == 3 and out["stopReason"] == "LimitReached"
    assert sum(out["perNode"].values()) == 3


def test_bad_input(tmp_path, capsys):
    path = write(tmp_path, [*CLUSTER, pod("web", "500m", "512Mi")])
    rc, err = run(capsys, "capacity", "-f", path, "--pod", "nope")
    assert rc == 2 and "no pod named 'nope'" in err
    rc, err = run(capsys, "capacity", "-f", write(tmp_path, CLUSTER))
    assert rc == 2 and "no pending pod" in err
    rc, _ = run(capsys, "capacity", "-f", path, "--max", "0")
    assert rc == 2


def test_table(tmp_path, capsys):
    rc, out = run(capsys, "capacity", "-f", write(tmp_path, [*CLUSTER, pod("web", "500m", "512Mi")]))
    assert rc == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["500m", "1", "3", "8"]), st.sampled_from(["1Gi", "3Gi", "8Gi"]),
                          st.sampled_from(["2", "5", "110"])), min_size=1, max_size=6),
       st.sampled_from(["100m", "700m", "1500m"]), st.sampled_from(["128Mi", "1Gi", "2500Mi"]),
       st.sampled_from(["LeastAllocated", "MostAllocated"]))
def test_capacity_equals_simulating_that_many_copies(nodes, cpu, memory, strategy):
    """Simulating count+1 copies schedules exactly `count` of them, on the same nodes, and the last one
    stays pending with the capacity's stopping message."""
    from kubefit.load import Document, decode_node, decode_pod

    warnings: list[str] = []
    ns = [decode_node(Document(node(f"n{i}", *spec), "t", i), warnings) for i, spec in enumerate(nodes)]
    config = load_configuration(Document({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                        "args": {"scoringStrategy": {"type": strategy}}}]}]}, "t", 0))
    assert isinstance(config, SchedulerConfiguration)
    template = decode_pod(Document(pod("p", cpu, memory), "t", 0), warnings)
    cap = estimate_capacity(compile_state(ns, [template]), config, template, tie_break="first")
    copies = [decode_pod(Document(pod(f"p{i}", cpu, memory), "t", i), warnings) for i in range(cap.count + 1)]
    result = simulate(compile_state(ns, copies), config, copies, tie_break="first")
    assert result.scheduled == cap.count
    assert result.placement() == cap.per_node
    assert result.steps[-1].message == cap.message


def test_no_fit_filter_needs_max(tmp_path, capsys):
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}],
                                                       "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]}}}]}
    path = write(tmp_path, [config, *CLUSTER, pod("web", "500m", "512Mi")])
    rc, err = run(capsys, "capacity", "-f", path)
    assert rc == 2 and "give --max" in err
    rc, out = run(capsys, "capacity", "-f", path, "--max", "5", "-o", "json")
    assert out["count"] == 5 and out["stopReason"] == "LimitReached"
