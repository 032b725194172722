"""`DTensor`: a global tensor held as one numpy array per simulated device.

Eager and simple on purpose: the local arrays of every device live in one process, and a
redistribution runs the shard dialect's collectives (irgrad/backends/interpreter/collectives.py,
the same functions the SPMD runtime uses) on all of them at once. It gives compiled distributed
programs a reference to compare against, and tests and benchmarks a communication count: every
collective a redistribution runs is recorded with its bytes (`bytes_sent`, NCCL's ring
accounting), on the result's `comms` and in any active `record_comms()` block.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irgrad.backends.interpreter import collectives
from irgrad.dialects.shard import ReductionKind, Sharding
from irgrad.distributed.placements import (
    Mesh,
    Placement,
    check_divisible,
    normalize_placements,
    placements_to_sharding,
)
from irgrad.transforms.shard.reshard import Step, plan_redistribute


@dataclass(frozen=True)
class Comm:
    """One collective a redistribution ran: its kind, mesh axes, and the bytes each device
    sent (`bytes`; `total_bytes` for the whole mesh)."""

    kind: str
    mesh_axes: tuple[int, ...]
    bytes: int
    num_devices: int
    detail: str = ""

    @property
    def total_bytes(self) -> int:
        return self.bytes * self.num_devices


_recorders: list[list[Comm]] = []


@contextlib.contextmanager
def record_comms() -> Iterator[list[Comm]]:
    """`with record_comms() as log:` collects every collective redistributions run in the block
    (blocks nest: an outer block sees the inner block's collectives too)."""
    log: list[Comm] = []
    _recorders.append(log)
    try:
        yield log
    finally:
        _recorders.remove(log)


def identity_of(reduce_op: str | ReductionKind, dtype: np.dtype) -> Any:
    """The reduction's identity in `dtype`: what the non-holding members of a Partial group hold."""
    op = ReductionKind(reduce_op) if isinstance(reduce_op, str) else reduce_op
    dtype = np.dtype(dtype)
    if op == ReductionKind.SUM:
        return dtype.type(0)
    if op not in (ReductionKind.MAX, ReductionKind.MIN):
        raise ValueError(f"no Partial identity for reduction '{op.value}'")
    low = op == ReductionKind.MAX
    if dtype == np.bool_:
        return np.bool_(not low)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return dtype.type(info.min if low else info.max)
    return dtype.type(-np.inf if low else np.inf)


def _local_block(
    mesh: Mesh, sharding: Sharding, shape: Sequence[int], coords: Sequence[int]
) -> tuple[slice, ...]:
    """The slice of the global tensor device `coords` holds: per dimension, the chunk whose
    index is row-major over the device's coordinates on the dimension's mesh axes."""
    out = []
    for n, axes in zip(shape, sharding.split):
        index, chunks = 0, 1
        for a in axes:
            index = index * mesh.shape[a] + coords[a]
            chunks *= mesh.shape[a]
        size = n // chunks
        out.append(slice(index * size, (index + 1) * size))
    return tuple(out)


class DTensor:
    """A tensor of global `shape` and `dtype` laid out on `mesh` by `placements` (one per mesh
    axis); `local_arrays[i]` is device i's array (devices row-major over the mesh)."""

    def __init__(
        self,
        local_arrays: Sequence[np.ndarray],
        mesh: Mesh,
        placements: Sequence[Placement],
        shape: Sequence[int],
        comms: Sequence[Comm] = (),
    ):
        self.mesh = mesh
        self.shape = tuple(int(n) for n in shape)
        self.placements = normalize_placements(placements, len(self.shape), mesh, self.shape)
        check_divisible(self.placements, mesh, self.shape)
        arrays = [np.asarray(a) for a in local_arrays]
        if len(arrays) != mesh.size:
            raise ValueError(f"DTensor: {len(arrays)} local arrays for {mesh!r} of {mesh.size} devices")
        want = self.sharding.local_shape(self.shape, mesh.shape)
        for i, a in enumerate(arrays):
            if a.shape != want or a.dtype != arrays[0].dtype:
                raise ValueError(
                    f"DTensor: device {i} holds {a.dtype}{list(a.shape)}; {self.placements} of shape "
                    f"{self.shape} need {arrays[0].dtype}{list(want)} on every device"
                )
        self.local_arrays = arrays
        self.comms = tuple(comms)  # the collectives that made this DTensor (see redistribute)

    @staticmethod
    def from_local(
        local_arrays: Sequence[np.ndarray], mesh: Mesh, placements: Sequence[Placement]
    ) -> DTensor:
        """A DTensor from every device's array; the global shape follows from the placements."""
        first = np.asarray(local_arrays[0])
        sharding = placements_to_sharding(placements, first.ndim)
        shape = [n * math.prod(mesh.shape[a] for a in axes) for n, axes in zip(first.shape, sharding.split)]
        return DTensor(local_arrays, mesh, placements, shape)

    @property
    def dtype(self) -> np.dtype:
        return self.local_arrays[0].dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def sharding(self) -> Sharding:
        """The shard dialect's view of the placements."""
        return placements_to_sharding(self.placements, self.ndim)

    @property
    def local_shape(self) -> tuple[int, ...]:
        return self.local_arrays[0].shape

    def to_local(self, device: int | Sequence[int]) -> np.ndarray:
        """The array of one device, by index (row-major) or by mesh coordinates."""
        if isinstance(device, (int, np.integer)):
            if not -self.mesh.size <= device < self.mesh.size:
                raise IndexError(f"device {device} is out of range for {self.mesh!r}")
            return self.local_arrays[device]
        coords = tuple(device)
        if len(coords) != self.mesh.ndim or any(not 0 <= c < n for c, n in zip(coords, self.mesh.shape)):
            raise IndexError(f"device coordinates {coords} are out of range for {self.mesh!r}")
        return self.local_arrays[collectives.linear_index(self.mesh.shape, coords)]

    def full_tensor(self) -> np.ndarray:
        """The global value: Partial terms combined, shards put in place. A read-out of the
        simulation: it records no collectives."""
        sharding = self.sharding
        arrays = self.local_arrays
        if sharding.partial:
            arrays = collectives.all_reduce(arrays, self.mesh.shape, sharding.partial, sharding.reduction)
        out = np.empty(self.shape, self.dtype)
        for coords, a in zip(self.mesh.devices, arrays):
            out[_local_block(self.mesh, sharding, self.shape, coords)] = a
        return out

    def redistribute(self, placements: Sequence[Placement]) -> DTensor:
        """The same global tensor with other placements, moved by collectives (see
        irgrad/transforms/shard/reshard.py for the choice); their record is the result's `comms`."""
        placements = normalize_placements(placements, self.ndim, self.mesh, self.shape)
        check_divisible(placements, self.mesh, self.shape)
        target = placements_to_sharding(placements, self.ndim)
        arrays = list(self.local_arrays)
        comms: list[Comm] = []
        for step in plan_redistribute(self.sharding, target, self.mesh.shape):
            arrays, comm = self._run(step, arrays)
            if comm is not None:
                comms.append(comm)
                for log in _recorders:
                    log.append(comm)
        return DTensor(arrays, self.mesh, placements, self.shape, comms)

    def _run(self, step: Step, arrays: list[np.ndarray]) -> tuple[list[np.ndarray], Comm | None]:
        grid, axes = self.mesh.shape, [step.mesh_axis]
        if step.kind == "partial":
            assert step.reduction is not None
            fill = identity_of(step.reduction, self.dtype)
            return [
                a if coords[step.mesh_axis] == 0 else np.full_like(a, fill)
                for coords, a in zip(self.mesh.devices, arrays)
            ], None
        if step.kind == "all_gather":
            out, detail = collectives.all_gather(arrays, grid, axes, step.dim), f"dim {step.dim}"
        elif step.kind == "all_slice":
            out, detail = collectives.all_slice(arrays, grid, axes, step.dim), f"dim {step.dim}"
        elif step.kind == "all_reduce":
            out, detail = collectives.all_reduce(arrays, grid, axes, step.reduction), step.reduction.value
        elif step.kind == "reduce_scatter":
            out = collectives.reduce_scatter(arrays, grid, axes, step.dim, step.reduction)
            detail = f"{step.reduction.value}, dim {step.dim}"
        elif step.kind == "all_to_all":
            out = collectives.all_to_all(arrays, grid, axes, step.dim, step.concat_dim)
            detail = f"split dim {step.dim}, concat dim {step.concat_dim}"
        else:
            raise AssertionError(step.kind)
        sent = collectives.bytes_sent(step.kind, arrays[0].nbytes, grid[step.mesh_axis])
        return out, Comm(step.kind, tuple(axes), sent, self.mesh.size, detail)

    def __repr__(self) -> str:
        return (
            f"DTensor(shape={self.shape}, dtype={self.dtype}, placements={self.placements}, "
            f"mesh={self.mesh!r})"
        )


def distribute_tensor(x: Any, mesh: Mesh, placements: Sequence[Placement]) -> DTensor:
    """`x` (a global numpy array) laid out on `mesh`: each device gets its block; along Partial
    axes, member 0 of each group holds the block and the others the reduction's identity
    (zeros for sum, -inf / +inf or the dtype's min / max for max / min)."""
    x = np.asarray(x)
    placements = normalize_placements(placements, x.ndim, mesh, x.shape)
    check_divisible(placements, mesh, x.shape)
    sharding = placements_to_sharding(placements, x.ndim)
    arrays = []
    for coords in mesh.devices:
        block = x[_local_block(mesh, sharding, x.shape, coords)]
        if any(coords[a] for a in sharding.partial):
            block = np.full_like(block, identity_of(sharding.reduction, x.dtype))
        arrays.append(block.copy())
    return DTensor(arrays, mesh, placements, x.shape)


__all__ = [
    "Comm",
    "DTensor",
    "distribute_tensor",
    "identity_of",
    "record_comms",
]
