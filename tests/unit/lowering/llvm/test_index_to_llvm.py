"""The `index` dialect through the CPU backend (convert-index-to-llvm), against Python ints.

Each op runs elementwise over arrays of random 64-bit values (small and huge, negatives,
INT_MIN/INT_MAX and their neighbours): loaded as i64, cast to index with `index.casts`, one
index op, cast back and stored. The compiled results are compared with Python's integer
semantics (signed ops on two's complement, unsigned ops modulo 2**64, floor division for
floordivs, truncation toward zero for divs/rems) and with the reference interpreter on the
same stage-"loops" IR. Cases an op leaves undefined (division by zero, INT_MIN / -1, shifts
by 64 or more) are left out of the random inputs and checked separately where the lowering
defines them (it never traps).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

from _cpu_util import assert_close, compiled, function, interpret

N = 192
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
SPECIAL = [0, 1, -1, 2, -2, 3, -3, 7, -7, INT_MIN, INT_MIN + 1, INT_MAX, INT_MAX - 1,
           2**32, -(2**32), 2**62, -(2**62)]  # fmt: skip


def s64(v: int) -> int:
    """`v` wrapped to a signed 64-bit value."""
    return ((v + 2**63) % 2**64) - 2**63


def u64(v: int) -> int:
    """`v` read as unsigned 64 bits."""
    return v % 2**64


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


BINARY = {
    "add": lambda a, b: s64(a + b),
    "sub": lambda a, b: s64(a - b),
    "mul": lambda a, b: s64(a * b),
    "and": lambda a, b: s64(u64(a) & u64(b)),
    "or": lambda a, b: s64(u64(a) | u64(b)),
    "xor": lambda a, b: s64(u64(a) ^ u64(b)),
    "maxs": max,
    "mins": min,
    "maxu": lambda a, b: s64(max(u64(a), u64(b))),
    "minu": lambda a, b: s64(min(u64(a), u64(b))),
    "divs": lambda a, b: s64(trunc_div(a, b)),
    "rems": lambda a, b: s64(a - b * trunc_div(a, b)),
    "floordivs": lambda a, b: s64(a // b),
    "ceildivs": lambda a, b: s64(ceil_div(a, b)),
    "divu": lambda a, b: s64(u64(a) // u64(b)),
    "remu": lambda a, b: s64(u64(a) % u64(b)),
    "ceildivu": lambda a, b: s64(ceil_div(u64(a), u64(b))),
    "shl": lambda a, b: s64(a << b),
    "shrs": lambda a, b: a >> b,
    "shru": lambda a, b: s64(u64(a) >> b),
}
DIVISIONS = {"divs", "rems", "floordivs", "ceildivs", "divu", "remu", "ceildivu"}
SHIFTS = {"shl", "shrs", "shru"}

CMP = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": operator.lt,
    "sle": operator.le,
    "sgt": operator.gt,
    "sge": operator.ge,
    "ult": lambda a, b: u64(a) < u64(b),
    "ule": lambda a, b: u64(a) <= u64(b),
    "ugt": lambda a, b: u64(a) > u64(b),
    "uge": lambda a, b: u64(a) >= u64(b),
}


def loop(name: str, params: str, body: str) -> str:
    """`@name(params)`: `body` for %i from 0 to N (bounds from index.constant)."""
    return f"""
func.func @{name}({params}) {{
  %c0 = index.constant 0
  %c1 = index.constant 1
  %cn = index.constant {N}
  scf.for %i = %c0 to %cn step %c1 {{
{body}
  }}
  func.return
}}"""


def binary_function(op: str) -> str:
    return loop(
        op,
        f"%x: memref<{N}xi64>, %y: memref<{N}xi64>, %out: memref<{N}xi64>",
        f"""    %a = memref.load %x[%i] : memref<{N}xi64>
    %b = memref.load %y[%i] : memref<{N}xi64>
    %ai = index.casts %a : i64 to index
    %bi = index.casts %b : i64 to index
    %r = index.{op} %ai, %bi
    %ri = index.casts %r : index to i64
    memref.store %ri, %out[%i] : memref<{N}xi64>""",
    )


def cmp_function(predicate: str) -> str:
    return loop(
        f"cmp_{predicate}",
        f"%x: memref<{N}xi64>, %y: memref<{N}xi64>, %out: memref<{N}xi1>",
        f"""    %a = memref.load %x[%i] : memref<{N}xi64>
    %b = memref.load %y[%i] : memref<{N}xi64>
    %ai = index.castu %a : i64 to index
    %bi = index.castu %b : i64 to index
    %r = index.cmp {predicate}(%ai, %bi)
    memref.store %r, %out[%i] : memref<{N}xi1>""",
    )


CASTS = loop(
    "casts",
    f"%x: memref<{N}xi32>, %w: memref<{N}xi64>, %s: memref<{N}xi64>, %u: memref<{N}xi64>, "
    f"%ts: memref<{N}xi32>, %tu: memref<{N}xi16>",
    f"""    %a = memref.load %x[%i] : memref<{N}xi32>
    %b = memref.load %w[%i] : memref<{N}xi64>
    %as = index.casts %a : i32 to index
    %au = index.castu %a : i32 to index
    %ass = index.casts %as : index to i64
    %auu = index.castu %au : index to i64
    memref.store %ass, %s[%i] : memref<{N}xi64>
    memref.store %auu, %u[%i] : memref<{N}xi64>
    %bi = index.casts %b : i64 to index
    %b32 = index.casts %bi : index to i32
    %b16 = index.castu %bi : index to i16
    memref.store %b32, %ts[%i] : memref<{N}xi32>
    memref.store %b16, %tu[%i] : memref<{N}xi16>""",
)

CONSTANTS = """
func.func @constants() -> (index, index, i1, i1, index) {
  %0 = index.constant -9223372036854775808
  %1 = index.constant 123456789012
  %2 = index.bool.constant true
  %3 = index.bool.constant false
  %4 = index.sizeof
  func.return %0, %1, %2, %3, %4 : index, index, i1, i1, index
}
"""

MODULE = "\n".join(
    [*(binary_function(op) for op in BINARY), *(cmp_function(p) for p in CMP), CASTS, CONSTANTS]
)


def random_int64(rng: np.random.Generator, n: int) -> np.ndarray:
    """A mix of special values, small values of both signs and values of any magnitude."""
    kind = rng.integers(0, 3, n)
    special = rng.choice(np.array(SPECIAL, dtype=np.int64), n)
    small = rng.integers(-50, 51, n)
    bits = rng.integers(1, 64, n)
    huge = rng.integers(INT_MIN, INT_MAX, n, dtype=np.int64, endpoint=True) >> (63 - bits)
    return np.where(kind == 0, special, np.where(kind == 1, small, huge)).astype(np.int64)


def operands(op: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random operands of `op` with the undefined cases replaced by defined ones."""
    rng = np.random.default_rng(seed)
    a, b = random_int64(rng, N), random_int64(rng, N)
    if op in SHIFTS:
        b = rng.integers(0, 64, N).astype(np.int64)
    if op in DIVISIONS:
        b = np.where(b == 0, 3, b)
        if op in ("divs", "rems", "floordivs", "ceildivs"):
            b = np.where((a == INT_MIN) & (b == -1), -2, b)
    return a, b


def expected(fn, a: np.ndarray, b: np.ndarray, dtype=np.int64) -> np.ndarray:
    return np.array([fn(int(x), int(y)) for x, y in zip(a, b)], dtype=dtype)


def call(name: str, *inputs: np.ndarray) -> list:
    return list(function(MODULE, name, len(inputs))(*inputs))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_op_matches_python(op: str, seed: int):
    a, b = operands(op, seed)
    (got,) = call(op, a, b)
    want = expected(BINARY[op], a, b)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (
        f"index.{op}: {[(int(a[k]), int(b[k]), int(got[k]), int(want[k])) for k in bad[:5]]}"
        " (a, b, compiled, python)"
    )


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_op_matches_the_interpreter(op: str):
    a, b = operands(op, 2)
    module, _ = compiled(MODULE)
    (want,) = interpret(module, op, [a, b])
    (got,) = call(op, a, b)
    assert_close(want, got, what=f"index.{op}")


@pytest.mark.parametrize("predicate", sorted(CMP))
def test_cmp_predicates(predicate: str):
    rng = np.random.default_rng(3)
    a = random_int64(rng, N)
    b = np.where(rng.random(N) < 0.3, a, random_int64(rng, N))  # equal pairs too
    (got,) = call(f"cmp_{predicate}", a, b)
    want = expected(CMP[predicate], a, b, dtype=np.bool_)
    np.testing.assert_array_equal(got, want, err_msg=f"index.cmp {predicate}")
    module, _ = compiled(MODULE)
    (interpreted,) = interpret(module, f"cmp_{predicate}", [a, b])
    np.testing.assert_array_equal(interpreted, want, err_msg=f"interpreted index.cmp {predicate}")


def test_signed_and_unsigned_differ_on_negatives():
    # The same operands, read as signed and as unsigned: -1 is the largest unsigned value.
    a = np.array([-1, -5, 3, INT_MIN] + [0] * (N - 4), dtype=np.int64)
    b = np.array([1, 2, -3, INT_MAX] + [1] * (N - 4), dtype=np.int64)
    assert list(call("maxs", a, b)[0][:4]) == [1, 2, 3, INT_MAX]
    assert list(call("maxu", a, b)[0][:4]) == [-1, -5, -3, INT_MIN]
    assert list(call("mins", a, b)[0][:4]) == [-1, -5, -3, INT_MIN]
    assert list(call("minu", a, b)[0][:4]) == [1, 2, 3, INT_MAX]
    assert list(call("cmp_slt", a, b)[0][:4]) == [True, True, False, True]
    assert list(call("cmp_ult", a, b)[0][:4]) == [False, False, True, False]
    assert list(call("shrs", a, np.full(N, 1, np.int64))[0][:2]) == [-1, -3]
    assert list(call("shru", a, np.full(N, 1, np.int64))[0][:2]) == [INT_MAX, s64(u64(-5) >> 1)]


def test_floor_and_ceil_division_with_negative_operands():
    pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (6, -3), (-6, -3), (0, -5),
             (1, -1), (-1, 1), (INT_MAX, -1), (INT_MIN + 1, -1), (INT_MIN, 2), (INT_MIN, -2),
             (INT_MAX, 2), (INT_MAX, INT_MIN), (INT_MIN, INT_MAX)]  # fmt: skip
    a = np.array([p[0] for p in pairs] + [0] * (N - len(pairs)), dtype=np.int64)
    b = np.array([p[1] for p in pairs] + [1] * (N - len(pairs)), dtype=np.int64)
    floor = call("floordivs", a, b)[0][: len(pairs)]
    rems = call("rems", a, b)[0][: len(pairs)]
    assert [int(q) for q in floor] == [s64(x // y) for x, y in pairs]
    assert [int(r) for r in rems] == [s64(x - y * trunc_div(x, y)) for x, y in pairs]
    ceil = call("ceildivs", a, b)[0][: len(pairs)]
    for (x, y), q in zip(pairs, ceil):
        if x == INT_MIN and y > 1:
            continue  # see test_ceildivs_of_int_min_is_mlirs_expansion
        assert int(q) == s64(ceil_div(x, y)), (x, y)


def test_ceildivs_of_int_min_is_exact():
    # MLIR's IndexToLLVM computes -(-n / m), and -INT_MIN wraps (ceildivs(INT_MIN, 2) = +2**62
    # there); irgrad's lowering uses the remainder instead and gives the true quotient.
    divisors = [2, 3, 7, 2**32, INT_MAX, -2, -3, INT_MIN]
    a = np.full(N, INT_MIN, np.int64)
    b = np.array(divisors + [2] * (N - len(divisors)), dtype=np.int64)
    got = call("ceildivs", a, b)[0][: len(divisors)]
    assert [int(q) for q in got] == [-((-INT_MIN) // m) for m in divisors]
    assert int(got[0]) == -(2**62)


def test_division_never_traps():
    # Undefined cases divide by 1 (as convert-arith-to-llvm does): no SIGFPE.
    a = np.array([5, -5, INT_MIN, INT_MIN, 0] + [1] * (N - 5), dtype=np.int64)
    b = np.array([0, 0, 0, -1, 0] + [1] * (N - 5), dtype=np.int64)
    head = slice(0, 5)
    assert list(call("divs", a, b)[0][head]) == [5, -5, INT_MIN, INT_MIN, 0]
    assert list(call("rems", a, b)[0][head]) == [0, 0, 0, 0, 0]
    assert list(call("floordivs", a, b)[0][head]) == [5, -5, INT_MIN, INT_MIN, 0]
    assert list(call("ceildivs", a, b)[0][head]) == [5, -5, INT_MIN, INT_MIN, 0]
    assert list(call("divu", a, b)[0][:3]) == [5, -5, INT_MIN]
    assert list(call("remu", a, b)[0][:3]) == [0, 0, 0]
    assert list(call("ceildivu", a, b)[0][:3]) == [5, -5, INT_MIN]


def test_casts_extend_and_truncate():
    rng = np.random.default_rng(4)
    x = rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32)
    x[:3] = [-1, np.iinfo(np.int32).min, np.iinfo(np.int32).max]
    w = random_int64(rng, N)
    s, u, ts, tu = call("casts", x, w)
    np.testing.assert_array_equal(s, x.astype(np.int64))
    np.testing.assert_array_equal(u, x.view(np.uint32).astype(np.int64))
    np.testing.assert_array_equal(ts, w.astype(np.int32))  # numpy truncates like llvm.trunc
    np.testing.assert_array_equal(tu, w.astype(np.int16))
    module, _ = compiled(MODULE)
    for got, want in zip((s, u, ts, tu), interpret(module, "casts", [x, w])):
        np.testing.assert_array_equal(got, want)


def test_constants_and_sizeof():
    got = call("constants")
    assert [int(v) for v in got] == [INT_MIN, 123456789012, 1, 0, 64]
    assert got[2].dtype == np.bool_
    module, _ = compiled(MODULE)
    assert [int(v) for v in interpret(module, "constants", [])] == [INT_MIN, 123456789012, 1, 0, 64]
