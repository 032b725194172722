"""`set-fastmath{flags=...}`: put fast-math flags on every floating-point arith and math op.

Why: irgrad compiles IEEE-exact by default (no fast-math: a sum is the chain of additions the
loops say, NaN and Inf propagate as in numpy). A user who wants speed over bit-for-bit
reproducibility asks for fast-math (`ig.jit(f, fast_math=True)`, or this pass in an
`irgrad-opt` pipeline), and only then do these flags reach LLVM, which may then reassociate
(vectorize a sum into several partial sums), contract a*b+c into an FMA, or assume no NaN.

Input: any IR. Every op with a `fastmath` property (arith.addf/subf/mulf/divf/remf/negf/
maximumf/minimumf/cmpf..., math.exp/log/sin/...) gets `flags` (replacing what it had);
nothing else changes. Run it on loops, before `convert-to-llvm`, whose arith and math
conversions carry the flags to the llvm ops (LLVM IR gets them on fadd/fsub/fmul/fdiv/frem/
fneg: xDSL's translation drops them from fcmp and from intrinsic calls such as llvm.exp).

`flags` is a comma-separated list of LLVM's flags as MLIR spells them: `reassoc`, `nnan`,
`ninf`, `nsz`, `arcp`, `contract`, `afn`, or `fast` (all of them), or `none`. `fast` lets
LLVM assume no NaN and no Inf: `max(x, nan)` may then drop the NaN. `reassoc,contract`
vectorizes reductions and fuses multiply-adds and keeps NaN/Inf semantics.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.arith import FastMathFlag, FastMathFlagsAttr
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError

FLAG_NAMES = tuple(flag.value for flag in FastMathFlag) + ("fast", "none")


def parse_flags(flags: str) -> FastMathFlagsAttr:
    """`flags` ("reassoc,contract", "fast", "none") as arith's attribute; PassError naming an
    unknown flag."""
    names = [name.strip() for name in flags.split(",") if name.strip()]
    unknown = [name for name in names if name not in FLAG_NAMES]
    if unknown or not names:
        raise PassError(
            f"set-fastmath: unknown fast-math flag {unknown[0] if unknown else flags!r}; "
            f"flags are {', '.join(FLAG_NAMES)}"
        )
    if "none" in names:
        if len(names) > 1:
            raise PassError("set-fastmath: 'none' cannot be combined with other flags")
        return FastMathFlagsAttr("none")
    if "fast" in names:
        return FastMathFlagsAttr("fast")
    return FastMathFlagsAttr([FastMathFlag(name) for name in names])


@dataclass(frozen=True)
class SetFastMathPass(ModulePass):
    """Put `flags` on every op that has a `fastmath` property."""

    name = "set-fastmath"

    flags: str = "fast"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        attr = parse_flags(self.flags)
        for inner in op.walk():
            if "fastmath" in inner.properties or _takes_fastmath(inner):
                inner.properties["fastmath"] = attr


def _takes_fastmath(op: object) -> bool:
    """Whether the op's definition has a `fastmath` property (unset on this op)."""
    definition = getattr(type(op), "get_irdl_definition", None)
    if definition is None:
        return False
    return "fastmath" in definition().properties
