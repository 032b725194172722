"""Mixed precision training: loss scaling, finiteness checks and casting of pytrees.

float16 has 5 exponent bits: gradients below 2**-24 flush to zero and values above 65504
overflow to inf. Loss scaling multiplies the loss by S before differentiating, so the
backward pass works on S * gradient, lifting small gradients out of the underflow range; the
gradients are then unscaled (divided by S, in float32) *before* anything looks at their
size (clipping, the optimizer), and a step whose unscaled gradients are not all finite is
skipped. `DynamicLossScale` picks S as NVIDIA's recipe and `jmp` do: halve it after a
non-finite step, double it after `period` finite steps in a row.

Everything is a pure function of pytrees of arrays (`cast_tree`, `all_finite`, `select_tree`,
the scaler's `scale` / `unscale` / `adjust`), so a whole mixed precision training step traces
into one program. A full step: docs/api/python.md, "irgrad/mixed_precision.py".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import irgrad as ig
from irgrad.tracing import dtypes

State = dict[str, Any]


def cast_tree(tree: Any, dtype: Any) -> Any:
    """Every float leaf of `tree` converted to `dtype` (integer and bool leaves unchanged):
    float32 master weights to float16 or bfloat16 for the forward pass, and back."""

    def cast(x: Any) -> Any:
        d = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
        return ig.astype(x, dtype) if dtypes.is_float(np.dtype(d)) else x

    return ig.tree_map(cast, tree)


def all_finite(tree: Any) -> Any:
    """A bool scalar: whether every element of every float leaf is finite (no NaN, no inf)."""
    flags = [ig.all(ig.isfinite(leaf)) for leaf in ig.tree_leaves(tree)]
    if not flags:
        return ig.full((), True, ig.bool_)
    result = flags[0]
    for flag in flags[1:]:
        result = ig.bitwise_and(result, flag)
    return result


def select_tree(pred: Any, on_true: Any, on_false: Any) -> Any:
    """`on_true` where the bool scalar `pred` holds, else `on_false`, leaf by leaf (two trees
    of one structure): how a non-finite step is skipped without leaving the traced program."""
    return ig.tree_map(lambda a, b: ig.where(pred, a, b), on_true, on_false)


@dataclass(frozen=True)
class DynamicLossScale:
    """The loss scale S and its update rule (module doc). State: `{"scale": float32 scalar,
    "good_steps": int32 scalar}` (finite steps since the last change)."""

    initial_scale: float = 2.0**15
    period: int = 2000
    factor: float = 2.0
    min_scale: float = 1.0

    def __post_init__(self) -> None:
        if not (self.initial_scale >= self.min_scale > 0 and self.factor > 1 and self.period >= 1):
            raise ValueError(
                "DynamicLossScale: need initial_scale >= min_scale > 0, factor > 1 and period >= 1, got "
                f"initial_scale={self.initial_scale}, min_scale={self.min_scale}, factor={self.factor}, "
                f"period={self.period}"
            )

    def init(self) -> State:
        return {"scale": ig.full((), self.initial_scale, ig.float32), "good_steps": ig.zeros((), ig.int32)}

    def scale(self, loss: Any, state: State) -> Any:
        """loss * S, in the loss's dtype (S is a power of two: exact unless it overflows)."""
        return loss * ig.astype(state["scale"], loss.dtype)

    def unscale(self, grads: Any, state: State) -> Any:
        """Every gradient divided by S, in float32 (a float16 gradient is widened first, so
        the quotient neither overflows nor flushes to zero)."""
        inverse = 1.0 / state["scale"]
        return ig.tree_map(lambda g: ig.astype(g, ig.float32) * inverse, grads)

    def adjust(self, finite: Any, state: State) -> State:
        """The state after a step whose unscaled gradients were `finite` (a bool scalar): S
        halves (not below min_scale) after a non-finite step and doubles after `period`
        finite steps in a row."""
        scale, good = state["scale"], state["good_steps"] + 1
        grow = good >= self.period
        grown = ig.where(grow, scale * self.factor, scale)
        shrunk = ig.maximum(scale / self.factor, self.min_scale)
        return {
            "scale": ig.where(finite, grown, shrunk),
            "good_steps": ig.where(ig.bitwise_and(finite, ig.logical_not(grow)), good, 0),
        }


__all__ = ["DynamicLossScale", "all_finite", "cast_tree", "select_tree"]
