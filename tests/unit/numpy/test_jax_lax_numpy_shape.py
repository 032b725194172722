"""JAX's shape and data-movement tests, ported from JAX's tests/lax_numpy_test.py: testTile,
testTransposeTuple, testConcatenate, testStack, testSplitStaticInt, testReshape, testRoll,
testTake, testWhereThreeArgument and the rest below, one `@jax_test` each, with the same
parameter grids (JAX's `jtu.sample_product` takes a random subset of each grid; here a
fixed-seed sample of at most `sample` cases). Each case checks, as JAX's `_CheckAgainstNumpy`
and `_CompileAndCheck` do, irgrad eagerly and under `ig.jit` (the first half of each sample:
`_jitted`) against numpy (values, on inputs promoted as jax.numpy promotes them:
`jtu.promote_like_jnp`) and against jax.numpy with x64 (values, shapes and dtypes). Data
movement is exact, so values must be equal.

Dtypes are irgrad's (bool, int32, int64, float16, bfloat16, float32, float64; no complex or
unsigned). irgrad's default float is float32 and its default int int32 (JAX without x64), so
where JAX with x64 gives float64 (int64) from Python scalars, irgrad gives float32 (int32):
`_irgrad_dtype`. irgrad's eager functions take numpy arrays as data, so static arguments JAX
tests as numpy arrays (`np.array(0)` as an axis, array repeats) reach irgrad's eager calls as
Python ints (`_static`); under ig.jit they are closed over as numpy arrays, as in JAX
(test_static_numpy_arrays_are_traced_eagerly). Arrays returned eagerly are numpy's, so the
method tests (testReshapeMethod, testTransposeTuple's `x.transpose`) check irgrad's Tracer
methods under ig.jit. JAX functions irgrad lacks are in MISSING, grid cases where it differs
in KNOWN_DIFFERENCES, keywords it does not take in KEYWORD_DIFFERENCES, each with a test that
fails once that changes. jax comes with the `test` extra; without it the file is skipped.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib

import ml_dtypes
import numpy as np
import pytest

import irgrad as ig

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

PY = "python scalar"  # jtu.PYTHON_SCALAR_SHAPE
NP = "numpy scalar"  # jtu.NUMPY_SCALAR_SHAPE
nonempty_nonscalar_array_shapes = [(4,), (3, 4), (3, 1), (1, 4), (2, 1, 4), (2, 3, 4)]
nonempty_array_shapes = [(), *nonempty_nonscalar_array_shapes]
empty_array_shapes = [(0,), (0, 4), (3, 0)]
array_shapes = nonempty_array_shapes + empty_array_shapes
scalar_shapes = [NP, PY]
all_shapes = scalar_shapes + array_shapes

bf16 = np.dtype(ml_dtypes.bfloat16).type
float_dtypes = [bf16, np.float16, np.float32, np.float64]
int_dtypes = [np.int32, np.int64]
default_dtypes = float_dtypes + int_dtypes
all_dtypes = default_dtypes + [np.bool_]  # no complex, no unsigned
PYTHON_SCALAR_DTYPES = {np.bool_: bool, np.int64: int, np.float64: float}  # jnp.bool_, int_, float_


def _shape_and_dtypes(shapes, dts):
    """JAX's _shape_and_dtypes: a Python scalar shape only with the Python scalar types."""
    for shape in shapes:
        for dtype in [PYTHON_SCALAR_DTYPES[d] for d in dts if d in PYTHON_SCALAR_DTYPES] if shape == PY else dts:
            yield shape, dtype


def _ndim(shape) -> int:
    return 0 if shape in (PY, NP) else len(shape)


# --- JAX's rng factories (jax._src.test_util), as numpy helpers with a fixed seed ----------


def _value(shape, dtype, rng: np.random.Generator, kind: str = "default"):
    """rand_default (3 x standard normal, rounded for integers), rand_some_zero, rand_int."""
    dims = () if shape in (PY, NP) else shape
    if dtype in (bool, np.bool_):
        x = rng.random(dims) < 0.5
    elif kind.startswith("int:"):
        low, high = map(int, kind[4:].split(","))
        x = rng.integers(low, high, dims)
    else:
        x = 3 * rng.standard_normal(dims)
        if kind == "some_zero":
            x = np.where(rng.random(dims) < 0.3, 0.0, x)
        if dtype is int or np.dtype(dtype if dtype is not float else np.float64).kind == "i":
            x = np.round(x)
    if shape == PY:
        return dtype(np.asarray(x).item())
    out = np.asarray(x).astype({float: np.float64, int: np.int64, bool: np.bool_}.get(dtype, dtype))
    return out[()] if shape == NP else out


TESTS: dict[str, tuple] = {}  # name -> (call, the sampled cases, promote)
GRIDS: dict[str, list[dict]] = {}  # name -> JAX's whole grid


def _sample(cases: list[dict], count: int, name: str) -> list[dict]:
    return cases if len(cases) <= count else random.Random(zlib.crc32(name.encode())).sample(cases, count)


def jax_test(name: str, cases, sample: int = 12, promote: int | None = None):
    """Registers `call(module, *arrays, **params)` for JAX's test `name`; each case is a dict
    of `args` ((shape, dtype[, rng kind]) per random array argument) and the other params;
    numpy gets the arguments from `promote` on promoted as jax.numpy promotes them."""

    def register(call):
        GRIDS[name] = list(cases)
        TESTS[name] = (call, _sample(GRIDS[name], sample, name), promote)
        return call

    return register


def _short(v) -> str:
    if isinstance(v, type) or isinstance(v, np.dtype):
        return np.dtype(v).name if v not in (int, float, bool) else v.__name__
    if isinstance(v, (tuple, list)):
        inner = ",".join(_short(u) for u in v)
        return f"({inner})" if isinstance(v, tuple) else f"[{inner}]"
    if isinstance(v, np.ndarray):
        return f"array({_short(v.tolist())})"
    return str(v).replace(" ", "")


def _case_id(name: str, case: dict) -> str:
    return name + "-" + "-".join(f"{k}={_short(v)}" for k, v in case.items())


def _static(v):
    """numpy arrays among static arguments as Python ints or lists (irgrad eagerly, see above)."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (tuple, list)):
        return type(v)(_static(u) for u in v)
    return v


def _args(name: str, case: dict) -> list:
    rng = np.random.default_rng(zlib.crc32(_case_id(name, case).encode()))
    values = [_value(spec[0], spec[1], rng, *spec[2:]) for spec in case["args"]]
    return [np.array(values)] if case.get("array_input") else values  # numpy's promotion


def _params(case: dict) -> dict:
    return {k: v for k, v in case.items() if k != "args"}


def _is_array_of(arg, dtype) -> bool:
    return isinstance(arg, (np.ndarray, np.generic)) and arg.dtype == dtype


def _irgrad_dtype(jax_dtype, args, requested) -> np.dtype:
    """JAX's x64 dtype with irgrad's defaults: float64/int64 only from such an array (or dtype=)."""
    jax_dtype = np.dtype(jax_dtype)
    wide = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32}
    if jax_dtype in wide and requested is None:
        if not any(_is_array_of(a, jax_dtype) for a in args):
            return np.dtype(wide[jax_dtype])
    return jax_dtype


def _leaves(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _promote_like_jnp(args: list, start: int | None) -> list:
    """jtu.promote_like_jnp: numpy's inputs cast to jax.numpy's result dtype (bfloat16 as float32)."""
    if start is None:
        return args
    dtype = jnp.result_type(*args[start:])
    dtype = np.float32 if dtype == bf16 else dtype
    return args[:start] + [np.asarray(a).astype(dtype) for a in args[start:]]


def _compare(got, want_np, want_jnp, args, requested, mode: str) -> None:
    got, want_np, want_jnp = _leaves(got), _leaves(want_np), _leaves(want_jnp)
    assert len(got) == len(want_jnp) == len(want_np), (mode, len(got), len(want_jnp), len(want_np))
    for g, n, j in zip(got, want_np, want_jnp):
        g, n, j = np.asarray(g), np.asarray(n), np.asarray(j)
        assert g.shape == j.shape == n.shape, (mode, g.shape, j.shape, n.shape)
        assert g.dtype == _irgrad_dtype(j.dtype, args, requested), (mode, g.dtype, j.dtype)
        as_float = lambda a: a.astype(np.float64) if a.dtype == bf16 else a
        np.testing.assert_array_equal(as_float(g), as_float(j.astype(g.dtype)), err_msg=f"{mode} vs jax.numpy")
        np.testing.assert_array_equal(as_float(g), as_float(n.astype(g.dtype)), err_msg=f"{mode} vs numpy")


def _check_case(name: str, case: dict, jitted: bool = True) -> None:
    """_CheckAgainstNumpy and _CompileAndCheck: irgrad eagerly (and jitted), numpy and jax.numpy."""
    call, _, promote = TESTS[name]
    args, params = _args(name, case), _params(case)
    want_np = call(np, *_promote_like_jnp(args, promote), **params)
    want_jnp = call(jnp, *args, **params)
    requested = params.get("dtype") or params.get("out_dtype")
    _compare(call(ig, *args, **{k: _static(v) for k, v in params.items()}), want_np, want_jnp, args, requested, "eager")
    if jitted:
        _compare(ig.jit(lambda *a: call(ig, *a, **params))(*args), want_np, want_jnp, args, requested, "jit")


# --- the tests, in JAX's order ---------------------------------------------------------------

REPS = [(), (2,), (3, 4), (2, 3, 4), (1, 0, 2)]


@jax_test("testTile", [dict(args=[(s, d)], reps=r) for s, d in _shape_and_dtypes(all_shapes, default_dtypes) for r in REPS], 16)
def _tile(m, x, reps):
    return m.tile(x, reps)


def _perms(shape):
    p = tuple(int(i) for i in np.random.RandomState(0).permutation(len(shape)))
    return [None, p, tuple(i - len(shape) for i in p)]


@jax_test("testTransposeTuple", [dict(args=[(s, d, "some_zero")], perm=p, arg_type=t) for s in array_shapes for p in _perms(s) for d in default_dtypes for t in ["splat", "value"]], 12)
def _transpose_tuple(m, x, perm, arg_type):
    x = m.asarray(x)  # eagerly numpy's own arrays in irgrad: the Tracer method is tested under jit
    return x.transpose(perm) if arg_type == "value" else x.transpose(*(perm or ()))


def _permute_axes(shape):
    rng = np.random.RandomState(len(shape))
    axes, neg = rng.permutation(len(shape)), rng.randint(0, 2, size=len(shape)).astype(bool)
    return tuple(int(a) for a in np.where(neg, axes - len(shape), axes))


@jax_test("testPermuteDims", [dict(args=[(s, d, "some_zero")], axes=_permute_axes(s)) for s in array_shapes for d in default_dtypes], 8)
def _permute_dims(m, x, axes):  # the installed jax.numpy's permute_dims takes no negative axes yet
    return (m.permute_dims if m is ig else m.transpose)(x, axes=axes)


@jax_test("testMatrixTranspose", [dict(args=[(s, d)], use_property=u) for s in array_shapes if len(s) >= 2 for d in default_dtypes for u in [False, True]], 6)
def _matrix_transpose(m, x, use_property):  # x.mT: eagerly numpy's, under ig.jit the Tracer's
    return m.asarray(x).mT if use_property else m.matrix_transpose(x)


def _along(base_shape, axis, sizes):
    a = 0 if axis is None else axis % len(base_shape)
    return [base_shape[:a] + (n,) + base_shape[a + 1 :] for n in sizes]


@jax_test("testConcatenate", [
    dict(args=list(zip(_along(b, axis, [3, 1, 4]), dts)), axis=axis, dtype=dtype)
    for b in [(4,), (3, 4), (2, 3, 4)] for axis in (None, *range(-len(b) + 1, len(b)))
    for dts in itertools.combinations_with_replacement(default_dtypes, 3) for dtype in [None, *default_dtypes]
], 24, promote=0)  # fmt: skip
def _concatenate(m, *xs, axis, dtype):
    if m is np:
        return np.concatenate(xs, axis=axis, dtype=dtype or xs[0].dtype, casting="unsafe")
    return m.concatenate(xs, axis=axis, dtype=dtype)


@jax_test("testConcatenateArray", [dict(args=[(s, d)], axis=a) for s in [(4, 1), (4, 3), (4, 5, 6)] for a in [None, *range(1 - len(s), len(s) - 1)] for d in all_dtypes], 8)
def _concatenate_array(m, x, axis):
    return m.concatenate(x, axis=axis)


@jax_test("testConcatenateScalarAxisNone", [dict(args=[(NP, np.int32), (NP, np.int32)])])
def _concatenate_scalars(m, a, b):
    return m.concatenate([a, b], axis=None)


@jax_test("testConcat", [dict(args=[(s, d) for s in _along(b, axis, [3, 1, 4])], axis=axis) for b in [(), (4,), (3, 4), (2, 3, 4)] for axis in (None, *range(-len(b) + 1, len(b))) for d in default_dtypes], 8, promote=0)
def _concat(m, *xs, axis):
    return m.concat(xs, axis=axis)


@jax_test("testAppend", [dict(args=list(zip(_along(b, a, [3, 1]), dts)), axis=a) for b in [(4,), (3, 4), (2, 3, 4)] for a in range(-len(b) + 1, len(b)) for dts in itertools.combinations_with_replacement(default_dtypes, 2)], 10, promote=0)
def _append(m, arr, values, axis):
    return m.append(arr, values, axis=axis)


@jax_test("testRepeat", [dict(args=[(s, d)], axis=a, repeats=r) for s, d in _shape_and_dtypes(all_shapes, default_dtypes) for a in [None, *range(-_ndim(s), max(1, _ndim(s)))] for r in [0, 1, 2]], 16)
def _repeat(m, x, axis, repeats):  # fixed_size=True (total_repeat_length=) is in KNOWN_DIFFERENCES
    return m.repeat(x, repeats=repeats, axis=axis)


NON_SCALAR_REPEATS = [((6,), r, a) for r in [2, np.array([1, 3, 0, 1, 1, 2]), np.array([1, 3, 2, 1, 1, 2]), np.array([2])] for a in [None, 0]]
NON_SCALAR_REPEATS += [((2, 3), r, 0) for r in [2, np.array([2, 1]), np.array([2])]] + [((2, 3), r, 1) for r in [2, np.array([1, 3, 2]), np.array([2])]]


@jax_test("testNonScalarRepeats", [dict(args=[(s, np.int32)], repeats=r, axis=a) for s, r, a in NON_SCALAR_REPEATS], 13)
def _non_scalar_repeats(m, x, repeats, axis):
    return m.repeat(x, repeats, axis)


@jax_test("testTriLU", [dict(args=[(s, d)], op=op, k=k) for d in default_dtypes for s in array_shapes if len(s) >= 2 for op in ["tril", "triu"] for k in range(-3, 3)], 12)
def _tri_lu(m, x, op, k):
    return getattr(m, op)(x, k=k)


@jax_test("testDiag", [dict(args=[(s, d)], k=k) for d in default_dtypes for s in array_shapes if len(s) in (1, 2) for k in range(-4, 4)], 10)
def _diag(m, x, k):
    return m.diag(x, k)


@jax_test("testDiagonal", [
    dict(args=[(s, d)], offset=o, axis1=a1, axis2=a2) for s in array_shapes if len(s) >= 2
    for a1 in range(-len(s), len(s)) for a2 in range(-len(s), len(s)) if a1 % len(s) != a2 % len(s)
    for d in default_dtypes for o in range(-4, 4)
], 12)  # fmt: skip
def _diagonal(m, x, offset, axis1, axis2):
    return m.diagonal(x, offset, axis1, axis2)


STACK_DTYPES = [[np.float32], [np.float32, np.float32], [np.float32, np.int32, np.float32], [np.float32, np.int64, np.float32], [np.float32, np.int32, np.float64]]


def _stacked(m, xs: list, array_input: bool):
    """JAX's array_input: the inputs come as one numpy array (`_args`), else as a list."""
    if not array_input:
        return xs
    return list(xs[0]) if m is ig else xs[0]  # irgrad's *stack take lists (KNOWN_DIFFERENCES)


@jax_test("testColumnStack", [dict(args=[(s, d) for d in dts], array_input=ai) for dts in STACK_DTYPES for s in [(), (2,), (3, 4), (1, 5)] for ai in [True, False]], 8, promote=0)
def _column_stack(m, *xs, array_input):
    return m.column_stack(_stacked(m, list(xs), array_input))


@jax_test("testStack", [
    dict(args=[(s, d) for d in dts], axis=a, array_input=ai, out_dtype=od) for s in [(), (2,), (3, 4), (1, 100)]
    for a in range(-len(s), len(s) + 1) for dts in STACK_DTYPES for ai in [True, False] for od in [np.float32, np.int32]
], 10, promote=0)  # fmt: skip
def _stack(m, *xs, axis, array_input, out_dtype):
    if m is np:
        return np.stack(_stacked(m, list(xs), array_input), axis=axis, dtype=out_dtype, casting="unsafe")
    return m.stack(_stacked(m, list(xs), array_input), axis=axis, dtype=out_dtype)


@jax_test("testHVDStack", [
    dict(args=[(s, d) for d in dts], op=op, array_input=ai, out_dtype=od) for op in ["hstack", "vstack", "dstack"]
    for dts in STACK_DTYPES for s in [(), (2,), (3, 4), (1, 100), (2, 3, 4)] for ai in [True, False] for od in [np.float32, np.int32]
], 12, promote=0)  # fmt: skip
def _hvd_stack(m, *xs, op, array_input, out_dtype):
    xs = _stacked(m, list(xs), array_input)
    if m is jnp:
        return getattr(jnp, op)(xs, dtype=out_dtype)
    return getattr(m, op)(xs).astype(out_dtype)  # irgrad's have no dtype= (KNOWN_DIFFERENCES)


@jax_test("testSplitStaticInt", [dict(args=[(s, d)], num_sections=n, axis=a) for s, a, n in [((3,), 0, 3), ((12,), 0, 3), ((12, 4), 0, 4), ((12, 4), 1, 2), ((2, 3, 4), -1, 2), ((2, 3, 4), -2, 3)] for d in default_dtypes], 6)
def _split(m, x, num_sections, axis):
    return m.split(x, num_sections, axis=axis)


@jax_test("testArraySplitStaticInt", [dict(args=[(s, d)], num_sections=n, axis=a) for s, a, n in [((3,), 0, 2), ((12,), 0, 5), ((12, 4), 0, 7), ((12, 4), 1, 3), ((2, 3, 5), -1, 2), ((2, 4, 4), -2, 3), ((7, 2, 2), 0, 3)] for d in default_dtypes], 7)
def _array_split(m, x, num_sections, axis):
    return m.array_split(x, num_sections, axis=axis)


@jax_test("testHVDSplit", [dict(args=[(s, d)], num_sections=n, axis=a) for s, a, n in [((12, 4), 0, 4), ((12,), 1, 2), ((2, 3, 4), 2, 2), ((4, 3, 4), 0, 2)] for d in default_dtypes], 6)
def _hvd_split(m, x, num_sections, axis):
    return getattr(m, {0: "vsplit", 1: "hsplit", 2: "dsplit"}[axis])(x, num_sections)


RESHAPES = [(NP, (1, 1, 1)), ((), (1, 1, 1)), ((7, 0), (0, 42, 101)), ((3, 4), 12), ((3, 4), (12,)), ((3, 4), -1), ((2, 1, 4), (-1,)), ((2, 2, 4), (2, 8))]


@jax_test("testReshape", [dict(args=[(s, d)], out_shape=o, order=order) for s, o in RESHAPES for d in default_dtypes for order in ["C", "F"]], 14)
def _reshape(m, x, out_shape, order):
    return m.reshape(x, out_shape, order=order)


@jax_test("testReshapeMethod", [dict(args=[(s, d)], out_shape=o) for s, o in RESHAPES[2:3] + RESHAPES[6:] for d in default_dtypes], 6)
def _reshape_method(m, x, out_shape):
    return np.reshape(x, out_shape) if m is np else m.asarray(x).reshape(*out_shape)


EXPAND_DIMS = [(s, dim) for s in [(), (3,), (3, 4)] for dim in [*range(-len(s) + 1, len(s)), np.array(0), np.array(-1), (0,), [np.array(0)], (len(s), len(s) + 1)]]


@jax_test("testExpandDimsStaticDim", [dict(args=[(s, d)], dim=dim) for s, dim in EXPAND_DIMS for d in default_dtypes], 12)
def _expand_dims(m, x, dim):
    return m.expand_dims(x, dim)


@jax_test("testSwapAxesStaticAxes", [dict(args=[(s, d)], ax1=a, ax2=b) for s, a, b in [((3, 4), 0, 1), ((3, 4), 1, 0), ((3, 4, 5), 1, 2), ((3, 4, 5), -1, -2), ((3, 4, 5), 0, 1)] for d in default_dtypes], 5)
def _swapaxes(m, x, ax1, ax2):
    return m.swapaxes(x, ax1, ax2)


SQUEEZES = [((3, 1), None), ((3, 1), 1), ((3, 1), -1), ((3, 1), np.array(1)), ((1, 3, 1), (0, 2)), ((1, 3, 1), (0,)), ((1, 4, 1), (np.array(0),))]


@jax_test("testSqueeze", [dict(args=[(s, d)], ax=ax) for s, ax in SQUEEZES for d in default_dtypes], 8)
def _squeeze(m, x, ax):
    return m.squeeze(x, ax)


@jax_test("testFlip", [dict(args=[(s, d)], axis=a) for s in [(3,), (2, 3)] for a in [*range(-len(s), len(s)), None, tuple(range(len(s)))] for d in default_dtypes], 8)
def _flip(m, x, axis):
    return m.flip(x, axis)


@jax_test("testFlipud", [dict(args=[(s, d)]) for s in [(3,), (2, 3), (3, 2, 4)] for d in default_dtypes], 4)
def _flipud(m, x):
    return m.flipud(x)


@jax_test("testFliplr", [dict(args=[(s, d)]) for s in [(3, 2), (2, 3), (3, 2, 4)] for d in default_dtypes], 4)
def _fliplr(m, x):
    return m.fliplr(x)


@jax_test("testRot90", [dict(args=[(s, d)], k=k, axes=ax) for s, ax in [[(2, 3), (0, 1)], [(2, 3), (1, 0)], [(4, 3, 2), (0, 2)], [(4, 3, 2), (2, 1)]] for k in range(-3, 4) for d in default_dtypes], 10)
def _rot90(m, x, k, axes):
    return m.rot90(x, k, axes)


@jax_test("testRavel", [dict(args=[((3, 4), np.float32)])])
def _ravel_method(m, x):
    return m.asarray(x).ravel()


ROLLS = [(3, None), (1, 1), ((3,), (0,)), ((-2,), (-2,)), ((1, 2), (0, -1)), ((4, 2, 5, 5, 2, 4), None), (100, None)]


@jax_test("testRoll", [dict(args=[(s, d)], shifts=sh, axis=a) for sh, a in ROLLS for d in all_dtypes for s in [(3, 4), (3, 4, 5), (7, 4, 0)]], 12)
def _roll(m, x, shifts, axis):  # static shifts here; JAX's traced shifts are in KNOWN_DIFFERENCES
    return m.roll(x, shifts, axis=axis)


@jax_test("testRollaxis", [dict(args=[((1, 2, 3, 4), d)], axis=a, start=st) for d in all_dtypes for a in [-3, 0, 2, 3] for st in [-4, -1, 2, 4]], 8)
def _rollaxis(m, x, axis, start):
    return m.rollaxis(x, axis=axis, start=start)


@jax_test("testTake", [
    dict(args=[(s, d), (i, idt, "int:" + (f"{-s[a or 0]},{s[a or 0]}" if mode is None else "-5,5"))], axis=a, mode=mode)
    for s in [(3,), (3, 4), (3, 4, 5)] for a in [*range(-len(s), len(s)), None] for i in [NP, PY, (3,), (2, 1, 3)]
    for d in all_dtypes for idt in ([int] if i == PY else int_dtypes) for mode in [None, "wrap", "clip"]
], 16)  # fmt: skip
def _take(m, x, i, axis, mode):
    return m.take(x, i, axis=axis, mode=mode)


def _take_along_cases():
    for xs, i_s in itertools.combinations_with_replacement(nonempty_nonscalar_array_shapes, 2):
        if len(xs) != len(i_s) or any(a != b and 1 not in (a, b) for a, b in zip(xs, i_s)):
            continue
        for axis in [*range(len(xs)), -1, None]:
            ish = [math.prod(i_s)] if axis is None else [n * 3 if k == axis % len(xs) else n for k, n in enumerate(i_s)]
            n = math.prod(xs) if axis is None else xs[axis]
            for d, idt in itertools.product(default_dtypes, int_dtypes):
                yield dict(args=[(xs, d), (tuple(ish), idt, f"int:{-n},{n}")], axis=axis)


@jax_test("testTakeAlongAxis", _take_along_cases(), 12)
def _take_along_axis(m, x, i, axis):  # mode="one_hot" is in KNOWN_DIFFERENCES
    return m.take_along_axis(x, i, axis=axis)


def _broadcast_compatible(shapes) -> bool:
    try:
        np.broadcast_shapes(*(() if s in (PY, NP) else s for s in shapes))
    except ValueError:
        return False
    return True


@jax_test("testWhereThreeArgument", [
    dict(args=[(s, d) for s, d in zip(shs, dts)]) for shs in itertools.combinations_with_replacement(all_shapes, 3)
    if _broadcast_compatible(shs) for dts in itertools.product(*([PYTHON_SCALAR_DTYPES[d] for d in all_dtypes if d in PYTHON_SCALAR_DTYPES] if s == PY else all_dtypes for s in shs))
], 16, promote=1)  # fmt: skip
def _where(m, c, x, y):
    return m.where(c, x, y)


@jax_test("testBroadcastTo", [dict(args=[(f, np.float32)], to_shape=t) for f, t in [[(1, 3), (4, 3)], [(3,), (2, 1, 3)], [(3,), (3, 3)], [(1,), (3,)], [(1,), 3]]])
def _broadcast_to(m, x, to_shape):
    return m.broadcast_to(x, to_shape)


@jax_test("testAtLeastNdLiterals", [dict(args=[(PY, t)], op=op) for t in [int, float, bool] for op in ["atleast_1d", "atleast_2d", "atleast_3d"]])
def _atleast_nd(m, x, op):  # JAX's grid also has complex
    return getattr(m, op)(x)


METHOD_TESTS = {"testTransposeTuple", "testReshapeMethod", "testRavel", "testMatrixTranspose"}  # eagerly numpy's methods


def _jitted(name: str, case: dict) -> bool:
    """Every case's ig.jit run costs a compile: the first half of each test's sample runs under
    ig.jit too (all of a method test's, and the FIXED cases from outside the sample), which
    keeps the file to about a minute on 2 cores."""
    cases = TESTS[name][1]
    position = next((i for i, c in enumerate(cases) if c is case), 0)
    return name in METHOD_TESTS or position < (len(cases) + 1) // 2

# JAX test -> the jax.numpy function irgrad does not have. (unstack, delete, insert, resize,
# diagflat and block are there now: tests/unit/numpy/test_array_edits.py checks them against
# numpy and jax.numpy.)
MISSING: dict[str, str] = {}

# case id (from JAX's grid, sampled or not) -> why irgrad differs
KNOWN_DIFFERENCES: dict[str, str] = {}

# grid cases outside the sample that once differed (issue 24 fixed them), run always
FIXED = {
    "testRepeat-args=[(numpyscalar,float32)]-axis=0-repeats=2",  # repeat of a 0-d array along axis 0
    "testRepeat-args=[((),int32)]-axis=0-repeats=1",
    "testRoll-args=[((3,4),float32)]-shifts=(4,2,5,5,2,4)-axis=None",  # a tuple of shifts, axis=None
    "testTake-args=[((3,4,5),int32),(numpyscalar,int64,int:-5,5)]-axis=-1-mode=clip",  # clip: negatives to 0
    "testTake-args=[((3,4,5),bfloat16),((2,1,3),int64,int:-5,5)]-axis=0-mode=clip",
    "testTake-args=[((3,4),int32),((3),int32,int:-5,5)]-axis=None-mode=clip",
}

CASES = [(name, case) for name, (_, cases, _) in TESTS.items() for case in cases]
CASES += [(n, c) for n, grid in GRIDS.items() for c in grid if _case_id(n, c) in KNOWN_DIFFERENCES.keys() | FIXED and all(c is not d for _, d in CASES)]

_x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
# what JAX's tests call that irgrad does not take -> (the call, the error it raises, why)
KEYWORD_DIFFERENCES = {
    "testRepeat fixed_size=True": (lambda: ig.repeat(_x, 2, axis=0, total_repeat_length=4), TypeError, "repeat has no total_repeat_length= (arrays.py): repeats are static"),
    "testNonScalarRepeats fixed_size=True": (lambda: ig.jit(lambda x, r: ig.repeat(x, r, axis=0, total_repeat_length=5))(_x, np.array([2, 3])), TypeError, "the same, with traced repeats"),
    "testTakeAlongAxis mode='one_hot'": (lambda: ig.take_along_axis(_x, np.zeros((2, 3, 1), np.int32), axis=2, mode="one_hot"), TypeError, "take_along_axis has no mode= (shape.py)"),
    "testHVDStack dtype=": (lambda: ig.hstack([_x, _x], dtype=np.int32), TypeError, "hstack/vstack/dstack have no dtype= (arrays.py); concatenate and stack do"),
    "testHVDStack array_input=True": (lambda: ig.vstack(_x), TypeError, "the *stack functions take a list or tuple, not an array (arrays.py _sequence)"),
    "testColumnStack array_input=True": (lambda: ig.column_stack(_x), TypeError, "the same, for column_stack"),
    "testRoll traced shifts": (lambda: ig.jit(lambda x, s: ig.roll(x, s, axis=1))(_x, np.array(2)), ig.ConcretizationError, "roll's shifts are static (arrays.py): JAX rolls by traced shifts too"),
    "testExpandDimsStaticDim np.array(0), eagerly": (lambda: ig.expand_dims(_x, np.array(0)), TypeError, "eager irgrad traces every numpy array argument (irgrad/numpy/support.py _run_eagerly), a 0-d array axis too; under ig.jit a closed-over one works"),
    "testSqueeze np.array(1), eagerly": (lambda: ig.squeeze(_x[:, :1], np.array(1)), TypeError, "the same, for squeeze"),
    "testNonScalarRepeats array repeats, eagerly": (lambda: ig.repeat(_x, np.array([1, 2]), axis=0), ig.ConcretizationError, "the same, for repeat's counts"),
}  # fmt: skip


def _known(name: str, case: dict) -> str | None:
    return KNOWN_DIFFERENCES.get(_case_id(name, case))


@pytest.mark.parametrize("name,case", [c for c in CASES if not _known(*c)], ids=[_case_id(*c) for c in CASES if not _known(*c)])
def test_against_numpy_and_jax(name, case):
    """JAX's test `name` on one case of its grid: irgrad eagerly and under ig.jit."""
    _check_case(name, case, _jitted(name, case))


@pytest.mark.parametrize("case_id", sorted(KNOWN_DIFFERENCES))
def test_known_differences_still_differ(case_id):
    """Each KNOWN_DIFFERENCES case still fails (raises or differs); fails once it is fixed."""
    (found,) = [c for c in CASES if _case_id(*c) == case_id]
    with pytest.raises(Exception):
        _check_case(*found)


@pytest.mark.parametrize("label", sorted(KEYWORD_DIFFERENCES))
def test_keyword_differences_still_raise(label):
    """Each KEYWORD_DIFFERENCES call still raises its error; fails once irgrad takes it."""
    call, error, _ = KEYWORD_DIFFERENCES[label]
    with pytest.raises(error):
        call()


def test_missing_functions_are_still_missing():
    """MISSING names jax.numpy functions irgrad lacks; once one exists, port its tests."""
    assert all(hasattr(jnp, name) for name in MISSING.values())
    assert sorted(name for name in set(MISSING.values()) if hasattr(ig, name)) == []
    assert not set(MISSING) & set(TESTS)


def test_static_numpy_arrays_are_traced_eagerly():
    """Why `_static` turns JAX's numpy-array axes and repeats into Python values for irgrad's
    eager calls: under ig.jit, closed over, they are taken as JAX takes them."""
    np.testing.assert_array_equal(ig.jit(lambda x: ig.expand_dims(x, np.array(0)))(_x), _x[None])
    np.testing.assert_array_equal(ig.jit(lambda x: ig.squeeze(x, (np.array(1),)))(_x[:, :1]), _x[:, 0])
    np.testing.assert_array_equal(ig.jit(lambda x: ig.repeat(x, np.array([1, 2]), axis=0))(_x), np.repeat(_x, [1, 2], axis=0))
