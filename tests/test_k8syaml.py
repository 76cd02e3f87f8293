"""YAML as Kubernetes reads it (`kubefit.manifests.k8syaml`), against YAML 1.1 (PyYAML) and YAML 1.2.

The Kubernetes column is derived by hand from the sources kubectl runs: go-yaml v2 `resolve.go`
(`resolve`, `resolveMap`, `yamlStyleFloat`), `decode.go` (`scalar`: a timestamp is its text in an
`interface{}`; `merge`), sigs.k8s.io/yaml `yaml.go` (`yamlToJSONTarget`, `convertToJSONableObject`) and Go's
`json.Marshal` (a float64 with no fraction is written `1000`, ±Inf/NaN are refused), and apimachinery's
`YAMLReader.Read` for documents. The YAML 1.1 column is checked against PyYAML itself; the YAML 1.2 column
is the 1.2.2 core schema (§10.3.2), written by hand.
"""

from __future__ import annotations

import datetime
import math

import pytest
import yaml

from kubefit.errors import InputError
from kubefit.manifests.k8syaml import go_float32_g, split_documents
from kubefit.manifests.parse import parse_bodies

ERROR = object()  # the reader refuses the text
REFUSED = object()  # Kubernetes' reading refuses the value

# text, YAML 1.1 (PyYAML safe_load), YAML 1.2 core schema, Kubernetes (sigs.k8s.io/yaml over go-yaml v2)
SCALARS = [
    ("=", ERROR, "=", "="),  # PyYAML: "could not determine a constructor for the tag 'tag:yaml.org,2002:value'"
    ("y", "y", "y", True),  # resolveMap: y, Y, yes, Yes, YES are true
    ("Y", "Y", "Y", True),
    ("n", "n", "n", False),
    ("yes", True, "yes", True),
    ("No", False, "No", False),
    ("on", True, "on", True),
    ("OFF", False, "OFF", False),
    ("True", True, True, True),
    ("tRUE", "tRUE", "tRUE", "tRUE"),  # not in resolveMap
    ("~", None, None, None),
    ("Null", None, None, None),
    ("0777", 511, 777, 511),  # ParseInt(s, 0, 64): a leading 0 is octal
    ("0o17", "0o17", 15, 15),  # Go 1.13's 0o prefix
    ("0x1F", 31, 31, 31),
    ("0b101", 5, "0b101", 5),
    ("-0b101", -5, "-0b101", -5),
    ("1_000", 1000, "1_000", 1000),  # `_` dropped before ParseInt
    ("08", "08", 8, 8),  # not octal; yamlStyleFloat then ParseFloat: 8, written 8
    ("+12", 12, 12, 12),
    ("-0", 0, 0, 0),
    ("1:20", 80, "1:20", "1:20"),  # sexagesimal: YAML 1.1 only ("purposefully unsupported" in go-yaml)
    ("12:30:00", 45000, "12:30:00", "12:30:00"),
    ("1e3", "1e3", 1000.0, 1000),  # yamlStyleFloat needs no dot; json.Marshal writes 1000
    ("1.0", 1.0, 1.0, 1),
    ("1.", 1.0, 1.0, 1),
    (".5", 0.5, 0.5, 0.5),
    ("1e-3", "1e-3", 0.001, 0.001),  # PyYAML's float needs a dot in the mantissa
    ("1e400", "1e400", math.inf, "1e400"),  # ParseFloat: out of range, so go-yaml keeps the string
    (".inf", math.inf, math.inf, REFUSED),  # json: unsupported value: +Inf
    ("-.Inf", -math.inf, -math.inf, REFUSED),
    (".nan", math.nan, math.nan, REFUSED),
    ("2024-01-31", datetime.date(2024, 1, 31), "2024-01-31", "2024-01-31"),  # decode.go: a timestamp's text
    ("2024-01-31T12:00:00Z", datetime.datetime(2024, 1, 31, 12, 0, tzinfo=datetime.UTC), "2024-01-31T12:00:00Z",
     "2024-01-31T12:00:00Z"),
    ("9223372036854775807", 2**63 - 1, 2**63 - 1, 2**63 - 1),
    ("9223372036854775808", 2**63, 2**63, REFUSED),  # a uint64: kubefit refuses what int64 cannot hold
    ("-9223372036854775809", -(2**63) - 1, -(2**63) - 1, -(2**63)),  # no int: float64 rounds to -2^63
    ("100m", "100m", "100m", "100m"),
    ("<<", ERROR, "<<", "<<"),  # a merge only as a key
]


def _same(got, want) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(want) and got == want


def _kubernetes(text: str):
    return parse_bodies(f"apiVersion: v1\nkind: ConfigMap\ndata:\n  v: {text}\n", "s.yaml")[0]["data"]["v"]


@pytest.mark.parametrize(("text", "yaml11", "yaml12", "kubernetes"), SCALARS, ids=[s[0] for s in SCALARS])
def test_scalars_read_as_kubernetes_reads_them(text, yaml11, yaml12, kubernetes):
    if yaml11 is ERROR:
        with pytest.raises(yaml.YAMLError):
            yaml.safe_load(f"v: {text}\n")
    else:
        assert _same(yaml.safe_load(f"v: {text}\n")["v"], yaml11)
    assert yaml12 is not ERROR  # (the 1.2 column is the spec's, for the reader of this table)
    if kubernetes is REFUSED:
        with pytest.raises(InputError, match=r"ConfigMap #1: data\.v: .*(int64|JSON can hold)"):
            _kubernetes(text)
    else:
        assert _same(_kubernetes(text), kubernetes)


@pytest.mark.parametrize(("text", "value"), [
    ("'yes'", "yes"), ('"0777"', "0777"), ("!!str 0777", "0777"), ("!!int '0777'", 511), ("!!float 1", 1),
    ("!!float '2.5'", 2.5), ("!!bool yes", True), ("!!null ~", None), ("!!binary aGk=", "hi"),
    ("!!timestamp 2001-12-14", "2001-12-14"), ("!custom 12", "12"), ("! 12", "12"), ("|\n    yes\n", "yes\n"),
])
def test_quoted_block_and_tagged_scalars(text, value):
    """decode.go `scalar`: a quoted or block scalar is a string; an explicit tag resolves as resolve.go's
    `resolve(tag, text)`; a tag go-yaml does not resolve (`!custom`, `!`) leaves the text."""
    assert _same(_kubernetes(text), value)


@pytest.mark.parametrize("text", ["!!int abc", "!!null x", "!!bool 1", "!!timestamp 12", "!!binary a*b"])
def test_a_value_its_tag_cannot_hold_is_refused_by_name(text):
    """resolve.go's deferred check: "cannot decode !!str `abc` as a !!int" and so on."""
    with pytest.raises(InputError, match=r"s\.yaml: ConfigMap #1: data\.v: "):
        _kubernetes(text)


@pytest.mark.parametrize(("key", "json_key"), [
    ("yes", "true"), ("n", "false"), ("1", "1"), ("0x10", "16"), ("1.5", "1.5"), ("1e3", "1000"),
    ("123456789.0", "1.2345679e+08"), ("'1'", "1"), ("2024-01-31", "2024-01-31"), (".inf", ".inf"),
])
def test_mapping_keys_become_json_keys(key, json_key):
    """convertToJSONableObject: int keys with strconv.Itoa, bools as true/false, floats with
    FormatFloat(k, 'g', -1, 32) (1.2345679e+08: float32 digits), ±Inf as .inf."""
    assert list(parse_bodies(f"kind: ConfigMap\ndata:\n  {key}: v\n", "s.yaml")[0]["data"]) == [json_key]


def test_go_float32_formatting_matches_strconv():
    """strconv.FormatFloat(f, 'g', -1, 32) values worked out by hand: shortest float32 digits, %e when the
    exponent is below -4 or at least 6 (eprec 6 for the shortest form), two exponent digits at least."""
    assert [go_float32_g(f) for f in (0.1, 1e-5, 0.0001, 1e6, 123456.0, 2.5, -3.0, 1e21, 0.0)] == [
        "0.1", "1e-05", "0.0001", "1e+06", "123456", "2.5", "-3", "1e+21", "0"]


@pytest.mark.parametrize(("text", "message"), [
    ("kind: ConfigMap\ndata: {~: v}\n", "null mapping key"),
    ("kind: ConfigMap\ndata: {18446744073709551615: v}\n", "unsupported map key"),
    ("kind: ConfigMap\ndata: {1: a, '1': b}\n", "duplicate field '1'"),
    ("kind: ConfigMap\ndata: {yes: a, true: b}\n", "duplicate field 'true'"),
    ("a: &x [*x]\n", "contains itself"),
])
def test_keys_kubernetes_cannot_convert_are_refused(text, message):
    with pytest.raises(InputError, match=message):
        parse_bodies(text, "s.yaml")


def test_merge_keys_set_their_keys_where_they_stand():
    """decode.go `mapping`/`merge`: pairs are set in order, so a key after `<<` overrides the merged one
    and the merged one overrides a key before it (the YAML spec would keep the explicit key either way);
    in a sequence of merges the first mapping wins."""
    text = ("base: &b {cpu: '1', memory: 1Gi}\nmore: &m {cpu: '3', pods: '9'}\n"
            "after: {<<: *b, cpu: '2'}\nbefore: {cpu: '2', <<: *b}\nboth: {<<: [*m, *b]}\n")
    body = parse_bodies(text, "s.yaml")[0]
    assert body["after"] == {"cpu": "2", "memory": "1Gi"}
    assert body["before"] == {"cpu": "1", "memory": "1Gi"}
    assert body["both"] == {"cpu": "3", "memory": "1Gi", "pods": "9"}


def test_aliases_are_copies():
    """decode.go `alias` decodes the anchored node again for each alias: no shared objects."""
    body = parse_bodies("a: &x {k: v}\nb: *x\n", "s.yaml")[0]
    assert body["a"] == body["b"] and body["a"] is not body["b"]


@pytest.mark.parametrize(("text", "count"), [
    ("a: 1\n---\nb: 2\n", 2),
    ("---\na: 1\n---\n---\nb: 2\n", 2),  # a `---` opening an empty chunk is its first line, not a document
    ("a: 1\n--- # next\nb: 2\n", 2),
    ("# only a comment\n---\na: 1\n", 1),  # a document of nothing is skipped (kubectl skips `null`)
    ("a: 1\n...\nb: 2\n", 1),  # go-yaml's Unmarshal reads the first document of a chunk; kubectl too
    ("a: |\n  ---\n  not a separator\n", 1),  # indented: part of the block scalar
])
def test_documents_are_the_chunks_kubectl_reads(text, count):
    assert len(parse_bodies(text, "s.yaml")) == count


def test_a_separator_followed_by_text_is_refused():
    """YAMLReader.Read: "invalid Yaml document separator" unless a comment follows the `---`."""
    with pytest.raises(InputError, match="s.yaml: invalid YAML document separator at line 2"):
        parse_bodies("a: 1\n--- b: 2\n", "s.yaml")


def test_split_documents_keeps_line_numbers():
    assert [(line, chunk) for line, chunk in split_documents("a: 1\r\n---\r\nb: 2")] == [(0, "a: 1\n"),
                                                                                         (2, "b: 2\n")]


def test_malformed_yaml_is_located_in_the_file_not_the_chunk():
    with pytest.raises(InputError, match="malformed YAML at line 5, column 2"):  # where libyaml sees it
        parse_bodies("a: 1\n---\nb: 2\nc: [1\nd: 3\n", "s.yaml")


def test_a_json_stream_holds_several_objects():
    """kubectl's YAMLOrJSONDecoder: a stream starting with `{` is read by json.Decoder, value after value."""
    assert parse_bodies('{"kind": "A"}\n{"kind": "B"} {"kind": "C"}', "s.json") == [
        {"kind": "A"}, {"kind": "B"}, {"kind": "C"}]
