"""Differences and integrals with numpy's names: diff ediff1d trapezoid gradient unwrap.

Composites of slices, subtractions, products and concatenations, with no op or derivative rule
of their own: linear in their samples, so their derivatives are exact. trapezoid and gradient
turn integers into float32; diff of bools compares neighbours, as numpy. unwrap's correction
is piecewise constant and carries no gradient, so its derivative is 1 along the chain.

Differs from numpy: gradient returns a list for several axes (JAX's and numpy 1.x's type; numpy
2 gives a tuple); coordinate arrays always use the non-uniform formulas (numpy switches to the
uniform one when the spacing is exactly even: the same values to rounding).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, broadcast_to, is_scalar, lift, result_dtype, shape_of
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.numpy.arrays import _int
from irgrad.numpy.shape import concatenate
from irgrad.numpy.statistics_support import Axis, _float_dtype, _kept_shape, _one_axis, _slice_axis

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "unwrap"]


def _edge(op_name: str, v: Any, t: Tracer, ax: int, d: np.dtype) -> Tracer:
    """prepend/append: a scalar becomes a slab of size 1 along `ax`; an array is used as is."""
    e = lift(v, d)
    if e.ndim == 0:
        shape = list(t.shape)
        shape[ax] = 1
        return broadcast_to(e, shape)
    return e


@api
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Tracer:
    """The n-th forward difference along `axis` (a[1:] - a[:-1], n times; bool: a[1:] != a[:-1],
    as numpy). `prepend`/`append` (scalars or arrays) are concatenated first."""
    n = _int("diff", "n", n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}{user_site()}")
    t = lift(a)
    if n == 0:
        return t
    if t.ndim == 0:
        raise ValueError(f"diff: diff requires input that is at least one dimensional{user_site()}")
    ax = _one_axis("diff", axis, t.ndim)
    if prepend is not None or append is not None:
        d = result_dtype(t, *[v for v in (prepend, append) if v is not None])
        t = lax.convert(t, d) if t.dtype != d else t
        parts = [t]
        if prepend is not None:
            parts.insert(0, _edge("diff", prepend, t, ax, d))
        if append is not None:
            parts.append(_edge("diff", append, t, ax, d))
        t = concatenate(parts, axis=ax)
    for _ in range(n):
        length = t.shape[ax]
        if length == 0:
            break
        hi, lo = _slice_axis(t, ax, 1, length), _slice_axis(t, ax, 0, length - 1)
        t = np_api.not_equal(hi, lo) if t.dtype == dtypes.bool_ else hi - lo
    return t


@api
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tracer:
    """Differences between consecutive elements of the flattened array, with `to_begin` and
    `to_end` (flattened, cast to ary's dtype) around them."""
    t = lift(ary)
    t = lax.reshape(t, (t.size,))
    n = t.shape[0]
    r = _slice_axis(t, 0, 1, n) - _slice_axis(t, 0, 0, n - 1) if n > 1 else full((0,), 0, t.dtype)
    parts = [r]
    if to_begin is not None:
        b = lift(to_begin, t.dtype)
        parts.insert(0, lax.reshape(b, (b.size,)))
    if to_end is not None:
        e = lift(to_end, t.dtype)
        parts.append(lax.reshape(e, (e.size,)))
    return concatenate(parts, axis=0) if len(parts) > 1 else r


@api
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Tracer:
    """The integral of y along `axis` by the trapezoidal rule, with sample points `x` (1-D along
    `axis`, or y's shape) or the uniform spacing `dx`: sum(d * (y[1:] + y[:-1]) / 2).
    Integers give float32."""
    d = _float_dtype(y, x) if x is not None else _float_dtype(y, dx)
    yt = lift(y, d)
    ax = _one_axis("trapezoid", axis, yt.ndim)
    length = yt.shape[ax]
    out_shape = _kept_shape(yt.shape, [ax], False)
    if x is None:
        step = dx if is_scalar(dx) else lift(dx, d)
    else:
        xt = lift(x, d)
        if xt.ndim == 1:
            if xt.shape[0] != length:
                raise ShapeError(f"trapezoid: x of length {xt.shape[0]} does not match axis {ax} of y {yt.shape}{user_site()}")
            step = diff(xt)
            shape = [1] * yt.ndim
            shape[ax] = builtins.max(length - 1, 0)
            step = lax.reshape(step, shape)
        else:
            step = diff(xt, axis=ax)
    if length < 2:
        return full(out_shape, 0.0, d)
    pairs = _slice_axis(yt, ax, 1, length) + _slice_axis(yt, ax, 0, length - 1)
    return np_api.sum(step * pairs / 2.0, axis=ax)


def _gradient_spacings(f: Tracer, axes: list[int], varargs: tuple[Any, ...], d: np.dtype) -> list[Any]:
    """One spacing per axis: a Python float, a traced scalar, or a 1-D coordinate tracer."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and len(shape_of(varargs[0])) == 0:
        varargs = varargs * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"gradient: {len(varargs)} spacings given for {len(axes)} axes{user_site()}")
    out: list[Any] = []
    for v, ax in zip(varargs, axes):
        if is_scalar(v):
            out.append(float(v))
            continue
        s = lift(v, d)
        if s.ndim == 1 and s.shape[0] != f.shape[ax]:
            raise ValueError(
                f"gradient: when 1d, distances must match the length of the corresponding dimension "
                f"(got {s.shape[0]} for axis {ax} of shape {f.shape}){user_site()}"
            )
        if s.ndim > 1:
            raise ValueError(f"gradient: distances must be either scalars or 1d, got shape {s.shape}{user_site()}")
        out.append(s)
    return out


def _along(v: Tracer, ax: int, ndim: int) -> Tracer:
    """A 1-D v as an array of rank ndim lying along `ax`."""
    shape = [1] * ndim
    shape[ax] = v.shape[0]
    return lax.reshape(v, shape)


def _gradient_axis(f: Tracer, ax: int, h: Any, edge_order: int) -> Tracer:
    n = f.shape[ax]
    nd = f.ndim

    def at(i: int) -> Tracer:
        return _slice_axis(f, ax, i, i + 1)

    # The first three and the last three samples (f2 and fl3 only exist, and are only used by
    # edge_order=2, for n >= 3).
    f0, f1, f2 = at(0), at(1), (at(2) if n > 2 else None)
    fl1, fl2, fl3 = at(n - 1), at(n - 2), (at(n - 3) if n > 2 else None)
    parts = []
    if isinstance(h, Tracer) and h.ndim == 1:
        dxs = diff(h)  # (n - 1,)
        first_dx, last_dx = _slice_axis(dxs, 0, 0, 1), _slice_axis(dxs, 0, n - 2, n - 1)
        if edge_order == 1:
            parts.append((f1 - f0) / _along(first_dx, ax, nd))
        else:
            dx1, dx2 = _slice_axis(dxs, 0, 0, 1), _slice_axis(dxs, 0, 1, 2)
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
            parts.append(_along(a, ax, nd) * f0 + _along(b, ax, nd) * f1 + _along(c, ax, nd) * f2)
        if n > 2:
            dx1, dx2 = _slice_axis(dxs, 0, 0, n - 2), _slice_axis(dxs, 0, 1, n - 1)
            a = -dx2 / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            interior = (_along(a, ax, nd) * _slice_axis(f, ax, 0, n - 2) + _along(b, ax, nd) * _slice_axis(f, ax, 1, n - 1)
                        + _along(c, ax, nd) * _slice_axis(f, ax, 2, n))  # fmt: skip
            parts.append(interior)
        if edge_order == 1:
            parts.append((fl1 - fl2) / _along(last_dx, ax, nd))
        else:
            dx1, dx2 = _slice_axis(dxs, 0, n - 3, n - 2), _slice_axis(dxs, 0, n - 2, n - 1)
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
            parts.append(_along(a, ax, nd) * fl3 + _along(b, ax, nd) * fl2 + _along(c, ax, nd) * fl1)
    else:
        if edge_order == 1:
            parts.append((f1 - f0) / h)
        else:
            parts.append(f0 * (-1.5 / h) + f1 * (2.0 / h) + f2 * (-0.5 / h))
        if n > 2:
            parts.append((_slice_axis(f, ax, 2, n) - _slice_axis(f, ax, 0, n - 2)) / (2.0 * h))
        if edge_order == 1:
            parts.append((fl1 - fl2) / h)
        else:
            parts.append(fl3 * (0.5 / h) + fl2 * (-2.0 / h) + fl1 * (1.5 / h))
    return concatenate(parts, axis=ax)


@api
def gradient(f: Any, *varargs: Any, axis: Axis = None, edge_order: int = 1) -> Any:
    """numpy's gradient: second-order central differences inside, first- or second-order
    (`edge_order`) one-sided ones at the ends. Spacing: none (1), one scalar for every axis, or
    one scalar or 1-D coordinate array per axis. One array for one axis, else a list (in the
    order of `axis`). Integers give float32."""
    edge_order = _int("gradient", "edge_order", edge_order)
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: 'edge_order' must be 1 or 2, got {edge_order}{user_site()}")
    d = _float_dtype(f)
    ft = lift(f, d)
    if axis is None:
        axes = list(range(ft.ndim))
    else:
        given = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
        axes = [_one_axis("gradient", a, ft.ndim) for a in given]
        if len(set(axes)) != len(axes):
            raise ShapeError(f"gradient: repeated axis in {axis}{user_site()}")
    spacings = _gradient_spacings(ft, axes, varargs, d)
    outs = []
    for ax, h in zip(axes, spacings):
        if ft.shape[ax] < edge_order + 1:
            raise ValueError(
                f"gradient: shape {ft.shape} is too small along axis {ax} to calculate a numerical gradient: "
                f"at least edge_order + 1 = {edge_order + 1} elements are required{user_site()}"
            )
        outs.append(_gradient_axis(ft, ax, h, edge_order))
    return outs[0] if len(outs) == 1 else outs


@api
def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Tracer:
    """numpy's unwrap: where consecutive elements along `axis` jump by more than `discont`
    (default period / 2), add the multiple of `period` that brings the jump into [-period / 2,
    period / 2] (a jump of exactly period / 2 up stays up), accumulated along the axis. The
    result has p's dtype promoted with period's (integers with the default float period give
    float32, as JAX; an integer period keeps integers, halved by floor division). The
    correction is piecewise constant: the gradient is 1 in every element (away from jumps of
    exactly discont)."""
    from irgrad.numpy.custom_derivatives import stop_gradient
    from irgrad.numpy.reductions import cumsum

    d = result_dtype(p, period)
    t = lift(p, d)
    t = lax.convert(t, d) if t.dtype != d else t
    ax = _one_axis("unwrap", axis, t.ndim)
    length = t.shape[ax]
    if length == 0:
        return t
    if discont is None:
        discont = period / 2
    integer = dtypes.is_int(d)
    interval = period // 2 if integer else period / 2
    dd = diff(t, axis=ax)
    ddmod = np_api.mod(dd + interval, period) - interval
    if not (integer and is_scalar(period) and int(period) % 2):
        ddmod = np_api.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correction = stop_gradient(np_api.where(np_api.abs(dd) < discont, 0, ddmod - dd))
    rest = _slice_axis(t, ax, 1, length) + cumsum(correction, axis=ax)
    return concatenate([_slice_axis(t, ax, 0, 1), rest], axis=ax)
