"""`ig.jit(f, fast_math=...)`: fast-math only where the user asks, and what asking changes.

By default the CPU code is IEEE-exact: no fast-math flag reaches LLVM, so a sum is the chain
of additions the loops say and NaN/Inf behave as in numpy. With `fast_math` the float ops of
the loops carry the flags (the `set-fastmath` pass), LLVM may reassociate (vectorized partial
sums) and the results move in the last bits only.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import irgrad as ig

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_default_compiles_without_fast_math_flags() -> None:
    x = _rng().standard_normal(4096).astype(np.float32)
    lowered = ig.jit(lambda x: (x * x).sum()).lower(x)
    assert "fastmath" not in lowered.as_text("loops")
    ir = lowered.as_text("llvm-ir")
    for flag in ("reassoc", "nnan", "ninf", " fast ", "contract"):
        assert flag not in ir


@pytest.mark.parametrize("flags", ["reassoc,contract", True])
def test_fast_math_flags_reach_llvm_and_results_stay_close(flags: bool | str) -> None:
    rng = _rng()
    x = rng.standard_normal(1 << 16).astype(np.float32)
    m = rng.standard_normal((64, 512)).astype(np.float32)

    def f(x, m):
        return (x * x).sum(), m.sum(axis=1), ig.tanh(m) * 2.0 + 1.0

    fast = ig.jit(f, fast_math=flags)
    exact = ig.jit(f)
    lowered = fast.lower(x, m)
    expected_flag = "reassoc" if flags is not True else "fast"
    assert f"fastmath<{expected_flag}" in lowered.as_text("loops")
    assert "reassoc" in lowered.as_text("llvm-ir")
    got, want = fast(x, m), exact(x, m)
    ref = [(x.astype(np.float64) ** 2).sum(), m.astype(np.float64).sum(axis=1)]
    for g, r in zip(got[:2], ref):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-4)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-6)


def test_reassoc_keeps_nan_and_inf() -> None:
    """`reassoc,contract` (not `fast`) keeps NaN/Inf semantics: a NaN anywhere poisons the sum
    and the max, an Inf stays an Inf."""
    x = _rng().standard_normal(1 << 14).astype(np.float32)
    x[1234] = np.nan
    f = ig.jit(lambda x: (x.sum(), ig.max(x), ig.maximum(x, 0.0)), fast_math="reassoc,contract")
    s, mx, relu = f(x)
    assert np.isnan(s) and np.isnan(mx)
    np.testing.assert_array_equal(relu, np.maximum(x, np.float32(0)))
    y = np.abs(x[:100]) + 1
    y[3] = np.inf
    s, mx, _ = ig.jit(lambda x: (x.sum(), ig.max(x), x), fast_math="reassoc,contract")(y)
    assert s == np.inf and mx == np.inf


def test_bad_fast_math_requests_are_errors_at_jit_time() -> None:
    with pytest.raises(ValueError, match="unknown fast-math flag 'speed'"):
        ig.jit(lambda x: x, fast_math="speed")
    with pytest.raises(ValueError, match="cpu backend only"):
        ig.jit(lambda x: x, backend="interp", fast_math=True)


def test_fast_math_is_part_of_the_disk_cache_key(tmp_path, monkeypatch) -> None:
    """An exact and a fast-math compile of the same program are different cache entries."""
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path))
    x = _rng().standard_normal(256).astype(np.float32)

    def f(x):
        return (x * 3.0).sum()

    ig.jit(f)(x)
    first = set(os.listdir(tmp_path))
    ig.jit(f, fast_math="reassoc")(x)
    second = set(os.listdir(tmp_path))
    assert first and second > first
