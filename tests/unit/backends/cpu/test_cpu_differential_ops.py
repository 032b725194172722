"""Every `nn` op through the whole CPU pipeline, against the reference interpreter.

The cases are the per-op tables of test_lowering_nn_to_linalg.py (every op, every dtype it
accepts, NaN/inf/-0/extreme integers mixed in) plus the cases below: f32 and f64 for every op
that takes floats (i32 and i64 for the integer-only ones), NaN at every position of rows long
enough to take LLVM's vectorized loops through maximum/minimum/relu/reduce_max/reduce_min,
integer division by zero and INT_MIN / -1, float-to-int conversion at its saturation bounds,
negative-stride slices, dynamic slices clamped from both sides, gather/scatter_add with
repeated, negative and out-of-range indices, conv2d and max_pool2d with stride, padding and
dilation, and zero-size dimensions.

Each group of cases is one module with one function per case: the interpreter runs each
function on its `nn` IR, the module is lowered and compiled once (`_differential.compile_batch`),
and each case is a test of its own. Agreement: bit for bit (signed zeros included, NaN where
NaN) for every op but the transcendental functions and the accumulations; transcendental
functions (exp, log, tanh, sigmoid, sin, cos, pow: glibc or an inline approximation against
numpy) within the issue's 1e-5 relative (f32) and 1e-12 (f64), one ulp in f16/bf16 (measured:
at most 3e-7 and 4e-16 over 80k inputs of every magnitude); sums, matmul and conv2d within
the same tolerances relative to the result's largest magnitude (another summation order).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.dialects.builtin import FunctionType, IndexType, TensorType, i32, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue

import test_lowering_nn_to_linalg as table
from _differential import Outcome, assert_same_results, compile_batch
from _interpreter_util import Scalar
from irgrad.ir_numpy import element_type_for, tensor_type_for
from irgrad.dialects import nn
from test_lowering_nn_to_linalg import ALL, F32, F64, FLOATS, I1, I64, INTS, Case, values

pytestmark = pytest.mark.usefixtures("no_disk_cache")


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")


TRANSCENDENTAL = ("nn.exp", "nn.log", "nn.tanh", "nn.sigmoid", "nn.sin", "nn.cos", "nn.erf", "nn.pow")
ACCUMULATING = ("nn.reduce_sum", "nn.matmul", "nn.conv2d")


def dt(dtype: np.dtype) -> str:
    return str(element_type_for(dtype))


# ---------------------------------------------------------------------------------------------
# Cases beyond the nn-to-linalg tables
# ---------------------------------------------------------------------------------------------


def nan_rows(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """37x37 (longer than any vector width, with a remainder): NaN on the diagonal (every
    position of a row, so every lane and the scalar tail), a row of NaN, +-inf, rows of
    +-0 against -+0 (maximum(-0, +0) is +0)."""
    x = np.tile(np.linspace(-3, 3, 37), (37, 1))
    x[np.arange(37), np.arange(37)] = np.nan
    x[3, :] = np.nan
    x[5, 7], x[6, 9] = np.inf, -np.inf
    x[7, :], x[8, :], x[8, 10] = -0.0, 0.0, -0.0
    y = x[::-1].copy()
    y[7, :], y[8, :] = 0.0, -0.0
    return x.astype(dtype), y.astype(dtype)


def nan_cases() -> list[Case]:
    cases = []
    for dtype in FLOATS:
        x, y = nan_rows(dtype)
        for op in (nn.MaximumOp, nn.MinimumOp):
            cases.append(Case(f"{op.name}-nan-rows-{dt(dtype)}", op, [x, y]))
        cases.append(Case(f"nn.relu-nan-rows-{dt(dtype)}", nn.ReluOp, [x]))
        for op in (nn.ReduceMaxOp, nn.ReduceMinOp):
            for axes in ([0], [1], [0, 1]):
                cases.append(Case(f"{op.name}-nan-rows-{axes}-{dt(dtype)}", lambda v, op=op, a=axes: op(v, a), [x]))
        pool_input = x[:36, :36].reshape(1, 4, 18, 18)
        cases.append(
            Case(f"nn.max_pool2d-nan-{dt(dtype)}", lambda v: nn.MaxPool2DOp(v, [3, 2], [2, 2], [1, 0, 1, 1]), [pool_input])
        )
    return cases


def integer_cases() -> list[Case]:
    cases = []
    for dtype in INTS:
        info = np.iinfo(dtype)
        x = np.array([info.max, info.min, 0, -1, 1, info.max - 1, info.min + 1, 7, -7, info.min], dtype)
        y = np.array([1, -1, 0, 0, 2, 3, -1, 2, -2, 0], dtype)
        for op in (nn.DivOp, nn.AddOp, nn.SubOp, nn.MulOp, nn.MaximumOp, nn.MinimumOp):
            cases.append(Case(f"{op.name}-edges-{dt(dtype)}", op, [x, y]))
        for op in (nn.NegOp, nn.AbsOp, nn.SignOp, nn.ReluOp):
            cases.append(Case(f"{op.name}-edges-{dt(dtype)}", op, [x]))
    return cases


SATURATION = {
    F32: [2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 3e9, -3e9, np.nan, np.inf, -np.inf,
          0.5, -0.5, -1.5, 1.5, 9.3e18, 9.2233715e18, -9.2233715e18, 65519.0, 65520.0, 3.3e38, 1e-40],
    F64: [2147483647.5, -2147483648.9, 2147483647.0, -2147483649.0, 9223372036854775807.0,
          -9223372036854775808.0, 1e300, 5e-324, -0.0, 65520.0, 65519.99, 3.3895314e38, 3.4e38,
          1e-40, np.nan, -np.inf, 0.999999999, -0.999999999, 2.5, -2.5],
}  # fmt: skip


def conversion_cases() -> list[Case]:
    cases = []
    for source, data in SATURATION.items():
        x = np.array(data, source)
        for target in ALL:
            t = element_type_for(target)
            cases.append(Case(f"nn.convert-saturation-{dt(source)}-{dt(target)}", lambda v, t=t: nn.ConvertOp(v, t), [x]))
    big = np.array([2**31 - 1, -(2**31), 2**24 + 1, 2**53 + 1, -(2**63), 2**63 - 1, 65505, 65519, 65520, 0, -1], I64)
    for target in ALL:
        t = element_type_for(target)
        cases.append(Case(f"nn.convert-wide-i64-{dt(target)}", lambda v, t=t: nn.ConvertOp(v, t), [big]))
    return cases


def float_variants() -> list[Case]:
    """f32 and f64 (i32/i64 for integer-only ops) wherever the tables use other dtypes."""
    cases: list[Case] = []
    for dtype in (F32, F64):
        x = values((4, 6), dtype, seed=50, special=True)
        y = values((4, 6), dtype, seed=51, special=True)
        y.reshape(-1)[:4] = x.reshape(-1)[:4]
        for direction in nn.COMPARISON_DIRECTIONS:
            cases.append(Case(f"nn.compare-{direction}-{dt(dtype)}-v", lambda a, b, d=direction: nn.CompareOp(d, a, b), [x, y]))
        cases.append(Case(f"nn.select-{dt(dtype)}-v", nn.SelectOp, [values((4, 6), I1, seed=52), x, y]))
        cases.append(Case(f"nn.constant-{dt(dtype)}-v", lambda d=values((2, 3), dtype, seed=53, special=True): nn.ConstantOp(to_attribute(d))))
        cases.append(Case(f"nn.broadcast_in_dim-{dt(dtype)}", lambda v: nn.BroadcastInDimOp(v, [2, 3, 4, 6], [1, 3]), [values((3, 6), dtype, seed=54, special=True)]))
        cases.append(Case(f"nn.broadcast_in_dim-scalar-{dt(dtype)}", lambda v: nn.BroadcastInDimOp(v, [5, 2], []), [np.array(-0.0, dtype)]))
        cases.append(Case(f"nn.reshape-{dt(dtype)}", lambda v: nn.ReshapeOp(v, (3, 8)), [x]))
        cases.append(Case(f"nn.transpose-{dt(dtype)}", lambda v: nn.TransposeOp(v, (2, 0, 1)), [values((2, 3, 5), dtype, seed=55, special=True)]))
        w = values((5, 6), dtype, seed=56, special=True)
        for start, limit, stride in table.SLICES:
            cases.append(Case(f"nn.slice-{start}-{limit}-{stride}-{dt(dtype)}", lambda a, s=start, lm=limit, k=stride: nn.SliceOp(a, s, lm, k), [w]))
        m = values((4, 5), dtype, seed=57)
        u = values((3, 2), dtype, seed=58)
        for k, (s0, s1) in enumerate(DYNAMIC_STARTS):
            cases.append(Case(f"nn.dynamic_slice-{k}-{dt(dtype)}", lambda a, i, j: nn.DynamicSliceOp(a, [i, j], [2, 3]), [m, s0, s1]))
            cases.append(Case(f"nn.dynamic_update_slice-{k}-{dt(dtype)}", lambda a, b, i, j: nn.DynamicUpdateSliceOp(a, b, [i, j]), [m, u, s0, s1]))
        parts = [values((2, 3), dtype, seed=59), values((0, 3), dtype), values((1, 3), dtype, seed=60, special=True)]
        cases.append(Case(f"nn.concatenate-0-{dt(dtype)}", lambda a, b, c: nn.ConcatenateOp([a, b, c], 0), parts))
        cases.append(Case(f"nn.concatenate-1-{dt(dtype)}", lambda a, b: nn.ConcatenateOp([a, b], 1), [m, m[:, :2].copy()]))
        cases.append(Case(f"nn.pad-{dt(dtype)}", lambda a, p: nn.PadOp(a, p, [2, 0], [1, 3]), [m, np.array(np.nan, dtype)]))
        rows = values((5, 3), dtype, seed=61, special=True)
        idx = np.array([0, 4, -1, -5, 7, -9, 4, 4], np.int32)  # repeats, negatives wrap once, then clamp
        cases.append(Case(f"nn.gather-0-{dt(dtype)}", lambda a, i: nn.GatherOp(a, i, 0), [rows, idx]))
        cases.append(Case(f"nn.gather-1-{dt(dtype)}", lambda a, i: nn.GatherOp(a, i, 1), [rows, idx.astype(np.int64)]))
        updates = values((8, 3), dtype, seed=62)
        cases.append(Case(f"nn.scatter_add-0-{dt(dtype)}", lambda a, i, v: nn.ScatterAddOp(a, i, v, 0), [rows, idx, updates]))
        cases.append(
            Case(
                f"nn.scatter_add-1-{dt(dtype)}",
                lambda a, i, v: nn.ScatterAddOp(a, i, v, 1),
                [values((2, 4), dtype, seed=63), np.array([[3, 3], [-1, 0], [9, -9]], np.int64), values((2, 3, 2), dtype, seed=64)],
                exact=False,
            )
        )
        for k, (xs, kernel, stride, padding) in enumerate(table.POOLS):
            cases.append(
                Case(f"nn.max_pool2d-{k}-{dt(dtype)}", lambda v, kk=kernel, s=stride, p=padding: nn.MaxPool2DOp(v, kk, s, p), [values(xs, dtype, seed=65, special=True)])
            )
        # Elementwise ops on rows long enough for vector loops with a remainder.
        a, b = values((3, 37), dtype, seed=66, special=True), values((3, 37), dtype, seed=67)
        for op in (nn.AddOp, nn.SubOp, nn.MulOp, nn.DivOp, nn.MaximumOp, nn.MinimumOp, nn.PowOp):
            cases.append(Case(f"{op.name}-wide-{dt(dtype)}", op, [a, b]))
        for op in (nn.ExpOp, nn.TanhOp, nn.SigmoidOp, nn.SqrtOp, nn.RsqrtOp, nn.LogOp, nn.SinOp, nn.CosOp, nn.ErfOp):
            cases.append(Case(f"{op.name}-wide-{dt(dtype)}", op, [a]))
        cases.append(Case(f"nn.reduce_sum-wide-{dt(dtype)}", lambda v: nn.ReduceSumOp(v, [1]), [b], exact=False))
    for dtype in INTS:
        x = values((4, 6), dtype, seed=68, special=True)
        for op in (nn.AndOp, nn.OrOp, nn.XorOp):
            cases.append(Case(f"{op.name}-{dt(dtype)}-v", op, [x, values((4, 6), dtype, seed=69, special=True)]))
        cases.append(Case(f"nn.shift_left-{dt(dtype)}-v", nn.ShiftLeftOp, [x, np.arange(-3, 21, dtype=dtype).reshape(4, 6) * 3]))
        cases.append(Case(f"nn.shift_right_logical-{dt(dtype)}-v", nn.ShiftRightLogicalOp, [x, np.arange(-3, 21, dtype=dtype).reshape(4, 6) * 3]))
    return cases


DYNAMIC_STARTS = [
    (Scalar(2, IndexType()), Scalar(np.int32(-3), i32)),  # negative: clamped to 0
    (Scalar(10, IndexType()), Scalar(np.int64(3), i64)),  # past the end: clamped to size - window
    (Scalar(-1, IndexType()), Scalar(np.int64(2**40), i64)),
    (Scalar(1, IndexType()), Scalar(np.int32(1), i32)),
]


def _eig_squared(a: SSAValue) -> list[SSAValue]:
    """nn.eig's w and its vectors' squared parts: in f32 the CPU's sgeev and the interpreter's numpy
    (which computes in f64) may give a vector of the opposite sign (each is unique up to +-1 once
    its largest component is real), so the f32 cases compare v * v."""
    eig = nn.EigOp(a)
    return [eig.w, nn.MulOp(eig.v, eig.v).result]


def eig_cases() -> list[Case]:
    """nn.eig (no reference loop, so not in the nn-to-linalg tables, which the GPU shares): LAPACK's
    geev through the shim against the interpreter's numpy.linalg.eig, conjugate pairs and real
    eigenvalues, a batch with a NaN element (all NaN), 1x1."""
    cases: list[Case] = []
    for dtype in (F32, F64):
        body = _eig_squared if dtype == F32 else nn.EigOp
        batch = values((3, 5, 5), dtype, seed=52)
        batch[2, 1, 4] = np.nan
        cases += [
            Case(f"nn.eig-{dt(dtype)}", body, [values((6, 6), dtype, seed=53)], exact=False),
            Case(f"nn.eig-batched-nan-{dt(dtype)}", body, [batch], exact=False),
            Case(f"nn.eig-1x1-{dt(dtype)}", body, [values((1, 1), dtype, seed=54)], exact=False),
        ]
    return cases


def zero_size_cases() -> list[Case]:
    cases: list[Case] = []
    for dtype in (F32, F64):
        z = np.zeros((0, 3), dtype)
        cases += [
            Case(f"nn.add-empty-{dt(dtype)}", nn.AddOp, [z, z]),
            Case(f"nn.exp-empty-{dt(dtype)}", nn.ExpOp, [z]),
            Case(f"nn.reduce_sum-empty-to-row-{dt(dtype)}", lambda v: nn.ReduceSumOp(v, [0]), [z]),
            Case(f"nn.reduce_max-empty-to-row-{dt(dtype)}", lambda v: nn.ReduceMaxOp(v, [0], True), [z]),
            Case(f"nn.reduce_min-empty-{dt(dtype)}", lambda v: nn.ReduceMinOp(v, [1]), [z]),
            Case(f"nn.matmul-empty-m-{dt(dtype)}", nn.MatmulOp, [z, np.ones((3, 2), dtype)]),
            Case(f"nn.matmul-k0-{dt(dtype)}", nn.MatmulOp, [np.zeros((2, 0), dtype), np.zeros((0, 4), dtype)]),
            Case(f"nn.transpose-empty-{dt(dtype)}", lambda v: nn.TransposeOp(v, (1, 0)), [z]),
            Case(f"nn.reshape-empty-{dt(dtype)}", lambda v: nn.ReshapeOp(v, (3, 0, 1)), [z]),
            Case(f"nn.broadcast_in_dim-to-empty-{dt(dtype)}", lambda v: nn.BroadcastInDimOp(v, [0, 3], [1]), [np.ones(3, dtype)]),
            Case(f"nn.slice-to-empty-{dt(dtype)}", lambda v: nn.SliceOp(v, [2, 0], [2, 3], [1, 1]), [np.ones((4, 3), dtype)]),
            Case(f"nn.pad-empty-{dt(dtype)}", lambda v, p: nn.PadOp(v, p, [1, 0], [2, 1]), [z, np.array(2.5, dtype)]),
            Case(f"nn.gather-empty-index-{dt(dtype)}", lambda v, i: nn.GatherOp(v, i, 0), [np.ones((4, 3), dtype), np.zeros((0, 2), np.int32)]),
            Case(f"nn.scatter_add-no-updates-{dt(dtype)}", lambda v, i, u: nn.ScatterAddOp(v, i, u, 0), [np.ones((4, 3), dtype), np.zeros((0,), np.int32), np.zeros((0, 3), dtype)]),
            Case(f"nn.conv2d-batch0-{dt(dtype)}", lambda x, w: nn.Conv2DOp(x, w, (1, 1), (1, 1, 1, 1), (1, 1)), [np.zeros((0, 2, 5, 5), dtype), np.ones((3, 2, 3, 3), dtype)]),
            Case(f"nn.max_pool2d-batch0-{dt(dtype)}", lambda x: nn.MaxPool2DOp(x, [2, 2], [2, 2], [0, 0, 0, 0]), [np.zeros((0, 2, 4, 4), dtype)]),
            Case(f"nn.iota-empty-{dt(dtype)}", lambda t=TensorType(element_type_for(dtype), [0, 4]): nn.IotaOp(1, t)),
        ]
    return cases


def to_attribute(data: np.ndarray) -> Any:
    from irgrad.ir_numpy import to_attribute as convert

    return convert(data)


# ---------------------------------------------------------------------------------------------
# Groups: one module and one compile each
# ---------------------------------------------------------------------------------------------

GROUPS: dict[str, Callable[[], list[Case]]] = {
    "elementwise": table.elementwise_cases,
    "creation": table.creation_cases,
    "reduction": table.reduction_cases,
    "data_movement": table.data_movement_cases,
    "indirect": table.indirect_cases,
    "linear": table.linear_cases,
    "factorization": table.factorization_cases,
    "nan": nan_cases,
    "integer": integer_cases,
    "conversion": conversion_cases,
    "float_variants": float_variants,
    "zero_size": zero_size_cases,
    "eig": eig_cases,
}


@functools.cache
def group_cases(group: str) -> list[Case]:
    return GROUPS[group]()


def build_function(name: str, case: Case) -> tuple[FuncOp, list[Any]]:
    types = [a.type if isinstance(a, Scalar) else tensor_type_for(np.asarray(a)) for a in case.args]
    block = Block(arg_types=types)
    with ImplicitBuilder(block):
        results = case.body(*block.args)
        if isinstance(results, Operation):
            results = list(results.results)
        elif isinstance(results, SSAValue):
            results = [results]
        results = [SSAValue.get(r) for r in results]
        ReturnOp(*results)
    func = FuncOp(name, FunctionType.from_lists(types, [r.type for r in results]), Region(block))
    return func, [a.value if isinstance(a, Scalar) else a for a in case.args]


@functools.cache
def group_outcomes(group: str) -> dict[str, tuple[Outcome, list[str]]]:
    """Each case's outcome and the (op name, element type) pairs its function exercises."""
    cases = group_cases(group)
    built = [build_function(f"case{k}", c) for k, c in enumerate(cases)]
    exercised = []
    for func, _ in built:
        pairs = []
        for op in func.walk():
            if op.dialect_name() == "nn":
                for v in [*op.operands, *op.results]:
                    element = v.type.get_element_type() if isinstance(v.type, TensorType) else v.type
                    pairs.append(f"{op.name}:{element}")
        exercised.append(pairs)
    outcomes = compile_batch([f for f, _ in built], [a for _, a in built])
    return {c.name: (o, e) for c, o, e in zip(cases, outcomes, exercised)}


def case_ids() -> list[tuple[str, str]]:
    return [(g, c.name) for g in GROUPS for c in group_cases(g)]


def tolerance(case: Case) -> dict[str, bool]:
    op = case.name.split("-")[0]
    if op in ACCUMULATING or not case.exact:
        return {"normwise": True}
    if op in TRANSCENDENTAL:
        return {}
    return {"exact": True}


@pytest.mark.parametrize(("group", "name"), case_ids(), ids=[f"{g}:{n}" for g, n in case_ids()])
def test_op_on_cpu_agrees_with_interpreter(group: str, name: str) -> None:
    case = next(c for c in group_cases(group) if c.name == name)
    outcome, _ = group_outcomes(group)[name]
    expected, got = outcome.results()
    assert_same_results(expected, got, what=name, **tolerance(case))


def test_every_nn_op_runs_in_f32_and_f64() -> None:
    """Every op of the dialect appears in a compiled case in f32 and f64, or in i32 and i64
    for the integer-only ones (bitwise and shifts)."""
    from irgrad.dialects.nn import NN

    exercised: set[str] = set()
    for group in GROUPS:
        for _, pairs in group_outcomes(group).values():
            exercised.update(pairs)
    integer_only = {"nn.and", "nn.or", "nn.xor", "nn.shift_left", "nn.shift_right_logical"}
    missing = []
    operations = list(NN.operations)
    for op in operations:
        if op in nn.EXPANDED_OPS:
            continue  # complex parts and nn.fft: compiled through their expansions (test_complex_numbers.py, test_jax_fft.py)
        wanted = ("i32", "i64") if op.name in integer_only else ("f32", "f64")
        missing += [f"{op.name}:{t}" for t in wanted if f"{op.name}:{t}" not in exercised]
    assert not missing, f"ops without a compiled case: {missing}"
    assert len(operations) == 61
