"""The collectives of one device group, moved by MPI and reduced by numpy in a fixed order.

MPI's own allreduce picks its algorithm, and so its order of summation, by message size and
process count (MPICH 5 matched a left-to-right sum on 2 and 3 processes, not on 4). Here MPI
only moves bytes (`MPI.BYTE`, so every dtype travels the same way) and every reduction is
`collectives.combine` over the group's contributions in group order, element by element, the
simulated grid's definition: results are bit-identical on every member, in every run, for
every process count that gives the same groups, and to the simulated grid.

- all_reduce: an all_to_all of chunks (member j receives everyone's chunk j), a local reduction
  of chunk j in group order, an all_gather of the reduced chunks: the bytes of a ring
  all-reduce, 2 (g-1)/g of the array per member. Arrays of at most SMALL_BYTES are all-gathered
  whole and reduced locally: one round trip instead of two.
- reduce_scatter: the first half of that; all_gather, all_to_all: one MPI call each;
  all_slice: local (no bytes move).

Each function returns the result and the bytes this member sent (its own chunk excluded).
`wait(requests)` waits for MPI requests under the caller's deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mpi4py import MPI
from xdsl.dialects.shard import ReductionKind

from irgrad.backends.interpreter.collectives import combine

SMALL_BYTES = 4096
"""An all_reduce of at most this many bytes gathers whole arrays (latency over bandwidth)."""

Wait = Callable[[Sequence[MPI.Request]], None]


def _as_bytes(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).reshape(-1).view(np.uint8)


def _from_bytes(raw: np.ndarray, dtype: np.dtype, shape: Sequence[int]) -> np.ndarray:
    return raw.view(dtype).reshape(shape)


def _offsets(counts: Sequence[int]) -> list[int]:
    return [int(v) for v in np.concatenate([[0], np.cumsum(counts)[:-1]])] if counts else []


def _alltoallv(comm: MPI.Comm, sendbuf: np.ndarray, send_counts: Sequence[int], recv_bytes: int, wait: Wait) -> np.ndarray:
    """Bytes `sendbuf[offset j : + send_counts[j]]` to member j; `recv_bytes` from each member,
    concatenated in group order."""
    recv_counts = [recv_bytes] * comm.size
    recvbuf = np.empty(recv_bytes * comm.size, np.uint8)
    request = comm.Ialltoallv(
        [sendbuf, (list(send_counts), _offsets(send_counts)), MPI.BYTE],
        [recvbuf, (recv_counts, _offsets(recv_counts)), MPI.BYTE],
    )
    wait([request])
    return recvbuf


def exchange_chunks(
    comm: MPI.Comm, chunks: Sequence[np.ndarray], recv_shape: Sequence[int], wait: Wait
) -> tuple[list[np.ndarray], int]:
    """Send `chunks[j]` to member j; receive one array of `recv_shape` (this dtype) from each."""
    dtype = chunks[0].dtype
    send = [_as_bytes(c) for c in chunks]
    send_counts = [s.size for s in send]
    sendbuf = np.concatenate(send) if send else np.empty(0, np.uint8)
    size = int(np.prod(recv_shape, dtype=np.int64)) * dtype.itemsize
    recvbuf = _alltoallv(comm, sendbuf, send_counts, size, wait)
    parts = [_from_bytes(recvbuf[i * size:(i + 1) * size], dtype, recv_shape) for i in range(comm.size)]
    return parts, sum(send_counts) - send_counts[comm.rank]


def _gather_bytes(comm: MPI.Comm, x: np.ndarray, wait: Wait) -> tuple[np.ndarray, int]:
    """Every member's `x` (all of one shape and dtype) as bytes, in group order."""
    mine = _as_bytes(x)
    recvbuf = np.empty(mine.size * comm.size, np.uint8)
    wait([comm.Iallgather([mine, MPI.BYTE], [recvbuf, MPI.BYTE])])
    return recvbuf, (comm.size - 1) * mine.size


def gather_whole(comm: MPI.Comm, x: np.ndarray, wait: Wait) -> tuple[list[np.ndarray], int]:
    """Every member's `x` (all of one shape and dtype), in group order."""
    recvbuf, sent = _gather_bytes(comm, x, wait)
    n = x.nbytes
    return [_from_bytes(recvbuf[i * n:(i + 1) * n], x.dtype, x.shape) for i in range(comm.size)], sent


def _gather_chunks(comm: MPI.Comm, mine: np.ndarray, counts: Sequence[int], wait: Wait) -> tuple[np.ndarray, int]:
    """The concatenation of every member's flat chunk (member i's of `counts[i]` elements)."""
    item = mine.dtype.itemsize
    byte_counts = [c * item for c in counts]
    recvbuf = np.empty(sum(byte_counts), np.uint8)
    wait([comm.Iallgatherv([_as_bytes(mine), MPI.BYTE], [recvbuf, (byte_counts, _offsets(byte_counts)), MPI.BYTE])])
    return recvbuf.view(mine.dtype), (comm.size - 1) * mine.nbytes


def all_reduce(comm: MPI.Comm, x: np.ndarray, kind: ReductionKind, wait: Wait) -> tuple[np.ndarray, int]:
    g = comm.size
    if g == 1:
        return combine([x], kind).copy(), 0
    if x.nbytes <= SMALL_BYTES:
        parts, sent = gather_whole(comm, x, wait)
        return np.asarray(combine(parts, kind)).copy(), sent
    flat = np.ascontiguousarray(x).reshape(-1)
    base, extra = divmod(flat.size, g)  # np.array_split's chunks: the first `extra` one longer
    counts = [base + (i < extra) for i in range(g)]
    item = x.dtype.itemsize
    mine = counts[comm.rank]
    # The chunks are consecutive: the array itself is the send buffer.
    recvbuf = _alltoallv(comm, flat.view(np.uint8), [c * item for c in counts], mine * item, wait)
    parts = [recvbuf[i * mine * item:(i + 1) * mine * item].view(x.dtype) for i in range(g)]
    sent = (flat.size - mine) * item
    reduced = np.asarray(combine(parts, kind), dtype=x.dtype)
    whole, sent_back = _gather_chunks(comm, reduced, counts, wait)
    return whole.reshape(x.shape), sent + sent_back


def reduce_scatter(comm: MPI.Comm, x: np.ndarray, axis: int, kind: ReductionKind, wait: Wait) -> tuple[np.ndarray, int]:
    chunks = np.split(x, comm.size, axis=axis)
    parts, sent = exchange_chunks(comm, chunks, chunks[comm.rank].shape, wait)
    return np.asarray(combine(parts, kind)).copy(), sent


def all_gather(comm: MPI.Comm, x: np.ndarray, axis: int, wait: Wait) -> tuple[np.ndarray, int]:
    if axis == 0:  # the parts are consecutive in the receive buffer: no copy
        recvbuf, sent = _gather_bytes(comm, x, wait)
        return recvbuf.view(x.dtype).reshape((comm.size * x.shape[0], *x.shape[1:])), sent
    parts, sent = gather_whole(comm, x, wait)
    return np.concatenate(parts, axis=axis), sent


def all_to_all(comm: MPI.Comm, x: np.ndarray, split_axis: int, concat_axis: int, wait: Wait) -> tuple[np.ndarray, int]:
    g = comm.size
    if split_axis == 0 and concat_axis == 0:  # mpi.alltoall: the blocks are consecutive bytes
        flat = np.ascontiguousarray(x).reshape(-1).view(np.uint8)
        block = flat.size // g
        recvbuf = _alltoallv(comm, flat, [block] * g, block, wait)
        return recvbuf.view(x.dtype).reshape(x.shape), flat.size - block
    chunks = np.split(x, g, axis=split_axis)
    parts, sent = exchange_chunks(comm, chunks, chunks[comm.rank].shape, wait)
    return np.concatenate(parts, axis=concat_axis), sent


def all_slice(comm: MPI.Comm, x: np.ndarray, axis: int) -> tuple[np.ndarray, int]:
    return np.split(x, comm.size, axis=axis)[comm.rank].copy(), 0


def run(kind: str, params: dict[str, object], comm: MPI.Comm, x: np.ndarray, wait: Wait) -> tuple[np.ndarray, int]:
    """The collective `kind` (with the op's `params`, as `Collective.params` names them)."""
    if kind == "all_reduce":
        return all_reduce(comm, x, ReductionKind(params["reduction"]), wait)
    if kind == "reduce_scatter":
        return reduce_scatter(comm, x, int(params["scatter_axis"]), ReductionKind(params["reduction"]), wait)
    if kind == "all_gather":
        return all_gather(comm, x, int(params["gather_axis"]), wait)
    if kind == "all_to_all":
        return all_to_all(comm, x, int(params["split_axis"]), int(params["concat_axis"]), wait)
    if kind == "all_slice":
        return all_slice(comm, x, int(params["slice_axis"]))
    raise ValueError(f"no MPI implementation of the collective {kind!r}")
