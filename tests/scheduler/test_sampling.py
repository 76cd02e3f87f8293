"""kube-scheduler's node sampling in the engine: the start index worked out by hand, and percentage 100.

`findNodesThatPassFilters` (schedule_one.go, v1.34) with parallelism 1 checks the nodes of the snapshot's
list from `nextStartNodeIndex` on; the (k+1)-th feasible node cancels the search and takes itself back, and
`findNodesThatFitPod` then moves the start index by `processedNodes = len(feasibleNodes) +
len(NodeToStatus)`: the k feasible nodes kept and every node that failed a filter before the cancellation,
*including those between the k-th and the (k+1)-th feasible node* (SPEC §7). A nominated node that failed
`evaluateNominatedNode` is in the same NodeToStatus map, so it counts once more when the search did not
reach it; a nominated node that passes takes the pod without a search, and the index stays.

The hand-computed cluster (`CLUSTER`): 120 nodes n000..n119 without zone labels (so the snapshot's list is
the input order), 4 cpu each except the six "small" ones n100..n104 and n119 with 1 cpu. Pods ask 2 cpu,
so a small node always fails NodeResourcesFit and a 4-cpu node takes two pods. 120 nodes < 125, so the
adaptive percentage is 50 − 120/125 = 50 %, 120·50/100 = 60 nodes, raised to the minimum: k = 100.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler import engine as eng
from kubefit.scheduler import simulate as sim
from kubefit.scheduler.config import NodeResourcesFitArgs, Profile, SchedulerConfiguration, ScorePlugin
from kubefit.scheduler.framework import Framework, schedule_one
from kubefit.scheduler.state import compile_state
from kubefit.scheduler.timeline import timeline

NANO = 10**9
SMALL = {100, 101, 102, 103, 104, 119}
PROFILE = Profile(filter_plugins=("NodeAffinity", "NodeResourcesFit"),
                  score_plugins=(ScorePlugin("NodeResourcesFit", 1),),
                  plugin_args={"NodeResourcesFit": NodeResourcesFitArgs("LeastAllocated")})
ADAPTIVE = SchedulerConfiguration((PROFILE,), None)


def node(i: int, cpu: int, zone: str | None = None, **labels: str) -> Node:
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return Node(f"n{i:03d}", {"cpu": cpu * NANO, "memory": (8 << 30) * NANO, "pods": 110 * NANO}, labels)


def pod(name: str, cpu_milli: int = 2000, **fields) -> Pod:
    return Pod(name, containers=(Container("c", {"cpu": cpu_milli * 10**6}),), **fields)


def pinned(name: str, *nodes: str, **fields) -> Pod:
    """A pod whose required node affinity names nodes by `metadata.name` (a field selector takes one value: one
    term per node, ORed): NodeAffinity's PreFilter result."""
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]} for name in nodes]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    return pod(name, affinity=affinity, **fields)


def cluster_engine() -> eng.Engine:
    nodes = [node(i, 1 if i in SMALL else 4) for i in range(120)]
    return eng.Engine(compile_state(nodes), ADAPTIVE, tie_break="first")


def run(engine: eng.Engine, p: Pod) -> tuple[str | None, int, int, bool]:
    """One cycle, bound: (node name, feasible nodes found, start index after it, nominated node first)."""
    d = engine.cycle(p)
    if d.node is not None:
        engine.bind(d.node, d.shape, p)
    name = None if d.node is None else engine.state.node_names[d.node]
    return name, d.feasible, engine.next_start, d.nominated_first


def test_adaptive_k_of_the_hand_computed_cluster():
    assert eng.num_feasible_nodes_to_find(None, 120) == 100


def test_start_index_counts_the_failing_nodes_before_the_cancelling_one():
    """Three cycles from start 0 (k = 100; ties of LeastAllocated go to the first node in input order).

    1. Start 0: n000..n099 are the 100 feasible nodes kept; n100..n104 fail; n105, the 101st feasible node,
       cancels. processed = 100 + 5 = 105 (the five failing nodes *after* the 100th feasible one count),
       start 105. All 100 are empty and tie: n000.
    2. Start 105: n105..n118 (14 feasible), n119 fails, n000 (2 of 4 cpu used: fits), n001..n085 — the
       100th feasible is n085 at position 15 + 85 = 100, the 101st (n086) at 101: processed = 101,
       start (105 + 101) mod 120 = 86. n000 is half full, the empty nodes tie: n001.
    3. Start 86: n086..n099 (14), n100..n104 fail, n105..n118 (14), n119 fails, n000..n071 (72): the 100th
       feasible is n071 at position 14 + 5 + 14 + 1 + 71 = 105: processed = 106, start 192 mod 120 = 72.
       The first empty node of the window: n002.
    4. A 5-cpu pod fits nowhere: all 120 nodes fail, processed = 120, start stays 72.
    5. Start 72, a 2-cpu pod: n072..n099 (28), n100..n104, n105..n118 (14), n119, n000..n057 (58): 100th at
       position 28 + 5 + 14 + 1 + 57 = 105, processed 106, start 178 mod 120 = 58; first empty node n003.
    """
    engine = cluster_engine()
    assert run(engine, pod("p1")) == ("n000", 100, 105, False)
    assert run(engine, pod("p2")) == ("n001", 100, 86, False)
    assert run(engine, pod("p3")) == ("n002", 100, 72, False)
    assert run(engine, pod("big", 5000)) == (None, 0, 72, False)
    assert run(engine, pod("p4")) == ("n003", 100, 58, False)


def test_a_node_that_stopped_fitting_fails_like_any_other():
    """After p1 (start 105, n000 holds 2 cpu), a 3-cpu pod fails on n000 too: n105..n118 (14 feasible),
    n119 and n000 fail, n001..n086 (86): the 100th feasible is n086 at position 16 + 85 = 101, the 101st
    at 102 → processed 102, start 207 mod 120 = 87. The window's nodes are all empty and tie: n001."""
    engine = cluster_engine()
    run(engine, pod("p1"))
    assert run(engine, pod("p2", 3000)) == ("n001", 100, 87, False)


def test_fewer_feasible_nodes_than_k_search_every_node():
    """Ten nodes n010..n019 carry `disk: ssd`; a pod selecting them has 10 < k = 100 feasible nodes, so the
    search never cancels: processed = 120, the start index stays (0, then 105 after p1); n010 is the first
    of the ten. A pod pinned to n005, n100, n101 searches those m = 3 nodes only: processed 3, feasible 1
    (n005, chosen without scoring), start 108."""
    nodes = [node(i, 1 if i in SMALL else 4, **({"disk": "ssd"} if 10 <= i < 20 else {})) for i in range(120)]
    engine = eng.Engine(compile_state(nodes), ADAPTIVE, tie_break="first")
    assert run(engine, pod("s1", node_selector={"disk": "ssd"})) == ("n010", 10, 0, False)
    assert run(engine, pod("p1")) == ("n000", 100, 105, False)
    assert run(engine, pod("s2", node_selector={"disk": "ssd"})) == ("n011", 10, 105, False)
    assert run(engine, pinned("p3", "n005", "n100", "n101")) == ("n005", 1, 108, False)


def test_feasible_nodes_bunched_far_from_the_start_index():
    """1,000 nodes, `percentageOfNodesToScore: 10` → k = max(1000·10/100, 100) = 100. n000..n599 have 1 cpu
    (a 2-cpu pod fails there), n600..n999 4 cpu. From start 0 the first 600 nodes fail, n600..n699 are the
    100 kept, n700 cancels at position 700: processed 700, the empty nodes tie, n600. (The engine first reads
    only as far as the 101st feasible node would lie were the 400 spread evenly: here it must read on.)"""
    nodes = [node(i, 1 if i < 600 else 4) for i in range(1000)]
    config = SchedulerConfiguration((dataclasses.replace(PROFILE, percentage_of_nodes_to_score=10),), None)
    engine = eng.Engine(compile_state(nodes), config, tie_break="first")
    assert run(engine, pod("p")) == ("n600", 100, 700, False)


def test_nominated_node_first():
    """evaluateNominatedNode before the search (each from a fresh start index 0 unless said).

    a. Nominated n119 (small: fails). The search stops before n119 (processed 105, as in the test above), but
       n119's status is in NodeToStatus: 106. n000 is taken from the search's 100 feasible nodes.
    b. Start 106, nominated n102 (fails): n106..n118 (13), n119 fails, n000..n086 (87): 100th at position
       14 + 86 = 100, processed 101; n102 lies beyond, +1 → 102, start 208 mod 120 = 88. Node: n001.
    c. Start 88, nominated n119 (fails): n088..n099 (12), n100..n104, n105..n118 (14), n119 (position 31, in
       the window: counted once), n000..n073: 100th at 32 + 73 = 105, processed 106, start 194 mod 120 = 74.
    d. Nominated n050, which fits: bound there unscored, feasible 1 (upstream's feasibleNodes = [n050]), the
       start index stays 74.
    e. Nominated a node the snapshot does not have: Get fails, the search runs as without it: start 74,
       n074..n099 (26), five small, n105..n118 (14), n119, n000..n059 (60): 100th at 26+5+14+1+59 = 105,
       processed 106 → start 60. First empty node of the window: n003 (n000, n001, n002 half full).
    """
    engine = cluster_engine()
    assert run(engine, pod("a", nominated_node_name="n119")) == ("n000", 100, 106, False)
    assert run(engine, pod("b", nominated_node_name="n102")) == ("n001", 100, 88, False)
    assert run(engine, pod("c", nominated_node_name="n119")) == ("n002", 100, 74, False)
    assert run(engine, pod("d", nominated_node_name="n050")) == ("n050", 1, 74, True)
    assert run(engine, pod("e", nominated_node_name="gone")) == ("n003", 100, 60, False)


def test_prefilter_result_and_a_nominated_node_outside_it():
    """A pod pinned to n005, n100, n101 searches those 3 nodes (m = 3 < 100, all of them): processed 3.
    Nominated to n119, outside the PreFilter result, it fails evaluateNominatedNode (NodeResourcesFit and
    NodeAffinity's Filter both refuse it) and is never reached by the search: processed 3 + 1."""
    engine = cluster_engine()
    assert run(engine, pinned("a", "n005", "n100", "n101")) == ("n005", 1, 3, False)
    assert run(engine, pinned("b", "n005", "n100", "n101", nominated_node_name="n119")) == ("n005", 1, 7, False)


def test_simulate_steps_carry_feasible_and_the_nominated_flag():
    """`simulate` over the hand-computed cluster: the steps of the first test, as a SimulationResult."""
    nodes = [node(i, 1 if i in SMALL else 4) for i in range(120)]
    result = sim.simulate(compile_state(nodes), ADAPTIVE, [pod("p1"), pod("p2"), pod("big", 5000),
                                                           pod("d", nominated_node_name="n050")], tie_break="first")
    names = result.state.node_names
    got = [(s.pod.name, None if s.node is None else names[s.node], s.feasible, s.nominated_first)
           for s in result.steps]
    assert got == [("p1", "n000", 100, False), ("p2", "n001", 100, False), ("big", None, 0, False),
                   ("d", "n050", 1, True)]
    assert [s["feasible"] for s in result.to_dict()["steps"]] == [100, 100, 0, 1]


# --------------------------------------------------------------------------- against a node-by-node search

def sequential_reference(nodes: list[Node], pods: list[Pod], config: SchedulerConfiguration) -> list[tuple]:
    """kube-scheduler's cycle with parallelism 1, node by node, from the plain framework's verdicts: the
    nominated node alone first; else the snapshot list (zone round robin), restricted to the PreFilter
    result, checked from `start` until the (k+1)-th feasible node; `start` += feasible kept + nodes whose
    status was recorded (a set: the nominated node counts once); the kept nodes scored, ties to the first
    in node order. Per pod: (node, feasible found, start after)."""
    state = compile_state(nodes)
    fw = Framework.build(config.profiles[0])
    everything, start, out = eng.zone_order(nodes).tolist(), 0, []
    for p in pods:
        verdicts = schedule_one(fw, state, p, score=False)  # every node's status; PreFilter's name set
        feasible_everywhere = set(verdicts.feasible.tolist())
        names = verdicts.pre_filter_node_names
        failed: set[int] = set()
        nominated = state.node_index.get(p.nominated_node_name)
        if nominated is not None:
            alone = schedule_one(fw, state, p, nodes=np.asarray([nominated]), score=False)
            if len(alone.feasible):
                state.bind(nominated, pod_demand(p), pod=p)
                out.append((nominated, 1, start))
                continue
            failed.add(nominated)
        candidates = [i for i in everything if names is None or state.nodes[i].name in names]
        k = eng.num_feasible_nodes_to_find(config.profiles[0].percentage_of_nodes_to_score, len(candidates))
        found: list[int] = []
        for step in range(len(candidates)):
            i = candidates[(start + step) % len(candidates)]
            if i not in feasible_everywhere:
                failed.add(i)
            elif len(found) == k:
                break  # the (k+1)-th feasible node cancels the search
            else:
                found.append(i)
        start = (start + len(found) + len(failed)) % len(nodes)
        if not found:
            out.append((None, 0, start))
            continue
        node = found[0] if len(found) == 1 else int(np.sort(schedule_one(fw, state, p, nodes=np.asarray(found)).best)[0])
        state.bind(node, pod_demand(p), pod=p)
        out.append((node, len(found), start))
    return out


@st.composite
def uneven_cluster(draw):
    """100-260 nodes in runs of equal size (so the feasible ones bunch up), 0-3 zones; pods of a few shapes,
    some pinned by name, some nominated."""
    cpus: list[int] = []
    size = draw(st.integers(100, 260))
    while len(cpus) < size:
        cpus += [draw(st.sampled_from([1, 2, 4, 8]))] * draw(st.integers(1, 60))
    zones = draw(st.integers(0, 3))
    nodes = [node(i, c, f"z{i % zones}" if zones else None) for i, c in enumerate(cpus)]
    pods = []
    for i in range(draw(st.integers(1, 30))):
        fields = {}
        if draw(st.integers(0, 5)) == 0:
            fields["nominated_node_name"] = nodes[draw(st.integers(0, len(nodes) - 1))].name
        if draw(st.integers(0, 5)) == 0:
            names = draw(st.lists(st.sampled_from([n.name for n in nodes]), min_size=1, max_size=5, unique=True))
            p = pinned(f"p{i}", *names, **fields)
        else:
            p = pod(f"p{i}", **fields)
        pods.append(dataclasses.replace(p, containers=(Container("c", {"cpu": draw(st.sampled_from(SHAPES)) * 10**6}),)))
    pct = draw(st.sampled_from([None, 0, 10, 60]))
    return nodes, pods, SchedulerConfiguration((dataclasses.replace(PROFILE, percentage_of_nodes_to_score=pct),), None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(uneven_cluster())
def test_engine_equals_a_node_by_node_search(scenario):
    """The engine's window, read off its cached verdicts (and only partly when the feasible nodes seem evenly
    spread), equals walking the nodes one by one as upstream's sequential search does."""
    nodes, pods, config = scenario
    engine = eng.Engine(compile_state(nodes), config, tie_break="first")
    got = []
    for p in pods:
        d = engine.cycle(p)
        if d.node is not None:
            engine.bind(d.node, d.shape, p)
        got.append((d.node, d.feasible, engine.next_start))
    assert got == sequential_reference(nodes, pods, config)


# --------------------------------------------------------------------------- percentage 100

SHAPES = (250, 1000, 2000, 3000)


@st.composite
def hundred_node_scenario(draw):
    """100-140 nodes in 0-3 zones, pods of a few shapes, some pinned to a few nodes by name (their PreFilter
    result moves the start index), some nominated to a node (evaluateNominatedNode first)."""
    n = draw(st.integers(100, 140))
    zones = draw(st.integers(0, 3))
    cpus = draw(st.lists(st.sampled_from([1, 2, 4]), min_size=n, max_size=n))
    nodes = [node(i, cpus[i], f"z{i % zones}" if zones else None) for i in range(n)]
    pods = []
    for i in range(draw(st.integers(1, 40))):
        fields = {}
        if draw(st.integers(0, 4)) == 0:
            fields["nominated_node_name"] = f"n{draw(st.integers(0, n - 1)):03d}"
        milli = draw(st.sampled_from(SHAPES))
        if draw(st.integers(0, 3)) == 0:
            names = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4, unique=True))
            pods.append(pinned(f"p{i}", *[f"n{j:03d}" for j in names], **fields))
            pods[-1] = dataclasses.replace(pods[-1], containers=(Container("c", {"cpu": milli * 10**6}),))
        else:
            pods.append(pod(f"p{i}", milli, **fields))
    where = draw(st.sampled_from(["global", "profile", "profile over global"]))
    profile = dataclasses.replace(PROFILE, percentage_of_nodes_to_score=None if where == "global" else 100)
    config = SchedulerConfiguration((profile,), {"global": 100, "profile": None, "profile over global": 30}[where])
    return nodes, pods, config


def outcome(result: sim.SimulationResult) -> list[tuple]:
    return [(s.node, list(map(int, s.ties)), s.feasible, s.nominated_first, s.message) for s in result.steps]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hundred_node_scenario(), st.sampled_from(["first", "random"]))
def test_percentage_100_changes_nothing(scenario, tie_break):
    """`percentageOfNodesToScore: 100` (global, in the profile, or the profile's over another global value):
    every cycle searches every candidate node, so steps, ties, feasible counts and the final state equal a
    run without sampling, however far PreFilter results and nominated nodes move the start index."""
    nodes, pods, config = scenario
    sampled = sim.simulate(compile_state(nodes), config, pods, tie_break=tie_break, seed=7, stranded=False)
    every = sim.simulate(compile_state(nodes), config, pods, tie_break=tie_break, seed=7, stranded=False,
                         sampling=False)
    assert outcome(sampled) == outcome(every)
    assert np.array_equal(sampled.state.requested, every.state.requested)


def test_timeline_counts_the_failing_cycles_it_skips():
    """`--timeline` tries one pod of a group of alike waiting pods and counts the others as tried; each of
    them still moves the start index as its own failing cycle would.

    0 s: five 5-cpu pods pinned to n000..n002 (4 cpu each) arrive; each cycle searches those m = 3 nodes and
    fails: processed 3 each, start 15. 1 s: `late` (2 cpu, runs 1 s) searches from n015; all 120 nodes fit,
    the 101st feasible (n115) stops the search at position 100: start 115; the 100 empty nodes n015..n114
    tie, n015. 2 s: `late` ends, the five waiting pods are retried as one group: 5·3 more, start
    130 mod 120 = 10. 3 s: `last` searches n010..n109, all empty again: n010."""
    nodes = [node(i, 4) for i in range(120)]
    pods = [dataclasses.replace(pinned(f"big{i}", "n000", "n001", "n002"),
                                containers=(Container("c", {"cpu": 5 * NANO}),)) for i in range(5)]
    pods += [dataclasses.replace(pod("late"), arrival=1, duration=1), dataclasses.replace(pod("last"), arrival=3)]
    result = timeline(compile_state(nodes), ADAPTIVE, pods, tie_break="first")
    placed = {r.pod.name: None if r.node is None else result.state.node_names[r.node] for r in result.runs}
    assert placed == {**{f"big{i}": None for i in range(5)}, "late": "n015", "last": "n010"}
    assert result.attempts.tolist() == [2, 2, 2, 2, 2, 1, 1]


def test_score_says_when_kube_scheduler_would_score_fewer_nodes(tmp_path, capsys):
    """`kubefit score` evaluates every node; with 120 empty 4-cpu nodes and no percentageOfNodesToScore the
    real cycle stops at k = 100 of the 120 feasible nodes (see the module docstring), which a warning says
    (stderr and `-o json`). With `percentageOfNodesToScore: 100`, or 99 nodes (fewer than 100: all searched),
    nothing is said."""
    import json

    from tests_support import run_json

    def scenario(nodes: int, percentage: int | None) -> str:
        config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler"}]}
        if percentage is not None:
            config["percentageOfNodesToScore"] = percentage
        items = [config] + [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:03d}"},
                             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
                            for i in range(nodes)]
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
                      "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}})
        path = tmp_path / f"s-{nodes}-{percentage}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        return str(path)

    rc, out, err = run_json(capsys, "score", "-f", scenario(120, None))
    assert rc == 0 and len(out["feasible"]) == 120
    note = ("kube-scheduler stops searching the 120 nodes for pod default/web at 100 feasible ones "
            "(percentageOfNodesToScore unset: adaptive) and scores only those, from where its previous cycle "
            "stopped; `score` shows all 120 feasible nodes, `simulate` searches as kube-scheduler does")
    assert out["warnings"] == [note] and note in err
    for nodes, percentage in ((120, 100), (99, None)):
        rc, out, err = run_json(capsys, "score", "-f", scenario(nodes, percentage))
        assert rc == 0 and out["warnings"] == [] and "stops searching" not in err
