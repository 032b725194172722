"""The `blas` dialect: calls into an optimized BLAS (and LAPACK) on buffers, one op per routine.

Pipeline position: `convert-linalg-to-blas` (irgrad/lowering/loops/linalg_to_blas.py) turns large
`linalg.matmul`s on memrefs into `blas.gemm` after bufferization; `convert-factorizations-to-lapack`
calls the LAPACK ops in place of the loops of the factorizations; `convert-blas-to-llvm` turns each
op into a call of the CPU runtime's `irgrad_blas_*` / `irgrad_lapack_*` entry points
(irgrad/backends/cpu/blas.py, irgrad/backends/cpu/lapack/), bound to the library numpy uses.

Why a dialect and not a bare `func.call`: the op keeps the shapes and strides in its memref
types, so a verifier checks the contraction (the linalg view of it) and the reference
interpreter can run it; a call with pointers could be neither verified nor interpreted.
This is MLIR's library-call approach (`linalg` named ops to `func.call`s of a runtime,
IREE's microkernels) with the contract spelled out as an op.

`blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64, transpose_a} : ...` computes
`C = alpha * op(A) @ op(B) + beta * C`, op(X) = X^T where `transpose_X` is set; `beta = 0`
means C is only written. Every memref is 2-D, f32 or f64 (all the same), with static shapes and
unit stride in the last dimension.

The LAPACK ops (potrf, trsm, getrf, syevd, geev, gesdd, geqrf) each work on one 2-D matrix.
Their forms and contracts: docs/dialects/blas.md, "irgrad/dialects/blas.py".
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    Float32Type,
    IntegerType,
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


def _check_matrix(op: IRDLOperation, name: str, t: Attribute, square: bool) -> None:
    """A 2-D f32/f64 memref, static shape, unit stride in the last dimension."""
    assert isinstance(t, MemRefType)
    element = t.get_element_type()
    if not isinstance(element, Float32Type | Float64Type):
        raise VerifyException(f"'{op.name}' op operand {name} needs f32 or f64 elements, got {element}")
    if t.get_num_dims() != 2 or any(d < 0 for d in t.get_shape()):
        raise VerifyException(f"'{op.name}' op operand {name} must be a 2-D memref with a static shape, got {t}")
    if square and t.get_shape()[0] != t.get_shape()[1]:
        raise VerifyException(f"'{op.name}' op operand {name} must be square, got {t}")
    if unit_strides_last(t) is None:
        raise VerifyException(
            f"'{op.name}' op operand {name} needs static strides with unit stride in the last dimension, got {t}"
        )


@irdl_op_definition
class PotrfOp(IRDLOperation):
    """Cholesky in place (LAPACK xPOTRF, row-major): reads A's lower triangle, writes L there
    and zeros above it; a matrix that is not positive definite becomes all NaN (nn.cholesky)."""

    name = "blas.potrf"

    a = operand_def(MemRefType)

    assembly_format = "$a attr-dict `:` type($a)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, a: SSAValue):
        super().__init__(operands=[a])

    def verify_(self) -> None:
        _check_matrix(self, "a", self.a.type, square=True)


@irdl_op_definition
class TrsmOp(IRDLOperation):
    """`B := A^{-1} B` in place for a triangular A (BLAS xTRSM, left side, row-major): only A's
    `lower` (else upper) triangle is read, and not its diagonal with `unit_diagonal`."""

    name = "blas.trsm"

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    lower = opt_prop_def(UnitAttr)
    unit_diagonal = opt_prop_def(UnitAttr)

    assembly_format = (
        "$a `,` $b (`lower` $lower^)? (`unit_diagonal` $unit_diagonal^)? attr-dict `:` type($a) `,` type($b)"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, a: SSAValue, b: SSAValue, *, lower: bool, unit_diagonal: bool = False):
        properties: dict[str, Attribute] = {}
        if lower:
            properties["lower"] = UnitAttr()
        if unit_diagonal:
            properties["unit_diagonal"] = UnitAttr()
        super().__init__(operands=[a, b], properties=properties)

    def verify_(self) -> None:
        _check_matrix(self, "a", self.a.type, square=True)
        _check_matrix(self, "b", self.b.type, square=False)
        a, b = self.a.type, self.b.type
        assert isinstance(a, MemRefType) and isinstance(b, MemRefType)
        if a.get_element_type() != b.get_element_type():
            raise VerifyException(f"'{self.name}' op element types differ: a {a}, b {b}")
        if b.get_shape()[0] != a.get_shape()[0]:
            raise VerifyException(f"'{self.name}' op b must have {a.get_shape()[0]} rows like a, got {b}")


@irdl_op_definition
class GetrfOp(IRDLOperation):
    """LU with partial pivoting in place (LAPACK xGETRF, row-major): A := L\\U packed, `pivots`
    0-based row swaps, `permutation` with (P A)[i] = A[permutation[i]] (nn.lu)."""

    name = "blas.getrf"

    a = operand_def(MemRefType)
    pivots = operand_def(MemRefType)
    permutation = operand_def(MemRefType)

    assembly_format = "$a `,` $pivots `,` $permutation attr-dict `:` type($a) `,` type($pivots) `,` type($permutation)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, a: SSAValue, pivots: SSAValue, permutation: SSAValue):
        super().__init__(operands=[a, pivots, permutation])

    def verify_(self) -> None:
        _check_matrix(self, "a", self.a.type, square=True)
        n = self.a.type.get_shape()[0]  # type: ignore[union-attr]
        for name, t in (("pivots", self.pivots.type), ("permutation", self.permutation.type)):
            assert isinstance(t, MemRefType)
            if t.get_shape() != (n,) or t.get_element_type() != IntegerType(32):
                raise VerifyException(f"'{self.name}' op {name} must be memref<{n}xi32>, got {t}")
            strides = t.get_strides()
            if strides is None or tuple(strides) != (1,):
                raise VerifyException(f"'{self.name}' op {name} must be contiguous, got {t}")


def _check_vector(op: IRDLOperation, name: str, t: Attribute, size: int, element: Attribute) -> None:
    """A contiguous 1-D memref<size x element>."""
    assert isinstance(t, MemRefType)
    if t.get_shape() != (size,) or t.get_element_type() != element:
        raise VerifyException(f"'{op.name}' op {name} must be memref<{size}x{element}>, got {t}")
    strides = t.get_strides()
    if strides is None or tuple(strides) != (1,):
        raise VerifyException(f"'{op.name}' op {name} must be contiguous, got {t}")


def _check_same_element(op: IRDLOperation, a: Attribute, name: str, t: Attribute) -> None:
    assert isinstance(a, MemRefType) and isinstance(t, MemRefType)
    if t.get_element_type() != a.get_element_type():
        raise VerifyException(f"'{op.name}' op element types differ: a {a}, {name} {t}")


def _check_shape(op: IRDLOperation, name: str, t: Attribute, shape: tuple[int, ...]) -> None:
    assert isinstance(t, MemRefType)
    if tuple(t.get_shape()) != shape:
        raise VerifyException(f"'{op.name}' op {name} must be {'x'.join(map(str, shape))}, got {t}")


@irdl_op_definition
class SyevdOp(IRDLOperation):
    """Symmetric eigendecomposition in place (LAPACK xSYEVD, jobz = 'V', uplo = 'L', row-major):
    reads A's lower triangle (diagonal included), writes the orthonormal eigenvectors into A as
    columns (any signs) and the eigenvalues, ascending, into `w`; a non-finite lower triangle
    or a LAPACK failure makes A and w all NaN."""

    name = "blas.syevd"

    a = operand_def(MemRefType)
    w = operand_def(MemRefType)

    assembly_format = "$a `,` $w attr-dict `:` type($a) `,` type($w)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, a: SSAValue, w: SSAValue):
        super().__init__(operands=[a, w])

    def verify_(self) -> None:
        _check_matrix(self, "a", self.a.type, square=True)
        a = self.a.type
        assert isinstance(a, MemRefType)
        _check_vector(self, "w", self.w.type, a.get_shape()[0], a.get_element_type())


def _check_pairs(op: IRDLOperation, name: str, t: Attribute, shape: tuple[int, ...], element: Attribute) -> None:
    """A memref<shape x element> in the (re, im) pairs layout: static strides, the last two 2 and 1
    (w (n x 2) contiguous; v's rows of pairs contiguous, its row stride free: a subview of a batch)."""
    assert isinstance(t, MemRefType)
    if tuple(t.get_shape()) != shape or t.get_element_type() != element:
        raise VerifyException(f"'{op.name}' op {name} must be memref<{'x'.join(map(str, shape))}x{element}>, got {t}")
    strides = unit_strides_last(t)
    if strides is None or (len(strides) > 1 and strides[-2] != 2):
        raise VerifyException(f"'{op.name}' op {name} needs static strides ending in [2, 1] (rows of pairs), got {t}")


@irdl_op_definition
class GeevOp(IRDLOperation):
    """Eigenvalues and right eigenvectors of the real n x n A (LAPACK xGEEV, jobvl = 'N', jobvr =
    'V', row-major), as (re, im) pairs: `w` (n x 2) the eigenvalues in geev's order, `v` (n x n
    x 2) the eigenvectors as columns, each of unit 2-norm with its largest component real (geev's
    packed real columns of a conjugate pair unpacked into the two complex vectors). A is scratch:
    its contents afterwards are unspecified. A non-finite A or a LAPACK failure (no convergence)
    makes w and v all NaN."""

    name = "blas.geev"

    a = operand_def(MemRefType)
    w = operand_def(MemRefType)
    v = operand_def(MemRefType)

    assembly_format = "$a `,` $w `,` $v attr-dict `:` type($a) `,` type($w) `,` type($v)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, a: SSAValue, w: SSAValue, v: SSAValue):
        super().__init__(operands=[a, w, v])

    def verify_(self) -> None:
        _check_matrix(self, "a", self.a.type, square=True)
        a = self.a.type
        assert isinstance(a, MemRefType)
        n = a.get_shape()[0]
        _check_pairs(self, "w", self.w.type, (n, 2), a.get_element_type())
        _check_pairs(self, "v", self.v.type, (n, n, 2), a.get_element_type())


@irdl_op_definition
class GesddOp(IRDLOperation):
    """Reduced SVD (LAPACK xGESDD, jobz = 'S', row-major) of the m x n A, k = min(m, n): `s`
    (k) descending, `u` (m x k) and `vt` (k x n) with orthonormal columns / rows (any signs,
    the same flips in u's columns and vt's rows). A is scratch: its contents afterwards are
    unspecified. A non-finite A or a LAPACK failure makes s, u and vt all NaN."""

    name = "blas.gesdd"

    a = operand_def(MemRefType)
    s = operand_def(MemRefType)
    u = operand_def(MemRefType)
    vt = operand_def(MemRefType)

    assembly_format = "$a `,` $s `,` $u `,` $vt attr-dict `:` type($a) `,` type($s) `,` type($u) `,` type($vt)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, a: SSAValue, s: SSAValue, u: SSAValue, vt: SSAValue):
        super().__init__(operands=[a, s, u, vt])

    def verify_(self) -> None:
        _check_matrix(self, "a", self.a.type, square=False)
        _check_matrix(self, "u", self.u.type, square=False)
        _check_matrix(self, "vt", self.vt.type, square=False)
        a = self.a.type
        assert isinstance(a, MemRefType)
        m, n = a.get_shape()
        k = min(m, n)
        _check_vector(self, "s", self.s.type, k, a.get_element_type())
        for name, t, shape in (("u", self.u.type, (m, k)), ("vt", self.vt.type, (k, n))):
            _check_same_element(self, a, name, t)
            _check_shape(self, name, t, shape)


@irdl_op_definition
class GeqrfOp(IRDLOperation):
    """Reduced QR in place (LAPACK xGEQRF then xORGQR, row-major) of the m x n A, m >= n, held
    in `q`: `q` := Q (m x n, orthonormal columns), `r` := R (n x n, upper triangular, zeros
    below the diagonal), with LAPACK's Householder signs (numpy.linalg.qr's). A non-finite A
    or a LAPACK failure makes q and r all NaN."""

    name = "blas.geqrf"

    q = operand_def(MemRefType)
    r = operand_def(MemRefType)

    assembly_format = "$q `,` $r attr-dict `:` type($q) `,` type($r)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, q: SSAValue, r: SSAValue):
        super().__init__(operands=[q, r])

    def verify_(self) -> None:
        _check_matrix(self, "q", self.q.type, square=False)
        _check_matrix(self, "r", self.r.type, square=True)
        q = self.q.type
        assert isinstance(q, MemRefType)
        m, n = q.get_shape()
        if m < n:
            raise VerifyException(f"'{self.name}' op q must be tall or square (m >= n), got {q}")
        if self.r.type.get_element_type() != q.get_element_type():  # type: ignore[union-attr]
            raise VerifyException(f"'{self.name}' op element types differ: q {q}, r {self.r.type}")
        _check_shape(self, "r", self.r.type, (n, n))


BLAS = Dialect("blas", [GemmOp, PotrfOp, TrsmOp, GetrfOp, SyevdOp, GeevOp, GesddOp, GeqrfOp], [])
