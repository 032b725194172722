"""What every backend's `debug.print` does with the values: Python's `str.format` with the
operands as numpy arrays (0-d arrays for scalars), written to `sys.stdout` and flushed, so the
output interleaves correctly with the caller's own prints. One function, so the interpreter,
the CPU runtime and eager calls print exactly the same text.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Sequence

import numpy as np

from irgrad.lowering.llvm.print_spec import Spec, decode_spec


def render(fmt: str, names: Sequence[str], values: Sequence[np.ndarray]) -> str:
    """The formatted text: positional operands (empty name) in order, named ones by name.
    ValueError for a field that reads an attribute or item (`format_fields`), on every backend."""
    from irgrad.dialects.debug import format_fields

    format_fields(fmt)
    positional = [v for n, v in zip(names, values) if not n]
    named = {n: v for n, v in zip(names, values) if n}
    return fmt.format(*positional, **named)


def emit(fmt: str, names: Sequence[str], values: Sequence[np.ndarray]) -> None:
    """Print `render(...)` on its own line. A format that does not fit the values (`{:.3f}`
    of an array) is reported on stderr instead of raised: compiled code calls this through C
    frames an exception cannot cross, and every backend behaves the same."""
    try:
        text = render(fmt, names, values)
    except Exception as err:
        sys.stderr.write(f"irgrad: debug.print {fmt!r} failed: {type(err).__name__}: {err}\n")
        return
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# The CPU runtime: compiled code calls irgrad_debug_print_<n>(spec, ptr...)
# ---------------------------------------------------------------------------------------------

_DECODED: dict[bytes, Spec] = {}


def _print_from_pointers(spec_address: int, *pointers: int) -> None:
    # The text is read at every call (it is short) and its decoding is cached by content:
    # an address may be reused by another program once this one's code is freed.
    data = ctypes.string_at(spec_address)
    spec = _DECODED.get(data)
    if spec is None:
        spec = _DECODED[data] = decode_spec(data)
    fmt, names, arrays = spec
    values = []
    for address, (shape, dtype) in zip(pointers, arrays):
        count = int(np.prod(shape))
        raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(address) if count else b""
        values.append(np.frombuffer(raw, dtype=dtype, count=count).reshape(shape).copy())
    emit(fmt, names, values)


_LOCK = threading.Lock()
_CALLBACKS: list[object] = []  # the ctypes thunks live as long as the process
_installed = False


def install() -> None:
    """Define irgrad_debug_print_0 .. _8 for LLVM (once per process)."""
    global _installed
    if _installed:
        return
    import llvmlite.binding as llvm

    from irgrad.dialects.debug import MAX_OPERANDS

    with _LOCK:
        if _installed:
            return
        for n in range(MAX_OPERANDS + 1):
            prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, *([ctypes.c_void_p] * n))
            thunk = prototype(_print_from_pointers)
            _CALLBACKS.append(thunk)
            llvm.add_symbol(f"irgrad_debug_print_{n}", ctypes.cast(thunk, ctypes.c_void_p).value)
        _installed = True
