"""The methods `dataclasses` writes for kubefit's classes, compiled once and kept beside kubefit's bytecode.

For each dataclass, Python writes `__init__`, `__repr__`, `__eq__` (and a frozen class's `__setattr__`,
`__delattr__` and `__hash__`) as source text and compiles it when the class is created
(`dataclasses._create_fn`, Lib/dataclasses.py: `exec(txt, globals, ns)`), at every import: a `kubefit simulate`
creates about 180 dataclasses, some 800 compilations, a third of the CPU time of importing kubefit's own
modules (≈ 0.1 s on this kind of machine), and Python keeps no bytecode for them.

`install()` (run by `import kubefit`, before any of its classes exists) makes the `dataclasses` module compile
the text of a kubefit class through a cache of code objects keyed by the exact text: the cache is read from
kubefit's `__pycache__` folder (`dataclasses.<cache tag>[.opt-N].marshal`) when first needed and written back
when a text was new, as the import system writes `.pyc` files — never with PYTHONDONTWRITEBYTECODE
(`sys.dont_write_bytecode`), under `sys.pycache_prefix` when one is set, atomically (a new file renamed over
the old), and silently not at all where the folder cannot be written. A cache that cannot be read is an empty
cache. A code object is what `exec(txt)` compiles from the same text (file name `<string>`, no future flags
inherited, the interpreter's optimization level), so every class is the class Python would make; the classes
of other packages are compiled as before.
"""

from __future__ import annotations

import builtins
import os
import sys
from types import CodeType
from typing import Any

MAX_ENTRIES = 4096  # beyond this (texts of classes since changed), the file keeps only what the last run used


class _Cache:
    """Text → code object; what was compiled anew and what was used in this process."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.codes: dict[str, CodeType] | None = None  # read when the first kubefit class is created
        self.used: set[str] = set()
        self.new = False

    def code(self, text: str) -> CodeType:
        if self.codes is None:
            self.codes = _read(self.path)
        code = self.codes.get(text)
        if code is None:
            code = self.codes[text] = compile(text, "<string>", "exec", dont_inherit=True)
            self.new = True
        self.used.add(text)
        return code

    def save(self) -> None:
        """Write the cache back if a text was new (merged with what another process may have written since)."""
        if not self.new or self.path is None or self.codes is None or sys.dont_write_bytecode:
            return
        merged = {**_read(self.path), **self.codes}
        if len(merged) > MAX_ENTRIES:
            merged = {text: self.codes[text] for text in self.used}
        _write(self.path, merged)
        self.new = False


def _read(path: str | None) -> dict[str, CodeType]:
    """The cache file's entries; {} when it is absent, unreadable or not a cache."""
    import marshal

    if path is None:
        return {}
    try:
        with open(path, "rb") as fh:
            loaded = marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items() if type(k) is str and type(v) is CodeType}


def _write(path: str, codes: dict[str, CodeType]) -> None:
    """`codes` into `path` through a file of its own renamed over it; nothing when the folder is not writable."""
    import marshal

    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as fh:
            fh.write(marshal.dumps(codes))
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def cache_path(package_dir: str) -> str:
    """Where the cache of the package in `package_dir` lives: its `__pycache__` (or under `sys.pycache_prefix`),
    named for this interpreter (`sys.implementation.cache_tag`) and optimization level, as `.pyc` files are."""
    tag = sys.implementation.cache_tag
    name = f"dataclasses.{tag}{f'.opt-{sys.flags.optimize}' if sys.flags.optimize else ''}.marshal"
    if sys.pycache_prefix:
        return os.path.join(sys.pycache_prefix, os.path.abspath(package_dir).lstrip(os.sep), name)
    return os.path.join(package_dir, "__pycache__", name)


def _ours(globals_: Any) -> bool:
    name = globals_.get("__name__", "") if isinstance(globals_, dict) else ""
    return name == "kubefit" or name.startswith("kubefit.")


_CACHE: list[_Cache] = []  # the installed cache (one per process)


def install(package_dir: str | None = None) -> None:
    """Route the compilations of `dataclasses` for kubefit's classes through the cache, once per process. Left as
    it is: an interpreter that caches no bytecode (`sys.implementation.cache_tag` None) and a `dataclasses`
    without `_create_fn` (Python 3.13 compiles a class's methods together, in one `exec`)."""
    import dataclasses

    if _CACHE or sys.implementation.cache_tag is None or getattr(dataclasses, "_create_fn", None) is None:
        return
    cache = _Cache(cache_path(package_dir or os.path.dirname(__file__)))
    _CACHE.append(cache)
    dataclasses.exec = exec_through(cache)  # type: ignore[attr-defined]  # (a module global shadows the builtin)
    import atexit

    atexit.register(save)


def exec_through(cache: _Cache) -> Any:
    """The `exec` dataclasses calls: a kubefit class's text (its module's globals name a kubefit module) compiled
    through `cache`, any other text compiled as the builtin compiles it when dataclasses calls it (a text given
    to the builtin from here would inherit this module's `from __future__ import annotations`)."""

    def exec_(source: Any, globals_: Any = None, locals_: Any = None) -> None:
        if type(source) is str:
            source = cache.code(source) if _ours(globals_) else compile(source, "<string>", "exec", dont_inherit=True)
        builtins.exec(source, globals_, locals_)

    return exec_


def save() -> None:
    """Write the cache if this process compiled a new text (also at exit; the `kubefit` command, which ends
    with `os._exit`, calls it first)."""
    for cache in _CACHE:
        cache.save()
