"""Random `nn` programs (hypothesis) compiled for the CPU and compared with the interpreter.

A program is a random DAG over 1-3 inputs of random small shapes (ranks 0-3, sizes among 1, 2,
3, 5, 8 and 17 so that vector loops get remainders): elementwise unary functions, binary ops
with numpy broadcasting, reductions (sum, max, min, mean over random axes, keepdims or not),
matmul against an extra input, transposes, slices with negative steps, broadcasts, reshapes
and concatenation, in f32 or f64, with NaN/inf/0 mixed into a third of the inputs. Every
value it computes is a result, so a miscompile anywhere in the DAG shows. The second property
differentiates such a program (`ig.value_and_grad` of a loss over all its values whose
derivative stays away from 0) and compares the gradients. The third draws integer programs
(i32/i64: wrapping arithmetic, floor division by zero and INT_MIN // -1, shifts past the
width, bitwise ops, reductions) with the integer extremes in the input, which must agree
exactly.

Tolerance: the issue's 1e-5 (f32) and 1e-12 (f64), relative to each result's largest
magnitude (`normwise`): a value downstream of a sum is accumulated in another order than
numpy's, and a later subtraction can cancel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irgrad as ig
from _differential import assert_same_results, jit_both

pytestmark = pytest.mark.usefixtures("no_disk_cache")


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")


UNARY = {
    "neg": ig.negative,
    "abs": ig.abs,
    "relu": ig.relu,
    "tanh": ig.tanh,
    "sigmoid": ig.sigmoid,
    "sin": ig.sin,
    "cos": ig.cos,
    "erf": ig.erf,
    "exp_tanh": lambda v: ig.exp(ig.tanh(v)),
    "log_abs": lambda v: ig.log(ig.abs(v) + 0.5),
    "sqrt_abs": lambda v: ig.sqrt(ig.abs(v)),
    "sign": ig.sign,
    "square": ig.square,
}
BINARY = {
    "add": ig.add,
    "sub": ig.subtract,
    "mul": ig.multiply,
    "div": lambda a, b: a / (ig.abs(b) + 0.5),
    "max": ig.maximum,
    "min": ig.minimum,
    "where": lambda a, b: ig.where(a > b, a, b * 0.5),
}
REDUCE = {"sum": ig.sum, "max": ig.max, "min": ig.min, "mean": ig.mean}
SIZES = [1, 2, 3, 5, 8, 17]

Step = tuple[Any, ...]
Program = tuple[list[tuple[int, ...]], list[Step], Any, int]


@st.composite
def programs(draw: st.DrawFn) -> Program:
    """(input shapes, steps, dtype, seed); each step refers to earlier values by index."""
    n_inputs = draw(st.integers(1, 3))
    shapes = [tuple(draw(st.lists(st.sampled_from(SIZES), max_size=3))) for _ in range(n_inputs)]
    known = list(shapes)
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["unary", "binary", "reduce", "matmul", "transpose", "slice", "broadcast", "reshape", "concat"]))
        i = draw(st.integers(0, len(known) - 1))
        s = known[i]
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))), i))
            known.append(s)
        elif kind == "binary":
            j = draw(st.integers(0, len(known) - 1))
            try:
                shape = tuple(np.broadcast_shapes(s, known[j]))
            except ValueError:
                continue
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), i, j))
            known.append(shape)
        elif kind == "reduce":
            axes = tuple(d for d in range(len(s)) if draw(st.booleans()))
            keep = draw(st.booleans())
            steps.append(("reduce", draw(st.sampled_from(sorted(REDUCE))), i, axes, keep))
            if keep:
                known.append(tuple(1 if d in axes else n for d, n in enumerate(s)))
            else:
                known.append(tuple(n for d, n in enumerate(s) if d not in axes))
        elif kind == "matmul":
            if not s:
                continue
            m = draw(st.sampled_from([1, 3, 9, 16]))
            steps.append(("matmul", i, s[-1], m))
            known.append(s[:-1] + (m,))
        elif kind == "transpose":
            perm = tuple(draw(st.permutations(range(len(s)))))
            steps.append(("transpose", i, perm))
            known.append(tuple(s[p] for p in perm))
        elif kind == "slice":
            slices, out = [], []
            for n in s:
                step = draw(st.sampled_from([1, 2, -1, -2]))
                start, stop = draw(st.integers(0, n - 1)), draw(st.integers(-1, n))
                sl = (start, None if stop < 0 else stop, step)
                slices.append(sl)
                out.append(len(range(n)[slice(*sl)]))
            if 0 in out:
                continue
            steps.append(("slice", i, tuple(slices)))
            known.append(tuple(out))
        elif kind == "broadcast":
            lead = tuple(draw(st.lists(st.integers(1, 3), max_size=1)))
            new = lead + tuple(draw(st.integers(1, 3)) if n == 1 and draw(st.booleans()) else n for n in s)
            steps.append(("broadcast", i, new))
            known.append(new)
        elif kind == "reshape":
            size = int(np.prod(s))
            new = (size,) if draw(st.booleans()) else (1, size)
            steps.append(("reshape", i, new))
            known.append(new)
        elif kind == "concat":
            j = draw(st.integers(0, len(known) - 1))
            t = known[j]
            if not s or len(s) != len(t) or s[1:] != t[1:]:
                continue
            steps.append(("concat", i, j))
            known.append((s[0] + t[0],) + s[1:])
    return shapes, steps, draw(st.sampled_from([np.float32, np.float64])), draw(st.integers(0, 2**16))


def build(n_inputs: int, steps: list[Step]) -> Any:
    """The traced function: inputs then one weight per matmul; returns every computed value."""

    def program(*args: Any) -> list[Any]:
        values = list(args[:n_inputs])
        weights = iter(args[n_inputs:])
        for step in steps:
            kind = step[0]
            if kind == "unary":
                values.append(UNARY[step[1]](values[step[2]]))
            elif kind == "binary":
                values.append(BINARY[step[1]](values[step[2]], values[step[3]]))
            elif kind == "reduce":
                _, name, i, axes, keep = step
                values.append(REDUCE[name](values[i], axis=axes, keepdims=keep))
            elif kind == "matmul":
                values.append(values[step[1]] @ next(weights))
            elif kind == "transpose":
                values.append(ig.transpose(values[step[1]], step[2]))
            elif kind == "slice":
                values.append(values[step[1]][tuple(slice(*t) for t in step[2])])
            elif kind == "broadcast":
                values.append(ig.broadcast_to(values[step[1]], step[2]))
            elif kind == "reshape":
                values.append(ig.reshape(values[step[1]], step[2]))
            elif kind == "concat":
                values.append(ig.concatenate([values[step[1]], values[step[2]]], axis=0))
        return values[n_inputs:]

    return program


def arguments(program: Program, special: bool = True) -> list[np.ndarray]:
    shapes, steps, dtype, seed = program
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype(dtype) for s in shapes]
    args += [rng.standard_normal((s[2], s[3])).astype(dtype) for s in steps if s[0] == "matmul"]
    if special and seed % 3 == 0:
        for a in args[: len(shapes)]:
            if a.size > 1:
                a.reshape(-1)[seed % a.size] = [np.nan, np.inf, -np.inf, 0.0][seed % 4]
    return args


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs(program: Program) -> None:
    shapes, steps, _, _ = program
    expected, got = jit_both(build(len(shapes), steps), *arguments(program))
    assert_same_results(expected, got, normwise=True, what=f"program {steps}")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_program_gradients(program: Program) -> None:
    shapes, steps, _, _ = program
    forward = build(len(shapes), steps)

    def loss(*args: Any) -> Any:
        values = [*forward(*args), args[0]]
        # tanh(v) + v/2, not tanh(v)**2: its derivative 1.5 - tanh(v)**2 stays in [0.5, 1.5].
        # tanh(v)**2 has 2 tanh(v) (1 - tanh(v)**2), a difference of nearly equal numbers once
        # |v| > 3: an ulp of v there moved the expected gradient by 4e-5, past the tolerance.
        return ig.sum(ig.stack([ig.sum(ig.tanh(v) + v * 0.5) * (k + 1.0) for k, v in enumerate(values)]))

    args = arguments(program, special=False)
    grad = ig.value_and_grad(loss, argnums=tuple(range(len(args))))
    (expected_value, expected_grads), (got_value, got_grads) = jit_both(grad, *args)
    try:
        assert_same_results(ig.tree_leaves(expected_grads), ig.tree_leaves(got_grads), normwise=True,
                            what=f"gradient of {steps}")
    except AssertionError:
        if np.asarray(expected_value).dtype != np.float32:
            raise
        _no_further_from_float64(grad, args, expected_grads, got_grads, f"gradient of {steps}")
    # The loss is a sum of terms that can cancel: its error is relative to the terms' sizes.
    values = [*(np.asarray(v, dtype=np.float64) for v in ig.jit(forward, backend="interp")(*args)), args[0]]
    scale = sum(np.abs(np.tanh(v) + v * 0.5).sum() * (k + 1.0) for k, v in enumerate(values))
    rtol = 1e-5 if np.asarray(expected_value).dtype == np.float32 else 1e-12
    assert abs(float(got_value) - float(expected_value)) <= rtol * max(scale, abs(float(expected_value))), (
        f"loss of {steps}: {float(got_value)!r} against {float(expected_value)!r} (terms of size {scale:.3g})")


def _no_further_from_float64(grad: Any, args: list[np.ndarray], expected: Any, got: Any, what: str) -> None:
    """An ill-conditioned float32 gradient (tanh' = 1 - tanh**2 near |tanh| = 1 inside the
    program amplifies an ulp of tanh a hundredfold) may differ between the backends by more
    than the tolerance: then the CPU's must be no further (up to 2x) from the float64 gradient
    than the interpreter's float32 one is."""
    with np.errstate(all="ignore"):
        _, exact = ig.jit(grad, backend="interp")(*(a.astype(np.float64) for a in args))
    for k, (e, g, x) in enumerate(zip(ig.tree_leaves(expected), ig.tree_leaves(got), ig.tree_leaves(exact))):
        e, g, x = (np.asarray(v, dtype=np.float64) for v in (e, g, x))
        interp_error = np.max(np.abs(e - x), initial=0.0)
        cpu_error = np.max(np.abs(g - x), initial=0.0)
        assert cpu_error <= 2 * interp_error + 1e-6 * np.max(np.abs(x), initial=0.0), (
            f"{what} result #{k}: the CPU's float32 gradient is {cpu_error:.3g} from float64's, the "
            f"interpreter's {interp_error:.3g}"
        )


INT_UNARY = {"neg": ig.negative, "abs": ig.abs, "sign": ig.sign, "relu": ig.relu, "invert": ig.bitwise_not}
INT_BINARY = {
    "add": ig.add,
    "sub": ig.subtract,
    "mul": ig.multiply,
    "floor_div": ig.floor_divide,  # by zero, and INT_MIN // -1, included
    "max": ig.maximum,
    "min": ig.minimum,
    "and": ig.bitwise_and,
    "xor": ig.bitwise_xor,
    "shift": lambda a, b: ig.left_shift(a, ig.bitwise_and(b, 63)),  # past the width: 0
    "where": lambda a, b: ig.where(a > b, a, b),
}


@st.composite
def integer_programs(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Step], Any, int]:
    """A chain over one integer input: elementwise ops against itself reversed or earlier
    values, and reductions; wrapping arithmetic and the integer extremes included."""
    shape = tuple(draw(st.lists(st.sampled_from(SIZES), min_size=1, max_size=2)))
    steps: list[Step] = []
    shapes = [shape]
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(shapes) - 1))
        if draw(st.integers(0, 4)) == 0:
            axis = draw(st.integers(0, len(shapes[i]) - 1))
            steps.append(("reduce", draw(st.sampled_from(["sum", "max", "min"])), i, (axis,), True))
            shapes.append(tuple(1 if d == axis else n for d, n in enumerate(shapes[i])))
        elif draw(st.booleans()):
            steps.append(("unary", draw(st.sampled_from(sorted(INT_UNARY))), i))
            shapes.append(shapes[i])
        else:
            j = draw(st.integers(0, len(shapes) - 1))
            try:
                out = tuple(np.broadcast_shapes(shapes[i], shapes[j]))
            except ValueError:
                continue
            steps.append(("binary", draw(st.sampled_from(sorted(INT_BINARY))), i, j))
            shapes.append(out)
    return shape, steps, draw(st.sampled_from([np.int32, np.int64])), draw(st.integers(0, 2**16))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(integer_programs())
def test_random_integer_programs_agree_exactly(program: tuple[tuple[int, ...], list[Step], Any, int]) -> None:
    shape, steps, dtype, seed = program
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    x = rng.integers(-50, 50, shape).astype(dtype)
    flat = x.reshape(-1)
    for k, v in zip(rng.permutation(flat.size), [info.min, info.max, 0, -1]):
        flat[k] = v

    def run(x: Any) -> list[Any]:
        values = [x]
        for step in steps:
            if step[0] == "unary":
                values.append(INT_UNARY[step[1]](values[step[2]]))
            elif step[0] == "binary":
                values.append(INT_BINARY[step[1]](values[step[2]], values[step[3]]))
            else:
                _, name, i, axes, keep = step
                values.append(REDUCE[name](values[i], axis=axes, keepdims=keep))
        return values[1:]

    expected, got = jit_both(run, x)
    assert_same_results(expected, got, what=f"integer program {steps}")
