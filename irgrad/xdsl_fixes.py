"""Fixes for xDSL 0.75 bugs that irgrad's round trips hit, applied once at import.

Each fix is small, says which bug it mends, and checks that the code it patches is still the
code it was written for, so an xDSL upgrade that fixes (or moves) the bug fails loudly here
instead of silently double-patching.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat
from xdsl.parser.attribute_parser import AttrParser

_Element = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]


def _fix_hex_float_elements() -> None:
    """Dense float elements written in hex are bit patterns (MLIR's rule, and what xDSL's own
    printer emits for inf and nan: `dense<[1.0, 0x7F800000]>`); xDSL 0.75 parses them as
    integer values, so `0x7F800000` became 2139095040.0 instead of +inf."""
    original = _Element.to_type
    if getattr(original, "_irgrad_fixed", False):
        return

    def to_type(self, parser, type):  # type: ignore[no-untyped-def]
        if (
            isinstance(type, AnyFloat)
            and isinstance(self.value, int)
            and not isinstance(self.value, bool)
            and self.span.text.lower().lstrip("-").startswith("0x")
        ):
            size = type.compile_time_size
            if self.is_negative or not 0 <= self.value < 1 << (8 * size):
                parser.raise_error(
                    f"hexadecimal float literal does not fit {type}", at_position=self.span
                )
            return type.unpack(self.value.to_bytes(size, "little"), 1)[0]
        return original(self, parser, type)

    to_type._irgrad_fixed = True  # type: ignore[attr-defined]
    _Element.to_type = to_type  # type: ignore[method-assign]


_fix_hex_float_elements()
