"""`kubefit capacity` of a pod group: how many more copies of the WHOLE group fit (GenericWorkload on).

A copy of a gang is a new PodGroup with a copy of every pod of the group, placed by one group cycle without
preemption, and counted only when every one of its pods is placed; placing stops at the first copy that is not.
Each case derives its count by hand from the free GPUs (cpu and memory are plentiful, each pod's GPUs must sit
on one node).
"""

from __future__ import annotations

from collections import Counter

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefit
from gangs_support import GATES, V136, gang, gpu_node, gpu_pod, pod_group, run, write
from tests_support import ROOT, run_json

EXAMPLE = str(ROOT / "examples" / "gangs" / "cluster.yaml")


def test_the_example_fits_two_more_tune_gangs(capsys):
    # free GPUs: gpu-a 4 - 2 (notebook) = 2, gpu-b 4, gpu-c 4 → 10; a tune copy takes 4 (4 pods × 1 GPU):
    # copies 1 and 2 take 8, copy 3 finds 2 GPUs → 2 of minCount 4 fit, not placed.
    rc, out, _ = run_json(capsys, "capacity", "-f", EXAMPLE, "--pod", "podgroup/tune-0", *V136)
    assert rc == 0
    assert out["count"] == 2
    assert out["podGroup"] == {"podGroup": "ml/tune-0", "policy": "gang", "minCount": 4, "pods": 4}
    assert sum(out["perNode"].values()) == 8
    assert out["stopReason"] == "Unschedulable"
    assert out["message"] == "copy 3: gang ml/tune-0-copy-2: 2 of minCount 4 fit: 3 nodes Insufficient nvidia.com/gpu"


def test_a_member_pod_names_its_group_and_train_fits_once(capsys):
    # train: 8 pods × 1 GPU; 10 free → one copy, the second finds 2.
    rc, out, _ = run_json(capsys, "capacity", "-f", EXAMPLE, "--pod", "ml/train-3", *V136)
    assert rc == 0 and out["count"] == 1 and out["podGroup"]["podGroup"] == "ml/train-0"
    assert out["message"].startswith("copy 2: gang ml/train-0-copy-1: 2 of minCount 8 fit")


def test_a_copy_counts_only_when_every_pod_of_it_is_placed(tmp_path, capsys):
    # 8 GPUs (4 + 4), a gang of 3 pods with minCount 2: copies 1 and 2 take 6; copy 3 finds 2 GPUs: 2 of its 3
    # pods fit — enough for kube-scheduler to bind them (minCount 2), not a whole copy: the count is 2, not 3.
    docs = [gpu_node("a", 4), gpu_node("b", 4), *gang("pg", 3, 2)]
    rc, out, _ = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/pg", *V136)
    assert rc == 0 and out["count"] == 2
    assert out["message"] == "copy 3: gang ml/pg-copy-2: 2 of its 3 pods fit (minCount 2): 2 nodes Insufficient " \
                             "nvidia.com/gpu"


def test_pods_needing_two_gpus_each_fragment(tmp_path, capsys):
    # three 3-GPU nodes (9 GPUs), a gang of 2 pods × 2 GPUs (4 per copy, ⌊9/4⌋ = 2 by the sum): a node holds one
    # such pod only (2 of 3), so 3 pods fit in all: 1 copy.
    docs = [gpu_node("a", 3), gpu_node("b", 3), gpu_node("c", 3), *gang("pg", 2, gpus=2)]
    rc, out, _ = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/ml/pg", *V136)
    assert rc == 0 and out["count"] == 1
    assert out["message"] == "copy 2: gang ml/pg-copy-1: 1 of minCount 2 fit: 3 nodes Insufficient nvidia.com/gpu"


def test_bound_members_are_copied_too(tmp_path, capsys):
    # a running gang of 2 (both bound on a, 2 GPUs each, a full) is copied whole: b and c have 4 GPUs each → each
    # takes 2 pods of 2 GPUs: 4 pods, 2 copies.
    docs = [gpu_node("a", 4), gpu_node("b", 4), gpu_node("c", 4), *gang("run", 2, gpus=2, nodes=["a", "a"])]
    rc, out, _ = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/run", *V136)
    assert rc == 0 and out["count"] == 2 and out["podGroup"]["pods"] == 2
    assert "a" not in out["perNode"]


def test_max_counts_copies_of_the_group(tmp_path, capsys):
    docs = [gpu_node("a", 8), *gang("pg", 2)]
    rc, out, _ = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/pg", "--max", "3", *V136)
    assert rc == 0 and out["count"] == 3 and out["stopReason"] == "LimitReached" and out["perNode"] == {"a": 6}


def test_a_basic_group_is_copied_whole_too(tmp_path, capsys):
    # basic: no minCount, but a copy still counts only when all of its pods are placed: 5 GPUs, 2 pods a copy → 2.
    docs = [gpu_node("a", 5), pod_group("pg", None), gpu_pod("p0", "pg"), gpu_pod("p1", "pg")]
    rc, out, _ = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/pg", *V136)
    assert rc == 0 and out["count"] == 2 and out["podGroup"]["policy"] == "basic"
    assert out["message"].startswith("copy 3: basic group ml/pg-copy-2: 1 of its 2 pods fit (2 pods)")


def test_a_gang_short_of_its_min_count_is_never_queued(tmp_path, capsys):
    # minCount 3 with 2 pods: GangScheduling's PreEnqueue never lets a copy in.
    docs = [gpu_node("a", 8), *gang("pg", 2, 3)]
    rc, out, _ = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/pg", *V136)
    assert rc == 0 and out["count"] == 0
    assert out["message"] == ("copy 1: gang ml/pg-copy-0: 2 of minCount 3 pods exist: never queued (waiting for "
                              "minCount pods from a gang to appear in scheduling queue)")


def test_v135_copies_are_replicas_of_the_workloads_pod_group(tmp_path, capsys):
    # v1.35: pods name spec.workloadRef; a copy is the same Workload pod group under another replica key, its pods
    # scheduled one by one and held at Permit until minCount: 6 GPUs, 4 pods → 1 copy (the second: 2 of 4).
    workload = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "train",
                "namespace": "ml"}, "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 4}}}]}}
    pods = []
    for i in range(4):
        pod = gpu_pod(f"t{i}")
        pod["spec"]["workloadRef"] = {"name": "train", "podGroup": "w"}
        pods.append(pod)
    docs = [gpu_node("a", 3), gpu_node("b", 3), workload, *pods]
    rc, out, err = run(tmp_path, capsys, "capacity", docs, "--pod", "ml/t0", "--kube-version", "1.35",
                       "--feature-gates", GATES)
    assert rc == 0, err
    assert out["count"] == 1 and out["podGroup"]["podGroup"] == "ml/train/w"
    assert out["message"] == ("copy 2: gang ml/train/w/copy-1: 2 of minCount 4 fit: 0/2 nodes are available: 2 "
                              "Insufficient nvidia.com/gpu")


def test_without_the_gate_a_member_is_copied_as_a_single_pod(tmp_path, capsys):
    docs = [gpu_node("a", 4), *gang("pg", 2)]
    rc, out, _ = run(tmp_path, capsys, "capacity", docs, "--pod", "ml/pg-0", "--kube-version", "1.36")
    assert rc == 0 and out["count"] == 4 and "podGroup" not in out


def test_podgroup_names_are_checked(tmp_path, capsys):
    docs = [gpu_node("a", 4), *gang("pg", 2)]
    rc, _, err = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/nope", *V136)
    assert rc == 2 and "podgroup/nope: no pod names that pod group (pod groups: ml/pg)" in err
    rc, _, err = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/pg", "--kube-version", "1.36")
    assert rc == 2 and "only with the GenericWorkload feature gate on" in err


def test_the_table_names_the_group(tmp_path, capsys):
    from kubefit.cli import main

    path = write(tmp_path, [gpu_node("a", 4), *gang("pg", 2)])
    assert main(["capacity", "-f", path, "--pod", "podgroup/pg", *V136]) == 0
    out = capsys.readouterr().out
    assert "Copies of pod group ml/pg (gang, minCount 2, 2 pods)" in " ".join(out.split())
    assert "2 more copies of the whole group fit" in out


@st.composite
def clusters(draw):
    gpus = [draw(st.integers(0, 6)) for _ in range(draw(st.integers(1, 4)))]
    size = draw(st.integers(1, 4))
    return gpus, size, draw(st.integers(1, size)), draw(st.integers(1, 3))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(clusters())
def test_capacity_of_a_gang_is_a_whole_number_of_groups(tmp_path, cluster):
    # the copies' pods number count × size exactly; no node holds more of their GPUs than it has; and a copy more
    # would not fit whole: the single-pod capacity of one member (the GPUs left) is below a group's pods or some
    # pod of the next copy found no node.
    gpus, size, min_count, per_pod = cluster
    docs = [*(gpu_node(f"n{i}", g) for i, g in enumerate(gpus)), *gang("pg", size, min_count, gpus=per_pod)]
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = kubefit.capacity([path], "podgroup/pg", kube_version="1.36", feature_gates=GATES, warn=lambda _m: None)
    assert sum(result.per_node.values()) == result.count * size
    free = Counter({f"n{i}": g // per_pod for i, g in enumerate(gpus)})  # member pods each node can hold
    assert all(result.per_node[n] <= free[n] for n in result.per_node)
    left = sum(free[n] - result.per_node.get(n, 0) for n in free)
    assert left < size  # the pods of every node go first to copies: fewer than a group's left over
