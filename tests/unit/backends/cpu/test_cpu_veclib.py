"""Vector math through glibc's libmvec (irgrad/backends/cpu/veclib.py).

A vectorized elementwise exp/log/sin/... loop calls libmvec's SIMD functions instead of one
libm call per element; results stay within a few ulp of numpy's, special values included,
and `IRGRAD_VECLIB=none` turns it off. Where the machine has no libmvec (not x86-64 glibc
Linux) the tests that need it report as skipped: nothing is renamed there.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends.cpu import veclib

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

needs_libmvec = pytest.mark.skipif(not veclib.ensure_loaded(), reason="no libmvec on this machine")

FUNCTIONS = [
    ("exp", ig.exp, np.exp, lambda r, n: r.uniform(-80, 80, n)),
    ("log", ig.log, np.log, lambda r, n: r.uniform(1e-30, 1e30, n)),
    ("sin", ig.sin, np.sin, lambda r, n: r.uniform(-100, 100, n)),
    ("cos", ig.cos, np.cos, lambda r, n: r.uniform(-100, 100, n)),
    ("pow", lambda x: ig.power(x, 1.75), lambda x: np.power(x, 1.75), lambda r, n: r.uniform(1e-3, 1e3, n)),
]


def test_names_follow_the_x86_vector_abi() -> None:
    avx512 = "+avx,+avx2,+avx512f"
    assert veclib.libmvec_name("llvm.exp.v16f32", avx512) == "_ZGVeN16v_expf"
    assert veclib.libmvec_name("llvm.exp.v8f64", avx512) == "_ZGVeN8v_exp"
    assert veclib.libmvec_name("llvm.sin.v8f32", "+avx,+avx2") == "_ZGVdN8v_sinf"
    assert veclib.libmvec_name("llvm.sin.v8f32", "+avx,-avx2") == "_ZGVcN8v_sinf"
    assert veclib.libmvec_name("llvm.pow.v4f32", "") == "_ZGVbN4vv_powf"
    assert veclib.libmvec_name("llvm.exp.v16f32", "+avx2,-avx512f") is None  # no 512-bit
    assert veclib.libmvec_name("llvm.sqrt.v8f32", avx512) is None  # an instruction, not a call
    assert veclib.libmvec_name("llvm.exp.f32", avx512) is None  # scalar


@needs_libmvec
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, ig_fn, np_fn, sample", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_vectorized_math_calls_libmvec_and_stays_within_a_few_ulp(name, ig_fn, np_fn, sample, dtype) -> None:
    rng = np.random.default_rng(len(name))
    x = sample(rng, 4099).astype(dtype)  # 4099: vector body and scalar remainder
    jitted = ig.jit(lambda x: ig_fn(x))
    ir = jitted.lower(x).compile().module.optimized_ir
    assert "_ZGV" in ir, f"{name} {dtype}: no libmvec call in the optimized IR"
    got = jitted(x)
    want = np_fn(x.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    err = np.abs(got.astype(np.float64) - want) / np.maximum(ulp, np.finfo(dtype).tiny)
    assert err.max() <= 4.0, f"{name} {dtype}: {err.max():.1f} ulp"


@needs_libmvec
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_as_in_libm(dtype) -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1000.0, -1000.0, 1.0] * 8, dtype=dtype)
    got_exp = ig.jit(lambda x: ig.exp(x))(x)
    got_log = ig.jit(lambda x: ig.log(x))(x)
    with np.errstate(all="ignore"):
        want_exp, want_log = np.exp(x), np.log(x)
    for got, want in ((got_exp, want_exp), (got_log, want_log)):
        exact = ~np.isfinite(want) | (want == 0) | (x == 0)  # NaN, +-inf, 0: exactly libm's
        np.testing.assert_array_equal(got[exact], want[exact])
        # Signs of infinities and zeros are libm's; a NaN's sign is not specified (IEEE 754:
        # log of a negative number is "a NaN"; glibc's libmvec gives -NaN, numpy 2.4's +NaN).
        signed = exact & ~np.isnan(want)
        assert np.array_equal(np.signbit(got[signed]), np.signbit(want[signed]))
        np.testing.assert_allclose(got[~exact], want[~exact], rtol=4 * np.finfo(dtype).eps)


def test_irgrad_veclib_none_keeps_libm_calls() -> None:
    code = (
        "import numpy as np, irgrad as ig\n"
        "x = np.linspace(-3, 3, 1024, dtype=np.float32)\n"
        "c = ig.jit(lambda x: ig.exp(x)).lower(x).compile()\n"
        "assert '_ZGV' not in c.module.optimized_ir\n"
        "np.testing.assert_allclose(c(x), np.exp(x), rtol=1e-6)\n"
        "print('ok')\n"
    )
    env = {"IRGRAD_VECLIB": "none", "IRGRAD_CACHE_DIR": "off", "PATH": "/usr/bin:/bin"}
    import os

    env = {**os.environ, **env}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr


@needs_libmvec
def test_cached_object_code_calling_libmvec_loads(tmp_path) -> None:
    """A new process loading cached code that calls libmvec resolves it (nothing compiled)."""
    import os

    code = (
        "import numpy as np, irgrad as ig\n"
        "x = np.linspace(-3, 3, 4096, dtype=np.float32)\n"
        "print(float(np.abs(ig.jit(lambda x: ig.exp(x))(x) - np.exp(x)).max()))\n"
    )
    env = {**os.environ, "IRGRAD_CACHE_DIR": str(tmp_path)}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert float(done.stdout) < 1e-5
    assert os.listdir(tmp_path)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_flushes_subnormal_results_and_keeps_special_values(dtype) -> None:
    """Compiled exp: 0 where the result would be subnormal (XLA's CPU choice; glibc's vector exp
    takes a 12-16x slower path there), exact elsewhere, NaN (either sign) and infinities kept."""
    import irgrad as ig

    special = np.array([-np.inf, -3e38, -800.0, -100.0, np.nan, -np.nan, np.inf, 1000.0, 0.0, -5.0, 3.0], dtype)
    x = np.concatenate([special, np.random.default_rng(0).standard_normal(61).astype(dtype)])
    got = ig.jit(ig.exp)(x)
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x)
    want[np.abs(want) < np.finfo(dtype).tiny] = 0.0
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=4 * np.finfo(dtype).eps, atol=0)
