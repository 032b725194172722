"""Global arrays whose chunks live on the job's processes: per-process data in and out.

    x = ig.distributed.from_local(my_rows, mesh, [Shard(0)])   # DTensor's name
    x = ig.distributed.make_array_from_process_local_data(mesh, [Shard(0)], my_rows)  # JAX's
    y = step(x)                  # distributed.jit: each process runs its device's program
    y.to_local()                 # this process's chunk
    y.full_tensor()              # the whole array, on every process (a collective)

A process plays one device of the mesh (device i is process i, row-major over the mesh). A
`ShardedArray` knows the global shape and placements and holds this process's chunk only; its
`np.asarray` works when the array is replicated (every process holds all of it) and is an error
otherwise, since the rest is elsewhere. In a 1-process job the chunk is the whole array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.backends.interpreter import collectives
from irgrad.dialects import shard
from irgrad.distributed.placements import Mesh, Partial, Placement, placements_to_sharding
from irgrad.distributed.process import process_group, process_index


def chunk_slices(split: Sequence[Sequence[int]], grid: Sequence[int], device: int, local: Sequence[int]) -> tuple[slice, ...]:
    """Where device `device`'s chunk (of shape `local`) sits in the global array."""
    coords = collectives.device_coords(grid)[device]
    slices = []
    for d, n in enumerate(local):
        axes = split[d] if d < len(split) else ()
        position = collectives.linear_index([grid[a] for a in axes], [coords[a] for a in axes])
        slices.append(slice(position * n, (position + 1) * n))
    return tuple(slices)


def _split_of(placements: Sequence[Placement], ndim: int, where: str) -> tuple[tuple[int, ...], ...]:
    if any(isinstance(p, Partial) for p in placements):
        raise ValueError(f"{where}: Partial placements are not supported for process-local data")
    return placements_to_sharding(placements, ndim).split


class ShardedArray:
    """A global array of `shape`, laid out on `mesh` by `placements`; this process holds
    `to_local()`."""

    def __init__(self, local: np.ndarray, mesh: Mesh, placements: Sequence[Placement], shape: Sequence[int]):
        self._local = local
        self.mesh = mesh
        self.placements = tuple(placements)
        self.shape = tuple(int(n) for n in shape)
        self.split = _split_of(self.placements, len(self.shape), "ShardedArray")

    @property
    def dtype(self) -> np.dtype:
        return self._local.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_replicated(self) -> bool:
        return not any(self.split)

    def to_local(self) -> np.ndarray:
        return self._local

    def full_tensor(self) -> np.ndarray:
        """The global array on every process: an all-gather, so every process must call it."""
        group = process_group()
        if self.is_replicated or group is None:
            return self._local
        parts = group.gather_all(self._local, "ShardedArray.full_tensor")
        out = np.empty(self.shape, self.dtype)
        for device, part in enumerate(parts):
            out[chunk_slices(self.split, self.mesh.shape, device, part.shape)] = part
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if not self.is_replicated and process_group() is not None:
            raise TypeError(
                f"this array of shape {self.shape} is split {list(self.placements)} over "
                f"{self.mesh.size} processes; this process holds only its chunk: use .to_local() "
                "or .full_tensor()"
            )
        return self._local if dtype is None else self._local.astype(dtype)

    def __float__(self) -> float:
        return float(np.asarray(self))

    def __repr__(self) -> str:
        return (
            f"ShardedArray(shape={self.shape}, dtype={self.dtype}, placements={list(self.placements)}, "
            f"process {process_index()} holds {tuple(self._local.shape)})"
        )


def from_local(local: Any, mesh: Mesh, placements: Sequence[Placement]) -> ShardedArray:
    """The global array whose chunk on this process is `local` (DTensor.from_local): the
    global shape is the local one times the number of chunks along each split dimension."""
    local = np.asarray(local)
    split = _split_of(placements, local.ndim, "from_local")
    shape = [n * shard.group_size(mesh.shape, axes) for n, axes in zip(local.shape, split)]
    return ShardedArray(local, mesh, placements, shape)


def make_array_from_process_local_data(
    mesh: Mesh, placements: Sequence[Placement], local_data: Any, global_shape: Sequence[int] | None = None
) -> ShardedArray:
    """JAX's name for `from_local` (the sharding spelled as mesh and placements); `global_shape`,
    when given, is checked against the local data."""
    array = from_local(local_data, mesh, placements)
    if global_shape is not None and tuple(global_shape) != array.shape:
        raise ValueError(
            f"make_array_from_process_local_data: local data of shape {np.shape(local_data)} split "
            f"{list(placements)} over mesh {mesh.shape} makes a global shape {array.shape}, not "
            f"{tuple(global_shape)}"
        )
    return array


def local_chunk(value: Any, split: Sequence[Sequence[int]], grid: Sequence[int], device: int, what: str) -> np.ndarray:
    """This device's chunk of a global numpy `value` (every process passes the same one)."""
    value = np.asarray(value)
    chunks = [shard.group_size(grid, axes) for axes in split] + [1] * (value.ndim - len(split))
    for d, (n, k) in enumerate(zip(value.shape, chunks)):
        if n % k:
            raise ValueError(f"{what}: dimension {d} of shape {value.shape} does not split into {k} chunks")
    local = [n // k for n, k in zip(value.shape, chunks)]
    return np.asarray(value[chunk_slices(split, grid, device, local)])


def global_shape(local: Sequence[int], split: Sequence[Sequence[int]], grid: Sequence[int]) -> list[int]:
    return [n * (shard.group_size(grid, split[d]) if d < len(split) else 1) for d, n in enumerate(local)]


__all__ = ["ShardedArray", "from_local", "make_array_from_process_local_data"]
