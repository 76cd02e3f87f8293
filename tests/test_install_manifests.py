"""Install manifests read as the API server and the controllers take them (issue 22): one regression test per
defect found on real install manifests (3 to 7; 1 and 2 are the YAML reader's), each from a small manifest of
its own with the outcome derived from Kubernetes' sources in its docstring, and what plan and capacity do
with workloads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests_support import SHARED_DIR, run_json

NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}{labels}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 16Gi, pods: "110"}}}}
"""
WFFC_ZONE_A = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a]}]}]
"""


def node(name: str, zone: str = "a", cpu: str = "4", labels: str = "") -> str:
    return NODE.format(name=name, zone=zone, cpu=cpu, labels=labels)


def stateful_set(replicas: int, *, policy: str = "", claims: bool = False, cpu: str = "1") -> str:
    templates = ("  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], "
                 "storageClassName: zonal, resources: {requests: {storage: 1Gi}}}\n") if claims else ""
    return (f"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db}}\nspec:\n  replicas: {replicas}\n"
            f"  serviceName: db\n{policy}  selector: {{matchLabels: {{app: db}}}}\n"
            f"  template:\n    metadata: {{labels: {{app: db}}}}\n    spec:\n      containers: [{{name: c, image: x, "
            f"resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n{templates}")


def files(tmp_path: Path, *docs: str, name: str = "scenario.yaml") -> str:
    path = tmp_path / name
    path.write_text("---\n".join(docs))
    return str(path)


def steps(out: dict) -> list[tuple]:
    return [(s["pod"], s["node"], bool(s.get("notCreated"))) for s in out["steps"]]


# --------------------------------------------------------------------------- defect 3

def test_defect_3_a_storage_class_without_binding_mode_is_immediate(tmp_path, capsys):
    """A StorageClass without volumeBindingMode is stored with `Immediate` (SetDefaults_StorageClass,
    pkg/apis/storage/v1/defaults.go; kubefit ended in `internal error: VolumeBindingMode not set`, exit 70).
    Its new claim is then provisioned and bound by the PV controller as soon as it exists (pv_controller.go
    `syncUnboundClaim` → `provisionClaim`), so the pod mounting it is placed. As kube-scheduler alone sees it
    (`--no-admission`: no controller runs), VolumeBinding's PreFilter (volume_binding.go) finds the claim
    unbound with an Immediate class: "pod has unbound immediate PersistentVolumeClaims", still exit 0."""
    sc = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: standard}\nprovisioner: x\n"
    claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: "
             "[ReadWriteOnce], storageClassName: standard, resources: {requests: {storage: 1Gi}}}\n")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: d, persistentVolumeClaim: "
           "{claimName: data}}], containers: [{name: c, image: x}]}\n")
    path = files(tmp_path, node("n1"), sc, claim, pod)
    rc, out, err = run_json(capsys, "simulate", "-f", path)
    assert rc == 0, err
    assert out["placement"] == {"n1": 1}
    assert any("StorageClass/standard: volumeBindingMode: the API server defaults it to Immediate" in w
               for w in out["warnings"])
    assert any(w.startswith("PV controller: claim(s) default/data of an Immediate class provisioned") for w in
               out["warnings"])
    rc, out, err = run_json(capsys, "simulate", "-f", path, "--no-admission")
    assert rc == 0, err
    assert out["steps"][0]["message"].startswith("0/1 nodes are available: pod has unbound immediate "
                                                 "PersistentVolumeClaims.")


# --------------------------------------------------------------------------- defect 4

def test_defect_4_a_daemon_set_matching_no_node_creates_no_pod(tmp_path, capsys):
    """The DaemonSet controller creates a pod for each node `NodeShouldRunDaemonPod` admits (pkg/controller/daemon);
    a nodeSelector no node matches admits none: 0 pods, the input accepted (exit 0), a note (was refused)."""
    ds = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: gpu}\nspec: {selector: {matchLabels: {app: gpu}}, "
          "template: {metadata: {labels: {app: gpu}}, spec: {nodeSelector: {gpu: 'true'}, containers: [{name: c, "
          "image: x}]}}}\n")
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), ds))
    assert rc == 0, err
    assert out["steps"] == []
    assert any("DaemonSet/gpu: spec.template.spec.nodeSelector matches no node of the scenario; the DaemonSet "
               "creates no pod" in w for w in out["warnings"])


def test_plan_puts_a_daemon_set_pod_on_every_added_node_it_matches(tmp_path, capsys):
    """The same DaemonSet when `plan` adds nodes of a template labelled gpu=true: its controller creates a pod on
    each (queued before the scenario's pods). Two 3-cpu pods need two 4-cpu nodes, whose 500m daemon pods
    leave 3.5 cpu each: one pod per node."""
    ds = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: gpu}\nspec: {selector: {matchLabels: {app: gpu}}, "
          "template: {metadata: {labels: {app: gpu}}, spec: {nodeSelector: {gpu: 'true'}, containers: [{name: c, "
          "image: x, resources: {requests: {cpu: 500m}}}]}}}\n")
    pods = [f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c, image: x, "
            f"resources: {{requests: {{cpu: '3'}}}}}}]}}\n" for i in range(2)]
    template = files(tmp_path, node("gpu", labels=", gpu: 'true'"), name="template.yaml")
    rc, out, err = run_json(capsys, "plan", "-f", files(tmp_path, ds, *pods), "--node-template", template)
    assert rc == 0, err
    assert out["add"] == {"gpu": 2} and out["placement"] == {"gpu-1": 2, "gpu-2": 2}
    daemon = [s["node"] for s in out["simulation"]["steps"] if s["pod"].startswith("gpu-")]
    assert sorted(daemon) == ["gpu-1", "gpu-2"]


# --------------------------------------------------------------------------- defect 5

def test_defect_5_volume_claim_templates_become_claims_read_by_the_volume_plugins(tmp_path, capsys):
    """`getPersistentVolumeClaims` / `updateStorage` (pkg/controller/statefulset/stateful_set_utils.go): pod db-i
    mounts claim data-db-i of class `zonal` (WaitForFirstConsumer, topology zone a only), so VolumeBinding
    admits only nodes of zone a: both pods go to a1 (2 cpu free after one 1-cpu pod... each node has 4 cpu),
    never to b1, although b1 scores alike."""
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("a1"), node("b1", zone="b"), WFFC_ZONE_A,
                                                           stateful_set(2, claims=True)), "--tie-break", "first")
    assert rc == 0, err
    assert steps(out) == [("db-0", "a1", False), ("db-1", "a1", False)]


def test_defect_5_an_existing_claim_of_that_name_is_reused(tmp_path, capsys):
    """A claim data-db-1 already in the scenario (pre-provisioned, bound to a PV whose node affinity is zone b)
    is the one db-1 mounts (the controller creates only missing claims), so db-1 goes to b1."""
    pv = ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-b}\nspec: {capacity: {storage: 1Gi}, "
          "accessModes: [ReadWriteOnce], storageClassName: zonal, claimRef: {namespace: default, name: data-db-1}, "
          "csi: {driver: ebs.csi.aws.com, volumeHandle: vol-b}, nodeAffinity: {required: {nodeSelectorTerms: "
          "[{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [b]}]}]}}}\n"
          "status: {phase: Bound}\n")
    claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data-db-1, annotations: "
             "{pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {accessModes: [ReadWriteOnce], storageClassName: "
             "zonal, volumeName: pv-b, resources: {requests: {storage: 1Gi}}}\nstatus: {phase: Bound}\n")
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("a1"), node("b1", zone="b"), WFFC_ZONE_A,
                                                           pv, claim, stateful_set(2, claims=True)),
                            "--tie-break", "first")
    assert rc == 0, err
    assert steps(out) == [("db-0", "a1", False), ("db-1", "b1", False)]


# --------------------------------------------------------------------------- defect 6

def test_defect_6_plan_reads_the_scenarios_claims_and_plans_from_zero(tmp_path, capsys):
    """A scenario without nodes: a pod mounting a claim bound to a PV of zone b. Every added node is a copy of
    the template (zone b): the planned cluster reads the claim and the PV like `simulate` does (plan lost them:
    `persistentvolumeclaim "data" not found`), and one node places the pod."""
    pv = ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-b}\nspec: {capacity: {storage: 1Gi}, "
          "accessModes: [ReadWriteOnce], claimRef: {namespace: default, name: data}, hostPath: {path: /d}, "
          "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, "
          "operator: In, values: [b]}]}]}}}\nstatus: {phase: Bound}\n")
    claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, annotations: "
             "{pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {accessModes: [ReadWriteOnce], storageClassName: '', "
             "volumeName: pv-b, resources: {requests: {storage: 1Gi}}}\nstatus: {phase: Bound}\n")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: d, persistentVolumeClaim: "
           "{claimName: data}}], containers: [{name: c, image: x}]}\n")
    template = files(tmp_path, node("worker", zone="b"), name="template.yaml")
    rc, out, err = run_json(capsys, "plan", "-f", files(tmp_path, pv, claim, pod), "--node-template", template)
    assert rc == 0, err
    assert out["add"] == {"worker": 1} and out["placement"] == {"worker-1": 1} and out["cannotFit"] == []


def test_defect_6_added_nodes_get_their_own_hostname(tmp_path, capsys):
    """Three replicas that must not share a `kubernetes.io/hostname` (required pod anti-affinity) need three nodes:
    the kubelet labels each node with its own hostname, so copies of a template labelled `hostname: worker`
    are three topology domains, not one (plan placed them on 2 nodes, hostname anti-affinity unseen)."""
    deployment = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: redis}\nspec:\n  replicas: 3\n"
                  "  selector: {matchLabels: {app: redis}}\n  template:\n    metadata: {labels: {app: redis}}\n"
                  "    spec:\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                  "[{labelSelector: {matchLabels: {app: redis}}, topologyKey: kubernetes.io/hostname}]}}\n"
                  "      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n")
    template = files(tmp_path, node("worker"), name="template.yaml")
    rc, out, err = run_json(capsys, "plan", "-f", files(tmp_path, node("existing"), deployment),
                            "--node-template", template)
    assert rc == 0, err
    assert out["add"] == {"worker": 2}  # existing + 2 copies: 3 hostnames
    assert sorted(out["placement"]) == ["existing", "worker-1", "worker-2"]


# --------------------------------------------------------------------------- defect 7

@pytest.mark.parametrize(("policy", "expected"), [
    ("", [("db-0", "n1", False), ("db-1", None, False), ("db-2", None, True)]),
    ("  podManagementPolicy: Parallel\n", [("db-0", "n1", False), ("db-1", None, False), ("db-2", None, False)]),
])
def test_defect_7_ordered_ready_does_not_create_past_a_pending_pod(tmp_path, capsys, policy, expected):
    """One 4-cpu node, three 3-cpu replicas. OrderedReady (the default; stateful_set_control.go, monotonic
    processing) creates db-1 once db-0 runs, and db-2 only once db-1 runs: db-1 stays pending, so db-2 is never
    created — reported as not created, not pending (1 unschedulable). Parallel creates all three: 2 pending."""
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), stateful_set(3, policy=policy,
                                                                                                cpu="3")))
    assert rc == 0, err
    assert steps(out) == expected
    assert out["unschedulable"] == (1 if not policy else 2)
    assert out.get("notCreated", 0) == (1 if not policy else 0)


def test_defect_7_ordered_ready_in_the_timeline(tmp_path, capsys):
    """In time: db-1 is created when db-0 binds (t=0); db-0 runs 10 s and leaves, freeing the node, so db-1
    binds at 10 s and db-2 is created then and binds at 20 s (each replica takes the whole node).

    Each ordinal restarts always, so leaving is its deletion, and `processReplica` recreates it under its name
    (issue #38): the new db-0 (arrived at 10 s, behind db-1 which waited since 0 s) binds at 30 s when db-2
    leaves and runs on; the new db-1 and db-2 wait. `--no-replace-victims`: the three leave for good."""
    sts = stateful_set(3, cpu="3").replace("metadata: {labels: {app: db}}",
                                           "metadata: {labels: {app: db}, annotations: {kubefit.io/duration: 10s}}")
    rc, out, err = run_json(capsys, "simulate", "--timeline", "-f", files(tmp_path, node("n1"), sts))
    assert rc == 0, err
    assert [(p["pod"], p["arrival"], p["start"], p.get("replaces")) for p in out["pods"]] == [
        ("db-0", 0, 0, None), ("db-1", 0, 10, None), ("db-2", 10, 20, None), ("db-0", 10, 30, "default/db-0"),
        ("db-1", 20, None, "default/db-1"), ("db-2", 30, None, "default/db-2")]
    rc, out, err = run_json(capsys, "simulate", "--timeline", "--no-replace-victims", "-f",
                            files(tmp_path, node("n1"), sts))
    assert rc == 0, err
    assert [(p["pod"], p["arrival"], p["start"]) for p in out["pods"]] == [("db-0", 0, 0), ("db-1", 0, 10),
                                                                          ("db-2", 10, 20)]


def test_defect_7_a_pod_never_running_leaves_the_later_ones_not_created_in_the_timeline(tmp_path, capsys):
    """db-0 asks more cpu than the node has: it never binds, so db-1 and db-2 are never created."""
    rc, out, err = run_json(capsys, "simulate", "--timeline", "-f", files(tmp_path, node("n1"), stateful_set(3,
                                                                                                          cpu="5")))
    assert rc == 0, err
    assert [(p["pod"], p["node"], p.get("notCreated", False)) for p in out["pods"]] == [
        ("db-0", None, False), ("db-1", None, True), ("db-2", None, True)]
    assert (out["unschedulable"], out["notCreated"]) == (1, 2)


def test_defect_7_plan_adds_the_nodes_the_later_ordinals_need(tmp_path, capsys):
    """One 3-cpu replica per 4-cpu node: the plan's generous cluster creates and places all three, so the plan adds
    two nodes to the one there and nothing is left not created."""
    template = files(tmp_path, node("worker"), name="template.yaml")
    rc, out, err = run_json(capsys, "plan", "-f", files(tmp_path, node("n1"), stateful_set(3, cpu="3")),
                            "--node-template", template)
    assert rc == 0, err
    assert out["add"] == {"worker": 2} and out["notCreated"] == [] and out["cannotFit"] == []


# --------------------------------------------------------------------------- capacity and operators

def test_capacity_of_one_more_replica_of_a_workload(tmp_path, capsys):
    """`--pod deployment/web`: one more replica of the template, admitted like the controller's pods (its
    `limits: {cpu: 1}` become requests): 4 cpu hold 4 of them. Without --pod the first pending pod that is not a
    DaemonSet's is copied: the DaemonSet's (first in the file, 100m) is skipped for web's."""
    ds = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {selector: {matchLabels: {app: "
          "agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: x, "
          "resources: {requests: {cpu: 100m}}}]}}}\n")
    web = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1, selector: "
           "{matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, "
           "image: x, resources: {limits: {cpu: '1'}}}]}}}\n")
    path = files(tmp_path, node("n1"), ds, web)
    for args in (["--pod", "deployment/web"], ["--pod", "deploy/web"], []):
        rc, out, err = run_json(capsys, "capacity", "-f", path, *args)
        assert rc == 0, err
        assert out["pod"].startswith("default/web-") and out["count"] == 4


def test_capacity_of_one_more_stateful_set_replica_gets_its_claim(tmp_path, capsys):
    """`--pod statefulset/db` with two replicas: the next ordinal, db-2, with its claim data-db-2 of the zonal
    class (zone a only): copies fit on a1 only, 4 of 1 cpu (the pending db-0, db-1 are not counted)."""
    rc, out, err = run_json(capsys, "capacity", "-f", files(tmp_path, node("a1"), node("b1", zone="b"), WFFC_ZONE_A,
                                                           stateful_set(2, claims=True)), "--pod", "sts/db")
    assert rc == 0, err
    assert out["pod"] == "default/db-2"
    assert out["perNode"] == {"a1": 4}  # db-0, db-1 are pending: capacity counts beside the bound pods only


STATIC_CLAIMS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], storageClassName: local, hostPath: {path: /a}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-b}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], storageClassName: local, hostPath: {path: /b}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres, resources: {requests: {cpu: "1"}}}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {storageClassName: local, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_capacity_of_a_stateful_set_creates_each_ordinals_claims(tmp_path, capsys):
    """Each copy of `--pod statefulset/db` is the next ordinal, created after its own claim
    `data-db-<ordinal>` (pkg/controller/statefulset/stateful_pod_control.go `createPersistentVolumeClaims`,
    `getPersistentVolumeClaimName`). Each claim is of an Immediate class without a provisioner: the PV
    controller binds it to an Available volume (`syncUnboundClaim` / `findBestMatchForClaim`) as soon as it is
    created. Two such volumes: data-db-0 and data-db-1 get one each and db-0, db-1 fit; data-db-2 stays
    Pending, so db-2 fails VolumeBinding's PreFilter ("pod has unbound immediate PersistentVolumeClaims").
    Issue #38, defect 4 (the claim was not created: 0 copies)."""
    rc, out, err = run_json(capsys, "capacity", "-f", files(tmp_path, node("n1", cpu="8"), STATIC_CLAIMS), "--pod",
                            "statefulset/db")
    assert rc == 0, err
    assert out["pod"] == "default/db-0" and out["count"] == 2
    assert "pod has unbound immediate PersistentVolumeClaims" in out["message"]


def test_capacity_of_a_stateful_set_with_a_provisioned_claim(tmp_path, capsys):
    """The same StatefulSet with a default class that provisions (Immediate): each ordinal's claim gets the class
    (DefaultStorageClass admission) and a new volume (the PV controller); copies are then bounded by cpu only:
    8 on an 8-cpu node."""
    text = STATIC_CLAIMS.replace("storageClassName: local, accessModes", "accessModes").replace(
        "metadata: {name: local}\nprovisioner: kubernetes.io/no-provisioner",
        "metadata: {name: local, annotations: {storageclass.kubernetes.io/is-default-class: 'true'}}\n"
        "provisioner: example.com/csi")
    rc, out, err = run_json(capsys, "capacity", "-f", files(tmp_path, node("n1", cpu="8"), text), "--pod", "sts/db")
    assert rc == 0, err
    assert out["count"] == 8 and "Insufficient cpu" in out["message"]


LOCAL_PROVISIONER = SHARED_DIR / "real-manifests/realworld4/kubernetes-sigs-sig-storage-local-static-provisioner"


def _local_volumes(per_node: dict[str, int]) -> str:
    """What the local static provisioner's DaemonSet publishes: one `local` PV per disk of each node, of its class
    `local-storage` (kubernetes.io/no-provisioner, WaitForFirstConsumer), pinned to its node by nodeAffinity."""
    docs, i = [], 0
    for name, disks in per_node.items():
        docs.append(node(name, cpu="8", labels=", kubernetes.io/os: linux"))
        for _ in range(disks):
            docs.append(f"apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: local-pv-{i}}}\nspec:\n"
                        f"  capacity: {{storage: 10Gi}}\n  accessModes: [ReadWriteOnce]\n"
                        f"  storageClassName: local-storage\n  local: {{path: /mnt/disks/vol{i}}}\n"
                        f"  nodeAffinity: {{required: {{nodeSelectorTerms: [{{matchExpressions: [{{key: "
                        f"kubernetes.io/hostname, operator: In, values: [{name}]}}]}}]}}}}\n")
            i += 1
    return "---\n".join(docs)


@pytest.mark.parametrize(("disks", "copies", "per_node"), [
    ({"n1": 3, "n2": 2}, 2, None),  # 5 volumes, local-test-0 … -2 take 3: 2 more (the 6th ordinal pending)
    ({"n1": 2, "n2": 0}, 0, {}),  # 2 volumes for 3 ordinals: local-test-2 is pending already
    ({"n1": 4, "n2": 0}, 1, {"n1": 1}),
])
def test_capacity_of_a_stateful_set_on_local_volumes_binds_each_ordinal_a_free_volume(tmp_path, capsys, disks,
                                                                                       copies, per_node):
    """sig-storage-local-static-provisioner's default install (helm/generated_examples/baremetal-default-storage.yaml:
    class local-storage, kubernetes.io/no-provisioner, WaitForFirstConsumer) and its examples/local-statefulset.yaml
    (3 replicas, a 1Gi claim each). A claim of that class binds only an Available local PV (no provisioner creates
    one): VolumeBinding's Reserve (AssumePodVolumes) gives each placed ordinal one, and the next ordinal fits only
    where a free PV is left ("node(s) didn't find available persistent volumes to bind"). kubefit answered 110 copies
    per node (each copy's PV was never assumed); now capacity agrees with simulate, which leaves the ordinal past
    the volumes pending."""
    cluster = files(tmp_path, _local_volumes(disks), name="cluster.yaml")
    install = str(LOCAL_PROVISIONER / "helm/generated_examples/baremetal-default-storage.yaml")
    statefulset = str(LOCAL_PROVISIONER / "examples/local-statefulset.yaml")
    rc, out, err = run_json(capsys, "capacity", "-f", cluster, "-f", install, "-f", statefulset, "--pod",
                            "statefulset/local-test", "--place-pending")
    assert rc == 0, err
    assert out["pod"] == "default/local-test-3" and out["count"] == copies
    assert per_node is None or out["perNode"] == per_node
    assert "didn't find available persistent volumes to bind" in out["message"]
    volumes = sum(disks.values())  # simulate: as many ordinals fit as there are volumes, the next one is pending
    text = (LOCAL_PROVISIONER / "examples/local-statefulset.yaml").read_text().replace("replicas: 3",
                                                                                        f"replicas: {volumes + 1}")
    rc, out, err = run_json(capsys, "simulate", "-f", cluster, "-f", install, "-f",
                            files(tmp_path, text, name="statefulset.yaml"))
    assert rc == 0, err
    placed = [s["pod"] for s in out["steps"] if s["node"] and "local-test" in s["pod"]]
    assert len(placed) == min(volumes, 3 + copies) == volumes


def test_capacity_refuses_a_daemon_set_and_an_unknown_workload(tmp_path, capsys):
    path = files(tmp_path, node("n1"), stateful_set(1))
    rc, _, err = run_json(capsys, "capacity", "-f", path, "--pod", "ds/agent")
    assert rc == 2 and "a DaemonSet runs one pod per matching node" in err
    rc, _, err = run_json(capsys, "capacity", "-f", path, "--pod", "deployment/nope")
    assert rc == 2 and "no Deployment named 'nope' in the scenario (workloads: statefulset/db)" in err


def test_custom_resources_an_operator_turns_into_pods_are_named(tmp_path, capsys):
    """A Prometheus (monitoring.coreos.com) becomes a StatefulSet of pods when prometheus-operator runs; kubefit
    runs no operator, so the warning says those pods are missing (not that the object "places no pod"). A CRD in
    a *.k8s.io group kube-apiserver does not serve (Gateway API) loads as a custom resource."""
    prom = "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: k8s}\nspec: {replicas: 2}\n"
    gateway = ("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\nspec: "
               "{gatewayClassName: x}\n")
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), prom, gateway))
    assert rc == 0, err
    [note] = [w for w in out["warnings"] if "Prometheus/k8s" in w]
    # named with what prometheus-operator creates: a StatefulSet per shard (shards default 1) of spec.replicas pods
    assert note.startswith("Prometheus/k8s (monitoring.coreos.com/v1: 2 Prometheus pods per shard (spec.replicas)): "
                           "an operator turns these custom resources into pods")
    assert any(w.startswith("skipped 1 object(s) that place no pod: Gateway (1)") for w in out["warnings"])


# --------------------------------------------------------------------------- the PV controller

PV = """apiVersion: v1
kind: PersistentVolume
metadata: {{name: {name}}}
spec: {{capacity: {{storage: {size}}}, accessModes: [ReadWriteOnce], storageClassName: {cls}, hostPath: {{path: /d}},
  nodeAffinity: {{required: {{nodeSelectorTerms: [{{matchExpressions: [{{key: kubernetes.io/hostname, operator: In,
  values: [{host}]}}]}}]}}}}{extra}}}
"""


def claim(name: str = "data", cls: str = "local", size: str = "1Gi", extra: str = "", meta: str = "") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}{meta}}}\nspec: {{accessModes: "
            f"[ReadWriteOnce], storageClassName: {cls}, resources: {{requests: {{storage: {size}}}}}{extra}}}\n")


POD_WITH_CLAIM = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: d, persistentVolumeClaim: "
                  "{claimName: data}}], containers: [{name: c, image: x}]}\n")
NO_PROVISIONER = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: local}}\n"
                  "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: {mode}\n")


def placement(capsys, path: str) -> dict:
    rc, out, err = run_json(capsys, "simulate", "-f", path)
    assert rc == 0, err
    return out["placement"]


def test_an_immediate_claim_is_bound_to_the_smallest_fitting_volume(tmp_path, capsys):
    """`findBestMatchForClaim` (pv_controller.go, index.go): of the Available volumes of the claim's class
    that hold its 1Gi, the smallest: pv-n2 (2Gi) over pv-n1 (5Gi); pv-n3 (500Mi) is too small. The pod
    then follows that volume's node affinity to n2."""
    path = files(tmp_path, node("n1"), node("n2"), node("n3"), NO_PROVISIONER.format(mode="Immediate"),
                 PV.format(name="pv-n1", size="5Gi", cls="local", host="n1", extra=""),
                 PV.format(name="pv-n2", size="2Gi", cls="local", host="n2", extra=""),
                 PV.format(name="pv-n3", size="500Mi", cls="local", host="n3", extra=""), claim(), POD_WITH_CLAIM)
    assert placement(capsys, path) == {"n2": 1}


def test_a_pre_bound_claim_is_bound_to_its_volume(tmp_path, capsys):
    """A claim naming its volume (`spec.volumeName`) is bound to it by the PV controller (the
    `pv.kubernetes.io/bind-completed` annotation kube-scheduler's VolumeBinding requires), even though a
    smaller volume of the class would fit: the pod goes to that volume's node, n1."""
    path = files(tmp_path, node("n1"), node("n2"), NO_PROVISIONER.format(mode="Immediate"),
                 PV.format(name="pv-n1", size="5Gi", cls="local", host="n1", extra=""),
                 PV.format(name="pv-n2", size="1Gi", cls="local", host="n2", extra=""),
                 claim(extra=", volumeName: pv-n1"), POD_WITH_CLAIM)
    assert placement(capsys, path) == {"n1": 1}


def test_without_a_volume_or_provisioner_an_immediate_claim_stays_unbound(tmp_path, capsys):
    """`kubernetes.io/no-provisioner` provisions nothing: with no volume of the class, the claim stays unbound and
    the pod pending on VolumeBinding's "pod has unbound immediate PersistentVolumeClaims"."""
    path = files(tmp_path, node("n1"), NO_PROVISIONER.format(mode="Immediate"), claim(), POD_WITH_CLAIM)
    rc, out, err = run_json(capsys, "simulate", "-f", path)
    assert rc == 0, err
    assert "pod has unbound immediate PersistentVolumeClaims" in out["steps"][0]["message"]


def test_a_wait_for_first_consumer_claim_is_left_to_the_scheduler(tmp_path, capsys):
    """WaitForFirstConsumer: the PV controller does not bind; VolumeBinding matches the pod's node to an Available
    volume: only n2 has one that fits (pv-n1 is too small), so the pod goes to n2. (A volume written without
    status is Available once created.)"""
    path = files(tmp_path, node("n1"), node("n2"), NO_PROVISIONER.format(mode="WaitForFirstConsumer"),
                 PV.format(name="pv-n1", size="500Mi", cls="local", host="n1", extra=""),
                 PV.format(name="pv-n2", size="2Gi", cls="local", host="n2", extra=""), claim(), POD_WITH_CLAIM)
    assert placement(capsys, path) == {"n2": 1}


def test_a_stored_unbound_claim_is_left_as_it_is(tmp_path, capsys):
    """A claim with `metadata.uid` was stored, and is still unbound in the cluster it came from: kubefit does not
    bind it in the PV controller's stead; the pod stays pending on it."""
    path = files(tmp_path, node("n1"), NO_PROVISIONER.format(mode="Immediate"),
                 PV.format(name="pv-n1", size="5Gi", cls="local", host="n1", extra=""),
                 claim(meta=", uid: 3f2a"), POD_WITH_CLAIM)
    rc, out, err = run_json(capsys, "simulate", "-f", path)
    assert rc == 0, err
    assert "pod has unbound immediate PersistentVolumeClaims" in out["steps"][0]["message"]


def test_a_replica_made_later_is_admitted_with_its_priority(tmp_path):
    """One more replica of a Deployment whose template names PriorityClass `high` (value 1000) goes through the
    Priority admission like the controller's own pods: `spec.priority` 1000."""
    from kubefit.manifests.scenario import load_scenario
    from kubefit.verbs import find_pod

    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    web = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1, selector: "
           "{matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {priorityClassName: high, "
           "containers: [{name: c, image: x}]}}}\n")
    scenario = load_scenario([files(tmp_path, node("n1"), pc, web)])
    assert [p.priority for p in scenario.pods] == [1000]
    assert find_pod(scenario, "deployment/web").priority == 1000


CSI_DRIVER = """\
apiVersion: csi.ceph.io/v1alpha1
kind: Driver
metadata: {name: rbd.csi.ceph.com, namespace: rook-ceph}
spec: {log: {verbosity: 1}}
"""
SHAPED = """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {server: {replicas: 2, image: x}}
"""
PLAIN = """\
apiVersion: example.com/v1
kind: Setting
metadata: {name: s}
spec: {color: blue}
"""


def test_operator_resources_that_make_pods_are_named_as_such(tmp_path, capsys):
    """A ceph-csi-operator `Driver` becomes a Deployment and a DaemonSet (github.com/ceph/ceph-csi-operator
    internal/controller/driver_controller.go): named with the operators' warning (`operators.OPERATORS`), as is
    an unknown custom resource whose spec looks like a workload (`spec.server.replicas`), in `-o json` warnings
    too; a custom resource of no such shape is among the objects that place no pod. Issue #38, defect 6."""
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), CSI_DRIVER, SHAPED, PLAIN))
    assert rc == 0, err
    note = next(w for w in out["warnings"] if "an operator turns these custom resources into pods" in w)
    assert "Driver/rbd.csi.ceph.com (csi.ceph.io/v1alpha1)" in note
    assert "Widget/w (example.com/v1; its spec.server.replicas looks like a workload's)" in note
    skipped = next(w for w in out["warnings"] if "place no pod" in w)
    assert "Setting (1)" in skipped and "Driver" not in skipped and "Widget" not in skipped
