"""Where an object or a field is in its file: the line a reviewer opens, found only when a finding needs it.

Reading keeps no position (it would cost every load for the few objects a message points at): the first time a
file is asked about, it is read again and composed by PyYAML (its C composer when installed; JSON is YAML to it),
and the line of every object — each document, each item of a list (`kind: List`, a JSON array) — is kept by kind,
namespace and name. A field path of an object (`assertions.minCapacity.deployment/web`, `spec.replicas`) is
found the same way. What cannot be composed (a file PyYAML reads differently from Kubernetes, one larger than
`MAX_BYTES`, standard input) has no line: the finding still names the file and the object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_BYTES = 64 << 20  # past this the file is not composed again (a line costs more than it is worth)
_INDEX = re.compile(r"\[(\d+)\]")


@dataclass
class _File:
    """One file's objects: (kind, namespace, name) → (line, the composed node)."""

    objects: dict[tuple[str, str, str], tuple[int, Any]] = field(default_factory=dict)
    first: Any = None  # the first document's node (for a field path of a file of one object)


class Positions:
    """Lines of objects and fields, per file, found when first asked (see the module's docstring)."""

    def __init__(self) -> None:
        self._files: dict[str, _File | None] = {}

    def line(self, file: str, kind: str, name: str, namespace: str | None = None) -> int | None:
        """The 1-based line where the object starts (a cluster-scoped kind: `namespace` None), None if unknown."""
        found = self._file(file)
        if found is None:
            return None
        hit = found.objects.get((kind, namespace or "", name))
        if hit is None and namespace is not None:
            hit = found.objects.get((kind, "", name))  # no namespace in the file: the one it is applied to
        return None if hit is None else hit[0]

    def field_line(self, file: str, path: str, obj: tuple[str, str, str | None] | None = None) -> int | None:
        """The line of the field `path` (`a.b[2].c`; keys may hold dots, `nvidia.com/gpu`) of the object `obj`
        (kind, name, namespace), or of the file's first document; the nearest enclosing field found when the
        path goes further than the file does (a default left out), None when nothing is found."""
        found = self._file(file)
        if found is None:
            return None
        node = found.first
        if obj is not None:
            kind, name, namespace = obj
            hit = found.objects.get((kind, namespace or "", name)) or found.objects.get((kind, "", name))
            node = None if hit is None else hit[1]
        return None if node is None else _field(node, path)

    def _file(self, file: str) -> _File | None:
        if file not in self._files:
            self._files[file] = _compose(file)
        return self._files[file]


def _compose(file: str) -> _File | None:
    import yaml

    path = Path(file)
    try:
        if file == "-" or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        out = _File()
        for doc in yaml.compose_all(text, Loader=loader):
            if doc is None:
                continue
            if out.first is None:
                out.first = doc
            _objects(doc, out)
        return out
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None


def _scalar(node: Any, key: str) -> str:
    import yaml

    for k, v in node.value if isinstance(node, yaml.MappingNode) else ():
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v.value if isinstance(v, yaml.ScalarNode) else ""
    return ""


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
    out.objects.setdefault(key, (node.start_mark.line + 1, node))


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
