"""`simulate --timeline`: a hand-computed replay, conservation and retries on the Alibaba trace, bad times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.k8s.requests import pod_demand
from kubefit.manifests.documents import Document
from kubefit.manifests.importers.alibaba import import_alibaba_gpu
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document, load_scenario
from kubefit.scheduler.scenario import prepare
from kubefit.scheduler.simulate import simulate
from kubefit.scheduler.timeline import timeline
from tests_support import GOLDEN_DIR, run_json

ROOT = Path(__file__).resolve().parents[2]
TRACE = GOLDEN_DIR.parent / "traces" / "alibaba-gpu-v2023"
CONFIG = ROOT / "examples" / "alibaba" / "scheduler-config.yaml"
TIMELINE = ROOT / "examples" / "timeline" / "cluster.yaml"



def test_hand_computed_replay(capsys):
    """One 4-cpu node. a (2 cpu, 0s, 10s) runs; b (3 cpu, 1s, 5s) waits; c (1 cpu, 2s, forever) fits beside a;
    at 10s a ends, b is retried and runs until 15s; c is still running at the end."""
    rc, data, err = run_json(capsys, "simulate", "-f", str(TIMELINE), "--timeline")
    assert rc == 0, err
    pods = {p["pod"]: p for p in data["pods"]}
    assert pods["a"] == {"pod": "a", "arrival": 0, "node": "node-1", "start": 0, "end": 10, "attempts": 1}
    assert pods["b"] == {"pod": "b", "arrival": 1, "node": "node-1", "start": 10, "end": 15, "attempts": 2}
    assert pods["c"] == {"pod": "c", "arrival": 2, "node": "node-1", "start": 2, "end": None, "attempts": 1}
    assert data["completed"] == 2 and data["freed"]["cpu"] == 5000
    series = data["series"]
    assert series["time"] == [0, 1, 2, 10, 15]
    assert series["pending"] == [0, 1, 1, 0, 0]
    assert series["running"] == [1, 1, 2, 2, 1]
    assert series["allocation"]["cpu"] == [50.0, 50.0, 75.0, 100.0, 25.0]
    assert series["stranded"]["cpu"] == [0, 2000, 1000, 0, 0]  # free cpu while b (3 cpu) waits: 2, then 1


def _trace_scenario(nodes: int | None = None, pods: int | None = None) -> Scenario:
    trace = import_alibaba_gpu(TRACE / "openb_node_list_gpu_node.csv", TRACE / "openb_pod_list_default.csv")
    scenario = load_scenario([CONFIG])
    for i, body in enumerate([*trace.nodes[:nodes], *trace.pods[:pods]]):
        add_document(scenario, Document(body, "trace", i))
    return scenario


def _requests(scenario: Scenario, state, runs) -> np.ndarray:
    """Σ of the pods' request vectors, computed from the pods (not from the replay)."""
    total = np.zeros(len(state.resources), dtype=np.int64)
    for run in runs:
        total += state.demand_vector(pod_demand(run.pod))
    return total


@pytest.mark.skipif(not TRACE.exists(), reason="the Alibaba trace is not next to the repository")
def test_full_trace_conserves_capacity():
    """Every pod of the default trace arrives and ends: what completions freed is what the pods asked for,
    and the cluster ends empty."""
    scenario = _trace_scenario()
    prepared = prepare(scenario)
    result = timeline(prepared.state, prepared.config, scenario.pending_pods, tie_break="first")
    assert len(result.runs) == 8152 and all(r.ended_at is not None for r in result.runs)
    assert np.array_equal(result.freed, _requests(scenario, result.state, result.runs))
    assert not result.state.requested.any() and not result.state.nonzero_requested.any()
    # the README: every pod placed on arrival in one cycle; no sample above 2 % of any resource
    assert all(r.bound_at == r.arrival for r in result.runs) and set(result.attempts.tolist()) == {1}
    assert max(v for s in result.samples for v in s["allocation"].values()) < 2


@pytest.mark.skipif(not TRACE.exists(), reason="the Alibaba trace is not next to the repository")
def test_small_cluster_retries_every_waiting_pod_after_each_completion():
    """20 nodes for the first 1,500 pods: pods wait; each completion retries every waiting pod; freed capacity
    equals the requests of the completed pods; what is still bound equals the running pods' requests."""
    scenario = _trace_scenario(nodes=20, pods=1500)
    prepared = prepare(scenario)
    result = timeline(prepared.state, prepared.config, scenario.pending_pods, tie_break="first",
                      record_attempts=True)
    completed = [r for r in result.runs if r.ended_at is not None]
    running = [r for r in result.runs if r.node is not None and r.ended_at is None]
    assert completed and any(len(r.times) > 1 for r in result.runs)  # some pod waited and was retried
    assert np.array_equal(result.freed, _requests(scenario, result.state, completed))
    assert np.array_equal(result.state.requested.sum(axis=0), _requests(scenario, result.state, running))
    ends = sorted({r.ended_at for r in completed})
    waited = 0
    for run in result.runs:
        start = run.bound_at if run.bound_at is not None else float("inf")
        for end in ends:
            if run.arrival < end <= start:  # waiting when capacity freed (or bound by that very retry)
                assert end in run.times, (run.pod.name, end)
                waited += 1
    assert waited > 0
    assert all(tried == waiting for _t, waiting, tried in result.retries)


@pytest.mark.parametrize(("annotation", "value", "fragment"), [
    ("kubefit.io/duration", "-5s", "must not be negative"),
    ("kubefit.io/arrival", "soon", "must be a duration"),
], ids=["negative-duration", "bad-arrival"])
def test_bad_time_is_one_clear_error(tmp_path, capsys, annotation, value, fragment):
    given = {"kubefit.io/duration": 'kubefit.io/duration: "10s"', "kubefit.io/arrival": 'kubefit.io/arrival: "0s"'}
    text = TIMELINE.read_text().replace(given[annotation], f'{annotation}: "{value}"', 1)  # pod a's own value
    path = tmp_path / "s.yaml"
    path.write_text(text)
    rc = main(["simulate", "-f", str(path), "--timeline"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("error:") == 1 and "Traceback" not in err
    assert all(f in err for f in (str(path), "Pod/a", f"metadata.annotations.{annotation}", fragment)), err


def test_timeline_plot_is_written(tmp_path, capsys):
    png = tmp_path / "timeline.png"
    rc, _data, err = run_json(capsys, "simulate", "-f", str(TIMELINE), "--timeline", "--plot", str(png))
    assert rc == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 8Gi, pods: '110'}}}}\n"
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{priority: {prio}, containers: [{{name: c, "
       "resources: {{requests: {{cpu: '{cpu}', memory: {mem}Mi}}}}}}]}}\n")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nodes=st.lists(st.integers(1, 8), min_size=1, max_size=5),
       pods=st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 2048), st.integers(0, 2)), min_size=1,
                     max_size=25))
# p3 (1001m, 426Mi) fails on cpu; p4 binds and leaves 425Mi; p5, p3's shape, fails on cpu AND memory: its FitError
# is its own cycle's, not p3's (found by hypothesis: the replay reused p3's message after a bind)
@example(nodes=[1], pods=[(0, 1623, 0), (0, 2048, 0), (0, 2048, 0), (1001, 426, 0), (0, 2048, 0), (1001, 426, 0)])
def test_timeline_without_times_is_simulate(tmp_path, nodes, pods):
    """All pods at 0 s and none ending: the replay places every pod where `simulate` does, in the same cycles."""
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([NODE.format(i=i, cpu=c) for i, c in enumerate(nodes)]
                                 + [POD.format(i=i, cpu=f"{c}m", mem=m, prio=p) for i, (c, m, p) in enumerate(pods)]))
    scenario = load_scenario([path])
    one = prepare(scenario)
    simulated = simulate(one.state, one.config, scenario.pending_pods, seed=7)
    two = prepare(scenario)
    replayed = timeline(two.state, two.config, scenario.pending_pods, seed=7)
    assert [s.node for s in simulated.steps] == [r.node for r in replayed.runs]
    assert np.array_equal(one.state.requested, two.state.requested)
    # the replay runs no PostFilter (timeline_warnings says so): the FitError is simulate's without its
    # PostFilter part (here preemption never finds victims: pods are queued by priority, none bound before)
    heads = [s.message and s.message.split(" no new claims to deallocate")[0] for s in simulated.steps]
    assert heads == [replayed.messages[i] for i in range(len(replayed.runs))]


def test_timeline_says_it_does_not_preempt(tmp_path):
    """Pods of two priorities under the default profile (DefaultPreemption): the replay names what it leaves out."""
    from kubefit.scheduler.timeline import timeline_warnings

    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([NODE.format(i=0, cpu=1), POD.format(i=0, cpu="1", mem=1, prio=0),
                                  POD.format(i=1, cpu="1", mem=1, prio=5)]))
    scenario = load_scenario([path])
    config = prepare(scenario).config
    assert any("does not replay preemption" in w for w in timeline_warnings(config, scenario.pending_pods))
    assert timeline_warnings(config, scenario.pending_pods[:1]) == []  # one priority: nothing to preempt
