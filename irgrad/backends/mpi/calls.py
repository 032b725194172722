"""The entry points compiled code calls for its collectives: `irgrad_mpi_alltoall`,
`irgrad_mpi_allgather` and `irgrad_mpi_comm_rank`, defined once per process.

The shim (irgrad/backends/cpu/shims/mpi.ll) is compiled for the MPI library's handle types
(their sizes from mpi4py: an int in MPICH, a pointer in Open MPI) and calls `MPI_Ialltoall`,
`MPI_Iallgather`, `MPI_Ibarrier`, `MPI_Test`, `MPI_Comm_rank` and `MPI_Wtime` of the libmpi mpi4py loaded,
found among the process's mapped libraries. Its tables (a group's axis mask -> communicator
handle and size, `MPI_BYTE`, the deadline) and its state (a failure's site, kind and MPI
error code; bytes sent; calls of each kind) are globals the runtime (compiled.py) reads and
writes through `RUNTIME`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from typing import Any

from mpi4py import MPI

from irgrad.backends.mpi.errors import CollectiveError

STATE_FIELDS = 6
SLOTS = 65
_lock = threading.Lock()
RUNTIME: dict[str, Any] = {}
"""The shim's engine and its globals, as ctypes objects (empty until `install`)."""

_MPI_SYMBOLS = ("MPI_Ialltoall", "MPI_Iallgather", "MPI_Ibarrier", "MPI_Test", "MPI_Comm_rank", "MPI_Wtime")
ENTRY_POINTS = ("irgrad_mpi_alltoall", "irgrad_mpi_allgather", "irgrad_mpi_comm_rank")


def _handle_type(mpi_type: Any) -> str:
    """The LLVM type of an MPI handle: an int (MPICH) or a pointer (Open MPI)."""
    size = MPI._sizeof(mpi_type)
    return {4: "i32", 8: "i64"}[size]


def _libmpi() -> ctypes.CDLL:
    """The MPI library mpi4py's extension module is linked against (it is already mapped)."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "/" in line and "libmpi" in line.rsplit("/", 1)[-1]})
    for path in paths:
        library = ctypes.CDLL(path)
        if hasattr(library, "MPI_Ialltoall"):
            return library
    library = ctypes.CDLL(None)
    if hasattr(library, "MPI_Ialltoall"):
        return library
    raise CollectiveError(f"found no MPI library with MPI_Ialltoall among the loaded ones ({paths})")


def install() -> None:
    """Define the irgrad_mpi_* entry points for the generated code (once per process)."""
    if RUNTIME:
        return
    import llvmlite.binding as llvm

    from irgrad.backends.cpu.blas import compile_shim
    from irgrad.backends.cpu.process import initialize
    from irgrad.backends.cpu.shims import template

    initialize()
    with _lock:
        if RUNTIME:
            return
        library = _libmpi()
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        for name in _MPI_SYMBOLS:
            llvm.add_symbol(f"_irgrad_rt_{name}", ctypes.cast(getattr(library, name), ctypes.c_void_p).value)
        for name in ("sched_yield", "usleep"):
            llvm.add_symbol(f"_irgrad_rt_{name}", ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        ir = template("mpi.ll").substitute(
            C=_handle_type(MPI.Comm), D=_handle_type(MPI.Datatype), R=_handle_type(MPI.Request),
            status_bytes=MPI._sizeof(MPI.Status),
        )
        engine = compile_shim(ir, ENTRY_POINTS, level=2, vectorize=False)
        address = engine.get_global_value_address
        ctype = {"i32": ctypes.c_int32, "i64": ctypes.c_int64}
        comm_type = ctype[_handle_type(MPI.Comm)]
        RUNTIME.update(
            engine=engine,
            state=(ctypes.c_int64 * STATE_FIELDS).from_address(address("irgrad_mpi_state")),
            timeout=ctypes.c_double.from_address(address("irgrad_mpi_timeout")),
            comms=(comm_type * SLOTS).from_address(address("irgrad_mpi_comms")),
            sizes=(ctypes.c_int64 * SLOTS).from_address(address("irgrad_mpi_sizes")),
            comm_bits=8 * ctypes.sizeof(comm_type),
        )
        byte = ctype[_handle_type(MPI.Datatype)].from_address(address("irgrad_mpi_byte"))
        byte.value = signed(MPI.BYTE.handle, 8 * ctypes.sizeof(byte))


def signed(handle: int, bits: int) -> int:
    """mpi4py's handle (an unsigned word) as the C type's signed value."""
    handle &= (1 << bits) - 1
    return handle - (1 << bits) if handle >= 1 << (bits - 1) else handle
