"""The `shard` dialect on the reference interpreter: annotations, and collectives that need a grid.

`shard.sharding` and `shard.shard` describe a global program, so on one interpreter they are an
opaque value and the identity. A collective only means something in a per-device (SPMD) program
running on every device of a grid at once: each device's interpreter gets a `Device` (its index,
the grid shape, a `Communicator`), and the collective hands its input to the communicator, which
waits for the whole grid, computes every device's result with `collectives.py` and gives each its
own. irgrad/backends/spmd.py provides the communicator and the threads.

Without a `Device` (a plain `run_function`), a collective on a grid of one device is still
computed (it is an identity), but on a bigger grid it is an error: the program is one device's
part of a computation, and its result alone would be silently wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Operation

from irgrad.backends.interpreter import collectives
from irgrad.backends.interpreter.errors import InterpreterError
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import shard


@dataclass(frozen=True)
class Collective:
    """One device's call of a collective: what every device of the grid must agree on
    (`kind`, `grid_axes`, `params`), and how to compute the whole grid's results (`run`)."""

    kind: str
    grid_axes: tuple[int, ...]
    params: tuple[tuple[str, Any], ...]
    run: Callable[[Sequence[np.ndarray], Sequence[int]], list[np.ndarray]] = field(compare=False)

    def describe(self) -> str:
        """`shard.all_gather grid_axes = [0] gather_axis = 1`, for error messages."""
        params = "".join(f" {name} = {value}" for name, value in self.params)
        return f"shard.{self.kind} grid_axes = {list(self.grid_axes)}{params}"


class Communicator(Protocol):
    """Where the devices of one SPMD run meet (irgrad/backends/spmd.py implements it)."""

    def exchange(self, device: int, request: Collective, value: np.ndarray, op: Operation) -> np.ndarray:
        """Deposit `value`, wait for every device, return this device's result (or raise,
        located at `op`, when the grid failed or the devices disagree)."""
        ...


@dataclass(frozen=True)
class Device:
    """The device an interpreter plays in an SPMD run."""

    index: int
    grid: tuple[int, ...]
    communicator: Communicator

    @property
    def coords(self) -> tuple[int, ...]:
        return collectives.device_coords(self.grid)[self.index]


def _request(op: Operation) -> Collective:
    """The `Collective` a collective op asks for."""
    axes = tuple(op.grid_axes.get_values())  # type: ignore[attr-defined]
    if isinstance(op, shard.AllReduceOp):
        kind = op.reduction.data
        return Collective(
            "all_reduce",
            axes,
            (("reduction", kind.value),),
            lambda v, g: collectives.all_reduce(v, g, axes, kind),
        )
    if isinstance(op, shard.AllGatherOp):
        axis = op.gather_axis.value.data
        return Collective(
            "all_gather",
            axes,
            (("gather_axis", axis),),
            lambda v, g: collectives.all_gather(v, g, axes, axis),
        )
    if isinstance(op, shard.AllSliceOp):
        axis = op.slice_axis.value.data
        return Collective(
            "all_slice", axes, (("slice_axis", axis),), lambda v, g: collectives.all_slice(v, g, axes, axis)
        )
    if isinstance(op, shard.ReduceScatterOp):
        axis, kind = op.scatter_axis.value.data, op.reduction.data
        return Collective(
            "reduce_scatter",
            axes,
            (("scatter_axis", axis), ("reduction", kind.value)),
            lambda v, g: collectives.reduce_scatter(v, g, axes, axis, kind),
        )
    if isinstance(op, shard.AllToAllOp):
        split, concat = op.split_axis.value.data, op.concat_axis.value.data
        return Collective(
            "all_to_all",
            axes,
            (("split_axis", split), ("concat_axis", concat)),
            lambda v, g: collectives.all_to_all(v, g, axes, split, concat),
        )
    raise AssertionError(f"{op.name} is not a collective the interpreter runs")


def _grid_of(op: Operation) -> tuple[str, tuple[int, ...]]:
    ref = op.grid  # type: ignore[attr-defined]
    try:
        grid = shard.lookup_grid(op, ref)
    except Exception as err:  # the verifier normally rules this out
        raise InterpreterError(str(err), op) from None
    return ref.root_reference.data, shard.grid_shape(grid)


def _spell(grid: Sequence[int]) -> str:
    return "x".join(map(str, grid))


@register_impls
class ShardFunctions(InterpreterFunctions):
    """The shard ops. `device` is None on a plain single-device run."""

    def __init__(self, device: Device | None = None) -> None:
        self.device = device

    def _check_grid(self, op: Operation) -> tuple[int, ...]:
        """A per-device program runs only on the grid its ops name; returns the grid's shape."""
        name, shape = _grid_of(op)
        if self.device is None:
            if int(np.prod(shape)) > 1:
                raise InterpreterError(
                    f"runs on grid @{name} ({_spell(shape)}): this is a per-device (SPMD) program, "
                    "each device's part of one computation; run it on the simulated grid with "
                    "irgrad.backends.spmd.run_partitioned (global inputs) or run_spmd (per-device "
                    "inputs), or irgrad-run, not on one interpreter",
                    op,
                )
        elif shape != self.device.grid:
            raise InterpreterError(
                f"runs on grid @{name} ({_spell(shape)}), but the SPMD run simulates a grid "
                f"{_spell(self.device.grid)}",
                op,
            )
        return shape

    def _collective(self, op: Operation, x: np.ndarray) -> tuple[np.ndarray]:
        shape = self._check_grid(op)
        request = _request(op)
        if self.device is None:  # a grid of one device
            return (request.run([x], shape)[0],)
        return (self.device.communicator.exchange(self.device.index, request, x, op),)

    @numpy_impl(shard.ShardingOp)
    def run_sharding(self, interpreter: Interpreter, op: shard.ShardingOp, args: PythonValues):
        return (shard.sharding_of(op),)

    @numpy_impl(shard.ShardOp)
    def run_shard(self, interpreter: Interpreter, op: shard.ShardOp, args: PythonValues):
        return (args[0],)

    @numpy_impl(shard.ProcessLinearIndexOp)
    def run_process_linear_index(
        self, interpreter: Interpreter, op: shard.ProcessLinearIndexOp, args: PythonValues
    ):
        self._check_grid(op)
        return (0 if self.device is None else self.device.index,)

    @numpy_impl(shard.AllReduceOp)
    def run_all_reduce(self, interpreter: Interpreter, op: shard.AllReduceOp, args: PythonValues):
        return self._collective(op, args[0])

    @numpy_impl(shard.AllGatherOp)
    def run_all_gather(self, interpreter: Interpreter, op: shard.AllGatherOp, args: PythonValues):
        return self._collective(op, args[0])

    @numpy_impl(shard.AllSliceOp)
    def run_all_slice(self, interpreter: Interpreter, op: shard.AllSliceOp, args: PythonValues):
        return self._collective(op, args[0])

    @numpy_impl(shard.ReduceScatterOp)
    def run_reduce_scatter(
        self, interpreter: Interpreter, op: shard.ReduceScatterOp, args: PythonValues
    ):
        return self._collective(op, args[0])

    @numpy_impl(shard.AllToAllOp)
    def run_all_to_all(self, interpreter: Interpreter, op: shard.AllToAllOp, args: PythonValues):
        return self._collective(op, args[0])
