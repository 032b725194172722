"""Neural-network functions: softmax family, one_hot, conv2d, max_pool2d.

Composites (softmax, log_softmax, logsumexp) are built from `nn` ops, so autodiff covers them
without rules of their own; they subtract the maximum first, so they never overflow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import support
from irgrad.numpy.support import api, lift, normalize_axes, require_float
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, ShapeError, user_site


def _stop_gradient(x: Tracer) -> Tracer:
    from irgrad.numpy.custom_derivatives import stop_gradient

    return stop_gradient(x)


def _shifted(op_name: str, x: Any, axis: int | Sequence[int] | None) -> tuple[Tracer, Tracer, list[int]]:
    """(x - max(x), max(x) with keepdims, axes): the max is a constant for differentiation,
    which changes no derivative (the shift cancels) but keeps inf - inf out of the gradient."""
    t = require_float(op_name, lift(x))
    axes = normalize_axes(op_name, axis, t.ndim)
    m = lax.reduce(nn.ReduceMaxOp, t, axes, keepdims=True)
    # An all -inf row would give -inf - -inf = NaN; shift by 0 there instead.
    finite = lax.compare("lt", lax.unary(nn.AbsOp, m), full(m.shape, float("inf"), m.dtype))
    m = lax.select(finite, m, full(m.shape, 0.0, m.dtype))
    m = _stop_gradient(m)
    shifted = lax.binary(nn.SubOp, t, support.broadcast_to(m, t.shape))
    return shifted, m, axes


@api
def logsumexp(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tracer:
    shifted, m, axes = _shifted("logsumexp", x, axis)
    s = lax.reduce(nn.ReduceSumOp, lax.unary(nn.ExpOp, shifted), axes, keepdims=True)
    out = lax.binary(nn.AddOp, lax.unary(nn.LogOp, s), m)
    if not keepdims:
        out = lax.reshape(out, [d for i, d in enumerate(out.shape) if i not in axes])
    return out


@api
def softmax(x: Any, axis: int | Sequence[int] = -1) -> Tracer:
    shifted, _, axes = _shifted("softmax", x, axis)
    e = lax.unary(nn.ExpOp, shifted)
    s = lax.reduce(nn.ReduceSumOp, e, axes, keepdims=True)
    return lax.binary(nn.DivOp, e, support.broadcast_to(s, e.shape))


@api
def log_softmax(x: Any, axis: int | Sequence[int] = -1) -> Tracer:
    shifted, _, axes = _shifted("log_softmax", x, axis)
    s = lax.reduce(nn.ReduceSumOp, lax.unary(nn.ExpOp, shifted), axes, keepdims=True)
    return lax.binary(nn.SubOp, shifted, support.broadcast_to(lax.unary(nn.LogOp, s), shifted.shape))


@api
def one_hot(labels: Any, num_classes: int, dtype: Any = dtypes.float32) -> Tracer:
    """`labels[..., None] == arange(num_classes)`, converted to `dtype` (out-of-range -> zeros)."""
    t = lift(labels)
    if not dtypes.is_int(t.dtype):
        raise DTypeError(f"one_hot: labels must be integers, got {t.dtype}{user_site()}")
    if int(num_classes) < 0:
        raise ShapeError(f"one_hot: num_classes must not be negative, got {num_classes}{user_site()}")
    shape = (*t.shape, int(num_classes))
    classes = lax.iota(shape, len(shape) - 1, t.dtype)
    expanded = lax.broadcast_in_dim(t, shape, list(range(t.ndim)))
    return lax.convert(lax.compare("eq", expanded, classes), dtypes.canonical(dtype))


def _pair(v: int | Sequence[int], name: str, op_name: str = "", minimum: int = 1) -> tuple[int, int]:
    """An int or a pair as a pair, each at least `minimum` (strides, dilations and kernel
    sizes are positive; a zero would make an empty or meaningless window)."""
    pair = (v, v) if isinstance(v, int) else tuple(int(i) for i in v)
    if len(pair) != 2:
        raise ShapeError(f"{op_name + ': ' if op_name else ''}{name} must be an int or a pair, got {v}{user_site()}")
    if any(i < minimum for i in pair):
        raise ShapeError(f"{op_name + ': ' if op_name else ''}{name} must be at least {minimum}, got {v}{user_site()}")
    return pair  # type: ignore[return-value]


def _padding4(padding: int | Sequence[int]) -> list[int]:
    """An int, (ph, pw), or ((top, bottom), (left, right)) as [top, bottom, left, right]."""
    if isinstance(padding, int):
        return _non_negative([padding] * 4, padding)
    p = list(padding)
    if len(p) == 2 and all(isinstance(i, int) for i in p):
        return _non_negative([p[0], p[0], p[1], p[1]], padding)
    if len(p) == 2:
        return _non_negative([int(p[0][0]), int(p[0][1]), int(p[1][0]), int(p[1][1])], padding)
    if len(p) == 4:
        return _non_negative([int(i) for i in p], padding)
    raise ShapeError(f"padding must be an int, a pair or pairs, got {padding}{user_site()}")


def _non_negative(p: list[int], padding: object) -> list[int]:
    if any(i < 0 for i in p):
        raise ShapeError(f"padding must not be negative, got {padding}{user_site()}")
    return p


@api
def conv2d(x: Any, w: Any, stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
           dilation: int | Sequence[int] = 1) -> Tracer:
    """2-D convolution (cross-correlation), x in NCHW, w in OIHW, zero padding."""
    (a,), da = support.operands("conv2d", x)
    (b,), db = support.operands("conv2d", w)
    d = dtypes.promote(da, db)
    if not dtypes.is_float(d):
        d = dtypes.float32
    a, b = lax.convert(a, d), lax.convert(b, d)
    if a.ndim != 4 or b.ndim != 4:
        raise ShapeError(f"conv2d: x must be NCHW and w OIHW (4-D), got {a.shape} and {b.shape}{user_site()}")
    if a.shape[1] != b.shape[1]:
        raise ShapeError(
            f"conv2d: input channels differ: x {a.shape} has {a.shape[1]}, w {b.shape} has {b.shape[1]}{user_site()}"
        )
    s, dl, p = _pair(stride, "stride", "conv2d"), _pair(dilation, "dilation", "conv2d"), _padding4(padding)
    for i, (size, k) in enumerate(zip(a.shape[2:], b.shape[2:])):
        if size + p[2 * i] + p[2 * i + 1] < dl[i] * (k - 1) + 1:
            raise ShapeError(f"conv2d: kernel {b.shape[2:]} is larger than the padded input {a.shape}{user_site()}")
    return lax.conv2d(a, b, s, p, dl)


@api
def max_pool2d(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0) -> Tracer:
    """2-D max pooling over NCHW; stride defaults to the kernel size; padding counts as -inf."""
    t = require_float("max_pool2d", lift(x))
    if t.ndim != 4:
        raise ShapeError(f"max_pool2d: x must be NCHW (4-D), got {t.shape}{user_site()}")
    k = _pair(kernel_size, "kernel_size", "max_pool2d")
    s = _pair(stride, "stride", "max_pool2d") if stride is not None else k
    p = _padding4(padding)
    for i, (size, window) in enumerate(zip(t.shape[2:], k)):
        if size + p[2 * i] + p[2 * i + 1] < window:
            raise ShapeError(f"max_pool2d: kernel {k} is larger than the padded input {t.shape}{user_site()}")
    return lax.max_pool2d(t, k, s, p)
