"""numpy's select: choicelist[i] where condlist[i] is the first true condition, else `default`,
as a chain of `where`s over the operands broadcast together, with no op or derivative rule of
its own (each entry's cotangent goes to the choice that was taken).
"""

from __future__ import annotations

from typing import Any

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, broadcast_shapes, broadcast_to, lift, result_dtype, shape_of
from irgrad.tracing.tracer import Tracer
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.numpy.statistics_support import _slice_axis

__all__ = ["select"]


def _entries(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return list(x)
    t = lift(x)
    if t.ndim == 0:
        raise TypeError(f"select: condlist and choicelist must be sequences{user_site()}")
    return [lax.reshape(_slice_axis(t, 0, i, i + 1), t.shape[1:]) for i in range(t.shape[0])]


@api
def select(condlist: Any, choicelist: Any, default: Any = 0) -> Tracer:
    """choicelist[i] where condlist[i] is the first true condition, else `default`, elementwise
    (everything broadcast together), as numpy: a chain of wheres."""
    conds, choices = _entries(condlist), _entries(choicelist)
    if len(conds) != len(choices):
        raise ValueError(f"select: list of cases must be same length as list of conditions ({len(choices)} vs {len(conds)}){user_site()}")
    if not conds:
        raise ValueError(f"select: select with an empty condition list is not possible{user_site()}")
    cts = []
    for i, c in enumerate(conds):
        ct = lift(c)
        if ct.dtype != dtypes.bool_:
            raise DTypeError(f"select: invalid entry {i} in condlist: should be boolean, got {ct.dtype}{user_site()}")
        cts.append(ct)
    d = result_dtype(*choices, default)
    shape = broadcast_shapes("select", *[c.shape for c in cts], *[shape_of(v) for v in choices], shape_of(default))
    out = broadcast_to(lift(default, d), shape)
    for c, v in zip(reversed(cts), reversed(choices)):
        out = np_api.where(broadcast_to(c, shape), broadcast_to(lift(v, d), shape), out)
    return out
