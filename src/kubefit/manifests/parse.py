"""Text → parsed YAML/JSON documents, read as Kubernetes reads them, refusing what cannot end well.

YAML is read as kubectl reads it (`kubefit.manifests.k8syaml`: documents split at `---` lines, go-yaml v2
scalars, merges and aliases, sigs.k8s.io/yaml's conversion to JSON); a text whose first non-blank
character is `{` is a stream of JSON values (kubectl's `YAMLOrJSONDecoder`), one starting with `[` a JSON
array of objects. What is refused, each with one message naming the file (and, once parsed, the object and
field): an input larger than `KUBEFIT_MAX_INPUT_BYTES` (default 4 GiB; one the streaming reader cannot
take, and stdin, beyond `REFERENCE_MAX_BYTES`, 256 MiB, as this reading holds it whole), a duplicated mapping
key (the API server's strict decoding: "duplicate field"), an integer outside int64, what Kubernetes'
conversion refuses (`.inf`, a null key, a value its explicit tag cannot hold), nesting deeper than
`MAX_DEPTH`, and YAML aliases expanding to more than `MAX_ALIAS_NODES` nodes (an "alias bomb").
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import yaml
from yaml.nodes import MappingNode, SequenceNode

from kubefit.errors import InputError, shorten
from kubefit.manifests import k8syaml
from kubefit.manifests.bounds import (  # noqa: F401 - the bounds, read here too (`parse.REFERENCE_MAX_BYTES`)
    MAX_INPUT_BYTES,
    REFERENCE_MAX_BYTES,
    max_input_bytes,
    read_bounded,
    too_large,
)
from kubefit.manifests.k8syaml import ConversionError, Refused, SeparatorError

MAX_DEPTH = 100  # deeper than any Kubernetes object kubefit reads (a Deployment's pod affinity is ~15)
HARD_DEPTH = 1000  # past this the C parser itself is at risk (it recurses), so it is refused before parsing
MAX_ALIAS_NODES = 1_000_000
MIN_INT64, MAX_INT64 = -(2**63), 2**63 - 1


# --------------------------------------------------------------------------- YAML

def _yaml_bodies(text: str, source: str, depth: int) -> tuple[list[Any], bool]:
    """The documents of a YAML stream (`depth`: its `_bracket_depth`), as kubectl reads them; whether a
    value was refused (to be located by `locate_refusal`)."""
    check_nodes = ("&" in text and _ANCHOR.search(text) is not None) or _may_nest_deeper(text, MAX_DEPTH, depth,
                                                                                           block=True)
    bodies: list[Any] = []
    made = Refused.count
    try:
        for first_line, chunk in k8syaml.split_documents(text):
            try:
                root = k8syaml.first_node(chunk)
                if root is None:
                    continue
                if check_nodes:
                    _check_node_graph(root, source)
                bodies.append(k8syaml.document_value(root))
            except yaml.MarkedYAMLError as exc:
                raise InputError(_yaml_message(exc, first_line), file=source) from None
            except ConversionError as exc:
                raise InputError(_conversion_message(exc, first_line), file=source,
                                 obj=None if exc.mark else f"document #{len(bodies) + 1}") from None
    except SeparatorError as exc:
        raise InputError(str(exc), file=source) from None
    return bodies, Refused.count != made


def _conversion_message(exc: ConversionError, first_line: int) -> str:
    if exc.mark is None:
        return shorten(exc.message, 200)
    return f"malformed YAML at line {first_line + exc.mark.line + 1}, column {exc.mark.column + 1}: {exc.message}"


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
    """`json.loads` hooks marking duplicate keys and out-of-int64 integers as `Refused`."""

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
        mapping[key] = Refused(k8syaml.duplicate_message(key))
        self.refused = True
        return mapping

    def integer(self, text: str) -> Any:
        if len(text.lstrip("-0")) <= 18:  # fits int64 whatever its digits
            return int(text)
        if len(text) <= 21 and MIN_INT64 <= int(text) <= MAX_INT64:
            return int(text)
        self.refused = True
        return Refused(k8syaml.out_of_int64_message(text))


def _json_bodies(text: str, source: str, depth: int) -> tuple[list[Any], bool]:
    """The values of a JSON stream: one, or several one after another (as kubectl's `json.Decoder`
    reads a stream that starts with `{`)."""
    hooks = _JsonHooks()
    decoder = json.JSONDecoder(object_pairs_hook=hooks.pairs, parse_int=hooks.integer)
    bodies = []
    end = _JSON_SPACE.match(text).end()  # type: ignore[union-attr]
    while True:
        body, end = decoder.raw_decode(text, end)
        bodies.append(body)
        end = _JSON_SPACE.match(text, end).end()  # type: ignore[union-attr]
        if end == len(text):
            break
    if depth > MAX_DEPTH:
        for body in bodies:
            _check_object_depth(body, source)
    return bodies, hooks.refused


# --------------------------------------------------------------------------- shared

def parse_bodies(text: str, source: str) -> list[Any]:
    """Every top-level document of `text` (JSON if it starts with `{` or `[`, else YAML), checked."""
    is_json = _JSON_START.match(text) is not None
    depth = _bracket_depth(text)  # one pass over the text serves both limits
    if _may_nest_deeper(text, HARD_DEPTH, depth, block=not is_json):
        raise _too_deep(source)
    try:
        if is_json:
            bodies, refused = _json_bodies(text, source, depth)
        else:
            bodies, refused = _yaml_bodies(text, source, depth)
    except RecursionError:
        raise _too_deep(source) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                         file=source) from None
    except yaml.YAMLError as exc:
        raise InputError(_yaml_message(exc, 0), file=source) from None
    if refused:
        locate_refusal(bodies, source)
    return bodies


def _yaml_message(exc: yaml.YAMLError, first_line: int) -> str:
    """`malformed YAML at line L, column C: problem` — one line, whatever the problem text holds
    (`first_line`: where the document's chunk starts in the file)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {first_line + mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"malformed YAML{where}: {shorten(str(problem))}"


def locate_refusal(bodies: list[Any], source: str) -> None:
    """Raise the first `Refused` value of the documents, with its object (kind/name) and field path
    (a refusal a later key overrode, as a merge can, still refuses: then without a field)."""
    for i, body in enumerate(bodies, start=1):
        found = _find_refused(body, "")
        if found is not None:
            path, refused = found
            raise InputError(refused.message, file=source, obj=_object_label(body, path, i),
                             field=path.lstrip(".") or None)
    raise InputError("a value Kubernetes refuses was overridden by a merge key; remove it", file=source)


def _find_refused(value: Any, path: str) -> tuple[str, Refused] | None:
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, Refused):
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
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
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
