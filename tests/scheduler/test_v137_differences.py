"""Behaviours that differ between v1.34 … v1.37, against answers derived by hand from the upstream sources
(v1.34.1: cluster-capacity's vendor tree; v1.35.4: openshift-kni/scheduler-plugins'; v1.36.3: kueue's) and,
for v1.37, from the pull requests named (no v1.37 source could be read).
"""

from __future__ import annotations

import numpy as np
import pytest

from kubefit.api.core import Container, ContainerImage, Node, Pod
from kubefit.k8s.version import IMAGE_LOCALITY_IMAGE_VOLUMES, IMAGE_LOCALITY_VOLUMES_THRESHOLD, for_minor
from kubefit.scheduler.plugins.base import CycleContext
from kubefit.scheduler.plugins.imagelocality import ImageLocality
from kubefit.scheduler.plugins.registry import build
from kubefit.scheduler.state import compile_state
from tests_support import score_items

MIB = 1 << 20

# --- ImageLocality and image volumes (kubernetes#130231 in v1.36, kubernetes#138951 in v1.37) -------------------
#
# Two nodes: `a` holds app:1 and data:1, `b` holds data:1 only, each 800 MiB. The pod runs app:1 and mounts
# data:1 as an image volume. Spread: app:1 on 1 of 2 nodes (400 MiB), data:1 on 2 of 2 (800 MiB).
# `calculatePriority`: 100 × (clamp(sum, 23 MiB, max) − 23 MiB) // (max − 23 MiB), in MiB units:
# - v1.34/v1.35 (containers only, max 1000): a: 100 × 377 // 977 = 38; b: sum 0 → 0.
# - v1.36 (volumes in the sum, max still 1000 × 1 container): a: 1200 → clamped 1000 → 100; b: 100 × 777 // 977 = 79.
# - v1.37 (the volume counted in max too: 2000): a: 100 × 1177 // 1977 = 59; b: 100 × 777 // 1977 = 39.
IMAGE_SCORES = {"1.34": {"a": 38, "b": 0}, "1.35": {"a": 38, "b": 0}, "1.36": {"a": 100, "b": 79},
                "1.37": {"a": 59, "b": 39}}


def _image_node(name: str, *images: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "images": [{"names": [i], "sizeBytes": 800 * MIB} for i in images]}}


def _image_pod(*volumes: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "app:1"}], "volumes": list(volumes)}}


IMAGE_VOLUME = {"name": "d", "image": {"reference": "data:1", "pullPolicy": "IfNotPresent"}}


@pytest.mark.parametrize("suffix", ["json", "yaml"])  # both decode paths (fastpod's lazy volumes, load.py's)
@pytest.mark.parametrize("minor", sorted(IMAGE_SCORES))
def test_image_volume_scores_by_version(tmp_path, capsys, minor, suffix):
    items = [_image_node("a", "app:1", "data:1"), _image_node("b", "data:1"), _image_pod(IMAGE_VOLUME)]
    out = score_items(tmp_path, capsys, items, "--kube-version", minor, suffix=suffix)
    assert out["scoreRaw"]["ImageLocality"] == IMAGE_SCORES[minor]
    assert out["score"]["ImageLocality"] == IMAGE_SCORES[minor]  # no NormalizeScore


def _plugin_scores(minor: int, pod: Pod, nodes: list[Node]) -> list[int]:
    plugin = build("ImageLocality", None, version=for_minor(minor))
    state = compile_state(nodes)
    return plugin.score(state, CycleContext(pod, None, None), np.arange(len(nodes))).tolist()


def _nodes(*held: tuple[str, ...]) -> list[Node]:
    return [Node(f"n{i}", {"cpu": 10**9}, images=tuple(ContainerImage((name,), 800 * MIB) for name in names))
            for i, names in enumerate(held)]


def test_the_variants_by_version():
    assert [for_minor(m).has(IMAGE_LOCALITY_IMAGE_VOLUMES) for m in (34, 35, 36, 37)] == [False, False, True, True]
    assert [for_minor(m).has(IMAGE_LOCALITY_VOLUMES_THRESHOLD) for m in (34, 35, 36, 37)] == [False] * 3 + [True]


def test_an_image_volume_only_on_the_node():
    """The node holds only the volume's image (800 MiB, 1 node of 2: 400 MiB). v1.34: 0 (no container image
    held). v1.36: 100 × 377 // 977 = 38 (as if it were the container's). v1.37: max 2000 → 100 × 377 // 1977 = 19."""
    pod = Pod("p", containers=(Container("c", {}, image="app:1"),), volumes=(IMAGE_VOLUME,))
    nodes = _nodes(("data:1",), ())
    assert _plugin_scores(34, pod, nodes) == [0, 0]
    assert _plugin_scores(36, pod, nodes) == [38, 0]
    assert _plugin_scores(37, pod, nodes) == [19, 0]


def test_image_volume_references_read_as_go_reads_them():
    """No tag: ":latest" added (normalizedImageName); a volume without `image` (Image == nil) is not counted,
    in the sum or in v1.37's threshold; two volumes of one image count twice, like two containers."""
    untagged = {"name": "u", "image": {"reference": "data"}}
    other = {"name": "e", "emptyDir": {}}
    pod = Pod("p", containers=(Container("c", {}, image="app:1"),), volumes=(untagged, other, untagged))
    nodes = _nodes(("data:latest",), ())
    # v1.36: 2 × 400 = 800 MiB, max 1000: 100 × 777 // 977 = 79; v1.37: max 3000: 100 × 777 // 2977 = 26
    assert _plugin_scores(36, pod, nodes) == [79, 0]
    assert _plugin_scores(37, pod, nodes) == [26, 0]


def test_a_pod_without_image_volumes_scores_alike_in_every_version():
    pod = Pod("p", containers=(Container("c", {}, image="app:1"),), volumes=({"name": "e", "emptyDir": {}},))
    nodes = _nodes(("app:1",), ())
    assert {m: tuple(_plugin_scores(m, pod, nodes)) for m in (34, 35, 36, 37)} == dict.fromkeys((34, 35, 36, 37),
                                                                                                (38, 0))


def test_the_signature_tells_image_volumes_apart_from_v136():
    """Pods equal but for an image volume share cached scores in v1.34/v1.35 only (the plugin reads no volume)."""
    plain = Pod("p", containers=(Container("c", {}, image="app:1"),))
    mounted = Pod("q", containers=(Container("c", {}, image="app:1"),), volumes=(IMAGE_VOLUME,))
    for minor, same in ((34, True), (35, True), (36, False), (37, False)):
        plugin = build("ImageLocality", None, version=for_minor(minor))
        assert (plugin.signature(plain) == plugin.signature(mounted)) is same
    assert ImageLocality().signature(plain) == ("app:1",)


# --- DefaultPreemption's first step of SelectVictimsOnNode, v1.34/v1.35 against v1.36 ---------------------------
#
# v1.34.1/v1.35.4 call removePod on each eligible pod while ranging over `nodeInfo.GetPods()`; v1.36.3 collects
# them first. `RemovePod` (framework/types.go `removeFromSlice`) moves the last pod into the removed one's slot
# and shortens the slice, but Go's `range` reads the backing array up to the length it started with: a slot
# ahead of the loop is never written (removals write at the loop's index, or behind it once the loop reads past
# the new length), so every pod is visited once, in the original order, and removed in the same sequence as
# v1.36 removes them. `isPreemptionAllowed` (priority, and the default `IsEligiblePod` always true) reads
# nothing the removals change. So both versions pick the same potential victims in the same order, and
# kubefit's one `select_victims_on_node` (collect, then remove) answers for all four.


def _v134_first_step(pods: list[int], eligible) -> tuple[list[int], list[int]]:
    """The v1.34 loop on a model of Go's slice: (pods appended to potentialVictims, pods left)."""
    backing, length, visited = list(pods), len(pods), []
    for i in range(len(pods)):  # `for _, pi := range nodeInfo.GetPods()`: the length is read once
        pod = backing[i]
        if eligible(pod):
            visited.append(pod)
            k = backing.index(pod, 0, length)  # removeFromSlice: found by key among the current pods
            backing[k] = backing[length - 1]
            length -= 1
    return visited, backing[:length]


def test_victims_on_a_node_alike_before_and_after_v136():
    import itertools

    for n in range(1, 9):
        for mask in itertools.product((False, True), repeat=n):
            pods = list(range(n))
            visited, left = _v134_first_step(pods, lambda p, mask=mask: mask[p])
            assert visited == [p for p in pods if mask[p]]  # v1.36: the eligible pods in order
            assert sorted(left) == [p for p in pods if not mask[p]]


# --- A resizing pod's footprint (kubernetes#140047, v1.37): not reproduced, said -------------------------------
#
# The example (kubernetes#140046): c1 desired 1 cpu, allocated and actuated 2; c2 desired 2, allocated and
# actuated 1. v1.34-v1.36 (`determineEffectiveRequests` per container, then summed): 2 + 2 = 4 cpu; v1.37: max of
# the sums (3, 3, 3) = 3 cpu. On a 4-cpu node a 1-cpu pod does not fit in v1.36 and would in v1.37; kubefit
# answers v1.36's count and warns in v1.37.


def _resizing_pod() -> dict:
    def status(name: str, cpu: str) -> dict:
        return {"name": name, "allocatedResources": {"cpu": cpu}, "resources": {"requests": {"cpu": cpu}}}

    containers = [{"name": "c1", "image": "i", "resources": {"requests": {"cpu": "1"}}},
                  {"name": "c2", "image": "i", "resources": {"requests": {"cpu": "2"}}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "resizing", "namespace": "default"},
            "spec": {"nodeName": "a", "containers": containers},
            "status": {"phase": "Running", "containerStatuses": [status("c1", "2"), status("c2", "1")]}}


def _cpu_pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}


@pytest.mark.parametrize("minor", ["1.36", "1.37"])
def test_a_resize_footprint_v137_counts_differently_is_said(tmp_path, capsys, minor):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    out = score_items(tmp_path, capsys, [node, _resizing_pod(), _cpu_pod()], "--kube-version", minor)
    assert out["filter"]["a"]["reasons"] == ["Insufficient cpu"]  # 4 cpu counted (v1.36's answer)
    said = [w for w in out.get("warnings", []) if "kubernetes#140047" in w]
    assert len(said) == (minor == "1.37")


def test_no_word_for_pods_whose_statuses_agree(tmp_path, capsys):
    pod = _resizing_pod()
    for cs, cpu in zip(pod["status"]["containerStatuses"], ("1", "2"), strict=True):
        cs["allocatedResources"] = {"cpu": cpu}
        cs["resources"] = {"requests": {"cpu": cpu}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    out = score_items(tmp_path, capsys, [node, pod, _cpu_pod()], "--kube-version", "1.37")
    assert out["filter"]["a"]["code"] == "Success"  # 3 cpu counted either way
    assert not [w for w in out.get("warnings", []) if "kubernetes#140047" in w]
