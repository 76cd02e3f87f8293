"""Drainability rules, one hand case each (cluster-autoscaler v1.34 `simulator/drainability/rules`, Karpenter
`statenode.go`): what draining a node does with each pod, and when a node's pods refuse it."""

from __future__ import annotations

import pytest

from kubefit.api.cluster import ObjectMeta
from kubefit.api.core import Node, Pod
from kubefit.api.storage import PodDisruptionBudget
from kubefit.planning.drainability import (
    BLOCKS,
    LOST,
    MOVES,
    STAYS,
    Budgets,
    DrainOptions,
    drain,
    node_refusal,
    pod_verdict,
)

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs", "controller": True}
DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "ds", "controller": True}


def pod(name: str = "p", *, namespace: str = "default", owner: dict | None = RS, annotations: dict | None = None,
        labels: dict | None = None, volumes: tuple = (), phase: str = "Running") -> Pod:
    meta: dict = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    if annotations:
        meta["annotations"] = annotations
    return Pod(name, namespace=namespace, node_name="n", labels=labels or {"app": "web"}, volumes=volumes,
               phase=phase, raw={"metadata": meta})


def pdb(name: str, allowed: int, selector: dict | None = None, namespace: str = "default") -> PodDisruptionBudget:
    return PodDisruptionBudget(ObjectMeta(name, namespace), selector=selector, disruptions_allowed=allowed)


NONE = Budgets([])
DEFAULT = DrainOptions()


def outcome(p: Pod, budgets: Budgets = NONE, options: DrainOptions = DEFAULT) -> str:
    return pod_verdict(p, budgets, options).outcome


def test_a_replicated_pod_moves():
    assert outcome(pod()) == MOVES


def test_mirror_and_daemonset_pods_stay_and_block_nothing():
    """rules/mirror (skip) and rules/daemonset (drain ok, not moved): they go with the node."""
    assert outcome(pod(owner=None, annotations={"kubernetes.io/config.mirror": "abc"})) == STAYS
    assert outcome(pod(owner={"kind": "Node", "name": "n", "controller": True})) == STAYS
    assert outcome(pod(owner=DS)) == STAYS
    assert outcome(pod(owner=None, annotations={"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"})) == STAYS
    # the DaemonSet rule comes before not-safe-to-evict: such an annotation on a DaemonSet pod blocks nothing
    assert outcome(pod(owner=DS, annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"})) == STAYS


def test_a_terminal_pod_is_not_moved():
    assert outcome(pod(owner=None, phase="Succeeded")) == STAYS
    assert outcome(pod(owner=None, phase="Failed")) == STAYS


def test_a_pod_without_a_controller_blocks_unless_forced():
    verdict = pod_verdict(pod(owner=None), NONE, DEFAULT)
    assert verdict.outcome == BLOCKS and "NotReplicated" in verdict.reason and "--force" in verdict.reason
    assert outcome(pod(owner=None), options=DrainOptions(force=True)) == LOST


def test_a_custom_controller_blocks():
    """`--skip-nodes-with-custom-controller-pods` (default true): only RC, Job, ReplicaSet, StatefulSet."""
    verdict = pod_verdict(pod(owner={"kind": "Rollout", "name": "r", "controller": True}), NONE, DEFAULT)
    assert verdict.outcome == BLOCKS and "Rollout/r" in verdict.reason
    for kind in ("ReplicationController", "Job", "ReplicaSet", "StatefulSet"):
        assert outcome(pod(owner={"kind": kind, "name": "x", "controller": True})) == MOVES


def test_kube_system_pods_need_a_pdb():
    system = pod(namespace="kube-system")
    verdict = pod_verdict(system, NONE, DEFAULT)
    assert verdict.outcome == BLOCKS and "UnmovableKubeSystemPod" in verdict.reason
    assert outcome(system, Budgets([pdb("d", 1, {"matchLabels": {"app": "web"}}, "kube-system")])) == MOVES
    assert outcome(system, Budgets([pdb("d", 1, {"matchLabels": {"app": "web"}})])) == BLOCKS  # other namespace
    assert outcome(system, options=DrainOptions(skip_kube_system_check=True)) == MOVES


def test_not_safe_to_evict_blocks():
    verdict = pod_verdict(pod(annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}), NONE, DEFAULT)
    assert verdict.outcome == BLOCKS and "NotSafeToEvictAnnotation" in verdict.reason


@pytest.mark.parametrize(("volumes", "listed", "expected"), [
    (({"name": "h", "hostPath": {"path": "/x"}},), None, BLOCKS),
    (({"name": "e", "emptyDir": {}},), None, BLOCKS),
    (({"name": "e", "emptyDir": None},), None, BLOCKS),
    (({"name": "e", "emptyDir": {"medium": "Memory"}},), None, MOVES),
    (({"name": "e", "emptyDir": {"medium": "HugePages-2Mi"}},), None, BLOCKS),  # not memory: on the node's disk
    (({"name": "c", "configMap": {"name": "x"}},), None, MOVES),
    (({"name": "e", "emptyDir": {}}, {"name": "h", "hostPath": {"path": "/x"}}), "e,h", MOVES),
    (({"name": "e", "emptyDir": {}}, {"name": "h", "hostPath": {"path": "/x"}}), "e", BLOCKS),
])
def test_local_storage_blocks_unless_listed(volumes, listed, expected):
    notes = {"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": listed} if listed else None
    assert outcome(pod(volumes=volumes, annotations=notes)) == expected


def test_safe_to_evict_overrides_the_blocking_rules_after_it():
    """rules/safetoevict returns DrainOk before replicated, system, localstorage: the pod goes (a pod without a
    controller is deleted, nothing recreates it)."""
    ok = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
    assert outcome(pod(namespace="kube-system", annotations=ok)) == MOVES
    assert outcome(pod(volumes=({"name": "h", "hostPath": {"path": "/x"}},), annotations=ok)) == MOVES
    assert outcome(pod(owner=None, annotations=ok)) == LOST


def test_karpenter_do_not_disrupt_blocks_any_active_pod():
    """Karpenter `IsDisruptable`: even a DaemonSet's or a mirror pod; not a terminal one."""
    dnd = {"karpenter.sh/do-not-disrupt": "true"}
    for p in (pod(annotations=dnd), pod(owner=DS, annotations=dnd),
              pod(annotations={**dnd, "cluster-autoscaler.kubernetes.io/safe-to-evict": "true"})):
        verdict = pod_verdict(p, NONE, DEFAULT)
        assert verdict.outcome == BLOCKS and "karpenter.sh/do-not-disrupt" in verdict.reason
    assert outcome(pod(annotations=dnd, phase="Succeeded")) == STAYS


NODE = Node("n", {})


def test_a_budget_below_the_pods_leaving_blocks_the_node():
    """PDB web allows 1 disruption: a node with one web pod drains, with two it does not (2 > 1); a budget of 0
    blocks even one; pods of another app or namespace do not count."""
    web = Budgets([pdb("web", 1, {"matchLabels": {"app": "web"}})])
    assert drain(NODE, [pod("a")], web, DEFAULT).blocked is None
    two = drain(NODE, [pod("a"), pod("b")], web, DEFAULT)
    assert "PodDisruptionBudget default/web allows 1 disruption(s), 2 of its pods" in two.blocked
    assert drain(NODE, [pod("a"), pod("b", labels={"app": "db"}), pod("c", namespace="ns")], web, DEFAULT).blocked is None
    zero = Budgets([pdb("web", 0, {"matchLabels": {"app": "web"}})])
    assert "allows 0 disruption(s), 1 of its pods" in drain(NODE, [pod("a")], zero, DEFAULT).blocked


def test_budget_selectors_as_the_autoscaler_reads_them():
    """`LabelSelectorAsSelector`: {} selects every pod of the namespace, an absent selector none."""
    everything = Budgets([pdb("all", 0, {})])
    assert drain(NODE, [pod("a", labels={"x": "y"})], everything, DEFAULT).blocked is not None
    assert drain(NODE, [pod("a")], Budgets([pdb("none", 0, None)]), DEFAULT).blocked is None


def test_a_pod_two_budgets_select_blocks():
    """The eviction API refuses a pod with more than one PodDisruptionBudget (Karpenter blocks on it)."""
    two = Budgets([pdb("a", 5, {"matchLabels": {"app": "web"}}), pdb("b", 5, {})])
    blocked = drain(NODE, [pod("a")], two, DEFAULT).blocked
    assert "selected by 2 PodDisruptionBudgets (default/a, default/b)" in blocked


def test_the_first_blocking_pod_names_the_reason_and_what_the_rest_does():
    """GetPodsToMove: pods in node order; the first that blocks is the reason; else moves, deletions, stays."""
    pods = [pod("a"), pod("agent", owner=DS), pod("solo", owner=None)]
    assert "pod default/solo declares no controller" in drain(NODE, pods, NONE, DEFAULT).blocked
    forced = drain(NODE, pods, NONE, DrainOptions(force=True))
    assert forced.blocked is None
    assert [p.name for p in forced.moves] == ["a"] and [p.name for p, _ in forced.lost] == ["solo"]
    assert [p.name for p in forced.stays] == ["agent"]


@pytest.mark.parametrize(("annotation", "reason"), [
    ("cluster-autoscaler.kubernetes.io/scale-down-disabled", "ScaleDownDisabledAnnotation"),
    ("karpenter.sh/do-not-disrupt", "Karpenter"),
])
def test_node_annotations_make_it_no_candidate(annotation, reason):
    node = Node("n", {}, raw={"metadata": {"name": "n", "annotations": {annotation: "true"}}})
    assert reason in node_refusal(node)
    assert drain(node, [], NONE, DEFAULT).blocked == node_refusal(node)
    assert node_refusal(Node("n", {}, raw={"metadata": {"annotations": {annotation: "false"}}})) is None
