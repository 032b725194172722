"""Rules for the autodiff dialect's derivative-control ops.

`stop_gradient` is non-differentiable by declaration: its result is never active, so nothing flows through
it at any order (the op stays in generated functions, so a derivative of a derivative respects it, and the
pass turns it into the identity at the end). `custom_vjp` and `checkpoint` are calls whose differentiation
is a later milestone.
"""

from __future__ import annotations

from irgrad.autodiff.registry import non_differentiable, not_supported_yet
from irgrad.dialects import autodiff as ad

non_differentiable(ad.StopGradientOp)

not_supported_yet(
    "user-defined derivatives and rematerialization are a later milestone "
    "(outside differentiated code they run as plain calls)",
    ad.CustomVJPOp,
    ad.CheckpointOp,
)
