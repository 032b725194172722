"""`ig.random`: Threefry-2x32 against a pure-Python reference and Random123's known answers, key
derivation, determinism eager vs traced, distinct streams, and the distributions' dtypes, shapes,
bounds and statistics.

The oracle is `threefry2x32_reference` below, written from the algorithm (Salmon et al. 2011,
Random123's threefry2x32_20) on Python ints; it reproduces Random123's known-answer vectors and
JAX's long-documented `random.split(PRNGKey(0))` of its original derivation, so the IR version
is checked against an independent implementation, bit for bit.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import irgrad as ig
from irgrad import random as igr

MASK = 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
# The reference
# ---------------------------------------------------------------------------------------------


def _rotl(x: int, d: int) -> int:
    return ((x << d) | (x >> (32 - d))) & MASK


def threefry2x32_reference(key: tuple[int, int], counter: tuple[int, int]) -> tuple[int, int]:
    """Threefry-2x32 with 20 rounds on uint32 words (Python ints)."""
    ks = (key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDA)
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    x0, x1 = (counter[0] + ks[0]) & MASK, (counter[1] + ks[1]) & MASK
    for group in range(5):
        for r in rotations[group % 2]:
            x0 = (x0 + x1) & MASK
            x1 = _rotl(x1, r) ^ x0
        x0 = (x0 + ks[(group + 1) % 3]) & MASK
        x1 = (x1 + ks[(group + 2) % 3] + group + 1) & MASK
    return x0, x1


def u32(words: np.ndarray) -> list[int]:
    """int32 bit patterns as uint32 Python ints."""
    return [int(w) & MASK for w in np.asarray(words).ravel()]


def key_words(key: np.ndarray) -> tuple[int, int]:
    k = u32(key)
    return k[0], k[1]


def i32(words: list[int]) -> np.ndarray:
    return np.array(words, dtype=np.uint32).view(np.int32)


# Random123's kat_vectors for threefry2x32_20: (key, counter) -> output.
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key, counter, expected", KNOWN_ANSWERS)
def test_reference_matches_random123_known_answers(key, counter, expected):
    assert threefry2x32_reference(key, counter) == expected


def test_reference_reproduces_jax_original_split():
    # JAX's original derivation: split(PRNGKey(0)) encrypts the counters iota(4) as the two
    # halves [0, 1] and [2, 3], and concatenates the output halves.
    a = threefry2x32_reference((0, 0), (0, 2))
    b = threefry2x32_reference((0, 0), (1, 3))
    assert [[a[0], b[0]], [a[1], b[1]]] == [[4146024105, 967050713], [2718843009, 1272950319]]


# ---------------------------------------------------------------------------------------------
# The IR Threefry against the reference
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key, counter, expected", KNOWN_ANSWERS)
def test_threefry_known_answers(key, counter, expected):
    y0, y1 = igr.threefry2x32(i32(list(key)), i32([counter[0]]), i32([counter[1]]))
    assert (u32(y0)[0], u32(y1)[0]) == expected


def test_threefry_matches_reference_on_random_words_eager_and_traced():
    rng = np.random.default_rng(0)
    key = rng.integers(-(2**31), 2**31, size=2).astype(np.int32)
    x0 = rng.integers(-(2**31), 2**31, size=(3, 5)).astype(np.int32)
    x1 = rng.integers(-(2**31), 2**31, size=(3, 5)).astype(np.int32)
    expected = [threefry2x32_reference(key_words(key), (a, b)) for a, b in zip(u32(x0), u32(x1))]
    eager = igr.threefry2x32(key, x0, x1)
    traced = ig.trace(igr.threefry2x32, key, x0, x1)(key, x0, x1)
    for y0, y1 in (eager, traced):
        assert y0.dtype == y1.dtype == np.int32 and y0.shape == y1.shape == (3, 5)
        assert list(zip(u32(y0), u32(y1))) == expected


# ---------------------------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seed, words",
    [
        (0, (0, 0)),
        (42, (0, 42)),
        (2**32 + 5, (1, 5)),
        (-1, (MASK, MASK)),
        (2**64 - 1, (MASK, MASK)),
        (np.int32(-7), (0, (-7) & MASK)),
        (np.int64(-3), (MASK, (-3) & MASK)),
        (np.int64(2**40 + 9), (2**8, 9)),
    ],
)
def test_key_words_from_seed(seed, words):
    k = igr.key(seed)
    assert isinstance(k, np.ndarray) and k.dtype == np.int32 and k.shape == (2,)
    assert key_words(k) == words


@pytest.mark.parametrize("seed", [np.int32(-7), np.int32(123), np.int64(-3), np.int64(2**40 + 9)])
def test_traced_seed_gives_the_host_key(seed):
    traced = ig.trace(lambda s: igr.key(s), seed)(seed)
    np.testing.assert_array_equal(traced, igr.key(seed))


def test_prngkey_is_key():
    assert igr.PRNGKey is igr.key


def test_split_is_threefry_at_counters_0_i():
    k = igr.key(1234)
    keys = igr.split(k, 5)
    assert keys.dtype == np.int32 and keys.shape == (5, 2)
    for i in range(5):
        assert key_words(keys[i]) == threefry2x32_reference(key_words(k), (0, i))
    # The default is two keys; a shape gives an array of keys.
    assert igr.split(k).shape == (2, 2)
    np.testing.assert_array_equal(igr.split(k, (2, 3)).reshape(6, 2), igr.split(k, 6))


def test_split_of_key_0():
    # Under the counter-(0, i) derivation (JAX's threefry_partitionable scheme).
    keys = igr.split(igr.key(0))
    assert [u32(keys[0]), u32(keys[1])] == [
        list(threefry2x32_reference((0, 0), (0, 0))),
        list(threefry2x32_reference((0, 0), (0, 1))),
    ]
    assert u32(keys[0]) == [0x6B200159, 0x99BA4EFE]


# Recorded from JAX 0.10.2 (jax_threefry_partitionable on, its default), words viewed as int32:
# split(PRNGKey(1234), 5), fold_in(PRNGKey(1234), 99), bits(PRNGKey(1234), (2, 3), uint32) and
# bits(PRNGKey(1234), (2,), uint64) viewed as int64.
JAX_SPLIT_1234 = [
    [1264997412, -1776851121], [-1417863909, 1697627890], [2113592192, 603280156],
    [-782949785, 140093922], [781066781, 179802120],
]
JAX_FOLD_IN_1234_99 = [1352316717, -670395707]
JAX_BITS_1234 = [[-579783829, -833444887, 1578076316], [-653489275, 607760917, -1593161365]]
JAX_BITS64_1234 = [5433122516582754127, -6089679117636092174]


def test_split_fold_in_and_bits_equal_jax():
    k = igr.key(1234)
    assert igr.split(k, 5).tolist() == JAX_SPLIT_1234
    assert igr.fold_in(k, 99).tolist() == JAX_FOLD_IN_1234_99
    assert igr.bits(k, (2, 3)).tolist() == JAX_BITS_1234
    assert igr.bits(k, (2,), ig.int64).tolist() == JAX_BITS64_1234


def test_fold_in_matches_reference_and_split():
    k = igr.key(7)
    for data in (0, 1, 99, 2**32 - 1, -1):
        folded = igr.fold_in(k, data)
        assert folded.dtype == np.int32 and folded.shape == (2,)
        assert key_words(folded) == threefry2x32_reference(key_words(k), (0, data & MASK))
    np.testing.assert_array_equal(igr.fold_in(k, 3), igr.split(k, 4)[3])
    # -1 and 2**32 - 1 are one 32-bit word.
    np.testing.assert_array_equal(igr.fold_in(k, -1), igr.fold_in(k, 2**32 - 1))


def test_fold_in_with_traced_data():
    k = igr.key(7)
    for data in (np.int32(5), np.int64(2**32 + 5)):
        traced = ig.trace(lambda key, d: igr.fold_in(key, d), k, data)(k, data)
        np.testing.assert_array_equal(traced, igr.fold_in(k, 5))


# ---------------------------------------------------------------------------------------------
# Determinism: same key, same numbers; eager equals traced, bit for bit
# ---------------------------------------------------------------------------------------------

DRAWS = {
    "bits": lambda k: igr.bits(k, (4, 3)),
    "bits_int64": lambda k: igr.bits(k, (5,), ig.int64),
    "uniform": lambda k: igr.uniform(k, (4, 3)),
    "uniform_bounds": lambda k: igr.uniform(k, (6,), ig.float64, -2.0, 3.0),
    "uniform_bf16": lambda k: igr.uniform(k, (6,), ig.bfloat16),
    "normal": lambda k: igr.normal(k, (2, 5)),
    "normal_f64": lambda k: igr.normal(k, (7,), ig.float64),
    "bernoulli": lambda k: igr.bernoulli(k, 0.3, (9,)),
    "randint": lambda k: igr.randint(k, (9,), -4, 11),
    "split": lambda k: igr.split(k, 3),
    "fold_in": lambda k: igr.fold_in(k, 12),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_same_key_same_numbers_eager_traced_and_jit(name):
    draw = DRAWS[name]
    k = igr.key(2024)
    first, second = draw(k), draw(k.copy())
    traced = ig.trace(draw, k)(k)
    interpreted = ig.jit(draw, backend="interp")(k)
    for other in (second, traced, interpreted):
        assert other.dtype == first.dtype and other.shape == first.shape
        np.testing.assert_array_equal(np.asarray(other).view(np.uint8), np.asarray(first).view(np.uint8))
    # Compiled code computes the same bits, except that log and cos (normal's Box-Muller) come
    # from libm rather than numpy's SIMD loops: those may differ in the last place.
    compiled = np.asarray(ig.jit(draw, backend="cpu")(k))
    assert compiled.dtype == first.dtype and compiled.shape == first.shape
    if name.startswith("normal"):
        ulp = np.spacing(np.abs(np.asarray(first))).astype(np.float64)
        assert np.all(np.abs(compiled.astype(np.float64) - np.asarray(first, np.float64)) <= 2 * ulp)
    else:
        np.testing.assert_array_equal(compiled.view(np.uint8), np.asarray(first).view(np.uint8))


def test_pinned_values():
    # Reproducible across runs and versions: float32 uniforms of key(0) are exactly
    # ((w0 ^ w1) >>> 8) * 2**-24 of the reference blocks at counters (0, i).
    expected = []
    for i in range(4):
        w0, w1 = threefry2x32_reference((0, 0), (0, i))
        expected.append(np.float32(((w0 ^ w1) >> 8) * 2.0**-24))
    np.testing.assert_array_equal(igr.uniform(igr.key(0), (4,)), np.array(expected, np.float32))


def test_bits_match_reference():
    k = igr.key(99)
    blocks = [threefry2x32_reference(key_words(k), (0, i)) for i in range(6)]
    assert u32(igr.bits(k, (2, 3))) == [w0 ^ w1 for w0, w1 in blocks]
    wide = igr.bits(k, (6,), ig.int64)
    assert wide.dtype == np.int64
    assert [int(v) & (2**64 - 1) for v in wide] == [(w0 << 32) | w1 for w0, w1 in blocks]


def test_float64_uniform_takes_53_bits_of_both_words():
    k = igr.key(5)
    blocks = [threefry2x32_reference(key_words(k), (0, i)) for i in range(8)]
    expected = [(((w0 << 32) | w1) >> 11) * 2.0**-53 for w0, w1 in blocks]
    np.testing.assert_array_equal(igr.uniform(k, (8,), ig.float64), np.array(expected))


def test_key_as_traced_carry_in_a_loop():
    # A training loop threads its key: split each step, draw with one half, keep the other.
    def loop(key):
        def body(i, carry):
            key, total = carry
            key, sub = igr.split(key)
            return key, total + igr.uniform(sub, (3,))

        return ig.fori_loop(0, 4, body, (key, ig.zeros((3,))))

    k = igr.key(3)
    key, total = ig.trace(loop, k)(k)
    expected_key, expected_total = k, np.zeros(3, np.float32)
    for _ in range(4):
        keys = igr.split(expected_key)
        expected_key, sub = keys[0], keys[1]
        expected_total = expected_total + igr.uniform(sub, (3,))
    np.testing.assert_array_equal(key, expected_key)
    np.testing.assert_array_equal(total, expected_total)


# ---------------------------------------------------------------------------------------------
# Distinct streams
# ---------------------------------------------------------------------------------------------


def test_split_and_fold_in_give_distinct_streams():
    k = igr.key(0)
    keys = igr.split(k, 1000)
    assert len({tuple(row) for row in keys.tolist()}) == 1000
    streams = [
        igr.uniform(k, (64,)),
        igr.uniform(keys[0], (64,)),
        igr.uniform(keys[1], (64,)),
        igr.uniform(igr.fold_in(k, 1000), (64,)),
        igr.uniform(igr.fold_in(keys[0], 0), (64,)),
        igr.uniform(igr.key(1), (64,)),
    ]
    for i in range(len(streams)):
        for j in range(i):
            # Equal elements by chance: about 64 / 2**24 expected per pair.
            assert np.count_nonzero(streams[i] == streams[j]) <= 1, (i, j)
    # Neighbouring streams are uncorrelated.
    a, b = igr.uniform(keys[0], (20000,)), igr.uniform(keys[1], (20000,))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.04


# ---------------------------------------------------------------------------------------------
# Distributions: dtypes, shapes, bounds, statistics
# ---------------------------------------------------------------------------------------------

FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
PRECISION = {np.dtype(np.float16): 11, np.dtype(ml_dtypes.bfloat16): 8, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_uniform_dtype_shape_and_grid(dtype):
    d = np.dtype(dtype)
    x = igr.uniform(igr.key(1), (50, 4), d)
    assert x.dtype == d and x.shape == (50, 4)
    wide = x.astype(np.float64)
    assert wide.min() >= 0.0 and wide.max() < 1.0
    # Every value is a multiple of 2**-p: p random bits, no rounding.
    scaled = wide * 2.0 ** PRECISION[d]
    np.testing.assert_array_equal(scaled, np.floor(scaled))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_normal_dtype_and_shape(dtype):
    d = np.dtype(dtype)
    x = igr.normal(igr.key(1), (3, 7), d)
    assert x.dtype == d and x.shape == (3, 7) and np.all(np.isfinite(x.astype(np.float64)))


@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 0, 3), 5])
def test_shapes_rank0_empty_and_int(shape):
    expected = (shape,) if isinstance(shape, int) else shape
    k = igr.key(0)
    for x in (igr.uniform(k, shape), igr.normal(k, shape), igr.bits(k, shape), igr.bernoulli(k, 0.5, shape),
              igr.randint(k, shape, 0, 3)):
        assert x.shape == expected


def test_uniform_bounds_scalar_and_array():
    k = igr.key(11)
    x = igr.uniform(k, (10000,), minval=-3.0, maxval=5.0)
    assert x.min() >= -3.0 and x.max() < 5.0 and x.min() < -2.9 and x.max() > 4.9
    lo = np.array([0.0, 10.0, -1.0], np.float32)
    hi = np.array([1.0, 20.0, -0.5], np.float32)
    y = igr.uniform(k, (2000, 3), minval=lo, maxval=hi)
    assert y.shape == (2000, 3) and y.dtype == np.float32
    assert np.all(y >= lo) and np.all(y < hi)


@pytest.mark.parametrize("array_bounds", [False, True])
def test_uniform_never_rounds_up_to_maxval(array_bounds):
    # The float32 spacing at 1e8 is 8: min + u * 8 rounds to maxval for about half the draws.
    lo, hi = 1e8, 1e8 + 8
    if array_bounds:
        lo, hi = np.float32(lo), np.float32(hi)
    x = igr.uniform(igr.key(0), (1000,), minval=lo, maxval=hi)
    assert np.all(x >= np.float32(1e8)) and np.all(x < np.float32(1e8 + 8))


def test_uniform_statistics():
    x = igr.uniform(igr.key(2), (100_000,)).astype(np.float64)
    # Tolerances are about 5 standard errors.
    assert abs(x.mean() - 0.5) < 0.0046
    assert abs(x.var() - 1 / 12) < 0.0015
    counts, _ = np.histogram(x, bins=10, range=(0.0, 1.0))
    assert np.all(np.abs(counts - 10_000) < 500)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_statistics(dtype):
    x = igr.normal(igr.key(3), (100_000,), dtype).astype(np.float64)
    assert abs(x.mean()) < 0.016
    assert abs(x.std() - 1.0) < 0.011
    assert abs(np.mean(np.abs(x) < 1.0) - 0.682689) < 0.0074
    assert abs(np.mean(np.abs(x) < 2.0) - 0.954500) < 0.0034
    skew, kurt = np.mean(x**3), np.mean(x**4)
    assert abs(skew) < 0.04 and abs(kurt - 3.0) < 0.08


def test_bernoulli_frequency_and_dtype():
    k = igr.key(4)
    b = igr.bernoulli(k, 0.3, (100_000,))
    assert b.dtype == np.bool_ and b.shape == (100_000,)
    assert abs(b.mean() - 0.3) < 0.0073
    assert igr.bernoulli(k).shape == () and igr.bernoulli(k).dtype == np.bool_
    assert not igr.bernoulli(k, 0.0, (1000,)).any()
    assert igr.bernoulli(k, 1.0, (1000,)).all()


def test_bernoulli_with_array_p():
    p = np.array([0.1, 0.5, 0.9], np.float32)
    b = igr.bernoulli(igr.key(5), p)
    assert b.shape == (3,) and b.dtype == np.bool_
    many = igr.bernoulli(igr.key(5), p, (20_000, 3))
    np.testing.assert_allclose(many.mean(axis=0), p, atol=0.015)


def test_randint_range_dtype_and_frequency():
    k = igr.key(6)
    x = igr.randint(k, (60_000,), -2, 4)
    assert x.dtype == np.int32 and x.min() == -2 and x.max() == 3
    counts = np.bincount(x + 2, minlength=6)
    assert np.all(np.abs(counts - 10_000) < 500)
    wide = igr.randint(k, (1000,), -(2**40), 2**40, ig.int64)
    assert wide.dtype == np.int64 and wide.min() >= -(2**40) and wide.max() < 2**40
    assert wide.min() < -(2**39) and wide.max() > 2**39


def test_randint_edge_bounds():
    k = igr.key(7)
    np.testing.assert_array_equal(igr.randint(k, (5,), 3, 3), np.full(5, 3, np.int32))
    np.testing.assert_array_equal(igr.randint(k, (5,), 3, -10), np.full(5, 3, np.int32))
    top = igr.randint(k, (2000,), 2**31 - 4, 2**31)
    assert top.min() == 2**31 - 4 and top.max() == 2**31 - 1
    full_range = igr.randint(k, (2000,), -(2**31), 2**31)
    assert full_range.min() < -(2**30) and full_range.max() > 2**30


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def test_errors():
    k = igr.key(0)
    with pytest.raises(ig.ShapeError, match=r"a key is an int32 array of shape \(2,\)"):
        igr.uniform(igr.split(k, 3), (2,))
    with pytest.raises(ig.DTypeError, match="a key is an int32 array"):
        igr.normal(k.astype(np.int64), (2,))
    with pytest.raises(ig.DTypeError, match="dtype must be a float dtype"):
        igr.uniform(k, (2,), ig.int32)
    with pytest.raises(ig.DTypeError, match="dtype must be int32 or int64"):
        igr.randint(k, (2,), 0, 4, ig.float32)
    with pytest.raises(ig.ShapeError, match="shape must be non-negative integers"):
        igr.uniform(k, (-1,))
    with pytest.raises(ValueError, match="does not fit 64 bits"):
        igr.key(2**64)
    with pytest.raises(ValueError, match="does not fit 32 bits"):
        igr.fold_in(k, 2**32)
    with pytest.raises(ig.DTypeError, match="seed must be an integer"):
        igr.key(True)
    with pytest.raises(ig.DTypeError, match="seed must be a scalar int32 or int64"):
        igr.key(np.float32(1.0))


def test_module_is_ig_random():
    assert ig.random is igr
    assert math.prod(igr.split(igr.key(0), (2, 2)).shape) == 8


# ---------------------------------------------------------------------------------------------
# permutation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 13, 100, 1000])
def test_permutation_is_a_permutation(n):
    p = igr.permutation(igr.key(n), n)
    assert p.dtype == np.int32 and p.shape == (n,)
    assert sorted(p.tolist()) == list(range(n))


def test_permutation_sorts_positions_by_their_64_bits():
    """The documented construction: positions ordered by bits(key, (n,), int64)."""
    k = igr.key(7)
    keys = igr.bits(k, (37,), ig.int64)
    expected = np.lexsort((np.arange(37), keys))
    np.testing.assert_array_equal(igr.permutation(k, 37), expected)


def test_permutation_same_eager_traced_jit_and_interpreter():
    k = igr.key(3)
    eager = igr.permutation(k, 300)
    for backend in ("cpu", "interp"):
        got = ig.jit(lambda key: igr.permutation(key, 300), backend=backend)(k)
        np.testing.assert_array_equal(got, eager)
    assert not np.array_equal(igr.permutation(igr.key(4), 300), eager)


def test_permutation_of_an_array_reorders_slices():
    k = igr.key(5)
    x = np.arange(6 * 4 * 3, dtype=np.float32).reshape(6, 4, 3)
    np.testing.assert_array_equal(igr.permutation(k, x), x[igr.permutation(k, 6)])
    np.testing.assert_array_equal(igr.permutation(k, x, axis=1), x[:, igr.permutation(k, 4)])
    np.testing.assert_array_equal(igr.permutation(k, x, axis=-1), x[:, :, igr.permutation(k, 3)])
    traced = ig.jit(lambda key, v: igr.permutation(key, v, axis=1))(k, x)
    np.testing.assert_array_equal(traced, x[:, igr.permutation(k, 4)])


def test_permutation_is_uniform():
    """All 24 orders of 4 over 2400 keys: chi-square 23 degrees of freedom, below its 0.999
    quantile (49.7). Deterministic: the keys are fixed."""
    import itertools

    shuffle = ig.jit(lambda key: igr.permutation(key, 4))
    counts = dict.fromkeys(itertools.permutations(range(4)), 0)
    for k in igr.split(igr.key(11), 2400):
        counts[tuple(shuffle(k).tolist())] += 1
    observed = np.array(list(counts.values()))
    chi2 = float(((observed - 100) ** 2 / 100).sum())
    assert chi2 < 49.7, counts


def test_permutation_errors():
    k = igr.key(0)
    with pytest.raises(NotImplementedError, match="independent=True is not supported"):
        igr.permutation(k, np.ones((3, 3)), independent=True)
    with pytest.raises(ig.ShapeError, match="axis 2 is out of range for an array of shape \\(3, 3\\)"):
        igr.permutation(k, np.ones((3, 3)), axis=2)
    with pytest.raises(ig.ShapeError, match="non-negative int or an array, got -1"):
        igr.permutation(k, -1)
    with pytest.raises(ig.ShapeError, match="rank >= 1, got a scalar"):
        igr.permutation(k, np.float32(1.0))


# ---------------------------------------------------------------------------------------------
# categorical, choice
# ---------------------------------------------------------------------------------------------


def test_categorical_frequencies_follow_softmax():
    """20000 draws from probabilities (0.1, 0.2, 0.7): chi-square with 2 degrees of freedom
    below its 0.999 quantile (13.8); fixed key, so deterministic."""
    probs = np.array([0.1, 0.2, 0.7])
    draws = igr.categorical(igr.key(2), np.log(probs).astype(np.float32), shape=(20000,))
    assert draws.dtype == np.int32 and draws.shape == (20000,)
    counts = np.bincount(draws, minlength=3)
    expected = probs * 20000
    assert float(((counts - expected) ** 2 / expected).sum()) < 13.8, counts


def test_categorical_axes_shapes_and_jit():
    logits = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    k = igr.key(3)
    assert igr.categorical(k, logits).shape == (4,)
    assert igr.categorical(k, logits, axis=0).shape == (6,)
    assert igr.categorical(k, logits, shape=(5, 4)).shape == (5, 4)
    np.testing.assert_array_equal(ig.jit(lambda key, l: igr.categorical(key, l))(k, logits), igr.categorical(k, logits))
    certain = np.array([[0.0, -np.inf, -np.inf], [-np.inf, -np.inf, 0.0]], np.float32)
    np.testing.assert_array_equal(igr.categorical(k, certain), [0, 2])
    with pytest.raises(ig.ShapeError, match=r"shape \(5, 3\) must end with the logits' batch shape \(4,\)"):
        igr.categorical(k, logits, shape=(5, 3))


def test_choice_with_and_without_replacement():
    k = igr.key(4)
    sample = igr.choice(k, 10, (6,), replace=False)
    assert len(set(sample.tolist())) == 6 and set(sample.tolist()) <= set(range(10))
    np.testing.assert_array_equal(sample, igr.permutation(k, 10)[:6])
    draws = igr.choice(k, 4, (8000,))
    counts = np.bincount(draws, minlength=4)
    assert float(((counts - 2000) ** 2 / 2000).sum()) < 16.3, counts  # chi-square, 3 dof, 0.999
    x = np.arange(12.0).reshape(4, 3)
    rows = igr.choice(k, x, (2,), replace=False)
    assert rows.shape == (2, 3) and all(any((r == x_row).all() for x_row in x) for r in rows)
    assert igr.choice(k, x, (5,), axis=1).shape == (4, 5)
    traced = ig.jit(lambda key: igr.choice(key, 10, (6,), replace=False))(k)
    np.testing.assert_array_equal(traced, sample)


def test_choice_with_probabilities():
    p = np.array([0.0, 0.25, 0.75], np.float32)
    draws = igr.choice(igr.key(5), 3, (4000,), p=p)
    counts = np.bincount(draws, minlength=3)
    assert counts[0] == 0  # probability 0 is never drawn
    assert abs(counts[2] / 4000 - 0.75) < 0.03, counts


def test_choice_errors():
    k = igr.key(0)
    with pytest.raises(ig.ShapeError, match="cannot take 6 samples without replacement from 5"):
        igr.choice(k, 5, (6,), replace=False)
    with pytest.raises(NotImplementedError, match="weighted sampling without replacement"):
        igr.choice(k, 3, (2,), replace=False, p=np.ones(3, np.float32) / 3)
    with pytest.raises(ig.ShapeError, match=r"p must have shape \(3,\)"):
        igr.choice(k, 3, (2,), p=np.ones(4, np.float32) / 4)
    with pytest.raises(ig.ShapeError, match="empty population"):
        igr.choice(k, 0, (1,))
