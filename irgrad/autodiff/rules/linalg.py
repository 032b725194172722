"""Rules for dense linear algebra: nn.cholesky, nn.triangular_solve, nn.lu.

Every rule is written with ordinary nn ops (the factorizations' own solves included), so derived code
is differentiable again (higher order) and batches like any other. Triangles are masks: nn.iota of the
row and column numbers, nn.compare, nn.select (never a multiplication, so an inf/NaN outside a triangle
does not leak in). M below is the triangle an op reads: strictly so with `unit_diagonal`.

triangular_solve, X = A^{-1} B (only M∘A is read):
    dX = A^{-1} (dB - (M∘dA) X);      B̄ = A^{-T} X̄,  Ā = -M∘(B̄ X^T)
  A^{-T} is a solve with the transposed matrix, whose triangle is the other one (same unit flag).

cholesky, L = chol(S) with S = tril(A) + tril(A, -1)^T (only A's lower triangle is read), Murray 2016:
    dS = tril(dA) + tril(dA, -1)^T,   dL = L Φ(L^{-1} dS L^{-T})
    S̄ = L^{-T} Φ(L^T L̄) L^{-1},       Ā = tril(S̄) + tril(S̄^T, -1)
  Φ(X): X's strict lower triangle plus half its diagonal (self-adjoint, so the VJP is the JVP's
  transpose exactly).

lu, P A = L U packed in `lu` (L unit lower), `permutation` with (P A)[i] = A[perm[i]]; the integer
results (pivots, permutation) carry no derivative (JAX's rule):
    X = L^{-1} (P dA) U^{-1},         dlu = L tril(X, -1) + triu(X) U
    G = L^{-T} (tril(L^T L̄, -1) + triu(Ū U^T)) U^{-T},  Ā = P^T G  (Ā[perm[i]] = G[i])
  with L̄ = tril(lū, -1), Ū = triu(lū). Row permutations are a gather (and its transpose a
  scatter_add) of the rows, the batch folded into the row numbers, so they are exact.

Batching: the ops take leading batch dimensions, and a batched value has its batch at dimension 0,
so the op applies to the batched operands as they are (an unbatched operand of triangular_solve is
broadcast to the batch first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import TensorType, i32
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, materialize
from irgrad.autodiff.builder import RuleBuilder, element_type, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, vjp_rule
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


__all__ = ["permute_rows", "phi", "solve", "solve_right", "tril", "triu", "unpermute_rows"]
