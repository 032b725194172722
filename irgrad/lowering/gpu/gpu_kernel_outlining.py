"""`gpu-kernel-outlining`: launch bodies to `gpu.func` kernels, host code to GPU runtime ops.

Input invariant: stage "gpu" (output of convert-parallel-loops-to-gpu): host functions with
`gpu.launch` ops holding every device load and store; the only host-level loads of device
memory are of rank-0 identity-layout buffers.

Output IR: stage "kernels" of docs/design/gpu-pipeline.md. The module gets the
`gpu.container_module` attribute and one `gpu.module @kernels` holding one
`gpu.func @<function>_kernel<k> kernel` per launch, in launch order (its arguments the values
the launch body used from host code), and a public copy of every `memref.global`.

Host code keeps its control flow and scalar arithmetic; its memory operations become the
GPU runtime's, one runtime call each (irgrad/backends/gpu/host_code.py): `gpu.launch_func`,
`gpu.alloc`/`gpu.dealloc`, `gpu.memcpy`. Function arguments are device buffers: copying the
caller's arrays in and out is the runtime's, once per call of an entry function.
Details: docs/design/gpu-pipeline.md, "irgrad/lowering/gpu/gpu_kernel_outlining.py".
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import (
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError
from irgrad.lowering.gpu.common import captured_values, root

KERNEL_MODULE = "kernels"

_ID_OPS: list[tuple[type[Operation], str]] = [
    (gpu.BlockIdOp, "x"),
    (gpu.BlockIdOp, "y"),
    (gpu.BlockIdOp, "z"),
    (gpu.ThreadIdOp, "x"),
    (gpu.ThreadIdOp, "y"),
    (gpu.ThreadIdOp, "z"),
    (gpu.GridDimOp, "x"),
    (gpu.GridDimOp, "y"),
    (gpu.GridDimOp, "z"),
    (gpu.BlockDimOp, "x"),
    (gpu.BlockDimOp, "y"),
    (gpu.BlockDimOp, "z"),
]
"""What each `gpu.launch` body argument is, in MLIR's order."""


def _sinkable(value: SSAValue) -> bool:
    """Values a kernel recomputes instead of taking as an argument."""
    return isinstance(value.owner, arith.ConstantOp | memref.GetGlobalOp)


def outline(launch: gpu.LaunchOp, name: str) -> tuple[gpu.FuncOp, gpu.LaunchFuncOp]:
    """The kernel of `launch` and the `gpu.launch_func` that replaces it (not inserted)."""
    captured = list(captured_values(launch))
    arguments = [v for v in captured if not _sinkable(v)]
    body = launch.body.block
    entry = Block(arg_types=[v.type for v in arguments])
    for op in [v.owner for v in captured if _sinkable(v)]:
        copy = op.clone()  # type: ignore[union-attr]
        entry.add_op(copy)
        source = op.results[0]  # type: ignore[union-attr]
        source.replace_uses_with_if(copy.results[0], lambda use: launch.is_ancestor(use.operation))
        if not source.uses and isinstance(op, memref.GetGlobalOp):
            op.detach()
            op.erase()
    for value, arg in zip(arguments, entry.args):
        value.replace_uses_with_if(arg, lambda use: launch.is_ancestor(use.operation))
    for k, arg in enumerate(body.args):
        if arg.uses:
            op_type, dim = _ID_OPS[k]
            id_op = op_type(gpu.DimensionAttr(gpu.DimensionEnum(dim)))  # type: ignore[call-arg]
            entry.add_op(id_op)
            arg.replace_all_uses_with(id_op.results[0])
    for op in list(body.ops):
        op.detach()
        if isinstance(op, gpu.TerminatorOp):
            entry.add_op(gpu.ReturnOp([]))
        else:
            entry.add_op(op)
    kernel = gpu.FuncOp(name, ([v.type for v in arguments], []), Region(entry), kernel=True)
    launch_func = gpu.LaunchFuncOp(
        SymbolRefAttr(KERNEL_MODULE, [StringAttr(name)]),
        [launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ],
        [launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ],
        kernelOperands=arguments,
    )
    return kernel, launch_func


def _is_host_memory(value: SSAValue) -> bool:
    return isinstance(root(value).owner, memref.AllocaOp)


def convert_host_memory_ops(function: func.FuncOp) -> None:
    """Host code's memory operations to GPU runtime ops (module doc)."""
    for op in list(function.walk()):
        block = op.parent_block()
        if block is None:
            continue
        if isinstance(op, memref.AllocOp):
            t = op.memref.type
            assert isinstance(t, MemRefType)
            alloc = gpu.AllocOp(t, list(op.dynamic_sizes))
            block.insert_op_before(alloc, op)
            op.memref.replace_all_uses_with(alloc.result)
            block.erase_op(op)
        elif isinstance(op, memref.DeallocOp) and not _is_host_memory(op.memref):
            block.insert_op_before(gpu.DeallocOp(op.memref), op)
            block.erase_op(op)
        elif isinstance(op, memref.CopyOp):
            if op.source.type != op.destination.type:
                raise PassError(
                    "copies between different memref types; convert-parallel-loops-to-gpu "
                    "makes such copies kernels",
                    op,
                )
            block.insert_op_before(gpu.MemcpyOp(op.source, op.destination), op)
            block.erase_op(op)
        elif isinstance(op, memref.LoadOp) and not _is_host_memory(op.memref):
            t = op.memref.type
            assert isinstance(t, MemRefType)
            if t.get_shape() or not isinstance(t.layout, NoneAttr):
                raise PassError(
                    "reads device memory from host code; only rank-0 buffers can be read "
                    "there (convert-parallel-loops-to-gpu moves other loads into kernels)",
                    op,
                )
            host = memref.AllocaOp.get(t.element_type, shape=[])
            block.insert_op_before(host, op)
            block.insert_op_before(gpu.MemcpyOp(op.memref, host.memref), op)
            load = memref.LoadOp.get(host.memref, [])
            block.insert_op_before(load, op)
            op.res.replace_all_uses_with(load.res)
            block.erase_op(op)
        elif isinstance(op, memref.StoreOp) and not _is_host_memory(op.memref):
            raise PassError("stores to device memory from host code", op)


@dataclass(frozen=True)
class GpuKernelOutliningPass(ModulePass):
    """Outline gpu.launch bodies into gpu.func kernels of a gpu.module; host memory ops to
    gpu.alloc/dealloc/memcpy and launches to gpu.launch_func.

    Input invariant: stage "gpu". Output IR: stage "kernels" (docs/design/gpu-pipeline.md).
    """

    name = "gpu-kernel-outlining"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels: list[Operation] = []
        functions = [f for f in op.ops if isinstance(f, func.FuncOp)]
        for function in functions:
            launches = [l for l in function.walk() if isinstance(l, gpu.LaunchOp)]
            for k, launch in enumerate(launches):
                kernel, launch_func = outline(launch, f"{function.sym_name.data}_kernel{k}")
                kernels.append(kernel)
                block = launch.parent_block()
                assert block is not None
                block.insert_op_before(launch_func, launch)
                block.erase_op(launch)
            convert_host_memory_ops(function)
        for global_op in [g for g in op.ops if isinstance(g, memref.GlobalOp)]:
            device_global = global_op.clone()
            device_global.properties["sym_visibility"] = StringAttr("public")
            kernels.append(device_global)
        if not kernels:
            return
        existing = [m for m in op.ops if isinstance(m, gpu.ModuleOp)]
        if existing:
            raise PassError("the module already has a gpu.module; outline once", existing[0])
        op.attributes["gpu.container_module"] = UnitAttr()
        module_block = Block()
        for kernel in kernels:
            module_block.add_op(kernel)
        op.body.block.add_op(gpu.ModuleOp(StringAttr(KERNEL_MODULE), Region(module_block)))  # type: ignore[arg-type]


__all__ = ["KERNEL_MODULE", "GpuKernelOutliningPass", "convert_host_memory_ops", "outline"]
