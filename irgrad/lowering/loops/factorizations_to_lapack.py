"""`convert-factorizations-to-lapack`: outlined factorizations' loops replaced by LAPACK calls.

Input invariant: stage "bufferized", with the private functions `nn-expand-factorizations`
outlined (tagged `irgrad.factorization = {kind, lower, unit_diagonal}`; their reference loops,
or declarations with `references=false`, which get a body here), now on memrefs in the
bufferized calling convention: read-only inputs, then one out-parameter per result.

Output IR: each such function's body becomes a copy of the matrix that is factored in place
(gesdd and geev, which destroy their A, copy it into a scratch buffer) and, per batch element (an
`scf.for` nest over the leading dimensions), one `blas.potrf` / `trsm` / `getrf` / `syevd` /
`geev` / `gesdd` / `geqrf` on the 2-D (and 1-D, 3-D) subviews; `convert-blas-to-llvm` turns those into calls
of the runtime's LAPACK entry points (irgrad/backends/cpu/lapack/). The function's old body,
the reference loop, is the specification these calls meet; a pipeline without this pass (the
GPU's) keeps it.

Why after bufferization: the library routines work in place on buffers, and the function
boundary gives exactly the buffers they need, fresh and owned (the out-parameters), with no
bufferization rule of their own.
Details: docs/design/cpu-pipeline.md, "irgrad/lowering/loops/factorizations_to_lapack.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import (
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    StringAttr,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError
from irgrad.dialects.blas import GeevOp, GeqrfOp, GesddOp, GetrfOp, PotrfOp, SyevdOp, TrsmOp
from irgrad.lowering.loops.linalg_to_blas import batch_loops
from irgrad.dialects.nn.factorization import FACTORIZATION_ATTR, factorization_flag

_ARITY = {"potrf": 2, "trsm": 3, "getrf": 4, "syevd": 3, "geev": 3, "gesdd": 4, "geqrf": 3}


def _tail_subview(value: SSAValue, ivs: Sequence[SSAValue | int], keep: int) -> tuple[SSAValue, list[Operation]]:
    """The last `keep` dimensions of the identity-layout memref `value` at batch indices `ivs`
    (loop variables, or 0 for a dimension of size 1: a rank-reducing subview, its offset static
    when every index is), or `value` itself without batch dimensions."""
    t = value.type
    assert isinstance(t, MemRefType)
    shape = list(t.get_shape())
    lead = len(shape) - keep
    if lead == 0:
        return value, []
    strides = t.get_strides()
    assert strides is not None and all(s is not None for s in strides)
    static = all(isinstance(i, int) for i in ivs)
    offset = sum(int(i) * int(s) for i, s in zip(ivs, strides)) if static else None  # type: ignore[arg-type]
    result_type = MemRefType(
        t.get_element_type(), shape[lead:], StridedLayoutAttr([int(s) for s in strides[lead:]], offset), t.memory_space
    )
    subview = memref.SubviewOp.get(value, [*ivs, *([0] * keep)], [1] * lead + shape[lead:], [1] * len(shape), result_type)
    return subview.result, [subview]


def _per_matrix(
    batch: Sequence[int], views: Sequence[tuple[SSAValue, int]], emit: Callable[[list[SSAValue]], Operation]
) -> list[Operation]:
    """Ops that run `emit(subviews)` once per batch index (linalg_to_blas's batch loop nest)."""
    nest = batch_loops(batch)
    inner: list[Operation] = []
    subviews: list[SSAValue] = []
    ivs = [iv if iv is not None else 0 for iv in nest.ivs]
    for value, keep in views:
        view, ops = _tail_subview(value, ivs, keep)
        inner += ops
        subviews.append(view)
    inner.append(emit(subviews))
    if nest.body is None:
        return [*nest.before, *inner]
    nest.body.add_ops([*inner, scf.YieldOp()])
    return nest.before


def lapack_body(function: func.FuncOp, kind: str, lower: bool, unit: bool) -> list[Operation]:
    """The new body of an outlined factorization (see the module docstring)."""
    args = list(function.body.block.args)
    if len(args) != _ARITY[kind] or not all(isinstance(a.type, MemRefType) for a in args):
        raise PassError(
            f"an outlined '{kind}' function takes {_ARITY[kind]} memrefs after bufferize, got "
            f"({', '.join(str(a.type) for a in args)}); run bufferize first",
            function,
        )
    matrix_type = args[0].type
    assert isinstance(matrix_type, MemRefType)
    batch = list(matrix_type.get_shape()[:-2])
    if kind == "potrf":
        a, out = args
        copy: Operation = memref.CopyOp(a, out)
        loops = _per_matrix(batch, [(out, 2)], lambda v: PotrfOp(v[0]))
    elif kind == "trsm":
        a, b, out = args
        copy = memref.CopyOp(b, out)
        loops = _per_matrix(batch, [(a, 2), (out, 2)], lambda v: TrsmOp(v[0], v[1], lower=lower, unit_diagonal=unit))
    elif kind == "getrf":
        a, lu, piv, perm = args
        copy = memref.CopyOp(a, lu)
        loops = _per_matrix(batch, [(lu, 2), (piv, 1), (perm, 1)], lambda v: GetrfOp(v[0], v[1], v[2]))
    elif kind == "syevd":
        a, w, v = args
        copy = memref.CopyOp(a, v)
        loops = _per_matrix(batch, [(v, 2), (w, 1)], lambda x: SyevdOp(x[0], x[1]))
    elif kind == "geev":
        # geev overwrites A: factor a scratch copy, as gesdd.
        a, w, v = args
        scratch = memref.AllocOp.get(matrix_type.get_element_type(), shape=matrix_type.get_shape())
        loops = _per_matrix(batch, [(scratch.memref, 2), (w, 2), (v, 3)], lambda x: GeevOp(x[0], x[1], x[2]))
        copy = memref.CopyOp(a, scratch.memref)
        return [scratch, copy, *loops, memref.DeallocOp.get(scratch.memref), func.ReturnOp()]
    elif kind == "gesdd":
        # gesdd overwrites A: factor a scratch copy (a read-only argument may be the caller's).
        a, u, s, vt = args
        scratch = memref.AllocOp.get(matrix_type.get_element_type(), shape=matrix_type.get_shape())
        loops = _per_matrix(
            batch, [(scratch.memref, 2), (s, 1), (u, 2), (vt, 2)], lambda x: GesddOp(x[0], x[1], x[2], x[3])
        )
        copy = memref.CopyOp(a, scratch.memref)
        return [scratch, copy, *loops, memref.DeallocOp.get(scratch.memref), func.ReturnOp()]
    else:
        a, q, r = args
        copy = memref.CopyOp(a, q)
        loops = _per_matrix(batch, [(q, 2), (r, 2)], lambda x: GeqrfOp(x[0], x[1]))
    return [copy, *loops, func.ReturnOp()]


@dataclass(frozen=True)
class ConvertFactorizationsToLapackPass(ModulePass):
    """Replace the bodies of outlined factorizations (nn-expand-factorizations) by blas.potrf /
    trsm / getrf / syevd / geev / gesdd / geqrf calls on each batch element.

    Input invariant: stage "bufferized". Output IR: the same, those functions' bodies replaced.
    """

    name = "convert-factorizations-to-lapack"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            tag = function.attributes.get(FACTORIZATION_ATTR)
            if tag is None:
                continue
            if not function.body.blocks:
                # A tagged declaration (nn-expand-factorizations{references=false}): the body
                # is made here, on the bufferized signature.
                function.body.add_block(Block(arg_types=function.function_type.inputs.data))
                function.sym_visibility = StringAttr("private")
            if not isinstance(tag, DictionaryAttr) or not isinstance(tag.data.get("kind"), StringAttr):
                raise PassError(f"'{FACTORIZATION_ATTR}' must be a dictionary with a string 'kind'", function)
            kind = tag.data["kind"].data  # type: ignore[union-attr]
            if kind not in _ARITY:
                raise PassError(
                    f"unknown factorization kind '{kind}' (potrf, trsm, getrf, syevd, geev, gesdd or geqrf)", function
                )
            new_ops = lapack_body(
                function, kind, factorization_flag(tag, "lower"), factorization_flag(tag, "unit_diagonal")
            )
            block = function.body.block
            for old in reversed(list(block.ops)):
                old.detach()
                old.erase(safe_erase=False)
            block.add_ops(new_ops)


__all__ = ["ConvertFactorizationsToLapackPass", "lapack_body"]
