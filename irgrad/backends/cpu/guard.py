"""Allocation failures and failed runtime checks in generated code: an error, not a crash.

Generated code allocates with `aligned_alloc` and writes to the result; a buffer larger than
the memory the OS grants (a huge intermediate from big input shapes) gave NULL, and writing
to it killed the process with SIGSEGV. `install_allocation_guard` makes `aligned_alloc`
resolve to a checked version (shims/guard.ll): on NULL inside a `guarded_call` (the thread's
jmp_buf is in a pthread key) it records the size and `longjmp`s back to `guarded_call`, which
returns it; `CompiledFunction` (abi.py) raises MemoryError. Buffers the call had allocated
before the failure are leaked (the error path only). Outside `guarded_call`, or in a thread
other than the caller's, it returns NULL as before. Needs glibc's `_setjmp`/`longjmp` and
pthread keys; without them nothing changes.

Runtime checks: generated code calls `irgrad_assert_failed(message)` when a `cf.assert` fails
(convert-cf-to-llvm). Inside a `guarded_call` it leaves the message pointer in the jump buffer
and `longjmp`s back, and `guarded_call` returns `ASSERT_FAILED`; `CompiledFunction` raises
`RuntimeCheckError`. Outside one (another thread, or a direct call) it writes the message to
stderr and aborts. Without the guard it is `abort` (`install_assert_fallback`).

Installed by process.py's `initialize`, while LLVM is being set up: so the guard is compiled
for the process's triple with a generic CPU, never asking for the host target.
"""

from __future__ import annotations

import ctypes
import sys

import llvmlite.binding as llvm

from irgrad.backends.cpu.runtime_objects import runtime_engine
from irgrad.backends.cpu.shims import template

JMP_BUF_BYTES = 512
"""Bytes of the per-thread buffer `guarded_call` takes: glibc's jmp_buf (200 bytes on x86-64,
312 on AArch64), then at offset `JMP_BUF_BYTES - 8` the size whose allocation failed (or
`ASSERT_FAILED`), and at `MESSAGE_OFFSET` the message of a failed runtime check."""

ASSERT_FAILED = -1
"""What `_irgrad_guarded_call` returns when a runtime check (`cf.assert`) failed."""
MESSAGE_OFFSET = JMP_BUF_BYTES - 16
"""Where in the jump buffer `irgrad_assert_failed` leaves its message (a `const char *`)."""

ASSERT_FAILED_SYMBOL = "irgrad_assert_failed"
"""The runtime function a failed `cf.assert` calls (cf_to_llvm.ASSERT_FAILED_SYMBOL)."""

_guard_engine: llvm.ExecutionEngine | None = None
guarded_call_address: int | None = None
"""`int64 _irgrad_guarded_call(void (*entry)(void **), void **slots, void *jmp_buf)`: calls
`entry(slots)` and returns 0, or the size in bytes of the buffer whose allocation failed, or
`ASSERT_FAILED` (the message at `MESSAGE_OFFSET` in `jmp_buf`)."""


def install_allocation_guard() -> None:
    """Define the checked `aligned_alloc`, `irgrad_assert_failed` and `guarded_call` (Linux)."""
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
    ir = template("guard.ll").substitute(
        key=key.value,
        size_offset=JMP_BUF_BYTES - 8,
        message_offset=MESSAGE_OFFSET,
        assert_failed=ASSERT_FAILED,
    )
    engine = runtime_engine(ir, opt=0)
    _guard_engine = engine
    guarded_call_address = engine.get_function_address("_irgrad_guarded_call")
    # Code compiled or loaded from now on calls the checked allocator.
    llvm.add_symbol("aligned_alloc", engine.get_function_address("_irgrad_aligned_alloc"))
    llvm.add_symbol(ASSERT_FAILED_SYMBOL, engine.get_function_address("_irgrad_assert_failed"))


def install_assert_fallback() -> None:
    """Without the guard (not Linux), a failed runtime check aborts the process: better than
    reading or writing out of bounds (`abort` ignores the message argument)."""
    if llvm.address_of_symbol(ASSERT_FAILED_SYMBOL) is None:
        abort = ctypes.cast(ctypes.CDLL(None).abort, ctypes.c_void_p).value
        if abort:
            llvm.add_symbol(ASSERT_FAILED_SYMBOL, abort)


__all__ = [
    "ASSERT_FAILED",
    "ASSERT_FAILED_SYMBOL",
    "JMP_BUF_BYTES",
    "MESSAGE_OFFSET",
    "install_allocation_guard",
    "install_assert_fallback",
]
