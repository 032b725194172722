"""`nn` ops that move elements without arithmetic: `nn.broadcast_in_dim`, `nn.reshape`,
`nn.transpose`, `nn.slice`, `nn.dynamic_slice`, `nn.dynamic_update_slice`, `nn.concatenate` and
`nn.pad`.

Broadcast, reshape and transpose carry `RegisteredCanonicalization`: their folds are in
canonicalization.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    DenseArrayBase,
    I64,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from irgrad.dialects.nn.base import (
    INDEX_INT_WIDTHS,
    NNOperation,
    RegisteredCanonicalization,
    Value,
    _i64_array,
    _i64_attr,
    _ints,
    _type_of,
    check_axes,
    is_signless_int,
    shape_str,
    tensor,
)


@irdl_op_definition
class BroadcastInDimOp(NNOperation):
    """Broadcasts to a larger shape: operand dimension i becomes result dimension dims[i].

    Each mapped operand dimension is 1 (broadcast) or equals the result dimension; unmapped
    result dimensions are new. As StableHLO's broadcast_in_dim.

    `%y = nn.broadcast_in_dim %x dims = [1] : tensor<3xf32> -> tensor<2x3xf32>`
    """

    name = "nn.broadcast_in_dim"
    COMPLEX: ClassVar[bool] = True
    traits = traits_def(Pure(), RegisteredCanonicalization())
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    dims = prop_def(DenseArrayBase.constr(i64))
    assembly_format = "$operand `dims` `=` $dims attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value, shape: Sequence[int], dims: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        super().__init__(
            operands=[operand],
            properties={"dims": _i64_array(dims)},
            result_types=[tensor(shape, t.get_element_type())],
        )

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        r = cast(TensorType, self.result.type)
        dims = _ints(self.dims)
        if t.get_element_type() != r.get_element_type():
            raise self.error(f"element types differ: operand {t}, result {r}")
        if len(dims) != len(t.get_shape()):
            raise self.error(
                f"dims {list(dims)} has {len(dims)} entries, operand {shape_str(t)} has rank "
                f"{len(t.get_shape())}"
            )
        check_axes(self, dims, len(r.get_shape()), "dims", "result")
        for i, d in enumerate(dims):
            src, dst = t.get_shape()[i], r.get_shape()[d]
            if src != 1 and src != dst:
                raise self.error(
                    f"operand dimension {i} (size {src}) cannot broadcast to result dimension "
                    f"{d} (size {dst}): operand {shape_str(t)}, result {shape_str(r)}"
                )


@irdl_op_definition
class ReshapeOp(NNOperation):
    """Reinterprets the elements in row-major order with a new shape of equal size.

    `%y = nn.reshape %x : tensor<2x3xf32> -> tensor<6xf32>`
    """

    name = "nn.reshape"
    COMPLEX: ClassVar[bool] = True
    traits = traits_def(Pure(), RegisteredCanonicalization())
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value, shape: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=[tensor(shape, t.get_element_type())])

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        r = cast(TensorType, self.result.type)
        if t.get_element_type() != r.get_element_type():
            raise self.error(f"element types differ: operand {t}, result {r}")
        if math.prod(t.get_shape()) != math.prod(r.get_shape()):
            raise self.error(
                f"element counts differ: operand {shape_str(t)} ({math.prod(t.get_shape())}), "
                f"result {shape_str(r)} ({math.prod(r.get_shape())})"
            )


@irdl_op_definition
class TransposeOp(NNOperation):
    """Permutes dimensions: result dimension i is operand dimension perm[i].

    `%y = nn.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>`
    """

    name = "nn.transpose"
    COMPLEX: ClassVar[bool] = True
    traits = traits_def(Pure(), RegisteredCanonicalization())
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    perm = prop_def(DenseArrayBase.constr(i64))
    assembly_format = "$operand `perm` `=` $perm attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value, perm: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        shape = t.get_shape()
        super().__init__(
            operands=[operand],
            properties={"perm": _i64_array(perm)},
            result_types=[tensor([shape[p] for p in perm], t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        perm = _ints(self.perm)
        rank = len(t.get_shape())
        if sorted(perm) != list(range(rank)):
            raise self.error(f"perm {list(perm)} is not a permutation of 0..{rank - 1}")
        return tensor([t.get_shape()[p] for p in perm], t.get_element_type())


def slice_length(start: int, limit: int, stride: int) -> int:
    """Number of indices start, start+stride, ... strictly before limit (either direction).

    A zero stride gives 0, so a builder still makes an op for the verifier to reject.
    """
    if stride == 0:
        return 0
    if stride > 0:
        return max(0, -(-(limit - start) // stride))
    return max(0, -(-(start - limit) // -stride))


@irdl_op_definition
class SliceOp(NNOperation):
    """Static strided slice: indices start, start+stride, ... up to but excluding limit.

    Negative strides walk backwards (limit -1 means "through index 0"), so `x[::-1]` is
    `start = [n-1], limit = [-1], stride = [-1]`. Indices are never wrapped.

    `%y = nn.slice %x start = [0, 2] limit = [2, -1] stride = [1, -1] : tensor<2x3xf32> -> tensor<2x3xf32>`
    """

    name = "nn.slice"
    COMPLEX: ClassVar[bool] = True
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    start = prop_def(DenseArrayBase.constr(i64))
    limit = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$operand `start` `=` $start `limit` `=` $limit `stride` `=` $stride attr-dict "
        "`:` type($operand) `->` type($result)"
    )

    def __init__(
        self,
        operand: Value,
        start: Sequence[int],
        limit: Sequence[int],
        stride: Sequence[int] | None = None,
    ):
        t = cast(TensorType, _type_of(operand))
        stride = list(stride) if stride is not None else [1] * len(start)
        shape = [slice_length(s, l, k) for s, l, k in zip(start, limit, stride)]
        super().__init__(
            operands=[operand],
            properties={
                "start": _i64_array(start),
                "limit": _i64_array(limit),
                "stride": _i64_array(stride),
            },
            result_types=[tensor(shape, t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        shape = t.get_shape()
        start, limit, stride = _ints(self.start), _ints(self.limit), _ints(self.stride)
        if not len(start) == len(limit) == len(stride) == len(shape):
            raise self.error(
                f"start, limit and stride need {len(shape)} entries (operand {shape_str(t)}), "
                f"got {len(start)}, {len(limit)} and {len(stride)}"
            )
        out: list[int] = []
        for d, (s, l, k, n) in enumerate(zip(start, limit, stride, shape)):
            if k == 0:
                raise self.error(f"stride of dimension {d} is 0")
            length = slice_length(s, l, k)
            if length > 0:
                last = s + (length - 1) * k
                if not (0 <= s < n and 0 <= last < n):
                    raise self.error(
                        f"dimension {d}: slice start {s}, limit {l}, stride {k} reads outside "
                        f"0..{n - 1} of operand {shape_str(t)}"
                    )
            out.append(length)
        return tensor(out, t.get_element_type())


_INDEX_SCALAR = base(IndexType) | base(IntegerType)


def _check_index_scalars(op: NNOperation, values: Sequence[SSAValue], rank: int) -> None:
    if rank == 0:
        raise op.error("operand must have rank >= 1")
    if len(values) != rank:
        raise op.error(f"needs {rank} start indices (one per operand dimension), got {len(values)}")
    for i, v in enumerate(values):
        t = v.type
        if not (isinstance(t, IndexType) or is_signless_int(t, INDEX_INT_WIDTHS)):
            raise op.error(f"start index #{i} must be index, i32 or i64, got {t}")


@irdl_op_definition
class DynamicSliceOp(NNOperation):
    """A slice of static size at start indices given as SSA values (a loop counter, say).

    Start indices are clamped so that the slice stays in bounds, as in XLA.

    `%row = nn.dynamic_slice %x[%i, %c0] sizes = [1, 3] : tensor<4x3xf32>, index, index -> tensor<1x3xf32>`
    """

    name = "nn.dynamic_slice"
    operand = operand_def(AnyTensorTypeConstr)
    start_indices = var_operand_def(_INDEX_SCALAR)
    result = result_def(AnyTensorTypeConstr)
    sizes = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$operand `[` $start_indices `]` `sizes` `=` $sizes attr-dict "
        "`:` type($operand) `,` type($start_indices) `->` type($result)"
    )

    def __init__(self, operand: Value, start_indices: Sequence[Value], sizes: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        super().__init__(
            operands=[operand, list(start_indices)],
            properties={"sizes": _i64_array(sizes)},
            result_types=[tensor(sizes, t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        shape = t.get_shape()
        _check_index_scalars(self, self.start_indices, len(shape))
        sizes = _ints(self.sizes)
        if len(sizes) != len(shape):
            raise self.error(f"sizes {list(sizes)} need {len(shape)} entries (operand {shape_str(t)})")
        for d, (s, n) in enumerate(zip(sizes, shape)):
            if not 0 <= s <= n:
                raise self.error(f"size {s} of dimension {d} exceeds operand {shape_str(t)}")
        return tensor(sizes, t.get_element_type())


@irdl_op_definition
class DynamicUpdateSliceOp(NNOperation):
    """A copy of operand with `update` written at start indices given as SSA values (clamped).

    `%y = nn.dynamic_update_slice %x, %row[%i, %c0] : tensor<4x3xf32>, tensor<1x3xf32>, index, index`
    """

    name = "nn.dynamic_update_slice"
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    operand = operand_def(T)
    update = operand_def(AnyTensorTypeConstr)
    start_indices = var_operand_def(_INDEX_SCALAR)
    result = result_def(T)
    assembly_format = (
        "$operand `,` $update `[` $start_indices `]` attr-dict "
        "`:` type($operand) `,` type($update) `,` type($start_indices)"
    )

    def __init__(self, operand: Value, update: Value, start_indices: Sequence[Value]):
        super().__init__(
            operands=[operand, update, list(start_indices)], result_types=[_type_of(operand)]
        )

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        u = cast(TensorType, self.update.type)
        _check_index_scalars(self, self.start_indices, len(t.get_shape()))
        if t.get_element_type() != u.get_element_type():
            raise self.error(f"element types differ: operand {t}, update {u}")
        if len(u.get_shape()) != len(t.get_shape()) or any(
            a > b for a, b in zip(u.get_shape(), t.get_shape())
        ):
            raise self.error(f"update {shape_str(u)} does not fit in operand {shape_str(t)}")


@irdl_op_definition
class ConcatenateOp(NNOperation):
    """Joins tensors along one dimension; the other dimensions must agree.

    `%y = nn.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>`
    """

    name = "nn.concatenate"
    COMPLEX: ClassVar[bool] = True
    inputs = var_operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    dimension = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs `dim` `=` $dimension attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, inputs: Sequence[Value], dimension: int):
        types = [cast(TensorType, _type_of(v)) for v in inputs]
        super().__init__(
            operands=[list(inputs)],
            properties={"dimension": _i64_attr(dimension)},
            result_types=[self.infer_type(types, dimension)],
        )

    @staticmethod
    def infer_type(types: Sequence[TensorType], dimension: int) -> TensorType:
        shape = list(types[0].get_shape())
        shape[dimension] = sum(t.get_shape()[dimension] for t in types)
        return tensor(shape, types[0].get_element_type())

    def expected_result_type(self) -> Attribute:
        types = [cast(TensorType, v.type) for v in self.inputs]
        if not types:
            raise self.error("needs at least one input")
        d = self.dimension.value.data
        first = types[0]
        rank = len(first.get_shape())
        if not 0 <= d < rank:
            raise self.error(f"dimension {d} out of range for inputs of rank {rank}")
        for i, t in enumerate(types[1:], 1):
            if t.get_element_type() != first.get_element_type():
                raise self.error(f"input #{i} element type differs: {first} vs {t}")
            s0, s1 = first.get_shape(), t.get_shape()
            if len(s1) != rank or any(a != b for k, (a, b) in enumerate(zip(s0, s1)) if k != d):
                raise self.error(
                    f"input #{i} shape {shape_str(t)} differs from input #0 {shape_str(first)} "
                    f"outside dimension {d}"
                )
        return self.infer_type(types, d)


@irdl_op_definition
class PadOp(NNOperation):
    """Pads each dimension with `low` and `high` copies of a scalar padding value.

    `%y = nn.pad %x, %zero low = [0, 1] high = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>`
    """

    name = "nn.pad"
    operand = operand_def(AnyTensorTypeConstr)
    padding_value = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$operand `,` $padding_value `low` `=` $low `high` `=` $high attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, operand: Value, padding_value: Value, low: Sequence[int], high: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        # Clamped so that negative padding reaches the verifier's message, not a dynamic dimension.
        shape = [max(0, n + a + b) for n, a, b in zip(t.get_shape(), low, high)]
        super().__init__(
            operands=[operand, padding_value],
            properties={"low": _i64_array(low), "high": _i64_array(high)},
            result_types=[tensor(shape, t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        p = cast(TensorType, self.padding_value.type)
        if p.get_shape() or p.get_element_type() != t.get_element_type():
            raise self.error(
                f"padding value must be a rank-0 tensor of {t.get_element_type()}, got {p}"
            )
        low, high = _ints(self.low), _ints(self.high)
        rank = len(t.get_shape())
        if len(low) != rank or len(high) != rank:
            raise self.error(
                f"low and high need {rank} entries (operand {shape_str(t)}), got {len(low)} and {len(high)}"
            )
        if any(v < 0 for v in (*low, *high)):
            raise self.error(f"padding must be non-negative, got low {list(low)}, high {list(high)}")
        return tensor(
            [n + a + b for n, a, b in zip(t.get_shape(), low, high)], t.get_element_type()
        )
