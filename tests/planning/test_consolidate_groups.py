"""`kubefit consolidate` with gangs (GenericWorkload on): a node whose removal would break a gang that cannot be
placed whole again stays, with the reason.

The replacements of a gang's pods on a candidate node are placed by one group cycle, beside the gang's pods still
running (they count towards `minCount`), and the removal is accepted only when all of them are placed; a gang's pod
that removing the node would delete for good (no controller, `--force`) keeps the node. Hand-derived cases (GPUs;
cpu and memory are plentiful; candidates in ascending cpu utilization).
"""

from __future__ import annotations

from gangs_support import V136, gang, gpu_node, gpu_pod, run

JOB = {"kind": "Job", "name": "train"}


def test_a_gang_that_cannot_be_placed_whole_again_keeps_its_node(tmp_path, capsys):
    # a, b: 4 GPUs; c: 1 GPU held by a pod without controller (c stays). A Job's gang of 4 (1 GPU each): 2 pods on
    # a, 2 on b. c is tried first (1 cpu of 32), refused. a: its 2 pods' replacements find b's 2 free GPUs → placed
    # whole, a goes. b: its 4 pods find no GPU (a gone, c full): the gang cannot be placed whole again, b stays.
    docs = [gpu_node("a", 4), gpu_node("b", 4), gpu_node("c", 1), gpu_pod("keeper", node="c"),
            *gang("pg", 4, nodes=["a", "a", "b", "b"], owner=JOB)]
    rc, out, _ = run(tmp_path, capsys, "consolidate", docs, *V136)
    assert rc == 0
    assert out["removable"] == ["a"]
    assert {(m["pod"], m["from"], m["to"]) for m in out["moves"]} == {("pg-0", "a", "b"), ("pg-1", "a", "b")}
    assert out["blocked"]["b"] == ("pod group ml/pg cannot be placed whole again: 4 of its pods run on the node (0 "
                                   "elsewhere): gang ml/pg: 0 of minCount 4 fit: 1 nodes Insufficient nvidia.com/gpu")
    assert out["verification"]["dropped"] == []


def test_a_gang_placed_above_min_count_but_not_whole_keeps_its_node(tmp_path, capsys):
    # a gang of 4 with minCount 2: 2 pods on a, 2 on b (b has 3 GPUs: 1 free). Removing a: its 2 replacements meet
    # b's 1 free GPU; with b's 2 running, 2 + 1 ≥ minCount — kube-scheduler would bind one and leave one pending —
    # but the gang would not be whole again: a stays. (a and b have the same utilization: a is tried first; then
    # b's 2 pods find a's 2 free GPUs: b goes.)
    docs = [gpu_node("a", 4), gpu_node("b", 3), *gang("pg", 4, 2, nodes=["a", "a", "b", "b"], owner=JOB)]
    rc, out, _ = run(tmp_path, capsys, "consolidate", docs, *V136)
    assert rc == 0 and out["removable"] == ["b"]
    assert out["blocked"]["a"].startswith("pod group ml/pg cannot be placed whole again: 2 of its pods run on the "
                                          "node (2 elsewhere): gang ml/pg: 1 of its 2 pods fit (minCount 2)")


def test_force_does_not_delete_a_gangs_pod(tmp_path, capsys):
    # two bare pods of one gang on a and b: --force would delete a's pod with its node (nothing recreates it) and
    # the gang would run with 1 of minCount 2: a stays; without the gate the same scenario lets a go.
    docs = [gpu_node("a", 4), gpu_node("b", 4), *gang("pg", 2, nodes=["a", "b"])]
    rc, out, _ = run(tmp_path, capsys, "consolidate", docs, "--force", *V136)
    assert rc == 0 and out["removable"] == []
    assert out["blocked"]["a"] == ("pod ml/pg-0 of gang ml/pg (minCount 2) would be deleted and nothing recreates "
                                   "it: the gang cannot be placed whole again")
    rc, out, _ = run(tmp_path, capsys, "consolidate", docs, "--force", "--kube-version", "1.36")
    assert rc == 0 and out["removable"] == ["a"]


def test_a_gang_that_fits_elsewhere_lets_its_node_go(tmp_path, capsys):
    # big (8 GPUs, 32 cpu) runs a pod without controller: tried first (1 cpu of 32), it stays. small (3 GPUs, 4 cpu)
    # runs a gang of 3 (3 cpu of 4): its replacements find big's 7 free GPUs, placed whole: small goes.
    docs = [gpu_node("small", 3, cpu="4"), gpu_node("big", 8), gpu_pod("keeper", node="big"),
            *gang("pg", 3, nodes=["small"] * 3, owner=JOB)]
    rc, out, _ = run(tmp_path, capsys, "consolidate", docs, *V136)
    assert rc == 0 and out["removable"] == ["small"]
    assert sorted((m["pod"], m["to"]) for m in out["moves"]) == [(f"pg-{i}", "big") for i in range(3)]
    assert not any("does not account for a pod group" in w for w in out["warnings"])
