"""`plan`: hand-computed answers, each verified by a `simulate` of the planned cluster; properties."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.manifests.scenario import load_scenario
from kubefit.manifests.templates import Template
from kubefit.planning.plan import Planner, plan, queue_scheduled
from kubefit.scheduler.config import load_configuration
from tests_support import run_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plan"



def planned_cluster(tmp_path: Path, data: dict, templates: dict[str, Path], fewer: str | None = None) -> Path:
    """The scenario's nodes plus the planned copies, written as Node manifests (one fewer of `fewer`)."""
    docs = []
    for name in data["nodesAdded"]:
        template = name.rsplit("-", 1)[0]
        if template == fewer:
            fewer = None  # drop the first copy of that template
            continue
        body = yaml.safe_load(templates[template].read_text())
        body["metadata"]["name"] = name
        body["metadata"]["labels"]["kubernetes.io/hostname"] = name
        docs.append(body)
    path = tmp_path / "added-nodes.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


TEMPLATES = {"small": EXAMPLE / "small.yaml", "large": EXAMPLE / "large.yaml"}


@pytest.mark.parametrize(("templates", "add", "cost"), [
    (["small"], {"small": 5}, 5),  # 9 web pods of 2 cpu left after the existing node: ceil(9 / 2) small nodes
    (["small", "large"], {"small": 1, "large": 1}, 4),  # 8 on a large (cost 3) + 1 on a small (1) beats 5 small
    (["large"], {"large": 2}, 6),
], ids=["one-template", "two-templates", "large-only"])
def test_hand_computed_plans_verified_by_simulate(tmp_path, capsys, templates, add, cost):
    args = ["plan", "-f", str(EXAMPLE / "cluster.yaml")]
    for t in templates:
        args += ["--node-template", str(TEMPLATES[t])]
    rc, data, err = run_json(capsys, *args)
    assert rc == 0, err
    assert data["add"] == add and data["cost"] == cost
    assert data["pendingBefore"] == 10 and data["scheduled"] == 10
    assert [row["pod"] for row in data["cannotFit"]] == ["batch-huge"]  # 32 cpu: no template holds it
    assert "Insufficient cpu" in data["cannotFit"][0]["message"]
    # the planned cluster, as plain files, through `simulate`: every web pod placed
    added = planned_cluster(tmp_path, data, TEMPLATES)
    rc, sim, err = run_json(capsys, "simulate", "-f", str(EXAMPLE / "cluster.yaml"), "-f", str(added))
    assert rc == 0, err
    assert [s["pod"] for s in sim["steps"] if s["node"] is None] == ["batch-huge"]
    # one node fewer of any planned template: some web pod stays pending
    for template in add:
        fewer = planned_cluster(tmp_path, data, TEMPLATES, fewer=template)
        rc, sim, err = run_json(capsys, "simulate", "-f", str(EXAMPLE / "cluster.yaml"), "-f", str(fewer))
        assert rc == 0 and sim["unschedulable"] > 1, (template, err)


def test_max_nodes_bounds_the_plan(capsys):
    rc, data, err = run_json(capsys, "plan", "-f", str(EXAMPLE / "cluster.yaml"), "--node-template",
                             str(TEMPLATES["small"]), "--max-nodes", "2")
    assert rc == 0, err
    assert data["add"] == {"small": 2}
    assert data["scheduled"] == 1 + 4  # the existing node's free half, then two pods per new node
    assert len(data["cannotFit"]) == 11 - 5


def test_nothing_pending_adds_nothing(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text((EXAMPLE / "cluster.yaml").read_text().split("---\napiVersion: apps/v1")[0])
    rc, data, err = run_json(capsys, "plan", "-f", str(path), "--node-template", str(TEMPLATES["small"]))
    assert rc == 0, err
    assert data["add"] == {"small": 0} and data["nodesAdded"] == [] and data["cannotFit"] == []


@pytest.mark.parametrize(("template", "fragments"), [
    ("apiVersion: v1\nkind: Node\nmetadata: {name: t}\nspec: {unschedulable: false, podCIRD: x}\n",
     ["Node/t", "spec.podCIRD", "unknown field"]),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: t}\n", ["Pod/t", "kind", "must be a Node"]),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: t, labels: {kubefit.io/cost: \"-2\"}}\n",
     ["Node/t", "metadata.labels.kubefit.io/cost", "non-negative"]),
], ids=["unknown-field", "not-a-node", "negative-cost"])
def test_bad_template_is_one_clear_error(tmp_path, capsys, template, fragments):
    path = tmp_path / "template.yaml"
    path.write_text(template)
    rc = main(["plan", "-f", str(EXAMPLE / "cluster.yaml"), "--node-template", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("error:") == 1 and "Traceback" not in err
    assert all(f in err for f in (str(path), *fragments)), err


# --------------------------------------------------------------------------- properties

NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus: {{allocatable: {{cpu: '{cpu}', pods: '110'}}}}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}\n"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(existing=st.lists(st.integers(1, 4), min_size=1, max_size=2),
       pods=st.lists(st.integers(1, 6), min_size=1, max_size=10),
       sizes=st.lists(st.integers(2, 8), min_size=1, max_size=2, unique=True),
       costs=st.lists(st.integers(1, 5), min_size=2, max_size=2))
def test_plan_schedules_what_any_count_can_and_one_fewer_cannot(tmp_path, existing, pods, sizes, costs):
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([NODE.format(name=f"e{i}", cpu=c) for i, c in enumerate(existing)]
                                 + [POD.format(i=i, cpu=c) for i, c in enumerate(pods)]))
    scenario = load_scenario([path])
    config = load_configuration(None)
    templates = []
    for i, cpu in enumerate(sizes):
        tpl = yaml.safe_load(NODE.format(name=f"t{i}", cpu=cpu))
        tpl_path = tmp_path / f"t{i}.yaml"
        tpl_path.write_text(yaml.safe_dump(tpl))
        node = load_scenario([tpl_path]).nodes[0]
        templates.append(Template(node, Decimal(costs[i])))
    result = plan(scenario, config, templates)
    planner = Planner(scenario, config, templates)
    # any count: an empty node of every template for each pod at its turn is as generous as it gets
    generous = planner.scheduled([len(pods)] * len(templates))
    assert generous == planner.scheduled([len(pods) + 3] * len(templates))
    assert generous >= sum(1 for c in pods if c <= max(sizes))  # every pod some template holds is placed
    assert result.result.scheduled == generous
    for t, count in enumerate(result.counts):
        if count:
            fewer = list(result.counts)
            fewer[t] -= 1
            assert planner.scheduled(fewer) < generous


# --------------------------------------------------------------------------- the requests' bound, runs that give up

BOUND_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{priority: {prio}, containers: [{{name: c, "
             "resources: {{requests: {{cpu: '{cpu}', memory: '{mem}Gi'}}}}}}]{node}}}\n")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(existing=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 8)), min_size=1, max_size=3),
       pods=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4), st.sampled_from([0, 0, 10]), st.booleans()),
                     min_size=1, max_size=12),
       size=st.tuples(st.integers(2, 8), st.integers(2, 16)), target=st.integers(0, 12), k=st.integers(0, 6))
@example(existing=[(2, 4)], pods=[(2, 2, 0, True), (2, 2, 10, False)], size=(2, 2), target=1, k=0)  # it preempts
def test_no_count_below_the_requests_bound_schedules_the_target(tmp_path, existing, pods, size, target, k):
    """`addbound`: with fewer copies than the bound, no simulation schedules the target (every count below it
    simulated, bound pods of lower priority among them, which DefaultPreemption may evict); and a run told to
    give up once the target is out of reach stops exactly when the whole run misses it, its steps a prefix."""
    nodes = [NODE.format(name=f"e{i}", cpu=c).replace("pods: '110'", f"memory: {m}Gi, pods: '4'")
             for i, (c, m) in enumerate(existing)]
    docs = [BOUND_POD.format(i=i, cpu=c, mem=m, prio=prio,
                             node=f", nodeName: e{i % len(existing)}" if bound else "")
            for i, (c, m, prio, bound) in enumerate(pods)]
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join(nodes + docs))
    scenario = load_scenario([path])
    tpl_path = tmp_path / "t.yaml"
    tpl_path.write_text(NODE.format(name="t", cpu=size[0]).replace("pods: '110'", f"memory: {size[1]}Gi, pods: '4'"))
    templates = [Template(load_scenario([tpl_path]).nodes[0], Decimal(1))]
    planner = Planner(scenario, load_configuration(None), templates, tie_break="first")
    target = min(target, len(planner.queue))
    planner.aim(target)
    low = planner.floor.fewest(0, [0])
    for k in range(min(low, 6)):
        assert planner.scheduled([k]) < target
    whole = planner.run([k])
    partial = planner.run([k], give_up=len(planner.queue) - target)
    assert partial.stopped == (queue_scheduled(whole, planner.daemons.keys) < target)
    assert [(s.pod.key, s.node) for s in partial.steps] == [(s.pod.key, s.node) for s in whole.steps][:len(partial.steps)]


def test_the_table_names_twenty_added_nodes_and_counts_the_rest():
    """A plan may add thousands of nodes (7,313 on the production-shaped bench file, most of them empty in the
    verifying simulation): the table names the first 20 that hold pods, counts the rest and the empty ones."""
    from kubefit.report.whatif import PLACED_NAMED, placed_on_new_nodes

    added = [f"t-{i}" for i in range(1, 31)]
    placement = {"old": 9, **{n: 1 + i % 2 for i, n in enumerate(added[:25])}}  # t-26 … t-30 hold nothing
    first, empty = placed_on_new_nodes({"nodesAdded": added, "placement": placement})
    assert PLACED_NAMED == 20
    assert first.startswith("placed on new nodes: t-1 1, t-2 2, ") and ", t-20 2, … and 5 more " in first
    assert first.endswith("(37 pods on 25 of the 30 added nodes)")  # 13 × 1 + 12 × 2
    assert "t-21" not in first and "old" not in first
    assert empty.startswith("5 of the 30 added nodes hold no pod")
    assert placed_on_new_nodes({"nodesAdded": added[:2], "placement": placement}) == [
        "placed on new nodes: t-1 1, t-2 2"]
    assert placed_on_new_nodes({"nodesAdded": [], "placement": placement}) == []


def test_plan_on_a_terminal_says_each_simulation(monkeypatch, capsys):
    """On a terminal `kubefit plan` draws one progress line, each simulation of its search said in turn (a plan
    runs several: on a large cluster each takes seconds); on a pipe nothing of it."""
    import sys

    from kubefit.cli import main

    args = ["plan", "-f", "examples/plan/cluster.yaml", "--node-template", "examples/plan/large.yaml", "-o", "json"]
    assert main(args) == 0
    assert "plan:" not in capsys.readouterr().err  # not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "plan: 0 × large: the cluster as it is" in err and "plan: 2 × large: holds; the answer: 2" in err
