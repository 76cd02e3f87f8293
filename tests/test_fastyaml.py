"""yaml-rs is used only where kubefit then answers exactly as with PyYAML alone (`kubefit.manifests.fastyaml`).

The property: for any text, `parse_bodies` gives the same documents (same types, same key order) or the
same `error:` message as `parse_bodies` with the yaml-rs path switched off. The texts are generated
near the grammar's edges: YAML 1.1-only scalars (`yes`, `on`, `0777`, `12:30`, dates, `1e3`, `0o17`),
integers at and past int64, anchors, aliases, merge keys, tags, block and flow styles, block scalars,
quoted scalars with escapes, duplicate keys, several documents, and lines indented or cut at random.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import test_fuzz
from fuzzing import VERBS, preload, seed_texts
from kubefit.errors import InputError
from kubefit.manifests import fastyaml, parse

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def every_size_takes_the_yaml_rs_path():
    """Small texts go to PyYAML in use (`MIN_BYTES`); here every text is offered to yaml-rs."""
    with mock.patch.object(fastyaml, "MIN_BYTES", 0):
        yield

TRICKY_SCALARS = [
    "yes", "Yes", "NO", "on", "Off", "y", "n", "true", "True", "TRUE", "tRUE", "false", "null", "Null", "NULL",
    "~", "0777", "017", "0o17", "0x1F", "0xAB", "0b101", "1e3", "1E3", "1.5e3", "1.5e+3", "1_000", "12:30",
    "1:2:3", "2001-12-14", "2001-12-14T21:59:43.10-05:00", ".inf", "-.inf", ".nan", "inf", "nan", "NaN",
    "infinity", "1.5", "-1.5", "0.0", "-0.0", "1.", ".5", "-0", "0", "7", "-7", "+7", "123456789012345678",
    "1234567890123456789", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "99999999999999999999999", "64Gi", "100m", "1.5Gi", "1Ei", "1e", "5d", "0n", "hello", "hello world",
    "a:b", "a: b", "http://x.y/z", "node-1", "x=y", "=", "<<", "-", "--", "---", "...", "@x", "`x",
    "'single'", "'it''s'", "''", '"dq"', '"a\\tb"', '"a\\nb"', '"\\u00e9"', '"\\x41"', '"\\/"', "'True'",
    '"yes"', "'0777'", "|\n  block\n", ">\n  folded\n", "|-\n  x\n", "!!str 1", '!!int "3"', "!foo bar",
    "&a x", "*a", "[a, b]", "[yes, 1e3, 'q', \"r\", 7]", "[a:b]", "{a: 1}", "{yes: no}", "{a: b, a: c}", "[]",
    "{}", "a #c", "a#b", "'x' #c", "a  b", "trailing ", "é", "caf\u00e9", "tab\there", "[a, [b]]",
    "0b5e2c4e-7a2d-4b8e-9d1a-3c4e5f6a7b8c", "5f1c2a3b-7a2d", "1e-5", "1E-5", "12e-1", "1e-5x", "12-3", "1-",
    "1234-5-6", "2001-1-1", "2001-12-14x", "0x1f-2", "1_0-1", "3-inf", "/dev/termination-log", "/", "25%",
    "0%", "1.5%", "%x", "100%x", "-5%",
]
TRICKY_KEYS = ["a", "b", "name", "yes", "on", "y", "n", "true", "null", "'a'", '"a"', "a:b", "'yes'", "<<",
               "? a", "1", "1e3", "kubernetes.io/name", "'multi word'", "x" * 1100, "a b", "&k a", "!!str k"]


# The grammar's own choice of the above: half the texts use only these, so that the property mostly
# checks texts the yaml-rs path takes (structure, indentation, duplicates, documents), not only refusals.
CLEAN_SCALARS = [s for s in TRICKY_SCALARS if fastyaml.in_agreed_grammar(f"k: {s}\n")]
CLEAN_KEYS = [k for k in TRICKY_KEYS if fastyaml.in_agreed_grammar(f"{k}: v\n")]


@st.composite
def nodes(draw: st.DrawFn, scalars: list[str], keys: list[str], depth: int = 0) -> Any:
    """A tree whose leaves are raw YAML scalar texts (kept verbatim when rendered)."""
    kinds = ["map", "map", "seq"] if depth == 0 else ["scalar", "scalar", "map", "seq"] if depth < 4 else ["scalar"]
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return draw(st.sampled_from(scalars))
    if kind == "seq":
        return draw(st.lists(nodes(scalars, keys, depth + 1), min_size=depth == 0, max_size=3))
    chosen = draw(st.lists(st.sampled_from(keys), min_size=depth == 0, max_size=4, unique=draw(st.booleans())))
    return {"__map__": [(k, draw(nodes(scalars, keys, depth + 1))) for k in chosen]}


def render(node: Any, indent: int, width: int, flush_seq: bool) -> list[str]:
    """Block-style lines of `node` at `indent` (sequences under a key at the key's indent if `flush_seq`)."""
    pad = " " * indent
    if isinstance(node, dict):
        lines = []
        for key, value in node["__map__"]:
            if isinstance(value, str):
                lines.append(f"{pad}{key}: {value}")
            elif isinstance(value, list) and not value or isinstance(value, dict) and not value["__map__"]:
                lines.append(f"{pad}{key}:")
            else:
                inner = indent if isinstance(value, list) and flush_seq else indent + width
                lines += [f"{pad}{key}:", *render(value, inner, width, flush_seq)]
        return lines or [f"{pad}{{}}"]
    if isinstance(node, list):
        lines = []
        for item in node:
            if isinstance(item, str):
                lines.append(f"{pad}- {item}")
                continue
            inner = render(item, indent + 2, width, flush_seq)
            lines += [f"{pad}- {inner[0][indent + 2:]}", *inner[1:]]
        return lines or [f"{pad}[]"]
    return [f"{pad}{node}"]


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """One or more rendered documents, some lines then moved, doubled, cut or commented."""
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        clean = draw(st.booleans())  # per document: streams mixing both kinds take the mixed path
        scalars, keys = (CLEAN_SCALARS, CLEAN_KEYS) if clean else (TRICKY_SCALARS, TRICKY_KEYS)
        node = draw(nodes(scalars, keys))
        lines = render(node, 0, draw(st.integers(1, 4)), draw(st.booleans()))
        docs.append(lines)
    lines = []
    for i, doc in enumerate(docs):
        if i or draw(st.booleans()):
            lines.append(draw(st.sampled_from(["---", "--- # c", "---  "])))
        lines += doc
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        if not lines:
            break
        at = draw(st.integers(0, len(lines) - 1))
        edit = draw(st.sampled_from(["indent", "dedent", "double", "drop", "comment", "spaces", "marker"]))
        line = lines[at]
        lines[at:at + 1] = {"indent": [" " + line], "dedent": [line[1:]], "double": [line, line], "drop": [],
                            "comment": [line, "# note"], "spaces": [line + "  "], "marker": ["---", line]}[edit]
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


def typed(value: Any) -> Any:
    """A form of `value` in which 1, 1.0 and True differ, -0.0 and 0.0 differ, and key order counts."""
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [typed(v) for v in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value.hex())
    return (type(value).__name__, repr(value))


def outcome(text: str) -> tuple[str, Any]:
    try:
        return "documents", typed(parse.parse_bodies(text, "f.yaml"))
    except InputError as exc:
        return "error", str(exc)


def pyyaml_outcome(text: str) -> tuple[str, Any]:
    with mock.patch.object(parse, "fast_yaml_bodies", lambda *_: None):
        return outcome(text)


def pyyaml_part(part: str) -> tuple[list[Any], bool] | None:
    """A stand-in for parse's PyYAML reading of a part: its documents, or None on an error."""
    try:
        return list(yaml.load_all(part, Loader=yaml.CSafeLoader)), False
    except yaml.YAMLError:
        return None


def fast(text: str) -> list[Any] | None:
    """The documents yaml-rs reads (with `pyyaml_part` for the documents outside the grammar), or None."""
    outcome = fastyaml.fast_yaml_bodies(text, pyyaml_part)
    return None if outcome is None else outcome[0]


def path_taken(text: str) -> str:
    calls = []
    taken = fastyaml.fast_yaml_bodies(text, lambda part: calls.append(part) or ([], False))
    if taken is None:
        return "PyYAML (yaml-rs refused)" if fastyaml.in_agreed_grammar(text) else "PyYAML (outside the grammar)"
    return "yaml-rs and PyYAML (mixed)" if calls else "yaml-rs"


def test_the_clean_choice_keeps_edges():
    assert {"True", '"yes"', "-0.0", "64Gi", "0n", "a:b", "infinity", "hello world", "[]", "25%", "12-3",
            "0b5e2c4e-7a2d-4b8e-9d1a-3c4e5f6a7b8c", "/dev/termination-log"} <= set(CLEAN_SCALARS)
    assert {"'yes'", "a:b", "kubernetes.io/name", "'multi word'"} <= set(CLEAN_KEYS)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_texts())
def test_parse_answers_as_pyyaml_alone_on_generated_yaml(text):
    event(path_taken(text))
    assert outcome(text) == pyyaml_outcome(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:- '\"#\n[]{},01eyn.&*!|>~\t")), max_size=60))
def test_parse_answers_as_pyyaml_alone_on_character_soup(text):
    assert outcome(text) == pyyaml_outcome(text)


@pytest.mark.parametrize("text", [
    "a: yes\n", "a: 0777\n", "a: 12:30\n", "a: 2001-12-14\n", "a: 1e3\n", "a: 9223372036854775808\n",
    "a: 1\na: 2\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  x\n", "hello\n", "a: [1, [2]]\n",
    "a: \"\\u00e9\"\n", "on: 1\n", "a:\tb\n", "a: b\r\n", "<<: {a: 1}\n",
])
def test_texts_outside_the_grammar_are_left_to_pyyaml(text):
    assert fast(text) is None


@pytest.mark.parametrize(("text", "documents"), [
    ("", []), ("# only a comment\n", []), ("---\n", [None]), ("a: 1\n---\n", [{"a": 1}, None]),
    ("- a\n- b\n", [["a", "b"]]), ("---\n- a\n---\n- b\n", [["a"], ["b"]]),
    ("a: 'True'\nb: True\nc: 64Gi\nd: -7\ne: 1.5\nf: ~\ng: [x, 'y', 3]\nh: {k: v}\n",
     [{"a": "True", "b": True, "c": "64Gi", "d": -7, "e": 1.5, "f": None, "g": ["x", "y", 3], "h": {"k": "v"}}]),
])
def test_texts_in_the_grammar_are_read_by_yaml_rs_as_pyyaml_reads_them(text, documents):
    assert fast(text) == documents
    assert typed(documents) == typed(list(yaml.load_all(text, Loader=yaml.CSafeLoader)))


def corpus() -> list[Path]:
    return sorted(p for p in (ROOT / "examples").rglob("*.yaml"))


@pytest.mark.parametrize("path", corpus(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_reads_alike_on_both_paths(path):
    text = path.read_text()
    assert outcome(text) == pyyaml_outcome(text)


def test_small_texts_are_left_to_pyyaml_in_use():
    with mock.patch.object(fastyaml, "MIN_BYTES", 32 << 10):
        assert fast("a: 1\n") is None
        assert fast("a: 1\n" * (8 << 10)) is None  # a duplicate key: PyYAML refuses it
        assert fast("".join(f"k{i}: {i}\n" for i in range(8 << 10))) is not None


def test_kubectl_style_lists_take_the_yaml_rs_path():
    """Not a vacuous property: manifests as `kubectl get -o yaml` and yaml.safe_dump write them qualify."""
    items = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "c", "image": "r/app:1", "resources": {
                  "requests": {"cpu": "100m", "memory": "64Mi"}}}], "priority": i}} for i in range(3)]
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, sort_keys=False)
    assert fast(text) == [{"apiVersion": "v1", "kind": "List", "items": items}]
    taken = [p for p in corpus() if fast(p.read_text()) is not None]
    assert len(taken) >= len(corpus()) // 2, [str(p) for p in corpus() if p not in taken]


MIXED = """a: 1
---
b: |
  a block scalar, outside the grammar
---
c: [x, 'y']
---
d: yes
"""


def test_a_stream_is_read_by_parts_when_some_documents_are_outside_the_grammar():
    parts = []

    def pyyaml(part):
        parts.append(part)
        return pyyaml_part(part)

    bodies, refused = fastyaml.fast_yaml_bodies(MIXED, pyyaml)
    assert parts == ["---\nb: |\n  a block scalar, outside the grammar\n", "---\nd: yes\n"]
    assert typed(bodies) == typed(list(yaml.load_all(MIXED, Loader=yaml.CSafeLoader))) and not refused
    assert outcome(MIXED + "---\ne: 1\ne: 2\n") == pyyaml_outcome(MIXED + "---\ne: 1\ne: 2\n")


@pytest.mark.parametrize("tail", ["%YAML 1.1\n---\nz: 1\n", "...\n", "--- |\n  x\n", "z: 'open\n---\nq'\n",
                                  "z: |\n  x\n---\nq: 1\nq: 2\n"])
def test_streams_whose_documents_could_be_tied_read_alike(tail):
    text = MIXED + tail
    assert outcome(text) == pyyaml_outcome(text)


@pytest.fixture(scope="module")
def fuzz_seeds() -> list[tuple[str, str]]:
    preload()
    return seed_texts(golden_cases=6, rng=random.Random(12))


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: "-".join(a for a in v if a != "{f}"))
def test_the_fuzz_contract_holds_with_every_yaml_offered_to_yaml_rs(tmp_path, fuzz_seeds, verb):
    """tests/test_fuzz.py's mutants once more, each run forked from here, where `MIN_BYTES` is 0."""
    test_fuzz.test_every_verb_keeps_the_contract_on_mutants(tmp_path, fuzz_seeds, verb)


def test_without_yaml_rs_pyyaml_reads_everything(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml_rs", None)  # `import yaml_rs` then raises ImportError
    assert fast(MIXED) is None and fast("a: 1\n") is None
    assert outcome(MIXED) == pyyaml_outcome(MIXED)
