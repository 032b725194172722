"""The string-literal lexer fails at once on a missing closing quote and lexes closed ones as
before (irgrad/xdsl_patches/string_literal_backtracking.py)."""

from __future__ import annotations

import pytest
from xdsl.utils.mlir_lexer import MLIRLexer

from irgrad.context import make_context
from irgrad.diagnostics import IRParseError, parse_module
from irgrad.xdsl_patches import string_literal_backtracking


def test_import_irgrad_applies_it():
    assert MLIRLexer._unescaped_characters_regex.pattern == string_literal_backtracking.PATTERN


@pytest.mark.parametrize("literal", ['""', '"abc"', r'"a\"b"', r'"tab\there"', r'"\00\ff"', '"é"'])
def test_closed_literals_match_as_xdsl_matched_them(literal):
    import re

    xdsl = re.compile(string_literal_backtracking._XDSL_PATTERN)
    ours = MLIRLexer._unescaped_characters_regex
    assert ours.match(literal + " rest").group() == xdsl.match(literal + " rest").group() == literal


def test_an_unclosed_literal_on_a_long_line_is_a_located_error():
    # 200 characters after the quote: xDSL's pattern would try 2^200 ways of splitting them.
    text = 'func.func @f() {\n  %y = "nn.exp ' + "a b, c = 1 " * 20 + "\n  func.return\n}\n"
    with pytest.raises(IRParseError, match="t.mlir:2:8"):
        parse_module(make_context(), text, "t.mlir")
