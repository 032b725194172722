"""`convert-nn-to-linalg` against the reference interpreter: every nn op, before and after.

Each case builds one op (or a short program) in a `func.func`, runs it on the interpreter,
lowers a copy with the pass, checks the copy against the stage "linalg" contract, and runs it
again on the same inputs. Results must agree bit for bit (NaN with NaN, signed zeros
included), except where the lowering accumulates in another order than numpy (float sums,
matmul, conv2d): those agree within a few ulps of their dtype.

Inputs are random with fixed seeds; "special" inputs mix in NaN, +-inf, +-0 (floats) and the
integer extremes, 0 and -1 (integers). Whole programs (an MLP, a CNN, a gather-based
cross-entropy, each with its gradient) go through `autodiff,canonicalize,cse,dce` first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import IndexType, ModuleOp, i32, i64

from _interpreter_util import Scalar, assert_same, build, parse
from irgrad.backends.interpreter import run_function
from irgrad.ir_numpy import element_type_for, tensor_type_for
from irgrad.diagnostics import PassError, verify_module
from irgrad.dialects import nn
from irgrad.context import make_context
from irgrad.lowering.contracts import ContractError, assert_stage_linalg
from irgrad.lowering.nn_to_linalg import ConvertNNToLinalgPass
from irgrad.transforms.nn.nn_expand_factorizations import ExpandFactorizationsPass
from irgrad.pipelines import STAGES
from irgrad.registry import lower, run_pipeline

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I1, I32, I64 = np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64)
FLOATS = [F32, F64, F16, BF16]
INTS = [I32, I64]
NUMERIC = FLOATS + INTS
ALL = NUMERIC + [I1]

# Relative tolerance for results accumulated in another order than numpy's.
RTOL = {F16: 2e-3, BF16: 2e-2, F32: 2e-5, F64: 1e-12}


# ---------------------------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------------------------


def lowered(module: ModuleOp) -> ModuleOp:
    """A lowered, verified, contract-checked copy of `module`."""
    copy = module.clone()
    ExpandFactorizationsPass().apply(make_context(), copy)  # factorizations: reference loops
    ConvertNNToLinalgPass().apply(make_context(), copy)
    verify_module(copy)
    assert_stage_linalg(copy)
    return copy


def assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype not in RTOL:
        np.testing.assert_array_equal(actual, expected)
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
    scale = np.fmax(np.abs(e), 1.0)  # fmax: 1 where e is NaN (the NaN locations agree)
    np.testing.assert_array_less(np.abs(np.nan_to_num(a - e)), RTOL[actual.dtype] * scale * 8 + 1e-300)


def check_module(module: ModuleOp, args: Sequence[Any], exact: bool = True, entry: str = "main") -> ModuleOp:
    """Run `module` before and after the pass on `args`; the results must agree."""
    with np.errstate(all="ignore"):
        expected = run_function(module, entry, list(args))
        after = lowered(module)
        actual = run_function(after, entry, list(args))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if exact:
            assert_same(np.asarray(a), np.asarray(e))
        else:
            assert_close(np.asarray(a), np.asarray(e))
    return after


def check(body: Callable[..., Any], *args: Any, exact: bool = True) -> ModuleOp:
    """Build `body` over arguments typed after `args` (arrays or `Scalar`s) and check it."""
    types = [a.type if isinstance(a, Scalar) else tensor_type_for(np.asarray(a)) for a in args]
    values = [a.value if isinstance(a, Scalar) else a for a in args]
    return check_module(build(types, body), values, exact)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def values(shape: Sequence[int], dtype: np.dtype, seed: int = 0, special: bool = False) -> np.ndarray:
    """Random values of `dtype`; `special` mixes in the edge cases of the dtype."""
    r = rng(seed)
    shape = tuple(shape)
    if dtype == I1:
        return r.integers(0, 2, shape).astype(bool)
    if dtype in INTS:
        x = r.integers(-40, 40, shape).astype(dtype)
        extremes = [np.iinfo(dtype).min, np.iinfo(dtype).max, 0, -1, 1]
    else:
        x = (r.standard_normal(shape) * 3).astype(np.float64)
        extremes = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 70000.0, 3e9]
    if special and x.size:
        flat = x.reshape(-1)
        for k, v in zip(r.permutation(flat.size), extremes):
            flat[k] = v
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def dtype_id(dtype: np.dtype) -> str:
    return str(element_type_for(dtype))


@dataclass
class Case:
    """One differential case: `body(*args)` on `args`; `exact` asks for bitwise agreement."""

    name: str
    body: Callable[..., Any]
    args: list[Any] = field(default_factory=list)
    exact: bool = True

    def __repr__(self) -> str:
        return self.name


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

UNARY = {
    nn.NegOp: NUMERIC,
    nn.AbsOp: NUMERIC,
    nn.SignOp: NUMERIC,
    nn.ReluOp: NUMERIC,
    nn.ExpOp: FLOATS,
    nn.LogOp: FLOATS,
    nn.TanhOp: FLOATS,
    nn.SigmoidOp: FLOATS,
    nn.SqrtOp: FLOATS,
    nn.RsqrtOp: FLOATS,
    nn.SinOp: FLOATS,
    nn.CosOp: FLOATS,
    nn.ErfOp: FLOATS,
}

BINARY = {
    nn.AddOp: NUMERIC,
    nn.SubOp: NUMERIC,
    nn.MulOp: NUMERIC,
    nn.DivOp: NUMERIC,
    nn.PowOp: FLOATS,
    nn.MaximumOp: ALL,
    nn.MinimumOp: ALL,
    nn.AndOp: [I1, I32, I64],
    nn.OrOp: [I1, I32, I64],
    nn.XorOp: [I1, I32, I64],
    nn.ShiftLeftOp: INTS,
    nn.ShiftRightLogicalOp: INTS,
}


def elementwise_cases() -> list[Case]:
    cases: list[Case] = []
    for op, dtypes in UNARY.items():
        for dtype in dtypes:
            x = values((5, 7), dtype, seed=1, special=True)
            cases.append(Case(f"{op.name}-{dtype_id(dtype)}", op, [x]))
        cases.append(Case(f"{op.name}-rank0", op, [np.array(0.75, F32)]))
        cases.append(Case(f"{op.name}-empty", op, [np.zeros((0, 3), F32)]))
    for op, dtypes in BINARY.items():
        for dtype in dtypes:
            x = values((6, 5), dtype, seed=2, special=True)
            y = values((6, 5), dtype, seed=3, special=True)
            if op is nn.DivOp and dtype in INTS:
                y.reshape(-1)[:6] = 0  # division by zero gives 0
                x.reshape(-1)[6], y.reshape(-1)[6] = np.iinfo(dtype).min, -1  # wraps
            if op in (nn.ShiftLeftOp, nn.ShiftRightLogicalOp):
                y = rng(4).integers(-3, 70, (6, 5)).astype(dtype)  # out of range gives 0
            cases.append(Case(f"{op.name}-{dtype_id(dtype)}", op, [x, y]))
    for direction in nn.COMPARISON_DIRECTIONS:
        for dtype in [F32, F16, I32, I1]:
            x = values((4, 6), dtype, seed=5, special=True)
            y = values((4, 6), dtype, seed=6, special=True)
            y.reshape(-1)[:4] = x.reshape(-1)[:4]  # some equal pairs (and NaN vs NaN)
            cases.append(
                Case(
                    f"nn.compare-{direction}-{dtype_id(dtype)}",
                    lambda a, b, d=direction: nn.CompareOp(d, a, b),
                    [x, y],
                )
            )
    for dtype in [F32, I64, I1, BF16]:
        p = values((3, 4), I1, seed=7)
        a, b = values((3, 4), dtype, seed=8, special=True), values((3, 4), dtype, seed=9)
        cases.append(Case(f"nn.select-{dtype_id(dtype)}", nn.SelectOp, [p, a, b]))
    for source, target in itertools.product(ALL, ALL):
        x = values((4, 9), source, seed=10, special=True)
        t = element_type_for(target)
        cases.append(Case(f"nn.convert-{dtype_id(source)}-{dtype_id(target)}", lambda v, t=t: nn.ConvertOp(v, t), [x]))
    return cases


# ---------------------------------------------------------------------------------------------
# Creation, reductions
# ---------------------------------------------------------------------------------------------


def creation_cases() -> list[Case]:
    from irgrad.ir_numpy import to_attribute

    cases: list[Case] = []
    for dtype in [F32, I1, BF16, I64]:
        data = values((2, 3), dtype, seed=11, special=True)
        cases.append(Case(f"nn.constant-{dtype_id(dtype)}", lambda d=data: nn.ConstantOp(to_attribute(d))))
    fulls = [(0.5, F32), (np.nan, F64), (-np.inf, F16), (0.1, BF16), (True, I1), (-7, I32), (2**40, I64)]
    for value, dtype in fulls:
        t = tensor_type_for(np.zeros((2, 3), dtype))
        cases.append(Case(f"nn.full-{value}-{dtype_id(dtype)}", lambda v=value, t=t: nn.FullOp(v, t)))
    cases.append(
        Case("nn.full-rank0", lambda: nn.FullOp(3.0, tensor_type_for(np.zeros((), F32))))
    )
    for dtype, dim in [(I32, 0), (I64, 1), (F32, 1), (BF16, 0), (F64, 2)]:
        t = tensor_type_for(np.zeros((3, 300, 2), dtype))
        cases.append(Case(f"nn.iota-{dim}-{dtype_id(dtype)}", lambda d=dim, t=t: nn.IotaOp(d, t)))
    return cases


REDUCE_OPS = [nn.ReduceSumOp, nn.ReduceMaxOp, nn.ReduceMinOp]
AXES = [([1], False), ([0, 2], False), ([2], True), ([0, 1, 2], False), ([0, 1, 2], True), ([], False)]


def reduction_cases() -> list[Case]:
    cases: list[Case] = []
    for op, dtype, (axes, keepdims) in itertools.product(REDUCE_OPS, ALL, AXES):
        if op is nn.ReduceSumOp and dtype == I1:
            continue
        x = values((3, 4, 5), dtype, seed=12, special=op is not nn.ReduceSumOp)
        exact = not (op is nn.ReduceSumOp and dtype in FLOATS)
        cases.append(
            Case(
                f"{op.name}-{dtype_id(dtype)}-{axes}{'-keep' if keepdims else ''}",
                lambda v, op=op, a=axes, k=keepdims: op(v, a, k),
                [x],
                exact,
            )
        )
    for op in REDUCE_OPS:
        # Reducing an empty axis gives the identity; a NaN propagates; -0 sums stay -0.
        cases.append(Case(f"{op.name}-empty-axis", lambda v, op=op: op(v, [1]), [np.zeros((3, 0), F32)]))
        cases.append(Case(f"{op.name}-empty-axis-i32", lambda v, op=op: op(v, [0], True), [np.zeros((0, 2), I32)]))
        cases.append(Case(f"{op.name}-nan", lambda v, op=op: op(v, [1]), [np.array([[1, np.nan, 2], [-0.0, -0.0, -0.0]], F32)]))
    return cases


# ---------------------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------------------

RESHAPES = [
    ((2, 3, 4), (6, 4)),
    ((6, 4), (2, 3, 4)),
    ((2, 3), (3, 2)),
    ((1, 6, 1), (6,)),
    ((6,), (1, 2, 1, 3, 1)),
    ((2, 3, 4), (4, 6)),
    ((1, 1), ()),
    ((), (1, 1, 1)),
    ((4, 6), (4, 6)),
    ((0, 3), (3, 0)),
]

SLICES = [
    ([0, 0], [5, 6], [1, 1]),
    ([4, 5], [-1, -1], [-1, -1]),
    ([1, 5], [5, 0], [2, -2]),
    ([3, 2], [0, 2], [-1, 1]),
    ([4, 0], [-1, 6], [-3, 4]),
    ([1, 1], [4, 5], [1, 1]),
]


def data_movement_cases() -> list[Case]:
    cases: list[Case] = []
    x = values((3, 1), F32, seed=13, special=True)
    cases.append(Case("broadcast-expand", lambda v: nn.BroadcastInDimOp(v, [2, 3, 4], [1, 2]), [x]))
    y = values((2, 3), I32, seed=14)
    cases.append(Case("broadcast-transpose", lambda v: nn.BroadcastInDimOp(v, [3, 5, 2], [2, 0]), [y]))
    cases.append(Case("broadcast-scalar", lambda v: nn.BroadcastInDimOp(v, [2, 2], []), [np.array(2.5, F16)]))
    cases.append(Case("broadcast-unit-to-unit", lambda v: nn.BroadcastInDimOp(v, [1, 3], [0, 1]), [values((1, 3), I1)]))
    cases.append(Case("broadcast-identity", lambda v: nn.BroadcastInDimOp(v, [2, 3], [0, 1]), [y]))
    for source, target in RESHAPES:
        v = values(source, F64, seed=15)
        cases.append(Case(f"reshape-{source}-{target}", lambda a, t=target: nn.ReshapeOp(a, t), [v]))
    z = values((2, 3, 4), I64, seed=16)
    for perm in [(2, 0, 1), (1, 0, 2), (0, 1, 2)]:
        cases.append(Case(f"transpose-{perm}", lambda a, p=perm: nn.TransposeOp(a, p), [z]))
    w = values((5, 6), BF16, seed=17, special=True)
    for start, limit, stride in SLICES:
        cases.append(
            Case(f"slice-{start}-{limit}-{stride}", lambda a, s=start, l=limit, k=stride: nn.SliceOp(a, s, l, k), [w])
        )
    m = values((4, 5), F32, seed=18)
    starts = [
        [Scalar(2, IndexType()), Scalar(np.int32(-3), i32)],
        [Scalar(10, IndexType()), Scalar(np.int64(3), i64)],
        [Scalar(-1, IndexType()), Scalar(np.int64(2**40), i64)],
    ]
    for k, (s0, s1) in enumerate(starts):
        cases.append(Case(f"dynamic_slice-{k}", lambda a, i, j: nn.DynamicSliceOp(a, [i, j], [2, 3]), [m, s0, s1]))
        cases.append(Case(f"dynamic_slice-whole-{k}", lambda a, i, j: nn.DynamicSliceOp(a, [i, j], [4, 1]), [m, s0, s1]))
        u = values((3, 2), F32, seed=19)
        cases.append(Case(f"dynamic_update_slice-{k}", lambda a, b, i, j: nn.DynamicUpdateSliceOp(a, b, [i, j]), [m, u, s0, s1]))
    parts = [values((2, 3), I32, seed=20), values((0, 3), I32), values((1, 3), I32, seed=21)]
    cases.append(Case("concatenate-0", lambda a, b, c: nn.ConcatenateOp([a, b, c], 0), parts))
    cols = [values((2, 1), F16, seed=22), values((2, 4), F16, seed=23)]
    cases.append(Case("concatenate-1", lambda a, b: nn.ConcatenateOp([a, b], 1), cols))
    cases.append(Case("concatenate-single", lambda a: nn.ConcatenateOp([a], 1), cols[:1]))
    pad_value = np.array(-1.5, F32)
    cases.append(Case("pad", lambda a, p: nn.PadOp(a, p, [0, 2], [1, 0]), [m, pad_value]))
    cases.append(Case("pad-none", lambda a, p: nn.PadOp(a, p, [0, 0], [0, 0]), [m, pad_value]))
    cases.append(Case("pad-empty", lambda a, p: nn.PadOp(a, p, [1, 0], [1, 2]), [np.zeros((0, 2), I1), np.array(True)]))
    return cases


def indirect_cases() -> list[Case]:
    cases: list[Case] = []
    x = values((5, 3), F32, seed=24, special=True)
    idx = np.array([0, 4, -1, -5, 7, -9], np.int32)  # wrap once, then clamp
    cases.append(Case("gather-0", lambda a, i: nn.GatherOp(a, i, 0), [x, idx]))
    cases.append(Case("gather-1", lambda a, i: nn.GatherOp(a, i, 1), [x, idx.astype(np.int64)]))
    cases.append(Case("gather-scalar-index", lambda a, i: nn.GatherOp(a, i, 0), [x, np.array(-2, np.int64)]))
    idx2 = np.array([[1, 2], [-1, 9], [0, 0]], np.int32)
    cube = values((2, 4, 3), I64, seed=25)
    cases.append(Case("gather-2d-index", lambda a, i: nn.GatherOp(a, i, 1), [cube, idx2]))
    cases.append(Case("gather-empty-index", lambda a, i: nn.GatherOp(a, i, 0), [x, np.zeros((0,), np.int32)]))
    for dtype in [F32, F16, I32, BF16]:
        base = values((5, 3), dtype, seed=26)
        rows = np.array([1, 1, -1, 9, 0, 1], np.int32)  # repeats accumulate
        upd = values((6, 3), dtype, seed=27)
        cases.append(Case(f"scatter_add-{dtype_id(dtype)}", lambda a, i, u: nn.ScatterAddOp(a, i, u, 0), [base, rows, upd]))
    cols = np.array([[2, 0], [-1, 2]], np.int64)
    cases.append(
        Case(
            "scatter_add-axis1-2d",
            lambda a, i, u: nn.ScatterAddOp(a, i, u, 1),
            [values((2, 4, 3), F64, seed=28), cols, values((2, 2, 2, 3), F64, seed=29)],
        )
    )
    cases.append(
        Case(
            "scatter_add-scalar-index",
            lambda a, i, u: nn.ScatterAddOp(a, i, u, 0),
            [values((4,), I64, seed=30), np.array(-1, np.int32), np.array(5, np.int64)],
        )
    )
    return cases


# ---------------------------------------------------------------------------------------------
# Linear algebra, pooling
# ---------------------------------------------------------------------------------------------

CONVS = [
    # (input shape, weight shape, stride, padding, dilation)
    ((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((2, 2, 9, 7), (3, 2, 3, 2), (2, 3), (0, 1, 2, 0), (1, 2)),
    ((1, 1, 5, 5), (2, 1, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),
]

POOLS = [
    # (input shape, kernel, stride, padding)
    ((1, 3, 8, 8), (2, 2), (2, 2), (0, 0, 0, 0)),
    ((2, 2, 7, 6), (3, 2), (2, 1), (1, 2, 0, 1)),
]


def linear_cases() -> list[Case]:
    cases: list[Case] = []
    for dtype in NUMERIC:
        a, b = values((4, 6), dtype, seed=31), values((6, 5), dtype, seed=32)
        cases.append(Case(f"matmul-{dtype_id(dtype)}", nn.MatmulOp, [a, b], dtype in INTS))
    for dtype in [F32, I64, BF16]:
        a, b = values((2, 3, 4, 6), dtype, seed=33), values((2, 3, 6, 5), dtype, seed=34)
        cases.append(Case(f"matmul-batched-{dtype_id(dtype)}", nn.MatmulOp, [a, b], dtype in INTS))
    cases.append(Case("matmul-k0", nn.MatmulOp, [np.zeros((3, 0), F32), np.zeros((0, 2), F32)]))
    for k, (xs, ws, stride, padding, dilation) in enumerate(CONVS):
        for dtype in [F32, F64, F16]:
            cases.append(
                Case(
                    f"conv2d-{k}-{dtype_id(dtype)}",
                    lambda x, w, s=stride, p=padding, d=dilation: nn.Conv2DOp(x, w, s, p, d),
                    [values(xs, dtype, seed=35), values(ws, dtype, seed=36)],
                    exact=False,
                )
            )
    for k, (xs, ws, stride, padding, dilation) in enumerate(CONVS):
        kernel = ws[2:]
        columns, _ = nn.im2col_shape(xs, kernel, stride, padding, dilation)
        for dtype in [F32, F64, F16]:
            cases.append(
                Case(
                    f"im2col-{k}-{dtype_id(dtype)}",
                    lambda x, kk=kernel, s=stride, p=padding, d=dilation: nn.Im2ColOp(x, kk, s, p, d),
                    [values(xs, dtype, seed=38, special=True)],
                )
            )
            # The additions of overlapping windows run in the interpreter's order: bitwise equal.
            cases.append(
                Case(
                    f"col2im-{k}-{dtype_id(dtype)}",
                    lambda c, i=xs, kk=kernel, s=stride, p=padding, d=dilation: nn.Col2ImOp(c, i, kk, s, p, d),
                    [values(columns, dtype, seed=39)],
                )
            )
    for k, (xs, kernel, stride, padding) in enumerate(POOLS):
        for dtype in [F32, BF16]:
            cases.append(
                Case(
                    f"max_pool2d-{k}-{dtype_id(dtype)}",
                    lambda x, kk=kernel, s=stride, p=padding: nn.MaxPool2DOp(x, kk, s, p),
                    [values(xs, dtype, seed=37, special=True)],
                )
            )
    return cases


def spd(n: int, dtype: np.dtype, seed: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A symmetric positive-definite (..., n, n), well conditioned (x x^T + n I)."""
    x = rng(seed).standard_normal((*batch, n, n))
    return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n)).astype(dtype)


def triangular(n: int, dtype: np.dtype, seed: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A full (..., n, n) whose diagonal is at least 1 in magnitude: either triangle of it
    is a well-conditioned triangular matrix (the other triangle is garbage, never read)."""
    x = rng(seed).standard_normal((*batch, n, n))
    d = np.arange(n)
    x[..., d, d] = np.sign(x[..., d, d]) * (1.0 + np.abs(x[..., d, d]))
    return x.astype(dtype)


def factorization_cases() -> list[Case]:
    """nn.cholesky / triangular_solve / lu: the reference loops (nn-expand-factorizations)
    against the interpreter's numpy, within rounding (another order of operations)."""
    cases: list[Case] = []
    for dtype in [F32, F64]:
        d = dtype_id(dtype)
        cases.append(Case(f"nn.cholesky-{d}", nn.CholeskyOp, [spd(5, dtype, 41)], exact=False))
        not_pd = spd(4, dtype, 42, (2, 3))
        not_pd[1, 2, 3, 3] = -1.0  # one batch element is not positive definite: all NaN
        cases.append(Case(f"nn.cholesky-batched-{d}", nn.CholeskyOp, [not_pd], exact=False))
        for lower in (True, False):
            for unit in (False, True):
                name = f"nn.triangular_solve-{'lower' if lower else 'upper'}{'-unit' if unit else ''}-{d}"
                cases.append(
                    Case(
                        name,
                        lambda a, b, lo=lower, u=unit: nn.TriangularSolveOp(a, b, lower=lo, unit_diagonal=u),
                        [triangular(5, dtype, 43), values((5, 3), dtype, seed=44)],
                        exact=False,
                    )
                )
        cases.append(
            Case(
                f"nn.triangular_solve-batched-{d}",
                lambda a, b: nn.TriangularSolveOp(a, b, lower=True),
                [triangular(4, dtype, 45, (3,)), values((3, 4, 2), dtype, seed=46)],
                exact=False,
            )
        )
        cases.append(Case(f"nn.lu-{d}", nn.LUOp, [values((6, 6), dtype, seed=47)], exact=False))
        singular = values((2, 5, 5), dtype, seed=48)
        singular[1, :, 2] = 0.0  # a zero column: a zero on U's diagonal, no error
        cases.append(Case(f"nn.lu-batched-{d}", nn.LUOp, [singular], exact=False))
        # eigh, svd, qr: Jacobi / Householder loops against LAPACK through numpy; the sign
        # convention makes the vectors comparable. Distinct, well-separated spectra.
        sym = values((2, 4, 4), dtype, seed=49)
        sym[1, 3, 0] = np.nan  # NaN in the lower triangle: that batch element is all NaN
        sym[0, 0, 3] = np.nan  # NaN in the upper triangle: never read
        cases.append(Case(f"nn.eigh-{d}", nn.EighOp, [values((5, 5), dtype, seed=50)], exact=False))
        cases.append(Case(f"nn.eigh-batched-{d}", nn.EighOp, [sym], exact=False))
        cases.append(Case(f"nn.svd-tall-{d}", nn.SvdOp, [values((5, 3), dtype, seed=51)], exact=False))
        cases.append(Case(f"nn.svd-wide-{d}", nn.SvdOp, [values((3, 5), dtype, seed=52)], exact=False))
        bad = values((2, 4, 4), dtype, seed=53)
        bad[0, 1, 2] = np.inf
        cases.append(Case(f"nn.svd-batched-{d}", nn.SvdOp, [bad], exact=False))
        cases.append(Case(f"nn.qr-{d}", nn.QrOp, [values((5, 3), dtype, seed=54)], exact=False))
        bad_qr = values((2, 4, 4), dtype, seed=55)
        bad_qr[1, 2, 2] = np.nan
        cases.append(Case(f"nn.qr-batched-{d}", nn.QrOp, [bad_qr], exact=False))
    return cases


CASES = (
    elementwise_cases()
    + creation_cases()
    + reduction_cases()
    + data_movement_cases()
    + indirect_cases()
    + linear_cases()
    + factorization_cases()
)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_op_agrees_with_interpreter(case: Case) -> None:
    check(case.body, *case.args, exact=case.exact)


def test_every_nn_op_has_a_case() -> None:
    from irgrad.dialects.nn import NN

    covered = {name.split("-")[0] for name in map(repr, CASES)}
    aliases = {
        "broadcast": "nn.broadcast_in_dim",
        "reshape": "nn.reshape",
        "transpose": "nn.transpose",
        "slice": "nn.slice",
        "dynamic_slice": "nn.dynamic_slice",
        "dynamic_update_slice": "nn.dynamic_update_slice",
        "concatenate": "nn.concatenate",
        "pad": "nn.pad",
        "gather": "nn.gather",
        "scatter_add": "nn.scatter_add",
        "matmul": "nn.matmul",
        "conv2d": "nn.conv2d",
        "max_pool2d": "nn.max_pool2d",
        "im2col": "nn.im2col",
        "col2im": "nn.col2im",
    }
    covered = {aliases.get(name, name) for name in covered}
    # The complex parts' ops never reach this pass (nn-expand-complex rewrites them first).
    missing = {op.name for op in NN.operations} - covered - {op.name for op in nn.EXPANDED_OPS}
    # nn.eig has no reference loop (LAPACK on the CPU only; the GPU, which shares these cases, refuses
    # it): its cases are test_cpu_differential_ops.py's "eig" group.
    missing -= {nn.EigOp.name}
    assert not missing, f"ops without a differential case: {sorted(missing)}"


# ---------------------------------------------------------------------------------------------
# Output form
# ---------------------------------------------------------------------------------------------


def ops_of(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk()]


def test_functions_keep_their_signatures_and_no_nn_op_remains() -> None:
    after = check(lambda a, b: nn.AddOp(nn.ExpOp(a), b), values((3,), F32), values((3,), F32))
    assert not [name for name in ops_of(after) if name.startswith("nn.")]
    func = next(op for op in after.walk() if op.name == "func.func")
    assert str(func.function_type) == "(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>"


def test_low_precision_transcendentals_compute_in_f32() -> None:
    after = check(nn.TanhOp, values((4,), F16))
    names = ops_of(after)
    assert names.index("arith.extf") < names.index("math.tanh") < names.index("arith.truncf")


def test_nn_ops_inside_scf_regions_are_lowered() -> None:
    text = """
    func.func @main(%x: tensor<3xf32>, %n: index) -> tensor<3xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<3xf32>) {
        %m = nn.mul %acc, %x : tensor<3xf32>
        %t = nn.tanh %m : tensor<3xf32>
        scf.yield %t : tensor<3xf32>
      }
      func.return %r : tensor<3xf32>
    }
    """
    after = check_module(parse(text), [values((3,), F32, seed=40), 3])
    assert "nn.mul" not in ops_of(after)


def test_tensor_splat_and_arith_on_tensors_are_lowered() -> None:
    # Both are valid input the autodiff pass accepts and emits (an index splat for a loop's
    # tape of counters); bufferize rejected them when they reached it unlowered.
    text = """
    func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>, %p: i1, %s: f32, %i: index)
        -> (tensor<3xf64>, tensor<2x3xf32>, tensor<4xindex>, tensor<0x2xf64>) {
      %a = arith.addf %x, %y : tensor<3xf64>
      %m = arith.mulf %a, %x : tensor<3xf64>
      %n = arith.select %p, %m, %y : tensor<3xf64>
      %e = math.exp %n : tensor<3xf64>
      %t = tensor.splat %s : tensor<2x3xf32>
      %u = tensor.splat %i : tensor<4xindex>
      %z = tensor.empty() : tensor<0x2xf64>
      %w = arith.negf %z : tensor<0x2xf64>
      func.return %e, %t, %u, %w : tensor<3xf64>, tensor<2x3xf32>, tensor<4xindex>, tensor<0x2xf64>
    }
    """
    for p in (True, False):
        args = [values((3,), F64, seed=45), values((3,), F64, seed=46), p, np.float32(1.5), 7]
        after = check_module(parse(text), args)
    names = ops_of(after)
    assert "tensor.splat" not in names and names.count("linalg.generic") == 5  # add, mul, select, exp, index splat
    assert_stage_linalg(after)


def test_unexpanded_autodiff_is_a_located_error() -> None:
    text = """
    func.func @f(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      func.return %y : f32
    }
    func.func @main(%x: f32) -> f32 {
      %g = autodiff.grad @f(%x) : (f32) -> f32
      func.return %g : f32
    }
    """
    with pytest.raises(PassError, match="'autodiff.grad' op is an unexpanded autodiff op.*run the autodiff pass first") as info:
        ConvertNNToLinalgPass().apply(make_context(), parse(text))
    assert info.value.location is not None and info.value.location.line == 7


def test_contract_checker_rejects_nn_and_tensor_arith() -> None:
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = arith.addf %x, %x : tensor<3xf32>
      func.return %y : tensor<3xf32>
    }
    """
    with pytest.raises(ContractError, match="'arith.addf' op breaks the \"linalg\" stage contract: arith and math ops must be scalar"):
        assert_stage_linalg(parse(text))
    with pytest.raises(ContractError, match="no nn op may remain"):
        assert_stage_linalg(build([tensor_type_for(values((2,), F32))], nn.ExpOp))


def test_contract_checker_wants_destination_passing_style() -> None:
    text = """
    func.func @main(%x: tensor<3xf32>, %out: tensor<3xf32>) -> tensor<3xf32> {
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<3xf32>) outs(%out : tensor<3xf32>) {
      ^bb0(%a: f32, %b: f32):
        linalg.yield %a : f32
      } -> tensor<3xf32>
      func.return %r : tensor<3xf32>
    }
    """
    with pytest.raises(ContractError, match="destination-passing style"):
        assert_stage_linalg(parse(text))


def test_pipelines_name_the_linalg_stage() -> None:
    assert STAGES["linalg"] == (
        "nn-expand-fft,nn-expand-complex,nn-conv2d-to-im2col,autodiff,shard-erase-annotations,inline,symbol-dce,canonicalize,cse,dce,"
        "nn-expand-factorizations{references=false},convert-nn-to-linalg,linalg-generalize-upstream-ops"
    )
    module = build([tensor_type_for(values((2,), F32))], nn.SigmoidOp)
    assert lower(module, "linalg") is module
    assert_stage_linalg(module)


def test_interpreter_extract_in_a_generic_body_is_vectorized_and_checked() -> None:
    # The gather lowering reads with tensor.extract inside a generic, whose body the
    # interpreter runs once for all loop points: the indices arrive as arrays.
    from irgrad.backends.interpreter import UndefinedBehaviorError

    text = """
    func.func @main(%x: tensor<5xf32>, %i: tensor<3xi32>) -> tensor<3xf32> {
      %e = tensor.empty() : tensor<3xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%i : tensor<3xi32>) outs(%e : tensor<3xf32>) {
      ^bb0(%a: i32, %o: f32):
        %k = arith.index_cast %a : i32 to index
        %v = tensor.extract %x[%k] : tensor<5xf32>
        linalg.yield %v : f32
      } -> tensor<3xf32>
      func.return %r : tensor<3xf32>
    }
    """
    x = np.arange(5, dtype=np.float32)
    (y,) = run_function(parse(text), "main", [x, np.array([4, 0, 2], np.int32)])
    assert_same(y, np.array([4, 0, 2], np.float32))
    with pytest.raises(UndefinedBehaviorError, match="index 5 in dimension 0 is out of bounds"):
        run_function(parse(text), "main", [x, np.array([1, 5, 2], np.int32)])


# ---------------------------------------------------------------------------------------------
# Whole programs: forward and gradient
# ---------------------------------------------------------------------------------------------


def check_program(fn: Callable[..., Any], *args: Any) -> ModuleOp:
    """Trace `fn`, differentiate, clean up, then compare interpreter runs around the pass."""
    import irgrad as ig

    program = ig.trace(fn, *args)
    module = run_pipeline(program.module.clone(), "autodiff,canonicalize,cse,dce")
    leaves = ig.tree_leaves(list(args))
    return check_module(module, [np.asarray(v) for v in leaves], exact=False, entry=program.entry)


def test_mlp_loss_and_gradient() -> None:
    import irgrad as ig
    from irgrad import layers, losses

    model = layers.MLP([4, 16, 3])
    params = model.init(0)
    x = values((8, 4), F32, seed=41)
    labels = rng(42).integers(0, 3, 8).astype(np.int32)

    def loss(p, x, y):
        return losses.softmax_cross_entropy(model.apply(p, x), y)

    check_program(ig.value_and_grad(loss), params, x, labels)


def test_cnn_loss_and_gradient() -> None:
    import irgrad as ig
    from irgrad import layers, losses

    model = layers.Sequential(
        [
            layers.Conv2d(1, 2, kernel_size=3, padding=1),
            layers.ReLU(),
            layers.MaxPool2d(2),
            layers.Flatten(),
            layers.Linear(2 * 3 * 3, 4),
        ]
    )
    params = model.init(1)
    images = values((2, 1, 6, 6), F32, seed=43)
    labels = np.array([1, 3], np.int32)

    def loss(p, x, y):
        return losses.softmax_cross_entropy(model.apply(p, x), y)

    check_program(ig.value_and_grad(loss), params, images, labels)


def test_gather_cross_entropy_and_gradient() -> None:
    import irgrad as ig

    logits = values((5, 7), F64, seed=44)
    labels = np.array([0, 6, 3, -1, 2], np.int32)

    def loss(z, y):
        log_probs = ig.log_softmax(z, axis=-1)
        picked = ig.take(ig.reshape(log_probs, (35,)), ig.arange(5) * 7 + y)
        return -ig.mean(picked)

    check_program(ig.value_and_grad(loss), logits, labels)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

CHAIN_OPS = [nn.ExpOp, nn.TanhOp, nn.SigmoidOp, nn.NegOp, nn.AbsOp, nn.ReluOp, nn.SinOp]


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    chain=st.lists(st.sampled_from(CHAIN_OPS), min_size=1, max_size=4),
    axis_seed=st.integers(0, 100),
    seed=st.integers(0, 2**16),
)
def test_random_elementwise_chains_and_reductions(shape, chain, axis_seed, seed) -> None:
    x = values(shape, F32, seed=seed, special=seed % 2 == 0)
    axes = [d for d in range(len(shape)) if (axis_seed >> d) & 1]

    def body(v):
        for op in chain:
            v = op(v)
        return [v, nn.ReduceMaxOp(v, axes, keepdims=axis_seed % 3 == 0)]

    check(body, x)


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
)
def test_random_slices(shape, data) -> None:
    start, limit, stride = [], [], []
    for n in shape:
        k = data.draw(st.sampled_from([-2, -1, 1, 2, 3]))
        s = data.draw(st.integers(0, n - 1))
        length = data.draw(st.integers(0, (s // -k + 1) if k < 0 else ((n - 1 - s) // k + 1)))
        start.append(s)
        stride.append(k)
        limit.append(s + length * k if length else s)
    x = values(shape, I32, seed=len(shape))
    check(lambda v: nn.SliceOp(v, start, limit, stride), x)
