"""Integer widths, dimensions and dense literal sizes past irgrad's limits are located parse
errors (irgrad/xdsl_patches/literal_limits.py); the largest allowed ones still parse."""

from __future__ import annotations

import pytest

from irgrad.context import make_context
from irgrad.diagnostics import IRParseError, parse_module
from irgrad.xdsl_patches.literal_limits import MAX_DENSE_ELEMENTS, MAX_DIMENSION, MAX_INTEGER_WIDTH


def parse(text: str):
    return parse_module(make_context(), text, "t.mlir")


def arg(type_text: str) -> str:
    return f"func.func @f(%a: {type_text}) {{\n  func.return\n}}\n"


def test_the_largest_allowed_values_parse():
    parse(arg(f"i{MAX_INTEGER_WIDTH}"))
    parse(arg(f"memref<{MAX_DIMENSION}xf32>"))
    parse("%c = arith.constant dense<0.0> : tensor<4xf32>\n")


@pytest.mark.parametrize(
    "text, message",
    [
        (arg(f"i{MAX_INTEGER_WIDTH + 1}"), "integer bitwidth 16777216 is larger than 16777215"),
        (arg(f"si{2**32}"), "integer bitwidth 4294967296"),
        (arg(f"memref<{MAX_DIMENSION + 1}xf32>"), "invalid dimension 9223372036854775808"),
        (arg("tensor<3x18446744073709551616xf32>"), "invalid dimension"),
        (f"%c = arith.constant dense<1.0> : tensor<{MAX_DENSE_ELEMENTS + 1}xf32>\n", "a dense literal of 67108865 elements"),
        (f"%c = arith.constant dense<1.0> : tensor<{2**20}x{2**20}xf32>\n", "irgrad holds at most"),
    ],
)
def test_past_the_limits_is_a_located_error(text, message):
    with pytest.raises(IRParseError, match=message) as info:
        parse(text)
    assert str(info.value).startswith("t.mlir:1:")
