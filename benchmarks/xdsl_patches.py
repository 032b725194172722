"""What irgrad/xdsl_patches/ buys: each performance patch timed against xDSL's own code, in
the same process (the patched and the original function side by side).

Run: .venv/bin/python benchmarks/xdsl_patches.py

- block_split_before: splitting each of n blocks once, at n = 500 and 4,000; linear means the
  second takes about 8x the first, quadratic about 64x.
"""

from __future__ import annotations

import time

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Region

import irgrad  # noqa: F401  (applies the patches)


def split_many(n: int, split) -> float:
    """Seconds to split each of n two-op blocks of one function before its second op."""
    pairs = []
    for _ in range(n):
        ops = [arith.ConstantOp.from_int_and_width(k, i32) for k in range(2)]
        pairs.append((Block(ops), ops))
    fn = func.FuncOp("f", ((), ()), Region([block for block, _ in pairs]))
    ModuleOp([fn])
    start = time.perf_counter()
    for block, ops in pairs:
        split(block, ops[1])
    elapsed = time.perf_counter() - start
    assert len(list(fn.body.blocks)) == 2 * n
    return elapsed


def main() -> None:
    for label, split in (("patched", Block.split_before), ("xDSL 0.75", Block.split_before._irgrad_original)):
        small, large = split_many(500, split), split_many(4000, split)
        print(f"block_split_before ({label}): 500 blocks {small * 1e3:.2f} ms, 4000 blocks "
              f"{large * 1e3:.2f} ms, ratio {large / small:.1f} (linear ~8, quadratic ~64)")


if __name__ == "__main__":
    main()
