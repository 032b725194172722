"""Dense float elements written in hex are bit patterns.

MLIR's rule, and what xDSL's own printer emits for inf and nan (`dense<[1.0, 0x7F800000]>`);
xDSL 0.75 parses them as integer values, so `0x7F800000` became 2139095040.0 instead of
+inf. Upstream: xdslproject/xdsl#3370 fixed this for `FloatAttr`, not for dense elements.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat
from xdsl.parser.attribute_parser import AttrParser

from irgrad.xdsl_patches.patching import install, is_patched, require_source

_Element = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]


def apply() -> None:
    original = _Element.to_type
    if is_patched(original):
        return
    require_source(original, "return self.to_float(parser)", patch="dense_hex_floats")

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

    install(_Element, "to_type", to_type, original)
