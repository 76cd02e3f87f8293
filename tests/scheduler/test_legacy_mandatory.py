"""v1.16's mandatory predicates: a Policy listing its own predicates still refuses cordoned and tainted nodes.

Hand-checked: `web` asks 1 cpu / 1Gi.  Nodes `cordoned` (spec.unschedulable) and `tainted` (dedicated=gpu:
NoSchedule) are empty; `busy` already runs 2 cpu / 4Gi of its 4 cpu / 8Gi.  v1.16 ran CheckNodeUnschedulable
and PodToleratesNodeTaints whatever the Policy listed (RegisterMandatoryFitPredicate), so only `busy` is
feasible.  Its LeastRequestedPriority score: legacy (4000−3000)·10/4000 = 2 (cpu), (8−5)·10/8 = 3 (memory),
(2+3)/2 = 2; v1.34 after `config convert` (4000−3000)·100/4000 = 25, (8−5)·100/8 = 37, (25+37)/2 = 31.
Without the mandatory predicates the empty nodes would have scored 7 and won.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubefit.cli import main

POLICY = """\
apiVersion: v1
kind: Policy
predicates:
  - name: PodFitsResources
  - name: PodFitsHostPorts
priorities:
  - name: LeastRequestedPriority
    weight: 1
"""
CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: cordoned}
spec: {unschedulable: true}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: tainted}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: busy}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default}
spec:
  nodeName: busy
  containers: [{name: c, resources: {requests: {cpu: "2", memory: 4Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""
REFUSED = {"cordoned": ["node(s) were unschedulable"],
           "tainted": ["node(s) had untolerated taint {dedicated: gpu}"]}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    return {"policy": str(tmp_path / "policy.yaml"), "cluster": str(tmp_path / "cluster.yaml"),
            "converted": str(tmp_path / "converted.yaml")}


def _score(capsys, cluster: str, config: str) -> dict:
    rc = main(["score", "-f", cluster, "-f", config, "-o", "json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def _assert_refused(data: dict) -> None:
    assert {n: f["reasons"] for n, f in data["filter"].items() if f["code"] != "Success"} == REFUSED
    assert data["feasible"] == ["busy"]


def test_legacy_scoring_keeps_the_mandatory_predicates(capsys, files) -> None:
    data = _score(capsys, files["cluster"], files["policy"])
    _assert_refused(data)
    assert data["total"] == {"busy": 2}


def test_config_convert_keeps_them(capsys, files) -> None:
    assert main(["config", "convert", "-f", files["policy"]]) == 0
    out, err = capsys.readouterr()
    assert "CheckNodeUnschedulable is mandatory" in err and "PodToleratesNodeTaints is mandatory" in err
    Path(files["converted"]).write_text(out)
    data = _score(capsys, files["cluster"], files["converted"])
    _assert_refused(data)
    assert data["total"] == {"busy": 31}


def test_a_policy_listing_them_gets_no_note(capsys, files) -> None:
    Path(files["policy"]).write_text(POLICY.replace("predicates:\n", "predicates:\n  - name: CheckNodeUnschedulable\n"
                                                    "  - name: PodToleratesNodeTaints\n"))
    assert main(["config", "convert", "-f", files["policy"]]) == 0
    assert "mandatory" not in capsys.readouterr().err
