"""irgrad/xdsl_patches/dense_hex_floats.py: hex elements of a dense float attribute are bit patterns."""

from __future__ import annotations

import math

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

import irgrad  # noqa: F401  (applies the patches)


def _values(text: str) -> tuple[float, ...]:
    ctx = Context()
    ctx.load_dialect(Builtin)
    return tuple(Parser(ctx, text).parse_attribute().get_values())


def test_hex_elements_are_bit_patterns():
    values = _values("dense<[1.0, 0x7F800000, 0xFF800000, 0x3F800000]> : tensor<4xf32>")
    assert values[0] == 1.0 and values[1] == math.inf and values[2] == -math.inf and values[3] == 1.0


def test_hex_nan_of_f64():
    assert math.isnan(_values("dense<[0x7FF8000000000000]> : tensor<1xf64>")[0])


def test_decimal_integers_stay_values():
    assert _values("dense<[3, 4]> : tensor<2xf32>") == (3.0, 4.0)


def test_a_hex_literal_too_wide_for_the_type_is_an_error():
    with pytest.raises(ParseError, match="does not fit"):
        _values("dense<[0x7FF8000000000000]> : tensor<1xf32>")
