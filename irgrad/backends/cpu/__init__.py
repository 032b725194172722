"""The CPU backend: stage "llvm" IR compiled by LLVM (llvmlite) and called with numpy.

- `compile_module(module) -> CompiledModule`: translate, optimize at O3 for the host CPU,
  emit object code and load it (`compile`);
- `CompiledModule.function(name, arg_types, result_types) -> CompiledFunction`: a callable
  taking and returning numpy arrays (`abi`);
- `object_code(compiled) -> bytes` and `load_object(bytes) -> CompiledModule`: the object
  file, for an on-disk cache, and back (`loading`);
- `to_llvm_ir(module)`: the llvmlite module (`translate`).

Imports point down, never back: `errors`, `target` (the host, object checks);
`runtime_objects` (irgrad's runtimes, disk-cached), `guard`, `process` (the once-per-process
set-up); the runtimes `blas`, `lapack/`, `threads`, `veclib` (their IR in `shims/`); then
`abi`, `loading`, `compile`.
"""

from irgrad.backends.cpu.abi import ArgumentError, CompiledFunction, RuntimeCheckError
from irgrad.backends.cpu.compile import compile_module
from irgrad.backends.cpu.errors import CompileError
from irgrad.backends.cpu.loading import CompiledModule, load_object, object_code
from irgrad.backends.cpu.target import HostTarget, host_target


def __getattr__(name: str) -> object:
    # The translation imports xDSL's LLVM backend; loading cached code does not need it.
    if name == "to_llvm_ir":
        from irgrad.backends.cpu.translate import to_llvm_ir

        return to_llvm_ir
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ArgumentError",
    "CompileError",
    "CompiledFunction",
    "CompiledModule",
    "HostTarget",
    "RuntimeCheckError",
    "compile_module",
    "host_target",
    "load_object",
    "object_code",
    "to_llvm_ir",
]
