"""The `nn` dialect: irgrad's high-level tensor dialect.

Where it sits: the Python frontend traces models to `nn`; the autodiff pass differentiates `nn`
(and produces `nn` again); `convert-nn-to-linalg` lowers it. The reference interpreter executes it
directly with numpy.

Design rules:
- Values are builtin ranked tensors with static shapes; element types f16, bf16, f32, f64, i1,
  i32, i64.
- Nothing is implicit: elementwise operands have equal types, broadcasting is spelled with
  `nn.broadcast_in_dim`, dtype changes with `nn.convert`. The IR shows everything that happens.
- Every op has one shape-inference function (`infer_type`) used both by its Python builder, so
  builders never spell result types, and by its verifier, so the two cannot disagree.
- Verifier messages follow MLIR: `'nn.matmul' op contracting dimensions differ: lhs 4x3, rhs 5x2`.

One module per op family, as irgrad/lowering/nn_to_linalg/ splits its patterns (creation,
elementwise, reduction, data_movement, indirect, linear, pooling, factorization), on the shared
`base`. This face hands on their public names, enters canonicalization.py's patterns in the
ops' table, and defines `NN` last.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from irgrad.dialects.nn.base import (
    CANONICALIZATION_PATTERNS,
    FLOAT_TYPES,
    INDEX_INT_WIDTHS,
    INT_WIDTHS,
    NNOperation,
    Value,
    check_axes,
    is_bool,
    is_complex,
    is_float,
    is_int,
    is_signless_int,
    shape_str,
    tensor,
)
from irgrad.dialects.nn.creation import ConstantOp, FullOp, IotaOp
from irgrad.dialects.nn.elementwise import (
    AbsOp,
    AddOp,
    AndOp,
    COMPARISON_DIRECTIONS,
    CompareOp,
    ConvertOp,
    CosOp,
    DivOp,
    ElementwiseBinaryOp,
    ElementwiseUnaryOp,
    ErfOp,
    ExpOp,
    LogOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    NegOp,
    OrOp,
    PowOp,
    ReluOp,
    RsqrtOp,
    SelectOp,
    ShiftLeftOp,
    ShiftOp,
    ShiftRightLogicalOp,
    SigmoidOp,
    SignOp,
    SinOp,
    SqrtOp,
    SubOp,
    TanhOp,
    XorOp,
)
from irgrad.dialects.nn.reduction import (
    ReduceMaxOp,
    ReduceMinOp,
    ReduceOp,
    ReduceSumOp,
    reduced_shape,
)
from irgrad.dialects.nn.data_movement import (
    BroadcastInDimOp,
    ConcatenateOp,
    DynamicSliceOp,
    DynamicUpdateSliceOp,
    PadOp,
    ReshapeOp,
    SliceOp,
    TransposeOp,
    slice_length,
)
from irgrad.dialects.nn.indirect import GatherOp, ScatterAddOp, gather_shape
from irgrad.dialects.nn.linear import (
    Col2ImOp,
    Conv2DOp,
    Im2ColOp,
    MatmulOp,
    WindowsOp,
    conv_output_size,
    im2col_shape,
)
from irgrad.dialects.nn.pooling import MaxPool2DOp
from irgrad.dialects.nn.fft import FFT_TYPES, FftOp, fft_result_type
from irgrad.dialects.nn.complex import EXPANDED_OPS as _COMPLEX_PART_OPS, ComplexOp, ConjOp, ImagOp, RealOp, complex_type, part_type
from irgrad.dialects.nn.factorization import (
    CholeskyOp,
    EigOp,
    EighOp,
    LUOp,
    QrOp,
    SvdOp,
    TriangularSolveOp,
    eig_result_types,
    qr_result_types,
    svd_result_types,
)
from irgrad.dialects.nn.canonicalization import populate_canonicalization_patterns

EXPANDED_OPS = (*_COMPLEX_PART_OPS, FftOp)
"""The ops an expansion pass rewrites before autodiff, batching and `convert-nn-to-linalg`, so they
have no derivative, batching or lowering rule of their own: the complex parts' ops
(`nn-expand-complex`) and `nn.fft` (`nn-expand-fft`, into matmuls and elementwise ops)."""

populate_canonicalization_patterns(CANONICALIZATION_PATTERNS)


NN = Dialect(
    "nn",
    [
        ConstantOp,
        FullOp,
        IotaOp,
        NegOp,
        AbsOp,
        SignOp,
        ExpOp,
        LogOp,
        TanhOp,
        SigmoidOp,
        ReluOp,
        SqrtOp,
        RsqrtOp,
        SinOp,
        CosOp,
        ErfOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        MaximumOp,
        MinimumOp,
        CompareOp,
        SelectOp,
        ConvertOp,
        AndOp,
        OrOp,
        XorOp,
        ShiftLeftOp,
        ShiftRightLogicalOp,
        ReduceSumOp,
        ReduceMaxOp,
        ReduceMinOp,
        BroadcastInDimOp,
        ReshapeOp,
        TransposeOp,
        SliceOp,
        DynamicSliceOp,
        DynamicUpdateSliceOp,
        ConcatenateOp,
        PadOp,
        MatmulOp,
        Conv2DOp,
        MaxPool2DOp,
        Im2ColOp,
        Col2ImOp,
        GatherOp,
        ScatterAddOp,
        CholeskyOp,
        TriangularSolveOp,
        LUOp,
        EighOp,
        EigOp,
        SvdOp,
        QrOp,
        RealOp,
        ImagOp,
        ComplexOp,
        ConjOp,
        FftOp,
    ],
    [],
)
