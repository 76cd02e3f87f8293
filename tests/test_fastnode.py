"""`kubefit.manifests.fastnode` against `decode_node`, the rule: the same `Node` and warnings, or a hand-over.

The property draws nodes as snapshots and hand-written manifests hold them, with fields made odd one in a few
(a null, a number for a string, a typo, a quantity decode_node refuses or warns about, an escape); whatever
`FastNodes` takes must be exactly what decode_node gives, and decode_node must not refuse it. The table below
holds the valid variants the fast road must take (so that the property is not passed by handing every node over).
"""

from __future__ import annotations

import copy
import json
from unittest import mock

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.core import raw_is_json
from kubefit.errors import InputError
from kubefit.manifests import load, stream
from kubefit.manifests.documents import Document
from kubefit.manifests.fastnode import FastNodes
from kubefit.manifests.fastpod import FastPods
from kubefit.manifests.scenario import load_scenario

pytest.importorskip("kubefit.manifests._reader")

def _rarely(n: int) -> st.SearchStrategy:
    """True one time in `n` (drawn evenly: hypothesis leans to an integer range's ends)."""
    return st.sampled_from(range(n)).map(lambda i: i == n - 1)


def _one_of(valid: list, odd: list) -> st.SearchStrategy:
    """A valid value, or one time in eight an odd one."""
    return _rarely(8).flatmap(lambda odd_one: st.sampled_from(odd if odd_one else valid))


QUANTITY = _one_of(["4", "3900m", "16Gi", "110", "0", "1.5", "1e3", 8, 0, 1.5], ["-1", "12x", "", -2, True, None])
RESOURCE = _one_of(["cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi"],
                   ["bogus", "example.com/d\u00e9", "a/b/c"])
TAINTS = _one_of([
    [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
    [{"key": "k", "effect": "NoExecute", "timeAdded": "2025-10-01T09:00:00Z"}, {"key": "k2", "effect": "PreferNoSchedule"}],
    [{"key": "k", "effect": "NoSchedule", "value": None}], [], None], [
    [{"key": "", "effect": "NoSchedule"}], [{"key": "k"}], [{"key": "k", "effect": "Sometimes"}],
    [{"key": "k", "effect": "NoSchedule", "vale": "x"}], [None], [{"key": 5, "effect": "NoSchedule"}], {"key": "k"},
    "x"])
IMAGES = _one_of([
    [{"names": ["registry.example.com/shop/api:2.0.1", "registry.example.com/shop/api@sha256:ab"], "sizeBytes": 42}],
    [{"names": ["a:1"], "sizeBytes": 420000000}, {"names": ["b"]}], [{"names": None, "sizeBytes": None}],
    [{"names": ["a"], "extra": {"x": 1}}], [], None], [
    [{"names": ["a"], "sizeBytes": "42"}], [{"names": ["a"], "sizeBytes": 1.0}], [{"names": ["a"], "sizeBytes": True}],
    [{"names": [5]}], [{"names": "a"}], [None], {"names": []}])
CONDITIONS = _one_of([
    [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2025-10-01T09:00:00Z", "reason": "KubeletReady",
      "message": "ok"}], [{"type": None, "status": None}], [], None], [
    [{"type": "Ready", "status": True}], [{"type": 5, "status": "True"}], [None], [{"type": "Ready", "staus": "True"}],
    {"type": "Ready"}])
LABELS = _one_of([
    {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "zone-a"}, {}, None, {"a": ""},
    {"\u00e9t\u00e9": "caf\u00e9", "q": "say \"hi\"\\n"}, {"a\u0000": "b"}], [{"a": None}, {"a": 1}, ["a"], "a=b"])


def _resources(draw) -> dict | None | str:
    if draw(_rarely(10)):
        return draw(st.sampled_from([None, [], "4", {}]))
    return {draw(RESOURCE): draw(QUANTITY) for _ in range(draw(st.integers(0, 4)))}


@st.composite
def nodes(draw) -> dict:
    """Nodes as a snapshot or a hand-written manifest holds them, a field in a few made odd."""
    meta: dict = {"name": draw(_one_of(["n1", "node-\u00e9"], ["", None, 5]))}
    for key, values in (("labels", None), ("annotations", [{"kubefit.io/kubernetes-version": "v1.34.1"}, None, 5]),
                        ("uid", ["u-1", 7]), ("resourceVersion", ["12"]), ("creationTimestamp", ["2025-10-01", None]),
                        ("finalizers", [["f"]])):
        if draw(_rarely(3)):
            meta[key] = draw(LABELS if values is None else st.sampled_from(values))
    if draw(_rarely(16)):
        meta[draw(st.sampled_from(["managedFields", "nmae"]))] = [{"manager": "kubelet"}]
    body: dict = {"apiVersion": draw(_one_of(["v1"], ["v2", None])), "kind": "Node", "metadata": meta}
    if draw(_rarely(16)):
        body["metadata"] = draw(st.sampled_from([None, [], "n1"]))
    spec_fields = {"taints": TAINTS, "unschedulable": _one_of([True, False, None], ["true", 1]),
                   "podCIDR": st.sampled_from(["10.0.0.0/24", 5]), "providerID": st.just("aws:///x")}
    if draw(st.booleans()):
        body["spec"] = {k: draw(spec_fields[k]) for k in draw(st.sets(st.sampled_from(sorted(spec_fields)), max_size=3))}
        if draw(_rarely(16)):
            body["spec"]["unscheduleable"] = True
    elif draw(_rarely(8)):
        body["spec"] = draw(st.sampled_from([None, {}, [], 3]))
    status_fields = {"allocatable": None, "capacity": None, "images": IMAGES, "conditions": CONDITIONS,
                     "declaredFeatures": _one_of([["InPlacePodVerticalScaling"], [], None], [[None], [3], "x"]),
                     "nodeInfo": st.just({"kubeletVersion": "v1.34.1"}), "addresses": st.just([{"type": "Hostname"}]),
                     "phase": st.sampled_from(["Running", 3])}
    if not draw(_rarely(8)):
        chosen = draw(st.sets(st.sampled_from(sorted(status_fields)), max_size=4)) | \
            set(draw(st.sampled_from([["allocatable", "capacity"], ["allocatable"], ["capacity"], []])))
        body["status"] = {k: _resources(draw) if status_fields[k] is None else draw(status_fields[k])
                          for k in sorted(chosen)}
        if draw(_rarely(16)):
            body["status"]["imags"] = []
    elif draw(st.booleans()):
        body["status"] = draw(st.sampled_from([None, {}, [], 3]))
    if draw(_rarely(16)):
        body[draw(st.sampled_from(["items", "extra", "Status"]))] = []
    return body


def _escaped(data: bytes, where: str) -> bytes:
    """The same JSON with a key (`allocatable`, else the first) or the first string value spelt with an escape
    of its first letter (`\\u0061` for `a`): the same object."""
    at = data.find(b'"allocatable"') - 1 if where == "key" else -1  # (at + 2: the key's first letter)
    at = at if at >= 0 else data.find(b'{"') if where == "key" else data.find(b':"')
    if at < 0:
        return data
    at += 2
    return data[:at] + b"\\u%04x" % data[at] + data[at + 1:]


def _decode_node(body: dict) -> tuple[object, list[str]] | InputError:
    warnings: list[str] = []
    try:
        return load.decode_node(Document(copy.deepcopy(body), "f.json", 3), warnings), warnings
    except InputError as exc:
        return exc


def _check(fast: FastNodes, body: dict, data: bytes) -> bool:
    """Whether `fast` took the node; if it did, decode_node gives that node (its raw the manifest less
    managedFields, read from the JSON) and those warnings."""
    got = fast.decode(data, "f.json", 3)
    if got is None:
        return False
    want = _decode_node(body)
    assert not isinstance(want, InputError), want
    assert raw_is_json(got[0]) and got[0].raw == want[0].raw  # (reads raw: compared last as a whole too)
    assert got[0] == want[0] and got[1] == want[1]
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes(), st.sampled_from([None, "key", "value"]))
def test_a_fast_node_is_decode_nodes_node(body, escape):
    """FastNodes gives None, or exactly the Node and warnings decode_node gives (and decode_node does not
    refuse it), the JSON written plainly or with an escape in a key or a string."""
    data = orjson.dumps(body)
    if escape is not None:
        data = _escaped(data, escape)
        body = json.loads(data)
    _check(FastNodes(), body, data)


_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}},
         "status": {"allocatable": {"cpu": "3900m", "memory": "15872Mi", "pods": "110"},
                    "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def _with(path: str, value: object, base: dict = _NODE) -> dict:
    body = copy.deepcopy(base)
    *parents, last = path.split(".")
    at = body
    for part in parents:
        at = at.setdefault(part, {})
    if value is _ABSENT:
        at.pop(last, None)
    else:
        at[last] = value
    return body


_ABSENT = object()
TAKEN = [  # (what, field, value): valid nodes the fast road must take (and give decode_node's answer for)
    ("the usual node", "kind", "Node"),
    ("capacity alone: its warning", "status.allocatable", _ABSENT),
    ("neither: its warning", "status", {}),
    ("status null", "status", None),
    ("allocatable null: nothing, no warning", "status.allocatable", None),
    ("integer and float quantities", "status.allocatable", {"cpu": 4, "memory": 1.5, "pods": 110}),
    ("a resource kube-scheduler ignores: its warning", "status.allocatable", {"cpu": "4", "bogus": "1"}),
    ("extended and hugepages", "status.allocatable", {"nvidia.com/gpu": "8", "hugepages-2Mi": "1Gi"}),
    ("taints", "spec.taints", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                               {"key": "k", "effect": "NoExecute", "timeAdded": "2025-10-01T09:00:00Z"}]),
    ("a taint's value null", "spec.taints", [{"key": "k", "value": None, "effect": "PreferNoSchedule"}]),
    ("unschedulable", "spec.unschedulable", True),
    ("spec's other fields", "spec", {"podCIDR": "10.0.0.0/24", "providerID": "aws:///x", "externalID": 5}),
    ("images", "status.images", [{"names": ["a:1", "a@sha256:x"], "sizeBytes": 42}, {"names": ["b"]}]),
    ("images with fields decode_node does not check", "status.images", [{"names": ["a"], "x": [1, {"y": None}]}]),
    ("conditions", "status.conditions", [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                          "lastHeartbeatTime": "2025-10-01T09:00:00Z", "message": "m"}]),
    ("declared features", "status.declaredFeatures", ["InPlacePodVerticalScaling"]),
    ("status's other fields", "status.nodeInfo", {"kubeletVersion": "v1.34.1", "x": [None]}),
    ("no labels", "metadata.labels", _ABSENT),
    ("labels null", "metadata.labels", None),
    ("unicode and quotes", "metadata.labels", {"\u00e9t\u00e9": "caf\u00e9 \"x\" \\ \u2603"}),
    ("metadata's other fields", "metadata.annotations", {"kubectl.kubernetes.io/last-applied-configuration":
                                                         '{"kind":"Node","metadata":{"name":"n1"}}\n'}),
    ("metadata's managedFields (left out of raw)", "metadata.managedFields", [{"manager": "kubelet"}]),
]


@pytest.mark.parametrize("what,path,value", TAKEN, ids=[t[0] for t in TAKEN])
def test_the_fast_road_takes_valid_nodes(what, path, value):
    body = _with(path, value)
    data = orjson.dumps(load.kept_manifest(body))  # (the stream's JSON of a node lacks managedFields)
    assert _check(FastNodes(), body, data), what


@pytest.mark.parametrize("data", [
    b'{"apiVersion":"v1","kind":"Node","metadata":{"n\\u0061me":"n1"},"status":{"allocatable":{"cpu":"4"}}}',
    b'{"apiVersion":"v1","kind":"Node","metadata":{"name":"n\\u00e9"},"status":{"\\u0061llocatable":{"cpu":"4"}}}',
    b'{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"a\\/b":"c\\td"}},"status":{}}'])
def test_escapes_in_keys_and_strings_are_read_as_decode_node_reads_them(data):
    assert _check(FastNodes(), json.loads(data), data)


HANDED_OVER = [  # (what, field, value): what decode_node decides (its answer or its error)
    ("an unknown field", "spec.unscheduleable", True),
    ("an unknown status field", "status.imags", []),
    ("an unknown taint field", "spec.taints", [{"key": "k", "effect": "NoSchedule", "vale": "x"}]),
    ("a null taint", "spec.taints", [None]),
    ("a taint without a key", "spec.taints", [{"effect": "NoSchedule"}]),
    ("a taint's unknown effect", "spec.taints", [{"key": "k", "effect": "Sometimes"}]),
    ("a label null (decode_node reads \"\")", "metadata.labels", {"a": None}),
    ("a label a number", "metadata.labels", {"a": 1}),
    ("a quantity null", "status.allocatable", {"cpu": None}),
    ("a quantity a boolean", "status.allocatable", {"cpu": True}),
    ("a malformed quantity", "status.allocatable", {"cpu": "12x"}),
    ("a negative quantity", "status.allocatable", {"cpu": "-1"}),
    ("a declared feature null (decode_node reads \"\")", "status.declaredFeatures", [None]),
    ("an image's size a string", "status.images", [{"names": ["a"], "sizeBytes": "42"}]),
    ("unschedulable a string", "spec.unschedulable", "true"),
    ("a condition's status a boolean", "status.conditions", [{"type": "Ready", "status": True}]),
    ("a condition's type a number", "status.conditions", [{"type": 5, "status": "True"}]),
    ("a null condition", "status.conditions", [None]),
    ("no name", "metadata.name", ""),
    ("apiVersion v2", "apiVersion", "v2"),
    ("no apiVersion", "apiVersion", _ABSENT),
    ("a list's items", "items", []),
    ("managedFields (never in the stream's JSON)", "metadata.managedFields", [{"manager": "kubelet"}]),
]


@pytest.mark.parametrize("what,path,value", HANDED_OVER, ids=[t[0] for t in HANDED_OVER])
def test_what_the_fast_road_does_not_take_exactly_is_handed_over(what, path, value):
    body = _with(path, value)
    assert FastNodes().decode(orjson.dumps(body), "f.json", 3) is None, what


def test_nodes_of_one_file_share_what_repeats_and_tell_warnings_per_node(monkeypatch):
    """One FastNodes across a file's nodes (its memo of taints and images shared): each node decode_node's,
    each warning naming its own node; equal image lists are decode_node's one shared tuple, equal taint lists
    one tuple; a taint list refused once is refused again (nothing of a refusal is remembered)."""
    monkeypatch.setattr(load, "_IMAGES", {})  # (decode_node's memo of a process's first 256 image lists: room)
    fast = FastNodes()
    images = [{"names": ["img:1"], "sizeBytes": 7}]
    taints = [{"key": "k", "effect": "NoSchedule"}]
    bodies = [_with("metadata.name", f"n{i}", _with("spec.taints", taints, _with("status.images", images,
                                                                                  _with("status.allocatable", {
                                                                                      "cpu": "4", "bogus": "1"}))))
              for i in range(3)]
    got = [fast.decode(orjson.dumps(b), "f.json", 3) for b in bodies]
    for body, (node, warnings) in zip(bodies, got, strict=True):
        want = _decode_node(body)
        assert node == want[0] and warnings == want[1]
        assert warnings == [f"f.json: Node/{body['metadata']['name']}: status.allocatable.bogus: resource 'bogus' is "
                            f"not one kube-scheduler accounts for (not cpu, memory, ephemeral-storage, pods, extended or "
                            f"hugepages); it is ignored, as kube-scheduler ignores it"]
        assert node.images is want[0].images  # (decode_node's `_IMAGES`: one tuple for equal lists)
    assert got[0][0].taints is got[1][0].taints is got[2][0].taints
    bad = _with("spec.taints", [{"key": "k", "effect": "Sometimes"}])
    assert fast.decode(orjson.dumps(bad), "f.json", 3) is None
    assert fast.decode(orjson.dumps(bad), "f.json", 3) is None


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_files_nodes_stream_through_the_fast_road_to_the_reference_scenario(tmp_path, monkeypatch, suffix):
    """A file's nodes — YAML documents of their own, or a JSON list's items — are taken by FastNodes where it
    can (the odd one handed to decode_node, the refused one refused with decode_node's error), and the
    scenario is the reference reading's."""
    good = [_with("metadata.name", f"n{i}", body) for i, (_, path, value) in enumerate(TAKEN)
            if (body := _with(path, value))]
    odd = _with("metadata.name", "odd", _with("metadata.labels", {"a": None}))  # (decode_node: label "")
    docs = [*good, odd]
    path = tmp_path / f"nodes{suffix}"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}) if suffix == ".json" else
                    yaml.safe_dump_all(docs, sort_keys=False))
    with mock.patch.object(FastNodes, "_node", autospec=True, side_effect=FastNodes._node) as taken, \
            mock.patch.object(stream, "decode_node", wraps=load.decode_node) as handed:
        streamed = load_scenario([path])  # (`_node`: a node msgspec took; the odd one fails before it)
    monkeypatch.setenv("KUBEFIT_STREAM", "0")
    reference = load_scenario([path])
    assert taken.call_count == len(good) and handed.call_count == 1
    assert streamed == reference and streamed.nodes[-1].labels == {"a": ""}
    assert [raw_is_json(e.decoded) for e in stream.read_entries(path, pods=FastPods())] == [True] * len(docs)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_node_decode_node_refuses_is_refused_with_its_error(tmp_path, monkeypatch, suffix):
    docs = [_NODE, _with("metadata.name", "bad", _with("status.allocatable", {"cpu": "12x"}))]
    path = tmp_path / f"nodes{suffix}"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}) if suffix == ".json" else
                    yaml.safe_dump_all(docs, sort_keys=False))
    errors = []
    for setting in ("1", "0"):
        monkeypatch.setenv("KUBEFIT_STREAM", setting)
        with pytest.raises(InputError) as error:
            load_scenario([path])
        errors.append(str(error.value))
    assert errors[0] == errors[1] and "Node/bad" in errors[0] and "status.allocatable.cpu" in errors[0]
