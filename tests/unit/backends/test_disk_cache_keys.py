"""What a disk-cache hit computes, made cheap without loosening the key
(irgrad/backends/cache.py, irgrad/backends/cpu/runtime_objects.py, `Program.cache_text`).

- Package versions come from the `.dist-info` folder's name, and must equal what
  importlib.metadata says.
- The source hash is remembered under the files' names, sizes and times: a changed file is a
  new hash, an untouched tree is not read again.
- Programs are keyed by their generic form: equal programs, equal keys; any difference, a
  different key.
- irgrad's runtimes (thread pool, allocation guard, BLAS/LAPACK shims) are compiled once per
  machine: a second engine loads the stored object; a corrupt one is compiled again.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import types

import llvmlite
import numpy as np
import pytest
import xdsl
from xdsl.parser import Parser

import irgrad as ig
from irgrad.backends import cache
from irgrad.backends.cpu import runtime_objects
from irgrad.context import make_context
from irgrad.versions import installed_version


@pytest.mark.parametrize("module", [xdsl, llvmlite], ids=["xdsl", "llvmlite"])
def test_installed_version_is_what_importlib_metadata_reads(module):
    assert installed_version(module) == importlib.metadata.version(module.__name__)


def test_installed_version_falls_back_to_the_module_attribute(tmp_path):
    package = tmp_path / "lonely"
    package.mkdir()
    (package / "__init__.py").write_text("")
    module = types.ModuleType("lonely")
    module.__file__ = str(package / "__init__.py")
    module.__version__ = "3.1.4"
    assert installed_version(module) == "3.1.4"


def write_tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_source_digest_follows_every_change_and_is_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "src"
    write_tree(root, {"a.py": "x = 1\n", "sub/b.py": "y = 2\n", "notes.txt": "ignored"})
    first = cache.source_digest(str(root))
    assert len(first) == 16
    assert len(list((tmp_path / "cache").glob("*.sources"))) == 1

    # Unchanged files: the remembered digest, without reading a file.
    real_read = type(root).read_bytes

    def no_reading(self):
        assert root not in self.parents, f"read {self}"
        return real_read(self)

    with monkeypatch.context() as patch:
        patch.setattr(type(root), "read_bytes", no_reading)
        assert cache.source_digest(str(root)) == first

    # Same contents, new times: read again, same digest.
    os.utime(root / "a.py", ns=(1, 1))
    assert cache.source_digest(str(root)) == first
    # A changed, added or renamed file: a new digest.
    (root / "sub" / "b.py").write_text("y = 3\n")
    changed = cache.source_digest(str(root))
    assert changed != first
    (root / "c.py").write_text("")
    added = cache.source_digest(str(root))
    assert added not in (first, changed)
    (root / "c.py").rename(root / "d.py")
    assert cache.source_digest(str(root)) not in (first, changed, added)
    # A runtime's IR template (.ll) counts; other files do not.
    renamed = cache.source_digest(str(root))
    (root / "sub" / "shim.ll").write_text("define void @f() { ret void }\n")
    with_template = cache.source_digest(str(root))
    assert with_template != renamed
    (root / "notes.txt").write_text("edited")
    os.utime(root / "notes.txt", ns=(5, 5))
    assert cache.source_digest(str(root)) == with_template


def test_source_digest_ignores_a_garbled_memo(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "src"
    write_tree(root, {"a.py": "x = 1\n"})
    first = cache.source_digest(str(root))
    memo = next((tmp_path / "cache").glob("*.sources"))
    memo.write_bytes(b"../../etc/passwd")
    assert cache.source_digest(str(root)) == first
    assert memo.read_bytes().endswith(first.encode())  # rewritten, with its digest


def traced(scale: float):
    x = np.linspace(-1.0, 1.0, 6, dtype=np.float32)
    return ig.trace(lambda v: ig.tanh(v) * scale + v, x)


def test_programs_are_keyed_by_their_generic_form():
    text = traced(0.5).cache_text()
    assert '"func.func"' in text  # generic: no op's assembly format is needed
    assert text == traced(0.5).cache_text()
    assert text != traced(0.25).cache_text()
    # The generic text is the whole program: it parses back to what the custom form prints.
    parsed = Parser(make_context(), text).parse_module()
    assert str(parsed) == str(traced(0.5).module)


ANSWER_IR = """
define i64 @irgrad_test_answer(i64 %x) {
  %y = mul i64 %x, 6
  ret i64 %y
}
"""


def answer(engine) -> int:
    return ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(engine.get_function_address("irgrad_test_answer"))(7)


@pytest.mark.parametrize("host_cpu,passes", [(False, False), (True, True)], ids=["generic", "host-O2"])
def test_runtime_objects_are_compiled_once_per_machine(tmp_path, monkeypatch, host_cpu, passes):
    from irgrad.backends.cpu.process import initialize

    initialize()
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path))
    compiles = []
    real = runtime_objects.object_code

    def counted(*args, **kwargs):
        compiles.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(runtime_objects, "object_code", counted)
    options = {"opt": 2, "host_cpu": host_cpu, "passes": passes}
    engines = [runtime_objects.runtime_engine(ANSWER_IR, **options)]
    assert answer(engines[-1]) == 42 and len(compiles) == 1
    entry = next(tmp_path.glob("*" + runtime_objects.SUFFIX))
    engines.append(runtime_objects.runtime_engine(ANSWER_IR, **options))  # loaded, not compiled
    assert answer(engines[-1]) == 42 and len(compiles) == 1
    # Other settings are another entry.
    engines.append(runtime_objects.runtime_engine(ANSWER_IR, **dict(options, opt=0)))
    assert answer(engines[-1]) == 42 and len(compiles) == 2
    # A corrupt entry is compiled again and overwritten, never loaded.
    good = entry.read_bytes()
    entry.write_bytes(good[:100])
    engines.append(runtime_objects.runtime_engine(ANSWER_IR, **options))
    assert answer(engines[-1]) == 42 and len(compiles) == 3
    assert entry.read_bytes() == good


def test_runtime_objects_without_a_cache(tmp_path, monkeypatch):
    from irgrad.backends.cpu.process import initialize

    initialize()
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    monkeypatch.chdir(tmp_path)
    engine = runtime_objects.runtime_engine(ANSWER_IR, opt=0)
    assert answer(engine) == 42
    assert not any(tmp_path.iterdir())
