"""The `autodiff` dialect: requests for derivatives of `func.func` functions.

Pipeline position: the frontend (or a hand-written module) emits `autodiff.*` ops next to the `func`/`nn` IR they
differentiate; the autodiff transform (irgrad/autodiff/) later expands each request into ordinary IR that computes
the derivative. No pass below that transform understands this dialect.

Every call-like op names its callee by a flat symbol (`callee`, a `SymbolRefAttr` property), the differentiating
ops list argument indices in `wrt` (a `DenseArrayBase` of i64, printed `wrt [0, 1]`), and the op ends with a
functional type, as `func.call` does. The verifiers resolve the symbols in the nearest symbol table (MLIR's
`verifySymbolUses`, here the `SymbolUserOpInterface` trait) and check the request against the callee's signature,
so a malformed request fails when the IR is verified rather than deep inside the transform.

Side effects: the call-like ops carry no memory-effect trait. They are exactly as pure as their callee, which an
op-level trait cannot express, so xDSL treats them conservatively (never erased as dead, never hoisted).
`autodiff.stop_gradient` is `Pure`.

One module per kind of request, on the shared `base` (types, the `wrt` clause, the callee bases): gradients
(grad, value_and_grad), products (vjp, jvp), batch (batch) and control (stop_gradient, custom_vjp, custom_jvp,
checkpoint). This face hands on their public names and defines `Autodiff`, its ops in their historical order.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from irgrad.dialects.autodiff.base import (
    DIFFERENTIABLE_FLOAT_TYPES,
    CalleeOp,
    CalleeSymbolUser,
    DifferentiateOp,
    WrtIndices,
    format_types,
    is_differentiable_type,
    is_scalar_loss_type,
    plural,
    wrt_attr,
)
from irgrad.dialects.autodiff.gradients import GradOp, ScalarGradientOp, ValueAndGradOp
from irgrad.dialects.autodiff.products import JVPOp, VJPOp
from irgrad.dialects.autodiff.batch import BatchOp, InAxes, OutAxes
from irgrad.dialects.autodiff.control import (
    CallLikeOp,
    CheckpointOp,
    CustomJVPOp,
    CustomVJPOp,
    StopGradientOp,
)

__all__ = [
    "DIFFERENTIABLE_FLOAT_TYPES",
    "is_differentiable_type",
    "is_scalar_loss_type",
    "plural",
    "format_types",
    "wrt_attr",
    "WrtIndices",
    "CalleeSymbolUser",
    "CalleeOp",
    "DifferentiateOp",
    "ScalarGradientOp",
    "GradOp",
    "ValueAndGradOp",
    "VJPOp",
    "JVPOp",
    "InAxes",
    "OutAxes",
    "BatchOp",
    "StopGradientOp",
    "CallLikeOp",
    "CustomVJPOp",
    "CustomJVPOp",
    "CheckpointOp",
    "Autodiff",
]

Autodiff = Dialect(
    "autodiff",
    [
        GradOp,
        ValueAndGradOp,
        VJPOp,
        JVPOp,
        BatchOp,
        StopGradientOp,
        CustomVJPOp,
        CustomJVPOp,
        CheckpointOp,
    ],
    [],
)
