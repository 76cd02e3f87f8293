"""Properties of `consolidate` on random clusters: `kubefit simulate --remove <removable>` on the same file places
every moved pod where consolidate says it goes, loses only the pods it says are lost, and preempts no one; the
lower bound never exceeds the nodes kept."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefit
from kubefit.cli import main

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
CPU = {"250m": 250, "500m": 500, "1": 1000, "2": 2000}


@st.composite
def clusters(draw) -> list[dict]:
    """Nodes (2 zones), a DaemonSet's agent on each, ReplicaSets' pods bound where they fit (some with a zone or
    hostname spread constraint, or a required hostname anti-affinity), sometimes a bare pod, a PDB, a pending pod."""
    n = draw(st.integers(2, 6))
    sizes = [draw(st.sampled_from([2000, 4000, 8000])) for _ in range(n)]
    docs: list[dict] = []
    free = []
    for i, size in enumerate(sizes):
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {
            HOST: f"n{i}", ZONE: f"z{i % 2}"}}, "status": {"allocatable": {
                "cpu": f"{size}m", "memory": "32Gi", "pods": "110"}}})
        docs.append(_pod(f"agent-{i}", f"n{i}", "100m", "agent", "DaemonSet"))
        free.append(size - 100)
    for a in range(draw(st.integers(1, 4))):
        app, spec = f"app{a}", {}
        extra = draw(st.integers(0, 3))
        if extra == 1:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": draw(st.sampled_from([ZONE, HOST])),
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": app}}}]
        elif extra == 2:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST}]}}
        cpu = draw(st.sampled_from(list(CPU)))
        for r in range(draw(st.integers(1, 5))):
            node = draw(st.integers(0, n - 1))
            if free[node] < CPU[cpu]:
                continue
            free[node] -= CPU[cpu]
            docs.append(_pod(f"{app}-{r}", f"n{node}", cpu, app, "ReplicaSet", spec))
        if draw(st.integers(0, 4)) == 0:
            docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                         "metadata": {"name": app, "namespace": "default"},
                         "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1},
                         "status": {"disruptionsAllowed": draw(st.integers(0, 2))}})
    if draw(st.integers(0, 3)) == 0:
        docs.append(_pod("solo", f"n{draw(st.integers(0, n - 1))}", "250m", "solo", None))
    if draw(st.integers(0, 3)) == 0:
        docs.append(_pod("late", None, "500m", "late", "ReplicaSet"))
    return docs


def _pod(name: str, node: str | None, cpu: str, app: str, owner: str | None, spec: dict | None = None) -> dict:
    meta: dict = {"name": name, "namespace": "default", "labels": {"app": app}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": app, "uid": f"{owner}-{app}",
                                    "controller": True}]
    body = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}], **(spec or {})}
    if node is not None:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body,
            "status": {"phase": "Running" if node else "Pending"}}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.booleans())
def test_simulate_remove_places_every_moved_pod(docs, force):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        path.write_text(yaml.safe_dump_all(docs))
        result = kubefit.consolidate([str(path)], force=force, warn=lambda _m: None).to_dict()
        assert result["lowerBound"] <= result["nodesAfter"]
        assert result["nodesAfter"] == result["nodesBefore"] - len(result["removable"])
        assert not set(result["removable"]) & set(result["blocked"])
        if not result["removable"]:
            return
        assert {m["from"] for m in result["moves"]} <= set(result["removable"])  # only removed nodes' pods move
        if any(d["kind"] == "Pod" and not d["spec"].get("nodeName") for d in docs):
            return  # checked on today's cluster (pending pods placed first), not `simulate --remove` from scratch
        import contextlib
        import io

        out = io.StringIO()
        err = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["simulate", "-f", str(path), "--remove", *result["removable"], "-o", "json"])
        assert out.getvalue(), err.getvalue()
        simulated = json.loads(out.getvalue())
    actions = simulated["nodeActions"]
    where = {m["replacement"]: m["to"] for m in actions["evicted"]}
    assert all(to is not None for to in where.values())
    assert {(g["pod"], g["from"]) for g in actions["lost"]} == {(g["pod"], g["from"]) for g in result["lost"]}
    assert not any(s.get("victims") for s in simulated["steps"])
    steps = {s["pod"]: s["node"] for s in simulated["steps"]}
    for move in result["moves"]:
        assert where.get(move["replacement"], steps.get(move["replacement"])) == move["to"]
    assert rc == (0 if not actions["lost"] else 1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.booleans())
def test_consolidate_never_drains_a_node_below_a_budget(docs, force):
    """cluster-autoscaler's drain rules refuse to go below a PodDisruptionBudget (issue #38): `rules/pdb` and
    `core/scaledown/pdb/basic.go` `CanRemovePods` block a node whose pods a budget selects more of than its
    `status.disruptionsAllowed` (Karpenter `pdb.Limits.CanEvictPods` likewise), whatever `--force` says (it only
    concerns pods without a controller). Each node removed is judged against the budgets as they are: on every
    removable node, each budget selects at most `disruptionsAllowed` of the pods it evicts."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        path.write_text(yaml.safe_dump_all(docs))
        result = kubefit.consolidate([str(path)], force=force, warn=lambda _m: None).to_dict()
    budgets = {d["metadata"]["name"]: d["status"]["disruptionsAllowed"] for d in docs
               if d["kind"] == "PodDisruptionBudget"}
    for node in result["removable"]:
        leaving = Counter(d["metadata"]["labels"]["app"] for d in docs if d["kind"] == "Pod"
                          and d["spec"].get("nodeName") == node and d["metadata"].get("ownerReferences")
                          and d["metadata"]["ownerReferences"][0]["kind"] != "DaemonSet")
        for app, count in leaving.items():
            assert app not in budgets or count <= budgets[app], (node, app, count, budgets[app])
