"""`with_sharding_constraint`: placements in traced code, as `shard.shard` ops.

A program is written for global tensors (GSPMD); a constraint only says where a value should
live, and `shard-partition` turns the annotated program into the per-device one, with the
collectives the placements imply. So on a concrete array the constraint is the identity, and in
a trace it is `shard.sharding` + `shard.shard` on the mesh's `shard.grid`:

    shard.grid @mesh(shape = 4)
    ...
    %s = shard.sharding @mesh split_axes = [[0], []] : !shard.sharding
    %y = shard.shard %x to %s : tensor<8x3xf32>

Its derivative is the same constraint on the cotangent (the autodiff rule of shard.shard).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr, i64

from irgrad.dialects.shard import GridOp, grid_shape, make_sharding_op, shard_value
from irgrad.distributed.placements import (
    Mesh,
    Partial,
    Placement,
    check_divisible,
    normalize_placements,
    placements_to_sharding,
)
from irgrad.numpy.support import lift
from irgrad.tracing.errors import user_site
from irgrad.tracing.tracer import Tracer, current_frame


def with_sharding_constraint(x: Any, mesh: Mesh, placements: Sequence[Placement]) -> Any:
    """`x`, constrained to `placements` on `mesh` (jax.lax.with_sharding_constraint).

    Eagerly (no trace active, x not traced) it returns `x` itself: the global value does not
    change. Partial placements are refused: a constraint says where a finished value lives,
    and a pending reduction is something an op produces, not a layout to ask for.
    """
    frame = current_frame()
    if isinstance(x, Tracer) and frame is None:
        raise RuntimeError(f"{x!r} is used outside the trace that created it")
    shape = x.shape if isinstance(x, Tracer) else np.shape(x)
    placements = normalize_placements(placements, len(shape), mesh, shape)
    if any(isinstance(p, Partial) for p in placements):
        raise ValueError(
            f"with_sharding_constraint: placements {placements} on {mesh!r}: a sharding constraint "
            f"cannot be Partial{user_site()}"
        )
    check_divisible(placements, mesh, shape)
    if frame is None:
        return x
    t = lift(x)
    grid_of(frame.module, mesh)
    sharding = frame.emit(make_sharding_op(mesh.name, placements_to_sharding(placements, t.ndim).split))
    op = frame.emit(shard_value(t.value, sharding.results[0]))
    return frame.wrap(op.results[0])


def grid_of(module: ModuleOp, mesh: Mesh) -> GridOp:
    """The module's `shard.grid @<mesh.name>`, inserted at its start if it has none."""
    block = module.body.block
    for op in block.ops:
        sym = op.properties.get("sym_name")
        if not isinstance(sym, StringAttr) or sym.data != mesh.name:
            continue
        if not isinstance(op, GridOp):
            raise ValueError(
                f"with_sharding_constraint: {mesh!r} is named @{mesh.name}, but the module's "
                f"@{mesh.name} is a {op.name}"
            )
        if grid_shape(op) != mesh.shape:
            have = "x".join(map(str, grid_shape(op)))
            raise ValueError(
                f"with_sharding_constraint: {mesh!r} is named @{mesh.name}, but this program already has "
                f"grid @{mesh.name} of shape {have}; give different meshes different names"
            )
        return op
    shape = DenseArrayBase.from_list(i64, list(mesh.shape))
    grid = GridOp.build(properties={"sym_name": StringAttr(mesh.name), "shape": shape})
    if block.first_op is None:
        block.add_op(grid)
    else:
        block.insert_op_before(grid, block.first_op)
    return grid
