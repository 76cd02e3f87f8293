"""VolumeZone, VolumeRestrictions and NodeVolumeLimits on hand-built clusters: zones with beta and GA labels,
ReadWriteOncePod claims in use, inline disks mounted twice, CSI limits with a volume shared by two pods."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.framework import new_context
from kubefit.scheduler.plugins.base import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from kubefit.scheduler.plugins.nodevolumelimits import REASON_MAX_VOLUME_COUNT, NodeVolumeLimits
from kubefit.scheduler.plugins.volumerestrictions import (
    REASON_DISK_CONFLICT,
    REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)
from kubefit.scheduler.plugins.volumes import StorageIndex
from kubefit.scheduler.plugins.volumezone import REASON_CONFLICT, VolumeZone
from kubefit.scheduler.state import compile_state
from tests_support import SHARED_DIR, run_json


def node(name: str, labels: str = "{}") -> str:
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: '{name}', labels: {labels}}}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n")


def pod(name: str, volumes: str, node_name: str = "") -> str:
    bound = f"nodeName: {node_name}, " if node_name else ""
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
            f"spec: {{{bound}volumes: {volumes}, containers: [{{name: c}}]}}\n")


def claim(name: str, volume: str = "", modes: str = "[ReadWriteOnce]") -> str:
    bound = f", volumeName: {volume}" if volume else ""
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, annotations: "
            f"{{pv.kubernetes.io/bind-completed: 'yes'}}}}\nspec: {{accessModes: {modes}, storageClassName: x{bound}}}\n")


def pv(name: str, labels: str = "{}", handle: str = "") -> str:
    csi = f", csi: {{driver: d.csi, volumeHandle: {handle}}}" if handle else ""
    return (f"apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {name}, labels: {labels}}}\n"
            f"spec: {{capacity: {{storage: 1Gi}}, storageClassName: x{csi}}}\n")


def pvc_volume(*claims: str) -> str:
    return "[" + ", ".join(f"{{name: v{i}, persistentVolumeClaim: {{claimName: {c}}}}}" for i, c in enumerate(claims)) + "]"


def run(plugin_of, *docs: str):
    scenario = Scenario()
    for doc in parse_documents("---\n".join(docs), "t.yaml"):
        add_document(scenario, doc)
    state = compile_state(scenario.nodes, scenario.pods, scenario.objects)
    plugin = plugin_of(StorageIndex.from_objects(scenario.objects))
    ctx = new_context(state, scenario.pending_pods[0])
    pre = plugin.pre_filter(state, ctx)
    if pre.code != SUCCESS or pre.skip:
        return pre
    out = plugin.filter(state, ctx, np.arange(len(state), dtype=np.int64))
    return [(int(c), out.reasons(i)) for i, c in enumerate(out.codes)]


def node_pods(state, n):
    return state.pods[n]


def test_volume_zone_matches_beta_pv_labels_against_ga_node_labels():
    verdicts = run(VolumeZone,
                   node("a1", "{topology.kubernetes.io/zone: a}"), node("b1", "{topology.kubernetes.io/zone: b}"),
                   node("bare"), node("c1", "{failure-domain.beta.kubernetes.io/zone: c}"),
                   pv("pv1", "{failure-domain.beta.kubernetes.io/zone: a__c}"), claim("data", "pv1"),
                   pod("p", pvc_volume("data")))
    # a (GA label, value in a__c), c (beta label itself) pass; b does not; a node without zone labels passes
    assert verdicts == [(SUCCESS, []), (UNRESOLVABLE, [REASON_CONFLICT]), (SUCCESS, []), (SUCCESS, [])]


def test_volume_zone_skips_without_topology_and_refuses_a_missing_pv():
    assert run(VolumeZone, node("n"), pv("pv1"), claim("data", "pv1"), pod("p", pvc_volume("data"))).skip
    pre = run(VolumeZone, node("n"), claim("data", "gone"), pod("p", pvc_volume("data")))
    assert (pre.code, pre.reasons) == (UNRESOLVABLE, ('persistentvolume "gone" not found',))


def test_read_write_once_pod_claim_in_use_rejects_every_node():
    def plugin(storage):
        return VolumeRestrictions(storage, node_pods)
    docs = [node("n1"), node("n2"), claim("solo", modes="[ReadWriteOncePod]"), claim("shared")]
    assert run(plugin, *docs, pod("p", pvc_volume("solo"))).skip  # nobody uses it yet
    verdicts = run(plugin, *docs, pod("user", pvc_volume("solo"), "n1"), pod("p", pvc_volume("solo")))
    assert verdicts == [(UNSCHEDULABLE, [REASON_RWOP_CONFLICT])] * 2
    assert run(plugin, *docs, pod("user", pvc_volume("shared"), "n1"), pod("p", pvc_volume("shared"))).skip
    pre = run(plugin, *docs, pod("p", pvc_volume("missing")))
    assert (pre.code, pre.reasons) == (UNRESOLVABLE, ('persistentvolumeclaim "missing" not found',))


def test_inline_disk_mounted_twice_conflicts_unless_both_read_only():
    def plugin(storage):
        return VolumeRestrictions(storage, node_pods)
    rw = "[{name: d, gcePersistentDisk: {pdName: disk-1}}]"
    ro = "[{name: d, gcePersistentDisk: {pdName: disk-1, readOnly: true}}]"
    docs = [node("n1"), node("n2")]
    assert run(plugin, *docs, pod("other", rw, "n1"), pod("p", ro)) == [(UNSCHEDULABLE, [REASON_DISK_CONFLICT]),
                                                                       (SUCCESS, [])]
    assert run(plugin, *docs, pod("other", ro, "n1"), pod("p", ro)) == [(SUCCESS, []), (SUCCESS, [])]


def test_csi_limit_counts_a_shared_volume_once():
    csi_node = ("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
                "spec: {drivers: [{name: d.csi, nodeID: x, allocatable: {count: 2}}]}\n")
    docs = [node("n1"), csi_node, pv("pv1", handle="h1"), pv("pv2", handle="h2"), pv("pv3", handle="h3"),
            claim("c1", "pv1"), claim("c2", "pv2"), claim("c3", "pv3"), pod("a", pvc_volume("c1", "c2"), "n1")]

    def plugin(storage):
        return NodeVolumeLimits(storage, node_pods)
    # 2 attached + c1 again (already attached, not new) = 2 ≤ 2; a third volume makes 3 > 2
    assert run(plugin, *docs, pod("p", pvc_volume("c1"))) == [(SUCCESS, [])]
    assert run(plugin, *docs, pod("p", pvc_volume("c3"))) == [(UNSCHEDULABLE, [REASON_MAX_VOLUME_COUNT])]


EBS = SHARED_DIR / "real-manifests/realworld4/kubernetes-sigs-aws-ebs-csi-driver"
CSI_NODE = ("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {{name: {name}}}\nspec: {{drivers: {drivers}}}\n")


@pytest.mark.parametrize(("version", "gates", "placed", "refusal"), [
    # VolumeLimitScaling beta and on: n2's CSINode lacks ebs.csi.aws.com, n3 has no CSINode: only n1 is left
    ("1.37", None, "n1", "ebs.csi.aws.com CSI driver is not installed on the node"),
    ("1.37", "VolumeLimitScaling=false", "n3", None),  # the pod goes where LeastAllocated sends it (the idlest)
    ("1.36", None, "n3", None),  # alpha, off
    ("1.36", "VolumeLimitScaling=true", "n1", "ebs.csi.aws.com CSI driver is not installed on the node"),
    ("1.34", None, "n3", None),  # no such gate: the field is unread
])
def test_a_csi_driver_preventing_scheduling_if_missing_keeps_pods_off_nodes_without_it(tmp_path, capsys, version,
                                                                                        gates, placed, refusal):
    """aws-ebs-csi-driver's CSIDriver (deploy/kubernetes/base/csidriver.yaml) with `preventPodSchedulingIfMissing:
    true`, as its chart renders it on Kubernetes 1.37+ (aws-ebs-csi-driver#3019), and the modify-volume example's
    pod and claim (examples/kubernetes/modify-volume, class ebs-sc of provisioner ebs.csi.aws.com). NodeVolumeLimits'
    Filter (`checkCSIDriverOnNode`) refuses a node whose CSINode does not list the driver (none: n3 has no CSINode)
    while VolumeLimitScaling is on. n1 runs a 3-cpu pod and n3 has the most memory, so with the gate off
    NodeResourcesFit's LeastAllocated sends the pod to n3. `score` names the refusal on n2 and n3."""
    driver = (EBS / "deploy/kubernetes/base/csidriver.yaml").read_text() + "  preventPodSchedulingIfMissing: true\n"
    nodes = [f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nstatus: {{allocatable: {{cpu: '4', memory: "
             f"{m}, pods: '110'}}}}\n" for n, m in (("n1", "8Gi"), ("n2", "8Gi"), ("n3", "16Gi"))]
    busy = ("apiVersion: v1\nkind: Pod\nmetadata: {name: busy}\nspec: {nodeName: n1, containers: [{name: c, "
            "resources: {requests: {cpu: '3'}}}]}\n")
    csi = [CSI_NODE.format(name="n1", drivers="[{name: ebs.csi.aws.com, nodeID: i-1}]"),
           CSI_NODE.format(name="n2", drivers="[{name: efs.csi.aws.com, nodeID: i-2}]")]
    path = tmp_path / "cluster.yaml"
    path.write_text("---\n".join([*nodes, busy, *csi, driver]))
    args = ["simulate", "-f", str(path), "-f", str(EBS / "examples/kubernetes/modify-volume/manifests"),
            "--kube-version", version, *(["--feature-gates", gates] if gates else [])]
    rc, out, err = run_json(capsys, *args)
    assert rc == 0, err
    assert [(s["pod"], s["node"]) for s in out["steps"]] == [("app", placed)]
    rc, out, err = run_json(capsys, "score", *args[1:], "--detail")
    assert rc == 0, err
    said = json.dumps(out)
    assert (refusal is not None and said.count(refusal) >= 2) or (refusal is None and "CSI driver is not" not in said)
