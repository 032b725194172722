"""Rules for dense linear algebra: nn.cholesky, nn.triangular_solve, nn.lu, nn.eigh, nn.svd, nn.qr, and
nn.eig's batching (its derivative is not supported yet: JAX's _eig_jvp_rule, complex, is to come).

Every rule is written with ordinary nn ops (the factorizations' own solves included), so derived code
is differentiable again (higher order) and batches like any other. Triangles are masks: nn.iota of the
row and column numbers, nn.compare, nn.select (never a multiplication, so an inf/NaN outside a triangle
does not leak in). M below is the triangle an op reads: strictly so with `unit_diagonal`.

The rules follow the published ones: triangular_solve and cholesky (Murray 2016), lu, eigh and the
forward rules of svd and qr as JAX writes them, the reverse rules of svd and qr as PyTorch's
`svd_backward` and `linalg_qr_backward` (real). The lu rule gives the integer results (pivots,
permutation) no derivative; row permutations are a gather (and its transpose a scatter_add).

For eigh and svd the products with F (1 / (w_j - w_i), inf for a repeated eigenvalue) and the divisions
by E and s are strong (builder.py's strong_mul/strong_div): a zero (co)tangent stays zero where the factor
is inf, so using only w or s gives finite derivatives, as JAX's and PyTorch's.

Batching: the ops take leading batch dimensions, and a batched value has its batch at dimension 0,
so the op applies to the batched operands as they are (an unbatched operand of triangular_solve is
broadcast to the batch first).
The formulas: docs/autodiff.md, "irgrad/autodiff/rules/linalg.py: the formulas".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import TensorType, i32
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, materialize
from irgrad.autodiff.builder import RuleBuilder, element_type, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, not_supported_yet, vjp_rule
from irgrad.dialects import nn

T = SSAValue | None


# ---------------------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------------------


def _offset(b: RuleBuilder, shape: Sequence[int]) -> SSAValue:
    """column - row (i32) over the last two dimensions of `shape`."""
    t = TensorType(i32, list(shape))
    rank = len(shape)
    columns = b.value(nn.IotaOp(rank - 1, t))
    rows = b.value(nn.IotaOp(rank - 2, t))
    return b.value(nn.SubOp(columns, rows))


def _band(b: RuleBuilder, shape: Sequence[int], direction: str, k: int) -> SSAValue:
    """The i1 mask `column - row <direction> k` over the last two dimensions."""
    offset = _offset(b, shape)
    return b.compare(direction, offset, b.full(k, offset.type))


def tril(b: RuleBuilder, x: SSAValue, k: int = 0) -> SSAValue:
    """x with the entries above diagonal k zeroed (numpy's tril over the last two dimensions)."""
    return cast(SSAValue, b.select(_band(b, shape_of(x), "le", k), x, None))


def triu(b: RuleBuilder, x: SSAValue, k: int = 0) -> SSAValue:
    """x with the entries below diagonal k zeroed (numpy's triu over the last two dimensions)."""
    return cast(SSAValue, b.select(_band(b, shape_of(x), "ge", k), x, None))


def triangle(b: RuleBuilder, x: SSAValue, lower: bool, unit: bool) -> SSAValue:
    """The part of x a triangular solve reads: its lower (else upper) triangle, strictly with `unit`."""
    k = 1 if unit else 0
    return tril(b, x, -k) if lower else triu(b, x, k)


def phi(b: RuleBuilder, x: SSAValue) -> SSAValue:
    """x's strict lower triangle plus half its diagonal (zero above)."""
    shape = shape_of(x)
    half = b.select(_band(b, shape, "eq", 0), b.scale(x, 0.5), None)
    return cast(SSAValue, b.select(_band(b, shape, "lt", 0), x, half))


def solve(b: RuleBuilder, a: SSAValue, rhs: SSAValue, lower: bool, unit: bool = False) -> SSAValue:
    """A^{-1} rhs (nn.triangular_solve), reading A's `lower` (else upper) triangle."""
    return b.value(nn.TriangularSolveOp(a, rhs, lower=lower, unit_diagonal=unit))


def solve_right(b: RuleBuilder, a: SSAValue, rhs: SSAValue, lower: bool, unit: bool = False) -> SSAValue:
    """rhs A^{-1} = (A^{-T} rhs^T)^T for A's `lower` (else upper) triangle: A^T's triangle is the other."""
    return b.swap_last(solve(b, b.swap_last(a), b.swap_last(rhs), not lower, unit))


def _row_indices(b: RuleBuilder, perm: SSAValue) -> SSAValue:
    """perm (..., n) as row numbers of the (..., n, m) matrices flattened to (B*n, m): perm + batch * n."""
    shape = shape_of(perm)
    n = shape[-1]
    flat = b.reshape(perm, [int(np.prod(shape, dtype=np.int64))])
    if len(shape) == 1:
        return flat
    count = int(np.prod(shape[:-1], dtype=np.int64))
    offsets = np.repeat(np.arange(count, dtype=np.int64) * n, n)
    return b.value(nn.AddOp(flat, b.constant(offsets, element_type(perm))))


def permute_rows(b: RuleBuilder, x: SSAValue, perm: SSAValue) -> SSAValue:
    """Row i of the result is row perm[i] of x, per batch element: P x."""
    shape = shape_of(x)
    rows = b.reshape(x, [int(np.prod(shape[:-1], dtype=np.int64)), shape[-1]])
    gathered = b.gather(rows, _row_indices(b, perm), 0)
    return b.reshape(gathered, list(shape))


def unpermute_rows(b: RuleBuilder, g: SSAValue, perm: SSAValue) -> SSAValue:
    """Row perm[i] of the result is row i of g, per batch element: P^T g (the transpose of permute_rows)."""
    shape = shape_of(g)
    flat_shape = [int(np.prod(shape[:-1], dtype=np.int64)), shape[-1]]
    rows = b.reshape(g, flat_shape)
    zeros = b.zeros(TensorType(element_type(g), flat_shape))
    scattered = b.scatter_add(zeros, _row_indices(b, perm), rows, 0)
    return b.reshape(scattered, list(shape))


# ---------------------------------------------------------------------------------------------------------------
# triangular_solve
# ---------------------------------------------------------------------------------------------------------------


def _flags(op: Operation) -> tuple[bool, bool]:
    solve_op = cast(nn.TriangularSolveOp, op)
    return solve_op.is_lower, solve_op.is_unit


@vjp_rule(nn.TriangularSolveOp)
def _triangular_solve_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    a, _ = op.operands
    x = op.results[0]
    lower, unit = _flags(op)
    if not (b.needs(0) or b.needs(1)):
        return [None, None]
    ct_b = solve(b, b.swap_last(a), ct, not lower, unit)  # A^{-T} X̄
    ct_a = None
    if b.needs(0):
        ct_a = b.neg(triangle(b, b.matmul(ct_b, b.swap_last(x)), lower, unit))
    return [ct_a, ct_b if b.needs(1) else None]


@jvp_rule(nn.TriangularSolveOp)
def _triangular_solve_jvp(b: RuleBuilder, op: Operation, ta: T, tb: T) -> Tangent:
    a, _ = op.operands
    x = op.results[0]
    lower, unit = _flags(op)
    moved = b.matmul(triangle(b, ta, lower, unit), x) if ta is not None else None
    rhs = b.sub(tb, moved)
    return solve(b, a, rhs, lower, unit) if rhs is not None else None


@batch_rule(nn.TriangularSolveOp)
def _triangular_solve_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> Batched:
    a, rhs = materialize(b, args, is_batched)
    lower, unit = _flags(op)
    return solve(b, a, rhs, lower, unit), True


# ---------------------------------------------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.CholeskyOp)
def _cholesky_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    if not b.needs(0):
        return [None]
    low = op.results[0]
    low_t = b.swap_last(low)
    middle = phi(b, b.matmul(low_t, ct))  # Φ(L^T L̄)
    left = solve(b, low_t, middle, False)  # L^{-T} Φ(L^T L̄)
    ct_s = solve_right(b, low, left, True)  # ... L^{-1}
    return [b.add(tril(b, ct_s), tril(b, b.swap_last(ct_s), -1))]


@jvp_rule(nn.CholeskyOp)
def _cholesky_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    if t is None:
        return None
    low = op.results[0]
    ts = cast(SSAValue, b.add(tril(b, t), b.swap_last(tril(b, t, -1))))  # the symmetric tangent
    left = solve(b, low, ts, True)  # L^{-1} dS
    middle = solve(b, low, b.swap_last(left), True)  # L^{-1} dS L^{-T} (dS is symmetric)
    return b.matmul(low, phi(b, middle))


@batch_rule(nn.CholeskyOp)
def _cholesky_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    return b.value(nn.CholeskyOp(args[0])), True


# ---------------------------------------------------------------------------------------------------------------
# lu
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.LUOp)
def _lu_vjp(b: RuleBuilder, op: Operation, ct: T, ct_pivots: T = None, ct_permutation: T = None) -> Cotangents:
    if ct is None or not b.needs(0):
        return [None]
    packed, _, perm = op.results
    upper = triu(b, packed)
    # L^T L̄ with L = tril(packed, -1) + I: tril(packed, -1)^T L̄ + L̄.
    ct_low = tril(b, ct, -1)
    lt_ct = cast(SSAValue, b.add(b.matmul(b.swap_last(tril(b, packed, -1)), ct_low), ct_low))
    inner = b.add(tril(b, lt_ct, -1), triu(b, b.matmul(triu(b, ct), b.swap_last(upper))))
    left = solve(b, b.swap_last(packed), cast(SSAValue, inner), False, True)  # L^{-T} (...)
    g = solve_right(b, b.swap_last(packed), left, True)  # ... U^{-T} (U^T is packed^T's lower triangle)
    return [unpermute_rows(b, g, perm)]


@jvp_rule(nn.LUOp)
def _lu_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    if t is None:
        return [None, None, None]
    packed, _, perm = op.results
    left = solve(b, packed, permute_rows(b, t, perm), True, True)  # L^{-1} P dA
    x = solve_right(b, packed, left, False)  # ... U^{-1}
    strict = tril(b, x, -1)
    # L tril(X, -1) with L = tril(packed, -1) + I, and triu(X) U.
    dl = b.add(b.matmul(tril(b, packed, -1), strict), strict)
    du = b.matmul(triu(b, x), triu(b, packed))
    return [b.add(dl, du), None, None]


@batch_rule(nn.LUOp)
def _lu_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> list[Batched]:
    factored = b.emit(nn.LUOp(args[0]))
    return [(result, True) for result in factored.results]


# ---------------------------------------------------------------------------------------------------------------
# Helpers for the spectral decompositions: diagonals, and vectors spread along rows or columns
# ---------------------------------------------------------------------------------------------------------------


def diagonal(b: RuleBuilder, x: SSAValue) -> SSAValue:
    """The diagonal (..., n) of the square matrices x (..., n, n): the off-diagonal entries selected
    away (never multiplied by a mask), then summed along the rows."""
    masked = cast(SSAValue, b.select(_band(b, shape_of(x), "eq", 0), x, None))
    return b.reduce_sum(masked, [len(shape_of(x)) - 1])


def across_columns(b: RuleBuilder, v: SSAValue, rows: int) -> SSAValue:
    """v (..., k) as the matrices (..., rows, k) whose entry (i, j) is v_j (v[..., None, :])."""
    shape = shape_of(v)
    rank = len(shape) + 1
    return b.broadcast(v, [*shape[:-1], rows, shape[-1]], [*range(rank - 2), rank - 1])


def down_rows(b: RuleBuilder, v: SSAValue, columns: int) -> SSAValue:
    """v (..., k) as the matrices (..., k, columns) whose entry (i, j) is v_i (v[..., :, None])."""
    shape = shape_of(v)
    rank = len(shape) + 1
    return b.broadcast(v, [*shape, columns], list(range(rank - 1)))


def diag_embed(b: RuleBuilder, v: SSAValue) -> SSAValue:
    """The diagonal matrices (..., k, k) with v (..., k) on their diagonal."""
    spread = down_rows(b, v, shape_of(v)[-1])
    return cast(SSAValue, b.select(_band(b, shape_of(spread), "eq", 0), spread, None))


def _off_diagonal_inverse(b: RuleBuilder, diffs: SSAValue) -> SSAValue:
    """1 / diffs off the diagonal, 0 on it (the diagonal of `diffs` is never divided by)."""
    eye = _band(b, shape_of(diffs), "eq", 0)
    safe = cast(SSAValue, b.select(eye, b.full_like(diffs, 1.0), diffs))
    return cast(SSAValue, b.select(eye, None, b.div(b.full_like(diffs, 1.0), safe)))


def _gaps(b: RuleBuilder, w: SSAValue) -> SSAValue:
    """F (..., n, n) with F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    n = shape_of(w)[-1]
    return _off_diagonal_inverse(b, cast(SSAValue, b.sub(across_columns(b, w, n), down_rows(b, w, n))))


def _square_gaps(b: RuleBuilder, s: SSAValue) -> SSAValue:
    """s_j^2 - s_i^2 (..., k, k), 0 on the diagonal."""
    k = shape_of(s)[-1]
    squares = cast(SSAValue, b.mul(s, s))
    return cast(SSAValue, b.sub(across_columns(b, squares, k), down_rows(b, squares, k)))


def _skew(b: RuleBuilder, x: SSAValue) -> SSAValue:
    return cast(SSAValue, b.sub(x, b.swap_last(x)))


# ---------------------------------------------------------------------------------------------------------------
# eigh
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.EighOp)
def _eigh_vjp(b: RuleBuilder, op: Operation, ct_w: T, ct_v: T = None) -> Cotangents:
    if (ct_w is None and ct_v is None) or not b.needs(0):
        return [None]
    w, v = op.results
    v_t = b.swap_last(v)
    middle = diag_embed(b, ct_w) if ct_w is not None else None
    if ct_v is not None:
        middle = b.add(middle, b.strong_mul(b.matmul(v_t, ct_v), _gaps(b, w)))  # diag(w̄) + F∘(V^T V̄)
    ct_s = b.matmul(v, b.matmul(cast(SSAValue, middle), v_t))
    return [b.add(tril(b, ct_s), tril(b, b.swap_last(ct_s), -1))]


@jvp_rule(nn.EighOp)
def _eigh_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    if t is None:
        return [None, None]
    w, v = op.results
    ts = cast(SSAValue, b.add(tril(b, t), b.swap_last(tril(b, t, -1))))  # the symmetric tangent
    x = b.matmul(b.swap_last(v), b.matmul(ts, v))  # V^T dS V
    dw = diagonal(b, x) if b.result_needed(0) else None
    dv = b.matmul(v, b.strong_mul(x, _gaps(b, w))) if b.result_needed(1) else None
    return [dw, dv]


@batch_rule(nn.EighOp)
def _eigh_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> list[Batched]:
    return [(result, True) for result in b.emit(nn.EighOp(args[0])).results]


# ---------------------------------------------------------------------------------------------------------------
# eig
# ---------------------------------------------------------------------------------------------------------------


not_supported_yet(
    "the derivative of eig/eigvals (non-symmetric matrices) is not implemented yet (JAX's _eig_jvp_rule); "
    "for a symmetric matrix use ig.linalg.eigh, which has one",
    nn.EigOp,
)


@batch_rule(nn.EigOp)
def _eig_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> list[Batched]:
    return [(result, True) for result in b.emit(nn.EigOp(args[0])).results]


# ---------------------------------------------------------------------------------------------------------------
# svd
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.SvdOp)
def _svd_vjp(b: RuleBuilder, op: Operation, ct_u: T, ct_s: T = None, ct_vt: T = None) -> Cotangents:
    if (ct_u is None and ct_s is None and ct_vt is None) or not b.needs(0):
        return [None]
    u, s, vt = op.results
    m, n = shape_of(op.operands[0])[-2:]
    k = shape_of(s)[-1]
    v = b.swap_last(vt)
    # J = (skew(U^T Ū) S + S skew(V^T V̄)) / E + diag(s̄), E_ij = s_j^2 - s_i^2 (1 on the diagonal).
    j: SSAValue | None = None
    if ct_u is not None:
        j = b.mul(_skew(b, b.matmul(b.swap_last(u), ct_u)), across_columns(b, s, k))
    if ct_vt is not None:
        j = b.add(j, b.mul(down_rows(b, s, k), _skew(b, b.matmul(vt, b.swap_last(ct_vt)))))  # V^T V̄ = vt vt̄^T
    if j is not None:
        gaps = _square_gaps(b, s)
        eye = _band(b, shape_of(gaps), "eq", 0)
        j = b.strong_div(j, cast(SSAValue, b.select(eye, b.full_like(gaps, 1.0), gaps)))
    if ct_s is not None:
        j = b.add(j, diag_embed(b, ct_s))
    assert j is not None
    if m > k and ct_u is not None:
        # (U J + (I - U U^T) Ū S^{-1}) V^T
        scaled = b.strong_div(ct_u, across_columns(b, s, m))  # Ū S^{-1}
        left = b.sub(b.add(b.matmul(u, j), scaled), b.matmul(u, b.matmul(b.swap_last(u), scaled)))
        return [b.matmul(cast(SSAValue, left), vt)]
    if n > k and ct_vt is not None:
        # U (J V^T + S^{-1} V̄^T (I - V V^T)), V̄^T = vt̄
        scaled = b.strong_div(ct_vt, down_rows(b, s, n))  # S^{-1} V̄^T
        right = b.sub(b.add(b.matmul(j, vt), scaled), b.matmul(b.matmul(scaled, v), vt))
        return [b.matmul(u, cast(SSAValue, right))]
    return [b.matmul(u, b.matmul(j, vt)) if m >= n else b.matmul(b.matmul(u, j), vt)]


@jvp_rule(nn.SvdOp)
def _svd_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    if t is None:
        return [None, None, None]
    u, s, vt = op.results
    m, n = shape_of(op.operands[0])[-2:]
    k = shape_of(s)[-1]
    v = b.swap_last(vt)
    u_t = b.swap_last(u)
    t_v = b.matmul(t, v)  # dA V
    dp = b.matmul(u_t, t_v)  # dP = U^T dA V
    ds = diagonal(b, dp) if b.result_needed(1) else None
    du = dvt = None
    if b.result_needed(0) or b.result_needed(2):
        f = _off_diagonal_inverse(b, _square_gaps(b, s))
        if b.result_needed(0):
            dps = cast(SSAValue, b.mul(dp, across_columns(b, s, k)))  # dP S
            du = b.matmul(u, b.strong_mul(cast(SSAValue, b.add(dps, b.swap_last(dps))), f))
            if m > n:
                off = cast(SSAValue, b.sub(t_v, b.matmul(u, dp)))  # dA V - U dP
                du = b.add(du, b.strong_div(off, across_columns(b, s, m)))
        if b.result_needed(2):
            sdp = cast(SSAValue, b.mul(down_rows(b, s, k), dp))  # S dP
            dv = b.matmul(v, b.strong_mul(cast(SSAValue, b.add(sdp, b.swap_last(sdp))), f))
            if n > m:
                t_u = b.matmul(b.swap_last(t), u)  # dA^T U
                off = cast(SSAValue, b.sub(t_u, b.matmul(v, b.swap_last(dp))))  # dA^T U - V dP^T
                dv = b.add(dv, b.strong_div(off, across_columns(b, s, n)))
            dvt = b.swap_last(cast(SSAValue, dv))
    return [du, ds, dvt]


@batch_rule(nn.SvdOp)
def _svd_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> list[Batched]:
    return [(result, True) for result in b.emit(nn.SvdOp(args[0])).results]


# ---------------------------------------------------------------------------------------------------------------
# qr
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.QrOp)
def _qr_vjp(b: RuleBuilder, op: Operation, ct_q: T, ct_r: T = None) -> Cotangents:
    if (ct_q is None and ct_r is None) or not b.needs(0):
        return [None]
    q, r = op.results
    inner = b.matmul(ct_r, b.swap_last(r)) if ct_r is not None else None  # R̄ R^T
    if ct_q is not None:
        inner = b.sub(inner, b.matmul(b.swap_last(q), ct_q))  # ... - Q^T Q̄
    mid = triu(b, cast(SSAValue, inner))
    # M + M^T - diag(M): M's diagonal once, its strict upper triangle mirrored below.
    sym = cast(SSAValue, b.add(mid, b.swap_last(triu(b, mid, 1))))
    g = cast(SSAValue, b.add(ct_q, b.matmul(q, sym)))
    return [b.swap_last(solve(b, r, b.swap_last(g), False))]  # g R^{-T} = (R^{-1} g^T)^T


@jvp_rule(nn.QrOp)
def _qr_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    if t is None:
        return [None, None]
    q, r = op.results
    t_rinv = solve_right(b, r, t, False)  # dA R^{-1}
    x = b.matmul(b.swap_last(q), t_rinv)
    low = tril(b, x, -1)
    d_omega = cast(SSAValue, b.sub(low, b.swap_last(low)))
    dq = b.add(b.matmul(q, cast(SSAValue, b.sub(d_omega, x))), t_rinv) if b.result_needed(0) else None
    dr = b.matmul(cast(SSAValue, b.sub(x, d_omega)), r) if b.result_needed(1) else None
    return [dq, dr]


@batch_rule(nn.QrOp)
def _qr_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> list[Batched]:
    return [(result, True) for result in b.emit(nn.QrOp(args[0])).results]


__all__ = [
    "across_columns",
    "diag_embed",
    "diagonal",
    "down_rows",
    "permute_rows",
    "phi",
    "solve",
    "solve_right",
    "tril",
    "triu",
    "unpermute_rows",
]
