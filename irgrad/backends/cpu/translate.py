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

The text it prints is what `irgrad-opt -t llvm` prints, up to these attributes. Both check
the module first (`check_translatable`), so bad input is a located error, not an llvmlite one.
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation

from irgrad.diagnostics import IrgradError
from irgrad.lowering.contracts import assert_stage_llvm
from irgrad.xdsl_patches import llvm_call_intrinsic

llvm_call_intrinsic.apply()  # intrinsics take opaque pointers

BYTES_INITIALIZER_THRESHOLD = 256
"""Globals with more elements than this get a byte-string initializer."""


class TranslationError(IrgradError):
    """A stage-"llvm" module that LLVM IR cannot express, located at the offending op."""

    def __init__(self, op: Operation, message: str) -> None:
        self.op = op
        super().__init__(f"'{op.name}' op {message}", op.location)


def check_translatable(module: ModuleOp) -> None:
    """Raise a located error for what the translation would reject without a location.

    The stage "llvm" contract (`assert_stage_llvm`: only llvm ops, llvm types, no casts left),
    and one signature per intrinsic: LLVM IR declares `llvm.call_intrinsic`'s callee once, so a
    second call with other argument or result types is an error at that call (xDSL's
    translation raised a bare llvmlite TypeError for arguments and silently kept the first
    result type).
    """
    assert_stage_llvm(module)
    signatures: dict[str, str] = {}
    for op in module.walk():
        if not isinstance(op, llvm.CallIntrinsicOp):
            continue
        name = op.intrin.data
        result = op.ress.type if op.ress is not None else None
        signature = _signature([a.type for a in op.args], result)
        first = signatures.setdefault(name, signature)
        if first != signature:
            raise TranslationError(
                op,
                f"calls '{name}' as {signature}, but an earlier call has type {first}; an "
                "intrinsic has one signature in LLVM IR",
            )


def _signature(args: list[Attribute], result: Attribute | None) -> str:
    return f"({', '.join(str(t) for t in args)}) -> {result if result is not None else '()'}"


def to_llvm_ir(module: ModuleOp, *, triple: str | None = None, data_layout: str = "") -> ir.Module:
    """The llvmlite module of a stage-"llvm" module (checked first: a located error if not)."""
    check_translatable(module)
    large = _large_globals(module)
    renamed = _colliding_functions(module)
    source = module
    if large or renamed:
        source = module.clone()
        for op in source.ops:
            if isinstance(op, llvm.GlobalOp) and op.sym_name.data in large:
                del op.properties["value"]
        _rename_symbols(source, renamed)
    result = convert_module(source, fallback_target_triple=triple, data_layout=data_layout)
    for op in source.ops:
        if isinstance(op, llvm.FuncOp):
            _fix_function(op, result)
        elif isinstance(op, llvm.GlobalOp):
            _fix_global(op, result, large.get(op.sym_name.data))
    return result


RENAMED_PREFIX = "_irgrad_fn_"
"""What a defined function whose name the C library already uses is called in LLVM IR."""


def _colliding_functions(module: ModuleOp) -> dict[str, str]:
    """Defined functions named like a symbol of this process (libc, libm: `exp`, `free`,
    `sin`, `malloc`), with their new names.

    Why: a traced `ig.jit(ig.exp)` is `@exp`; LLVM lowers `llvm.exp.f64` to a call of the C
    function `exp`, which the object file then binds to the module's own `@exp` (a function
    of two pointers): infinite recursion, a crash. Such a function gets RENAMED_PREFIX in
    LLVM IR; the entry Python calls (`_irgrad_packed_<name>`) keeps its name.
    """
    import llvmlite.binding as llvm_binding

    defined = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp) and op.body.blocks}
    taken = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp | llvm.GlobalOp)}
    renamed: dict[str, str] = {}
    for name in sorted(defined):
        if name.startswith("_irgrad_") or llvm_binding.address_of_symbol(name) is None:
            continue
        new = RENAMED_PREFIX + name
        while new in taken:
            new = "_" + new
        taken.add(new)
        renamed[name] = new
    return renamed


def _rename_symbols(module: ModuleOp, renamed: dict[str, str]) -> None:
    """Rename top-level symbols and every reference to them (calls, addressof)."""
    if not renamed:
        return
    for op in module.walk():
        for table in (op.properties, op.attributes):
            for key, value in list(table.items()):
                if isinstance(value, SymbolRefAttr) and not value.nested_references.data:
                    new = renamed.get(value.root_reference.data)
                    if new is not None:
                        table[key] = SymbolRefAttr(new)
                elif key == "sym_name" and isinstance(value, StringAttr) and op.parent_op() is module:
                    new = renamed.get(value.data)
                    if new is not None:
                        table[key] = StringAttr(new)


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
    if op.no_inline is not None or (linkage == "internal" and _more_ops_than(op, NO_INLINE_OPS)):
        fn.attributes.add("noinline")
    if op.arg_attrs is not None:
        for argument, attributes in zip(fn.args, op.arg_attrs.data):
            if "llvm.noalias" in attributes.data and isinstance(argument.type, ir.PointerType):
                argument.add_attribute("noalias")


NO_INLINE_OPS = 400
"""Internal functions with more llvm ops than this get `noinline`.

Why: LLVM inlines an internal function with one call site whatever its size (the "last call
to a static function" bonus), so all the generated functions of a program (a gradient's
`@f_vjp`, a factorization's custom_jvp rule, a loop body) became one function, and LLVM's
loop passes grew faster than linearly in its size. At this size the call is nothing next to the
body, so run time does not change (figures: docs/design/cpu-backend.md, "Measured")."""


def _more_ops_than(op: llvm.FuncOp, limit: int) -> bool:
    for count, _ in enumerate(op.body.walk(), start=1):
        if count > limit:
            return True
    return False


def _fix_global(op: llvm.GlobalOp, module: ir.Module, data: bytes | None) -> None:
    gvar = module.get_global(op.sym_name.data)
    assert isinstance(gvar, ir.GlobalVariable)
    if op.alignment is not None:
        gvar.align = op.alignment.value.data
    if data is not None:
        # Opaque pointers: users address the bytes by element type, not the global's type.
        gvar.value_type = ir.ArrayType(ir.IntType(8), len(data))
        gvar.initializer = ir.Constant(gvar.value_type, bytearray(data))
