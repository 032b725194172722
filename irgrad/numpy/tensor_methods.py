"""numpy-style operators and methods on `Tracer` (`x + y`, `x @ w`, `x.T`, `x.sum()`, ...).

Kept apart from tracing.py so that the tracing core does not depend on the array API.
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy import basic as np_api
from irgrad.tracing.tracer import Tracer


def _swap(fn):
    return lambda self, other: fn(other, self)


def install() -> None:
    from irgrad.numpy import array_api_names
    from irgrad.numpy import bitwise as bitwise_api
    from irgrad.numpy import complex_numbers as complex_api
    from irgrad.numpy import indexed_update
    from irgrad.numpy import indexing
    from irgrad.numpy import shape as shape_api

    T = Tracer
    T.__add__ = lambda s, o: np_api.add(s, o)
    T.__radd__ = _swap(np_api.add)
    T.__sub__ = lambda s, o: np_api.subtract(s, o)
    T.__rsub__ = _swap(np_api.subtract)
    T.__mul__ = lambda s, o: np_api.multiply(s, o)
    T.__rmul__ = _swap(np_api.multiply)
    T.__truediv__ = lambda s, o: np_api.divide(s, o)
    T.__rtruediv__ = _swap(np_api.divide)
    T.__floordiv__ = lambda s, o: np_api.floor_divide(s, o)
    T.__rfloordiv__ = _swap(np_api.floor_divide)
    T.__mod__ = lambda s, o: np_api.remainder(s, o)
    T.__rmod__ = _swap(np_api.remainder)
    T.__pow__ = lambda s, o: np_api.power(s, o)
    T.__rpow__ = _swap(np_api.power)
    T.__matmul__ = lambda s, o: np_api.matmul(s, o)
    T.__rmatmul__ = _swap(np_api.matmul)
    T.__neg__ = lambda s: np_api.negative(s)
    T.__pos__ = lambda s: s
    T.__abs__ = lambda s: np_api.abs(s)
    T.__invert__ = lambda s: bitwise_api.bitwise_not(s)
    T.__and__ = lambda s, o: bitwise_api.bitwise_and(s, o)
    T.__rand__ = _swap(bitwise_api.bitwise_and)
    T.__or__ = lambda s, o: bitwise_api.bitwise_or(s, o)
    T.__ror__ = _swap(bitwise_api.bitwise_or)
    T.__xor__ = lambda s, o: bitwise_api.bitwise_xor(s, o)
    T.__rxor__ = _swap(bitwise_api.bitwise_xor)
    T.__lshift__ = lambda s, o: bitwise_api.left_shift(s, o)
    T.__rlshift__ = _swap(bitwise_api.left_shift)
    T.__rshift__ = lambda s, o: bitwise_api.right_shift(s, o)
    T.__rrshift__ = _swap(bitwise_api.right_shift)
    T.__lt__ = lambda s, o: np_api.less(s, o)
    T.__le__ = lambda s, o: np_api.less_equal(s, o)
    T.__gt__ = lambda s, o: np_api.greater(s, o)
    T.__ge__ = lambda s, o: np_api.greater_equal(s, o)
    T.__eq__ = lambda s, o: np_api.equal(s, o)  # type: ignore[assignment]
    T.__ne__ = lambda s, o: np_api.not_equal(s, o)  # type: ignore[assignment]
    T.__getitem__ = lambda s, idx: indexing.getitem(s, idx)
    T.T = property(lambda s: shape_api.transpose(s))
    # numpy 2's and JAX's `x.mT`: the last two axes swapped; a ShapeError (a ValueError, as
    # JAX's) below two dimensions.
    T.mT = property(lambda s: array_api_names.matrix_transpose(s))
    T.at = property(lambda s: indexed_update.IndexUpdateHelper(s))
    T.sum = lambda s, axis=None, keepdims=False, dtype=None: np_api.sum(s, axis, keepdims, dtype)
    T.mean = lambda s, axis=None, keepdims=False: np_api.mean(s, axis, keepdims)
    T.max = lambda s, axis=None, keepdims=False: np_api.max(s, axis, keepdims)
    T.min = lambda s, axis=None, keepdims=False: np_api.min(s, axis, keepdims)
    T.reshape = lambda s, *shape: shape_api.reshape(s, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)
    T.transpose = lambda s, *axes: shape_api.transpose(s, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None)
    T.astype = lambda s, dtype: np_api.astype(s, dtype)
    T.squeeze = lambda s, axis=None: shape_api.squeeze(s, axis)
    T.flatten = lambda s: shape_api.reshape(s, (-1,))
    T.ravel = T.flatten
    T.swapaxes = lambda s, a, b: shape_api.swapaxes(s, a, b)
    T.real = property(lambda s: complex_api.real(s))
    T.imag = property(lambda s: complex_api.imag(s))
    T.conj = lambda s: complex_api.conj(s)
    T.conjugate = T.conj


install_done: Any = None
