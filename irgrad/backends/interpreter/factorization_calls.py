"""Calls of tagged factorization declarations: what `nn-expand-factorizations{references=false}`
writes for the CPU pipeline (a private `func.func` without a body, tagged
`irgrad.factorization = {kind, lower, unit_diagonal}`), run as its kind's numpy reference.

The tag is the declaration's meaning (the contract convert-factorizations-to-lapack implements),
so the interpreter runs such a call at every stage: before bufferization with tensor arguments
and results, after it with read-only input buffers followed by one out-parameter per result (the
bufferized calling convention), which are written. Any other call is xDSL's (a body runs; a
plain declaration is an external function).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, StringAttr, TensorType
from xdsl.interpreter import Interpreter, impl_callable, register_impls
from xdsl.interpreters.func import FuncFunctions

from irgrad.backends.interpreter import nn_linalg
from irgrad.backends.interpreter.values import box
from irgrad.dialects.nn.factorization import FACTORIZATION_ATTR, factorization_flag


INPUTS = {"potrf": 1, "trsm": 2, "getrf": 1, "syevd": 1, "geev": 1, "gesdd": 1, "geqrf": 1}


def reference(tag: DictionaryAttr, args: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The results of a tagged factorization on numpy arrays (the ops' references)."""
    kind = tag.data["kind"].data  # type: ignore[union-attr]
    if kind == "potrf":
        return (nn_linalg.cholesky(args[0]),)
    if kind == "trsm":
        return (nn_linalg.triangular_solve(args[0], args[1], factorization_flag(tag, "lower"), factorization_flag(tag, "unit_diagonal")),)
    if kind == "getrf":
        return nn_linalg.lu(args[0])
    if kind == "syevd":
        return nn_linalg.eigh(args[0])
    if kind == "geev":
        return nn_linalg.eig(args[0])
    if kind == "gesdd":
        return nn_linalg.svd(args[0])
    return nn_linalg.qr(args[0])


def is_tagged_declaration(op: Any) -> bool:
    tag = op.attributes.get(FACTORIZATION_ATTR) if isinstance(op, func.FuncOp) else None
    return (
        not op.body.blocks
        and isinstance(tag, DictionaryAttr)
        and isinstance(tag.data.get("kind"), StringAttr)
        and tag.data["kind"].data in INPUTS  # type: ignore[union-attr]
    )


@register_impls
class IrgradFuncFunctions(FuncFunctions):
    """xDSL's func implementations, and calls of tagged factorization declarations."""

    @impl_callable(func.FuncOp)
    def call_func(self, interpreter: Interpreter, op: func.FuncOp, args: tuple[Any, ...]):
        if not is_tagged_declaration(op):
            return super().call_func(interpreter, op, args)
        tag = op.attributes[FACTORIZATION_ATTR]
        assert isinstance(tag, DictionaryAttr)
        n = INPUTS[tag.data["kind"].data]  # type: ignore[union-attr]
        inputs = [np.asarray(a) for a in args[:n]]
        with np.errstate(all="ignore"):
            results = reference(tag, inputs)
        outs = args[n:]
        if not outs:  # before bufferization: tensors in, tensors out
            types = op.function_type.outputs.data
            assert all(isinstance(t, TensorType) for t in types)
            return tuple(box(r, t) for r, t in zip(results, types, strict=True))
        for out, r in zip(outs, results, strict=True):
            out[...] = r
        return ()
