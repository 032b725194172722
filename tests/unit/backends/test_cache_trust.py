"""The disk cache cannot be poisoned: an entry is loaded only when it is a regular file of this
user's, in a folder no one else can write, and its digest (of its key, suffix and contents)
matches; anything else is discarded with a warning and compiled again, and nothing hangs on a
FIFO or a device in an entry's place. Concurrent writers never expose half an entry."""

from __future__ import annotations

import os
import stat
import threading
import warnings

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends import cache


@pytest.fixture
def folder(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(path))
    cache._warned.clear()
    return path


def entry_path(folder, key, suffix=".o"):
    return folder / f"{key}{suffix}"


def test_entries_round_trip_in_a_private_folder(folder):
    cache.store("k1", b"object code")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    raw = entry_path(folder, "k1").read_bytes()
    assert raw.startswith(cache.MAGIC) and raw.endswith(b"object code")
    assert cache.load("k1") == b"object code"
    assert cache.load("k2") is None


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "no header", "header only"])
def test_a_damaged_entry_is_discarded_with_a_warning(folder, damage):
    cache.store("k1", bytes(range(256)) * 4)
    path = entry_path(folder, "k1")
    raw = bytearray(path.read_bytes())
    if damage == "flip a byte":
        raw[len(raw) // 2] ^= 0x10
    elif damage == "truncate":
        raw = raw[:-7]
    elif damage == "no header":
        raw = raw[len(cache.MAGIC) + 32 :]
    else:
        raw = raw[: len(cache.MAGIC) + 32]
    path.write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match="damaged or not this program's"):
        assert cache.load("k1") is None
    assert not path.exists()


def test_an_entry_swapped_in_from_another_key_is_not_a_hit(folder):
    cache.store("a", b"program a")
    cache.store("b", b"program b")
    os.replace(entry_path(folder, "a"), entry_path(folder, "b"))
    with pytest.warns(RuntimeWarning):
        assert cache.load("b") is None
    cache.store("a", b"program a")
    os.replace(entry_path(folder, "a"), entry_path(folder, "a", ".gpu.json"))  # another kind
    with pytest.warns(RuntimeWarning):
        assert cache.load("a", ".gpu.json") is None


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "folder"])
def test_no_hang_or_endless_read_on_what_is_not_a_file(folder, kind):
    cache.store("other", b"x")
    path = entry_path(folder, "k1")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        os.symlink("/dev/zero", path)
    with pytest.warns(RuntimeWarning, match="not a regular file"):
        assert cache.load("k1") is None
    if kind != "folder":
        assert not os.path.lexists(path)
    cache.store("k1", b"good")  # and a good entry takes its place
    if kind != "folder":
        assert cache.load("k1") == b"good"


def test_a_folder_others_can_write_is_not_used(folder):
    folder.mkdir(mode=0o700)
    cache.store("k1", b"x")
    folder.chmod(0o777)
    with pytest.warns(RuntimeWarning, match="owned by another user or writable by others"):
        assert cache.load("k1") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per folder
        cache.store("k2", b"y")
    assert not entry_path(folder, "k2").exists()


def test_an_older_cache_folder_is_made_private(folder):
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    cache.store("k1", b"x")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert cache.load("k1") == b"x"


def test_an_entry_another_user_owns_is_refused(folder, monkeypatch):
    cache.store("k1", b"x")
    real = os.getuid()
    monkeypatch.setattr(cache, "_trusted", lambda f: True)  # the folder check passes
    monkeypatch.setattr(os, "getuid", lambda: real + 1)  # so the entry's owner is someone else
    with pytest.warns(RuntimeWarning, match="not a regular file of this user's"):
        assert cache.load("k1") is None


def test_an_empty_cache_dir_setting_is_off(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    assert cache.cache_dir() is None
    cache.store("k1", b"x")
    assert not any(tmp_path.iterdir())


def test_concurrent_writers_never_expose_half_an_entry(folder):
    payloads = [bytes([k]) * (1000 + 40_000 * k) for k in range(4)]
    seen: list[bytes | None] = []
    errors: list[BaseException] = []

    def write(k: int) -> None:
        for _ in range(5):
            cache.store("shared", payloads[k])

    def read() -> None:
        try:
            for _ in range(200):
                seen.append(cache.load("shared"))
        except BaseException as err:  # noqa: BLE001 (reported below)
            errors.append(err)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a torn read would be a damaged entry: a warning
        threads = [threading.Thread(target=write, args=(k,)) for k in range(4)] + [threading.Thread(target=read)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert all(s is None or s in payloads for s in seen)
    assert cache.load("shared") in payloads


def test_a_corrupted_program_entry_is_recompiled_and_replaced(folder):
    """End to end: a flipped byte in a compiled program's entry (which the object-file checks
    alone would load and run) is caught, the program compiled again, the entry rewritten."""

    def f(x):
        return ig.tanh(x) * 3.0 + x

    x = np.linspace(-1, 1, 8)
    want = ig.jit(f, backend="cpu")(x)
    (path,) = folder.glob("*.o")
    good = path.read_bytes()
    raw = bytearray(good)
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match="damaged"):
        got = ig.jit(f, backend="cpu")(x)
    np.testing.assert_array_equal(got, want)
    assert path.read_bytes() == good
