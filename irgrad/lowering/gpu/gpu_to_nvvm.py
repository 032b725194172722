"""`convert-gpu-to-nvvm`: the kernels of each `gpu.module` to the `llvm` dialect for NVPTX.

Input invariant: stage "kernels" (output of gpu-kernel-outlining): `gpu.func` kernels and
`memref.global`s in `gpu.module`s; kernel bodies hold scf, memref, arith and math ops and
gpu id, size and barrier ops.
Output IR: stage "nvvm" of docs/design/gpu-pipeline.md: each `gpu.module` holds only llvm
dialect ops; host code outside it is untouched. The device module is lowered on its own,
by the CPU pipeline's conversions (memref, scf, arith, math, func, cf: the same memref
model, bare pointers, and the same arithmetic semantics) plus:
- gpu ids and sizes -> NVVM special-register intrinsics; `gpu.barrier` -> `llvm.nvvm.barrier0`;
- shared memory (memory space 3) -> an internal `llvm.mlir.global` in address space 3;
- transcendental math -> calls of libdevice's `__nv_*` functions, linked by the PTX translation;
- a kernel -> an `llvm.func` with the `nvvm.kernel` attribute whose pointer arguments are in
  the global address space, cast to generic pointers on entry.
Details: docs/design/gpu-pipeline.md, "irgrad/lowering/gpu/gpu_to_nvvm.py".
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, gpu, llvm, math, memref
from xdsl.dialects.builtin import (
    Float64Type,
    IntAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from irgrad.dialects.upstream.llvm import AddrSpaceCastOp
from irgrad.lowering.llvm.arith_to_llvm import ConvertArithToLLVMPass
from irgrad.lowering.llvm.cf_to_llvm import ConvertCfToLLVMPass
from irgrad.lowering.contracts import assert_stage_llvm
from irgrad.lowering.llvm.func_to_llvm import ConvertFuncToLLVMPass
from irgrad.lowering.gpu.common import SHARED_MEMORY_SPACE, is_shared_memory
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.casts import reconcile_casts
from irgrad.lowering.llvm.checks import check_no_ops_left, check_scalar_operands
from irgrad.lowering.llvm.type_conversion import PTR, byte_size, convert_type, f32, storage_type
from irgrad.lowering.rewriting import apply_conversion
from irgrad.lowering.llvm.math_to_llvm import compute_type, math_to_llvm_patterns, narrow, widen
from irgrad.lowering.llvm.memref_to_llvm import ConvertMemRefToLLVMPass
from irgrad.lowering.loops.scf_parallel_to_scf import ConvertScfParallelToScfPass
from irgrad.lowering.llvm.scf_to_cf_with_while import ConvertScfToCfWithWhilePass
from irgrad.lowering.llvm.to_llvm import cyclic_gc_paused

PASS = "convert-gpu-to-nvvm"
KERNEL_ATTR = "nvvm.kernel"
GLOBAL_PTR = llvm.LLVMPointerType(IntAttr(1))
SHARED_PTR = llvm.LLVMPointerType(IntAttr(SHARED_MEMORY_SPACE))

SREG = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}

LIBDEVICE: dict[type[Operation], str] = {
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.ExpM1Op: "expm1",
    math.LogOp: "log",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
    math.Log1pOp: "log1p",
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.TanOp: "tan",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.AtanOp: "atan",
    math.Atan2Op: "atan2",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.PowFOp: "pow",
    math.CbrtOp: "cbrt",
    math.ErfOp: "erf",
    math.FPowIOp: "pow",
}
"""Math ops computed by libdevice: `__nv_<name>f` on f32, `__nv_<name>` on f64."""


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


class SpecialRegisterLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        register = SREG.get(type(op))
        if register is None:
            return
        dim = op.dimension.data.value  # type: ignore[attr-defined]
        b = LLVMBuilder(rewriter, op)
        value = b.intrinsic(f"llvm.nvvm.read.ptx.sreg.{register}.{dim}", [], i32)
        b.replace(op, b.zext(value, i64))


class BarrierLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.BarrierOp, rewriter: PatternRewriter):
        LLVMBuilder(rewriter, op).intrinsic("llvm.nvvm.barrier0", [], None)
        rewriter.erase(op)


class SharedMemoryLowering(RewritePattern):
    """A shared-memory `memref.alloca` to an address-space-3 global of the device module."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.count = 0

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter):
        t = op.memref.type
        if not is_shared_memory(t):
            return
        assert isinstance(t, MemRefType)
        element = storage_type(t.element_type)
        count = 1
        for n in t.get_shape():
            count *= n
        name = f"__irgrad_shared_{self.count}"
        self.count += 1
        array = llvm.LLVMArrayType(max(1, count), element)
        alignment = max(4, byte_size(element))
        shared = llvm.GlobalOp(array, name, "internal", addr_space=SHARED_MEMORY_SPACE, alignment=alignment)
        self.module.body.block.insert_op_before(shared, self.module.body.block.first_op)  # type: ignore[arg-type]
        b = LLVMBuilder(rewriter, op)
        address = b.insert(llvm.AddressOfOp(name, SHARED_PTR))
        b.replace(op, b.insert(AddrSpaceCastOp(address, PTR)))


class LibdeviceLowering(RewritePattern):
    """Transcendental math ops as libdevice calls (module doc)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        name = LIBDEVICE.get(type(op))
        t = op.results[0].type if op.results else None
        if name is None and isinstance(op, math.TanhOp) and isinstance(compute_type(t), Float64Type):
            name = "tanh"
        if name is None or t is None:
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        args = b.operands(op.operands)
        base = widen(b, args[0], t)
        ct = base.type
        rest = [widen(b, a, t) for a in args[1:]]
        if isinstance(op, math.FPowIOp):
            rest = [b.sitofp(args[1], ct)]
        suffix = "f" if ct == f32 else ""
        result = b.call(f"__nv_{name}{suffix}", [base, *rest], ct)
        b.replace(op, narrow(b, result, t) if result.type != convert_type(t) else result)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def kernels_to_functions(device: ModuleOp) -> set[str]:
    """`gpu.func` -> `func.func` (public), `gpu.return` -> `func.return`; the kernel names."""
    kernels: set[str] = set()
    for op in list(device.body.block.ops):
        if not isinstance(op, gpu.FuncOp):
            continue
        name = op.sym_name.data
        if op.kernel is not None:
            kernels.add(name)
        for ret in [r for r in op.walk() if isinstance(r, gpu.ReturnOp)]:
            block = ret.parent_block()
            assert block is not None
            block.insert_op_before(func.ReturnOp(*ret.args), ret)
            block.erase_op(ret)
        body = op.detach_region(op.body)
        new = func.FuncOp(name, op.function_type, body)
        device.body.block.insert_op_before(new, op)
        device.body.block.erase_op(op)
    return kernels


def mark_kernel(function: llvm.FuncOp) -> None:
    """The `nvvm.kernel` attribute, and global-address-space pointer arguments cast to
    generic pointers on entry (module doc)."""
    function.attributes[KERNEL_ATTR] = UnitAttr()
    function.attributes["gpu.kernel"] = UnitAttr()  # upstream's gpu.launch_func checks its callee has it
    entry = function.body.blocks[0]
    rewriter = PatternRewriter(function)
    inputs = list(function.function_type.inputs.data)
    for k, arg in enumerate(list(entry.args)):
        if not isinstance(arg.type, llvm.LLVMPointerType):
            continue
        new_arg = rewriter.insert_block_argument(entry, k, GLOBAL_PTR)
        old_arg = entry.args[k + 1]
        cast = AddrSpaceCastOp(new_arg, PTR)
        rewriter.insert(cast, InsertPoint.at_start(entry))
        old_arg.replace_all_uses_with(cast.results[0])
        rewriter.erase_block_argument(old_arg)
        inputs[k] = GLOBAL_PTR
    function.properties["function_type"] = llvm.LLVMFunctionType(
        inputs, function.function_type.output
    )
    function.properties["linkage"] = llvm.LinkageAttr("external")


def lower_device_module(device: ModuleOp, ctx: Context) -> None:
    """Lower a standalone module of kernels and globals to the llvm dialect (module doc)."""
    kernels = kernels_to_functions(device)
    apply_conversion(
        device, [SpecialRegisterLowering(), BarrierLowering(), SharedMemoryLowering(device)]
    )
    check_no_ops_left(device, "gpu", PASS)
    for p in (
        ConvertScfParallelToScfPass(),
        ConvertMemRefToLLVMPass(),
        ConvertScfToCfWithWhilePass(),
        ConvertArithToLLVMPass(),
    ):
        p.apply(ctx, device)
    apply_conversion(device, [LibdeviceLowering(), *math_to_llvm_patterns()])
    check_no_ops_left(device, "math", PASS)
    ConvertFuncToLLVMPass(packed_interface=False).apply(ctx, device)
    # No runtime on the device reports a failed assert: cf.assert stays an error there.
    ConvertCfToLLVMPass(lower_asserts=False).apply(ctx, device)
    reconcile_casts(device)
    for op in device.body.block.ops:
        if isinstance(op, llvm.FuncOp) and op.sym_name.data in kernels:
            mark_kernel(op)
    assert_stage_llvm(device)


@dataclass(frozen=True)
class ConvertGpuToNVVMPass(ModulePass):
    """Lower the kernels of each gpu.module to the llvm dialect for NVPTX: NVVM special
    registers and barriers, shared memory in address space 3, libdevice math, ptx kernels
    with global pointers.

    Input invariant: stage "kernels". Output IR: stage "nvvm" (docs/design/gpu-pipeline.md);
    host code is left as it is.
    """

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with cyclic_gc_paused():
            for kernels in [m for m in op.walk() if isinstance(m, gpu.ModuleOp)]:
                device = ModuleOp([])
                for inner in list(kernels.body.block.ops):
                    inner.detach()
                    device.body.block.add_op(inner)
                try:
                    lower_device_module(device, ctx)
                finally:
                    for inner in list(device.body.block.ops):
                        inner.detach()
                        kernels.body.block.add_op(inner)


def device_module(gpu_module: gpu.ModuleOp) -> ModuleOp:
    """A `builtin.module` holding copies of a lowered `gpu.module`'s ops (for translation)."""
    return ModuleOp([op.clone() for op in gpu_module.body.block.ops])


__all__ = [
    "KERNEL_ATTR",
    "ConvertGpuToNVVMPass",
    "device_module",
    "lower_device_module",
]
