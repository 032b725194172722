"""The CPU backend's compile and load error, raised from compile.py, loading.py and target.py.

A module of its own because every layer raises or catches it, the lowest (checking object
code, target.py) included, so it can sit below all of them.
"""

from __future__ import annotations

from irgrad.diagnostics import IrgradError


class CompileError(IrgradError):
    """LLVM rejected the module, or the code needs a symbol this process lacks."""


__all__ = ["CompileError"]
