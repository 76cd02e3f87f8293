"""Defects found by simulating real public install manifests (benchmarks/real-installs.md lists them): one
regression test each, from a small manifest of its own, the outcome derived in its docstring from the
Kubernetes source that decides it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests_support import run_json

NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}
"""


def node(name: str, cpu: str = "4") -> str:
    return NODE.format(name=name, cpu=cpu)


def files(tmp_path: Path, *docs: str, name: str = "scenario.yaml") -> str:
    path = tmp_path / name
    path.write_text("---\n".join(docs))
    return str(path)


def deployment(name: str, replicas: int = 1, pod_spec: str = "", cpu: str = "1") -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: {replicas}\n"
            f"  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n"
            f"    spec:\n{pod_spec}      containers: [{{name: c, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


# --------------------------------------------------------------------------- Priority admission

PRIORITY_CLASS = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n"
BATCH_ON_N1 = ("apiVersion: v1\nkind: Pod\nmetadata: {name: batch}\nspec: {nodeName: n1, containers: [{name: c, "
               "image: x, resources: {requests: {cpu: '1'}}}]}\n")


def test_a_non_preempting_priority_class_makes_its_pods_non_preempting(tmp_path, capsys):
    """`admitPod` sets `spec.preemptionPolicy` from the pod's PriorityClass (its `preemptionPolicy`, defaulted
    to PreemptLowerPriority). n1 (1 cpu) runs `batch` (priority 0, 1 cpu); web (class high: 1000) needs 1 cpu.
    With `preemptionPolicy: Never` DefaultPreemption's PodEligibleToPreemptOthers refuses: web stays pending
    ("not eligible due to preemptionPolicy=Never") and batch keeps running; without it web preempts batch.
    (kubefit gave the pod the class's value only: web preempted batch in both cases.)"""
    pod_spec = "      priorityClassName: high\n"
    never = PRIORITY_CLASS.format(name="high", value=1000) + "preemptionPolicy: Never\n"
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1", "1"), BATCH_ON_N1, never,
                                                           deployment("web", pod_spec=pod_spec)))
    assert rc == 0, err
    assert [s.get("victims") for s in out["steps"]] == [None]
    assert out["steps"][0]["message"].endswith("preemption: not eligible due to preemptionPolicy=Never.")
    preempting = PRIORITY_CLASS.format(name="high", value=1000)
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1", "1"), BATCH_ON_N1, preempting,
                                                           deployment("web", pod_spec=pod_spec)))
    assert rc == 0, err
    assert out["steps"][0]["victims"] == ["default/batch"] and out["placement"] == {"n1": 1}


def test_a_pods_preemption_policy_other_than_its_classs_is_forbidden(tmp_path, capsys):
    """`admitPod`: a pod created with a `spec.preemptionPolicy` other than the one computed from its class (no
    class and no global default: PreemptLowerPriority) is forbidden with the plugin's message; a Pod document
    is refused (exit 2), a workload's controller creates none of its pods (a note, exit 0)."""
    never = "      preemptionPolicy: Never\n"
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {preemptionPolicy: Never, containers: "
           "[{name: c, image: x}]}\n")
    rc, _out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), pod))
    assert rc == 2 and err.count("error:") == 1
    assert ('Pod/p: spec.preemptionPolicy: pods "p" is forbidden: the string value of PreemptionPolicy (Never) '
            'must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from '
            'the given PriorityClass name') in err, err
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), deployment("web", 2, never)))
    assert rc == 0 and out["steps"] == [], err
    assert "Deployment/web: its controller cannot create 2 pod(s): pods \"web-" in err
    assert "is forbidden: the string value of PreemptionPolicy (Never) must not be provided" in err


def test_a_workload_naming_a_missing_priority_class_is_stored_and_creates_no_pod(tmp_path, capsys):
    """The API server stores a Deployment whatever class its template names (the Priority admission judges pods,
    `admitPod`, not templates); the ReplicaSet controller's creates are then forbidden ("no PriorityClass with
    name urgent was found"), so no pod exists. kubefit refused the whole input (exit 2), as for a Pod."""
    web = deployment("web", 2, "      priorityClassName: urgent\n")
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), web))
    assert rc == 0, err
    assert out["steps"] == [] and out["scheduled"] == 0
    lines = [w for w in out["warnings"] if w.startswith("Deployment/web")]
    assert len(lines) == 1 and lines[0].startswith("Deployment/web: its controller cannot create 2 pod(s): pods "
                                                   '"web-')
    assert lines[0].endswith('-" is forbidden: no PriorityClass with name urgent was found')


def test_a_priority_class_with_an_unknown_preemption_policy_is_refused(tmp_path, capsys):
    """`ValidatePriorityClass` → `ValidatePreemptionPolicy`: only PreemptLowerPriority and Never
    (field.NotSupported, values in that order)."""
    bad = PRIORITY_CLASS.format(name="high", value=10) + "preemptionPolicy: Sometimes\n"
    rc, _out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), bad))
    assert rc == 2 and err.count("error:") == 1
    assert ('PriorityClass/high: preemptionPolicy: Unsupported value: "Sometimes": supported '
            'values: "PreemptLowerPriority", "Never"') in err, err


# --------------------------------------------------------------------------- what kubefit cannot see, named

def test_an_operator_installation_and_a_kustomization_are_named_not_skipped(tmp_path, capsys):
    """tigera-operator's `Installation` (operator.tigera.io) becomes calico-node on every node, typha and
    kube-controllers: its pods will exist, so it is named in the operator warning, not among objects that
    "place no pod" (where Calico's install put it). A `kustomization.yaml` read with its folder is kustomize's
    build file, which `kubectl apply -f` refuses: named with what it would have changed. A PriorityClass is
    read (it gives pods their priority), so it is not "skipped"."""
    installation = ("apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\n"
                    "spec: {calicoNetwork: {}}\n")
    kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: calico\n"
    folder = tmp_path / "install"
    folder.mkdir()
    files(folder, node("n1"), installation, PRIORITY_CLASS.format(name="high", value=10),
          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", name="install.yaml")
    files(folder, kustomization, name="kustomization.yaml")
    rc, out, err = run_json(capsys, "simulate", "-f", str(folder))
    assert rc == 0, err
    warnings = out["warnings"]
    assert any(w.startswith("Installation/default (operator.tigera.io/v1): an operator turns these custom "
                            "resources into pods") for w in warnings), warnings
    assert any(w.startswith(f"{folder / 'kustomization.yaml'}: a Kustomization is kustomize's build file")
               and "`kubectl kustomize DIR | kubefit ... -f -`" in w for w in warnings), warnings
    assert [w for w in warnings if w.startswith("skipped")] == ["skipped 1 object(s) that place no pod: "
                                                                "ConfigMap (1)"]


# --------------------------------------------------------------------------- defaulting

HOST_NETWORK = """apiVersion: apps/v1
kind: {kind}
metadata: {{name: {name}}}
spec:
  {replicas}selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      hostNetwork: {host_network}
      containers: [{{name: c, image: x, ports: [{{containerPort: 9100}}]}}]
"""


def test_host_network_ports_are_host_ports(tmp_path, capsys):
    """`SetDefaults_Pod` (pkg/apis/core/v1/defaults.go, `defaultHostNetworkPorts`): with `hostNetwork` a port
    without `hostPort` is stored with hostPort = containerPort, which NodePorts reads. A DaemonSet exporter on
    9100 runs on both nodes; a host-network Deployment pod on 9100 then finds no node with that port free and
    stays pending. Without hostNetwork the port is the pod's own and the Deployment pod fits. (kubefit
    placed it beside the exporter in both cases.)"""
    exporter = HOST_NETWORK.format(kind="DaemonSet", name="exporter", replicas="", host_network="true")
    for host_network, free in (("true", False), ("false", True)):
        web = HOST_NETWORK.format(kind="Deployment", name="web", replicas="replicas: 1\n  ",
                                  host_network=host_network)
        rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), node("n2"), exporter, web))
        assert rc == 0, err
        web_step = [s for s in out["steps"] if s["pod"].startswith("web-")]
        assert (web_step[0]["node"] is not None) is free, web_step
        if not free:
            assert "2 node(s) didn't have free ports for the requested pod ports" in web_step[0]["message"]
            assert any(w.startswith("admission: hostNetwork ports:") and "hostPort 9100 for container c" in w
                       for w in out["warnings"]), out["warnings"]


# --------------------------------------------------------------------------- the PV controller and DefaultStorageClass

def volume(name: str, host: str, size: str = "1Gi", cls: str = "", modes: str = "[ReadWriteOnce]",
           extra: str = "") -> str:
    cls_field = f"storageClassName: {cls}, " if cls else ""
    return (f"apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {name}}}\nspec: {{{cls_field}capacity: "
            f"{{storage: {size}}}, accessModes: {modes}, hostPath: {{path: /d}}, nodeAffinity: {{required: "
            f"{{nodeSelectorTerms: [{{matchExpressions: [{{key: kubernetes.io/hostname, operator: In, values: "
            f"[{host}]}}]}}]}}}}{extra}}}\n")


def claim(cls: str = "", extra: str = "", size: str = "1Gi") -> str:
    cls_field = f"storageClassName: {cls}, " if cls else ""
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: data}}\nspec: {{{cls_field}accessModes: "
            f"[ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}{extra}}}\n")


MOUNTS_DATA = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: d, persistentVolumeClaim: "
               "{claimName: data}}], containers: [{name: c, image: x}]}\n")
DEFAULT_CLASS = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: standard, annotations: "
                 "{storageclass.kubernetes.io/is-default-class: 'true'}}\nprovisioner: rancher.io/local-path\n"
                 "volumeBindingMode: WaitForFirstConsumer\n")


def simulated(capsys, tmp_path: Path, *docs: str) -> dict:
    """`simulate -o json` of the documents, ties broken by node order (never by luck)."""
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, *docs), "--tie-break", "first")
    assert rc == 0, err
    return out


def test_a_claim_naming_a_volume_of_no_class_gets_the_default_class_and_stays_pending(tmp_path, capsys):
    """kubernetes/examples AI/model-serving-tensorflow: a PV of no class and a claim naming it (`volumeName`)
    without `storageClassName`. On a cluster with a default class (kind's `standard`) the DefaultStorageClass
    admission gives the claim that class (setdefault/admission.go `Admit` reads only the class); the PV
    controller's `syncUnboundClaim` then finds the named volume unclaimed and `checkVolumeSatisfyClaim` refuses
    it ("storageClassName does not match"): the claim stays Pending and the pod on VolumeBinding's "pod has
    unbound immediate PersistentVolumeClaims" (a claim with volumeName is never delayed). Without a default
    class the classes are both "" and the claim is bound: the pod follows the volume to n2. (kubefit left such
    claims without the default class and bound them in both cases.)"""
    docs = (node("n1"), node("n2"), volume("model", "n2"), claim(extra=", volumeName: model"), MOUNTS_DATA)
    out = simulated(capsys, tmp_path, DEFAULT_CLASS, *docs)
    assert out["steps"][0]["node"] is None
    assert "pod has unbound immediate PersistentVolumeClaims" in out["steps"][0]["message"]
    assert ('PV controller: claim(s) default/data stay Pending: Cannot bind to requested volume "model": '
            'storageClassName does not match') in out["warnings"]
    assert simulated(capsys, tmp_path, *docs)["placement"] == {"n2": 1}


ZONED_NODE = ("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, "
              "topology.kubernetes.io/zone: {zone}}}}}\nstatus: {{allocatable: {{cpu: '4', memory: 8Gi, pods: '110'}}}}\n")


def immediate_class(zones: str) -> str:
    return ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: zonal}\nprovisioner: "
            "ebs.csi.aws.com\nvolumeBindingMode: Immediate\nallowedTopologies: [{matchLabelExpressions: "
            f"[{{key: topology.kubernetes.io/zone, values: {zones}}}]}}]\n")


def test_an_immediate_claim_is_provisioned_in_the_one_topology_its_class_allows(tmp_path, capsys):
    """An `Immediate` class whose `allowedTopologies` name one zone (b): the external-provisioner's
    `GenerateAccessibilityRequirements` makes zone b the only requisite topology, so the volume is created in
    b and its nodeAffinity requires zone b; VolumeBinding (`FindPodVolumes`, a bound claim's volume must match
    the node) then keeps the pod off n1 (zone a, first under `--tie-break first`): it goes to n2. With zones
    [a, b] the provisioner chooses, kubefit cannot know: the volume is taken as reachable from every node (the
    note says so) and the pod goes to n1. (kubefit took every provisioned volume as reachable everywhere.)"""
    nodes = (ZONED_NODE.format(name="n1", zone="a"), ZONED_NODE.format(name="n2", zone="b"))
    out = simulated(capsys, tmp_path, *nodes, immediate_class("[b]"), claim("zonal"), MOUNTS_DATA)
    assert out["placement"] == {"n2": 1}
    assert ("PV controller: claim(s) default/data of an Immediate class provisioned and bound as soon as created, "
            "each volume in the one topology its class's allowedTopologies allow") in out["warnings"]
    out = simulated(capsys, tmp_path, *nodes, immediate_class("[a, b]"), claim("zonal"), MOUNTS_DATA)
    assert out["placement"] == {"n1": 1}
    assert any("a zonal provisioner picks a zone kubefit cannot know" in w for w in out["warnings"])


def test_a_claim_of_a_class_that_is_no_storage_class_binds_to_a_volume_of_that_class(tmp_path, capsys):
    """The Kubernetes docs' "Configure a Pod to Use a PersistentVolume" task: PV and claim of class `manual`,
    which names no StorageClass object. `IsDelayBindingMode` takes a class that does not exist as not delayed,
    so the PV controller's `findBestMatchForClaim` binds the claim to the smallest Available volume of that
    class that holds it: manual-2 (2Gi; manual-5 is 5Gi, other-1 is of another class), on n2, where the pod
    goes. (kubefit bound only claims whose class existed: the pod stayed pending.)"""
    out = simulated(capsys, tmp_path, node("n1"), node("n2"), node("n3"), volume("manual-5", "n1", "5Gi", "manual"),
                    volume("manual-2", "n2", "2Gi", "manual"), volume("other-1", "n3", "1Gi", "other"),
                    claim("manual"), MOUNTS_DATA)
    assert out["placement"] == {"n2": 1}


def test_a_volume_pre_bound_to_a_claim_wins_whatever_its_class(tmp_path, capsys):
    """A PV whose `claimRef` names the claim (no uid) is matched first by `FindMatchingVolume`
    (`IsVolumeBoundToClaim` comes before the class check), even though the DefaultStorageClass admission gave
    the claim the class `standard` and the PV has none; and even though `standard` is WaitForFirstConsumer (a
    pre-bound volume is bound by the PV controller). The pod follows the volume to n2, and nothing is
    provisioned. (kubefit skipped the volume for its class and left the claim to the scheduler.)"""
    pre_bound = volume("reserved", "n2", extra=", claimRef: {namespace: default, name: data}")
    out = simulated(capsys, tmp_path, node("n1"), node("n2"), DEFAULT_CLASS, pre_bound, claim(), MOUNTS_DATA)
    assert out["placement"] == {"n2": 1}
    assert not any("provisioned" in w for w in out["warnings"]), out["warnings"]


def test_the_pv_controller_searches_the_fewest_access_modes_first(tmp_path, capsys):
    """`findByClaim` (pkg/controller/volume/persistentvolume/index.go): volumes are indexed by their access-mode
    set; the sets holding the claim's ReadWriteOnce are searched fewest modes first
    (`allPossibleMatchingAccessModes`), and the first set with a match decides. rwo-5 (ReadWriteOnce, 5Gi, n2)
    is chosen over the smaller both-1 (ReadWriteOnce+ReadOnlyMany, 1Gi, n1): the pod goes to n2. (kubefit took
    the smallest volume of all sets, both-1.)"""
    cls = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
           "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: Immediate\n")
    out = simulated(capsys, tmp_path, node("n1"), node("n2"), cls,
                    volume("both-1", "n1", "1Gi", "local", "[ReadWriteOnce, ReadOnlyMany]"),
                    volume("rwo-5", "n2", "5Gi", "local"), claim("local"), MOUNTS_DATA)
    assert out["placement"] == {"n2": 1}


def test_a_claim_of_no_class_without_a_default_class_is_named_pending(tmp_path, capsys):
    """WordPress's claims (kubernetes/website) on a scenario without a StorageClass: no volume of class "", no
    class to provision with, so `syncUnboundClaim` leaves the claim Pending with its event "no persistent
    volumes available for this claim and no storage class is set"; one note names the claims and says why."""
    second = claim().replace("name: data", "name: logs")
    out = simulated(capsys, tmp_path, node("n1"), claim(), second, MOUNTS_DATA)
    assert out["steps"][0]["node"] is None
    assert [w for w in out["warnings"] if w.startswith("PV controller")] == [
        "PV controller: claim(s) default/data, default/logs stay Pending: no persistent volumes available for this "
        "claim and no storage class is set (the scenario has no StorageClass: give the cluster's default one)"]


# --------------------------------------------------------------------------- nodes written without the kubelet's labels

def test_nodes_without_the_kubelets_os_label_are_named_when_pods_select_on_it(tmp_path, capsys):
    """ingress-nginx, Argo CD, cert-manager, metrics-server... select `kubernetes.io/os: linux`, a label every
    kubelet sets (`initialNode`, pkg/kubelet/kubelet_node_status.go). Node documents written without it make
    NodeAffinity fail everywhere — the answer for those documents, kept — and a warning says why, for the
    scenario's nodes (simulate) and for plan's templates. With the label the pod is placed and nothing is
    said."""
    web = deployment("web", pod_spec="      nodeSelector: {kubernetes.io/os: linux}\n")
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), web))
    assert rc == 0 and out["scheduled"] == 0, err
    note = [w for w in out["warnings"] if "kubelet" in w]
    assert note == ["the scenario's nodes have no kubernetes.io/os label, which every kubelet sets on its node: pods "
                    "selecting on it (Deployment/web) fit none of them; add the labels the cluster's nodes carry "
                    "(e.g. kubernetes.io/os: linux, kubernetes.io/arch: amd64) to the Node documents"]
    template = files(tmp_path, node("big", "8"), name="template.yaml")
    rc, out, err = run_json(capsys, "plan", "-f", files(tmp_path, web), "--node-template", template)
    assert rc != 2, err
    assert any(w.startswith("the node templates have no kubernetes.io/os label") for w in out["warnings"]), out
    labelled = node("n1").replace("kubernetes.io/hostname: n1", "kubernetes.io/hostname: n1, kubernetes.io/os: linux")
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, labelled, web))
    assert out["placement"] == {"n1": 1} and not any("kubelet" in w for w in out["warnings"]), out


# --------------------------------------------------------------------------- admission kubefit does not run, named

def test_admission_kubefit_does_not_run_is_named(tmp_path, capsys):
    """A namespace labelled `pod-security.kubernetes.io/enforce: restricted` has the PodSecurity admission
    (enabled by default in kube-apiserver) forbid pods that break the level; a MutatingWebhookConfiguration
    (Istio's, Linkerd's injectors) changes pods, a ValidatingWebhookConfiguration may refuse them. kubefit runs
    none of them: the first gets a note of its own, the webhooks are named among what can still change where
    or whether pods run, in the one note of skipped objects."""
    namespace = ("apiVersion: v1\nkind: Namespace\nmetadata: {name: secure, labels: "
                 "{pod-security.kubernetes.io/enforce: restricted}}\n")
    web = deployment("web").replace("metadata: {name: web}", "metadata: {name: web, namespace: secure}")
    webhook = ("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
               "metadata: {name: injector}\nwebhooks: []\n")
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), namespace, web, webhook))
    assert rc == 0 and out["placement"] == {"n1": 1}, err
    assert ("PodSecurity admission: namespace(s) secure (restricted) enforce a Pod Security Standard: the API "
            "server forbids pods that break it, and kubefit does not check them (a forbidden pod would not "
            "exist)") in out["warnings"]
    assert ("skipped 1 object(s) that place no pod: MutatingWebhookConfiguration (1); in a real cluster "
            "MutatingWebhookConfiguration can still change where or whether pods run, kubefit does not evaluate "
            "them") in out["warnings"]


# --------------------------------------------------------------------------- capacity of an install's workload

def test_capacity_counts_beside_an_installs_own_pods_with_place_pending(tmp_path, capsys):
    """Two 2-cpu nodes and an install whose Deployment wants 3 replicas of 1 cpu. As cluster-capacity counts
    (nothing bound yet), 4 more replicas fit (2 per node), and a warning says the 3 pending pods were not placed
    first; with --place-pending the 3 are scheduled first (3 of the 4 cpu) and 1 more replica fits."""
    path = files(tmp_path, node("n1", "2"), node("n2", "2"), deployment("web", 3))
    rc, out, err = run_json(capsys, "capacity", "-f", path, "--pod", "deployment/web")
    assert rc == 0 and out["count"] == 4, err
    assert any(w.startswith("the scenario's 3 other pending pod(s) are not placed first") for w in out["warnings"])
    rc, out, err = run_json(capsys, "capacity", "-f", path, "--pod", "deployment/web", "--place-pending")
    assert rc == 0 and out["count"] == 1, err
    assert ("the scenario's pending pods placed first, as simulate places them: 3 of 3 scheduled; the copies are "
            "counted beside them") in out["warnings"]
    assert out["inputs"]["options"]["placePending"] is True


def test_nodes_without_a_pods_allocatable_are_named(tmp_path, capsys):
    """A kubelet always reports `pods` in `status.allocatable` (its --max-pods, 110 by default); a Node document
    written without it holds no pod (NodeResourcesFit's "Too many pods": allowed pods 0), which kubefit keeps
    and names in one warning for all such nodes."""
    bare = ("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus: {{allocatable: {{cpu: '4', "
            "memory: 8Gi}}}}\n")
    path = files(tmp_path, *(bare.format(name=f"n{i}") for i in range(1, 5)), deployment("web"))
    rc, out, err = run_json(capsys, "simulate", "-f", path)
    assert rc == 0 and "1 Too many pods" not in out["steps"][0]["message"], err
    assert "4 Too many pods" in out["steps"][0]["message"]
    assert ('4 of the scenario\'s nodes (n1, n2, n3 and 1 more) have no pods in status.allocatable, which every '
            'kubelet reports (its --max-pods, 110 by default): no pod fits them (Too many pods); add pods: "110"'
            ) in out["warnings"]


# --------------------------------------------------------------------------- one note per kind of thing

def test_daemon_sets_creating_no_pod_are_named_in_one_note(tmp_path, capsys):
    """An install's DaemonSets planned from zero (no Node objects: each creates no pod until a node joins), or
    GPU DaemonSets on a cluster without GPU nodes (their nodeSelector matches no node): one note per reason
    naming them all, not one line per DaemonSet."""
    def daemon_set(name: str, selector: str = "") -> str:
        return (f"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: {name}}}\nspec: {{selector: {{matchLabels: "
                f"{{app: {name}}}}}, template: {{metadata: {{labels: {{app: {name}}}}}, spec: {{{selector}"
                f"containers: [{{name: c, image: x}}]}}}}}}\n")
    gpu = [daemon_set(f"gpu-{i}", "nodeSelector: {gpu: 'true'}, ") for i in range(5)]
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), *gpu))
    assert rc == 0 and out["steps"] == [], err
    assert [w for w in out["warnings"] if "DaemonSet" in w] == [
        "DaemonSet/gpu-0, DaemonSet/gpu-1, DaemonSet/gpu-2, DaemonSet/gpu-3 and 1 more: spec.template.spec.nodeSelector "
        "matches no node of the scenario; these 5 DaemonSets create no pod (and one on each matching node that joins)"]
    template = files(tmp_path, node("worker"), name="template.yaml")
    rc, out, err = run_json(capsys, "plan", "-f", files(tmp_path, daemon_set("a"), daemon_set("b"), deployment("web")),
                            "--node-template", template)
    assert rc == 0 and out["add"] == {"worker": 1}, err
    assert [w for w in out["warnings"] if "DaemonSet" in w] == [
        "DaemonSet/a, DaemonSet/b: the scenario has no Node objects; these 2 DaemonSets create no pod (and one on each "
        "node that joins)"]


# --------------------------------------------------------------------------- the HorizontalPodAutoscaler's bounds

def hpa(target_kind: str, name: str, low: int | None, high: int) -> str:
    low_field = f"minReplicas: {low}, " if low is not None else ""
    return (f"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {name}}}\nspec: {{"
            f"scaleTargetRef: {{apiVersion: apps/v1, kind: {target_kind}, name: {name}}}, {low_field}"
            f"maxReplicas: {high}}}\n")


def test_an_hpa_scales_its_target_into_its_bounds_at_once(tmp_path, capsys):
    """`reconcileAutoscaler` (pkg/controller/podautoscaler/horizontal.go) scales a target below `minReplicas` up
    to it and one above `maxReplicas` down to it before reading any metric; a target of 0 replicas is left
    alone. A Helm chart with autoscaling renders its Deployment without `replicas` (1) beside an HPA of
    `minReplicas: 3`: 3 pods run (kubefit made 1). A StatefulSet of 6 under `maxReplicas: 4` keeps db-0..db-3;
    a Deployment of 0 replicas stays at 0."""
    db = ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {replicas: 6, serviceName: db, "
          "podManagementPolicy: Parallel, selector: {matchLabels: {app: db}}, template: {metadata: {labels: "
          "{app: db}}, spec: {containers: [{name: c, image: x}]}}}\n")
    web = deployment("web").replace("  replicas: 1\n", "")
    idle = deployment("idle", 0)
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1", "8"), web, hpa("Deployment", "web", 3, 10),
                                                           db, hpa("StatefulSet", "db", None, 4), idle,
                                                           hpa("Deployment", "idle", 2, 5)))
    assert rc == 0, err
    pods = [s["pod"] for s in out["steps"]]
    assert sum(p.startswith("web-") for p in pods) == 3 and not any(p.startswith("idle-") for p in pods)
    assert [p for p in pods if p.startswith("db-")] == ["db-0", "db-1", "db-2", "db-3"]
    assert ("HorizontalPodAutoscaler controller: replicas scaled into [minReplicas, maxReplicas] at once, before any "
            "metric is read: Deployment/web 1 → 3 (HorizontalPodAutoscaler/web), StatefulSet/db 6 → 4 "
            "(HorizontalPodAutoscaler/db)") in out["warnings"]


def test_an_hpa_the_api_server_refuses_is_refused(tmp_path, capsys):
    """`validateHorizontalPodAutoscalerSpec`: minReplicas at least 1 (no HPAScaleToZero), maxReplicas above 0 and
    not below minReplicas, scaleTargetRef's kind and name required — the API server's messages, exit 2."""
    rc, _out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), deployment("web"),
                                                            hpa("Deployment", "web", 5, 2)))
    assert rc == 2 and err.count("error:") == 1
    assert "HorizontalPodAutoscaler/web: spec.maxReplicas: Invalid value: 2: must be greater than or equal to " \
           "`minReplicas`" in err, err


# the External metric of kubernetes.io's HPA walkthrough ("Autoscaling on metrics not related to Kubernetes objects")
EXTERNAL_METRIC = ("  metrics:\n  - type: External\n    external:\n      metric: {name: queue_messages_ready, selector: "
                   "{matchLabels: {queue: worker_tasks}}}\n      target: {type: AverageValue, averageValue: '30'}\n")
SCALE_TO_ZERO = ("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n"
                 "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 0\n"
                 "  maxReplicas: 10\n")
MIN_ONE = "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"
NO_OBJECT_METRIC = ("spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling "
                    "to zero replicas")


@pytest.mark.parametrize(("version", "gates", "metrics", "refused"), [
    ("1.37", None, EXTERNAL_METRIC, None),  # HPAScaleToZero beta, on (kubernetes#139648)
    ("1.37", None, EXTERNAL_METRIC.replace("External", "Object").replace("external", "object"), None),
    ("1.37", None, "", [NO_OBJECT_METRIC]),  # validateMetrics: a scale to zero needs an Object or External metric
    ("1.37", "HPAScaleToZero=false", EXTERNAL_METRIC, [MIN_ONE]),
    ("1.36", None, EXTERNAL_METRIC, [MIN_ONE]),  # alpha, off: MinReplicasLowerBound 1
    ("1.36", None, "", [MIN_ONE, NO_OBJECT_METRIC]),
    ("1.36", "HPAScaleToZero=true", EXTERNAL_METRIC, None),
    ("1.34", None, EXTERNAL_METRIC, [MIN_ONE]),
])
def test_an_hpa_scaling_to_zero_is_valid_where_hpa_scale_to_zero_is_on(tmp_path, capsys, version, gates, metrics,
                                                                       refused):
    """The registry strategy validates `minReplicas` against 0 while HPAScaleToZero is on, 1 otherwise, and
    `validateMetrics` forbids 0 without an Object or External metric; kube-apiserver's messages (aggregated as
    `[a, b]` when both apply). A valid HPA of minReplicas 0 leaves its target's 2 replicas as they are."""
    args = ["--kube-version", version] + (["--feature-gates", gates] if gates else [])
    rc, out, err = run_json(capsys, "simulate", "-f", files(tmp_path, node("n1"), deployment("web", 2),
                                                           SCALE_TO_ZERO + metrics), *args)
    if refused is None:
        assert rc == 0, err
        assert len(out["steps"]) == 2
    else:
        assert rc == 2
        expected = refused[0] if len(refused) == 1 else "[" + ", ".join(refused) + "]"
        assert f"HorizontalPodAutoscaler/web: {expected}" in err, err
