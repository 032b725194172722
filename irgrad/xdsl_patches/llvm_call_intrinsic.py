"""An intrinsic's pointer parameters are opaque `ptr`s, whatever its first caller passed.

xDSL 0.75's translation of `llvm.call_intrinsic` declares the intrinsic with the llvmlite
types of its first call's arguments. A `llvm.mlir.addressof` value is the llvmlite global
itself, whose type is a typed pointer (`[6 x float]*`), so after a first
`llvm.memcpy(out, @f32_constant)` a second `llvm.memcpy(out, @i1_constant)` failed in
llvmlite: "Type of #2 arg mismatch: [6 x float]* != [6 x i8]*". The patch declares the
intrinsic first with opaque pointer parameters, which every pointer argument matches.
Upstream: not reported.

Applied with xDSL's LLVM backend, which irgrad imports only to translate a program
(irgrad/backends/cpu/translate.py): importing it costs a sixth of `import irgrad`.
"""

from __future__ import annotations

from irgrad.xdsl_patches.patching import XdslChanged, install, is_patched


def apply() -> None:
    from llvmlite import ir
    from xdsl.backend.llvm import convert_op
    from xdsl.backend.llvm.convert_type import convert_type

    original = convert_op._convert_call_intrinsic  # pyright: ignore[reportPrivateUsage]
    if is_patched(original):
        return
    if original.__code__.co_varnames[:3] != ("op", "builder", "val_map"):
        raise XdslChanged(
            "xDSL's _convert_call_intrinsic changed: review irgrad/xdsl_patches/llvm_call_intrinsic.py"
        )

    def _convert_call_intrinsic(op, builder, val_map):  # type: ignore[no-untyped-def]
        name = op.intrin.data
        if name not in builder.module.globals:
            arg_types = [
                ir.PointerType(addrspace=t.addrspace) if isinstance(t, ir.PointerType) else t
                for t in (val_map[arg].type for arg in op.args)
            ]
            ret = convert_type(op.ress.type) if op.ress is not None else ir.VoidType()
            ir.Function(builder.module, ir.FunctionType(ret, arg_types), name=name)
        original(op, builder, val_map)

    install(convert_op, "_convert_call_intrinsic", _convert_call_intrinsic, original)
