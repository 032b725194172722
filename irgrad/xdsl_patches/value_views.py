"""Cheaper item reads of an op's operand and result lists: `values[i]`.

Every `op.results[i]` and `op.operands[i]` (through its view) calls `SSAValues.__getitem__`,
which checks the index and looks the tuple's item up through `super()`: 257,000 reads on the
CPU pipeline of a 1,000-op gradient, about 3% of the passes' CPU time in a sampling profile
(benchmarks/RESULTS.md, "Compile time: the per-op constant (issue 26), 2026-12-04"). The
replacement reads an int index from the tuple directly (350 -> 125 ns); a slice, or an index
of another type (a bool), goes to xDSL's code. (Building `op.operands`' view a faster way was
tried: no faster than its dataclass `__init__`.) Upstream: not reported.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir.core import SSAValues

from irgrad.xdsl_patches.patching import install, is_patched, require_source

_item = tuple.__getitem__


def apply() -> None:
    original = SSAValues.__getitem__
    if is_patched(original):
        return
    require_source(original, "if isinstance(idx, int):", "return super().__getitem__(idx)", patch="value_views")

    def __getitem__(self: SSAValues[Any], idx: Any) -> Any:
        if type(idx) is int:
            return _item(self, idx)
        return original(self, idx)

    install(SSAValues, "__getitem__", __getitem__, original)
