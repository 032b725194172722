"""`linalg-fuse-elementwise` against the reference interpreter: results bit for bit.

Programs are traced from Python (`ig.trace`), lowered to stage "linalg", run on the
interpreter, fused, checked against the stage contract and run again on the same inputs. The
fused bodies hold the same scalar ops in the same order per element, so results must agree
byte for byte (NaN payloads and signed zeros included), not merely within a tolerance.
Structural claims (W4 and W7 become one generic, softmax shrinks) count ops in the fused IR.
The hand-written cases of tests/filecheck/lowering/nn_to_linalg/linalg-fuse-elementwise.mlir run here too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import IndexType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp

import irgrad as ig
from irgrad.backends.interpreter import run_function
from irgrad.ir_numpy import numpy_dtype
from irgrad.diagnostics import parse_module, verify_module
from irgrad.context import make_context
from irgrad.registry import irgrad_passes, lower, run_pipeline
from irgrad.lowering.contracts import assert_stage_linalg
from irgrad.lowering.nn_to_linalg.linalg_fuse_elementwise import LinalgFuseElementwisePass
from irgrad.pipelines import STAGES

FILECHECK_CASES = Path(__file__).parents[3] / "filecheck" / "lowering" / "nn_to_linalg" / "linalg-fuse-elementwise.mlir"

# ---------------------------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------------------------


def count(module: ModuleOp, name: str) -> int:
    return sum(1 for op in module.walk() if op.name == name)


def fused(module: ModuleOp, spec: str = "linalg-fuse-elementwise") -> ModuleOp:
    """A fused, verified, contract-checked copy of `module`."""
    copy = module.clone()
    run_pipeline(copy, spec)
    verify_module(copy)
    assert_stage_linalg(copy)
    return copy


def assert_bit_identical(actual: Sequence[Any], expected: Sequence[Any]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
        assert a.tobytes() == e.tobytes(), f"results differ:\n{a}\n{e}"


def check(
    module: ModuleOp, entry: str, args: Sequence[Any], spec: str = "linalg-fuse-elementwise"
) -> ModuleOp:
    """Fuse a copy of `module`; both run bit-identically on `args`. Returns the fused copy."""
    expected = run_function(module, entry, list(args))
    after = fused(module, spec)
    assert_bit_identical(run_function(after, entry, list(args)), expected)
    return after


class Traced:
    """`fn` traced on `args` and lowered to stage "linalg", with its flat numpy inputs."""

    def __init__(self, fn: Callable[..., Any], *args: Any):
        program = ig.trace(fn, *args)
        self.entry = program.entry
        self.module = lower(program.module.clone(), "linalg")
        self.inputs = [np.asarray(v) for v in ig.tree_leaves(list(args))]

    def check(self, spec: str = "linalg-fuse-elementwise") -> ModuleOp:
        return check(self.module, self.entry, self.inputs, spec)


def normal(shape: Sequence[int], dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(tuple(shape)).astype(dtype)


# ---------------------------------------------------------------------------------------------
# The pass as the driver sees it
# ---------------------------------------------------------------------------------------------


def test_registered_with_its_contract() -> None:
    assert irgrad_passes()["linalg-fuse-elementwise"]() is LinalgFuseElementwisePass
    doc = inspect.getdoc(LinalgFuseElementwisePass) or ""
    assert "Input invariant" in doc and "Output IR" in doc


def test_fused_stage_extends_the_linalg_stage() -> None:
    assert STAGES["fused"] == STAGES["linalg"] + ",linalg-fuse-elementwise,canonicalize,cse"


# ---------------------------------------------------------------------------------------------
# Benchmark workloads
# ---------------------------------------------------------------------------------------------


def w4(x: Any) -> Any:
    return ig.tanh(x) * 0.5 + x * x


def w7(x: Any) -> Any:
    for i in range(100):
        if i % 10 == 9:
            x = ig.tanh(x)
        elif i % 2 == 0:
            x = x + 0.1
        else:
            x = x * 0.9
    return x


def test_w4_is_one_generic() -> None:
    x = normal((64, 33), seed=1)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    traced = Traced(w4, x)
    assert count(traced.module, "linalg.generic") == 4
    after = traced.check()
    assert count(after, "linalg.generic") == 1
    assert count(after, "linalg.fill") == 0
    (generic,) = (op for op in after.walk() if op.name == "linalg.generic")
    # x * x read x twice through one map: a single operand remains.
    assert len(generic.operands) == 2


def test_w4_through_the_fused_stage() -> None:
    x = normal((16,), seed=2)
    program = ig.trace(w4, x)
    module = lower(program.module.clone(), "fused")
    assert_stage_linalg(module)
    assert count(module, "linalg.generic") == 1
    (expected,) = run_function(program.module, program.entry, [x])
    (actual,) = run_function(module, program.entry, [x])
    assert_bit_identical([actual], [expected])


def test_w7_is_one_generic() -> None:
    x = normal((64,), seed=3)
    traced = Traced(w7, x)
    assert count(traced.module, "linalg.generic") == 100
    after = traced.check()
    assert count(after, "linalg.generic") == 1
    assert count(after, "linalg.fill") == 0
    assert count(after, "math.tanh") == 10


# ---------------------------------------------------------------------------------------------
# Reductions and broadcasts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: ig.softmax(x, axis=-1),
        lambda x: ig.log_softmax(x, axis=-1),
        lambda x: ig.logsumexp(x, axis=0),
    ],
    ids=["softmax", "log_softmax", "logsumexp"],
)
def test_reduction_and_broadcast_chains_shrink(fn: Callable[..., Any]) -> None:
    x = normal((6, 10), seed=4)
    x[1, 3] = np.nan
    x[2, :] = -np.inf
    traced = Traced(fn, x)
    after = traced.check()
    assert count(after, "linalg.generic") < count(traced.module, "linalg.generic")
    assert sum(1 for _ in after.walk()) < sum(1 for _ in traced.module.walk())


def test_softmax_keeps_one_exp_per_element() -> None:
    """exp feeds both the sum and the division: it is stored, never recomputed."""
    traced = Traced(lambda x: ig.softmax(x, axis=-1), normal((4, 8), seed=5))
    after = traced.check()
    assert count(after, "math.exp") == count(traced.module, "math.exp") == 1


def test_sum_of_squares_fuses_into_the_reduction() -> None:
    def fn(x: Any, y: Any) -> Any:
        return ig.sum((x - y) * (x - y), axis=1)

    traced = Traced(fn, normal((5, 7), seed=6), normal((5, 7), seed=7))
    after = traced.check()
    reductions = [op for op in after.walk() if op.name == "linalg.generic"]
    assert len(reductions) == 1
    assert "reduction" in str(reductions[0].iterator_types)


def test_bias_broadcast_fuses_into_its_consumer() -> None:
    traced = Traced(lambda x, b: ig.tanh(x + b), normal((4, 8), seed=8), normal((8,), seed=9))
    after = traced.check()
    assert count(after, "linalg.generic") == 1


# ---------------------------------------------------------------------------------------------
# Whole programs: forward and gradient
# ---------------------------------------------------------------------------------------------


def mlp_loss_program() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from irgrad import layers, losses

    model = layers.MLP([4, 16, 3])
    params = model.init(0)
    x = normal((8, 4), seed=10)
    labels = np.random.default_rng(11).integers(0, 3, 8).astype(np.int32)

    def loss(p: Any, x: Any, y: Any) -> Any:
        return losses.softmax_cross_entropy(model.apply(p, x), y)

    return loss, (params, x, labels)


def test_mlp_loss() -> None:
    loss, args = mlp_loss_program()
    traced = Traced(loss, *args)
    after = traced.check()
    assert count(after, "linalg.generic") < count(traced.module, "linalg.generic")


def test_mlp_value_and_grad() -> None:
    loss, args = mlp_loss_program()
    traced = Traced(ig.value_and_grad(loss), *args)
    after = traced.check("linalg-fuse-elementwise,canonicalize,cse")
    assert count(after, "linalg.generic") < count(traced.module, "linalg.generic")


def test_cnn_value_and_grad() -> None:
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

    def loss(p: Any, x: Any, y: Any) -> Any:
        return losses.softmax_cross_entropy(model.apply(p, x), y)

    Traced(ig.value_and_grad(loss), params, normal((2, 1, 6, 6), seed=12), np.array([1, 3], np.int32)).check()


def test_gather_and_iota_value_and_grad() -> None:
    def loss(z: Any, y: Any) -> Any:
        log_probs = ig.log_softmax(z, axis=-1)
        picked = ig.take(ig.reshape(log_probs, (35,)), ig.arange(5) * 7 + y)
        return -ig.mean(picked)

    z = normal((5, 7), np.float64, seed=13)
    Traced(ig.value_and_grad(loss), z, np.array([0, 6, 3, -1, 2], np.int32)).check()


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64], ids=["f16", "bf16", "f64"])
def test_other_float_types(dtype: Any) -> None:
    x = normal((3, 5), dtype, seed=14)

    def fn(x: Any) -> Any:
        return ig.sum(ig.exp(x) * 0.5 - ig.sqrt(ig.abs(x)), axis=0) + ig.max(x, axis=0)

    Traced(fn, x).check()


def test_second_run_changes_nothing() -> None:
    loss, args = mlp_loss_program()
    traced = Traced(ig.value_and_grad(loss), *args)
    once = fused(traced.module)
    twice = fused(once)
    assert str(twice) == str(once)


# ---------------------------------------------------------------------------------------------
# The FileCheck cases, run
# ---------------------------------------------------------------------------------------------


def filecheck_cases() -> list[str]:
    text = FILECHECK_CASES.read_text()
    # Not the negative cases: erroring inputs (checked with ERR:) and the buffers the pass skips.
    return [
        case
        for case in text.split("\n// -----\n")
        if "func.func" in case and "// ERR:" not in case and "memref<" not in case
    ]


def random_argument(t: Any, seed: int) -> Any:
    if isinstance(t, IndexType):
        return 3
    if isinstance(t, TensorType):
        dtype = numpy_dtype(t.get_element_type())
        shape = tuple(t.get_shape())
        if np.issubdtype(dtype, np.integer):
            return np.random.default_rng(seed).integers(-9, 9, shape).astype(dtype)
        return normal(shape, dtype, seed)
    return numpy_dtype(t).type(1.5)


@pytest.mark.parametrize("case", filecheck_cases(), ids=lambda c: c.split("func.func @")[1].split("(")[0])
def test_filecheck_case_numerically(case: str) -> None:
    module = parse_module(make_context(), case)
    (func,) = (op for op in module.walk() if isinstance(op, FuncOp))
    args = [random_argument(t, seed) for seed, t in enumerate(func.function_type.inputs)]
    check(module, func.sym_name.data, args)


# ---------------------------------------------------------------------------------------------
# Random elementwise DAGs
# ---------------------------------------------------------------------------------------------

UNARY: dict[str, Callable[[Any], Any]] = {
    "tanh": ig.tanh,
    "exp": ig.exp,
    "neg": ig.negative,
    "abs": ig.abs,
    "sqrt": ig.sqrt,
    "log1p": ig.log1p,
    "sigmoid": ig.sigmoid,
    "relu": ig.relu,
    "half": lambda x: x * 0.5,
    "plus_one": lambda x: x + 1.0,
    "transposed_sin": lambda x: ig.transpose(ig.sin(ig.transpose(x))) if x.ndim == 2 else ig.sin(x),
    "row_sum": lambda x: ig.sum(x, axis=-1, keepdims=True) if x.ndim == 2 else ig.sum(x),
    "col_max": lambda x: ig.max(x, axis=0, keepdims=True) if x.ndim == 2 else ig.max(x),
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": ig.add,
    "sub": ig.subtract,
    "mul": ig.multiply,
    "div": ig.divide,
    "max": ig.maximum,
    "min": ig.minimum,
    "select": lambda x, y: ig.where(ig.greater(x, y), x, y),
}

step = st.one_of(
    st.tuples(st.sampled_from(sorted(UNARY)), st.integers(0, 1 << 16)),
    st.tuples(st.sampled_from(sorted(BINARY)), st.integers(0, 1 << 16), st.integers(0, 1 << 16)),
)


def dag_program(steps: Sequence[tuple[Any, ...]], extra_outputs: Sequence[int]) -> Callable[..., Any]:
    """Each step applies an op to earlier values (indices taken modulo the pool size); the
    program returns the last value and a few others, so some values have several users."""

    def fn(a: Any, b: Any, c: Any) -> Any:
        pool = [a, b, c]
        for name, *picks in steps:
            operands = [pool[p % len(pool)] for p in picks]
            op = UNARY.get(name) or BINARY[name]
            pool.append(op(*operands))
        return (pool[-1], *(pool[i % len(pool)] for i in extra_outputs))

    return fn


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(step, min_size=1, max_size=10),
    extra_outputs=st.lists(st.integers(0, 1 << 16), max_size=2),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 1000),
)
def test_random_elementwise_dags(
    steps: list[tuple[Any, ...]], extra_outputs: list[int], dtype: Any, seed: int
) -> None:
    a = normal((3, 4), dtype, seed)
    b = normal((4,), dtype, seed + 1)
    c = normal((3, 1), dtype, seed + 2)
    a[0, 0] = np.nan
    a[1, 1] = -0.0
    with np.errstate(all="ignore"):
        Traced(dag_program(steps, extra_outputs), a, b, c).check()
