"""Dense `i1` elements written in hex are packed bits, as MLIR writes and reads them.

MLIR stores a boolean dense attribute one bit per element, least significant bit first, and its
hex form is that storage: `dense<"0x49..."> : tensor<144xi1>` holds 18 bytes (and a single
`0x00` or `0xFF` byte is a splat). xDSL 0.75 writes and reads one byte per element, so upstream
`mlir-opt` rejected what irgrad printed for a large boolean constant ("elements hex data size is
invalid") and irgrad misread what upstream printed. This patch prints MLIR's packed form and
reads it; it still reads xDSL's byte-per-element form, which has another length.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType
from xdsl.parser.attribute_parser import AttrParser

from irgrad.xdsl_patches.patching import install, is_patched, require_source

_HEX_THRESHOLD = 100
"""Elements above which xDSL's printer writes hex (its rule for every element type)."""


def _is_bool(element_type: object) -> bool:
    return isinstance(element_type, IntegerType) and element_type.width.data == 1


def packed_hex(values: np.ndarray) -> str:
    """MLIR's hex form of boolean `values`: bits, least significant first, as upper-case hex."""
    return "0x" + np.packbits(values.astype(bool), bitorder="little").tobytes().hex().upper()


def unpacked_bools(data: bytes, count: int) -> list[int] | None:
    """The `count` booleans that MLIR's hex storage `data` holds (1 or 0), or None when its
    length fits neither MLIR's forms (packed bits, a 0x00/0xFF splat) nor xDSL's (a byte each)."""
    if len(data) == 1 and data[0] in (0x00, 0xFF):
        return [1 if data[0] else 0] * count
    if len(data) == math.ceil(count / 8):
        bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")[:count]
        return [int(b) for b in bits]
    if len(data) == count and all(b in (0x00, 0x01, 0xFF) for b in data):
        return [1 if b else 0 for b in data]
    return None


def apply() -> None:
    _patch_printer()
    _patch_parser()


def _patch_printer() -> None:
    original = DenseIntOrFPElementsAttr.print_without_type
    if is_patched(original):
        return
    require_source(original, "elif length > 100:", 'f\'"0x{self.data.data.hex().upper()}"\'', patch="dense_bool_hex")

    def print_without_type(self, printer):  # type: ignore[no-untyped-def]
        if _is_bool(self.get_element_type()) and len(self) > _HEX_THRESHOLD and not self.is_splat():
            values = np.array(self.get_values(), dtype=np.int64) != 0
            printer.print_string(f'dense<"{packed_hex(values)}">')
            return
        original(self, printer)

    install(DenseIntOrFPElementsAttr, "print_without_type", print_without_type, original)


def _patch_parser() -> None:
    original = AttrParser.parse_dense_int_or_fp_elements_attr
    if is_patched(original):
        return
    require_source(original, "bytes.fromhex(dense_contents[2:])", patch="dense_bool_hex")

    def parse_dense_int_or_fp_elements_attr(self, type):  # type: ignore[no-untyped-def]
        start = self._current_token.span.start
        if self.parse_optional_punctuation("<") is not None:
            text_start = self._current_token.span.start
            text = self.parse_optional_str_literal()
            if text is not None and self.parse_optional_punctuation(">") is not None:
                shaped = type
                if shaped is None:
                    self.parse_punctuation(":", " in dense attribute")
                    shaped = self._parse_dense_literal_type()
                if _is_bool(shaped.element_type) and text.lower().startswith("0x"):
                    return _parse_bool_hex(self, shaped, text, text_start)
        self._resume_from(start)
        return original(self, type)

    install(AttrParser, "parse_dense_int_or_fp_elements_attr", parse_dense_int_or_fp_elements_attr, original)


def _parse_bool_hex(parser, shaped, text: str, at):  # type: ignore[no-untyped-def]
    count = math.prod(shaped.get_shape())
    try:
        data = bytes.fromhex(text[2:])
    except ValueError:
        parser.raise_error("Hex string in denseAttr is invalid", at_position=at)
    values = unpacked_bools(data, count)
    if values is None:
        parser.raise_error(
            f"hex data of {len(data)} bytes does not hold {count} i1 elements (MLIR packs them, "
            f"{math.ceil(count / 8)} bytes; or a 0x00/0xFF splat)",
            at_position=at,
        )
    return DenseIntOrFPElementsAttr.from_list(shaped, values)
