"""irgrad/backends/cpu/runtime_objects.py with the disk cache off: compiled, and no cache key
(so no hash of irgrad's sources) computed for an entry nothing would store."""

from __future__ import annotations

import ctypes

from irgrad.backends import cache
from irgrad.backends.cpu import runtime_objects

ANSWER_IR = """
define i64 @irgrad_test_answer_off(i64 %x) {
  %y = mul i64 %x, 6
  ret i64 %y
}
"""


def test_no_key_is_computed_when_the_cache_is_off(tmp_path, monkeypatch):
    from irgrad.backends.cpu.process import initialize

    initialize()
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    monkeypatch.chdir(tmp_path)
    keys = []
    real = cache.cache_key
    monkeypatch.setattr(cache, "cache_key", lambda *args: keys.append(args) or real(*args))
    engine = runtime_objects.runtime_engine(ANSWER_IR, opt=0)
    address = engine.get_function_address("irgrad_test_answer_off")
    assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(address)(7) == 42
    assert keys == [] and not any(tmp_path.iterdir())


def test_a_key_is_computed_when_the_cache_is_on(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path / "cache"))
    key = runtime_objects._cache_key(ANSWER_IR, 0, False, False, False)
    assert key is not None and len(key) == 64
