"""One scheduling policy for irgrad's CPU threads: GEMMs on a private single-threaded BLAS split
over the pool with the same bits as one call, the pool's back-off after a straggling worker,
and the thread count taken from affinity, cgroup quota and the job's processes on the host."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from irgrad.backends.cpu import private_blas, threads
from irgrad.backends.cpu.blas import blas_info

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

_PRODUCTS = textwrap.dedent(
    """
    import hashlib, itertools, sys
    import numpy as np
    import irgrad as ig
    from irgrad.backends.cpu import threads
    {setup}
    rng = np.random.default_rng(7)
    digest = hashlib.sha256()
    for (m, k, n) in [(128, 784, 256), (784, 128, 256), (37, 300, 1000), (1000, 300, 37), (513, 257, 129)]:
        for ta, tb in itertools.product([False, True], repeat=2):
            for dt in (np.float32, np.float64):
                a = rng.standard_normal((k, m) if ta else (m, k)).astype(dt)
                b = rng.standard_normal((n, k) if tb else (k, n)).astype(dt)
                f = ig.jit(lambda a, b: (a.T if ta else a) @ (b.T if tb else b), backend="cpu")
                got = np.asarray(f(a, b))
                ref = (a.T if ta else a) @ (b.T if tb else b)
                assert np.allclose(got, ref, rtol=1e-4, atol=1e-3), (m, k, n, ta, tb, dt)
                digest.update(got.tobytes())
    x = np.linspace(-3, 3, 1 << 21, dtype=np.float32)
    digest.update(np.asarray(ig.jit(lambda x: ig.tanh(x) * 2.0 + x * x, backend="cpu")(x)).tobytes())
    print(digest.hexdigest(), threads.pool_stats())
    """
)


def _products(env: dict[str, str], setup: str = "") -> tuple[str, dict[str, int]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PRODUCTS.format(setup=setup)],
        env={**os.environ, "IRGRAD_CACHE_DIR": "off", **env},
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    digest, _, stats = proc.stdout.strip().partition(" ")
    return digest, eval(stats)  # a dict literal printed by the child


def test_split_products_have_the_same_bits_on_any_thread_count():
    """Tiles on 1, 2, 3 or 5 threads: the same bytes (the tiles depend on the shape only).
    The library called with its own threads gives close values (checked in the child)."""
    one, _ = _products({"IRGRAD_NUM_THREADS": "1"})
    two, stats = _products({"IRGRAD_NUM_THREADS": "2"})
    three, _ = _products({"IRGRAD_NUM_THREADS": "3"})
    five, _ = _products({"IRGRAD_NUM_THREADS": "5"})
    _products({"IRGRAD_BLAS_THREADS": "library"})
    assert one == two == three == five
    assert stats["parallel"] > 0


def test_back_off_runs_loops_serially_with_the_same_bits():
    """A caller that always counts as having waited for a straggler backs off at once; the
    loops it then runs alone give the same bytes."""
    reference, _ = _products({"IRGRAD_NUM_THREADS": "1"})
    forced = "threads.STRAGGLE_NS = 0; threads.CALLER_SPIN = 0"  # every wait is a straggle
    # A straggle still needs the caller to wait at all, which the scheduler decides: a run in
    # which every worker finished first backs off nowhere; each run must give the same bits.
    for _ in range(4):
        digest, stats = _products({"IRGRAD_NUM_THREADS": "3"}, setup=forced)
        assert digest == reference
        if stats["straggled"] > 0:
            break
    assert stats["straggled"] > 0 and stats["serial"] > 0


def test_pool_beside_busy_processes_gives_the_same_bits():
    """More threads than cores and two processes spinning on them: every path of the pool
    (late workers, the caller running their chunks, sleeping callers, back-off) is taken."""
    reference, _ = _products({"IRGRAD_NUM_THREADS": "1"})
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        digest, _ = _products({"IRGRAD_NUM_THREADS": "6"})
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert digest == reference


def _thread_count(library: ctypes.CDLL) -> int | None:
    for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
        getter = getattr(library, name, None)
        if getter is not None:
            getter.restype = ctypes.c_int
            return int(getter())
    return None


def test_private_copy_is_a_separate_single_threaded_instance():
    info = blas_info()
    assert info.library is not None, info.describe()
    assert info.private_copy is not None and info.private_copy != info.library
    assert "private single-threaded copy" in info.describe()
    copy = ctypes.CDLL(info.private_copy)
    original = ctypes.CDLL(info.library)
    if _thread_count(original) is not None:  # OpenBLAS: the copy's count is its own, numpy's unchanged
        assert _thread_count(copy) == 1
        probe = f"import ctypes, numpy; l = ctypes.CDLL({info.library!r}); "
        getter = next(n for n in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                                  "openblas_get_num_threads") if hasattr(original, n))
        fresh = subprocess.run([sys.executable, "-c", probe + f"print(l.{getter}())"], capture_output=True,
                               text=True, timeout=60)
        assert _thread_count(original) == int(fresh.stdout)
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    np.testing.assert_array_equal(a @ a.T, [[5, 14], [14, 50]])  # numpy still works


def test_copy_in_memory_without_a_cache_folder():
    code = ("from irgrad.backends.cpu.blas import blas_info; i = blas_info(); "
            "print(i.private_copy); assert i.private_copy.startswith('/proc/self/fd/'), i")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "IRGRAD_CACHE_DIR": "off"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_library_setting_calls_the_library_itself():
    code = "from irgrad.backends.cpu.blas import blas_info; i = blas_info(); assert i.private_copy is None, i"
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "IRGRAD_BLAS_THREADS": "library"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_a_damaged_copy_is_replaced(tmp_path, monkeypatch):
    source = tmp_path / "libfakeblas.so"
    source.write_bytes(b"x" * 4096)
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path / "cache"))
    copy = private_blas._copy(str(source))
    assert copy is not None and open(copy, "rb").read() == source.read_bytes()
    with open(copy, "r+b") as f:
        f.truncate(100)
    again = private_blas._copy(str(source))
    assert again == copy and open(copy, "rb").read() == source.read_bytes()


@pytest.mark.parametrize(("files", "expected"), [
    ({"cpu.max": "150000 100000\n"}, 1.5),
    ({"cpu.max": "max 100000\n"}, None),
    ({"cpu.cfs_quota_us": "300000\n", "cpu.cfs_period_us": "100000\n"}, 3.0),
    ({"cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"}, None),
    ({}, None),
])
def test_cgroup_quota(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert threads.cgroup_cpu_quota(str(tmp_path)) == expected


def test_threads_follow_quota_and_processes_on_the_host(monkeypatch):
    for var in ("IRGRAD_NUM_THREADS", "OMP_NUM_THREADS", *threads._LOCAL_RANK_VARIABLES):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(threads, "cgroup_cpu_quota", lambda: 1.5)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert threads.usable_cpus() == 2
    monkeypatch.setattr(threads, "cgroup_cpu_quota", lambda: None)
    assert threads.configured_threads() == 16
    monkeypatch.setenv("MPI_LOCALNRANKS", "4")
    assert threads.local_ranks() == 4 and threads.configured_threads() == 4
    monkeypatch.setenv("MPI_LOCALNRANKS", "32")
    assert threads.configured_threads() == 1
    monkeypatch.setenv("IRGRAD_NUM_THREADS", "3")
    assert threads.configured_threads() == 3
