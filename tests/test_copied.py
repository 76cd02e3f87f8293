"""`kubefit.api.core.copied`: the object `dataclasses.replace` makes, without reading every field.

The pods are made as the streaming reader keeps a snapshot's pods: the manifest as its JSON (bytes), the volumes
still to be read from it (`VOLUMES_FROM_RAW`), so that `replace` would decode them and `copied` must not."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kubefit.api.core import VOLUMES_FROM_RAW, Node, Pod, copied, raw_is_json

MANIFEST = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "shop"},
            "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-a"}}]}}


def lazy_pod(**fields) -> Pod:
    pod = Pod("a", "shop", labels={"app": "a"}, **fields)
    pod.raw = json.dumps(MANIFEST).encode()
    pod.volumes = VOLUMES_FROM_RAW
    return pod


@pytest.mark.parametrize("changes", [
    {"node_name": "n1", "queued": False},
    {"start_time": "2030-01-01T00:00:07Z"},
    {"name": "b", "labels": {"app": "a", "apps.kubernetes.io/pod-index": "1"}},
    {"name": "b", "raw": {**MANIFEST, "spec": {}}},  # a new manifest: the volumes are the old one's, as replace reads
])
def test_the_copy_equals_what_replace_makes(changes):
    expected = dataclasses.replace(lazy_pod(), **changes)
    made = copied(lazy_pod(), **changes)
    assert type(made) is Pod and made == expected
    assert made.volumes == expected.volumes == tuple(MANIFEST["spec"]["volumes"])


def test_the_copy_reads_nothing_it_does_not_change():
    """The original's manifest stays JSON and its volumes unread, and the copy's too (replace decodes both)."""
    pod = lazy_pod()
    made = copied(pod, node_name="n1")
    assert raw_is_json(pod) and raw_is_json(made)
    assert pod.__dict__["volumes"] is VOLUMES_FROM_RAW and made.__dict__["volumes"] is VOLUMES_FROM_RAW
    assert made.node_name == "n1" and pod.node_name == ""
    made.labels["x"] = "y"  # a shallow copy, as replace's: the dicts are shared
    assert pod.labels["x"] == "y"


def test_a_name_that_is_no_field_is_refused_as_replace_refuses_it():
    with pytest.raises(TypeError, match="nodename"):
        copied(lazy_pod(), nodename="n1")
    with pytest.raises(TypeError):
        dataclasses.replace(lazy_pod(), nodename="n1")
    node = Node("n1", {"cpu": 4000})
    assert copied(node, unschedulable=True) == dataclasses.replace(node, unschedulable=True)


@pytest.mark.parametrize("step", [0, 7, 86_400 * 3 + 5])
def test_a_bound_copy_is_what_replace_makes_with_its_start_time(step):
    """`bound_copy` (a simulation's bind, its own copy of the fields): the pod `replace` makes with
    `status.startTime` = the simulation's epoch + `step` seconds, the original untouched, nothing decoded."""
    from kubefit.scheduler.postfilter import bound_copy, simulation_time

    original = lazy_pod()
    made = bound_copy(original, step)
    assert raw_is_json(made) and made.__dict__["volumes"] is VOLUMES_FROM_RAW
    assert type(made) is Pod and made is not original and original.start_time == ""
    assert made == dataclasses.replace(lazy_pod(), start_time=simulation_time(step))
