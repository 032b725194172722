"""`nn-expand-fft`: every `nn.fft` written as the tensor ops of irgrad/tracing/fft_algorithm.py
(matmuls by small DFT matrices, twiddle multiplies, transposes; Bluestein's chirp-z for long
prime lengths), inline.

Why: the transform is linear, so as ordinary complex `nn` ops it needs no lowering, derivative or
batching rule of its own: `nn-expand-complex` turns it into real ops on (re, im) pairs, autodiff
differentiates those (the derivative of an FFT is an FFT, which is what the transposed matmuls
compute), and every backend runs it with its GEMMs. It therefore runs first, before
`nn-expand-complex`, in the CPU and GPU pipelines and wherever the interpreter expands autodiff
requests. Each op's expansion is traced once per (type, length, operand type) and inlined.

Input: nn IR. Output: the same with no `nn.fft` left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgrad.dialects import nn
from irgrad.tracing import fft_algorithm
from irgrad.transforms.nn.nn_expand_factorizations import trace_detached


def _expansion(op: nn.FftOp) -> func.FuncOp:
    kind, length = op.kind, op.length
    function = trace_detached(lambda x: fft_algorithm.fft(x, kind, length), [op.operand.type])
    if list(function.function_type.outputs) != [op.result.type]:  # pragma: no cover (an algorithm bug)
        raise AssertionError(f"nn.fft {kind} {list(length)}: expansion returns {function.function_type.outputs}")
    return function


@dataclass(frozen=True)
class ExpandFftPass(ModulePass):
    """Replace each `nn.fft` by its expansion into matmul-based `nn` ops.

    Input: nn IR. Output: the same without `nn.fft`.
    """

    name = "nn-expand-fft"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        targets = [o for o in op.walk() if isinstance(o, nn.FftOp)]
        if not targets:
            return
        from irgrad.transforms.inline import inline_call  # (inline imports the factorizations pass)

        expansions: dict[tuple[Any, ...], func.FuncOp] = {}
        for target in targets:
            key = (target.kind, target.length, target.operand.type)
            function = expansions.get(key)
            if function is None:
                function = expansions[key] = _expansion(target)
            call = func.CallOp("fft", [target.operand], [target.result.type])
            Rewriter.replace_op(target, call)
            inline_call(call, function)


def has_fft(module: ModuleOp) -> bool:
    """Whether `module` holds an `nn.fft` (so nn-expand-fft has work)."""
    return any(isinstance(o, nn.FftOp) for o in module.walk())


__all__ = ["ExpandFftPass", "has_fft"]
