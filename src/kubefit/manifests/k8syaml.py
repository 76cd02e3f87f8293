"""YAML as Kubernetes reads a manifest: the reference reading, in Python over libyaml's parser.

kubectl (and every Kubernetes component reading YAML) splits a stream into documents at lines that start
with `---` (k8s.io/apimachinery util/yaml `YAMLReader.Read`), converts each document to JSON with
sigs.k8s.io/yaml's `YAMLToJSON` — go-yaml v2 (go.yaml.in/yaml/v2 v2.4.2) `Unmarshal` into `interface{}`,
then `convertToJSONableObject` and `json.Marshal` — and decodes that JSON. What this module returns for a
document is the value of that JSON as Python's `json` reads it:

- scalars resolve as go-yaml v2's `resolve.go` (`resolve`) resolves a plain scalar: `y`/`Y`/`yes`/`on`/
  `true` (and their `n`/`no`/`off`/`false` twins) are booleans, `~`/`null`/empty are null, integers as Go's
  `strconv.ParseInt(s, 0, 64)` reads them once `_` separators are dropped (`0x1F`, `0o17`, `0b101`, and
  `0777` octal), then unsigned 64-bit ones, then floats of `^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?
  [0-9]+)?$` (`1e3`, `1.`, `.5`), `.inf`/`.nan`; everything else — timestamps included (go-yaml v2 gives
  `interface{}` their text), `12:30`, `=` — is a string; quoted and block scalars are strings;
- a float becomes what `json.Marshal` writes: `1.0` and `1e3` are the integers 1 and 1000 (Go writes
  `1` and `1000`), `.inf` and `.nan` fail the conversion ("json: unsupported value");
- a key becomes a string as `convertToJSONableObject` writes it (`1` → "1", `yes` → "true", a float with
  `FormatFloat(f, 'g', -1, 32)`); a null, unsigned or collection key fails;
- `<<` merges (decode.go `merge`): the keys of a mapping, or of each mapping of a sequence of them (the
  first one winning), are set where the `<<` stands, so a key set later overrides them and they override
  a key set before; anchors and aliases expand to copies;
- explicit tags are go-yaml's: `!!str` a string, `!!int 07`, `!!float 1` (1.0), `!!binary` base64
  decoded; a value its tag cannot hold fails ("cannot decode !!str `x` as a !!int"); other tags are
  ignored;
- only the first YAML document of each `---`-separated chunk is read (go-yaml's `Unmarshal` reads one),
  so text after a `...` document end in the same chunk is ignored, as kubectl ignores it; a `---` line
  followed by anything but a comment is refused ("invalid Yaml document separator").

kubefit stays stricter than go-yaml's non-strict `Unmarshal` where the API server is: a key given twice in
one mapping (two keys that become one JSON key: `1` and `"1"`, `yes` and `true`) is refused by name, as
is an integer outside int64. Those and the conversion's failures are returned as `Refused` markers in
place of the value, so that `kubefit.manifests.parse` can name the object and field once the document is
read. The compiled reader (`kubefit.manifests.reader`) gives the same values faster; tests hold the two
to each other.
"""

from __future__ import annotations

import base64
import codecs
import datetime
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kubefit.errors import shorten

MIN_INT64, MAX_INT64 = -(2**63), 2**63 - 1
MAX_UINT64 = 2**64 - 1
STR, BOOL, INT, FLOAT, NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "bool", "int", "float", "null"))
TIMESTAMP, BINARY, MERGE = (f"tag:yaml.org,2002:{t}" for t in ("timestamp", "binary", "merge"))
_RESOLVABLE = frozenset({STR, BOOL, INT, FLOAT, NULL, TIMESTAMP})  # resolve.go resolvableTag ("" aside)
_PLAIN, _QUOTED = "!kubefit/plain", "!kubefit/quoted"  # the tags our resolver gives untagged scalars

# resolve.go's resolveMap: the words with a value of their own, and the first characters worth a look
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_WORD_TAGS = {bool: BOOL, type(None): NULL, float: FLOAT}
_HINTED = frozenset("+-0123456789yYnNtTfFoO~.")  # resolve.go resolveTable: 'S', 'D', 'M' and '.'
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")  # yamlStyleFloat
_GO_FLOAT = re.compile(r"[-+]?[0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9][0-9_]*)?")  # readFloat, base 10
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
                        r"(?:([Tt ])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?(Z|[-+][0-9]{2}:[0-9]{2})?)?")


class Refused:
    """Put in place of a value Kubernetes' reading (or kubefit's stricter one) refuses, with the reason;
    `count` says how many were made, so that a reader knows whether to look for one."""

    __slots__ = ("message",)
    count = 0

    def __init__(self, message: str) -> None:
        self.message = message
        Refused.count += 1

    def __repr__(self) -> str:
        return f"Refused({self.message!r})"


class ConversionError(Exception):
    """A document sigs.k8s.io/yaml cannot convert at all (a recursive alias): `message`, at `mark`."""

    def __init__(self, message: str, mark: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark


# --------------------------------------------------------------------------- documents

class SeparatorError(Exception):
    """A `---` line followed by more than a comment (YAMLReader: "invalid Yaml document separator")."""

    def __init__(self, line: int, rest: str) -> None:
        super().__init__(f"invalid YAML document separator at line {line}: {shorten(rest)!r} follows the "
                         f"'---' (Kubernetes allows only a comment there)")
        self.line = line


def split_documents(text: str) -> Iterator[tuple[int, str]]:
    """The chunks kubectl reads as documents: (0-based line of the chunk's first line, chunk text).

    k8s.io/apimachinery util/yaml `YAMLReader.Read`: a line starting with `---` ends the chunk before it
    (and is dropped) unless that chunk is still empty (then it is its first line); what follows `---` on
    the line must be blank or a comment. Lines end in `\\n` (a `\\r\\n` end counts as one, as `ReadLine` reads).
    """
    start, lines = 0, []
    for number, line in enumerate(text.split("\n")):
        if line.startswith("---"):
            rest = line[3:].strip()
            if rest and not rest.startswith("#"):
                raise SeparatorError(number + 1, rest)
            if lines:
                yield start, "".join(lines)
                start, lines = number + 1, []
                continue
        if not lines:
            start = number
        lines.append(line[:-1] + "\n" if line.endswith("\r") else line + "\n")
    if lines and not (len(lines) == 1 and lines[0] == "\n" and text.endswith("\n")):
        yield start, "".join(lines)


def first_node(chunk: str) -> Node | None:
    """The node graph of a chunk's first document (None: it holds none), composed from libyaml's events
    as go-yaml's `parser` composes them (decode.go `parse`): an untagged plain scalar is tagged `_PLAIN`,
    an untagged quoted or block one `_QUOTED`, and a `!` tag is kept (go-yaml leaves such a text as it is,
    where PyYAML's composer would resolve it). An alias is the anchored node itself; one inside its own
    anchor's node (which go-yaml's decoder refuses, "anchor value contains itself") is refused here."""
    events = yaml.CBaseLoader(chunk)
    try:
        events.get_event()  # the stream's start
        if events.check_event(yaml.StreamEndEvent):
            return None
        events.get_event()  # the document's start
        return _compose(events)
    finally:
        events.dispose()


def _compose(events: Any) -> Node:
    """One node and its children from the event stream, iteratively (no recursion limit to meet)."""
    anchors: dict[str, Node] = {}
    open_nodes: set[int] = set()
    stack: list[Node] = []  # the collections being filled
    root: Node | None = None
    while True:
        event = events.get_event()
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            open_nodes.discard(id(stack.pop()))
            if not stack:
                return root  # type: ignore[return-value]
            continue
        if isinstance(event, yaml.AliasEvent):
            node = anchors.get(event.anchor)
            if node is None:
                raise ConversionError(f"unknown anchor '{shorten(event.anchor, 40)}' referenced", event.start_mark)
            if id(node) in open_nodes:
                raise ConversionError(f"anchor '{shorten(event.anchor, 40)}' value contains itself",
                                      event.start_mark)
        elif isinstance(event, yaml.ScalarEvent):
            node = ScalarNode(_scalar_tag(event), event.value, event.start_mark, event.end_mark, event.style)
        else:
            node = (SequenceNode if isinstance(event, yaml.SequenceStartEvent) else MappingNode)(
                "", [], event.start_mark, event.end_mark)
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.AliasEvent):
            anchors[anchor] = node
        if not stack:
            root = node
        else:
            _append(stack[-1], node)
        if isinstance(node, (SequenceNode, MappingNode)) and not isinstance(event, yaml.AliasEvent):
            stack.append(node)
            open_nodes.add(id(node))
        elif not stack:
            return node


def _append(parent: Node, node: Node) -> None:
    """A child into its sequence, or into its mapping as a key or (the pair's last) a value."""
    if isinstance(parent, SequenceNode):
        parent.value.append(node)
    elif parent.value and len(parent.value[-1]) == 1:
        parent.value[-1] = (parent.value[-1][0], node)
    else:
        parent.value.append((node,))


def _scalar_tag(event: Any) -> str:
    if event.tag is None:
        return _PLAIN if event.implicit[0] else _QUOTED
    return event.tag


# --------------------------------------------------------------------------- values

def document_value(root: Node) -> Any:
    """A document's node graph as the JSON value Kubernetes makes of it (failures as `Refused`)."""
    return _Converter().value(root)


class _Converter:
    """go-yaml v2 decode.go (`unmarshal` into `interface{}`, non-strict) then sigs.k8s.io/yaml's
    `convertToJSONableObject` and `json.Marshal`, with kubefit's duplicate-key refusal."""

    def __init__(self) -> None:
        self.expanding: set[int] = set()  # aliases being expanded (decode.go `alias`: a loop is an error)

    def value(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            return scalar_value(node.tag, node.value)
        if id(node) in self.expanding:
            raise ConversionError("an anchor's value contains itself (go-yaml: \"anchor value contains "
                                  "itself\")", node.start_mark)
        self.expanding.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.value(child) for child in node.value]
            out: dict[str, Any] = {}
            self.mapping(node, out)
            return out
        finally:
            self.expanding.discard(id(node))

    def mapping(self, node: MappingNode, out: dict[str, Any]) -> None:
        """decode.go `mapping`: pairs set in order into `out` (a merge sets its keys where it stands)."""
        given: set[str] = set()
        for key_node, value_node in node.value:
            if _is_merge(key_node):
                self.merge(value_node, out)
                continue
            key = self.key(key_node)
            if key in given:
                out[key] = Refused(duplicate_message(key))
                continue
            given.add(key)
            out[key] = self.value(value_node)

    def merge(self, node: Node, out: dict[str, Any]) -> None:
        """decode.go `merge`: a mapping, or a sequence of mappings applied last to first (the first wins)."""
        if isinstance(node, MappingNode):
            self.merge_mapping(node, out)
        elif isinstance(node, SequenceNode) and all(isinstance(n, MappingNode) for n in node.value):
            for child in reversed(node.value):
                self.merge_mapping(child, out)
        else:
            out["<<"] = Refused("map merge requires map or sequence of maps as the value")

    def merge_mapping(self, node: MappingNode, out: dict[str, Any]) -> None:
        if id(node) in self.expanding:
            raise ConversionError("an anchor's value contains itself (go-yaml: \"anchor value contains "
                                  "itself\")", node.start_mark)
        self.expanding.add(id(node))
        try:
            self.mapping(node, out)
        finally:
            self.expanding.discard(id(node))

    def key(self, node: Node) -> str:
        if not isinstance(node, ScalarNode):
            raise ConversionError("found unhashable key", node.start_mark)  # go-yaml: "invalid map key"
        return json_key(go_scalar(node.tag, node.value), node.value)


def _is_merge(node: Node) -> bool:
    """decode.go `isMerge`: a `<<` key, plain or tagged !!merge."""
    return isinstance(node, ScalarNode) and node.value == "<<" and node.tag in (_PLAIN, MERGE)


def scalar_value(tag: str, text: str) -> Any:
    """A scalar with its tag (`_PLAIN`, `_QUOTED`, "!" or an explicit one) as Kubernetes' JSON holds it."""
    value = go_scalar(tag, text)
    return value if type(value) is str else json_value(value, text)


def go_scalar(tag: str, text: str) -> Any:
    """decode.go `scalar` into `interface{}`: the Go value of a scalar (a `Refused` where it fails)."""
    if tag == _PLAIN:
        return resolve_plain(text)
    if tag in _RESOLVABLE:
        return resolve_tagged(tag, text)
    return _binary(text) if tag == BINARY else text  # quoted, block, "!" or a tag go-yaml ignores


def resolve_plain(text: str) -> Any:
    """resolve.go `resolve("", text)`: the Go value of an untagged plain scalar. An unsigned 64-bit
    integer beyond int64 stays a Python int (refused later); a timestamp stays its text, as go-yaml v2
    gives it to `interface{}` (decode.go `scalar`)."""
    if not text:
        return None
    first = text[0]
    if first not in _HINTED:
        return text
    if text in _WORDS:
        return _WORDS[text]
    if first == ".":
        return go_parse_float(text) if _go_float_syntax(text) else text
    if first in "yYnNtTfFoO~":
        return text
    plain = text.replace("_", "")
    number = go_parse_int(plain)
    if number is not None:
        return number
    if _YAML_FLOAT.fullmatch(plain):
        value = go_parse_float(plain)
        return text if type(value) is str else value
    return text


def resolve_tagged(tag: str, text: str) -> Any:
    """resolve.go `resolve(tag, text)` for an explicit resolvable tag, or a `Refused` where the tag
    cannot hold the text (its deferred check: only an integer may become a !!float)."""
    if tag == STR:
        return text
    got, value = _resolve_with_tag(tag, text)
    if got == tag:
        return text if tag == TIMESTAMP else value
    if tag == FLOAT and got == INT and MIN_INT64 <= value <= MAX_INT64:
        return float(value)
    return Refused(f"cannot decode {_short(got)} `{shorten(text, 40)}` as a {_short(tag)} (its explicit tag)")


def _resolve_with_tag(tag: str, text: str) -> tuple[str, Any]:
    """resolve.go `resolve`'s tag and value for a non-!!str resolvable tag (timestamps looked for only
    under a !!timestamp tag, as there)."""
    if text and text[0] in "+-0123456789" and tag == TIMESTAMP and _timestamp(text):
        return TIMESTAMP, text
    value = resolve_plain(text)
    if type(value) is str:
        return STR, value
    if type(value) is int:
        return INT, value
    return _WORD_TAGS[type(value)], value


def _short(tag: str) -> str:
    return "!!" + tag.rsplit(":", 1)[1]


def _timestamp(text: str) -> bool:
    """resolve.go `parseTimestamp`: one of go-yaml's four layouts (`2006-1-2T15:4:5.999999999Z07:00`, the
    same with `t`, `2006-1-2 15:4:5.999999999`, `2006-1-2`) holding a valid date and time."""
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        return False
    year, month, day, sep, hour, minute, second, _, zone = match.groups()
    if sep is not None and (sep == " ") == (zone is not None):  # "2006-1-2 15:4:5.9" has no zone
        return False
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    if hour is not None and not (int(hour) < 24 and int(minute) < 60 and int(second) < 60):
        return False
    return zone is None or zone == "Z" or (int(zone[1:3]) < 24 and int(zone[4:6]) < 60)


def _binary(text: str) -> Any:
    """decode.go: `!!binary` is base64 (`StdEncoding`, line breaks ignored); its bytes become a JSON
    string with each byte that is not UTF-8 replaced by U+FFFD, as `json.Marshal` writes them."""
    try:
        data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
    except ValueError:
        return Refused("!!binary value contains invalid base64 data")
    return data.decode("utf-8", "kubefit-go-replace")


def _replace_bytes(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    return "\ufffd" * (error.end - error.start), error.end


codecs.register_error("kubefit-go-replace", _replace_bytes)

_DIGITS = {2: frozenset("01"), 8: frozenset("01234567"), 10: frozenset("0123456789"),
           16: frozenset("0123456789abcdefABCDEF")}


def go_parse_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), else strconv.ParseUint(plain, 0, 64) (no sign there): the value,
    or None. Base 0: `0x`, `0o`, `0b` prefixes (either case), a leading `0` for octal."""
    body = plain[1:] if plain[:1] in "+-" else plain
    prefix = body[:2].lower()
    if prefix in ("0x", "0o", "0b"):
        base, digits = {"0x": 16, "0o": 8, "0b": 2}[prefix], body[2:]
    elif body[:1] == "0" and len(body) > 1:
        base, digits = 8, body[1:]
    else:
        base, digits = 10, body
    if not digits or len(digits) > 70 or not _DIGITS[base].issuperset(digits):  # > 70: beyond 64 bits
        return None
    value = int(digits, base)
    if plain[:1] == "-":
        return -value if value <= 2**63 else None
    if value <= MAX_INT64 or (plain[:1] != "+" and value <= MAX_UINT64):
        return value
    return None


def _go_float_syntax(text: str) -> bool:
    """Whether strconv.ParseFloat reads all of a decimal `text` (readFloat's grammar, `underscoreOK`)."""
    if _GO_FLOAT.fullmatch(text) is None or not any(c.isdigit() for c in re.split("[eE]", text)[0]):
        return False
    return "_" not in text or _underscore_ok(text)


def _underscore_ok(s: str) -> bool:
    """strconv's `underscoreOK` (no base prefix here): every `_` between two digits."""
    saw = "^"
    for c in s.lstrip("+-"):
        if c.isdigit():
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def go_parse_float(plain: str) -> Any:
    """strconv.ParseFloat of a decimal float already in its grammar: the value, or the text where Go
    refuses it for range (beyond ±1.8e308)."""
    value = float(plain.replace("_", ""))
    return plain if math.isinf(value) else value


def json_value(value: Any, text: str) -> Any:
    """A resolved Go value as `json.Marshal` writes it and Python's json reads it back: floats that Go
    writes without a fraction are integers; an integer outside int64 and a non-finite float are refused."""
    if type(value) is float:
        if not math.isfinite(value):
            sign = "" if math.isnan(value) else "+" if value > 0 else "-"
            return Refused(f"{shorten(text, 40)} is not a number JSON can hold (Kubernetes converts YAML to "
                           f"JSON: json: unsupported value: {sign}{'NaN' if math.isnan(value) else 'Inf'})")
        if value.is_integer() and abs(value) < 1e21:
            value = int(value)
        else:
            return value
    if type(value) is int and not MIN_INT64 <= value <= MAX_INT64:
        return Refused(out_of_int64_message(text))
    return value


def json_key(value: Any, text: str) -> str:
    """A mapping key as `convertToJSONableObject` turns it into a JSON key (or a `Refused` reason)."""
    if type(value) is str:
        return value
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        if MIN_INT64 <= value <= MAX_INT64:
            return str(value)
        raise ConversionError(f"unsupported map key {shorten(text, 40)} (an unsigned 64-bit integer; "
                              f"sigs.k8s.io/yaml: \"unsupported map key of type: uint64\")")
    if type(value) is float:
        return go_float32_g(value)
    if isinstance(value, Refused):
        raise ConversionError(value.message)
    raise ConversionError("a null mapping key (sigs.k8s.io/yaml: \"unsupported map key of type: <nil>\")")


def go_float32_g(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32), with `.inf`/`-.inf`/`.nan` for the special values
    (sigs.k8s.io/yaml's float keys)."""
    if math.isnan(value):
        return ".nan"
    with np.errstate(over="ignore"):
        single = np.float32(value)
    if np.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1.0, float(single)) < 0 else "0"
    mantissa, exponent = np.format_float_scientific(single, unique=True, trim="-").split("e")
    negative = mantissa.startswith("-")
    digits = mantissa.lstrip("-").replace(".", "")
    exp = int(exponent)
    sign = "-" if negative else ""
    if exp < -4 or exp >= 6:  # 'g' with the shortest digits: %e past these exponents
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    point = exp + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def duplicate_message(key: str) -> str:
    return f"duplicate field '{shorten(key)}' (a key given twice in one mapping; the API server refuses it)"


def out_of_int64_message(text: str) -> str:
    return f"integer {shorten(text)} is outside int64 (-2^63 … 2^63-1); quote it if it is a quantity"
