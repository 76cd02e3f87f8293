"""`kubefit plan` with gangs (GenericWorkload on): nodes to add so that every gang that can be placed whole is.

Every candidate cluster is judged by a simulation, where a gang binds at least `minCount` of its pods or none; a
gang counts towards the goal only when it is placed whole (every pod bound), else it counts as not fitting and no
node is added for a part of it. Each case's node count is derived by hand from the GPUs.
"""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefit
from gangs_support import GATES, V136, gang, gpu_node, gpu_pod, run, write
from tests_support import ROOT, run_json

EXAMPLE = str(ROOT / "examples" / "gangs" / "cluster.yaml")


def _template(tmp_path, name: str, gpus: int, cost: int | None = None) -> str:
    node = gpu_node(name, gpus)
    if cost is not None:
        node["metadata"]["labels"]["kubefit.io/cost"] = str(cost)
    return write(tmp_path, [node], f"{name}.yaml")


def test_the_example_needs_one_gpu_node_for_tune(tmp_path, capsys):
    # train takes 8 of the 10 free GPUs; tune (4 × 1 GPU, minCount 4) finds 2: one 4-GPU node more holds it whole.
    rc, out, _ = run_json(capsys, "plan", "-f", EXAMPLE, "--node-template", _template(tmp_path, "gpu", 4),
                          "--tie-break", "first", *V136)
    assert rc == 0
    assert out["add"] == {"gpu": 1} and out["pendingBefore"] == 4 and out["cannotFit"] == []
    groups = {g["name"]: g for g in out["podGroups"]}
    assert groups["tune-0"]["placedWhole"] and groups["tune-0"]["bound"] == 4
    assert groups["train-0"]["placedWhole"]
    assert not any("does not account for a pod group" in w for w in out["warnings"])


def test_a_gang_that_is_never_whole_counts_as_not_fitting(tmp_path, capsys):
    # 5 pods × 1 GPU, minCount 4, but pg-4 selects a node label no template has: the most generous cluster binds
    # pg-0..3 (minCount met) and leaves pg-4 pending — never whole, so it counts as not fitting: no node is added
    # for it (counting its 4 bound pods would add two 2-GPU nodes).
    docs = gang("pg", 5, 4)
    docs[-1]["spec"]["nodeSelector"] = {"pool": "nowhere"}
    rc, out, _ = run(tmp_path, capsys, "plan", docs, "--node-template", _template(tmp_path, "small", 2), *V136)
    assert rc == 0 and out["add"] == {"small": 0}
    assert [g["placedWhole"] for g in out["podGroups"]] == [False]
    assert {row["pod"] for row in out["cannotFit"]} == {f"pg-{i}" for i in range(5)}


def test_a_gang_is_planned_whole_on_the_cheapest_template(tmp_path, capsys):
    # 4 pods × 1 GPU: one node of the 1-GPU template (cost 1) places none of them (the gang binds all or nothing),
    # four place it (cost 4), one 4-GPU node (cost 3) places it too: the cheapest, 1 big node.
    rc, out, _ = run(tmp_path, capsys, "plan", gang("pg", 4), "--node-template", _template(tmp_path, "small", 1, 1),
                     "--node-template", _template(tmp_path, "big", 4, 3), "--tie-break", "first", *V136)
    assert rc == 0 and out["add"] == {"small": 0, "big": 1} and out["cost"] == 3


def test_two_gangs_and_a_single_pod(tmp_path, capsys):
    # n0 (4 GPUs) exists; gang a: 3 pods × 1 GPU, gang b: 2 pods × 3 GPUs (a 4-GPU node holds one), solo: 1 GPU.
    # 3 + 6 + 1 = 10 GPUs > 8, so one node more is not enough; with two, wherever a's pods go (one node, or one per
    # node) two nodes keep 3 GPUs free for b, and solo takes a last free GPU: 2 nodes.
    docs = [gpu_node("n0", 4), *gang("a", 3), *gang("b", 2, gpus=3), gpu_pod("solo")]
    rc, out, _ = run(tmp_path, capsys, "plan", docs, "--node-template", _template(tmp_path, "gpu", 4),
                     "--tie-break", "first", *V136)
    assert rc == 0 and out["cannotFit"] == [] and out["add"] == {"gpu": 2}
    assert [g["placedWhole"] for g in out["podGroups"]] == [True, True]


@st.composite
def plans(draw):
    gangs = []
    for g in range(draw(st.integers(1, 3))):
        size = draw(st.integers(1, 4))
        gangs.append((f"g{g}", size, draw(st.integers(1, size)), draw(st.integers(1, 3))))
    return draw(st.integers(0, 2)), gangs, draw(st.integers(2, 4))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(plans())
def test_plan_never_leaves_a_gang_partly_placed(tmp_path, case):
    # on the planned cluster every gang is placed whole or reported as not whole; none is bound below minCount; and
    # a gang whose pods each fit a template node alone (GPUs ≤ the template's) is always placed whole.
    existing, gangs, template_gpus = case
    docs = [gpu_node(f"n{i}", 2) for i in range(existing)]
    for name, size, min_count, gpus in gangs:
        docs += gang(name, size, min_count, gpus=gpus)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = kubefit.plan([path], [_template(tmp_path, "t", template_gpus)], kube_version="1.36", feature_gates=GATES,
                       tie_break="first", warn=lambda _m: None).to_dict()
    for group in out["podGroups"]:
        assert group["bound"] == 0 or group["bound"] >= group["minCount"], group
        gpus = next(g[3] for g in gangs if g[0] == group["name"])
        assert group["placedWhole"] == (gpus <= template_gpus), group
