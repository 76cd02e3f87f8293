"""The kubelet's in-place resize admission as the VPA's InPlaceOrRecreate meets it, and which VPA controls a pod:
small scenarios derived by hand."""

from __future__ import annotations

import textwrap

import pytest

import kubefit
from kubefit.manifests.usage.kubeletresize import judge

GI = 1 << 30


def _pod(name: str, memory: str, priority: int = 0, node: str = "n1") -> str:
    return textwrap.dedent(f"""\
        ---
        apiVersion: apps/v1
        kind: ReplicaSet
        metadata: {{name: {name}, uid: rs-{name}}}
        spec:
          replicas: 1
          selector: {{matchLabels: {{app: {name}}}}}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec: {{containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: {memory}}}}}}}]}}
        ---
        apiVersion: v1
        kind: Pod
        metadata:
          name: {name}-x2k9p
          labels: {{app: {name}}}
          ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: {name}, uid: rs-{name}, controller: true}}]
        spec:
          nodeName: {node}
          priority: {priority}
          containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: {memory}}}}}}}]
        status: {{phase: Running}}
        """)


def _vpa(name: str, memory: str, mode: str = "InPlaceOrRecreate", created: str = "2026-01-01T00:00:00Z",
         target: str | None = None) -> str:
    return textwrap.dedent(f"""\
        ---
        apiVersion: autoscaling.k8s.io/v1
        kind: VerticalPodAutoscaler
        metadata: {{name: {name}, namespace: default, creationTimestamp: "{created}"}}
        spec:
          targetRef: {{apiVersion: apps/v1, kind: ReplicaSet, name: {target or name}}}
          updatePolicy: {{updateMode: {mode}}}
        status:
          recommendation:
            containerRecommendations: [{{containerName: c, target: {{cpu: 100m, memory: {memory}}}}}]
        """)


NODES = textwrap.dedent("""\
    apiVersion: v1
    kind: Node
    metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
    status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
    """)


def _run(tmp_path, text: str):
    f = tmp_path / "s.yaml"
    f.write_text(NODES + text)
    return kubefit.rightsize([str(f)], "vpa", warn=lambda _: None, consolidate=False)


def test_a_deferred_resize_leaves_its_room_to_the_next(tmp_path):
    """n1 (4Gi): a (1Gi, priority 10) and b (1Gi, priority 5) both raised to 3Gi, c (512Mi) without a VPA.
    a is judged first (both raise: higher priority first): others 1Gi + 512Mi, 3Gi more is 4.5Gi > 4Gi: Deferred,
    and the updater recreates it. b then: others only c's 512Mi (a left), 3.5Gi ≤ 4Gi: resized in place. Had a's
    room not been freed, b would see 4.5Gi too."""
    result = _run(tmp_path, _pod("a", "1Gi", 10) + _pod("b", "1Gi", 5) + _pod("c", "512Mi") +
                  _vpa("a", "3Gi") + _vpa("b", "3Gi"))
    verdicts = {r["pod"]: r["decision"] for r in result.resizes}
    assert verdicts == {"default/a-x2k9p": "Deferred", "default/b-x2k9p": "InPlace"}
    assert [m["pod"] for m in result.moves] == ["default/a-x2k9p"]  # recreated, then placed on n2
    assert result.moves[0]["to"] == "n2"


def test_resizes_that_raise_nothing_go_first(tmp_path):
    """n1 (4Gi): a (3Gi, priority 10) raised to 3.5Gi, b (1Gi) lowered to 256Mi. b's resize raises nothing: judged
    first (sortPendingResizes), so a sees b's 256Mi: 3.75Gi ≤ 4Gi, in place. Judged by priority alone, a would see
    b's 1Gi and be deferred."""
    result = _run(tmp_path, _pod("a", "3Gi", 10) + _pod("b", "1Gi") + _vpa("a", "3584Mi") + _vpa("b", "256Mi"))
    assert {r["pod"]: r["decision"] for r in result.resizes} == {"default/a-x2k9p": "InPlace",
                                                                 "default/b-x2k9p": "InPlace"}
    assert [r["pod"] for r in result.resizes][0] == "default/b-x2k9p"


def test_infeasible_above_allocatable_and_inplace_never_recreates(tmp_path):
    """a raised to 5Gi on the 4Gi n1: above allocatable, Infeasible (memory named); with updateMode InPlace the
    pod is left as it is (never evicted), with InPlaceOrRecreate it is recreated, and lands on the 8Gi n2; raised
    to 9Gi it fits no node: pending, with kube-scheduler's FitError, and the new request named as larger than any
    node's allocatable."""
    kept = _run(tmp_path, _pod("a", "1Gi") + _vpa("a", "5Gi", mode="InPlace"))
    [r] = kept.resizes
    assert r["decision"] == "Infeasible" and r["recreatedAs"] is None and kept.moves == []
    assert r["message"] == f"Node didn't have enough capacity: memory, requested: {5 * GI}, capacity: {4 * GI}"
    moved = _run(tmp_path, _pod("a", "1Gi") + _vpa("a", "5Gi"))
    assert moved.resizes[0]["recreatedAs"] and moved.moves[0]["to"] == "n2" and moved.pending == []
    huge = _run(tmp_path, _pod("a", "1Gi") + _vpa("a", "9Gi"))
    assert huge.moves[0]["to"] is None and huge.pending[0]["replaces"] == "default/a-x2k9p"
    assert "Insufficient memory" in huge.pending[0]["message"]
    assert any("larger than any node's allocatable" in n for n in huge.notes)


@pytest.mark.parametrize("requests,used,pods,expect", [
    ({"cpu": 500, "memory": GI}, {"cpu": 3600, "memory": GI}, 2,
     ("Deferred", "Node didn't have enough resource: cpu, requested: 500, used: 3600, capacity: 4000")),
    ({"cpu": 5000, "memory": 5 * GI}, {}, 0,
     ("Infeasible", f"Node didn't have enough capacity: memory, requested: {5 * GI}, capacity: {4 * GI}")),
    ({"cpu": 5000, "memory": GI}, {}, 0, ("Infeasible", "Node didn't have enough capacity: cpu, requested: 5000, "
                                                         "capacity: 4000")),
    ({"cpu": 100, "memory": GI}, {}, 10, ("Deferred", "Node didn't have enough resource: pods, requested: 1, "
                                                      "used: 10, capacity: 10")),
    ({"cpu": 100, "memory": GI}, {"cpu": 3900, "memory": 3 * GI}, 9, ("InPlace", "")),
])
def test_judge(requests, used, pods, expect):
    """`canResizePod`: capacity first (memory named before cpu), then `Fits` in its order (pods, cpu, memory)."""
    verdict = judge(requests, {"cpu": 4000, "memory": 4 * GI, "pods": 10}, used, pods)
    assert (verdict.decision, verdict.message) == expect


def test_the_earliest_vpa_controls_the_pod(tmp_path):
    """`GetMatchingVPA` / `Stronger`: of two VPAs targeting one workload, the earliest created."""
    result = _run(tmp_path, _pod("a", "1Gi") + _vpa("a-late", "2Gi", created="2026-02-01T00:00:00Z", target="a") +
                  _vpa("z-early", "1536Mi", created="2026-01-01T00:00:00Z", target="a"))
    [change] = result.changes
    assert change["source"] == "VerticalPodAutoscaler default/z-early"
    assert change["containers"][0]["requests"]["after"]["memory"] == "1536Mi"


def test_pods_recreated_leave_their_node_before_resizes_are_judged(tmp_path):
    """n1 (4Gi): a (2Gi, its VPA Recreate, lowered to 1Gi: recreated) and b (1Gi, InPlaceOrRecreate, raised to
    2.5Gi). b's resize is judged once a has left n1: others 0, 2.5Gi fits: in place. Had a still counted (2Gi),
    4.5Gi would not: Deferred."""
    result = _run(tmp_path, _pod("a", "2Gi") + _pod("b", "1Gi") + _vpa("a", "1Gi", mode="Recreate") +
                  _vpa("b", "2560Mi"))
    assert [(r["pod"], r["decision"]) for r in result.resizes] == [("default/b-x2k9p", "InPlace")]
    assert [m["pod"] for m in result.moves] == ["default/a-x2k9p"]


def test_a_replica_set_the_files_lack_is_its_deployment_s():
    """`FindTopMostWellKnownOrScalable` without the ReplicaSet object: the pod's `pod-template-hash` ends the
    ReplicaSet's name, so its workload is the Deployment that names it so; a pod gone since is attributed by its
    name (`<deployment>-<hash>-<5>`), a vowel-suffixed one is no controller's."""
    from kubefit.api.core import Pod
    from kubefit.manifests.documents import parse_documents
    from kubefit.manifests.usage.owners import Workloads

    deployment = parse_documents("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n")
    pod = Pod("web-6d8f5c7b9-x2k9p", "shop", labels={"pod-template-hash": "6d8f5c7b9"},
              raw={"metadata": {"ownerReferences": [{"kind": "ReplicaSet", "name": "web-6d8f5c7b9",
                                                     "controller": True}]}})
    workloads = Workloads(deployment, [pod])
    assert workloads.of(pod) == ("shop", "Deployment", "web")
    assert workloads.by_name("shop", "web-5f4d8c6b7-k2x9p") == ("shop", "Deployment", "web")
    assert workloads.by_name("shop", "web-5f4d8c6b7-abcde") is None
    assert workloads.by_name("other", "web-5f4d8c6b7-k2x9p") is None
