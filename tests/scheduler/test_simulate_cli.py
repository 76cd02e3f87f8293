"""`kubefit simulate`: output shapes (json, yaml, table), metrics on a hand-computed workload, bad input."""

from __future__ import annotations

import json

import yaml

from kubefit.cli import main

NODES = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "small"},
     "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "large"},
     "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "10", "nvidia.com/gpu": "2"}}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "spare"},
     "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
]
MOST = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]}]}


def pod(name: str, requests: dict, node: str | None = None, priority: int | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


WORKLOAD = [
    pod("running", {"cpu": "1", "memory": "1Gi"}, node="small"),
    pod("gpu", {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}),
    pod("web", {"cpu": "1", "memory": "2Gi"}),
    pod("gpu-big", {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "4"}),
    pod("wide", {"cpu": "7", "memory": "1Gi"}),
]


def write(tmp_path, docs) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_json_steps_final_and_metrics(tmp_path, capsys):
    """MostAllocated: gpu → large (the only node with a GPU); web → small (cpu (1+1)/2 = 100, memory 3/4 = 75
    → 87, beats large's 37); gpu-big asks 4 GPUs, large has 2; wide (7 cpu) finds 6 free on large, 0 on
    small and 2 on spare: pending, though the 8 free cpu pooled would hold it. small, full of cpu after web,
    adds "Insufficient cpu" to gpu-big's message. `feasible`: the nodes each cycle found (1: only large has
    a GPU; 3: small has 1 of 2 cpu and 3 of 4Gi free for web's 1 cpu, 2Gi; 0 when pending)."""
    rc, out, err = run(capsys, "simulate", "-f", write(tmp_path, [MOST, *NODES, *WORKLOAD]), "-o", "json",
                       "--tie-break", "first")
    assert rc == 0, err
    data = json.loads(out)
    assert list(data) == ["steps", "scheduled", "unschedulable", "placement", "final", "allocatable", "metrics",
                          "warnings", "inputs"]
    assert data["steps"] == [
        {"pod": "gpu", "node": "large", "feasible": 1},
        {"pod": "web", "node": "small", "feasible": 3},
        # the default profile's PostFilter: DynamicResources (no claims), then DefaultPreemption, whose own
        # diagnosis finds every node beyond help (a request above allocatable) or without lower-priority pods
        {"pod": "gpu-big", "node": None, "feasible": 0, "message": "0/3 nodes are available: 1 Insufficient cpu, 3 Insufficient "
         "nvidia.com/gpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not "
         "helpful for scheduling."},
        {"pod": "wide", "node": None, "feasible": 0, "message": "0/3 nodes are available: 3 Insufficient cpu. no new claims to "
         "deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
         "2 Preemption is not helpful for scheduling."},
    ]
    assert (data["scheduled"], data["unschedulable"]) == (2, 2)
    assert data["placement"] == {"small": 1, "large": 1}
    assert data["final"]["large"] == {"requested": {"cpu": 2000, "ephemeral-storage": 0, "memory": 4 << 30,
                                                    "nvidia.com/gpu": 1},
                                      "nonZeroRequested": {"cpu": 2000, "memory": 4 << 30}, "pods": 1}
    assert data["final"]["small"]["pods"] == 2 and data["final"]["spare"]["pods"] == 0
    # what a report draws `final` against: the node's allocatable, its other resources where it has some
    assert data["allocatable"]["large"] == {"cpu": 8000, "ephemeral-storage": 0, "memory": 16 << 30,
                                            "nvidia.com/gpu": 2, "pods": 10}
    m = data["metrics"]
    assert (m["nodes"], m["nodesUsed"], m["emptyNodes"]) == (3, 2, 1)
    assert m["allocation"]["cpu"] == round(100 * 4000 / 12000, 2)
    assert m["allocation"]["nvidia.com/gpu"] == 50.0
    assert m["allocationOfUsedNodes"]["cpu"] == 40.0  # 4 of 10 cpu on small + large
    assert m["pendingByReason"] == {"Insufficient cpu": 2, "Insufficient nvidia.com/gpu": 1}  # pods per reason
    stranded = {s["pod"]: s for s in m["stranded"]}
    assert stranded["wide"]["copiesThatFit"] == 0 and stranded["wide"]["copiesIfPooled"] == 1
    assert stranded["gpu-big"]["copiesIfPooled"] == 0


def test_yaml_and_table_carry_the_same(tmp_path, capsys):
    path = write(tmp_path, [MOST, *NODES, *WORKLOAD])
    _, out_json, _ = run(capsys, "simulate", "-f", path, "-o", "json", "--seed", "3")
    _, out_yaml, _ = run(capsys, "simulate", "-f", path, "-o", "yaml", "--seed", "3")
    assert yaml.safe_load(out_yaml) == json.loads(out_json)
    rc, table, err = run(capsys, "simulate", "-f", path)
    assert rc == 0 and "gpu-big" in table and "Insufficient cpu" in table and "nodes used" in table
    assert "not simulated" not in err and "\r" not in err  # no blanket note; no progress bar in a pipe


def test_priority_first_and_ties(tmp_path, capsys):
    """Equal empty nodes tie: reported in node order; higher priority pods go first."""
    docs = [*NODES[::2], pod("late", {"cpu": "100m"}), pod("urgent", {"cpu": "100m"}, priority=100)]
    rc, out, _ = run(capsys, "simulate", "-f", write(tmp_path, docs), "-o", "json", "--tie-break", "first")
    steps = json.loads(out)["steps"]
    assert steps[0] == {"pod": "urgent", "node": "small", "feasible": 2, "ties": ["small", "spare"]}
    assert steps[1]["pod"] == "late"


def test_no_nodes_is_bad_input(tmp_path, capsys):
    rc, _, err = run(capsys, "simulate", "-f", write(tmp_path, WORKLOAD))
    assert rc == 2 and "no Node objects" in err


def test_bad_tie_break(tmp_path, capsys):
    rc, _, _ = run(capsys, "simulate", "-f", write(tmp_path, [*NODES, *WORKLOAD]), "--tie-break", "last")
    assert rc == 2


def test_unknown_scheduler_name_is_said(tmp_path, capsys):
    other = pod("other", {"cpu": "100m"})
    other["spec"]["schedulerName"] = "my-scheduler"
    rc, out, err = run(capsys, "simulate", "-f", write(tmp_path, [*NODES, other]), "-o", "json")
    assert rc == 0 and "schedulerName no profile has" in err and "default/other" in err


def test_unknown_scheduler_names_are_counted_among_pending_pods_and_named_in_queue_order(tmp_path, capsys):
    """Three pods name my-scheduler: `late` (created 10:00, first in the file), `early` (created 09:00) and one
    bound to node large, which runs and is not pending. Queue order is by creationTimestamp, so the note counts 2 pending
    pods and names default/early; a pod on a node the scenario lacks is noted once."""
    docs = []
    for name, created, node in (("late", "10:00", None), ("early", "09:00", None), ("running", "08:00", "large")):
        p = pod(name, {"cpu": "100m"}, node=node)
        p["spec"]["schedulerName"] = "my-scheduler"
        p["metadata"]["creationTimestamp"] = f"2025-01-01T{created}:00Z"
        docs.append(p)
    rc, _out, err = run(capsys, "simulate", "-f", write(tmp_path, [*NODES, *docs, pod("lost", {}, node="ghost")]))
    assert rc == 0
    assert "2 pending pod(s) name a schedulerName no profile has (e.g. default/early: 'my-scheduler')" in err
    assert err.count("is not a node of the scenario") == 1 and "Pod/lost" in err


def test_loading_and_scheduling_share_one_progress_display(tmp_path, monkeypatch, capsys):
    """On a terminal, `simulate` draws the loading bars and the scheduling bar in one rich display
    (two live displays at once would fail) and says nothing of it on a pipe."""
    import sys

    from kubefit.cli import main
    from kubefit.cli import progress as cli

    assert main(["simulate", "-f", "examples/workload/cluster.yaml", "-o", "json"]) == 0
    assert "scheduling" not in capsys.readouterr().err  # not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(cli, "LOADING_MIN_BYTES", 1)
    monkeypatch.setattr(cli, "PROGRESS_MIN_PODS", 1)
    assert main(["simulate", "-f", "examples/workload/cluster.yaml", "--compare", "MostAllocated", "-o", "json"]) == 0
    err = capsys.readouterr().err
    assert "loading examples/workload/cluster.yaml" in err and "MostAllocated" in err
