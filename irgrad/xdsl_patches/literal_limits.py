"""Limits on what a few characters of IR may ask for: integer widths and dimensions as in
MLIR, dense literals that fit in memory.

- An integer type is at most MAX_INTEGER_WIDTH bits wide, MLIR's `IntegerType::kMaxWidth`.
  xDSL 0.75 takes any width, and `array<i4294967296: 1>` computed its value range with
  2^32-bit integers: the parse never finished.
- A shape dimension must fit a signed 64-bit integer, as in MLIR ("invalid dimension").
  xDSL 0.75 accepts any decimal literal, so `memref<18446744073709551616x5xf32>` parsed and
  verified, and the first pass that computed a size with it failed far from the input,
  without a location.
- A dense literal holds at most MAX_DENSE_ELEMENTS elements. xDSL stores a splat expanded
  (`dense<1.0> : tensor<100000000xf32>` is 400 MB of bytes and a Python list of 10^8 floats,
  tens of seconds before anything is printed) where MLIR keeps one value; irgrad refuses such
  a literal at its type, with a located error. Weights that large are arguments, not literals.
The checks are the parser's, at the literal. Upstream: not reported.
"""

from __future__ import annotations

import math

from xdsl.parser.attribute_parser import AttrParser

from irgrad.xdsl_patches.patching import install, is_patched

MAX_INTEGER_WIDTH = 2**24 - 1
MAX_DIMENSION = 2**63 - 1
MAX_DENSE_ELEMENTS = 2**26


def _patch_dimension() -> None:
    original = AttrParser.parse_shape_dimension
    if is_patched(original):
        return

    def parse_shape_dimension(self, allow_dynamic: bool = True) -> int:  # type: ignore[no-untyped-def]
        span = self._current_token.span
        value = original(self, allow_dynamic)
        if value > MAX_DIMENSION:
            self.raise_error(f"invalid dimension {value}: larger than {MAX_DIMENSION}", span.start, span.end)
        return value

    install(AttrParser, "parse_shape_dimension", parse_shape_dimension, original)


def _patch_integer_width() -> None:
    original = AttrParser._parse_optional_integer_or_float_type  # pyright: ignore[reportPrivateUsage]
    if is_patched(original):
        return

    def _parse_optional_integer_or_float_type(self):  # type: ignore[no-untyped-def]
        token = self._current_token
        match = self._builtin_integer_type_regex.match(token.text) if token.kind.name == "BARE_IDENT" else None
        if match is not None and int(match.group(1)) > MAX_INTEGER_WIDTH:
            self.raise_error(
                f"integer bitwidth {match.group(1)} is larger than {MAX_INTEGER_WIDTH}, the most MLIR allows",
                token.span.start, token.span.end)
        return original(self)

    install(AttrParser, "_parse_optional_integer_or_float_type", _parse_optional_integer_or_float_type, original)


def _patch_dense_type() -> None:
    original = AttrParser._parse_dense_literal_type  # pyright: ignore[reportPrivateUsage]
    if is_patched(original):
        return

    def _parse_dense_literal_type(self):  # type: ignore[no-untyped-def]
        start = self._current_token.span.start
        type = original(self)
        count = math.prod(type.get_shape())
        if count > MAX_DENSE_ELEMENTS:
            self.raise_error(
                f"a dense literal of {count} elements: irgrad holds at most {MAX_DENSE_ELEMENTS} "
                "(pass values this large as arguments)", start, self._current_token.span.start)
        return type

    install(AttrParser, "_parse_dense_literal_type", _parse_dense_literal_type, original)


def apply() -> None:
    _patch_integer_width()
    _patch_dimension()
    _patch_dense_type()
