"""Replacing one operand of an op without re-slicing its operand list three times.

`op.operands[i] = value` (what every `replace_all_uses_with` does, use by use) rebuilds the
op's operand tuple as `(*operands[:i], value, *operands[i + 1:])`, where each slice goes
through `SSAValues.__getitem__` and builds an intermediate `SSAValues`: on the CPU pipeline of
a 1,000-op gradient, 37,000 replacements and a twentieth of the passes' CPU time in a sampling
profile (benchmarks/RESULTS.md, "Compile time: the per-op constant (issue 26), 2026-12-04").
The replacement copies the tuple into a list once and sets the one item; the uses are moved
exactly as before. A negative or non-int index goes to xDSL's code (whose slices treat -1
differently from a list's). Upstream: not reported.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir.core import OpOperands, SSAValues

from irgrad.xdsl_patches.patching import install, is_patched, require_source


def apply() -> None:
    original = OpOperands.__setitem__
    if is_patched(original):
        return
    require_source(
        original,
        "operands[idx].remove_use(operand_uses[idx])",
        "operand.add_use(operand_uses[idx])",
        "new_operands = SSAValues((*operands[:idx], operand, *operands[idx + 1 :]))",
        patch="operand_replacement",
    )

    def __setitem__(self: OpOperands, idx: Any, operand: Any) -> None:
        if type(idx) is not int or idx < 0:
            return original(self, idx, operand)
        op = self._op
        operands = op._operands  # pyright: ignore[reportPrivateUsage]
        use = op._operand_uses[idx]  # pyright: ignore[reportPrivateUsage]
        tuple.__getitem__(operands, idx).remove_use(use)
        operand.add_use(use)
        items = list(operands)
        items[idx] = operand
        op._operands = SSAValues(items)  # pyright: ignore[reportPrivateUsage]

    install(OpOperands, "__setitem__", __setitem__, original)
