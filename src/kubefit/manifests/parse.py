"""Bytes → parsed YAML/JSON documents, refusing what a Kubernetes decoder refuses and what cannot end well.

What is refused, each with one message naming the file (and, once parsed, the object and field):
an input larger than `KUBEFIT_MAX_INPUT_BYTES` (default 256 MiB; stdin too), a duplicated mapping key
(the API server's strict decoding: "duplicate field"), an integer outside int64, nesting deeper than
`MAX_DEPTH`, and YAML aliases expanding to more than `MAX_ALIAS_NODES` nodes (an "alias bomb").

The common case stays on C code: a text in the grammar where yaml-rs reads YAML as PyYAML does goes
to yaml-rs (`kubefit.manifests.fastyaml`), any other to PyYAML's libyaml loader (a subclass checks keys and
integers as it constructs), JSON to `json` with a pairs hook; depth and alias checks only walk a file whose text could break them.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np
import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from kubefit.errors import InputError, shorten
from kubefit.manifests.fastyaml import fast_yaml_bodies

MAX_INPUT_BYTES = 256 << 20
MAX_DEPTH = 100  # deeper than any Kubernetes object kubefit reads (a Deployment's pod affinity is ~15)
HARD_DEPTH = 1000  # past this the C parser itself is at risk (it recurses), so it is refused before parsing
MAX_ALIAS_NODES = 1_000_000
MIN_INT64, MAX_INT64 = -(2**63), 2**63 - 1
_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"

try:  # the C loader is ~10x faster on large snapshots and traces
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


class _Refused:
    """Put in place of a value the parser refused, so that the walk afterwards can say where it was."""

    def __init__(self, message: str) -> None:
        self.message = message


def max_input_bytes() -> int:
    """The input size bound: `KUBEFIT_MAX_INPUT_BYTES` (bytes, a plain integer) or 256 MiB."""
    raw = os.environ.get("KUBEFIT_MAX_INPUT_BYTES", "")
    return int(raw) if raw.strip().isdigit() else MAX_INPUT_BYTES


def read_bounded(stream: Any, source: str) -> bytes:
    """At most `max_input_bytes()` bytes of a stream (text is encoded); a longer input is refused, not cut."""
    limit = max_input_bytes()
    data = stream.read(limit + 1)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if len(data) > limit:
        raise InputError(f"input larger than {limit} bytes (KUBEFIT_MAX_INPUT_BYTES raises the limit)",
                         file=source)
    return data


# --------------------------------------------------------------------------- YAML

class _StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """libyaml's SafeLoader with duplicate keys and out-of-int64 integers marked as `_Refused`."""

    refused = False

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        try:
            distinct = len({k.value for k, _ in node.value}) == len(node.value)
        except TypeError:  # a mapping or sequence as a key (the constructor refuses it below)
            distinct = False
        duplicate = None if distinct else self._duplicate_key(node)  # rare: look closer
        mapping = super().construct_mapping(node, deep=deep)
        if duplicate is not None:
            self.refused = True
            mapping[self.construct_object(duplicate)] = _Refused(_duplicate(duplicate.value))
        return mapping

    @staticmethod
    def _duplicate_key(node: MappingNode) -> ScalarNode | None:
        """The first scalar key given twice with one tag (`<<` merge keys may repeat)."""
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != _MERGE_TAG:
                key = (key_node.tag, key_node.value)
                if key in seen:
                    return key_node
                seen.add(key)
        return None

    def construct_yaml_int(self, node: ScalarNode) -> Any:
        digits = node.value.replace("_", "").lstrip("+-0") or "0"
        if len(digits) > 20:  # also spares Python's int() its 4,300-digit limit
            return self._out_of_range(node.value)
        value = super().construct_yaml_int(node)
        return value if MIN_INT64 <= value <= MAX_INT64 else self._out_of_range(node.value)

    def _out_of_range(self, text: str) -> _Refused:
        self.refused = True
        return _Refused(_out_of_int64(text))


_StrictLoader.add_constructor(_INT_TAG, _StrictLoader.construct_yaml_int)


def _yaml_bodies(text: str, source: str, depth: int) -> tuple[list[Any], bool]:
    """The documents of a YAML stream (`depth`: its `_bracket_depth`); whether a value was refused (to be
    located by `locate_refusal`)."""
    check_nodes = ("&" in text and _ANCHOR.search(text) is not None) or _may_nest_deeper(text, MAX_DEPTH, depth,
                                                                                           block=True)
    if not check_nodes:  # where yaml-rs provably reads as PyYAML (duplicates and big integers are sent here)
        fast = fast_yaml_bodies(text, lambda part: _libyaml_part(part, source))
        if fast is not None:
            return fast
    return _libyaml_bodies(text, source, check_nodes)


def _libyaml_part(text: str, source: str) -> tuple[list[Any], bool] | None:
    """Some documents of a larger stream; None on an error (the whole stream is then read for its message)."""
    try:
        return _libyaml_bodies(text, source, check_nodes=False)
    except (yaml.YAMLError, RecursionError):
        return None


def _libyaml_bodies(text: str, source: str, check_nodes: bool) -> tuple[list[Any], bool]:
    """PyYAML's documents (the reference reading), with the alias and depth walks if `check_nodes`."""
    loader = _StrictLoader(text)
    bodies = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if check_nodes:
                _check_node_graph(node, source)
            bodies.append(loader.construct_document(node))
    finally:
        loader.dispose()
    return bodies, loader.refused


def _check_node_graph(root: Any, source: str) -> None:
    """Depth and alias-expanded size of one composed document (aliases are shared nodes), iteratively."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(source)
        if id(node) in sizes:
            continue
        children = _children(node)
        if done or not children:
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(node)] > MAX_ALIAS_NODES:
                raise InputError(f"YAML aliases expand to more than {MAX_ALIAS_NODES} values (an alias bomb?)",
                                 file=source)
            continue
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children if id(c) not in sizes)


def _children(node: Any) -> list[Any]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


# --------------------------------------------------------------------------- JSON

class _JsonHooks:
    """`json.loads` hooks marking duplicate keys and out-of-int64 integers as `_Refused`."""

    def __init__(self) -> None:
        self.refused = False

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        mapping = dict(pairs)
        if len(mapping) != len(pairs):
            return self._with_duplicate(mapping, pairs)
        return mapping

    def _with_duplicate(self, mapping: dict[str, Any], pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        mapping[key] = _Refused(_duplicate(key))
        self.refused = True
        return mapping

    def integer(self, text: str) -> Any:
        if len(text.lstrip("-0")) <= 18:  # fits int64 whatever its digits
            return int(text)
        if len(text) <= 21 and MIN_INT64 <= int(text) <= MAX_INT64:
            return int(text)
        self.refused = True
        return _Refused(_out_of_int64(text))


def _json_body(text: str, source: str, depth: int) -> tuple[Any, bool]:
    hooks = _JsonHooks()
    body = json.loads(text, object_pairs_hook=hooks.pairs, parse_int=hooks.integer)
    if depth > MAX_DEPTH:
        _check_object_depth(body, source)
    return body, hooks.refused


def _duplicate(key: str) -> str:
    return f"duplicate field '{shorten(key)}' (a key given twice in one mapping; the API server refuses it)"


def _out_of_int64(text: str) -> str:
    return f"integer {shorten(text)} is outside int64 (-2^63 … 2^63-1); quote it if it is a quantity"


# --------------------------------------------------------------------------- shared

def parse_bodies(text: str, source: str) -> list[Any]:
    """Every top-level document of `text` (JSON if it starts with `{` or `[`, else YAML), checked."""
    is_json = _JSON_START.match(text) is not None
    depth = _bracket_depth(text)  # one pass over the text serves both limits
    if _may_nest_deeper(text, HARD_DEPTH, depth, block=not is_json):
        raise _too_deep(source)
    try:
        if is_json:
            body, refused = _json_body(text, source, depth)
            bodies = [body]
        else:
            bodies, refused = _yaml_bodies(text, source, depth)
    except RecursionError:
        raise _too_deep(source) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                         file=source) from None
    except yaml.YAMLError as exc:
        raise InputError(_yaml_message(exc), file=source) from None
    if refused:
        locate_refusal(bodies, source)
    return bodies


def _yaml_message(exc: yaml.YAMLError) -> str:
    """`malformed YAML at line L, column C: problem` — one line, whatever the problem text holds."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"malformed YAML{where}: {shorten(str(problem))}"


def locate_refusal(bodies: list[Any], source: str) -> None:
    """Raise the first `_Refused` value of the documents, with its object (kind/name) and field path."""
    for i, body in enumerate(bodies, start=1):
        found = _find_refused(body, "")
        if found is not None:
            path, refused = found
            raise InputError(refused.message, file=source, obj=_object_label(body, path, i),
                             field=path.lstrip(".") or None)


def _find_refused(value: Any, path: str) -> tuple[str, _Refused] | None:
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, _Refused):
            return where, node
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}") for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{j}]") for j, v in reversed(list(enumerate(node))))
    return None


def _object_label(body: Any, path: str, index: int) -> str:
    """`Kind/name` of the object holding `path` (a `kind: List` item when the path goes through items)."""
    match = re.match(r"^\.items\[(\d+)\]", path) if isinstance(body, dict) else None
    if match and isinstance(body.get("items"), list):
        item = body["items"][int(match.group(1))]
        if isinstance(item, dict):
            body = item
    if not isinstance(body, dict):
        return f"document #{index}"
    meta = body.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    kind = body.get("kind") if isinstance(body.get("kind"), str) else None
    if isinstance(name, str) and name:
        return f"{kind or 'object'}/{name}"
    return f"{kind or 'document'} #{index}"


_ANCHOR = re.compile(r"(?<![^\s\[{,])&")  # `&name` as YAML writes it, not the `&` of a URL or a string
_JSON_START = re.compile(r"\s*[\[{]")
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _bracket_depth(text: str) -> int:
    """The deepest nesting of `[`/`{` in `text`, at C speed (strings included, so an over-estimate)."""
    brackets = text.encode("utf-8", "surrogateescape").translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    opening = (codes == ord("[")) | (codes == ord("{"))
    return int(np.cumsum(np.where(opening, 1, -1), dtype=np.int64).max())


def _may_nest_deeper(text: str, limit: int, depth: int, *, block: bool) -> bool:
    """Whether `text` could nest deeper than `limit`: its bracket `depth` (`_bracket_depth`), or for YAML
    (`block`) a line indented by `limit` characters or more."""
    if depth > limit:
        return True
    indented = rf"[ \t?:-]{{{limit}}}"  # the first line, then the others (`^` with re.M is 8x slower)
    return block and (re.match(indented, text) or re.search("\n" + indented, text)) is not None


def _check_object_depth(body: Any, source: str) -> None:
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(source)
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def _too_deep(source: str) -> InputError:
    return InputError(f"nested deeper than {MAX_DEPTH} levels; no Kubernetes object kubefit reads is", file=source)
