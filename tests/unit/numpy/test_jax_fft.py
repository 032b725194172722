"""JAX's FFT tests (tests/fft_test.py), ported: testFftn, testFft, testFft2_, the error tests,
testIrfftnNonSymmetricOuterAxes, testIrfftTranspose, testFftEmpty, testFftfreq/testRfftfreq
(and their errors), testFftshift/testIfftshift, testFftNormalizationPrecision,
testLaxFftAcceptsStringTypes and testLaxFftErrors, with the same grids, each a fixed-seed sample
(JAX's `jtu.sample_product` samples too).

Each case checks irgrad three ways against numpy.fft, as JAX's `_CheckAgainstNumpy` and
`_CompileAndCheck` do: eagerly (the interpreter runs `nn.fft` as numpy.fft: the library's axes,
crops, pads, norms and dtypes), as the program `nn-expand-fft` writes (the matmul-based algorithm,
run on the interpreter: `_expanded`), and, for a sample, under `ig.jit` on the CPU. Gradients
(JAX's `check_grads(order=2)` with tol 0.16; here order 1 in both modes at tight tolerances, and
order 2 on a sample) run through the expansion, since autodiff differentiates what it becomes.
Dtypes are irgrad's: an int or float32 input gives complex64 (JAX with x64 gives complex128 for
ints), float64 gives complex128. Error messages name `ig.fft.<name>` where JAX's name
`jax.numpy.fft.<name>`.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends.interpreter.runner import run_function
from irgrad.context import make_context
from irgrad.transforms.nn.nn_expand_fft import ExpandFftPass, has_fft

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

FFT_NORMS = [None, "ortho", "forward", "backward"]
float_dtypes = [np.float32, np.float64]
real_dtypes = float_dtypes + [np.int32, np.bool_]
all_dtypes = real_dtypes + [np.complex64, np.complex128]
inexact_dtypes = float_dtypes + [np.complex64, np.complex128]


def _sample(cases, count, name):
    cases = list(cases)
    return random.Random(name).sample(cases, min(count, len(cases)))


def _rand(shape, dtype, seed=0):
    """jtu.rand_default: standard normals scaled by 3, cast (bools: random)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    x = 3 * rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 3j * rng.standard_normal(shape)
    return np.asarray(x).astype(dtype)


def _tol(dtype):
    return 1e-11 if dtype in (np.float64, np.complex128) else 1e-4


def _expanded(fn, *args):
    """`fn` traced, `nn-expand-fft` applied, run on the interpreter: the algorithm's values."""
    program = ig.trace(fn, *args)
    module = program.module.clone()
    assert has_fft(module)
    ExpandFftPass().apply(make_context(), module)
    assert not has_fft(module)
    (result,) = run_function(module, program.entry, list(args))
    return result


def _close(got, want, dtype, scale=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = scale if scale is not None else max(1.0, float(np.max(np.abs(want), initial=0.0)))
    err = float(np.max(np.abs(got - want), initial=0.0)) / scale
    assert err <= _tol(dtype), f"relative error {err:.3g} > {_tol(dtype)}"


def _expected_dtype(dtype, inverse, real):
    """irgrad's dtype of a transform's result (JAX's rule with irgrad's int -> float32)."""
    wide = dtype in (np.float64, np.complex128)
    if inverse and real:
        return np.float64 if wide else np.float32
    return np.complex128 if wide else np.complex64


def _zero_for_irfft(z, axes):
    """JAX's `_zero_for_irfft`: the imaginary parts irfft ignores zeroed (the first
    coefficient's, and the last one's for an odd count), on numpy arrays for both sides."""
    if axes is not None and not axes:
        return z
    axis = z.ndim - 1 if axes is None else axes[-1]
    z = np.array(z)
    ends = [0, z.shape[axis] - 1] if z.shape[axis] % 2 else [0]
    for end in ends:
        index = [slice(None)] * z.ndim
        index[axis] = end
        z[tuple(index)] = z[tuple(index)].real
    return z


def _tol_dtype(x):
    """The dtype whose tolerance applies: an int or bool input computes in float32."""
    return x.dtype if x.dtype.kind in "fc" else np.float32


def _fftn_func(module, inverse, real):
    if inverse:
        return module.irfftn if real else module.ifftn
    return module.rfftn if real else module.fftn


def _fftn_axes(shape):
    axes = [[], None]
    for count in range(1, len(shape) + 1):
        axes.extend(itertools.combinations(range(len(shape)), count))
    axes.extend((-index,) for index in range(1, len(shape) + 1))
    return axes


def _fftn_s(shape, axes):
    s_list = [None]
    if axes is not None:
        s_list.extend(itertools.product(*[[shape[ax] + i for i in range(-shape[ax] + 1, shape[ax] + 1)] for ax in axes]))
    return s_list


FFTN_CASES = _sample(
    [
        (inverse, real, dtype, shape, axes, s, norm)
        for inverse in [False, True]
        for real in [False, True]
        for dtype in (real_dtypes if real and not inverse else all_dtypes)
        for shape in [(10,), (10, 10), (9,), (2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 6)]
        for axes in _fftn_axes(shape)
        for s in _fftn_s(shape, axes)
        for norm in FFT_NORMS
    ],
    48,
    "testFftn",
)


def _fftn_case(inverse, real, dtype, shape, axes, s, norm):
    x = _rand(shape, dtype)
    if inverse and real:
        x = _zero_for_irfft(x.astype(np.result_type(dtype, np.complex64)), axes)
    op = _fftn_func(ig.fft, inverse, real)
    np_op = _fftn_func(np.fft, inverse, real)
    ig_fn = lambda a: op(a, s=s, axes=axes, norm=norm)  # noqa: E731
    want = np_op(x, s=s, axes=axes, norm=norm) if axes is None or axes else x
    return x, ig_fn, want


@pytest.mark.parametrize("inverse,real,dtype,shape,axes,s,norm", FFTN_CASES)
def test_fftn(inverse, real, dtype, shape, axes, s, norm):
    x, ig_fn, want = _fftn_case(inverse, real, dtype, shape, axes, s, norm)
    got = ig_fn(x)
    _close(got, want, _tol_dtype(x))
    assert np.asarray(got).dtype == _expected_dtype(x.dtype.type, inverse, real)
    if axes is None or axes:
        _close(_expanded(ig_fn, x), want, _tol_dtype(x))


@pytest.mark.parametrize("inverse,real,dtype,shape,axes,s,norm", FFTN_CASES[:4])
def test_fftn_jit_cpu(inverse, real, dtype, shape, axes, s, norm):
    x, ig_fn, want = _fftn_case(inverse, real, dtype, shape, axes, s, norm)
    _close(ig.jit(ig_fn)(x), want, _tol_dtype(x))


GRAD_CASES = _sample(
    [c for c in FFTN_CASES if c[2] in (inexact_dtypes if not (c[1] and not c[0]) else float_dtypes) and (c[4] is None or c[4])],
    8,
    "testFftn grads",
)


@pytest.mark.parametrize("inverse,real,dtype,shape,axes,s,norm", GRAD_CASES)
def test_fftn_gradients(inverse, real, dtype, shape, axes, s, norm):
    """check_grads in float64 (complex128), through the expansion; and the gradient of a real
    loss equals jax.grad's (JAX's convention: the conjugate cotangent for complex inputs)."""
    x, ig_fn, _ = _fftn_case(inverse, real, dtype, shape, axes, s, norm)
    x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    ig.check_grads(ig_fn, (x,), order=1, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)
    jax_fn = _fftn_func(jnp.fft, inverse, real)
    weights = _rand(np.asarray(ig_fn(x)).shape, np.float64, seed=1)

    def loss(m, f):
        return lambda a: m.sum(m.real(f(a) * m.conj(f(a))) * weights + m.real(f(a)) * weights)

    want = jax.grad(loss(jnp, lambda a: jax_fn(a, s=s, axes=axes, norm=norm)))(x)
    got = ig.grad(loss(ig, ig_fn))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("inverse,real,dtype,shape,axes,s,norm", GRAD_CASES[:2])
def test_fftn_second_order(inverse, real, dtype, shape, axes, s, norm):
    x, ig_fn, _ = _fftn_case(inverse, real, dtype, shape, axes, s, norm)
    x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    ig.check_grads(lambda a: ig.abs(ig_fn(a)) ** 2, (x,), order=2, modes=("rev",), rtol=1e-4, atol=1e-5)


def test_irfftn_non_symmetric_outer_axes():
    a = np.array([[1.0 + 0.0j, 2.0 + 0.0j], [3.0 + 0.0j, 4.0 + 0.0j]], dtype=np.complex64)
    fn = lambda x: ig.fft.irfftn(x, s=(5, 1), axes=(0, 1))  # noqa: E731
    want = np.fft.irfftn(a, s=(5, 1), axes=(0, 1))
    _close(fn(a), want, np.float32)
    _close(_expanded(fn, a), want, np.float32)
    _close(ig.jit(fn)(a), want, np.float32)


def test_irfft_transpose():
    """JAX's regression test 6223: irfft's transpose, built with linear_transpose, is the
    transpose of its matrix."""

    def build_matrix(linear_func, size):
        return ig.vmap(linear_func)(np.eye(size, size))

    def func(x):
        x = x.astype(np.complex128)
        return ig.fft.irfft(ig.concatenate([ig.zeros((1,), np.complex128), x[:2] + 1j * x[2:]]))

    def func_transpose(x):
        return ig.linear_transpose(func, x)(x)[0]

    matrix = np.asarray(build_matrix(func, 4))
    matrix2 = np.asarray(build_matrix(func_transpose, 4)).T
    np.testing.assert_allclose(matrix, matrix2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("inverse,real", list(itertools.product([False, True], [False, True])))
def test_fftn_errors(inverse, real):
    name = ("i" if inverse else "") + ("r" if real else "") + "fftn"
    func = _fftn_func(ig.fft, inverse, real)
    x = _rand((2, 3), np.float64)
    with pytest.raises(ValueError, match=rf"ig.fft.{name} does not support repeated axes. Got axes \[1, 1\]."):
        func(x, axes=[1, 1])
    for bad in ([2], [-3]):
        with pytest.raises(ValueError):
            func(x, axes=bad)


def test_fft_empty():
    out = ig.fft.fft(np.zeros((0,), np.complex64))
    np.testing.assert_array_equal(np.asarray(out), np.zeros((0,), np.complex64))
    assert np.asarray(ig.jit(ig.fft.fft)(np.zeros((0,), np.complex64))).shape == (0,)
    # An empty batch keeps its transformed shapes: rfft halves, irfft restores n.
    for run in (lambda f, a: f(a), lambda f, a: ig.jit(f)(a), _expanded):
        half = run(ig.fft.rfft, np.zeros((0, 8), np.float32))
        full = run(lambda a: ig.fft.irfft(a, n=8), np.zeros((0, 5), np.complex64))
        assert (np.asarray(half).shape, np.asarray(half).dtype) == ((0, 5), np.complex64)
        assert (np.asarray(full).shape, np.asarray(full).dtype) == ((0, 8), np.float32)


def test_rfft_of_complex_is_a_dtype_error():
    with pytest.raises(ig.DTypeError, match=r"ig.fft.rfft: takes a real array, got dtype complex128 \(shape \(4,\)\)"):
        ig.fft.rfft(np.ones(4) + 1j)


def _fft_name(inverse, real, hermitian):
    name = "r" if real else ("h" if hermitian else "")
    return ("i" if inverse else "") + name + "fft"


FFT_CASES = _sample(
    [
        (inverse, real, hermitian, dtype, n, axis)
        for inverse in [False, True]
        for real in [False, True]
        for hermitian in [False, True]
        for dtype in (real_dtypes if (real and not inverse) or (hermitian and inverse) else all_dtypes)
        for n in [None, 1, 7, 13, 20]
        for axis in [-1, 0]
    ],
    40,
    "testFft",
)


@pytest.mark.parametrize("inverse,real,hermitian,dtype,n,axis", FFT_CASES)
def test_fft(inverse, real, hermitian, dtype, n, axis):
    name = _fft_name(inverse, real, hermitian)
    x = _rand((10,), dtype)
    op, np_op = getattr(ig.fft, name), getattr(np.fft, name)
    fn = lambda a: op(a, n=n, axis=axis)  # noqa: E731
    want = np_op(x, n=n, axis=axis)
    _close(fn(x), want, _tol_dtype(x))
    _close(_expanded(fn, x), want, _tol_dtype(x))


@pytest.mark.parametrize("inverse,real,hermitian,dtype,n,axis", FFT_CASES[:3])
def test_fft_jit_cpu(inverse, real, hermitian, dtype, n, axis):
    name = _fft_name(inverse, real, hermitian)
    x = _rand((10,), dtype)
    want = getattr(np.fft, name)(x, n=n, axis=axis)
    _close(ig.jit(lambda a: getattr(ig.fft, name)(a, n=n, axis=axis))(x), want, _tol_dtype(x))


@pytest.mark.parametrize("inverse,real,hermitian", list(itertools.product([False, True], [False, True], [False, True])))
def test_fft_errors(inverse, real, hermitian):
    name = _fft_name(inverse, real, hermitian)
    func = getattr(ig.fft, name)
    x = _rand((2, 3), np.float64)
    for axis, shown in (([1, 1], r"\[1, 1\]"), ((1, 1), r"\(1, 1\)")):
        with pytest.raises(ValueError, match=rf"ig.fft.{name} does not support multiple axes. Please use ig.fft.{name}n. Got axis = {shown}."):
            func(x, axis=axis)
    for bad in ([2], [-3]):
        with pytest.raises(ValueError):
            func(x, axis=bad)


FFT2_CASES = _sample(
    [
        (inverse, real, dtype, shape, axes, norm)
        for inverse in [False, True]
        for real in [False, True]
        for dtype in (real_dtypes if real and not inverse else all_dtypes)
        for shape in [(16, 8, 4, 8), (16, 8, 4, 8, 4)]
        for axes in [(-2, -1), (0, 1), (1, 3), (-1, 2)]
        for norm in FFT_NORMS
    ],
    16,
    "testFft2_",
)


@pytest.mark.parametrize("inverse,real,dtype,shape,axes,norm", FFT2_CASES)
def test_fft2(inverse, real, dtype, shape, axes, norm):
    name = ("i" if inverse else "") + ("r" if real else "") + "fft2"
    x = _rand(shape, dtype)
    op, np_op = getattr(ig.fft, name), getattr(np.fft, name)
    fn = lambda a: op(a, axes=axes, norm=norm)  # noqa: E731
    want = np_op(x, axes=axes, norm=norm)
    _close(fn(x), want, _tol_dtype(x))
    _close(_expanded(fn, x), want, _tol_dtype(x))


@pytest.mark.parametrize("inverse,real", list(itertools.product([False, True], [False, True])))
def test_fft2_errors(inverse, real):
    name = ("i" if inverse else "") + ("r" if real else "") + "fft2"
    func = getattr(ig.fft, name)
    with pytest.raises(ValueError, match=rf"ig.fft.{name} only supports 2 axes. Got axes = \[0\]."):
        func(_rand((2, 3), np.float64), axes=[0])
    with pytest.raises(ValueError, match=rf"ig.fft.{name} only supports 2 axes. Got axes = \(0, 1, 2\)."):
        func(_rand((2, 3, 3), np.float64), axes=(0, 1, 2))
    for bad in ([2, 3], [-3, -4]):
        with pytest.raises(ValueError):
            func(_rand((2, 3), np.float64), axes=bad)


@pytest.mark.parametrize("size,d,dtype", _sample(itertools.product([9, 10, 101, 102], [0.1, 2.0], inexact_dtypes), 8, "testFftfreq"))
def test_fftfreq(size, d, dtype):
    want = np.fft.fftfreq(size, d=d).astype(dtype)
    got = ig.fft.fftfreq(size, d=d, dtype=dtype)
    assert np.asarray(got).dtype == dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ig.jit(lambda: ig.fft.fftfreq(size, d=d, dtype=dtype))()), want, rtol=1e-6)


@pytest.mark.parametrize("size,d", list(itertools.product([9, 10, 101, 102], [0.1, 2.0])))
def test_rfftfreq(size, d):
    got = ig.fft.rfftfreq(size, d=d)
    np.testing.assert_allclose(np.asarray(got), np.fft.rfftfreq(size, d=d), rtol=1e-6)
    assert np.asarray(got).dtype == np.float32  # irgrad's (and JAX's without x64) default float
    np.testing.assert_allclose(
        np.asarray(ig.fft.rfftfreq(size, d=d, dtype=np.float64)), np.fft.rfftfreq(size, d=d), rtol=1e-15
    )


def test_fftfreq_gradient_of_spacing():
    """The frequencies are differentiable in `d` (JAX's check_grads of fftfreq)."""
    g = ig.grad(lambda d: ig.sum(ig.fft.fftfreq(10, d=d, dtype=np.float64)))(0.5)
    want = jax.grad(lambda d: jnp.sum(jnp.fft.fftfreq(10, d=d, dtype=np.float64)))(0.5)
    np.testing.assert_allclose(float(g), float(want), rtol=1e-12)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_fftfreq_errors(name):
    func = getattr(ig.fft, name)
    with pytest.raises(ValueError, match=rf"The n argument of ig.fft.{name} only takes an int. Got n = \[0, 1, 2\]."):
        func(n=[0, 1, 2])
    with pytest.raises(ValueError, match=rf"The d argument of ig.fft.{name} only takes a single value. Got d = \[0, 1, 2\]."):
        func(n=10, d=[0, 1, 2])


SHIFT_CASES = _sample(
    [
        (shape, axes, dtype)
        for shape in [[9], [10], [101], [102], [3, 5], [3, 17], [5, 7, 11]]
        for axes in _fftn_axes(shape)
        for dtype in all_dtypes
    ],
    24,
    "testFftshift",
)


@pytest.mark.parametrize("shape,axes,dtype", SHIFT_CASES)
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_fftshift(name, shape, axes, dtype):
    x = _rand(shape, dtype)
    got = getattr(ig.fft, name)(x, axes=axes)
    np.testing.assert_array_equal(np.asarray(got), getattr(np.fft, name)(x, axes=axes))


def test_fft_normalization_precision():
    n = 31
    a = np.ones((n, 15), dtype="complex128")
    fn = lambda x: ig.fft.ifft(x, n=n, axis=1)  # noqa: E731
    want = np.fft.ifft(a, n=n, axis=1)
    np.testing.assert_allclose(np.asarray(fn(a)), want, atol=1e-14)
    np.testing.assert_allclose(np.asarray(_expanded(fn, a)), want, atol=1e-14)


@pytest.mark.parametrize("norm,func_name", list(itertools.product(["ortho", "forward"], ["fft", "ifft"])))
def test_fft_norm_overflow(norm, func_name):
    """JAX's gh-18453: the norm of a 3 x 900^3 transform, computed without integer overflow."""
    from irgrad.numpy.fft import _norm_factor

    want = np.prod(np.array([3] + [900] * 3, np.float64))
    if norm == "ortho":
        want = np.sqrt(want)
    if func_name[0] != "i":
        want = 1.0 / want
    np.testing.assert_allclose(_norm_factor(func_name, norm, [3, 900, 900, 900]), want, rtol=3e-8)


def test_lax_fft_accepts_string_types():
    x = _rand((10,), np.complex64)
    for fft_type in ("FFT", "fft"):
        got = ig.lax.fft(x, fft_type, fft_lengths=(10,))
        np.testing.assert_allclose(np.asarray(got), np.fft.fft(x).astype(np.complex64), rtol=1e-5, atol=1e-5)


def test_lax_fft_errors():
    with pytest.raises(ValueError, match=r"FFT input shape \(14, 15\) must have at least as many input dimensions as fft_lengths \(4, 5, 6\)"):
        ig.lax.fft(np.ones((14, 15)), fft_type="fft", fft_lengths=(4, 5, 6))
    with pytest.raises(ValueError, match=r"FFT input shape \(14, 15\) minor dimensions must be equal to fft_lengths \(17,\)"):
        ig.lax.fft(np.ones((14, 15)), fft_type="fft", fft_lengths=(17,))
    with pytest.raises(ValueError, match=r"RFFT input shape \(2, 14, 15\) minor dimensions must be equal to fft_lengths \(14, 12\)"):
        ig.lax.fft(np.ones((2, 14, 15)), fft_type="rfft", fft_lengths=(14, 12))
    with pytest.raises(ValueError, match=r"IRFFT input shape \(2, 14, 15\) minor dimensions must be equal to all except the last fft_length, got fft_lengths=\(13, 15\)"):
        ig.lax.fft(np.ones((2, 14, 15)), fft_type="irfft", fft_lengths=(13, 15))
    import ml_dtypes

    with pytest.raises(ValueError, match="RFFT input must be float32 or float64, got bfloat16"):
        ig.lax.fft(np.ones((14, 15), ml_dtypes.bfloat16), fft_type="rfft", fft_lengths=(5, 6))
    with pytest.raises(ValueError, match="Unknown FFT type 'dct'"):
        ig.lax.fft(np.ones(4), "dct", (4,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lax_irfft_does_not_mutate_inputs(dtype):
    x = (1 + 1j) * np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.result_type(dtype, np.complex64))
    y = np.asarray(ig.fft.irfft2(x))
    z = np.asarray(ig.fft.irfft2(x))
    np.testing.assert_array_equal(y, z)
    np.testing.assert_array_equal(x, (1 + 1j) * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_vmap_of_transforms_and_their_gradients():
    """ig.vmap batches the expanded transform (JAX's batching of fft is the batch dimension
    riding along): over a leading and a trailing axis, and per-example gradients."""
    x = _rand((5, 12), np.float64)
    z = _rand((12, 5), np.complex128)
    np.testing.assert_allclose(np.asarray(ig.vmap(ig.fft.rfft)(x)), np.fft.rfft(x, axis=-1), rtol=1e-12, atol=1e-12)
    got = ig.vmap(lambda col: ig.fft.ifft(col, n=8), in_axes=1)(z)
    np.testing.assert_allclose(np.asarray(got), np.fft.ifft(z, n=8, axis=0).T, rtol=1e-12, atol=1e-12)
    loss = lambda m: lambda r: m.sum(m.abs(m.fft.rfft(r)) ** 2 * m.arange(7.0))  # noqa: E731
    want = jax.vmap(jax.grad(loss(jnp)))(x)
    np.testing.assert_allclose(np.asarray(ig.jit(ig.vmap(ig.grad(loss(ig))))(x)), np.asarray(want), rtol=1e-10, atol=1e-10)
