"""Elementwise `nn` ops: unary and binary math, compare, select, convert, and complex numbers'
parts (nn.real, nn.imag, nn.complex, nn.conj).

One table maps each op to a numpy function; the semantics that numpy leaves open (signed
zeros, integer division by zero, saturating conversion, low-precision transcendental
functions) come from `numerics`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Operation

from irgrad.backends.interpreter import numerics
from irgrad.backends.interpreter.nn_creation import result_dtype
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn

Fn = Callable[..., Any]


def _transcendental(fn: Fn) -> Fn:
    """f16/bf16 compute in f32 and round once; other dtypes directly."""
    return lambda *xs: numerics.via_compute_dtype(fn, *xs)


def _rsqrt(x: Any) -> Any:
    return np.reciprocal(np.sqrt(x))


def _relu(x: Any) -> Any:
    return numerics.maximum(x, np.zeros_like(x))


def _sign(x: Any) -> Any:
    # np.sign keeps NaN; bf16 goes through f32 (exact: the result is -1, 0, 1 or NaN).
    if np.iscomplexobj(x):
        return _complex_sign(x)
    return numerics.via_compute_dtype(np.sign, x)


def _complex_sign(z: Any) -> Any:
    """z / |z| part by part, 0 at 0: jnp.sign's (and nn-expand-complex's) values, NaN where |z| is
    inf (numpy 2's np.sign gives the direction there)."""
    m = np.abs(z)
    safe = np.where(m == 0, np.ones_like(m), m)
    out = np.empty(np.shape(z), z.dtype)
    out.real, out.imag = z.real / safe, z.imag / safe
    return out


UNARY: dict[type[Operation], Fn] = {
    nn.NegOp: np.negative,
    nn.AbsOp: np.abs,
    nn.SignOp: _sign,
    nn.ExpOp: _transcendental(np.exp),
    nn.LogOp: _transcendental(np.log),
    nn.TanhOp: _transcendental(np.tanh),
    nn.SigmoidOp: _transcendental(numerics.sigmoid),
    nn.ReluOp: _relu,
    nn.SqrtOp: _transcendental(np.sqrt),
    nn.RsqrtOp: _transcendental(_rsqrt),
    nn.SinOp: _transcendental(np.sin),
    nn.CosOp: _transcendental(np.cos),
    nn.ErfOp: _transcendental(numerics.erf),
    nn.RealOp: lambda z: np.array(z.real),  # a copy: contiguous, and 0-d stays 0-d
    nn.ImagOp: lambda z: np.array(z.imag),
    nn.ConjOp: np.conjugate,
}

BINARY: dict[type[Operation], Fn] = {
    nn.AddOp: np.add,
    nn.SubOp: np.subtract,
    nn.MulOp: np.multiply,
    nn.DivOp: numerics.nn_divide,
    nn.PowOp: _transcendental(np.power),
    nn.MaximumOp: numerics.maximum,
    nn.MinimumOp: numerics.minimum,
    nn.ComplexOp: numerics.make_complex,
}

COMPARE: dict[str, Fn] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def _elementwise_impl(op_type: type[Operation], fn: Fn) -> Fn:
    """An implementation returning `fn(*operands)`."""

    def run(
        self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ):
        return (fn(*args),)

    run.__name__ = f"run_{op_type.name.replace('.', '_')}"
    return numpy_impl(op_type)(run)


class NNElementwiseFunctions(InterpreterFunctions):
    """Elementwise nn ops: the UNARY and BINARY tables, plus compare, select and convert."""

    @numpy_impl(nn.CompareOp)
    def run_compare(self, interpreter: Interpreter, op: nn.CompareOp, args: PythonValues):
        lhs, rhs = args
        return (COMPARE[op.direction_name](lhs, rhs),)

    @numpy_impl(nn.SelectOp)
    def run_select(self, interpreter: Interpreter, op: nn.SelectOp, args: PythonValues):
        pred, on_true, on_false = args
        return (np.where(pred, on_true, on_false),)

    @numpy_impl(nn.ConvertOp)
    def run_convert(self, interpreter: Interpreter, op: nn.ConvertOp, args: PythonValues):
        (x,) = args
        return (numerics.convert(x, result_dtype(op)),)


for _op_type, _fn in (UNARY | BINARY).items():
    setattr(NNElementwiseFunctions, f"run_{_op_type.name[3:]}", _elementwise_impl(_op_type, _fn))
register_impls(NNElementwiseFunctions)
