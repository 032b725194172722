"""Constants in traced code: captured numpy arrays and Python scalars become `nn` ops.

Scalars and splat arrays become `nn.full` (readable, no dense payload); other arrays become
`nn.constant` with a dense attribute.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType

from irgrad.dialects import nn
from irgrad.tracing import dtypes
from irgrad.tracing.tracer import Tracer, current_frame


def constant(x: Any, dtype: np.dtype | None = None) -> Tracer:
    """A tracer holding the concrete value `x` (array or scalar) in the current frame."""
    frame = current_frame()
    if frame is None:
        raise RuntimeError("constant() needs an active trace")
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        d = dtypes.canonical(dtype) if dtype is not None else dtypes.scalar_dtype(x)
        return full((), x, d)
    array = np.asarray(x)
    d = dtypes.canonical(dtype) if dtype is not None else dtypes.array_dtype_of(array)
    array = array.astype(d, copy=False)
    if _is_splat(array):
        return full(array.shape, array.flat[0].item(), d)
    from irgrad.ir_numpy import to_attribute

    # Not np.ascontiguousarray: it turns a 0-d array (a numpy scalar) into shape (1,).
    op = nn.ConstantOp(to_attribute(np.asarray(array, order="C")))
    frame.emit(op)
    return frame.wrap(op.result)


def _is_splat(array: np.ndarray) -> bool:
    """All elements equal (NaN counting as equal to NaN), numpy scalars and 0-d arrays included."""
    if array.size == 0:
        return False
    first = array.flat[0]
    same = array == first
    if dtypes.is_float(array.dtype) and np.isnan(first):
        same = np.isnan(array)
    return bool(np.all(same))


def full(shape: tuple[int, ...], value: bool | int | float, dtype: np.dtype) -> Tracer:
    frame = current_frame()
    assert frame is not None
    t = TensorType(dtypes.element_type(dtype), list(shape))
    if dtypes.is_float(dtype):
        value = float(value)
    else:
        value = int(value)
    op = nn.FullOp(value, t)
    frame.emit(op)
    return frame.wrap(op.result)
