"""LLVM IR -> optimized machine code: O3 for the host CPU, then MCJIT in this process.

`compile_module(module)` takes a stage-"llvm" module through `to_llvm_ir` (translate.py); LLVM
parses, verifies and optimizes it with the new pass manager at O3 (loop and SLP vectorization
on) for the host CPU and its features and emits an object file (compile_worker.py: here for a
process's first compiles, then in a worker process); loading.py's `load_object` loads that.
Going through the object file always (instead of JITting the module directly) means the bytes `object_code()` returns for the on-disk cache are
exactly what runs, and loading cached code takes the same path as a fresh compile.

Code that calls a symbol this process does not provide (process.py registers the C library,
the runtimes define theirs on first use) is refused, rather than letting a call jump to
address 0.
"""

from __future__ import annotations

import time

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

from irgrad.backends.cpu.compile_worker import FULL_UNROLL_MAX_COUNT, CompileWorker, WorkerDied, build
from irgrad.backends.cpu.errors import CompileError
from irgrad.backends.cpu.loading import CompiledModule, CompileStats, install_runtime_for, load_object
from irgrad.backends.cpu.process import initialize, is_runtime_function
from irgrad.backends.cpu.target import HostTarget, host_target

_WORKER = CompileWorker()


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


def _check_symbols(declared: list[str]) -> None:
    install_runtime_for(declared)
    for name in declared:
        if not name.startswith("llvm.") and llvm.address_of_symbol(name) is None:
            raise CompileError(f"the generated code calls @{name}, which this process does not provide")


def _build(request: dict) -> dict:
    """`compile_worker.build(request)` in the compile worker once this process has compiled
    enough modules itself (compile_worker.py says why), else here."""
    if _WORKER.wanted():
        try:
            return _WORKER.build(request)
        except WorkerDied as err:
            raise CompileError(str(err)) from err
    _WORKER.in_process += 1
    return build({**request, "keep_module": True})


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

    reply = _build(_request(text, target, opt_level, loop_unrolling))
    if "error" in reply:
        raise CompileError(reply["error"])
    _check_symbols(reply["declared"])
    data = reply["object"]
    compiled = load_object(data, target=target)
    compiled.llvm_ir = text
    compiled._optimized = reply.get("module")
    compiled._optimize_again = lambda: _optimized_again(text, target, opt_level, loop_unrolling)
    compiled.stats.translate = stats.translate
    compiled.stats.parse = reply["stats"]["parse"]
    compiled.stats.optimize = reply["stats"]["optimize"]
    compiled.stats.codegen = reply["stats"]["codegen"]
    return compiled


def _request(text: str, target: HostTarget, opt_level: int, loop_unrolling: bool) -> dict:
    """What `compile_worker.build` needs: the IR text and the target it is compiled for."""
    return {"text": text, "triple": target.triple, "cpu": target.cpu, "features": target.features,
            "opt_level": opt_level, "loop_unrolling": loop_unrolling}


def _optimized_again(text: str, target: HostTarget, opt_level: int, loop_unrolling: bool) -> llvm.ModuleRef:
    """The optimized module of a compile the worker did, redone here when someone asks for
    its IR (`CompiledModule.optimized_ir`)."""
    return build({**_request(text, target, opt_level, loop_unrolling), "keep_module": True})["module"]


__all__ = ["FULL_UNROLL_MAX_COUNT", "compile_module"]
