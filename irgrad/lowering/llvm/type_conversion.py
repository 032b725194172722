"""The type conversion of the `convert-*-to-llvm` passes: builtin types to `llvm` dialect
types, and how each is laid out in memory (docs/design/cpu-pipeline.md, stage "llvm"):
- `index` is `i64`;
- `bf16` is its 16 bits in an `i16` (LLVM's `bfloat` has no arithmetic on x86 and neither
  llvmlite nor xDSL's translation knows it): arithmetic extends to f32 and rounds back to
  nearest even after every op, which is what numpy (ml_dtypes) computes;
- `f16` stays `half` (LLVM promotes each op to f32 and rounds back, as numpy does);
- a memref is one `!llvm.ptr` to its first element (the bare-pointer model; strides come
  from the type);
- in memory an `i1` element takes one byte (numpy's bool), an `index` element 8 bytes.

Also used outside the lowering, by the GPU runtime and emulator to size device buffers.
"""

from __future__ import annotations

import struct

import ml_dtypes
import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    i8,
    i16,
    i64,
)
from xdsl.ir import Attribute

PTR = llvm.LLVMPointerType()
f16 = Float16Type()
f32 = Float32Type()
f64 = Float64Type()

ALLOC_ALIGNMENT = 64
"""Bytes; `memref.alloc` buffers start on a cache line (and an AVX-512 vector)."""


def convert_type(t: Attribute) -> Attribute:
    """The `llvm` dialect type of a value of type `t` (the identity for legal types)."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, BFloat16Type):
        return i16
    if isinstance(t, MemRefType):
        return PTR
    return t


def storage_type(element_type: Attribute) -> Attribute:
    """The `llvm` type one memref element of `element_type` is stored as."""
    if isinstance(element_type, IntegerType) and element_type.width.data == 1:
        return i8
    return convert_type(element_type)


def byte_size(llvm_type: Attribute) -> int:
    """Size in bytes of a storage type."""
    if isinstance(llvm_type, IntegerType):
        return max(1, llvm_type.width.data // 8)
    if isinstance(llvm_type, Float16Type):
        return 2
    if isinstance(llvm_type, Float32Type):
        return 4
    if isinstance(llvm_type, Float64Type):
        return 8
    if isinstance(llvm_type, llvm.LLVMPointerType):
        return 8
    raise ValueError(f"no byte size for {llvm_type}")


def is_signless_integer(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS


def is_native_float(t: Attribute) -> bool:
    """A float type LLVM computes in directly (bf16 is emulated)."""
    return isinstance(t, Float16Type | Float32Type | Float64Type)


def is_scalar_type(t: Attribute) -> bool:
    """The scalar types of the contract: signless integers, index, f16, bf16, f32, f64."""
    return is_signless_integer(t) or isinstance(t, IndexType | BFloat16Type) or is_native_float(t)


def is_legal_llvm_type(t: Attribute) -> bool:
    """True for the types stage "llvm" allows on values."""
    if isinstance(t, llvm.LLVMStructType):
        return all(is_legal_llvm_type(e) for e in t.types.data)
    return (
        is_signless_integer(t)
        or is_native_float(t)
        or isinstance(t, llvm.LLVMPointerType | llvm.LLVMVoidType | llvm.LLVMArrayType)
    )


def bf16_bits(value: float) -> int:
    """The bits of `value` rounded to bf16 (to nearest even), as a signed i16 value."""
    bits = int(np.array(value, dtype=np.float64).astype(ml_dtypes.bfloat16).view(np.uint16))
    return bits - (1 << 16) if bits >= 1 << 15 else bits


def float_bits_f32(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def float_width(t: Attribute) -> int:
    if isinstance(t, Float16Type | BFloat16Type):
        return 16
    if isinstance(t, Float32Type):
        return 32
    if isinstance(t, Float64Type):
        return 64
    raise ValueError(f"{t} is not a float type")


def intrinsic_suffix(t: Attribute) -> str:
    """The type suffix of an overloaded intrinsic name: f32, f64, f16, i32, ..."""
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    return f"f{float_width(t)}"
