"""The `mpi` dialect on the reference interpreter: its data movement as grid collectives.

A program after `convert-shard-to-mpi` still runs on every runtime a shard program runs on:
`mpi.alltoall` on a communicator of `grid_axes` is the shard dialect's all_to_all of its
leading dimension (split_axis = concat_axis = 0), and `mpi.allgather` the all_gather of the
input stacked along a new leading dimension, so the simulated grid's `GridCommunicator` and
the processes' `MpiGrid` (irgrad/backends/mpi) run them with their checks and counts.
A communicator is a `GridComm` value; `mpi.comm_rank` is this device's position in its group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Operation

from irgrad.backends.interpreter import collectives
from irgrad.backends.interpreter.errors import InterpreterError
from irgrad.backends.interpreter.shard import Collective, Device
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import mpi


@dataclass(frozen=True)
class GridComm:
    """A communicator value: the group over `axes` of a grid of `shape`."""

    shape: tuple[int, ...]
    axes: tuple[int, ...]

    def rank_of(self, device: int) -> int:
        coords = collectives.device_coords(self.shape)[device]
        return collectives.linear_index([self.shape[a] for a in self.axes], [coords[a] for a in self.axes])


def comm_of(op: mpi.GridCommOp | mpi.CommWorldOp, grid: tuple[int, ...]) -> GridComm:
    if isinstance(op, mpi.GridCommOp):
        return GridComm(op.shape, op.axes)
    return GridComm(grid, tuple(range(len(grid))))


def data_request(op: Operation, comm: GridComm, value: np.ndarray) -> tuple[Collective, np.ndarray]:
    """The grid collective an mpi data-movement op is, and the value it exchanges."""
    axes = comm.axes
    if isinstance(op, mpi.AllToAllOp):
        return Collective(
            "all_to_all", axes, (("split_axis", 0), ("concat_axis", 0)),
            lambda v, g: collectives.all_to_all(v, g, axes, 0, 0),
        ), value
    if isinstance(op, mpi.AllGatherOp):
        return Collective(
            "all_gather", axes, (("gather_axis", 0),), lambda v, g: collectives.all_gather(v, g, axes, 0)
        ), np.asarray(value)[None]
    raise AssertionError(f"{op.name} moves no data")


@register_impls
class MpiFunctions(InterpreterFunctions):
    """The mpi ops. `device` is None on a plain single-device run (a group of one)."""

    def __init__(self, device: Device | None = None) -> None:
        self.device = device

    def _grid(self, comm: GridComm, op: Operation) -> None:
        if self.device is not None and comm.shape != self.device.grid:
            raise InterpreterError(f"uses a communicator of grid {list(comm.shape)}, but the run has grid {list(self.device.grid)}", op)

    @numpy_impl(mpi.CommWorldOp)
    def run_comm_world(self, interpreter: Interpreter, op: mpi.CommWorldOp, args: PythonValues):
        return (comm_of(op, self.device.grid if self.device else (1,)),)

    @numpy_impl(mpi.GridCommOp)
    def run_grid_comm(self, interpreter: Interpreter, op: mpi.GridCommOp, args: PythonValues):
        comm = comm_of(op, ())
        self._grid(comm, op)
        return (comm,)

    @numpy_impl(mpi.CommRankOp)
    def run_comm_rank(self, interpreter: Interpreter, op: mpi.CommRankOp, args: PythonValues):
        comm: GridComm = args[0]
        return (np.int32(comm.rank_of(self.device.index) if self.device else 0),)

    def _move(self, op: Operation, x: np.ndarray, comm: GridComm) -> tuple[np.ndarray]:
        request, value = data_request(op, comm, x)
        if self.device is None:
            if np.prod([comm.shape[a] for a in comm.axes]) > 1:
                raise InterpreterError("moves data between processes: run it on a grid of devices", op)
            return (request.run([value], comm.shape)[0],)
        return (self.device.communicator.exchange(self.device.index, request, value, op),)

    @numpy_impl(mpi.AllToAllOp)
    def run_alltoall(self, interpreter: Interpreter, op: mpi.AllToAllOp, args: PythonValues):
        return self._move(op, args[0], args[1])

    @numpy_impl(mpi.AllGatherOp)
    def run_allgather(self, interpreter: Interpreter, op: mpi.AllGatherOp, args: PythonValues):
        return self._move(op, args[0], args[1])
