"""Calling compiled functions with numpy arrays: argument checks, zero-copy, out-params.

The compiled side is the packed entry convert-func-to-llvm emits for every public function:
`void _irgrad_packed_f(void **slots)`, one slot per parameter of `@f` (its inputs, then the
out-param buffers bufferize added), then one per scalar result. A buffer's slot holds its data
pointer; a scalar's slot points at the value.

`CompiledFunction(module, name, arg_types, result_types)` describes `@f` as the user sees
it: `arg_types` are the inputs (memref or tensor types for arrays, scalar types), and
`result_types` the results, where a memref/tensor result is an out-param (the trailing
parameters of `@f`, in order) and a scalar result is a returned value (in order). A call:
1. checks the number of arguments, then each argument's kind, shape and dtype against the
   signature, before anything runs, raising `ArgumentError` naming the argument;
2. passes C-contiguous, aligned, native-endian arrays of the right dtype zero-copy; copies
   any other array (non-contiguous, zero-stride, misaligned, big-endian) into one that is;
3. allocates the out-param arrays with numpy and calls through ctypes, which releases the
   GIL for the duration of the call;
4. returns the results as a tuple: arrays for buffers, numpy scalars for scalars.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import IndexType, MemRefType, TensorType
from xdsl.ir import Attribute

from irgrad.backends.interpreter.dtypes import is_float_dtype, numpy_dtype
from irgrad.lowering.func_to_llvm import PACKED_PREFIX

if TYPE_CHECKING:
    from irgrad.backends.cpu.jit import CompiledModule


class ArgumentError(ValueError):
    """A call's arguments do not match the compiled function's signature."""


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


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype


class CompiledFunction:
    """A compiled function called with numpy arrays; see the module docstring."""

    def __init__(
        self,
        module: CompiledModule,
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
        entry = PACKED_PREFIX + name
        if not module.has_function(entry):
            raise ArgumentError(
                f"no compiled entry @{entry} for @{name} (is @{name} public, and was "
                "convert-func-to-llvm run with packed-interface=true?)"
            )
        self._entry = _PACKED_SIGNATURE(module.address(entry))
        # Slot order: inputs, out-param buffers, scalar results.
        self._out_buffers = [k for k, r in enumerate(self.results) if r.is_buffer]
        self._out_scalars = [k for k, r in enumerate(self.results) if not r.is_buffer]
        self._slot_count = len(self.params) + len(self.results)
        self._slots_type = ctypes.c_void_p * max(1, self._slot_count)

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
        params = self.params
        if len(args) != len(params):
            raise ArgumentError(
                f"@{self.name} takes {len(params)} argument(s), got {len(args)}"
            )
        keep: list[np.ndarray] = []
        for param, value in zip(params, args):
            keep.append(self._array(param, value) if param.is_buffer else self._scalar(param, value))
        outputs = [np.empty(r.shape if r.is_buffer else (), dtype=r.dtype) for r in self.results]
        slots = self._slots_type(
            *map(_address, keep),
            *(_address(outputs[k]) for k in self._out_buffers),
            *(_address(outputs[k]) for k in self._out_scalars),
        )
        self._entry(slots)
        return tuple(
            out if result.is_buffer else out[()] for out, result in zip(outputs, self.results)
        )

    @property
    def signature(self) -> str:
        return repr(self)


__all__ = ["ArgumentError", "CompiledFunction", "Param"]
