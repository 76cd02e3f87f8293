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
from kubefit.planning.plan import Planner, _cut, gallop_counts, plan
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


@pytest.mark.parametrize(("answer", "high", "low", "hint", "probes"), [
    (37, 40, 0, None, [39, 37, 33, 35, 36]),  # the gallop down (−1, −3, −7 …), then the bisection of (33, 37]
    (40, 44, 0, 40, [43, 40, 39]),  # 43 holds: the hint next, then one fewer than it
    (42, 44, 0, 40, [43, 40, 42, 41]),  # the hint is short: the bisection between it and 43
    (44, 44, 0, 40, [43]),  # one fewer than high is short: the hint is never asked
    (41, 44, 41, 30, [43, 41]),  # the hint below low: the gallop's own next probe, low
    (10, 44, 0, 42, [43, 41, 37, 29, 13, 0, 7, 10, 9]),  # a hint not below the gallop's next probe changes nothing
])
def test_cut_down_by_way_of_a_hint(answer, high, low, hint, probes):
    seen: list[int] = []
    assert _cut(lambda k: seen.append(k) or k >= answer, high, low, hint) == answer
    assert seen == probes


# examples/plan: one 4-cpu node running a 2-cpu pod (2 cpu free); queued: ten 2-cpu web pods and batch-huge (32
# cpu, no node holds it); small = 4 cpu (2 web pods), large = 16 cpu (8 web pods). The queue is 11 pods: limit 11.
# Trial 0 schedules 1 (s₀ = 1): probes give up past 11 − 1 − 1 = 9 pods pending. Its pending pods: nine web pods and
# batch-huge, which asks more than any copy has: the estimate counts the nine (f = 9, 18 cpu), expecting 1 + 9 = 10
# placed; their requests' bound on the copies alone is the estimate itself (no run) whenever it is not above the
# whole queue's bound L.
@pytest.mark.parametrize(("templates", "add", "simulations"), [
    # small: the estimate ⌈18 / 4⌉ = 5; the whole queue's bound ⌈(20 + 32 − 2) / 4⌉ = 13 > 11: L is the limit, so
    # the first probe is the generous cluster ([11], run whole: 10, batch-huge pending; all the estimate expects,
    # not the queue: futile), the target 10; its bound ⌈(20 − 2) / 4⌉ = 5, the estimate again: [5] holds, at the
    # bound. Trial 0, [11], [5]: 3.
    (["small"], {"small": 5}, 3),
    # large: the estimate ⌈18 / 16⌉ = 2 is below L = ⌈50 / 16⌉ = 4: the first probe [4] schedules 10, what the
    # estimate expects and not the queue (futile): [11], the same 10, the target; its bound ⌈18 / 16⌉ = 2 and the
    # estimate 2: [2] holds at the bound. Trial 0, [4], [11], [2]: 4 (main's gallop asked [5] too: 5).
    (["large"], {"large": 2}, 4),
    # both: the estimate's uniform u for 18 cpu: u = 1 (small needs ⌈(18 − 16) / 4⌉ = 1, large ⌈(18 − 4) / 16⌉ =
    # 1); L = 3 (small ⌈(50 − 48) / 4⌉ = 1, large ⌈(50 − 12) / 16⌉ = 3; at u = 2 small needs ⌈18 / 4⌉ = 5). [3, 3]
    # schedules 10 (futile, as above), then [11, 11]: 10, the target; its uniform floor 1, the estimate 1: [1, 1]
    # holds (2 + 8 + 1 free = 11 slots).
    # Descents from [1, 1]: every fewer count is below the bound ([0, 1]: small needs ⌈(18 − 16) / 4⌉ = 1;
    # [1, 0]: large needs ⌈(18 − 4) / 16⌉ = 1): no run. Greedy (2 nodes ≤ 12): [1, 0] (3) and [0, 1] (9, the
    # better rate 8/3 > 2/1), then [1, 1] (known) and [0, 2] (10, rate 1/3 < 1): three runs. Pruning: below the
    # bound. Trial 0, [3, 3], [11, 11], [1, 1], three greedy runs: 7 (main's gallop asked [4, 4] too: 8).
    (["small", "large"], {"small": 1, "large": 1}, 7),
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

    def run(self, counts, give_up=None, check=None):
        runs.append(list(counts))
        if give_ups is not None:
            give_ups.append(give_up)
        return real(self, counts, give_up, check)
    monkeypatch.setattr(Planner, "run", run)
    return runs


def _on_copies(monkeypatch) -> list[tuple[int, int]]:
    """Each run of the pending pods on the copies alone (`Planner.on_copies`): its count and how many it placed."""
    runs: list[tuple[int, int]] = []
    real = Planner.on_copies

    def on_copies(self, pods, count):
        placed = real(self, pods, count)
        runs.append((count, placed))
        return placed
    monkeypatch.setattr(Planner, "on_copies", on_copies)
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


def test_the_readme_statefulset_plan_asks_four_clusters(capsys, monkeypatch):
    # examples/install: the worker (1.5Gi) holds one 1Gi cassandra pod; cassandra-1 pends and the OrderedReady
    # controller never creates cassandra-2. Queue 3 (the limit), trial 0 schedules 1: probes give up past
    # 3 − 1 − 1 = 1 pod pending. The requests leave the whole queue's bound at 0. The estimate: cassandra-1 and
    # cassandra-2, 1Gi each, one per copy: their bound on the copies is 2 > 0; on 2 copies alone both are placed
    # (cassandra-1 waits for cassandra-0, running already, so only cassandra-2 waits, for cassandra-1): E = 2.
    # [2] schedules all 3 (the target for good), a guess: down from it, [1] is short. Trial 0, the run on the
    # copies, [2], [1]: 4 (main's gallop: trial 0, [1], [3], [2]).
    alone = _on_copies(monkeypatch)
    rc, data, err = run_json(capsys, "plan", "-f", str(EXAMPLE.parent / "install" / "kind-cluster.yaml"), "-f",
                             str(EXAMPLE.parent / "install" / "cassandra"), "--node-template",
                             str(EXAMPLE.parent / "install" / "worker.yaml"))
    assert rc == 0, err
    assert (data["add"], data["scheduled"], data["simulations"], alone) == ({"worker": 2}, 3, 4, [(2, 2)])


PORT_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c, ports: [{{containerPort: 80, "
            "hostPort: 80}}], resources: {{requests: {{cpu: '1'}}}}}}]}}\n")


def port_scenario(tmp_path: Path) -> tuple[Path, Path]:
    """An 8-cpu node and six 1-cpu pods that each take host port 80 (NodePorts: one per node), an 8-cpu template."""
    path, tpl = tmp_path / "ports.yaml", tmp_path / "t.yaml"
    path.write_text("---\n".join([NODE.format(name="e0", cpu=8), *(PORT_POD.format(i=i) for i in range(6))]))
    tpl.write_text(NODE.format(name="t", cpu=8))
    return path, tpl


def test_the_estimate_then_a_gallop_down(tmp_path, monkeypatch):
    # requests fit today (the bound L is 0) but host port 80 allows one pod per node: trial 0 schedules 1. Queue 6
    # (the limit), probes give up past 6 − 1 − 1 = 4 pending. The estimate: five pending pods of 1 cpu, all fit a
    # copy (f = 5); their requests' bound on the copies ⌈5 / 8⌉ = 1 > L: one copy alone places 1 of them; the next
    # count max(1 + 1, ⌈1 · 5 / 1⌉) = 5 places all 5: the estimate is 5. [5] (6 nodes) schedules the whole queue
    # (the target for good); a guess that holds: down from it, [4] (5 nodes) is short. Answer 5: trial 0, [5], [4]
    # and the two runs of the pending pods on the copies alone (main's gallop: [1], [3], [6], [5], [4]).
    path, tpl = port_scenario(tmp_path)
    give_ups: list = []
    runs = _traced(monkeypatch, give_ups)
    alone = _on_copies(monkeypatch)
    result = kubefit.plan([str(path)], [str(tpl)], tie_break="first", warn=lambda _: None)
    assert (result.counts, result.target, runs, alone) == ([5], 6, [[0], [5], [4]], [(1, 1), (5, 5)])
    assert give_ups == [None, 4, 0]
    assert result.simulations == 5


SPREAD_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, labels: {{app: s}}}}\nspec: {{containers: [{{name: c, "
              "resources: {{requests: {{cpu: '{cpu}'}}}}}}], topologySpreadConstraints: [{{maxSkew: 1, topologyKey: "
              "kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: s}}}}}}]}}\n")
HOST_NODE = ("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}\n"
             "status: {{allocatable: {{cpu: '{cpu}', pods: '110'}}}}\n")


def _spread_scenario(tmp_path: Path, e0: int, cpu: int, pods: int) -> tuple[Path, Path]:
    """Nodes e0 (`e0` cpu) and e1 (100 cpu), `pods` pods of `cpu` cpu spread over hostnames (maxSkew 1,
    DoNotSchedule), a 100-cpu template."""
    path, tpl = tmp_path / "spread.yaml", tmp_path / "t.yaml"
    path.write_text("---\n".join([HOST_NODE.format(name="e0", cpu=e0), HOST_NODE.format(name="e1", cpu=100),
                                  *(SPREAD_POD.format(i=i, cpu=cpu) for i in range(pods))]))
    tpl.write_text(NODE.format(name="t", cpu=100))
    return path, tpl


def test_a_short_estimate_jumps_by_what_it_placed_per_copy(tmp_path, monkeypatch):
    # fifteen 33-cpu pods spread over hostnames (maxSkew 1, DoNotSchedule); e0 (40 cpu) holds one, e1 and the
    # template (100 cpu) three by requests. A pod goes only where the count is the minimum (or one above it); once
    # e0 holds its one pod the minimum is 1 for good, so every other node holds at most 2: k copies place
    # 1 + 2·(k + 1) = 2k + 3. Trial 0 (k = 0) schedules 3, 12 pending; probes give up past 15 − 3 − 1 = 11.
    # L: ⌈(15·33 − 40 − 100) / 100⌉ = ⌈355 / 100⌉ = 4; the estimate's bound ⌈12·33 / 100⌉ = 4 ≤ L: E = 4, no
    # run (on copies alone, three per copy, it would hold). [4] schedules 11, short: 8 beyond trial 0, 4 missing
    # (8 ≥ 4): the jump 4 + ⌈4 · 4 / 8⌉ = 6; [6] schedules 15 and holds, a guess: down from it to low = 5 (4 was
    # short), [5] schedules 13. Answer 6: trial 0, [4], [6], [5] (main's gallop: [4], [5], [7], then [6]).
    path, tpl = _spread_scenario(tmp_path, 40, 33, 15)
    runs = _traced(monkeypatch)
    alone = _on_copies(monkeypatch)
    result = kubefit.plan([str(path)], [str(tpl)], tie_break="first", warn=lambda _: None)
    assert (result.counts, result.target, runs, alone, result.simulations) == ([6], 15, [[0], [4], [6], [5]], [], 4)


def test_an_estimate_far_off_goes_to_the_generous_cluster(tmp_path, monkeypatch):
    # the same spread with ten 1-cpu pods and e0 of 1 cpu: k copies place 2k + 3. Trial 0 schedules 3, 7 pending;
    # L = 0; probes give up past 10 − 3 − 1 = 6 pending. The estimate: one copy alone is a single domain (no skew):
    # it places all 7 (their bound ⌈7 / 100⌉ = 1 > L): E = 1. [1] schedules 5: 2 beyond trial 0, fewer than the 5
    # still missing: the copies do not hold in the cluster what they hold alone, no jump: [10], the generous
    # cluster (the limit: the queue), schedules 10, the target; the bisection of (1, 10]: [6] holds (15), [4]
    # holds (11), [3] is short (9). Answer 4: trial 0, [1], [10], [6], [4], [3] and the run on one copy.
    path, tpl = _spread_scenario(tmp_path, 1, 1, 10)
    runs = _traced(monkeypatch)
    alone = _on_copies(monkeypatch)
    result = kubefit.plan([str(path)], [str(tpl)], tie_break="first", warn=lambda _: None)
    assert (result.counts, result.target, runs, alone, result.simulations) == ([4], 10, [[0], [1], [10], [6], [4], [3]],
                                                                                [(1, 7)], 7)


def test_two_templates_bisect_cut_down_and_build_up(tmp_path, monkeypatch):
    # no node yet; six host-port pods (one per node); templates a (cost 1) and b (cost 2), 8 cpu each. Trial 0
    # schedules 0. The queue's uniform floor: [1, 1] (6 cpu fit on one copy, so [0, 0] alone is below it); the
    # estimate's bound for the six pending pods on the copies is the same u = 1 (no run). [1, 1] places 2, fewer
    # than the 4 still missing: no jump, [6, 6] (the generous cluster) places all 6, the target; the bisection of
    # (1, 6] on [u, u]: [4, 4] and [3, 3] hold, [2, 2] (4 nodes) is short. Cut-downs from [3, 3] (6 nodes ≤ 12:
    # both orders): a first: [2, 3] is short (5 nodes), one probe; b: [3, 2] short, one probe; the other order
    # asks the same (known). Greedy from [0, 0]: a node of either template places one more pod, a is cheaper:
    # [1, 0] and [0, 1], then [k, 0] and [k − 1, 1] for k = 2…6 ([1, 1] known): 2 + 1 + 4·2 = 11 runs, [6, 0]
    # (cost 6 < 9). Pruning: [5, 0] (greedy's), [2, 3] and [3, 2] known. Trial 0 + 5 + 2 + 11 = 19 simulations
    # (main's gallop asked [1, 1], [2, 2], [4, 4], then [3, 3]: 18).
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
    assert (result.counts, result.target, result.simulations) == ([6, 0], 6, 19)


def test_the_copies_bound_counts_what_a_copy_has_left_after_its_daemonset_pods(tmp_path):
    # a 4-cpu template whose copies each run a 2-cpu DaemonSet pod: 2 cpu left per copy. Pending: four 2-cpu pods
    # (8 cpu: ⌈8 / 2⌉ = 4 copies, not ⌈8 / 4⌉ = 2) and a 3-cpu pod, which asks more than any copy has left and is
    # not counted (f = 4). The pods resource: 5 pods per copy of 110 − 1: no bound.
    from kubefit.planning.addbound import copies_bound
    from kubefit.scheduler.state import compile_state

    scenario, templates = _scenario(tmp_path, [], [2, 2, 2, 2, 3, 2], 4)
    *pending, daemon = scenario.pending_pods
    bound, fits = copies_bound(load_configuration(None), pending, [compile_state([templates[0].node])], [[daemon]])
    assert (bound.fewest(0, [0]), fits) == (4, 4)


POOL_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: {pool}{i}}}\nspec: {{nodeSelector: {{pool: {pool}}}, containers: "
            "[{{name: c, ports: [{{containerPort: 80, hostPort: 80}}], resources: {{requests: {{cpu: '4'}}}}}}]}}\n")
POOL_NODE = ("apiVersion: v1\nkind: Node\nmetadata: {{name: {pool}, labels: {{pool: {pool}}}}}\n"
             "status: {{allocatable: {{cpu: '8', pods: '110'}}}}\n")


def test_several_templates_skip_the_last_uniform_count_the_descent_asks_around(tmp_path, monkeypatch):
    # no node yet; four 4-cpu host-port pods for pool a, four for pool b; templates a and b (8 cpu, pool label,
    # cost 1 each): a copy holds one pod (the port), [u, u] places 2·min(u, 4). Trial 0 schedules 0. The queue's
    # uniform floor: 16 cpu per pool on 8-cpu copies, [2, 2]; the estimate's bound for the 8 pending pods is the
    # same (no run): the first probe [2, 2] places 4, half of the 8 expected (not off): the jump 2 + ⌈4·2 / 4⌉ = 4;
    # [4, 4] holds. One uniform count is left between (3: above [2, 2] short): its run is not asked, the descent
    # from [4, 4] asks [3, 4] and [4, 3] (6 and 6: short), which the pruning needs too; [3, 3] would have been
    # one run more (the search before this rule asked it first). Then the greedy build-up (8 nodes ≤ 12: a small
    # cluster; it never visits [3, 3]). Answer [4, 4]; 20 simulations, not 21.
    path = tmp_path / "pods.yaml"
    path.write_text("---\n".join(POOL_POD.format(pool=p, i=i) for p in "ab" for i in range(4)))
    templates = []
    for p in "ab":
        (tmp_path / f"{p}.yaml").write_text(POOL_NODE.format(pool=p))
        templates.append(str(tmp_path / f"{p}.yaml"))
    runs = _traced(monkeypatch)
    result = kubefit.plan([str(path)], templates, tie_break="first", warn=lambda _: None)
    assert (result.counts, result.target, runs[:5], result.simulations) == (
        [4, 4], 8, [[0, 0], [2, 2], [4, 4], [3, 4], [4, 3]], 20)
    assert [3, 3] not in runs


def test_progress_tells_each_simulation_and_where_the_answer_lies(tmp_path):
    """`progress` (the terminal's display) is told after each run the search records: the counts, whether they
    hold the target, and once a count holds, the range the answer lies in (above the largest count short and not
    below the requests' bound, up to the smallest holding) with about how many runs its bisection takes."""
    # the futile probe above: [11] gives up (short of the whole queue), the generous [21] places 20 (the target)
    scenario, templates = _scenario(tmp_path, [40], [1] * 20 + [64], 4)
    seen: list[tuple] = []
    result = plan(scenario, load_configuration(None), templates, progress=lambda *a: seen.append(a))
    assert result.counts == [0]
    assert seen == [("plan", 1, None, "plan: 0 × t: the cluster as it is"),
                    ("plan", 2, None, "plan: 11 × t: falls short"),
                    ("plan", 3, None, "plan: 21 × t: the most generous cluster, places 20 of 21")]
    # examples/plan, small alone: ten 2-cpu web pods and a 32-cpu one that fits no copy; the generous cluster
    # places the ten (the target); the existing node has room for one, so nine need 18 cpu on 4-cpu copies: the
    # requests' bound is 5, and [5] holds: the answer is known at once
    seen.clear()
    planned = kubefit.plan([str(EXAMPLE / "cluster.yaml")], [str(EXAMPLE / "small.yaml")],
                           progress=lambda *a: seen.append(a), warn=lambda _: None)
    assert planned.counts == [5] and [s[3] for s in seen] == [
        "plan: 0 × small: the cluster as it is", "plan: 11 × small: the most generous cluster, places 10 of 11",
        "plan: 5 × small: holds; the answer: 5"]


def test_the_bracket_narrows_as_a_bisection_runs(tmp_path):
    """Between runs the bracket is the largest count seen short + 1 up to the smallest holding above it, and the
    runs left are about log₂ of its width: checked on a planner told runs by hand."""
    from kubefit.planning.plan import Trial

    scenario, templates = _scenario(tmp_path, [], [1] * 8, 1)  # eight 1-cpu pods, 1-cpu copies: 8 hold them
    planner = Planner(scenario, load_configuration(None), templates)
    planner.aim(8)
    planner.floor = None  # the bracket from the runs alone
    assert (planner.bracket(), planner.left()) == ((0, None), 0)
    for count, placed, want, left in ((2, 2, (3, None), 0), (12, 8, (3, 12), 4), (6, 6, (7, 12), 3),
                                      (4, 8, (7, 12), 3),  # not monotone: 4 holds, 6 not; the bracket stays
                                      (9, 8, (7, 9), 2), (7, 7, (8, 9), 1), (8, 8, (8, 8), 0)):
        planner.record((count,), Trial(placed))
        assert (planner.bracket(), planner.left()) == (want, left)
    assert planner.said((8,)) == "plan: 8 × t: holds; the answer: 8"
    assert planner.said((7,)) == "plan: 7 × t: falls short; the answer: 8"
