"""The dataclasses' bytecode cache (`kubefit.dataclasscode`): a class made through it is the class Python makes,
the cache is read, written back only when a text was new, and ignored when it cannot be read or written."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from kubefit import dataclasscode

ROOT = Path(__file__).resolve().parents[1]

SOURCE = '''
from __future__ import annotations  # (kubefit's modules all have it; the generated code must not inherit it)
import dataclasses

@dataclasses.dataclass(frozen=True)
class Shape:
    """A frozen class: __init__, __repr__, __eq__, __hash__, __setattr__ and __delattr__ generated."""
    name: str
    cores: int = 1
    labels: tuple = dataclasses.field(default_factory=tuple)

@dataclasses.dataclass(order=True)
class Pair:
    left: int
    right: int = 0
'''


def make(module_name: str) -> types.ModuleType:
    """SOURCE executed as a module of that name (dataclasses reads the globals of the class's module)."""
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module
    try:
        exec(compile(SOURCE, f"<{module_name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[module_name]
    return module


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """dataclasses compiling through a fresh cache whose file is in tmp_path; bytecode may be written."""
    made = dataclasscode._Cache(str(tmp_path / "__pycache__" / "dataclasses.marshal"))
    monkeypatch.setattr(dataclasses, "exec", dataclasscode.exec_through(made), raising=False)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return made


GENERATED = {"Shape": ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"),
             "Pair": ("__init__", "__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__")}


def pristine(module_name: str) -> types.ModuleType:
    """SOURCE's classes as Python makes them, dataclasses calling the builtin `exec`."""
    patched = dataclasses.__dict__.pop("exec", None)
    try:
        return make(module_name)
    finally:
        if patched is not None:
            dataclasses.exec = patched


@pytest.mark.parametrize("module_name", ["kubefit.fake_shapes", "elsewhere.fake_shapes"])
def test_a_class_made_through_the_hook_is_the_class_python_makes(cache, module_name):
    """Every generated method has the code the builtin `exec` compiles when dataclasses calls it, for a kubefit
    class (through the cache) and for another package's (compiled as before): the return annotation is the
    object, not a string (no `from __future__ import annotations` inherited from the hook's module), and the
    classes behave alike."""
    ours, python = make(module_name), pristine(module_name)
    assert len(cache.used) == (sum(map(len, GENERATED.values())) if module_name.startswith("kubefit.") else 0)
    for cls, methods in GENERATED.items():
        for name in methods:
            mine, theirs = getattr(getattr(ours, cls), name), getattr(getattr(python, cls), name)
            assert mine.__code__ == theirs.__code__, (cls, name)
    assert ours.Shape.__init__.__annotations__["return"] is None
    shape = ours.Shape("a", 2)
    assert (repr(shape), shape == ours.Shape("a", 2), hash(shape) == hash(ours.Shape("a", 2))) == \
        ("Shape(name='a', cores=2, labels=())", True, True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        shape.cores = 3
    assert sorted([ours.Pair(2), ours.Pair(1, 5), ours.Pair(1)]) == [ours.Pair(1), ours.Pair(1, 5), ours.Pair(2)]


def test_the_cache_is_written_once_and_then_read(cache, tmp_path):
    """A first process compiles and writes; the next one reads every text from the file and writes nothing."""
    make("kubefit.fake_shapes")
    assert cache.new
    cache.save()
    path = Path(cache.path)
    written = path.stat().st_mtime_ns, path.stat().st_ino
    again = dataclasscode._Cache(cache.path)
    dataclasses.exec = dataclasscode.exec_through(again)
    module = make("kubefit.fake_shapes")
    assert again.used == cache.used and not again.new
    assert module.Shape("b") == module.Shape("b", 1)
    again.save()
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == written
    assert list(tmp_path.rglob("*.tmp")) == []  # (written through a file renamed over it)


def test_an_unreadable_cache_is_an_empty_one(cache):
    path = Path(cache.path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00not marshal data")
    module = make("kubefit.fake_shapes")
    assert module.Pair(1) < module.Pair(2) and cache.new
    cache.save()  # and it is replaced by a good one
    assert set(dataclasscode._read(cache.path)) == cache.used


def test_nothing_is_written_without_bytecode_or_where_the_folder_is_not_writable(cache, monkeypatch, tmp_path):
    make("kubefit.fake_shapes")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cache.save()
    assert not Path(cache.path).exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "__pycache__").write_text("a file, not a folder")
    cache.save()  # no error
    assert (tmp_path / "__pycache__").read_text() == "a file, not a folder"


def test_the_file_merges_what_other_processes_wrote_and_keeps_only_what_was_used_once_too_large(cache, monkeypatch):
    """Entries another process wrote meanwhile are kept (13 generated here + 5 there ≤ 18); beyond
    MAX_ENTRIES the file keeps only this process's."""
    make("kubefit.fake_shapes")
    other = {f"# a class of another verb {i}": compile("pass", "<string>", "exec") for i in range(5)}
    dataclasscode._write(cache.path, other)
    monkeypatch.setattr(dataclasscode, "MAX_ENTRIES", 18)
    cache.save()
    assert set(dataclasscode._read(cache.path)) == cache.used | set(other)
    cache.new = True
    monkeypatch.setattr(dataclasscode, "MAX_ENTRIES", 17)
    cache.save()
    assert set(dataclasscode._read(cache.path)) == cache.used


def test_the_command_writes_and_then_reads_its_cache(tmp_path):
    """End to end, in fresh interpreters: the command (`kubefit.cli`) installs the cache, which lands under the bytecode
    prefix (`PYTHONPYCACHEPREFIX`) when a class is made, and a second run compiles nothing anew."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = ("import kubefit.cli, kubefit.api.core, kubefit.dataclasscode as d; c = d._CACHE[0]; "
            "print(len(c.used), c.new, c.path)")
    first = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True).stdout.split()
    assert int(first[0]) > 20 and first[1] == "True"  # api.core's classes, compiled and written at exit
    assert second[:2] == [first[0], "False"] and second[2] == first[2]
    assert Path(first[2]).is_relative_to(tmp_path) and Path(first[2]).is_file()


def test_a_library_import_leaves_dataclasses_as_it_is():
    """`import kubefit` (and its classes) as a library: the `dataclasses` module keeps the builtin `exec`."""
    code = ("import builtins, dataclasses, kubefit, kubefit.api.core, kubefit.dataclasscode as d; "
            "print(d._CACHE == [] and getattr(dataclasses, 'exec', builtins.exec) is builtins.exec)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
