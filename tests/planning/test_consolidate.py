"""`kubefit consolidate`: hand-computed answers on small clusters, the JSON keys, and the options.

`examples/consolidate/cluster.yaml`: five 4-cpu nodes, a DaemonSet's 100m agent on each; web pods (1 cpu,
ReplicaSet) web-x2k9p, web-7fq4m, web-c8n2v on node-a and web-m4t7w on node-b; api pods (1.5 cpu, ReplicaSet)
api-9dkq4 on node-b and api-t5h8r on node-e; a bare 1-cpu `worker` on node-c; node-d runs only its agent.
Requested cpu: a 3.1, b 2.6, c 1.1, d 0.1, e 1.6 (of 4); memory is never the larger share, so the
utilizations are 77.5 %, 65 %, 27.5 %, 2.5 %, 40 %.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import kubefit
from kubefit.errors import InputError
from tests_support import run_json

EXAMPLE = "examples/consolidate/cluster.yaml"
QUIET = {"warn": lambda _m: None}


def _with(tmp_path: Path, *docs: dict) -> str:
    """The example with more documents (or the example's nodes annotated/labelled)."""
    path = tmp_path / "scenario.yaml"
    path.write_text(Path(EXAMPLE).read_text() + "".join("---\n" + yaml.safe_dump(d) for d in docs))
    return str(path)


def _node_meta(tmp_path: Path, node: str, **meta) -> str:
    """The example with `node`'s metadata given more fields (labels / annotations)."""
    docs = list(yaml.safe_load_all(Path(EXAMPLE).read_text()))
    for d in docs:
        if d["kind"] == "Node" and d["metadata"]["name"] == node:
            for k, v in meta.items():
                d["metadata"].setdefault(k, {}).update(v)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_the_example_by_hand():
    """Order: node-d (empty: nothing to move), then by utilization c 27.5 %, e 40 %, b 65 %, a 77.5 %.
    - node-d goes, nothing moves (its agent goes with it);
    - node-c: `worker` declares no controller → stays (NotReplicated);
    - node-e: api-t5h8r (1.5 cpu) needs 1.5 free: a has 0.9, b 1.4, c 2.9 → it goes to node-c;
    - node-b: web-m4t7w (1 cpu, first in document order) takes node-c's last 1.4 → 0.4 left, then
      api-9dkq4 (1.5) fits nowhere (a 0.9, c 0.4) → stays;
    - node-a: three 1-cpu web pods on b (1.4 free) and c (1.4 free): two fit, the third does not → stays.
    Removable: node-d, node-e; 3 nodes after. Lower bound: node-c is kept (its bare pod); the other pods need
    4 × 1 + 2 × 1.5 = 7 cpu, node-c's room is 3.9 (4 − its agent), 3.1 more need one further 3.9-cpu node... and
    its own worker's 1 cpu counts too: 8 cpu − 3.9 = 4.1 → two further nodes → 3 = nodes after (tight)."""
    result = kubefit.consolidate([EXAMPLE], **QUIET)
    out = result.to_dict()
    assert out["removable"] == ["node-d", "node-e"]
    assert (out["nodesBefore"], out["nodesAfter"], out["lowerBound"]) == (5, 3, 3)
    assert out["lowerBoundParts"]["kept"] == 1 and out["lowerBoundParts"]["byResource"]["cpu"] == 2
    assert [(m["pod"], m["from"], m["to"]) for m in out["moves"]] == [("api-t5h8r", "node-e", "node-c")]
    assert set(out["blocked"]) == {"node-a", "node-b", "node-c"}
    assert "NotReplicated" in out["blocked"]["node-c"]
    assert "api-9dkq4" in out["blocked"]["node-b"] and "Insufficient cpu" in out["blocked"]["node-b"]
    assert "NoPlaceToMovePods" in out["blocked"]["node-a"]
    assert (out["costBefore"], out["costAfter"], out["costSaved"]) == (5, 3, 2)
    assert out["candidates"] == ["node-d", "node-c", "node-e", "node-b", "node-a"]
    after = {n["name"]: n["after"] for n in out["nodes"]}
    assert after["node-d"] is None and after["node-e"] is None
    assert after["node-c"]["cpu"] == 100 + 1000 + 1500  # agent, worker, the api pod from node-e
    assert out["verification"] == {"simulations": 1, "dropped": []}
    assert out["utilization"]["before"]["cpu"] == 42.5  # 8.5 of 20 cpu
    assert out["utilization"]["after"]["cpu"] == pytest.approx(100 * 8.3 / 12, abs=0.01)  # 8.3 of 12 cpu
    for key in ("removable", "blocked", "moves", "nodesBefore", "nodesAfter", "lowerBound", "costBefore",
                "costAfter", "warnings"):
        assert key in out


def test_force_deletes_the_bare_pod_with_its_node():
    """--force: node-c's worker is deleted with it (lost, nothing recreates it), so node-c, tried after node-d
    (27.5 %), goes with nothing to move. Left: a (3.1 cpu requested), b (2.6), e (1.6).
    - node-e: api-t5h8r (1.5) needs 1.5 free: a has 0.9, b 1.4 → stays;
    - node-b: web-m4t7w to e (2.4 free → 1.4), then api-9dkq4 (1.5): a 0.9, e 1.4 → stays;
    - node-a: its three 1-cpu web pods: b holds one (1.4 free), e two (2.4) → node-a goes.
    Removable: d, c, a; 2 nodes after. Lower bound: the worker may go, so the workload is 4 × 1 + 2 × 1.5 = 7
    cpu against rooms of 3.9 (4 − the agent): 2 nodes — tight."""
    out = kubefit.consolidate([EXAMPLE], force=True, **QUIET).to_dict()
    assert out["removable"] == ["node-d", "node-c", "node-a"]
    assert [(g["pod"], g["from"]) for g in out["lost"]] == [("worker", "node-c")]
    assert "--force" in out["lost"][0]["reason"]
    assert sorted(m["to"] for m in out["moves"]) == ["node-b", "node-e", "node-e"]
    assert "api-9dkq4" in out["blocked"]["node-b"] and "api-t5h8r" in out["blocked"]["node-e"]
    assert out["nodesAfter"] == out["lowerBound"] == 2


def test_utilization_threshold():
    """--utilization-threshold 0.3: only node-c (27.5 %) and node-d (2.5 %) are candidates; the others are
    NotUnderutilized; node-c stays for its worker: only node-d goes."""
    out = kubefit.consolidate([EXAMPLE], utilization_threshold=0.3, **QUIET).to_dict()
    assert out["removable"] == ["node-d"]
    assert out["candidates"] == ["node-d", "node-c"]
    assert "cpu 77.5% requested, not below --utilization-threshold 0.3" in out["blocked"]["node-a"]
    assert "NotUnderutilized" in out["blocked"]["node-e"]


def test_a_pdb_that_allows_no_disruption(tmp_path):
    """A PodDisruptionBudget for the api pods with disruptionsAllowed 0: node-e and node-b stay
    (NotEnoughPdb). node-a: its three 1-cpu web pods onto b (1.4 free), c (2.9), e (2.4): whole cpus 1 + 2 + 2
    = 5 ≥ 3, so they fit whatever the order → node-a goes. Removable: node-d, node-a."""
    path = _with(tmp_path, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                            "metadata": {"name": "api", "namespace": "default"},
                            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "api"}}},
                            "status": {"disruptionsAllowed": 0}})
    out = kubefit.consolidate([path], **QUIET).to_dict()
    assert out["removable"] == ["node-d", "node-a"]
    assert "PodDisruptionBudget default/api allows 0 disruption(s)" in out["blocked"]["node-e"]
    assert "NotEnoughPdb" in out["blocked"]["node-b"]
    assert sorted(m["pod"] for m in out["moves"]) == ["web-7fq4m", "web-c8n2v", "web-x2k9p"]


def test_max_nodes():
    out = kubefit.consolidate([EXAMPLE], max_nodes=1, **QUIET).to_dict()
    assert out["removable"] == ["node-d"]
    assert any("stopped after --max-nodes 1" in w for w in out["warnings"])


def test_order_by_cost(tmp_path):
    """node-a costs 5 (the label `kubefit.io/cost`): tried first; its three web pods fit on the others (b 1.4,
    c 2.9, d 3.9, e 2.4 free) → it goes first; cost 9 → at most 4 left."""
    path = _node_meta(tmp_path, "node-a", labels={"kubefit.io/cost": "5"})
    out = kubefit.consolidate([path], order="cost", max_nodes=1, **QUIET).to_dict()
    assert out["candidates"][0] == "node-a" and out["removable"] == ["node-a"]
    assert (out["costBefore"], out["costAfter"], out["costSaved"]) == (9, 4, 5)


def test_a_node_annotated_not_to_go(tmp_path):
    path = _node_meta(tmp_path, "node-d", annotations={"cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"})
    out = kubefit.consolidate([path], **QUIET).to_dict()
    assert "node-d" not in out["removable"]
    assert "ScaleDownDisabledAnnotation" in out["blocked"]["node-d"]


def test_a_kube_system_pod_without_a_pdb(tmp_path):
    """A kube-system ReplicaSet pod (10m) on node-d: node-d stays (UnmovableKubeSystemPod) unless
    --skip-kube-system-check; then it goes and the pod moves."""
    path = _with(tmp_path, {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "dns-abcde", "namespace": "kube-system", "labels": {"app": "dns"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "dns", "uid": "rs-dns",
                             "controller": True}]},
        "spec": {"nodeName": "node-d", "containers": [{"name": "c", "resources": {"requests": {"cpu": "10m"}}}]},
        "status": {"phase": "Running"}})
    out = kubefit.consolidate([path], **QUIET).to_dict()
    assert "UnmovableKubeSystemPod" in out["blocked"]["node-d"]
    skipped = kubefit.consolidate([path], skip_kube_system_check=True, **QUIET).to_dict()
    assert "node-d" in skipped["removable"]
    assert {"pod": "dns-abcde", "namespace": "kube-system"}.items() <= next(
        m for m in skipped["moves"] if m["pod"] == "dns-abcde").items()


def _nodes(n: int, cpu: str = "4") -> list[dict]:
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {
        "kubernetes.io/hostname": f"n{i}"}}, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}
            for i in range(1, n + 1)]


def _rs_pod(name: str, node: str, cpu: str, app: str = "app", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "labels": {"app": app},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app, "uid": f"rs-{app}",
                             "controller": True}]},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
            "status": {"phase": "Running"}}


def _file(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_pods_that_pack_exactly_reach_the_lower_bound(tmp_path):
    """Four 4-cpu nodes, two 1-cpu pods each (8 cpu): every node 50 %, tried in node order. n1's two pods go
    to n2..n4 (2 free each); then n2 holds 2 or 3 pods and n3 + n4 have exactly its pods' worth free (1 + 2
    or 1 + 1): n2 goes too and n3, n4 are full. Nodes after 2 = ⌈8 / 4⌉ = the lower bound."""
    docs = _nodes(4) + [_rs_pod(f"p{i}", f"n{i // 2 + 1}", "1") for i in range(8)]
    out = kubefit.consolidate([_file(tmp_path, docs)], **QUIET).to_dict()
    assert out["removable"] == ["n1", "n2"]
    assert out["nodesAfter"] == out["lowerBound"] == 2
    assert out["lowerBoundParts"]["byResource"]["cpu"] == 2 and out["lowerBoundParts"]["kept"] == 0


def test_a_spreading_anti_affinity_bounds_the_nodes(tmp_path):
    """Three pods, one per node, each repelling the others on the hostname (required anti-affinity matching its
    own labels): no node can go (a moved pod would share a node with another), and any placement needs 3
    nodes: the lower bound is 3 (its resource part alone says 1)."""
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    docs = _nodes(3) + [_rs_pod(f"db-{i}", f"n{i}", "100m", "db", **anti) for i in (1, 2, 3)]
    out = kubefit.consolidate([_file(tmp_path, docs)], **QUIET).to_dict()
    assert out["removable"] == []
    assert out["lowerBoundParts"]["antiAffinity"] == 3 and out["lowerBoundParts"]["byResource"]["cpu"] == 1
    assert out["nodesAfter"] == out["lowerBound"] == 3
    assert all("didn't match pod anti-affinity rules" in r for r in out["blocked"].values())


def test_repack_from_scratch(tmp_path):
    """--repack: DaemonSet pods stay on their nodes, the 8 one-cpu pods of the tight case above are scheduled
    onto empty 4-cpu nodes: MostAllocated packs them on 2 nodes, LeastAllocated spreads them over all 4."""
    docs = _nodes(4) + [_rs_pod(f"p{i}", f"n{i // 2 + 1}", "1") for i in range(8)]
    out = kubefit.consolidate([_file(tmp_path, docs)], repack=True, compare=["MostAllocated"],
                              tie_break="first", **QUIET).to_dict()
    assert [(r["configuration"], r["nodesUsed"], r["scheduled"]) for r in out["repack"]] == [
        ("scenario", 4, 8), ("MostAllocated", 2, 8)]


def test_bad_options():
    with pytest.raises(InputError, match="--config or --strategy, not both"):
        kubefit.consolidate([EXAMPLE], config="x.yaml", strategy="MostAllocated", **QUIET)
    with pytest.raises(InputError, match="--strategy"):
        kubefit.consolidate([EXAMPLE], strategy="Tightest", **QUIET)
    with pytest.raises(InputError, match="--repack"):
        kubefit.consolidate([EXAMPLE], compare=["MostAllocated"], **QUIET)
    with pytest.raises(InputError, match="between 0 and 1"):
        kubefit.consolidate([EXAMPLE], utilization_threshold=1.5, **QUIET)


def test_the_command(capsys, tmp_path):
    rc, out, err = run_json(capsys, "consolidate", "-f", EXAMPLE, "--strategy", "MostAllocated")
    assert rc == 0 and out["removable"] == ["node-d", "node-e"] and out["configuration"] == "MostAllocated"
    plot = tmp_path / "before-after.png"
    rc, out, _ = run_json(capsys, "consolidate", "-f", EXAMPLE, "--plot", str(plot))
    assert rc == 0 and plot.stat().st_size > 1000
    from kubefit.cli import main

    assert main(["consolidate", "-f", EXAMPLE, "--order", "nearest"]) == 2
    assert "error:" in capsys.readouterr().err


def _pod(name: str, node: str, cpu: str, priority: int = 0, owner: str | None = "rs") -> dict:
    meta: dict = {"name": name, "namespace": "default", "labels": {"app": "x"}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": "u",
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "priority": priority,
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
            "status": {"phase": "Running"}}


def test_a_trial_that_must_fail_names_the_pod_no_node_has_room_for(tmp_path):
    """Node a (6 cpu) runs p1 and p2 (1.5 cpu each, priority 10: first in the queue) and p3 (3 cpu, priority
    0: last): 100 %. Node b (4 cpu) runs a 2-cpu pod without controller: 50 %, tried first, NotReplicated.
    Without a, b has 2 cpu free: p1 would fit (0.5 left) and p2 be the first to fail, but p3 asks 3 and no
    remaining node has 3 free before any move, so the trial is refused on p3 at once, with its FitError on
    the cluster without a (0/1 nodes: b, Insufficient cpu). Nothing is removable either way."""
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
             "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "10"}}} for n, cpu in (("a", "6"), ("b", "4"))]
    docs += [_pod("p1", "a", "1500m", 10), _pod("p2", "a", "1500m", 10), _pod("p3", "a", "3", 0),
             _pod("bare", "b", "2", owner=None)]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = kubefit.consolidate([str(path)], **QUIET).to_dict()
    assert out["removable"] == [] and out["nodesAfter"] == 2 and out["trials"] == 1
    assert "NotReplicated" in out["blocked"]["b"]
    assert "(replacing default/p3): 0/1 nodes are available: 1 Insufficient cpu." in out["blocked"]["a"]


def test_a_node_at_its_pod_limit_has_no_room_whatever_its_cpu(tmp_path):
    """NodeResourcesFit's Filter refuses a node whose pod count is at `pods` allocatable (`fitsRequest`: "Too many
    pods"), whatever cpu it has free, and the trial's early refusal judges room so. Node a (6 cpu) runs p1 (1 cpu,
    priority 10: first in the queue) and p3 (3 cpu); b (4 cpu, 2 pods) runs a 2-cpu pod without controller, c
    (8 cpu, 1 pod) a 1-cpu one: both NotReplicated, tried first. Without a, only b is below its pod limit, with 2
    cpu free: p3 has no room before any move and the trial is refused on it at once, its FitError on the cluster
    as it is then: b Insufficient cpu, c Too many pods. (Had c's 7 free cpu counted as room, p1 would have been
    bound on b first and p3's FitError read "2 Too many pods".)"""
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
             "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": pods}}}
            for n, cpu, pods in (("a", "6", "10"), ("b", "4", "2"), ("c", "8", "1"))]
    docs += [_pod("p1", "a", "1", 10), _pod("p3", "a", "3", 0), _pod("bare", "b", "2", owner=None),
             _pod("bare2", "c", "1", owner=None)]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = kubefit.consolidate([str(path)], **QUIET).to_dict()
    assert out["removable"] == [] and out["trials"] == 1
    why = out["blocked"]["a"]
    assert "(replacing default/p3): 0/2 nodes are available:" in why, why
    assert "1 Insufficient cpu" in why and "1 Too many pods" in why, why


def _deployment(name: str, replicas: int, cpu: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "i",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def test_after_an_install_only_the_removed_nodes_pods_move(tmp_path):
    """An install (two Deployments, every pod pending) on three 4-cpu nodes: today's cluster is the scenario after
    kube-scheduler placed the 6 pods. cluster-autoscaler moves only the pods of the node it removes
    (`simulator/cluster.go` `SimulateNodeRemoval` → `GetPodsToMove` of that node): the pods on kept nodes stay
    where today's run placed them, so every move leaves a removed node and there are as many moves as pods
    the removed nodes ran (issue #38, defect 3: re-running the whole queue without the removed nodes swapped
    pods between kept nodes)."""
    path = _file(tmp_path, [*_nodes(3), _deployment("web", 4, "1"), _deployment("api", 2, "500m")])
    out = kubefit.consolidate([path], **QUIET).to_dict()
    assert out["removable"]
    assert {m["from"] for m in out["moves"]} <= set(out["removable"])
    before = {n["name"]: n["before"]["pods"] for n in out["nodes"]}
    assert len(out["moves"]) == sum(before[name] for name in out["removable"])
    assert out["verification"]["dropped"] == []
