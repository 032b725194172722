"""LLVM IR -> optimized machine code in this process: O3 for the host CPU, then MCJIT.

`compile_module(module)` takes a stage-"llvm" module through `to_llvm_ir`, parses and
verifies it with LLVM, optimizes it with the new pass manager at O3 (loop and SLP
vectorization on) for the host CPU and its features, emits an object file and loads that
into an MCJIT engine. Going through the object file always (instead of JITting the module
directly) means the bytes `object_code()` returns for the on-disk cache are exactly what
runs, and `load_object(bytes)` takes the same path as a fresh compile.

Ownership (llvmlite): an engine owns the TargetMachine it was created with, so every engine
gets its own; a `CompiledModule` keeps its engine alive, and every `CompiledFunction` keeps
its `CompiledModule` alive, so a function's code is never freed while callable.

Symbols: LLVM resolves external calls through symbols registered with `add_symbol`, not the
process's dynamic symbol table, so `register_runtime_symbols` registers the C library and
libm functions the generated code may call (and the compiler-rt helpers codegen may emit);
`compile_module` refuses code that calls anything else, rather than letting a call jump to
address 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from irgrad.diagnostics import IrgradError

if TYPE_CHECKING:
    from irgrad.backends.cpu.abi import CompiledFunction


class CompileError(IrgradError):
    """LLVM rejected the module, or the code needs a symbol this process lacks."""


# ---------------------------------------------------------------------------------------------
# Initialization and symbols
# ---------------------------------------------------------------------------------------------

_LIBC_SYMBOLS = ("aligned_alloc", "malloc", "calloc", "free", "memcpy", "memmove", "memset")
_LIBM_FUNCTIONS = (
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "pow", "erf", "erfc", "fmod", "remainder", "round",
    "roundeven", "rint", "nearbyint", "trunc", "floor", "ceil", "fma", "copysign", "ldexp",
    "frexp", "sincos", "fmin", "fmax", "fminimum", "fmaximum", "fminimum_num",
    "fmaximum_num", "hypot",
)  # fmt: skip
_COMPILER_RT = (
    "__truncdfhf2", "__truncsfhf2", "__extendhfsf2", "__gnu_h2f_ieee", "__gnu_f2h_ieee",
    "__truncdfbf2", "__truncsfbf2", "__powisf2", "__powidf2", "__floattisf", "__floattidf",
    "__floatuntisf", "__floatuntidf", "__fixsfti", "__fixdfti", "__fixunssfti",
    "__fixunsdfti", "__divti3", "__udivti3", "__modti3", "__umodti3", "__muloti4",
)  # fmt: skip

_lock = threading.Lock()
_initialized = False


def _libraries() -> list[ctypes.CDLL]:
    libraries = [ctypes.CDLL(None)]
    for name in ("m", "gcc_s"):
        path = ctypes.util.find_library(name)
        if path:
            try:
                libraries.append(ctypes.CDLL(path))
            except OSError:
                pass
    return libraries


def register_runtime_symbols() -> None:
    """Register the C functions generated code may call (once per process)."""
    names = [
        *_LIBC_SYMBOLS,
        *(n + suffix for n in _LIBM_FUNCTIONS for suffix in ("", "f")),
        *_COMPILER_RT,
    ]
    libraries = _libraries()
    for name in names:
        for library in libraries:
            try:
                function = getattr(library, name)
            except AttributeError:
                continue
            address = ctypes.cast(function, ctypes.c_void_p).value
            if address:
                llvm.add_symbol(name, address)
                break


def initialize() -> None:
    """Initialize LLVM's native target and the runtime symbols, once per process."""
    global _initialized
    with _lock:
        if _initialized:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        register_runtime_symbols()
        _install_allocation_guard()
        _install_assert_fallback()
        _keep_freed_memory()
        _initialized = True


M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
KEEP_BELOW_BYTES = 1 << 30


def _keep_freed_memory() -> None:
    """Make glibc's malloc keep freed memory for reuse instead of returning it to the OS.

    A training step allocates and frees the same large buffers every call (its temporaries,
    and numpy's arrays for its results). glibc serves blocks above a threshold with mmap and
    gives them back on free, so the next call page-faults them in again (zeroed by the
    kernel): measured on the W2 step, 8,800 page faults and about 10% of its time, or none,
    depending on how glibc's adaptive threshold happened to move. Blocks under 1 GiB now come
    from the heap, and free memory at its top is kept (PyTorch's and JAX's CPU allocators
    cache blocks for the same reason). The resident set stays at its peak rather than
    shrinking between calls. `IRGRAD_MALLOC_TUNING=off` leaves malloc alone.
    """
    import os

    if os.environ.get("IRGRAD_MALLOC_TUNING", "").strip().lower() in ("off", "0", "no"):
        return
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except AttributeError:  # not glibc
        return
    mallopt(M_MMAP_THRESHOLD, KEEP_BELOW_BYTES)
    mallopt(M_TRIM_THRESHOLD, KEEP_BELOW_BYTES)


# ---------------------------------------------------------------------------------------------
# Allocation failures: an error, not a crash
# ---------------------------------------------------------------------------------------------

JMP_BUF_BYTES = 512
"""Bytes of the per-thread buffer `guarded_call` takes: glibc's jmp_buf (200 bytes on x86-64,
312 on AArch64), then at offset `JMP_BUF_BYTES - 8` the size whose allocation failed (or
`ASSERT_FAILED`), and at `MESSAGE_OFFSET` the message of a failed runtime check."""

ASSERT_FAILED = -1
"""What `_irgrad_guarded_call` returns when a runtime check (`cf.assert`) failed."""
MESSAGE_OFFSET = JMP_BUF_BYTES - 16
"""Where in the jump buffer `irgrad_assert_failed` leaves its message (a `const char *`)."""

_GUARD_IR = """
declare i32 @_irgrad_rt__setjmp(ptr) returns_twice
declare void @_irgrad_rt_longjmp(ptr, i32) noreturn
declare ptr @_irgrad_rt_pthread_getspecific(i32)
declare i32 @_irgrad_rt_pthread_setspecific(i32, ptr)
declare ptr @_irgrad_rt_aligned_alloc(i64, i64)
declare i64 @_irgrad_rt_strlen(ptr)
declare i64 @_irgrad_rt_write(i32, ptr, i64)
declare void @_irgrad_rt_abort() noreturn

@newline = internal constant [1 x i8] c"\\0A"

define i64 @_irgrad_guarded_call(ptr %entry, ptr %slots, ptr %jb) {{
start:
  %size_slot = getelementptr i8, ptr %jb, i64 {size_offset}
  store volatile i64 0, ptr %size_slot
  %set = call i32 @_irgrad_rt_pthread_setspecific(i32 {key}, ptr %jb)
  %r = call i32 @_irgrad_rt__setjmp(ptr %jb) returns_twice
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %run, label %failed
run:
  call void %entry(ptr %slots)
  %unset = call i32 @_irgrad_rt_pthread_setspecific(i32 {key}, ptr null)
  ret i64 0
failed:
  %unset2 = call i32 @_irgrad_rt_pthread_setspecific(i32 {key}, ptr null)
  %size = load volatile i64, ptr %size_slot
  ret i64 %size
}}

define ptr @_irgrad_aligned_alloc(i64 %alignment, i64 %size) {{
start:
  %p = call ptr @_irgrad_rt_aligned_alloc(i64 %alignment, i64 %size)
  %null = icmp eq ptr %p, null
  br i1 %null, label %failed, label %ok
ok:
  ret ptr %p
failed:
  %jb = call ptr @_irgrad_rt_pthread_getspecific(i32 {key})
  %outside = icmp eq ptr %jb, null
  br i1 %outside, label %ok, label %escape
escape:
  %size_slot = getelementptr i8, ptr %jb, i64 {size_offset}
  store volatile i64 %size, ptr %size_slot
  call void @_irgrad_rt_longjmp(ptr %jb, i32 1)
  unreachable
}}

define void @_irgrad_assert_failed(ptr %message) {{
start:
  %jb = call ptr @_irgrad_rt_pthread_getspecific(i32 {key})
  %outside = icmp eq ptr %jb, null
  br i1 %outside, label %abort, label %escape
escape:
  %message_slot = getelementptr i8, ptr %jb, i64 {message_offset}
  store volatile ptr %message, ptr %message_slot
  %size_slot = getelementptr i8, ptr %jb, i64 {size_offset}
  store volatile i64 {assert_failed}, ptr %size_slot
  call void @_irgrad_rt_longjmp(ptr %jb, i32 1)
  unreachable
abort:
  %n = call i64 @_irgrad_rt_strlen(ptr %message)
  %w1 = call i64 @_irgrad_rt_write(i32 2, ptr %message, i64 %n)
  %w2 = call i64 @_irgrad_rt_write(i32 2, ptr @newline, i64 1)
  call void @_irgrad_rt_abort()
  unreachable
}}
"""

_guard_engine: llvm.ExecutionEngine | None = None
guarded_call_address: int | None = None
"""`int64 _irgrad_guarded_call(void (*entry)(void **), void **slots, void *jmp_buf)`: calls
`entry(slots)` and returns 0, or the size in bytes of the buffer whose allocation failed, or
`ASSERT_FAILED` (the message at `MESSAGE_OFFSET` in `jmp_buf`)."""


def _install_allocation_guard() -> None:
    """Make a failed allocation in generated code return an error instead of crashing.

    Generated code allocates with `aligned_alloc` and writes to the result; a buffer larger than
    the memory the OS grants (a huge intermediate from big input shapes) gave NULL, and writing
    to it killed the process with SIGSEGV. `aligned_alloc` now resolves to a checked version: on
    NULL inside a `guarded_call` (the thread's jmp_buf is in a pthread key) it records the size
    and `longjmp`s back to `guarded_call`, which returns it; `CompiledFunction` raises
    MemoryError. Buffers the call had allocated before the failure are leaked (the error path
    only). Outside `guarded_call`, or in a thread other than the caller's, it returns NULL as
    before. Needs glibc's `_setjmp`/`longjmp` and pthread keys; without them nothing changes.

    Runtime checks: generated code calls `irgrad_assert_failed(message)` when a `cf.assert`
    fails (convert-cf-to-llvm). Inside a `guarded_call` it leaves the message pointer in the
    jump buffer and `longjmp`s back, and `guarded_call` returns `ASSERT_FAILED`;
    `CompiledFunction` raises `RuntimeCheckError`. Outside one (another thread, or a direct
    call) it writes the message to stderr and aborts. Without the guard it is `abort`.
    """
    global _guard_engine, guarded_call_address
    if not sys.platform.startswith("linux"):  # pthread_key_t is an unsigned int on Linux only
        return
    libc = ctypes.CDLL(None)
    names = (
        "_setjmp", "longjmp", "pthread_getspecific", "pthread_setspecific", "aligned_alloc",
        "strlen", "write", "abort",
    )  # fmt: skip
    try:
        addresses = {n: ctypes.cast(getattr(libc, n), ctypes.c_void_p).value for n in names}
        key = ctypes.c_uint()
        if libc.pthread_key_create(ctypes.byref(key), None) != 0:
            return
    except AttributeError:
        return
    for name, address in addresses.items():
        llvm.add_symbol("_irgrad_rt_" + name, address)
    ir = _GUARD_IR.format(
        key=key.value,
        size_offset=JMP_BUF_BYTES - 8,
        message_offset=MESSAGE_OFFSET,
        assert_failed=ASSERT_FAILED,
    )
    from irgrad.backends.cpu.runtime_objects import runtime_engine

    engine = runtime_engine(ir, opt=0)
    _guard_engine = engine
    guarded_call_address = engine.get_function_address("_irgrad_guarded_call")
    # Code compiled or loaded from now on calls the checked allocator.
    llvm.add_symbol("aligned_alloc", engine.get_function_address("_irgrad_aligned_alloc"))
    llvm.add_symbol(ASSERT_FAILED_SYMBOL, engine.get_function_address("_irgrad_assert_failed"))


ASSERT_FAILED_SYMBOL = "irgrad_assert_failed"
"""The runtime function a failed `cf.assert` calls (cf_to_llvm.ASSERT_FAILED_SYMBOL)."""


def _install_assert_fallback() -> None:
    """Without the guard (not Linux), a failed runtime check aborts the process: better than
    reading or writing out of bounds (`abort` ignores the message argument)."""
    if llvm.address_of_symbol(ASSERT_FAILED_SYMBOL) is None:
        abort = ctypes.cast(ctypes.CDLL(None).abort, ctypes.c_void_p).value
        if abort:
            llvm.add_symbol(ASSERT_FAILED_SYMBOL, abort)


# ---------------------------------------------------------------------------------------------
# Target
# ---------------------------------------------------------------------------------------------


ABI_VERSION = 2
"""The calling convention between `CompiledFunction` and the packed entries; part of the
cache key (`repr(host_target())`), so object code built for another one is never loaded.
2: a memref's slot points at a word holding its data pointer."""


@dataclass(frozen=True)
class HostTarget:
    """What the code is compiled for; `repr` of it belongs in any cache key of objects."""

    triple: str
    cpu: str
    features: str
    abi: int = ABI_VERSION

    @staticmethod
    def detect() -> HostTarget:
        initialize()
        return HostTarget(
            llvm.get_process_triple(),
            llvm.get_host_cpu_name(),
            llvm.get_host_cpu_features().flatten(),
        )

    def target_machine(self, opt_level: int = 3) -> llvm.TargetMachine:
        """A new TargetMachine (an engine takes ownership of the one it is given)."""
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(
            cpu=self.cpu, features=self.features, opt=opt_level, reloc="pic"
        )


_host: HostTarget | None = None


def host_target() -> HostTarget:
    global _host
    if _host is None:
        _host = HostTarget.detect()
    return _host


# ---------------------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------------------


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

    @property
    def optimized_ir(self) -> str | None:
        """The LLVM IR after optimization (None when loaded from an object)."""
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
        from irgrad.backends.cpu.abi import CompiledFunction

        return CompiledFunction(self, name, arg_types, result_types)

    def object_code(self) -> bytes:
        return self.object_bytes


FULL_UNROLL_MAX_COUNT = 4
"""The largest trip count LLVM's loop unroller may unroll completely (its default: unbounded).

Full unrolling of small static loops (a 3x3 convolution window, the 8 lanes of an attention head)
inside bigger nests multiplies the code the rest of O3 optimizes: measured interleaved in one
process (2026-11-30), a conv2d gradient compiled in 1.96 s with the default and 0.16 s with 4, and
ran faster (7.2 ms against 8.2 ms median); the transformer example's training step 9.1 s -> 3.5 s at
the same speed (0.86-0.89 ms); W1, W4, a 4M-element sum and logsumexp the same to 2% (partial and
runtime unrolling, which the reductions' inner loops use, stay on)."""

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


def _install_runtime_for(names: Sequence[str]) -> None:
    """Define the runtime entry points code calling `names` needs (BLAS, on first use)."""
    if any(name.startswith("irgrad_blas_") for name in names):
        from irgrad.backends.cpu.blas import install_blas

        install_blas()
    if any(name.startswith("irgrad_lapack_") for name in names):
        from irgrad.backends.cpu.lapack import install_lapack

        install_lapack([name for name in names if name.startswith("irgrad_lapack_")])
    if "irgrad_parallel_for" in names:
        from irgrad.backends.cpu.threads import install_thread_pool

        install_thread_pool()
    if any(name.startswith("irgrad_debug_print_") for name in names):
        from irgrad.backends.debug_print import install

        install()
    if any(name.startswith("_ZGV") for name in names):
        from irgrad.backends.cpu.veclib import ensure_loaded

        ensure_loaded()  # cached object code calling libmvec


def _check_symbols(ref: llvm.ModuleRef) -> None:
    _install_runtime_for([fn.name for fn in ref.functions if fn.is_declaration])
    for fn in ref.functions:
        if not fn.is_declaration or fn.name.startswith("llvm."):
            continue
        if llvm.address_of_symbol(fn.name) is None:
            raise CompileError(
                f"the generated code calls @{fn.name}, which this process does not provide"
            )


def compile_module(
    module: ModuleOp, *, opt_level: int = 3, loop_unrolling: bool = True
) -> CompiledModule:
    """Compile a stage-"llvm" module for the host CPU and load it.

    `opt_level` 0-3 picks LLVM's pipeline (loop and SLP vectorization from 2 on);
    `loop_unrolling=False` roughly halves the optimization and code generation time of a
    large module (small static loops are otherwise unrolled) for slower code.

    Raises `ContractError` (located) if the module is not in stage "llvm" form, and
    `CompileError` if LLVM rejects it.
    """
    # Imported here: loading cached object code (`load_object`) needs none of the lowering.
    from irgrad.backends.cpu.translate import to_llvm_ir
    from irgrad.lowering.llvm.to_llvm import cyclic_gc_paused

    initialize()
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


def object_code(compiled: CompiledModule) -> bytes:
    """The object file of a compiled module, for an on-disk cache."""
    return compiled.object_bytes


def check_object(data: bytes) -> None:
    """CompileError unless `data` is a whole ELF relocatable object for this machine.

    LLVM's loader trusts its input (a truncated or foreign file crashes the process), so
    the header and every section's extent are checked first.
    """
    import struct

    def fail(why: str) -> CompileError:
        return CompileError(f"not loadable object code: {why}")

    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise fail("no ELF header")
    if data[4] != 2 or data[5] != 1:
        raise fail("not a 64-bit little-endian ELF file")
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    expected_machine = {"x86_64": 62, "aarch64": 183}.get(llvm.get_process_triple().split("-")[0])
    if e_type != 1 or (expected_machine is not None and e_machine != expected_machine):
        raise fail(
            f"ELF type {e_type}, machine {e_machine}: not a relocatable object for this host"
        )
    (e_shoff,) = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 58)
    if e_shentsize != 64 or e_shnum == 0 or e_shstrndx >= e_shnum:
        raise fail("bad section header table")
    if e_shoff + e_shnum * 64 > len(data):
        raise fail("truncated (section headers past the end)")
    for k in range(e_shnum):
        sh_type, _, _, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", data, e_shoff + 64 * k)[
            1:6
        ]
        if sh_type != 8 and sh_offset + sh_size > len(data):  # 8: SHT_NOBITS
            raise fail(f"truncated (section {k} past the end)")


def load_object(data: bytes, *, target: HostTarget | None = None) -> CompiledModule:
    """Load object code (from `object_code`, this host) into a new engine."""
    initialize()
    target = target or host_target()
    check_object(bytes(data))
    # The symbol table names what the code calls: each LAPACK entry point by its full name
    # (their shims are compiled one by one, on demand), the others by prefix.
    from irgrad.backends.cpu.lapack import ENTRY_POINTS as LAPACK_ENTRY_POINTS

    lapack = [name for name in LAPACK_ENTRY_POINTS if name.encode() in data]
    _install_runtime_for(
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


__all__ = [
    "CompileError",
    "CompileStats",
    "CompiledModule",
    "HostTarget",
    "compile_module",
    "host_target",
    "initialize",
    "load_object",
    "object_code",
]
