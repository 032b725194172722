"""Verifier checks xDSL 0.75 lacks and MLIR has, whose absence let wrong IR through to the
backends: `tensor.from_elements` with fewer (or more) elements than its result type holds
verified, and the CPU backend returned uninitialized memory for the rest; a `memref.subview`
whose sizes (or static offset) disagree with its result type verified, then failed inside
the interpreter or lowered to the wrong address.
Each op's generated `verify_` runs first, then the check. Upstream: not reported.
"""

from __future__ import annotations

import math
from typing import Any

from xdsl.dialects import memref, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, TensorType
from xdsl.utils.exceptions import VerifyException

from irgrad.xdsl_patches.patching import install, is_patched


def _from_elements(op: Any) -> None:
    t = op.result.type
    assert isinstance(t, TensorType)
    shape = t.get_shape()
    if any(d == DYNAMIC_INDEX or d < 0 for d in shape):
        raise VerifyException(f"'{op.name}' op result {t} must have a static shape")
    if len(op.elements) != math.prod(shape):
        raise VerifyException(
            f"'{op.name}' op has {len(op.elements)} elements for a result {t} of {math.prod(shape)}")


def _sizes_fit(sizes: list[int], shape: tuple[int, ...]) -> bool:
    """Whether `shape` is `sizes` with some unit sizes dropped (a rank-reducing subview);
    a dynamic size matches anything."""
    k = 0
    for size in sizes:
        if k < len(shape) and (size == shape[k] or DYNAMIC_INDEX in (size, shape[k]) or shape[k] < 0):
            k += 1
        elif size != 1:
            return False
    return k == len(shape)


def _subview(op: Any) -> None:
    t = op.result.type
    assert isinstance(t, MemRefType)
    sizes = list(op.static_sizes.get_values())
    if not _sizes_fit(sizes, tuple(t.get_shape())):
        raise VerifyException(
            f"'{op.name}' op sizes {sizes} do not give its result type {t} (equal sizes, or unit "
            "sizes dropped)")
    _subview_offset(op, t)


def _subview_offset(op: Any, t: MemRefType) -> None:
    """MLIR's layout check, for the offset: where the source's offset, strides and the
    subview's offsets are all static, the result's static offset must be theirs."""
    source = op.source.type
    if not isinstance(source, MemRefType):
        return
    strides, base, declared = source.get_strides(), source.get_offset(), t.get_offset()
    offsets = list(op.static_offsets.get_values())
    if strides is None or base is None or declared is None or None in strides:
        return
    if any(o == DYNAMIC_INDEX for o in offsets) or len(offsets) != len(strides):
        return
    expected = base + sum(o * s for o, s in zip(offsets, strides))  # type: ignore[operator]
    if expected != declared:
        raise VerifyException(
            f"'{op.name}' op result type {t} has offset {declared}, but its offsets {offsets} "
            f"into {source} start at {expected}")


def apply() -> None:
    for cls, check in ((tensor.FromElementsOp, _from_elements), (memref.SubviewOp, _subview)):
        original = cls.verify_
        if is_patched(original):
            continue

        def verify_(self: Any, original: Any = original, check: Any = check) -> None:
            original(self)
            check(self)

        install(cls, "verify_", verify_, original)
