"""`DeriverProtocol`: what the sweeps, the batcher and the rules may ask of the pass's `Deriver`.

The `Deriver` (deriver.py) sits above reverse.py, forward.py, batching.py and the rules: it calls them to
build a derived function. They call back into it (a `func.call` needs its callee's derivative, a loop rule
outlines its body) through the object they are handed, typed by this protocol, so none of them imports
the module that imports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from xdsl.dialects import func
from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Block, Operation, SSAValue


class DeriverProtocol(Protocol):
    """Builds and caches the derived functions of one module (deriver.py's `Deriver`)."""

    cache: dict[Any, func.FuncOp]
    """Derived functions by (primal, mode, wrt, seeds); rules may keep their own generated functions here."""

    outlined: list[func.FuncOp]
    """Functions made from regions; those nothing calls are removed at the end of the pass."""

    def lookup(self, at: Operation, ref: SymbolRefAttr) -> func.FuncOp: ...

    def derive(
        self,
        ref: SymbolRefAttr,
        mode: str,
        wrt: tuple[int, ...],
        at: Operation,
        seeds: tuple[int, ...] | None = None,
    ) -> func.FuncOp: ...

    def derive_batched(
        self, primal: func.FuncOp, mask: tuple[bool, ...], size: int, at: Operation
    ) -> tuple[func.FuncOp, tuple[bool, ...]]: ...

    def outline(
        self, primal: func.FuncOp, kind: str, block: Block, captured: Sequence[SSAValue]
    ) -> func.FuncOp: ...

    def place(self, function: func.FuncOp, near: func.FuncOp) -> None: ...

    def fresh_name(self, at: Operation, base: str) -> str: ...
