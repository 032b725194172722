"""IR element types <-> numpy dtypes, and dense attributes <-> numpy arrays.

Why on the ground floor: the tracer (which turns numpy constants into `nn.constant`), the
interpreter, the drivers and the tests all convert between the two worlds, and must agree bit
for bit. Dense attributes hold their elements as packed little-endian bytes (xDSL's
`BytesAttr`), so conversion is a `np.frombuffer` view one way and `tobytes` the other; i1 is
stored one byte per element with true as 0xFF (xDSL's signed-byte packing), bf16 as its raw
16 bits.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

_FLOATS: dict[type[Attribute], np.dtype] = {
    Float16Type: np.dtype(np.float16),
    BFloat16Type: BFLOAT16,
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}

FLOAT_DTYPES = frozenset(_FLOATS.values())
# complex<f32> and complex<f64>: numpy's complex64/complex128, the same (re, im) pairs in memory.
_COMPLEX_PARTS = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
COMPLEX_DTYPES = frozenset(_COMPLEX_PARTS)
LOW_PRECISION_DTYPES = frozenset({np.dtype(np.float16), BFLOAT16})
_INT_WIDTHS = (8, 16, 32, 64)


def is_float_dtype(dtype: np.dtype) -> bool:
    """True for f16, bf16, f32, f64 (bf16 is not a numpy `floating` subtype, hence the set)."""
    return dtype in FLOAT_DTYPES


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of an IR element type exactly.

    i1 is `np.bool_`, `index` is `np.int64` (as a tensor element; index scalars are Python
    ints), signless and signed integers are numpy signed integers.
    """
    for attr_type, dtype in _FLOATS.items():
        if isinstance(element_type, attr_type):
            return dtype
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in _INT_WIDTHS:
            unsigned = element_type.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'u' if unsigned else ''}int{width}")
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    if isinstance(element_type, ComplexType):
        part = element_type.get_element_type()
        for complex_dtype, part_dtype in _COMPLEX_PARTS.items():
            if isinstance(part, type(element_type_for(part_dtype))):
                return complex_dtype
    raise TypeError(f"element type {element_type} has no numpy dtype")


def complex_part_dtype(dtype: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128: the dtype of the real and imaginary parts."""
    return _COMPLEX_PARTS[np.dtype(dtype)]


def element_type_for(dtype: np.dtype | type) -> Attribute:
    """The IR element type of a numpy dtype (the inverse of `numpy_dtype` on irgrad's types)."""
    dtype = np.dtype(dtype)
    for attr_type, float_dtype in _FLOATS.items():
        if dtype == float_dtype:
            return attr_type()
    if dtype == np.bool_:
        return IntegerType(1)
    if dtype.kind == "i" and dtype.itemsize * 8 in _INT_WIDTHS:
        return IntegerType(dtype.itemsize * 8)
    if dtype in _COMPLEX_PARTS:
        return ComplexType(element_type_for(_COMPLEX_PARTS[dtype]))
    raise TypeError(
        f"numpy dtype {dtype} has no irgrad element type (use bool, int8-64, float16, "
        "bfloat16, float32, float64, complex64 or complex128)"
    )


def tensor_type_for(array: np.ndarray) -> TensorType:
    """`tensor<...>` with the array's shape and element type."""
    return TensorType(element_type_for(array.dtype), list(array.shape))


def _storage_dtype(dtype: np.dtype) -> np.dtype:
    """How a dense attribute packs elements of `dtype`: little-endian, bool as int8."""
    if dtype == np.bool_:
        return np.dtype("<i1")
    if dtype == BFLOAT16:
        return np.dtype("<u2")
    return dtype.newbyteorder("<")


def to_attribute(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A `dense<...>` attribute holding `array` (its type is `tensor_type_for(array)`)."""
    array = np.asarray(array)
    storage = _storage_dtype(array.dtype)
    if array.dtype == np.bool_:
        packed = np.where(array, -1, 0).astype(storage)
    elif array.dtype == BFLOAT16:
        packed = array.view(np.uint16).astype(storage)
    else:
        packed = array.astype(storage)
    data = np.ascontiguousarray(packed).tobytes()
    return DenseIntOrFPElementsAttr(tensor_type_for(array), BytesAttr(data))


def from_attribute(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The array a dense attribute holds, shaped like its type.

    A view on the attribute's bytes where the storage already is the value (floats and
    integers on a little-endian machine), so it is read-only; i1 and splats are copied.
    """
    element_type = attr.get_element_type()
    dtype = numpy_dtype(element_type)
    shape = tuple(attr.get_shape())
    raw = np.frombuffer(attr.data.data, dtype=_storage_dtype(dtype))
    if dtype == np.bool_:
        values = raw != 0
    elif dtype == BFLOAT16:
        values = raw.view(BFLOAT16)
    else:
        values = raw.astype(dtype, copy=False)
    count = math.prod(shape)
    if values.size == 1 and count != 1:
        # A splat stored as a single element.
        return np.full(shape, values[0], dtype=dtype)
    if values.size != count:
        raise ValueError(
            f"dense attribute of type {attr.type} holds {values.size} elements, expected {count}"
        )
    return values.reshape(shape)
