"""The factorization ops' reference loops, which `nn-expand-factorizations`
(irgrad/transforms/nn/nn_expand_factorizations.py) traces wherever LAPACK is not used (the GPU
pipeline, a CPU without LAPACK), as JAX's `lower_fun`: `cholesky_loop` (nn.cholesky),
`trsm_loop` (nn.triangular_solve), `lu_loop` (nn.lu), `qr_loop` (nn.qr), and parallel cyclic
Jacobi for `eigh_raw` (nn.eigh) and `svd_raw` (nn.svd), whose vectors have any sign, as
LAPACK's syevd and gesdd give them. `eigh_post` and `svd_post` then apply those ops' sign
convention and NaN rule, `finite_or_nan` nn.qr's NaN rule.

Why here: a pass builds its reference code on the tracing core, never on the user-facing
library (as JAX's lax sits under jax.numpy), so these are written on irgrad/tracing alone: the
numpy-style functions of elementwise.py, reductions.py, gathers.py, matrices.py, fori_loop
(loops.py) and the bitonic argsort (sorting.py), which the library wraps, so the IR is what the
same code on ig.* gives. ig.linalg's public functions emit the nn ops and never call these.
"""

from __future__ import annotations

import math

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import broadcast_to, lift
from irgrad.tracing.elementwise import (
    add, bitwise_and, bitwise_not, compare, divide, isfinite, multiply, remainder, subtract, where,
)
from irgrad.tracing.gathers import take_along_axis
from irgrad.tracing.loops import fori_loop
from irgrad.tracing.matrices import (
    col, diagonal, elem, eye_like, iota, mT, row, row_vec, safe_sqrt, sort_columns, symmetric_from, triangle,
)
from irgrad.tracing.reductions import all as all_, argmax
from irgrad.tracing.sorting import argsort_last
from irgrad.tracing.tracer import Tracer, full


# Algorithms. Each factorization and triangular solve is one `fori_loop` over the n columns
# (rows for a solve) whose body updates the whole matrix under iota masks (`where(row > j, ...)`)
# or writes one row/column with `nn.dynamic_update_slice`; the IR is the size of one iteration
# whatever n is. Batch dimensions ride along in every op (the loops are written batched, no vmap).
# Cost: Cholesky and LU O(n^2) per column, O(n^3) in all, about twice LAPACK's flops (the masked
# updates touch the whole matrix, not the trailing block); a triangular solve O(n k) per row.
# benchmarks/linalg.py compares them with LAPACK (docs/status.md). The arithmetic is spelled as
# calls (`subtract(x, y)` for `x - y`, operands in the same order): Tracer's operators are the
# library's.


def _neg(x: Tracer) -> Tracer:
    return lax.unary(nn.NegOp, x)


def _abs(x: Tracer) -> Tracer:
    return lax.unary(nn.AbsOp, x)


def _sqrt(x: Tracer) -> Tracer:
    return lax.unary(nn.SqrtOp, x)


def _sum(x: Tracer, axis: int, keepdims: bool = False) -> Tracer:
    """The sum over one (negative) axis of a non-bool x."""
    return lax.reduce(nn.ReduceSumOp, x, [x.ndim + axis], keepdims)


def _max(x: Tracer, axis: int, keepdims: bool = False) -> Tracer:
    """The maximum over one (negative, non-empty) axis."""
    return lax.reduce(nn.ReduceMaxOp, x, [x.ndim + axis], keepdims)


def _matmul(x: Tracer, y: Tracer) -> Tracer:
    """x @ y for operands of one dtype and one batch shape (all the loops multiply)."""
    assert x.shape[:-2] == y.shape[:-2] and x.dtype == y.dtype, (x, y)
    return lax.matmul(x, y)


def trsm_loop(a: Tracer, b: Tracer, lower: bool, unit: bool) -> Tracer:
    """Solves A X = B, A (..., n, n) triangular, B (..., n, k) of the same batch shape: forward
    (lower) or back (upper) substitution, one row of X per iteration, the unsolved rows of X zero.
    Only A's triangle is read (with `unit`, not its diagonal either), as LAPACK's trsm."""
    n = a.shape[-1]
    a = triangle(a, lower, -1 if unit else 0)

    def body(s: Tracer, x: Tracer) -> Tracer:
        i = s if lower else subtract(n - 1, s)
        r = subtract(row(b, i), _matmul(row(a, i), x))
        if not unit:
            r = divide(r, elem(a, i, i))
        return lax.dynamic_update_slice(x, r, [0] * (x.ndim - 2) + [i, 0])

    return fori_loop(0, n, body, full(b.shape, 0, b.dtype))


def cholesky_loop(a: Tracer) -> Tracer:
    """Left-looking Cholesky of a symmetric (..., n, n) a (its lower triangle is read): column j
    of L is (a[:, j] - L L[j, :]^T) / sqrt(that at j), below the diagonal, one matvec per column.
    A batch element that is not positive definite (a pivot <= 0 or NaN) becomes all NaN, as
    jax.numpy.linalg.cholesky."""
    n = a.shape[-1]
    rows = iota((n, 1), 0)

    def body(j: Tracer, low: Tracer) -> Tracer:
        v = subtract(col(a, j), _matmul(low, mT(row(low, j))))  # (..., n, 1)
        d = _sqrt(lax.dynamic_slice(v, [0] * (v.ndim - 2) + [j, 0], [*v.shape[:-2], 1, 1]))
        column = where(compare("gt", rows, j), divide(v, d), where(compare("eq", rows, j), d, full((), 0, a.dtype)))
        return lax.dynamic_update_slice(low, column, [0] * (low.ndim - 2) + [0, j])

    low = fori_loop(0, n, body, full(a.shape, 0, a.dtype))
    ok = compare("eq", _sum(lax.convert(compare("gt", diagonal(low), 0), dtypes.int32), -1, keepdims=True), n)
    ok = lax.reshape(ok, (*ok.shape, 1))
    return where(ok, low, full((), np.nan, a.dtype))


def lu_loop(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Right-looking LU with partial pivoting (LAPACK's getf2) of a square (..., n, n) a. Column
    j: the pivot is the first row >= j of largest |a[i, j]|; rows j and p swap (whole rows, as
    LAPACK); the column below the pivot is divided by it (left as 0 where the pivot is 0, as
    getf2 does, so a singular a gives a zero on U's diagonal) and the trailing block gets the
    rank-1 update. Returns (lu, piv, perm): piv[j] the row swapped with j (scipy's 0-based
    pivots), perm the permutation with (P a)[i] = a[perm[i]] = (L U)[i]."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    rows, cols, vec = iota((n, 1), 0), iota((1, n), 1), iota((n,), 0)
    zero = full((), 0, a.dtype)

    def body(j: Tracer, state: tuple[Tracer, Tracer, Tracer]) -> tuple[Tracer, Tracer, Tracer]:
        m, perm, piv = state
        column = lax.reshape(col(m, j), (*batch, n))
        magnitude = where(compare("ge", vec, j), _abs(column), full((), -1, a.dtype))
        p = lax.reshape(argmax(magnitude, axis=-1), (*batch, 1))  # (..., 1) int32
        p2 = lax.reshape(p, (*batch, 1, 1))
        row_j = row(m, j)
        row_p = take_along_axis(m, broadcast_to(p2, (*batch, 1, n)), axis=-2)
        m = where(compare("eq", rows, j), row_p, where(compare("eq", rows, p2), row_j, m))
        perm_j = lax.dynamic_slice(perm, [0] * len(batch) + [j], [*batch, 1])
        perm_p = take_along_axis(perm, p, axis=-1)
        perm = where(compare("eq", vec, j), perm_p, where(compare("eq", vec, p), perm_j, perm))
        piv = lax.dynamic_update_slice(piv, p, [0] * len(batch) + [j])
        pivot = elem(m, j, j)
        below = col(m, j)
        safe = where(compare("eq", pivot, 0), lax.convert(lift(1), a.dtype), pivot)
        low = where(compare("gt", rows, j), where(compare("eq", pivot, 0), zero, divide(below, safe)), zero)
        upper_row = row(m, j)  # (..., 1, n); low is (..., n, 1)
        m = where(
            compare("gt", rows, j),
            where(compare("gt", cols, j), subtract(m, multiply(low, upper_row)), where(compare("eq", cols, j), low, m)),
            m,
        )
        return m, perm, piv

    perm0 = broadcast_to(vec, (*batch, n))
    piv0 = full((*batch, n), 0, dtypes.int32)
    m, perm, piv = fori_loop(0, n, body, (a, perm0, piv0))
    return m, piv, perm


def qr_loop(a: Tracer) -> tuple[Tracer, Tracer]:
    """Householder QR of a (..., m, n) a with m >= n (LAPACK's geqrf + orgqr): reduced (q, r).

    Column j: the reflector H = I - u u^T (|u|^2 = 2) maps a's column j below row j - 1 onto
    beta e_j with beta = -sign(a[j, j]) |x| (sign(0) = +, as dlarfg), so R's diagonal has LAPACK's
    signs; where the column is already zero below the diagonal there is no reflection (u = 0).
    The u's are kept in the columns of a (..., m, n) matrix; a second loop applies them from the
    right end to the first n columns of the identity (O(mn) per step, no m x m matrix)."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    rows = iota((m, 1), 0)
    zero = full((), 0, a.dtype)

    def reflect(j: Tracer, state: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        r, us = state
        c = col(r, j)  # (..., m, 1)
        x = where(compare("ge", rows, j), c, zero)
        xj = elem(r, j, j)
        below = _sum(where(compare("gt", rows, j), multiply(c, c), zero), -2, keepdims=True)
        norm = _sqrt(add(multiply(xj, xj), below))
        beta = where(compare("ge", xj, 0), _neg(norm), norm)
        v = subtract(x, where(compare("eq", rows, j), beta, zero))
        vv = _sum(multiply(v, v), -2, keepdims=True)
        reflects = compare("gt", below, 0)
        u = where(reflects, multiply(v, _sqrt(divide(2.0, where(reflects, vv, 1.0)))), zero)
        r = subtract(r, multiply(u, _matmul(mT(u), r)))
        return r, lax.dynamic_update_slice(us, u, [0] * len(batch) + [0, j])

    r, us = fori_loop(0, n, reflect, (a, full(a.shape, 0, a.dtype)))

    def accumulate(s: Tracer, q: Tracer) -> Tracer:
        u = col(us, subtract(n - 1, s))
        return subtract(q, multiply(u, _matmul(mT(u), q)))

    eye = lax.convert(lax.compare("eq", iota((m, n), 0), iota((m, n), 1)), a.dtype)
    q = fori_loop(0, n, accumulate, broadcast_to(eye, a.shape))
    r = triangle(lax.slice(r, [0] * a.ndim, [*batch, n, n], [1] * a.ndim), False)
    return q, r


def finite_or_nan(a: Tracer, *results: Tracer) -> list[Tracer]:
    """`results` per batch element of a (..., m, n), all NaN where a has a NaN or inf (the
    contract of nn.eigh, nn.svd and nn.qr)."""
    ok = all_(isfinite(a), axis=(-2, -1))
    out = []
    for r in results:
        mask = lax.reshape(ok, (*ok.shape, *([1] * (r.ndim - ok.ndim))))
        out.append(where(mask, r, full((), np.nan, r.dtype)))
    return out


def _sign_fix(x: Tracer) -> Tracer:
    """+1 or -1 per column of x (..., m, k): the sign of each column's first entry of at least
    half the column's largest magnitude (the sign convention of nn.eigh and nn.svd)."""
    mag = _abs(x)
    big = compare("ge", mag, multiply(0.5, _max(mag, -2, keepdims=True)))
    first = argmax(lax.convert(big, dtypes.int32), axis=-2, keepdims=True)
    pick = take_along_axis(x, first, axis=-2)
    one = full((), 1, x.dtype)
    return lax.reshape(where(compare("lt", pick, 0), _neg(one), one), (*x.shape[:-2], x.shape[-1]))


# --- Jacobi eigenvalues and singular values ----------------------------------------------------
#
# Both are parallel cyclic Jacobi (Brent-Luk round-robin ordering): a sweep is n - 1 rounds (n
# rounded up to even), each round pairs every index with another one (an index left over for an
# odd n sits out) and applies all n/2 disjoint plane rotations at once as one orthogonal matrix J
# built under masks from the round's partner table: J[i, i] = c_i, J[i, partner(i)] = s_i. eigh
# updates A <- J^T A J (then symmetrizes), V <- V J; svd is one-sided (Hestenes): A <- A J, V <- V J,
# each rotation chosen from the 2 x 2 Gram block of the two columns, so A's columns become
# orthogonal, their norms the singular values and V the right singular vectors. The whole thing
# is one `fori_loop` of sweeps * (n - 1) rounds, O(n^3) per round (a matmul); the sweep count is
# fixed, `_sweeps(n)`: Jacobi converges quadratically and 10 sweeps reach float64 roundoff far
# beyond the sizes here. The results are sorted (eigh ascending, svd descending). svd's U is the
# Householder Q of A V (columns sorted, sign-fixed by R's diagonal), so U stays orthonormal when A
# is rank deficient (the columns of zero singular values complete the basis).


def _sweeps(n: int) -> int:
    return max(10, 2 * math.ceil(math.log2(max(n, 2))))


def _round_robin(n: int) -> np.ndarray:
    """(rounds, n) int32: partner[r, i] is the index paired with i in round r (i itself if i sits
    out, for an odd n); every pair meets once in the n - 1 (n even) or n (n odd) rounds."""
    big = n + (n % 2)
    rounds = max(big - 1, 1)
    table = np.tile(np.arange(n, dtype=np.int32), (rounds, 1))
    for r in range(big - 1):
        pairs = [(big - 1, r)] + [((r + k) % (big - 1), (r - k) % (big - 1)) for k in range(1, big // 2)]
        for p, q in pairs:
            if p < n and q < n:
                table[r, p], table[r, q] = q, p
    return table


def _rotations(app: Tracer, aqq: Tracer, apq: Tracer, partner: Tracer) -> Tracer:
    """The round's rotation J (..., n, n) from, per index i with partner p(i): app = M[i, i],
    aqq = M[p, p], apq = M[i, p] of the symmetric M (A for eigh, A^T A for svd), all (..., n).
    The angle zeroes M[i, p] in J^T M J (Rutishauser's formula, the small angle); the pair's lower
    index decides the sign convention so that both ends build the same rotation."""
    n = partner.shape[-1]
    idx = iota((n,), 0)
    lo = compare("lt", idx, partner)
    active = bitwise_and(compare("ne", partner, idx), compare("ne", apq, 0))
    one = full((), 1, app.dtype)
    zero = full((), 0, app.dtype)
    d_lo, d_hi = where(lo, app, aqq), where(lo, aqq, app)
    theta = divide(subtract(d_hi, d_lo), multiply(2.0, where(active, apq, one)))
    big = compare("gt", _abs(theta), 1e100)
    safe = where(big, one, theta)
    t = divide(where(compare("ge", theta, 0), one, _neg(one)), add(_abs(safe), _sqrt(add(multiply(safe, safe), 1.0))))
    t = where(active, where(big, divide(0.5, where(big, theta, one)), t), zero)
    c = divide(1.0, _sqrt(add(multiply(t, t), 1.0)))
    s = where(lo, multiply(t, c), _neg(multiply(t, c)))
    eye = lax.compare("eq", iota((n, n), 0), iota((n, n), 1))
    hit = compare("eq", lax.reshape(partner, (n, 1)), iota((n, n), 1))
    c2, s2 = lax.reshape(c, (*c.shape, 1)), lax.reshape(s, (*s.shape, 1))
    return where(eye, c2, where(bitwise_and(hit, bitwise_not(eye)), s2, zero))


def _jacobi(a: Tracer, one_sided: bool) -> tuple[Tracer, Tracer]:
    """(A', V) after the fixed sweeps: A' = V^T A V (nearly diagonal) for eigh, A' = A V (orthogonal
    columns) for the one-sided svd (a (..., m, n), m >= n)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    table_np = _round_robin(n)
    rounds = table_np.shape[0]
    table = lift(table_np)

    def body(k: Tracer, state: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        m, v = state
        partner = lax.reshape(lax.dynamic_slice(table, [remainder(k, rounds), 0], [1, n]), (n,))
        if one_sided:
            app = _sum(multiply(m, m), -2)
            other = take_along_axis(m, broadcast_to(partner, m.shape), axis=-1)  # column p(i) at i
            apq = _sum(multiply(m, other), -2)
        else:
            app = diagonal(m)
            apq = lax.reshape(
                take_along_axis(m, broadcast_to(lax.reshape(partner, (n, 1)), (*batch, n, 1)), axis=-1), (*batch, n)
            )
        aqq = take_along_axis(app, broadcast_to(partner, app.shape), axis=-1)
        j = _rotations(app, aqq, apq, partner)
        if one_sided:
            m = _matmul(m, j)
        else:
            m = _matmul(mT(j), _matmul(m, j))
            m = multiply(0.5, add(m, mT(m)))
        return m, _matmul(v, j)

    eye = broadcast_to(eye_like(full((n, n), 0, a.dtype)), (*batch, n, n))
    return fori_loop(0, _sweeps(n) * rounds, body, (a, eye))


def eigh_raw(a: Tracer) -> tuple[Tracer, Tracer]:
    """Eigenvalues ascending and eigenvectors (columns, any signs) of the symmetric (..., n, n)
    matrix whose lower triangle is a's (LAPACK's syevd's contract)."""
    d, v = _jacobi(symmetric_from(a, True), one_sided=False)
    w = diagonal(d)
    idx = argsort_last(w)
    (v,) = sort_columns(idx, v)
    return take_along_axis(w, idx, axis=-1), v


def eigh_post(a: Tracer, w: Tracer, v: Tracer) -> tuple[Tracer, Tracer]:
    """nn.eigh's contract on top of a raw eigendecomposition: signs fixed, NaN where the lower
    triangle of a is not finite."""
    v = multiply(v, row_vec(_sign_fix(v)))
    w, v = finite_or_nan(triangle(a, True), w, v)
    return w, v


def _svd_tall(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Reduced (u, s, vt) of a (..., m, n) a with m >= n, s descending."""
    av, v = _jacobi(a, one_sided=True)
    s = safe_sqrt(_sum(multiply(av, av), -2))
    idx = argsort_last(_neg(s))
    s = take_along_axis(s, idx, axis=-1)
    av, v = sort_columns(idx, av, v)
    q, r = qr_loop(av)
    sign = where(compare("lt", diagonal(r), 0), full((), -1, a.dtype), full((), 1, a.dtype))
    u = multiply(q, lax.reshape(sign, (*sign.shape[:-1], 1, sign.shape[-1])))
    return u, s, mT(v)


def svd_raw(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Reduced (u (..., m, k), s (..., k), vt (..., k, n)), k = min(m, n), any signs: a wide a is
    done as a^T."""
    m, n = a.shape[-2:]
    if m >= n:
        return _svd_tall(a)
    u, s, vt = _svd_tall(mT(a))
    return mT(vt), s, mT(u)


def svd_post(a: Tracer, u: Tracer, s: Tracer, vt: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """nn.svd's contract on top of a raw SVD: u's column signs fixed (vt's rows with them), NaN
    where a is not finite."""
    sign = _sign_fix(u)
    u, vt = multiply(u, row_vec(sign)), multiply(vt, mT(row_vec(sign)))
    u, s, vt = finite_or_nan(a, u, s, vt)
    return u, s, vt
