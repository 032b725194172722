"""This process's place in an MPI job, and the `Communicator` its per-device program calls.

Before any bytes move, the members of a collective's group agree on it: each sends the others a
header (which call of the process this is, which collective of the call, what the op asks for,
its dtype and shape, the source line) over a control communicator and compares theirs. So:
- processes that run different programs, shapes or step counts fail at the first collective
  where they part, each naming what it runs and what the others run;
- a process that stopped answering (stuck, or gone) is named when the deadline passes;
- a process that finished its script sends "exit" (`ProcessGroup.close`, at exit), so the others
  learn at once that it will never come, instead of waiting out the deadline.

Every wait polls its MPI requests against the deadline (`timeout`, seconds), backing off from
spinning to 1 ms sleeps: ranks oversubscribing a few cores must not eat each other's time.
Data moves on a second communicator (`data`) and group communicators made from it on first use,
once the group has agreed (`MPI_Comm_create_group` involves only the members).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence

import numpy as np
from mpi4py import MPI
from xdsl.ir import Operation

from irgrad.backends.interpreter import collectives
from irgrad.backends.interpreter.shard import Collective
from irgrad.backends.mpi import reproducible
from irgrad.backends.mpi.errors import CollectiveError, CollectiveTimeout, RanksDisagree
from irgrad.backends.spmd import DeviceStats
from irgrad.diagnostics import location_of

HEADER_BYTES = 512
HEADER_TAG = 17
EXIT = "exit"


def _encode(call: int, seq: int, program: str, what: str, where: str) -> np.ndarray:
    raw = f"{call}\x1f{seq}\x1f{program}\x1f{what}\x1f{where}".encode()[:HEADER_BYTES]
    buf = np.zeros(HEADER_BYTES, np.uint8)
    buf[: len(raw)] = np.frombuffer(raw, np.uint8)
    return buf


def _decode(buf: np.ndarray) -> tuple[int, int, str, str, str]:
    text = bytes(buf).rstrip(b"\x00").decode(errors="replace")
    call, seq, program, what, where = (text.split("\x1f") + [""] * 5)[:5]
    return int(call or -1), int(seq or -1), program, what, where


def _where(op: Operation | None) -> str:
    location = location_of(op.location) if op is not None else None
    return str(location) if location is not None else "an unlocated op"


class ProcessGroup:
    """The job's processes as seen from this one: `rank` of `size`, communicators, deadline."""

    def __init__(self, world: MPI.Comm, timeout: float):
        self.world = world
        self.rank = world.Get_rank()
        self.size = world.Get_size()
        self.timeout = timeout
        self.control = world.Dup()
        self.data = world.Dup()
        self._groups: dict[tuple[int, ...], MPI.Comm] = {}
        self.call = 0
        self.seq = 0
        self.broken: str | None = None
        self.control_bytes = 0

    def next_call(self) -> None:
        """A new program run (or eager collective) starts: numbered in every header."""
        self.call += 1
        self.seq = 0

    # -- waiting ------------------------------------------------------------------------------

    def _poll(self, requests: Sequence[MPI.Request], timeout: float, sleep: bool = True) -> list[int]:
        """Indices of `requests` still pending when `timeout` seconds have passed ([] if all
        completed). `sleep`: back off to 1 ms naps (waiting for other processes to arrive);
        otherwise yield the core between tests (a transfer in flight: MPI moves a large
        message only while it is tested, so naps would stretch it by a nap per segment)."""
        deadline = time.monotonic() + timeout
        pending = list(range(len(requests)))
        spins = 0
        while True:
            pending = [i for i in pending if not requests[i].Test()]
            if not pending or time.monotonic() > deadline:
                return pending
            spins += 1
            if sleep and spins > 64:
                time.sleep(min(1e-3, 2e-6 * spins))
            else:
                os.sched_yield()

    def _fail(self, error: CollectiveError) -> CollectiveError:
        self.broken = error.message
        return error

    def wait(self, requests: Sequence[MPI.Request], what: str, op: Operation | None) -> None:
        """Wait for the data phase of an agreed collective."""
        if self._poll(requests, self.timeout, sleep=False):
            raise self._fail(CollectiveTimeout(
                f"process {self.rank} of {self.size}: {what} did not complete within {self.timeout:g} s "
                "after its group agreed on it (a member died or stopped mid-transfer)", op))

    # -- agreement ----------------------------------------------------------------------------

    def agree(self, members: Sequence[int], what: str, op: Operation | None, program: str = "") -> None:
        """Exchange headers with the other `members` (world ranks); raise unless all run the
        same `program` (a name and fingerprint) and `what` as the same collective of the same
        call."""
        if self.broken is not None:
            raise CollectiveError(f"process {self.rank}: an earlier collective failed ({self.broken})", op)
        seq, self.seq = self.seq, self.seq + 1
        others = [m for m in members if m != self.rank]
        mine = _encode(self.call, seq, program, what, _where(op))
        buffers = [np.empty(HEADER_BYTES, np.uint8) for _ in others]
        recvs = [self.control.Irecv([b, MPI.BYTE], source=m, tag=HEADER_TAG) for b, m in zip(buffers, others)]
        sends = [self.control.Isend([mine, MPI.BYTE], dest=m, tag=HEADER_TAG) for m in others]
        self.control_bytes += HEADER_BYTES * len(others)
        pending = self._poll(recvs, self.timeout)
        if pending:
            for i in pending:
                recvs[i].Cancel()
            missing = [others[i] for i in pending]
            raise self._fail(CollectiveTimeout(
                f"process {self.rank} of {self.size} waited {self.timeout:g} s at {what} "
                f"(collective #{seq} of call {self.call}) for process(es) {missing} of its group "
                f"{list(members)}: they never reached it (stuck, failed, or their control flow "
                "diverged)", op))
        for member, buf in zip(others, buffers):
            call, their_seq, their_program, their_what, their_where = _decode(buf)
            if their_what == EXIT:
                raise self._fail(RanksDisagree(
                    f"process {self.rank} of {self.size} is at {what}, but process {member} finished "
                    "its script without reaching it: the processes ran different numbers of steps "
                    "or different programs", op))
            if their_program != program and call == self.call:
                raise self._fail(RanksDisagree(
                    f"processes run different programs: process {self.rank} of {self.size} runs "
                    f"{program}, process {member} runs {their_program}: their argument shapes, "
                    "dtypes or code differ", op))
            if (call, their_seq, their_what) != (self.call, seq, what):
                raise self._fail(RanksDisagree(
                    f"processes disagree at a collective: process {self.rank} runs {what} as collective "
                    f"#{seq} of call {self.call}; process {member} runs {their_what} (at {their_where}) "
                    f"as collective #{their_seq} of call {call}: their shapes, programs or step "
                    "counts differ", op))
        if self._poll(sends, self.timeout):
            raise self._fail(CollectiveTimeout(f"process {self.rank}: a header send did not complete", op))

    def group_comm(self, members: Sequence[int]) -> MPI.Comm:
        """The communicator of `members` (world ranks, in group order), made on first use."""
        key = tuple(members)
        if key == tuple(range(self.size)):
            return self.data
        if key not in self._groups:
            group = self.data.Get_group().Incl(list(key))
            self._groups[key] = self.data.Create_group(group, tag=HEADER_TAG)
            group.Free()
        return self._groups[key]

    # -- collectives outside programs ---------------------------------------------------------

    def gather_all(self, value: np.ndarray, what: str) -> list[np.ndarray]:
        """Every process's `value` (same shape and dtype everywhere), in rank order."""
        self.next_call()
        what = f"{what} of {value.dtype}{list(value.shape)}"
        self.agree(range(self.size), what, None)
        parts, _ = reproducible.gather_whole(self.data, np.asarray(value), lambda r: self.wait(r, what, None))
        return parts

    def close(self) -> None:
        """Tell every other process this one is done (it is at exit), then wait for them all
        (a bounded barrier): none is left waiting for a collective this one will never join."""
        if self.broken is not None or self.size == 1:
            return
        notice = _encode(self.call, self.seq, "", EXIT, "exit")
        sends = [self.control.Isend([notice, MPI.BYTE], dest=m, tag=HEADER_TAG) for m in range(self.size) if m != self.rank]
        barrier = self.data.Ibarrier()
        if self._poll([barrier], self.timeout):
            raise CollectiveTimeout(
                f"process {self.rank} of {self.size} finished, but the others did not finish within "
                f"{self.timeout:g} s")
        # The others' notices, to leave no message unreceived before MPI_Finalize.
        for m in range(self.size):
            if m != self.rank:
                buf = np.empty(HEADER_BYTES, np.uint8)
                self.control.Recv([buf, MPI.BYTE], source=m, tag=HEADER_TAG)
        MPI.Request.Waitall(sends)


class MpiGrid:
    """The `Communicator` (irgrad/backends/interpreter/shard.py) of one program run on `grid`,
    this process playing device `group.rank`; `stats` counts what it sent. `program` names the
    program and fingerprints it (every process must run the same)."""

    def __init__(self, group: ProcessGroup, grid: Sequence[int], program: str = ""):
        if math.prod(grid) != group.size:
            raise CollectiveError(
                f"a grid of {math.prod(grid)} devices ({'x'.join(map(str, grid))}) on {group.size} "
                "processes: each process plays one device")
        self.group = group
        self.program = program
        self.grid = tuple(grid)
        self.stats = DeviceStats()
        group.next_call()

    @property
    def aborted(self) -> bool:
        return self.group.broken is not None

    def members(self, device: int, grid_axes: Sequence[int]) -> list[int]:
        return next(m for m in collectives.groups(self.grid, grid_axes) if device in m)

    def exchange(self, device: int, request: Collective, value: np.ndarray, op: Operation) -> np.ndarray:
        members = self.members(device, request.grid_axes)
        value = np.asarray(value)
        if op is not None and op.name.startswith("mpi."):
            what = f"{op.name} over grid axes {list(request.grid_axes)} of {value.dtype}{list(value.shape)}"
        else:
            what = f"{request.describe()} of {value.dtype}{list(value.shape)}"
        self.stats.collectives[request.kind] += 1
        if request.kind == "all_slice" or len(members) == 1:  # nothing moves: no agreement needed
            comm = MPI.COMM_SELF
            if request.kind == "all_slice":
                axis = int(dict(request.params)["slice_axis"])
                return np.split(value, len(members), axis=axis)[members.index(device)].copy()
        else:
            self.group.agree(members, what, op, self.program)
            comm = self.group.group_comm(members)

        def wait(requests: Sequence[MPI.Request]) -> None:
            self.group.wait(requests, what, op)

        try:
            result, sent = reproducible.run(request.kind, dict(request.params), comm, value, wait)
        except ValueError as err:  # np.split of an axis the group does not divide
            raise CollectiveError(f"cannot run {what} on process {device}: {err}", op) from None
        self.stats.bytes_sent += sent
        return result

