"""`inline`: calls of private functions replaced by their bodies (MLIR's `inline`, for func).

Why: autodiff writes what it differentiates as private functions (a custom_jvp's primal, its
rule, the rule's VJP, ...) and calls them, each call recomputing what it needs. Across the call
boundaries canonicalize, cse and dce see nothing: a custom_jvp's reverse mode called the
primal, the rule (for the primal outputs) and the rule's VJP (which recomputes the primal again),
three LU factorizations of one matrix for `ig.linalg.solve`'s gradient, and computed tangents
nobody used. Inlined, cse keeps one of each and dce drops the rest.

What is inlined: every `func.call` of a private `func.func` of the module with a one-block body,
callees first (a call inside an inlined body is inlined in turn), except recursive functions,
functions tagged `irgrad.factorization` (nn-expand-factorizations' LAPACK targets) and bodies
above `max_ops` operations (nested ones counted), which stay calls. The inlined function itself
stays (symbol-dce removes it once no call is left).

Input: any IR with func.call / func.func. Output: the same with those calls replaced.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgrad.dialects.nn.factorization import FACTORIZATION_ATTR


def _size(function: func.FuncOp) -> int:
    return sum(1 for _ in function.body.walk())


def inline_call(call: func.CallOp, callee: func.FuncOp) -> None:
    """Replace `call` by a copy of `callee`'s single-block body."""
    body = callee.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, call.arguments))
    block = call.parent
    assert block is not None
    returned: list[SSAValue] = []
    for inner in body.ops:
        if isinstance(inner, func.ReturnOp):
            returned = [mapping.get(v, v) for v in inner.arguments]
            break
        clone = inner.clone(value_mapper=mapping)
        block.insert_op_before(clone, call)
        for old, new in zip(inner.results, clone.results):
            mapping[old] = new
    Rewriter.replace_op(call, [], returned)


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inline calls of private single-block functions (callees first); see the module docstring."""

    name = "inline"

    max_ops: int = 20000

    def __post_init__(self) -> None:
        if self.max_ops < 0:  # a ValueError: irgrad-opt reports it as a bad pass option
            raise ValueError(f"max_ops must be at least 0, got {self.max_ops}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}

        def inlinable(name: str) -> func.FuncOp | None:
            f = functions.get(name)
            if (
                f is None
                or f.sym_visibility is None
                or f.sym_visibility.data != "private"
                or len(f.body.blocks) != 1
                or FACTORIZATION_ATTR in f.attributes
            ):
                return None
            return f

        # Callees first: a post-order over the call graph, skipping cycles.
        done: set[str] = set()
        active: set[str] = set()
        sizes: dict[str, int] = {}  # of finished functions (their bodies no longer change)

        def visit(f: func.FuncOp) -> None:
            name = f.sym_name.data
            if name in done or name in active:
                return
            active.add(name)
            calls = [c for c in f.body.walk() if isinstance(c, func.CallOp)]
            for call in calls:
                callee = inlinable(call.callee.root_reference.data)
                if callee is None:
                    continue
                visit(callee)
                callee_name = callee.sym_name.data
                if callee_name in active:
                    continue  # recursive
                if callee_name not in sizes:
                    sizes[callee_name] = _size(callee)
                if sizes[callee_name] > self.max_ops:
                    continue  # too large
                inline_call(call, callee)
            active.discard(name)
            done.add(name)

        for f in list(functions.values()):
            visit(f)


__all__ = ["InlinePass", "inline_call"]
