"""The `nn` dialect's Python builders infer result types, and its verifiers reject malformed IR.

Every op is built inside a `func.func` whose block arguments have the operand types, then the
module is verified: builders must produce IR the verifier accepts, and each verifier rule must fire
with its message. `tests/filecheck/dialects/nn/` checks the same rules through the textual syntax.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import StringIO

import pytest
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Builtin,
    ComplexType,
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.func import Func, FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from irgrad.dialects import nn
from irgrad.dialects.nn import (
    NN,
    AbsOp,
    AddOp,
    AndOp,
    BroadcastInDimOp,
    CholeskyOp,
    CompareOp,
    ConcatenateOp,
    ConstantOp,
    ConvertOp,
    Col2ImOp,
    Conv2DOp,
    CosOp,
    ErfOp,
    DivOp,
    DynamicSliceOp,
    DynamicUpdateSliceOp,
    ExpOp,
    FullOp,
    GatherOp,
    Im2ColOp,
    IotaOp,
    LogOp,
    LUOp,
    EigOp,
    EighOp,
    SvdOp,
    QrOp,
    MatmulOp,
    MaximumOp,
    MaxPool2DOp,
    MinimumOp,
    MulOp,
    NegOp,
    OrOp,
    PadOp,
    PowOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceSumOp,
    ReluOp,
    ReshapeOp,
    RsqrtOp,
    ScatterAddOp,
    SelectOp,
    ShiftLeftOp,
    ShiftRightLogicalOp,
    SigmoidOp,
    SignOp,
    SinOp,
    SliceOp,
    SqrtOp,
    SubOp,
    TanhOp,
    TriangularSolveOp,
    TransposeOp,
    XorOp,
)

f16 = Float16Type()
bf16 = BFloat16Type()
index = IndexType()


C64, C128 = ComplexType(f32), ComplexType(f64)


def T(*shape: int, element: Attribute = f32) -> TensorType:
    """`T(2, 3)` is tensor<2x3xf32>; `T()` is rank 0."""
    return TensorType(element, list(shape))


def I64s(*values: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


# ---------------------------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------------------------

Args = Sequence[SSAValue]
Make = Callable[[Args], Operation]


class Body:
    """A module with one `func.func` whose block arguments feed the op under test."""

    def __init__(self, arg_types: Sequence[Attribute]):
        self.func = FuncOp("f", (list(arg_types), []))
        self.ret = ReturnOp()
        self.func.body.block.add_op(self.ret)
        self.module = ModuleOp([self.func])

    @property
    def args(self) -> Args:
        return self.func.body.block.args

    def add(self, op: Operation) -> Operation:
        self.func.body.block.insert_op_before(op, self.ret)
        return op


def build(arg_types: Sequence[Attribute], make: Make) -> tuple[Body, Operation]:
    body = Body(arg_types)
    return body, body.add(make(body.args))


def assert_rejected(arg_types: Sequence[Attribute], make: Make, message: str) -> None:
    body, _ = build(arg_types, make)
    with pytest.raises(VerifyException, match=re.escape(message)):
        body.module.verify()


def context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, NN):
        ctx.load_dialect(dialect)
    return ctx


def parse(text: str) -> ModuleOp:
    return Parser(context(), text).parse_module()


def print_op(op: Operation) -> str:
    out = StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# Builders infer the result type, and what they build verifies
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inferred:
    id: str
    arg_types: tuple[Attribute, ...]
    make: Make
    result: Attribute


def dense(t: TensorType, values: Sequence[float] | Sequence[int]) -> DenseIntOrFPElementsAttr:
    return DenseIntOrFPElementsAttr.from_list(t, values)  # pyright: ignore[reportArgumentType]


UNARY_FLOAT = (ExpOp, LogOp, TanhOp, SigmoidOp, SqrtOp, RsqrtOp, SinOp, CosOp, ErfOp)
UNARY_NUMERIC = (NegOp, AbsOp, SignOp, ReluOp)
BINARY = (AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp)
BITWISE = (AndOp, OrOp, XorOp)
SHIFTS = (ShiftLeftOp, ShiftRightLogicalOp)

INFERRED: list[Inferred] = [
    # Creation
    Inferred("constant", (), lambda a: ConstantOp(dense(T(2), [1.0, 2.0])), T(2)),
    Inferred("constant_i1_rank0", (), lambda a: ConstantOp(dense(T(element=i1), [1])), T(element=i1)),
    Inferred("full_f32", (), lambda a: FullOp(0.5, T(2, 3)), T(2, 3)),
    Inferred("full_nan_bf16", (), lambda a: FullOp(math.nan, T(2, element=bf16)), T(2, element=bf16)),
    Inferred("full_bool", (), lambda a: FullOp(True, T(element=i1)), T(element=i1)),
    Inferred("full_negative_i64", (), lambda a: FullOp(-3, T(0, element=i64)), T(0, element=i64)),
    Inferred("iota", (), lambda a: IotaOp(1, T(2, 3, element=i32)), T(2, 3, element=i32)),
    # Elementwise: the result type is the operand type, for every element type an op accepts.
    *(
        Inferred(f"{op.name}_{e}", (T(2, 3, element=e),), lambda a, op=op: op(a[0]), T(2, 3, element=e))
        for op in UNARY_FLOAT
        for e in (f16, bf16, f32, f64)
    ),
    *(
        Inferred(f"{op.name}_{e}", (T(4, element=e),), lambda a, op=op: op(a[0]), T(4, element=e))
        for op in UNARY_NUMERIC
        for e in (f32, i32, i64)
    ),
    *(
        Inferred(f"{op.name}_rank0", (T(), T()), lambda a, op=op: op(a[0], a[1]), T())
        for op in BINARY
    ),
    *(
        Inferred(f"{op.name}_i64", (T(4, element=i64),) * 2, lambda a, op=op: op(a[0], a[1]), T(4, element=i64))
        for op in (AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp)
    ),
    Inferred("maximum_i1", (T(4, element=i1),) * 2, lambda a: MaximumOp(a[0], a[1]), T(4, element=i1)),
    *(
        Inferred(f"compare_{d}", (T(2, 3), T(2, 3)), lambda a, d=d: CompareOp(d, a[0], a[1]), T(2, 3, element=i1))
        for d in nn.COMPARISON_DIRECTIONS
    ),
    Inferred(
        "select", (T(4, element=i1), T(4, element=i32), T(4, element=i32)),
        lambda a: SelectOp(a[0], a[1], a[2]), T(4, element=i32),
    ),
    Inferred("convert_f16", (T(2, 3),), lambda a: ConvertOp(a[0], f16), T(2, 3, element=f16)),
    Inferred("convert_i1", (T(0, element=i64),), lambda a: ConvertOp(a[0], i1), T(0, element=i1)),
    *(
        Inferred(f"{op.name}_{e}", (T(2, 3, element=e),) * 2, lambda a, op=op: op(a[0], a[1]), T(2, 3, element=e))
        for op in BITWISE
        for e in (i1, i32, i64)
    ),
    *(
        Inferred(f"{op.name}_{e}", (T(4, element=e),) * 2, lambda a, op=op: op(a[0], a[1]), T(4, element=e))
        for op in SHIFTS
        for e in (i32, i64)
    ),
    *(Inferred(f"{op.name}_rank0", (T(element=i32),) * 2, lambda a, op=op: op(a[0], a[1]), T(element=i32)) for op in SHIFTS),
    # Reductions
    Inferred("reduce_sum", (T(2, 3, 4),), lambda a: ReduceSumOp(a[0], axes=[1]), T(2, 4)),
    Inferred("reduce_sum_keepdims", (T(2, 3, 4),), lambda a: ReduceSumOp(a[0], axes=[1], keepdims=True), T(2, 1, 4)),
    Inferred("reduce_sum_all", (T(2, 3, 4),), lambda a: ReduceSumOp(a[0], axes=[0, 1, 2]), T()),
    Inferred("reduce_sum_none", (T(2, 3),), lambda a: ReduceSumOp(a[0], axes=[]), T(2, 3)),
    Inferred("reduce_max_negative_axis", (T(2, 3, element=i32),), lambda a: ReduceMaxOp(a[0], axes=[-1]), T(2, element=i32)),
    Inferred("reduce_min_zero_size", (T(0, 3, element=f64),), lambda a: ReduceMinOp(a[0], axes=[0], keepdims=True), T(1, 3, element=f64)),
    # Shape manipulation
    Inferred("broadcast_in_dim", (T(3),), lambda a: BroadcastInDimOp(a[0], [2, 3], [1]), T(2, 3)),
    Inferred("broadcast_in_dim_scalar", (T(element=i1),), lambda a: BroadcastInDimOp(a[0], [4], []), T(4, element=i1)),
    Inferred("broadcast_in_dim_size1", (T(1, 3),), lambda a: BroadcastInDimOp(a[0], [5, 3], [0, 1]), T(5, 3)),
    Inferred("reshape", (T(2, 3),), lambda a: ReshapeOp(a[0], [3, 1, 2]), T(3, 1, 2)),
    Inferred("reshape_rank0", (T(1, 1),), lambda a: ReshapeOp(a[0], []), T()),
    Inferred("transpose", (T(2, 3, 4),), lambda a: TransposeOp(a[0], [2, 0, 1]), T(4, 2, 3)),
    Inferred("slice", (T(4, 6),), lambda a: SliceOp(a[0], [1, 0], [3, 6]), T(2, 6)),
    Inferred("slice_strided", (T(4, 6),), lambda a: SliceOp(a[0], [0, 1], [4, 6], [2, 3]), T(2, 2)),
    Inferred("slice_reverse", (T(4, 6),), lambda a: SliceOp(a[0], [3, 5], [-1, -1], [-1, -2]), T(4, 3)),
    Inferred("slice_empty", (T(4, 6),), lambda a: SliceOp(a[0], [2, 0], [2, 6]), T(0, 6)),
    Inferred(
        "dynamic_slice", (T(4, 3), index, i32),
        lambda a: DynamicSliceOp(a[0], [a[1], a[2]], [1, 3]), T(1, 3),
    ),
    Inferred(
        "dynamic_update_slice", (T(4, 3, element=i64), T(1, 3, element=i64), i64, index),
        lambda a: DynamicUpdateSliceOp(a[0], a[1], [a[2], a[3]]), T(4, 3, element=i64),
    ),
    Inferred("concatenate", (T(2, 3), T(1, 3), T(0, 3)), lambda a: ConcatenateOp(a, 0), T(3, 3)),
    Inferred("concatenate_dim1", (T(2, 3), T(2, 1)), lambda a: ConcatenateOp(a, 1), T(2, 4)),
    Inferred("concatenate_one", (T(2, 3),), lambda a: ConcatenateOp(a, 1), T(2, 3)),
    Inferred("pad", (T(2, 3), T()), lambda a: PadOp(a[0], a[1], [0, 1], [1, 0]), T(3, 4)),
    # Linear algebra and NN
    Inferred("matmul", (T(4, 3), T(3, 5)), lambda a: MatmulOp(a[0], a[1]), T(4, 5)),
    Inferred(
        "matmul_batched", (T(2, 6, 4, 3, element=i32), T(2, 6, 3, 1, element=i32)),
        lambda a: MatmulOp(a[0], a[1]), T(2, 6, 4, 1, element=i32),
    ),
    Inferred("conv2d_defaults", (T(1, 3, 8, 8), T(4, 3, 3, 3)), lambda a: Conv2DOp(a[0], a[1]), T(1, 4, 6, 6)),
    Inferred(
        "conv2d_same", (T(1, 3, 8, 8), T(4, 3, 3, 3)),
        lambda a: Conv2DOp(a[0], a[1], (1, 1), (1, 1, 1, 1), (1, 1)), T(1, 4, 8, 8),
    ),
    Inferred(
        "conv2d_strided_dilated", (T(2, 1, 5, 7, element=f16), T(6, 1, 2, 3, element=f16)),
        lambda a: Conv2DOp(a[0], a[1], stride=(1, 2), padding=(0, 1, 2, 0), dilation=(2, 1)),
        T(2, 6, 4, 4, element=f16),
    ),
    Inferred("max_pool2d", (T(1, 3, 8, 8),), lambda a: MaxPool2DOp(a[0], [2, 2]), T(1, 3, 4, 4)),
    Inferred(
        "max_pool2d_padded", (T(2, 1, 5, 5, element=f64),),
        lambda a: MaxPool2DOp(a[0], [2, 3], [2, 1], [1, 0, 0, 2]), T(2, 1, 3, 5, element=f64),
    ),
    Inferred(
        "im2col", (T(2, 3, 8, 8),), lambda a: Im2ColOp(a[0], [3, 3], [1, 1], [1, 1, 1, 1]), T(27, 128),
    ),
    Inferred(
        "im2col_strided_dilated", (T(2, 1, 9, 7, element=f16),),
        lambda a: Im2ColOp(a[0], [2, 3], [2, 1], [0, 1, 2, 0], [2, 1]), T(6, 2 * 4 * 7, element=f16),
    ),
    Inferred(
        "col2im", (T(27, 128),), lambda a: Col2ImOp(a[0], [2, 3, 8, 8], [3, 3], [1, 1], [1, 1, 1, 1]), T(2, 3, 8, 8),
    ),
    Inferred("gather", (T(5, 3), T(4, element=i32)), lambda a: GatherOp(a[0], a[1], 0), T(4, 3)),
    Inferred("gather_inner", (T(5, 3), T(2, 2, element=i64)), lambda a: GatherOp(a[0], a[1], 1), T(5, 2, 2)),
    Inferred("gather_scalar_index", (T(5, 3), T(element=i32)), lambda a: GatherOp(a[0], a[1], 0), T(3)),
    Inferred(
        "scatter_add", (T(5, 3), T(4, element=i32), T(4, 3)),
        lambda a: ScatterAddOp(a[0], a[1], a[2], 0), T(5, 3),
    ),
    # Dense linear algebra (f32/f64, the last two dimensions, leading batch dimensions)
    Inferred("cholesky", (T(4, 4, element=f64),), lambda a: CholeskyOp(a[0]), T(4, 4, element=f64)),
    Inferred("cholesky_batched_f32", (T(2, 3, 3),), lambda a: CholeskyOp(a[0]), T(2, 3, 3)),
    Inferred(
        "triangular_solve_lower", (T(4, 4, element=f64), T(4, 2, element=f64)),
        lambda a: TriangularSolveOp(a[0], a[1], lower=True), T(4, 2, element=f64),
    ),
    Inferred(
        "triangular_solve_upper_unit_batched", (T(2, 3, 3), T(2, 3, 5)),
        lambda a: TriangularSolveOp(a[0], a[1], lower=False, unit_diagonal=True), T(2, 3, 5),
    ),
    Inferred("lu", (T(4, 4, element=f64),), lambda a: LUOp(a[0]), T(4, 4, element=f64)),
    Inferred("lu_batched_f32", (T(2, 3, 3, 3),), lambda a: LUOp(a[0]), T(2, 3, 3, 3)),
    Inferred("eigh", (T(4, 4, element=f64),), lambda a: EighOp(a[0]), T(4, element=f64)),
    Inferred("eigh_batched_f32", (T(2, 3, 3),), lambda a: EighOp(a[0]), T(2, 3)),
    Inferred("eig", (T(4, 4, element=f64),), lambda a: EigOp(a[0]), T(4, 2, element=f64)),
    Inferred("eig_batched_f32", (T(2, 3, 3),), lambda a: EigOp(a[0]), T(2, 3, 2)),
    Inferred("svd_tall", (T(5, 3, element=f64),), lambda a: SvdOp(a[0]), T(5, 3, element=f64)),
    Inferred("svd_wide_batched", (T(2, 3, 5),), lambda a: SvdOp(a[0]), T(2, 3, 3)),
    Inferred("qr_tall", (T(5, 3, element=f64),), lambda a: QrOp(a[0]), T(5, 3, element=f64)),
    Inferred("qr_batched_square", (T(2, 4, 4),), lambda a: QrOp(a[0]), T(2, 4, 4)),
    # Complex numbers: the parts, and the arithmetic ops that take complex tensors
    Inferred("real_c64", (T(2, 3, element=C64),), lambda a: nn.RealOp(a[0]), T(2, 3)),
    Inferred("imag_c128", (T(4, element=C128),), lambda a: nn.ImagOp(a[0]), T(4, element=f64)),
    Inferred("complex_f64", (T(4, element=f64),) * 2, lambda a: nn.ComplexOp(a[0], a[1]), T(4, element=C128)),
    Inferred("conj_c64", (T(element=C64),), lambda a: nn.ConjOp(a[0]), T(element=C64)),
    # The Fourier transform: FFT keeps the type, RFFT halves the last axis, IRFFT restores it
    Inferred("fft_2d_c64", (T(3, 4, 8, element=C64),), lambda a: nn.FftOp(a[0], "FFT", [4, 8]), T(3, 4, 8, element=C64)),
    Inferred("rfft_f64", (T(2, 6, element=f64),), lambda a: nn.FftOp(a[0], "RFFT", [6]), T(2, 4, element=C128)),
    Inferred("irfft_c128", (T(2, 4, element=C128),), lambda a: nn.FftOp(a[0], "IRFFT", [7]), T(2, 7, element=f64)),
    *(
        Inferred(f"{op.name}_c64", (T(3, element=C64),) * 2, lambda a, op=op: op(a[0], a[1]), T(3, element=C64))
        for op in (AddOp, SubOp, MulOp, DivOp)
    ),
    *(
        Inferred(f"{op.name}_c128", (T(3, element=C128),), lambda a, op=op: op(a[0]), T(3, element=C128))
        for op in (NegOp, ExpOp, SinOp, CosOp)
    ),
    Inferred("convert_f32_to_c64", (T(3),), lambda a: ConvertOp(a[0], C64), T(3, element=C64)),
    Inferred("matmul_c64", (T(2, 3, element=C64), T(3, 4, element=C64)), lambda a: MatmulOp(a[0], a[1]), T(2, 4, element=C64)),
]


@pytest.mark.parametrize("case", INFERRED, ids=[c.id for c in INFERRED])
def test_builder_infers_result_type(case: Inferred) -> None:
    body, op = build(case.arg_types, case.make)
    assert op.results[0].type == case.result
    body.module.verify()


def test_every_op_has_a_builder_case() -> None:
    built = {type(build(c.arg_types, c.make)[1]) for c in INFERRED}
    missing = {op.name for op in NN.operations} - {op.name for op in built}
    assert not missing, f"no builder case for {sorted(missing)}"
    assert len(list(NN.operations)) == 61


# ---------------------------------------------------------------------------------------------
# Builder details
# ---------------------------------------------------------------------------------------------


def test_full_stores_value_in_element_type() -> None:
    assert FullOp(2, T(3)).value == FloatAttr(2.0, f32)
    assert FullOp(-1, T(3, element=i32)).value == IntegerAttr(-1, i32)
    assert FullOp(True, T(element=i1)).value == IntegerAttr(1, i1)
    inf = FullOp(-math.inf, T(element=f16)).value
    assert isinstance(inf, FloatAttr) and inf.value.data == -math.inf


def test_reduce_builder_normalizes_negative_axes_only() -> None:
    body, op = build((T(2, 3, 4),), lambda a: ReduceSumOp(a[0], axes=[-1, -3]))
    assert isinstance(op, ReduceSumOp)
    assert op.axes.get_values() == (2, 0)
    # An out-of-range axis is kept as written, so the verifier reports it instead of wrapping it.
    body, op = build((T(2, 3),), lambda a: ReduceSumOp(a[0], axes=[5]))
    assert isinstance(op, ReduceSumOp) and op.axes.get_values() == (5,)
    with pytest.raises(VerifyException, match=re.escape("axes [5] out of range for operand of rank 2")):
        body.module.verify()


def test_slice_builder_defaults_to_unit_stride() -> None:
    _, op = build((T(4),), lambda a: SliceOp(a[0], [1], [3]))
    assert isinstance(op, SliceOp) and op.stride.get_values() == (1,)


def test_max_pool2d_stride_defaults_to_kernel() -> None:
    _, op = build((T(1, 1, 6, 6),), lambda a: MaxPool2DOp(a[0], [3, 2]))
    assert isinstance(op, MaxPool2DOp) and op.stride.get_values() == (3, 2)


def test_compare_builder_rejects_unknown_direction() -> None:
    body = Body((T(2), T(2)))
    with pytest.raises(ValueError, match="unknown direction 'lq'"):
        CompareOp("lq", body.args[0], body.args[1])


def test_compare_direction_name() -> None:
    _, op = build((T(2), T(2)), lambda a: CompareOp("ge", a[0], a[1]))
    assert isinstance(op, CompareOp) and op.direction_name == "ge"


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "limit", "stride", "length"),
    [
        (0, 4, 1, 4),
        (1, 3, 1, 2),
        (0, 5, 2, 3),
        (2, 2, 1, 0),
        (3, 1, 1, 0),
        (3, -1, -1, 4),
        (5, -1, -2, 3),
        (2, 0, -1, 2),
        (0, 3, -1, 0),
    ],
)
def test_slice_length(start: int, limit: int, stride: int, length: int) -> None:
    assert nn.slice_length(start, limit, stride) == length
    assert nn.slice_length(start, limit, stride) == len(range(start, limit, stride))


def test_slice_length_of_zero_stride_is_zero() -> None:
    """So that a builder given stride 0 still makes an op, which the verifier then rejects."""
    assert nn.slice_length(0, 4, 0) == 0


def test_conv_output_size() -> None:
    assert nn.conv_output_size(8, 3, 1, 1, 1, 1) == 8
    assert nn.conv_output_size(8, 3, 2, 0, 0, 1) == 3
    assert nn.conv_output_size(8, 3, 1, 0, 0, 2) == 4
    assert nn.conv_output_size(2, 3, 1, 0, 0, 1) == 0
    # Never negative, and 0 for a non-positive stride: the verifier names the fault.
    assert nn.conv_output_size(2, 7, 1, 0, 0, 1) == 0
    assert nn.conv_output_size(8, 2, 0, 0, 0, 1) == 0
    assert nn.conv_output_size(8, 2, -2, 0, 0, 1) == 0


def test_reduced_shape_and_shape_str() -> None:
    assert nn.reduced_shape([2, 3, 4], [0, 2], keepdims=False) == [3]
    assert nn.reduced_shape([2, 3, 4], [0, 2], keepdims=True) == [1, 3, 1]
    assert nn.shape_str(T(4, 3)) == "4x3"
    assert nn.shape_str(T()) == "scalar"
    assert nn.gather_shape([5, 3], [2, 2], 1) == [5, 2, 2]


def test_element_type_predicates() -> None:
    for t in (f16, bf16, f32, f64):
        assert nn.is_float(t) and not nn.is_int(t)
    for t in (i1, i32, i64):
        assert nn.is_int(t)
    assert nn.is_bool(i1) and not nn.is_bool(i32)
    for t in (i8, i16, IntegerType(32, Signedness.SIGNED), IntegerType(1, Signedness.UNSIGNED), index):
        assert not nn.is_int(t) and not nn.is_bool(t)


# ---------------------------------------------------------------------------------------------
# The verifier rejects malformed IR with the rule's message
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rejected:
    id: str
    arg_types: tuple[Attribute, ...]
    make: Make
    message: str


def generic(op: type[Operation], args: Args, result: Attribute, **props: Attribute) -> Operation:
    """An op with a spelled-out result type and properties: IR that a builder would not produce."""
    return op.create(operands=list(args), result_types=[result], properties=props)


REJECTED: list[Rejected] = [
    # Checks on every op
    Rejected(
        "element_type_i8", (T(4, element=i8),), lambda a: NegOp(a[0]),
        "'nn.neg' op operand #0 has element type i8; nn tensors hold f16, bf16, f32, f64, i1, i32, i64, "
        "complex<f32> or complex<f64>",
    ),
    Rejected(
        "element_type_si32", (T(4, element=IntegerType(32, Signedness.SIGNED)),), lambda a: AbsOp(a[0]),
        "'nn.abs' op operand #0 has element type si32",
    ),
    Rejected(
        "result_element_type_i16", (T(4),), lambda a: ConvertOp(a[0], i16),
        "'nn.convert' op result #0 has element type i16",
    ),
    Rejected(
        "dynamic_shape", (T(DYNAMIC_INDEX),), lambda a: ExpOp(a[0]),
        "'nn.exp' op operand #0 has a dynamic shape tensor<?xf32>; nn shapes are static",
    ),
    Rejected(
        "result_not_inferred", (T(4, 3), T(3, 5)), lambda a: generic(MatmulOp, a, T(4, 3)),
        "'nn.matmul' op result type tensor<4x3xf32> does not match the inferred type tensor<4x5xf32>",
    ),
    # Creation
    Rejected(
        "constant_result", (), lambda a: ConstantOp.create(
            properties={"value": dense(T(2), [1.0, 2.0])}, result_types=[T(3)]
        ),
        "'nn.constant' op result type tensor<3xf32> does not match the inferred type tensor<2xf32>",
    ),
    Rejected(
        "full_value_type", (), lambda a: FullOp.create(
            properties={"value": FloatAttr(1.0, f64)}, result_types=[T(2)]
        ),
        "'nn.full' op value type f64 does not match the element type of tensor<2xf32>",
    ),
    Rejected(
        "iota_dimension", (), lambda a: IotaOp(2, T(2, 3, element=i32)),
        "'nn.iota' op dimension 2 is out of range for result of rank 2",
    ),
    Rejected(
        "iota_rank0", (), lambda a: IotaOp(0, T(element=i32)),
        "'nn.iota' op dimension 0 is out of range for result of rank 0",
    ),
    Rejected(
        "iota_i1", (), lambda a: IotaOp(0, T(4, element=i1)),
        "'nn.iota' op result must be numeric (not i1), got tensor<4xi1>",
    ),
    # Elementwise
    *(
        Rejected(
            f"{op.name}_int", (T(4, element=i32),), lambda a, op=op: op(a[0]),
            f"'{op.name}' op operand must have a {'floating-point or complex' if op.COMPLEX else 'floating-point'} "
            "element type, got tensor<4xi32>",
        )
        for op in UNARY_FLOAT
    ),
    *(
        Rejected(
            f"{op.name}_i1", (T(4, element=i1),), lambda a, op=op: op(a[0]),
            f"'{op.name}' op operand must be numeric (not i1), got tensor<4xi1>",
        )
        for op in UNARY_NUMERIC
    ),
    Rejected(
        "pow_int", (T(4, element=i32),) * 2, lambda a: PowOp(a[0], a[1]),
        "'nn.pow' op operand must have a floating-point or complex element type, got tensor<4xi32>",
    ),
    *(
        Rejected(
            f"{op.name}_i1", (T(4, element=i1),) * 2, lambda a, op=op: op(a[0], a[1]),
            f"'{op.name}' op operand must be numeric (not i1), got tensor<4xi1>",
        )
        for op in (AddOp, SubOp, MulOp, DivOp)
    ),
    Rejected(
        "add_shapes", (T(4), T(3)), lambda a: AddOp(a[0], a[1]),
        "operand 'rhs' at position 1 does not verify",
    ),
    Rejected(
        "add_ranks", (T(4), T(1, 4)), lambda a: AddOp(a[0], a[1]),
        "attribute tensor<4xf32> expected from variable 'T', but got tensor<1x4xf32>",
    ),
    Rejected(
        "add_dtypes", (T(4), T(4, element=f16)), lambda a: AddOp(a[0], a[1]),
        "attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf16>",
    ),
    Rejected(
        "compare_operands", (T(4), T(4, element=i32)), lambda a: CompareOp("eq", a[0], a[1]),
        "attribute tensor<4xf32> expected from variable 'T', but got tensor<4xi32>",
    ),
    Rejected(
        "compare_result", (T(4), T(4)),
        lambda a: generic(CompareOp, a, T(4), direction=IntegerAttr(0, i64)),
        "'nn.compare' op result type tensor<4xf32> does not match the inferred type tensor<4xi1>",
    ),
    Rejected(
        "compare_direction", (T(4), T(4)),
        lambda a: generic(CompareOp, a, T(4, element=i1), direction=IntegerAttr(6, i64)),
        "'nn.compare' op unknown comparison direction 6",
    ),
    Rejected(
        "select_pred_type", (T(4, element=i32), T(4), T(4)), lambda a: SelectOp(a[0], a[1], a[2]),
        "'nn.select' op predicate must have element type i1, got tensor<4xi32>",
    ),
    Rejected(
        "select_pred_shape", (T(element=i1), T(4), T(4)), lambda a: SelectOp(a[0], a[1], a[2]),
        "'nn.select' op predicate shape scalar differs from operand shape 4",
    ),
    Rejected(
        "convert_shape", (T(4),), lambda a: generic(ConvertOp, a, T(2, 2, element=f16)),
        "'nn.convert' op result type tensor<2x2xf16> does not match the inferred type tensor<4xf16>",
    ),
    *(
        Rejected(
            f"{op.name}_{e}", (T(4, element=e),) * 2, lambda a, op=op: op(a[0], a[1]),
            f"'{op.name}' op operand must have an integer element type (i1, i32 or i64), got tensor<4x{e}>",
        )
        for op in BITWISE
        for e in (f32, bf16)
    ),
    *(
        Rejected(
            f"{op.name}_{e}", (T(4, element=e),) * 2, lambda a, op=op: op(a[0], a[1]),
            f"'{op.name}' op operand must have element type i32 or i64, got tensor<4x{e}>",
        )
        for op in SHIFTS
        for e in (i1, f64)
    ),
    Rejected(
        "shift_amount_type", (T(4, element=i32), T(4, element=i64)), lambda a: ShiftLeftOp(a[0], a[1]),
        "attribute tensor<4xi32> expected from variable 'T', but got tensor<4xi64>",
    ),
    # Reductions
    Rejected(
        "reduce_axis_range", (T(2, 3),), lambda a: ReduceSumOp(a[0], axes=[2]),
        "'nn.reduce_sum' op axes [2] out of range for operand of rank 2",
    ),
    Rejected(
        "reduce_axis_negative", (T(2, 3),), lambda a: ReduceMaxOp(a[0], axes=[-3]),
        "'nn.reduce_max' op axes [-3] out of range for operand of rank 2",
    ),
    Rejected(
        "reduce_axis_duplicate", (T(2, 3),), lambda a: ReduceMinOp(a[0], axes=[1, -1]),
        "'nn.reduce_min' op axes [1, 1] contain duplicates",
    ),
    Rejected(
        "reduce_sum_i1", (T(4, element=i1),), lambda a: ReduceSumOp(a[0], axes=[0]),
        "'nn.reduce_sum' op operand must be numeric (not i1), got tensor<4xi1>",
    ),
    Rejected(
        "reduce_keepdims", (T(2, 3),),
        lambda a: generic(ReduceSumOp, a, T(2), axes=I64s(1), keepdims=UnitAttr()),
        "'nn.reduce_sum' op result type tensor<2xf32> does not match the inferred type tensor<2x1xf32>",
    ),
    # Shape manipulation
    Rejected(
        "broadcast_dtype", (T(3),), lambda a: generic(BroadcastInDimOp, a, T(2, 3, element=f64), dims=I64s(1)),
        "'nn.broadcast_in_dim' op element types differ: operand tensor<3xf32>, result tensor<2x3xf64>",
    ),
    Rejected(
        "broadcast_dims_count", (T(2, 3),), lambda a: BroadcastInDimOp(a[0], [2, 3], [1]),
        "'nn.broadcast_in_dim' op dims [1] has 1 entries, operand 2x3 has rank 2",
    ),
    Rejected(
        "broadcast_dims_range", (T(3),), lambda a: BroadcastInDimOp(a[0], [2, 3], [2]),
        "'nn.broadcast_in_dim' op dims [2] out of range for result of rank 2",
    ),
    Rejected(
        "broadcast_dims_duplicate", (T(3, 3),), lambda a: BroadcastInDimOp(a[0], [2, 3], [1, 1]),
        "'nn.broadcast_in_dim' op dims [1, 1] contain duplicates",
    ),
    Rejected(
        "broadcast_incompatible", (T(3),), lambda a: BroadcastInDimOp(a[0], [2, 4], [1]),
        "'nn.broadcast_in_dim' op operand dimension 0 (size 3) cannot broadcast to result dimension 1 "
        "(size 4): operand 3, result 2x4",
    ),
    Rejected(
        "reshape_dtype", (T(6),), lambda a: generic(ReshapeOp, a, T(2, 3, element=i32)),
        "'nn.reshape' op element types differ: operand tensor<6xf32>, result tensor<2x3xi32>",
    ),
    Rejected(
        "reshape_count", (T(2, 3),), lambda a: ReshapeOp(a[0], [5]),
        "'nn.reshape' op element counts differ: operand 2x3 (6), result 5 (5)",
    ),
    Rejected(
        "transpose_duplicate", (T(2, 3),), lambda a: TransposeOp(a[0], [0, 0]),
        "'nn.transpose' op perm [0, 0] is not a permutation of 0..1",
    ),
    Rejected(
        "transpose_short", (T(2, 3),), lambda a: TransposeOp(a[0], [1]),
        "'nn.transpose' op perm [1] is not a permutation of 0..1",
    ),
    Rejected(
        "transpose_range", (T(2, 3),), lambda a: generic(TransposeOp, a, T(2, 3), perm=I64s(0, 2)),
        "'nn.transpose' op perm [0, 2] is not a permutation of 0..1",
    ),
    Rejected(
        "slice_entries", (T(4, 6),), lambda a: SliceOp(a[0], [0, 0], [4, 6], [1]),
        "'nn.slice' op start, limit and stride need 2 entries (operand 4x6), got 2, 2 and 1",
    ),
    Rejected(
        "slice_zero_stride", (T(4, 6),), lambda a: generic(
            SliceOp, a, T(4, 6), start=I64s(0, 0), limit=I64s(4, 6), stride=I64s(1, 0)
        ),
        "'nn.slice' op stride of dimension 1 is 0",
    ),
    Rejected(
        "slice_zero_stride_builder", (T(4, 6),), lambda a: SliceOp(a[0], [0, 0], [4, 6], [0, 1]),
        "'nn.slice' op stride of dimension 0 is 0",
    ),
    Rejected(
        "slice_past_end", (T(4, 6),), lambda a: SliceOp(a[0], [0, 0], [5, 6]),
        "'nn.slice' op dimension 0: slice start 0, limit 5, stride 1 reads outside 0..3 of operand 4x6",
    ),
    Rejected(
        "slice_negative_start", (T(4, 6),), lambda a: SliceOp(a[0], [0, -2], [4, 6]),
        "'nn.slice' op dimension 1: slice start -2, limit 6, stride 1 reads outside 0..5 of operand 4x6",
    ),
    Rejected(
        "slice_negative_stride", (T(4, 6),), lambda a: SliceOp(a[0], [4, 0], [-1, 6], [-1, 1]),
        "'nn.slice' op dimension 0: slice start 4, limit -1, stride -1 reads outside 0..3 of operand 4x6",
    ),
    Rejected(
        "dynamic_slice_rank0", (T(),), lambda a: DynamicSliceOp(a[0], [], []),
        "'nn.dynamic_slice' op operand must have rank >= 1",
    ),
    Rejected(
        "dynamic_slice_index_count", (T(4, 3), index), lambda a: DynamicSliceOp(a[0], [a[1]], [1, 3]),
        "'nn.dynamic_slice' op needs 2 start indices (one per operand dimension), got 1",
    ),
    Rejected(
        "dynamic_slice_index_type", (T(4, 3), index, i16),
        lambda a: DynamicSliceOp(a[0], [a[1], a[2]], [1, 3]),
        "'nn.dynamic_slice' op start index #1 must be index, i32 or i64, got i16",
    ),
    Rejected(
        "dynamic_slice_sizes_count", (T(4, 3), index, index),
        lambda a: DynamicSliceOp(a[0], [a[1], a[2]], [1]),
        "'nn.dynamic_slice' op sizes [1] need 2 entries (operand 4x3)",
    ),
    Rejected(
        "dynamic_slice_size", (T(4, 3), index, index),
        lambda a: DynamicSliceOp(a[0], [a[1], a[2]], [1, 4]),
        "'nn.dynamic_slice' op size 4 of dimension 1 exceeds operand 4x3",
    ),
    Rejected(
        "dynamic_update_slice_dtype", (T(4, 3), T(1, 3, element=f64), index, index),
        lambda a: DynamicUpdateSliceOp(a[0], a[1], [a[2], a[3]]),
        "'nn.dynamic_update_slice' op element types differ: operand tensor<4x3xf32>, update tensor<1x3xf64>",
    ),
    Rejected(
        "dynamic_update_slice_large", (T(4, 3), T(5, 3), index, index),
        lambda a: DynamicUpdateSliceOp(a[0], a[1], [a[2], a[3]]),
        "'nn.dynamic_update_slice' op update 5x3 does not fit in operand 4x3",
    ),
    Rejected(
        "dynamic_update_slice_rank", (T(4, 3), T(3), index, index),
        lambda a: DynamicUpdateSliceOp(a[0], a[1], [a[2], a[3]]),
        "'nn.dynamic_update_slice' op update 3 does not fit in operand 4x3",
    ),
    Rejected(
        "dynamic_update_slice_index_count", (T(4, 3), T(1, 3), i32),
        lambda a: DynamicUpdateSliceOp(a[0], a[1], [a[2]]),
        "'nn.dynamic_update_slice' op needs 2 start indices (one per operand dimension), got 1",
    ),
    Rejected(
        "concatenate_empty", (), lambda a: ConcatenateOp.create(
            operands=[], result_types=[T(0)], properties={"dimension": IntegerAttr(0, i64)}
        ),
        "'nn.concatenate' op needs at least one input",
    ),
    Rejected(
        "concatenate_dim_range", (T(2, 3), T(2, 3)),
        lambda a: generic(ConcatenateOp, a, T(2, 3), dimension=IntegerAttr(2, i64)),
        "'nn.concatenate' op dimension 2 out of range for inputs of rank 2",
    ),
    Rejected(
        "concatenate_dtype", (T(2, 3), T(2, 3, element=f16)), lambda a: ConcatenateOp(a, 0),
        "'nn.concatenate' op input #1 element type differs: tensor<2x3xf32> vs tensor<2x3xf16>",
    ),
    Rejected(
        "concatenate_shape", (T(2, 3), T(1, 4)), lambda a: ConcatenateOp(a, 0),
        "'nn.concatenate' op input #1 shape 1x4 differs from input #0 2x3 outside dimension 0",
    ),
    Rejected(
        "pad_value_rank", (T(2, 3), T(1)), lambda a: PadOp(a[0], a[1], [0, 0], [0, 0]),
        "'nn.pad' op padding value must be a rank-0 tensor of f32, got tensor<1xf32>",
    ),
    Rejected(
        "pad_value_dtype", (T(2, 3), T(element=i32)), lambda a: PadOp(a[0], a[1], [0, 0], [0, 0]),
        "'nn.pad' op padding value must be a rank-0 tensor of f32, got tensor<i32>",
    ),
    Rejected(
        "pad_entries", (T(2, 3), T()), lambda a: PadOp(a[0], a[1], [0, 0], [1]),
        "'nn.pad' op low and high need 2 entries (operand 2x3), got 2 and 1",
    ),
    Rejected(
        "pad_negative", (T(2, 3), T()), lambda a: PadOp(a[0], a[1], [0, -1], [1, 0]),
        "'nn.pad' op padding must be non-negative, got low [0, -1], high [1, 0]",
    ),
    Rejected(
        "pad_negative_below_zero", (T(2, 3), T()), lambda a: PadOp(a[0], a[1], [-5, 0], [0, 0]),
        "'nn.pad' op padding must be non-negative, got low [-5, 0], high [0, 0]",
    ),
    # Linear algebra and NN
    Rejected(
        "matmul_dtype", (T(4, 3), T(3, 5, element=f16)), lambda a: MatmulOp(a[0], a[1]),
        "'nn.matmul' op element types differ: lhs tensor<4x3xf32>, rhs tensor<3x5xf16>",
    ),
    Rejected(
        "matmul_i1", (T(4, 3, element=i1), T(3, 5, element=i1)), lambda a: MatmulOp(a[0], a[1]),
        "'nn.matmul' op lhs must be numeric (not i1), got tensor<4x3xi1>",
    ),
    Rejected(
        "matmul_vector", (T(3), T(3, 5)), lambda a: MatmulOp(a[0], a[1]),
        "'nn.matmul' op operands must both be 2-D or batched with equal rank, got lhs 3, rhs 3x5",
    ),
    Rejected(
        "matmul_rank", (T(2, 4, 3), T(3, 5)), lambda a: MatmulOp(a[0], a[1]),
        "'nn.matmul' op operands must both be 2-D or batched with equal rank, got lhs 2x4x3, rhs 3x5",
    ),
    Rejected(
        "matmul_batch", (T(2, 4, 3), T(3, 3, 5)), lambda a: MatmulOp(a[0], a[1]),
        "'nn.matmul' op batch dimensions differ: lhs 2x4x3, rhs 3x3x5",
    ),
    Rejected(
        "matmul_contracting", (T(4, 3), T(5, 2)), lambda a: MatmulOp(a[0], a[1]),
        "'nn.matmul' op contracting dimensions differ: lhs 4x3, rhs 5x2",
    ),
    Rejected(
        "cholesky_f16", (T(4, 4, element=f16),), lambda a: CholeskyOp(a[0]),
        "'nn.cholesky' op operand must be f32 or f64 (LAPACK's real types), got tensor<4x4xf16>",
    ),
    Rejected(
        "cholesky_not_square", (T(4, 3),), lambda a: CholeskyOp(a[0]),
        "'nn.cholesky' op operand must be a square matrix or a batch of them (..., n, n), got 4x3",
    ),
    Rejected(
        "cholesky_vector", (T(4),), lambda a: CholeskyOp(a[0]),
        "'nn.cholesky' op operand must be a square matrix or a batch of them (..., n, n), got 4",
    ),
    Rejected(
        "triangular_solve_dtype", (T(4, 4), T(4, 2, element=f64)),
        lambda a: TriangularSolveOp(a[0], a[1], lower=True),
        "'nn.triangular_solve' op element types differ: a tensor<4x4xf32>, b tensor<4x2xf64>",
    ),
    Rejected(
        "triangular_solve_batch", (T(2, 4, 4), T(3, 4, 2)), lambda a: TriangularSolveOp(a[0], a[1], lower=True),
        "'nn.triangular_solve' op b must be (..., 4, k) with a's batch dimensions, got a 2x4x4, b 3x4x2",
    ),
    Rejected(
        "triangular_solve_rows", (T(4, 4), T(3, 2)), lambda a: TriangularSolveOp(a[0], a[1], lower=False),
        "'nn.triangular_solve' op b must be (..., 4, k) with a's batch dimensions, got a 4x4, b 3x2",
    ),
    Rejected(
        "triangular_solve_vector_rhs", (T(4, 4), T(4)), lambda a: TriangularSolveOp(a[0], a[1], lower=True),
        "'nn.triangular_solve' op b must be (..., 4, k) with a's batch dimensions, got a 4x4, b 4",
    ),
    Rejected(
        "lu_integer", (T(4, 4, element=i32),), lambda a: LUOp(a[0]),
        "'nn.lu' op operand must be f32 or f64 (LAPACK's real types), got tensor<4x4xi32>",
    ),
    Rejected(
        "lu_result_types", (T(4, 4),),
        lambda a: LUOp.create(operands=[a[0]], result_types=[T(4, 4), T(4, element=i32), T(4)]),
        "'nn.lu' op result types (tensor<4x4xf32>, tensor<4xi32>, tensor<4xf32>) do not match the inferred "
        "types (tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>)",
    ),
    Rejected(
        "eigh_not_square", (T(4, 3),), lambda a: EighOp(a[0]),
        "'nn.eigh' op operand must be a square matrix or a batch of them (..., n, n), got 4x3",
    ),
    Rejected(
        "eigh_f16", (T(3, 3, element=f16),), lambda a: EighOp(a[0]),
        "'nn.eigh' op operand must be f32 or f64 (LAPACK's real types), got tensor<3x3xf16>",
    ),
    Rejected(
        "eigh_result_types", (T(3, 3),), lambda a: EighOp.create(operands=[a[0]], result_types=[T(3, 3), T(3, 3)]),
        "'nn.eigh' op result types (tensor<3x3xf32>, tensor<3x3xf32>) do not match the inferred types "
        "(tensor<3xf32>, tensor<3x3xf32>)",
    ),
    Rejected(
        "eig_not_square", (T(4, 3),), lambda a: EigOp(a[0]),
        "'nn.eig' op operand must be a square matrix or a batch of them (..., n, n), got 4x3",
    ),
    Rejected(
        "eig_f16", (T(3, 3, element=f16),), lambda a: EigOp(a[0]),
        "'nn.eig' op operand must be f32 or f64 (LAPACK's real types), got tensor<3x3xf16>",
    ),
    Rejected(
        "eig_result_types", (T(3, 3),), lambda a: EigOp.create(operands=[a[0]], result_types=[T(3, 2), T(3, 3)]),
        "'nn.eig' op result types (tensor<3x2xf32>, tensor<3x3xf32>) do not match the inferred types "
        "(tensor<3x2xf32>, tensor<3x3x2xf32>)",
    ),
    Rejected(
        "svd_vector", (T(4),), lambda a: SvdOp(a[0]),
        "'nn.svd' op operand must be a matrix or a batch of them (..., m, n), got 4",
    ),
    Rejected(
        "svd_integer", (T(4, 4, element=i32),), lambda a: SvdOp(a[0]),
        "'nn.svd' op operand must be f32 or f64 (LAPACK's real types), got tensor<4x4xi32>",
    ),
    Rejected(
        "qr_wide", (T(3, 5),), lambda a: QrOp(a[0]),
        "'nn.qr' op operand must be a tall or square matrix or a batch of them (..., m, n) with m >= n, got 3x5",
    ),
    Rejected(
        "conv2d_dtype", (T(1, 3, 8, 8), T(4, 3, 3, 3, element=f16)), lambda a: Conv2DOp(a[0], a[1]),
        "'nn.conv2d' op element types differ: input tensor<1x3x8x8xf32>, weight tensor<4x3x3x3xf16>",
    ),
    Rejected(
        "conv2d_int", (T(1, 3, 8, 8, element=i32), T(4, 3, 3, 3, element=i32)), lambda a: Conv2DOp(a[0], a[1]),
        "'nn.conv2d' op input must have a floating-point element type, got tensor<1x3x8x8xi32>",
    ),
    Rejected(
        "conv2d_rank", (T(3, 8, 8), T(4, 3, 3, 3)), lambda a: generic(
            Conv2DOp, a, T(4, 6, 6), stride=I64s(1, 1), padding=I64s(0, 0, 0, 0), dilation=I64s(1, 1)
        ),
        "'nn.conv2d' op input (NCHW) and weight (OIHW) must be 4-D, got input 3x8x8, weight 4x3x3x3",
    ),
    Rejected(
        "conv2d_channels", (T(1, 3, 8, 8), T(4, 2, 3, 3)), lambda a: Conv2DOp(a[0], a[1]),
        "'nn.conv2d' op input channels differ: input 1x3x8x8 has 3, weight 4x2x3x3 has 2",
    ),
    Rejected(
        "conv2d_stride", (T(1, 3, 8, 8), T(4, 3, 3, 3)), lambda a: generic(
            Conv2DOp, a, T(1, 4, 6, 6), stride=I64s(0, 1), padding=I64s(0, 0, 0, 0), dilation=I64s(1, 1)
        ),
        "'nn.conv2d' op stride must be 2 positive integers, got [0, 1]",
    ),
    Rejected(
        "conv2d_stride_builder", (T(1, 3, 8, 8), T(4, 3, 3, 3)), lambda a: Conv2DOp(a[0], a[1], stride=(1, 0)),
        "'nn.conv2d' op stride must be 2 positive integers, got [1, 0]",
    ),
    Rejected(
        "conv2d_dilation", (T(1, 3, 8, 8), T(4, 3, 3, 3)), lambda a: generic(
            Conv2DOp, a, T(1, 4, 6, 6), stride=I64s(1, 1), padding=I64s(0, 0, 0, 0), dilation=I64s(1)
        ),
        "'nn.conv2d' op dilation must be 2 positive integers, got [1]",
    ),
    Rejected(
        "conv2d_padding", (T(1, 3, 8, 8), T(4, 3, 3, 3)),
        lambda a: Conv2DOp(a[0], a[1], padding=(1, 1, -1, 1)),
        "'nn.conv2d' op padding must be 4 non-negative integers [top, bottom, left, right], got [1, 1, -1, 1]",
    ),
    Rejected(
        "conv2d_kernel_large", (T(1, 3, 6, 6), T(4, 3, 3, 3)),
        lambda a: Conv2DOp(a[0], a[1], dilation=(3, 1)),
        "'nn.conv2d' op kernel 3x3 (dilation [3, 1]) is larger than the padded input 1x3x6x6",
    ),
    Rejected(
        "max_pool2d_rank", (T(3, 8, 8),), lambda a: generic(
            MaxPool2DOp, a, T(3, 4, 4), kernel=I64s(2, 2), stride=I64s(2, 2), padding=I64s(0, 0, 0, 0)
        ),
        "'nn.max_pool2d' op input must be 4-D (NCHW), got 3x8x8",
    ),
    Rejected(
        "max_pool2d_int", (T(1, 3, 8, 8, element=i32),), lambda a: MaxPool2DOp(a[0], [2, 2]),
        "'nn.max_pool2d' op input must have a floating-point element type, got tensor<1x3x8x8xi32>",
    ),
    Rejected(
        "max_pool2d_kernel", (T(1, 3, 8, 8),), lambda a: MaxPool2DOp(a[0], [0, 2], [2, 2]),
        "'nn.max_pool2d' op kernel must be 2 positive integers, got [0, 2]",
    ),
    Rejected(
        "max_pool2d_stride", (T(1, 3, 8, 8),), lambda a: MaxPool2DOp(a[0], [2, 2], [2, -2]),
        "'nn.max_pool2d' op stride must be 2 positive integers, got [2, -2]",
    ),
    Rejected(
        "max_pool2d_padding", (T(1, 3, 8, 8),), lambda a: MaxPool2DOp(a[0], [2, 2], padding=[0, 0, 0, -1]),
        "'nn.max_pool2d' op padding must be 4 non-negative integers [top, bottom, left, right], got [0, 0, 0, -1]",
    ),
    Rejected(
        "max_pool2d_padding_kernel", (T(1, 3, 8, 8),), lambda a: MaxPool2DOp(a[0], [2, 2], padding=[0, 2, 0, 0]),
        "'nn.max_pool2d' op padding [0, 2, 0, 0] must be smaller than the kernel [2, 2]",
    ),
    Rejected(
        "max_pool2d_kernel_large", (T(1, 3, 2, 8),), lambda a: MaxPool2DOp(a[0], [3, 3], [1, 1]),
        "'nn.max_pool2d' op kernel [3, 3] is larger than the padded input 1x3x2x8",
    ),
    Rejected(
        "max_pool2d_kernel_much_larger", (T(1, 3, 2, 2),), lambda a: MaxPool2DOp(a[0], [5, 5], [1, 1]),
        "'nn.max_pool2d' op kernel [5, 5] is larger than the padded input 1x3x2x2",
    ),
    Rejected(
        "gather_float_indices", (T(5, 3), T(4)), lambda a: GatherOp(a[0], a[1], 0),
        "'nn.gather' op indices must have element type i32 or i64, got tensor<4xf32>",
    ),
    Rejected(
        "gather_bool_indices", (T(5, 3), T(4, element=i1)), lambda a: GatherOp(a[0], a[1], 0),
        "'nn.gather' op indices must have element type i32 or i64, got tensor<4xi1>",
    ),
    Rejected(
        "gather_axis", (T(5, 3), T(4, element=i32)), lambda a: GatherOp(a[0], a[1], 2),
        "'nn.gather' op axis 2 out of range for operand 5x3",
    ),
    Rejected(
        "gather_empty_axis", (T(0, 3), T(4, element=i32)), lambda a: GatherOp(a[0], a[1], 0),
        "'nn.gather' op cannot gather from empty axis 0 of operand 0x3",
    ),
    Rejected(
        "scatter_add_indices", (T(5, 3), T(4), T(4, 3)), lambda a: ScatterAddOp(a[0], a[1], a[2], 0),
        "'nn.scatter_add' op indices must have element type i32 or i64, got tensor<4xf32>",
    ),
    Rejected(
        "scatter_add_i1", (T(5, 3, element=i1), T(4, element=i32), T(4, 3, element=i1)),
        lambda a: ScatterAddOp(a[0], a[1], a[2], 0),
        "'nn.scatter_add' op operand must be numeric (not i1), got tensor<5x3xi1>",
    ),
    Rejected(
        "scatter_add_axis", (T(5, 3), T(4, element=i32), T(4, 3)), lambda a: ScatterAddOp(a[0], a[1], a[2], -1),
        "'nn.scatter_add' op axis -1 out of range for operand 5x3",
    ),
    Rejected(
        "scatter_add_empty_axis", (T(0, 3), T(4, element=i32), T(4, 3)),
        lambda a: ScatterAddOp(a[0], a[1], a[2], 0),
        "'nn.scatter_add' op cannot scatter into empty axis 0 of operand 0x3",
    ),
    Rejected(
        "scatter_add_updates", (T(5, 3), T(4, element=i32), T(3, 4)),
        lambda a: ScatterAddOp(a[0], a[1], a[2], 0),
        "'nn.scatter_add' op updates tensor<3x4xf32> must be tensor<4x3xf32> for operand 5x3, "
        "indices 4 and axis 0",
    ),
]


@pytest.mark.parametrize("case", REJECTED, ids=[c.id for c in REJECTED])
def test_verifier_rejects(case: Rejected) -> None:
    assert_rejected(case.arg_types, case.make, case.message)


def test_empty_gather_from_empty_axis_is_allowed() -> None:
    """Only a non-empty index set needs something to take."""
    body, op = build((T(0, 3), T(0, element=i32)), lambda a: GatherOp(a[0], a[1], 0))
    assert op.results[0].type == T(0, 3)
    body.module.verify()


# ---------------------------------------------------------------------------------------------
# Textual form
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "nn.full 0.5 : tensor<2x3xf32>",
        "nn.full -inf : tensor<4xf64>",
        "nn.full nan : tensor<f16>",
        "nn.full -0.0 : tensor<bf16>",
        "nn.full 1.0e+16 : tensor<f64>",
        "nn.full 1.5e-05 : tensor<f64>",
        "nn.full true : tensor<3xi1>",
        "nn.full -9223372036854775808 : tensor<i64>",
    ],
)
def test_full_prints_what_it_parses(text: str) -> None:
    module = parse(f"%0 = {text}")
    printed = print_op(module.body.block.first_op)  # pyright: ignore[reportArgumentType]
    assert printed == f"%0 = {text}"
    parse(printed).verify()


@pytest.mark.parametrize(
    "text",
    [
        "%1 = nn.cholesky %0 : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>",
        "%2 = nn.triangular_solve %0, %1 lower : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>",
        "%2 = nn.triangular_solve %0, %1 unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>",
        "%2 = nn.triangular_solve %0, %1 lower unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>",
        "%2 = nn.triangular_solve %0, %1 : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>",
        "%1, %2, %3 = nn.lu %0 : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2x4xi32>)",
    ],
)
def test_linalg_ops_print_what_they_parse(text: str) -> None:
    defs = ["%0 = nn.full 1.0 : tensor<2x4x4xf64>"]
    if not text.startswith("%1"):
        defs.append("%1 = nn.full 1.0 : tensor<2x4x3xf64>")
    module = parse("\n".join([*defs, text]) + "\n")
    module.verify()
    assert text in print_op(module)  # a module numbers its values in order, as the text does


@pytest.mark.parametrize(
    ("text", "culprit", "message"),
    [
        ("nn.full true : tensor<2xf32>", "true", "'nn.full' value true does not fit f32"),
        ("nn.full 1.5 : tensor<2xi32>", "1.5", "'nn.full' value 1.5 does not fit i32"),
        ("nn.full -inf : tensor<2xi32>", "-inf", "'nn.full' value -inf does not fit i32"),
        ("nn.full 5000000000 : tensor<2xi32>", "5000000000", "'nn.full' value 5000000000 does not fit i32"),
        ("nn.full -true : tensor<i1>", "-true", "'nn.full' value -true does not fit i1"),
        ("nn.full 2 : tensor<i1>", "2", "'nn.full' value 2 does not fit i1"),
        ("nn.full 1 : tensor<2xi8>", "1", "'nn.full' cannot fill element type i8"),
        ("nn.full 1.0 : f32", "f32", "'nn.full' expects a tensor type, got f32"),
        ("nn.constant 1.0 : f32", "1.0", "'nn.constant' expects a dense elements attribute"),
        ("nn.compare lq, %0, %0 : tensor<2xf32>", "lq", "'nn.compare' direction must be one of eq, ne, lt, le, gt, ge, got 'lq'"),
        ("nn.compare eq, %0, %0 : f32", "f32", "'nn.compare' expects a tensor type, got f32"),
    ],
)
def test_parse_errors_point_at_the_culprit(text: str, culprit: str, message: str) -> None:
    """The error sits at the literal, keyword or type that is wrong, not after the op."""
    source = f"%0 = nn.full 0.0 : tensor<2xf32>\n%1 = {text}\n"
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        parse(source)
    assert info.value.span.start == source.index(culprit, source.index("%1 = ") + 5)


def test_every_assembly_format_of_irgrad_and_xdsl_dialects_compiles() -> None:
    """Formats compile on first use (irgrad/xdsl_patches/lazy_assembly_formats.py), so a broken one would only
    surface when its op is parsed or printed: compile all of them here, irgrad's and those of
    the xDSL dialects the pipelines use."""
    from xdsl.dialects import arith, cf, func, linalg, llvm, math, memref, scf, tensor

    from irgrad.dialects import autodiff, blas, debug, index, nn, shard
    from irgrad.dialects.upstream import arith as upstream_arith
    from irgrad.dialects.upstream import linalg as upstream_linalg
    from irgrad.dialects.upstream import llvm as upstream_llvm
    from irgrad.dialects.upstream import tensor as upstream_tensor
    from irgrad.xdsl_patches.lazy_assembly_formats import compiled_format

    dialects = [nn.NN, autodiff.Autodiff, blas.BLAS, debug.Debug, index.Index, shard.Shard]
    dialects += [arith.Arith, cf.Cf, func.Func, linalg.Linalg, llvm.LLVM, math.Math, memref.MemRef, scf.Scf, tensor.Tensor]
    dialects += [upstream_arith.Arith, upstream_linalg.Linalg, upstream_llvm.LLVM, upstream_tensor.Tensor]
    lazy = 0
    for dialect in dialects:
        for op_type in dialect.operations:
            if op_type.get_irdl_definition().assembly_format is None:
                continue
            # None: defined before irgrad was imported, so compiled at definition by xDSL.
            if compiled_format(op_type) is not None:
                lazy += 1
    assert compiled_format(nn.AddOp) is not None  # irgrad's own dialects are always lazy
    assert lazy > 50
