"""Rules for scf control flow: not supported yet.

Where loop and branch rules will go. A rule may emit ops with regions: build the `scf.for` of the reverse
sweep (iterating the reversed induction variable, carrying the adjoints as iter_args) and `b.emit` it; the
forward sweep's values inside the loop body need a tape or recomputation, which is this milestone's missing
piece. Until then an active scf op is a clear error; an inactive one is copied as is.
"""

from __future__ import annotations

from xdsl.dialects import scf

from irgrad.autodiff.registry import not_supported_yet

not_supported_yet(
    "control flow is a later milestone (move the differentiated computation out of the region, or "
    "differentiate each branch/iteration's function separately)",
    scf.ForOp,
    scf.IfOp,
    scf.WhileOp,
)
