"""`convert-blas-to-llvm`: `blas` ops to calls of the runtime's BLAS and LAPACK entry points.

Input invariant: `blas.gemm` on memrefs the op's verifier accepts (2-D, static shapes, unit
stride in the last dimension).
Output IR: `llvm.call @irgrad_blas_sgemm` (f32) or `@irgrad_blas_dgemm` (f64), declared in
the module, with the row-major BLAS arguments

    (i64 transpose_a, i64 transpose_b, i64 m, i64 n, i64 k, alpha, ptr a, i64 lda,
     ptr b, i64 ldb, beta, ptr c, i64 ldc)

where alpha and beta have the element type, a transpose flag is 0 or 1, and the leading
dimensions are the memrefs' first strides. Memref operands reach it as bare pointers
through unrealized casts, as in convert-memref-to-llvm, so run this pass before that one.
The CPU runtime (irgrad/backends/cpu/blas.py) defines both symbols, in every process that
loads such code.

The factorizations become calls of `irgrad_lapack_{s,d}<routine>` (irgrad/backends/cpu/lapack/;
the same row-major conventions, leading dimensions the first strides).
Their signatures: docs/design/cpu-backend.md, "irgrad/lowering/llvm/blas_to_llvm.py".
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, FloatAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irgrad.dialects.blas import GeevOp, GemmOp, GeqrfOp, GesddOp, GetrfOp, PotrfOp, SyevdOp, TrsmOp, unit_strides_last
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.checks import check_no_ops_left
from irgrad.lowering.rewriting import apply_conversion

SGEMM = "irgrad_blas_sgemm"
DGEMM = "irgrad_blas_dgemm"


def _leading(value: SSAValue) -> int:
    strides = unit_strides_last(cast(MemRefType[Attribute], value.type))
    assert strides is not None  # the verifier checked
    return max(strides[0], 1)


def _shape(value: SSAValue) -> tuple[int, ...]:
    return cast(MemRefType[Attribute], value.type).get_shape()


def _matrix(b: LLVMBuilder, value: SSAValue) -> list[SSAValue]:
    """A matrix argument: its pointer, then its leading dimension."""
    return [b.operand(value), b.const_int(_leading(value))]


class GemmLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GemmOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        element = cast(MemRefType[Attribute], op.c.type).get_element_type()
        m, n, k = op.sizes()
        args = [
            b.const_int(1 if op.transpose_a else 0),
            b.const_int(1 if op.transpose_b else 0),
            b.const_int(m),
            b.const_int(n),
            b.const_int(k),
            b.constant(FloatAttr(op.alpha_value, element), element),
            *_matrix(b, op.a),
            *_matrix(b, op.b),
            b.constant(FloatAttr(op.beta_value, element), element),
            *_matrix(b, op.c),
        ]
        b.call(SGEMM if isinstance(element, Float32Type) else DGEMM, args, None)
        rewriter.erase(op)


# The arguments of each factorization's entry point, in the order of the module doc.


def _potrf(b: LLVMBuilder, op: PotrfOp) -> list[SSAValue]:
    return [b.const_int(_shape(op.a)[0]), *_matrix(b, op.a)]


def _trsm(b: LLVMBuilder, op: TrsmOp) -> list[SSAValue]:
    n, k = _shape(op.b)
    return [
        b.const_int(1 if op.lower is not None else 0),
        b.const_int(1 if op.unit_diagonal is not None else 0),
        b.const_int(n),
        b.const_int(k),
        *_matrix(b, op.a),
        *_matrix(b, op.b),
    ]


def _getrf(b: LLVMBuilder, op: GetrfOp) -> list[SSAValue]:
    return [b.const_int(_shape(op.a)[0]), *_matrix(b, op.a), b.operand(op.pivots), b.operand(op.permutation)]


def _syevd(b: LLVMBuilder, op: SyevdOp) -> list[SSAValue]:
    return [b.const_int(_shape(op.a)[0]), *_matrix(b, op.a), b.operand(op.w)]


def _geev(b: LLVMBuilder, op: GeevOp) -> list[SSAValue]:
    """(n, a, lda, w, v, ldv): v's leading dimension in elements (a row of n (re, im) pairs is 2n)."""
    return [b.const_int(_shape(op.a)[0]), *_matrix(b, op.a), b.operand(op.w), *_matrix(b, op.v)]


def _gesdd(b: LLVMBuilder, op: GesddOp) -> list[SSAValue]:
    m, n = _shape(op.a)
    return [b.const_int(m), b.const_int(n), *_matrix(b, op.a), b.operand(op.s), *_matrix(b, op.u), *_matrix(b, op.vt)]


def _geqrf(b: LLVMBuilder, op: GeqrfOp) -> list[SSAValue]:
    m, n = _shape(op.q)
    return [b.const_int(m), b.const_int(n), *_matrix(b, op.q), *_matrix(b, op.r)]


LAPACK_CALLS: dict[type[Operation], tuple[str, Callable[[LLVMBuilder, Any], list[SSAValue]]]] = {
    PotrfOp: ("potrf", _potrf),
    TrsmOp: ("trsm", _trsm),
    GetrfOp: ("getrf", _getrf),
    SyevdOp: ("syevd", _syevd),
    GeevOp: ("geev", _geev),
    GesddOp: ("gesdd", _gesdd),
    GeqrfOp: ("geqrf", _geqrf),
}
"""blas op -> (routine, its arguments); the element type of the op's first operand picks the
entry point `irgrad_lapack_{s,d}<routine>`."""


class LapackLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        call = LAPACK_CALLS.get(type(op))
        if call is None:
            return
        routine, arguments = call
        element = cast(MemRefType[Attribute], op.operands[0].type).get_element_type()
        prefix = "s" if isinstance(element, Float32Type) else "d"
        b = LLVMBuilder(rewriter, op)
        b.call(f"irgrad_lapack_{prefix}{routine}", arguments(b, op), None)
        rewriter.erase(op)


@dataclass(frozen=True)
class ConvertBlasToLLVMPass(ModulePass):
    """Lower blas.gemm to calls of the runtime's irgrad_blas_sgemm / irgrad_blas_dgemm, and
    blas.potrf / trsm / getrf / syevd / gesdd / geqrf to
    irgrad_lapack_{s,d}{potrf,trsm,getrf,syevd,gesdd,geqrf}.

    Input invariant: verified blas ops on memrefs. Output IR: llvm.call ops and their
    declarations; memref operands through unrealized casts to !llvm.ptr.
    """

    name = "convert-blas-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(
            op,
            [GemmLowering(), LapackLowering()],
            dialect="blas",
        )
        check_no_ops_left(op, "blas", self.name)
