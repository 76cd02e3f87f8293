"""A profile without Score plugins: every feasible node ties, and the tie-break decides (score and simulate).

Four 4-cpu nodes and a 1-cpu node `small`; six pending pods of 1.5 cpu each, so `small` never fits.
With `--tie-break first` simulate reproduces upstream's sequential reading (numNodesToFind = 1: the first
feasible node from nextStartNodeIndex, which advances by the nodes processed): n0, n1, n2, n3, then
`small` is processed and skipped (start moves past it) → n0, n1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubefit.cli import main

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: PrioritySort}, {name: NodeResourcesFit}, {name: DefaultBinder}]
      disabled: [{name: "*"}]
    score:
      disabled: [{name: NodeResourcesFit}]
"""
NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}
---
"""
POD = """apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: default}}
spec:
  containers: [{{name: c, resources: {{requests: {{cpu: 1500m}}}}}}]
---
"""
BIG = ["n0", "n1", "n2", "n3"]


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    nodes = "".join(NODE.format(name=n, cpu=4) for n in BIG[:2]) + NODE.format(name="small", cpu=1) + \
        "".join(NODE.format(name=n, cpu=4) for n in BIG[2:])
    (tmp_path / "cluster.yaml").write_text(nodes + "".join(POD.format(i=i) for i in range(6)))
    (tmp_path / "config.yaml").write_text(CONFIG)
    return ["-f", str(tmp_path / "cluster.yaml"), "-f", str(tmp_path / "config.yaml")]


def _json(capsys, *args: str) -> dict:
    rc = main([*args, "-o", "json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def test_score_ties_every_feasible_node(capsys, files) -> None:
    data = _json(capsys, "score", *files)
    assert data["feasible"] == ["n0", "n1", *BIG[2:]]
    assert data["best"] == data["feasible"]
    assert set(data["total"].values()) == {0}


def test_simulate_random_picks_among_all_feasible_nodes_by_seed(capsys, files) -> None:
    runs = [_json(capsys, "simulate", *files, "--seed", str(seed)) for seed in range(8)]
    for data in runs:
        assert data["steps"][0]["ties"] == BIG  # a node that holds 2 pods is full later on
        assert all(s["node"] in s["ties"] and set(s["ties"]) <= set(BIG) for s in data["steps"])
    firsts = {tuple(s["node"] for s in data["steps"]) for data in runs}
    assert len(firsts) > 1  # the seed matters
    again = _json(capsys, "simulate", *files, "--seed", "3")
    assert again["steps"] == runs[3]["steps"]


def test_simulate_first_follows_the_start_index(capsys, files) -> None:
    data = _json(capsys, "simulate", *files, "--tie-break", "first")
    assert [s["node"] for s in data["steps"]] == ["n0", "n1", "n2", "n3", "n0", "n1"]
