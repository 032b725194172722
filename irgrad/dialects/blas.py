"""The `blas` dialect: calls into an optimized BLAS on buffers, as one op per routine.

Pipeline position: `convert-linalg-to-blas` (irgrad/lowering/linalg_to_blas.py) turns large
`linalg.matmul`s on memrefs into `blas.gemm` after bufferization; `convert-blas-to-llvm`
turns each into a call of the runtime's `irgrad_blas_sgemm`/`irgrad_blas_dgemm`, which the
CPU runtime (irgrad/backends/cpu/blas.py) binds to the BLAS numpy itself uses (OpenBLAS in
numpy's wheels) or, where none is found, to a loop nest compiled by LLVM.

Why a dialect and not a bare `func.call`: the op keeps the shapes and strides in its memref
types, so a verifier checks the contraction (the linalg view of it) and the reference
interpreter can run it; a call with pointers could be neither verified nor interpreted.
This is MLIR's library-call approach (`linalg` named ops to `func.call`s of a runtime,
IREE's microkernels) with the contract spelled out as an op.

`blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64, transpose_a} : ...` computes
`C = alpha * op(A) @ op(B) + beta * C`, op(X) = X^T where `transpose_X` is set. As in BLAS,
`beta = 0` means C is only written: its old contents (NaN included) are never read. Every
memref is 2-D, f32 or f64 (all the same), with static shapes and unit stride in the last
dimension (the leading dimension is the first stride, as for a row-major BLAS call).
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    MemRefType,
    UnitAttr,
    f64,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException


def unit_strides_last(t: MemRefType[Attribute]) -> list[int] | None:
    """The static strides of `t` when its last one is 1, else None (dynamic or strided)."""
    try:
        strides = t.get_strides()
    except Exception:  # a layout xDSL cannot turn into strides
        return None
    if strides is None or any(s is None for s in strides) or (strides and strides[-1] != 1):
        return None
    return [int(s) for s in strides]  # type: ignore[arg-type]


@irdl_op_definition
class GemmOp(IRDLOperation):
    """`C = alpha * op(A) @ op(B) + beta * C` on 2-D f32/f64 buffers (BLAS xGEMM, row-major)."""

    name = "blas.gemm"

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)

    alpha = prop_def(FloatAttr)
    beta = prop_def(FloatAttr)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)

    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        *,
        alpha: float = 1.0,
        beta: float = 0.0,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        properties: dict[str, Attribute] = {
            "alpha": FloatAttr(alpha, f64),
            "beta": FloatAttr(beta, f64),
        }
        if transpose_a:
            properties["transpose_a"] = UnitAttr()
        if transpose_b:
            properties["transpose_b"] = UnitAttr()
        super().__init__(operands=[a, b, c], properties=properties)

    @property
    def alpha_value(self) -> float:
        return float(self.alpha.value.data)

    @property
    def beta_value(self) -> float:
        return float(self.beta.value.data)

    def sizes(self) -> tuple[int, int, int]:
        """(m, n, k) of the product: op(A) is m x k, op(B) is k x n, C is m x n."""
        a = self.a.type.get_shape()  # type: ignore[union-attr]
        b = self.b.type.get_shape()  # type: ignore[union-attr]
        m, k = (a[1], a[0]) if self.transpose_a else (a[0], a[1])
        n = b[0] if self.transpose_b else b[1]
        return m, n, k

    def verify_(self) -> None:
        types = [v.type for v in (self.a, self.b, self.c)]
        element = types[0].get_element_type()  # type: ignore[union-attr]
        if not isinstance(element, Float32Type | Float64Type):
            raise VerifyException(f"'{self.name}' op needs f32 or f64 elements, got {element}")
        for name, t in zip("abc", types):
            assert isinstance(t, MemRefType)
            if t.get_element_type() != element:
                raise VerifyException(
                    f"'{self.name}' op operand {name} has element type {t.get_element_type()}, "
                    f"expected {element} like operand a"
                )
            if t.get_num_dims() != 2 or any(d < 0 for d in t.get_shape()):
                raise VerifyException(
                    f"'{self.name}' op operand {name} must be a 2-D memref with a static shape, got {t}"
                )
            if unit_strides_last(t) is None:
                raise VerifyException(
                    f"'{self.name}' op operand {name} needs static strides with unit stride in "
                    f"the last dimension, got {t}"
                )
        a, b, c = (t.get_shape() for t in types)  # type: ignore[union-attr]
        m, n, k = self.sizes()
        k_b = b[1] if self.transpose_b else b[0]
        if k != k_b:
            raise VerifyException(
                f"'{self.name}' op contracts op(A) {m}x{k} with op(B) {k_b}x{n}: inner sizes differ "
                f"(A is {a[0]}x{a[1]}{' transposed' if self.transpose_a else ''}, "
                f"B is {b[0]}x{b[1]}{' transposed' if self.transpose_b else ''})"
            )
        if tuple(c) != (m, n):
            raise VerifyException(
                f"'{self.name}' op result C is {c[0]}x{c[1]}, expected {m}x{n} = op(A) @ op(B)"
            )
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if value.type != f64:
                raise VerifyException(f"'{self.name}' op {name} must be an f64 attribute")


BLAS = Dialect("blas", [GemmOp], [])
