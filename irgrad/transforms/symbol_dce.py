"""`symbol-dce`: erase private symbols that nothing live refers to (MLIR's SymbolDCE).

Why: the frontend traces each transformed function (the callee of grad, vjp, checkpoint, ...)
into a `func.func` of its own, and the autodiff pass replaces the request with a call of a
derived function. The callee is then referenced by nothing, yet every later pass and LLVM
would still compile it. This pass removes such leftovers, as `mlir-opt -symbol-dce` does.

Input: any IR whose top-level op is a symbol table (builtin.module).
Output: the same IR less every symbol op (func.func, memref.global, nested module, ...) that
is discardable and unreachable. Within each op with the SymbolTable trait, a symbol is
discardable when it is not public and its table is hidden (the top-level module, a
non-symbol table, a private table) or the symbol itself is private. Live are: every
non-discardable symbol, every non-symbol op of a table, and, transitively, whatever a live
op refers to: any SymbolRefAttr in its attributes or properties (func.call, autodiff.grad,
memref.get_global, llvm.mlir.addressof, ...) or in those of the ops nested in it, up to
nested symbol tables, which are resolved with their own table. A use of an unknown symbol
is ignored; an unregistered op with one region might be a symbol table, so its uses cannot
be trusted and the pass fails with a located error, as MLIR's does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, SymbolRefAttr, UnregisteredOp
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.passes import ModulePass
from xdsl.traits import SymbolOpInterface, SymbolTable

from irgrad.diagnostics import PassError


def _is_symbol(op: Operation) -> bool:
    return op.get_trait(SymbolOpInterface) is not None


def _visibility(op: Operation) -> str:
    vis = op.get_attr_or_prop("sym_visibility")
    return getattr(vis, "data", "public")


def _symbol_name(op: Operation) -> str | None:
    trait = op.get_trait(SymbolOpInterface)
    name = trait.get_sym_attr_name(op) if trait is not None else None
    return None if name is None else name.data


def _refs_in(attr: Attribute) -> Iterator[SymbolRefAttr]:
    """Every SymbolRefAttr in `attr`, however deeply nested in arrays, dictionaries, parameters."""
    if isinstance(attr, SymbolRefAttr):
        yield attr
    elif isinstance(attr, ArrayAttr):
        for a in attr.data:
            yield from _refs_in(a)
    elif isinstance(attr, DictionaryAttr):
        for a in attr.data.values():
            yield from _refs_in(a)
    elif isinstance(attr, ParametrizedAttribute):
        for a in attr.parameters:
            yield from _refs_in(a)


def _own_refs(op: Operation) -> Iterator[SymbolRefAttr]:
    for attr in (*op.properties.values(), *op.attributes.values()):
        yield from _refs_in(attr)


class UnknownSymbolTableError(PassError):
    """An unregistered op with one region, which may be a symbol table: uses of symbols in
    it might name its own symbols, so no use can be trusted (MLIR fails the same way)."""

    def __init__(self, op: UnregisteredOp) -> None:
        super().__init__("may be a symbol table; symbol-dce cannot reliably compute symbol uses", op)
        # Name the op as written (`test.region`), not xDSL's `builtin.unregistered`.
        self.message = self.message.replace(f"'{op.name}'", f"'{op.op_name.data}'", 1)


def _check_known(op: Operation) -> None:
    if isinstance(op, UnregisteredOp) and len(op.regions) == 1:
        raise UnknownSymbolTableError(op)


def _enclosing_table(op: Operation) -> Operation:
    parent = op.parent_op()
    while parent is not None and not parent.has_trait(SymbolTable):
        parent = parent.parent_op()
    assert parent is not None, "a symbol table's op is in a symbol table"
    return parent


class _Liveness:
    """The live symbol ops under one top-level symbol table."""

    def __init__(self) -> None:
        self.live: set[Operation] = set()
        self._tables: dict[Operation, dict[str, Operation]] = {}

    def compute(self, table: Operation, hidden: bool) -> None:
        """Marks what is live in `table` (and the tables nested in it); `hidden`: whether
        `table`'s symbols are invisible from outside it."""
        worklist: list[Operation] = []
        for op in table.regions[0].block.ops:
            if not _is_symbol(op):
                worklist.append(op)
                continue
            vis = _visibility(op)
            discardable = (hidden or vis == "private") and vis != "public"
            if not discardable and op not in self.live:
                self.live.add(op)
                worklist.append(op)
        while worklist:
            op = worklist.pop()
            refs, nested_tables = self._uses(op)
            for nested in nested_tables:
                self.compute(nested, hidden or not _is_symbol(nested) or _visibility(nested) == "private")
            # Not always `table`: a nested reference (@m::@f) makes @f live from here, and
            # @f's own uses name symbols of @m.
            scope = _enclosing_table(op)
            for ref in refs:
                for symbol in self._resolve(scope, ref):
                    if symbol not in self.live:
                        self.live.add(symbol)
                        worklist.append(symbol)

    @staticmethod
    def _uses(op: Operation) -> tuple[list[SymbolRefAttr], list[Operation]]:
        """The symbol references held by `op` and the ops nested in it, not looking inside
        nested symbol tables; and the symbol tables found (`op` itself if it is one)."""
        _check_known(op)
        refs = list(_own_refs(op))
        if op.has_trait(SymbolTable):
            return refs, [op]
        tables: list[Operation] = []
        stack = [op]
        while stack:
            for region in stack.pop().regions:
                for block in region.blocks:
                    for inner in block.ops:
                        _check_known(inner)
                        refs.extend(_own_refs(inner))
                        if inner.has_trait(SymbolTable):
                            tables.append(inner)
                        elif inner.regions:
                            stack.append(inner)
        return refs, tables

    def _resolve(self, table: Operation, ref: SymbolRefAttr) -> list[Operation]:
        """The ops `ref` names, from `table`: the root and each nested reference (all are
        used); empty when a name is unknown."""
        found: list[Operation] = []
        scope = table
        for name in (ref.root_reference, *ref.nested_references.data):
            symbol = self._symbols(scope).get(name.data)
            if symbol is None:
                return []
            found.append(symbol)
            scope = symbol
        return found

    def _symbols(self, scope: Operation) -> dict[str, Operation]:
        """Name -> symbol op directly in `scope` (none when `scope` is no symbol table)."""
        if scope not in self._tables:
            symbols: dict[str, Operation] = {}
            if scope.has_trait(SymbolTable):
                for op in scope.regions[0].block.ops:
                    if _is_symbol(op) and (name := _symbol_name(op)) is not None:
                        symbols.setdefault(name, op)
            self._tables[scope] = symbols
        return self._tables[scope]


@dataclass(frozen=True)
class SymbolDCEPass(ModulePass):
    """Erase private symbols unreachable from public symbols and non-symbol ops (MLIR's symbol-dce).

    Input: IR whose top-level op is a symbol table (builtin.module). Output: the same IR without
    the unreachable private (or, in a hidden table, nested-visibility) symbols; public ones stay.
    """

    name = "symbol-dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not op.has_trait(SymbolTable):
            raise PassError("does not define a symbol table, so symbol-dce cannot run on it", op)
        # Like MLIR: the top-level table is hidden unless it is a non-private symbol nested in
        # some parent op.
        hidden = op.parent_op() is None or not _is_symbol(op) or _visibility(op) == "private"
        liveness = _Liveness()
        liveness.compute(op, hidden)
        dead = [
            symbol
            for table in op.walk()
            if table.has_trait(SymbolTable)
            for symbol in table.regions[0].block.ops
            if _is_symbol(symbol) and symbol not in liveness.live
        ]
        # Innermost first (MLIR erases in post-order), so no op is erased after its parent.
        for symbol in reversed(dead):
            block = symbol.parent_block()
            assert block is not None
            block.erase_op(symbol)
