"""The `mpi` dialect: a per-device program's communication as message passing between processes.

`convert-shard-to-mpi` lowers the shard dialect's collectives to this level, where only two
operations move data, both plain data movement with a fixed meaning on any process count:
- `mpi.alltoall(%x, %comm)`: the input's leading dimension has one block per member of the
  communicator's group; block j goes to member j, and block i of the result comes from member i;
- `mpi.allgather(%x, %comm)`: every member's input, stacked along a new leading dimension in
  group order.
Every reduction is then ordinary IR between them (a chain of `nn.add`, say, in group order),
so results never depend on the algorithm an MPI library picks: bit-identical on every process,
in every run and to the simulated grid (irgrad/backends/interpreter/collectives.py).

Communicators are values of type `!mpi.comm`, made by `mpi.comm_world` (upstream MLIR's
spelling) and `mpi.grid_comm` (the group of this process over `grid_axes` of a device grid of
`grid_shape`, device i being process i): which handle that is, is the runtime's business, so
no MPI library constant appears in the IR. `mpi.comm_rank(%comm) : i32` is this process's
position in the group (upstream's spelling). The data ops work on tensors; `bufferize` turns
each into its buffer form, `mpi.alltoall_buffers(%send, %recv, %comm)` and
`mpi.allgather_buffers(...)` (upstream's send/receive-buffer convention, as `mpi.allreduce`), and
`convert-mpi-to-llvm` makes those calls into the MPI library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, MemRefType, NoneAttr, TensorType, i32, i64
from xdsl.ir import Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irgrad.ir_numpy import numpy_dtype


@irdl_attr_definition
class CommType(ParametrizedAttribute, TypeAttribute):
    """`!mpi.comm`: a communicator (a group of processes), supplied by the runtime."""

    name = "mpi.comm"


@irdl_op_definition
class CommWorldOp(IRDLOperation):
    """Every process of the job.  `%w = mpi.comm_world : !mpi.comm`"""

    name = "mpi.comm_world"
    result = result_def(CommType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[CommType()])


@irdl_op_definition
class GridCommOp(IRDLOperation):
    """This process's group over `grid_axes` of a device grid (device i is process i), members
    ordered row-major over the listed axes, as the shard dialect's device groups.

    `%c = mpi.grid_comm grid_shape = [2, 2] grid_axes = [0] : !mpi.comm`
    """

    name = "mpi.grid_comm"
    grid_shape = prop_def(DenseArrayBase.constr(i64))
    grid_axes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(CommType)
    traits = traits_def(Pure())
    assembly_format = "`grid_shape` `=` $grid_shape `grid_axes` `=` $grid_axes attr-dict `:` type($result)"

    def __init__(self, grid_shape: Sequence[int], grid_axes: Sequence[int]) -> None:
        super().__init__(
            properties={
                "grid_shape": DenseArrayBase.from_list(i64, list(grid_shape)),
                "grid_axes": DenseArrayBase.from_list(i64, list(grid_axes)),
            },
            result_types=[CommType()],
        )

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.grid_shape.get_values())

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(self.grid_axes.get_values())

    @property
    def group_size(self) -> int:
        return math.prod(self.shape[a] for a in self.axes)

    def verify_(self) -> None:
        shape, axes = self.shape, self.axes
        if not shape or any(n < 1 for n in shape):
            raise VerifyException(f"'{self.name}' op grid_shape {list(shape)}: expected positive sizes")
        if len(set(axes)) != len(axes) or any(not 0 <= a < len(shape) for a in axes):
            raise VerifyException(
                f"'{self.name}' op grid_axes {list(axes)} must be distinct axes of a rank-{len(shape)} grid"
            )


def group_size_of(comm: SSAValue) -> int | None:
    """The size of `comm`'s group when the IR says it (a grid_comm), else None."""
    owner = comm.owner
    return owner.group_size if isinstance(owner, GridCommOp) else None


@irdl_op_definition
class CommRankOp(IRDLOperation):
    """This process's position in the communicator's group.  `%r = mpi.comm_rank(%c) : i32`"""

    name = "mpi.comm_rank"
    comm = operand_def(CommType)
    rank = result_def(i32)
    traits = traits_def(Pure())
    assembly_format = "`(` $comm `)` attr-dict `:` type($rank)"

    def __init__(self, comm: SSAValue) -> None:
        super().__init__(operands=[comm], result_types=[i32])


def _check_blocks(op: IRDLOperation, value: SSAValue, comm: SSAValue) -> list[int]:
    """`value`'s shape, which must lead with one block per member of `comm`'s group (an
    alltoall's input, either form)."""
    shape = list(value.type.get_shape())  # type: ignore[attr-defined]
    g = group_size_of(comm)
    if not shape or (g is not None and shape[0] != g):
        raise VerifyException(
            f"'{op.name}' op needs a leading dimension of one block per member ({g}), got {value.type}")
    return shape


def _gathered_shape(value: SSAValue, gathered: SSAValue, comm: SSAValue) -> list[int]:
    """The shape an allgather of `value` over `comm` has (the group size from the
    communicator when the IR says it, else from `gathered`'s leading dimension)."""
    shape = list(value.type.get_shape())  # type: ignore[attr-defined]
    out = list(gathered.type.get_shape())  # type: ignore[attr-defined]
    g = group_size_of(comm)
    return [g if g is not None else (out[0] if out else 0), *shape]


def describe(op: IRDLOperation) -> str:
    """What a data-movement op (either form) moves, for messages: "mpi.allgather over grid
    axes [0] of float32[3]" (the tensor op's name, its input's dtype and shape)."""
    owner = op.operands[-1].owner
    axes = f"grid axes {list(owner.axes)}" if isinstance(owner, GridCommOp) else "every process"
    t = op.operands[0].type
    dtype = numpy_dtype(t.get_element_type())  # type: ignore[attr-defined]
    return f"{op.name.removesuffix('_buffers')} over {axes} of {dtype}{list(t.get_shape())}"  # type: ignore[attr-defined]


class _DataMovement(IRDLOperation):
    def _check_types(self, expected: Sequence[int]) -> None:
        t_in, t_out = self.operands[0].type, self.results[0].type
        assert isinstance(t_in, TensorType) and isinstance(t_out, TensorType)
        if t_in.get_element_type() != t_out.get_element_type():
            raise VerifyException(f"'{self.name}' op element types differ: input {t_in}, result {t_out}")
        if tuple(t_out.get_shape()) != tuple(expected):
            raise VerifyException(
                f"'{self.name}' op result {t_out} should have shape {'x'.join(map(str, expected))} for input {t_in}"
            )


@irdl_op_definition
class AllToAllOp(_DataMovement):
    """Block j of the leading dimension to member j; block i of the result from member i.

    `%y = mpi.alltoall(%x, %c) : tensor<2x3xf32> -> tensor<2x3xf32>` (a group of 2)
    """

    name = "mpi.alltoall"
    input = operand_def(TensorType)
    comm = operand_def(CommType)
    result = result_def(TensorType)
    assembly_format = "`(` $input `,` $comm `)` attr-dict `:` type($input) `->` type($result)"

    def __init__(self, x: SSAValue, comm: SSAValue) -> None:
        super().__init__(operands=[x, comm], result_types=[x.type])

    def verify_(self) -> None:
        self._check_types(list(self.input.type.get_shape()))  # type: ignore[attr-defined]
        _check_blocks(self, self.input, self.comm)


@irdl_op_definition
class AllGatherOp(_DataMovement):
    """Every member's input, stacked along a new leading dimension in group order.

    `%y = mpi.allgather(%x, %c) : tensor<3xf32> -> tensor<2x3xf32>` (a group of 2)
    """

    name = "mpi.allgather"
    input = operand_def(TensorType)
    comm = operand_def(CommType)
    result = result_def(TensorType)
    assembly_format = "`(` $input `,` $comm `)` attr-dict `:` type($input) `->` type($result)"

    def __init__(self, x: SSAValue, comm: SSAValue, group: int) -> None:
        t = x.type
        assert isinstance(t, TensorType)
        super().__init__(operands=[x, comm], result_types=[TensorType(t.get_element_type(), [group, *t.get_shape()])])

    def verify_(self) -> None:
        self._check_types(_gathered_shape(self.input, self.result, self.comm))


class _BufferMovement(IRDLOperation):
    """The buffer form of a data-movement op: reads `send`, writes the whole of `recv`, both
    contiguous (identity layouts) with static shapes, as the MPI call takes them."""

    send = operand_def(MemRefType)
    recv = operand_def(MemRefType)
    comm = operand_def(CommType)
    assembly_format = "`(` $send `,` $recv `,` $comm `)` attr-dict `:` type($send) `,` type($recv)"

    def __init__(self, send: SSAValue, recv: SSAValue, comm: SSAValue) -> None:
        super().__init__(operands=[send, recv, comm])

    def _check_buffers(self, expected: Sequence[int]) -> None:
        for role, value in (("send", self.send), ("recv", self.recv)):
            t = value.type
            assert isinstance(t, MemRefType)
            if not isinstance(t.layout, NoneAttr):
                raise VerifyException(f"'{self.name}' op {role} buffer {t} must have the identity layout")
        t_send, t_recv = self.send.type, self.recv.type
        assert isinstance(t_send, MemRefType) and isinstance(t_recv, MemRefType)
        if t_send.get_element_type() != t_recv.get_element_type():
            raise VerifyException(f"'{self.name}' op element types differ: send {t_send}, recv {t_recv}")
        if tuple(t_recv.get_shape()) != tuple(expected):
            raise VerifyException(
                f"'{self.name}' op recv buffer {t_recv} should have shape {'x'.join(map(str, expected))} "
                f"for send buffer {t_send}"
            )


@irdl_op_definition
class AllToAllBuffersOp(_BufferMovement):
    """`mpi.alltoall` on buffers: block j of `send`'s leading dimension to member j, block i of
    `recv` from member i.

    `mpi.alltoall_buffers(%s, %r, %c) : memref<2x3xf32>, memref<2x3xf32>`
    """

    name = "mpi.alltoall_buffers"

    def verify_(self) -> None:
        self._check_buffers(list(self.send.type.get_shape()))  # type: ignore[attr-defined]
        _check_blocks(self, self.send, self.comm)


@irdl_op_definition
class AllGatherBuffersOp(_BufferMovement):
    """`mpi.allgather` on buffers: every member's `send`, stacked in group order in `recv`.

    `mpi.allgather_buffers(%s, %r, %c) : memref<3xf32>, memref<2x3xf32>`
    """

    name = "mpi.allgather_buffers"

    def verify_(self) -> None:
        self._check_buffers(_gathered_shape(self.send, self.recv, self.comm))


DATA_MOVEMENT = (AllToAllOp, AllGatherOp)
BUFFER_MOVEMENT = (AllToAllBuffersOp, AllGatherBuffersOp)
BUFFER_FORM = {AllToAllOp: AllToAllBuffersOp, AllGatherOp: AllGatherBuffersOp}
"""Each tensor data-movement op's buffer form (what `bufferize` makes of it)."""
OPS = (CommWorldOp, GridCommOp, CommRankOp, AllToAllOp, AllGatherOp, AllToAllBuffersOp, AllGatherBuffersOp)

MPI = Dialect("mpi", list(OPS), [CommType])
