"""`plan`: hand-computed answers, each verified by a `simulate` of the planned cluster; properties."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.manifests.scenario import load_scenario
from kubefit.manifests.templates import Template
from kubefit.planning.plan import Planner, plan
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
