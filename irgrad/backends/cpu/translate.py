"""Stage "llvm" -> LLVM IR: xDSL's `convert_module`, plus what it drops.

`xdsl.backend.llvm.convert.convert_module` translates the llvm dialect to an llvmlite
`ir.Module` but leaves out function linkage, calling conventions and attributes, and global
alignment. `to_llvm_ir` restores them from the llvm dialect ops:
- `llvm.func` linkage (`internal` for private helpers, so LLVM may inline and drop them)
  and calling convention; `nounwind` on every defined function (nothing irgrad emits
  throws, and it lets LLVM skip unwind tables);
- `llvm.mlir.global` alignment;
- large global initializers are written as one byte string instead of a list of element
  constants (xDSL builds one llvmlite constant per element, seconds for a large weight).

The text it prints is what `irgrad-opt -t llvm` prints, up to these attributes.
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp

import irgrad.xdsl_fixes  # noqa: F401  (intrinsics take opaque pointers)
from irgrad.lowering.contracts import assert_stage_llvm

BYTES_INITIALIZER_THRESHOLD = 256
"""Globals with more elements than this get a byte-string initializer."""


def to_llvm_ir(module: ModuleOp, *, triple: str | None = None, data_layout: str = "") -> ir.Module:
    """The llvmlite module of a stage-"llvm" module (checked first: a located error if not)."""
    assert_stage_llvm(module)
    large = _large_globals(module)
    source = module
    if large:
        source = module.clone()
        for op in source.ops:
            if isinstance(op, llvm.GlobalOp) and op.sym_name.data in large:
                del op.properties["value"]
    result = convert_module(source, fallback_target_triple=triple, data_layout=data_layout)
    for op in module.ops:
        if isinstance(op, llvm.FuncOp):
            _fix_function(op, result)
        elif isinstance(op, llvm.GlobalOp):
            _fix_global(op, result, large.get(op.sym_name.data))
    return result


def _large_globals(module: ModuleOp) -> dict[str, bytes]:
    large: dict[str, bytes] = {}
    for op in module.ops:
        if not isinstance(op, llvm.GlobalOp):
            continue
        value = op.value
        if isinstance(value, DenseIntOrFPElementsAttr):
            count = len(value.data.data) // max(1, _element_bytes(value))
            if count > BYTES_INITIALIZER_THRESHOLD:
                large[op.sym_name.data] = value.data.data
    return large


def _element_bytes(value: DenseIntOrFPElementsAttr) -> int:
    element = value.get_element_type()
    width = getattr(element, "width", None)
    if width is not None:
        return max(1, width.data // 8)
    return {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}.get(str(element), 1)


def _fix_function(op: llvm.FuncOp, module: ir.Module) -> None:
    fn = module.get_global(op.sym_name.data)
    assert isinstance(fn, ir.Function)
    convention = op.CConv.convention.data
    if convention != "ccc":
        fn.calling_convention = convention
    if not op.body.blocks:
        return
    linkage = op.linkage.linkage.data
    if linkage != "external":
        fn.linkage = linkage
    fn.attributes.add("nounwind")


def _fix_global(op: llvm.GlobalOp, module: ir.Module, data: bytes | None) -> None:
    gvar = module.get_global(op.sym_name.data)
    assert isinstance(gvar, ir.GlobalVariable)
    if op.alignment is not None:
        gvar.align = op.alignment.value.data
    if data is not None:
        # Opaque pointers: users address the bytes by element type, not the global's type.
        gvar.value_type = ir.ArrayType(ir.IntType(8), len(data))
        gvar.initializer = ir.Constant(gvar.value_type, bytearray(data))
