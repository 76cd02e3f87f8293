"""Files → documents: each file (a folder's manifests, stdin) parsed, the items of every list flattened as
kubectl flattens them; one `Document` per object, still as parsed YAML/JSON, with where it came from."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubefit.errors import InputError
from kubefit.manifests.bounds import read_bounded
from kubefit.manifests.decode import type_name as _type_name

MANIFEST_EXTENSIONS = (".json", ".yaml", ".yml")  # what `kubectl -f DIR` reads of a folder


@dataclass
class Document:
    """One object of an input file, still as parsed YAML, with where it came from."""

    body: dict[str, Any]
    source: str
    index: int  # position among the documents of `source` (1-based), for messages
    position: int = 0  # a workload: how many pods preceded it (its pods are queued there)

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        meta = self.body.get("metadata")
        return str(meta.get("name", "")) if isinstance(meta, dict) else ""

    @property
    def label(self) -> str:
        """`Kind/name` (or `Kind #i` when unnamed), the object part of an error message."""
        kind = self.kind or "object"  # kind-less: still named, for the message
        return f"{kind}/{self.name}" if self.name else f"{self.kind or 'document'} #{self.index}"


def read_documents(path: str | Path, *, allow_empty: bool = True) -> list[Document]:
    """Parse one file (YAML, multi-document YAML, JSON; `-` is stdin) into top-level documents.

    With `allow_empty=False` a file holding no document at all (empty, only comments) is an error;
    an empty `kind: List` is not (kubectl prints one when there is nothing to list).
    """
    try:
        bodies = _read_bodies(path)
    except MemoryError:
        raise out_of_memory(str(path)) from None
    if not allow_empty and all(body is None for body in bodies):
        raise InputError("holds no objects (the file is empty or only comments)", file=str(path))
    return _documents(bodies, str(path))


def out_of_memory(source: str) -> InputError:
    """Reading a file took more memory than the process may have (its limit, or the machine's)."""
    return InputError("not enough memory to read it (the objects kept of it need more than this process may "
                      "use: a memory limit, ulimit -v?)", file=source)


def _read_bodies(path: str | Path) -> list[Any]:
    """The parsed YAML/JSON documents of one file, before `kind: List` expansion (see `kubefit.manifests.parse`)."""
    source = str(path)
    try:
        if source == "-":
            data = _read_stdin()
        else:
            with open(path, "rb") as fh:
                data = read_bounded(fh, source)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise InputError("no such file", file=source) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file (give the files inside with repeated -f)",
                         file=source) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not a text file (byte {exc.start} is not UTF-8); expected YAML or JSON",
                         file=source) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=source) from None
    if "\x00" in text:
        raise InputError("not a text file (it holds NUL bytes); expected YAML or JSON", file=source)
    from kubefit.manifests.parse import parse_bodies  # (PyYAML's reading: not imported by the stream's)

    return parse_bodies(text, source)


def _read_stdin() -> bytes:
    import sys

    return read_bounded(getattr(sys.stdin, "buffer", sys.stdin), "-")


def parse_documents(text: str, source: str = "<string>") -> list[Document]:
    """Parse text holding YAML or JSON documents; `kind: List` items are expanded in order."""
    from kubefit.manifests.parse import parse_bodies

    return _documents(parse_bodies(text, source), source)


def _documents(bodies: list[Any], source: str) -> list[Document]:
    docs: list[Document] = []
    for i, body in enumerate(bodies, start=1):
        if body is None:
            continue
        if isinstance(body, list):  # a JSON array of objects
            docs.extend(_expand(item, source, i) for item in body)
            continue
        docs.extend(_flatten(body, source, i))
    return docs


def _expand(body: Any, source: str, index: int) -> Document:
    if not isinstance(body, dict):
        shown = repr(body) if len(repr(body)) <= 40 else repr(body)[:37] + "..."
        raise InputError(f"expected an object (a mapping with apiVersion and kind), got {_type_name(body)} "
                         f"{shown}", file=source, obj=f"document #{index}")
    kind = body.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise InputError(f"must be a string, got {_type_name(kind)}", file=source, obj=f"document #{index}",
                         field="kind")
    return Document(body, source, index)


def _flatten(body: Any, source: str, index: int) -> Iterator[Document]:
    """A document, or the objects of a list, in the order kubectl visits them.

    A document with an `items` field is a list whatever its kind (apimachinery's
    `unstructuredJSONScheme.decode`: `List`, `ConfigMapList`, `RoleBindingList`, …; `items: null` lists
    nothing); an item with neither `kind` nor `apiVersion` takes the list's kind less `List` and its
    apiVersion (`decodeToList`, as a `PodList` from the API server leaves them out). An item that is
    itself a list (its `items` a list: `Unstructured.IsList`) is flattened after the items around it, as
    cli-runtime's `FlattenListVisitor` walks `itemsToProcess`.
    """
    doc = _expand(body, source, index)
    if "items" not in body:
        if doc.kind == "List":
            raise InputError("must be a list, got null", file=source, obj=doc.label, field="items")
        yield doc
        return
    lists: deque[tuple[Document, str]] = deque([(doc, "items")])
    while lists:
        envelope, path = lists.popleft()
        items = envelope.body.get("items")
        if items is not None and not isinstance(items, list):
            raise InputError(f"must be a list, got {_type_name(items)}", file=source, obj=doc.label, field=path)
        for i, item in enumerate(items or ()):
            if not isinstance(item, dict):
                raise InputError(f"must be an object (a mapping with apiVersion and kind), got {_type_name(item)}",
                                 file=source, obj=doc.label, field=f"{path}[{i}]")
            if "kind" not in item and "apiVersion" not in item:
                item = _typed_item(item, envelope)
            if isinstance(item.get("items"), list):
                lists.append((_expand(item, source, index), f"{path}[{i}].items"))
            else:
                yield _expand(item, source, index)


def _typed_item(item: dict[str, Any], envelope: Document) -> dict[str, Any]:
    """An item of a typed list (`PodList`) given the kind (`strings.TrimSuffix(kind, "List")`) and the
    apiVersion its list implies; an item of a `List` stays without (and is refused for it)."""
    kind = envelope.kind.removesuffix("List")
    return {"apiVersion": envelope.body.get("apiVersion"), "kind": kind, **item} if kind else item


def manifest_files(path: str | Path, *, recursive: bool = False) -> list[str]:
    """`path` itself, or for a folder its .json/.yaml/.yml files in name order (sub-folders with `recursive`), as kubectl -f DIR reads them."""
    folder = Path(path)
    if str(path) == "-" or not folder.is_dir():
        return [str(path)]
    pattern = "**/*" if recursive else "*"
    found = [f for f in folder.glob(pattern) if f.is_file() and f.suffix in MANIFEST_EXTENSIONS]
    files = [str(f) for f in sorted(found, key=lambda f: f.relative_to(folder).parts)]  # filepath.Walk's order
    if not files:
        raise InputError(f"is a directory with no {', '.join(MANIFEST_EXTENSIONS)} files"
                         + ("" if recursive else " (sub-folders are read with -R)"), file=str(path))
    return files
