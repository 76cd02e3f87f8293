"""What differs between the Kubernetes versions kubefit reproduces, against expectations taken from upstream (unit-test
tables ported, or derived by hand from the upstream code with the arithmetic shown), not from kubefit's output.

Each table names where it came from; every one was checked against the v1.36.3 code vendored in the kueue mirror
(`vendor/k8s.io/kubernetes/pkg/scheduler/...`). Opportunistic batching is in `test_batch.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubefit.cli import main
from kubefit.errors import ConfigError
from kubefit.k8s.version import ENV, for_minor
from kubefit.scheduler.config import decode_v1
from tests_support import ROOT, run_json

V1 = "kubescheduler.config.k8s.io/v1"
EXAMPLE = str(ROOT / "examples" / "versions" / "cluster.yaml")
SUPPORTED = "supported: 1.34, 1.35, 1.36, 1.37"


def _only(*plugins: str, args: list | None = None) -> dict:
    """A profile of PrioritySort, DefaultBinder and `plugins` alone."""
    enabled = [{"name": n} for n in ("PrioritySort", "DefaultBinder", *plugins)]
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [{
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": enabled}}, "pluginConfig": args or []}]}


def _write(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    return str(path)


# --------------------------------------------------------------------------- NodeResourcesBalancedAllocation
# `TestNodeResourcesBalancedAllocation` of `pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go`
# as rewritten by kubernetes#135573 (the table of its author's branch, brejman/kubernetes 5f318fd9): each case names
# the node's fractions before and after the pod and "Score: v1.36 (without -> with)". The with-pod score is the
# v1.34/v1.35 score (the same cases in kubernetes/kubernetes' older table give the same numbers). Memory is in
# bytes, as `makeNode(name, milliCPU, memory, scalars)` and `st.MakePod().Req(...)` give it; `.Req` twice is two
# containers. Nodes get `pods: 110` so that kubefit's Filter passes them (the upstream test only calls Score).

def _ba_node(name: str, cpu_milli: int, memory: int, gpu: int | None = None) -> dict:
    alloc = {"cpu": f"{cpu_milli}m", "memory": str(memory), "pods": "110"}
    if gpu is not None:
        alloc["nvidia.com/gpu"] = str(gpu)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"allocatable": alloc}}


def _ba_pod(name: str, containers: list[dict], node: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": f"c{i}", "image": "img", "resources": {"requests": r}}
                                 for i, r in enumerate(containers)]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


CPU_MEM = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]  # cpuAndMemory x2: 3000m / 5000
CPU_ONLY = [{"cpu": "1000m"}, {"cpu": "2000m"}]  # 3000m
CPU_MEM_GPU = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"}]
GPU_ARGS = [{"name": "NodeResourcesBalancedAllocation", "args": {"resources": [
    {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]}}]

# (case name, nodes, existing pods, requested pod's containers, plugin args, {node: v1.36}, {node: v1.34})
BALANCED = [
    ("nothing scheduled, resources requested, differently sized nodes",
     # node1 0 -> (3000/4000, 5000/10000): 100 -> 87; node2 0 -> (3000/6000, 5000/10000): 100 -> 100
     [_ba_node("node1", 4000, 10000), _ba_node("node2", 6000, 10000)], [], CPU_MEM, None,
     {"node1": 68, "node2": 75}, {"node1": 87, "node2": 100}),
    ("resources requested, pods scheduled with resources",
     # node1 (30%, 0%) -> (60%, 25%): 85 -> 82; node2 (30%, 25%) -> (60%, 50%): 97 -> 95
     [_ba_node("node1", 10000, 20000), _ba_node("node2", 10000, 20000)],
     [_ba_pod("e1", CPU_ONLY, "node1"), _ba_pod("e2", CPU_MEM, "node2")], CPU_MEM, None,
     {"node1": 73, "node2": 74}, {"node1": 82, "node2": 95}),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     # node2 (30%, 10%) -> (60%, 20%): 90 -> 80
     [_ba_node("node1", 10000, 20000), _ba_node("node2", 10000, 50000)],
     [_ba_pod("e1", CPU_ONLY, "node1"), _ba_pod("e2", CPU_MEM, "node2")], CPU_MEM, None,
     {"node1": 73, "node2": 70}, {"node1": 82, "node2": 80}),
    ("resources requested, pods scheduled with resources, nodes to reach min/max score",
     # node1 (100%, 0%) -> (100%, 100%): 50 -> 100; node2 (0%, 0%) -> (0%, 100%): 100 -> 50
     [_ba_node("node1", 3000, 5000), _ba_node("node2", 3000, 5000)],
     [_ba_pod("e1", CPU_ONLY, "node1")], [{"memory": "2000"}, {"memory": "3000"}], None,
     {"node1": 100, "node2": 50}, {"node1": 100, "node2": 50}),
    ("requested resources at node capacity",
     # node1 (50%, 0%) -> (100%, 0%): 75 -> 50; node2 (50%, 50%) -> (100%, 50%): 100 -> 75
     [_ba_node("node1", 6000, 10000), _ba_node("node2", 6000, 10000)],
     [_ba_pod("e1", CPU_ONLY, "node1"), _ba_pod("e2", CPU_MEM, "node2")], CPU_ONLY, None,
     {"node1": 62, "node2": 62}, {"node1": 50, "node2": 75}),
    ("scalar resource is included in the score computation if pod requests the scalar resource",
     # node1 (85.7%, 12.5%, 37.5%) -> (85.7%, 12.5%, 50%): 69 -> 70; node2 gpu 0% -> 12.5%: 62 -> 65
     [_ba_node("node1", 3500, 40000, gpu=8), _ba_node("node2", 3500, 40000, gpu=8)],
     [_ba_pod("e1", CPU_MEM_GPU, "node1"), _ba_pod("e2", CPU_MEM, "node2")],
     [{"cpu": "0", "memory": "0", "nvidia.com/gpu": "1"}], GPU_ARGS,
     {"node1": 75, "node2": 76}, {"node1": 70, "node2": 65}),
    ("scalar resource is not included in the score computation if pod doesn't request the scalar resource",
     # (0%, 0%) -> (85.7%, 12.5%) on both, the gpu ignored: 100 -> 63
     [_ba_node("node1", 3500, 40000, gpu=8), _ba_node("node2", 3500, 40000)], [], CPU_MEM, GPU_ARGS,
     {"node1": 56, "node2": 56}, {"node1": 63, "node2": 63}),
    ("hand-derived: the brief's node 4000m/10000 with 3000m/5000 requested, pod 1000m/2000",
     # without (0.75, 0.5): std 0.125 -> 87; with (1.0, 0.7): std 0.15 -> 85
     # v1.36: 50 + (50 + 85 - 87) / 2 = 50 + 48 / 2 = 74; v1.34: 85
     [_ba_node("node1", 4000, 10000)], [_ba_pod("e1", [{"cpu": "3000m", "memory": "5000"}], "node1")],
     [{"cpu": "1000m", "memory": "2000"}], None, {"node1": 74}, {"node1": 85}),
]


@pytest.mark.parametrize(("name", "nodes", "existing", "containers", "args", "v136", "v134"), BALANCED,
                         ids=[c[0] for c in BALANCED])
def test_balanced_allocation_table(tmp_path, capsys, name, nodes, existing, containers, args, v136, v134):
    """balanced_allocation_test.go (kubernetes#135573) `TestNodeResourcesBalancedAllocation`, case `name`: v1.36 and
    v1.37 score 50 + (50 + with - without) / 2; v1.34 and v1.35 score `with` alone."""
    path = _write(tmp_path, [_only("NodeResourcesBalancedAllocation", args=args), *nodes, *existing,
                             _ba_pod("requested", containers)])
    for version, want in (("1.34", v134), ("1.35", v134), ("1.36", v136), ("1.37", v136)):
        rc, out, err = run_json(capsys, "score", "-f", path, "--no-admission", "--detail", "--kube-version", version)
        assert rc == 0, err
        assert out["scoreRaw"]["NodeResourcesBalancedAllocation"] == want, version


def test_balanced_allocation_skips_best_effort_pods(tmp_path, capsys):
    """Case "nothing scheduled, nothing requested, skip in PreScore": PreScore returns Skip in every version."""
    path = _write(tmp_path, [_only("NodeResourcesBalancedAllocation"), _ba_node("node1", 4000, 10000),
                             _ba_node("node2", 4000, 10000), _ba_pod("requested", [{}])])
    for version in ("1.34", "1.36"):
        rc, out, err = run_json(capsys, "score", "-f", path, "--no-admission", "--detail", "--kube-version", version)
        assert rc == 0, err
        assert out["skippedScorePlugins"] == ["NodeResourcesBalancedAllocation"]


# --------------------------------------------------------------------------- NodeResourcesFitArgs validation
# `TestValidateRequestedToCapacityRatioScoringStrategy` of `pkg/scheduler/apis/config/validation/
# validation_pluginargs_test.go` (kubernetes/kubernetes, the pre-v1.36 table the code index holds: its paths are
# v1.34's `shape[...]`). v1.36.3's `ValidateNodeResourcesFitArgs` (kubernetes#132120) validates the same shape
# under `requestedToCapacityRatio.shape`; both run in the plugin's constructor (`initializing plugin
# "NodeResourcesFit"`), under the args' path `scoringStrategy`. "weight less than min" is not reachable through v1
# (its defaulting turns weight 0 into 1) and "ScoringStrategy: field is required" neither (v1 always defaults one).

SHAPE = [{"utilization": 30, "score": 3}]
# (case, resources, shape, None when valid else (path below the shape or strategy, bad value, detail))
RTC_CASES = [
    ("no shapes", None, [], ("shape", None, "Required value: at least one point must be specified")),
    ("weight greater than max", [{"name": "cpu", "weight": 101}], SHAPE,
     ("resources[0].weight", 101, "resource weight of cpu not in valid range (0, 100]")),
    ("valid shapes", None, SHAPE, None),
    ("utilization less than min", None, [{"utilization": -1, "score": 3}],
     ("shape[0].utilization", -1, "not in valid range [0, 100]")),
    ("utilization greater than max", None, [{"utilization": 101, "score": 3}],
     ("shape[0].utilization", 101, "not in valid range [0, 100]")),
    ("duplicated utilization values", None, [{"utilization": 10, "score": 3}, {"utilization": 10, "score": 3}],
     ("shape[1].utilization", 10, "values must be sorted in increasing order")),
    ("increasing utilization values", None,
     [{"utilization": 10, "score": 3}, {"utilization": 20, "score": 3}, {"utilization": 30, "score": 3}], None),
    ("non-increasing utilization values", None,
     [{"utilization": 10, "score": 3}, {"utilization": 20, "score": 3}, {"utilization": 15, "score": 3}],
     ("shape[2].utilization", 15, "values must be sorted in increasing order")),
    ("score less than min", None, [{"utilization": 10, "score": -1}], ("shape[0].score", -1, "not in valid range [0, 10]")),
    ("score greater than max", None, [{"utilization": 10, "score": 11}], ("shape[0].score", 11, "not in valid range [0, 10]")),
]
PLUGIN = 'initializing plugin "NodeResourcesFit": '


def _fit_config(strategy: dict) -> dict:
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration",
            "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}]}]}


def _refusal(strategy: dict, minor: int) -> str | None:
    try:
        decode_v1(_fit_config(strategy), "config.yaml", for_minor(minor))
    except ConfigError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize(("name", "resources", "shape", "error"), RTC_CASES, ids=[c[0] for c in RTC_CASES])
def test_requested_to_capacity_ratio_validation(name, resources, shape, error):
    """validation_pluginargs_test.go `TestValidateRequestedToCapacityRatioScoringStrategy`, case `name`: v1.34 and
    v1.35 report a shape error at `scoringStrategy.shape…`, v1.36 and v1.37 at
    `scoringStrategy.requestedToCapacityRatio.shape…` (kubernetes#132120); a weight error at
    `scoringStrategy.resources…` in every version."""
    strategy: dict = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}}
    if resources is not None:
        strategy["resources"] = resources
    for minor in (34, 35, 36, 37):
        got = _refusal(strategy, minor)
        if error is None:
            assert got is None, (minor, got)
            continue
        sub, value, detail = error
        below = "scoringStrategy." if sub.startswith("resources") or minor < 36 else \
            "scoringStrategy.requestedToCapacityRatio."
        what = detail if value is None else f"Invalid value: {value}: {detail}"
        assert got is not None and f"{PLUGIN}{below}{sub}: {what}" in got, (minor, got)
        if minor >= 36 and not sub.startswith("resources"):
            assert f"{PLUGIN}scoringStrategy.{sub}:" not in got  # the v1.34 path is gone


def test_requested_to_capacity_ratio_without_its_parameters():
    """v1.36.3 `ValidateNodeResourcesFitArgs`: type RequestedToCapacityRatio with no `requestedToCapacityRatio` is
    `field.Required(scoringStrategy.requestedToCapacityRatio, "must be specified when type is
    RequestedToCapacityRatio")`; v1.34.1 and v1.35.4 do not check it and `NewFit` dereferences nil (a panic)."""
    strategy = {"type": "RequestedToCapacityRatio"}
    for minor in (36, 37):
        got = _refusal(strategy, minor)
        assert got is not None and (f"{PLUGIN}scoringStrategy.requestedToCapacityRatio: Required value: "
                                    "must be specified when type is RequestedToCapacityRatio") in got
    for minor, patch in ((34, "v1.34.1"), (35, "v1.35.4")):
        got = _refusal(strategy, minor)
        assert got is not None and "nil pointer dereference" in got and f"kube-scheduler {patch} crashes" in got


def test_requested_to_capacity_ratio_with_another_type():
    """v1.36.3: `requestedToCapacityRatio` with type MostAllocated is `field.Forbidden(…, "must be nil when type is
    not RequestedToCapacityRatio")`; v1.34.1 only validates its shape (valid here) and accepts it."""
    strategy = {"type": "MostAllocated", "requestedToCapacityRatio": {"shape": SHAPE}}
    assert _refusal(strategy, 34) is None and _refusal(strategy, 35) is None
    for minor in (36, 37):
        got = _refusal(strategy, minor)
        assert got is not None and (f"{PLUGIN}scoringStrategy.requestedToCapacityRatio: Forbidden: "
                                    "must be nil when type is not RequestedToCapacityRatio") in got


# --------------------------------------------------------------------------- TaintToleration's Filter reason
# `TestTaintTolerationFilter` of `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go`
# (kubernetes/kubernetes after kubernetes#134740: the reason "node(s) had untolerated taint(s)"; the cases with the
# v1.35 alpha comparison operators Gt/Lt are left out). v1.34.1's Filter names the first untolerated taint,
# `fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)`.

def _taint(key: str, value: str, effect: str) -> dict:
    return {"key": key, "value": value, "effect": effect}


# (case, tolerations, taints, the taint v1.34 names or None when the pod passes)
TAINT_CASES = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints",
     [], [_taint("dedicated", "user1", "NoSchedule")], "{dedicated: user1}"),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [_taint("dedicated", "user1", "NoSchedule")], [_taint("dedicated", "user1", "NoSchedule")], None),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
     [_taint("dedicated", "user1", "NoSchedule")], "{dedicated: user1}"),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints",
     [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}], [_taint("foo", "bar", "NoSchedule")], None),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
      {"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
     [_taint("dedicated", "user2", "NoSchedule"), _taint("foo", "bar", "NoSchedule")], None),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match",
     [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
     [_taint("foo", "bar", "NoSchedule")], "{foo: bar}"),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty",
     [{"key": "foo", "operator": "Equal", "value": "bar"}], [_taint("foo", "bar", "NoSchedule")], None),
    ("The pod has a toleration that key and value don't match the taint on the node, but the effect is PreferNoSchedule",
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
     [_taint("dedicated", "user1", "PreferNoSchedule")], None),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule",
     [], [_taint("dedicated", "user1", "PreferNoSchedule")], None),
]


@pytest.mark.parametrize(("name", "tolerations", "taints", "named"), TAINT_CASES, ids=[c[0][:60] for c in TAINT_CASES])
def test_taint_toleration_filter(tmp_path, capsys, name, tolerations, taints, named):
    """taint_toleration_test.go `TestTaintTolerationFilter`, case `name`: UnschedulableAndUnresolvable with
    "node(s) had untolerated taint(s)" from v1.35 (kubernetes#134740), with the taint named in v1.34."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "nodeA"}, "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod1", "namespace": "default"},
           "spec": {"tolerations": tolerations, "containers": [{"name": "c", "image": "img"}]}}
    path = _write(tmp_path, [_only("TaintToleration"), node, pod])
    for version, reason in (("1.34", f"node(s) had untolerated taint {named}"),
                            ("1.35", "node(s) had untolerated taint(s)"), ("1.36", "node(s) had untolerated taint(s)")):
        rc, out, err = run_json(capsys, "score", "-f", path, "--no-admission", "--kube-version", version)
        if named is None:
            assert rc == 0, err
            assert out["filter"]["nodeA"] == {"code": "Success", "reasons": []}
        else:
            assert out["filter"]["nodeA"] == {"code": "UnschedulableAndUnresolvable", "reasons": [reason]}, version


# --------------------------------------------------------------------------- the version options
@pytest.mark.parametrize("given", ["1.33", "1.40", "v1.36.x"])
def test_unsupported_versions_are_refused_with_the_list(capsys, given):
    """Exit 2 and one line naming what is supported."""
    rc = main(["simulate", "-f", EXAMPLE, "--kube-version", given])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1
    assert f"unsupported Kubernetes version '{given}'" in err and err.endswith(SUPPORTED)


def test_another_patch_is_refused_naming_the_one_reproduced(capsys):
    rc = main(["simulate", "-f", EXAMPLE, "--kube-version", "v1.36.2"])
    err = capsys.readouterr().err
    assert rc == 2 and "kubefit reproduces 1.36 at v1.36.3 (give 1.36)" in err and SUPPORTED in err


@pytest.mark.parametrize(("version", "gates", "message"), [
    ("1.36", "Foo=true", "unrecognized feature gate: Foo"),
    ("1.34", "OpportunisticBatching=true", "unrecognized feature gate: OpportunisticBatching"),  # new in v1.35
    ("1.36", "InPlacePodVerticalScaling=false",
     "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"),
    ("1.36", "OpportunisticBatching=maybe", "invalid value of OpportunisticBatching=maybe"),
])
def test_feature_gates_refused_as_kube_scheduler_refuses_them(capsys, version, gates, message):
    """`k8s.io/component-base/featuregate` `SetFromMap`: an unknown gate, and a locked gate set to the other
    value (InPlacePodVerticalScaling is GA and locked from v1.35), are errors."""
    rc = main(["simulate", "-f", EXAMPLE, "--kube-version", version, "--feature-gates", gates])
    assert rc == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("env", "minor", "patch"), [("1.36", "1.36", "v1.36.3"), (None, "1.37", "v1.37.0")])
def test_environment_variable_else_the_newest(capsys, monkeypatch, env, minor, patch):
    """No option: `$KUBEFIT_KUBE_VERSION`, else the newest (1.37); `-o json` names the patch answered for."""
    if env is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, env)
    rc, out, err = run_json(capsys, "simulate", "-f", EXAMPLE)
    assert rc == 0, err
    assert out["inputs"]["kubeVersion"] == {"minor": minor, "patch": patch}
    assert out["inputs"]["kubeSchedulerVersion"] == patch


def test_option_beats_the_environment_and_gates_are_reported(capsys, monkeypatch):
    monkeypatch.setenv(ENV, "1.36")
    rc, out, err = run_json(capsys, "simulate", "-f", EXAMPLE, "--kube-version", "1.35",
                            "--feature-gates", "OpportunisticBatching=false")
    assert rc == 0, err
    assert out["inputs"]["kubeVersion"] == {"minor": "1.35", "patch": "v1.35.4",
                                            "featureGates": {"OpportunisticBatching": False}}


def test_a_bad_environment_value_is_refused_naming_the_variable(capsys, monkeypatch):
    monkeypatch.setenv(ENV, "1.99")
    rc = main(["simulate", "-f", EXAMPLE])
    err = capsys.readouterr().err
    assert rc == 2 and ENV in err and SUPPORTED in err


def test_version_lists_the_four_versions(capsys, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert main(["version"]) == 0
    out = capsys.readouterr().out
    assert "1.34 (v1.34.1), 1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.0, default)" in out
    monkeypatch.setenv(ENV, "1.35")
    assert main(["version"]) == 0
    assert "1.35 (v1.35.4, default)" in capsys.readouterr().out


# --------------------------------------------------------------------------- --compare-versions on the example
def test_compare_versions_moves_analytics_1_from_node_c_to_node_a(capsys):
    """examples/versions/cluster.yaml: three 8-cpu/32Gi nodes; node-a runs 5 cpu / 2Gi, node-b 500m / 20Gi,
    node-c 3500m / 14Gi; analytics-1 asks 500m / 6Gi. Default profile: only NodeResourcesFit (LeastAllocated,
    weight 1) and NodeResourcesBalancedAllocation (weight 1) tell the nodes apart (no taints, affinity, spread
    constraints, images or claims).
      LeastAllocated = ((alloc - req) * 100 / alloc per resource, truncated), averaged (int):
        node-a cpu 2500*100/8000 = 31, mem 24Gi → 75: (31 + 75) / 2 = 53
        node-b cpu 7000*100/8000 = 87, mem 6Gi → 18: 105 / 2 = 52
        node-c cpu 4000*100/8000 = 50, mem 12Gi → 37: 87 / 2 = 43
      Balance with the pod, 100 * (1 - |f_cpu - f_mem| / 2) truncated (v1.34's score):
        node-a (0.6875, 0.25) → 78; node-b (0.125, 0.8125) → 65; node-c (0.5, 0.625) → 93
      without the pod: node-a (0.625, 0.0625) → 71; node-b (0.0625, 0.625) → 71; node-c (0.4375, 0.4375) → 100
      v1.36+: 50 + (50 + with - without) / 2: node-a 50 + 57/2 = 78; node-b 50 + 44/2 = 72; node-c 50 + 43/2 = 71
    Totals: v1.34 node-a 131, node-b 117, node-c 136 → node-c; v1.37 node-a 131, node-b 124, node-c 114 → node-a."""
    rc, out, err = run_json(capsys, "simulate", "-f", EXAMPLE, "--compare-versions", "1.34,1.37")
    assert rc == 0, err
    assert [c["name"] for c in out["configurations"]] == ["1.34 (v1.34.1)", "1.37 (v1.37.0)"]
    moved = {d["pod"]: d["nodes"] for d in out["differences"]}
    assert moved["default/analytics-1"] == {"1.34 (v1.34.1)": "node-c", "1.37 (v1.37.0)": "node-a"}
    for version, raw in (("1.34", {"node-a": 78, "node-b": 65, "node-c": 93}),
                         ("1.37", {"node-a": 78, "node-b": 72, "node-c": 71})):
        rc, out, err = run_json(capsys, "score", "-f", EXAMPLE, "--pod", "analytics-1", "--detail",
                                "--kube-version", version)
        assert rc == 0, err
        assert out["scoreRaw"]["NodeResourcesFit"] == {"node-a": 53, "node-b": 52, "node-c": 43}
        assert out["scoreRaw"]["NodeResourcesBalancedAllocation"] == raw
        assert out["best"] == (["node-c"] if version == "1.34" else ["node-a"])


@pytest.mark.parametrize(("versions", "message"), [
    ("1.34", "name at least two different versions"),
    ("1.36,1.36", "name at least two different versions"),
    # the refusal names the option that gave the version (it named --kube-version, which was not given)
    ("1.34,1.39", "error: --compare-versions: unsupported Kubernetes version '1.39'; " + SUPPORTED),
])
def test_compare_versions_refusals(capsys, versions, message):
    rc = main(["simulate", "-f", EXAMPLE, "--compare-versions", versions])
    assert rc == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- label keys in v1.35+'s words
# apimachinery v0.34.1 util/validation IsQualifiedName vs v0.35.x/v0.36.3/v0.37.0-beta.0 api/validate/content
# IsLabelKey (which IsQualifiedName and labels' validateLabelKey became): "a qualified name" → "a valid label key"
# for a name of several slashes, `MaxLenError` "characters" → "bytes" (name part 63, prefix 253).
QNAME_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
               "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
               "(e.g. 'example.com/MyName')")
LONG = "example.com/" + "x" * 64


def _validate_refusal(tmp_path, capsys, config: dict, minor: str) -> str:
    """What `kubefit config validate --kube-version MINOR` says of `config` (it must refuse it)."""
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(config))
    assert main(["config", "validate", "-f", str(path), "--kube-version", minor]) != 0
    said = capsys.readouterr()
    return said.out + said.err


@pytest.mark.parametrize(("minor", "several_slashes", "too_long"), [
    ("1.34", "a qualified name " + QNAME_REGEX, "name part must be no more than 63 characters"),
    ("1.35", "a valid label key " + QNAME_REGEX, "name part must be no more than 63 bytes"),
    ("1.36", "a valid label key " + QNAME_REGEX, "name part must be no more than 63 bytes"),
    ("1.37", "a valid label key " + QNAME_REGEX, "name part must be no more than 63 bytes"),
])
def test_ignored_resources_are_refused_in_each_versions_words(tmp_path, capsys, minor, several_slashes, too_long):
    """`ValidateNodeResourcesFitArgs`: each `ignoredResources` entry through `metav1validation.ValidateLabelName`."""
    config = _only("NodeResourcesFit", args=[{"name": "NodeResourcesFit",
                                               "args": {"ignoredResources": ["example.com/a/b", LONG]}}])
    err = _validate_refusal(tmp_path, capsys, config, minor)
    assert f'ignoredResources[0]: Invalid value: "example.com/a/b": {several_slashes}' in err, err
    assert f'ignoredResources[1]: Invalid value: "{LONG}": {too_long}' in err, err


@pytest.mark.parametrize(("minor", "unit"), [("1.34", "characters"), ("1.37", "bytes")])
def test_added_affinity_keys_are_refused_in_each_versions_words(tmp_path, capsys, minor, unit):
    """`ValidateNodeAffinityArgs` → `nodeaffinity.NewNodeSelector` → `labels.NewRequirement`'s `validateLabelKey`."""
    affinity = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": LONG, "operator": "Exists"}]}]}}
    config = _only("NodeAffinity", args=[{"name": "NodeAffinity", "args": {"addedAffinity": affinity}}])
    err = _validate_refusal(tmp_path, capsys, config, minor)
    assert f'matchExpressions[0].key: Invalid value: "{LONG}": name part must be no more than 63 {unit}' in err, err
