"""Opportunistic batching (KEP-5598, `OpportunisticBatching`, beta and on from v1.35; kubernetes#135231) and
v1.37's rescoring of the last chosen node (kubernetes#140289), against expectations taken from upstream, not
from kubefit's output:

- `TestBatchBasic` of `pkg/scheduler/framework/runtime/batch_test.go` (kubernetes/kubernetes, the version the
  code index holds: it already has the GenericWorkload/PodGroup cases of v1.37's kubernetes#138754, left out
  here), driven on `OpportunisticBatch` and checked against v1.36.3 `framework/runtime/batch.go`
  (`GetNodeHint`, `batchStateCompatible`, `StoreScheduleResults`) in the kueue mirror's vendor tree.
- Small `kubefit simulate` scenarios whose placements and hints are derived by hand from v1.36.3
  `schedule_one.go` (`findNodesThatFitPod` asks for the hint after PreFilter, `evaluateNominatedNode` filters
  it alone; `schedulePod` stores the other scored nodes), `noderesources/most_allocated.go` and
  `balanced_allocation.go`, and the signers of `kube-scheduler/framework/signers.go`.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

import pytest

from kubefit.scheduler.batch import OpportunisticBatch
from tests_support import run_json

V1 = "kubescheduler.config.k8s.io/v1"


# --------------------------------------------------------------------------- TestBatchBasic, ported
# `BatchTestPlugin.Filter`: a node holds at most one pod whose UID starts with "b" (blocking); pods starting
# with "a" never block. The test's lister holds only the first pod's chosen node, with the first pod on it.

@dataclass
class _BatchTestEngine:
    """What `OpportunisticBatch.hint` asks of the engine, answering as batch_test.go's framework does."""

    pods_on: dict[str, list[str]] = field(default_factory=dict)  # node -> UIDs of its pods
    present: set[str] = field(default_factory=set)

    def node_removed(self, node: str) -> bool:
        return node not in self.present

    def passes_filters(self, pod_uid: str, node: str) -> bool:
        return not (pod_uid[0] == "b" and any(uid[0] == "b" for uid in self.pods_on.get(node, [])))

    def ranked(self, sh, last, rest):  # pragma: no cover - v1.37 rescoring is not part of TestBatchBasic
        raise AssertionError("TestBatchBasic runs v1.35/v1.36 batching: nothing is rescored")


# (name, first UID, first signature, first scheduled, first chosen, first others, skipped a cycle,
#  second UID, second signature, second chosen, expected hint, expected remaining list or None)
BATCH_BASIC = [
    ("a second pod with the same signature gets a hint",
     "b-1", "sig", True, "n3", ["n1"], False, "b-2", "sig", "n1", "n1", None),
    ("a second pod with a different signature doesn't get a hint",
     "a-1", "sig", True, "n3", ["n1"], False, "a-2", "sig2", "n1", None, None),
    ("a second pod doesn't get a hint if it's not 1-pod-per-node",
     "a-1", "sig", True, "n3", ["n1"], False, "a-2", "sig", "n1", None, None),
    ("pod doesn't get hint if previous pod didn't scheduled",
     "b-1", "sig", False, "n3", ["n1"], False, "b-2", "sig", "n1", None, None),
    ("empty list", "b-1", "sig", True, "n3", [], False, "b-2", "sig", "n4", None, None),
    ("nil list", "b-1", "sig", True, "n3", None, False, "b-2", "sig", "n4", None, None),
    ("pod doesn't get hint because the previous pod is to a different profile",
     "b-1", "sig", True, "n3", ["n1"], True, "b-2", "sig", "n1", None, None),
    ("pod uses batch from preceding pod and leaves remaining batch to next pod",
     "b-1", "sig", True, "n3", ["n1", "n2"], False, "b-2", "sig", "n1", "n1", ["n2"]),
]


@pytest.mark.parametrize(("name", "uid1", "sig1", "scheduled", "chosen1", "others1", "skip", "uid2", "sig2",
                          "chosen2", "hint", "remaining"), BATCH_BASIC, ids=[c[0] for c in BATCH_BASIC])
def test_batch_basic(name, uid1, sig1, scheduled, chosen1, others1, skip, uid2, sig2, chosen2, hint, remaining):
    """batch_test.go `TestBatchBasic`, case `name`: GetNodeHint(first pod, cycle 1) is empty; if the first pod
    was scheduled, StoreScheduleResults(sig, "", chosen, others, 1); the second pod asks at cycle 2 (3 when
    another profile's pod came between); then StoreScheduleResults(sig2, hint, chosen2, nil, cycle), and the
    batch is empty unless the case expects a remaining list."""
    batch = OpportunisticBatch()
    engine = _BatchTestEngine(pods_on={chosen1: [uid1]}, present={chosen1})
    assert batch.hint(engine, uid1, sig1, 1) is None
    if scheduled:
        batch.store(sig1, None, chosen1, None if others1 is None else list(others1), 1)
    cycle = 3 if skip else 2
    got = batch.hint(engine, uid2, sig2, cycle)
    assert got == hint
    batch.store(sig2, got, chosen2, None, cycle)
    empty = batch.state is None or not batch.state.sorted_nodes
    assert empty == (remaining is None)
    if remaining is not None:
        assert batch.state.signature == "sig" and batch.state.sorted_nodes == deque(remaining)


def test_hint_used_counts_as_batched_and_keeps_the_rest():
    """v1.36.3 `StoreScheduleResults`: `hintedNode == chosenNode` → `batchedPods++` and return, the state
    untouched (the popped list goes on); a hint not used replaces the state with the cycle's own list."""
    batch = OpportunisticBatch()
    engine = _BatchTestEngine(pods_on={"n3": ["b-1"]}, present={"n3"})
    batch.store("sig", None, "n3", ["n1", "n2"], 1)
    assert batch.hint(engine, "b-2", "sig", 2) == "n1"
    batch.store("sig", "n1", "n1", ["ignored"], 2)
    assert batch.batched == 1 and batch.state.sorted_nodes == deque(["n2"])
    engine.pods_on["n1"], engine.present = ["b-2"], {"n1"}
    assert batch.hint(engine, "b-3", "sig", 3) == "n2"
    batch.store("sig", "n2", "n4", ["n5"], 3)  # hint not used: the cycle's list replaces the state
    assert batch.batched == 1 and batch.state.sorted_nodes == deque(["n5"])


def test_last_node_missing_gives_no_hint():
    """`batchStateCompatible`: the last chosen node missing from the snapshot → `BatchFlushNodeMissing`."""
    batch = OpportunisticBatch()
    batch.store("sig", None, "n3", ["n1"], 1)
    assert batch.hint(_BatchTestEngine(present=set()), "b-2", "sig", 2) is None


# --------------------------------------------------------------------------- scenarios through the CLI
# A profile whose every Filter/Score plugin signs pods (NodeResourcesFit, NodeResourcesBalancedAllocation), with
# MostAllocated so that a pod prefers the fullest node. Nodes 4 cpu / 8Gi; n1 runs 2 cpu / 4Gi, n2 1 cpu / 2Gi,
# n3 nothing. All requests are explicit, so the non-zero requests MostAllocated reads equal the requests.

def _profile(*extra: str, args: list | None = None) -> dict:
    enabled = [{"name": n} for n in ("PrioritySort", "DefaultBinder", "NodeResourcesFit",
                                      "NodeResourcesBalancedAllocation", *extra)]
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": enabled}},
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                         *(args or [])]}]}


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, requests: dict, node: str | None = None, labels: dict | None = None, **spec) -> dict:
    body: dict = {"containers": [{"name": "c", "image": "img", "resources": {"requests": requests}}], **spec}
    if node:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": "x"}}, "spec": body}


BASE = [_node("n1"), _node("n2"), _node("n3"),
        _pod("used-1", {"cpu": "2", "memory": "4Gi"}, node="n1"),
        _pod("used-2", {"cpu": "1", "memory": "2Gi"}, node="n2")]
FILLS = {"cpu": "2", "memory": "4Gi"}  # fills n1 (2+2 = 4 cpu) and n2 after one more (1+2 = 3, +2 > 4)
HALF = {"cpu": "1", "memory": "2Gi"}  # n1 takes two of these (2+1+1 = 4 cpu)


def _simulate(tmp_path, capsys, docs: list[dict], *args: str, profile: dict | None = None) -> list[dict]:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [profile or _profile(), *docs]}))
    rc, out, err = run_json(capsys, "simulate", "-f", str(path), "--no-admission", "--tie-break", "first", *args)
    assert rc == 0, err
    return out["steps"]


def _hints(steps: list[dict]) -> list[tuple[str, str | None, bool]]:
    return [(s["pod"], s["node"], bool(s.get("batchHint"))) for s in steps]


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_full_node_hands_the_next_pod_the_next_node(tmp_path, capsys, version):
    """Three 2-cpu/4Gi pods. p1 scores (MostAllocated = (cpu% + mem%) / 2, BalancedAllocation):
    n1 4/4 cpu, 8/8 Gi → 100; n2 3/4, 6/8 → 75; n3 2/4, 4/8 → 50. Balance (fractions equal on every node):
    v1.35 100 everywhere; v1.36+ with 100, without 100 → 50 + (50 + 100 - 100) / 2 = 75 everywhere.
    Totals n1 > n2 > n3 in every version: p1 → n1, the batch keeps [n2, n3].
    p2: n1 is now full (4 + 2 > 4 cpu), so batchStateCompatible holds: hint n2, which passes → n2, unscored.
    p3: n2 is now full (3 + 2 > 4): hint n3 → n3. A full cycle gives the same: each time the hinted node is
    the only feasible one left."""
    docs = [*BASE, _pod("p1", FILLS), _pod("p2", FILLS), _pod("p3", FILLS)]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", version)
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", True), ("p3", "n3", True)]
    assert steps[0]["feasible"] == 3  # p1 was scored over the three nodes


@pytest.mark.parametrize("args", [("--kube-version", "1.34"),
                                  ("--kube-version", "1.35", "--feature-gates", "OpportunisticBatching=false"),
                                  ("--kube-version", "1.37", "--feature-gates", "OpportunisticBatching=false")])
def test_no_batching_without_the_gate(tmp_path, capsys, args):
    """v1.34 has no batching (the gate appears in v1.35); with the gate off `schedulePod` neither asks nor
    stores. Every pod gets a full cycle, and lands where the hints sent it above."""
    docs = [*BASE, _pod("p1", FILLS), _pod("p2", FILLS), _pod("p3", FILLS)]
    steps = _simulate(tmp_path, capsys, docs, *args)
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", False), ("p3", "n3", False)]
    assert [s["feasible"] for s in steps] == [3, 2, 1]


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_no_hint_while_the_last_node_still_fits(tmp_path, capsys, version):
    """Three 1-cpu/2Gi pods. p1: n1 3/4, 6/8 → MostAllocated 75; n2 2/4 → 50; n3 1/4 → 25 (balance ties) →
    n1, batch [n2, n3]. p2: n1 (3 cpu used) still takes a 1-cpu pod → `BatchFlushNodeNotFull`, no hint; the
    full cycle scores n1 4/4 → 100 above n2 50 and n3 25 → n1, and stores [n2, n3] again.
    p3: n1 is full now → hint n2, which passes → n2 (a full cycle agrees: n2 3/4 → 75 > n3 50)."""
    docs = [*BASE, _pod("p1", HALF), _pod("p2", HALF), _pod("p3", HALF)]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", version)
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n1", False), ("p3", "n2", True)]


def test_v1_37_rescores_the_last_node_when_it_still_fits(tmp_path, capsys):
    """v1.37 (kubernetes#140289, KEP-5598 "Rescoring the Last Chosen Node"): p2 finds n1 still feasible, so n1
    rejoins the cached list [n2, n3] with its new score and the list is sorted again.
    p2's scores (v1.36 balance formula, no NormalizeScore for either plugin):
      n1: 4/4 cpu, 8/8 Gi → MostAllocated 100; balance with (1, 1) 100, without (3/4, 6/8) 100 → 75; total 175
      n2: 2/4, 4/8 → 50; balance 75; total 125
      n3: 1/4, 2/8 → 25; balance 75; total 100
    → hint n1, which passes: p2 → n1 with batchHint, where a full cycle puts it too (v1.36 above: n1).
    p3: n1 full → hint the next of [n2, n3]: n2 (full cycle: n2 3/4 → 75 + 75 = 150 > n3 50 + 75 = 125)."""
    docs = [*BASE, _pod("p1", HALF), _pod("p2", HALF), _pod("p3", HALF)]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.37")
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n1", True), ("p3", "n2", True)]


def test_v1_37_rescored_node_can_lose_to_the_cached_head(tmp_path, capsys):
    """The rescored node competes, it does not win by default. LeastAllocated (free% averaged over cpu and
    memory) on 8 cpu / 16Gi nodes: n1 empty, n2 runs 1 cpu / 2Gi, n3 4 cpu / 8Gi; pods of 2 cpu / 4Gi (cpu and
    memory fractions stay equal on every node, so the v1.36+ balance is 75 everywhere):
      p1: n1 (8-2)/8 → 75, n2 (8-3)/8 → 62 (62.5 truncated), n3 (8-6)/8 → 25 → n1; the list [n2, n3].
      p2: n1 (2 cpu used) still fits. v1.37 rescores it: (8-4)/8 → 50 < n2 62 → the re-sorted list is
          [n2, n1, n3] and its head n2 is the hint: p2 → n2 with batchHint.
          v1.36: `BatchFlushNodeNotFull`, a full cycle: n1 50, n2 62, n3 25 → n2, no hint."""
    big = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    nodes = [_node(n) for n in ("n1", "n2", "n3")]
    for n in nodes:
        n["status"]["allocatable"] = dict(big)
    pod = {"cpu": "2", "memory": "4Gi"}
    docs = [*nodes, _pod("used-2", {"cpu": "1", "memory": "2Gi"}, node="n2"),
            _pod("used-3", {"cpu": "4", "memory": "8Gi"}, node="n3"), _pod("p1", pod), _pod("p2", pod)]
    least = _profile()
    least["profiles"][0]["pluginConfig"][0]["args"]["scoringStrategy"]["type"] = "LeastAllocated"
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.37", profile=least)
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", True)]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.36", profile=least)
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", False)]


def test_a_pod_with_other_requests_gets_no_hint(tmp_path, capsys):
    """p2 asks 2 cpu / 3Gi: `ResourcesSignerName` differs from p1's 2 cpu / 4Gi → `BatchFlushPodIncompatible`.
    Full cycle: n1 is full; n2 3/4 cpu, 5/8 Gi → MostAllocated (75 + 62) / 2 = 68 (62.5 truncated), balance
    |0.75 - 0.625| / 2 = 0.0625 → 93; n3 2/4, 3/8 → (50 + 37) / 2 = 43, balance 93 → n2."""
    docs = [*BASE, _pod("p1", FILLS), _pod("p2", {"cpu": "2", "memory": "3Gi"})]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.35")
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", False)]


def test_a_pending_pod_in_between_ends_the_batch(tmp_path, capsys):
    """A pod that fits nowhere takes cycle 2 (FitError, nothing stored); p2's cycle 3 is not lastCycle + 1 →
    `BatchFlushPodSkipped`: full cycle, n2 (n1 full; n2 75 > n3 50)."""
    docs = [*BASE, _pod("p1", FILLS), _pod("huge", {"cpu": "64"}), _pod("p2", FILLS)]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.36")
    assert _hints(steps[:3]) == [("p1", "n1", False), ("huge", None, False), ("p2", "n2", False)]


def test_explicit_zero_cpu_and_absent_cpu_batch_together(tmp_path, capsys):
    """`computePodResourceRequest` (the resources signer) keeps cpu/memory as numbers where zero and absent are
    alike, so a memory-only pod and one with `cpu: "0"` sign the same, although MostAllocated reads them
    differently (absent cpu counts 100m, `GetNonzeroRequestForResource`; explicit 0 counts 0).
    n1 runs 3 cpu / 4Gi, n2 1 cpu / 2Gi. p1 (memory 4Gi, cpu absent):
      n1: cpu (3000 + 100) / 4000 → 77, memory 8/8 → 100 → MostAllocated 88; balance (0.75, 1) → 87
      n2: cpu 1100/4000 → 27, memory 6/8 → 75 → 51; balance (0.25, 0.75) → 75
      n3: cpu 100/4000 → 2, memory 4/8 → 50 → 26; balance (0, 0.5) → 75
    → n1 (v1.35 totals 175 / 126 / 101), list [n2, n3]. p2 (cpu "0", memory 4Gi): same signature, n1's memory
    is full → hint n2 → n2, batchHint."""
    docs = [_node("n1"), _node("n2"), _node("n3"),
            _pod("used-1", {"cpu": "3", "memory": "4Gi"}, node="n1"),
            _pod("used-2", {"cpu": "1", "memory": "2Gi"}, node="n2"),
            _pod("p1", {"memory": "4Gi"}), _pod("p2", {"cpu": "0", "memory": "4Gi"})]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.35")
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", True)]


# PodTopologySpread (List defaulting, no default constraints: plain pods stay signable) and InterPodAffinity.
SIGNING_PROFILE = _profile("PodTopologySpread", "InterPodAffinity", args=[
    {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}])
SPREAD = [{"maxSkew": 5, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
           "labelSelector": {"matchLabels": {"app": "x"}}}]
ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "nothing"}}}]}}


def test_plain_pods_batch_with_spread_and_affinity_plugins_enabled(tmp_path, capsys):
    """Control for the two tests below: with PodTopologySpread (no default constraints) and InterPodAffinity in
    the profile, pods without constraints still sign (InterPodAffinity adds their labels, equal here), and
    the PodTopologySpread/InterPodAffinity scores are 0 for them: p2 takes the hint n2 as before."""
    docs = [*BASE, _pod("p1", FILLS), _pod("p2", FILLS)]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.36", profile=SIGNING_PROFILE)
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", True)]


@pytest.mark.parametrize(("what", "spec"), [("topologySpreadConstraints", {"topologySpreadConstraints": SPREAD}),
                                            ("podAntiAffinity", {"affinity": ANTI})])
def test_unsignable_pods_never_batch(tmp_path, capsys, what, spec):
    """v1.36.3 `PodTopologySpread.SignPod`: "pods with topology constraints are not signable";
    `InterPodAffinity.SignPod`: "pods with InterPodAffinity are not signable" (affinity or anti-affinity). A nil
    signature stores nothing and matches nothing: every pod gets a full cycle."""
    docs = [*BASE, *(_pod(f"p{i}", FILLS, **spec) for i in (1, 2, 3))]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.36", profile=SIGNING_PROFILE)
    assert [s["node"] for s in steps] == ["n1", "n2", "n3"], what
    assert not any(s.get("batchHint") for s in steps)


def _bound_claim(name: str) -> list[dict]:
    """A claim bound to a volume of its own that any node can attach (no node affinity, no CSI driver)."""
    return [{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
             "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "static",
                      "claimRef": {"name": name, "namespace": "default"}, "hostPath": {"path": "/d"}},
             "status": {"phase": "Bound"}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": name, "namespace": "default",
                          "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "static", "volumeName": f"pv-{name}",
                      "resources": {"requests": {"storage": "1Gi"}}},
             "status": {"phase": "Bound"}}]


def _with_claim(name: str, claim: str) -> dict:
    return _pod(name, FILLS, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}])


@pytest.mark.parametrize(("claims", "hinted"), [(("shared", "shared"), True), (("data-p1", "data-p2"), False)])
def test_pods_differing_in_their_claims_do_not_batch(tmp_path, capsys, claims, hinted):
    """`VolumesSigner` (v1.36.3 `kube-scheduler/framework/signers.go`, the fragment of every volume plugin) writes
    the pod's volumes, claim names included: p1 and p2 using one claim sign alike and p2 takes the hint n2 (n1
    is full, as above); with a claim each (a StatefulSet's ordinals) they do not, and p2 gets a full cycle —
    although kubefit evaluates both ordinals as one shape (`ClaimAliases`: claims equal but for their names)."""
    profile = _profile("VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits")
    docs = [*BASE, *_bound_claim(claims[0]), *([] if claims[1] == claims[0] else _bound_claim(claims[1])),
            _with_claim("p1", claims[0]), _with_claim("p2", claims[1])]
    steps = _simulate(tmp_path, capsys, docs, "--kube-version", "1.36", profile=profile)
    assert _hints(steps) == [("p1", "n1", False), ("p2", "n2", hinted)]
