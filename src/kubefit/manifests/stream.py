"""Files → objects, streamed: a large manifest read one object at a time, straight into kubefit's types.

The compiled reader (`_reader.c`, libyaml's event API and a JSON scanner) turns the file — mapped, not
read into memory, its pages let go as the reading passes them — into one compact JSON text per object,
as Kubernetes reads YAML (`kubefit.manifests.k8syaml`) and JSON: a document that is an object as one
("object", json, kind) event (the reader holds its members until it knows it is no list), a list's items
one by one, its other members each as its own JSON. A pod's or node's `metadata.managedFields` is left out
(nothing reads it; a snapshot's largest part) when the pods are decoded here (`pods`). A pod
is decoded from its JSON by `kubefit.manifests.fastpod` and kept with its manifest as that JSON (its
`raw` is decoded only if read); a node by `kubefit.manifests.fastnode` (or `decode_node`), kept the same way; any other object becomes a
`Document` as the reference reading gives it. Memory is then what is kept, not the file.

The result is the reference reading's, object for object, error for error (`tests/test_stream.py`):
- lists are flattened as `documents._flatten` flattens them (any object with `items`, kinds inferred,
  nested lists after the items around them);
- YAML is read by the compiled reader's fast path where kubectl's regular block style allows, and by
  libyaml elsewhere; where the fast path cannot vouch for the result it raises `Retry` and the file is
  read again by libyaml alone (`KUBEFIT_YAML_FAST=0` reads every file so);
- where the compiled reader meets what only the reference reads (anchors, tags, merge keys, a duplicate
  key, an integer beyond int64, a malformed text…) or a list is malformed, a file of at most
  `REFERENCE_MAX_BYTES` is read again by the reference reader (`parse.py`), whose message names the
  object and field; a larger one, which the reference would hold whole in memory, is refused with the
  compiled reader's own reason and line;
- decoding errors are raised in document order once the whole file has been read, as the reference
  reading raises them after parsing (`Entry` objects wait for that).

A JSON list's items, and the documents of a multi-document file while each is an object (YAML, by the fast
path or libyaml, or JSON), are read ahead by a thread of the compiled reader (no GIL; `_reader.c`,
"prefetch") while Python decodes the ones before them: the same events and errors, in the same order (a
document that is no object, such as a List, the thread gives back and the reader reads itself).

Every regular file is read so, however small: the compiled reader is faster from the first byte (a
60 KiB YAML file of Deployments in 2.5 ms where the reference reading takes 25 ms, a 200-byte one in 0.13
ms against 0.27 ms; benchmarks/bench_check.md). Standard input, `KUBEFIT_STREAM=0` and a machine without
the compiled reader (no C compiler or libyaml headers at install) take the reference reading. A file of
`STREAM_MIN_BYTES` or more tells its progress in megabytes as it is read (`progress_while_read`); a
smaller one is read whole first and tells it per object, as the reference reading does.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import orjson

from kubefit.api.core import Node, Pod
from kubefit.errors import InputError
from kubefit.manifests import documents
from kubefit.manifests.bounds import REFERENCE_MAX_BYTES, max_input_bytes, too_large
from kubefit.manifests.documents import Document
from kubefit.manifests.fastnode import FastNodes
from kubefit.manifests.fastpod import FastPods
from kubefit.manifests.load import decode_node

try:
    from kubefit.manifests import _reader
except ImportError:  # pragma: no cover - built without libyaml's headers or a compiler
    _reader = None  # type: ignore[assignment]

STREAM_MIN_BYTES = 1 << 20  # from this size a file's progress is told in megabytes while it is read
PREFETCH_MIN_BYTES = 1 << 20  # a list's items, or documents, read ahead by a thread when at least this much is left
_RELEASE_BYTES = 64 << 20  # mapped pages given back to the system every this many bytes read
_JSON_START = re.compile(r"\s*[\[{]")


@dataclass
class Entry:
    """An object read from a file: a `Document` still to decode, or a node or pod already decoded (with
    the warnings its decoding gave, to be told when the scenario takes it)."""

    doc: Document | None = None
    decoded: Node | Pod | None = None
    warnings: list[str] = field(default_factory=list)


class _Headroom:
    """Address space left free before msgspec decodes: msgspec (0.22) leaves one allocation unchecked
    (`json_decode_string`: a failed PyUnicode_New is written to), so under an address-space limit
    (ulimit -v) running out inside it would crash the process. Every megabyte of items (and before any
    larger item) kubefit checks that `MARGIN` plus 32 times what is about to be decoded is still free
    below the limit, and else raises MemoryError itself. Without a limit there is nothing to check."""

    MARGIN = 64 << 20

    def __init__(self) -> None:
        try:
            import resource

            soft = resource.getrlimit(resource.RLIMIT_AS)[0]
            self.limit = None if soft == resource.RLIM_INFINITY else soft
        except (ImportError, OSError, ValueError):  # pragma: no cover - not a Unix
            self.limit = None
        self.pending = 1 << 20  # check at the first item

    def before(self, size: int) -> None:
        if self.limit is None:
            return
        self.pending += size
        if self.pending < 1 << 20 and size < 1 << 20:
            return
        with open("/proc/self/statm", "rb") as fh:
            used = int(fh.read().split()[0]) * mmap.PAGESIZE
        if self.limit - used < self.MARGIN + 32 * max(self.pending, size):
            raise MemoryError("too little address space left to decode the next objects")
        self.pending = 0


class _Malformed(Exception):
    """A list the reference reading refuses (its message is the reference's own)."""

    def __init__(self, error: InputError) -> None:
        super().__init__(str(error))
        self.error = error


def streamable(path: str | Path) -> bool:
    """Whether `path` is read by the compiled reader: a regular file, the reader present (`KUBEFIT_STREAM=0`
    turns it off)."""
    if _reader is None or os.environ.get("KUBEFIT_STREAM", "") == "0" or str(path) == "-":
        return False
    return os.path.isfile(path)


def progress_while_read(path: str | Path) -> bool:
    """Whether a `streamable` file tells its progress in megabytes as it is read (`STREAM_MIN_BYTES` or more;
    a smaller one is read in a moment, then decoded object by object)."""
    try:
        return os.stat(path).st_size >= STREAM_MIN_BYTES
    except OSError:
        return False


def read_entries(path: str | Path, *, allow_empty: bool = True, pods: FastPods | None = None,
                 progress: Callable[[str, int, int], None] | None = None) -> list[Entry]:
    """The objects of one file (see the module): decoded nodes and pods where `pods` is given, else
    documents only. `progress(file, megabytes read, megabytes in all)` as it goes. Running out of memory
    (a memory limit: every allocation of the compiled reader, libyaml and msgspec fails cleanly) is an
    error naming the file."""
    try:
        return _read_entries(path, allow_empty, pods, progress)
    except MemoryError:
        raise documents.out_of_memory(str(path)) from None


def _read_entries(path: str | Path, allow_empty: bool, pods: FastPods | None,
                  progress: Callable[[str, int, int], None] | None) -> list[Entry]:
    source = str(path)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_input_bytes():
            raise too_large(max_input_bytes(), source)
        if size == 0:
            return _reference(path, allow_empty)
        try:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:  # ENOMEM: no address space left for it (a memory limit)
            raise InputError(f"cannot map the file into memory ({exc.strerror or exc}); kubefit needs address "
                             f"space for the file and what it keeps of it", file=source) from None
        with mapped as data:
            is_json = _is_json(data)
            if is_json is None:
                return _reference(path, allow_empty)
            stream = _Stream(data, source, is_json, pods, progress, fast=_fast_path())
            try:
                entries = stream.entries_or_retry(allow_empty)
                if entries is None:  # YAML's fast path met what only libyaml reads: libyaml reads it all
                    del stream.reader
                    stream = _Stream(data, source, is_json, pods, progress, fast=False)
                    entries = stream.entries(allow_empty)
                return entries
            except _reader.Fallback as exc:
                reason = str(exc)
                if size > REFERENCE_MAX_BYTES:
                    raise InputError(f"{reason}: a file over {REFERENCE_MAX_BYTES >> 20} MiB is read only by the "
                                     f"streaming reader, which says the line but not the object", file=source) from None
            except _Malformed as exc:
                if size > REFERENCE_MAX_BYTES:
                    raise exc.error from None
            finally:
                del stream.reader  # the mapping closes only once nothing points into it
    return _reference(path, allow_empty)


def read_documents(path: str | Path, *, allow_empty: bool = True) -> list[Document]:
    """`documents.read_documents`, read by the stream where `streamable` (every object a `Document`)."""
    if not streamable(path):
        return documents.read_documents(path, allow_empty=allow_empty)
    return [entry.doc for entry in read_entries(path, allow_empty=allow_empty) if entry.doc is not None]


def _fast_path() -> bool:
    """Whether YAML is read by `_reader`'s fast path (`KUBEFIT_YAML_FAST=0`: by libyaml alone)."""
    return os.environ.get("KUBEFIT_YAML_FAST", "") != "0"


def _prefetch() -> int:
    """From how many bytes left a JSON list's items, or a file's documents, are read ahead by the reader's
    thread (`_reader.c`, "prefetch"): `PREFETCH_MIN_BYTES`; every list and every file's documents under
    `KUBEFIT_STREAM=always` (so that the tests and the fuzz campaign read small files through that thread
    too); never with `KUBEFIT_PREFETCH=0`."""
    if os.environ.get("KUBEFIT_PREFETCH", "") == "0":
        return -1
    return 0 if os.environ.get("KUBEFIT_STREAM", "") == "always" else PREFETCH_MIN_BYTES


def _reference(path: str | Path, allow_empty: bool) -> list[Entry]:
    return [Entry(doc=d) for d in documents.read_documents(path, allow_empty=allow_empty)]


def _is_json(data: mmap.mmap) -> bool | None:
    """JSON or YAML as `parse.parse_bodies` decides (the text's first non-space character), or None
    when the start alone cannot tell (the reference reading then decides)."""
    head = data[:65536].decode("utf-8", "replace")
    if head.strip() == "" or "\ufffd" in head[:-4]:
        return None
    return _JSON_START.match(head) is not None


class _Stream:
    """One file's events (see `_reader.c`) → entries, in the reference reading's order."""

    def __init__(self, data: mmap.mmap, source: str, is_json: bool, pods: FastPods | None,
                 progress: Callable[[str, int, int], None] | None, fast: bool = True) -> None:
        self.data = data
        self.reader = _reader.Reader(data, is_json, fast=fast, prefetch=_prefetch(), objects=True,
                                     cut_objects=pods is not None)
        self.source = source
        self.pods = pods
        self.nodes = FastNodes()
        self.progress = progress
        self.json = msgspec.json.Decoder()
        self.headroom = _Headroom()
        self.released = 0
        self.count = 0
        self.error: _Malformed | None = None  # the first malformed list; the file is still read to its end
        self.models: dict[bytes, list[Any]] = {}  # Clusters' resourceModels as JSON → the list kept (_shared_models)
        self.fields = msgspec.json.Decoder(dict[str, msgspec.Raw])  # an object's fields, each its JSON

    def entries_or_retry(self, allow_empty: bool) -> list[Entry] | None:
        """`entries`, or None where the reader retries (what was read let go before the file is read again)."""
        try:
            return self.entries(allow_empty)
        except _reader.Retry:
            return None

    def entries(self, allow_empty: bool) -> list[Entry]:
        if self.progress is not None:
            self.progress(self.source, 0, len(self.data) >> 20)
        out: list[Entry] = []
        index = objects = 0
        while (event := self.reader.next()) is not None:
            index += 1
            try:
                found = self._document(event, index)
            except InputError as exc:
                self.error = self.error or _Malformed(exc)
                found = []
            if found is not None:
                objects += 1
                out += found
        self._tick(final=True)
        if self.error is not None:
            raise self.error
        if not allow_empty and not objects:
            raise InputError("holds no objects (the file is empty or only comments)", file=self.source)
        return out

    def _document(self, event: tuple, index: int) -> list[Entry] | None:
        """A document's entries (None: a null document, which `parse` keeps and `documents` skips)."""
        tag = event[0]
        if self.headroom.limit is not None:
            self.headroom.before(len(event[1]) if tag in ("object", "scalar") else 0)
        if tag == "object":
            return [] if self.error is not None else self._object(event[1], event[2], index)
        if tag == "scalar":
            body = self.json.decode(event[1])
            return None if body is None else [Entry(doc=d) for d in documents._flatten(body, self.source, index)]
        if tag == "seq":  # a JSON array of objects: each item an object of its own, not flattened
            return [entry for item, kind in self._items() if (entry := self._guarded(self._item, item, kind, index))]
        return self._list(index)

    def _guarded(self, step: Callable[..., Any], *args: Any) -> Any:
        """`step(*args)`, a refusal kept (the first) so that the file is still read to its end."""
        if self.error is not None:
            return None
        try:
            return step(*args)
        except InputError as exc:
            self.error = _Malformed(exc)
            return None

    def _items(self) -> Any:
        """The ("item", json, kind) events up to the end of the items (`_tick` every 1,024 of them)."""
        before = self.headroom.before if self.headroom.limit is not None else None
        while (event := self.reader.next())[0] == "item":  # (no reference to the reader kept: see _read_entries)
            self.count += 1
            if not self.count & 1023:
                self._tick()
            if before is not None:
                before(len(event[1]))
            yield event[1], event[2]

    def _list(self, index: int) -> list[Entry]:
        """A mapping document that is a list ("map": the members around its items, the items one by one), its
        entries once read."""
        members: dict[str, bytes] = {}  # key → its value's JSON, in order (each key once: the reader refuses a
        slots: list[Entry | dict[str, Any]] = []  # duplicate key); items in order (dicts: lists, kind-less items)
        while (event := self.reader.next())[0] != "end":  # (no reference to the reader kept: see _read_entries)
            if event[0] == "member":
                self.headroom.before(len(event[2]))
                members[event[1]] = event[2]
                continue
            for item, kind in self._items():  # ("items",): a list's items, then ("end_items",)
                if kind == "Pod" and self.pods is not None and self.error is None:  # (most items: `_slot`'s first road)
                    entry = self._pod(item, index)
                    if entry is not None:
                        slots.append(entry)
                        continue
                slot = self._guarded(self._slot, item, kind, index)
                if slot is not None:
                    slots.append(slot)
        if self.error is not None:
            return []
        envelope = documents._expand({k: self.json.decode(v) for k, v in members.items()}, self.source, index)
        out: list[Entry] = []
        nested: list[dict[str, Any]] = []
        for slot in slots:
            if isinstance(slot, Entry):
                out.append(slot)
                continue
            item = documents._typed_item(slot, envelope) if "kind" not in slot and "apiVersion" not in slot \
                else slot
            if isinstance(item.get("items"), list):
                nested.append(item)
            else:
                out.append(Entry(doc=documents._expand(item, self.source, index)))
        if nested:  # flattened breadth first after the items around them, as documents._flatten does
            out += (Entry(doc=d) for d in documents._flatten({"items": nested}, self.source, index))
        return out

    def _object(self, text: bytes, kind: str | None, index: int) -> list[Entry]:
        """A mapping document that is not a list (or a `List` without items, which `_flatten` refuses), as the
        reader gives it: its JSON (a pod's or node's less `metadata.managedFields`, as a list's) and kind."""
        if kind in ("Pod", "Node") and self.pods is not None:
            return [self._item(text, kind, index)]
        body = self._cluster(text) if kind == "Cluster" else self.json.decode(text)
        return [Entry(doc=d) for d in documents._flatten(body, self.source, index)]

    def _cluster(self, text: bytes) -> dict[str, Any]:
        """A Karmada Cluster document, its `spec` read by `_cluster_spec`."""
        return {k: self._cluster_spec(bytes(v)) if k == "spec" else self.json.decode(v)
                for k, v in self.fields.decode(text).items()}

    def _cluster_spec(self, text: bytes) -> Any:
        """A Karmada Cluster's `spec`, its `resourceModels` shared (`_shared_models`) by their JSON as read."""
        try:
            fields = self.fields.decode(text)
        except msgspec.ValidationError:  # (not an object: as it is)
            return self.json.decode(text)
        return {k: self._shared_models(bytes(v)) if k == "resourceModels" else self.json.decode(v)
                for k, v in fields.items()}

    def _shared_models(self, text: bytes, models: Any = None) -> Any:
        """A Karmada Cluster's `spec.resourceModels` (`text`, its JSON; `models`, decoded if it is): one list
        for equal ones (a fleet's Clusters share a few sets of 9 grades, ~10 KB of dicts each: on 60,000
        Clusters, 600 MB). Nothing changes a manifest's body once read; `manifests.karmada` then decodes
        each shared list once."""
        shared = self.models.get(text)
        if shared is not None:
            return shared
        models = self.json.decode(text) if models is None else models
        if isinstance(models, list) and models and len(self.models) < 256:
            from kubefit.manifests.karmada import (
                share_models,  # (a fleet's: not imported for a cluster's files)
            )

            self.models[text] = models
            share_models(models)
        return models

    def _share_models(self, body: dict[str, Any]) -> None:
        """`_shared_models` for a list's Cluster, decoded whole (its models' JSON written again as the key)."""
        spec = body.get("spec")
        models = spec.get("resourceModels") if isinstance(spec, dict) else None
        if not isinstance(models, list) or not models:
            return
        try:
            text = orjson.dumps(models)
        except TypeError:  # (an integer beyond 64 bits: left as it is)
            return
        spec["resourceModels"] = self._shared_models(text, models)

    def _slot(self, item: bytes, kind: str | None, index: int) -> Entry | dict[str, Any]:
        """A list's item: an entry, or (a list, or an item that takes the list's kind) its body."""
        if kind is not None:
            entry = self._decoded(item, kind, index)
            if entry is not None:
                return entry
        body = self.json.decode(item)
        if kind == "Cluster" and isinstance(body, dict):
            self._share_models(body)
        if not isinstance(body, dict):
            documents._expand(body, self.source, index)  # the reference's refusal
        if ("kind" not in body and "apiVersion" not in body) or isinstance(body.get("items"), list):
            return body
        return Entry(doc=documents._expand(body, self.source, index))

    def _item(self, item: bytes, kind: str | None, index: int) -> Entry:
        """An item taken as it is (a top-level array's, or a lone object)."""
        entry = self._decoded(item, kind, index) if kind is not None else None
        return entry or Entry(doc=documents._expand(self.json.decode(item), self.source, index))

    def _decoded(self, item: bytes, kind: str, index: int) -> Entry | None:
        """A pod or node decoded now (None: it becomes a document, decoded with the others): a node by
        `FastNodes`, else (what it leaves) by decode_node when that takes it."""
        if self.pods is None:
            return None
        if kind == "Pod":
            return self._pod(item, index)
        if kind == "Node":
            fast = self.nodes.decode(item, self.source, index)
            if fast is not None:
                return Entry(decoded=fast[0], warnings=fast[1])
            body = self.json.decode(item)
            if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict) or \
                    not body["metadata"].get("name") or "items" in body:
                return None
            warnings: list[str] = []
            try:
                node = decode_node(Document(body, self.source, index), warnings)
            except InputError:
                return None
            node.raw = item
            return Entry(decoded=node, warnings=warnings)
        return None

    def _pod(self, item: bytes, index: int) -> Entry | None:
        """A pod decoded by `FastPods` (None: decode_pod decides, with the others)."""
        decoded = self.pods.decode(item, self.source, index)  # type: ignore[union-attr]
        return None if decoded is None else Entry(decoded=decoded[0], warnings=decoded[1])

    def _tick(self, final: bool = False) -> None:
        """Progress (every 1,024 objects: `_items` counts them), and mapped pages given back as the reading
        passes them."""
        position = self.reader.position
        if position - self.released >= _RELEASE_BYTES or final:
            end = position & ~(mmap.PAGESIZE - 1)
            if end > self.released:
                self.data.madvise(mmap.MADV_DONTNEED, self.released, end - self.released)
                self.released = end
        if self.progress is not None:
            self.progress(self.source, position >> 20, len(self.data) >> 20)
