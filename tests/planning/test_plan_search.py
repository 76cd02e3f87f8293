"""`plan`'s search (issue 47): the gallop from the requests' bound, the generous cluster only when no probe schedules
the whole queue, the bisection; the simulations each search asks, derived by hand."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefit
from kubefit.manifests.scenario import load_scenario
from kubefit.manifests.templates import Template
from kubefit.planning.plan import Planner, gallop_counts, plan
from kubefit.scheduler.config import load_configuration
from tests_support import run_json

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plan"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus: {{allocatable: {{cpu: '{cpu}', pods: '110'}}}}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}\n"


@pytest.mark.parametrize(("low", "limit", "probes"), [
    (0, 100, [0, 1, 3, 7, 15, 31, 63, 100]),  # +1, +2, +4, …, +32 (63); +64 would be 127 ≥ 100: the limit
    (5, 6, [5, 6]),  # 5 + 1 is the limit itself
    (4, 4, [4]),
    (3, 11, [3, 4, 6, 10, 11]),  # +1, +2, +4; +8 would be 18
])
def test_gallop_counts(low, limit, probes):
    assert gallop_counts(low, limit) == probes


# examples/plan: one 4-cpu node running a 2-cpu pod (2 cpu free); queued: ten 2-cpu web pods and batch-huge (32
# cpu, no node holds it); small = 4 cpu (2 web pods), large = 16 cpu (8 web pods). The queue is 11 pods: limit 11.
# Trial 0 schedules 1 (s₀ = 1): probes give up past 11 − 1 − 1 = 9 pods pending.
@pytest.mark.parametrize(("templates", "add", "simulations"), [
    # small: the whole queue's bound is ⌈(20 + 32 − 2) / 4⌉ = 13 > 11: the gallop is the generous cluster alone
    # ([11], run whole: 10, batch-huge pending), the target 10; its bound ⌈(20 − 2) / 4⌉ = 5; the gallop
    # again from 5 ([5, 6, 8, 11]): 5 holds. Trial 0, [11], [5]: 3.
    (["small"], {"small": 5}, 3),
    # large: the whole queue's bound ⌈50 / 16⌉ = 4; gallop [4, 5, 7, 11]: 4 schedules 10 (not the queue, more
    # than trial 0's 1), 5 no more than 4 (futile: the generous cluster next), 11 the same 10: the target 10, its
    # bound ⌈18 / 16⌉ = 2, the gallop from 2: 2 holds. Trial 0, [4], [5], [11], [2]: 5.
    (["large"], {"large": 2}, 5),
    # both: the smallest u with [u, u] not below the queue's bound: u = 3 (small ⌈(50 − 48) / 4⌉ = 1, large
    # ⌈(50 − 12) / 16⌉ = 3; at u = 2 small needs ⌈18 / 4⌉ = 5). Gallop [3, 4, 6, 10, 11] on [u, u]: 3 schedules
    # 10, 4 no more (futile), then 11: 10, the target; its uniform floor 1 (u = 0 is below it); the gallop from 1:
    # [1, 1] holds (2 + 8 + 1 free = 11 slots).
    # Descents from [1, 1]: every fewer count is below the bound ([0, 1]: small needs ⌈(18 − 16) / 4⌉ = 1;
    # [1, 0]: large needs ⌈(18 − 4) / 16⌉ = 1): no run. Greedy (2 nodes ≤ 12): [1, 0] (3) and [0, 1] (9, the
    # better rate 8/3 > 2/1), then [1, 1] (known) and [0, 2] (10, rate 1/3 < 1): three runs. Pruning: below the
    # bound. Trial 0, three gallop probes, [1, 1], three greedy runs: 8.
    (["small", "large"], {"small": 1, "large": 1}, 8),
], ids=["small", "large", "both"])
def test_simulations_of_the_examples(capsys, templates, add, simulations):
    args = ["plan", "-f", str(EXAMPLE / "cluster.yaml")]
    for t in templates:
        args += ["--node-template", str(EXAMPLE / f"{t}.yaml")]
    rc, data, err = run_json(capsys, *args)
    assert rc == 0, err
    assert (data["add"], data["simulations"]) == (add, simulations)


def _scenario(tmp_path: Path, existing: list[int], pods: list[int], size: int) -> tuple:
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([NODE.format(name=f"e{i}", cpu=c) for i, c in enumerate(existing)]
                                 + [POD.format(i=i, cpu=c) for i, c in enumerate(pods)]))
    tpl = tmp_path / "t.yaml"
    tpl.write_text(NODE.format(name="t", cpu=size))
    return load_scenario([path]), [Template(load_scenario([tpl]).nodes[0], Decimal(1))]


def _traced(monkeypatch, give_ups: list | None = None) -> list[list[int]]:
    """The counts of every simulation a Planner runs, in order (and each one's `give_up` in `give_ups`)."""
    runs: list[list[int]] = []
    real = Planner.run

    def run(self, counts, give_up=None):
        runs.append(list(counts))
        if give_ups is not None:
            give_ups.append(give_up)
        return real(self, counts, give_up)
    monkeypatch.setattr(Planner, "run", run)
    return runs


def test_the_generous_cluster_is_not_simulated_when_a_probe_schedules_the_queue(tmp_path, monkeypatch):
    # one 4-cpu node, six 2-cpu pods, a 4-cpu template: the queue's bound ⌈(12 − 4) / 4⌉ = 2 copies, which hold
    # the two pods each the bound counts on: trial 0 and [2], never [6] (the generous cluster)
    scenario, templates = _scenario(tmp_path, [4], [2] * 6, 4)
    runs = _traced(monkeypatch)
    result = plan(scenario, load_configuration(None), templates)
    assert (result.counts, result.target, result.simulations, runs) == ([2], 6, 2, [[0], [2]])


def test_only_pods_no_count_holds_pending_add_nothing(tmp_path, monkeypatch):
    # an 8-cpu node holds both 2-cpu pods; the 32-cpu pod fits no node: the queue's bound ⌈(36 − 8) / 4⌉ = 7 is
    # past the limit (3, the queue), so the gallop is the generous cluster alone: it schedules 2 = trial 0's,
    # the target; nothing to add, two simulations
    scenario, templates = _scenario(tmp_path, [8], [2, 2, 32], 4)
    runs = _traced(monkeypatch)
    result = plan(scenario, load_configuration(None), templates)
    assert (result.counts, result.target, runs) == ([0], 2, [[0], [3]])
    assert [s.pod.name for s in result.result.steps if s.node is None] == ["p2"]


def test_a_futile_probe_ends_the_gallop(tmp_path, monkeypatch):
    # a 40-cpu node holds twenty 1-cpu pods; a 64-cpu pod fits nowhere. Queue 21 (the limit), trial 0 schedules
    # 20, probes give up past 21 − 20 − 1 = 0 pods pending. The queue's bound ⌈(20 + 64 − 40) / 4⌉ = 11; gallop
    # [11, 12, 14, 18, 21]: 11 gives up at the 64-cpu pod (no more than trial 0: futile), so 12, 14 and 18 are
    # skipped for the generous cluster: its 20 is the target, trial 0 holds it
    scenario, templates = _scenario(tmp_path, [40], [1] * 20 + [64], 4)
    runs = _traced(monkeypatch)
    result = plan(scenario, load_configuration(None), templates)
    assert (result.counts, result.target, runs) == ([0], 20, [[0], [11], [21]])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(existing=st.lists(st.integers(1, 4), min_size=1, max_size=2),
       pods=st.lists(st.sampled_from([1, 2, 3, 5, 9]), min_size=1, max_size=12), size=st.integers(2, 8))
def test_one_template_answer_holds_and_one_fewer_does_not(tmp_path, existing, pods, size):
    """The contract: the target is the whole queue or what the generous cluster schedules; `k` schedules it, and
    `k − 1` does not or `k` is the requests' bound for the target (checked here by fresh simulations)."""
    scenario, templates = _scenario(tmp_path, existing, pods, size)
    config = load_configuration(None)
    result = plan(scenario, config, templates)
    check = Planner(scenario, config, templates)
    queue, limit = len(check.queue), len(check.queue)
    assert result.target in (queue, check.scheduled([limit]))
    (k,) = result.counts
    assert check.scheduled([k]) >= result.target and result.result.scheduled == check.result([k]).scheduled
    check.aim(result.target)
    assert k == 0 or check.scheduled([k - 1]) < result.target or k == check.floor.fewest(0, [0])


def test_the_readme_statefulset_plan_asks_four_clusters(capsys):
    # examples/install: the worker (1.5Gi) holds one 1Gi cassandra pod; cassandra-1 pends and the OrderedReady
    # controller never creates cassandra-2. Queue 3 (the limit), trial 0 schedules 1: probes give up past
    # 3 − 1 − 1 = 1 pod pending. The requests leave the bound at 0: gallop [0, 1, 3]; 0 is trial 0; [1] schedules
    # 2 (more than trial 0: on); [3], the generous cluster, run whole, schedules all 3: the target is the whole
    # queue, no smaller probe held it. Bisection between [1] (short) and [3]: [2] holds. Trial 0, [1], [3], [2].
    rc, data, err = run_json(capsys, "plan", "-f", str(EXAMPLE.parent / "install" / "kind-cluster.yaml"), "-f",
                             str(EXAMPLE.parent / "install" / "cassandra"), "--node-template",
                             str(EXAMPLE.parent / "install" / "worker.yaml"))
    assert rc == 0, err
    assert (data["add"], data["scheduled"], data["simulations"]) == ({"worker": 2}, 3, 4)


PORT_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c, ports: [{{containerPort: 80, "
            "hostPort: 80}}], resources: {{requests: {{cpu: '1'}}}}}}]}}\n")


def port_scenario(tmp_path: Path) -> tuple[Path, Path]:
    """An 8-cpu node and six 1-cpu pods that each take host port 80 (NodePorts: one per node), an 8-cpu template."""
    path, tpl = tmp_path / "ports.yaml", tmp_path / "t.yaml"
    path.write_text("---\n".join([NODE.format(name="e0", cpu=8), *(PORT_POD.format(i=i) for i in range(6))]))
    tpl.write_text(NODE.format(name="t", cpu=8))
    return path, tpl


def test_the_gallop_then_the_bisection_between_its_probes(tmp_path, monkeypatch):
    # requests fit today (the bound is 0) but host port 80 allows one pod per node: trial 0 schedules 1. Queue 6
    # (the limit), probes give up past 6 − 1 − 1 = 4 pending. Gallop [0, 1, 3, 6]: 1 copy schedules 2, 3 copies 4
    # (each more than the one before), 6 (the generous cluster, whole) all 6: the target is the queue, no smaller
    # probe held it; the bisection between 3 (short) and 6: 5 holds (6 nodes), 4 does not (5 nodes). Answer 5.
    # Trial 0 and the generous cluster run whole; the gallop's probes give up past 4 pods pending, the
    # bisection's (the whole queue the target for good) at the first.
    path, tpl = port_scenario(tmp_path)
    give_ups: list = []
    runs = _traced(monkeypatch, give_ups)
    result = kubefit.plan([str(path)], [str(tpl)], tie_break="first", warn=lambda _: None)
    assert (result.counts, result.target, runs) == ([5], 6, [[0], [1], [3], [6], [5], [4]])
    assert give_ups == [None, 4, 4, None, 0, 0]


def test_two_templates_gallop_bisect_cut_down_and_build_up(tmp_path, monkeypatch):
    # no node yet; six host-port pods (one per node); templates a (cost 1) and b (cost 2), 8 cpu each. Trial 0
    # schedules 0. The queue's uniform floor: [1, 1] (6 cpu fit on one copy, so [0, 0] alone is below it).
    # Gallop [1, 2, 4, 6] on [u, u]: 2, 4, then [4, 4] places all 6 (the target); bisection between 2 (short) and
    # 4: [3, 3] holds (6 nodes). Cut-downs from [3, 3] (6 nodes ≤ 12: both orders): a first: [2, 3] is short (5
    # nodes), one probe; b: [3, 2] short, one probe; the other order asks the same (known). Greedy from [0, 0]: a
    # node of either template places one more pod, a is cheaper: [1, 0] and [0, 1], then [k, 0] and [k − 1, 1] for
    # k = 2…6 ([1, 1] known): 2 + 1 + 4·2 = 11 runs, [6, 0] (cost 6 < 9). Pruning: [5, 0] (greedy's), [2, 3] and
    # [3, 2] known. Trial 0 + 3 + 1 + 2 + 11 = 18 simulations. (Descents by bisection would ask [1, 3] and [3, 1]
    # too: 20.)
    path = tmp_path / "pods.yaml"
    path.write_text("---\n".join(PORT_POD.format(i=i) for i in range(6)))
    templates = []
    for name, cost in (("a", 1), ("b", 2)):
        tpl = tmp_path / f"{name}.yaml"
        tpl.write_text(NODE.format(name=name, cpu=8).replace("metadata: {name: " + name + "}",
                                                            "metadata: {name: " + name + ", labels: {kubefit.io/cost: '"
                                                            + str(cost) + "'}}"))
        templates.append(str(tpl))
    result = kubefit.plan([str(path)], templates, tie_break="first", warn=lambda _: None)
    assert (result.counts, result.target, result.simulations) == ([6, 0], 6, 18)
