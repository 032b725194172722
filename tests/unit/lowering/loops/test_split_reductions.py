"""scf-split-reductions in the CPU pipeline: float sums in a fixed, documented order.

A sum of n values runs in blocks of 1024 (each into 8 interleaved partial sums of its own,
added to 8 running ones), then 8 interleaved partial sums over the rest, combined pairwise,
then the leftover elements: the compiled code must give exactly that (bit for bit, no
fast-math involved), and the order makes long f32 sums far more accurate than one chain.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LANES = 8
BLOCK = 1024


def split_sum_model(x: np.ndarray, init: float = 0.0, block: int = BLOCK) -> np.floating:
    """The pass's order in numpy: blocks (each into its own lanes from -0.0, then added to
    the running lanes), per-lane chains over the rest, pairwise combination, then the tail."""
    dtype = x.dtype.type
    running = np.full(LANES, -0.0, dtype=x.dtype)
    running[0] = init
    start = len(x) // block * block if block else 0
    if start:
        rows = x[:start].reshape(start // block, block // LANES, LANES)
        lanes = np.full((start // block, LANES), -0.0, dtype=x.dtype)
        for r in range(block // LANES):  # every block at once; each lane a sequential chain
            lanes = lanes + rows[:, r, :]
        for block_lanes in lanes:  # then block after block into the running lanes
            running = running + block_lanes
    whole = len(x) // LANES * LANES
    for row in x[start:whole].reshape(-1, LANES):
        running = running + row
    partial = list(running)
    while len(partial) > 1:
        partial = [dtype(a + b) for a, b in zip(partial[::2], partial[1::2])]
    total = partial[0]
    for v in x[whole:]:
        total = dtype(total + v)
    return total


@pytest.mark.parametrize("n", [16, 1027, 4099, 5000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_sum_follows_the_split_order_exactly(n: int, dtype: type) -> None:
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    got = ig.jit(lambda x: x.sum())(x)
    assert got.tobytes() == np.asarray(split_sum_model(x), dtype=dtype).tobytes()


def test_a_threaded_sum_follows_the_same_order_exactly() -> None:
    """2^22 + 5 elements: 4096 blocks, an scf.parallel the thread pool runs; the blocks'
    lanes are combined afterwards in block order, so the bits are the serial order's."""
    x = np.random.default_rng(12).standard_normal((1 << 22) + 5).astype(np.float32)
    jitted = ig.jit(lambda x: x.sum())
    assert "irgrad_parallel_for" in jitted.lower(x).as_text("llvm-ir")
    assert jitted(x).tobytes() == np.asarray(split_sum_model(x), dtype=np.float32).tobytes()


def test_row_sums_follow_the_split_order_exactly() -> None:
    m = np.random.default_rng(3).standard_normal((5, 2333)).astype(np.float32)
    got = ig.jit(lambda m: m.sum(axis=1))(m)
    want = np.array([split_sum_model(row) for row in m], dtype=np.float32)
    assert got.tobytes() == want.tobytes()


def test_max_is_unchanged_bit_for_bit_nan_and_signed_zeros_included() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 1000)).astype(np.float32)
    x[1, 17] = np.nan
    x[2] = -0.0
    x[3, :] = -np.abs(x[3])
    x[3, 500] = 0.0
    x[3, 501] = -0.0
    got = ig.jit(lambda m: (ig.max(m, axis=1), ig.min(m, axis=1)))(x)
    np.testing.assert_array_equal(got[0], np.max(x, axis=1))
    np.testing.assert_array_equal(got[1], np.min(x, axis=1))
    assert np.isnan(got[0][1]) and np.isnan(got[1][1])
    assert np.signbit(got[0][2]) and not np.signbit(got[0][3])


def test_long_f32_sums_are_accurate() -> None:
    """One sequential chain of 2^22 positive f32 values drifts by ~4e-3 relative; the blocked
    order stays within 2e-5 (chains of at most 128 + 4096 additions)."""
    x = np.random.default_rng(5).random(1 << 22).astype(np.float32)
    got = float(ig.jit(lambda x: (x * x).sum())(x))
    exact = float((x.astype(np.float64) ** 2).sum())
    assert abs(got - exact) / exact < 2e-5


LSE = """
func.func @lse(%m: memref<1100xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1100 : index
  %z = memref.load %out[] : memref<f32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<1100xf32>
    %e = math.exp %v : f32
    %a = arith.addf %e, %acc : f32
    scf.yield %a : f32
  }
  memref.store %r, %out[] : memref<f32>
  func.return
}
"""


@pytest.mark.parametrize("block", [0, 256, 512])
def test_blocking_a_body_with_math_calls_keeps_the_order_bit_for_bit(block: int) -> None:
    """With a math call in the body a block's values go to a stack buffer first, then into
    the block's lanes: the order of the additions is the documented one (the model) with
    and without blocks. The interpreter computes the same exp values as numpy, so the sums
    must agree with the model to the bit."""
    from irgrad.backends.interpreter import run_function
    from irgrad.registry import run_pipeline

    from _cpu_util import parse

    x = np.random.default_rng(9).standard_normal(1100).astype(np.float32)
    results = {}
    for b in (0, block):
        module = run_pipeline(parse(LSE), f"scf-split-reductions{{block={b}}}")
        text = str(module)
        assert ("memref.alloca" in text) == (0 < b <= 1100)
        out = np.array(0.5, dtype=np.float32)
        run_function(module, "lse", [x.copy(), out])
        results[b] = out.tobytes()
    for b in (0, block):
        model = split_sum_model(np.exp(x), init=0.5, block=b)
        assert results[b] == np.asarray(model, dtype=np.float32).tobytes()


def test_logsumexp_compiles_blocked_and_matches_numpy() -> None:
    m = np.random.default_rng(10).standard_normal((37, 1500)).astype(np.float32)
    jitted = ig.jit(lambda m: ig.log(ig.exp(m).sum(axis=1)))
    assert "memref.alloca" in jitted.lower(m).as_text("loops")
    want = np.log(np.exp(m.astype(np.float64)).sum(axis=1))
    np.testing.assert_allclose(jitted(m), want, rtol=2e-6)
