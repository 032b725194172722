"""Where an adjoint op came from: the location the reverse sweep stamps on the ops it emits.

The reverse sweep (reverse.py) emits the adjoint code of a primal op at a named location wrapping the
primal op's own, MLIR's `NameLoc`: `loc("adjoint(nn.mul)"("f.py":3:7))`. A location, not an attribute,
because it changes nothing else: the IR printed without `--mlir-print-debuginfo` is the same, CSE (which
ignores locations) merges what it merged before, a diagnostic still points at the user's line (a named
location points where its child does), and the mark rides along through inlining and the lowering's
rewrites that keep locations. `adjoint_origin` reads it back: irgrad/analysis/op_graph.py draws the
adjoint part of a program apart from the primal part and ties each adjoint op to its primal op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import CallSiteLoc, NameLoc, StringAttr
from xdsl.ir import Attribute, Operation

_PREFIX = "adjoint("


@dataclass(frozen=True)
class AdjointOrigin:
    """The primal op an adjoint op was emitted for: its op name and its location."""

    op_name: str
    location: Attribute


def adjoint_location(primal: Operation) -> NameLoc:
    """The location of the adjoint code of `primal`: `loc("adjoint(<op name>)"(<primal's location>))`."""
    return NameLoc(StringAttr(f"{_PREFIX}{primal.name})"), primal.location)


def adjoint_origin(location: Attribute) -> AdjointOrigin | None:
    """The primal op `location` marks its op as the adjoint of (the outermost mark), or None."""
    match location:
        case NameLoc(desc=StringAttr(data=desc)) if desc.startswith(_PREFIX) and desc.endswith(")"):
            return AdjointOrigin(desc[len(_PREFIX) : -1], location.location)
        case NameLoc():
            return adjoint_origin(location.location)
        case CallSiteLoc():
            return adjoint_origin(location.callee)
        case _:
            return None
