"""Object code -> callable machine code in this process: `load_object` and `CompiledModule`.

`load_object(bytes)` checks the object file (target.py), defines the runtimes its calls need
(`install_runtime_for`: BLAS, LAPACK, the thread pool, debug printing, libmvec, each on first
use) and loads it into a new MCJIT engine. compile.py's `compile_module` ends here too, so
what runs is always the object file `object_code()` returns for the on-disk cache.

Ownership (llvmlite): an engine owns the TargetMachine it was created with, so every engine
gets its own; a `CompiledModule` keeps its engine alive, and every `CompiledFunction` (abi.py)
keeps its `CompiledModule` alive, so a function's code is never freed while callable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import llvmlite.binding as llvm
from xdsl.ir import Attribute

from irgrad.backends.cpu.abi import CompiledFunction
from irgrad.backends.cpu.errors import CompileError
from irgrad.backends.cpu.process import initialize
from irgrad.backends.cpu.target import HostTarget, check_object, host_target


@dataclass
class CompileStats:
    """Seconds spent in each step of the last compile."""

    translate: float = 0.0
    parse: float = 0.0
    optimize: float = 0.0
    codegen: float = 0.0
    load: float = 0.0


@dataclass(eq=False)
class CompiledModule:
    """Machine code loaded into this process: function addresses and the object bytes.

    Create it with `compile_module` or `load_object`. `function(name, arg_types,
    result_types)` gives a numpy-callable `CompiledFunction`.
    """

    object_bytes: bytes
    target: HostTarget
    llvm_ir: str | None = None
    """The LLVM IR before optimization (None when loaded from an object)."""
    stats: CompileStats = field(default_factory=CompileStats)
    _engine: llvm.ExecutionEngine | None = field(default=None, repr=False)
    _optimized: llvm.ModuleRef | None = field(default=None, repr=False)
    _optimize_again: Callable[[], llvm.ModuleRef] | None = field(default=None, repr=False)

    @property
    def optimized_ir(self) -> str | None:
        """The LLVM IR after optimization (None when loaded from an object). A module the
        compile worker optimized is optimized again here, the first time this is asked."""
        if self._optimized is None and self._optimize_again is not None:
            self._optimized = self._optimize_again()
        return None if self._optimized is None else str(self._optimized)

    def address(self, name: str) -> int:
        """The address of function `name`, or KeyError."""
        assert self._engine is not None
        address = self._engine.get_function_address(name)
        if not address:
            raise KeyError(f"no function @{name} in the compiled module")
        return address

    def has_function(self, name: str) -> bool:
        assert self._engine is not None
        return bool(self._engine.get_function_address(name))

    def function(
        self,
        name: str,
        arg_types: Sequence[Attribute],
        result_types: Sequence[Attribute] = (),
    ) -> CompiledFunction:
        """The callable for `@name`; see `irgrad.backends.cpu.abi.CompiledFunction`."""
        return CompiledFunction(self, name, arg_types, result_types)

    def object_code(self) -> bytes:
        return self.object_bytes


def install_runtime_for(names: Sequence[str]) -> None:
    """Define the runtime entry points code calling `names` needs (BLAS, on first use)."""
    # Imported here: code that calls none of them never loads them.
    if any(name.startswith("irgrad_blas_") for name in names):
        from irgrad.backends.cpu.blas import install_blas

        install_blas()
    if any(name.startswith("irgrad_lapack_") for name in names):
        from irgrad.backends.cpu.lapack import install_lapack

        install_lapack([name for name in names if name.startswith("irgrad_lapack_")])
    if any(name.startswith("irgrad_mpi_") for name in names):
        from irgrad.backends.mpi.calls import install as install_mpi

        install_mpi()  # the collectives of a process's program (needs mpi4py)
    if "irgrad_parallel_for" in names:
        from irgrad.backends.cpu.threads import install_thread_pool

        install_thread_pool()
    if any(name.startswith("irgrad_debug_print_") for name in names):
        from irgrad.backends.debug_print import install

        install()
    if any(name.startswith("_ZGV") for name in names):
        from irgrad.backends.cpu.veclib import ensure_loaded

        ensure_loaded()  # cached object code calling libmvec


def object_code(compiled: CompiledModule) -> bytes:
    """The object file of a compiled module, for an on-disk cache."""
    return compiled.object_bytes


def load_object(data: bytes, *, target: HostTarget | None = None) -> CompiledModule:
    """Load object code (from `object_code`, this host) into a new engine."""
    initialize()
    target = target or host_target()
    check_object(bytes(data))
    # The symbol table names what the code calls: each LAPACK entry point by its full name
    # (their shims are compiled one by one, on demand), the others by prefix.
    from irgrad.backends.cpu.lapack import ENTRY_POINTS as LAPACK_ENTRY_POINTS

    lapack = [name for name in LAPACK_ENTRY_POINTS if name.encode() in data]
    install_runtime_for(
        [name for name in ("irgrad_blas_", "irgrad_parallel_for", "irgrad_debug_print_", "_ZGV") if name.encode() in data]
        + lapack
    )
    missing = [name for name in lapack if not llvm.address_of_symbol(name)]
    if missing:  # never load code whose calls would jump to address 0
        raise CompileError(f"the object code calls {', '.join(missing)}, which this process does not define")
    start = time.perf_counter()
    empty = llvm.parse_assembly("")
    empty.triple = target.triple
    engine = llvm.create_mcjit_compiler(empty, target.target_machine())
    try:
        engine.add_object_file(llvm.ObjectFileRef.from_data(bytes(data)))
        engine.finalize_object()
    except RuntimeError as err:
        raise CompileError(f"could not load the object code: {err}") from err
    compiled = CompiledModule(bytes(data), target, _engine=engine)
    compiled.stats.load = time.perf_counter() - start
    return compiled


__all__ = ["CompileStats", "CompiledModule", "install_runtime_for", "load_object", "object_code"]
