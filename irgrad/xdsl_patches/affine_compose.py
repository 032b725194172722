"""`AffineMap.compose` of maps whose results are dimensions and constants, without rebuilding.

xDSL composes two maps by substituting fresh dimension expressions into the second map and
then each result of the first into that, building a new expression object at every step:
`linalg-fuse-elementwise` composes every fused input's map, and on the CPU pipeline of a
1,000-op gradient that was 15,000 compositions and a thirtieth of the passes' CPU time in a
sampling profile (benchmarks/RESULTS.md, "Compile time: the per-op constant (issue 26),
2026-12-04"). When neither map has symbols and every result of both is a dimension or a
constant (identities, permutations, projections, broadcasts: all elementwise fusion meets),
the composition is a lookup: a dimension d_i of the first becomes the second's i-th result,
a constant stays. The map built is equal to xDSL's (expressions are immutable values; the
result shares the second map's). Anything else (symbols, sums, products, mismatched sizes,
which xDSL rejects) goes to xDSL's code. Upstream: not reported.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from irgrad.xdsl_patches.patching import install, is_patched, require_source

_SIMPLE = (AffineDimExpr, AffineConstantExpr)


def _simple(amap: AffineMap) -> bool:
    """No symbols, and only dimensions and constants as results."""
    return amap.num_symbols == 0 and all(type(e) in _SIMPLE for e in amap.results)


def apply() -> None:
    original = AffineMap.compose
    if is_patched(original):
        return
    require_source(
        original,
        "new_map = other.replace_dims_and_symbols(",
        "results = tuple(expr.compose(new_map) for expr in self.results)",
        patch="affine_compose",
    )

    def compose(self: AffineMap, other: AffineMap) -> Any:
        inner = other.results
        if self.num_dims != len(inner) or not _simple(self) or not _simple(other):
            return original(self, other)
        size = len(inner)
        results = tuple(
            inner[e.position] if type(e) is AffineDimExpr and e.position < size else e for e in self.results
        )
        return AffineMap(other.num_dims, 0, results)

    install(AffineMap, "compose", compose, original)
