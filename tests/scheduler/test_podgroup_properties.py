"""Properties of pod group scheduling (hypothesis, small random clusters and queues):

- all or nothing: a gang never ends bound below its minCount (no preemption here: one priority for all);
- a feasible group's pods bind in one cycle;
- the gates off give today's answers: with GenericWorkload off a scenario with PodGroups and pods naming them is
  scheduled exactly as the same scenario without them (the API server drops the field), and the gates on change
  nothing for a scenario whose pods name no group.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefit

GATES = "GenericWorkload=true,GangScheduling=true"


def _node(i: int, cpu: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"}}}


def _pod(name: str, cpu_m: int, group: str | None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": f"{cpu_m}m"}}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _group(name: str, min_count: int | None) -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": policy}}


@st.composite
def scenarios(draw):
    nodes = [_node(i, draw(st.integers(1, 4))) for i in range(draw(st.integers(1, 4)))]
    groups, pods = [], []
    for g in range(draw(st.integers(1, 3))):
        size = draw(st.integers(1, 6))
        min_count = draw(st.one_of(st.none(), st.integers(1, size + 1)))
        groups.append(_group(f"g{g}", min_count))
        cpu = draw(st.sampled_from([250, 500, 1000, 1500]))
        pods += [_pod(f"g{g}-{i}", cpu, f"g{g}") for i in range(size)]
    pods += [_pod(f"solo{i}", draw(st.sampled_from([250, 1000])), None) for i in range(draw(st.integers(0, 3)))]
    order = draw(st.permutations(range(len(pods))))
    return nodes, groups, [pods[i] for i in order]


def _simulate(docs: list[dict], *gates: str):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.yaml"
        path.write_text(yaml.safe_dump_all(docs))
        return kubefit.simulate([path], tie_break="first", kube_version="1.36",
                                feature_gates=gates[0] if gates else None, warn=lambda _m: None).to_dict()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_gang_never_partly_bound_below_min_count(scenario):
    nodes, groups, pods = scenario
    out = _simulate([*groups, *nodes, *pods], GATES)
    bound = Counter(s["podGroup"] for s in out["steps"] if s["node"] is not None and s.get("podGroup"))
    cycles = {}
    for s in out["steps"]:
        if s["node"] is not None and s.get("podGroup"):
            cycles.setdefault(s["podGroup"], set()).add(s["cycle"])
    for group in groups:
        name = f"default/{group['metadata']['name']}"
        gang = group["spec"]["schedulingPolicy"].get("gang")
        if gang is not None:
            assert bound[name] == 0 or bound[name] >= gang["minCount"], name
        record = next(r for r in out["podGroups"] if f"{r['namespace']}/{r['name']}" == name)
        assert record["bound"] == bound[name]
        if gang is not None and bound[name]:  # its first binding cycle bound at least minCount pods together
            first = min(cycles[name])
            together = sum(1 for s in out["steps"] if s.get("podGroup") == name and s["node"] and s["cycle"] == first)
            assert together >= gang["minCount"], name


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_gates_off_is_todays_answer(scenario):
    nodes, groups, pods = scenario
    with_groups = _simulate([*groups, *nodes, *pods])  # v1.36 defaults: GenericWorkload off
    plain = [{**p, "spec": {k: v for k, v in p["spec"].items() if k != "schedulingGroup"}} for p in pods]
    without = _simulate([*nodes, *plain])
    assert with_groups["steps"] == without["steps"]
    assert with_groups["final"] == without["final"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_gates_on_change_nothing_without_groups(scenario):
    nodes, _groups, pods = scenario
    plain = [{**p, "spec": {k: v for k, v in p["spec"].items() if k != "schedulingGroup"}} for p in pods]
    assert _simulate([*nodes, *plain], GATES)["steps"] == _simulate([*nodes, *plain])["steps"]


def test_unschedulable_groups_do_not_retry_each_other_for_ever(tmp_path, capsys):
    """Two gangs that each fit in part (their cycles assume some pods, then forget them) are no cluster event for
    each other: kube-scheduler requeues a group when the cluster changes, and an unschedulable cycle changes
    nothing (kubefit once retried them in turn for ever). By hand, two nodes of 2 GPUs, every pod 2 GPUs, in queue
    order: g0 (3 pods, minCount 3) fits 2 → nothing binds; g1 (1 pod) binds on a node; g2 (4 pods, minCount 3)
    fits 1 → nothing; g0 is tried once more (g1's bind changed the cluster since its try), fits 1 → nothing; g2's
    cluster has not changed since its try: done. Cycles: g0 2, g1 1, g2 1."""
    from gangs_support import GATES, gang, gpu_node, run

    docs = [gpu_node("n0", 2), gpu_node("n1", 2), *gang("g0", 3, 3, gpus=2), *gang("g1", 1, 1, gpus=2),
            *gang("g2", 4, 3, gpus=2)]
    rc, out, _ = run(tmp_path, capsys, "simulate", docs, "--kube-version", "1.36", "--feature-gates", GATES,
                     "--tie-break", "first")
    assert rc == 0
    assert [(g["name"], g["bound"], g["cycles"]) for g in out["podGroups"]] == [("g0", 0, 2), ("g1", 1, 1),
                                                                               ("g2", 0, 1)]
