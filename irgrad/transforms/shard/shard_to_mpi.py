"""`convert-shard-to-mpi`: a per-device program's collectives as MPI data movement and IR.

Upstream MLIR's pass of this name hands each collective to the MPI library's own (allreduce,
allgather, reduce_scatter_block), whose order of reduction changes with the process count. Here
only `mpi.alltoall` and `mpi.allgather` move data (irgrad/dialects/mpi.py) and every reduction
is IR that adds the group's contributions in group order, left to right, element by element:
the simulated grid's definition (irgrad/backends/interpreter/collectives.py), so results are
bit-identical on every process, in every run, and to the simulated grid.

- all_reduce: a ring's bytes, 2 (g-1)/g of the array: flatten (zero-padded to g blocks),
  alltoall, reduce the g blocks in order, allgather; an array of at most SMALL_BYTES is
  allgathered whole and reduced in order (one exchange instead of two);
- reduce_scatter: the scatter axis's chunks moved to the front, alltoall, reduce in order;
- all_gather: allgather, then the new axis moved next to the gather axis and merged;
- all_to_all: the split axis's chunks moved to the front, alltoall, moved next to the concat
  axis and merged; all_slice: a dynamic slice at this process's position (`mpi.comm_rank`);
- process_linear_index: the rank in the group of every grid axis.
Communicators are `mpi.grid_comm`s, one per group at the top of the function. Input: the output
of `shard-partition`. Output: no shard collective left (the grid and the functions' split
attributes stay: they say how arguments and results are laid out).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgrad.diagnostics import PassError
from irgrad.dialects import mpi, nn, shard

SMALL_BYTES = 4096
"""An all_reduce of at most this many bytes allgathers whole arrays (latency over bytes)."""

_COMBINE = {
    shard.ReductionKind.SUM: nn.AddOp,
    shard.ReductionKind.AVERAGE: nn.AddOp,
    shard.ReductionKind.PRODUCT: nn.MulOp,
    shard.ReductionKind.MAX: nn.MaximumOp,
    shard.ReductionKind.MIN: nn.MinimumOp,
    shard.ReductionKind.BITWISE_AND: nn.AndOp,
    shard.ReductionKind.BITWISE_OR: nn.OrOp,
    shard.ReductionKind.BITWISE_XOR: nn.XorOp,
}


class _Builder:
    """Emits ops before `anchor`, located at it."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def emit(self, op: Operation) -> SSAValue:
        op.location = self.anchor.location
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        if tuple(x.type.get_shape()) == tuple(shape):  # type: ignore[attr-defined]
            return x
        return self.emit(nn.ReshapeOp(x, list(shape)))

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        if list(perm) == list(range(len(perm))):
            return x
        return self.emit(nn.TransposeOp(x, list(perm)))

    def block(self, x: SSAValue, i: int) -> SSAValue:
        """`x[i]` of the leading dimension, without it."""
        shape = list(x.type.get_shape())  # type: ignore[attr-defined]
        start = [i] + [0] * (len(shape) - 1)
        limit = [i + 1] + shape[1:]
        return self.reshape(self.emit(nn.SliceOp(x, start, limit, [1] * len(shape))), shape[1:])

    def combine(self, stacked: SSAValue, kind: shard.ReductionKind, where: Operation) -> SSAValue:
        """The blocks of `stacked`'s leading dimension reduced with `kind` in order."""
        g = stacked.type.get_shape()[0]  # type: ignore[attr-defined]
        element = stacked.type.get_element_type()  # type: ignore[attr-defined]
        if kind not in _COMBINE:
            raise PassError(f"reduction '{kind.value}' has no MPI lowering", where)
        if kind == shard.ReductionKind.AVERAGE and isinstance(element, IntegerType):
            raise PassError("an integer average has no MPI lowering (its rounding is unspecified)", where)
        total = self.block(stacked, 0)
        for i in range(1, g):
            total = self.emit(_COMBINE[kind](total, self.block(stacked, i)))
        if kind == shard.ReductionKind.AVERAGE:
            count = self.emit(nn.FullOp(g, total.type))  # type: ignore[arg-type]
            total = self.emit(nn.DivOp(total, count))
        return total


def _front(rank: int, axis: int) -> list[int]:
    """The permutation moving dimension `axis` to the front."""
    return [axis, *[d for d in range(rank) if d != axis]]


def _to(rank: int, axis: int) -> list[int]:
    """The permutation moving the leading dimension to position `axis`."""
    rest = list(range(1, rank))
    return rest[:axis] + [0] + rest[axis:]


def _chunks_in_front(b: _Builder, x: SSAValue, axis: int, g: int) -> SSAValue:
    """`x` with dimension `axis` cut into g chunks, the chunk index as a new leading dimension."""
    shape = list(x.type.get_shape())  # type: ignore[attr-defined]
    split = shape[:axis] + [g, shape[axis] // g] + shape[axis + 1:]
    return b.transpose(b.reshape(x, split), _front(len(split), axis))


def _merge_front_into(b: _Builder, stacked: SSAValue, axis: int) -> SSAValue:
    """The leading dimension (group order) concatenated into dimension `axis` of the rest."""
    shape = list(stacked.type.get_shape())  # type: ignore[attr-defined]
    g, rest = shape[0], shape[1:]
    moved = b.transpose(stacked, _to(len(shape), axis))
    return b.reshape(moved, rest[:axis] + [g * rest[axis]] + rest[axis + 1:])


@dataclass
class _Lowering:
    fn: func.FuncOp
    grid: tuple[int, ...]

    def __post_init__(self) -> None:
        self._comms: dict[tuple[int, ...], SSAValue] = {}

    def comm(self, axes: Sequence[int]) -> SSAValue:
        """The communicator of `axes`, made at the top of the function (in order of first use)."""
        key = tuple(axes)
        if key not in self._comms:
            op = mpi.GridCommOp(self.grid, key)
            op.location = self.fn.location
            if self._comms:
                last = list(self._comms.values())[-1].owner
                Rewriter.insert_op(op, InsertPoint.after(last))  # type: ignore[arg-type]
            else:
                Rewriter.insert_op(op, InsertPoint.at_start(self.fn.body.blocks[0]))
            self._comms[key] = op.result
        return self._comms[key]

    def lower(self, op: Operation) -> SSAValue:
        b = _Builder(op)
        if isinstance(op, shard.ProcessLinearIndexOp):
            rank = b.emit(mpi.CommRankOp(self.comm(range(len(self.grid)))))
            return b.emit(arith.IndexCastOp(rank, IndexType()))
        axes = tuple(op.grid_axes.get_values())  # type: ignore[attr-defined]
        x = op.operands[0]
        t = x.type
        assert isinstance(t, TensorType)
        g = shard.group_size(self.grid, axes)
        if g == 1:
            return x  # a group of one: every collective is the identity
        comm = self.comm(axes)
        if isinstance(op, shard.AllReduceOp):
            return self.all_reduce(b, x, comm, g, op.reduction.data, op)
        if isinstance(op, shard.ReduceScatterOp):
            stacked = b.emit(mpi.AllToAllOp(_chunks_in_front(b, x, op.scatter_axis.value.data, g), comm))
            return b.combine(stacked, op.reduction.data, op)
        if isinstance(op, shard.AllGatherOp):
            return _merge_front_into(b, b.emit(mpi.AllGatherOp(x, comm, g)), op.gather_axis.value.data)
        if isinstance(op, shard.AllToAllOp):
            moved = b.emit(mpi.AllToAllOp(_chunks_in_front(b, x, op.split_axis.value.data, g), comm))
            return _merge_front_into(b, moved, op.concat_axis.value.data)
        if isinstance(op, shard.AllSliceOp):
            return self.all_slice(b, x, comm, g, op.slice_axis.value.data)
        raise PassError("has no MPI lowering", op)

    def all_reduce(self, b: _Builder, x: SSAValue, comm: SSAValue, g: int, kind, op: Operation) -> SSAValue:
        t = x.type
        shape = list(t.get_shape())  # type: ignore[attr-defined]
        n = math.prod(shape)
        item = max(1, t.get_element_type().bitwidth // 8)  # type: ignore[attr-defined]
        if n * item <= SMALL_BYTES:
            return b.combine(b.emit(mpi.AllGatherOp(x, comm, g)), kind, op)
        k = -(-n // g)
        flat = b.reshape(x, [n])
        if g * k != n:
            zero = b.emit(nn.FullOp(0, TensorType(t.get_element_type(), [])))  # type: ignore[attr-defined]
            flat = b.emit(nn.PadOp(flat, zero, [0], [g * k - n]))
        blocks = b.emit(mpi.AllToAllOp(b.reshape(flat, [g, k]), comm))
        mine = b.combine(blocks, kind, op)
        whole = b.reshape(b.emit(mpi.AllGatherOp(mine, comm, g)), [g * k])
        if g * k != n:
            whole = b.emit(nn.SliceOp(whole, [0], [n], [1]))
        return b.reshape(whole, shape)

    def all_slice(self, b: _Builder, x: SSAValue, comm: SSAValue, g: int, axis: int) -> SSAValue:
        shape = list(x.type.get_shape())  # type: ignore[attr-defined]
        size = shape[axis] // g
        rank = b.emit(arith.IndexCastOp(b.emit(mpi.CommRankOp(comm)), IndexType()))
        chunk = b.emit(arith.ConstantOp.from_int_and_width(size, IndexType()))
        offset = b.emit(arith.MuliOp(rank, chunk))
        zero = b.emit(arith.ConstantOp.from_int_and_width(0, IndexType())) if len(shape) > 1 else None
        starts = [offset if d == axis else zero for d in range(len(shape))]
        return b.emit(nn.DynamicSliceOp(x, starts, shape[:axis] + [size] + shape[axis + 1:]))


def _grid_of(module: ModuleOp, fn: func.FuncOp) -> tuple[int, ...] | None:
    ref = fn.attributes.get("shard.grid")
    if ref is None:
        return None
    name = ref.root_reference.data  # type: ignore[attr-defined]
    grid = next((g for g in module.ops if isinstance(g, shard.GridOp) and g.sym_name.data == name), None)
    if grid is None:
        raise PassError(f"runs on grid @{name}, which is not a shard.grid of the module", fn)
    return shard.grid_shape(grid)


@dataclass(frozen=True)
class ConvertShardToMpiPass(ModulePass):
    """Lower shard collectives to mpi.alltoall / mpi.allgather and reductions in a fixed order."""

    name = "convert-shard-to-mpi"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            targets = [
                inner for inner in fn.walk()
                if isinstance(inner, (*shard.COLLECTIVES, shard.ProcessLinearIndexOp))
            ]
            if not targets:
                continue
            grid = _grid_of(op, fn)
            if grid is None:
                raise PassError(
                    "is a collective in a function without a shard.grid attribute: only the "
                    f"per-device functions shard-partition makes run on processes (in @{fn.sym_name.data})",
                    targets[0],
                )
            lowering = _Lowering(fn, grid)
            for inner in targets:
                result = lowering.lower(inner)
                inner.results[0].replace_all_uses_with(result)
                inner.detach()
                inner.erase()
