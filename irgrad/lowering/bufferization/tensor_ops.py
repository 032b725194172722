"""Bufferizing `tensor` ops and dense constants.

- `tensor.empty`: no memory (an EMPTY root); an op that writes or reads it allocates;
- `arith.constant dense<...>`: a read-only `memref.global` + `memref.get_global`;
- `extract_slice`: a `memref.subview` (strided, offset `?`) of the source, a read-only view;
- `insert_slice`: a copy into a subview of the destination buffer (`destination`: in place
  when the destination is dead and writable, else a copy of it first); nothing at all when
  its source was computed in that subview already (linalg_ops.py, rule 2b);
- `collapse_shape`/`expand_shape`: `memref.collapse_shape`/`expand_shape` views of a
  contiguous buffer (a strided one is copied first); `reshape`: a collapse to 1-D then an
  expand;
- `extract`/`insert`: `memref.load`/`memref.store` (an insert into a live tensor copies it);
- `from_elements`: an alloc and one store per element.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
)
from xdsl.ir import Operation, SSAValue

from irgrad.diagnostics import PassError
from irgrad.lowering.bufferization.core import BufferizerCore
from irgrad.lowering.bufferization.model import (
    CONTRACT,
    Buffer,
    RootKind,
    dense_i64,
    kept_dimensions,
    memref_type,
    reassociation,
    shape_of,
    subview_type,
)


def _static_slice(op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> tuple[list[int], list[int]]:
    """Sizes and strides of a slice (static, strides >= 1, as the contract says)."""
    if op.sizes or op.strides:
        raise PassError("with dynamic sizes or strides " + CONTRACT, op)
    strides = list(op.static_strides.get_values())
    if any(s < 1 for s in strides):
        raise PassError("with a stride below 1 " + CONTRACT, op)
    return list(op.static_sizes.get_values()), strides


def _static_offsets(op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> list[int | None]:
    """A slice's offsets, None where dynamic."""
    return [None if o == DYNAMIC_INDEX else o for o in op.static_offsets.get_values()]


class TensorOps(BufferizerCore):
    """Conversions of tensor ops (see the module docstring)."""

    def convert_empty(self, op: tensor.EmptyOp) -> None:
        if op.dynamic_sizes:
            raise PassError("with dynamic sizes " + CONTRACT, op)
        self.bind_empty(op.tensor)
        self.dead_ops.append(op)

    def convert_constant(self, op: arith.ConstantOp) -> None:
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr):
            raise PassError(f"with a {value.name} value " + CONTRACT, op)
        t = memref_type(op.result.type)
        get = self.insert(memref.GetGlobalOp(self.globals.name_for(value, t), t), op)
        root = self.new_root(RootKind.GLOBAL, get.results[0], None)
        self.bind(op.result, Buffer(get.results[0], root))
        self.dead_ops.append(op)

    def convert_extract(self, op: tensor.ExtractOp) -> None:
        load = self.insert(memref.LoadOp.get(self.read(op.tensor, op), op.indices), op)
        load.location = op.location  # where a runtime bounds check points
        op.result.replace_all_uses_with(load.results[0])
        self.dead_ops.append(op)

    def convert_insert(self, op: tensor.InsertOp) -> None:
        dest = self.destination(op.dest, op, reads=True)
        assert dest.memref is not None
        store = self.insert(memref.StoreOp.get(op.scalar, dest.memref, op.indices), op)
        store.location = op.location  # where a runtime bounds check points
        self.bind(op.result, dest)
        self.dead_ops.append(op)

    def convert_from_elements(self, op: tensor.FromElementsOp) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        dest = self.alloc(t, op)
        assert dest.memref is not None
        shape = t.get_shape()
        constants: dict[int, SSAValue] = {}

        def index(i: int) -> SSAValue:
            if i not in constants:
                constant = arith.ConstantOp(IntegerAttr(i, IndexType()))
                constants[i] = self.insert(constant, op).results[0]
            return constants[i]

        for flat, element in enumerate(op.elements):
            position: list[int] = []
            for n in reversed(shape):
                position.append(flat % n)
                flat //= n
            indices = [index(i) for i in reversed(position)]
            self.insert(memref.StoreOp.get(element, dest.memref, indices), op)
        self.bind(op.result, dest)
        self.dead_ops.append(op)

    # ---- slices ------------------------------------------------------------------------

    def subview(
        self,
        op: tensor.ExtractSliceOp | tensor.InsertSliceOp,
        source: SSAValue,
        result_shape: Sequence[int],
    ) -> SSAValue:
        """The subview of `source` that slice op `op` describes, with shape `result_shape`."""
        sizes, strides = _static_slice(op)
        source_type = source.type
        assert isinstance(source_type, MemRefType)
        if kept_dimensions(sizes, result_shape) is None:
            raise PassError(f"slice sizes {sizes} do not reduce to shape {list(result_shape)}", op)
        view = memref.SubviewOp(
            source,
            op.offsets,
            [],
            [],
            op.static_offsets,
            op.static_sizes,
            op.static_strides,
            subview_type(source_type, sizes, strides, result_shape, _static_offsets(op)),
        )
        return self.insert(view, op).results[0]

    def convert_extract_slice(self, op: tensor.ExtractSliceOp) -> None:
        _static_slice(op)
        b = self.buffer(op.source)
        if b.memref is None:
            self.bind_empty(op.result)
        else:
            view = self.subview(op, b.memref, shape_of(op.result))
            self.bind(op.result, Buffer(view, b.root, covers=False))
        self.dead_ops.append(op)

    def convert_insert_slice(self, op: tensor.InsertSliceOp) -> None:
        _static_slice(op)
        if op in self.window_updates:
            # The source was computed in this very subview (linalg_ops.py, rule 2b).
            self.bind(op.result, self.buffer(op.dest))
            self.dead_ops.append(op)
            return
        source = self.buffer(op.source)
        # Writing a slice of a root into another slice of the same root could overlap.
        dest = self.destination(op.dest, op, reads=True, avoid=source.root)
        assert dest.memref is not None
        view = self.subview(op, dest.memref, shape_of(op.source))
        self.copy(self.read(op.source, op), view, op)
        self.bind(op.result, dest)
        self.dead_ops.append(op)

    # ---- reshapes ----------------------------------------------------------------------

    def _reshaped(self, op: Operation, result: SSAValue, view: Operation, source: Buffer) -> None:
        value = self.insert(view, op).results[0]
        self.bind(result, Buffer(value, source.root, covers=source.covers))
        self.dead_ops.append(op)

    def convert_reshape_view(self, op: tensor.CollapseShapeOp | tensor.ExpandShapeOp) -> None:
        if self.buffer(op.src).memref is None:
            self.bind_empty(op.result)
            self.dead_ops.append(op)
            return
        if isinstance(op, tensor.ExpandShapeOp) and op.dynamic_output_shape:
            raise PassError("with a dynamic output shape " + CONTRACT, op)
        source = self.read_contiguous(op.src, op)
        assert source.memref is not None
        t = memref_type(op.result.type)
        if isinstance(op, tensor.CollapseShapeOp):
            properties = {"reassociation": op.reassociation}
            view = memref.CollapseShapeOp.create(
                operands=[source.memref], result_types=[t], properties=properties
            )
        else:
            properties = {
                "reassociation": op.reassociation,
                "static_output_shape": op.static_output_shape,
            }
            view = memref.ExpandShapeOp.create(
                operands=[source.memref], result_types=[t], properties=properties
            )
        self._reshaped(op, op.result, view, source)

    def convert_reshape(self, op: tensor.ReshapeOp) -> None:
        """`tensor.reshape` to a static shape: collapse to 1-D, then expand (views, no copy)."""
        if self.buffer(op.source).memref is None:
            self.bind_empty(op.result)
            self.dead_ops.append(op)
            return
        source = self.read_contiguous(op.source, op)
        assert source.memref is not None
        source_shape, target_shape = shape_of(op.source), shape_of(op.result)
        element = memref_type(op.result.type).get_element_type()
        size = 1
        for d in source_shape:
            size *= d
        flat = source.memref
        if len(source_shape) == 0:  # 0-d to [1]: an expand with no groups
            properties = {"reassociation": reassociation([]), "static_output_shape": dense_i64([1])}
            expand = memref.ExpandShapeOp.create(
                operands=[flat], result_types=[MemRefType(element, [1])], properties=properties
            )
            flat = self.insert(expand, op).results[0]
        elif len(source_shape) > 1:
            properties = {"reassociation": reassociation([list(range(len(source_shape)))])}
            collapse = memref.CollapseShapeOp.create(
                operands=[flat], result_types=[MemRefType(element, [size])], properties=properties
            )
            flat = self.insert(collapse, op).results[0]
        t = MemRefType(element, target_shape)
        if len(target_shape) == 0:  # [1] to 0-d: a collapse with no groups
            view = memref.CollapseShapeOp.create(
                operands=[flat], result_types=[t], properties={"reassociation": reassociation([])}
            )
        elif len(target_shape) > 1:
            properties = {
                "reassociation": reassociation([list(range(len(target_shape)))]),
                "static_output_shape": dense_i64(target_shape),
            }
            view = memref.ExpandShapeOp.create(operands=[flat], result_types=[t], properties=properties)
        else:
            self.bind(op.result, Buffer(flat, source.root, covers=source.covers))
            self.dead_ops.append(op)
            return
        self._reshaped(op, op.result, view, source)
