"""`Deriver`: builds, names, places and caches the derived functions of one module; expands requests.

The `autodiff` pass (autodiff.py) makes one per module and asks it to expand each request. It builds
`@f_vjp` with reverse.py, `@f_jvp` with forward.py and `@f_batch` with batching.py, and outlines regions
with outline.py. Those modules, and the rules they run, call back into it (a `func.call`'s callee, a loop
body) through the object they are handed, typed by protocol.py's `DeriverProtocol`: they sit below this
module and never import it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from irgrad.autodiff.batching import build_batched, expand_batch
from irgrad.autodiff.builder import RuleBuilder
from irgrad.autodiff.errors import AutodiffError
from irgrad.autodiff.forward import build_jvp
from irgrad.autodiff.outline import describe, outline_block, record_origin, same_function_body
from irgrad.autodiff.reverse import build_vjp
from irgrad.dialects import autodiff as ad

REQUEST_OPS = (ad.GradOp, ad.ValueAndGradOp, ad.VJPOp, ad.JVPOp, ad.BatchOp)
"""The ops that ask for a derived function (a derivative, or a batched version: vmap); everything else in the
dialect controls how one is taken."""


class Deriver:
    """Builds and caches derived functions for one module; expands requests."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.cache: dict[tuple[func.FuncOp, str, tuple[int, ...], tuple[int, ...] | None], func.FuncOp] = {}
        self.expanded: set[func.FuncOp] = set()
        self.expanding: list[func.FuncOp] = []
        self.last_placed: dict[func.FuncOp, func.FuncOp] = {}
        self.batch_cache: dict[tuple[func.FuncOp, tuple[bool, ...], int], tuple[func.FuncOp, tuple[bool, ...]]] = {}
        self.batching: set[tuple[func.FuncOp, tuple[bool, ...], int]] = set()
        self.outlined: list[func.FuncOp] = []
        """Functions made from regions (loop bodies, branches); those nothing calls are removed at the end."""

    # ---------------------------------------------------------------------------------------------------------
    # Derived functions
    # ---------------------------------------------------------------------------------------------------------

    def lookup(self, at: Operation, ref: SymbolRefAttr) -> func.FuncOp:
        found = SymbolTable.lookup_symbol(at, ref)
        if not isinstance(found, func.FuncOp):
            raise AutodiffError(f"{ref} does not name a func.func to differentiate", at)
        return found

    def derive(
        self,
        ref: SymbolRefAttr,
        mode: str,
        wrt: tuple[int, ...],
        at: Operation,
        seeds: tuple[int, ...] | None = None,
    ) -> func.FuncOp:
        """The function computing `mode` ('vjp' or 'jvp') of the function `ref` names, w.r.t. `wrt`.

        `seeds` lists the results whose cotangents (vjp) or tangents (jvp) matter; None means all. The
        others are ignored (vjp) or returned as zeros (jvp), and the work for them is never built.
        """
        primal = self.lookup(at, ref)
        if seeds is not None and len(seeds) == len(primal.function_type.outputs.data):
            seeds = None
        key = (primal, mode, wrt, seeds)
        if key in self.cache:
            return self.cache[key]
        if primal.is_declaration:
            raise AutodiffError(
                f"cannot differentiate @{primal.sym_name.data}: it is a declaration without a body", at
            )
        self.expand_requests(primal)
        derived = self.declare(primal, mode, wrt)
        # Cached before its body exists, so a recursive call finds it instead of building it again.
        self.cache[key] = derived
        if mode == "vjp":
            build_vjp(self, primal, wrt, derived, seeds)
        else:
            build_jvp(self, primal, wrt, derived, seeds)
        return derived

    def derive_batched(
        self, primal: func.FuncOp, mask: tuple[bool, ...], size: int, at: Operation
    ) -> tuple[func.FuncOp, tuple[bool, ...]]:
        """`primal` mapped over `size` examples of the arguments `mask` marks (batching.py), and which of
        its results carry the batch. Built once per (function, mask, size)."""
        key = (primal, mask, size)
        if key in self.batch_cache:
            return self.batch_cache[key]
        if primal.is_declaration:
            raise AutodiffError(f"cannot batch @{primal.sym_name.data}: it is a declaration without a body", at)
        if key in self.batching:
            raise AutodiffError(f"vmap: @{primal.sym_name.data} calls itself; recursive functions cannot be batched", at)
        self.expand_requests(primal)
        self.batching.add(key)
        name = self.fresh_name(primal, f"{primal.sym_name.data}_batch")
        function, result_mask = build_batched(self, primal, mask, size, name)
        self.batching.discard(key)
        self.place(function, primal)
        self.batch_cache[key] = (function, result_mask)
        return function, result_mask

    def declare(self, primal: func.FuncOp, mode: str, wrt: tuple[int, ...]) -> func.FuncOp:
        """An empty private function with the derived signature, placed after `primal`."""
        inputs = list(primal.function_type.inputs.data)
        outputs = list(primal.function_type.outputs.data)
        wrt_types = [inputs[i] for i in wrt]
        if mode == "vjp":
            signature = ([*inputs, *outputs], [*outputs, *wrt_types])
        else:
            signature = ([*inputs, *wrt_types], [*outputs, *outputs])
        derived = func.FuncOp(self.unique_name(primal, mode, wrt), signature, visibility="private")
        derived.location = primal.location

        primal_args = primal.body.block.args
        derived_args = derived.body.block.args
        for arg, primal_arg in zip(derived_args, primal_args):
            arg.name_hint = primal_arg.name_hint
        for k, arg in enumerate(derived_args[len(primal_args) :]):
            if mode == "vjp":
                arg.name_hint = "ct"
            else:
                hint = primal_args[wrt[k]].name_hint
                arg.name_hint = f"{hint}_dot" if hint else "t"

        self.place(derived, primal)
        return derived

    def outline(self, primal: func.FuncOp, kind: str, block: Block, captured: Sequence[SSAValue]) -> func.FuncOp:
        """`@<primal>_<kind>`: the function computing what `block` yields (outline.py), placed after `primal`.

        An identical function outlined before (the same loop, differentiated for another request or mode) is
        reused, so its derived functions are built once.
        """
        base = f"{primal.sym_name.data}_{kind}"
        candidate = outline_block(base, block, captured)
        for existing in self.outlined:
            if existing.sym_name.data.startswith(base) and same_function_body(existing, candidate):
                return existing
        candidate.sym_name = StringAttr(self.fresh_name(primal, base))
        region_op = block.parent_op()
        record_origin(candidate, f"outlined from the {region_op.name if region_op else 'region'} in {describe(primal)}")
        self.place(candidate, primal)
        self.outlined.append(candidate)
        return candidate

    def place(self, function: func.FuncOp, near: func.FuncOp) -> None:
        """Insert a generated `function` after `near` and the functions generated from it before, so
        the module reads in the order the functions were made."""
        anchor = self.last_placed.get(near, near)
        parent = near.parent_block()
        assert parent is not None
        parent.insert_op_after(function, anchor)
        self.last_placed[near] = function

    def fresh_name(self, at: Operation, base: str) -> str:
        """`base`, or `base_<n>` with the smallest n not taken."""
        name, n = base, 0
        while SymbolTable.lookup_symbol(at, name) is not None:
            n += 1
            name = f"{base}_{n}"
        return name

    def remove_unused(self) -> None:
        """Erase the functions the pass made that nothing refers to any more: a loop body whose derivatives
        were built from it but which no generated code calls, a derivative whose cotangent never arrived."""
        generated = [*self.outlined, *self.cache.values(), *(f for f, _ in self.batch_cache.values())]
        generated = list({id(f): f for f in generated}.values())  # a function may be in two of them
        while True:
            referenced = _referenced_symbols(self.module)
            unused = [f for f in generated if f.parent is not None and f.sym_name.data not in referenced]
            if not unused:
                return
            for function in unused:
                function.detach()
                function.erase()

    def unique_name(self, primal: func.FuncOp, mode: str, wrt: Sequence[int]) -> str:
        base = f"{primal.sym_name.data}_{mode}"
        candidates = [base, f"{base}_wrt_{'_'.join(str(i) for i in wrt)}"]
        for candidate in candidates:
            if SymbolTable.lookup_symbol(primal, candidate) is None:
                return candidate
        n = 1
        while SymbolTable.lookup_symbol(primal, f"{candidates[-1]}_{n}") is not None:
            n += 1
        return f"{candidates[-1]}_{n}"

    # ---------------------------------------------------------------------------------------------------------
    # Requests
    # ---------------------------------------------------------------------------------------------------------

    def expand_requests(self, function: func.FuncOp) -> None:
        """Expand every derivative request inside `function` (and, first, inside what they differentiate)."""
        if function in self.expanded:
            return
        if function in self.expanding:
            chain = " -> ".join(f"@{f.sym_name.data}" for f in [*self.expanding, function])
            raise AutodiffError(
                f"derivative requests form a cycle ({chain}): a function cannot ask for the derivative of a "
                "function that needs its own derivative",
                function,
            )
        self.expanding.append(function)
        for op in list(function.walk()):
            if isinstance(op, REQUEST_OPS):
                self.expand(op)
        self.expanding.pop()
        self.expanded.add(function)

    def expand(self, op: Operation) -> None:
        """Replace one request by a call of the derived function."""
        block = op.parent_block()
        assert block is not None
        b = RuleBuilder(block, self, before=op).at(op.location)
        values: Sequence[SSAValue]
        if isinstance(op, ad.GradOp | ad.ValueAndGradOp):
            vjp = self.derive(op.callee, "vjp", op.wrt_indices, op)
            seed = b.full(1.0, vjp.function_type.outputs.data[0])
            results = b.call(vjp, [*op.args, seed])
            values = results[1:] if isinstance(op, ad.GradOp) else results
        elif isinstance(op, ad.VJPOp):
            vjp = self.derive(op.callee, "vjp", op.wrt_indices, op)
            values = b.call(vjp, [*op.args, *op.cotangents])
        elif isinstance(op, ad.BatchOp):
            values = expand_batch(self, b, op)
        else:
            assert isinstance(op, ad.JVPOp)
            jvp = self.derive(op.callee, "jvp", op.wrt_indices, op)
            values = b.call(jvp, [*op.args, *op.tangents])
        for result, value in zip(op.results, values, strict=True):
            result.replace_all_uses_with(value)
        block.erase_op(op)


def _referenced_symbols(module: ModuleOp) -> set[str]:
    """The root names of every symbol reference held by an op of `module` (callees, fwd/bwd functions)."""
    names: set[str] = set()
    for op in module.walk():
        for attr in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attr, SymbolRefAttr):
                names.add(attr.root_reference.data)
    return names


__all__ = ["REQUEST_OPS", "Deriver"]
