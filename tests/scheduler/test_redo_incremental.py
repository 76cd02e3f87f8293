"""What a repeat pod shape's cycle skips after a bind (`Engine._redo`), checked against independent expectations.

- PodTopologySpread's `codes_key`: Filter's codes over every node are a function of the verdict of each domain, so
  two equal keys give equal codes and `keyed_codes` gives the node-by-node reference's codes (the reference of
  test_spread_incremental, written from upstream v1.34.1 `calPreFilterState` / `Filter`), after every step of
  random bind / removal / node-deletion sequences.
- `pre_static_for`: a plugin whose PreFilter / PreScore outcome binds never change for a pod is not asked again;
  a pod with claims is always asked again, and the engine gives the plain framework's answer when an earlier
  replica's bind assumed the claim's binding.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.scheduler.test_default_profile_properties import CONFIG, GIB, HOST, ZONE, replicas_st
from tests.scheduler.test_simulate_properties import fast, reference, steps_of
from tests.scheduler.test_spread_incremental import DO_NOT_SCHEDULE, _present, _run, case_st, reference_filter

from kubefit.api.cluster import ClusterObjects, ObjectMeta, Service
from kubefit.api.core import Container, Node, Pod
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.engine import Engine
from kubefit.scheduler.framework import Framework, new_context, schedule_one
from kubefit.scheduler.plugins.dynamicresources import DynamicResources
from kubefit.scheduler.plugins.topologyspread import PodTopologySpread
from kubefit.scheduler.plugins.volumebinding import VolumeBinding
from kubefit.scheduler.plugins.volumerestrictions import VolumeRestrictions
from kubefit.scheduler.plugins.volumes import StorageIndex
from kubefit.scheduler.state import compile_state
from kubefit.scheduler.staticnorm import _distinct_values


@settings(max_examples=300, deadline=None)
@given(case_st())
def test_codes_key_gives_the_reference_codes_and_equal_keys_equal_codes(case):
    """After every step: `keyed_codes(codes_key)` over the present nodes is the reference's Filter; and when the
    key equals the previous step's (the same `ConstraintNodes`, equal verdict bytes), so do the codes on every
    present node (what `_redo` relies on to keep a shape's row)."""
    last: list = []

    def check(state, plugin, ctx, _idx):
        constraints = [c for c in ctx.pod.topology_spread_constraints if c["whenUnsatisfiable"] == DO_NOT_SCHEDULE]
        present = np.asarray(_present(state), dtype=np.int64)
        want = reference_filter(state, ctx.pod, constraints, present.tolist())
        key = plugin.codes_key(state, ctx)
        if not constraints:
            assert key is None
            return
        assert plugin.keyed_codes(key, present).tolist() == want
        if last and last[0][0] is key[0] and last[0][1] == key[1]:
            assert last[1] == dict(zip(present.tolist(), want, strict=True))
        last[:] = [key, dict(zip(present.tolist(), want, strict=True))]

    _run(case, check)


def _documents(*docs: str) -> Scenario:
    scenario = Scenario()
    for doc in parse_documents("---\n".join(docs), "t.yaml"):
        add_document(scenario, doc)
    return scenario


def _node(name: str, cpu: str) -> str:
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}\n"
            f"status: {{allocatable: {{cpu: '{cpu}', memory: 8Gi, pods: '110'}}}}\n")


PINNED_TO_N2 = (
    "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
    "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n",
    "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-n2}\nspec: {capacity: {storage: 10Gi},"
    " accessModes: [ReadWriteOnce], storageClassName: local, nodeAffinity: {required: {nodeSelectorTerms:"
    " [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]}]}}}\n"
    "status: {phase: Available}\n",
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}, storageClassName: local}\n")


def _claim_pod(name: str) -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{volumes: [{{name: v, "
            "persistentVolumeClaim: {claimName: data}}], containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\n")


def test_a_claim_assumed_between_two_replicas_by_hand():
    """n1 (4 CPU) and n2 (2 CPU); the only volume for claim `data` is pinned to n2. p1 and p2 use the claim and
    ask 2 CPU each (one shape, whose VolumeBinding runs: `pre_static_for` is False for a pod with claims, so the
    engine asks its PreFilter again after the bind). p1: n1 has no volume for the claim, n2 has pv-n2: p1 on n2,
    which assumes the claim's binding. p2: n2 has no CPU left, n1 still no volume: pending with both reasons,
    as the plain framework gives pod after pod."""
    scenario = _documents(_node("n1", "4"), _node("n2", "2"), *PINNED_TO_N2, _claim_pod("p1"), _claim_pod("p2"))
    queue = list(scenario.pending_pods)
    result = fast(scenario.nodes, [], queue, CONFIG, objects=scenario.objects, tie_break="first")
    ref, _state = reference(scenario.nodes, [], queue, CONFIG, objects=scenario.objects)
    assert [s.node for s in result.steps] == [1, None]
    assert result.steps[1].message.startswith("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't find "
                                              "available persistent volumes to bind.")
    assert steps_of(result) == [(n, b if len(b) > 1 else [], m) for n, b, m in ref]


def test_pre_static_for_by_hand():
    """Which pods' PreFilter / PreScore outcomes binds can never change: a pod without claims for VolumeBinding,
    VolumeRestrictions and DynamicResources (no claim another pod could bind, use or share); never a pod with a
    claim (an earlier pod's assume may bind it); always for
    PodTopologySpread (the pod's constraints and the node count alone)."""
    scenario = _documents(_node("n1", "4"), *PINNED_TO_N2, _claim_pod("p1"))
    claimed = scenario.pending_pods[0]
    plain = Pod("plain")
    state = compile_state(scenario.nodes, [claimed])
    storage = StorageIndex.from_objects(scenario.objects)
    binding = VolumeBinding(storage)
    restrictions = VolumeRestrictions(storage, lambda s, n: s.pods[n])
    resources = DynamicResources(objects=scenario.objects)
    for plugin, with_claim in ((binding, False), (restrictions, True), (resources, True)):
        assert plugin.pre_static_for(state, new_context(state, plain)) is True
        assert plugin.pre_static_for(state, new_context(state, claimed)) is with_claim, type(plugin).__name__
    spread = PodTopologySpread.from_args({}, scenario.objects)
    assert spread.pre_static_for(state, new_context(state, claimed)) is True


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(-3, 3), min_size=0, max_size=12), min_size=1, max_size=4))
def test_distinct_values_equal_numpy_unique(rows):
    """A static plugin's distinct raw scores and each node's index among them are `np.unique`'s, for a row of one
    value (no sort), a row seen before (from the memo) and a new one alike."""
    for values in rows + rows:  # (each row twice: the second from the memo)
        row = np.asarray(values, dtype=np.int64)
        got_values, got_codes = _distinct_values(row)
        want_values, want_codes = np.unique(row, return_inverse=True)
        assert got_values.tolist() == want_values.tolist()
        assert got_codes.tolist() == want_codes.reshape(-1).tolist()


@st.composite
def _filling_replicas_st(draw):
    """`replicas_st`'s nodes, workloads and queue on nodes of 1–2 CPUs (they fill within a few pods and leave the
    shapes' feasible sets), with the queue steps after which the oldest pod placed is evicted."""
    nodes, bound, queue, objects = draw(replicas_st())
    nodes = [replace(n, allocatable={**n.allocatable, "cpu": draw(st.sampled_from([1000, 2000])) * 10**6})
             for n in nodes]
    evictions = draw(st.lists(st.integers(0, len(queue) - 1), max_size=3))
    return nodes, bound, queue, objects, evictions


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_filling_replicas_st())
def test_redo_skipping_full_rows_equals_the_plain_cycle(case):
    """A repeat shape whose plugins read other nodes (the default spread of replicas behind a Service) and that has
    no such Filter plugin leaves a row it could not use as it was when pods were only added since (`_redo`'s
    `binds_only`, the rule `_sync` follows): NodeResourcesFit still refuses a node that got more pods. After every
    step (binds that fill nodes, evictions that free them again) its feasible nodes, scores of those and choice
    are the plain framework's cycle on the engine's state."""
    nodes, bound, queue, objects, evictions = case
    state = compile_state(nodes, bound + queue, objects)
    engine = Engine(state, CONFIG, tie_break="first")
    fw = Framework.build(CONFIG.profiles[0], objects=objects)
    placed = []
    for i, pod in enumerate(queue):
        d = engine.cycle(pod)
        plain = schedule_one(fw, engine.state, pod)
        assert d.shape.ok.nonzero()[0].tolist() == sorted(plain.feasible.tolist())
        assert d.node == (int(plain.best[0]) if len(plain.feasible) else None)
        if d.node is not None:
            engine.bind(d.node, d.shape, pod)
            placed.append((d.node, pod))
        if i in evictions and placed:
            engine.evict(*placed.pop(0))


def test_redo_skipping_full_rows_by_hand():
    """Two equal 1-CPU nodes in one zone, two Deployments behind Services (default spread: their shapes read other
    nodes, no Filter plugin of theirs does). By hand: a0 (600m) → n0 (equal nodes: the first); a1 (600m) → n1 (n0
    has 400m left: a's shape finds its row full and keeps it so); b0 (300m) → n0 (600m used on each, 0 b pods on
    each: a tie, the first); a0 is evicted (n0: 300m used); a2 (600m) → n0, the only node with 600m free (n1 has
    400m). Were the eviction not seen as a removal, a's shape would keep n0 full (skipped while only binds came)
    and a2 would fit nowhere."""
    def node(name: str) -> Node:
        return Node(name, {"cpu": 1000 * 10**6, "memory": 8 * GIB * 10**9, "pods": 20 * 10**9}, {HOST: name, ZONE: "za"})

    def pod(name: str, app: str, cpu: int) -> Pod:
        return Pod(name, labels={"app": app}, containers=(Container("c", {"cpu": cpu * 10**6, "memory": GIB * 10**9}),))

    objects = ClusterObjects()
    for app in ("a", "b"):
        objects.add("Service", Service(ObjectMeta(f"svc-{app}", "default"), {"app": app}))
    queue = [pod("a0", "a", 600), pod("a1", "a", 600), pod("b0", "b", 300), pod("a2", "a", 600)]
    engine = Engine(compile_state([node("n0"), node("n1")], queue, objects), CONFIG, tie_break="first")
    got = []
    for p in queue:
        d = engine.cycle(p)
        got.append(d.node)
        if d.node is not None:
            engine.bind(d.node, d.shape, p)
        if p.name == "b0":
            engine.evict(0, queue[0])
    assert got == [0, 1, 0, 0]
