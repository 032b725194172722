"""Comparisons the complex-function tests share: values of one dtype and shape within a
tolerance, and values with the sign of every zero part (the branch-cut tests)."""

from __future__ import annotations

import numpy as np


def assert_complex_close(got, want, tol: float) -> None:
    """Same dtype and shape, values within `tol` relative (and tol * 1e-3 absolute)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-3)


def assert_same_signed_values(got, want, rtol: float) -> None:
    """Equal values within `rtol` (NaN where want's is), and the sign of every zero part too."""
    for part in (np.real, np.imag):
        g, w = part(np.asarray(got)), part(want)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0)
        zeros = w == 0
        assert (np.signbit(g[zeros]) == np.signbit(w[zeros])).all(), (g, w)
