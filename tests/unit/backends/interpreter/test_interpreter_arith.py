"""The reference interpreter on arith and math, on scalars and on tensors.

Signless integers read as signed or unsigned per op, results wrap; undefined behaviour
(division by zero, signed overflow in division, oversized shifts, out-of-range float to int)
is reported; float ops follow IEEE (NaN, signed zeros) in the exact dtype.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from _interpreter_util import assert_same, run_text
from irgrad.backends.interpreter import UndefinedBehaviorError, UnsupportedOpError

BF16 = np.dtype(ml_dtypes.bfloat16)
NAN, INF = np.nan, np.inf
I32_MIN, I32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max


def binary(op: str, t: str, result: str | None = None) -> str:
    result = result or t
    return f"""
    func.func @main(%a: {t}, %b: {t}) -> {result} {{
      %r = {op} %a, %b : {t}
      func.return %r : {result}
    }}
    """


def run_binary(op: str, t: str, a, b, result: str | None = None):
    return run_text(binary(op, t, result), a, b)[0]


def cast(op: str, src: str, dst: str, x):
    text = f"""
    func.func @main(%a: {src}) -> {dst} {{
      %r = {op} %a : {src} to {dst}
      func.return %r : {dst}
    }}
    """
    return run_text(text, x)[0]


# ---------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------

A = np.array([7, -7, 7, -7, I32_MIN, I32_MAX, 0, 5], np.int32)
B = np.array([2, 2, -2, -2, 3, 2, 9, -1], np.int32)
U32 = np.uint32


def trunc_div(a, b):
    return np.array([int(x / y) if y else 0 for x, y in zip(a.tolist(), b.tolist())]).astype(a.dtype)


INTEGER_CASES = [
    ("arith.addi", lambda a, b: a + b),
    ("arith.subi", lambda a, b: a - b),
    ("arith.muli", lambda a, b: a * b),
    ("arith.divsi", trunc_div),
    ("arith.remsi", lambda a, b: a - trunc_div(a, b) * b),
    ("arith.floordivsi", lambda a, b: a // b),
    ("arith.ceildivsi", lambda a, b: -((-a.astype(np.int64)) // b)),
    ("arith.divui", lambda a, b: (a.view(U32) // b.view(U32)).view(np.int32)),
    ("arith.remui", lambda a, b: (a.view(U32) % b.view(U32)).view(np.int32)),
    ("arith.ceildivui", lambda a, b: (-(-(a.view(U32).astype(np.int64)) // b.view(U32).astype(np.int64)))),
    ("arith.andi", lambda a, b: a & b),
    ("arith.ori", lambda a, b: a | b),
    ("arith.xori", lambda a, b: a ^ b),
    ("arith.maxsi", np.maximum),
    ("arith.minsi", np.minimum),
    ("arith.maxui", lambda a, b: np.maximum(a.view(U32), b.view(U32)).view(np.int32)),
    ("arith.minui", lambda a, b: np.minimum(a.view(U32), b.view(U32)).view(np.int32)),
]


@pytest.mark.parametrize("op, ref", INTEGER_CASES, ids=[c[0] for c in INTEGER_CASES])
def test_integer_ops_on_tensors_and_scalars(op, ref):
    a, b = A[:-2], B[:-2]  # no INT_MIN / -1 pairs here
    with np.errstate(all="ignore"):
        expected = np.asarray(ref(a, b)).astype(np.int32)
    assert_same(run_binary(op, "tensor<6xi32>", a, b), expected)
    for x, y, e in zip(a, b, expected):
        r = run_binary(op, "i32", x, y)
        assert r == e and r.dtype == np.int32, (x, y, r, e)


def test_shifts():
    a = np.array([1, -8, I32_MIN, 5], np.int32)
    s = np.array([3, 1, 31, 0], np.int32)
    assert_same(run_binary("arith.shli", "tensor<4xi32>", a, s), a << s)
    assert_same(run_binary("arith.shrsi", "tensor<4xi32>", a, s), a >> s)
    assert_same(run_binary("arith.shrui", "tensor<4xi32>", a, s), (a.view(U32) >> s.view(U32)).view(np.int32))
    with pytest.raises(UndefinedBehaviorError, match="shift by 32 bits or more"):
        run_binary("arith.shli", "i32", np.int32(1), np.int32(32))
    with pytest.raises(UndefinedBehaviorError):
        run_binary("arith.shrsi", "i32", np.int32(1), np.int32(-1))  # -1 is a huge unsigned shift


@pytest.mark.parametrize("op", ["arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi", "arith.ceildivui"])
def test_division_by_zero_is_undefined(op):
    with pytest.raises(UndefinedBehaviorError, match=rf"test.mlir:3:\d+: error: '{op}' op (division|remainder) by zero is undefined behaviour"):
        run_binary(op, "tensor<2xi32>", np.array([1, 2], np.int32), np.array([1, 0], np.int32))


def test_signed_division_overflow_is_undefined_but_remainder_is_zero():
    with pytest.raises(UndefinedBehaviorError, match="signed division overflow"):
        run_binary("arith.divsi", "i32", np.int32(I32_MIN), np.int32(-1))
    assert run_binary("arith.remsi", "i32", np.int32(I32_MIN), np.int32(-1)) == 0


def test_index_arithmetic_is_python_ints_wrapping_at_64_bits():
    assert run_binary("arith.addi", "index", 2**63 - 1, 1) == -(2**63)
    r = run_binary("arith.divsi", "index", -7, 2)
    assert r == -3 and type(r) is int
    assert run_binary("arith.remui", "index", -1, 10) == (2**64 - 1) % 10


def test_i1_arithmetic_is_modulo_two_and_signed_true_is_minus_one():
    t, f = np.bool_(True), np.bool_(False)
    assert run_binary("arith.addi", "i1", t, t) == f
    assert run_binary("arith.muli", "i1", t, t) == t
    assert run_binary("arith.cmpi slt,", "i1", t, f, "i1") == t
    assert run_binary("arith.cmpi ult,", "i1", t, f, "i1") == f
    assert run_binary("arith.maxsi", "i1", t, f) == f


CMPI = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal}


@pytest.mark.parametrize("predicate", [*CMPI, "ult", "ule", "ugt", "uge"])
def test_cmpi(predicate):
    a, b = A, B
    if predicate in CMPI:
        expected = CMPI[predicate](a, b)
    else:
        expected = CMPI["s" + predicate[1:]](a.view(U32), b.view(U32))
    # xDSL's arith.cmpi only types scalar results (i1), so compare element by element.
    for x, y, e in zip(a, b, expected):
        r = run_binary(f"arith.cmpi {predicate},", "i32", x, y, "i1")
        assert r == e and r.dtype == np.bool_, (x, y)


# ---------------------------------------------------------------------------------------------
# Floats
# ---------------------------------------------------------------------------------------------

FA = np.array([1.5, -2.0, 0.0, -0.0, NAN, INF, 3.0, -0.0], np.float32)
FB = np.array([0.5, 0.0, -0.0, 0.0, 1.0, INF, NAN, -0.0], np.float32)


@pytest.mark.parametrize("op, ref", [
    ("arith.addf", np.add), ("arith.subf", np.subtract),
    ("arith.mulf", np.multiply), ("arith.divf", np.divide),
])
@pytest.mark.parametrize("dtype, t", [(np.float32, "f32"), (np.float64, "f64"), (np.float16, "f16"), (BF16, "bf16")])
def test_float_arithmetic(op, ref, dtype, t):
    a, b = FA.astype(dtype), FB.astype(dtype)
    with np.errstate(all="ignore"):
        expected = ref(a, b)
    assert_same(run_binary(op, f"tensor<8x{t}>", a, b), expected)
    r = run_binary(op, t, a[0], b[0])
    assert r.dtype == dtype and r == expected[0]


def test_maximumf_minimumf_maxnumf_minnumf():
    assert_same(run_binary("arith.maximumf", "tensor<8xf32>", FA, FB), np.array([1.5, 0, 0, 0, NAN, INF, NAN, -0.0], np.float32))
    assert_same(run_binary("arith.minimumf", "tensor<8xf32>", FA, FB), np.array([0.5, -2, -0.0, -0.0, NAN, INF, NAN, -0.0], np.float32))
    assert_same(run_binary("arith.maxnumf", "tensor<8xf32>", FA, FB), np.array([1.5, 0, 0, 0, 1, INF, 3, -0.0], np.float32))
    assert_same(run_binary("arith.minnumf", "tensor<8xf32>", FA, FB), np.array([0.5, -2, -0.0, -0.0, 1, INF, 3, -0.0], np.float32))


def test_negf():
    text = """
    func.func @main(%a: tensor<3xbf16>) -> tensor<3xbf16> {
      %r = arith.negf %a : tensor<3xbf16>
      func.return %r : tensor<3xbf16>
    }
    """
    x = np.array([0.0, -1.5, NAN], BF16)
    y = run_text(text, x)[0]
    assert y.dtype == BF16 and np.signbit(y.astype(np.float32)[0]) and y[1] == 1.5


CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


def cmpf_reference(predicate: str, a, b):
    unordered = np.isnan(a) | np.isnan(b)
    if predicate in ("false", "true"):
        return np.full(a.shape, predicate == "true")
    if predicate == "ord":
        return ~unordered
    if predicate == "uno":
        return unordered
    base = {"eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b, "ne": (a < b) | (a > b)}[predicate[1:]]
    return (base & ~unordered) if predicate[0] == "o" else (base | unordered)


@pytest.mark.parametrize("predicate", CMPF)
def test_cmpf(predicate):
    expected = cmpf_reference(predicate, FA, FB)
    for x, y, e in zip(FA, FB, expected):  # xDSL's arith.cmpf types only scalar results
        r = run_binary(f"arith.cmpf {predicate},", "f32", x, y, "i1")
        assert r == e and r.dtype == np.bool_, (x, y)


def test_select_with_a_scalar_condition_picks_whole_values():
    # xDSL's arith.select takes only an i1 condition; elementwise selection is exercised
    # through linalg bodies (test_interpreter_linalg.py).
    text = """
    func.func @main(%c: i1, %a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, f32) {
      %whole = arith.select %c, %a, %b : tensor<3xf32>
      %x = arith.constant 1.0 : f32
      %y = arith.constant 2.0 : f32
      %s = arith.select %c, %x, %y : f32
      func.return %whole, %s : tensor<3xf32>, f32
    }
    """
    a = np.array([1, 2, 3], np.float32)
    whole, s = run_text(text, False, a, -a)
    assert_same(whole, -a)
    assert s == np.float32(2.0) and s.dtype == np.float32
    whole, s = run_text(text, np.bool_(True), a, -a)
    assert_same(whole, a)
    assert s == np.float32(1.0)


def test_constants():
    text = """
    func.func @main() -> (index, i1, bf16, tensor<2x2xi32>, tensor<3xf64>, i8) {
      %a = arith.constant 42 : index
      %b = arith.constant true
      %c = arith.constant 1.5 : bf16
      %d = arith.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>
      %e = arith.constant dense<2.5> : tensor<3xf64>
      %f = arith.constant -128 : i8
      func.return %a, %b, %c, %d, %e, %f : index, i1, bf16, tensor<2x2xi32>, tensor<3xf64>, i8
    }
    """
    a, b, c, d, e, f = run_text(text)
    assert a == 42 and type(a) is int
    assert b == np.bool_(True) and b.dtype == np.bool_
    assert c.dtype == BF16 and float(c) == 1.5
    assert_same(d, np.array([[1, -2], [3, 4]], np.int32))
    assert_same(e, np.full(3, 2.5))
    assert f == -128 and f.dtype == np.int8


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


def test_integer_casts():
    assert cast("arith.extsi", "i32", "i64", np.int32(-5)) == -5
    assert cast("arith.extui", "i32", "i64", np.int32(-5)) == 2**32 - 5
    assert cast("arith.trunci", "i64", "i32", np.int64(2**40 + 7)) == 7
    assert cast("arith.trunci", "i32", "i1", np.int32(3)) == np.bool_(True)
    assert cast("arith.extsi", "i1", "i32", np.bool_(True)) == -1
    assert cast("arith.extui", "i1", "i32", np.bool_(True)) == 1
    assert cast("arith.index_cast", "index", "i32", 2**32 + 9) == 9
    r = cast("arith.index_cast", "i32", "index", np.int32(-3))
    assert r == -3 and type(r) is int


def test_int_float_casts():
    assert cast("arith.sitofp", "i32", "f32", np.int32(-1)) == np.float32(-1)
    assert cast("arith.uitofp", "i32", "f32", np.int32(-1)) == np.float32(2**32)
    assert cast("arith.sitofp", "i1", "f32", np.bool_(True)) == np.float32(-1)
    assert cast("arith.fptosi", "f32", "i32", np.float32(-2.9)) == -2
    assert cast("arith.fptoui", "f64", "i32", 4e9) == np.uint32(4000000000).astype(np.int32)
    for bad in (NAN, 3e9, -3e9):
        with pytest.raises(UndefinedBehaviorError, match="out of the integer range"):
            cast("arith.fptosi", "f64", "i32", bad)
    with pytest.raises(UndefinedBehaviorError):
        cast("arith.fptoui", "f32", "i32", np.float32(-1))


def test_float_casts_round_once():
    y = cast("arith.truncf", "f64", "bf16", 1 + 2**-8 + 2**-30)
    assert y.dtype == BF16 and float(y) == 1 + 2**-7
    assert cast("arith.truncf", "f32", "f16", np.float32(1e5)) == np.float16(INF)
    z = cast("arith.extf", "bf16", "f64", BF16.type(3.5))
    assert z == 3.5 and z.dtype == np.float64
    x = np.array([1.0, -2.5], np.float32)
    t = cast("arith.bitcast", "tensor<2xf32>", "tensor<2xi32>", x)
    assert_same(t, x.view(np.int32))


# ---------------------------------------------------------------------------------------------
# math
# ---------------------------------------------------------------------------------------------

MATH_UNARY = {
    "math.absf": np.abs, "math.ceil": np.ceil, "math.floor": np.floor, "math.trunc": np.trunc,
    "math.roundeven": np.rint, "math.exp": np.exp, "math.exp2": np.exp2, "math.expm1": np.expm1,
    "math.log": np.log, "math.log2": np.log2, "math.log10": np.log10, "math.log1p": np.log1p,
    "math.sqrt": np.sqrt, "math.rsqrt": lambda x: 1 / np.sqrt(x), "math.cbrt": np.cbrt,
    "math.sin": np.sin, "math.cos": np.cos, "math.tan": np.tan, "math.tanh": np.tanh,
    "math.sinh": np.sinh, "math.cosh": np.cosh, "math.atan": np.arctan, "math.asinh": np.arcsinh,
    "math.asin": np.arcsin, "math.acos": np.arccos, "math.atanh": np.arctanh,
}


def unary(op: str, t: str) -> str:
    return f"""
    func.func @main(%a: {t}) -> {t} {{
      %r = {op} %a : {t}
      func.return %r : {t}
    }}
    """


@pytest.mark.parametrize("op", MATH_UNARY)
@pytest.mark.parametrize("dtype, t", [(np.float32, "f32"), (np.float64, "f64"), (BF16, "bf16")])
def test_math_unary(op, dtype, t):
    x = np.random.default_rng(0).uniform(-0.9, 0.9, size=6).astype(dtype)
    ref = MATH_UNARY[op]
    with np.errstate(all="ignore"):
        expected = ref(x.astype(np.float32)).astype(dtype) if dtype == BF16 else ref(x)
    assert_same(run_text(unary(op, f"tensor<6x{t}>"), x)[0], expected)


def test_math_round_ties_away_from_zero():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.0], np.float32)
    assert_same(run_text(unary("math.round", "tensor<7xf32>"), x)[0], np.array([1, 2, 3, -1, -3, 0, -0.0], np.float32))
    assert_same(run_text(unary("math.roundeven", "tensor<7xf32>"), x)[0], np.array([0, 2, 2, -0.0, -2, 0, -0.0], np.float32))


def test_math_binary_and_fma():
    a = np.array([1.0, -2.0, 0.5], np.float64)
    b = np.array([3.0, 0.5, -1.0], np.float64)
    assert_same(run_binary("math.powf", "tensor<3xf64>", np.abs(a), b), np.power(np.abs(a), b))
    assert_same(run_binary("math.atan2", "tensor<3xf64>", a, b), np.arctan2(a, b))
    assert_same(run_binary("math.copysign", "tensor<3xf64>", a, b), np.copysign(a, b))
    text = """
    func.func @main(%a: f32, %b: f32, %c: f32) -> f32 {
      %r = math.fma %a, %b, %c : f32
      func.return %r : f32
    }
    """
    a, b = np.float32(1 + 2**-12), np.float32(1 - 2**-12)
    c = np.float32(-1.0)
    assert run_text(text, a, b, c)[0] == np.float32(-(2.0**-24))  # unfused would round to 0


def test_math_integer_ops():
    x = np.array([0, 1, -1, 8, 12, I32_MIN], np.int32)
    assert_same(run_text(unary("math.ctpop", "tensor<6xi32>"), x)[0], np.array([0, 1, 32, 1, 2, 1], np.int32))
    assert_same(run_text(unary("math.ctlz", "tensor<6xi32>"), x)[0], np.array([32, 31, 0, 28, 28, 0], np.int32))
    assert_same(run_text(unary("math.cttz", "tensor<6xi32>"), x)[0], np.array([32, 0, 0, 3, 2, 31], np.int32))
    assert_same(run_text(unary("math.absi", "tensor<6xi32>"), x)[0], np.abs(x))


def test_math_ipowi_and_fpowi():
    base = np.array([2, -3, 1, -1, -1, 5, 7], np.int32)
    exp = np.array([10, 3, -4, -3, -2, -1, 0], np.int32)
    assert_same(run_binary("math.ipowi", "tensor<7xi32>", base, exp), np.array([1024, -27, 1, -1, 1, 0, 1], np.int32))
    with pytest.raises(UndefinedBehaviorError, match="zero to a negative power"):
        run_binary("math.ipowi", "i32", np.int32(0), np.int32(-1))
    text = """
    func.func @main(%a: f32, %n: i32) -> f32 {
      %r = math.fpowi %a, %n : f32, i32
      func.return %r : f32
    }
    """
    assert run_text(text, np.float32(2.0), np.int32(-3))[0] == np.float32(0.125)


def test_math_erf_is_libms():
    x = np.array([-2.5, -0.1, 0.0, 0.3, 4.0])
    for value in x:
        got = run_text(unary("math.erf", "f64"), np.float64(value))[0]
        assert got == math.erf(value)
    assert run_text(unary("math.erf", "f32"), np.float32(0.5))[0] == np.float32(math.erf(0.5))
