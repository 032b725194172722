"""The factorization ops' reference loops, which `nn-expand-factorizations`
(irgrad/transforms/nn/nn_expand_factorizations.py) traces wherever LAPACK is not used (the GPU
pipeline, a CPU without LAPACK), as JAX's `lower_fun`: `cholesky_loop` (nn.cholesky),
`trsm_loop` (nn.triangular_solve), `lu_loop` (nn.lu), `qr_loop` (nn.qr), and parallel cyclic
Jacobi for `eigh_raw` (nn.eigh) and `svd_raw` (nn.svd), whose vectors have any sign, as
LAPACK's syevd and gesdd give them. `eigh_post` and `svd_post` then apply those ops' sign
convention and NaN rule, `finite_or_nan` nn.qr's NaN rule.

Why here: they are written on the numpy-style library, not on the tracing core (the house
test's one KNOWN_UPWARD import). The public functions of the sibling modules emit the nn ops
and never call these loops.
"""

from __future__ import annotations

import math

import numpy as np

from irgrad.numpy import basic as np_api
from irgrad.numpy.control_flow import fori_loop
from irgrad.numpy.numerics import all as all_, argmax, isfinite
from irgrad.numpy.reductions import argsort
from irgrad.numpy.shape import take_along_axis
from irgrad.numpy.support import broadcast_to, lift
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.linalg.common import (
    _col, _diagonal, _elem, _eye_like, _iota, _mT, _row, _row_vec, _safe_sqrt, _sort_columns,
    _symmetric_from, _triangle, _where,
)


# Algorithms. Each factorization and triangular solve is one `ig.fori_loop` over the n columns
# (rows for a solve) whose body updates the whole matrix under iota masks (`where(row > j, ...)`)
# or writes one row/column with `nn.dynamic_update_slice`; the IR is the size of one iteration
# whatever n is. Batch dimensions ride along in every op (the loops are written batched, no vmap).
# Cost: Cholesky and LU O(n^2) per column, O(n^3) in all, about twice LAPACK's flops (the masked
# updates touch the whole matrix, not the trailing block); a triangular solve O(n k) per row.
# benchmarks/linalg.py compares them with LAPACK (docs/status.md).


def trsm_loop(a: Tracer, b: Tracer, lower: bool, unit: bool) -> Tracer:
    """Solves A X = B, A (..., n, n) triangular, B (..., n, k) of the same batch shape: forward
    (lower) or back (upper) substitution, one row of X per iteration, the unsolved rows of X zero.
    Only A's triangle is read (with `unit`, not its diagonal either), as LAPACK's trsm."""
    n = a.shape[-1]
    a = _triangle(a, lower, -1 if unit else 0)

    def body(s: Tracer, x: Tracer) -> Tracer:
        i = s if lower else (n - 1) - s
        r = _row(b, i) - np_api.matmul(_row(a, i), x)
        if not unit:
            r = r / _elem(a, i, i)
        return lax.dynamic_update_slice(x, r, [0] * (x.ndim - 2) + [i, 0])

    return fori_loop(0, n, body, full(b.shape, 0, b.dtype))


def cholesky_loop(a: Tracer) -> Tracer:
    """Left-looking Cholesky of a symmetric (..., n, n) a (its lower triangle is read): column j
    of L is (a[:, j] - L L[j, :]^T) / sqrt(that at j), below the diagonal, one matvec per column.
    A batch element that is not positive definite (a pivot <= 0 or NaN) becomes all NaN, as
    jax.numpy.linalg.cholesky."""
    n = a.shape[-1]
    rows = _iota((n, 1), 0)

    def body(j: Tracer, low: Tracer) -> Tracer:
        v = _col(a, j) - np_api.matmul(low, _mT(_row(low, j)))  # (..., n, 1)
        d = np_api.sqrt(lax.dynamic_slice(v, [0] * (v.ndim - 2) + [j, 0], [*v.shape[:-2], 1, 1]))
        column = _where(rows > j, v / d, _where(rows == j, d, full((), 0, a.dtype)))
        return lax.dynamic_update_slice(low, column, [0] * (low.ndim - 2) + [0, j])

    low = fori_loop(0, n, body, full(a.shape, 0, a.dtype))
    ok = np_api.sum(lax.convert(_diagonal(low) > 0, dtypes.int32), axis=-1, keepdims=True) == n
    ok = lax.reshape(ok, (*ok.shape, 1))
    return _where(ok, low, full((), np.nan, a.dtype))


def lu_loop(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Right-looking LU with partial pivoting (LAPACK's getf2) of a square (..., n, n) a. Column
    j: the pivot is the first row >= j of largest |a[i, j]|; rows j and p swap (whole rows, as
    LAPACK); the column below the pivot is divided by it (left as 0 where the pivot is 0, as
    getf2 does, so a singular a gives a zero on U's diagonal) and the trailing block gets the
    rank-1 update. Returns (lu, piv, perm): piv[j] the row swapped with j (scipy's 0-based
    pivots), perm the permutation with (P a)[i] = a[perm[i]] = (L U)[i]."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    rows, cols, vec = _iota((n, 1), 0), _iota((1, n), 1), _iota((n,), 0)
    zero = full((), 0, a.dtype)

    def body(j: Tracer, state: tuple[Tracer, Tracer, Tracer]) -> tuple[Tracer, Tracer, Tracer]:
        m, perm, piv = state
        column = lax.reshape(_col(m, j), (*batch, n))
        magnitude = _where(vec >= j, np_api.abs(column), full((), -1, a.dtype))
        p = lax.reshape(argmax(magnitude, axis=-1), (*batch, 1))  # (..., 1) int32
        p2 = lax.reshape(p, (*batch, 1, 1))
        row_j = _row(m, j)
        row_p = take_along_axis(m, broadcast_to(p2, (*batch, 1, n)), axis=-2)
        m = _where(rows == j, row_p, _where(rows == p2, row_j, m))
        perm_j = lax.dynamic_slice(perm, [0] * len(batch) + [j], [*batch, 1])
        perm_p = take_along_axis(perm, p, axis=-1)
        perm = _where(vec == j, perm_p, _where(vec == p, perm_j, perm))
        piv = lax.dynamic_update_slice(piv, p, [0] * len(batch) + [j])
        pivot = _elem(m, j, j)
        below = _col(m, j)
        safe = _where(pivot == 0, lax.convert(lift(1), a.dtype), pivot)
        low = _where(rows > j, _where(pivot == 0, zero, below / safe), zero)  # (..., n, 1)
        upper_row = _row(m, j)  # (..., 1, n)
        m = _where(rows > j, _where(cols > j, m - low * upper_row, _where(cols == j, low, m)), m)
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
    rows = _iota((m, 1), 0)
    zero = full((), 0, a.dtype)

    def reflect(j: Tracer, state: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        r, us = state
        col = _col(r, j)  # (..., m, 1)
        x = _where(rows >= j, col, zero)
        xj = _elem(r, j, j)
        below = np_api.sum(_where(rows > j, col * col, zero), axis=-2, keepdims=True)
        norm = np_api.sqrt(xj * xj + below)
        beta = _where(xj >= 0, -norm, norm)
        v = x - _where(rows == j, beta, zero)
        vv = np_api.sum(v * v, axis=-2, keepdims=True)
        reflects = below > 0
        u = _where(reflects, v * np_api.sqrt(2.0 / _where(reflects, vv, 1.0)), zero)
        r = r - u * np_api.matmul(_mT(u), r)
        return r, lax.dynamic_update_slice(us, u, [0] * len(batch) + [0, j])

    r, us = fori_loop(0, n, reflect, (a, full(a.shape, 0, a.dtype)))

    def accumulate(s: Tracer, q: Tracer) -> Tracer:
        u = _col(us, (n - 1) - s)
        return q - u * np_api.matmul(_mT(u), q)

    eye = lax.convert(lax.compare("eq", _iota((m, n), 0), _iota((m, n), 1)), a.dtype)
    q = fori_loop(0, n, accumulate, broadcast_to(eye, a.shape))
    r = _triangle(lax.slice(r, [0] * a.ndim, [*batch, n, n], [1] * a.ndim), False)
    return q, r


def finite_or_nan(a: Tracer, *results: Tracer) -> list[Tracer]:
    """`results` per batch element of a (..., m, n), all NaN where a has a NaN or inf (the
    contract of nn.eigh, nn.svd and nn.qr)."""
    ok = all_(isfinite(a), axis=(-2, -1))
    out = []
    for r in results:
        mask = lax.reshape(ok, (*ok.shape, *([1] * (r.ndim - ok.ndim))))
        out.append(_where(mask, r, full((), np.nan, r.dtype)))
    return out


def _sign_fix(x: Tracer) -> Tracer:
    """+1 or -1 per column of x (..., m, k): the sign of each column's first entry of at least
    half the column's largest magnitude (the sign convention of nn.eigh and nn.svd)."""
    mag = np_api.abs(x)
    big = mag >= 0.5 * np_api.max(mag, axis=-2, keepdims=True)
    first = argmax(lax.convert(big, dtypes.int32), axis=-2, keepdims=True)
    pick = take_along_axis(x, first, axis=-2)
    one = full((), 1, x.dtype)
    return lax.reshape(_where(pick < 0, -one, one), (*x.shape[:-2], x.shape[-1]))


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
    idx = _iota((n,), 0)
    lo = idx < partner
    active = (partner != idx) & (apq != 0)
    one = full((), 1, app.dtype)
    zero = full((), 0, app.dtype)
    d_lo, d_hi = _where(lo, app, aqq), _where(lo, aqq, app)
    theta = (d_hi - d_lo) / (2.0 * _where(active, apq, one))
    big = np_api.abs(theta) > 1e100
    safe = _where(big, one, theta)
    t = _where(theta >= 0, one, -one) / (np_api.abs(safe) + np_api.sqrt(safe * safe + 1.0))
    t = _where(active, _where(big, 0.5 / _where(big, theta, one), t), zero)
    c = 1.0 / np_api.sqrt(t * t + 1.0)
    s = _where(lo, t * c, -(t * c))
    eye = lax.compare("eq", _iota((n, n), 0), _iota((n, n), 1))
    hit = lax.reshape(partner, (n, 1)) == _iota((n, n), 1)
    c2, s2 = lax.reshape(c, (*c.shape, 1)), lax.reshape(s, (*s.shape, 1))
    return _where(eye, c2, _where(hit & ~eye, s2, zero))


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
        partner = lax.reshape(lax.dynamic_slice(table, [k % rounds, 0], [1, n]), (n,))
        if one_sided:
            app = np_api.sum(m * m, axis=-2)
            other = take_along_axis(m, broadcast_to(partner, m.shape), axis=-1)  # column p(i) at i
            apq = np_api.sum(m * other, axis=-2)
        else:
            app = _diagonal(m)
            apq = lax.reshape(
                take_along_axis(m, broadcast_to(lax.reshape(partner, (n, 1)), (*batch, n, 1)), axis=-1), (*batch, n)
            )
        aqq = take_along_axis(app, broadcast_to(partner, app.shape), axis=-1)
        j = _rotations(app, aqq, apq, partner)
        if one_sided:
            m = np_api.matmul(m, j)
        else:
            m = np_api.matmul(_mT(j), np_api.matmul(m, j))
            m = 0.5 * (m + _mT(m))
        return m, np_api.matmul(v, j)

    eye = broadcast_to(_eye_like(full((n, n), 0, a.dtype)), (*batch, n, n))
    return fori_loop(0, _sweeps(n) * rounds, body, (a, eye))


def eigh_raw(a: Tracer) -> tuple[Tracer, Tracer]:
    """Eigenvalues ascending and eigenvectors (columns, any signs) of the symmetric (..., n, n)
    matrix whose lower triangle is a's (LAPACK's syevd's contract)."""
    d, v = _jacobi(_symmetric_from(a, True), one_sided=False)
    w = _diagonal(d)
    idx = argsort(w, axis=-1)
    (v,) = _sort_columns(idx, v)
    return take_along_axis(w, idx, axis=-1), v


def eigh_post(a: Tracer, w: Tracer, v: Tracer) -> tuple[Tracer, Tracer]:
    """nn.eigh's contract on top of a raw eigendecomposition: signs fixed, NaN where the lower
    triangle of a is not finite."""
    v = v * _row_vec(_sign_fix(v))
    w, v = finite_or_nan(_triangle(a, True), w, v)
    return w, v


def _svd_tall(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Reduced (u, s, vt) of a (..., m, n) a with m >= n, s descending."""
    av, v = _jacobi(a, one_sided=True)
    s = _safe_sqrt(np_api.sum(av * av, axis=-2))
    idx = argsort(-s, axis=-1)
    s = take_along_axis(s, idx, axis=-1)
    av, v = _sort_columns(idx, av, v)
    q, r = qr_loop(av)
    sign = _where(_diagonal(r) < 0, full((), -1, a.dtype), full((), 1, a.dtype))
    u = q * lax.reshape(sign, (*sign.shape[:-1], 1, sign.shape[-1]))
    return u, s, _mT(v)


def svd_raw(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Reduced (u (..., m, k), s (..., k), vt (..., k, n)), k = min(m, n), any signs: a wide a is
    done as a^T."""
    m, n = a.shape[-2:]
    if m >= n:
        return _svd_tall(a)
    u, s, vt = _svd_tall(_mT(a))
    return _mT(vt), s, _mT(u)


def svd_post(a: Tracer, u: Tracer, s: Tracer, vt: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """nn.svd's contract on top of a raw SVD: u's column signs fixed (vt's rows with them), NaN
    where a is not finite."""
    sign = _sign_fix(u)
    u, vt = u * _row_vec(sign), vt * _mT(_row_vec(sign))
    u, s, vt = finite_or_nan(a, u, s, vt)
    return u, s, vt
