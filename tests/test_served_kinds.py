"""Kinds told apart by API group, and every kind a supported kube-apiserver serves loads (issue #46, items 1-2).

kube-apiserver maps an object to its type by group, version and kind (apimachinery's RESTMapper): an OpenKruise
`apps.kruise.io` StatefulSet, a Knative `serving.knative.dev` Service and a CloudNativePG `postgresql.cnpg.io`
Cluster are custom resources, not the built-in StatefulSet, Service or Karmada Cluster; an object of a kind the
API server serves loads (skipped and named when it places no pod); one it serves in no version is refused with
its words (`no matches for kind "X" in version "Y"`). The served kinds per version are `manifests/served.py`,
from `k8s.io/api`'s fixtures of v0.34.1 … v0.37.0-beta.0; the expectations below are each version's own API as
its release notes and KEPs state it, not that table.
"""

from __future__ import annotations

import pytest

from kubefit.manifests.served import serving_minors
from tests_support import SHARED_DIR, run_json

REAL = SHARED_DIR / "real-manifests" / "realworld4"
NODES = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, kubernetes.io/os: linux}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
"""


def _nodes(tmp_path) -> str:
    path = tmp_path / "nodes.yaml"
    path.write_text(NODES)
    return str(path)


def _warning(out: dict, start: str) -> str:
    found = [w for w in out["warnings"] if start in w]
    assert found, out["warnings"]
    return found[0]


# --------------------------------------------------------------------------- item 1: kinds told apart by group

@pytest.mark.parametrize(("manifest", "named"), [
    # openkruise/kruise docs/tutorial/v1: an Advanced StatefulSet of 20 replicas (apps.kruise.io/v1alpha1)
    ("openkruise-kruise/docs/tutorial/v1/guestbook-statefulset.yaml",
     "StatefulSet/demo-v1-guestbook-kruise (apps.kruise.io/v1alpha1: 20 pods of its spec.template, "
     "demo-v1-guestbook-kruise-0 … demo-v1-guestbook-kruise-19 (spec.replicas))"),
    # an Advanced DaemonSet: a pod per node it selects
    ("openkruise-kruise/docs/tutorial/v1/daemonset-guestbook.yaml",
     "DaemonSet/guestbook-ds (apps.kruise.io/v1alpha1: a pod of its spec.template on each node it selects"),
    # config/samples: a CloneSet of 5 replicas
    ("openkruise-kruise/config/samples/apps_v1alpha1_cloneset.yaml",
     "CloneSet/sample (apps.kruise.io/v1alpha1: 5 pods of its spec.template (spec.replicas))"),
    # knative/docs: the hello-world Service; Knative starts each Revision at its initial scale (1 by default)
    ("knative-docs/code-samples/serving/hello-world/helloworld-python/service.yaml",
     "Service/helloworld-python (serving.knative.dev/v1: a Deployment of its Revision: 1 pod (Knative's default "
     "initial scale) of its template's containers plus Knative's queue-proxy sidecar"),
    # cloudnative-pg docs/src/samples: instances: 3, pods cluster-example-1 … -3
    ("cloudnative-pg-cloudnative-pg/docs/src/samples/cluster-example.yaml",
     "Cluster/cluster-example (postgresql.cnpg.io/v1: 3 PostgreSQL instance pods, cluster-example-1 … "
     "cluster-example-3 (spec.instances))"),
])
def test_an_operators_kind_named_like_a_built_in_kind_is_named_with_what_it_creates(tmp_path, capsys, manifest,
                                                                                    named):
    """Refused before (`unsupported apiVersion 'apps.kruise.io/v1alpha1' for StatefulSet (expected 'apps/v1')`),
    or, for the CNPG Cluster, read as Karmada's and left unread; now a custom resource its operator turns into
    pods, named with what the operator will create, and none placed by kubefit."""
    rc, out, err = run_json(capsys, "simulate", "-f", _nodes(tmp_path), "-f", str(REAL / manifest))
    assert rc == 0, err
    assert named in _warning(out, "an operator turns these custom resources into pods")
    assert out["steps"] == []


def test_a_karmada_cluster_is_still_a_fleet_object(tmp_path, capsys):
    """The group decides: `cluster.karmada.io` Cluster is read by the fleet verbs (unread by `simulate`, said so),
    a `postgresql.cnpg.io` one beside it is an operator's."""
    path = tmp_path / "both.yaml"
    path.write_text("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member1}\n---\n"
                    "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {name: pg}\nspec: {instances: 2}\n")
    rc, out, err = run_json(capsys, "simulate", "-f", _nodes(tmp_path), "-f", str(path))
    assert rc == 0, err
    assert "does not read" in _warning(out, "Cluster/member1") and "Cluster/pg" not in _warning(out, "does not read")
    assert "Cluster/pg (postgresql.cnpg.io/v1: 2 PostgreSQL instance pods, pg-1 … pg-2" in \
        _warning(out, "an operator turns")


def test_a_built_in_kind_in_a_version_of_no_group_it_belongs_to_is_refused_with_the_api_servers_words(
        tmp_path, capsys):
    """`apps/v1 Secret`: apps serves no Secret (the RESTMapper finds no such kind), the core group does."""
    path = tmp_path / "secret.yaml"
    path.write_text("apiVersion: apps/v1\nkind: Secret\nmetadata: {name: s}\n")
    rc, _, err = run_json(capsys, "simulate", "-f", _nodes(tmp_path), "-f", str(path))
    assert rc == 2
    assert 'no matches for kind "Secret" in version "apps/v1" (kube-apiserver serves Secret in v1)' in err


# --------------------------------------------------------------------------- item 2: every served kind loads

@pytest.mark.parametrize(("api_version", "kind", "minors"), [
    ("storage.k8s.io/v1", "VolumeAttributesClass", {34, 35, 36, 37}),  # GA in v1.34 (KEP-3751)
    ("storage.k8s.io/v1beta1", "VolumeAttributesClass", {34, 35, 36, 37}),
    ("networking.k8s.io/v1", "ServiceCIDR", {34, 35, 36, 37}),  # GA in v1.33 (KEP-1880)
    ("networking.k8s.io/v1", "IPAddress", {34, 35, 36, 37}),
    ("certificates.k8s.io/v1", "ClusterTrustBundle", {37}),  # GA in v1.37; v1beta1 from v1.33
    ("certificates.k8s.io/v1beta1", "ClusterTrustBundle", {34, 35, 36, 37}),
    ("storagemigration.k8s.io/v1", "StorageVersionMigration", {37}),  # GA in v1.37; v1beta1 in v1.35
    ("storagemigration.k8s.io/v1beta1", "StorageVersionMigration", {35, 36, 37}),
    ("storagemigration.k8s.io/v1alpha1", "StorageVersionMigration", {34}),
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", {36, 37}),  # GA in v1.36 (KEP-3962)
    ("coordination.k8s.io/v1beta1", "LeaseCandidate", {34, 35, 36, 37}),  # beta in v1.33
    ("resource.k8s.io/v1", "DeviceTaintRule", {37}),
    ("v1", "PodTemplate", {34, 35, 36, 37}),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler", set()),  # removed in v1.26
    ("batch/v1beta1", "CronJob", set()),  # removed in v1.25
    ("rbac.authorization.k8s.io/v1alpha1", "Role", set()),  # removed in v1.23 (kubernetes#104248)
])
def test_the_served_table_knows_each_versions_api(api_version, kind, minors):
    assert serving_minors(api_version, kind) == minors


def test_the_ebs_csi_drivers_modify_volume_example_loads(tmp_path, capsys):
    """aws-ebs-csi-driver examples/kubernetes/modify-volume: a `storage.k8s.io/v1` VolumeAttributesClass (GA
    v1.34) beside its claim and pod: refused before as an unknown kind; now it loads, the class skipped and
    named, the pod's claim pending as its provisioner (ebs.csi.aws.com, no node runs it here) leaves it."""
    folder = REAL / "kubernetes-sigs-aws-ebs-csi-driver/examples/kubernetes/modify-volume/manifests"
    rc, out, err = run_json(capsys, "simulate", "-f", _nodes(tmp_path), "-f", str(folder))
    assert rc == 0, err
    assert "VolumeAttributesClass (1)" in _warning(out, "that place no pod")


@pytest.mark.parametrize(("document", "minor", "refused"), [
    ("apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: new}\nspec: {cidrs: [10.96.0.0/16]}\n",
     "1.34", None),
    ("apiVersion: networking.k8s.io/v1\nkind: IPAddress\nmetadata: {name: 10.96.0.20}\n"
     "spec: {parentRef: {resource: services, name: web, namespace: default}}\n", "1.35", None),
    ("apiVersion: certificates.k8s.io/v1\nkind: ClusterTrustBundle\nmetadata: {name: b}\nspec: {trustBundle: x}\n",
     "1.37", None),
    ("apiVersion: certificates.k8s.io/v1\nkind: ClusterTrustBundle\nmetadata: {name: b}\nspec: {trustBundle: x}\n",
     "1.36", 'no matches for kind "ClusterTrustBundle" in version "certificates.k8s.io/v1" (Kubernetes 1.36 '
             "kube-apiserver serves ClusterTrustBundle in certificates.k8s.io/v1alpha1, "
             "certificates.k8s.io/v1beta1; certificates.k8s.io/v1 in Kubernetes 1.37)"),
    ("apiVersion: storagemigration.k8s.io/v1\nkind: StorageVersionMigration\nmetadata: {name: m}\n"
     "spec: {resource: {group: '', resource: secrets}}\n", "1.37", None),
    ("apiVersion: storagemigration.k8s.io/v1\nkind: StorageVersionMigration\nmetadata: {name: m}\n"
     "spec: {resource: {group: '', resource: secrets}}\n", "1.35", 'no matches for kind "StorageVersionMigration"'),
])
def test_each_version_loads_what_its_api_server_serves(tmp_path, capsys, document, minor, refused):
    """Loaded (skipped and named) by the versions whose API server serves the kind in that version, refused by
    the others with the API server's words, once the version answered for is known."""
    path = tmp_path / "object.yaml"
    path.write_text(document)
    rc, out, err = run_json(capsys, "simulate", "-f", _nodes(tmp_path), "-f", str(path), "--kube-version", minor)
    if refused is None:
        assert rc == 0, err
        assert "object(s) that place no pod" in _warning(out, "skipped 1")
    else:
        assert rc == 2 and refused in err, err


def test_a_kind_no_api_server_serves_is_refused_with_its_words(tmp_path, capsys):
    path = tmp_path / "typo.yaml"
    path.write_text("apiVersion: v1\nkind: Sevrice\nmetadata: {name: web}\n")
    rc, _, err = run_json(capsys, "simulate", "-f", _nodes(tmp_path), "-f", str(path))
    assert rc == 2 and 'no matches for kind "Sevrice" in version "v1"' in err and "unknown kind 'Sevrice'" in err


def test_the_skipped_kinds_named_for_the_reader_are_served():
    """`kinds.SKIPPED_KINDS` names common kinds that place no pod; each is one some kube-apiserver serves."""
    from kubefit.manifests.kinds import SKIPPED_KINDS
    from kubefit.manifests.served import serving_versions

    assert [k for k in sorted(SKIPPED_KINDS) if not serving_versions(k)] == []


def test_a_fleet_ignores_a_custom_resource_named_cluster(tmp_path, capsys):
    """`kubefit estimate`: Karmada's Clusters are read, a CloudNativePG Cluster among them is said to play no
    part (it was decoded as Karmada's before and refused: `unsupported apiVersion`)."""
    path = tmp_path / "fleet.yaml"
    path.write_text("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member1}\n"
                    "spec: {}\nstatus:\n  resourceSummary:\n    allocatable: {cpu: '8', memory: 16Gi, pods: '110'}\n"
                    "---\napiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {name: pg}\n"
                    "spec: {instances: 3}\n")
    rc, out, err = run_json(capsys, "estimate", "-f", str(path), "--request", "cpu=1")
    assert rc == 0, err
    assert any("Cluster/pg: a postgresql.cnpg.io/v1 custom resource" in w for w in out.get("warnings", [])) \
        or "Cluster/pg: a postgresql.cnpg.io/v1 custom resource" in err
