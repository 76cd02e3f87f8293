"""The exact node-level count beyond Karmada, hand-computed fleets, `--member`, `--explain` and bad input."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, Node, Pod
from kubefit.cli import main
from kubefit.k8s.quantity import parse_quantity
from kubefit.multicluster.estimate import MemberState, exact_counts, exact_estimate


def node(name: str, **alloc: str) -> Node:
    return Node(name=name, allocatable={k.replace("_", "-"): parse_quantity(v) for k, v in alloc.items()})


def pod(name: str, node_name: str, phase: str = "Running", **req: str) -> Pod:
    requests = {k.replace("_", "-"): parse_quantity(v) for k, v in req.items()}
    return Pod(name=name, node_name=node_name, phase=phase, containers=(Container("c", requests),))


def request(**req: str) -> dict[str, int]:
    return {k: parse_quantity(v) for k, v in req.items()}


def test_hand_computed_fleet() -> None:
    """n1: min(6/2, 28Gi/8Gi, 2 pod slots) = 2; n2: memory 4Gi/8Gi = 0; n3 has no memory: 0 → 2."""
    nodes = [node("n1", cpu="8", memory="32Gi", pods="3"), node("n2", cpu="4", memory="4Gi", pods="110"),
             node("n3", cpu="64", pods="110")]
    pods = [pod("p1", "n1", cpu="2", memory="4Gi"),
            pod("done", "n1", phase="Succeeded", cpu="6", memory="28Gi"),  # finished: frees its resources
            pod("elsewhere", "n9", cpu="100")]  # bound to a node that is not listed
    assert exact_estimate(nodes, pods, request(cpu="2", memory="8Gi")) == 2


def test_fragmentation_versus_summary() -> None:
    """Four nodes with 0.5 cpu free each: Karmada's summary sees 2 cpu (2 replicas of 1 cpu); none fits."""
    nodes = [node(f"n{i}", cpu="4", memory="16Gi", pods="110") for i in range(4)]
    pods = [pod(f"p{i}", f"n{i}", cpu="3500m", memory="1Gi") for i in range(4)]
    assert exact_estimate(nodes, pods, request(cpu="1")) == 0
    assert exact_estimate(nodes, pods, request(cpu="500m")) == 4


def test_pod_slots_cap_and_zero_request() -> None:
    nodes = [node("a", cpu="100", pods="5"), node("b", cpu="100", pods="1")]
    pods = [pod("x", "b", cpu="1")]
    assert exact_estimate(nodes, pods, request(cpu="1")) == 5  # b has no free pod slot
    assert exact_estimate(nodes, pods, {}) == 5  # an empty request is bounded by pod slots only


def test_overflow_range_values_do_not_crash() -> None:
    nodes = [node("big", cpu="9223372036854775807", memory="8Ei", pods="110")]
    assert exact_estimate(nodes, [], request(cpu="1", memory="1")) == 110


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 64000), st.integers(0, 2**36), st.integers(0, 120)), min_size=1, max_size=20),
       st.integers(1, 8000), st.integers(1, 2**32))
def test_vectorised_equals_scalar(rows: list[tuple[int, int, int]], cpu: int, mem: int) -> None:
    free = np.array([[c, m] for c, m, _ in rows], dtype=np.int64)
    state = MemberState([f"n{i}" for i in range(len(rows))], ["cpu", "memory"], free,
                        np.ones_like(free, dtype=bool), np.array([p for _, _, p in rows], dtype=np.int64))
    got = exact_counts(state, {"cpu": cpu * 10**6, "memory": mem * 10**9})
    want = [min(c // cpu, m // mem, p) for c, m, p in rows]
    assert got.tolist() == want


# --------------------------------------------------------------------------- through the CLI

CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
           "spec": {"syncMode": "Push"},
           "status": {"resourceSummary": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "440"},
                                          "allocated": {"cpu": "14", "memory": "4Gi", "pods": "4"}}}}


def _files(tmp_path: Path) -> tuple[str, str]:
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps(CLUSTER))
    member = tmp_path / "member1.json"
    items = []
    for i in range(4):
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                      "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
                      "spec": {"nodeName": f"n{i}", "containers": [
                          {"name": "c", "resources": {"requests": {"cpu": "3500m", "memory": "1Gi"}}}]},
                      "status": {"phase": "Running"}})
    member.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(fleet), str(member)


def test_member_exact_count_and_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fleet, member = _files(tmp_path)
    rc = main(["estimate", "-f", fleet, "--request", "cpu=1,memory=1Gi", "--member", f"member1={member}", "-o", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert data["availableReplicas"] == {"member1": 2}  # (16 − 14) / 1
    assert data["exactReplicas"] == {"member1": 0}  # 0.5 cpu free per node
    assert data["estimateError"] == {"member1": 2}


def test_explain_shows_the_arithmetic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fleet, _ = _files(tmp_path)
    assert main(["estimate", "-f", fleet, "--request", "cpu=500m", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "(16 − 14) / 0.5 = 4 → 4" in out
    assert "pods: 440 − 4 − 0 = 436" in out


@pytest.mark.parametrize("args, message", [
    (["--member", "nope=x.yaml"], "unknown cluster 'nope'"),
    (["--request", "cpu=lots"], "--request cpu"),
    (["--request", "cpu"], "expected NAME=VALUE"),
    (["--feature-gates", "NoSuchGate=true"], "unknown feature gate"),
    (["--feature-gates", "CustomizedClusterResourceModeling=maybe"], "expected true or false"),
])
def test_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    fleet, _ = _files(tmp_path)
    assert main(["estimate", "-f", fleet, *args, "-o", "json"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_request_from_deployment_and_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No binding: the Deployment's pod template (containers summed, init max) gives the request."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 3, "template": {"spec": {
                      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1500m"}}}],
                      "containers": [{"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}},
                                     {"name": "b", "resources": {"requests": {"cpu": "250m"}}}]}}}}
    policy = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
              "metadata": {"name": "pp", "namespace": "default"},
              "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                       "placement": {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [CLUSTER, deployment, policy]}))
    assert main(["estimate", "-f", str(path), "-o", "json"]) == 0
    # effective cpu = max(250m + 250m, 1500m) = 1.5 → (16 − 14) / 1.5 = 1
    assert json.loads(capsys.readouterr().out)["availableReplicas"] == {"member1": 1}


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**12), 10**12), st.integers(-9, 6), st.integers(-(10**12), 10**12), st.integers(-9, 6))
def test_go_sub_is_exact_without_overflow(a: int, ea: int, b: int, eb: int) -> None:
    from kubefit.k8s.goquantity import GoQuantity
    from kubefit.multicluster.estimate import go_sub

    got = go_sub(GoQuantity(value=a, scale=ea), GoQuantity(value=b, scale=eb))
    m, e = got.as_fraction()
    assert Fraction(m) * Fraction(10) ** e == Fraction(a) * Fraction(10) ** ea - Fraction(b) * Fraction(10) ** eb
