"""VolumeBinding's Score under StorageCapacityScoring (KEP-4049, kubernetes#128184): alpha and off in v1.34-v1.36,
beta and on in v1.37. Expected answers derived by hand from v1.36.3 `plugins/volumebinding` (`scorer.go`,
`volume_binding.go` PreScore/Score/New, alike in v1.34.1 and v1.35.4), `apis/config/v1/defaults.go`
(`SetDefaults_VolumeBindingArgs`) and `validation_pluginargs.go` (`ValidateVolumeBindingArgsWithOptions`):

- without the gate `New` builds no scorer: PreScore skips;
- with it PreScore never skips; a node scores its static bindings grouped by the PV's storage class, per class
  shape(requested × 100 // capacity) with the shape's scores × 10, the node's score `math.Round(Σ / classes)`;
- the default shape is (0, 10), (100, 0): an emptier PV scores higher.

Scenario: n1 (zone a) holds pv-a (local, 40Gi) and pv-a-fast (fast, 30Gi); n2 (zone b) pv-b (local, 100Gi) and
pv-b-fast (fast, 12Gi); n3 (zone c) none. The pod claims c1 (10Gi, local) and c2 (10Gi, fast).
Default shape, scaled (0, 100), (100, 0): f(u) = 100 − u.
- n1: local 10/40 → u 25 → 75; fast 10/30 → u 33 → 67; (75 + 67) / 2 = 71.
- n2: local 10/100 → u 10 → 90; fast 10/12 → u 83 → 17; (90 + 17) / 2 = 53.5 → 54 (half away from zero).
- n3: no PV: filtered out (bind conflict), not scored.
"""

from __future__ import annotations

import json

import pytest

from kubefit.errors import ConfigError
from kubefit.k8s.version import STORAGE_CAPACITY_SCORING, for_minor
from kubefit.scheduler.config.decoding import decode_v1
from tests_support import run_json, score_items

ZONE = "topology.kubernetes.io/zone"


def _node(name: str, zone: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {ZONE: zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _class(name: str, provisioner: str = "kubernetes.io/no-provisioner") -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer"}


def _pv(name: str, zone: str, size: str, cls: str) -> dict:
    term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}}},
            "status": {"phase": "Available"}}


def _pvc(name: str, size: str, cls: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                     "storageClassName": cls}}


def _pod(name: str, *claims: str) -> dict:
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"volumes": volumes, "containers": [{"name": "c", "image": "img"}]}}


def _config(shape: list[dict] | None) -> dict:
    args = {} if shape is None else {"shape": shape}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "pluginConfig": [{"name": "VolumeBinding", "args": args}]}]}


CLUSTER = [_node("n1", "a"), _node("n2", "b"), _node("n3", "c"), _class("local"), _class("fast"),
           _pv("pv-a", "a", "40Gi", "local"), _pv("pv-a-fast", "a", "30Gi", "fast"),
           _pv("pv-b", "b", "100Gi", "local"), _pv("pv-b-fast", "b", "12Gi", "fast"),
           _pvc("c1", "10Gi", "local"), _pvc("c2", "10Gi", "fast")]


def test_the_variant_follows_the_gate():
    assert [for_minor(m).has(STORAGE_CAPACITY_SCORING) for m in (34, 35, 36, 37)] == [False, False, False, True]
    assert for_minor(34, {"StorageCapacityScoring": True}).has(STORAGE_CAPACITY_SCORING)
    assert not for_minor(37, {"StorageCapacityScoring": False}).has(STORAGE_CAPACITY_SCORING)


@pytest.mark.parametrize("args", [("--kube-version", "1.34"), ("--kube-version", "1.36"),
                                  ("--kube-version", "1.37", "--feature-gates", "StorageCapacityScoring=false")])
def test_without_the_gate_prescore_skips(tmp_path, capsys, args):
    out = score_items(tmp_path, capsys, [*CLUSTER, _pod("p", "c1", "c2")], *args)
    assert "VolumeBinding" in out["skippedScorePlugins"] and "VolumeBinding" not in out["score"]


@pytest.mark.parametrize("args", [("--kube-version", "1.37"),
                                  ("--kube-version", "1.34", "--feature-gates", "StorageCapacityScoring=true"),
                                  ("--kube-version", "1.36", "--feature-gates", "StorageCapacityScoring=true")])
@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_static_bindings_scored_by_class_with_the_default_shape(tmp_path, capsys, args, suffix):
    out = score_items(tmp_path, capsys, [*CLUSTER, _pod("p", "c1", "c2")], *args, suffix=suffix)
    assert out["feasible"] == ["n1", "n2"]
    assert out["scoreRaw"]["VolumeBinding"] == {"n1": 71, "n2": 54}
    assert out["score"]["VolumeBinding"] == {"n1": 71, "n2": 54}  # weight 1, no NormalizeScore
    assert "VolumeBinding" not in out["skippedScorePlugins"]


def test_a_custom_shape_preferring_full_volumes(tmp_path, capsys):
    """Shape (0, 0), (100, 10) → f(u) = u. n1: (25 + 33) / 2 = 29; n2: (10 + 83) / 2 = 46.5 → 47."""
    items = [*CLUSTER, _pod("p", "c1", "c2"), _config([{"utilization": 0, "score": 0},
                                                        {"utilization": 100, "score": 10}])]
    out = score_items(tmp_path, capsys, items, "--kube-version", "1.37")
    assert out["scoreRaw"]["VolumeBinding"] == {"n1": 29, "n2": 47}


def test_claims_of_one_class_on_a_node_are_summed(tmp_path, capsys):
    """c1 (10Gi) and c3 (5Gi), both local: matched in increasing size, c3 takes pv-small (20Gi), c1 pv-a (40Gi);
    class local: 15Gi of 60Gi → u 25 → 75 (one class)."""
    items = [_node("n1", "a"), _class("local"), _pv("pv-a", "a", "40Gi", "local"),
             _pv("pv-small", "a", "20Gi", "local"), _pvc("c1", "10Gi", "local"), _pvc("c3", "5Gi", "local"),
             _pod("p", "c1", "c3")]
    out = score_items(tmp_path, capsys, items, "--kube-version", "1.37")
    assert out["scoreRaw"]["VolumeBinding"] == {"n1": 75}


def test_dynamic_provisions_and_pods_without_claims_score_zero(tmp_path, capsys):
    """A node without static bindings scores its provisions by their CSIStorageCapacity (`NodeCapacity`): none
    without CSIStorageCapacity objects, so no class and 0. A pod without claims: PreFilter Skip writes an
    empty state, PreScore still does not skip, Score finds no `podVolumesByNode` entry: 0 on every node."""
    items = [*CLUSTER, _class("dynamic", "ebs.csi.aws.com"), _pvc("d1", "10Gi", "dynamic"), _pod("p", "d1")]
    out = score_items(tmp_path, capsys, items, "--kube-version", "1.37")
    assert out["scoreRaw"]["VolumeBinding"] == {"n1": 0, "n2": 0, "n3": 0}
    out = score_items(tmp_path, capsys, [*CLUSTER, _pod("p")], "--kube-version", "1.37")
    assert out["scoreRaw"]["VolumeBinding"] == {"n1": 0, "n2": 0, "n3": 0}
    assert "VolumeBinding" not in out["skippedScorePlugins"]


def _messages(body: dict, minor: int, gates: dict | None = None) -> list[str]:
    try:
        decode_v1(body, "c.yaml", for_minor(minor, gates))
    except ConfigError as err:
        return err.errors
    return []


def test_shape_refused_without_the_gate_and_validated_with_it():
    bad = _config([{"utilization": 50, "score": 0}, {"utilization": 10, "score": 11}])
    value = '[{"utilization":50,"score":0},{"utilization":10,"score":11}]'
    assert _messages(bad, 36) == [f"profiles[0].pluginConfig[0].args.shape: Invalid value: {value}: unexpected "
                                  "field `shape`, remove it or turn on the feature gate StorageCapacityScoring"]
    want = ["profiles[0].pluginConfig[0].args.shape[1].utilization: Invalid value: 10: values must be sorted in "
            "increasing order",
            "profiles[0].pluginConfig[0].args.shape[1].score: Invalid value: 11: not in valid range [0, 10]"]
    assert _messages(bad, 37) == want
    assert _messages(bad, 35, {"StorageCapacityScoring": True}) == want
    good = _config([{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}])
    assert _messages(good, 37) == [] and _messages(_config([]), 37) == []  # an empty shape is defaulted


def test_the_defaulted_shape_in_config_view(tmp_path, capsys, monkeypatch):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_config(None)))
    for minor, shape in (("1.36", None), ("1.37", [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}])):
        monkeypatch.setenv("KUBEFIT_KUBE_VERSION", minor)
        rc, out, err = run_json(capsys, "config", "view", "-f", str(path))
        assert rc == 0, err
        args = {pc["name"]: pc.get("args") for pc in out["profiles"][0]["pluginConfig"]}["VolumeBinding"]
        assert args == {"bindTimeoutSeconds": 600, **({} if shape is None else {"shape": shape})}
        assert list(args) == ["bindTimeoutSeconds", "shape"][:len(args)]  # VolumeBindingArgs' field order
