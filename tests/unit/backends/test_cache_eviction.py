"""The disk cache's size limit (irgrad/backends/cache.py): `$IRGRAD_CACHE_MAX_BYTES`, least
recently used entries evicted on each write, a hit refreshing its entry, the entry just
written never evicted, temporary files of dead writers cleaned up."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends import cache


@pytest.mark.parametrize(
    "setting,expected",
    [("", cache.DEFAULT_MAX_BYTES), ("1234", 1234), ("500M", 500 << 20), ("2g", 2 << 30), ("64k", 64 << 10),
     ("unlimited", None), (" Unlimited ", None)],
)
def test_the_limit_is_read_from_the_environment(monkeypatch, setting, expected):
    monkeypatch.setenv("IRGRAD_CACHE_MAX_BYTES", setting)
    assert cache.max_bytes() == expected


@pytest.mark.parametrize("setting", ["lots", "-5", "1.5G", "12T"])
def test_a_bad_limit_warns_and_keeps_the_default(monkeypatch, setting):
    monkeypatch.setenv("IRGRAD_CACHE_MAX_BYTES", setting)
    with pytest.warns(UserWarning, match=r"IRGRAD_CACHE_MAX_BYTES=.* is not a size"):
        assert cache.max_bytes() == cache.DEFAULT_MAX_BYTES


def entry(folder, name, size, age_seconds):
    path = folder / name
    path.write_bytes(b"x" * size)
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def test_evict_removes_the_least_recently_used_until_the_rest_fit(tmp_path):
    oldest = entry(tmp_path, "a.o", 100, 50)
    middle = entry(tmp_path, "b.runtime", 100, 40)
    newer = entry(tmp_path, "c.gpu.json", 100, 30)
    newest = entry(tmp_path, "d.o", 100, 20)
    (tmp_path / "sub").mkdir()  # not an entry
    cache.evict(tmp_path, 250)
    assert not oldest.exists() and not middle.exists()
    assert newer.exists() and newest.exists() and (tmp_path / "sub").is_dir()
    cache.evict(tmp_path, 1000)  # within the limit: nothing goes
    assert newer.exists() and newest.exists()


def test_evict_never_removes_the_entry_just_written(tmp_path):
    kept = entry(tmp_path, "big.o", 500, 100)  # the oldest, and alone over the limit
    other = entry(tmp_path, "small.o", 10, 10)
    cache.evict(tmp_path, 100, keep="big.o")
    assert kept.exists() and not other.exists()


def test_evict_cleans_up_temporary_files_of_dead_writers(tmp_path):
    stale = entry(tmp_path, cache.TMP_PREFIX + "dead", 10, cache.STALE_TMP_SECONDS + 60)
    live = entry(tmp_path, cache.TMP_PREFIX + "writing", 10, 1)
    cache.evict(tmp_path, 1 << 20)
    assert not stale.exists() and live.exists()


def test_a_hit_makes_an_entry_recently_used(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IRGRAD_CACHE_MAX_BYTES", "350")  # two entries of 100 bytes and their headers
    cache.store("a", b"a" * 100)
    cache.store("b", b"b" * 100)
    for name, age in (("a.o", 60), ("b.o", 30)):
        stamp = time.time() - age
        os.utime(tmp_path / name, (stamp, stamp))
    assert cache.load("a") == b"a" * 100  # now the most recently used
    cache.store("c", b"c" * 100)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.o", "c.o"]
    assert cache.load("b") is None


def test_jit_keeps_the_cache_within_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IRGRAD_CACHE_MAX_BYTES", "1")  # room for the newest entry only
    x = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
    first = ig.jit(lambda v: ig.tanh(v) * 2.0, backend="cpu")
    np.testing.assert_allclose(first(x), np.tanh(x) * 2.0, rtol=1e-6)
    (first_entry,) = tmp_path.glob("*.o")
    second = ig.jit(lambda v: ig.exp(v) - 1.0, backend="cpu")
    np.testing.assert_allclose(second(x), np.exp(x) - 1.0, rtol=1e-6)
    assert not first_entry.exists()
    assert [p.suffix for p in tmp_path.iterdir()] == [".o"]
    # The evicted program compiles again in a new jit.
    np.testing.assert_allclose(ig.jit(lambda v: ig.tanh(v) * 2.0, backend="cpu")(x), np.tanh(x) * 2.0, rtol=1e-6)
