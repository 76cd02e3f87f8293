"""VolumeBinding on WaitForFirstConsumer claims, hand-computed: the smallest matching PV per node, claims
matched in increasing size, assumed bindings taking a PV away from later claims, provisioning as fallback."""

from __future__ import annotations

import numpy as np

from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.framework import new_context
from kubefit.scheduler.plugins.base import SUCCESS, UNRESOLVABLE
from kubefit.scheduler.plugins.volumebinding import REASON_BIND_CONFLICT, VolumeBinding
from kubefit.scheduler.plugins.volumes import StorageIndex
from kubefit.scheduler.state import compile_state


def node(name: str, zone: str) -> str:
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{topology.kubernetes.io/zone: {zone}}}}}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n")


def pv(name: str, zone: str, size: str) -> str:
    return ("apiVersion: v1\nkind: PersistentVolume\n"
            f"metadata: {{name: {name}}}\nspec: {{capacity: {{storage: {size}}}, accessModes: [ReadWriteOnce],"
            " storageClassName: local, nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions:"
            f" [{{key: topology.kubernetes.io/zone, operator: In, values: [{zone}]}}]}}]}}}}}}\n"
            "status: {phase: Available}\n")


def claim(name: str, size: str, cls: str = "local") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\n"
            f"spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}, "
            f"storageClassName: {cls}}}\n")


def pod(name: str, *claims: str) -> str:
    volumes = ", ".join(f"{{name: v{i}, persistentVolumeClaim: {{claimName: {c}}}}}" for i, c in enumerate(claims))
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
            f"spec: {{volumes: [{volumes}], containers: [{{name: c}}]}}\n")


CLASSES = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
           "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n---\n"
           "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: dynamic}\n"
           "provisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\n"
           "allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [b]}]}]\n")


def setup(*docs: str):
    scenario = Scenario()
    for doc in parse_documents("---\n".join([node("n1", "a"), node("n2", "b"), CLASSES, *docs]), "t.yaml"):
        add_document(scenario, doc)
    state = compile_state(scenario.nodes, scenario.pods)
    return scenario, state, VolumeBinding(StorageIndex.from_objects(scenario.objects))


def verdict(plugin: VolumeBinding, state, p):
    ctx = new_context(state, p)
    assert plugin.pre_filter(state, ctx).code == SUCCESS
    out = plugin.filter(state, ctx, np.arange(len(state), dtype=np.int64))
    return [(int(c), out.reasons(i)) for i, c in enumerate(out.codes)], ctx


def test_assumed_binding_takes_the_volume_away():
    scenario, state, plugin = setup(pv("pv-a", "a", "10Gi"), pv("pv-a2", "a", "50Gi"), pv("pv-b", "b", "20Gi"),
                                    claim("c1", "10Gi"), claim("c2", "10Gi"), claim("c3", "10Gi"),
                                    pod("p1", "c1"), pod("p2", "c2"), pod("p3", "c3"))
    p1, p2, p3 = scenario.pending_pods
    codes, _ = verdict(plugin, state, p1)
    assert codes == [(SUCCESS, []), (SUCCESS, [])]
    assert [pv.meta.name for pv, _c in plugin.match_volumes(state, [scenario.objects.of(
        "PersistentVolumeClaim")[0]], 0)[1]] == ["pv-a"]  # the smaller of pv-a (10Gi) and pv-a2 (50Gi)
    plugin.assume(state, p1, 0)  # p1 bound to n1: pv-a now belongs to c1
    verdict(plugin, state, p2)
    plugin.assume(state, p2, 0)  # p2 on n1 takes pv-a2
    codes, _ = verdict(plugin, state, p3)
    # zone a has no free PV left and the class cannot provision; zone b still has pv-b
    assert codes == [(UNRESOLVABLE, [REASON_BIND_CONFLICT]), (SUCCESS, [])]
    fresh = compile_state(scenario.nodes, scenario.pods)  # a new run starts without those assumptions
    assert verdict(plugin, fresh, p3)[0] == [(SUCCESS, []), (SUCCESS, [])]


def test_claims_matched_in_increasing_size_then_provisioned_where_the_class_allows():
    scenario, state, plugin = setup(pv("pv-a", "a", "20Gi"), claim("big", "15Gi"), claim("small", "5Gi"),
                                    claim("dyn", "5Gi", cls="dynamic"), pod("p", "big", "small"), pod("q", "dyn"))
    p, q = scenario.pending_pods
    # n1: "small" (5Gi) is matched first and takes pv-a; "big" finds nothing and cannot be provisioned
    codes, _ = verdict(plugin, state, p)
    assert codes == [(UNRESOLVABLE, [REASON_BIND_CONFLICT]), (UNRESOLVABLE, [REASON_BIND_CONFLICT])]
    # the dynamic class provisions only in zone b (allowedTopologies)
    codes, _ = verdict(plugin, state, q)
    assert codes == [(UNRESOLVABLE, [REASON_BIND_CONFLICT]), (SUCCESS, [])]
