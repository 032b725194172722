"""`ig.linalg`: numpy.linalg and jax.scipy.linalg functions, composites of `nn` ops and loops.

The package face of one module per family, named as scipy.linalg's (`decomp_lu`, not `lu`, so
that `ig.linalg.lu` is the function):

- `norms`: `norm` (vector and matrix norms) and `cond`.
- `triangular`: `solve_triangular`.
- `decomp_cholesky`: `cholesky`, `cho_factor`, `cho_solve`.
- `decomp_lu`: `lu_factor`, `lu`, `lu_solve`, `solve`, `inv`, `det`, `slogdet`, `matrix_power`.
- `decomp_qr`: `qr` (Householder, LAPACK's signs).
- `decomp_eigh`: `eigh`, `eigvalsh` (symmetric).
- `decomp_eig`: `eig`, `eigvals` (general real matrices, complex results; no derivative yet).
- `decomp_svd`: `svd`, `svdvals`, and on them `pinv`, `lstsq` (2-D), `matrix_rank`.
- `common`: the package-private argument checks the others share. The loops
  `nn-expand-factorizations` traces for the factorization ops where LAPACK is not used, and the
  index and mask builders, are the tracing core's (irgrad/tracing/reference_loops.py, matrices.py).

As jax.numpy.linalg / jax.scipy.linalg: float32 and float64 (ints become float32; float16 and
bfloat16 are refused), with leading batch dimensions, and JAX's failure modes (NaN, inf), not
numpy's LinAlgError. Every function's derivative is an analytic `ig.custom_jvp` rule (JAX's),
so reverse mode never tapes a loop at first order (see below).
"""

# Derivatives. Every primitive-like function (the triangular solves `_trsm(lower, unit)`,
# `_cholesky_core`, `_lu_core`, `_solve_core`, `_det_core`, `_slogdet_core`, `_qr_core`,
# `_eigh_core`, `_svd_core`) is an `ig.custom_jvp` with JAX's analytic rule: forward mode runs
# the rule, reverse mode transposes it. Their bodies and rules emit the nn ops directly (a
# custom_jvp body is never differentiated), except that the rules of solve/det/slogdet get the
# factorization from `_lu_core`, so that it stays a rule at second order; the public entry
# points call the custom_jvp functions. A rule's tangent map is masks, matmuls, permutations and
# triangular-solve loops in which the matrix is a primal value, and the transpose of such a loop
# is a reverse loop that reads only that matrix: at first order nothing per iteration is taped
# (no `tensor<n x ...>` copy of a carried block; test_linalg.py checks the IR). Forward mode
# never tapes, so `ig.hessian` (forward over reverse) and Hessian-vector products have no tape
# either. Reverse over reverse (grad of grad) differentiates the first-order transposes, whose
# solve loops then depend on the matrix: those are taped, n copies of the (..., n, k) block of
# each triangular solve (k right-hand sides; n for det, slogdet, inv and cholesky), still correct.

from irgrad.numpy.linalg.decomp_cholesky import cho_factor, cho_solve, cholesky
from irgrad.numpy.linalg.decomp_eig import eig, eigvals
from irgrad.numpy.linalg.decomp_eigh import eigh, eigvalsh
from irgrad.numpy.linalg.decomp_lu import det, inv, lu, lu_factor, lu_solve, matrix_power, slogdet, solve
from irgrad.numpy.linalg.decomp_qr import qr
from irgrad.numpy.linalg.decomp_svd import lstsq, matrix_rank, pinv, svd, svdvals
from irgrad.numpy.linalg.norms import cond, norm
from irgrad.numpy.linalg.triangular import solve_triangular

__all__ = [
    "norm",
    "cholesky",
    "solve_triangular",
    "cho_factor",
    "cho_solve",
    "lu_factor",
    "lu",
    "lu_solve",
    "solve",
    "inv",
    "det",
    "slogdet",
    "matrix_power",
    "qr",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "svd",
    "svdvals",
    "pinv",
    "lstsq",
    "matrix_rank",
    "cond",
]
