"""The matrix factorizations LAPACK provides, as `nn` ops: `nn.cholesky`, `nn.triangular_solve`
(StableHLO's two), `nn.lu` (JAX's), `nn.eigh`, `nn.eig`, `nn.svd` and `nn.qr`.

Each works on the last two dimensions; leading dimensions are a batch. The CPU backend calls
LAPACK for them; nn-expand-factorizations writes them as loops of `nn` ops for other targets
(all but `nn.eig`, which has no loop: LAPACK or the interpreter's numpy only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import (
    DictionaryAttr,
    IntegerAttr,
    AnyTensorTypeConstr,
    Float32Type,
    Float64Type,
    IntegerType,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from irgrad.dialects.nn.base import NNOperation, Value, _type_of, shape_str, tensor

FACTORIZATION_ATTR = "irgrad.factorization"
"""The attribute that marks a function as one factorization (a DictionaryAttr: kind, lower,
unit_diagonal): nn-expand-factorizations outlines each op as a call of such a function,
which the interpreter runs as its kind's reference and convert-factorizations-to-lapack
gives a LAPACK body."""


def factorization_flag(tag: DictionaryAttr, key: str) -> bool:
    """A boolean entry (`lower`, `unit_diagonal`) of an `irgrad.factorization` tag; absent is false."""
    value = tag.data.get(key)
    return isinstance(value, IntegerAttr) and bool(value.value.data)


def _check_linalg_float(op: NNOperation, t: TensorType, what: str) -> None:
    if not isinstance(t.get_element_type(), Float32Type | Float64Type):
        raise op.error(f"{what} must be f32 or f64 (LAPACK's real types), got {t}")


def _check_square(op: NNOperation, t: TensorType, what: str) -> None:
    shape = t.get_shape()
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise op.error(f"{what} must be a square matrix or a batch of them (..., n, n), got {shape_str(t)}")


@irdl_op_definition
class CholeskyOp(NNOperation):
    """Cholesky factor L of a symmetric positive-definite matrix, A = L L^T (LAPACK's potrf).

    Only the lower triangle of A is read; L's strict upper triangle is zero. A batch element
    that is not positive definite (a pivot <= 0 or NaN) gives a factor that is all NaN, as
    jax.numpy.linalg.cholesky.

    `%l = nn.cholesky %a : (tensor<4x4xf64>) -> tensor<4x4xf64>`
    """

    name = "nn.cholesky"
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        super().__init__(operands=[operand], result_types=[_type_of(operand)])

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        _check_square(self, t, "operand")
        return t


@irdl_op_definition
class TriangularSolveOp(NNOperation):
    """X with A X = B for a triangular A (..., n, n) and B (..., n, k) of the same batch shape
    (BLAS's trsm, left side). Only A's `lower` (else upper) triangle is read, and not its
    diagonal with `unit_diagonal` (taken as ones). A zero on the diagonal gives inf/NaN.

    `%x = nn.triangular_solve %a, %b lower : (tensor<4x4xf64>, tensor<4x2xf64>) -> tensor<4x2xf64>`
    """

    name = "nn.triangular_solve"
    a = operand_def(AnyTensorTypeConstr)
    b = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    lower = opt_prop_def(UnitAttr)
    unit_diagonal = opt_prop_def(UnitAttr)
    assembly_format = (
        "$a `,` $b (`lower` $lower^)? (`unit_diagonal` $unit_diagonal^)? attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, a: Value, b: Value, *, lower: bool, unit_diagonal: bool = False):
        props: dict[str, Attribute] = {}
        if lower:
            props["lower"] = UnitAttr()
        if unit_diagonal:
            props["unit_diagonal"] = UnitAttr()
        super().__init__(operands=[a, b], properties=props, result_types=[_type_of(b)])

    @property
    def is_lower(self) -> bool:
        return self.lower is not None

    @property
    def is_unit(self) -> bool:
        return self.unit_diagonal is not None

    def expected_result_type(self) -> Attribute:
        a, b = cast(TensorType, self.a.type), cast(TensorType, self.b.type)
        _check_linalg_float(self, a, "a")
        _check_square(self, a, "a")
        if a.get_element_type() != b.get_element_type():
            raise self.error(f"element types differ: a {a}, b {b}")
        sa, sb = a.get_shape(), b.get_shape()
        if len(sb) != len(sa) or sb[:-2] != sa[:-2] or sb[-2] != sa[-1]:
            raise self.error(
                f"b must be (..., {sa[-1]}, k) with a's batch dimensions, got a {shape_str(a)}, b {shape_str(b)}"
            )
        return b


@irdl_op_definition
class LUOp(NNOperation):
    """LU factorization with partial pivoting, P A = L U (LAPACK's getrf), of a square A.

    Results: `lu` (L's strict lower triangle, unit diagonal implied, and U packed in one
    matrix), `pivots` (i32, 0-based: row j was swapped with row pivots[j], in order) and
    `permutation` (i32: row i of P A is row permutation[i] of A). The pivot is the first row
    of largest magnitude; an exactly singular A gives a zero on U's diagonal, not an error.

    `%lu, %piv, %perm = nn.lu %a : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xi32>, tensor<4xi32>)`
    """

    name = "nn.lu"
    operand = operand_def(AnyTensorTypeConstr)
    lu = result_def(AnyTensorTypeConstr)
    pivots = result_def(AnyTensorTypeConstr)
    permutation = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        vector = tensor(t.get_shape()[:-1], IntegerType(32))
        super().__init__(operands=[operand], result_types=[t, vector, vector])

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        _check_square(self, t, "operand")
        vector = tensor(t.get_shape()[:-1], IntegerType(32))
        expected = [t, vector, vector]
        got = [r.type for r in self.results]
        if got != expected:
            raise self.error(
                f"result types ({', '.join(map(str, got))}) do not match the inferred types "
                f"({', '.join(map(str, expected))})"
            )


def _check_result_types(op: NNOperation, expected: Sequence[Attribute]) -> None:
    got = [r.type for r in op.results]
    if got != list(expected):
        raise op.error(
            f"result types ({', '.join(map(str, got))}) do not match the inferred types "
            f"({', '.join(map(str, expected))})"
        )


@irdl_op_definition
class EighOp(NNOperation):
    """Eigenvalues and eigenvectors of a symmetric matrix, A = V diag(w) V^T (LAPACK's syevd).

    Only the lower triangle of A is read (the symmetric matrix is tril(A) + tril(A, -1)^T).
    Results: `w` (..., n), ascending, and `v` (..., n, n), the orthonormal eigenvectors as
    columns. Each eigenvector's sign is fixed: its first entry whose magnitude is at least
    half the column's largest is positive (so every backend, LAPACK or the Jacobi loop, gives
    the same vectors up to roundoff, except within a repeated eigenvalue's eigenspace, which
    has no unique basis). A NaN in the read triangle makes that batch element's w and v NaN.

    `%w, %v = nn.eigh %a : (tensor<4x4xf64>) -> (tensor<4xf64>, tensor<4x4xf64>)`
    """

    name = "nn.eigh"
    operand = operand_def(AnyTensorTypeConstr)
    w = result_def(AnyTensorTypeConstr)
    v = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=[tensor(t.get_shape()[:-1], t.get_element_type()), t])

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        _check_square(self, t, "operand")
        _check_result_types(self, [tensor(t.get_shape()[:-1], t.get_element_type()), t])


def eig_result_types(t: TensorType) -> list[TensorType]:
    """w (..., n, 2) and v (..., n, n, 2), (re, im) pairs in the operand's element type, for an
    operand (..., n, n) (the operand's type twice for a rank below 2, which the verifier rejects)."""
    shape = t.get_shape()
    if len(shape) < 2:
        return [t, t]
    e = t.get_element_type()
    return [tensor([*shape[:-1], 2], e), tensor([*shape, 2], e)]


@irdl_op_definition
class EigOp(NNOperation):
    """Eigenvalues and right eigenvectors of a real square matrix, A v_j = w_j v_j (LAPACK's geev,
    jobvl = 'N', jobvr = 'V').

    The complex results are real tensors in the (re, im) pairs layout of nn-expand-complex (a
    trailing dimension of 2), so nothing below the library sees a complex type: `w` (..., n, 2),
    `v` (..., n, n, 2) with the eigenvectors as columns. They are LAPACK's: eigenvalues in geev's
    order (a complex-conjugate pair adjacent, positive imaginary part first), each vector of unit
    2-norm with its largest component real, as numpy.linalg.eig and JAX's CPU eig give them. A NaN
    or inf in A makes that batch element's w and v NaN. There is no reference loop: the CPU calls
    LAPACK, the interpreter numpy; the GPU pipeline refuses the op (JAX's GPU eig is cuSOLVER's).

    `%w, %v = nn.eig %a : (tensor<4x4xf64>) -> (tensor<4x2xf64>, tensor<4x4x2xf64>)`
    """

    name = "nn.eig"
    operand = operand_def(AnyTensorTypeConstr)
    w = result_def(AnyTensorTypeConstr)
    v = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=eig_result_types(t))

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        _check_square(self, t, "operand")
        _check_result_types(self, eig_result_types(t))


def svd_result_types(t: TensorType) -> list[TensorType]:
    """u (..., m, k), s (..., k), vt (..., k, n) with k = min(m, n), for an operand (..., m, n)
    (the operand's type three times for a rank below 2, which the verifier rejects)."""
    if len(t.get_shape()) < 2:
        return [t, t, t]
    *batch, m, n = t.get_shape()
    k = min(m, n)
    e = t.get_element_type()
    return [tensor([*batch, m, k], e), tensor([*batch, k], e), tensor([*batch, k, n], e)]


@irdl_op_definition
class SvdOp(NNOperation):
    """Reduced singular value decomposition, A = U diag(s) V^T (LAPACK's gesdd).

    For A (..., m, n) and k = min(m, n): `u` (..., m, k) and `vt` (..., k, n) with orthonormal
    columns (rows), `s` (..., k) descending and >= 0. Signs are fixed as nn.eigh's: each column
    of u has its first entry of at least half the column's largest magnitude positive, and the
    matching row of vt is flipped with it (the product is unchanged). A NaN in A makes that
    batch element's results NaN.

    `%u, %s, %vt = nn.svd %a : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3xf64>, tensor<3x3xf64>)`
    """

    name = "nn.svd"
    operand = operand_def(AnyTensorTypeConstr)
    u = result_def(AnyTensorTypeConstr)
    s = result_def(AnyTensorTypeConstr)
    vt = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=svd_result_types(t))

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        if len(t.get_shape()) < 2:
            raise self.error(f"operand must be a matrix or a batch of them (..., m, n), got {shape_str(t)}")
        _check_result_types(self, svd_result_types(t))


def qr_result_types(t: TensorType) -> list[TensorType]:
    """q (..., m, n) and r (..., n, n) for an operand (..., m, n), m >= n (the operand's type
    twice for a rank below 2, which the verifier rejects)."""
    if len(t.get_shape()) < 2:
        return [t, t]
    *batch, _, n = t.get_shape()
    return [t, tensor([*batch, n, n], t.get_element_type())]


@irdl_op_definition
class QrOp(NNOperation):
    """Reduced QR factorization of a tall or square matrix, A = Q R (LAPACK's geqrf + orgqr).

    For A (..., m, n) with m >= n: `q` (..., m, n) with orthonormal columns and `r` (..., n, n)
    upper triangular. Householder reflections with LAPACK's signs: R's diagonal entry j is
    -sign(a_jj) times the norm of the reflected column (sign(0) = +), and where that column is
    already zero below the diagonal there is no reflection (r_jj = a_jj). So q and r match
    numpy.linalg.qr. A wide A (m < n) is the frontend's business (QR of its first m columns).

    `%q, %r = nn.qr %a : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3x3xf64>)`
    """

    name = "nn.qr"
    operand = operand_def(AnyTensorTypeConstr)
    q = result_def(AnyTensorTypeConstr)
    r = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=qr_result_types(t))

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        shape = t.get_shape()
        if len(shape) < 2 or shape[-2] < shape[-1]:
            raise self.error(f"operand must be a tall or square matrix or a batch of them (..., m, n) with m >= n, got {shape_str(t)}")
        _check_result_types(self, qr_result_types(t))
