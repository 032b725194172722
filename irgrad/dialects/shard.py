"""The `shard` dialect: MLIR's sharding annotations and device-grid collectives.

Distributed tensors in irgrad follow GSPMD as MLIR's `shard` dialect (formerly `mesh`) spells
it. A program is written for the whole (global) tensors; `shard.sharding` says how a tensor is
split over a device grid (`split_axes[d]` lists the grid axes tensor dimension d is split over,
in order: the chunk index is row-major over them), and `shard.shard %x to %s` constrains a
value to that sharding (an identity on the global value). `shard-partition` turns such a
program into the per-device (SPMD) program, where every change of placement is a collective
(all_gather, all_reduce, reduce_scatter, all_slice, all_to_all).

Device groups are MLIR's: a collective with `grid_axes = [a, b]` runs within each group of
devices that share their coordinates on the other grid axes; a device's index in its group is
its coordinate on the listed axes, row-major in the listed order. Empty `grid_axes` means
groups of one device (the op is an identity).

xDSL 0.75 declares the grid, sharding and annotation ops and some collectives, with no verifier
for shapes or grid axes. irgrad takes them as they are, adds MLIR's all_gather, all_slice,
all_to_all, reduce_scatter and process_linear_index, and verifies every collective against its
grid (the grid must exist, the axes be in range and distinct, the result shape follow from the
input's). Which change of placement is which collective: docs/dialects/shard.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import shard as xshard
from xdsl.dialects.builtin import (
    BytesAttr,
    FlatSymbolRefAttr,
    IndexType,
    IndexTypeConstr,
    IntegerAttr,
    TensorType,
    i16,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure, SymbolTable
from xdsl.utils.exceptions import VerifyException

from xdsl.dialects.shard import (  # noqa: F401  (re-exported: one module for the whole dialect)
    BroadcastOp,
    GatherOp,
    GridOp,
    RecvOp,
    ReduceOp,
    ReductionKind,
    ReductionKindAttr,
    ScatterOp,
    SendOp,
    ShardAxesArrayAttr,
    ShardAxesAttr,
    ShardingOp,
    ShardingType,
    ShardOp,
    ShiftOp,
)


def axes_attr(axes: Sequence[int]) -> ShardAxesAttr:
    """`array<i16: ...>`: a list of grid axes."""
    return ShardAxesAttr(i16, BytesAttr(i16.pack(list(axes))))


def axes_array_attr(split_axes: Sequence[Sequence[int]]) -> ShardAxesArrayAttr:
    """`[[0], [], [1, 2]]`: the grid axes of each tensor dimension."""
    from xdsl.dialects.builtin import ArrayAttr

    return ShardAxesArrayAttr(ArrayAttr([axes_attr(a) for a in split_axes]))


def split_axes_of(attr: ShardAxesArrayAttr) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(a.get_values()) for a in attr.axes.data)


def lookup_grid(op: Operation, grid: FlatSymbolRefAttr) -> GridOp:
    """The `shard.grid` `op` names, or a VerifyException naming the op and the symbol."""
    found = SymbolTable.lookup_symbol(op, grid.root_reference.data)
    if not isinstance(found, GridOp):
        raise VerifyException(f"'{op.name}' op refers to grid {grid}, which is not a shard.grid in scope")
    return found


def grid_shape(grid: GridOp) -> tuple[int, ...]:
    return tuple(grid.shape.get_values())


def check_grid_axes(op: Operation, shape: Sequence[int], axes: Sequence[int], what: str = "grid_axes") -> None:
    for a in axes:
        if not 0 <= a < len(shape):
            raise VerifyException(
                f"'{op.name}' op {what} {list(axes)} names axis {a}, but the grid has rank {len(shape)}"
            )
    if len(set(axes)) != len(axes):
        raise VerifyException(f"'{op.name}' op {what} {list(axes)} repeats an axis")


def group_size(shape: Sequence[int], axes: Sequence[int]) -> int:
    """How many devices a collective over `axes` of a grid of `shape` combines."""
    return math.prod(shape[a] for a in axes)


class _GroupedCollective:
    """What irgrad's verifier adds to a collective: its grid exists, its axes are valid, and
    the result shape is the input's with `_expected_shape` applied."""

    def _verify_group(self) -> int:
        grid = lookup_grid(self, self.grid)  # type: ignore[attr-defined]
        shape = grid_shape(grid)
        axes = tuple(self.grid_axes.get_values())  # type: ignore[attr-defined]
        check_grid_axes(self, shape, axes)
        return group_size(shape, axes)

    def _tensor_axis(self, name: str, value: IntegerAttr, rank: int) -> int:
        axis = value.value.data
        if not 0 <= axis < rank:
            raise VerifyException(f"'{self.name}' op {name} {axis} is out of range for a rank-{rank} tensor")
        return axis

    def _divided(self, name: str, value: IntegerAttr) -> list[int]:
        """The input shape with dimension `value` (the op's `name` property) cut into the group's
        chunks: what all_slice and reduce_scatter give each member."""
        n = self._verify_group()
        shape = list(self.operands[0].type.get_shape())  # type: ignore[attr-defined]
        axis = self._tensor_axis(name, value, len(shape))
        if shape[axis] % n:
            raise VerifyException(
                f"'{self.name}' op {name} {axis} has size {shape[axis]}, not divisible by the group size {n}"
            )
        shape[axis] //= n
        return shape

    def _check_result(self, expected: Sequence[int]) -> None:
        t_in = self.operands[0].type
        t_out = self.results[0].type
        assert isinstance(t_in, TensorType) and isinstance(t_out, TensorType)
        if t_in.get_element_type() != t_out.get_element_type():
            raise VerifyException(f"'{self.name}' op element types differ: input {t_in}, result {t_out}")
        if tuple(t_out.get_shape()) != tuple(expected):
            shape = "x".join(map(str, expected))
            raise VerifyException(
                f"'{self.name}' op result {t_out} should have shape {shape} for input {t_in}"
            )


@irdl_op_definition
class AllReduceOp(_GroupedCollective, xshard.CollectiveCommunicationOp):
    """Within each group, combine the inputs with `reduction`; every member gets the result.

    `%y = shard.all_reduce %x on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>`
    Sums run in group order, so every device gets the bit-identical result.
    """

    name = "shard.all_reduce"
    input = operand_def(TensorType)
    reduction = prop_def(ReductionKindAttr, default_value=ReductionKindAttr(ReductionKind.SUM))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `on` $grid (`grid_axes` `=` $grid_axes^)? (`reduction` `=` $reduction^)? "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        self._verify_group()
        t_in, t_out = self.input.type, self.result.type
        assert isinstance(t_in, TensorType) and isinstance(t_out, TensorType)
        self._check_result(t_in.get_shape())


@irdl_op_definition
class AllGatherOp(_GroupedCollective, xshard.CollectiveCommunicationOp):
    """Concatenate the group's inputs along `gather_axis`, in group order; every member gets it.

    `%y = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 0 : tensor<2x3xf32> -> tensor<8x3xf32>`
    """

    name = "shard.all_gather"
    input = operand_def(TensorType)
    gather_axis = prop_def(IntegerAttr.constr(IndexTypeConstr))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `on` $grid (`grid_axes` `=` $grid_axes^)? `gather_axis` `=` $gather_axis "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        n = self._verify_group()
        shape = list(self.input.type.get_shape())  # type: ignore[attr-defined]
        axis = self._tensor_axis("gather_axis", self.gather_axis, len(shape))
        shape[axis] *= n
        self._check_result(shape)


@irdl_op_definition
class AllSliceOp(_GroupedCollective, xshard.CollectiveCommunicationOp):
    """Each member keeps its own chunk of its input along `slice_axis` (all_gather's inverse;
    no communication).

    `%y = shard.all_slice %x on @grid grid_axes = [0] slice_axis = 0 : tensor<8x3xf32> -> tensor<2x3xf32>`
    """

    name = "shard.all_slice"
    input = operand_def(TensorType)
    slice_axis = prop_def(IntegerAttr.constr(IndexTypeConstr))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `on` $grid (`grid_axes` `=` $grid_axes^)? `slice_axis` `=` $slice_axis "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        self._check_result(self._divided("slice_axis", self.slice_axis))


@irdl_op_definition
class ReduceScatterOp(_GroupedCollective, xshard.CollectiveCommunicationOp):
    """Combine the group's inputs with `reduction`; member i keeps chunk i along `scatter_axis`.

    `%y = shard.reduce_scatter %x on @grid grid_axes = [0] scatter_axis = 0 : tensor<8xf32> -> tensor<2xf32>`
    """

    name = "shard.reduce_scatter"
    input = operand_def(TensorType)
    reduction = prop_def(ReductionKindAttr, default_value=ReductionKindAttr(ReductionKind.SUM))
    scatter_axis = prop_def(IntegerAttr.constr(IndexTypeConstr))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `on` $grid (`grid_axes` `=` $grid_axes^)? (`reduction` `=` $reduction^)? "
        "`scatter_axis` `=` $scatter_axis attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        self._check_result(self._divided("scatter_axis", self.scatter_axis))


@irdl_op_definition
class AllToAllOp(_GroupedCollective, xshard.CollectiveCommunicationOp):
    """Each member splits its input along `split_axis` into group-size chunks and sends chunk j
    to member j; each concatenates what it receives along `concat_axis`, in group order.

    `%y = shard.all_to_all %x on @grid grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x8xf32> -> tensor<8x2xf32>`
    """

    name = "shard.all_to_all"
    input = operand_def(TensorType)
    split_axis = prop_def(IntegerAttr.constr(IndexTypeConstr))
    concat_axis = prop_def(IntegerAttr.constr(IndexTypeConstr))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `on` $grid (`grid_axes` `=` $grid_axes^)? `split_axis` `=` $split_axis "
        "`concat_axis` `=` $concat_axis attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        n = self._verify_group()
        shape = list(self.input.type.get_shape())  # type: ignore[attr-defined]
        split = self._tensor_axis("split_axis", self.split_axis, len(shape))
        concat = self._tensor_axis("concat_axis", self.concat_axis, len(shape))
        if shape[split] % n:
            raise VerifyException(
                f"'{self.name}' op split_axis {split} has size {shape[split]}, not divisible by "
                f"the group size {n}"
            )
        shape[split] //= n
        shape[concat] *= n
        self._check_result(shape)


@irdl_op_definition
class ProcessLinearIndexOp(IRDLOperation):
    """This device's row-major index in the whole grid.

    `%i = shard.process_linear_index on @grid : index`
    """

    name = "shard.process_linear_index"
    grid = prop_def(FlatSymbolRefAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "`on` $grid attr-dict `:` type($result)"

    def verify_(self) -> None:
        lookup_grid(self, self.grid)


# ---------------------------------------------------------------------------------------------
# Shardings as Python values
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sharding:
    """How a value is laid out over a grid: the grid axes each tensor dimension is split over
    (`split`, MLIR's split_axes) and the grid axes over which it is a pending reduction
    (`partial`, with its `reduction`; only the partitioner makes partial values: MLIR's
    sharding attribute no longer spells them).
    """

    split: tuple[tuple[int, ...], ...]
    partial: tuple[int, ...] = ()
    reduction: ReductionKind = ReductionKind.SUM

    @staticmethod
    def replicated(rank: int) -> Sharding:
        return Sharding(((),) * rank)

    @property
    def is_replicated(self) -> bool:
        return not self.partial and not any(self.split)

    def used_axes(self) -> set[int]:
        return {a for axes in self.split for a in axes} | set(self.partial)

    def local_shape(self, shape: Sequence[int], grid: Sequence[int]) -> tuple[int, ...]:
        return tuple(n // group_size(grid, axes) for n, axes in zip(shape, self.split))

    def describe(self) -> str:
        text = "[" + ", ".join("[" + ", ".join(map(str, a)) + "]" for a in self.split) + "]"
        if self.partial:
            text += f" partial {self.reduction.value} over {list(self.partial)}"
        return text


def sharding_of(op: ShardingOp) -> Sharding:
    return Sharding(split_axes_of(op.split_axes))


def check_sharding(
    where: Operation, sharding: Sharding, t: Attribute, grid: Sequence[int], grid_name: str
) -> None:
    """`sharding` fits tensor type `t` on a grid of shape `grid`: one entry per dimension, axes
    in range and used once, each dimension divisible by its number of chunks."""
    if not isinstance(t, TensorType):
        raise VerifyException(f"'{where.name}' op shards a {t}; only ranked tensors are sharded")
    shape = t.get_shape()
    if len(sharding.split) > len(shape):
        raise VerifyException(
            f"'{where.name}' op split_axes {sharding.describe()} has {len(sharding.split)} entries "
            f"for {t} of rank {len(shape)}"
        )
    flat = [a for axes in sharding.split for a in axes]
    check_grid_axes(where, grid, flat, "split_axes")
    for d, axes in enumerate(sharding.split):
        chunks = group_size(grid, axes)
        if shape[d] % chunks:
            raise VerifyException(
                f"'{where.name}' op cannot split dimension {d} of {t} (size {shape[d]}) into "
                f"{chunks} equal chunks over axes {list(axes)} of grid {grid_name} "
                f"({'x'.join(map(str, grid))})"
            )


def pad_sharding(sharding: Sharding, rank: int) -> Sharding:
    """MLIR allows split_axes shorter than the rank: the missing dimensions are not split."""
    return Sharding(sharding.split + ((),) * (rank - len(sharding.split)), sharding.partial, sharding.reduction)


def make_sharding_op(grid: str, split: Sequence[Sequence[int]]) -> ShardingOp:
    return ShardingOp.build(
        operands=[[], []],
        properties={"grid": FlatSymbolRefAttr(grid), "split_axes": axes_array_attr(split)},
        result_types=[ShardingType()],
    )


def shard_value(value: SSAValue, sharding: SSAValue, annotate_for_users: bool = False) -> ShardOp:
    from xdsl.dialects.builtin import UnitAttr

    return ShardOp(value, sharding, UnitAttr() if annotate_for_users else None)


COLLECTIVES = (
    AllGatherOp,
    AllReduceOp,
    AllSliceOp,
    AllToAllOp,
    ReduceScatterOp,
    BroadcastOp,
    GatherOp,
    ScatterOp,
    ReduceOp,
    SendOp,
    RecvOp,
    ShiftOp,
)

Shard = Dialect(
    "shard",
    [
        AllGatherOp,
        AllReduceOp,
        AllSliceOp,
        AllToAllOp,
        ReduceScatterOp,
        BroadcastOp,
        GatherOp,
        RecvOp,
        ReduceOp,
        SendOp,
        ScatterOp,
        ShiftOp,
        GridOp,
        ShardingOp,
        ShardOp,
        ProcessLinearIndexOp,
    ],
    [ReductionKindAttr, ShardingType, ShardAxesArrayAttr],
)
