"""irgrad's own small runtimes, written in LLVM IR (the allocation guard, the thread pool, the
BLAS and LAPACK shims), compiled to machine code once per machine instead of once per process.

Why: a process that finds its program in the disk cache would otherwise still compile these on
its first call, a noticeable part of a disk-cache hit. Their object code goes into the same
disk cache as programs' (irgrad.backends.cache: the key covers the IR text, the optimization
settings, the target and irgrad's sources) and is loaded as a program's is. A missing entry is
compiled and stored; a corrupt or foreign one is compiled again and overwritten. The code that
runs is always the loaded object, cached or just compiled, so the two paths cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.binding as llvm

from irgrad.backends import cache
from irgrad.backends.cpu.errors import CompileError
from irgrad.backends.cpu.target import check_object, host_target

SUFFIX = ".runtime"


def _target_machine(opt: int, host_cpu: bool) -> llvm.TargetMachine:
    """A new TargetMachine (an engine takes ownership of the one it is given): with
    `host_cpu`, the host target programs are compiled for (its CPU name and SIMD features),
    else the process's triple with a generic CPU (the allocation guard, installed while LLVM
    is being initialized, before the host target may be asked for)."""
    if host_cpu:
        return host_target().target_machine(opt)
    return llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(opt=opt, reloc="pic")


def _target_key(host_cpu: bool) -> str:
    if host_cpu:
        return repr(host_target())
    return llvm.get_process_triple()


def object_code(ir: str, *, opt: int, host_cpu: bool, passes: bool, vectorize: bool) -> bytes:
    """`ir` verified and compiled to an object file; with `passes`, LLVM's optimization
    pipeline at level `opt` runs first (vectorizers and unrolling only with `vectorize`),
    otherwise only code generation is at `opt` (as MCJIT compiles a module it is given)."""
    module = llvm.parse_assembly(ir)
    module.verify()
    tm = _target_machine(opt, host_cpu)
    if passes:
        tuning = llvm.create_pipeline_tuning_options(speed_level=opt)
        tuning.loop_vectorization = tuning.slp_vectorization = tuning.loop_unrolling = vectorize
        builder = llvm.create_pass_builder(tm, tuning)
        builder.getModulePassManager().run(module, builder)
    return tm.emit_object(module)


def _load(data: bytes, opt: int, host_cpu: bool) -> llvm.ExecutionEngine:
    """An engine holding the object code `data` (CompileError or RuntimeError if it is not
    loadable here)."""
    check_object(data)
    empty = llvm.parse_assembly("")
    empty.triple = llvm.get_process_triple()
    engine = llvm.create_mcjit_compiler(empty, _target_machine(opt, host_cpu))
    engine.add_object_file(llvm.ObjectFileRef.from_data(data))
    engine.finalize_object()
    return engine


def runtime_engine(
    ir: str, *, opt: int, host_cpu: bool = False, passes: bool = False, vectorize: bool = False
) -> llvm.ExecutionEngine:
    """An engine holding `ir` compiled for this process (see `object_code` for the options),
    from the disk cache where it is there; the caller keeps the engine alive (its code lives
    as long as the engine)."""
    key = _cache_key(ir, opt, host_cpu, passes, vectorize)
    data = None if key is None else cache.load(key, SUFFIX)
    if data is not None:
        try:
            return _load(data, opt, host_cpu)
        except (CompileError, RuntimeError):
            pass  # a corrupt or foreign entry: compiled again and overwritten below
    data = object_code(ir, opt=opt, host_cpu=host_cpu, passes=passes, vectorize=vectorize)
    if key is not None:
        cache.store(key, data, SUFFIX)
    return _load(data, opt, host_cpu)


def _cache_key(ir: str, opt: int, host_cpu: bool, passes: bool, vectorize: bool) -> str | None:
    """The runtime's disk-cache key; None when the cache is off (IRGRAD_CACHE_DIR=off): the key
    covers a hash of irgrad's sources, which with no cache folder to remember it in means
    reading all of them, for an entry nothing would store."""
    if cache.cache_dir() is None:
        return None
    settings = f"runtime;opt={opt};passes={passes};vectorize={vectorize}"
    return cache.cache_key(ir, settings, _target_key(host_cpu))


def define_symbols(engine: llvm.ExecutionEngine, entry_points: Sequence[str]) -> None:
    """Make `entry_points` of `engine` process symbols, for the generated code that calls them."""
    for name in entry_points:
        llvm.add_symbol(name, engine.get_function_address(name))
