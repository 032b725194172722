"""The unknown location of a new op or block argument without an import statement per call.

xDSL's `_unknown_loc()` runs `from xdsl.dialects.builtin import UNKNOWN_LOC` each time it is
called (to break an import cycle): once per op and block argument built, 42,000 times on the
CPU pipeline of a 1,000-op gradient, a tenth of `Operation.__init__`'s own time under cProfile
(benchmarks/RESULTS.md, "Compile time: the per-op constant (issue 26), 2026-12-04"). The
replacement reads the same module attribute, the module looked up once. Upstream: not reported.
"""

from __future__ import annotations

import sys
from typing import Any

from xdsl.ir import core

from irgrad.xdsl_patches.patching import install, is_patched, require_source


def apply() -> None:
    original = core._unknown_loc  # pyright: ignore[reportPrivateUsage]
    if is_patched(original):
        return
    require_source(original, "from xdsl.dialects.builtin import UNKNOWN_LOC", patch="unknown_location")
    import xdsl.dialects.builtin  # noqa: F401  (the module the location lives in, loaded)

    builtin = sys.modules["xdsl.dialects.builtin"]

    def _unknown_loc() -> Any:
        return builtin.UNKNOWN_LOC

    install(core, "_unknown_loc", _unknown_loc, original)
