"""`nn-expand-factorizations`: the factorizations (`nn.cholesky`, `nn.triangular_solve`, `nn.lu`,
`nn.eigh`, `nn.eig`, `nn.svd`, `nn.qr`) as loops of nn ops (or calls).

Why: LAPACK does these far better than any loop nest irgrad could generate, so the CPU
pipeline calls it; every other target (the GPU, a CPU without LAPACK) needs them as ordinary
IR. Each op becomes its reference loop (irgrad/tracing/reference_loops.py, written on the
tracing core, which a pass may import), traced from Python as JAX's `mlir.lower_fun` does; the
loops meet the ops' contracts (NaN for a matrix that is not positive definite, getrf's pivots,
LAPACK's QR signs), so a target may take either form. eigh and svd are the raw factorization,
then the op's sign and NaN rules inline.

- `outline=true` (default, CPU): each op becomes a `func.call` of a private function tagged
  `irgrad.factorization = {kind = "potrf" | "trsm" | ..., ...}`, whose body
  convert-factorizations-to-lapack replaces after bufferization.
- `outline=false` (GPU): the loop is inlined in place of the op, kernels like the rest.
- `references=false` (CPU): the private functions are tagged declarations with no loop to
  trace; the interpreter runs them as their kind's numpy reference. `nn.eig` ("geev") has no
  loop: always a declaration, and `outline=false` refuses it with an error naming the op.

Input: nn IR (any stage before convert-nn-to-linalg). Output: the same with none of those
seven ops left. Details: docs/design/cpu-pipeline.md, "nn-expand-factorizations".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import BoolAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgrad.diagnostics import PassError
from irgrad.dialects import nn
from irgrad.dialects.nn.factorization import FACTORIZATION_ATTR
from irgrad.tracing import dtypes, reference_loops as loops
from irgrad.tracing.tracer import ShapeDtype, trace

FACTORIZATION_OPS = (nn.CholeskyOp, nn.TriangularSolveOp, nn.LUOp, nn.EighOp, nn.EigOp, nn.SvdOp, nn.QrOp)

_SIMPLE_KINDS = {nn.EighOp: "syevd", nn.EigOp: "geev", nn.SvdOp: "gesdd", nn.QrOp: "geqrf"}

WITHOUT_REFERENCE = ("geev",)
"""Kinds without a reference loop: always a tagged declaration, never inlined."""
"""The ops without attributes, and their LAPACK routine (syevd reads the lower triangle)."""


def _kind(op: Operation) -> tuple[str, bool, bool]:
    """(LAPACK routine, lower, unit_diagonal) of a factorization op."""
    if isinstance(op, nn.CholeskyOp):
        return "potrf", True, False
    if isinstance(op, nn.TriangularSolveOp):
        return "trsm", op.is_lower, op.is_unit
    if type(op) in _SIMPLE_KINDS:
        return _SIMPLE_KINDS[type(op)], isinstance(op, nn.EighOp), False
    assert isinstance(op, nn.LUOp)
    return "getrf", False, False


def _reference(kind: str, lower: bool, unit: bool) -> Callable[..., Any]:
    """The reference loop for one factorization, what is outlined. For syevd and gesdd it
    returns vectors of any sign, as LAPACK does; `_post` then applies the op's contract."""
    if kind == "potrf":
        return loops.cholesky_loop
    if kind == "trsm":
        return lambda a, b: loops.trsm_loop(a, b, lower, unit)
    if kind == "syevd":
        return loops.eigh_raw
    if kind == "gesdd":
        return loops.svd_raw
    if kind == "geqrf":
        return loops.qr_loop
    return loops.lu_loop


def _post(kind: str) -> Callable[..., Any] | None:
    """What follows the outlined call, inline, as a function of (operands..., raw results...):
    the sign convention and the NaN rule of nn.eigh / nn.svd / nn.qr (None for the others)."""
    if kind == "syevd":
        return loops.eigh_post
    if kind == "gesdd":
        return loops.svd_post
    if kind == "geqrf":
        return lambda a, q, r: tuple(loops.finite_or_nan(a, q, r))
    return None


def _type_name(t: Any) -> str:
    assert isinstance(t, TensorType)
    return "x".join(str(d) for d in t.get_shape()) + "x" + str(t.get_element_type())


def trace_detached(fn: Callable[..., Any], types: list[Any]) -> func.FuncOp:
    """`fn` traced for tensor arguments of `types`, as a detached function."""
    avals = []
    for t in types:
        assert isinstance(t, TensorType)
        avals.append(ShapeDtype(tuple(t.get_shape()), dtypes.from_element_type(t.get_element_type())))
    program = trace(fn, *avals)
    functions = [f for f in program.module.ops if isinstance(f, func.FuncOp)]
    assert len(functions) == 1, "a reference loop traces to one function"
    function = functions[0]
    function.detach()
    return function


def _tag(kind: str, lower: bool, unit: bool) -> DictionaryAttr:
    return DictionaryAttr(
        {"kind": StringAttr(kind), "lower": BoolAttr.from_bool(lower), "unit_diagonal": BoolAttr.from_bool(unit)}
    )


def declare_factorization(op: Operation, name: str) -> func.FuncOp:
    """A private declaration, tagged, of the function `trace_reference` would define: its
    meaning is the tag's (the interpreter runs it as the numpy reference of its kind), and
    convert-factorizations-to-lapack gives it its body."""
    kind, lower, unit = _kind(op)
    function = func.FuncOp.external(name, [v.type for v in op.operands], [r.type for r in op.results])
    function.sym_visibility = StringAttr("private")
    function.attributes[FACTORIZATION_ATTR] = _tag(kind, lower, unit)
    return function


def trace_reference(op: Operation, name: str) -> func.FuncOp:
    """A private function computing `op` with its reference loop, traced for its operand types
    (for eigh, svd and qr: the raw factorization, without `_post`)."""
    kind, lower, unit = _kind(op)
    function = trace_detached(_reference(kind, lower, unit), [v.type for v in op.operands])
    function.sym_name = StringAttr(name)
    function.sym_visibility = StringAttr("private")
    function.attributes[FACTORIZATION_ATTR] = _tag(kind, lower, unit)
    expected = [r.type for r in op.results]
    if list(function.function_type.outputs) != expected:  # pragma: no cover (a frontend bug)
        raise AssertionError(f"{op.name}: reference loop returns {function.function_type.outputs}, expected {expected}")
    return function


@dataclass(frozen=True)
class ExpandFactorizationsPass(ModulePass):
    """Write the factorization ops as their reference loops: calls of private tagged functions
    (`outline=true`), or inlined (`outline=false`).

    Input: nn IR. Output: the same without those ops.
    """

    name = "nn-expand-factorizations"

    outline: bool = True
    references: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.references and not self.outline:
            raise PassError(f"{self.name}: references=false needs outline=true (an inlined factorization is its loop)")
        targets = [o for o in op.walk() if isinstance(o, FACTORIZATION_OPS)]
        if not targets:
            return
        if not self.outline:
            self._refuse_without_reference(targets)
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
                traced = self.references and kind not in WITHOUT_REFERENCE
                function = trace_reference(target, name) if traced else declare_factorization(target, name)
                functions[key] = function
                if self.outline:
                    op.body.block.add_op(function)
            from irgrad.transforms.inline import inline_call  # (inline imports this module)

            results = [r.type for r in target.results]
            call = func.CallOp(function.sym_name.data, list(target.operands), results)
            post = _post(kind)
            if post is None:
                Rewriter.replace_op(target, call)
            else:
                Rewriter.insert_op(call, InsertPoint.before(target))
                post_function = trace_detached(post, [*(v.type for v in target.operands), *results])
                post_call = func.CallOp("post", [*target.operands, *call.results], results)
                Rewriter.replace_op(target, post_call)
                inline_call(post_call, post_function)
            if not self.outline:
                inline_call(call, function)

    def _refuse_without_reference(self, targets: list[Operation]) -> None:
        """An op with no reference loop cannot be inlined (the GPU pipeline): a located error."""
        for target in targets:
            if _kind(target)[0] in WITHOUT_REFERENCE:
                operand = target.operands[0].type
                raise PassError(
                    f"{self.name}{{outline=false}}: {target.name} of {_type_name(operand)} has no reference loop to "
                    f"inline: it runs only on the CPU (LAPACK's geev) and in the interpreter (irgrad has no GPU eig; "
                    f"JAX's calls cuSOLVER); compute it on the CPU (ig.jit(..., backend='cpu'))",
                    target,
                )


__all__ = ["ExpandFactorizationsPass", "trace_detached", "trace_reference"]
