"""Numerical checks of derivative rules through the reference interpreter (JAX's `check_grads`, in IR).

A case is a function `@f` built with op builders from its arguments. `check_first_order` runs `@f`, its
`autodiff.vjp` and its `autodiff.jvp` on random float64 inputs and compares, along random directions u
(results) and v (arguments):
- vjp:  (J^T u) . v  against the central difference of u . f(x + e v);
- jvp:  J v          against the central difference of f(x + e v);
- both: u . (J v) == (J^T u) . v  to rounding.
`check_second_order` differentiates the derivative: with s(x) = u . f(x),
- jvp of grad:   H v  (Hessian-vector product) against the central difference of grad s along v;
- grad of grad:  grad (w . grad s) = H w against the same difference along w;
- grad of jvp:   grad (u . J v) = H_u v, equal to the Hessian-vector product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, TensorType, f64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.parser import Parser

from irgrad.autodiff.autodiff import AutodiffPass
from irgrad.backends.interpreter import run_function
from irgrad.dialects import autodiff as ad, nn
from irgrad.context import make_context

EPS = 1e-5

Generator = Callable[[np.random.Generator, tuple[int, ...]], Any]


def normal(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    return _shaped(rng.standard_normal(shape), shape)


def positive(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    """Away from 0 and below: for log, sqrt, rsqrt, pow's base."""
    return _shaped(rng.uniform(0.5, 2.0, shape), shape)


def away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    """|x| >= 0.2: for abs, relu, a divisor."""
    magnitude = rng.uniform(0.2, 2.0, shape)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return _shaped(magnitude * sign, shape)


def _shaped(array: np.ndarray, shape: tuple[int, ...]) -> Any:
    return np.float64(array) if shape == () and not isinstance(array, np.ndarray) else np.asarray(array)


@dataclass(frozen=True)
class Arg:
    """A function argument: a float input drawn by `gen`, or a fixed `value` (indices, predicates)."""

    type: Attribute
    gen: Generator = normal
    value: Any = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.get_shape()) if isinstance(self.type, TensorType) else ()

    @property
    def is_float(self) -> bool:
        return self.value is None


def T(*shape: int, gen: Generator = normal) -> Arg:
    """A float64 tensor argument."""
    return Arg(TensorType(f64, list(shape)), gen)


def S(gen: Generator = normal) -> Arg:
    """A float64 scalar argument."""
    return Arg(f64, gen)


def fixed(value: np.ndarray, type: Attribute) -> Arg:
    return Arg(type, value=value)


class Emitter:
    """`e(op)` appends `op` to the function being built and returns its result (or results)."""

    def __init__(self, block: Block):
        self.block = block

    def __call__(self, op: Operation) -> Any:
        self.block.add_op(op)
        return op.results[0] if len(op.results) == 1 else op.results


Body = Callable[..., Any]


@dataclass
class Case:
    name: str
    args: Sequence[Arg]
    body: Body | None = None
    order2: bool = True
    inputs: Callable[[np.random.Generator], list[Any]] | None = None
    rtol: float = 1e-6
    source: str | None = None
    """MLIR text of `@f` (for control flow, which op builders make tedious), used instead of `body`."""

    def __str__(self) -> str:
        return self.name


# ---------------------------------------------------------------------------------------------------------------
# Building modules
# ---------------------------------------------------------------------------------------------------------------


def build_function(name: str, arg_types: Sequence[Attribute], body: Body) -> func.FuncOp:
    """`func.func @name(args) -> (...)` whose results are what `body(e, *args)` returns."""
    block = Block(arg_types=list(arg_types))
    returned = body(Emitter(block), *block.args)
    if isinstance(returned, SSAValue):
        returned = [returned]
    returned = list(returned)
    block.add_op(func.ReturnOp(*returned))
    return func.FuncOp(name, (list(arg_types), [v.type for v in returned]), Region(block))


def primal_function(case: Case) -> func.FuncOp:
    """`@f` of the case: parsed from `case.source`, or built from `case.body`."""
    if case.source is None:
        assert case.body is not None
        return build_function("f", [a.type for a in case.args], case.body)
    module = Parser(make_context(), case.source).parse_module()
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "f"]
    assert len(functions) == 1, "a case's source defines one @f"
    functions[0].detach()
    return functions[0]


def float_indices(case: Case) -> list[int]:
    return [i for i, a in enumerate(case.args) if a.is_float]


def request_function(name: str, request: Callable[[Emitter, Sequence[SSAValue]], Any], types: Sequence[Attribute]):
    return build_function(name, types, lambda e, *args: request(e, args))


def first_order_module(case: Case) -> tuple[ModuleOp, func.FuncOp]:
    """@f, @vjp(args, cts) and @jvp(args, tangents), with the autodiff pass applied."""
    f = primal_function(case)
    wrt = float_indices(case)
    arg_types = [a.type for a in case.args]
    result_types = list(f.function_type.outputs.data)
    tangent_types = [arg_types[i] for i in wrt]
    n = len(arg_types)

    vjp = request_function(
        "vjp",
        lambda e, args: e(ad.VJPOp(f, args[:n], args[n:], wrt)),
        [*arg_types, *result_types],
    )
    jvp = request_function(
        "jvp",
        lambda e, args: e(ad.JVPOp(f, args[:n], args[n:], wrt)),
        [*arg_types, *tangent_types],
    )
    module = ModuleOp([f, vjp, jvp])
    return run_pass(module), f


def run_pass(module: ModuleOp) -> ModuleOp:
    module.verify()
    AutodiffPass().apply(make_context(), module)
    module.verify()
    return module


# ---------------------------------------------------------------------------------------------------------------
# Inputs and vector arithmetic
# ---------------------------------------------------------------------------------------------------------------


def make_inputs(case: Case, rng: np.random.Generator) -> list[Any]:
    if case.inputs is not None:
        return case.inputs(rng)
    return [a.value if not a.is_float else a.gen(rng, a.shape) for a in case.args]


def random_like(values: Sequence[Any], rng: np.random.Generator) -> list[Any]:
    return [_shaped(rng.standard_normal(np.shape(v)), np.shape(v)) for v in values]


def dot(xs: Sequence[Any], ys: Sequence[Any]) -> float:
    return float(sum(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)) for x, y in zip(xs, ys)))


def is_float_value(v: Any) -> bool:
    return np.asarray(v).dtype.kind == "f"


def shifted(inputs: Sequence[Any], wrt: Sequence[int], direction: Sequence[Any], step: float) -> list[Any]:
    out = list(inputs)
    for i, d in zip(wrt, direction):
        out[i] = _shaped(np.asarray(inputs[i]) + step * np.asarray(d), np.shape(inputs[i]))
    return out


def central_difference(fn: Callable[[list[Any]], Sequence[Any]], inputs, wrt, direction) -> list[np.ndarray]:
    plus = fn(shifted(inputs, wrt, direction, EPS))
    minus = fn(shifted(inputs, wrt, direction, -EPS))
    return [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * EPS) for p, m in zip(plus, minus)]


def assert_close(actual: float | np.ndarray, expected: float | np.ndarray, rtol: float, what: str) -> None:
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


# ---------------------------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------------------------


def check_first_order(case: Case, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    module, f = first_order_module(case)
    wrt = float_indices(case)
    x = make_inputs(case, rng)
    y = list(run_function(module, "f", x))
    float_results = [i for i, r in enumerate(y) if is_float_value(r)]
    u = [random_like([r], rng)[0] if is_float_value(r) else np.zeros_like(r) for r in y]
    v = random_like([x[i] for i in wrt], rng)

    def f_float(inputs: list[Any]) -> list[Any]:
        results = run_function(module, "f", inputs)
        return [results[i] for i in float_results]

    fd = central_difference(f_float, x, wrt, v)
    fd_directional = dot([u[i] for i in float_results], fd)

    vjp_out = run_function(module, "vjp", [*x, *u])
    primal, arg_cts = vjp_out[: len(y)], vjp_out[len(y) :]
    for a, b_ in zip(primal, y):
        np.testing.assert_array_equal(a, b_, err_msg=f"{case}: vjp's primal results differ from @f's")
    vjp_directional = dot(arg_cts, v)
    assert_close(vjp_directional, fd_directional, case.rtol, f"{case}: (J^T u).v vs finite differences")

    jvp_out = run_function(module, "jvp", [*x, *v])
    primal, tangents = jvp_out[: len(y)], jvp_out[len(y) :]
    for a, b_ in zip(primal, y):
        np.testing.assert_array_equal(a, b_, err_msg=f"{case}: jvp's primal results differ from @f's")
    for k, i in enumerate(float_results):
        assert_close(tangents[i], fd[k], case.rtol, f"{case}: J v (result #{i}) vs finite differences")
    jvp_directional = dot(u, [t if is_float_value(t) else np.zeros_like(t) for t in tangents])
    assert_close(jvp_directional, vjp_directional, 1e-9, f"{case}: u.(J v) vs (J^T u).v")


def second_order_module(case: Case) -> ModuleOp:
    """@s(args, us) = sum_i u_i . f_i(args); @grad, @hvp (jvp of grad), @gg (grad of w . grad), @gj (grad of jvp)."""
    f = primal_function(case)
    arg_types = [a.type for a in case.args]
    n = len(arg_types)
    result_types = list(f.function_type.outputs.data)
    wrt = float_indices(case)
    wrt_types = [arg_types[i] for i in wrt]
    scalar = all(not isinstance(t, TensorType) for t in result_types)
    loss_type: Attribute = f64 if scalar else TensorType(f64, [])  # second-order cases have results of one kind

    def contract(e: Emitter, xs: Sequence[SSAValue], ys: Sequence[SSAValue]) -> SSAValue:
        total = None
        for x_, y_ in zip(xs, ys):
            if isinstance(x_.type, TensorType):
                term = e(nn.ReduceSumOp(e(nn.MulOp(x_, y_)), list(range(x_.type.get_num_dims()))))
                add = nn.AddOp
            else:
                term = e(arith.MulfOp(x_, y_))
                add = arith.AddfOp
            total = term if total is None else e(add(total, term))
        assert total is not None
        return total

    def call(e: Emitter, name: str, args: Sequence[SSAValue], types: Sequence[Attribute]) -> list[SSAValue]:
        op = func.CallOp(name, list(args), list(types))
        e(op)
        return list(op.results)

    s_types = [*arg_types, *result_types]
    s = build_function("s", s_types, lambda e, *a: contract(e, call(e, "f", a[:n], result_types), a[n:]))
    assert s.function_type.outputs.data[0] == loss_type
    grad = request_function("grad", lambda e, a: e(ad.GradOp(s, a, wrt)), s_types)
    hvp = request_function(
        "hvp", lambda e, a: e(ad.JVPOp(grad, a[: len(s_types)], a[len(s_types) :], wrt)), [*s_types, *wrt_types]
    )
    m = len(s_types)
    wdotgrad = build_function(
        "wdotgrad", [*s_types, *wrt_types], lambda e, *a: contract(e, call(e, "grad", a[:m], wrt_types), a[m:])
    )
    gg = request_function("gg", lambda e, a: e(ad.GradOp(wdotgrad, a, wrt)), [*s_types, *wrt_types])
    jvp_f = request_function("jvp_f", lambda e, a: e(ad.JVPOp(f, a[:n], a[n:], wrt)), [*arg_types, *wrt_types])
    k = n + len(wrt)
    udotjv = build_function(
        "udotjv",
        [*arg_types, *wrt_types, *result_types],
        lambda e, *a: contract(e, call(e, "jvp_f", a[:k], [*result_types, *result_types])[len(result_types) :], a[k:]),
    )
    gj = request_function("gj", lambda e, a: e(ad.GradOp(udotjv, a, wrt)), [*arg_types, *wrt_types, *result_types])
    module = ModuleOp([f, s, grad, hvp, wdotgrad, gg, jvp_f, udotjv, gj])
    return run_pass(module)


def check_second_order(case: Case, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    module = second_order_module(case)
    wrt = float_indices(case)
    x = make_inputs(case, rng)
    y = run_function(module, "f", x)
    u = random_like(y, rng)
    v = random_like([x[i] for i in wrt], rng)
    w = random_like([x[i] for i in wrt], rng)

    def grad(inputs: list[Any]) -> list[Any]:
        return list(run_function(module, "grad", [*inputs, *u]))

    hv = run_function(module, "hvp", [*x, *u, *v])[len(wrt) :]
    fd_v = central_difference(grad, x, wrt, v)
    for k, (a, b_) in enumerate(zip(hv, fd_v)):
        assert_close(a, b_, 1e-5, f"{case}: jvp of grad (H v), argument #{wrt[k]}")

    hw = run_function(module, "gg", [*x, *u, *w])
    fd_w = central_difference(grad, x, wrt, w)
    for k, (a, b_) in enumerate(zip(hw, fd_w)):
        assert_close(a, b_, 1e-5, f"{case}: grad of grad (H w), argument #{wrt[k]}")

    hv2 = run_function(module, "gj", [*x, *v, *u])
    for k, (a, b_) in enumerate(zip(hv2, hv)):
        assert_close(a, b_, 1e-9, f"{case}: grad of jvp vs jvp of grad, argument #{wrt[k]}")


