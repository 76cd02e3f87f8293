"""API versions no supported kube-apiserver serves (v1.34 … v1.37) are refused as it refuses them, with the
release that removed them and the version to use (kubernetes.io, "Deprecated API Migration Guide")."""

from __future__ import annotations

import pytest

from kubefit.cli import main

NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {allocatable: {cpu: "1", memory: 1Gi, pods: "9"}}\n'


@pytest.mark.parametrize(("api_version", "kind", "release", "use"), [
    ("batch/v1beta1", "CronJob", "1.25", "batch/v1"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass", "1.22", "scheduling.k8s.io/v1"),
    ("policy/v1beta1", "PodDisruptionBudget", "1.25", "policy/v1"),
    ("extensions/v1beta1", "Deployment", "1.16", "apps/v1"),
    ("apps/v1beta2", "StatefulSet", "1.16", "apps/v1"),
    ("extensions/v1beta1", "Ingress", "1.22", "networking.k8s.io/v1"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.26", "autoscaling/v2"),
    ("node.k8s.io/v1beta1", "RuntimeClass", "1.25", "node.k8s.io/v1"),
])
def test_removed_api_version_is_refused(api_version, kind, release, use, tmp_path, capsys):
    path = tmp_path / "old.yaml"
    path.write_text(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: old}}\n---\n{NODE}")
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f'error: {path}: {kind}/old: apiVersion: no matches for kind "{kind}" in version "{api_version}" '
                   f"(removed in Kubernetes v{release}; use {use})\n")


def test_the_served_versions_still_load(tmp_path, capsys):
    path = tmp_path / "new.yaml"
    path.write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
                    "---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {schedule: '* * * * *', "
                    "jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: b}]}}}}}\n---\n" + NODE)
    assert main(["simulate", "-f", str(path)]) == 0
