"""Errors the Python API raises at trace time, and how they point at the user's line.

Shape and dtype mistakes are found while tracing, so the message can name the operation, the
shapes or dtypes, and the user's own source line (the first stack frame outside irgrad).
"""

from __future__ import annotations

import os
import sys
from types import FrameType

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ShapeError(ValueError):
    """Operand shapes that the operation cannot accept (raised while tracing)."""


class DTypeError(TypeError):
    """Operand dtypes that the operation cannot accept (raised while tracing)."""


class ConcretizationError(TypeError):
    """A traced value was used where Python needs a concrete one (`if`, `bool()`, `int()`)."""


class UnsupportedError(NotImplementedError):
    """A feature whose implementation belongs to a later milestone."""


def user_frame() -> FrameType | None:
    """The innermost stack frame whose code is not part of irgrad (the user's line)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep) and "/importlib/" not in filename:
            return frame
        frame = frame.f_back
    return None


def user_location() -> tuple[str, int, int] | None:
    """(file, line, column) of the user's call, for error messages and IR `loc(...)`."""
    frame = user_frame()
    if frame is None:
        return None
    column = 1
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None:
        # The instruction being executed gives the exact column (Python 3.11+).
        index = frame.f_lasti // 2
        for i, (line, _end, col, _end_col) in enumerate(positions()):
            if i == index and col is not None:
                column = col + 1
                break
    return frame.f_code.co_filename, frame.f_lineno, column


def user_site() -> str:
    """` (at file.py:12)` for messages; empty when no user frame is found."""
    loc = user_location()
    return f" (at {loc[0]}:{loc[1]})" if loc else ""
