"""LLVM IR -> optimized machine code in this process: O3 for the host CPU, then MCJIT.

`compile_module(module)` takes a stage-"llvm" module through `to_llvm_ir` (translate.py),
parses and verifies it with LLVM, optimizes it with the new pass manager at O3 (loop and SLP
vectorization on) for the host CPU and its features, emits an object file and loads that
with loading.py's `load_object`. Going through the object file always (instead of JITting
the module directly) means the bytes `object_code()` returns for the on-disk cache are
exactly what runs, and loading cached code takes the same path as a fresh compile.

Code that calls a symbol this process does not provide (process.py registers the C library,
the runtimes define theirs on first use) is refused, rather than letting a call jump to
address 0.
"""

from __future__ import annotations

import threading
import time

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

from irgrad.backends.cpu.errors import CompileError
from irgrad.backends.cpu.loading import CompiledModule, CompileStats, install_runtime_for, load_object
from irgrad.backends.cpu.process import initialize, is_runtime_function
from irgrad.backends.cpu.target import host_target

FULL_UNROLL_MAX_COUNT = 4
"""The largest trip count LLVM's loop unroller may unroll completely (its default: unbounded).

Full unrolling of small static loops (a 3x3 convolution window, the 8 lanes of an attention head)
inside bigger nests multiplies the code the rest of O3 optimizes, for no speed: capping it makes
cold compiles much shorter at the same run time (figures: docs/design/cpu-backend.md, "Measured").
Partial and runtime unrolling, which the reductions' inner loops use, stay on."""

_UNROLL_OPTION = threading.Lock()


def _optimize(
    ref: llvm.ModuleRef, tm: llvm.TargetMachine, speed_level: int, loop_unrolling: bool
) -> None:
    tuning = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    tuning.loop_vectorization = speed_level >= 2
    tuning.slp_vectorization = speed_level >= 2
    tuning.loop_unrolling = loop_unrolling and speed_level >= 2
    builder = llvm.create_pass_builder(tm, tuning)
    # The cap is a process-wide LLVM option: set for this run only (the GPU backend's NVPTX
    # pipeline and other llvmlite users in the process keep LLVM's default).
    with _UNROLL_OPTION:
        llvm.set_option("irgrad", f"-unroll-full-max-count={FULL_UNROLL_MAX_COUNT}")
        try:
            builder.getModulePassManager().run(ref, builder)
        finally:
            llvm.set_option("irgrad", f"-unroll-full-max-count={2**32 - 1}")


def check_external_calls(module: ModuleOp) -> None:
    """A located CompileError at the first function `module` declares but does not define
    that is not one of irgrad's runtime functions, libc's memory functions or libm: IR read
    from a file must not call into the process (`system`, say). `compile_module`'s
    `allow_external_calls=True` (irgrad-run's `--allow-external-calls`) lifts this."""
    from xdsl.dialects import func
    from xdsl.dialects import llvm as llvm_dialect

    for op in module.ops:  # functions are top-level ops
        if isinstance(op, llvm_dialect.FuncOp | func.FuncOp) and not op.body.blocks:
            name = op.sym_name.data
            if not is_runtime_function(name):
                raise CompileError(
                    f"declares the external function @{name}, which is not one of irgrad's runtime "
                    "functions, libc's memory functions or libm: compiled code may not call into the "
                    "process (irgrad-run --allow-external-calls, or compile_module(..., "
                    "allow_external_calls=True), to allow it)",
                    op.location,
                )


def _check_symbols(ref: llvm.ModuleRef) -> None:
    install_runtime_for([fn.name for fn in ref.functions if fn.is_declaration])
    for fn in ref.functions:
        if not fn.is_declaration or fn.name.startswith("llvm."):
            continue
        if llvm.address_of_symbol(fn.name) is None:
            raise CompileError(
                f"the generated code calls @{fn.name}, which this process does not provide"
            )


def compile_module(
    module: ModuleOp, *, opt_level: int = 3, loop_unrolling: bool = True, allow_external_calls: bool = False
) -> CompiledModule:
    """Compile a stage-"llvm" module for the host CPU and load it.

    `opt_level` 0-3 picks LLVM's pipeline (loop and SLP vectorization from 2 on);
    `loop_unrolling=False` roughly halves the optimization and code generation time of a
    large module (small static loops are otherwise unrolled) for slower code.

    Raises `ContractError` (located) if the module is not in stage "llvm" form, and
    `CompileError` if LLVM rejects it, or (located) if it declares an external function that
    is not irgrad's runtime, libc's memory functions or libm, unless `allow_external_calls`.
    """
    # Imported here: loading cached object code (`load_object`) needs none of the lowering.
    from irgrad.backends.cpu.translate import to_llvm_ir
    from irgrad.lowering.llvm.to_llvm import cyclic_gc_paused

    initialize()
    if not allow_external_calls:
        check_external_calls(module)
    target = host_target()
    stats = CompileStats()
    start = time.perf_counter()
    tm = target.target_machine(opt_level)
    with cyclic_gc_paused():
        ir_module = to_llvm_ir(module, triple=target.triple, data_layout=str(tm.target_data))
        text = str(ir_module)
    stats.translate = time.perf_counter() - start

    start = time.perf_counter()
    try:
        ref = llvm.parse_assembly(text)
        ref.verify()
    except RuntimeError as err:
        raise CompileError(f"LLVM rejected the translated module: {err}") from err
    stats.parse = time.perf_counter() - start

    start = time.perf_counter()
    if opt_level > 0:
        _optimize(ref, tm, opt_level, loop_unrolling)
        from irgrad.backends.cpu.veclib import use_vector_math

        use_vector_math(ref, target.features)
    _check_symbols(ref)
    stats.optimize = time.perf_counter() - start

    start = time.perf_counter()
    data = tm.emit_object(ref)
    stats.codegen = time.perf_counter() - start

    compiled = load_object(data, target=target)
    compiled.llvm_ir = text
    compiled._optimized = ref
    compiled.stats.translate = stats.translate
    compiled.stats.parse = stats.parse
    compiled.stats.optimize = stats.optimize
    compiled.stats.codegen = stats.codegen
    return compiled


__all__ = ["FULL_UNROLL_MAX_COUNT", "compile_module"]
