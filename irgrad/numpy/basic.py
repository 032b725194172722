"""Elementwise math, comparisons, reductions, creation and matmul with numpy names and semantics.

Broadcasting and JAX's dtype promotion happen once, in `operands` (irgrad/tracing/broadcasting.py);
the emitted IR then spells every broadcast (`nn.broadcast_in_dim`) and conversion (`nn.convert`).
The arithmetic, comparisons and `where` are the tracing core's (irgrad/tracing/elementwise.py),
which passes' reference code uses too; here they become public, eager-capable functions.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, elementwise, primitives as lax
from irgrad.numpy.support import (
    api,
    broadcast_shapes,
    broadcast_to,
    is_scalar,
    lift,
    normalize_axes,
    operands,
    require_float,
    result_dtype,
)
from irgrad.tracing.tracer import Tracer, full as _full
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.numpy import complex_functions, reduction_keywords as keywords

# ---------------------------------------------------------------------------------------------
# Elementwise binary
# ---------------------------------------------------------------------------------------------


@api
def add(x: Any, y: Any) -> Tracer:
    return elementwise.add(x, y)


@api
def subtract(x: Any, y: Any) -> Tracer:
    return elementwise.subtract(x, y)


@api
def multiply(x: Any, y: Any) -> Tracer:
    return elementwise.multiply(x, y)


@api
def divide(x: Any, y: Any) -> Tracer:
    """True division: integer operands give float32, as jnp.divide."""
    return elementwise.divide(x, y)


true_divide = divide


@api
def floor_divide(x: Any, y: Any) -> Tracer:
    (a, b), d = operands("floor_divide", x, y)
    if dtypes.is_float(d):
        q = floor(lax.binary(nn.DivOp, a, b))
        # numpy's divmod at the infinities: an infinite dividend gives NaN; a finite nonzero
        # one over an infinite divisor of the other sign gives -1 (its remainder is that
        # infinity), where floor(x / y) would say -0; a zero divisor gives x / 0 itself
        # (+-inf, or NaN), as numpy's floor_divide.
        a_inf, b_inf = elementwise.is_inf(a), elementwise.is_inf(b)
        zero = _full(a.shape, 0, d)
        signs_differ = lax.compare("ne", lax.compare("lt", a, zero), lax.compare("lt", b, zero))
        finite = lax.compare("eq", lax.binary(nn.SubOp, a, a), zero)  # not NaN, not +-inf
        finite_nonzero = lax.select(finite, lax.compare("ne", a, zero), finite)
        minus_one = lax.select(finite_nonzero, signs_differ, finite_nonzero)
        q = lax.select(lax.select(b_inf, minus_one, b_inf), _full(a.shape, -1, d), q)
        q = lax.select(a_inf, _full(a.shape, float("nan"), d), q)
        return lax.select(lax.compare("eq", b, zero), lax.binary(nn.DivOp, a, b), q)
    # Truncating division corrected toward -inf where the signs differ and it is inexact.
    q = lax.binary(nn.DivOp, a, b)
    r = lax.binary(nn.SubOp, a, lax.binary(nn.MulOp, q, b))
    zero = _full(a.shape, 0, d)
    inexact = lax.compare("ne", r, zero)
    signs_differ = lax.compare("ne", lax.compare("lt", r, zero), lax.compare("lt", b, zero))
    fix = lax.select(lax.select(inexact, signs_differ, inexact), _full(a.shape, 1, d), zero)
    return lax.binary(nn.SubOp, q, fix)


@api
def remainder(x: Any, y: Any) -> Tracer:
    """`x % y` as numpy and Python define it: the result has the divisor's sign.

    Integers: the truncated remainder `x - trunc(x / y) * y`, plus `y` where it is nonzero with
    a sign other than `y`'s; a zero divisor gives 0 (numpy's result, without its warning).
    Floats: `x - floor(x / y) * y`, then moved into `[0, y)` (or `(y, 0]`) where rounding left
    it outside. The derivative is 1 in `x` and `-floor(x / y)` in `y`, away from the jumps.
    """
    return elementwise.remainder(x, y)


mod = remainder


@api
def floor(x: Any) -> Tracer:
    """floor(x) = x - mod(x, 1) would be inexact; built from convert (truncation) and a fix-up."""
    return elementwise.floor(x)


@api
def power(x: Any, y: Any) -> Tracer:
    """x ** y. A small Python-int exponent becomes multiplications (JAX's integer_pow): exact,
    fast, and differentiable at x = 0, where pow's derivative would involve log(0); on a complex
    x any Python int does (repeated squaring, as JAX's). Other complex powers are the principal
    exp(y log x) of nn.pow."""
    if isinstance(y, int) and not isinstance(y, bool) and dtypes.is_complex(lift(x).dtype):
        return complex_functions.integer_power(lift(x), y)
    if isinstance(y, int) and not isinstance(y, bool) and -4 <= y <= 4:
        t = lift(x)
        if y == 0:
            return ones_like(t)
        result = t
        for _ in range(builtins.abs(y) - 1):
            result = lax.binary(nn.MulOp, result, t)
        if y < 0:
            result = divide(1, result)
        return result
    d = result_dtype(x, y)
    if dtypes.is_float(d) or dtypes.is_complex(d):
        # complex: nn.pow's principal exp(y log x) (docs/dialects/nn.md, "Complex numbers")
        (a, b), _ = operands("power", x, y)
        return lax.binary(nn.PowOp, a, b)
    # Integer powers are computed exactly in float64 (exact below 2**53) and converted back.
    (a, b), _ = operands("power", x, y, dtype=dtypes.float64)
    return lax.convert(lax.binary(nn.PowOp, a, b), d)


@api
def maximum(x: Any, y: Any) -> Tracer:
    return elementwise.binary("maximum", nn.MaximumOp, x, y)


@api
def minimum(x: Any, y: Any) -> Tracer:
    return elementwise.binary("minimum", nn.MinimumOp, x, y)


# ---------------------------------------------------------------------------------------------
# Elementwise unary
# ---------------------------------------------------------------------------------------------


def _unary_float(op_class: type[nn.ElementwiseUnaryOp], x: Any) -> Tracer:
    return lax.unary(op_class, require_float(op_class.name, lift(x), complex_ok=op_class.COMPLEX))


def _unary_numeric(op_name: str, op_class: type[nn.ElementwiseUnaryOp], x: Any) -> Tracer:
    t = lift(x)
    if t.dtype == dtypes.bool_:
        raise DTypeError(f"{op_name}: not defined on bool arrays{user_site()}")
    return lax.unary(op_class, t)


@api
def negative(x: Any) -> Tracer:
    return _unary_numeric("negative", nn.NegOp, x)


@api
def abs(x: Any) -> Tracer:
    """|x|; of a complex array, the real array hypot(re, im)."""
    t = lift(x)
    if dtypes.is_complex(t.dtype):
        return _complex_abs(t)
    return t if t.dtype == dtypes.bool_ else lax.unary(nn.AbsOp, t)


def _complex_abs(z: Tracer) -> Tracer:
    """|z| = a sqrt(1 + (b/a)^2) with a, b the larger and smaller of |re|, |im|: no overflow or
    underflow, 0 at 0 (gradient 0 there, as JAX's), inf where a part is inf (NaN or not)."""
    ar = lax.unary(nn.AbsOp, lax.unary(nn.RealOp, z))
    ai = lax.unary(nn.AbsOp, lax.unary(nn.ImagOp, z))
    a, b = lax.binary(nn.MaximumOp, ar, ai), lax.binary(nn.MinimumOp, ar, ai)
    const = lambda v: _full(a.shape, v, a.dtype)  # noqa: E731
    zero = lax.compare("eq", a, const(0.0))
    q = lax.binary(nn.DivOp, b, lax.select(zero, const(1.0), a))
    h = lax.binary(nn.MulOp, a, lax.unary(nn.SqrtOp, lax.binary(nn.AddOp, const(1.0), lax.binary(nn.MulOp, q, q))))
    h = lax.select(zero, const(0.0), h)
    inf = lax.binary(nn.OrOp, lax.compare("eq", ar, const(np.inf)), lax.compare("eq", ai, const(np.inf)))
    return lax.select(inf, const(np.inf), h)


absolute = abs


@api
def sign(x: Any) -> Tracer:
    return _unary_numeric("sign", nn.SignOp, x)


@api
def relu(x: Any) -> Tracer:
    return _unary_numeric("relu", nn.ReluOp, x)


@api
def exp(x: Any) -> Tracer:
    return _unary_float(nn.ExpOp, x)


@api
def log(x: Any) -> Tracer:
    return _unary_float(nn.LogOp, x)


@api
def tanh(x: Any) -> Tracer:
    return _unary_float(nn.TanhOp, x)


@api
def sigmoid(x: Any) -> Tracer:
    """The logistic 1 / (1 + e**-x) (`nn.sigmoid`). Complex: 1 / (1 + exp(-z)) from the complex
    ops, JAX's lax.logistic formula (nn.sigmoid takes no complex values)."""
    t = require_float("sigmoid", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_functions.logistic(t)
    return lax.unary(nn.SigmoidOp, t)


@api
def sqrt(x: Any) -> Tracer:
    return _unary_float(nn.SqrtOp, x)


@api
def rsqrt(x: Any) -> Tracer:
    return _unary_float(nn.RsqrtOp, x)


@api
def sin(x: Any) -> Tracer:
    return _unary_float(nn.SinOp, x)


@api
def erf(x: Any) -> Tracer:
    """The error function (`nn.erf`; libm's erf on the CPU, libdevice's on the GPU)."""
    return _unary_float(nn.ErfOp, x)


@api
def cos(x: Any) -> Tracer:
    return _unary_float(nn.CosOp, x)


@api
def square(x: Any) -> Tracer:
    t = lift(x)
    return lax.binary(nn.MulOp, t, t)


@api
def expm1(x: Any) -> Tracer:
    """exp(x) - 1, accurate near 0: 2t / (1 - t) with t = tanh(x/2) for |x| < 1, exp(x) - 1 beyond
    (where the subtraction loses nothing). The untaken branch sees a clamped argument."""
    t = require_float("expm1", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_functions.expm1(t, expm1)
    small = abs(t) < 1.0
    half = tanh(minimum(maximum(t, -1.0), 1.0) * 0.5)
    near_zero = 2.0 * half / (1.0 - half)
    return where(small, near_zero, exp(t) - 1.0)


@api
def log1p(x: Any) -> Tracer:
    """log(1 + x), accurate near 0 (Goldberg's trick: log(u) * x / (u - 1) with u = 1 + x,
    which cancels the rounding error of u; where u rounds to 1, log1p(x) = x to working precision)."""
    t = require_float("log1p", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_functions.log1p(t, log1p)
    u = lax.binary(nn.AddOp, t, _full(t.shape, 1.0, t.dtype))
    um1 = lax.binary(nn.SubOp, u, _full(t.shape, 1.0, t.dtype))
    is_one = lax.compare("eq", um1, _full(t.shape, 0.0, t.dtype))
    safe = lax.select(is_one, _full(t.shape, 1.0, t.dtype), um1)
    corrected = lax.binary(nn.MulOp, lax.unary(nn.LogOp, u), lax.binary(nn.DivOp, t, safe))
    # For u = inf the ratio is inf/inf; log1p(inf) = inf.
    is_inf = lax.compare("eq", u, _full(t.shape, float("inf"), t.dtype))
    return lax.select(is_one, t, lax.select(is_inf, u, corrected))


# ---------------------------------------------------------------------------------------------
# Comparisons and selection
# ---------------------------------------------------------------------------------------------


@api
def equal(x: Any, y: Any) -> Tracer:
    return elementwise.compare("eq", x, y)


@api
def not_equal(x: Any, y: Any) -> Tracer:
    return elementwise.compare("ne", x, y)


@api
def less(x: Any, y: Any) -> Tracer:
    return elementwise.compare("lt", x, y)


@api
def less_equal(x: Any, y: Any) -> Tracer:
    return elementwise.compare("le", x, y)


@api
def greater(x: Any, y: Any) -> Tracer:
    return elementwise.compare("gt", x, y)


@api
def greater_equal(x: Any, y: Any) -> Tracer:
    return elementwise.compare("ge", x, y)


@api
def logical_not(x: Any) -> Tracer:
    t = lift(x, dtypes.bool_) if not isinstance(x, Tracer) else x
    if t.dtype != dtypes.bool_:
        t = lax.convert(t, dtypes.bool_)
    return lax.compare("eq", t, _full(t.shape, False, dtypes.bool_))


def where(condition: Any, x: Any, y: Any) -> Tracer:
    """`condition ? x : y` elementwise, broadcasting all three (numpy's three-argument where;
    `ig.where` with the condition alone is irgrad/numpy/data_dependent.py's)."""
    return _where(condition, x, y)


@api
def _where(condition: Any, x: Any, y: Any) -> Tracer:
    return elementwise.where(condition, x, y)


def _shape(x: Any) -> tuple[int, ...]:
    from irgrad.numpy.support import shape_of

    return shape_of(x)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


@api
def sum(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False, dtype: Any = None, *,
        out: None = None, initial: Any = None, where: Any = None) -> Tracer:  # fmt: skip
    """Bool becomes int32; `dtype=bool` is a sum of bools, true where any term is (numpy's add
    on bool is or): a max over the bools, as nn.reduce_sum takes numbers only. `where=` and
    `initial=` as numpy's (irgrad/numpy/reduction_keywords.py)."""
    _no_out("sum", out)
    t = lift(x)
    mask = keywords.selection("sum", t, where)
    keywords.check_initial("sum", initial)
    if dtype is not None:
        t = lax.convert(t, dtypes.canonical(dtype))
    elif t.dtype == dtypes.bool_:
        t = lax.convert(t, dtypes.int32)
    t = keywords.masked(t, mask, False if t.dtype == dtypes.bool_ else 0)
    axes = normalize_axes("sum", axis, t.ndim)
    boolean = t.dtype == dtypes.bool_
    r = lax.reduce(nn.ReduceMaxOp if boolean else nn.ReduceSumOp, t, axes, keepdims)
    return keywords.with_initial(r, initial, lambda a, b: lax.binary(nn.OrOp if boolean else nn.AddOp, a, b))


@api
def mean(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False, dtype: Any = None, *,
         out: None = None, where: Any = None) -> Tracer:  # fmt: skip
    """The sum over the count; integers give float32 (as JAX). With `where=`, over the
    selected elements only (NaN where a slice selects none, as numpy)."""
    _no_out("mean", out)
    t = lift(x)
    mask = keywords.selection("mean", t, where)
    if dtype is not None:
        t = lax.convert(t, dtypes.canonical(dtype))
    t = require_float("mean", t, complex_ok=True)
    axes = normalize_axes("mean", axis, t.ndim)
    s = lax.reduce(nn.ReduceSumOp, keywords.masked(t, mask, 0.0), axes, keepdims)
    if mask is None:
        count = int(np.prod([t.shape[a] for a in axes], dtype=np.int64))
        # Dividing by an empty count gives NaN, as numpy's mean of an empty array does.
        return lax.binary(nn.DivOp, s, _full(s.shape, float(count), s.dtype))
    counts = lax.reduce(nn.ReduceSumOp, lax.convert(mask, t.dtype), axes, keepdims)
    return lax.binary(nn.DivOp, s, counts)


@api
def max(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False, *,
        out: None = None, initial: Any = None, where: Any = None) -> Tracer:  # fmt: skip
    """The largest element along `axis` (NaN propagates); `initial=` joins every slice and
    makes an empty one valid; `where=` needs `initial=` (numpy's rule)."""
    return _extreme("max", nn.ReduceMaxOp, x, axis, keepdims, out, initial, where)


@api
def min(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False, *,
        out: None = None, initial: Any = None, where: Any = None) -> Tracer:  # fmt: skip
    """The smallest element along `axis`; `initial=` and `where=` as `max`'s."""
    return _extreme("min", nn.ReduceMinOp, x, axis, keepdims, out, initial, where)


def _extreme(op_name: str, op_class: type[nn.ReduceOp], x: Any, axis: Any, keepdims: bool, out: Any,
             initial: Any, where: Any) -> Tracer:  # fmt: skip
    _no_out(op_name, out)
    t = lift(x)
    if dtypes.is_complex(t.dtype):  # nn.reduce_max/min take no complex values (yet)
        raise DTypeError(f"{op_name}: complex input (dtype {t.dtype}, shape {t.shape}) is not supported{user_site()}")
    mask = keywords.selection(op_name, t, where)
    keywords.check_initial(op_name, initial)
    keywords.require_initial(op_name, where, initial)
    axes = normalize_axes(op_name, axis, t.ndim)
    largest = op_class is nn.ReduceMaxOp
    if initial is None:
        _check_nonempty(op_name, t, axes)
    elif builtins.any(t.shape[a] == 0 for a in axes):
        return keywords.with_initial(
            _full(_kept(t.shape, axes, keepdims), keywords.lowest(t.dtype) if largest else keywords.highest(t.dtype), t.dtype),
            initial, lambda a, b: b,
        )
    identity = keywords.lowest(t.dtype) if largest else keywords.highest(t.dtype)
    r = lax.reduce(op_class, keywords.masked(t, mask, identity), axes, keepdims)
    return keywords.with_initial(r, initial, maximum if largest else minimum)


def _kept(shape: tuple[int, ...], axes: list[int], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _no_out(op_name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"{op_name}: out= is not supported (arrays are immutable){user_site()}")


amax = max
amin = min


def _check_nonempty(op_name: str, t: Tracer, axes: list[int]) -> None:
    if any(t.shape[a] == 0 for a in axes):
        raise ShapeError(
            f"{op_name}: zero-size reduction over axes {axes} of shape {t.shape} has no identity "
            f"(numpy raises too){user_site()}"
        )


# ---------------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------------


def _shape_tuple(shape: int | Sequence[int], op_name: str = "array creation") -> tuple[int, ...]:
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(d < 0 for d in dims):
        raise ShapeError(f"{op_name}: negative dimension in shape {dims}{user_site()}")
    return dims


@api
def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = None) -> Tracer:
    shape = _shape_tuple(shape, "full")
    if is_scalar(fill_value):
        d = dtypes.canonical(dtype) if dtype is not None else dtypes.scalar_dtype(fill_value)
        return _full(shape, fill_value, d)
    v = lift(fill_value)
    if dtype is not None:
        v = lax.convert(v, dtypes.canonical(dtype))
    return broadcast_to(v, shape)


@api
def zeros(shape: int | Sequence[int], dtype: Any = dtypes.float32) -> Tracer:
    return _full(_shape_tuple(shape, "zeros"), 0, dtypes.canonical(dtype))


@api
def ones(shape: int | Sequence[int], dtype: Any = dtypes.float32) -> Tracer:
    return _full(_shape_tuple(shape, "ones"), 1, dtypes.canonical(dtype))


@api
def zeros_like(x: Any, dtype: Any = None) -> Tracer:
    t = lift(x)
    return _full(t.shape, 0, dtypes.canonical(dtype) if dtype is not None else t.dtype)


@api
def ones_like(x: Any, dtype: Any = None) -> Tracer:
    t = lift(x)
    return _full(t.shape, 1, dtypes.canonical(dtype) if dtype is not None else t.dtype)


@api
def arange(start: int | float, stop: int | float | None = None, step: int | float = 1, dtype: Any = None) -> Tracer:
    """numpy's arange with static bounds, as an `nn.iota` scaled and shifted."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError(f"arange: step must not be zero{user_site()}")
    n = int(np.ceil((stop - start) / step))
    n = n if n > 0 else 0
    if dtype is None:
        dtype = result_dtype(start, stop, step)
    d = dtypes.canonical(dtype)
    idx = lax.iota((n,), 0, d if not dtypes.is_float(d) else dtypes.int32)
    idx = lax.convert(idx, d)
    if step != 1:
        idx = lax.binary(nn.MulOp, idx, _full((n,), step, d))
    if start != 0:
        idx = lax.binary(nn.AddOp, idx, _full((n,), start, d))
    return idx


def astype(x: Any, dtype: Any) -> Tracer:
    return _astype(x, dtype)


@api
def _astype(x: Any, dtype: Any) -> Tracer:
    return lax.convert(lift(x), dtypes.canonical(dtype), drop_imaginary=True)


# ---------------------------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------------------------


@api
def matmul(a: Any, b: Any) -> Tracer:
    """numpy's matmul: 1-D operands are promoted and squeezed, batch dimensions broadcast."""
    (x,), dx = operands("matmul", a)
    (y,), dy = operands("matmul", b)
    d = dtypes.promote(dx, dy)
    x, y = lax.convert(x, d), lax.convert(y, d)
    if x.ndim == 0 or y.ndim == 0:
        raise ShapeError(f"matmul: operands must not be scalars, got {x.shape} and {y.shape}{user_site()}")
    squeeze_front = x.ndim == 1
    squeeze_back = y.ndim == 1
    if squeeze_front:
        x = lax.reshape(x, (1, x.shape[0]))
    if squeeze_back:
        y = lax.reshape(y, (y.shape[0], 1))
    if x.shape[-1] != y.shape[-2]:
        raise ShapeError(
            f"matmul: contracting dimensions differ: {tuple(_shape(a))} @ {tuple(_shape(b))} "
            f"({x.shape[-1]} vs {y.shape[-2]}){user_site()}"
        )
    if x.ndim > 2 and y.ndim == 2:
        out = _matmul_rows(x, y)
    else:
        batch = broadcast_shapes("matmul", x.shape[:-2], y.shape[:-2])
        x = broadcast_to(x, (*batch, *x.shape[-2:]))
        y = broadcast_to(y, (*batch, *y.shape[-2:]))
        out = lax.matmul(x, y)
    shape = list(out.shape)
    if squeeze_back:
        shape.pop(-1)
    if squeeze_front:
        shape.pop(-2 if squeeze_back is False else -1)
    return lax.reshape(out, shape)


def _matmul_rows(x: Tracer, y: Tracer) -> Tracer:
    """(..., M, K) @ (K, N) as one (prod(...) * M, K) @ (K, N) product, reshaped back.

    Broadcasting a shared weight over the batch instead would give a batched product of
    small GEMMs, and its gradient a batched product plus a sum over the batch; folding the
    batch into the rows gives one GEMM each way, as XLA's dot_general does (a Linear layer
    on (batch, time, features) inputs)."""
    rows = lax.reshape(x, (int(np.prod(x.shape[:-1])), x.shape[-1]))
    return lax.reshape(lax.matmul(rows, y), (*x.shape[:-1], y.shape[-1]))


