"""DryRunPreemption's candidate window: beyond `calculateNumCandidates` potential nodes upstream starts at
a random node, kubefit at the first, so a run that stopped early says so (stderr and `-o json`)."""

from __future__ import annotations

import json

import pytest

import kubefit
from kubefit.cli import main

FULL_NODE = """\
apiVersion: v1
kind: Node
metadata: {{name: n{i:03d}}}
status: {{allocatable: {{cpu: "1", memory: 1Gi, pods: "10"}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: low-{i:03d}, namespace: default}}
spec:
  nodeName: n{i:03d}
  priority: 0
  containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]
"""
PREEMPTOR = """\
apiVersion: v1
kind: Pod
metadata: {name: urgent, namespace: default}
spec:
  priority: 1000
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""


def cluster(tmp_path, nodes: int) -> str:
    """`nodes` full nodes, each with one priority-0 pod: every node is a candidate for the preemptor."""
    path = tmp_path / "cluster.yaml"
    path.write_text("---\n".join([FULL_NODE.format(i=i) for i in range(nodes)] + [PREEMPTOR]))
    return str(path)


@pytest.mark.parametrize(("nodes", "partial"), [(100, None), (150, "default/urgent: 100 of 150")])
def test_a_dry_run_that_stopped_early_is_told(tmp_path, nodes, partial):
    told: list[str] = []
    result = kubefit.simulate([cluster(tmp_path, nodes)], tie_break="first", warn=told.append)
    victim_step, bound_step = result.steps
    assert victim_step.victims == ("default/low-000",) and victim_step.nominated_node == 0
    assert bound_step.node == 0
    noted = [w for w in told if w.startswith("DefaultPreemption:")]
    if partial is None:  # 100 potential nodes: every one tried (minCandidateNodesAbsolute), nothing to say
        assert noted == [] and result.partial_preemptions == []
    else:
        assert result.partial_preemptions == [partial]
        assert len(noted) == 1 and f"(e.g. {partial})" in noted[0] and noted[0] in result.warnings


def test_the_cli_json_carries_the_partial_dry_run(tmp_path, capsys):
    assert main(["simulate", "-f", cluster(tmp_path, 150), "-o", "json", "--tie-break", "first"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any(w.startswith("DefaultPreemption: 1 preemption(s)") for w in data["warnings"])
