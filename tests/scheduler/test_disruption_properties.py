"""Properties of what a run removes against PodDisruptionBudgets (issue #38).

kube-scheduler treats a budget as a preference, not a rule: `SelectVictimsOnNode`
(pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go) splits a node's lower-priority pods with
`filterPodsWithPDBViolation` (each matching budget's `status.disruptionsAllowed` spent in importance order; a pod
that overdraws one is "violating"), reprieves the violating ones first, and `pickOneNodeForPreemption`
(pkg/scheduler/framework/preemption/preemption.go) keeps the candidates with the fewest violations first. A
preemption may therefore evict below a budget — but only when no node offers a candidate that does not. The
property: whenever some node would fit the preemptor after evicting, from that node, lower-priority pods within
every budget's allowance (any number of pods no budget selects), the victims chosen violate no budget.

(Greedy reprieve is exact here: the resource filter is monotone and a budget's pods are all the same size, so a
node has a non-violating candidate iff the preemptor fits with every violating pod kept.)
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import kubefit

MILLI = {500: "500m", 1000: "1", 2000: "2"}


@st.composite
def clusters(draw) -> dict:
    """Nodes of 2 or 4 cpu; apps of one pod size, each pod bound where it fits (priority 0, a ReplicaSet's), some
    apps under a budget with `status.disruptionsAllowed` 0–2; one pending preemptor of priority 1000."""
    sizes = [draw(st.sampled_from([2000, 4000])) for _ in range(draw(st.integers(1, 3)))]
    free = list(sizes)
    apps = []
    for a in range(draw(st.integers(1, 3))):
        cpu = draw(st.sampled_from(sorted(MILLI)))
        nodes = []
        for _ in range(draw(st.integers(1, 4))):
            n = draw(st.integers(0, len(sizes) - 1))
            if free[n] >= cpu:
                free[n] -= cpu
                nodes.append(n)
        allowed = draw(st.one_of(st.none(), st.integers(0, 2)))
        apps.append({"name": f"app{a}", "cpu": cpu, "nodes": nodes, "allowed": allowed})
    return {"sizes": sizes, "apps": apps, "preemptor": draw(st.sampled_from([1000, 2000, 3000, 4000]))}


def documents(c: dict) -> list[dict]:
    docs: list[dict] = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                         "value": 1000}]
    for i, size in enumerate(c["sizes"]):
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                     "status": {"allocatable": {"cpu": f"{size}m", "memory": "16Gi", "pods": "110"}}})
    for app in c["apps"]:
        for j, n in enumerate(app["nodes"]):
            docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"{app['name']}-{j}", "labels": {"app": app["name"]}, "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app["name"], "uid": app["name"],
                    "controller": True}]},
                "spec": {"nodeName": f"n{n}", "containers": [{"name": "c", "resources": {"requests": {
                    "cpu": MILLI[app["cpu"]], "memory": "64Mi"}}}]}, "status": {"phase": "Running"}})
        if app["allowed"] is not None:
            docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": app["name"]},
                         "spec": {"selector": {"matchLabels": {"app": app["name"]}}, "maxUnavailable": 1},
                         "status": {"disruptionsAllowed": app["allowed"], "currentHealthy": len(app["nodes"]),
                                    "desiredHealthy": 0, "expectedPods": len(app["nodes"])}})
    docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent"}, "spec": {
        "priorityClassName": "high", "containers": [{"name": "c", "resources": {"requests": {
            "cpu": f"{c['preemptor']}m", "memory": "64Mi"}}}]}})
    return docs


def clean_candidate_exists(c: dict) -> bool:
    """Some node fits the preemptor after evicting its unbudgeted pods and, per budget, at most its allowance."""
    for n, size in enumerate(c["sizes"]):
        used = sum(app["cpu"] * app["nodes"].count(n) for app in c["apps"])
        freeable = 0
        for app in c["apps"]:
            here = app["nodes"].count(n)
            freeable += app["cpu"] * (here if app["allowed"] is None else min(here, app["allowed"]))
        if size - used + freeable >= c["preemptor"]:
            return True
    return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
# n0 holds one budgeted 2-cpu pod (allowance 0), n1 two unbudgeted 1-cpu pods: n0 has fewer victims (the
# fourth criterion), n1 no violation (the first): n1 must win
@example({"sizes": [2000, 2000], "apps": [{"name": "app0", "cpu": 2000, "nodes": [0], "allowed": 0},
                                          {"name": "app1", "cpu": 1000, "nodes": [1, 1], "allowed": None}],
          "preemptor": 2000})
# one node, a budgeted 1-cpu pod (allowance 0) and an unbudgeted 1-cpu pod, preemptor 1 cpu: the violating pod is
# reprieved first, the other one is the victim
@example({"sizes": [2000], "apps": [{"name": "app0", "cpu": 1000, "nodes": [0], "allowed": 0},
                                    {"name": "app1", "cpu": 1000, "nodes": [0], "allowed": None}],
          "preemptor": 1000})
def test_preemption_violates_a_budget_only_when_every_candidate_would(cluster):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        path.write_text(yaml.safe_dump_all(documents(cluster)))
        result = kubefit.simulate([str(path)], tie_break="first", warn=lambda _m: None, replace_victims=False)
    first = result.steps[0]
    if first.nominated_node is None:
        if first.node is None:  # no preemption helped: then no node fits even evicting every lower-priority pod
            assert not clean_candidate_exists(cluster)
        return
    taken = Counter(key.split("/")[1].rsplit("-", 1)[0] for key in first.victims)
    allowed = {app["name"]: app["allowed"] for app in cluster["apps"]}
    violated = any(allowed[app] is not None and count > allowed[app] for app, count in taken.items())
    assert not (violated and clean_candidate_exists(cluster)), (first.victims, first.nominated_node)
