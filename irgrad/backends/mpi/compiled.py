"""A process's per-device program as one compiled function, its collectives calls from the
generated code into the MPI library.

The "mpi" stage (convert-shard-to-mpi's output) goes through the whole CPU pipeline:
`bufferize` gives `mpi.alltoall`/`allgather` their buffer forms and `convert-mpi-to-llvm`
makes them calls of `irgrad_mpi_alltoall`/`allgather`/`comm_rank`, which the shim
(irgrad/backends/cpu/shims/mpi.ll) defines on top of `MPI_Ialltoall`/`MPI_Iallgather`/
`MPI_Test`, resolved in the libmpi mpi4py loaded. So a training step, or a `fori_loop` of
steps, runs with no Python between its collectives.

No MPI constant is in the generated code: the shim is compiled for the library's handle types
(their sizes from mpi4py), and before each call `RankProgram.run` fills its table (a group's
axis mask -> communicator handle and size) with handles mpi4py made: the group communicators
of irgrad/backends/mpi/process_group.py.

Checks: the call is agreed once, at its first collective (`ProcessGroup.agree`: the same
program fingerprint, call number and argument signature on every process; a process that
left names itself), so the collectives inside follow in lockstep by construction. Every wait
in the shim has the deadline (`ProcessGroup.timeout`); a late collective, or an MPI error, is
recorded and leaves the generated code through the guard's runtime-check path, and `run`
raises a CollectiveTimeout/CollectiveError naming the process, the collective and its line.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from mpi4py import MPI
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, ModuleOp, StringAttr
from xdsl.ir import Operation

from irgrad.backends.interpreter import collectives
from irgrad.backends.mpi.calls import RUNTIME, STATE_FIELDS, install, signed
from irgrad.backends.mpi.errors import CollectiveError, CollectiveTimeout
from irgrad.backends.spmd import DeviceStats
from irgrad.dialects import mpi

_CALLS = threading.Lock()
"""One compiled call at a time in a process: the shim's table and counters are per process."""

def _groups(module: ModuleOp) -> list[tuple[int, tuple[int, ...]]]:
    """The (mask, grid axes) of every communicator the program uses, in mask order."""
    found: dict[int, tuple[int, ...]] = {}
    for op in module.walk():
        if isinstance(op, mpi.GridCommOp):
            found[sum(1 << a for a in op.axes)] = op.axes
        elif isinstance(op, mpi.CommWorldOp):
            found[-1] = ()
    return sorted(found.items())


def _first_collective(fn: func.FuncOp) -> Operation | None:
    return next((op for op in fn.walk() if isinstance(op, mpi.DATA_MOVEMENT)), None)


class RankProgram:
    """`@entry` of a per-device ("mpi" stage) module compiled whole for this process."""

    def __init__(self, module: ModuleOp, entry: str, grid: Sequence[int]):
        from irgrad.backends.cpu import compile_module
        from irgrad.pipelines import cpu_steps
        from irgrad.registry import run_pipeline

        install()
        self.grid = tuple(grid)
        fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
        if fn is None:
            raise CollectiveError(f"no function @{entry} to compile")
        self.first = _first_collective(fn)
        self.what = mpi.describe(self.first) if self.first is not None else ""
        self.groups = _groups(module)
        lowered = module.clone()
        for _, spec in cpu_steps():
            run_pipeline(lowered, spec)
        sites = lowered.attributes.get("irgrad.mpi.sites")
        self.sites = [s.data for s in cast(ArrayAttr[StringAttr], sites).data] if sites is not None else []
        planned = lowered.attributes.get("irgrad.mpi.grid")
        if planned is not None and tuple(cast(DenseArrayBase, planned).get_values()) != self.grid:
            raise CollectiveError(f"@{entry} was partitioned for grid {planned}, run on {list(self.grid)}")
        self.compiled = compile_module(lowered)
        self.function = self.compiled.function(entry, fn.function_type.inputs.data, fn.function_type.outputs.data)

    def _bind(self, group: Any) -> None:
        """Fill the shim's table with this process's communicators (made on first use)."""
        comms, sizes, bits = RUNTIME["comms"], RUNTIME["sizes"], RUNTIME["comm_bits"]
        for mask, axes in self.groups:
            if mask == -1:
                members = list(range(group.size))
            else:
                members = next(m for m in collectives.groups(self.grid, axes) if group.rank in m)
            comm = group.group_comm(members)
            comms[mask + 1] = signed(comm.handle, bits)
            sizes[mask + 1] = len(members)

    def run(self, group: Any, args: Sequence[Any], program: str) -> tuple[tuple[Any, ...], DeviceStats]:
        """This process's results on `args`, and what it sent; `program` names the program and
        its fingerprint for the agreement."""
        if math.prod(self.grid) != group.size:
            raise CollectiveError(
                f"a grid of {math.prod(self.grid)} devices on {group.size} processes: each process plays one device")
        with _CALLS:
            return self._run(group, args, program)

    def _run(self, group: Any, args: Sequence[Any], program: str) -> tuple[tuple[Any, ...], DeviceStats]:
        from irgrad.backends.cpu.abi import RuntimeCheckError

        group.next_call()
        if self.first is not None and group.size > 1:
            group.agree(range(group.size), self.what, self.first, program)
        self._bind(group)
        state = RUNTIME["state"]
        for k in range(STATE_FIELDS):
            state[k] = 0
        state[0] = -1
        RUNTIME["timeout"].value = group.timeout
        try:
            values = self.function(*args)
        except RuntimeCheckError:
            if state[1] == 0:
                raise
            raise self._failure(group, state) from None
        stats = DeviceStats()
        if state[4]:
            stats.collectives["all_to_all"] = int(state[4])
        if state[5]:
            stats.collectives["all_gather"] = int(state[5])
        stats.bytes_sent = int(state[3])
        # Results are fresh arrays: copied only when one is an argument passed through.
        return tuple(np.array(v) if any(v is a for a in args) else v for v in values), stats

    def _failure(self, group: Any, state: Any) -> CollectiveError:
        site, kind, code = int(state[0]), int(state[1]), int(state[2])
        where = self.sites[site] if 0 <= site < len(self.sites) else f"collective #{site}"
        who = f"process {group.rank} of {group.size}"
        if kind == 1:
            error: CollectiveError = CollectiveTimeout(
                f"{who}: {where} did not complete within {group.timeout:g} s (a member of its group "
                "died, stopped answering, or its control flow diverged)")
        elif kind == 2:
            error = CollectiveError(f"{who}: {where} failed in the MPI library: {MPI.Get_error_string(code)}")
        else:
            error = CollectiveError(f"{who}: {where} moves over 2 GiB in one message, which the MPI calls take as int counts")
        group.broken = error.message
        return error
