"""A string literal without its closing quote is an error at once, not an exponential search.

xDSL 0.75 lexes string literals with `"(?:[^"\\\n\v\f]+|\\(?:...))*"`: a `+` inside a `*`, so
when no closing quote follows (a quote typed by mistake, a truncated file) the regex engine
tries every way of splitting the rest of the line into runs before failing: 30 characters
took seconds, a line of 60 never finished. The same language with the outer repetition
possessive (`*+`, Python 3.11) never gives characters back, so a failed match costs one pass
over the line and a successful one is unchanged. Upstream: not reported.
"""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer

_XDSL_PATTERN = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
PATTERN = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"'


class XdslLexerChanged(AssertionError):
    """xDSL's string-literal pattern is not the one this patch was written for."""


def apply() -> None:
    current = MLIRLexer._unescaped_characters_regex  # pyright: ignore[reportPrivateUsage]
    if current.pattern == PATTERN:
        return
    if current.pattern != _XDSL_PATTERN:
        raise XdslLexerChanged(
            f"xDSL's string-literal pattern changed to {current.pattern!r}: review "
            "irgrad/xdsl_patches/string_literal_backtracking.py")
    MLIRLexer._unescaped_characters_regex = re.compile(PATTERN)  # pyright: ignore[reportPrivateUsage]
