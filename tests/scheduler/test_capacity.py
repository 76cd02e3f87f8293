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
    inputs = out.pop("inputs")  # what the count was computed from: the file, the options in force, the config
    assert (inputs["files"], inputs["options"]) == ([path], {"tieBreak": "first", "seed": 0})
    assert inputs["configuration"]["source"] == "kube-scheduler defaults"
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
    from kubefit.manifests.documents import Document
    from kubefit.manifests.load import decode_node, decode_pod

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


# ------------------------------------------------------------------ computed == replayed

TAINTS = [None, {"key": "gpu", "value": "true", "effect": "NoSchedule"}, {"key": "x", "effect": "PreferNoSchedule"}]


def _scenario_node(i: int, cpu: str, memory: str, pods: str, gpus: int, taint: int, cordoned: bool) -> dict:
    body = node(f"n{i}", cpu, memory, pods)
    body["metadata"]["labels"] = {"pool": "a" if i % 2 else "b"}
    if gpus:
        body["status"]["allocatable"]["example.com/gpu"] = str(gpus)
    spec: dict = {"unschedulable": True} if cordoned else {}
    if TAINTS[taint]:
        spec["taints"] = [TAINTS[taint]]
    body["spec"] = spec
    return body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["0", "500m", "1", "3", "8"]), st.sampled_from(["0", "1Gi", "3Gi", "8Gi"]),
                          st.sampled_from(["0", "2", "5", "110"]), st.integers(0, 3), st.integers(0, 2),
                          st.booleans()), min_size=1, max_size=7),
       st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["100m", "1", "2"]), st.sampled_from(["0", "1Gi"])),
                max_size=5),
       st.sampled_from(["", "100m", "700m", "1500m"]), st.sampled_from(["", "128Mi", "2500Mi"]),
       st.integers(0, 2), st.booleans(), st.booleans(),
       st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
       st.one_of(st.none(), st.integers(1, 40)), st.booleans())
def test_computed_capacity_equals_the_replay(nodes, bound, cpu, memory, gpus, tolerate, select, strategy, limit,
                                             ignore_gpu):
    """Copies computed per node (`copies_per_node`) give the replay's count, placement and FitError text,
    under every strategy, with bound pods, taints, cordoned nodes, a nodeSelector, an extended resource
    (ignored by Filter or not) and `--max` limits."""
    from kubefit.k8s.requests import pod_demand
    from kubefit.manifests.documents import Document
    from kubefit.manifests.load import decode_node, decode_pod
    from kubefit.scheduler.capacity import copies_per_node

    warnings: list[str] = []
    ns = [decode_node(Document(_scenario_node(i, *spec), "t", i), warnings) for i, spec in enumerate(nodes)]
    running = [decode_pod(Document(pod(f"b{k}", c, m, node_name=f"n{i % len(nodes)}"), "t", k), warnings)
               for k, (i, c, m) in enumerate(bound)]
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory), ("example.com/gpu", str(gpus) if gpus else ""))
                if v}
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if tolerate:
        spec["tolerations"] = [{"operator": "Exists"}]
    if select:
        spec["nodeSelector"] = {"pool": "a"}
    template = decode_pod(Document({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec},
                                   "t", 0), warnings)
    fit_args: dict = {"scoringStrategy": {"type": strategy}}
    if strategy == "RequestedToCapacityRatio":
        fit_args["scoringStrategy"]["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 0},
                                                                             {"utilization": 100, "score": 10}]}
    if ignore_gpu:
        fit_args["ignoredResources"] = ["example.com/gpu"]
    config = load_configuration(Document({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": fit_args}]}]}, "t", 0))
    state = compile_state(ns, running)
    assert copies_per_node(state.copy(), config, template, pod_demand(template)) is not None  # computed, not replayed
    computed = estimate_capacity(state, config, template, limit=limit)
    replayed = estimate_capacity(state, config, template, limit=limit, replay=True)
    assert computed.to_dict() == replayed.to_dict()


def test_filters_not_known_to_be_per_node_are_replayed(monkeypatch):
    """A Filter plugin outside PER_NODE_FILTERS (topology spread, ports, ... — here TaintToleration taken out
    of the set) sends the count to the replay, which still gives the hand-computed answer."""
    from kubefit.k8s.requests import pod_demand
    from kubefit.manifests.documents import Document
    from kubefit.manifests.load import decode_node, decode_pod
    from kubefit.scheduler import capacity

    warnings: list[str] = []
    ns = [decode_node(Document(n, "t", i), warnings) for i, n in enumerate(CLUSTER)]
    template = decode_pod(Document(pod("web", "500m", "512Mi"), "t", 0), warnings)
    config = load_configuration(None)
    state = compile_state(ns, [])
    assert capacity.copies_per_node(state, config, template, pod_demand(template)).tolist() == [4, 3]
    monkeypatch.setattr(capacity, "PER_NODE_FILTERS", capacity.PER_NODE_FILTERS - {"TaintToleration"})
    assert capacity.copies_per_node(state, config, template, pod_demand(template)) is None
    assert estimate_capacity(state, config, template).per_node == {"a": 4, "b": 3}
