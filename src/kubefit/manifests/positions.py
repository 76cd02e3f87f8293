"""Where an object or a field is in its file: the line a reviewer opens, found only when a finding needs it.

Reading keeps no position (it would cost every load for the few objects a message points at): the first time a
file is asked about, it is read again and the line of every object — each document, each item of a list
(`kind: List`, a JSON array) — is kept by kind, namespace and name:

- JSON, whatever its size (a `kubectl get -o json` snapshot): each item decoded in turn by the json module's C
  scanner, which says where it starts (`raw_decode`), nothing kept but its kind, namespace, name and line;
- YAML up to `COMPOSE_BYTES`: composed by PyYAML (its C composer when installed), whose nodes know their lines;
  a larger YAML file has no lines (composing it would cost seconds and a tree of the whole file).

A field path of an object (`assertions.minCapacity.deployment/web`, `spec.replicas`) is found in the composed
file (YAML or JSON up to `COMPOSE_BYTES`). What cannot be read so (a file PyYAML reads differently from
Kubernetes, standard input) has no line: the finding still names the file and the object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COMPOSE_BYTES = 8 << 20  # past this a YAML file is not composed again (a line costs more than it is worth)
_INDEX = re.compile(r"\[(\d+)\]")
_SPACE = re.compile(r"[ \t\r\n]*")


@dataclass
class _File:
    """One file's objects: (kind, namespace, name) → line; and, when composed, their nodes and the first document."""

    lines: dict[tuple[str, str, str], int] = field(default_factory=dict)
    nodes: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    first: Any = None
    composed: bool = False


class Positions:
    """Lines of objects and fields, per file, found when first asked (see the module's docstring)."""

    def __init__(self) -> None:
        self._files: dict[str, _File | None] = {}

    def line(self, file: str, kind: str, name: str, namespace: str | None = None) -> int | None:
        """The 1-based line where the object starts (a cluster-scoped kind: `namespace` None), None if unknown."""
        found = self._file(file)
        if found is None:
            return None
        hit = found.lines.get((kind, namespace or "", name))
        if hit is None and namespace is not None:
            hit = found.lines.get((kind, "", name))  # no namespace in the file: the one it is applied to
        return hit

    def field_line(self, file: str, path: str, obj: tuple[str, str, str | None] | None = None) -> int | None:
        """The line of the field `path` (`a.b[2].c`; keys may hold dots, `nvidia.com/gpu`) of the object `obj`
        (kind, name, namespace), or of the file's first document; the nearest enclosing field found when the
        path goes further than the file does (a default left out), None when nothing is found."""
        found = self._file(file, compose=True)
        if found is None or not found.composed:
            return None
        node = found.first
        if obj is not None:
            kind, name, namespace = obj
            node = found.nodes.get((kind, namespace or "", name)) or found.nodes.get((kind, "", name))
        return None if node is None else _field(node, path)

    def _file(self, file: str, compose: bool = False) -> _File | None:
        known = self._files.get(file)
        if file not in self._files or (compose and known is not None and not known.composed):
            self._files[file] = _read(file, compose)
        return self._files[file]


def _read(file: str, compose: bool) -> _File | None:
    path = Path(file)
    try:
        if file == "-" or not path.is_file():
            return None
        size = path.stat().st_size
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text.lstrip()[:1] in ("{", "[") and not (compose and size <= COMPOSE_BYTES):
        return _scanned(text)
    return _composed(text) if size <= COMPOSE_BYTES else None


# --------------------------------------------------------------------------- JSON, scanned

def _scanned(text: str) -> _File | None:
    """Every object of a JSON text (values one after the other; each an object, a list's items, or an array's
    items) with the line it starts on."""
    out = _File()
    decoder = json.JSONDecoder()
    try:
        at = _SPACE.match(text, 0).end()
        while at < len(text):
            at = _value(text, at, decoder, out)
            at = _SPACE.match(text, at).end()
    except (ValueError, RecursionError):
        return None
    _number_lines(text, out)
    return out


def _value(text: str, at: int, decoder: json.JSONDecoder, out: _File) -> int:
    """Record the object(s) of the top-level value at `at`; where it ends."""
    if text[at] == "[":
        return _array(text, at, decoder, out)
    if text[at] != "{":
        return decoder.raw_decode(text, at)[1]
    return _object(text, at, decoder, out)


def _array(text: str, at: int, decoder: json.JSONDecoder, out: _File) -> int:
    """The items of an array, each an object of its own (or a list of its own)."""
    at = _SPACE.match(text, at + 1).end()
    if text[at] == "]":
        return at + 1
    while True:
        at = _value(text, at, decoder, out)
        at = _SPACE.match(text, at).end()
        if text[at] == "]":
            return at + 1
        if text[at] != ",":
            raise ValueError("expected , or ]")
        at = _SPACE.match(text, at + 1).end()


def _object(text: str, at: int, decoder: json.JSONDecoder, out: _File) -> int:
    """An object: its members read one by one; a list (an `items` array) records its items, any other object
    itself (decoded whole, then let go but for its kind and metadata)."""
    start = at
    members: dict[str, Any] = {}
    listed = False
    at = _SPACE.match(text, at + 1).end()
    while text[at] != "}":
        key, at = decoder.raw_decode(text, at)
        at = _SPACE.match(text, at).end()
        if text[at] != ":":
            raise ValueError("expected :")
        at = _SPACE.match(text, at + 1).end()
        if key == "items" and text[at] == "[":
            at, listed = _array(text, at, decoder, out), True
        else:
            members[key], at = decoder.raw_decode(text, at)
        at = _SPACE.match(text, at).end()
        if text[at] == ",":
            at = _SPACE.match(text, at + 1).end()
    if not listed:
        meta = members.get("metadata") if isinstance(members.get("metadata"), dict) else {}
        key3 = (str(members.get("kind") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        out.lines.setdefault(key3, start)  # an offset for now (`_number_lines`)
    return at + 1


def _number_lines(text: str, out: _File) -> None:
    """The offsets recorded → 1-based lines, counting newlines once through the text in offset order."""
    line, last = 1, 0
    for key, offset in sorted(out.lines.items(), key=lambda kv: kv[1]):
        line += text.count("\n", last, offset)
        last = offset
        out.lines[key] = line


# --------------------------------------------------------------------------- YAML (and small JSON), composed

def _composed(text: str) -> _File | None:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = _File(composed=True)
    try:
        for doc in yaml.compose_all(text, Loader=loader):
            if doc is None:
                continue
            if out.first is None:
                out.first = doc
            _objects(doc, out)
    except (yaml.YAMLError, RecursionError):
        return None
    return out


def _scalar(node: Any, key: str) -> str:
    member = _member(node, key)
    return str(member.value) if member is not None and isinstance(member.value, str) else ""


def _member(node: Any, key: str) -> Any:
    import yaml

    for k, v in node.value if isinstance(node, yaml.MappingNode) else ():
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _objects(node: Any, out: _File) -> None:
    """Record the objects of a document: itself, or the items of its list (nested lists too)."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _objects(item, out)
        return
    if not isinstance(node, yaml.MappingNode):
        return
    items = _member(node, "items")
    if isinstance(items, yaml.SequenceNode):
        _objects(items, out)
        return
    meta = _member(node, "metadata")
    key = (_scalar(node, "kind"), _scalar(meta, "namespace"), _scalar(meta, "name"))
    out.lines.setdefault(key, node.start_mark.line + 1)
    out.nodes.setdefault(key, node)


def _field(node: Any, path: str) -> int | None:
    """The line of `path` under `node` (see `Positions.field_line`)."""
    import yaml

    line = None
    rest = path
    while rest:
        if isinstance(node, yaml.SequenceNode):
            hit = _INDEX.match(rest)
            if hit is None or int(hit.group(1)) >= len(node.value):
                break
            node = node.value[int(hit.group(1))]
            line, rest = node.start_mark.line + 1, rest[hit.end():].removeprefix(".")
            continue
        if not isinstance(node, yaml.MappingNode):
            break
        best = None
        for k, v in node.value:
            name = k.value if isinstance(k, yaml.ScalarNode) else None
            if name is not None and (rest == name or rest.startswith((name + ".", name + "["))):
                if best is None or len(name) > len(best[0]):
                    best = (name, k, v)
        if best is None:
            break
        name, key, node = best
        line, rest = key.start_mark.line + 1, rest[len(name):].removeprefix(".")
    return line
