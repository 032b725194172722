"""How the GPU runtime passes kernel arguments to pycuda's `prepared_call`: the `struct`
format of each parameter type (as its PTX declares it) and each value as `struct.pack` takes
it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Attribute

from irgrad.backends.gpu.device import GpuRuntimeError

_PARAM_FORMATS = {
    ("i", 1): "B",  # PTX passes an i1 parameter as .u8
    ("i", 8): "b",
    ("i", 16): "h",
    ("i", 32): "i",
    ("i", 64): "q",
    ("f", 16): "h",  # a half goes as its 16 bits (pycuda's struct packer has no 'e')
    ("f", 32): "f",
    ("f", 64): "d",
}


def param_format(t: Attribute) -> str:
    """The `struct` format of a kernel parameter of type `t` (a buffer is a pointer)."""
    from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType

    if isinstance(t, MemRefType):
        return "P"
    if isinstance(t, IndexType):
        return "q"
    if isinstance(t, BFloat16Type):
        return "h"
    if isinstance(t, IntegerType):
        return _PARAM_FORMATS[("i", t.width.data)]
    for kind, width in ((Float16Type, 16), (Float32Type, 32), (Float64Type, 64)):
        if isinstance(t, kind):
            return _PARAM_FORMATS[("f", width)]
    raise GpuRuntimeError(f"a kernel parameter of type {t} cannot be passed")


def param_value(value: Any, fmt: str) -> Any:
    """A kernel argument as `struct.pack` takes it for format character `fmt`."""
    if fmt == "P":
        return int(value)
    if fmt == "h" and isinstance(value, np.generic) and value.dtype.kind in "fV":
        return int(np.asarray(value).view(np.int16))  # f16 and bf16: their bits
    if fmt == "B":
        return int(bool(value))
    return value.item() if isinstance(value, np.generic) else value
