"""The fast loading paths give what the reference paths give: the checked JSON parse, decode_pod's spec memo."""

from __future__ import annotations

import gc
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit import collector
from kubefit.api.core import OwnerReference
from kubefit.errors import InputError
from kubefit.manifests.documents import Document
from kubefit.manifests.load import Scenario, decode_pod
from kubefit.manifests.parse import parse_bodies
from kubefit.manifests.scenario import add_document, load_scenario


def pod(name: str, spec: dict, **meta) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta}, "spec": spec}


SPEC = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "example.com/x": "1", "x": "1"}}}],
        "tolerations": [{"key": "k", "operator": "Exists"}], "priority": 5}


def test_pods_sharing_a_spec_decode_alike_and_warn_each_under_its_own_name():
    scenario = Scenario()
    for i in range(3):
        add_document(scenario, Document(pod(f"p{i}", json.loads(json.dumps(SPEC))), "f.yaml", i + 1))
    alone = [decode_pod(Document(pod(f"p{i}", SPEC), "f.yaml", i + 1), []) for i in range(3)]
    for got, want in zip(scenario.pods, alone, strict=True):
        assert (got.name, got.containers, got.tolerations, got.priority) == (want.name, want.containers,
                                                                             want.tolerations, want.priority)
    assert len(scenario.pod_specs) == 1  # decoded once
    assert [w.split(":")[1].strip() for w in scenario.warnings] == ["Pod/p0", "Pod/p1", "Pod/p2"]
    assert all("resource 'x' is not one kube-scheduler accounts for" in w for w in scenario.warnings)


def test_a_known_spec_does_not_hide_bad_metadata():
    scenario = Scenario()
    add_document(scenario, Document(pod("a", SPEC), "f.yaml", 1))
    with pytest.raises(InputError, match="metadata.annotations.x"):
        add_document(scenario, Document(pod("b", SPEC, annotations={"x": 1}), "f.yaml", 2))
    with pytest.raises(InputError, match="metadata.namespace"):
        add_document(scenario, Document(pod("c", SPEC, namespace=7), "f.yaml", 3))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=8) | st.sampled_from(['":', '" :', '\\":']),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


INT64 = 2**63


def _has_big_int(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not -INT64 <= value < INT64
    if isinstance(value, dict):
        return any(_has_big_int(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_big_int(v) for v in value)
    return False


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4))
def test_checked_json_is_the_json_module_or_a_refusal(value):
    """Values and types as json.loads gives them; an integer beyond int64 is refused by name."""
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [], "x": value})
    if _has_big_int(value):
        with pytest.raises(InputError, match="outside int64"):
            parse_bodies(text, "t.json")
        return
    got, want = parse_bodies(text, "t.json")[0], json.loads(text)
    assert got == want and json.dumps(got) == json.dumps(want)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), st.text(max_size=6) | st.sampled_from(['":', 'x" :y']), min_size=1,
                       max_size=5), st.sampled_from(["", " ", "\n  "]))
def test_a_duplicate_key_is_refused_whatever_the_strings_hold(mapping, space):
    key = next(iter(mapping))
    text = "{" + ", ".join(f"{json.dumps(k)}{space}: {json.dumps(v)}" for k, v in mapping.items())
    text += f", {json.dumps(key)}{space}: 1}}"
    with pytest.raises(InputError, match="duplicate field"):
        parse_bodies('{"apiVersion": "v1", "kind": "List", "items": [], "x": ' + text + "}", "t.json")


def test_what_the_json_module_refuses_is_one_clear_error():
    assert parse_bodies('{"a": NaN}', "t.json")[0]["a"] != parse_bodies('{"a": NaN}', "t.json")[0]["a"]  # NaN
    with pytest.raises(InputError, match="malformed JSON at line 1, column 9"):
        parse_bodies('{"a": 1,}', "t.json")


@pytest.mark.parametrize("stream", ["", "0"])
def test_load_scenario_reports_progress_per_file(tmp_path, monkeypatch, stream):
    """A file under 1 MiB tells its progress per object (after its parse, every 1,024 objects, at its end),
    whether the compiled reader reads it (the default for every regular file) or the reference reading does
    (`KUBEFIT_STREAM=0`); the compiled reader keeps a stored pod's manifest as its JSON (a uid: admission
    leaves the pod as given), the reference reading as a dict."""
    from kubefit.api.core import raw_is_json
    from kubefit.manifests.scenario import load_scenario

    monkeypatch.setenv("KUBEFIT_STREAM", stream)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}
    pods = [pod(f"p{i}", {"priority": 0, "containers": [{"name": "c"}]}, uid=f"u{i}") for i in range(2500)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, *pods]}))
    calls: list[tuple[str, int, int]] = []
    scenario = load_scenario([path], progress=lambda *a: calls.append(a))
    assert len(scenario.pods) == 2500
    assert calls == [(str(path), n, 2501) for n in (0, 1024, 2048, 2501)]
    assert {raw_is_json(p) for p in scenario.pods} == {stream != "0"}


def test_the_loading_bar_is_drawn_only_on_a_terminal_for_large_files(tmp_path, monkeypatch, capsys):
    import sys

    from kubefit.cli import progress as cli

    path = tmp_path / "f.yaml"
    path.write_text("a: 1\n")
    with cli.loading_progress([str(path)]) as tick:
        assert tick is None  # not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with cli.loading_progress([str(path)]) as tick:
        assert tick is None  # a small file
    monkeypatch.setattr(cli, "LOADING_MIN_BYTES", 1)
    with cli.loading_progress([str(path)]) as tick:
        tick(str(path), 0, 10)
        tick(str(path), 10, 10)
    assert "loading" in capsys.readouterr().err


def test_bound_pods_differing_only_in_their_node_share_a_decoding():
    scenario = Scenario()
    for i in range(3):
        spec = json.loads(json.dumps(SPEC))
        spec["nodeName"] = f"node-{i}"
        add_document(scenario, Document(pod(f"p{i}", spec), "f.yaml", i + 1))
    assert len(scenario.pod_specs) == 1
    assert [p.node_name for p in scenario.pods] == ["node-0", "node-1", "node-2"]
    spec = json.loads(json.dumps(SPEC))
    spec["containers"][0]["volumeMount"] = []  # a typo: another spec, so decoded (and refused) again
    with pytest.raises(InputError, match=r"spec.containers\[0\].volumeMount"):
        add_document(scenario, Document(pod("typo", spec), "f.yaml", 4))
    spec = json.loads(json.dumps(SPEC))
    spec["nodeName"] = 5
    with pytest.raises(InputError, match="spec.nodeName"):
        add_document(scenario, Document(pod("bad-node", spec), "f.yaml", 5))


@pytest.mark.parametrize("path", ["tests/fixtures/kubectl-get-nodes-pods.json", "examples/workload/cluster.yaml"])
def test_the_memo_changes_nothing(path):
    from kubefit.manifests.documents import read_documents
    from kubefit.manifests.scenario import load_scenario

    loaded = load_scenario([path], admission=False)  # the pods as decoded
    warnings: list[str] = []
    alone = [decode_pod(d, warnings) for d in read_documents(path) if d.kind == "Pod"]
    assert loaded.pods == alone
    assert [w for w in loaded.warnings if "Pod/" in w] == warnings


SCENARIO = ["examples/docs-bin-packing/cluster.yaml"]


def test_loading_leaves_the_garbage_collector_as_it_was():
    assert gc.isenabled()
    load_scenario(SCENARIO)
    assert gc.isenabled()
    gc.disable()
    try:
        load_scenario(SCENARIO)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_refused_file_leaves_the_collector_running(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n, name: m}\n")
    with pytest.raises(InputError, match="duplicate field 'name'"):
        load_scenario([str(bad)])
    assert gc.isenabled()


def test_the_command_freezes_what_it_loaded(monkeypatch):
    """`kubefit` asks for it (freeze_what_is_kept); a library caller does not get it."""
    before = gc.get_freeze_count()
    load_scenario(SCENARIO)
    assert gc.get_freeze_count() == before
    monkeypatch.setattr(collector, "_freezing", [True])
    try:
        load_scenario(SCENARIO)
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-1", "controller": True,
         "blockOwnerDeletion": True}


@pytest.mark.parametrize(("change", "error"), [
    ({}, None),
    ({"controller": None, "uid": None, "blockOwnerDeletion": "anything"}, None),  # (a field no verb reads)
    ({"controller": 1}, "metadata.ownerReferences[0].controller: must be true or false, got 1"),
    ({"controller": "yes"}, "metadata.ownerReferences[0].controller: must be true or false, got 'yes'"),
    ({"kind": 5}, "metadata.ownerReferences[0].kind: must be a string, got an integer 5; quote it"),
    ({"nmae": "rs"}, "metadata.ownerReferences[0].nmae: unknown field 'nmae'"),
])
def test_owner_references_read_alike_whichever_road(change, error):
    """A reference of plain strings and a boolean takes the short road (one shared object per owner), any other
    the field-by-field checks, with their messages; the same reference after a refused one is still read."""
    ref = {**OWNER, **change}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "ownerReferences": [ref]},
            "spec": {"containers": [{"name": "c"}]}}
    if error is not None:
        with pytest.raises(InputError, match=re.escape(error)):
            decode_pod(Document(body, "f.yaml", 1), [])
        return
    first, second = (decode_pod(Document(body, "f.yaml", 1), []).owner_references for _ in range(2))
    assert first == (OwnerReference("apps/v1", "ReplicaSet", "rs", ref["uid"] or "", bool(ref["controller"])),)
    assert first[0] is second[0]
