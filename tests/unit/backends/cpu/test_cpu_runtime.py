"""The CPU backend against the reference interpreter, on hand-written stage-"loops" programs.

Each program is lowered with `convert-to-llvm`, compiled for the host CPU (O3, llvmlite),
called with numpy arrays and compared with the interpreter running the same stage-"loops"
IR (`_cpu_util.check_loops`): f32 within 1e-5 relative, f64 within 1e-12, integers and
bools exactly, NaN and infinities where the interpreter has them. Then the runtime itself:
argument checks (before anything runs), copies of arrays the code cannot read in place,
object code round trips, and a 10^5-call loop that must not grow the process.
"""

from __future__ import annotations

import gc
import os

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, f32

from _cpu_util import BF16, check_loops, compiled, function, interpret, lower, parse
from irgrad.backends.cpu import (
    ArgumentError,
    CompileError,
    compile_module,
    load_object,
    object_code,
)
from irgrad.lowering.contracts import ContractError

FLOAT_TYPES = {
    "f16": np.dtype(np.float16),
    "bf16": BF16,
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, -7.25, 100.0,
           0.75, 1e-6, 20.0]  # fmt: skip


def parallel_map(
    n: int, t: str, result_t: str, body: str, n_inputs: int = 1, name: str = "f"
) -> str:
    """`@name(%x0..: memref<nxT>, %out: memref<nxR>)`: out[i] = body(x0[i], ...) in scf.parallel."""
    args = ", ".join(f"%x{k}: memref<{n}x{t}>" for k in range(n_inputs))
    loads = "\n".join(
        f"    %a{k} = memref.load %x{k}[%i] : memref<{n}x{t}>" for k in range(n_inputs)
    )
    return f"""
func.func @{name}({args}, %out: memref<{n}x{result_t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  "scf.parallel"(%c0, %cn, %c1) <{{operandSegmentSizes = array<i32: 1, 1, 1, 0>}}> ({{
  ^bb0(%i: index):
{loads}
    {body}
    memref.store %r, %out[%i] : memref<{n}x{result_t}>
    scf.reduce
  }}) : (index, index, index) -> ()
  func.return
}}"""


# ---------------------------------------------------------------------------------------------
# Elementwise float math, every dtype, special values
# ---------------------------------------------------------------------------------------------

UNARY = {
    "exp": "math.exp", "exp2": "math.exp2", "expm1": "math.expm1", "log": "math.log",
    "log2": "math.log2", "log10": "math.log10", "log1p": "math.log1p", "sqrt": "math.sqrt",
    "rsqrt": "math.rsqrt", "cbrt": "math.cbrt", "sin": "math.sin", "cos": "math.cos",
    "tan": "math.tan", "asin": "math.asin", "acos": "math.acos", "atan": "math.atan",
    "sinh": "math.sinh", "cosh": "math.cosh", "tanh": "math.tanh", "asinh": "math.asinh",
    "acosh": "math.acosh", "atanh": "math.atanh", "absf": "math.absf", "ceil": "math.ceil",
    "floor": "math.floor", "trunc": "math.trunc", "round": "math.round",
    "roundeven": "math.roundeven", "negf": "arith.negf",
}  # fmt: skip
EXACT_UNARY = {"absf", "ceil", "floor", "trunc", "round", "roundeven", "negf"}

BINARY = {
    "addf": "arith.addf", "subf": "arith.subf", "mulf": "arith.mulf", "divf": "arith.divf",
    "maximumf": "arith.maximumf", "minimumf": "arith.minimumf", "maxnumf": "arith.maxnumf",
    "minnumf": "arith.minnumf", "powf": "math.powf", "atan2": "math.atan2",
    "copysign": "math.copysign",
}  # fmt: skip
EXACT_BINARY = {
    "addf",
    "subf",
    "mulf",
    "divf",
    "maximumf",
    "minimumf",
    "maxnumf",
    "minnumf",
    "copysign",
}


def unary_module(t: str) -> str:
    n = len(SPECIAL) * 2
    return "\n".join(
        parallel_map(n, t, t, f"%r = {op} %a0 : {t}", name=f"t_{name}")
        for name, op in UNARY.items()
    )


def binary_module(t: str) -> str:
    n = len(SPECIAL) ** 2
    return "\n".join(
        parallel_map(n, t, t, f"%r = {op} %a0, %a1 : {t}", n_inputs=2, name=f"t_{name}")
        for name, op in BINARY.items()
    )


def unary_inputs(dtype: np.dtype) -> np.ndarray:
    values = np.array(
        SPECIAL + [0.25 * v for v in SPECIAL[3:]] + [1.5, -0.9, 0.999], dtype=np.float64
    )
    return values[: len(SPECIAL) * 2].astype(dtype)


@pytest.mark.parametrize("t", FLOAT_TYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_float_functions(t: str, name: str) -> None:
    x = unary_inputs(FLOAT_TYPES[t])
    check_loops(unary_module(t), f"t_{name}", x, exact=name in EXACT_UNARY)


@pytest.mark.parametrize("t", FLOAT_TYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_float_functions(t: str, name: str) -> None:
    dtype = FLOAT_TYPES[t]
    x, y = (v.ravel() for v in np.meshgrid(np.array(SPECIAL), np.array(SPECIAL)))
    if name == "powf":
        # numpy computes x**0.5 as sqrt(x), so (-inf)**0.5 is NaN there; C's pow (and
        # IEEE 754) give +inf, which the compiled code keeps.
        y = np.where((x == -np.inf) & (y == 0.5), 2.0, y)
    check_loops(
        binary_module(t),
        f"t_{name}",
        x.astype(dtype),
        y.astype(dtype),
        exact=name in EXACT_BINARY,
    )


def test_tanh_f32_over_its_range() -> None:
    """The inline rational tanh against float64 tanh on a dense sweep, tiny to saturated:
    within 7 ulp of f32 everywhere (math_to_llvm's documented bound), exact below 4e-4."""
    rng = np.random.default_rng(3)
    x = np.concatenate(
        [np.linspace(-12, 12, 40001), rng.uniform(-8, 8, 100_000),
         np.geomspace(1e-30, 20, 2000), -np.geomspace(1e-30, 20, 2000)]
    ).astype(np.float32)
    text = parallel_map(x.size, "f32", "f32", "%r = math.tanh %a0 : f32")
    (got,) = function(text, "f", 1)(x)
    expected = np.tanh(x.astype(np.float64))
    ulp = np.spacing(np.abs(expected).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - expected) / ulp).max() <= 7
    tiny = np.abs(x) < 4e-4
    np.testing.assert_array_equal(got[tiny], x[tiny])


CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
        "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]  # fmt: skip


@pytest.mark.parametrize("t", ["f32", "bf16", "f16"])
def test_float_comparisons_with_nan(t: str) -> None:
    dtype = FLOAT_TYPES[t]
    x, y = np.meshgrid(
        np.array([np.nan, -np.inf, -1.0, -0.0, 0.0, 2.0]),
        np.array([np.nan, -0.0, 0.0, 2.0, np.inf]),
    )
    x, y = x.ravel().astype(dtype), y.ravel().astype(dtype)
    for predicate in CMPF:
        text = parallel_map(x.size, t, "i1", f"%r = arith.cmpf {predicate}, %a0, %a1 : {t}", 2)
        check_loops(text, "f", x, y)


def test_nan_propagates_through_max_and_min_reductions() -> None:
    text = """
func.func @extrema(%x: memref<3x5xf32>, %mx: memref<3xf32>, %mn: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %lo = arith.constant 0xFF800000 : f32
  %hi = arith.constant 0x7F800000 : f32
  "scf.parallel"(%c0, %c3, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %m:2 = scf.for %j = %c0 to %c5 step %c1 iter_args(%a = %lo, %b = %hi) -> (f32, f32) {
      %v = memref.load %x[%i, %j] : memref<3x5xf32>
      %a1 = arith.maximumf %a, %v : f32
      %b1 = arith.minimumf %b, %v : f32
      scf.yield %a1, %b1 : f32, f32
    }
    memref.store %m#0, %mx[%i] : memref<3xf32>
    memref.store %m#1, %mn[%i] : memref<3xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}"""
    x = np.array(
        [[1, np.nan, 3, -4, 2], [-0.0, 0.0, -0.0, -0.0, -0.0], [5, 6, np.inf, -np.inf, np.nan]],
        dtype=np.float32,
    )
    _, (mx, mn) = check_loops(text, "extrema", x, exact=True)
    assert np.isnan(mx[0]) and np.isnan(mn[0]) and np.isnan(mx[2]) and np.isnan(mn[2])
    assert mx[1] == 0 and not np.signbit(mx[1]) and np.signbit(mn[1])


# ---------------------------------------------------------------------------------------------
# Integers, bools, casts
# ---------------------------------------------------------------------------------------------

INT_BINARY = ["addi", "subi", "muli", "andi", "ori", "xori", "maxsi", "minsi", "maxui", "minui",
              "divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi", "ceildivui"]  # fmt: skip
SHIFTS = ["shli", "shrsi", "shrui"]
CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


@pytest.mark.parametrize("t, dtype", [("i32", np.int32), ("i64", np.int64), ("i8", np.int8)])
def test_integer_ops(t: str, dtype: type) -> None:
    info = np.iinfo(dtype)
    values = np.array([0, 1, -1, 7, -7, 13, -100, info.max, info.min, 3], dtype=dtype)
    x, y = np.meshgrid(values, values)
    x, y = x.ravel(), y.ravel()
    divisor_ok = (y != 0) & ~((x == info.min) & (y == -1))
    for op in INT_BINARY:
        keep = divisor_ok if "div" in op or "rem" in op else np.ones_like(divisor_ok)
        a, b = x[keep], y[keep]
        text = parallel_map(a.size, t, t, f"%r = arith.{op} %a0, %a1 : {t}", 2)
        check_loops(text, "f", a, b)
    width = np.dtype(dtype).itemsize * 8
    shift = (np.abs(y.astype(np.int64)) % width).astype(dtype)
    for op in SHIFTS:
        check_loops(parallel_map(x.size, t, t, f"%r = arith.{op} %a0, %a1 : {t}", 2), "f", x, shift)
    for predicate in CMPI:
        text = parallel_map(x.size, t, "i1", f"%r = arith.cmpi {predicate}, %a0, %a1 : {t}", 2)
        check_loops(text, "f", x, y)


def test_integer_division_by_zero_does_not_trap() -> None:
    """arith leaves x / 0 undefined; the compiled code must not kill the process (SIGFPE)."""
    text = parallel_map(4, "i32", "i32", "%r = arith.divsi %a0, %a1 : i32", 2)
    x = np.array([5, np.iinfo(np.int32).min, 3, 0], dtype=np.int32)
    y = np.array([0, -1, 0, 0], dtype=np.int32)
    (q,) = function(text, "f", 2)(x, y)
    assert q.shape == (4,)


def test_math_integer_functions() -> None:
    x = np.array([0, 1, -1, 8, 12345, np.iinfo(np.int32).min, 255, 1 << 20], dtype=np.int32)
    for op in ["absi", "ctlz", "cttz", "ctpop"]:
        check_loops(parallel_map(x.size, "i32", "i32", f"%r = math.{op} %a0 : i32"), "f", x)


def test_bool_logic_on_i1_buffers() -> None:
    x = np.array([True, False, True, False])
    y = np.array([True, True, False, False])
    for op in ["andi", "ori", "xori"]:
        check_loops(parallel_map(4, "i1", "i1", f"%r = arith.{op} %a0, %a1 : i1", 2), "f", x, y)
    text = parallel_map(
        4,
        "i1",
        "f32",
        "%f = arith.uitofp %a0 : i1 to f32\n    %g = arith.sitofp %a1 : i1 to f32\n"
        "    %r = arith.addf %f, %g : f32",
        2,
    )
    check_loops(text, "f", x, y)


CASTS = [
    # (source type, result type, op, inputs)
    ("i32", "f32", "sitofp", [0, 1, -1, 16777217, -2147483648, 2147483647]),
    ("i64", "f64", "sitofp", [0, -5, 2**53 + 1, -(2**63), 2**63 - 1, 12345]),
    ("i64", "f32", "uitofp", [0, 5, 2**63 + 12345, 2**64 - 1, 2**40 + 3, 7]),
    ("i32", "f64", "uitofp", [0, 5, 2**32 - 1, 2**31, 12, 3]),
    ("i32", "bf16", "sitofp", [0, 1, -3, 257, 65535, -1000001]),
    ("i32", "f16", "sitofp", [0, 1, -3, 2049, 65519, 70000]),
    ("f32", "i32", "fptosi", [0.0, -1.5, 2.9, -2147483648.0, 1e9, -0.0]),
    ("f64", "i64", "fptosi", [0.0, -1.5, 2.9, 9e18, -9.2e18, 0.999]),
    ("f32", "i32", "fptoui", [0.0, 1.5, 2.9, 4e9, 123456.0, 0.5]),
    ("f16", "i32", "fptosi", [0.0, -1.5, 2.9, 65504.0, -3.0, 7.5]),
    ("bf16", "i32", "fptosi", [0.0, -1.5, 2.9, 1e9, -3.0, 7.5]),
    ("f32", "f64", "extf", [0.0, -1.5, np.nan, np.inf, 1e-45, 3.4e38]),
    ("f16", "f32", "extf", [0.0, -1.5, np.nan, -np.inf, 6e-8, 65504.0]),
    ("bf16", "f64", "extf", [0.0, -1.5, np.nan, np.inf, 1e-38, 3e38]),
    ("f64", "f32", "truncf", [0.1, -1.5, np.nan, np.inf, 1e-50, 1e300]),
    ("f64", "f16", "truncf", [0.1, 1 + 2**-11 + 2**-40, np.nan, 65520.0, 6e-8, -1e-9]),
    ("f64", "bf16", "truncf", [0.1, 1 + 2**-8 + 2**-40, np.nan, -np.inf, 3.4e38, 1e-40]),
    ("f32", "bf16", "truncf", [0.1, 1 + 2**-8, np.nan, 3.4e38, -2.5, 1 + 3 * 2**-8]),
    ("f32", "f16", "truncf", [0.1, 1 + 2**-11, np.nan, 1e5, -2.5, 1e-8]),
    ("i64", "i32", "trunci", [0, -1, 2**40 + 5, -(2**40) - 5, 7, 2**31]),
    ("i8", "i64", "extsi", [0, -1, 127, -128, 5, -5]),
    ("i8", "i32", "extui", [0, -1, 127, -128, 5, -5]),
    ("f32", "i32", "bitcast", [0.0, -0.0, 1.0, np.nan, np.inf, -2.5]),
]


@pytest.mark.parametrize("source, result, op, values", CASTS)
def test_casts(source: str, result: str, op: str, values: list) -> None:
    from irgrad.ir_numpy import numpy_dtype
    from irgrad.diagnostics import parse_module
    from irgrad.context import make_context

    def dtype_of(t: str) -> np.dtype:
        if t in FLOAT_TYPES:
            return FLOAT_TYPES[t]
        module = parse_module(make_context(), f"func.func private @f(%x: {t})")
        return numpy_dtype(next(iter(module.ops)).function_type.inputs.data[0])

    src = dtype_of(source)
    x = (
        np.array([int(v) % 2**64 for v in values], dtype=np.uint64).astype(src)
        if src.kind in "iu"
        else np.array(values, dtype=np.float64).astype(src)
    )
    body = f"%r = arith.{op} %a0 : {source} to {result}"
    check_loops(parallel_map(len(values), source, result, body), "f", x, exact=True)


def test_index_casts_and_index_buffers() -> None:
    text = """
func.func @f(%x: memref<4xi32>, %n: index, %out: memref<4xindex>, %narrow: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xi32>
    %w = arith.index_cast %v : i32 to index
    %s = arith.addi %w, %n : index
    %p = arith.muli %s, %i : index
    memref.store %p, %out[%i] : memref<4xindex>
    %back = arith.index_cast %p : index to i32
    memref.store %back, %narrow[%i] : memref<4xi32>
  }
  func.return
}"""
    check_loops(text, "f", np.array([3, -7, 2**31 - 1, 0], dtype=np.int32), 10)


# ---------------------------------------------------------------------------------------------
# Loops, reductions, control flow, calls, views, globals
# ---------------------------------------------------------------------------------------------

MATMUL = """
func.func @matmul(%a: memref<7x5xT>, %b: memref<5x9xT>, %c: memref<7x9xT>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %zero = arith.constant 0.0 : T
  "scf.parallel"(%c0, %c0, %c7, %c9, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %sum = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (T) {
      %x = memref.load %a[%i, %k] : memref<7x5xT>
      %y = memref.load %b[%k, %j] : memref<5x9xT>
      %p = arith.mulf %x, %y : T
      %s = arith.addf %acc, %p : T
      scf.yield %s : T
    }
    memref.store %sum, %c[%i, %j] : memref<7x9xT>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}"""


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_matmul_loops(t: str) -> None:
    rng = np.random.default_rng(0)
    dtype = FLOAT_TYPES[t]
    a = rng.standard_normal((7, 5)).astype(dtype)
    b = rng.standard_normal((5, 9)).astype(dtype)
    _, (c,) = check_loops(MATMUL.replace("T", t), "matmul", a, b)
    np.testing.assert_allclose(
        c, a.astype(np.float64) @ b, rtol=1e-4 if t == "f32" else 1e-12, atol=1e-5
    )


def test_parallel_reduction_with_scf_reduce() -> None:
    text = """
func.func @stats(%x: memref<6x4xf64>, %out: memref<2xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %r:2 = "scf.parallel"(%c0, %c0, %c6, %c4, %c1, %c1, %zero, %ninf) <{operandSegmentSizes = array<i32: 2, 2, 2, 2>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<6x4xf64>
    scf.reduce(%v, %v : f64, f64) {
    ^bb1(%a: f64, %b: f64):
      %s = arith.addf %a, %b : f64
      scf.reduce.return %s : f64
    }, {
    ^bb1(%a: f64, %b: f64):
      %m = arith.maximumf %a, %b : f64
      scf.reduce.return %m : f64
    }
  }) : (index, index, index, index, index, index, f64, f64) -> (f64, f64)
  memref.store %r#0, %out[%c0] : memref<2xf64>
  memref.store %r#1, %out[%c1] : memref<2xf64>
  func.return
}"""
    x = np.random.default_rng(1).standard_normal((6, 4))
    check_loops(text, "stats", x)


def test_scf_while_and_if() -> None:
    """Collatz steps per element: a data-dependent while with an if in its body."""
    text = """
func.func @collatz(%x: memref<8xi32>, %steps: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1 : i32
  %two = arith.constant 2 : i32
  %three = arith.constant 3 : i32
  %zero = arith.constant 0 : i32
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %start = memref.load %x[%i] : memref<8xi32>
    %r:2 = scf.while (%n = %start, %k = %zero) : (i32, i32) -> (i32, i32) {
      %more = arith.cmpi sgt, %n, %one : i32
      scf.condition(%more) %n, %k : i32, i32
    } do {
    ^bb1(%n: i32, %k: i32):
      %odd = arith.remsi %n, %two : i32
      %is_odd = arith.cmpi ne, %odd, %zero : i32
      %next = scf.if %is_odd -> (i32) {
        %t = arith.muli %n, %three : i32
        %u = arith.addi %t, %one : i32
        scf.yield %u : i32
      } else {
        %h = arith.divsi %n, %two : i32
        scf.yield %h : i32
      }
      %k1 = arith.addi %k, %one : i32
      scf.yield %next, %k1 : i32, i32
    }
    memref.store %r#1, %steps[%i] : memref<8xi32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}"""
    _, (steps,) = check_loops(
        text, "collatz", np.array([1, 2, 3, 6, 7, 27, 97, 871], dtype=np.int32)
    )
    assert steps[5] == 111


def test_newton_sqrt_f64_while_with_scalar_args_and_result() -> None:
    text = """
func.func @newton(%a: f64, %tol: f64) -> (f64, index) {
  %half = arith.constant 0.5 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.while (%x = %a, %k = %c0) : (f64, index) -> (f64, index) {
    %sq = arith.mulf %x, %x : f64
    %d = arith.subf %sq, %a : f64
    %ad = math.absf %d : f64
    %go = arith.cmpf ogt, %ad, %tol : f64
    scf.condition(%go) %x, %k : f64, index
  } do {
  ^bb0(%x: f64, %k: index):
    %q = arith.divf %a, %x : f64
    %s = arith.addf %x, %q : f64
    %n = arith.mulf %s, %half : f64
    %k1 = arith.addi %k, %c1 : index
    scf.yield %n, %k1 : f64, index
  }
  func.return %r#0, %r#1 : f64, index
}"""
    _, (root, iterations) = check_loops(text, "newton", np.float64(2.0), np.float64(1e-12))
    assert abs(root - np.sqrt(2)) < 1e-12 and iterations > 0
    assert isinstance(root, np.float64)


def test_call_with_out_params_and_scalar_results() -> None:
    text = """
func.func private @scale_into(%x: memref<2x3xf32>, %s: f32, %out: memref<2x3xf32>) -> (f32, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %total = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
    %row = scf.for %j = %c0 to %c3 step %c1 iter_args(%racc = %acc) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<2x3xf32>
      %p = arith.mulf %v, %s : f32
      memref.store %p, %out[%i, %j] : memref<2x3xf32>
      %n = arith.addf %racc, %p : f32
      scf.yield %n : f32
    }
    scf.yield %row : f32
  }
  %positive = arith.cmpf ogt, %total, %zero : f32
  func.return %total, %positive : f32, i1
}
func.func @main(%x: memref<2x3xf32>, %s: f32, %out: memref<2x3xf32>, %sum: memref<1xf32>) -> i1 {
  %c0 = arith.constant 0 : index
  %tmp = memref.alloc() : memref<2x3xf32>
  %t:2 = func.call @scale_into(%x, %s, %tmp) : (memref<2x3xf32>, f32, memref<2x3xf32>) -> (f32, i1)
  %u:2 = func.call @scale_into(%tmp, %s, %out) : (memref<2x3xf32>, f32, memref<2x3xf32>) -> (f32, i1)
  memref.dealloc %tmp : memref<2x3xf32>
  memref.store %u#0, %sum[%c0] : memref<1xf32>
  func.return %t#1 : i1
}"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    _, (out, total, positive) = check_loops(text, "main", x, np.float32(1.5))
    np.testing.assert_allclose(out, x * 2.25, rtol=1e-6)
    assert isinstance(positive, np.bool_) and not positive


def test_subviews_with_dynamic_offsets_and_copies() -> None:
    text = """
func.func @window(%m: memref<6x8xf32>, %r: index, %c: index,
                  %block: memref<2x3xf32>, %row: memref<8xf32>, %col: memref<6xf32>) {
  %v = memref.subview %m[%r, %c] [2, 3] [1, 2] : memref<6x8xf32> to memref<2x3xf32, strided<[8, 2], offset: ?>>
  "memref.copy"(%v, %block) : (memref<2x3xf32, strided<[8, 2], offset: ?>>, memref<2x3xf32>) -> ()
  %w = memref.subview %m[%r, 0] [1, 8] [1, 1] : memref<6x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  "memref.copy"(%w, %row) : (memref<8xf32, strided<[1], offset: ?>>, memref<8xf32>) -> ()
  %k = memref.subview %m[0, %c] [6, 1] [1, 1] : memref<6x8xf32> to memref<6xf32, strided<[8], offset: ?>>
  "memref.copy"(%k, %col) : (memref<6xf32, strided<[8], offset: ?>>, memref<6xf32>) -> ()
  func.return
}"""
    m = np.arange(48, dtype=np.float32).reshape(6, 8)
    _, (block, row, col) = check_loops(text, "window", m, 3, 1, exact=True)
    np.testing.assert_array_equal(block, m[3:5, 1:7:2])
    np.testing.assert_array_equal(row, m[3])
    np.testing.assert_array_equal(col, m[:, 1])


def test_subview_of_subview_store_and_alloca() -> None:
    text = """
func.func @nested(%m: memref<4x6xi64>, %i: index, %out: memref<4x6xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %seven = arith.constant 7 : i64
  "memref.copy"(%m, %out) : (memref<4x6xi64>, memref<4x6xi64>) -> ()
  %a = memref.subview %out[1, %i] [3, 4] [1, 1] : memref<4x6xi64> to memref<3x4xi64, strided<[6, 1], offset: ?>>
  %b = memref.subview %a[%c1, 1] [2, 2] [1, 2] : memref<3x4xi64, strided<[6, 1], offset: ?>> to memref<2x2xi64, strided<[6, 2], offset: ?>>
  %scratch = memref.alloca() : memref<2xi64>
  scf.for %j = %c0 to %c2 step %c1 {
    memref.store %seven, %b[%j, %j] : memref<2x2xi64, strided<[6, 2], offset: ?>>
    memref.store %seven, %scratch[%j] : memref<2xi64>
  }
  %s = memref.load %scratch[%c1] : memref<2xi64>
  %t = arith.addi %s, %s : i64
  memref.store %t, %b[%c0, %c1] : memref<2x2xi64, strided<[6, 2], offset: ?>>
  func.return
}"""
    check_loops(text, "nested", np.arange(24, dtype=np.int64).reshape(4, 6), 1)


def test_large_alloca_is_heap_memory() -> None:
    """An 80 KB alloca would risk the stack; it is allocated and freed at every return."""
    text = """
func.func @prefix(%x: memref<20000xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 20000 : index
  %scratch = memref.alloca() : memref<20000xf32>
  %zero = arith.constant 0.0 : f32
  %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<20000xf32>
    %s = arith.addf %acc, %v : f32
    memref.store %s, %scratch[%i] : memref<20000xf32>
    scf.yield %s : f32
  }
  %last = arith.subi %n, %c1 : index
  %r = memref.load %scratch[%last] : memref<20000xf32>
  memref.store %r, %out[%c0] : memref<1xf32>
  func.return
}"""
    x = np.random.default_rng(3).random(20_000).astype(np.float32)
    _, (out,) = check_loops(text, "prefix", x, exact=True)
    ir = compiled(text)[1].llvm_ir
    assert "aligned_alloc" in ir and " alloca " not in ir


def test_globals_constant_tables() -> None:
    text = """
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<4xi32>, initial_value = dense<[10, -20, 30, 40]> : tensor<4xi32>, constant}> : () -> ()
"memref.global"() <{sym_name = "weights", sym_visibility = "private", type = memref<2x300xf32>, initial_value = dense<0.5> : tensor<2x300xf32>, constant}> : () -> ()
"memref.global"() <{sym_name = "flags", sym_visibility = "private", type = memref<4xi1>, initial_value = dense<[true, false, false, true]> : tensor<4xi1>, constant}> : () -> ()
func.func @gather(%idx: memref<6xi32>, %out: memref<6xi32>, %w: memref<1xf32>, %f: memref<6xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c299 = arith.constant 299 : index
  %table = memref.get_global @table : memref<4xi32>
  %flags = memref.get_global @flags : memref<4xi1>
  scf.for %i = %c0 to %c6 step %c1 {
    %k = memref.load %idx[%i] : memref<6xi32>
    %j = arith.index_cast %k : i32 to index
    %v = memref.load %table[%j] : memref<4xi32>
    memref.store %v, %out[%i] : memref<6xi32>
    %b = memref.load %flags[%j] : memref<4xi1>
    memref.store %b, %f[%i] : memref<6xi1>
  }
  %weights = memref.get_global @weights : memref<2x300xf32>
  %x = memref.load %weights[%c1, %c299] : memref<2x300xf32>
  memref.store %x, %w[%c0] : memref<1xf32>
  func.return
}"""
    check_loops(text, "gather", np.array([3, 0, 1, 1, 2, 3], dtype=np.int32))


def test_memrefs_through_if_and_loop_carried_values() -> None:
    """Buffers chosen by scf.if and swapped through scf.for iter_args (ping-pong)."""
    text = """
func.func @smooth(%x: memref<8xf64>, %steps: index, %first: i1, %out: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %half = arith.constant 0.5 : f64
  %a = memref.alloc() : memref<8xf64>
  %b = memref.alloc() : memref<8xf64>
  "memref.copy"(%x, %a) : (memref<8xf64>, memref<8xf64>) -> ()
  "memref.copy"(%x, %b) : (memref<8xf64>, memref<8xf64>) -> ()
  %src:2 = scf.for %s = %c0 to %steps step %c1 iter_args(%cur = %a, %nxt = %b) -> (memref<8xf64>, memref<8xf64>) {
    scf.for %i = %c1 to %c7 step %c1 {
      %l = arith.subi %i, %c1 : index
      %r = arith.addi %i, %c1 : index
      %vl = memref.load %cur[%l] : memref<8xf64>
      %vr = memref.load %cur[%r] : memref<8xf64>
      %m = arith.addf %vl, %vr : f64
      %h = arith.mulf %m, %half : f64
      memref.store %h, %nxt[%i] : memref<8xf64>
    }
    scf.yield %nxt, %cur : memref<8xf64>, memref<8xf64>
  }
  %pick = scf.if %first -> (memref<8xf64>) {
    scf.yield %src#0 : memref<8xf64>
  } else {
    scf.yield %src#1 : memref<8xf64>
  }
  "memref.copy"(%pick, %out) : (memref<8xf64>, memref<8xf64>) -> ()
  memref.dealloc %a : memref<8xf64>
  memref.dealloc %b : memref<8xf64>
  func.return
}"""
    x = np.array([0, 8, 1, 7, 2, 6, 3, 5], dtype=np.float64)
    for steps in (0, 1, 4):
        for first in (True, False):
            check_loops(text, "smooth", x, steps, np.bool_(first))


def test_globals_of_index_bf16_and_uninitialized() -> None:
    text = """
"memref.global"() <{sym_name = "ix", sym_visibility = "private", type = memref<3xindex>, initial_value = dense<[7, -2, 9]> : tensor<3xindex>, constant}> : () -> ()
"memref.global"() <{sym_name = "hf", sym_visibility = "private", type = memref<3xbf16>, initial_value = dense<[1.5, -2.0, 3.25]> : tensor<3xbf16>}> : () -> ()
"memref.global"() <{sym_name = "zz", sym_visibility = "private", type = memref<3xf16>, initial_value}> : () -> ()
func.func @g(%out: memref<3xindex>, %o2: memref<3xbf16>, %o3: memref<3xf16>) {
  %a = memref.get_global @ix : memref<3xindex>
  %b = memref.get_global @hf : memref<3xbf16>
  %c = memref.get_global @zz : memref<3xf16>
  "memref.copy"(%a, %out) : (memref<3xindex>, memref<3xindex>) -> ()
  "memref.copy"(%b, %o2) : (memref<3xbf16>, memref<3xbf16>) -> ()
  "memref.copy"(%c, %o3) : (memref<3xf16>, memref<3xf16>) -> ()
  func.return
}"""
    check_loops(text, "g", exact=True)


def test_f16_and_bf16_buffers_and_scalars() -> None:
    for t, dtype in [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)]:
        text = f"""
func.func @axpy(%a: {t}, %x: memref<5x{t}>, %y: memref<5x{t}>, %out: memref<5x{t}>) -> {t} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : {t}
  %s = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> ({t}) {{
    %xv = memref.load %x[%i] : memref<5x{t}>
    %yv = memref.load %y[%i] : memref<5x{t}>
    %p = arith.mulf %a, %xv : {t}
    %r = arith.addf %p, %yv : {t}
    memref.store %r, %out[%i] : memref<5x{t}>
    %n = arith.addf %acc, %r : {t}
    scf.yield %n : {t}
  }}
  func.return %s : {t}
}}"""
        x = np.array([1.0, -2.5, 3.1, np.nan, 1000.0], dtype=dtype)
        y = np.array([0.1, 0.2, -0.3, 4.0, 1e4], dtype=dtype)
        check_loops(text, "axpy", np.array(1.7, dtype=dtype)[()], x, y, exact=True)


# ---------------------------------------------------------------------------------------------
# The runtime: argument checks, copies, object code, memory
# ---------------------------------------------------------------------------------------------

ADD = parallel_map(6, "f32", "f32", "%r = arith.addf %a0, %a1 : f32", 2, name="add")
ADD_2D = """
func.func @add2(%x: memref<3x4xf64>, %y: memref<3x4xf64>, %s: i32, %out: memref<3x4xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %sf = arith.sitofp %s : i32 to f64
  "scf.parallel"(%c0, %c0, %c3, %c4, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %a = memref.load %x[%i, %j] : memref<3x4xf64>
    %b = memref.load %y[%i, %j] : memref<3x4xf64>
    %p = arith.mulf %b, %sf : f64
    %r = arith.addf %a, %p : f64
    memref.store %r, %out[%i, %j] : memref<3x4xf64>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}"""


def test_arguments_are_checked_before_the_call() -> None:
    add = function(ADD_2D, "add2", 3)
    x = np.ones((3, 4))
    with pytest.raises(ArgumentError, match=r"@add2 takes 3 argument\(s\), got 2"):
        add(x, x)
    with pytest.raises(
        ArgumentError,
        match=r"argument #1 of @add2: expected an array of shape \(3, 4\) and dtype float64 .* got an array of shape \(4, 3\)",
    ):
        add(x, np.ones((4, 3)), 1)
    with pytest.raises(ArgumentError, match=r"argument #0 of @add2: .* dtype float32"):
        add(x.astype(np.float32), x, 1)
    with pytest.raises(ArgumentError, match=r"argument #0 of @add2: .* got a list"):
        add([[1.0] * 4] * 3, x, 1)
    with pytest.raises(ArgumentError, match=r"argument #2 of @add2: .* got a float"):
        add(x, x, 1.5)
    with pytest.raises(ArgumentError, match=r"argument #2 of @add2: .* out of range for int32"):
        add(x, x, 2**40)
    with pytest.raises(ArgumentError, match=r"argument #2 of @add2: .* got a int64 scalar"):
        add(x, x, np.int64(3))
    (ok,) = add(x, x, np.int32(2))
    np.testing.assert_array_equal(ok, 3 * x)


def test_arrays_the_code_cannot_read_in_place_are_copied() -> None:
    add = function(ADD_2D, "add2", 3)
    base = np.arange(32, dtype=np.float64).reshape(4, 8)
    transposed = np.arange(12, dtype=np.float64).reshape(4, 3).T  # non-contiguous
    strided = base[:3, ::2]  # steps
    broadcast = np.broadcast_to(np.arange(4.0), (3, 4))  # zero strides
    big_endian = np.arange(12, dtype=">f8").reshape(3, 4)
    raw = np.zeros(12 * 8 + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.float64).reshape(3, 4)
    misaligned[...] = np.arange(12).reshape(3, 4)
    assert not misaligned.flags.aligned
    readonly = np.ones((3, 4))
    readonly.setflags(write=False)
    for a in [transposed, strided, broadcast, big_endian, misaligned, readonly]:
        for b in [readonly, broadcast, big_endian]:
            (got,) = add(a, b, 3)
            np.testing.assert_array_equal(
                got, np.asarray(a, np.float64) + 3 * np.asarray(b, np.float64)
            )
    # Inputs are never written.
    np.testing.assert_array_equal(big_endian, np.arange(12).reshape(3, 4))


def test_results_are_fresh_arrays() -> None:
    add = function(ADD, "add", 2)
    x = np.arange(6, dtype=np.float32)
    (r1,) = add(x, x)
    (r2,) = add(x, x)
    assert r1 is not r2 and not np.shares_memory(r1, r2)
    assert r1.flags.c_contiguous and r1.flags.writeable and r1.dtype == np.float32


def test_the_slow_path_without_numpy_object_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the array object's data field is not where expected, pointers come from numpy."""
    from irgrad.backends.cpu import abi

    add = function(ADD_2D, "add2", 3)
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    (fast,) = add(x, x, 2)
    monkeypatch.setattr(abi, "_DATA", None)
    slow_add = function(ADD_2D, "add2", 3)
    assert slow_add.call == slow_add._general_call  # the looping call, no generated code
    (slow,) = slow_add(x, x, 2)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(slow, 3 * x)
    (copied,) = slow_add(np.asfortranarray(x), x[::-1][::-1], np.int32(2))
    np.testing.assert_array_equal(copied, 3 * x)
    with pytest.raises(abi.ArgumentError, match="takes 3 argument"):
        slow_add(x, x)


def test_calls_from_several_threads() -> None:
    """ctypes releases the GIL during the call; concurrent calls must not interfere."""
    from concurrent.futures import ThreadPoolExecutor

    add = function(ADD_2D, "add2", 3)
    inputs = [np.full((3, 4), float(k)) for k in range(8)]

    def work(k: int) -> bool:
        return all(
            np.array_equal(add(inputs[k], inputs[k], k)[0], inputs[k] * (1 + k)) for _ in range(300)
        )

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))


def test_object_code_round_trip() -> None:
    module = parse(ADD_2D)
    compiled = compile_module(lower(module))
    data = object_code(compiled)
    assert data[:4] == b"\x7fELF"
    reloaded = load_object(data)
    assert reloaded.llvm_ir is None and reloaded.object_code() == data
    (arg_types, outs) = (
        list(module.ops)[0].function_type.inputs.data[:3],
        list(module.ops)[0].function_type.inputs.data[3:],
    )
    fresh = reloaded.function("add2", arg_types, outs)
    x = np.random.default_rng(2).standard_normal((3, 4))
    (a,) = fresh(x, x, 5)
    (b,) = compiled.function("add2", arg_types, outs)(x, x, 5)
    np.testing.assert_array_equal(a, b)
    # The reloaded code stays alive with the function, after the module objects are gone.
    del reloaded, compiled
    gc.collect()
    (c,) = fresh(x, x, 5)
    np.testing.assert_array_equal(a, c)


def test_loading_garbage_object_code_is_an_error() -> None:
    """LLVM's loader would crash on these; they are refused before it sees them."""
    data = object_code(compiled(ADD)[1])
    with pytest.raises(CompileError, match="no ELF header"):
        load_object(b"this is not an object file")
    with pytest.raises(CompileError, match="truncated"):
        load_object(data[: len(data) // 2])
    with pytest.raises(CompileError, match="not a relocatable object for this host"):
        load_object(data[:18] + b"\x28\x00" + data[20:])  # e_machine: ARM


def test_compile_rejects_modules_outside_stage_llvm() -> None:
    module = parse(ADD)
    with pytest.raises(ContractError, match=r"'func.func' op breaks the \"llvm\" stage contract"):
        compile_module(module)


def test_unknown_function_is_an_error() -> None:
    _, compiled_module = compiled(ADD)
    t = MemRefType(f32, [6])
    with pytest.raises(ArgumentError, match="no compiled entry @_irgrad_packed_nope"):
        compiled_module.function("nope", [t], [t])


def test_loading_the_runtime_imports_no_lowering() -> None:
    """A warm start (cached object code) must not pay for importing passes or the interpreter."""
    import subprocess
    import sys

    code = (
        "import sys, irgrad.backends.cpu as cpu; "
        "print(sorted(m for m in sys.modules if m.startswith(('irgrad.lowering', "
        "'irgrad.backends.interpreter', 'xdsl.interpreters'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_calling_1e5_times_does_not_grow_memory() -> None:
    text = """
func.func @step(%x: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %tmp = memref.alloc() : memref<64xf32>
  "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<64xf32>
    %e = math.tanh %v : f32
    memref.store %e, %tmp[%i] : memref<64xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "memref.copy"(%tmp, %out) : (memref<64xf32>, memref<64xf32>) -> ()
  memref.dealloc %tmp : memref<64xf32>
  func.return
}"""
    step = function(text, "step", 1)
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    for _ in range(2000):
        step(x)
    gc.collect()
    before = _resident_bytes()
    for _ in range(100_000):
        (y,) = step(x)
    gc.collect()
    grown = _resident_bytes() - before
    assert grown < 4 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 1e5 calls"
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-6)


def test_interpreter_oracle_sees_the_same_program() -> None:
    """The harness itself: the interpreter really runs the stage-loops module."""
    module = parse(ADD)
    x = np.arange(6, dtype=np.float32)
    (out,) = interpret(module, "add", [x, x])
    np.testing.assert_array_equal(out, 2 * x)


def test_generated_call_matches_the_general_call() -> None:
    """The call generated per signature (abi._specialized_call) takes the same steps as the
    looping one: same results on fast and copied inputs, same errors on bad ones."""
    from irgrad.backends.cpu import abi

    add = function(ADD_2D, "add2", 3)
    assert add.call.__code__.co_filename == "<irgrad call of @add2>"
    x = np.random.default_rng(0).standard_normal((3, 4))
    good = [
        (x, x, 2),
        (np.asfortranarray(x), x.astype(">f8"), np.int32(-1)),
        (np.broadcast_to(x[:1], (3, 4)), x, np.array(5, dtype=np.int32)),
    ]
    for args in good:
        np.testing.assert_array_equal(add.call(*args)[0], add._general_call(*args)[0])
        np.testing.assert_allclose(add(*args)[0], args[0] + args[1] * int(args[2]))
    bad = [
        (x,),
        (x, x, 2, 3),
        (x[:2], x, 2),
        (x.astype(np.float32), x, 2),
        (x.tolist(), x, 2),
        (x, x, 2.5),
        (x, x, 2**40),
        (x, x, np.int64(2)),
    ]
    for args in bad:
        with pytest.raises(abi.ArgumentError) as specialized:
            add.call(*args)
        with pytest.raises(abi.ArgumentError) as general:
            add._general_call(*args)
        assert str(specialized.value) == str(general.value)


SCALE_IN_PLACE = """
func.func @scale(%m: memref<3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %m[%i, %j] : memref<3x4xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %m[%i, %j] : memref<3x4xf32>
    }
  }
  func.return
}
"""


def test_c_contiguous_native_arrays_are_passed_zero_copy() -> None:
    """The compiled code reads (and here writes) the caller's own buffer when the array is
    C-contiguous, aligned, native-endian and of the signature's dtype; any other array is
    copied first, so the caller's array is untouched."""
    scale = function(SCALE_IN_PLACE, "scale", 1)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    before = x.copy()
    scale(x)
    np.testing.assert_array_equal(x, 2 * before)  # written in place: no copy was made
    for other in (
        np.asfortranarray(before),
        before.astype(">f4"),
        np.arange(24, dtype=np.float32).reshape(3, 8)[:, ::2],
    ):
        kept = other.copy()
        scale(other)
        np.testing.assert_array_equal(other, kept)  # a copy was passed


def test_functions_named_like_c_library_symbols() -> None:
    """A function called `exp`, `free` or `malloc` is renamed in LLVM IR: compiled as is, the
    C library's `exp` (what LLVM lowers llvm.exp.f64 to) or `free` (what memref.dealloc
    calls) would bind to it, and the call would recurse until the process crashed."""
    import irgrad as ig

    rng = np.random.default_rng(11)
    x = rng.standard_normal((64,))
    np.testing.assert_allclose(ig.jit(ig.exp)(x), np.exp(x), rtol=1e-14)
    np.testing.assert_allclose(ig.jit(ig.log)(np.abs(x) + 0.5), np.log(np.abs(x) + 0.5), rtol=1e-14)
    np.testing.assert_allclose(ig.jit(ig.sin)(x.astype(np.float32)), np.sin(x).astype(np.float32), rtol=1e-6)

    def free(a, b):  # temporaries are freed with free(); the result of a matmul is malloc'd
        return ig.exp(a @ b) @ b + 1.0

    def malloc(a):
        return (a * 2.0).sum() + ig.exp(a).sum()

    a = rng.standard_normal((32, 32)) * 0.1
    np.testing.assert_allclose(ig.jit(free)(a, a), np.exp(a @ a) @ a + 1.0, rtol=1e-12)
    np.testing.assert_allclose(ig.jit(malloc)(a), (a * 2.0).sum() + np.exp(a).sum(), rtol=1e-12)
    # Traced functions avoid C names (`exp_`); hand-written IR is renamed in LLVM IR instead.
    assert "func.func @exp_(" in ig.jit(ig.exp).lower(x).as_text("nn")
    exp = function(EXP_NAMED_EXP, "exp", 1)
    np.testing.assert_allclose(exp(x[:16])[0], np.exp(x[:16]), rtol=1e-14)
    ir = exp.module.llvm_ir
    assert '@"_irgrad_fn_exp"' in ir and '@"_irgrad_packed_exp"' in ir


EXP_NAMED_EXP = """
func.func @exp(%x: memref<16xf64>, %out: memref<16xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %x[%i] : memref<16xf64>
    %e = math.exp %v : f64
    memref.store %e, %out[%i] : memref<16xf64>
  }
  func.return
}
"""
