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

The factorizations become calls of irgrad/backends/cpu/lapack.py's entry points (p = s for
f32, d for f64; the same row-major conventions, leading dimensions the first strides):

    blas.potrf -> irgrad_lapack_{p}potrf(i64 n, ptr a, i64 lda)
    blas.trsm  -> irgrad_lapack_{p}trsm(i64 lower, i64 unit, i64 n, i64 k, ptr a, i64 lda, ptr b, i64 ldb)
    blas.getrf -> irgrad_lapack_{p}getrf(i64 n, ptr a, i64 lda, ptr pivots, ptr permutation)
    blas.syevd -> irgrad_lapack_{p}syevd(i64 n, ptr a, i64 lda, ptr w)
    blas.gesdd -> irgrad_lapack_{p}gesdd(i64 m, i64 n, ptr a, i64 lda, ptr s, ptr u, i64 ldu, ptr vt, i64 ldvt)
    blas.geqrf -> irgrad_lapack_{p}geqrf(i64 m, i64 n, ptr q, i64 ldq, ptr r, i64 ldr)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, FloatAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irgrad.dialects.blas import GemmOp, GeqrfOp, GesddOp, GetrfOp, PotrfOp, SyevdOp, TrsmOp, unit_strides_last
from irgrad.lowering.llvm_common import LLVMBuilder, apply_conversion, check_no_ops_left

SGEMM = "irgrad_blas_sgemm"
DGEMM = "irgrad_blas_dgemm"


class GemmLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GemmOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        a_t, b_t, c_t = (cast(MemRefType[Attribute], v.type) for v in (op.a, op.b, op.c))
        element = c_t.get_element_type()
        m, n, k = op.sizes()

        def leading(t: MemRefType[Attribute]) -> int:
            strides = unit_strides_last(t)
            assert strides is not None  # the verifier checked
            return max(strides[0], 1)

        args = [
            b.const_int(1 if op.transpose_a else 0),
            b.const_int(1 if op.transpose_b else 0),
            b.const_int(m),
            b.const_int(n),
            b.const_int(k),
            b.constant(FloatAttr(op.alpha_value, element), element),
            b.operand(op.a),
            b.const_int(leading(a_t)),
            b.operand(op.b),
            b.const_int(leading(b_t)),
            b.constant(FloatAttr(op.beta_value, element), element),
            b.operand(op.c),
            b.const_int(leading(c_t)),
        ]
        b.call(SGEMM if isinstance(element, Float32Type) else DGEMM, args, None)
        rewriter.erase(op)


def _leading(value) -> int:
    strides = unit_strides_last(cast(MemRefType[Attribute], value.type))
    assert strides is not None  # the verifier checked
    return max(strides[0], 1)


def _prefix(value) -> str:
    element = cast(MemRefType[Attribute], value.type).get_element_type()
    return "s" if isinstance(element, Float32Type) else "d"


class PotrfLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PotrfOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        n = cast(MemRefType[Attribute], op.a.type).get_shape()[0]
        args = [b.const_int(n), b.operand(op.a), b.const_int(_leading(op.a))]
        b.call(f"irgrad_lapack_{_prefix(op.a)}potrf", args, None)
        rewriter.erase(op)


class TrsmLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TrsmOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        n, k = cast(MemRefType[Attribute], op.b.type).get_shape()
        args = [
            b.const_int(1 if op.lower is not None else 0),
            b.const_int(1 if op.unit_diagonal is not None else 0),
            b.const_int(n),
            b.const_int(k),
            b.operand(op.a),
            b.const_int(_leading(op.a)),
            b.operand(op.b),
            b.const_int(_leading(op.b)),
        ]
        b.call(f"irgrad_lapack_{_prefix(op.a)}trsm", args, None)
        rewriter.erase(op)


class GetrfLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GetrfOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        n = cast(MemRefType[Attribute], op.a.type).get_shape()[0]
        args = [b.const_int(n), b.operand(op.a), b.const_int(_leading(op.a)), b.operand(op.pivots), b.operand(op.permutation)]
        b.call(f"irgrad_lapack_{_prefix(op.a)}getrf", args, None)
        rewriter.erase(op)


class SyevdLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SyevdOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        n = cast(MemRefType[Attribute], op.a.type).get_shape()[0]
        args = [b.const_int(n), b.operand(op.a), b.const_int(_leading(op.a)), b.operand(op.w)]
        b.call(f"irgrad_lapack_{_prefix(op.a)}syevd", args, None)
        rewriter.erase(op)


class GesddLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GesddOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        m, n = cast(MemRefType[Attribute], op.a.type).get_shape()
        args = [
            b.const_int(m),
            b.const_int(n),
            b.operand(op.a),
            b.const_int(_leading(op.a)),
            b.operand(op.s),
            b.operand(op.u),
            b.const_int(_leading(op.u)),
            b.operand(op.vt),
            b.const_int(_leading(op.vt)),
        ]
        b.call(f"irgrad_lapack_{_prefix(op.a)}gesdd", args, None)
        rewriter.erase(op)


class GeqrfLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GeqrfOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        m, n = cast(MemRefType[Attribute], op.q.type).get_shape()
        args = [
            b.const_int(m),
            b.const_int(n),
            b.operand(op.q),
            b.const_int(_leading(op.q)),
            b.operand(op.r),
            b.const_int(_leading(op.r)),
        ]
        b.call(f"irgrad_lapack_{_prefix(op.q)}geqrf", args, None)
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
            [
                GemmLowering(),
                PotrfLowering(),
                TrsmLowering(),
                GetrfLowering(),
                SyevdLowering(),
                GesddLowering(),
                GeqrfLowering(),
            ],
            dialect="blas",
        )
        check_no_ops_left(op, "blas", self.name)
