"""ig.einsum against np.einsum on random inputs (explicit and implicit output, '...', diagonals,
broadcast size-1 labels, chains of operands), compiled; one nn.matmul per contracted pair;
derivatives by check_grads (float64 finite differences); located errors."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.tracing.errors import ShapeError

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("i...->...", [(3, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bn,nd,bd->b", [(2, 3), (3, 4), (2, 4)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,kj->ik", [(3, 1), (5, 4)]),
    ("ij,j->i", [(3, 4), (1,)]),
    ("ab,cd->", [(2, 3), (4, 5)]),
    ("ab,cd->dacb", [(2, 3), (4, 5)]),
]


@pytest.mark.parametrize("spec, shapes", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(spec: str, shapes) -> None:
    rng = np.random.default_rng(len(spec))
    xs = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(spec, *xs)
    got = ig.jit(lambda *a: ig.einsum(spec, *a))(*xs)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


def test_dtypes_promote_and_integers_stay_exact() -> None:
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = np.arange(8, dtype=np.int32).reshape(4, 2)
    got = ig.einsum("ij,jk->ik", a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, a @ b)
    mixed = ig.einsum("ij,jk->ik", a.astype(np.float32), b)
    assert mixed.dtype == np.float32


@pytest.mark.parametrize("spec, shapes", [CASES[2], CASES[5], CASES[13], CASES[17], CASES[12]], ids=lambda v: str(v))
def test_derivatives(spec: str, shapes) -> None:
    rng = np.random.default_rng(1)
    xs = tuple(rng.standard_normal(s) for s in shapes)
    ig.check_grads(lambda *a: ig.einsum(spec, *a), xs, order=2, modes=("fwd", "rev"))


def test_each_pair_is_one_matmul_and_vmap_composes() -> None:
    xs = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    text = str(ig.trace(lambda a, b, c: ig.einsum("ij,jk,kl->il", a, b, c), *xs))
    assert text.count("nn.matmul") == 2
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((6, 3, 4)), rng.standard_normal((6, 5, 4))
    got = ig.vmap(lambda a, b: ig.einsum("qd,kd->qk", a, b))(q, k)
    np.testing.assert_allclose(got, np.einsum("bqd,bkd->bqk", q, k), rtol=1e-13)


def test_errors_name_the_subscripts_and_shapes() -> None:
    a, b = np.ones((3, 4)), np.ones((5, 6))
    with pytest.raises(ShapeError, match=r"label 'j' of 'ij,jk->ik' has sizes 4 and 5"):
        ig.einsum("ij,jk->ik", a, b)
    with pytest.raises(ValueError, match="name 2 operands, got 1"):
        ig.einsum("ij,jk", a)
    with pytest.raises(ShapeError, match="subscripts 'ijk' name 3 dimensions, the operand has rank 2"):
        ig.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="output label 'z' appears in no operand"):
        ig.einsum("ij->z", a)
    with pytest.raises(ValueError, match="invalid subscripts"):
        ig.einsum("i1->i", a)
    with pytest.raises(ValueError, match="repeats a label"):
        ig.einsum("ij->ii", a)
    with pytest.raises(ShapeError, match="label 'i' of 'ii->i' has sizes 3 and 4"):
        ig.einsum("ii->i", a)


def test_an_innermost_contracted_label_becomes_a_blas_transpose_flag_not_a_copy():
    """'bqhd,bkhd->bhqk': k keeps d innermost; the GEMM reads it with its transpose flag."""
    q = np.ones((2, 16, 2, 8), np.float32)
    text = ig.jit(lambda q, k: ig.einsum("bqhd,bkhd->bhqk", q, k)).lower(q, q).as_text("autodiff")
    assert "perm = [0, 2, 3, 1]" not in text  # no transpose that moves d
    assert "perm = [0, 2, 1]" in text  # the last-two-dims transpose the BLAS conversion folds
