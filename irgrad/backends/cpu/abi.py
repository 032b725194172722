"""Calling compiled functions with numpy arrays: argument checks, zero-copy, out-params.

The compiled side is the packed entry convert-func-to-llvm emits for every public function:
`void _irgrad_packed_f(void **slots)`, one slot per parameter of `@f` (its inputs, then the
out-param buffers bufferize added), then one per scalar result. A buffer's slot points at the
`data` field of the numpy array object itself (`_data_field_offset`), so a call asks numpy for
no pointers, and the call is Python source generated for the signature (`_specialized_call`),
which keeps its fixed cost small.

`CompiledFunction(module, name, arg_types, result_types)` describes `@f` as the user sees
it: `arg_types` are the inputs, `result_types` the results, where a memref/tensor result is an
out-param (the trailing parameters of `@f`) and a scalar result is a returned value. A call:
1. checks the number of arguments, then each argument's kind, shape and dtype against the
   signature, before anything runs, raising `ArgumentError` naming the argument;
2. passes C-contiguous, aligned, native-endian arrays of the right dtype zero-copy; copies
   any other array into one that is;
3. allocates the out-param arrays with numpy and calls through ctypes (which releases the GIL)
   via guard.py's allocation guard: MemoryError instead of a crash, RuntimeCheckError for a
   failed runtime check (`cf.assert`);
4. returns the results as a tuple: arrays for buffers, numpy scalars for scalars.
Details: docs/design/cpu-backend.md, "irgrad/backends/cpu/abi.py".
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import IndexType, MemRefType, TensorType
from xdsl.ir import Attribute
from xdsl.utils.lexer import Location

import irgrad.backends.cpu.guard as guard
from irgrad.ir_numpy import is_float_dtype, numpy_dtype
from irgrad.backends.cpu.guard import ASSERT_FAILED, JMP_BUF_BYTES, MESSAGE_OFFSET
from irgrad.backends.cpu.process import initialize
from irgrad.diagnostics import IrgradError


class LoadedCode(Protocol):
    """What a `CompiledFunction` needs of the code it calls: loading.py's `CompiledModule`
    (which makes them; a protocol so that this module does not import it back)."""

    def address(self, name: str) -> int: ...

    def has_function(self, name: str) -> bool: ...


class ArgumentError(ValueError):
    """A call's arguments do not match the compiled function's signature."""


_LOCATED = re.compile(r"(.+?):(\d+):(\d+): (.*)", re.DOTALL)


class RuntimeCheckError(IrgradError, RuntimeError):
    """A runtime check in the compiled code failed: a `cf.assert`, such as the bounds checks
    of generate-runtime-verification (an index out of range). The call stops there and its
    results are discarded (buffers it had allocated are leaked); the function stays
    callable. `location` is the checked op's position when the message starts with one,
    `message` the rest."""

    def __init__(self, message: str) -> None:
        match = _LOCATED.fullmatch(message)
        if match is None:
            super().__init__(message)
            return
        file, line, col, detail = match.groups()
        super().__init__(detail, Location(file, int(line), int(col)))


_PACKED_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@dataclass(frozen=True)
class Param:
    """One argument or result as numpy sees it."""

    what: str
    """How errors name it: "argument #0 of @f"."""
    ir_type: Attribute
    dtype: np.dtype
    shape: tuple[int, ...] | None
    """None for a scalar."""

    @property
    def is_buffer(self) -> bool:
        return self.shape is not None

    def describe(self) -> str:
        if self.shape is None:
            return f"a {self.dtype} scalar ({self.ir_type})"
        return f"an array of shape {self.shape} and dtype {self.dtype} ({self.ir_type})"


def make_param(what: str, t: Attribute) -> Param:
    if isinstance(t, MemRefType | TensorType):
        shape = tuple(t.get_shape())
        if any(d < 0 for d in shape):
            raise ArgumentError(f"{what} has dynamic shape {t}; only static shapes compile")
        return Param(what, t, numpy_dtype(t.get_element_type()), shape)
    if isinstance(t, IndexType):
        return Param(what, t, np.dtype(np.int64), None)
    try:
        return Param(what, t, numpy_dtype(t), None)
    except TypeError as err:
        raise ArgumentError(f"{what} has type {t}, which cannot be passed from numpy") from err


def _native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype


def _data_field_offset() -> int | None:
    """Where a numpy array object keeps its data pointer, if it is where numpy's C API says.

    `PyArrayObject` starts with the object header, then `char *data` (NumPy 1 and 2). Pointing
    a memref's slot at that field, instead of asking numpy for the pointer (`.ctypes.data`,
    a microsecond each), keeps a call's fixed cost small. Checked on live arrays first; None
    falls back to the slow way.
    """
    offset = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
    probes = [np.arange(5.0), np.arange(12, dtype=np.int8).reshape(3, 4)[1:], np.empty((2, 3))]
    for probe in probes:
        if ctypes.c_void_p.from_address(id(probe) + offset).value != probe.ctypes.data:
            return None
    return offset


_DATA = _data_field_offset()


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class CompiledFunction:
    """A compiled function called with numpy arrays; see the module docstring."""

    def __init__(
        self,
        module: LoadedCode,
        name: str,
        arg_types: Sequence[Attribute],
        result_types: Sequence[Attribute] = (),
    ) -> None:
        self.module = module  # keeps the engine, hence the code, alive
        self.name = name
        self.params = tuple(
            make_param(f"argument #{k} of @{name}", t) for k, t in enumerate(arg_types)
        )
        self.results = tuple(
            make_param(f"result #{k} of @{name}", t) for k, t in enumerate(result_types)
        )
        from irgrad.lowering.llvm.c_interface import PACKED_PREFIX

        entry = PACKED_PREFIX + name
        if not module.has_function(entry):
            raise ArgumentError(
                f"no compiled entry @{entry} for @{name} (is @{name} public, and was "
                "convert-func-to-llvm run with packed-interface=true?)"
            )
        self._entry = _PACKED_SIGNATURE(module.address(entry))
        self._entry_address = module.address(entry)
        self._guarded = _guarded_call()
        # What the fast path compares an argument with: (is buffer, shape, dtype, strides).
        self._fast = tuple(
            (p.is_buffer, p.shape, p.dtype,
             _c_strides(p.shape, p.dtype.itemsize) if p.shape is not None else None)
            for p in self.params
        )  # fmt: skip
        # Slot order: inputs, out-param buffers, scalar results.
        self._outputs = tuple(
            (r.shape if r.is_buffer else (), r.dtype, r.is_buffer) for r in self.results
        )
        self._order = [k for k, r in enumerate(self.results) if r.is_buffer] + [
            k for k, r in enumerate(self.results) if not r.is_buffer
        ]
        self._slots_type = ctypes.c_void_p * max(1, len(self.params) + len(self.results))
        self._slot_is_buffer = tuple(p.is_buffer for p in self.params) + tuple(
            self.results[k].is_buffer for k in self._order
        )
        self.call = self._general_call if _DATA is None else self._specialized_call()
        """Call with numpy arrays (as `self(...)`, one Python frame less)."""

    def __repr__(self) -> str:
        args = ", ".join(str(p.ir_type) for p in self.params)
        results = ", ".join(str(r.ir_type) for r in self.results)
        return f"<CompiledFunction @{self.name}({args}) -> ({results})>"

    # -- arguments ----------------------------------------------------------------------------

    def _array(self, param: Param, value: Any) -> np.ndarray:
        """`value` as an array the compiled code can read in place (copied if need be)."""
        if not isinstance(value, np.ndarray):
            if isinstance(value, np.generic) and param.shape == ():
                value = np.asarray(value)
            else:
                raise ArgumentError(
                    f"{param.what}: expected {param.describe()}, got a "
                    f"{type(value).__name__} (pass a numpy array)"
                )
        assert param.shape is not None
        if value.shape != param.shape or _native(value.dtype) != param.dtype:
            raise ArgumentError(
                f"{param.what}: expected {param.describe()}, got an array of shape "
                f"{value.shape} and dtype {value.dtype}"
            )
        flags = value.flags
        if flags.c_contiguous and flags.aligned and value.dtype == param.dtype:
            return value
        # Non-contiguous, zero-stride, misaligned or byte-swapped: a fresh C-order copy.
        return np.array(value, dtype=param.dtype, order="C", copy=True)

    def _scalar(self, param: Param, value: Any) -> np.ndarray:
        """`value` as a 0-d array of the parameter's dtype (the slot points at it)."""
        dtype = param.dtype

        def fail(got: str) -> ArgumentError:
            return ArgumentError(f"{param.what}: expected {param.describe()}, got {got}")

        if isinstance(value, np.ndarray):
            if value.ndim != 0:
                raise fail(f"an array of shape {value.shape}")
            value = value[()]
        if isinstance(value, np.generic):
            if _native(value.dtype) != dtype:
                raise fail(f"a {value.dtype} scalar")
            return np.array(value, dtype=dtype)
        if dtype == np.bool_:
            if not isinstance(value, bool):
                raise fail(f"a {type(value).__name__}")
            return np.array(value, dtype=dtype)
        if is_float_dtype(dtype):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise fail(f"a {type(value).__name__}")
            with np.errstate(over="ignore"):
                return np.array(value, dtype=np.float64).astype(dtype)
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"a {type(value).__name__}")
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise fail(f"{value}, out of range for {dtype}")
        return np.array(value, dtype=dtype)

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, *args: Any) -> tuple[Any, ...]:
        return self.call(*args)

    def _general_call(self, *args: Any) -> tuple[Any, ...]:
        """The call for any signature, looping over the parameters (used where the data
        field's offset is unknown; `_specialized_call` unrolls the same steps)."""
        params = self.params
        if len(args) != len(params):
            raise self._count_error(len(args))
        # Everything the slots point into stays referenced here until the call returns.
        keep: list[np.ndarray] = []
        for (is_buffer, shape, dtype, strides), param, value in zip(self._fast, params, args):
            if not is_buffer:
                keep.append(self._scalar(param, value))
            elif (
                type(value) is np.ndarray
                and value.shape == shape
                and value.dtype == dtype
                and value.strides == strides
                and value.flags.aligned
            ):
                keep.append(value)
            else:
                keep.append(self._array(param, value))
        outputs = [np.empty(shape, dtype) for shape, dtype, _ in self._outputs]
        keep.extend([outputs[k] for k in self._order])
        self._call_slow(keep)
        if len(outputs) == 1 and self._outputs[0][2]:
            return (outputs[0],)
        return tuple([
            out if is_buffer else out[()] for out, (_, _, is_buffer) in zip(outputs, self._outputs)
        ])  # fmt: skip

    def _count_error(self, got: int) -> ArgumentError:
        return ArgumentError(f"@{self.name} takes {len(self.params)} argument(s), got {got}")

    def _specialized_call(self) -> Any:
        """The call, generated as Python source for this one signature.

        A call's fixed cost is what W7 measures (a few microseconds, most of it Python):
        looping over parameter descriptions costs about as much as the checks themselves,
        so, as `dataclasses` and `namedtuple` do, the loop is unrolled into a function
        written for this signature: one line of checks per argument (an array of the right
        shape, dtype and C strides, aligned, passes as it is; anything else goes through
        `_array`/`_scalar`, which copy or raise), one `np.empty` per out-param, the slot
        array, the guarded call. Same steps and errors as `_general_call`.
        """
        n = len(self.params)
        env: dict[str, Any] = {
            "ndarray": np.ndarray, "empty": np.empty, "DATA": _DATA, "SLOTS": self._slots_type,
            "data_pointer": _data_pointer, "count_error": self._count_error,
            "ENTRY": self._entry_address, "entry": self._entry, "guarded": self._guarded,
            "jmp_buf": _jmp_buf, "call_error": self._call_error,
        }  # fmt: skip
        args = [f"a{k}" for k in range(n)]
        lines = ["def call(*args):", f"    if len(args) != {n}: raise count_error(len(args))"]
        if n:
            lines.append(f"    {', '.join(args)}{',' if n == 1 else ''} = args")
        slots = []
        for k, ((is_buffer, shape, dtype, strides), param) in enumerate(zip(self._fast, self.params)):
            env[f"param{k}"] = param
            if not is_buffer:
                env[f"scalar{k}"] = self._scalar
                lines.append(f"    a{k} = scalar{k}(param{k}, a{k})")
                slots.append(f"data_pointer(a{k})")
                continue
            env[f"S{k}"], env[f"D{k}"], env[f"T{k}"], env[f"array{k}"] = shape, dtype, strides, self._array
            lines.append(
                f"    if not (type(a{k}) is ndarray and a{k}.shape == S{k} and a{k}.dtype == D{k} "
                f"and a{k}.strides == T{k} and a{k}.flags.aligned):"
            )
            lines.append(f"        a{k} = array{k}(param{k}, a{k})")
            slots.append(f"id(a{k}) + DATA")
        outs = []
        for k, (shape, dtype, _) in enumerate(self._outputs):
            env[f"OS{k}"], env[f"OD{k}"] = shape, dtype
            lines.append(f"    o{k} = empty(OS{k}, OD{k})")
            outs.append(f"o{k}")
        for k in self._order:
            slots.append(f"id(o{k}) + DATA" if self._outputs[k][2] else f"data_pointer(o{k})")
        lines.append(f"    slots = SLOTS({', '.join(slots)})")
        if self._guarded is None:
            lines.append("    entry(slots)")
        else:
            lines.append("    failed = guarded(ENTRY, slots, jmp_buf())")
            lines.append("    if failed: raise call_error(failed)")
        results = [f"o{k}" if is_buffer else f"o{k}[()]" for k, (_, _, is_buffer) in enumerate(self._outputs)]
        lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(lines), f"<irgrad call of @{self.name}>", "exec"), env, namespace)
        return namespace["call"]

    def _call_slow(self, keep: list[np.ndarray]) -> None:
        """The same call with data pointers asked of numpy and kept in a ctypes array."""
        words = (ctypes.c_void_p * max(1, len(keep)))(*[a.ctypes.data for a in keep])
        base = ctypes.addressof(words)
        size = ctypes.sizeof(ctypes.c_void_p)
        slots = self._slots_type(*[
            base + size * k if buffer else a.ctypes.data
            for k, (a, buffer) in enumerate(zip(keep, self._slot_is_buffer))
        ])  # fmt: skip
        self._call(slots)

    def _call(self, slots: Any) -> None:
        """`_irgrad_packed_<name>(slots)` through the allocation guard: MemoryError, not a
        crash, when the generated code cannot allocate a buffer (see guard.py)."""
        if self._guarded is None:
            self._entry(slots)
            return
        failed = self._guarded(self._entry_address, slots, _jmp_buf())
        if failed:
            raise self._call_error(failed)

    def _call_error(self, failed: int) -> Exception:
        """What a guarded call that returned `failed` (not 0) raises: RuntimeCheckError
        for a failed runtime check (its message is in this thread's jump buffer),
        MemoryError for a failed allocation of `failed` bytes."""
        if failed == ASSERT_FAILED:
            pointer = ctypes.c_void_p.from_address(_jmp_buf() + MESSAGE_OFFSET).value
            text = ctypes.string_at(pointer).decode("utf-8", "replace") if pointer else ""
            return RuntimeCheckError(text or f"@{self.name}: a runtime check failed")
        return self._out_of_memory(failed)

    def _out_of_memory(self, failed: int) -> MemoryError:
        return MemoryError(
            f"@{self.name}: out of memory: the compiled code could not allocate a buffer "
            f"of {failed} bytes"
        )

    @property
    def signature(self) -> str:
        return repr(self)


_GUARDED_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_guarded: list[Any] = []
_thread_state = threading.local()


def _guarded_call() -> Any:
    """guard.py's `_irgrad_guarded_call` as a ctypes function (None where it is unavailable)."""
    if not _guarded:
        initialize()
        address = guard.guarded_call_address
        _guarded.append(None if address is None else _GUARDED_SIGNATURE(address))
    return _guarded[0]


def _jmp_buf() -> int:
    """This thread's jump buffer for the allocation guard (made on its first call; it lives
    as long as the thread)."""
    address = _thread_state.__dict__.get("address")
    if address is None:
        _thread_state.buffer = ctypes.create_string_buffer(JMP_BUF_BYTES)
        address = _thread_state.address = ctypes.addressof(_thread_state.buffer)
    return address


def _data_pointer(array: np.ndarray) -> int:
    assert _DATA is not None
    return ctypes.c_void_p.from_address(id(array) + _DATA).value or 0


__all__ = ["ArgumentError", "CompiledFunction", "Param", "RuntimeCheckError"]
