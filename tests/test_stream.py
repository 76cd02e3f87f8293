"""The streaming reader gives what the reference reading gives (`kubefit.manifests.stream`).

The reference is `documents.read_documents` (YAML by `k8syaml`, JSON by `parse`) then `add_document`
(`decode_pod`, `decode_node`, …). Every property here holds the stream to it: the compiled reader's
values (or its fallback to the reference), `fastpod`'s pods (or its None), whole scenarios and their
errors on mutated inputs, both formats of a kubectl-like snapshot.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from unittest import mock

import msgspec
import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.core import raw_is_json
from kubefit.errors import InputError
from kubefit.manifests import k8syaml, stream
from kubefit.manifests.documents import Document
from kubefit.manifests.fastpod import FastPods, names_priority
from kubefit.manifests.load import Scenario, decode_node, decode_pod
from kubefit.manifests.scenario import load_scenario
from kubefit.scheduler.state import compile_state

sys.path.insert(0, str(Path(__file__).parent))
from fuzzing import mutate, seed_texts  # noqa: E402

_reader = pytest.importorskip("kubefit.manifests._reader")
FIXTURES = Path(__file__).parent / "fixtures"


def read_events(text: str | bytes, is_json: bool, fast: bool = True, prefetch: int = -1,
                objects: bool = False, cut_objects: bool = True) -> list[tuple]:
    """The compiled reader's events (raising Retry from the fast path, Fallback)."""
    reader = _reader.Reader(text.encode() if isinstance(text, str) else text, is_json, fast=fast, prefetch=prefetch,
                            objects=objects, cut_objects=cut_objects)
    out = []
    while (event := reader.next()) is not None:
        out.append(event)
    return out


def events(text: str | bytes, is_json: bool, objects: bool = False) -> list[tuple]:
    """The events (`objects`: as `stream` takes them): the fast path's, or where it retries, libyaml's."""
    try:
        return read_events(text, is_json, objects=objects)
    except _reader.Retry:
        return read_events(text, is_json, fast=False, objects=objects)


def _less_managed_fields(metadata: bytes) -> bytes:
    """A metadata member's JSON less `managedFields`, as `stream` left it out of a document's pod or node when it
    joined the members itself (before the reader held them: where the text names `"managedFields"`)."""
    if b'"managedFields"' not in metadata:
        return metadata
    body = orjson.loads(metadata)
    if isinstance(body, dict):
        body.pop("managedFields", None)
        return orjson.dumps(body)
    return metadata


def as_objects(got: list[tuple], cut: bool = True) -> list[tuple]:
    """The events of Reader(..., objects=True) expected from those without (`got`): a mapping document's
    "map", members and "end", with no `items` sequence between, as one ("object", json, kind) — its members
    joined as `stream` joined them before the reader held them (`cut`: a Pod's or Node's metadata less
    managedFields), its kind its `kind` member's string (under 64 bytes) —, every other event as it is. A
    mapping cut short by an error (nothing after its members) is left out: the reader held it."""
    out: list[tuple] = []
    i = 0
    while i < len(got):
        if got[i] != ("map",):
            out.append(got[i])
            i += 1
            continue
        j = i + 1
        while j < len(got) and got[j][0] == "member":
            j += 1
        if j == len(got):
            break
        if got[j] != ("end",):  # a list: its events as they are
            out += got[i:j]
            i = j
            continue
        members = {key: value for _, key, value in got[i + 1:j]}
        kind = json.loads(members["kind"]) if "kind" in members else None
        kind = kind if isinstance(kind, str) and len(kind.encode("utf-8", "surrogatepass")) < 64 else None
        cutting = cut and kind in ("Pod", "Node")
        text = b"{" + b",".join(orjson.dumps(k) + b":" + (_less_managed_fields(v) if cutting and k == "metadata" else v)
                                for k, v in members.items()) + b"}"
        out.append(("object", text, kind))
        i = j + 1
    return out


def _pairs(value):
    """A JSON value with its objects' members as lists of pairs, in order."""
    if isinstance(value, dict):
        return [(k, _pairs(v)) for k, v in value.items()]
    return [_pairs(v) for v in value] if isinstance(value, list) else value


def same_objects(held: list[tuple], got: list[tuple], cut: bool = True) -> bool:
    """Whether the events of Reader(..., objects=True) are `as_objects(got)`: the objects' texts compared as
    their members and values in order (stream joined a metadata less managedFields as orjson writes it)."""
    def shown(events: list[tuple]) -> list[tuple]:
        return [(e[0], _pairs(json.loads(e[1])), e[2]) if e[0] == "object" else e for e in events]

    return shown(held) == shown(as_objects(got, cut))


def outcome(path: Path, streamed: bool):
    """`load_scenario` of one file, by the stream (every file) or by the reference: the scenario, or the
    error's type and text."""
    with mock.patch.dict(os.environ, {"KUBEFIT_STREAM": "always" if streamed else "0"}):
        try:
            return load_scenario([path])
        except Exception as exc:  # noqa: BLE001 - compared, whatever it is
            return type(exc).__name__, str(exc)


# --------------------------------------------------------------------------- scalars

PLAIN = st.one_of(
    st.sampled_from([s[0] for s in __import__("test_k8syaml").SCALARS] + [
        "0x", "0xg", "+0b1", "-0o7", "1_", "_1", "1__2", "0_7", "1.5e+3", "1E-2", "+.5", "-.5e1", "00", "007",
        "0.0", "-0.0", "1e20", "1e21", "123456789012345678", "4294967296", "-9223372036854775808", "0b" + "1" * 64,
        "0x" + "f" * 16, "1:2:3", "y2k", "no-no", "on_off", "~x", ".", "..5", "1.2.3", "+", "-", "0o", "0b2"]),
    st.from_regex(r"[-+]?[0-9_]{1,22}(\.[0-9_]{0,5})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[-+.0-9a-fA-FxXoObB_~yYnN]{1,8}", fullmatch=True),
)


def _reference_value(text: str):
    try:
        return k8syaml.scalar_value(k8syaml._PLAIN, text)
    except Exception as exc:  # noqa: BLE001
        return exc


@settings(max_examples=600, deadline=None)
@given(PLAIN)
def test_plain_scalars_resolve_as_the_reference_or_fall_back(text):
    """The compiled reader's go-yaml resolution (resolve.go) of a plain scalar, as value and as key."""
    if any(c in text for c in "#:,[]{}&*!|>'\"%@`") or text != text.strip() or text.startswith(("-", "?")) and \
            len(text) > 1 and text[1] == " ":
        return
    want = _reference_value(text)
    try:
        got = events(f"v: {text}\n", False)
    except _reader.Fallback:
        return  # the reference reading takes over
    value = json.loads(got[1][2])
    assert not isinstance(want, k8syaml.Refused), (text, value)
    assert type(value) is type(want) and value == want, (text, value, want)
    try:
        key = events(f"{text}: v\n", False)[1][1]
    except _reader.Fallback:
        return
    assert key == k8syaml.json_key(k8syaml.go_scalar(k8syaml._PLAIN, text), text)


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.sampled_from(["yes", "n", "0777", "1e3", "=", "2024-01-31", "1:20", "~", "null",
                                              "a: b", "- x", "#c", "\t", "\r\n", "é", "\u2028", "---", "..."]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=6), VALUES, max_size=5).filter(lambda body: "items" not in body),
       st.booleans(), st.sampled_from([None, 2, 4]))
def test_documents_are_the_reference_documents(body, flow, indent):
    """Any document, as PyYAML writes it (block or flow) and as JSON: the compiled reader's members are
    the reference reading's values (or it falls back)."""
    texts = [yaml.safe_dump(body, default_flow_style=flow, allow_unicode=True), json.dumps(body, indent=indent)]
    for text in texts:
        is_json = stream._JSON_START.match(text) is not None  # `{…}` is JSON to kubectl, flow YAML or not
        from kubefit.manifests.parse import parse_bodies

        try:
            want = parse_bodies(text, "t")
        except InputError:
            want = None
        try:
            got = events(text, is_json)
        except _reader.Fallback:
            continue
        assert want is not None, text
        members = {e[1]: msgspec.json.decode(e[2]) for e in got if e[0] == "member"}
        assert [members] == want and json.dumps(members) == json.dumps(want[0]), text
        held = events(text, is_json, objects=True)  # the document held whole: the same members, in order
        assert same_objects(held, got) and held[0][0] == "object", text
        assert json.dumps(json.loads(held[0][1])) == json.dumps(want[0]), text


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n", "a: !!int 1\n", "<<: {a: 1}\n", "a: 1\na: 2\n", "a: 9223372036854775808\n", "a: .inf\n",
    "? [a]\n: 1\n", "~: 1\n", "1.5: x\n", "a:\n  b: [1\n", "--- x\n", "a: " + "[" * 120 + "]" * 120 + "\n",
])
def test_what_only_the_reference_reads_falls_back(text):
    with pytest.raises(_reader.Fallback):
        events(text, False)


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e999}', '{"a": 9223372036854775808}', '{"a": "\\ud800"}',
    '{"a": 1,}', '{"a": "\x01"}', '{"\\u0061": 1, "a": 2}', "[" * 120 + "]" * 120,
])
def test_json_only_the_reference_reads_falls_back(text):
    with pytest.raises(_reader.Fallback):
        events(text, True)


SPECIALS = ['\\"', "\\\\", "\\n", "\\u00e9", "\u00e9", "\u20ac", "\U0001f600"]


@pytest.mark.parametrize("special", SPECIALS)
def test_json_strings_are_kept_whatever_the_position_of_an_escape_or_a_multibyte_character(special):
    """The reader skips plain string bytes eight at a time (`word_special`): an escape or a multi-byte UTF-8
    character at any offset of a word, and a string's end at any offset, must still be read one by one.
    Every (length, position) up to 24 bytes: the item is the JSON text itself, read back equal."""
    for length in range(25):
        for at in range(length + 1):
            body = "x" * at + special + "y" * (length - at)
            text = '{"items": [{"kind": "Pod", "k' + "z" * length + '": "' + body + '"}]}'
            item = [e for e in events(text, True) if e[0] == "item"][0]
            assert json.loads(item[1]) == json.loads(text)["items"][0]


@pytest.mark.parametrize("bad", ["\x01", "\x1f", "\n"])
def test_a_control_character_at_any_position_of_a_json_string_falls_back(bad):
    for at in range(17):
        with pytest.raises(_reader.Fallback):
            events('{"a": "' + "x" * at + bad + "x" * 9 + '"}', True)


def test_managed_fields_are_left_out_of_pods_and_nodes_only():
    text = json.dumps({"kind": "List", "items": [
        {"kind": "Pod", "metadata": {"managedFields": [{"m": 1}], "name": "p"}},
        {"kind": "Node", "metadata": {"name": "n", "managedFields": []}},
        {"kind": "ConfigMap", "metadata": {"name": "c", "managedFields": []}}]})
    items = [json.loads(e[1]) for e in events(text, True) if e[0] == "item"]
    assert items == [{"kind": "Pod", "metadata": {"name": "p"}}, {"kind": "Node", "metadata": {"name": "n"}},
                     {"kind": "ConfigMap", "metadata": {"name": "c", "managedFields": []}}]


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_documents_pods_and_nodes_are_the_references_less_managed_fields(tmp_path, suffix):
    """Pods and nodes that are documents of their own (not a list's items: the reader holds a document's
    members and gives it as one JSON text) decode to the reference's objects, their `raw` less managedFields,
    key order kept."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "managedFields": [{"manager": "m"}],
                                                           "labels": {"app": "a"}},
           "spec": {"priority": 5, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"managedFields": [], "name": "n1"},
            "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
    docs = [pod, node, {**pod, "metadata": {"name": "q"}}]
    path = tmp_path / f"objects{suffix}"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs) if suffix == ".json" else
                    yaml.safe_dump_all(docs, sort_keys=False))
    streamed, reference = outcome(path, True), outcome(path, False)
    assert isinstance(streamed, Scenario) and streamed == reference
    if suffix == ".yaml":  # decoded as the stream reads them: fastpod's pods, decode_node's node, their raw JSON
        entries = stream.read_entries(path, pods=FastPods())
        assert [raw_is_json(e.decoded) for e in entries] == [True, True, True]
    assert [list(p.raw["metadata"]) for p in streamed.pods] == [["name", "labels"], ["name"]]
    assert list(streamed.nodes[0].raw) == ["kind", "apiVersion", "metadata", "status"]
    assert streamed.nodes[0].raw["metadata"] == {"name": "n1"}


@pytest.mark.parametrize("after", [True, False])
def test_a_lists_members_after_its_items_give_its_kind_as_before_them(tmp_path, after):
    """A `NodeList` whose `kind` (and apiVersion) come after its `items`: its kind-less items are Nodes all the
    same (the stream keeps the members on both sides of the items: `documents._typed_item`), as the reference
    reads them."""
    items = "items:\n- metadata:\n    name: n1\n  status:\n    allocatable:\n      cpu: '4'\n"
    head = "apiVersion: v1\nkind: NodeList\n"
    path = tmp_path / "list.yaml"
    path.write_text(items + head if after else head + items)
    streamed = outcome(path, True)
    assert isinstance(streamed, Scenario) and [n.name for n in streamed.nodes] == ["n1"]
    assert streamed == outcome(path, False)


def test_a_documents_text_kept_as_raw_is_no_larger_than_it_is(tmp_path, monkeypatch):
    """The JSON text the stream writes of a YAML document's node (kept as its `raw`) takes what it holds: 500
    small nodes hold well under 2 KiB each (orjson's output bytes, kept, took 4 KiB each whatever their length:
    150,000 pods of a snapshot written as YAML would have kept 600 MB more)."""
    import tracemalloc

    path = tmp_path / "nodes.yaml"
    path.write_text("".join(f"apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i}\nstatus:\n  allocatable:\n"
                            f"    cpu: '4'\n    pods: '110'\n---\n" for i in range(500)))
    monkeypatch.setenv("KUBEFIT_STREAM", "always")
    stream.read_entries(path, pods=FastPods())  # (the caches of a first reading)
    tracemalloc.start()
    try:
        entries = stream.read_entries(path, pods=FastPods())
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(entries) == 500 and all(raw_is_json(e.decoded) for e in entries)
    assert held < 500 * 2048


# --------------------------------------------------------------------------- documents that are objects

_MANAGED = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]
_OBJECTS = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"managedFields": _MANAGED, "name": "n1", "labels": {"z": "a"}},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "managedFields": _MANAGED}},
    {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "team", "managedFields": []},
     "data": {"k": "v"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team",
                                                                 "managedFields": _MANAGED},
     "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
         "metadata": {"labels": {"app": "web"}, "managedFields": []},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team", "managedFields": _MANAGED,
                                                     "labels": {"app": "p"}},
     "spec": {"priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bound", "namespace": "team"},
     "spec": {"nodeName": "n1", "priority": 0, "containers": [{"name": "c"}]}},
]


def _objects_file(tmp_path: Path, docs: list, suffix: str) -> Path:
    """`docs` as a multi-document YAML file (as kubectl's YAML writes them) or a stream of JSON objects."""
    path = tmp_path / f"objects{suffix}"
    if suffix == ".json":
        path.write_text("".join(json.dumps(d, indent=i % 3) + "\n" for i, d in enumerate(docs)))
    else:
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False))
    return path


def _both_paths(path: Path) -> list:
    """`outcome` of the stream by the fast path (where it reads the file) and by libyaml alone
    (KUBEFIT_YAML_FAST=0), each equal to the reference's; the scenario (or error)."""
    reference = outcome(path, False)
    for fast in ("1", "0"):
        with mock.patch.dict(os.environ, {"KUBEFIT_YAML_FAST": fast}):
            assert outcome(path, True) == reference, fast
    return reference


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_objects_of_many_kinds_are_the_references(tmp_path, suffix):
    """Documents of several kinds with managedFields (first in a node's metadata, and deeper down in a
    template, where it stays): the stream's scenario is the reference's; the pods and nodes came whole,
    decoded by fastpod and fastnode, their `raw` less managedFields and nothing else."""
    path = _objects_file(tmp_path, _OBJECTS, suffix)
    scenario = _both_paths(path)
    assert isinstance(scenario, Scenario) and {"p", "bound"} <= {p.name for p in scenario.pods}
    entries = stream.read_entries(path, pods=FastPods())
    decoded = [e.decoded for e in entries if e.decoded is not None]
    assert [type(d).__name__ for d in decoded] == ["Node", "Pod", "Pod"] and all(raw_is_json(d) for d in decoded)
    want = [{**d, "metadata": {k: v for k, v in d["metadata"].items() if k != "managedFields"}}
            for d in _OBJECTS if d["kind"] in ("Node", "Pod")]
    assert [json.dumps(d.raw) for d in decoded] == [json.dumps(w) for w in want]  # (key order kept)
    docs = [e.doc.body for e in entries if e.doc is not None]
    assert docs == [d for d in _OBJECTS if d["kind"] not in ("Node", "Pod")]  # (managedFields kept)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_documents_read_alone_keep_managed_fields(tmp_path, suffix):
    """Where nothing is decoded here (`read_documents`: a fleet's files, `config`...), every document is the
    reference's, managedFields included, pods' and nodes' too (the reader leaves it in: cut_objects=False)."""
    from kubefit.manifests import documents

    path = _objects_file(tmp_path, _OBJECTS, suffix)
    with mock.patch.dict(os.environ, {"KUBEFIT_STREAM": "always"}):
        streamed = stream.read_documents(path)
    assert [d.body for d in streamed] == [d.body for d in documents.read_documents(path)] == _OBJECTS
    assert [json.dumps(d.body) for d in streamed] == [json.dumps(d) for d in _OBJECTS]


_ODD = {  # (name: YAML text, JSON text) — each read by the stream as the reference reads it, scenario or error
    "a duplicate key inside an object": (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\nspec: {containers: [{name: c}]}\n",
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "name": "q"}, "spec": {}}'),
    "a duplicate top-level key after the metadata": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nkind: Node\n",
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "kind": "Node"}'),
    "an items key that is not a sequence": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nitems: 5\n",
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "items": {"a": 1}}'),
    "items null": ("apiVersion: v1\nkind: List\nitems:\n", '{"apiVersion": "v1", "kind": "List", "items": null}'),
    "a List without items": ("apiVersion: v1\nkind: List\n", '{"apiVersion": "v1", "kind": "List"}'),
    "a List whose items come last": (
        "kind: NodeList\napiVersion: v1\nmetadata: {resourceVersion: '1'}\nitems:\n- metadata: {name: n1}\n"
        "  status: {allocatable: {cpu: '2'}}\n",
        '{"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": [{"metadata": {"name": "n1"}, '
        '"status": {"allocatable": {"cpu": "2"}}}]}'),
    "a List whose items come first": (
        "items:\n- metadata: {name: n1}\n  status: {allocatable: {cpu: '2'}}\nkind: NodeList\napiVersion: v1\n",
        '{"items": [{"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2"}}}], "kind": "NodeList", '
        '"apiVersion": "v1"}'),
    "a List between objects, members on both sides": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {allocatable: {cpu: '1'}}\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1, managedFields: []}\n"
        "  status: {allocatable: {cpu: '2'}}\nmetadata: {}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n",
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}, "status": {"allocatable": {"cpu": "1"}}}'
        '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": '
        '{"name": "n1", "managedFields": []}, "status": {"allocatable": {"cpu": "2"}}}], "metadata": {}}'
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}'),
    "an empty mapping": ("{}\n", "{}"),
    "an empty mapping between objects": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n---\n{}\n---\nkind: Namespace\n",
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}} {} {"kind": "Namespace"}'),
    "a kind that is not a string": ("apiVersion: v1\nkind: 5\nmetadata: {name: x}\n",
                                    '{"apiVersion": "v1", "kind": ["Pod"], "metadata": {"name": "x"}}'),
    "an escaped kind and an escaped managedFields key": (
        "apiVersion: v1\nkind: \"\\x50od\"\nmetadata: {name: p}\nspec: {priority: 0, containers: [{name: c}]}\n",
        '{"apiVersion": "v1", "kind": "P\\u006fd", "metadata": {"name": "p", "managedField\\u0073": []}, '
        '"spec": {"priority": 0, "containers": [{"name": "c"}]}}'),
    "a bad pod after a good one": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: 5}\n",
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}}'
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": 5}}'),
    "an anchor in an object": ("apiVersion: v1\nkind: Node\nmetadata: &m {name: n}\n", None),
    "an explicit key (the fast path retries)": (
        "apiVersion: v1\nkind: Node\n? metadata\n: name: n\nstatus: {allocatable: {cpu: '1'}}\n", None),
}


@pytest.mark.parametrize(("case", "suffix"), [(case, suffix) for case in sorted(_ODD) for suffix in (".yaml", ".json")
                                               if _ODD[case][suffix == ".json"] is not None])
def test_odd_objects_and_lists_are_the_references(tmp_path, case, suffix):
    """Objects the reader holds and gives whole, lists it gives member by member (their held members
    first), and what is refused on the way: the stream's scenario or error is the reference reading's,
    by the fast path and by libyaml alone."""
    text = _ODD[case][suffix == ".json"]
    path = tmp_path / f"odd{suffix}"
    path.write_text(text)
    _both_paths(path)


def test_the_reader_gives_objects_whole_and_lists_member_by_member():
    """The events of Reader(..., objects=True) on a stream of documents, in both formats: objects whole (a
    pod's and a node's managedFields left out where stream left it out, an escaped kind unescaped), a list
    as without objects (its members before the items first, as they were written), the rest as it was."""
    docs = [_OBJECTS[0], {"kind": "List", "metadata": {"managedFields": []}, "items": [_OBJECTS[4]], "z": 1}, {},
            {"kind": "ConfigMap", "items": 5}, _OBJECTS[2], {"items": [], "kind": "List"}, [1], "x", None]
    texts = ["---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs[:-1]), "\n".join(json.dumps(d) for d in docs)]
    texts.append('{"kind": "P\\u006fd", "metadata": {"managedField\\u0073": [], "name": "a"}} '
                 '{"kind": "N\\u006fde", "metadata": {"name": "b", "managedField\\u0073": [], "x": {"managedFields": 1}}}'
                 ' {"kind": "' + "K" * 63 + '"} {"kind": "' + "K" * 64 + '"} {"kind": "\\u00e9"}')
    for is_json, text in zip((False, True, True), texts, strict=True):
        got = events(text, is_json)
        held = events(text, is_json, objects=True)
        assert same_objects(held, got) and [e[0] for e in held if e[0] == "object"], text
        whole = events(text, is_json, objects=True) if is_json else read_events(text, False, fast=False, objects=True)
        assert whole == held
        kept = read_events(text, is_json, fast=False, objects=True, cut_objects=False)
        assert same_objects(kept, got, cut=False)
    held = events(texts[2], True, objects=True)
    assert [(json.loads(e[1])["metadata"], e[2]) for e in held[:2]] == [
        ({"managedField\u0073": [], "name": "a"}, "Pod"), ({"name": "b", "x": {"managedFields": 1}}, "Node")]
    assert [e[2] for e in held[2:]] == ["K" * 63, None, "\u00e9"]


def test_a_large_object_is_checked_against_the_address_space_left(tmp_path, monkeypatch):
    """A document of 2 MiB (a ConfigMap) held whole, after a small one: before it is decoded the stream
    checks that 32 times its size (64 MiB, and a margin) is still free below the address-space limit
    (`_Headroom`; the first check, at the small document, asks 32 MiB). With 48 MiB left (and the margin)
    the file is one out-of-memory error, with 160 MiB it is read as the reference reads it."""
    path = tmp_path / "big.yaml"
    data = "".join(f"  k{i}: {'v' * 1000}\n" for i in range(2048))
    path.write_text(f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: a}}\n---\napiVersion: v1\nkind: ConfigMap\n"
                    f"metadata:\n  name: big\ndata:\n{data}")
    monkeypatch.setenv("KUBEFIT_STREAM", "always")

    def limited(left: int):
        def init(self):
            self.pending = 1 << 20
            with open("/proc/self/statm", "rb") as fh:
                self.limit = int(fh.read().split()[0]) * stream.mmap.PAGESIZE + left
        return init

    monkeypatch.setattr(stream._Headroom, "__init__", limited(stream._Headroom.MARGIN + (48 << 20)))
    with pytest.raises(InputError, match=r"big.yaml: not enough memory to read it"):
        stream.read_entries(path)
    monkeypatch.setattr(stream._Headroom, "__init__", limited(stream._Headroom.MARGIN + (160 << 20)))
    assert [e.doc.body for e in stream.read_entries(path)] == [d.body for d in outcome_documents(path)]


def outcome_documents(path: Path) -> list[Document]:
    from kubefit.manifests import documents

    return documents.read_documents(path)


def test_a_fleets_clusters_share_their_resource_models(tmp_path):
    """Karmada Clusters, each a document held whole: the fleet is the reference's, and equal
    `spec.resourceModels` are one list (`_shared_models`), others their own."""
    from kubefit.multicluster.fleet import load_fleet

    models = [{"grade": g, "ranges": [{"name": "cpu", "min": str(g), "max": str(g + 1)}]} for g in range(3)]
    clusters = [{"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": f"m{i}"},
                 "spec": {"syncMode": "Push", "resourceModels": models if i != 2 else models[:2]},
                 "status": {"resourceSummary": {"allocatable": {"cpu": "8"}}}} for i in range(4)]
    for suffix in (".yaml", ".json"):
        path = _objects_file(tmp_path, clusters, suffix)
        with mock.patch.dict(os.environ, {"KUBEFIT_STREAM": "always"}):
            docs = stream.read_documents(path)
            fleet = load_fleet([path])
        assert [d.body for d in docs] == clusters
        shared = [d.body["spec"]["resourceModels"] for d in docs]
        assert shared[0] is shared[1] is shared[3] and shared[2] is not shared[0]
        with mock.patch.dict(os.environ, {"KUBEFIT_STREAM": "0"}):
            assert fleet == load_fleet([path])


# --------------------------------------------------------------------------- JSON's prefetch thread

def _outcome(data: bytes, prefetch: int, pause: float = 0.0, objects: bool = False, is_json: bool = True,
             fast: bool = True) -> tuple[list[tuple], object, list[int], tuple[int, int]]:
    """Every event of the reader (JSON, or YAML by its fast path or not), the exception that ended it (type
    and text, or None), the positions it told after each event and how many items and members the fast
    path read; `pause` seconds after the third event, so that the thread reads ahead as far as it may."""
    reader = _reader.Reader(data, is_json, fast=fast, prefetch=prefetch, objects=objects)
    out: list[tuple] = []
    positions: list[int] = []
    error = None
    try:
        while (event := reader.next()) is not None:
            out.append(event)
            positions.append(reader.position)
            if pause and len(out) == 3:
                time.sleep(pause)
    except (_reader.Fallback, _reader.Retry, MemoryError) as exc:
        error = (type(exc).__name__, str(exc))
    return out, error, positions, (reader.fast_items, reader.fast_members)


LISTS = st.lists(st.dictionaries(st.sampled_from(["kind", "metadata", "a", "items"]),
                                 st.sampled_from(["Pod", "Node", "List", "x"]) | VALUES, max_size=4), max_size=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LISTS, min_size=1, max_size=3), st.booleans(), st.integers(0, 10**6), st.sampled_from(
    ["", "x", "}", "]", ",", '"', "\\", "{", '"a":1,"a":2', "\x01"]))
def test_items_read_ahead_are_the_readers_own(lists, as_list, cut, insert):
    """A JSON stream of lists (`{"items": [...]}` or top-level arrays), whole or broken at any byte (cut
    short, or something inserted there): the reader with its prefetch thread gives the events, the error
    (type, reason and line) and, after the list, the positions the reader alone gives."""
    text = "\n".join(json.dumps({"kind": "List", "items": items} if as_list else items, indent=1)
                      for items in lists)
    at = cut % (len(text) + 1)
    for broken in (text, text[:at], text[:at] + insert + text[at:]):
        data = broken.encode("utf-8", "surrogatepass")
        alone, ahead = _outcome(data, -1), _outcome(data, 0)
        assert ahead[:2] == alone[:2], broken
        assert ahead[2][-1:] == alone[2][-1:] and ahead[2] == sorted(ahead[2])
        held = _outcome(data, 0, objects=True)  # (a list: its members first, then its items; objects whole)
        assert held[1] == alone[1] and same_objects(held[0], alone[0]), broken


def _big_list(items: int, bad: int | None = None) -> bytes:
    """A kubectl-like List of pods (with managedFields), ≈ 600 bytes each; item `bad` with a key twice."""
    pods = []
    for i in range(items):
        pod = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"p{i}", "namespace": "default", "managedFields": [{"manager": "kubelet", "n": i}],
            "labels": {"app": f"a{i % 7}", "text": "x" * (i % 300)}}, "spec": {"containers": [{"name": "c"}]}},
            indent=2)
        pods.append(pod.replace('"name": "c"', '"name": "c", "name": "d"') if i == bad else pod)
    return ('{"apiVersion": "v1", "kind": "List", "items": [\n' + ",\n".join(pods) + '\n], "metadata": {}}').encode()


@pytest.mark.parametrize("bad", [None, 0, 40_000, 69_999])
def test_a_large_list_read_ahead_is_the_readers_own(bad):
    """70,000 items (≈ 40 MB: many batches; the consumer pauses so that the thread reaches its limit of
    bytes read ahead and waits): the same events, positions and error (where the key is given twice: at
    the first item, in the middle, at the last) as the reader alone."""
    data = _big_list(70_000, bad)
    alone = _outcome(data, -1)
    ahead = _outcome(data, 0, pause=0.3)
    assert ahead == alone
    assert (alone[1] is None) == (bad is None) and len([e for e in alone[0] if e[0] == "item"]) == (70_000 if bad is None else bad)


def _os_threads() -> int:
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("Threads:")).split()[1])


def test_a_reader_let_go_while_its_thread_reads_ahead_stops_it():
    """Readers dropped after a few items, their threads waiting (bytes ahead at the limit) or still
    reading: no hang, every thread ended (the process has as many as before), and the buffer released
    (the mapping closes: BufferError if a reader still held it)."""
    import mmap
    import tempfile

    data = _big_list(70_000)
    before = _os_threads()
    with tempfile.TemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        for taken, pause in ((5, 0.3), (6, 0.0), (100, 0.3), (30_000, 0.0)):  # (the 5th event: the first item)
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            reader = _reader.Reader(mapped, True, prefetch=0)
            for _ in range(taken):
                reader.next()
            time.sleep(pause)
            assert _os_threads() == before + 1
            del reader
            mapped.close()
            assert _os_threads() == before


# --------------------------------------------------------------------------- documents read ahead (YAML, JSON)

DOCUMENTS = st.lists(st.one_of(
    st.dictionaries(st.sampled_from(["kind", "metadata", "a", "spec"]), st.sampled_from(["Pod", "Node", "x"]) | VALUES,
                    min_size=1, max_size=4),  # an object (the thread's)
    st.fixed_dictionaries({"kind": st.just("List"), "items": st.lists(
        st.dictionaries(st.sampled_from(["kind", "a"]), st.sampled_from(["Pod", "x"]), max_size=2), max_size=3)}),
    st.none() | st.integers(-3, 3) | st.lists(st.integers(0, 3), max_size=2)),  # the reader's own
    min_size=1, max_size=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS, st.booleans(), st.integers(0, 10**6), st.sampled_from(
    ["", "x", "\n", "---\n", "a: 1\n", "a: 1\na: 2\n", "!t ", "&a ", "*a", "\t", "  ", "{", '"', "items:\n- x\n",
     "\n...\n", "#c\n", "- ", "a: [" * 60 + "\n"]))
def test_documents_read_ahead_are_the_readers_own(docs, explicit, cut, insert):
    """A stream of documents — objects (the thread's), Lists, sequences, scalars (given back to the reader:
    it reads them itself, then the thread reads on) — as YAML (PyYAML's block style, by the fast path and
    by libyaml alone) and as JSON documents, whole or broken at any byte (cut short, or something inserted
    there: a key twice, a tag, an anchor, a separator, nesting beyond the bound...): with its thread
    reading the documents ahead, the reader gives the events, the error (type, reason and line; a Retry
    where the fast path gives up), the positions and the fast path's counts that it gives alone."""
    texts = [yaml.safe_dump_all(docs, default_flow_style=False, sort_keys=False, explicit_start=explicit),
             "\n".join(json.dumps(doc, indent=1 if explicit else None) for doc in docs)]
    at = cut % (len(texts[0]) + 1)
    for i, text in enumerate(texts):
        for broken in (text, text[:at], text[:at] + insert + text[at:]):
            data = broken.encode("utf-8", "surrogatepass")
            for fast in (True, False) if not i else (True,):
                alone = _outcome(data, -1, objects=True, is_json=bool(i), fast=fast)
                assert _outcome(data, 0, objects=True, is_json=bool(i), fast=fast) == alone, broken


def _pod_document(i: int) -> str:
    """A pod as kubectl writes it in a multi-document file (≈ 540 bytes, managedFields included)."""
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  managedFields:\n  - manager: kubectl\n    operation: Update\n"
            f"  name: p{i}\n  namespace: default\n  labels:\n    app: a{i % 7}\n    text: '{'x' * (i % 300)}'\n"
            f"spec:\n  containers:\n  - image: registry.k8s.io/pause:3.9\n    name: c\n    resources:\n"
            f"      requests:\n        cpu: 100m\n        memory: {i % 50 + 1}Mi\n  schedulerName: default-scheduler\n")


_START = "---\napiVersion: v1\n"
_NAMESPACE = "  namespace: default\n"
BAD_DOCUMENTS = {  # what changes in one document: (its text, the text instead, the fast path's error, libyaml's)
    "a key twice": (_NAMESPACE, "  name: again\n", "Retry", "Fallback"),
    "an anchor": (_NAMESPACE, "  namespace: &n default\n", "Retry", "Fallback"),
    "a tag": (_NAMESPACE, "  namespace: !t default\n", "Retry", "Fallback"),
    "nested beyond the bound": (_NAMESPACE, "  namespace: " + "[" * 120 + "]" * 120 + "\n", "Retry", "Fallback"),
    "a List among objects": (_START, "---\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: l}\n---\n- 1\n- 2\n"
                             "---\n7\n" + _START, None, None),
    "empty documents": (_START, "---\n---\n# only a comment\n---\n" + _START, None, None),
}


def _documents(n: int, bad: int | None = None, what: str = "") -> bytes:
    """`n` pod documents; document `bad` changed as BAD_DOCUMENTS[what] says."""
    docs = [_pod_document(i) for i in range(n)]
    if bad is not None:
        old, new = BAD_DOCUMENTS[what][:2]
        docs[bad] = docs[bad].replace(old, new)
    return "".join(docs).encode()


@pytest.mark.parametrize(("what", "bad"), [(None, None)] + [(w, b) for w in BAD_DOCUMENTS for b in (0, 1500, 2999)])
def test_many_documents_read_ahead_are_the_readers_own(what, bad):
    """3,000 pod documents (≈ 1.6 MB: batches of growing size), one of them bad — at the first, a middle or
    the last document: a key given twice, an anchor, a tag, nesting beyond 100; or before it a List, a
    sequence and a scalar document, or empty ones —: by the fast path and by libyaml, with the thread
    reading ahead, the same events, error, positions and counts as the reader alone. Hand-counted: the
    error after exactly the `bad` pods before it, a Retry on the fast path and a Fallback on libyaml's;
    the fast path's members 4 a pod (apiVersion, kind, metadata, spec), the bad one's 2 before its
    metadata, the List's `kind` (its items and the other documents are libyaml's)."""
    data = _documents(3000, bad, what)
    for fast in (True, False):
        alone = _outcome(data, -1, objects=True, is_json=False, fast=fast)
        assert _outcome(data, 0, pause=0.05, objects=True, is_json=False, fast=fast) == alone
        error = None if what is None else BAD_DOCUMENTS[what][2 if fast else 3]
        assert (alone[1] or (None,))[0] == error
        pods = [e for e in alone[0] if e[0] == "object" and e[2] == "Pod"]
        assert len(pods) == (3000 if error is None else bad)
        members = 4 * len(pods) + (2 if error else 1 if what == "a List among objects" else 0)
        assert alone[3] == (0, members if fast else 0)
    if what == "a List among objects":  # read by the reader itself, between the thread's documents
        assert [e[0] for e in alone[0][bad:bad + 8]] == ["map", "member", "items", "item", "end_items", "end", "seq",
                                                          "item"]
        assert alone[0][bad + 8:bad + 11] == [("item", b"2", None), ("end",), ("scalar", b"7")] and alone[0][bad + 11][0] == "object"


def test_a_file_ending_without_a_line_break_is_read_ahead_as_alone():
    """The last document's last line without its line break, on both paths: the same events."""
    data = _documents(50).rstrip(b"\n")
    for fast in (True, False):
        alone = _outcome(data, -1, objects=True, is_json=False, fast=fast)
        assert alone[1] is None and len(alone[0]) == 50
        assert _outcome(data, 0, objects=True, is_json=False, fast=fast) == alone


def test_documents_read_ahead_wait_at_the_limit_and_stop_when_let_go():
    """45,000 documents (≈ 22 MB, their JSON ≈ 19 MB: more than the thread may hold ahead): with the consumer pausing, the
    thread waits at its limit and the events are the reader's own; readers dropped after a few events,
    the thread waiting or reading, end it (as many threads as before) and release the buffer (the mapping
    closes: BufferError if a reader still held it)."""
    import mmap
    import tempfile

    data = _documents(45_000)
    assert len(data) > 16 << 20
    alone = _outcome(data, -1, objects=True, is_json=False)
    assert _outcome(data, 0, pause=0.3, objects=True, is_json=False) == alone
    before = _os_threads()
    with tempfile.TemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        for taken, pause in ((1, 0.3), (2, 0.0), (100, 0.3), (1_000, 0.0)):  # (the thread holds ≤ 17 MB ahead)
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            reader = _reader.Reader(mapped, False, prefetch=0, objects=True)
            for _ in range(taken):
                assert reader.next()[0] == "object"
            time.sleep(pause)
            assert _os_threads() == before + 1
            del reader
            mapped.close()
            assert _os_threads() == before


def test_a_child_forked_while_documents_are_read_ahead_neither_hangs_nor_goes_on():
    """A process forked while the thread reads ahead: the child has no thread, so its reader hands out what
    it already held, then refuses to go on (RuntimeError), and lets go of it without waiting for a thread;
    the parent reads on, its events the reader's own."""
    data = _documents(45_000)
    reader = _reader.Reader(data, False, prefetch=0, objects=True)
    first = [reader.next() for _ in range(3)]
    pid = os.fork()
    if pid == 0:  # (the child: its exit status says what it saw)
        status = 3
        try:
            while reader.next() is not None:
                pass
        except RuntimeError as exc:
            status = 0 if "forked" in str(exc) else 4
        except BaseException:  # noqa: BLE001 - told by the status
            status = 5
        del reader
        os._exit(status)
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert done[0] == pid and os.waitstatus_to_exitcode(done[1]) == 0
    rest = []
    while (event := reader.next()) is not None:
        rest.append(event)
    assert first + rest == _outcome(data, -1, objects=True, is_json=False)[0]


def test_a_retry_among_documents_read_ahead_is_the_readers_and_the_streams(tmp_path, monkeypatch):
    """A comment at column 0 inside a document's mapping, which then goes on (the fast path cannot vouch for
    it): read ahead, the same Retry after the same documents; `stream` then reads the file again with
    libyaml (its thread reading ahead too): the reference's scenario."""
    monkeypatch.setenv("KUBEFIT_STREAM", "always")
    text = _documents(40).decode().replace("  name: p20\n", "  name: p20\n# a note\n  uid: u20\n")
    data = text.encode()
    alone = _outcome(data, -1, objects=True, is_json=False)
    assert alone[1][0] == "Retry" and len(alone[0]) == 20
    assert _outcome(data, 0, objects=True, is_json=False) == alone
    path = tmp_path / "pods.yaml"
    path.write_text(text)
    streamed = outcome(path, True)
    assert isinstance(streamed, Scenario) and streamed == outcome(path, False) and len(streamed.pods) == 40


# --------------------------------------------------------------------------- pods

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "x", "1", "500m", "2Gi",
                                                                                 "-1", "1.5", "Always", "Never"]))
QUANTITIES = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "example.com/dongle", "pods",
                                              "hugepages-2Mi", "bogus"]),
                             st.sampled_from(["100m", "1", "2Gi", "0", "-1", "12x", 3, 1.5, True, None]), max_size=3)


def _container(draw, i: int) -> dict:
    c = {"name": draw(st.sampled_from([f"c{i}", None, 5])), "image": draw(st.sampled_from(["img:1", None, ""]))}
    if draw(st.booleans()):
        c["resources"] = {k: draw(QUANTITIES) for k in draw(st.sets(st.sampled_from(["requests", "limits"])))}
        if draw(st.integers(0, 5)) == 0:
            c["resources"][draw(st.sampled_from(["claims", "claim"]))] = draw(st.sampled_from([[{"name": "gpu"}],
                                                                                              [], None]))
    elif draw(st.integers(0, 5)) == 0:
        c["resources"] = draw(st.sampled_from([None, {}, [], "x"]))
    if draw(st.booleans()):
        c["restartPolicy"] = draw(st.sampled_from(["Always", "Never", "Sometimes", None]))
    if draw(st.booleans()):
        c["ports"] = [{"containerPort": draw(st.sampled_from([80, 8080, None, "80", True])), "hostPort":
                       draw(st.sampled_from([0, 9000, None])), "protocol": draw(st.sampled_from(["TCP", "UDP", None]))}]
    elif draw(st.integers(0, 5)) == 0:
        c["ports"] = draw(st.sampled_from([None, [], [None], {"containerPort": 80}]))
    if draw(st.booleans()):
        c["volumeMounts"] = [{"name": "kube-api-access-x", "mountPath": "/var"}]
    if draw(st.integers(0, 9)) == 0:
        c[draw(st.sampled_from(["resorces", "env", "livenessProbe"]))] = draw(SCALAR)
    if draw(st.integers(0, 3)) == 0:  # the unread parts (podparts): valid, misspelt deep down, of a wrong type
        c[draw(st.sampled_from(["livenessProbe", "startupProbe"]))] = draw(st.sampled_from([
            {"exec": {"command": ["true"]}, "periodSeconds": 5}, {"httpGet": {"port": 80, "httpHeaders": [
                {"name": "a", "value": "b"}]}}, {"exec": {"comand": []}}, {"httpGet": "x"}, {"grpc": None}, []]))
    if draw(st.integers(0, 3)) == 0:  # NodeDeclaredFeatures reads the actions
        c["restartPolicyRules"] = draw(st.sampled_from([
            [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}],
            [{"action": "Restart"}, {"action": "RestartAllContainers"}], [{"action": "Restart"}], [None],
            [{"action": 5}], [{"acton": "RestartAllContainers"}], {"action": "RestartAllContainers"}, []]))
    if draw(st.integers(0, 3)) == 0:
        c["env"] = draw(st.sampled_from([[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                                         [{"name": "A", "valueFrom": {"fieldRef": {"path": "x"}}}], [None],
                                         [{"name": "A", "valueFrom": 3}], {"name": "A"}]))
    return c


@st.composite
def pods(draw) -> dict:
    """Pods as a snapshot holds them, with one field in ten made odd (a type, a null, a typo)."""
    spec: dict = {"containers": [_container(draw, i) for i in range(draw(st.integers(0, 2)))],
                  "priority": draw(st.sampled_from([0, 7, None, 1.0, False, "1", "absent", "absent"]))}
    if spec["priority"] == "absent":  # not admitted yet (priority admission reads the text: `names_priority`)
        del spec["priority"]
    optional = {
        "initContainers": st.builds(lambda: None).map(lambda _: [_container(draw, 9)]),
        "nodeName": st.sampled_from(["n1", "", None, 3]),
        "nodeSelector": st.sampled_from([{"disk": "ssd"}, {}, None, {"a": 1}]),
        "tolerations": st.sampled_from([[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                                        [{"key": "k", "tolerationSeconds": 300, "effect": "NoExecute"}], [None],
                                        [{"keey": "k"}], [{"tolerationSeconds": True}]]),
        "affinity": st.sampled_from([{"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}]}}},
            {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {
                "topologyKey": "h", "labelSelector": {"matchLabels": {"a": "b"}}}}]}}, {"nodeAfinity": {}}, None, 4]),
        "topologySpreadConstraints": st.sampled_from([
            [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": {"app": "a"}}}],
            [{"maxSkew": "1", "topologyKey": "zone"}], [None], [], None]),
        "volumes": st.sampled_from([[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}],
                                    [{"name": "v", "emptyDir": {}}], [{"name": "v", "hostPth": {}}], [None]]),
        "schedulingGates": st.sampled_from([[{"name": "g"}], [{"nme": "g"}], [None]]),
        "schedulerName": st.sampled_from(["default-scheduler", "other", "", None, 1]),
        "preemptionPolicy": st.sampled_from(["Never", None, ""]),
        "resources": st.sampled_from([{"requests": {"cpu": "1"}}, {"limits": {"cpu": "1"}}, {"x": 1}, None]),
        "overhead": st.sampled_from([{"cpu": "100m"}]),
        "runtimeClassName": st.sampled_from(["gvisor"]),
        "resourceClaims": st.sampled_from([[{"name": "gpu"}]]),
        "dnsPolicy": st.sampled_from(["ClusterFirst", 5]),
        "priorityClassName": st.sampled_from(["high"]),
        "bogusField": st.just(1),
        "hostNetwork": st.sampled_from([True, False, None, "true"]),
        "hostUsers": st.sampled_from([False, True, None, 0]),
        "securityContext": st.sampled_from([{"runAsUser": 1000, "sysctls": [{"name": "a", "value": "1"}]},
                                            {"sysctls": [{"nam": "a"}]}, {"capabilities": {}}, "root", None]),
        "dnsConfig": st.sampled_from([{"options": [{"name": "ndots", "value": "2"}]}, {"option": []},
                                      {"options": [None]}]),
        "ephemeralContainers": st.sampled_from([[{"name": "d", "targetContainerName": "c0"}], [{"name": "d",
                                                                                                 "target": "c0"}]]),
    }
    for name in draw(st.sets(st.sampled_from(sorted(optional)), max_size=6)):
        spec[name] = draw(optional[name])
    meta: dict = {"name": draw(st.sampled_from(["p", "p", "", None, 5])),
                  "namespace": draw(st.sampled_from(["team", None, "", 1]))}
    for key, values in (("labels", [{"app": "a"}, {}, {"a": None}, {"tier": "priority"}, {"\\u0061": "b"}]),
                        ("uid", ["u-1", 7]),
                        ("annotations", [{"kubefit.io/queued": "true"}, {"kubefit.io/arrival": "5s",
                                                                         "kubefit.io/duration": "1m"},
                                         {"kubefit.io/arrival": "soon"}, {"a": "b"}, None]),
                        ("creationTimestamp", ["2025-10-01T09:00:02Z", "2025-10-01", "yesterday", None]),
                        ("ownerReferences", [[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                               "uid": "1", "controller": True, "blockOwnerDeletion": True}],
                                             [{"kind": "Job", "controller": "yes"}], [None]]),
                        ("managedFields", [[{"manager": "m"}]]), ("generateName", ["p-"]), ("finalizers", [["f"]]),
                        ("nmae", ["x"])):
        if draw(st.integers(0, 2)) == 0:
            meta[key] = draw(st.sampled_from(values))
    body: dict = {"apiVersion": draw(st.sampled_from(["v1", "v1", "v2", None])), "kind": "Pod", "metadata": meta,
                  "spec": spec}
    if draw(st.booleans()):
        body["status"] = {k: draw(st.sampled_from(v)) for k, v in (
            ("phase", ["Running", "Pending", None, 3]),
            ("conditions", [[{"type": "Ready", "status": "True"}], [{"type": "PodScheduled", "reason": "Unschedulable"}],
                            [None], [{"typ": "x"}]]),
            ("containerStatuses", [[{"name": "c0", "ready": True, "state": {"running": {}}}],
                                   [{"name": "c0", "resources": {"requests": {"cpu": "2"}}, "allocatedResources":
                                     {"cpu": "2"}}], [{"name": "c0", "resources": None}], [None],
                                   [{"name": "c0", "state": {"running": {"startedAt": "t", "bogus": 1}}}],
                                   [{"name": "c0", "lastState": {"terminated": {"exitCode": 1, "signal": 9}},
                                     "user": {"linux": {"uid": 1}}, "volumeMounts": [{"name": "v"}]}],
                                   [{"name": "c0", "resources": {"requests": {"cpu": "1"}, "bogus": 1}}],
                                   [{"name": "c0", "allocatedResourcesStatus": [{"name": "x", "resources": [
                                       {"resourceID": "r", "health": "Healthy", "bogus": 1}]}]}]]),
            ("podIPs", [[{"ip": "10.0.0.1"}], [{"ip": "10.0.0.1", "bogus": 1}]]),
            ("ephemeralContainerStatuses", [[{"name": "d", "state": {"waiting": {"reason": "r"}}}],
                                            [{"name": "d", "state": {"waiting": {"bogus": 1}}}]]),
            ("startTime", ["2025-10-01T09:00:02Z", "1e19", "", None]),
            ("nominatedNodeName", ["n2", None]), ("podIP", ["10.0.0.1"]), ("phaze", ["x"]))
            if draw(st.integers(0, 2)) == 0}
    return body


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pods())
def test_a_fast_pod_is_decode_pods_pod(body):
    """fastpod gives None, or exactly the Pod and warnings decode_pod gives (and decode_pod does not
    refuse it); its `raw` is the manifest less managedFields, read from its JSON."""
    data = orjson.dumps(body)
    fast = FastPods().decode(data, "f.json", 3)
    if fast is None:
        return
    warnings: list[str] = []
    want = decode_pod(Document(copy.deepcopy(body), "f.json", 3), warnings)
    got, notes = fast
    assert raw_is_json(got)
    assert names_priority(got) == ("priority" in body["spec"])  # what priority admission reads (before `==`
    assert got == want and notes == warnings  # reads `raw`)


CONTAINER_VARIANTS = [  # (field, value): one field decode_pod reads of a container, changed
    ("name", "other"), ("image", "img:2"), ("restartPolicy", "Always"), ("restartPolicy", "Never"),
    ("resources", {"requests": {"cpu": "2"}}), ("resources", {"limits": {"cpu": "2"}}),
    ("resources", {"requests": {"cpu": "1"}, "limits": {"memory": "1Gi"}}), ("resources", None),
    ("resources", {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}), ("resources", {"requests": {"cpu": "x"}}),
    ("resources", {"requests": {"bogus": "1"}}),  # (a warning naming the container's path)
    ("ports", [{"containerPort": 80, "hostPort": 8080}]), ("ports", [{"containerPort": 80, "protocol": "UDP"}]),
    ("ports", None), ("ports", [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81}]),
    ("restartPolicyRules", [{"action": "RestartAllContainers"}]), ("restartPolicyRules", None)]


_BASE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"}, "spec": {
    "priority": 0, "nodeName": "n1",
    "containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "1"}}},
                   {"name": "b", "image": "img:1", "ports": [{"containerPort": 80}]}],
    "initContainers": [{"name": "i", "image": "img:1", "restartPolicy": "Always"}]}}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([("containers", 0), ("containers", 1), ("initContainers", 0)]),
                          st.sampled_from(CONTAINER_VARIANTS)), min_size=1, max_size=8))
def test_fast_pods_of_one_load_are_decode_pods_pods(changes):
    """Pods decoded by one FastPods (its memo shared, as in a load): replicas of one pod, each with one
    field of one container changed, the changes accumulating (a memo keyed on less than decode_pod reads
    would give an earlier pod's container): each is None or exactly decode_pod's Pod and warnings."""
    fast = FastPods()
    body = copy.deepcopy(_BASE_POD)
    decoded = 0
    for i, ((field, index), (key, value)) in enumerate([(("containers", 0), ("name", "a")), *changes]):
        body["spec"][field][index][key] = copy.deepcopy(value)
        body["metadata"]["name"] = f"p-{i}"
        got = fast.decode(orjson.dumps(body), "f.json", i)
        if got is None:
            continue
        decoded += 1
        warnings: list[str] = []
        assert got == (decode_pod(Document(copy.deepcopy(body), "f.json", i), warnings), warnings)
    assert decoded or any(v[0] == "resources" and v[1] and "claims" in v[1] for _, v in changes)


def test_a_fast_pods_volumes_are_read_from_its_json_when_asked_for():
    """fastpod checks `spec.volumes` and leaves them in the pod's JSON (`VOLUMES_FROM_RAW`) until read:
    then they are decode_pod's, also after a pickle round trip (tune's workers) or once `raw` was read."""
    import pickle

    from kubefit.api.core import VOLUMES_FROM_RAW

    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "priority": 0, "containers": [{"name": "c"}], "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "c", "readOnly": True}},
            {"name": "kube-api-access-x", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]}}
    want = decode_pod(Document(copy.deepcopy(body), "f.json", 1), [])
    for read_raw_first in (False, True):
        pod = FastPods().decode(orjson.dumps(body), "f.json", 1)[0]
        assert pod.__dict__["volumes"] is VOLUMES_FROM_RAW
        copied = pickle.loads(pickle.dumps(pod))
        assert copied.__dict__["volumes"] is VOLUMES_FROM_RAW
        if read_raw_first:
            assert pod.raw["spec"]["volumes"] == body["spec"]["volumes"] and not raw_is_json(pod)
        assert pod.volumes == want.volumes == copied.volumes and type(pod.volumes) is tuple
        assert pod == want == copied


@pytest.mark.parametrize("regular", [2, 1])
def test_equal_containers_at_other_paths_are_told_at_their_own(regular):
    """Equal containers at containers[0] (and containers[1]) and initContainers[0], in two pods of one load
    (with one regular container, the two lists are the same JSON text): each warning names its own
    container's path, as decode_pod's do."""
    container = {"name": "a", "image": "img:1", "resources": {"requests": {"bogus": "1"}}}
    fast = FastPods()
    for i in range(2):
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {
            "priority": 0, "containers": [container] * regular, "initContainers": [container]}}
        warnings: list[str] = []
        want = decode_pod(Document(copy.deepcopy(body), "f.json", i), warnings)
        assert fast.decode(orjson.dumps(body), "f.json", i) == (want, warnings)
        assert [w.split(": ")[2] for w in warnings] == [
            *(f"spec.containers[{k}].resources.requests.bogus" for k in range(regular)),
            "spec.initContainers[0].resources.requests.bogus"]


def test_fast_pods_share_what_repeats_and_tell_warnings_per_pod():
    fast = FastPods()
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"priority": 0, "containers": [
        {"name": "c", "resources": {"requests": {"example.com/x": "1", "bogus": "1"}, "limits": {"memory": "1Gi"}}}]}}
    a, notes_a = fast.decode(orjson.dumps(body), "f", 1)
    body["metadata"]["name"] = "b"
    b, notes_b = fast.decode(orjson.dumps(body), "f", 2)
    assert a.containers[0] is b.containers[0]
    assert [n.split(": ")[1] for n in notes_a + notes_b] == ["Pod/a", "Pod/b"]  # a resource kube-scheduler ignores
    assert all("resource 'bogus' is not one kube-scheduler accounts for" in n for n in notes_a + notes_b)


def test_pods_sharing_containers_keep_their_own_resized_requests():
    """compile_state computes a demand once per set of request inputs that fastpod shares among a workload's
    pods, and a pod whose status differs (an in-place resize) is not one of them. Each pod asks 500m in its
    spec; the third's container status has resources.requests and allocatedResources cpu 2, so the node
    accounts max(500m, 2, 2) = 2000m for it (requests.determineContainerReqs): 500 + 500 + 2000 = 3000m."""
    fast = FastPods()
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {
        "nodeName": "n1", "priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": {"phase": "Running"}}
    pods = []
    for i, name in enumerate(("a", "b", "c")):
        body["metadata"]["name"] = name
        if name == "c":
            body["status"]["containerStatuses"] = [{"name": "c", "resources": {"requests": {"cpu": "2"}},
                                                    "allocatedResources": {"cpu": "2"}}]
        pods.append(fast.decode(orjson.dumps(body), "f.json", i + 2)[0])
    assert pods[0].containers is pods[1].containers is pods[2].containers
    node = decode_node(Document({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                                 "status": {"allocatable": {"cpu": "4", "pods": "110"}}}, "f.json", 1), [])
    state = compile_state([node], pods)
    assert int(state.requested[0, state.index["cpu"]]) == 3000


# --------------------------------------------------------------------------- scenarios

@pytest.mark.parametrize(("name", "fast"), [("kubectl-get-nodes-pods.yaml", 0), ("kubectl-get-nodes-pods.json", 7)])
def test_a_kubectl_snapshot_streams_to_the_same_scenario(name, fast):
    """The JSON streams (its 7 pods decoded by fastpod); the YAML holds anchors (PyYAML wrote it), which
    only the reference reads, so the stream hands it over whole."""
    path = FIXTURES / name
    streamed, reference = outcome(path, True), outcome(path, False)
    assert isinstance(streamed, Scenario) and sum(raw_is_json(p) for p in streamed.pods) == fast
    assert streamed == reference  # (reads every raw)


def test_both_formats_of_a_large_snapshot_give_one_scenario(tmp_path, monkeypatch):
    """bench_scale.py's generator (kubectl's YAML and JSON, full objects) on 30 nodes × 600 pods."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import bench_scale

    with mock.patch.object(bench_scale, "WORK", tmp_path):
        yaml_path, json_path = bench_scale.write_files(30, 600, 20)
    monkeypatch.chdir(tmp_path)  # both files read under one name, so that the objects' `source` is too
    yaml_path.rename("cluster")
    got = [outcome(Path("cluster"), True), outcome(Path("cluster"), False)]
    json_path.rename("cluster")
    got.append(outcome(Path("cluster"), True))
    assert isinstance(got[0], Scenario) and len(got[0].pods) == 620
    assert sum(raw_is_json(p) for p in got[0].pods) == 620
    assert got[0] == got[1] == got[2]


_PRIORITY_CLASSES = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: usual}
value: 7
globalDefault: true
preemptionPolicy: Never
"""


def _pod_text(name: str, spec: str, labels: str = "{}") -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {labels}}}\n"
            f"spec: {{containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}], {spec}}}\n")


def _streamed_by_fastpod(path: Path) -> tuple:
    """The stream's `outcome` of `path` and how many of its pods `FastPods` decoded (the rest: decode_pod)."""
    decode, taken = FastPods.decode, []

    def counted(self, data, source, index):
        got = decode(self, data, source, index)
        taken.append(got is not None)
        return got

    with mock.patch.object(FastPods, "decode", counted):
        return outcome(path, True), sum(taken)


@pytest.mark.parametrize(("pods", "fast", "want"), [  # fast: how many pods fastpod decodes
    # a pod naming no priority takes its class's (`high`: 1000) or the global default's (`usual`: 7, Never)
    ([("a", "priorityClassName: high"), ("b", "nodeName: n1")], 2, {"a": (1000, "PreemptLowerPriority"),
                                                                    "b": (7, "Never")}),
    # a label's value "priority": the text names it, the spec does not (decode_pod's road; still 7)
    ([("c", "nodeName: n1", "{tier: priority}")], 0, {"c": (7, "Never")}),
    # spec.priority given, no class: kept as given (admitPod: the class's value must then match, as computed)
    ([("d", "priority: 7, preemptionPolicy: Never")], 1, {"d": (7, "Never")}),
    ([("e", "priority: 5")], 1, {"e": (5, "PreemptLowerPriority")}),  # (a pod with one is taken as admitted)
    ([("f", "priority: null, priorityClassName: high")], 0, {"f": (1000, "PreemptLowerPriority")}),
])
def test_priority_admission_reads_a_streamed_pods_text_as_its_spec(tmp_path, pods, fast, want):
    """A pod without `spec.priority` streams through fastpod too (its JSON kept); Priority admission then
    tells from the text whether the spec gave one (`names_priority`): the scenario, or the refusal, is the
    reference reader's, and the admitted priorities are those the PriorityClasses give."""
    path = tmp_path / "pods.yaml"
    path.write_text(_PRIORITY_CLASSES + "".join(_pod_text(*p) for p in pods))
    streamed, taken = _streamed_by_fastpod(path)
    assert taken == fast
    assert streamed == outcome(path, False)
    assert {p.name: (p.priority, p.preemption_policy) for p in streamed.pods} == want


_HOST_PORTS = """\
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec: {limits: [{type: Container, defaultRequest: {memory: 64Mi}}]}
"""


def _ported_pod(name: str, host_network: str) -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{{host_network}containers: "
            f"[{{name: c, resources: {{requests: {{cpu: '1'}}}}, ports: [{{containerPort: 8080}}]}}]}}\n")


@pytest.mark.parametrize(("flags", "host_ported"), [
    # the same containers (fastpod shares the decoded objects): the chain's outcome is keyed by hostNetwork too,
    # read from the JSON; a hostNetwork pod's container ports get hostPort = containerPort (SetDefaults_Pod)
    (["", "hostNetwork: true, ", "hostNetwork: false, ", "hostNetwork: true, "], {"p1", "p3"}),
    (["hostNetwork: true, ", ""], {"p0"}),
])
def test_admission_reads_a_streamed_pods_host_network_from_its_text(tmp_path, flags, host_ported):
    """Pods still their JSON go through admission with only the fields its outcome is keyed by read from the
    text (`spec_head`); pods of one spec share an outcome only when their hostNetwork agrees. The scenario is
    the reference reader's (the notes included), each pod's host ports as SetDefaults_Pod gives them, and
    LimitRanger's default request reaches every pod."""
    path = tmp_path / "pods.yaml"
    path.write_text(_HOST_PORTS + "".join(_ported_pod(f"p{i}", flag) for i, flag in enumerate(flags)))
    streamed, taken = _streamed_by_fastpod(path)
    assert taken == len(flags)
    assert streamed == outcome(path, False)
    assert {p.name for p in streamed.pods if p.containers[0].ports[0].host_port == 8080} == host_ported
    assert {p.containers[0].requests["memory"] for p in streamed.pods} == {64 * 2**20 * 10**9}


def test_an_escaped_priority_key_is_left_to_decode_pod():
    """`\\u0070riority` is `priority` once decoded: the text does not name the priority the spec gives, so
    fastpod hands the pod to decode_pod, which reads 5."""
    data = (b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},'
            b'"spec":{"\\u0070riority":5,"containers":[{"name":"c"}]}}')
    assert FastPods().decode(data, "f.json", 1) is None
    assert decode_pod(Document(json.loads(data), "f.json", 1), []).priority == 5


MUTANTS = 240


def test_mutated_inputs_give_the_same_scenario_or_error(tmp_path):
    """The fuzzer's mutants (tests/fuzzing.py: replaced values, unknown fields, duplicate keys, big
    numbers, byte noise…) of the seed scenarios, each as YAML and as a JSON List: the stream's answer is
    the reference's, scenario or error."""
    rng = random.Random(23)
    seeds = seed_texts(golden_cases=6, rng=rng)
    differ = []
    for n in range(MUTANTS):
        name, text = seeds[n % len(seeds)]
        mutant = mutate(name, text, rng)
        files = [tmp_path / "m.yaml"]
        files[0].write_bytes(mutant.text.encode("utf-8", "surrogateescape"))  # byte noise included
        if "&" not in mutant.text:  # (PyYAML would expand an alias bomb)
            try:
                bodies = [b for b in yaml.safe_load_all(mutant.text) if b is not None]
                files.append(tmp_path / "m.json")
                files[1].write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": bodies}))
            except Exception:  # noqa: BLE001 - a mutant PyYAML cannot read or JSON cannot hold: YAML only
                files[1:] = []
        for path in files:
            streamed, reference = outcome(path, True), outcome(path, False)
            if streamed != reference:
                differ.append(f"{mutant.mutation} ({path.suffix}): {str(streamed)[:200]} != {str(reference)[:200]}")
    assert not differ, "\n".join(differ[:5])


def test_a_large_file_is_never_read_whole_by_the_reference(tmp_path, monkeypatch):
    """Past REFERENCE_MAX_BYTES, what the stream cannot read is refused with its line, not re-read."""
    monkeypatch.setattr(stream, "REFERENCE_MAX_BYTES", 100)
    monkeypatch.setenv("KUBEFIT_STREAM", "always")
    path = tmp_path / "big.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  metadata: {name: a}\n"
                    "  data: {k: 1, k: 2}\n" + "#" * 200 + "\n")
    with pytest.raises(InputError, match=r"big.yaml: a duplicate key \(line 6\): a file over 0 MiB is read only"):
        load_scenario([path])


def test_progress_of_a_stream_is_in_megabytes(tmp_path, monkeypatch):
    """A stream reports its progress in megabytes; stored pods (a uid: admission leaves them as given) keep
    their manifests as JSON."""
    monkeypatch.setenv("KUBEFIT_STREAM", "always")
    monkeypatch.setattr(stream, "_RELEASE_BYTES", 4096)  # and the mapped pages are given back as it goes
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u", "annotations": {"pad": "x" * 1024}},
           "spec": {"priority": 0, "containers": [{"name": "c"}]}}
    items = [node] + [dict(pod, metadata=dict(pod["metadata"], name=f"p{i}")) for i in range(2100)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    calls: list[tuple[str, int, int]] = []
    scenario = load_scenario([path], progress=lambda *a: calls.append(a))
    assert len(scenario.pods) == 2100 and all(raw_is_json(p) for p in scenario.pods)
    assert [c[1] for c in calls] == [0, 1, 2, 2] and {c[2] for c in calls} == {2}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_running_out_of_memory_is_one_error_never_a_signal(tmp_path, suffix):
    """130 MB of ConfigMaps (100 keys each: kept as dicts they need ≈ 8 times the file) under a 1 GiB
    address-space limit: `kubefit simulate` ends with one `error:` line naming the file, exit 2 — not
    with SIGSEGV (msgspec's unchecked allocation, guarded by stream._Headroom) nor SIGABRT."""
    import resource
    import subprocess

    data = "".join(f"      k{j}: v\n" for j in range(100))
    path = tmp_path / f"configmaps{suffix}"
    with open(path, "w") as fh:
        if suffix == ".yaml":
            fh.write("apiVersion: v1\nitems:\n")
            fh.writelines(f"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c{i}\n  data:\n{data}"
                          for i in range(100_000))
            fh.write("kind: List\n")
        else:
            cm = json.dumps({"k" + str(j): "v" for j in range(100)})
            fh.write('{"apiVersion": "v1", "kind": "List", "items": [')
            fh.write(", ".join(f'{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "c{i}"}}, '
                               f'"data": {cm}}}' for i in range(100_000)))
            fh.write("]}")
    limit = 1 << 30
    proc = subprocess.run([sys.executable, "-m", "kubefit.cli", "simulate", "-f", str(path), "-o", "json"],
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and len(errors) == 1 and proc.stderr.count("\n") == 1, proc.stderr[-500:]
    assert errors[0].startswith(f"error: {path}: not enough memory to read it")


# --------------------------------------------------------------------------- YAML's fast path

def _run(data: bytes, fast: bool, objects: bool = False, prefetch: int = -1) -> tuple[object, int]:
    """The reader's events (or its exception's type and text), and how many items the fast path read."""
    reader = _reader.Reader(data, False, fast=fast, objects=objects, prefetch=prefetch)
    out: list[tuple] = []
    try:
        while (event := reader.next()) is not None:
            out.append(event)
    except (_reader.Fallback, _reader.Retry, MemoryError) as exc:
        return (type(exc).__name__, str(exc)), reader.fast_items
    return out, reader.fast_items


def fast_path(text: str | bytes) -> int:
    """Asserts that the fast path gives the libyaml path's events byte for byte, or retries (raises
    Retry, after which `stream` reads the file with the libyaml path); how many items it read itself,
    -1 where it retried. The same with objects held whole (`objects=True`, as `stream` reads): the fast
    path's events are libyaml's, and both are `as_objects` of the events without (or the same error); and
    the same again with the documents read ahead by the reader's thread (`prefetch=0`, as under
    KUBEFIT_STREAM=always): the same events or error, the same count of items the fast path read."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    slow, slow_items = _run(data, fast=False)
    assert slow_items == 0
    held_slow = _run(data, fast=False, objects=True)[0]
    assert held_slow == slow if isinstance(slow, tuple) else same_objects(held_slow, slow), data[:3000]
    assert _run(data, fast=False, objects=True, prefetch=0) == (held_slow, 0), data[:3000]
    fast, items = _run(data, fast=True)
    held, held_items = _run(data, fast=True, objects=True)
    assert held_items == items
    assert _run(data, fast=True, objects=True, prefetch=0) == (held, held_items), data[:3000]
    if isinstance(fast, tuple) and fast[0] == "Retry":
        assert held == fast
        return -1
    assert fast == slow, data[:3000]
    assert held == held_slow, data[:3000]
    return items


def _as_items(text: str) -> str | None:
    """A file's documents as the items of a List, each document's text as it is, indented under its `- `
    (None: a document that does not start as a block mapping at column 0)."""
    docs = [d for d in re.split(r"(?m)^---[ ]*\n", text) if d.strip(" \n")]
    items = []
    for doc in docs:
        lines = doc.split("\n")
        while lines and (not lines[0].strip() or lines[0].startswith("#")):
            lines.pop(0)
        if not lines or not re.match(r"[A-Za-z]", lines[0]):
            return None
        items.append("- " + "\n".join(("  " + line) if line.strip() else line for line in lines).lstrip())
    return "apiVersion: v1\nitems:\n" + "\n".join(items).rstrip("\n") + "\nkind: List\n"


def _yaml_files() -> list[Path]:
    root = Path(__file__).parents[1]
    return sorted(p for d in ("examples", "tests") for p in (root / d).rglob("*.y*ml"))


def test_the_fast_path_reads_every_yaml_file_as_libyaml():
    """Every YAML file of the examples (those the README runs) and of the tests, as it is and with its
    documents as the items of a List (their text unchanged, indented): the fast path's events are the
    libyaml path's. Most items are the fast path's own (the rest: comments, flow style, anchors...)."""
    files = _yaml_files()
    assert len(files) >= 40
    read = total = 0
    for path in files:
        text = path.read_text()
        fast_path(text)
        listed = _as_items(text)
        if listed is not None:
            got = fast_path(listed)
            read += max(got, 0)
            total += len(re.findall(r"(?m)^- ", listed))
    assert read >= 10, (read, total)  # (the examples are mostly in the flow style)


def _listed(item: str) -> str:
    return f"apiVersion: v1\nitems:\n{item}kind: List\n"


# (rule, the items' text, how many of them the fast path reads itself; -1: it retries)
EDGES = [
    ("plain ends at end of line, trailing spaces trimmed", "- k: a b   \n", 1),
    ("several spaces after the colon", "- k:    v\n", 1),
    ("a space before the colon", "- k : v\n", 1),
    ("` #` begins a comment", "- k: a #c\n", 0),
    ("`#` inside a plain scalar", "- k: a#b\n", 1),
    ("`:` followed by a non-space inside a plain scalar", "- k: a:b\n  h: http://x:80/y\n", 1),
    ("`: ` inside a value is an error", "- k: a: b\n", -1),
    ("`:` at the end of a value's line", "- k: a:\n", -1),
    ("managedFields keys are plain", '- f:metadata:\n    k:{"type":"Ready"}:\n      .: {}\n    v:"100.64.0.0/24": {}\n', 1),
    ("single quotes, '' escape", "- k: 'it''s #1: ok'\n  j: ''\n", 1),
    ("double quotes, simple escapes", '- k: "a\\"b\\\\c\\n\\t\\r\\/"\n', 1),
    ("double quotes, other escapes: libyaml", '- k: "\\x41\\u00e9\\e"\n', 0),
    ("quoted keys", "- 'a b': 1\n  \"c\": 2\n  '': 3\n", 1),
    ("a single quote on more lines, folded", "- k: 'a  \n    b '' c  \n     d'\n  j: 'e\n   f'\n- 'g\n  h'\n", 2),
    ("a single quote on more lines with an empty one", "- k: 'a\n\n    b'\n", 0),
    ("a single quote going on at the key's column (libyaml reads it)", "- k: 'a\n  b'\n", 0),
    ("a double quote on more lines", '- k: "a\n    b"\n', 0),
    ("a quoted key on more lines", "- 'a\n  b': 1\n", -1),
    ("text after a closing quote", "- k: 'a' # c\n", 0),
    ("{} and []", "- a: {}\n  b: []\n- {}\n- []\n", 3),
    ("other flow collections", "- a: {b: 1}\n- [1, 2]\n", 0),
    ("an indentless sequence, then a key", "- k:\n  - a\n  - b\n  j: 1\n", 1),
    ("an indented sequence", "- k:\n    - a\n    - b\n  j: 1\n", 1),
    ("an empty value before a key, an item, the end", "- k:\n  j:\n- k:\n", 2),
    ("an empty value before a line less indented", "- a:\n    b:\n  c: 1\n", 1),
    ("a mapping on the next lines", "- k:\n    j: 1\n    l: 2\n", 1),
    ("a scalar on the next line", "- k:\n    v\n", 1),
    ("a plain scalar on more lines, folded", "- k: a  \n    b - c &d {e}  \n     f'g\"\n  j: 1\n- a\n  b\n", 2),
    ("a plain scalar on more lines with an empty one", "- k: a\n\n    b\n", 0),
    ("a plain scalar going on at the key's column", "- k: a\n  b\n", -1),
    ("a comment after a plain scalar's line", "- k: a\n    # b\n", 0),
    ("`: ` on a plain scalar's next line", "- k: a\n    b: c\n", -1),
    ("a plain scalar on more lines that alone the reference would judge", "- k: .inf\n    x\n", 1),
    ("nested sequences on one line", "- - a\n  - - b\n    - c\n", 1),
    ("`-` then a non-space is plain", "- -1\n- -x\n", 2),
    ("`-` then the line's end is an entry", "- k: -\n", -1),
    ("extra spaces after `-`", "-   k: v\n    j: w\n", 1),
    ("`-` alone on its line", "-\n  k: v\n", 0),
    ("an anchor", "- k: &a x\n", -1),
    ("an alias", "- k: *a\n", -1),
    ("a tag", "- k: !t x\n", -1),
    ("indicators that start no plain scalar", "- k: @x\n", -1),
    ("a backquote", "- k: `x\n", -1),
    ("`?` then a non-space", "- k: ?x\n", 0),
    ("`:` then a non-space", "- k: :x\n", 0),
    ("an explicit key", "- ? k\n  : v\n", 0),
    ("a literal block scalar, clip", "- k: |\n    line 1\n      more\n\n    line 2  \n  j: 1\n", 1),
    ("a literal block scalar, strip, at the item's end", "- k: |-\n    a\n\n\n- x\n", 2),
    ("a literal block scalar as an item", "- |\n  a\n  b\n- x\n", 2),
    ("keep chomping", "- k: |+\n    a\n\n- x\n", 1),
    ("a folded block scalar", "- k: >\n    a\n    b\n", 0),
    ("an indentation indicator", "- k: |2\n     a\n", 0),
    ("a literal whose first line is empty", "- k: |\n\n    a\n", 0),
    ("spaces alone on a literal's line", "- k: |\n    a\n      \n    b\n", 0),
    ("a tab", "- k:\tv\n- k: \tv\n", 0),
    ("CRLF", "- k: v\r\n  j: w\r\n", 0),
    ("non-ASCII", "- k: é\n", 0),
    ("a comment line at column 0 between items", "- k: v\n# c\n- j: w\n", 2),
    ("a comment line at column 0 inside an item", "- k: v\n# c\n  j: w\n", -1),
    ("a comment line at column 0 inside an item libyaml reads", "- k: {a: 1}\n# c\n  j: w\n", 0),
    ("an indented comment", "- k: v\n  # c\n  j: w\n", 0),
    ("blank lines between items", "- k: v\n\n   \n- j: w\n\n", 2),
    ("a blank line inside an item", "- k: v\n\n  j: w\n", 0),
    ("a duplicate key", "- k: 1\n  k: 2\n", -1),
    ("keys resolved as go-yaml v2", "- yes: 1\n  0x10: 2\n  'yes': 3\n", 1),
    ("a float key", "- 1.5: x\n", -1),
    ("a null key", "- ~: x\n", -1),
    ("a merge key", "- <<: {}\n", -1),
    ("scalars resolved as go-yaml v2", "- [1e3, 0o17, .5, 1_000, ~, null, 'null', 0777, 1e400, 2024-01-31]\n", 0),
    ("scalars resolved as go-yaml v2, block", "- - 1e3\n  - 0o17\n  - .5\n  - 1_000\n  - ~\n  - null\n  - 'null'\n"
     "  - 0777\n  - 1e400\n  - 2024-01-31\n  - yes\n  - 1.0\n  - -0\n  - 9223372036854775807\n", 1),
    ("a value the reference judges", "- k: .inf\n", -1),
    ("an integer beyond int64", "- k: 9223372036854775808\n", -1),
    ("a key longer than libyaml's simple keys", "- " + "k" * 1100 + ": v\n", -1),
    ("a key of 1,000 bytes", "- " + "k" * 1000 + ": v\n", 1),
    ("managedFields left out of pods, kind noted", "- kind: Pod\n  metadata:\n    managedFields:\n    - a: 1\n"
     "    name: p\n- metadata:\n    name: n\n    managedFields: []\n  kind: Node\n- kind: ConfigMap\n"
     "  metadata:\n    managedFields: []\n", 3),
    ("a kind that is not a plain string", "- kind: 'Pod'\n  metadata: {}\n- kind: 1\n", 2),
    ("nested deeper than 100", "- " + "".join(f"{'  ' * i}a:\n" for i in range(1, 102)).lstrip() + "  " * 102 + "b: 1\n",
     -1),
    ("{} deeper than 100", "- " + "".join(f"{'  ' * i}a:\n" for i in range(1, 100)).lstrip() + "  " * 100 + "b: {}\n",
     -1),
]


@pytest.mark.parametrize(("rule", "items", "fast"), EDGES, ids=[e[0] for e in EDGES])
def test_the_fast_path_on_each_rule(rule, items, fast):
    """Each rule of the fast path's subset, on items of a List: the libyaml path's events, and the items
    the fast path reads itself are the ones its subset holds (others: libyaml reads the item's span, or
    the file again)."""
    assert fast_path(_listed(items)) == fast


TOP = [  # (the file, whether the fast path reads its chunk's items: 1, or retries: -1, or leaves it: 0)
    ("items: []\nkind: List\n", 0),
    ("items:\nkind: List\n", 0),
    ("kind: List\nitems:\n  - a\n  - b\n", 0),
    ("kind: List\nitems: # c\n- a\n", 0),
    ("kind: List\nitems:\n- a\n...\nfoo: [\n", 1),
    ("kind: List\nitems:\n- a\n... # c\n", -1),
    ("a: 1\n---\nitems:\n- a\n---\n- b\n", 1),
    ("---\n# c\nitems:\n- a\n", 1),
    ("%YAML 1.1\n---\nitems:\n- a\n", 0),
    ("\ufeffitems:\n- a\n", 0),
    ("# \x15\nitems:\n- a\n", 0),
    ("items:\n- a\n# \r b\n- c\n", -1),
    ("items:\n- a\nitems:\n- b\n", -1),
    ("items:\n- a\n  b: 1\n", -1),
    ("a:\n- x\n- y\nitems:\n- a\nb: 2\n", 1),
    ("items:\n- a\n  - b\n", 1),
    ("items:\n- a\n\tb: 1\n", -1),
    ("items:\n- a\n 'b'\n", 1),
    ("items:\n- a: 'x\n'\n", -1),
    ("items:\n- a: [1,\n2]\n", -1),
    ("'k': v\nitems:\n- a\n", 0),
    ("items:\n- a\n- a: &x 1\n- *x\n", -1),
]


@pytest.mark.parametrize(("text", "fast"), TOP)
def test_the_fast_path_between_items(text, fast):
    """The top of a document: the fast path reads items only under a column-0 `items:` followed by `- `
    lines, in a chunk that begins with a plain key; its members (and the items it gives back) are read
    by libyaml as spans, each a document of its own, their lines the file's; `...` ends the document."""
    got = fast_path(text)
    assert (min(got, 1) if got > 0 else got) == fast


def test_fallback_lines_are_the_files():
    """Where the libyaml path falls back, the retry names the same line."""
    text = _listed("- a: 1\n- b: 2\n  c: &x 3\n")
    with pytest.raises(_reader.Retry, match=r"a YAML anchor \(line 5\)"):
        read_events(text, False)
    with pytest.raises(_reader.Fallback, match=r"a YAML anchor \(line 5\)"):
        read_events(text, False, fast=False)


KEYS = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=8) | st.sampled_from(
    ["f:metadata", 'k:{"type":"Ready"}', 'v:"100.64.0.0/24"', ".", "yes", "0x1f", "a b", "-x", "a:b", "#", "'"])
LEAVES = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(
    st.characters(min_codepoint=32, max_codepoint=126), max_size=12) | st.sampled_from(
    ["", " a ", "a #b", "a: b", "a:", "- x", "x\ny", "x\n", "line 1\nline 2\n", "é", "\t", "@x", "'q'", '"q"',
     "{}", "1e3", "0777", "~", "null", "2024-01-31", "*a", "&a", "!t", "|", ">", "%", "`"])
OBJECTS = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
                       max_leaves=20)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(KEYS, OBJECTS, max_size=5), min_size=1, max_size=4),
       st.sampled_from([None, "'", '"', "|"]), st.sampled_from([2, 4]), st.integers(20, 200), st.booleans())
def test_the_fast_path_on_generated_lists(items, style, indent, width, unicode):
    """Lists as PyYAML writes them in the block style (quoting, indentation, line width varied): the
    fast path's events are libyaml's."""
    text = yaml.safe_dump({"apiVersion": "v1", "items": items, "kind": "List"}, default_flow_style=False,
                          default_style=style, indent=indent, width=width, allow_unicode=unicode, sort_keys=False)
    fast_path(text)


def fast_members(text: str | bytes) -> int:
    """`fast_path` for a file's documents: their events are libyaml's; how many members of the documents'
    mappings the fast path read itself (-1: it retries, or both paths fall back)."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    if fast_path(data) == -1:
        return -1
    reader = _reader.Reader(data, False, fast=True)
    try:
        while reader.next() is not None:
            pass
    except _reader.Fallback:
        return -1
    return reader.fast_members


MEMBERS = [  # (a file of documents, how many members the fast path reads itself; -1: it retries)
    ("a: 1\nb: x\n", 2),
    ("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  resourceModels:\n"
     "  - grade: 0\n    ranges:\n    - name: cpu\n      min: '0'\n      max: '1'\n---\nkind: Cluster\n", 5),
    ("a:\n- x\n- y\nb: 2\n", 2),
    ("a:\n  - x\nb:\n", 2),
    ("a: |\n  text\nb: 'q\n  r'\n", 2),
    ("a: plain\n  folded\nb: 1\n", 2),
    ("a: plain\nb\n", -1),
    ("a: {b: 1}\nc: 2\n", 1),
    ("a: 1\n# c\nb: 2\n", 2),
    ("a: 1\na: 2\n", -1),
    ("'a': 1\n\"b\": 2\n", 0),  # (the chunk begins with a quoted key: libyaml reads it all)
    ("a: 1\n'a': 2\n", -1),
    ("a: 1\nitems: []\n", 1),
    ("a: 1\n'items':\n- x\n", 1),
    ("a: &x 1\nb: *x\n", -1),
    ("a: 1\nb: \tx\n", 1),
    ("a: 1\n? b\n: 2\n", -1),
    ("a: 1\nyes: 2\n0x10: 3\n", 3),
    ("a: 1\n1.5: 2\n", -1),
    ("a: 1\n<<: {}\n", -1),
    ("a: 1\n...\nb: [\n", 1),
    ("a:\n  b:\n    c: 1\n  d: 2\ne: 3\n---\nf: 4\n", 3),
]


@pytest.mark.parametrize(("text", "members"), MEMBERS)
def test_the_fast_path_on_a_documents_members(text, members):
    """A document's own members (a multi-document file: a fleet of Clusters) are read by the fast scanner
    as the members of a mapping at column 0, or given back to libyaml, which reads their span: the events
    are libyaml's; `items` is always libyaml's (its sequence becomes the items' events)."""
    assert fast_members(text) == members


EDGE_MEMBERS = [(rule, re.sub(r"(?m)^(- |  )", "", items)) for rule, items, _ in EDGES]


@pytest.mark.parametrize(("rule", "text"), EDGE_MEMBERS, ids=[e[0] for e in EDGE_MEMBERS])
def test_the_fast_path_on_each_rule_as_members(rule, text):
    """Each rule of the item edges, its items' text taken to the document's top level: libyaml's events."""
    fast_members(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(KEYS, OBJECTS, min_size=1, max_size=5), min_size=1, max_size=4),
       st.sampled_from([None, "'", '"', "|"]), st.sampled_from([2, 4]), st.integers(20, 200), st.booleans())
def test_the_fast_path_on_generated_documents(docs, style, indent, width, unicode):
    """Documents as PyYAML writes them in the block style, one after another: libyaml's events."""
    fast_members(yaml.safe_dump_all(docs, default_flow_style=False, default_style=style, indent=indent, width=width,
                                    allow_unicode=unicode, sort_keys=False))


def test_the_fast_path_reads_a_fleet_whole(tmp_path):
    """bench_scale.py's fleet of Karmada Clusters (documents of members, go-yaml's style): every member is
    the fast path's, the events libyaml's."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import bench_scale

    with mock.patch.object(bench_scale, "WORK", tmp_path):
        path = bench_scale.write_fleet(30)
    assert fast_members(path.read_bytes()) == 30 * 5 + 4


def test_the_fast_path_reads_a_kubectl_snapshot_whole(tmp_path):
    """bench_scale.py's snapshot (kubectl's YAML: full objects, managedFields, the pending pods' long
    messages on two lines) on 30 nodes x 600 pods and 20 pending: every item is the fast path's, the
    events libyaml's."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import bench_scale

    with mock.patch.object(bench_scale, "WORK", tmp_path):
        yaml_path, _ = bench_scale.write_files(30, 600, 20)
    assert fast_path(yaml_path.read_bytes()) == 30 + 600 + 20


def test_the_fast_path_on_mutants(tmp_path):
    """The fuzzer's mutants (tests/fuzzing.py) of the seed scenarios and of a kubectl snapshot, as they
    are and as List items: the fast path's events are libyaml's."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import bench_scale

    with mock.patch.object(bench_scale, "WORK", tmp_path):
        yaml_path, _ = bench_scale.write_files(2, 12, 2)
    rng = random.Random(2323)
    seeds = seed_texts(golden_cases=6, rng=rng) + [("snapshot.yaml", yaml_path.read_text())] * 4
    read = 0
    for n in range(400):
        name, text = seeds[n % len(seeds)]
        mutant = mutate(name, text, rng).text
        read += max(fast_path(mutant), 0)
        listed = _as_items(mutant)
        if listed is not None:
            read += max(fast_path(listed), 0)
    assert read > 100


def test_a_retry_reads_the_file_again_with_libyaml(tmp_path, monkeypatch):
    """Where the fast path cannot vouch for a file (here a comment at column 0 inside an item, which
    then goes on), the stream reads it again with the libyaml path: the reference's scenario; past
    REFERENCE_MAX_BYTES, what libyaml refuses is refused with libyaml's reason and line (an anchor on
    line 10)."""
    monkeypatch.setenv("KUBEFIT_STREAM", "always")
    path = tmp_path / "c.yaml"
    node = "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n  status:\n    allocatable:\n      cpu: '2'\n"
    path.write_text(f"apiVersion: v1\nkind: List\nitems:\n{node}# a note\n      pods: '110'\n")
    with pytest.raises(_reader.Retry):
        read_events(path.read_bytes(), False)
    streamed = outcome(path, True)
    assert isinstance(streamed, Scenario) and streamed == outcome(path, False)
    assert "pods" in streamed.nodes[0].allocatable  # (the line after the comment is the item's)
    monkeypatch.setattr(stream, "REFERENCE_MAX_BYTES", 10)
    path.write_text(f"apiVersion: v1\nkind: List\nitems:\n{node[:-15]}      cpu: &c '2'\n")
    with pytest.raises(InputError, match=r"c.yaml: a YAML anchor \(line 10\): a file over 0 MiB"):
        load_scenario([path])
