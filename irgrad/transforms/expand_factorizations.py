"""`nn-expand-factorizations`: `nn.cholesky`, `nn.triangular_solve` and `nn.lu` as loops of nn ops.

Why: LAPACK does these factorizations far better than any loop nest irgrad could generate
(blocked, BLAS-3), so the CPU pipeline calls it; but every other target (the GPU, a CPU
without LAPACK) needs them as ordinary IR. This pass writes each op as its reference loop
(one `scf.for` over the columns of masked whole-matrix updates, the algorithms of
irgrad/frontend/linalg.py: `_cholesky_loop`, `_trsm_loop`, `_lu_loop`), traced from Python
as JAX's `mlir.lower_fun` does. Their results match the ops' contracts exactly (NaN for a
matrix that is not positive definite, getrf's pivots, inf/NaN for a zero on a triangular
diagonal), so a target may take either form.

- `outline=true` (default, the CPU pipeline): each op becomes a `func.call` of a private
  function (one per op kind, attributes and operand types) holding the loop, tagged
  `irgrad.factorization = {kind = "potrf" | "trsm" | "getrf", ...}`. After bufferization,
  `convert-factorizations-to-lapack` replaces such a function's body by LAPACK calls; a
  pipeline that does not run it keeps the loops.
- `outline=false` (the GPU pipeline): the loop is inlined in place of the op, so its kernels
  are launched like the rest of the program, with no call boundary and no host round trip.

Input: nn IR (any stage before convert-nn-to-linalg). Output: the same with no
nn.cholesky / nn.triangular_solve / nn.lu left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr, TensorType, BoolAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgrad.dialects import nn

FACTORIZATION_ATTR = "irgrad.factorization"
"""The attribute that marks an outlined factorization (a DictionaryAttr: kind, lower, unit_diagonal)."""

FACTORIZATION_OPS = (nn.CholeskyOp, nn.TriangularSolveOp, nn.LUOp)


def _kind(op: Operation) -> tuple[str, bool, bool]:
    """(LAPACK routine, lower, unit_diagonal) of a factorization op."""
    if isinstance(op, nn.CholeskyOp):
        return "potrf", True, False
    if isinstance(op, nn.TriangularSolveOp):
        return "trsm", op.is_lower, op.is_unit
    assert isinstance(op, nn.LUOp)
    return "getrf", False, False


def _reference(kind: str, lower: bool, unit: bool) -> Callable[..., Any]:
    """The frontend's reference loop for one factorization (imported late: the frontend
    imports the pass registry, not the other way round)."""
    from irgrad.frontend import linalg

    if kind == "potrf":
        return linalg._cholesky_loop
    if kind == "trsm":
        return lambda a, b: linalg._trsm_loop(a, b, lower, unit)
    return linalg._lu_loop


def _type_name(t: Any) -> str:
    assert isinstance(t, TensorType)
    return "x".join(str(d) for d in t.get_shape()) + "x" + str(t.get_element_type())


def trace_reference(op: Operation, name: str) -> func.FuncOp:
    """A private function computing `op` with its reference loop, traced for its operand types."""
    from irgrad.frontend.tracing import ShapeDtype, trace
    from irgrad.frontend import dtypes

    kind, lower, unit = _kind(op)
    avals = []
    for value in op.operands:
        t = value.type
        assert isinstance(t, TensorType)
        avals.append(ShapeDtype(tuple(t.get_shape()), dtypes.from_element_type(t.get_element_type())))
    program = trace(_reference(kind, lower, unit), *avals)
    functions = [f for f in program.module.ops if isinstance(f, func.FuncOp)]
    assert len(functions) == 1, "a reference loop traces to one function"
    function = functions[0]
    function.detach()
    function.sym_name = StringAttr(name)
    function.sym_visibility = StringAttr("private")
    function.attributes[FACTORIZATION_ATTR] = DictionaryAttr(
        {"kind": StringAttr(kind), "lower": BoolAttr.from_bool(lower), "unit_diagonal": BoolAttr.from_bool(unit)}
    )
    expected = [r.type for r in op.results]
    if list(function.function_type.outputs) != expected:  # pragma: no cover (a frontend bug)
        raise AssertionError(f"{op.name}: reference loop returns {function.function_type.outputs}, expected {expected}")
    return function


@dataclass(frozen=True)
class ExpandFactorizationsPass(ModulePass):
    """Write nn.cholesky / nn.triangular_solve / nn.lu as their reference loops: calls of
    private tagged functions (`outline=true`), or inlined (`outline=false`).

    Input: nn IR. Output: the same without those three ops.
    """

    name = "nn-expand-factorizations"

    outline: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        targets = [o for o in op.walk() if isinstance(o, FACTORIZATION_OPS)]
        if not targets:
            return
        taken = {f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp)}
        functions: dict[tuple[Any, ...], func.FuncOp] = {}
        for target in targets:
            kind, lower, unit = _kind(target)
            key = (kind, lower, unit, tuple(v.type for v in target.operands))
            function = functions.get(key)
            if function is None:
                flags = (("_lower" if lower else "_upper") if kind == "trsm" else "") + ("_unit" if unit else "")
                base = f"irgrad_{kind}{flags}_" + "_".join(_type_name(v.type) for v in target.operands)
                name, k = base, 1
                while name in taken:
                    name, k = f"{base}_{k}", k + 1
                taken.add(name)
                function = trace_reference(target, name)
                functions[key] = function
                if self.outline:
                    op.body.block.add_op(function)
            call = func.CallOp(function.sym_name.data, list(target.operands), [r.type for r in target.results])
            Rewriter.replace_op(target, call)
            if not self.outline:
                from irgrad.transforms.inline import inline_call  # (inline imports this module)

                inline_call(call, function)


__all__ = ["FACTORIZATION_ATTR", "ExpandFactorizationsPass", "trace_reference"]
