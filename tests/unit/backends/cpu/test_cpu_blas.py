"""GEMMs through BLAS: `convert-linalg-to-blas`, `blas.gemm` on the interpreter and compiled,
the runtime's library and loop-nest entry points, and what the rewrite must not break
(transposed operands, freed sources, the zero fill)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends.cpu.blas import blas_info
from irgrad.diagnostics import PassError
from irgrad.backends.interpreter.numeric_check import NumericChecker
from _cpu_util import assert_close, entry_function, function, parse

RNG = np.random.default_rng(7)


def random(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Through ig.jit: every transpose combination, both precisions, against float64 numpy
# ---------------------------------------------------------------------------------------------

PRODUCTS = {
    "a@b": (lambda a, b: a @ b, lambda m, n, k: [(m, k), (k, n)]),
    "a.T@b": (lambda a, b: a.T @ b, lambda m, n, k: [(k, m), (k, n)]),
    "a@b.T": (lambda a, b: a @ b.T, lambda m, n, k: [(m, k), (n, k)]),
    "a.T@b.T": (lambda a, b: a.T @ b.T, lambda m, n, k: [(k, m), (n, k)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("product", sorted(PRODUCTS))
@pytest.mark.parametrize("mnk", [(64, 48, 40), (129, 67, 33), (1, 300, 200)])
def test_jit_matmul_matches_numpy(product, dtype, mnk):
    fn, shapes = PRODUCTS[product]
    a, b = (random(s, dtype) for s in shapes(*mnk))
    jitted = ig.jit(fn, backend="cpu")
    loops = jitted.lower(a, b).as_text("loops")
    assert "blas.gemm" in loops
    assert "linalg.generic" not in loops and "scf.parallel" not in loops, "transposed copy left"
    got = jitted(a, b)
    expected = fn(a.astype(np.float64), b.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol * 10, atol=tol * np.abs(expected).max())


def test_small_matmul_stays_loops():
    a, b = random((4, 3), np.float32), random((3, 5), np.float32)
    jitted = ig.jit(lambda a, b: a @ b, backend="cpu")
    assert "blas.gemm" not in jitted.lower(a, b).as_text("loops")
    np.testing.assert_allclose(jitted(a, b), a @ b, rtol=1e-5)


def test_mlp_gradient_uses_flags_and_matches_interpreter():
    """The backward pass's x^T @ dy and dy @ W^T read x and W in place (no transposed copy),
    and the gradient equals the interpreter's, including sources freed before the matmul."""

    def loss(w1, w2, x):
        h = ig.tanh(x @ w1)
        return ig.sum(ig.tanh(h @ w2) ** 2)

    w1, w2, x = random((48, 64), np.float32), random((64, 40), np.float32), random((32, 48), np.float32)
    step = ig.jit(ig.value_and_grad(loss, argnums=(0, 1)), backend="cpu")
    loops = step.lower(w1, w2, x).as_text("loops")
    (vjp,) = [f for f in loops.split("func.func ")[1:] if "blas.gemm" in f]  # the vjp, inlined in the entry
    assert vjp.count("blas.gemm") == 5  # 2 forward, dW1, dW2, dh (no dx: x needs none)
    assert vjp.count("transpose_a") == 2 and vjp.count("transpose_b") == 1
    assert "(d0, d1) -> (d1, d0)" not in vjp, "a transposed copy is left" 
    value, (g1, g2) = step(w1, w2, x)
    ref_value, (r1, r2) = ig.jit(ig.value_and_grad(loss, argnums=(0, 1)), backend="interp")(w1, w2, x)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    np.testing.assert_allclose(g1, r1, rtol=1e-4, atol=1e-4 * np.abs(r1).max())
    np.testing.assert_allclose(g2, r2, rtol=1e-4, atol=1e-4 * np.abs(r2).max())


# ---------------------------------------------------------------------------------------------
# blas.gemm written by hand: alpha, beta, strided rows, beta = 0 never reads C, empty sizes
# ---------------------------------------------------------------------------------------------

GEMM_MODULE = """
func.func @gemm(%a: memref<6x10xf64>, %b: memref<5x3xf64>, %c: memref<4x5xf64>) {
  %rows = memref.subview %a[1, 2] [3, 4] [1, 1] : memref<6x10xf64> to memref<3x4xf64, strided<[10, 1], offset: 12>>
  blas.gemm %rows, %b, %c {transpose_a, transpose_b, alpha = 0.5 : f64, beta = -2.0 : f64} : memref<3x4xf64, strided<[10, 1], offset: 12>>, memref<5x3xf64>, memref<4x5xf64>
  func.return
}

func.func @overwrite(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}

func.func @empty_k(%a: memref<4x0xf32>, %b: memref<0x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 3.0 : f64} : memref<4x0xf32>, memref<0x5xf32>, memref<4x5xf32>
  func.return
}
"""


def test_gemm_strided_alpha_beta():
    a, b, c = random((6, 10), np.float64), random((5, 3), np.float64), random((4, 5), np.float64)
    expected = 0.5 * a[1:4, 2:6].T @ b.T - 2.0 * c
    compiled_c = c.copy()
    function(GEMM_MODULE, "gemm", 3)(a, b, compiled_c)
    np.testing.assert_allclose(compiled_c, expected, rtol=1e-12)
    interp_c = c.copy()
    from irgrad.backends.interpreter.runner import make_interpreter

    module = parse(GEMM_MODULE)
    make_interpreter(module).call_op(entry_function(module, "gemm"), [a, b, interp_c])
    np.testing.assert_allclose(interp_c, expected, rtol=1e-12)


def test_gemm_beta_zero_never_reads_c():
    a, b = random((4, 3), np.float32), random((3, 5), np.float32)
    c = np.full((4, 5), np.nan, np.float32)
    function(GEMM_MODULE, "overwrite", 3)(a, b, c)
    assert_close(a @ b, c, what="C")


def test_gemm_empty_inner_dimension_scales_c():
    """k = 0: BLAS is not called (the shim's loop nest computes beta * C)."""
    c = random((4, 5), np.float32)
    out = c.copy()
    function(GEMM_MODULE, "empty_k", 3)(np.zeros((4, 0), np.float32), np.zeros((0, 5), np.float32), out)
    np.testing.assert_allclose(out, 3.0 * c, rtol=1e-6)


def test_runtime_uses_numpys_blas():
    info = blas_info()
    assert info.uses_library, info.describe()
    assert info.int_bits in (32, 64)


def test_loop_fallback_without_blas():
    """IRGRAD_BLAS=none: the same entry points are loop nests, with the same results."""
    script = textwrap.dedent(
        """
        import numpy as np, irgrad as ig
        from irgrad.backends.cpu.blas import blas_info
        assert not blas_info().uses_library and "IRGRAD_BLAS=none" in blas_info().describe()
        rng = np.random.default_rng(0)
        for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
            a, b = rng.standard_normal((70, 50)).astype(dtype), rng.standard_normal((60, 50)).astype(dtype)
            got = ig.jit(lambda a, b: a.T @ (a @ b.T), backend="cpu")(a, b)
            ref = a.astype(np.float64).T @ (a.astype(np.float64) @ b.astype(np.float64).T)
            np.testing.assert_allclose(got, ref, rtol=tol * 100, atol=tol * 100 * np.abs(ref).max())
        print("ok")
        """
    )
    env = dict(os.environ, IRGRAD_BLAS="none", IRGRAD_CACHE_DIR="off")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


# ---------------------------------------------------------------------------------------------
# The numeric checker sees a read of freed memory (the bug the dealloc move prevents)
# ---------------------------------------------------------------------------------------------

_FREED = """
func.func @f(%x0: memref<8x6xf32>, %dy: memref<8x5xf32>, %dw: memref<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<8x6xf32>
  "memref.copy"(%x0, %x) : (memref<8x6xf32>, memref<8x6xf32>) -> ()
  %xt = memref.alloc() : memref<6x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x6xf32>) outs(%xt : memref<6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %x : memref<8x6xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<6x5xf32>)
  GEMM
  memref.dealloc %xt : memref<6x8xf32>
  func.return
}
"""


def test_numeric_checker_catches_read_after_free():
    good = parse(_FREED.replace("GEMM", 'linalg.matmul ins(%xt, %dy : memref<6x8xf32>, memref<8x5xf32>) outs(%dw : memref<6x5xf32>)'))
    bad = parse(
        _FREED.replace(
            "GEMM",
            "blas.gemm %x, %dy, %dw {transpose_a, alpha = 1.0 : f64, beta = 0.0 : f64} : "
            "memref<8x6xf32>, memref<8x5xf32>, memref<6x5xf32>",
        )
    )
    checker = NumericChecker()
    checker.baseline(good)
    checker.check(good, "nothing")
    with pytest.raises(PassError, match="changed result 2 of @f: NaN mismatch"):
        checker.check(bad, "use-after-free")


# ---------------------------------------------------------------------------------------------
# Batched matmuls: an scf.for over the batch of gemms on subviews, broadcasting included
# ---------------------------------------------------------------------------------------------

_SHAPE_RNG = np.random.default_rng(11)


def _random_batched_shapes(count):
    """(a shape, b shape) pairs with random m, n, k and batch dims, some broadcast."""
    pairs = []
    for _ in range(count):
        m, n, k = (int(s) for s in _SHAPE_RNG.integers(17, 70, size=3))
        batch = [int(s) for s in _SHAPE_RNG.integers(1, 4, size=int(_SHAPE_RNG.integers(1, 3)))]
        a_batch = [1 if _SHAPE_RNG.random() < 0.3 else s for s in batch]
        pairs.append(((*a_batch, m, k), (*batch, k, n)))
    return pairs


BATCHED_SHAPES = [
    ((1, 33, 47), (1, 47, 29)),  # batch 1: no loop
    ((5, 64, 48), (5, 48, 40)),
    ((2, 3, 37, 41), (2, 3, 41, 23)),  # two batch dimensions
    ((3, 1, 200), (3, 200, 90)),  # m = 1
    ((4, 40, 50), (50, 30)),  # a 2-D B, the same for every batch element
    ((1, 40, 50), (3, 50, 30)),  # a size-1 batch dimension broadcast
    ((2, 1, 20, 30), (1, 3, 30, 25)),  # both broadcast
    *_random_batched_shapes(4),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", BATCHED_SHAPES, ids=str)
def test_jit_batched_matmul_matches_numpy(shapes, dtype):
    a, b = (random(s, dtype) for s in shapes)
    jitted = ig.jit(lambda a, b: a @ b, backend="cpu")
    loops = jitted.lower(a, b).as_text("loops")
    assert "blas.gemm" in loops
    assert "linalg.generic" not in loops and "scf.parallel" not in loops, "a loop nest is left"
    got = jitted(a, b)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert got.shape == expected.shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol * 10, atol=tol * np.abs(expected).max())


def test_small_batched_matmul_stays_loops():
    """2 * 2 * 4 * 5 * 3 flops: below min-flops, the loop nest stays."""
    a, b = random((2, 4, 3), np.float32), random((2, 3, 5), np.float32)
    jitted = ig.jit(lambda a, b: a @ b, backend="cpu")
    assert "blas.gemm" not in jitted.lower(a, b).as_text("loops")
    np.testing.assert_allclose(jitted(a, b), a @ b, rtol=1e-5)


def test_batched_matmul_gradient_matches_interpreter():
    """Forward, dA = dC @ B^T and dB = A^T @ dC (summed over the broadcast batch dimension)
    are all batched gemms, with the transposes as flags; the results equal the interpreter's."""

    def loss(a, b):
        return ig.sum(ig.tanh(a @ b) ** 2)

    a, b = random((2, 3, 40, 50), np.float32), random((3, 50, 30), np.float32)
    step = ig.jit(ig.value_and_grad(loss, argnums=(0, 1)), backend="cpu")
    loops = step.lower(a, b).as_text("loops")
    (vjp,) = [f for f in loops.split("func.func ")[1:] if "blas.gemm" in f]  # the vjp, inlined in the entry
    assert vjp.count("blas.gemm") == 3
    assert vjp.count("transpose_a") == 1 and vjp.count("transpose_b") == 1
    value, (ga, gb) = step(a, b)
    ref_value, (ra, rb) = ig.jit(ig.value_and_grad(loss, argnums=(0, 1)), backend="interp")(a, b)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    np.testing.assert_allclose(ga, ra, rtol=1e-4, atol=1e-4 * np.abs(ra).max())
    np.testing.assert_allclose(gb, rb, rtol=1e-4, atol=1e-4 * np.abs(rb).max())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_matmul_widens_to_an_f32_gemm(dtype):
    """Large f16/bf16 matmuls: operands widened once, an f32 GEMM, the result rounded once,
    which is the op's contract (f32 accumulation): within one ulp of the interpreter."""
    import ml_dtypes

    dt = np.dtype(np.float16) if dtype == "float16" else np.dtype(ml_dtypes.bfloat16)
    rng = np.random.default_rng(21)
    a, b = rng.standard_normal((96, 160)).astype(dt), rng.standard_normal((160, 72)).astype(dt)
    jitted = ig.jit(lambda a, b: a @ b, backend="cpu")
    assert "blas.gemm" in jitted.lower(a, b).as_text("loops")
    got = np.asarray(jitted(a, b))
    assert got.dtype == dt
    expected = np.asarray(ig.jit(lambda a, b: a @ b, backend="interp")(a, b))
    mantissa = 10 if dtype == "float16" else 7
    e = expected.astype(np.float64)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(e), 1e-3))) - mantissa)
    assert np.all(np.abs(got.astype(np.float64) - e) <= ulp)


@pytest.mark.parametrize("beta", [0.0, -2.0])
def test_sgemm_a_bt_with_a_long_k_through_the_swapped_product(beta):
    """f32 C = A @ B^T with m < n and a long k (a weight gradient's shape) is computed by the
    shim as C^T = B @ A^T into a temporary, then transposed into C (irgrad/backends/cpu/blas.py,
    _SWAP_NT): strided operands, alpha, beta, and C not read when beta is 0."""
    import ctypes

    import llvmlite.binding as llvm

    from irgrad.backends.cpu.blas import install_blas

    install_blas()
    i64, f32, ptr = ctypes.c_int64, ctypes.c_float, ctypes.c_void_p
    sgemm = ctypes.CFUNCTYPE(None, i64, i64, i64, i64, i64, f32, ptr, i64, ptr, i64, f32, ptr, i64)(
        llvm.address_of_symbol("irgrad_blas_sgemm")
    )
    m, n, k = 8, 72, 32768  # k >= 4n and m*n*k >= 2^24: the swapped product
    a_full, b_full = random((m, k + 3), np.float32), random((n, k + 5), np.float32)
    c_full = random((m, n + 7), np.float32)
    a, b, c0 = a_full[:, :k], b_full[:, :k], c_full[:, :n].copy()
    if beta == 0.0:
        c_full[:, :n] = np.nan
    sgemm(0, 1, m, n, k, 0.5, a_full.ctypes.data, k + 3, b_full.ctypes.data, k + 5, beta,
          c_full.ctypes.data, n + 7)  # fmt: skip
    expected = 0.5 * (a.astype(np.float64) @ b.T.astype(np.float64)) + (beta * c0 if beta else 0.0)
    assert_close(expected.astype(np.float32), c_full[:, :n], normwise=True, what="C")
    assert not np.isnan(c_full[:, n:]).any()
