"""irgrad/xdsl_patches/dense_bool_hex.py: boolean dense elements in hex are MLIR's packed bits."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, DenseIntOrFPElementsAttr, TensorType, i1
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

import irgrad  # noqa: F401  (applies the patches)


def _values(text: str) -> np.ndarray:
    ctx = Context()
    ctx.load_dialect(Builtin)
    return np.array(Parser(ctx, text).parse_attribute().get_values()) != 0


def _pattern(count: int) -> np.ndarray:
    return np.random.default_rng(count).random(count) < 0.4


def test_upstream_packed_bits_are_read_least_significant_first():
    # What upstream mlir-opt 19 prints for `arange(144) % 3 == 0`.
    values = _values('dense<"0x499224499224499224499224499224499224"> : tensor<144xi1>')
    np.testing.assert_array_equal(values, np.arange(144) % 3 == 0)


@pytest.mark.parametrize("shape", [(101,), (12, 12), (3, 5, 9)])
def test_a_large_boolean_constant_prints_packed_and_reads_back(shape):
    expected = _pattern(int(np.prod(shape))).reshape(shape)
    attr = DenseIntOrFPElementsAttr.from_list(TensorType(i1, list(shape)), [int(v) for v in expected.ravel()])
    text = str(attr)
    packed_bytes = (expected.size + 7) // 8
    assert text.startswith('dense<"0x') and len(text.split('"')[1]) == 2 + 2 * packed_bytes
    np.testing.assert_array_equal(_values(text).reshape(shape), expected)


def test_small_and_splat_boolean_constants_keep_the_literal_list():
    assert str(DenseIntOrFPElementsAttr.from_list(TensorType(i1, [3]), [1, 0, 1])) == (
        "dense<[true, false, true]> : tensor<3xi1>"
    )
    assert str(DenseIntOrFPElementsAttr.from_list(TensorType(i1, [200]), [1] * 200)) == "dense<true> : tensor<200xi1>"


def test_a_one_byte_splat_and_xdsls_byte_per_element_form_are_read():
    assert _values('dense<"0xFF"> : tensor<20xi1>').all()
    assert not _values('dense<"0x00"> : tensor<20xi1>').any()
    np.testing.assert_array_equal(_values('dense<"0xFF00FF"> : tensor<3xi1>'), [True, False, True])
    np.testing.assert_array_equal(_values('dense<"0x05"> : tensor<3xi1>'), [True, False, True])


def test_a_hex_string_of_another_length_names_both_sizes():
    with pytest.raises(ParseError, match="5 bytes does not hold 144 i1 elements .* 18 bytes"):
        _values('dense<"0x0102030405"> : tensor<144xi1>')


def test_other_element_types_still_use_xdsls_hex():
    values = _values('dense<"0x0000803F00000040"> : tensor<2xf32>')
    assert values.all()
    ctx = Context()
    ctx.load_dialect(Builtin)
    attr = Parser(ctx, 'dense<"0x0000803F00000040"> : tensor<2xf32>').parse_attribute()
    assert attr.get_values() == (1.0, 2.0)
