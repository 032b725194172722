"""irgrad/xdsl_patches/affine_compose.py: compositions equal to xDSL's, simple maps or not."""

from __future__ import annotations

import itertools
import random

import pytest
from xdsl.ir.affine import AffineExpr, AffineMap

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched

_ORIGINAL = AffineMap.compose._irgrad_original
d0, d1, d2 = (AffineExpr.dimension(k) for k in range(3))
s0 = AffineExpr.symbol(0)


def _maps():  # type: ignore[no-untyped-def]
    yield AffineMap.identity(3), AffineMap.identity(3)
    yield AffineMap(3, 0, (d2, d0, d1)), AffineMap(2, 0, (d1, d0, d1))
    yield AffineMap(2, 0, (d1, AffineExpr.constant(0))), AffineMap(3, 0, (d2, d0))
    yield AffineMap(1, 0, (AffineExpr.constant(4),)), AffineMap(0, 0, (AffineExpr.constant(7),))
    yield AffineMap(2, 0, (d0 + d1, d1 * 2)), AffineMap.identity(2)  # sums: xDSL's code
    yield AffineMap.identity(2), AffineMap(2, 0, (d0 + 1, d1))
    yield AffineMap(2, 1, (d0 + s0, d1)), AffineMap(1, 1, (d0, s0))  # symbols: xDSL's code
    rng = random.Random(0)
    for _ in range(50):
        n, m, k = rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, 3)
        first = AffineMap(n, 0, tuple(_simple_expr(rng, n) for _ in range(k)))
        second = AffineMap(m, 0, tuple(_simple_expr(rng, m) for _ in range(n)))
        yield first, second


def _simple_expr(rng, dims):  # type: ignore[no-untyped-def]
    if dims and rng.random() < 0.8:
        return AffineExpr.dimension(rng.randrange(dims))
    return AffineExpr.constant(rng.randint(-2, 5))


def test_the_patch_is_installed():
    assert is_patched(AffineMap.compose)


@pytest.mark.parametrize("first,second", list(_maps()))
def test_compositions_are_xdsls(first, second):  # type: ignore[no-untyped-def]
    got, want = first.compose(second), _ORIGINAL(first, second)
    assert got == want and str(got) == str(want)


def test_a_size_mismatch_is_xdsls_error():
    first, second = AffineMap.identity(2), AffineMap.identity(3)
    with pytest.raises(ValueError) as got:
        first.compose(second)
    with pytest.raises(ValueError) as want:
        _ORIGINAL(first, second)
    assert str(got.value) == str(want.value)


def test_permutations_compose_to_their_inverse():
    for perm in itertools.permutations(range(3)):
        amap = AffineMap(3, 0, tuple(AffineExpr.dimension(p) for p in perm))
        inverse = amap.inverse_permutation()
        assert inverse is not None and amap.compose(inverse) == AffineMap.identity(3)
