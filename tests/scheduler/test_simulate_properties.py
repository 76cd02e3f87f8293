"""Properties of `simulate`: the incremental engine equals running `schedule_one` pod after pod; the random
tie-break is seeded, reproducible and only picks best nodes; sampling; queue order."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler import engine as eng
from kubefit.scheduler import rows
from kubefit.scheduler import simulate as sim
from kubefit.scheduler.config import (
    BalancedAllocationArgs,
    NodeResourcesFitArgs,
    Profile,
    ResourceWeight,
    SchedulerConfiguration,
    ScorePlugin,
    ShapePoint,
)
from kubefit.scheduler.framework import Framework, schedule_one
from kubefit.scheduler.postfilter import bound_copy, fit_error, post_filter_for
from kubefit.scheduler.state import compile_state

NANO = 10**9
GPU = "nvidia.com/gpu"


def q(units: int, milli: bool = False) -> int:
    """Scheduler units → nano-quantity (cpu given in millicores)."""
    return units * (10**6 if milli else NANO)


@st.composite
def nodes_st(draw, max_nodes: int = 7) -> list[Node]:
    out = []
    for i in range(draw(st.integers(1, max_nodes))):
        alloc = {"cpu": q(draw(st.sampled_from([0, 500, 1000, 2000, 4000])), milli=True),
                 "memory": q(draw(st.sampled_from([0, 1 << 30, 2 << 30, 4 << 30, 3_000_000_000]))),
                 "pods": q(draw(st.integers(0, 6)))}
        if draw(st.booleans()):
            alloc["ephemeral-storage"] = q(draw(st.sampled_from([0, 1 << 30, 10 << 30])))
        if draw(st.booleans()):
            alloc[GPU] = q(draw(st.integers(0, 4)))
        out.append(Node(f"n{i}", alloc))
    return out


@st.composite
def container_st(draw, sidecar: bool = False) -> Container:
    req = {}
    if draw(st.booleans()):
        req["cpu"] = q(draw(st.sampled_from([0, 50, 100, 250, 700, 1500])), milli=True)
    if draw(st.booleans()):
        req["memory"] = q(draw(st.sampled_from([0, 64 << 20, 300 << 20, 1 << 30, 1_500_000_000])))
    if draw(st.integers(0, 4)) == 0:
        req["ephemeral-storage"] = q(draw(st.sampled_from([0, 1 << 29, 4 << 30])))
    if draw(st.integers(0, 4)) == 0:
        req[GPU] = q(draw(st.integers(0, 2)))
    return Container("c", req, "Always" if sidecar else None)


@st.composite
def pods_st(draw, max_pods: int = 14, bound_to: list[str] | None = None) -> list[Pod]:
    shapes = [(tuple(draw(st.lists(container_st(), min_size=1, max_size=2))),
               tuple(draw(st.lists(container_st(sidecar=True), max_size=1))))
              for _ in range(draw(st.integers(1, 4)))]  # few shapes: the caches get reused
    out = []
    for i in range(draw(st.integers(1, max_pods))):
        containers, init = draw(st.sampled_from(shapes))
        node = draw(st.sampled_from(bound_to)) if bound_to else ""
        out.append(Pod(f"p{i}", node_name=node, priority=draw(st.integers(0, 2)), containers=containers,
                       init_containers=init))
    return out


@st.composite
def config_st(draw) -> SchedulerConfiguration:
    kind = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    names = draw(st.lists(st.sampled_from(["cpu", "memory", "ephemeral-storage", GPU]), min_size=1, max_size=4,
                          unique=True))
    resources = tuple(ResourceWeight(n, draw(st.integers(1, 5))) for n in names)
    shape = None
    if kind == "RequestedToCapacityRatio":
        points = sorted(draw(st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True)))
        shape = tuple(ShapePoint(u, draw(st.integers(0, 10))) for u in points)
    ba = tuple(ResourceWeight(n, 1) for n in draw(st.lists(
        st.sampled_from(["cpu", "memory", "ephemeral-storage", GPU]), min_size=1, max_size=4, unique=True)))
    scorers = draw(st.sampled_from([("fit", "ba"), ("fit",), ("ba",)]))
    weights = {"fit": draw(st.integers(1, 5)), "ba": draw(st.sampled_from([-1, 1, 2, 7]))}
    score_plugins = tuple(ScorePlugin({"fit": "NodeResourcesFit", "ba": "NodeResourcesBalancedAllocation"}[s],
                                      weights[s]) for s in scorers)
    profile = Profile(filter_plugins=("NodeResourcesFit",), score_plugins=score_plugins,
                      plugin_args={"NodeResourcesFit": NodeResourcesFitArgs(kind, resources, shape),
                                   "NodeResourcesBalancedAllocation": BalancedAllocationArgs(ba)})
    return SchedulerConfiguration((profile,), 100)


def reference(nodes, bound, queue, config, choose=None, legacy=False, objects=None):
    """The plain framework, pod after pod: (node, best nodes, FitError) per step; `choose` picks among best.
    A profile with PostFilter preempts as the golden README's rule says: victims deleted, the pod retried at
    once on its nominated node alone, then on every node. `objects`: the scenario's Services, ReplicaSets..."""
    state = compile_state(nodes, bound + queue, objects)
    fw = Framework.build(config.profiles[0], legacy=legacy, objects=objects)
    preempting = bool(fw.profile.extension_points.get("postFilter"))
    out = []
    for i, pod in enumerate(queue):
        r = schedule_one(fw, state, pod)
        if len(r.feasible) == 0 and preempting:
            post = post_filter_for(fw, state, pod, r)
            out.append((None, [], fit_error(r, post)))
            if post.nominated_node is None:
                continue
            nominated = post.nominated_node
            for victim in post.victims:
                state.unbind(nominated, victim)
            alone = schedule_one(fw, state, pod, nodes=np.asarray([nominated]), score=False)
            if len(alone.feasible):
                state.bind(nominated, pod_demand(pod), pod=bound_copy(pod, len(out)))
                out.append((nominated, [], None))
                continue
            r = schedule_one(fw, state, pod)
        if len(r.feasible) == 0:
            out.append((None, [], r.fit_error()))
            continue
        best = [int(b) for b in (r.best if len(r.feasible) > 1 else r.feasible)]
        node = best[0] if choose is None else choose(i, best)
        state.bind(node, pod_demand(pod), pod=bound_copy(pod, len(out)))
        out.append((node, best, None))
    return out, state


def fast(nodes, bound, queue, config, objects=None, **kw):
    state = compile_state(nodes, bound + queue, objects)
    return sim.simulate(state, config, queue, **kw)


def steps_of(result):
    return [(s.node, [int(t) for t in s.ties] if s.tie_count > 1 else [], s.message) for s in result.steps]


@st.composite
def scenario_st(draw):
    nodes = draw(nodes_st())
    bound = draw(pods_st(max_pods=4, bound_to=[n.name for n in nodes]))
    return nodes, bound, draw(pods_st()), draw(config_st())


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


ROW_PATHS = ["plugins", "python", "compiled"]


@contextmanager
def row_path(path: str, few_rows: int = 24):
    """Stale rows redone by the plugins, the Python row kernels (up to `few_rows` of them) or the C ones."""
    old = eng._FEW_ROWS, rows.evaluate_compiled
    eng._FEW_ROWS = 0 if path == "plugins" else few_rows
    if path != "compiled":
        rows.evaluate_compiled = None  # shapes get no compiled spec
    try:
        yield
    finally:
        eng._FEW_ROWS, rows.evaluate_compiled = old


def assert_equals_plain_framework(scenario, path: str) -> None:
    """`simulate` of the scenario (nodes, bound pods, queue, configuration), stale rows redone by `path`, gives
    the placement, ties, FitError text and final arrays of `schedule_one` run pod after pod."""
    nodes, bound, queue, config = scenario
    with row_path(path):
        result = fast(nodes, bound, queue, config, tie_break="first")
    ref, ref_state = reference(nodes, bound, queue, config)
    assert steps_of(result) == [(n, b if len(b) > 1 else [], m) for n, b, m in ref]
    assert np.array_equal(result.state.requested, ref_state.requested)
    assert np.array_equal(result.state.nonzero_requested, ref_state.nonzero_requested)


@SETTINGS
@given(scenario_st(), st.sampled_from(ROW_PATHS))
def test_engine_equals_plain_framework(scenario, path):
    """Placement, ties, FitError text and final arrays equal `schedule_one` run pod after pod, whether stale
    rows go through the plugins, the Python row kernels or the C ones."""
    assert_equals_plain_framework(scenario, path)


@SETTINGS
@given(scenario_st(), st.lists(st.integers(0, 3), min_size=14, max_size=14), st.sampled_from(ROW_PATHS))
def test_engine_equals_plain_framework_as_pods_leave(scenario, leaving, path):
    """Binds interleaved with pods leaving (a timeline's completions): every cycle of the engine gives the
    plain framework's feasible count, best nodes and FitError, whether its caches skip the nodes a shape
    could not use while pods were only added (rows re-evaluated by the row kernels, Python or C) or not
    (the plugins)."""
    nodes, bound, queue, config = scenario
    state, ref = compile_state(nodes, bound + queue), compile_state(nodes, bound + queue)
    with row_path(path, few_rows=64):
        engine = eng.Engine(state, config, tie_break="first")
        fw = Framework.build(config.profiles[0])
        placed: list = []  # (node, shape, pod)
        for pod, leave in zip(queue, leaving, strict=False):
            if leave and placed:  # a running pod ends
                node, shape, gone = placed.pop(leave % len(placed))
                engine.unbind(node, shape, gone)
                ref.unbind(node, gone)
            d = engine.cycle(pod)
            r = schedule_one(fw, ref, pod)
            assert d.feasible == len(r.feasible)
            if len(r.feasible) == 0:
                assert engine.fit_error(d.shape) == r.fit_error()
                continue
            best = [int(b) for b in (r.best if len(r.feasible) > 1 else r.feasible)]
            assert d.node == best[0] and (d.feasible == 1 or [int(b) for b in d.best] == best)
            engine.bind(d.node, d.shape, pod)
            ref.bind(d.node, pod_demand(pod), pod=pod)
            placed.append((d.node, d.shape, pod))
    assert np.array_equal(state.requested, ref.requested)


@SETTINGS
@given(scenario_st(), st.integers(0, 2**32 - 1))
def test_random_tie_break_is_seeded_and_picks_a_best_node(scenario, seed):
    nodes, bound, queue, config = scenario
    a = fast(nodes, bound, queue, config, tie_break="random", seed=seed)
    b = fast(nodes, bound, queue, config, tie_break="random", seed=seed)
    assert steps_of(a) == steps_of(b)
    chosen = [s.node for s in a.steps]

    def follow(i, best):
        assert chosen[i] in best  # only ever a node with the best total
        return chosen[i]
    ref, _ = reference(nodes, bound, queue, config, choose=follow)
    assert [n for n, _, _ in ref] == chosen


def test_random_tie_break_spreads_over_ties():
    """Identical empty nodes all tie: different seeds land on different ones, uniformly enough."""
    nodes = [Node(f"n{i}", {"cpu": q(4000, milli=True), "memory": q(8 << 30), "pods": q(10)}) for i in range(8)]
    pod = Pod("p", containers=(Container("c", {"cpu": q(100, milli=True)}),))
    config = SchedulerConfiguration((Profile(filter_plugins=("NodeResourcesFit",),
                                             score_plugins=(ScorePlugin("NodeResourcesFit", 1),),
                                             plugin_args={"NodeResourcesFit": NodeResourcesFitArgs()}),), 100)
    picks = [fast(nodes, [], [pod], config, seed=s).steps[0].node for s in range(400)]
    counts = np.bincount(picks, minlength=8)
    assert counts.min() > 20  # expected 50 each
    assert fast(nodes, [], [pod], config, tie_break="first").steps[0].node == 0


def big_cluster(n: int, zones: int = 3) -> list[Node]:
    return [Node(f"n{i:04d}", {"cpu": q((1 + i % 4) * 1000, milli=True), "memory": q((2 + i % 3) << 30), "pods": q(8)},
                 {"topology.kubernetes.io/zone": f"z{i % zones}"} if zones else {}) for i in range(n)]


def mixed_pods(n: int) -> list[Pod]:
    shapes = [{"cpu": q(250, milli=True), "memory": q(256 << 20)}, {"cpu": q(1000, milli=True)},
              {"memory": q(1 << 30)}, {"cpu": q(3000, milli=True), "memory": q(3 << 30)}]
    return [Pod(f"p{i}", containers=(Container("c", shapes[i % len(shapes)]),)) for i in range(n)]


def test_percentage_100_equals_every_node():
    """With percentageOfNodesToScore 100 sampling never applies, even above 100 nodes."""
    nodes, pods = big_cluster(150), mixed_pods(400)
    profile = Profile(filter_plugins=("NodeResourcesFit",),
                      score_plugins=(ScorePlugin("NodeResourcesFit", 1), ScorePlugin("NodeResourcesBalancedAllocation", 1)),
                      plugin_args={"NodeResourcesFit": NodeResourcesFitArgs("MostAllocated"),
                                   "NodeResourcesBalancedAllocation": BalancedAllocationArgs()},
                      percentage_of_nodes_to_score=100)
    config = SchedulerConfiguration((profile,), None)
    sampled = fast(nodes, [], pods, config, tie_break="first")
    full = fast(nodes, [], pods, config, tie_break="first", sampling=False)
    assert steps_of(sampled) == steps_of(full)
    ref, _ = reference(nodes, [], pods, config)
    assert [s.node for s in full.steps] == [n for n, _, _ in ref]


def test_num_feasible_nodes_to_find():
    f = eng.num_feasible_nodes_to_find
    assert [f(None, n) for n in (50, 99, 100, 1000, 5000, 10000)] == [50, 99, 100, 420, 500, 500]
    assert f(10, 5000) == 500 and f(1, 5000) == 100 and f(100, 5000) == 5000 and f(0, 1000) == 420


def test_zone_round_robin_order():
    nodes = [Node("a1", {}, {"topology.kubernetes.io/zone": "a"}), Node("a2", {}, {"topology.kubernetes.io/zone": "a"}),
             Node("a3", {}, {"topology.kubernetes.io/zone": "a"}), Node("b1", {}, {"topology.kubernetes.io/zone": "b"}),
             Node("x", {}), Node("b2", {}, {"topology.kubernetes.io/zone": "b"})]
    assert [nodes[i].name for i in eng.zone_order(nodes)] == ["a1", "b1", "x", "a2", "b2", "a3"]


def test_sampling_rotates_and_scores_only_the_nodes_found():
    """Adaptive sampling on 300 nodes: 48% = 144 feasible nodes per cycle, from a rotating start index; each
    pod lands on a best node among the first 144 feasible nodes of the zone-ordered list from there, and the
    start index moves to the 145th (every node before it processed, SPEC §7), or by all 300 nodes."""
    nodes, pods = big_cluster(300), mixed_pods(200)
    profile = Profile(filter_plugins=("NodeResourcesFit",),
                      score_plugins=(ScorePlugin("NodeResourcesFit", 1),),
                      plugin_args={"NodeResourcesFit": NodeResourcesFitArgs("MostAllocated")})
    config = SchedulerConfiguration((profile,), None)
    state = compile_state(nodes, pods)
    engine = eng.Engine(state, config, tie_break="first")
    fw = Framework.build(profile)
    order = eng.zone_order(nodes)
    start, k = 0, eng.num_feasible_nodes_to_find(None, 300)
    assert k == 144
    for pod in pods:
        rotated = np.concatenate([order, order])[start:start + 300]
        every = schedule_one(fw, state, pod, nodes=rotated, score=False).feasible  # in rotated order
        feasible = every[:k]
        processed = rotated.tolist().index(int(every[k])) if len(every) > k else 300
        d = engine.cycle(pod)
        assert d.feasible == len(feasible)
        sub = schedule_one(fw, state, pod, nodes=np.asarray(feasible))
        assert d.node == int(np.sort(sub.best)[0])
        start = (start + processed) % 300
        assert engine.next_start == start
        engine.bind(d.node, d.shape)


@pytest.mark.parametrize("priorities,expected", [([0, 5, 5, 1], ["p1", "p2", "p3", "p0"]), ([3, 2, 1], ["p0", "p1", "p2"])])
def test_queue_order_by_priority(tmp_path, capsys, priorities, expected):
    """`simulate` takes pending pods by priority (higher first), then document order."""
    import json

    from kubefit.cli import main
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
             "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}}}]
    docs += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
              "spec": {"priority": p, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
             for i, p in enumerate(priorities)]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["pod"] for s in out["steps"]] == expected


@st.composite
def placement_scenario_st(draw):
    """Resource scenarios plus taints, tolerations, labels, preferred node affinity and cordoned nodes,
    under kube-scheduler's default profile (normalized TaintToleration / NodeAffinity scores)."""
    from dataclasses import replace

    from kubefit.api.core import Taint, Toleration
    from kubefit.scheduler.config import load_configuration

    nodes = draw(nodes_st())
    taints = [Taint("dedicated", "gpu", "NoSchedule"), Taint("spot", "", "PreferNoSchedule"),
              Taint("noisy", "yes", "PreferNoSchedule")]
    nodes = [replace(n, labels={"tier": draw(st.sampled_from(["a", "b"]))}, unschedulable=draw(st.integers(0, 5)) == 0,
                     taints=tuple(draw(st.lists(st.sampled_from(taints), max_size=2, unique=True)))) for n in nodes]
    queue = []
    tolerations = [Toleration("spot", "Exists", "", "PreferNoSchedule"), Toleration("dedicated", "Equal", "gpu", "NoSchedule")]
    affinity = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 7, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["b"]}]}}]}}
    for p in draw(pods_st()):
        queue.append(replace(p, tolerations=tuple(draw(st.lists(st.sampled_from(tolerations), max_size=2, unique=True))),
                             affinity=affinity if draw(st.booleans()) else None))
    config = load_configuration(None)
    return nodes, queue, replace(config, percentage_of_nodes_to_score=100)


@SETTINGS
@given(placement_scenario_st())
def test_engine_equals_plain_framework_with_placement_plugins(scenario):
    nodes, queue, config = scenario
    result = fast(nodes, [], queue, config, tie_break="first")
    ref, ref_state = reference(nodes, [], queue, config)
    assert steps_of(result) == [(n, b if len(b) > 1 else [], m) for n, b, m in ref]
    assert np.array_equal(result.state.requested, ref_state.requested)


@SETTINGS
@given(scenario_st())
def test_engine_equals_plain_framework_on_the_legacy_scale(scenario):
    """Pre-1.17 scoring (a legacy Policy): the 0..10 plugins go through the generic path, same results."""
    nodes, bound, queue, config = scenario
    result = fast(nodes, bound, queue, config, tie_break="first", legacy=True)
    ref, _ = reference(nodes, bound, queue, config, legacy=True)
    assert steps_of(result) == [(n, b if len(b) > 1 else [], m) for n, b, m in ref]


def test_prefilter_node_subset_advances_the_start_index_by_its_size():
    """A pod whose required node affinity names nodes by `metadata.name` (NodeAffinity's PreFilter set) is
    searched on those nodes only; the start index moves by the nodes processed, then sampling goes on."""
    from dataclasses import replace

    from kubefit.scheduler.config import load_configuration

    nodes, pods = big_cluster(300), mixed_pods(3)
    pinned = replace(pods[0], affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0007"]}]}]}}})
    state = compile_state(nodes, pods)
    engine = eng.Engine(state, load_configuration(None), tie_break="first")
    d = engine.cycle(pinned)
    assert (d.node, d.feasible, engine.next_start) == (7, 1, 1)
    engine.bind(d.node, d.shape)
    d = engine.cycle(pods[1])  # 144 feasible nodes from index 1 of the zone-ordered list
    assert d.feasible == 144 and engine.next_start == 145


@given(st.integers(-(10**6), 10**9))
def test_simulation_time_is_the_epoch_plus_seconds(seconds):
    """A bound pod's start time: 2030-01-01T00:00:00Z + its step in seconds, as RFC 3339 (what
    preemption orders victims by), the first day formatted directly, the others by strftime."""
    import time

    from kubefit.scheduler.postfilter import SIMULATION_EPOCH, simulation_time

    expected = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(SIMULATION_EPOCH.timestamp()) + seconds))
    assert simulation_time(seconds) == expected
    assert bound_copy(Pod("p", containers=(Container("c", {}),)), seconds).start_time == expected


@SETTINGS
@given(scenario_st(), st.integers(0, 2**32 - 1))
def test_without_messages_only_the_fit_error_text_is_left_out(scenario, seed):
    """`messages=False` (what a tune trial asks): every placement, tie and final array as with messages;
    a pod that fits nowhere has no FitError text, where with messages it has kube-scheduler's."""
    nodes, bound, queue, config = scenario
    a = fast(nodes, bound, queue, config, tie_break="random", seed=seed)
    b = fast(nodes, bound, queue, config, tie_break="random", seed=seed, messages=False)
    assert [(n, b) for n, b, _m in steps_of(a)] == [(n, b) for n, b, _m in steps_of(b)]
    assert np.array_equal(a.state.requested, b.state.requested)
    for with_text, without in zip(a.steps, b.steps, strict=True):
        if with_text.node is None and not with_text.victims:
            assert with_text.message.startswith("0/") and without.message == ""
