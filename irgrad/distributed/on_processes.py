"""`distributed.jit` in a multi-process job: this process runs its own device's program.

The per-device program is the one the simulated grid runs (the "mpi" stage): compiled whole for
this process (irgrad/backends/mpi/compiled.py, its collectives calls into the MPI library), or on
the interpreter with its collectives through `MpiGrid`; reductions are IR in the simulated grid's
order, so results are bit-identical to it.

Arguments may be `ShardedArray`s (this process's chunk, from `from_local`) or global numpy arrays
(every process passes the same array and keeps its chunk, by the function's
`shard.arg_split_axes`). Results are `ShardedArray`s: this process's chunk of each, laid out by
`shard.result_split_axes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from irgrad.distributed.placements import Mesh, sharding_to_placements
from irgrad.distributed.sharded_array import ShardedArray, global_shape, local_chunk
from irgrad.dialects.shard import Sharding
from irgrad.ir_numpy import numpy_dtype


def _local_argument(
    index: int, leaf: Any, t: Any, split: Sequence[Sequence[int]], mesh: Mesh, rank: int, name: str
) -> Any:
    what = f"distributed.jit({name}): argument leaf #{index}"
    if isinstance(leaf, ShardedArray):
        if tuple(leaf.split) + ((),) * (leaf.ndim - len(leaf.split)) != tuple(split):
            expected = sharding_to_placements(Sharding(tuple(split)), mesh)
            raise ValueError(
                f"{what} is a ShardedArray placed {list(leaf.placements)}, but the program takes it "
                f"placed {list(expected)}"
            )
        local = leaf.to_local()
    elif isinstance(t, TensorType):
        local = local_chunk(leaf, split, mesh.shape, rank, what)
    else:
        return leaf
    if isinstance(t, TensorType):
        shape, dtype = tuple(t.get_shape()), numpy_dtype(t.get_element_type())
        if local.shape != shape or local.dtype != dtype:
            raise ValueError(
                f"{what}: this process's chunk has shape {local.shape} and dtype {local.dtype}; the "
                f"per-device program takes {shape} {dtype}"
            )
    return np.asarray(local, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)


def run_on_processes(
    module: ModuleOp, entry: str, mesh: Mesh, leaves: Sequence[Any], group: Any, program: Any, fingerprint: str
) -> tuple[list[ShardedArray], Any]:
    """Run this process's device of `@entry` (`program`, a RankProgram, or the interpreter when None);
    returns its results as ShardedArrays and its communication counts. `fingerprint` (of the
    per-device program) must be every process's: checked at the first collective."""
    from irgrad.backends.interpreter.runner import lookup_function
    from irgrad.backends.mpi import MpiGrid
    from irgrad.backends.spmd import grid_of_function, run_device, split_axes

    func = lookup_function(module, entry)
    found = grid_of_function(module, func)
    assert found is not None, "shard-partition gives the entry function its grid"
    grid = found[1]
    if tuple(grid) != tuple(mesh.shape) or mesh.size != group.size:
        raise ValueError(
            f"distributed.jit({entry}): the mesh {mesh.shape} has {mesh.size} devices, the job "
            f"{group.size} processes: each process plays one device"
        )
    inputs, outputs = func.function_type.inputs.data, func.function_type.outputs.data
    arg_split = split_axes(func, "shard.arg_split_axes", inputs, grid)
    result_split = split_axes(func, "shard.result_split_axes", outputs, grid)
    if len(leaves) != len(inputs):
        raise ValueError(f"distributed.jit({entry}): {len(inputs)} array arguments, got {len(leaves)}")
    rank = group.rank
    args = [
        _local_argument(i, leaf, t, split, mesh, rank, entry)
        for i, (leaf, t, split) in enumerate(zip(leaves, inputs, arg_split))
    ]
    signature = ", ".join(
        f"{np.dtype(leaf.dtype)}{list(np.shape(leaf) if not isinstance(leaf, ShardedArray) else leaf.shape)}"
        for leaf in leaves
    )
    name = f"@{entry}({signature}) #{fingerprint}"
    if program is not None:
        values, stats = program.run(group, args, name)
    else:
        communicator = MpiGrid(group, grid, name)
        values = run_device(module, entry, rank, grid, args, communicator)
        stats = communicator.stats
    results = []
    for value, split in zip(values, result_split):
        local = np.asarray(value)
        placements = sharding_to_placements(Sharding(tuple(split)), mesh)
        results.append(ShardedArray(local, mesh, placements, global_shape(local.shape, split, grid)))
    return results, stats
