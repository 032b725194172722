"""`memref` and `bufferization` on numpy arrays: a memref is a mutable array or a view of one.

Why numpy views: a `memref.subview` aliases its source, and a strided numpy view aliases
exactly the same elements, so stores through either are seen by both. Globals live once per
interpreter run. Crossing between tensors and memrefs copies (`to_tensor`, `to_buffer`), so a
tensor value never changes after it is made. Out-of-bounds accesses raise
`UndefinedBehaviorError`.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects import bufferization, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, MemRefType, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.traits import SymbolTable

from irgrad.backends.interpreter.arith import element_dtype
from irgrad.ir_numpy import from_attribute
from irgrad.backends.interpreter.errors import UndefinedBehaviorError
from irgrad.backends.interpreter.tensor import (
    read_elements,
    check_index,
    collapsed_shape,
    mixed,
    reduced_shape,
    result_shape,
    slice_params,
    slices,
)
from irgrad.backends.interpreter.values import numpy_impl


def reshaped_view(x: np.ndarray, shape: list[int]) -> np.ndarray:
    """A view of `x` with a new shape; never a copy, since a memref reshape must alias."""
    try:
        return np.reshape(x, shape, copy=False)  # numpy >= 2.1: raises where it would copy
    except TypeError:  # older numpy has no `copy` here; setting .shape raises likewise
        view = x.view()
        view.shape = shape
        return view


def poison(x: np.ndarray) -> None:
    """Overwrite a freed buffer so a later read shows: NaN for floats, a large odd pattern for
    integers. Generated code reading freed memory reads garbage; the interpreter reads this,
    so `--verify-each=numeric` catches a pass that moves a read past a dealloc."""
    if not isinstance(x, np.ndarray) or not x.flags.writeable:
        return
    if x.dtype.kind in "fc" or x.dtype.name == "bfloat16":
        x.fill(np.nan)
    elif x.dtype.kind in "iu":
        x.fill(np.array(-0x5A5A5A5B, dtype=np.int64).astype(x.dtype))
    elif x.dtype.kind == "b":
        x.fill(True)


@register_impls
class MemRefFunctions(InterpreterFunctions):
    @numpy_impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues):
        t = op.memref.type
        return (np.zeros(result_shape(t, args[: len(op.dynamic_sizes)]), dtype=element_dtype(t)),)

    @numpy_impl(memref.AllocaOp)
    def run_alloca(self, interpreter: Interpreter, op: memref.AllocaOp, args: PythonValues):
        t = op.memref.type
        return (np.zeros(result_shape(t, args[: len(op.dynamic_sizes)]), dtype=element_dtype(t)),)

    @numpy_impl(memref.DeallocOp)
    def run_dealloc(self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues):
        poison(args[0])
        return ()

    @numpy_impl(memref.LoadOp)
    def run_load(self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues):
        x, *indices = args
        return (read_elements(op, x, indices),)

    @numpy_impl(memref.StoreOp)
    def run_store(self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues):
        value, x, *indices = args
        x[check_index(op, x.shape, indices)] = value
        return ()

    @numpy_impl(memref.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: memref.CopyOp, args: PythonValues):
        source, target = args
        if source.shape != target.shape:
            raise UndefinedBehaviorError(
                f"copy of {list(source.shape)} into {list(target.shape)}", op
            )
        np.copyto(target, source)
        return ()

    @numpy_impl(memref.SubviewOp)
    def run_subview(self, interpreter: Interpreter, op: memref.SubviewOp, args: PythonValues):
        x = args[0]
        offsets, sizes, strides = slice_params(op, args)
        view = x[slices(op, x.shape, offsets, sizes, strides)]
        return (reshaped_view(view, reduced_shape(sizes, cast(TensorType, op.result.type))),)

    @numpy_impl(memref.CastOp)
    def run_cast(self, interpreter: Interpreter, op: memref.CastOp, args: PythonValues):
        return (args[0],)

    @numpy_impl(memref.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: memref.CollapseShapeOp, args: PythonValues
    ):
        (x,) = args
        return (reshaped_view(x, collapsed_shape(x.shape, op.reassociation)),)

    @numpy_impl(memref.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: memref.ExpandShapeOp, args: PythonValues
    ):
        x, *dynamic = args
        return (reshaped_view(x, mixed(op.static_output_shape, dynamic)),)

    @numpy_impl(memref.DimOp)
    def run_dim(self, interpreter: Interpreter, op: memref.DimOp, args: PythonValues):
        x, index = args
        return (x.shape[int(index)],)

    @numpy_impl(memref.RankOp)
    def run_rank(self, interpreter: Interpreter, op: memref.RankOp, args: PythonValues):
        return (args[0].ndim,)

    @numpy_impl(memref.GetGlobalOp)
    def run_get_global(
        self, interpreter: Interpreter, op: memref.GetGlobalOp, args: PythonValues
    ):

        def create() -> np.ndarray:
            glob = SymbolTable.lookup_symbol(op, op.name_)
            assert isinstance(glob, memref.GlobalOp)
            t = cast(MemRefType, glob.type)
            if isinstance(glob.initial_value, DenseIntOrFPElementsAttr):
                return np.array(from_attribute(glob.initial_value)).reshape(t.get_shape())
            return np.zeros(t.get_shape(), dtype=element_dtype(t))

        return (interpreter.get_data(MemRefFunctions, f"global {op.name_}", create),)

    @numpy_impl(bufferization.ToTensorOp)
    def run_to_tensor(
        self, interpreter: Interpreter, op: bufferization.ToTensorOp, args: PythonValues
    ):
        return (np.array(args[0]),)

    @numpy_impl(bufferization.ToBufferOp)
    def run_to_buffer(
        self, interpreter: Interpreter, op: bufferization.ToBufferOp, args: PythonValues
    ):
        return (np.array(args[0]),)

    @numpy_impl(bufferization.CloneOp)
    def run_clone(
        self, interpreter: Interpreter, op: bufferization.CloneOp, args: PythonValues
    ):
        return (np.array(args[0]),)

    @numpy_impl(bufferization.AllocTensorOp)
    def run_alloc_tensor(
        self, interpreter: Interpreter, op: bufferization.AllocTensorOp, args: PythonValues
    ):
        t = op.tensor.type
        if op.copy is not None:
            return (np.array(args[len(op.dynamic_sizes)]),)
        return (np.zeros(result_shape(t, args[: len(op.dynamic_sizes)]), dtype=element_dtype(t)),)

    @numpy_impl(bufferization.MaterializeInDestinationOp)
    def run_materialize_in_destination(
        self,
        interpreter: Interpreter,
        op: bufferization.MaterializeInDestinationOp,
        args: PythonValues,
    ):
        source, dest = args
        if isinstance(op.dest.type, MemRefType):
            np.copyto(dest, source)
            return ()
        return (np.array(source),)
