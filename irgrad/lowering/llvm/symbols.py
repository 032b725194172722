"""The module-level symbols the `convert-*-to-llvm` passes add: declarations of the C
functions the lowered code calls (`declare_function`, one per name and module) and constant
C strings as internal globals (`StringGlobals`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType, i8
from xdsl.ir import Attribute, Block, Operation
from xdsl.traits import SymbolTable

from irgrad.diagnostics import PassError
from irgrad.lowering.llvm.memo import memo

_DECLARED = "_irgrad_llvm_declared"
"""On a module: the functions `declare_function` found or declared in it, by name."""


class StringGlobals:
    """A module's constant C strings (NUL-terminated bytes) as internal `llvm.mlir.global`s,
    one per distinct text, named `<prefix>_<k>` (k skipping names the module already has):
    the messages of failed asserts (convert-cf-to-llvm), the specs of prints
    (convert-debug-to-llvm)."""

    def __init__(self, module: ModuleOp, prefix: str) -> None:
        self.module = module
        self.prefix = prefix
        self.names: dict[bytes, str] = {}

    def name(self, text: bytes) -> str:
        """The global holding `text` (added at the module's end the first time)."""
        name = self.names.get(text)
        if name is None:
            k = len(self.names)
            while SymbolTable.lookup_symbol(self.module, name := f"{self.prefix}_{k}"):
                k += 1
            data = text + b"\0"
            value = DenseIntOrFPElementsAttr(TensorType(i8, [len(data)]), BytesAttr(data))
            self.module.body.block.add_op(
                llvm.GlobalOp(llvm.LLVMArrayType(len(data), i8), name, "internal", constant=True, value=value)
            )
            self.names[text] = name
        return name


def declare_function(
    anchor: Block | Operation | None,
    name: str,
    arg_types: Sequence[Attribute],
    result_type: Attribute | None,
) -> llvm.FuncOp:
    """The `llvm.func` declaration of C function `name` in the module around `anchor`."""
    module = _enclosing_module(anchor)
    declared = memo(module, _DECLARED)
    hit = declared.get(name)
    if hit is not None and hit.parent is module.body.block and hit.sym_name.data == name:
        return hit  # a symbol table lookup per call was a tenth of convert-memref-to-llvm
    existing = SymbolTable.lookup_symbol(module, name)
    if isinstance(existing, llvm.FuncOp):
        declared[name] = existing
        return existing
    if existing is not None:
        raise PassError(
            f"is named @{name}, like the C library function the lowering calls; rename it",
            existing,
        )
    func_type = llvm.LLVMFunctionType(
        list(arg_types), llvm.LLVMVoidType() if result_type is None else result_type
    )
    decl = llvm.FuncOp(name, func_type, linkage=llvm.LinkageAttr("external"))
    module.body.block.add_op(decl)
    declared[name] = decl
    return decl


def _enclosing_module(anchor: Block | Operation | None) -> ModuleOp:
    op = anchor.parent_op() if isinstance(anchor, Block) else anchor
    while op is not None and not isinstance(op, ModuleOp):
        op = op.parent_op()
    if op is None:
        raise ValueError("the op is not inside a builtin.module")
    # The outermost module holds the symbols the translation sees.
    while (parent := op.parent_op()) is not None:
        if isinstance(parent, ModuleOp):
            op = parent
        else:
            break
    return op
