"""`config validate` on old apiVersions and files without a configuration; `config convert` of removed and
out-of-tree plugins (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubefit.cli import main

BETA2 = {"apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "KubeSchedulerConfiguration",
         "profiles": [{"schedulerName": "default-scheduler",
                       "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}, {"name": "MyOutOfTree"}]}},
                       "pluginConfig": [{"name": "MyOutOfTree", "args": {"foo": 1}}]}]}


def _write(tmp_path: Path, body: dict, name: str = "config.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body))
    return str(path)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize(("body", "label"), [
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
     "kubescheduler.config.k8s.io/v1beta3"),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta1", "kind": "KubeSchedulerConfiguration"},
     "kubescheduler.config.k8s.io/v1beta1"),
    ({"apiVersion": "v1", "kind": "Policy", "predicates": [{"name": "PodFitsResources"}]}, "a legacy Policy"),
])
def test_validate_old_version_says_v134_needs_v1(tmp_path, capsys, body, label) -> None:
    path = _write(tmp_path, body)
    rc, out, _ = _run(capsys, "config", "validate", "-f", path)
    lines = out.splitlines()
    assert rc == 0
    assert f"valid as {label}" in lines
    assert lines[-1] == (f"note: kube-scheduler v1.34.1 loads only kubescheduler.config.k8s.io/v1 (it refuses {label}); "
                         f"convert the file with: kubefit config convert -f {path}")


def test_validate_v1_is_plainly_valid(tmp_path, capsys) -> None:
    path = _write(tmp_path, {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    rc, out, _ = _run(capsys, "config", "validate", "-f", path)
    assert rc == 0 and out.splitlines() == ["valid"]


def test_validate_without_a_configuration_is_an_error(tmp_path, capsys) -> None:
    path = _write(tmp_path, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    rc, out, err = _run(capsys, "config", "validate", "-f", path)
    assert rc == 2 and "valid" not in out
    lines = err.splitlines()  # the Node is said to be ignored (a warning), then the one error line
    assert [line for line in lines if line.startswith("error:")] == [lines[-1]]
    assert lines[-1] == (f"error: {path}: no KubeSchedulerConfiguration or Policy to validate (a file without "
                         "one means kube-scheduler's defaults: see `kubefit config view`)")


def test_validate_old_version_naming_a_removed_plugin(tmp_path, capsys) -> None:
    body = {**BETA2, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]}
    rc, out, _ = _run(capsys, "config", "validate", "-f", _write(tmp_path, body))
    assert rc == 0 and "valid as kubescheduler.config.k8s.io/v1beta2" in out
    assert "filter plugin EBSLimits dropped" in out and "NodeVolumeLimits" in out


def test_convert_drops_ebs_limits_and_keeps_the_out_of_tree_plugin(tmp_path, capsys) -> None:
    rc, out, err = _run(capsys, "config", "convert", "-f", _write(tmp_path, BETA2))
    assert rc == 0, err
    converted = yaml.safe_load(out)
    profile = converted["profiles"][0]
    assert converted["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert profile["plugins"]["filter"]["enabled"] == [{"name": "MyOutOfTree"}]
    assert profile["pluginConfig"] == [{"name": "MyOutOfTree", "args": {"foo": 1}}]
    assert "EBSLimits dropped: removed from kube-scheduler (v1 refuses the name); NodeVolumeLimits" in err
    assert "plugin MyOutOfTree is not built into kube-scheduler v1.34 (an out-of-tree plugin): kept as given" in err
    assert out.startswith("# note: ")  # the notes travel with the converted file


@pytest.mark.parametrize("name", ["EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits", "NodeLabel",
                                  "ServiceAffinity", "SelectorSpread", "NodePreferAvoidPods"])
def test_convert_multipoint_drops_each_removed_plugin_with_a_note(tmp_path, capsys, name) -> None:
    body = {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": name}]},
                                      "preFilter": {"disabled": [{"name": name}]}}}]}
    rc, out, err = _run(capsys, "config", "convert", "-f", _write(tmp_path, body))
    assert rc == 0, err
    plugins = yaml.safe_load(out)["profiles"][0]["plugins"]
    assert name not in str(plugins)
    assert f"multiPoint plugin {name} dropped" in err and f"preFilter disabled entry for {name} dropped" in err
