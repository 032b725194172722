"""The shard dialect's collectives on a whole simulated grid: one numpy array per device.

`values[i]` is device i's array, devices numbered row-major over the grid shape. Each function
returns every device's result, so the SPMD runtime (irgrad/backends/spmd.py) and eager
distributed tensors (irgrad/distributed/dtensor.py) share one definition of what a collective does.

Device groups are MLIR's (irgrad/dialects/shard.py): the devices that share their coordinates
outside `grid_axes`, ordered row-major over `grid_axes` in the listed order. Reductions combine
a group's arrays in group order, left to right, so every member gets the bit-identical result
and a run is reproducible.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import numpy as np

from xdsl.dialects.shard import ReductionKind

Values = Sequence[np.ndarray]


def device_coords(grid: Sequence[int]) -> list[tuple[int, ...]]:
    """Every device's coordinates, in device (row-major) order."""
    return list(itertools.product(*(range(n) for n in grid)))


def linear_index(grid: Sequence[int], coords: Sequence[int]) -> int:
    return int(np.ravel_multi_index(tuple(coords), tuple(grid))) if grid else 0


def groups(grid: Sequence[int], grid_axes: Sequence[int]) -> list[list[int]]:
    """The device groups of a collective over `grid_axes`: lists of device indices, each in
    group order (row-major over `grid_axes` as listed)."""
    others = [a for a in range(len(grid)) if a not in grid_axes]
    result: list[list[int]] = []
    for fixed in itertools.product(*(range(grid[a]) for a in others)):
        members = []
        for inner in itertools.product(*(range(grid[a]) for a in grid_axes)):
            coords = [0] * len(grid)
            for a, c in zip(others, fixed):
                coords[a] = c
            for a, c in zip(grid_axes, inner):
                coords[a] = c
            members.append(linear_index(grid, coords))
        result.append(members)
    return result


def combine(arrays: Sequence[np.ndarray], kind: ReductionKind) -> np.ndarray:
    """The reduction of `arrays` in list order, left to right, element by element (so any
    slice of the result is the reduction of the same slices: the MPI runtime reduces chunks)."""
    ops = {
        ReductionKind.SUM: np.add,
        ReductionKind.MAX: np.maximum,
        ReductionKind.MIN: np.minimum,
        ReductionKind.PRODUCT: np.multiply,
        ReductionKind.BITWISE_AND: np.bitwise_and,
        ReductionKind.BITWISE_OR: np.bitwise_or,
        ReductionKind.BITWISE_XOR: np.bitwise_xor,
    }
    if kind == ReductionKind.AVERAGE:
        total = functools.reduce(np.add, arrays)
        return (total / len(arrays)).astype(arrays[0].dtype)
    if kind not in ops:
        raise NotImplementedError(f"reduction '{kind.value}' is not supported")
    return np.asarray(functools.reduce(ops[kind], arrays))


def _per_group(values: Values, grid: Sequence[int], grid_axes: Sequence[int], fn) -> list[np.ndarray]:
    if len(values) != max(1, int(np.prod(grid))):
        raise ValueError(f"{len(values)} arrays for a grid of shape {tuple(grid)}")
    out: list[np.ndarray | None] = [None] * len(values)
    for members in groups(grid, grid_axes):
        for member, result in zip(members, fn([values[m] for m in members])):
            out[member] = result
    return out  # type: ignore[return-value]


def all_reduce(values: Values, grid: Sequence[int], grid_axes: Sequence[int], kind=ReductionKind.SUM):
    def fn(group):
        total = combine(group, kind)
        return [total.copy() for _ in group]

    return _per_group(values, grid, grid_axes, fn)


def all_gather(values: Values, grid: Sequence[int], grid_axes: Sequence[int], axis: int):
    def fn(group):
        whole = np.concatenate(group, axis=axis)
        return [whole.copy() for _ in group]

    return _per_group(values, grid, grid_axes, fn)


def all_slice(values: Values, grid: Sequence[int], grid_axes: Sequence[int], axis: int):
    def fn(group):
        return [np.split(x, len(group), axis=axis)[i].copy() for i, x in enumerate(group)]

    return _per_group(values, grid, grid_axes, fn)


def reduce_scatter(
    values: Values, grid: Sequence[int], grid_axes: Sequence[int], axis: int, kind=ReductionKind.SUM
):
    def fn(group):
        total = combine(group, kind)
        return [c.copy() for c in np.split(total, len(group), axis=axis)]

    return _per_group(values, grid, grid_axes, fn)


def all_to_all(
    values: Values, grid: Sequence[int], grid_axes: Sequence[int], split_axis: int, concat_axis: int
):
    def fn(group):
        chunks = [np.split(x, len(group), axis=split_axis) for x in group]
        return [np.concatenate([c[j] for c in chunks], axis=concat_axis) for j in range(len(group))]

    return _per_group(values, grid, grid_axes, fn)


def bytes_sent(kind: str, local_nbytes: int, group: int) -> int:
    """Bytes one device sends in a ring implementation of the collective on `local_nbytes` of
    input (NCCL's accounting): what the communication counters in the SPMD runtime report."""
    if group <= 1:
        return 0
    if kind == "all_reduce":
        return 2 * (group - 1) * local_nbytes // group
    if kind == "all_gather":
        return (group - 1) * local_nbytes
    if kind in ("reduce_scatter", "all_to_all"):
        return (group - 1) * local_nbytes // group
    if kind == "all_slice":
        return 0
    raise ValueError(kind)
