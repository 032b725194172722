"""`shard-erase-annotations`: drop sharding constraints from a program that runs on one device.

On one device a `shard.shard` is the identity (it constrains only how a value would be laid
out over a grid), so a model written with constraints compiles for the CPU or GPU as if they
were not there, as `jax.jit` treats `with_sharding_constraint` on a single device. Every
`shard.shard` is replaced by its source, and the `shard.sharding` ops and `shard.grid` symbols nothing
uses any more are erased.

A per-device program (one that `shard-partition` made, with collectives) is not a one-device
program: the pass fails on a collective and says where such programs run.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError


@dataclass(frozen=True)
class ShardEraseAnnotationsPass(ModulePass):
    """Replace every shard.shard by its source and erase unused shard.sharding ops (one-device compilation)."""

    name = "shard-erase-annotations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not any(inner.name.startswith("shard.") for inner in op.walk()):
            return  # most programs: nothing to do, and no need to load the shard dialect
        from irgrad.dialects import shard

        for inner in list(op.walk()):
            if isinstance(inner, (*shard.COLLECTIVES, shard.ProcessLinearIndexOp)):
                raise PassError(
                    "makes this a per-device program, which runs on the simulated grid "
                    "(irgrad-run, irgrad.backends.spmd.run_partitioned), not on one device",
                    inner,
                )
        for inner in list(op.walk()):
            if isinstance(inner, shard.ShardOp):
                inner.result.replace_all_uses_with(inner.src)
                inner.detach()
                inner.erase()
        for inner in list(op.walk()):
            if isinstance(inner, shard.ShardingOp) and not inner.result.uses:
                inner.detach()
                inner.erase()
        # Grids nothing refers to any more go too: later stages admit only their own dialects.
        used = {ref for inner in op.walk() for ref in _grid_refs(inner)}
        for inner in list(op.ops):
            if isinstance(inner, shard.GridOp) and inner.sym_name.data not in used:
                inner.detach()
                inner.erase()


def _grid_refs(op: Operation) -> list[str]:
    grid = op.properties.get("grid")
    return [grid.root_reference.data] if isinstance(grid, SymbolRefAttr) else []
