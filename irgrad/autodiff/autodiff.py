"""The `autodiff` pass: expand every `autodiff.*` op into calls of generated derivative functions.

Input invariant: `autodiff.grad`, `value_and_grad`, `vjp` and `jvp` requests name `func.func`s of one block
whose active ops have derivative rules (irgrad/autodiff/rules/); verified IR.

Output IR: no `autodiff` op remains. Each request becomes a `func.call` of a generated private function
placed after its callee, built once per (callee, mode, wrt) and reused:
- `@f_vjp(args..., cts...) -> (results..., arg_cts...)` (reverse.py); `grad` calls it with the seed 1.0 and
  keeps the gradients, `value_and_grad` keeps the value too, `vjp` is exactly this call;
- `@f_jvp(args..., tangents...) -> (results..., result_tangents...)` (forward.py) for `jvp`.
A name already taken gets the wrt list appended (`@f_vjp_wrt_1`), then a number. Regions (loop bodies,
branches) are outlined into functions of their own (`@f_for_body`, outline.py) that the rules differentiate
the same way. Generated functions hold only nn/arith/math/scf/tensor/func ops, so requests on them (grad
of grad, jvp of grad) work by running to a fixed point: before a function is differentiated, the requests
inside it are expanded. Finally the generated functions nothing calls are removed, `autodiff.stop_gradient`
becomes the identity and `autodiff.checkpoint`/`custom_vjp` outside any differentiated code become plain
`func.call`s of their callee.

This module is the pass only: it loads the rules (rules/), then the `Deriver` (deriver.py) does the work.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from irgrad.autodiff.deriver import REQUEST_OPS, Deriver
from irgrad.autodiff.rules import load_rules
from irgrad.dialects import autodiff as ad


def lower_derivative_control(module: ModuleOp) -> None:
    """Outside derivative code, stop_gradient is the identity and checkpoint/custom_vjp/custom_jvp are plain
    calls."""
    for op in list(module.walk()):
        block = op.parent_block()
        if isinstance(op, ad.StopGradientOp):
            assert block is not None
            op.result.replace_all_uses_with(op.input)
            block.erase_op(op)
        elif isinstance(op, ad.CheckpointOp | ad.CustomVJPOp | ad.CustomJVPOp):
            assert block is not None
            call = func.CallOp(op.callee, list(op.args), op.res.types)
            call.location = op.location
            block.insert_op_before(call, op)
            for result, value in zip(op.results, call.results, strict=True):
                result.replace_all_uses_with(value)
            block.erase_op(op)


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Expand autodiff requests (grad, value_and_grad, vjp, jvp) into calls of generated derivative functions.

    See the module docstring for the input invariant and the output IR.
    """

    name = "autodiff"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_rules()
        deriver = Deriver(op)
        # Expanding one request may build functions that hold none (generated bodies hold no requests), so
        # this reaches the fixed point at once; the loop guards a request inside a nested module, say.
        while requests := [o for o in op.walk() if isinstance(o, REQUEST_OPS)]:
            for request in requests:
                if request.parent is None:
                    continue  # expanded already, with the function that held it
                function = _enclosing_function(request)
                if function is None:
                    deriver.expand(request)
                else:
                    deriver.expand_requests(function)
        deriver.remove_unused()
        lower_derivative_control(op)


def _enclosing_function(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


__all__ = ["AutodiffPass"]
