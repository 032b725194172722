"""`blas` on numpy arrays: `blas.gemm` as numpy's own matmul (a BLAS call in the element dtype);
the LAPACK routines in place, as the reference implementations of the `nn` ops they serve
(irgrad/backends/interpreter/nn_linalg.py: numpy.linalg's eigh on the symmetric matrix of the
lower triangle, svd with full_matrices=False, qr; NaN for a non-finite input). The vectors of
syevd and gesdd come with the nn ops' sign convention, one of the "any signs" the blas ops
allow; gesdd leaves its scratch A as it was.

The C buffer is written in place, as the op's contract says; with `beta = 0` its old contents
are never read, so a NaN left in an uninitialized buffer cannot leak into the result.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends.interpreter import nn_linalg
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import blas


def gemm_in_place(op: blas.GemmOp, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """`c = alpha * op(a) @ op(b) + beta * c` in `c`'s dtype; with beta = 0, `c` is not read.
    Also the GPU runtime's host and emulator path (irgrad/backends/gpu/cuda_device.py, emulator.py)."""
    a = a.T if op.transpose_a else a
    b = b.T if op.transpose_b else b
    product = np.matmul(a, b)
    alpha, beta = op.alpha_value, op.beta_value
    if alpha != 1.0:
        product = product * c.dtype.type(alpha)
    if beta != 0.0:
        product = product + c * c.dtype.type(beta)
    c[...] = product


@register_impls
class BlasFunctions(InterpreterFunctions):
    @numpy_impl(blas.GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: blas.GemmOp, args: PythonValues):
        gemm_in_place(op, *args)
        return ()

    @numpy_impl(blas.PotrfOp)
    def run_potrf(self, interpreter: Interpreter, op: blas.PotrfOp, args: PythonValues):
        (a,) = args
        a[...] = nn_linalg.cholesky(a)
        return ()

    @numpy_impl(blas.TrsmOp)
    def run_trsm(self, interpreter: Interpreter, op: blas.TrsmOp, args: PythonValues):
        a, b = args
        b[...] = nn_linalg.triangular_solve(a, b, op.lower is not None, op.unit_diagonal is not None)
        return ()

    @numpy_impl(blas.GetrfOp)
    def run_getrf(self, interpreter: Interpreter, op: blas.GetrfOp, args: PythonValues):
        a, pivots, permutation = args
        lu, piv, perm = nn_linalg.lu(a)
        a[...], pivots[...], permutation[...] = lu, piv, perm
        return ()

    @numpy_impl(blas.SyevdOp)
    def run_syevd(self, interpreter: Interpreter, op: blas.SyevdOp, args: PythonValues):
        a, w = args
        w[...], a[...] = nn_linalg.eigh(a)
        return ()

    @numpy_impl(blas.GeevOp)
    def run_geev(self, interpreter: Interpreter, op: blas.GeevOp, args: PythonValues):
        a, w, v = args
        w[...], v[...] = nn_linalg.eig(a)
        return ()

    @numpy_impl(blas.GesddOp)
    def run_gesdd(self, interpreter: Interpreter, op: blas.GesddOp, args: PythonValues):
        a, s, u, vt = args
        u[...], s[...], vt[...] = nn_linalg.svd(a)
        return ()

    @numpy_impl(blas.GeqrfOp)
    def run_geqrf(self, interpreter: Interpreter, op: blas.GeqrfOp, args: PythonValues):
        q, r = args
        q[...], r[...] = nn_linalg.qr(q)
        return ()
