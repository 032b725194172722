"""A FLOP count read off `nn` IR, so derivative cost claims are measured on the program itself.

Conventions (per op, on static shapes): matmul 2*M*N*K per batch entry; conv2d 2*N*O*Ho*Wo*C*Kh*Kw;
elementwise arithmetic and transcendental ops one FLOP per result element; reductions one per
input element; max_pool2d one per window element; per matrix of a batch, cholesky n^3/3,
triangular_solve n^2*k (B is n x k) and lu 2*n^3/3 (LAPACK's leading terms), eigh 9*n^3, svd
of an m x n matrix (p, q = max, min of m, n) min(14*p*q^2 + 8*q^3, 6*p*q^2 + 20*q^3) and qr
4*m*n^2 - 4*n^3/3 (see `_factorization_flops` for the sources); data movement
(reshape, transpose, slice, broadcast, pad, concatenate, gather, convert, select, constants) zero.
Calls count their callee's FLOPs once per call; loops count their body once per iteration when the
trip count is a constant, else once (and the result is marked inexact).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation

from irgrad.dialects import nn

_ZERO_COST = (
    nn.ConstantOp, nn.FullOp, nn.IotaOp, nn.ConvertOp, nn.SelectOp, nn.BroadcastInDimOp,
    nn.ReshapeOp, nn.TransposeOp, nn.SliceOp, nn.DynamicSliceOp, nn.DynamicUpdateSliceOp,
    nn.ConcatenateOp, nn.PadOp, nn.GatherOp,
)


def _numel(t) -> int:
    return math.prod(t.get_shape()) if isinstance(t, TensorType) else 1


@dataclass
class Cost:
    flops: int = 0
    exact: bool = True
    by_op: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, flops: int) -> None:
        self.flops += flops
        self.by_op[name] = self.by_op.get(name, 0) + flops


def _factorization_flops(op: nn.EighOp | nn.SvdOp | nn.QrOp) -> int:
    """Leading-term FLOPs of eigh, svd and qr per matrix, times the batch.

    - eigh (values and vectors): 9 n^3, Golub & Van Loan's count for the symmetric QR algorithm
      with the eigenvectors accumulated (Matrix Computations, 4th ed., Section 8.3); syevd's
      divide and conquer is of the same order.
    - svd (reduced: U1 (p x q), s, V; p >= q, a wide matrix counted as its transpose): the
      cheaper of Golub & Van Loan's Golub-Kahan-Reinsch, 14 p q^2 + 8 q^3, and R-SVD (QR first),
      6 p q^2 + 20 q^3 (their SVD flop table, ibid., Section 8.6); LAPACK too factors a tall
      enough matrix by QR first.
    - qr (reduced, m >= n): geqrf 2 m n^2 - 2 n^3/3 plus orgqr forming the thin Q the same
      again (LAPACK's flop counts for the two with k = n reflectors).
    """
    *batch, m, n = op.operand.type.get_shape()
    if isinstance(op, nn.EighOp):
        per = 9 * n**3
    elif isinstance(op, nn.SvdOp):
        p, q = max(m, n), min(m, n)
        per = min(14 * p * q * q + 8 * q**3, 6 * p * q * q + 20 * q**3)
    else:
        per = 4 * m * n * n - 4 * n**3 // 3
    return math.prod(batch) * per


def op_flops(op: Operation) -> int:
    if isinstance(op, _ZERO_COST):
        return 0
    if isinstance(op, nn.MatmulOp):
        a, b = op.lhs.type, op.rhs.type
        sa = a.get_shape()
        return 2 * math.prod(sa[:-1]) * sa[-1] * b.get_shape()[-1]
    if isinstance(op, nn.Conv2DOp):
        n, o, ho, wo = op.result.type.get_shape()
        _, c, kh, kw = op.weight.type.get_shape()
        return 2 * n * o * ho * wo * c * kh * kw
    if isinstance(op, nn.CholeskyOp | nn.LUOp):
        *batch, n, _ = op.operand.type.get_shape()
        return math.prod(batch) * (1 if isinstance(op, nn.CholeskyOp) else 2) * n**3 // 3
    if isinstance(op, nn.EighOp | nn.SvdOp | nn.QrOp):
        return _factorization_flops(op)
    if isinstance(op, nn.TriangularSolveOp):
        *batch, n, k = op.b.type.get_shape()
        return math.prod(batch) * n * n * k
    if isinstance(op, nn.MaxPool2DOp):
        kh, kw = op.kernel.get_values()
        return _numel(op.result.type) * kh * kw
    if isinstance(op, nn.ReduceOp):
        return _numel(op.operand.type)
    if isinstance(op, nn.ScatterAddOp):
        return _numel(op.updates.type)
    if isinstance(op, nn.NNOperation):
        return _numel(op.results[0].type)
    if op.dialect_name() in ("arith", "math") and op.results and not isinstance(op, arith.ConstantOp):
        return _numel(op.results[0].type)
    return 0


def _trip_count(op: scf.ForOp) -> int | None:
    values = []
    for v in (op.lb, op.ub, op.step):
        owner = v.owner
        if not isinstance(owner, arith.ConstantOp):
            return None
        values.append(owner.value.value.data)
    lb, ub, step = values
    return max(0, -(-(ub - lb) // step))


def function_cost(module: ModuleOp, name: str) -> Cost:
    """FLOPs of one call of `@name`, following calls and constant-trip loops."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    memo: dict[str, Cost] = {}

    def of_function(fname: str) -> Cost:
        if fname in memo:
            return memo[fname]
        cost = Cost()
        memo[fname] = cost
        for region in functions[fname].regions:
            visit_region(region, cost, 1)
        return cost

    def visit_region(region, cost: Cost, scale: int) -> None:
        for block in region.blocks:
            for op in block.ops:
                visit(op, cost, scale)

    def visit(op: Operation, cost: Cost, scale: int) -> None:
        if isinstance(op, func.CallOp):
            callee = of_function(op.callee.root_reference.data)
            for k, v in callee.by_op.items():
                cost.add(k, v * scale)
            cost.exact &= callee.exact
            return
        if isinstance(op, scf.ForOp):
            n = _trip_count(op)
            if n is None:
                cost.exact = False
                n = 1
            visit_region(op.body, cost, scale * n)
            return
        if op.regions:
            if isinstance(op, (scf.WhileOp, scf.IfOp)):
                cost.exact = False
            for region in op.regions:
                visit_region(region, cost, scale)
        flops = op_flops(op)
        if flops:
            cost.add(op.name, flops * scale)

    return of_function(name)
