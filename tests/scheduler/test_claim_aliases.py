"""Pods that differ only in their claims' names share a shape (`volumes.ClaimAliases`, issue 37): the engine's
answers stay those of the plain framework, cycle by cycle, on the same live state (the volume binder's assume
cache included), and those of the engine without aliases.

The scenarios mix what can tell two such pods apart: a node's CSI attach limit (`CSINode` allocatable count,
NodeVolumeLimits counts a volume already attached to the node once: `filterAttachableVolumes` /
`checkAttachableInlineVolume`), a claim shared by several pods or already used by a bound pod, ReadWriteOncePod
claims (VolumeRestrictions), claims bound to zonal volumes (VolumeZone, VolumeBinding's PV node affinity) and
WaitForFirstConsumer claims whose provisioning the assume cache records (`AssumePodVolumes`)."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefit.scheduler.engine as eng
import kubefit.scheduler.simulate as sim
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.config import default_configuration
from kubefit.scheduler.framework import schedule_one
from kubefit.scheduler.plugins.volumebinding import assume_pod_volumes
from kubefit.scheduler.plugins.volumes import ClaimAliases, StorageIndex, claims_in_use
from kubefit.scheduler.state import compile_state

ZONE, DRIVER = "topology.kubernetes.io/zone", "ebs.csi.aws.com"
CLASSES = [
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"},
     "provisioner": DRIVER, "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "static"},
     "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "Immediate"},
]


def _node(i: int, zone: str, cpu: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}", ZONE: zone}},
            "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"}}}


def _csi_node(i: int, count: int) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": f"n{i}"},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": f"n{i}", "allocatable": {"count": count}}]}}


def _claim(name: str, kind: str, zone: str, rwop: bool) -> list[dict]:
    """A claim (and its volume when `kind` is "bound"): WaitForFirstConsumer, or bound to a zonal CSI volume."""
    modes = ["ReadWriteOncePod" if rwop else "ReadWriteOnce"]
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
           "spec": {"accessModes": modes, "storageClassName": "zonal" if kind == "wffc" else "static",
                    "resources": {"requests": {"storage": "1Gi"}}}}
    if kind == "wffc":
        return [pvc]
    volume = f"pv-{name}"
    pvc["spec"]["volumeName"] = volume
    pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    pvc["status"] = {"phase": "Bound"}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume, "labels": {ZONE: zone}},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": modes, "storageClassName": "static",
                   "claimRef": {"name": name, "namespace": "default"},
                   "csi": {"driver": DRIVER, "volumeHandle": volume},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": ZONE, "operator": "In", "values": [zone]}]}]}}},
          "status": {"phase": "Bound"}}
    return [pv, pvc]


def _pod(name: str, app: str, cpu: int, claims: list[str], node: str = "") -> dict:
    spec = {"containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": f"{cpu}m"}}}],
            "volumes": [{"name": f"v{k}", "persistentVolumeClaim": {"claimName": c}} for k, c in enumerate(claims)]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": app}}, "spec": spec}


@st.composite
def scenario_st(draw) -> list[dict]:
    """Nodes in two zones, some with an attach limit; pending pods of two apps, each with claims of its own
    (WaitForFirstConsumer or bound to a zonal volume, some ReadWriteOncePod), some sharing one claim; bound pods
    using some of the pending pods' claims."""
    zones = ["za", "zb"]
    n = draw(st.integers(2, 5))
    docs: list[dict] = list(CLASSES)
    for i in range(n):
        docs.append(_node(i, zones[i % 2], draw(st.sampled_from([2, 4]))))
        if draw(st.booleans()):
            docs.append(_csi_node(i, draw(st.integers(1, 3))))
    shared = draw(st.sampled_from(["wffc", "bound"]))
    docs += _claim("shared", shared, "za", False)
    pods, names = [], []
    for i in range(draw(st.integers(2, 12))):
        app = draw(st.sampled_from(["a", "b"]))
        claims = []
        for k in range(draw(st.integers(0, 2))):
            name = f"c{k}-p{i}"
            docs += _claim(name, draw(st.sampled_from(["wffc", "bound"])), draw(st.sampled_from(zones)),
                           draw(st.integers(0, 5)) == 0)
            claims.append(name)
            names.append(name)
        if draw(st.integers(0, 4)) == 0:
            claims.append("shared")
        pods.append(_pod(f"p{i}", app, 500 if app == "a" else 1000, claims))
    for j in range(draw(st.integers(0, 2))):  # bound pods using claims of the pending ones
        if names:
            docs.append(_pod(f"bound{j}", "z", 100, [draw(st.sampled_from(names))], node=f"n{draw(st.integers(0, n - 1))}"))
    return docs + pods


def _scenario(docs: list[dict]) -> Scenario:
    scenario = Scenario()
    for doc in parse_documents("---\n".join(yaml.safe_dump(d) for d in docs), "claims.yaml"):
        add_document(scenario, doc)
    return scenario


CONFIG = default_configuration()


def _engine_steps(scenario: Scenario, aliases: bool):
    state = compile_state(scenario.nodes, scenario.pods, scenario.objects)
    old = eng.Engine._claim_aliases
    if not aliases:
        eng.Engine._claim_aliases = lambda self, fw: None
    try:
        result = sim.simulate(state, CONFIG, scenario.pending_pods, tie_break="first", stranded=False)
    finally:
        eng.Engine._claim_aliases = old
    return [(s.node, [int(t) for t in s.ties] if s.tie_count > 1 else [], s.message) for s in result.steps]


def _plain_steps(scenario: Scenario):
    """Each pod through `schedule_one` on one live state, binding where it picks first and assuming the pod's
    volumes there as the binder does (no priorities here: nothing preempts)."""
    state = compile_state(scenario.nodes, scenario.pods, scenario.objects)
    engine = eng.Engine(state, CONFIG, tie_break="first")  # only to build the profile's framework
    out = []
    for pod in scenario.pending_pods:
        fw = engine.framework(pod)
        r = schedule_one(fw, state, pod)
        if len(r.feasible) == 0:
            out.append((None, [], r.fit_error()))
            continue
        best = [int(b) for b in (r.best if len(r.feasible) > 1 else r.feasible)]
        state.bind(best[0], state.bound_demand(pod), pod=pod)
        assume_pod_volumes(fw.filters, state, pod, best[0])
        out.append((best[0], best, None))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario_st())
def test_aliased_claims_give_the_plain_frameworks_answers(docs):
    scenario = _scenario(docs)
    with_aliases = _engine_steps(scenario, True)
    assert with_aliases == _engine_steps(scenario, False)
    plain = _plain_steps(scenario)
    assert [(node, best if len(best) > 1 else []) for node, best, _m in plain] == [s[:2] for s in with_aliases]
    for (_n, _b, message), step in zip(plain, with_aliases, strict=True):
        if message is not None:  # PostFilter adds its own sentence after the FitError
            assert step[2].startswith(message)


def _aliases(docs: list[dict]):
    scenario = _scenario(docs)
    state = compile_state(scenario.nodes, scenario.pods, scenario.objects)
    return ClaimAliases(StorageIndex.from_objects(scenario.objects)), state, scenario


def _claim_names(pod) -> list[str]:
    return [v["persistentVolumeClaim"]["claimName"] for v in pod.volumes]


def test_claims_equal_but_for_their_names_get_one_alias():
    """Two StatefulSet ordinals' claims of one template: one alias; a claim of another zone, another."""
    docs = [*CLASSES, _node(0, "za", 4), *_claim("data-web-0", "bound", "za", False),
            *_claim("data-web-1", "bound", "za", False), *_claim("data-web-2", "bound", "zb", False),
            *_claim("data-web-3", "wffc", "za", False),
            *(_pod(f"web-{i}", "web", 100, [f"data-web-{i}"]) for i in range(4))]
    aliases, state, scenario = _aliases(docs)
    keyed = [_claim_names(aliases.keyed(state, p))[0] for p in scenario.pending_pods]
    assert keyed[0] == keyed[1] and keyed[0].startswith("\x00claim ")
    assert len(set(keyed)) == 3


@pytest.mark.parametrize("why", ["in use", "missing", "lost", "volume missing"])
def test_a_claim_keeps_its_name_when_its_name_can_matter(why):
    """In use by a bound pod (NodeVolumeLimits counts it attached there), missing, Lost or bound to a missing
    volume (the plugins' messages name them): no alias."""
    claim = _claim("data-web-0", "bound", "za", False)
    if why == "lost":
        claim[1]["status"] = {"phase": "Lost"}
    docs = [*CLASSES, _node(0, "za", 4), *([] if why == "missing" else claim[1:] if why == "volume missing" else claim),
            _pod("web-0", "web", 100, ["data-web-0"])]
    if why == "in use":
        docs.append(_pod("other", "x", 100, ["data-web-0"], node="n0"))
    aliases, state, scenario = _aliases(docs)
    assert _claim_names(aliases.keyed(state, scenario.pending_pods[0])) == ["data-web-0"]


def test_a_claim_is_in_use_while_a_bound_pod_uses_it():
    """`claims_in_use` follows binds and removals through the change log."""
    docs = [*CLASSES, _node(0, "za", 4), *_claim("data", "wffc", "za", False), _pod("p", "a", 100, ["data"])]
    aliases, state, scenario = _aliases(docs)
    pod = scenario.pending_pods[0]
    assert claims_in_use(state)[("default", "data")] == 0
    state.bind(0, state.bound_demand(pod), pod=pod)
    assert claims_in_use(state)[("default", "data")] == 1
    assert _claim_names(aliases.keyed(state, pod)) == ["data"]
    state.unbind(0, pod)
    assert claims_in_use(state)[("default", "data")] == 0
    assert _claim_names(aliases.keyed(state, pod))[0].startswith("\x00claim ")


def test_an_assumed_claim_keeps_its_name():
    """A WaitForFirstConsumer claim the binder has given a selected node (its pod was bound, then removed):
    VolumeBinding now answers for that node alone, so the claim is no longer like the others."""
    docs = [*CLASSES, _node(0, "za", 4), *_claim("data", "wffc", "za", False), _pod("p", "a", 100, ["data"])]
    aliases, state, scenario = _aliases(docs)
    pod = scenario.pending_pods[0]
    engine = eng.Engine(state, CONFIG, tie_break="first")
    fw = engine.framework(pod)
    state.bind(0, state.bound_demand(pod), pod=pod)
    assume_pod_volumes(fw.filters, state, pod, 0)
    state.unbind(0, pod)
    assert _claim_names(aliases.keyed(state, pod)) == ["data"]


def _steps_agree(docs: list[dict]) -> list:
    scenario = _scenario(docs)
    steps = _engine_steps(scenario, True)
    plain = _plain_steps(scenario)
    assert [s[:2] for s in steps] == [(node, best if len(best) > 1 else []) for node, best, _m in plain]
    return [s[0] for s in steps]


def test_a_claim_already_attached_to_a_node_at_its_limit():
    """n0 attaches one volume of the driver and has one (the bound pod's, `data-web-1`); n1 has no limit.
    web-0's own claim would be a second volume on n0, so it goes to n1 (`CSILimits.Filter`: "node(s) exceed
    max volume count"); web-1's claim is the one already attached to n0, which counts once there: n0 fits,
    and LeastAllocated prefers it (n1 holds web-0)."""
    docs = [*CLASSES, _node(0, "za", 4), _csi_node(0, 1), _node(1, "za", 4),
            *_claim("data-web-0", "wffc", "za", False), *_claim("data-web-1", "wffc", "za", False),
            _pod("z", "z", 100, ["data-web-1"], node="n0"),
            _pod("web-0", "web", 1000, ["data-web-0"]), _pod("web-1", "web", 1000, ["data-web-1"])]
    assert _steps_agree(docs) == [1, 0]


def test_a_pod_sharing_the_previous_pods_claim_is_not_like_its_ordinals():
    """web-0 and web-1 share `shared`, bound to a volume of zone za; web-2's claim is alike but for its name.
    web-0 takes n0 (6 cores: LeastAllocated 83 against 75; its attach limit of one is then used), web-1 goes
    to the emptier n1 (75 against 66; its volume is attached to n0 already, so n0 would fit it too); web-2's
    new volume does not fit on n0 ("node(s) exceed max volume count"), though n0 scores better: n1."""
    docs = [*CLASSES, _node(0, "za", 6), _csi_node(0, 1), _node(1, "za", 4),
            *_claim("shared", "bound", "za", False), *_claim("data-web-2", "bound", "za", False),
            _pod("web-0", "web", 1000, ["shared"]), _pod("web-1", "web", 1000, ["shared"]),
            _pod("web-2", "web", 1000, ["data-web-2"])]
    assert _steps_agree(docs) == [0, 1, 1]
