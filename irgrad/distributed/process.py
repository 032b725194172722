"""The job: which process this is and how many there are (JAX's multi-process names).

    ig.distributed.initialize()          # under `mpiexec -n 4`: this process joins the job
    ig.distributed.process_index()       # 0..3
    ig.distributed.process_count()       # 4; a plain `python train.py` is a 1-process job

`initialize` detects an MPI launch from the launcher's environment (MPICH/hydra's `PMI_SIZE`,
Open MPI's `OMPI_COMM_WORLD_SIZE`, PMIx's `PMIX_RANK`) and only then imports mpi4py; a
1-process job needs no MPI at all. Once the job has several processes it also:
- installs exception hooks that print the failing process's error and call `MPI_Abort`, so an
  exception on one process ends the whole job in about a second instead of leaving the others
  blocked in a collective;
- gives every collective a deadline (`timeout`, default $IRGRAD_COLLECTIVE_TIMEOUT or
  DEFAULT_TIMEOUT_S);
- gives each process its share of the host's cores for the CPU runtime's thread pool
  ($IRGRAD_NUM_THREADS, unless set): processes on one host must not each take all the cores;
- registers `shutdown` at exit: the processes leave together, and one that leaves early tells
  the others (who then fail at once, naming it).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import traceback
from typing import Any

DEFAULT_TIMEOUT_S = 300.0
"""How long a process waits at a collective for the rest of its group."""

LAUNCH_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")

_group: Any = None  # irgrad.backends.mpi.ProcessGroup once a multi-process job is initialized
_initialized = False


def launched_by_mpi() -> bool:
    """Whether this process was started by an MPI launcher (mpiexec, mpirun, srun with PMI)."""
    return any(v in os.environ for v in LAUNCH_VARIABLES)


def _configured_timeout(timeout: float | None) -> float:
    if timeout is not None:
        value = float(timeout)
    else:
        raw = os.environ.get("IRGRAD_COLLECTIVE_TIMEOUT", "").strip()
        try:
            value = float(raw) if raw else DEFAULT_TIMEOUT_S
        except ValueError:
            raise ValueError(f"IRGRAD_COLLECTIVE_TIMEOUT={raw!r}: expected a number of seconds") from None
    if not value > 0:
        raise ValueError(f"distributed.initialize: timeout must be positive seconds, got {value}")
    return value


def initialize(timeout: float | None = None) -> None:
    """Join the job this process was launched in (a 1-process job when not launched by MPI).

    Calling it again is a no-op (the timeout may be changed). Every function here initializes
    on first use, so calling it is only needed to set `timeout`."""
    global _group, _initialized
    seconds = _configured_timeout(timeout)
    if _initialized:
        if _group is not None and timeout is not None:
            _group.timeout = seconds
        return
    _initialized = True
    if not launched_by_mpi():
        return
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError(
            "this process was launched by MPI, but mpi4py is not installed: pip install 'irgrad[dist]'"
        ) from None
    world = MPI.COMM_WORLD
    if world.Get_size() == 1:
        return
    from irgrad.backends.mpi import ProcessGroup

    _group = ProcessGroup(world, seconds)
    _share_cores(world)
    _install_abort_hooks(world)
    atexit.register(shutdown)


def _share_cores(world: Any) -> None:
    """$IRGRAD_NUM_THREADS = this host's cores / this host's processes, unless the user chose."""
    if os.environ.get("IRGRAD_NUM_THREADS", "").strip():
        return
    from mpi4py import MPI

    from irgrad.backends.cpu.threads import usable_cpus

    local = world.Split_type(MPI.COMM_TYPE_SHARED)
    per_host = local.Get_size()
    local.Free()
    os.environ["IRGRAD_NUM_THREADS"] = str(max(1, usable_cpus() // per_host))


def _report_and_abort(world: Any, kind: type[BaseException], error: BaseException, tb: Any) -> None:
    from irgrad.diagnostics import IrgradError

    rank, size = world.Get_rank(), world.Get_size()
    lines = [f"irgrad.distributed: process {rank} of {size} failed, ending the job:\n"]
    if isinstance(error, IrgradError):
        lines.append(f"{kind.__name__}: {error.format()}\n")
    else:
        lines += traceback.format_exception(kind, error, tb)
    sys.stderr.write("".join(lines))
    sys.stderr.flush()
    # The launcher forwards each process's output through a pipe; MPI_Abort tears the job down at
    # once, and an error written just before it was sometimes lost (1 job in ~6): give it time.
    time.sleep(0.5)
    world.Abort(1)


def _install_abort_hooks(world: Any) -> None:
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, error, tb)
        _report_and_abort(world, kind, error, tb)

    def thread_excepthook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        _report_and_abort(world, args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback)

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook


def process_group() -> Any:
    """The backend's `ProcessGroup` of a multi-process job, or None in a 1-process job."""
    initialize()
    return _group


def process_index() -> int:
    """This process's index in the job, 0 to process_count() - 1."""
    group = process_group()
    return 0 if group is None else group.rank


def process_count() -> int:
    """How many processes the job has (1 unless launched by MPI with several)."""
    group = process_group()
    return 1 if group is None else group.size


def shutdown() -> None:
    """Leave the job: wait (under the deadline) until every process is leaving, telling any
    process still waiting at a collective that this one will not come. Idempotent; at exit."""
    global _group
    group, _group = _group, None
    if group is not None:
        group.close()
