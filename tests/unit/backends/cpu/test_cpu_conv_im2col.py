"""Large convolutions lower as im2col + batched matmul (nn_to_linalg/linear.py), hence GEMMs:
the same results as a float64 reference, for strides, dilations, padding, and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig


def conv_reference(x, w, stride, padding, dilation):
    top, bottom, left, right = padding
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * dilation[0] : i * dilation[0] + stride[0] * (oh - 1) + 1 : stride[0],
                      j * dilation[1] : j * dilation[1] + stride[1] * (ow - 1) + 1 : stride[1]]  # fmt: skip
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return out


CASES = [
    ((8, 16, 20, 20), (24, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((4, 8, 33, 29), (16, 8, 5, 3), (2, 1), (0, 2, 1, 0), (1, 2)),
    ((2, 32, 16, 16), (64, 32, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),
    # Kernels wider than the output (a weight gradient's shape): the windows become rows.
    ((16, 8, 14, 14), (8, 8, 12, 12), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((4, 6, 20, 22), (16, 6, 7, 9), (2, 1), (1, 0, 1, 1), (2, 2)),
]
WINDOW_ROWS = {3, 4}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_large_conv_is_gemms_and_matches(case, dtype):
    xs, ws, stride, padding, dilation = CASES[case]
    rng = np.random.default_rng(case)
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    fn = lambda x, w: ig.conv2d(x, w, stride=stride, padding=padding, dilation=dilation)  # noqa: E731
    jitted = ig.jit(fn, backend="cpu")
    loops = jitted.lower(x, w).as_text("loops")
    assert "blas.gemm" in loops
    # Window rows multiply by the weight through the gemm's transpose flag, not a copy.
    assert ("transpose_b" in loops) == (case in WINDOW_ROWS)
    got = jitted(x, w)
    expected = conv_reference(x, w, stride, padding, dilation)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol * 10, atol=tol * 10 * np.abs(expected).max())


def test_large_conv_gradients_match_the_interpreter():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 8, 18, 18)).astype(np.float32)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2

    def loss(x, w):
        return ig.sum(ig.tanh(ig.conv2d(x, w, stride=(1, 1), padding=(1, 1, 1, 1))) ** 2)

    grad = ig.value_and_grad(loss, argnums=(0, 1))
    value, (gx, gw) = ig.jit(grad, backend="cpu")(x, w)
    ref_value, (rx, rw) = ig.jit(grad, backend="interp")(x, w)
    np.testing.assert_allclose(value, ref_value, rtol=1e-4)
    np.testing.assert_allclose(gx, rx, rtol=1e-4, atol=1e-4 * np.abs(rx).max())
    np.testing.assert_allclose(gw, rw, rtol=1e-4, atol=1e-4 * np.abs(rw).max())


def test_small_conv_stays_one_generic():
    x = np.ones((1, 3, 8, 8), np.float32)
    w = np.ones((4, 3, 3, 3), np.float32)
    linalg = ig.jit(lambda x, w: ig.conv2d(x, w), backend="cpu").lower(x, w).as_text("linalg")
    assert "tensor.collapse_shape" not in linalg and linalg.count("linalg.generic") == 1
