"""JAX's elementwise op tables, ported from JAX's tests/lax_numpy_operators_test.py
(`JAX_ONE_TO_ONE_OP_RECORDS` and `JAX_COMPOUND_OP_RECORDS`, run there by testOp): the same
names, arities, shapes (Python and numpy scalars, empty shapes included), input generators and
tolerances, one record a line as in JAX. Each record's dtype x shape product (JAX takes all of
it) is sampled with a fixed seed, and every sampled case runs `getattr(ig, name)` eagerly and
under `ig.jit` against `getattr(jax.numpy, name)` with x64 enabled: the same values within the
record's tolerance, and the same result dtype.

Dtypes are irgrad's (bool, int32, int64, float16, bfloat16, float32, float64, no unsigned),
plus complex64/complex128 for the records of COMPLEX_RECORDS (sampled apart). The one deliberate dtype difference (docs/api/python.md, differences from JAX):
irgrad's default float is float32 and its default int int32 (JAX without x64), so where JAX
with x64 gives float64 (or int64) and no input is a float64 (int64) array, irgrad's result is
float32 (int32) -- `_irgrad_dtype` below. Names irgrad lacks are in MISSING, cases where it
differs from JAX in KNOWN_DIFFERENCES, each with a test that fails once that changes.
jax comes with the `test` extra (pyproject.toml), so `make test` runs this file; without jax it is skipped.
"""

from __future__ import annotations

import functools
import itertools
import random
import warnings
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
nonempty_shapes = [PY, NP, *nonempty_array_shapes]
all_shapes = [PY, NP, *array_shapes]

bf16 = np.dtype(ml_dtypes.bfloat16).type
float_dtypes = [bf16, np.float16, np.float32, np.float64]
int_dtypes = [np.int32, np.int64]
bool_dtypes = [np.bool_]
default_dtypes = float_dtypes + int_dtypes
inexact_dtypes = float_dtypes  # no complex dtypes in irgrad
number_dtypes = float_dtypes + int_dtypes  # no complex, no unsigned
real_dtypes = float_dtypes + int_dtypes
all_dtypes = number_dtypes + bool_dtypes
int_dtypes_no_uint64 = int_dtypes
PYTHON_SCALAR_DTYPES = {np.bool_: bool, np.int64: int, np.float64: float}  # jnp.bool_, int_, float_

# name, nargs, dtypes, shapes, rng, tolerance (JAX's record, by dtype), kwargs[, test_name]
ONE_TO_ONE_RECORDS = [
    ("abs", 1, all_dtypes, all_shapes, "default", None, {}),
    ("add", 2, all_dtypes, all_shapes, "default", None, {}),
    ("ceil", 1, float_dtypes, all_shapes, "default", None, {}),
    ("ceil", 1, int_dtypes, all_shapes, "default", None, {}, "ceil_int"),
    ("conj", 1, number_dtypes, all_shapes, "default", None, {}),
    ("equal", 2, all_dtypes, all_shapes, "some_equal", None, {}),
    ("exp", 1, number_dtypes, all_shapes, "default", None, {}),
    ("fabs", 1, float_dtypes, all_shapes, "default", None, {}),
    ("float_power", 2, inexact_dtypes, all_shapes, "default_scale1", {bf16: 1e-2, np.float32: 1e-3, np.float64: 1e-12}, {}),
    ("floor", 1, float_dtypes, all_shapes, "default", None, {}),
    ("floor", 1, int_dtypes, all_shapes, "default", None, {}, "floor_int"),
    ("greater", 2, all_dtypes, all_shapes, "some_equal", None, {}),
    ("greater_equal", 2, all_dtypes, all_shapes, "some_equal", None, {}),
    ("i0", 1, float_dtypes, all_shapes, "default", {np.float16: 3e-3}, {}),
    ("ldexp", 2, int_dtypes, all_shapes, "default", None, {}),
    ("less", 2, all_dtypes, all_shapes, "some_equal", None, {}),
    ("less_equal", 2, all_dtypes, all_shapes, "some_equal", None, {}),
    ("log", 1, number_dtypes, all_shapes, "positive", None, {}),
    ("logical_and", 2, all_dtypes, all_shapes, "bool", None, {}),
    ("logical_not", 1, all_dtypes, all_shapes, "bool", None, {}),
    ("logical_or", 2, all_dtypes, all_shapes, "bool", None, {}),
    ("logical_xor", 2, all_dtypes, all_shapes, "bool", None, {}),
    ("maximum", 2, all_dtypes, all_shapes, "some_inf", None, {}),
    ("minimum", 2, all_dtypes, all_shapes, "some_inf", None, {}),
    ("multiply", 2, all_dtypes, all_shapes, "default", None, {}),
    ("negative", 1, number_dtypes, all_shapes, "default", None, {}),
    ("nextafter", 2, [f for f in float_dtypes if f != bf16], all_shapes, "default", 0, {}),
    ("spacing", 1, float_dtypes, all_shapes, "default", 0, {}),
    ("not_equal", 2, all_dtypes, all_shapes, "some_equal", None, {}),
    ("array_equal", 2, number_dtypes, all_shapes, "some_equal", None, {}),
    ("array_equiv", 2, number_dtypes, all_shapes, "some_equal", None, {}),
    ("reciprocal", 1, inexact_dtypes, all_shapes, "default", None, {}),
    ("subtract", 2, number_dtypes, all_shapes, "default", None, {}),
    ("signbit", 1, default_dtypes + bool_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("trunc", 1, float_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("trunc", 1, int_dtypes, all_shapes, "some_inf_and_nan", None, {}, "trunc_int"),
    ("sin", 1, number_dtypes, all_shapes, "default", None, {}),
    ("cos", 1, number_dtypes, all_shapes, "default", None, {}),
    ("tan", 1, inexact_dtypes + int_dtypes, all_shapes, "uniform_1.5", None, {}),
    # JAX's ("tan", 1, unsigned_dtypes, ..., rand_uniform(0, 1.5)) has no irgrad dtype.
    ("sinh", 1, number_dtypes, all_shapes, "default", None, {}),
    ("cosh", 1, number_dtypes, all_shapes, "default", None, {}),
    ("tanh", 1, number_dtypes, all_shapes, "default", {np.float64: 1e-7}, {}),
    ("arcsin", 1, number_dtypes, all_shapes, "small", None, {}),
    ("arccos", 1, number_dtypes, all_shapes, "small", None, {}),
    ("arctan", 1, number_dtypes, all_shapes, "small", None, {}),
    ("arctan2", 2, float_dtypes, all_shapes, "small", None, {}),
    ("arcsinh", 1, number_dtypes, all_shapes, "default", None, {}),
    ("arccosh", 1, number_dtypes, all_shapes, "default", None, {}),
    ("arctanh", 1, number_dtypes, all_shapes, "small", {np.float64: 1e-9}, {}),
    ("asin", 1, number_dtypes, all_shapes, "small", None, {}),
    ("acos", 1, number_dtypes, all_shapes, "small", None, {}),
    ("atan", 1, number_dtypes, all_shapes, "small", None, {}),
    ("atan2", 2, float_dtypes, all_shapes, "small", None, {}),
    ("asinh", 1, number_dtypes, all_shapes, "default", None, {}),
    ("acosh", 1, number_dtypes, all_shapes, "default", None, {}),
    ("atanh", 1, number_dtypes, all_shapes, "small", {np.float64: 1e-9}, {}),
]

COMPOUND_RECORDS = [
    ("angle", 1, number_dtypes, all_shapes, "default", None, {}),
    ("angle", 1, number_dtypes, all_shapes, "default", None, {"deg": True}, "angle_deg"),
    ("atleast_1d", 1, default_dtypes, all_shapes, "default", None, {}),
    ("atleast_2d", 1, default_dtypes, all_shapes, "default", None, {}),
    ("atleast_3d", 1, default_dtypes, all_shapes, "default", None, {}),
    ("cbrt", 1, default_dtypes, all_shapes, "some_inf", None, {}),
    ("conjugate", 1, number_dtypes, all_shapes, "default", None, {}),
    ("deg2rad", 1, float_dtypes, all_shapes, "default", None, {}),
    ("divide", 2, number_dtypes, all_shapes, "nonzero", None, {}),
    ("divmod", 2, int_dtypes + float_dtypes, all_shapes, "nonzero", None, {}),
    ("exp2", 1, number_dtypes, all_shapes, "default", {bf16: 4e-2, np.float16: 1e-2}, {}),
    ("expm1", 1, number_dtypes, all_shapes, "positive", {np.float64: 1e-8}, {}, "expm1_large"),
    ("expm1", 1, number_dtypes, all_shapes, "small_positive", {np.float64: 1e-8}, {}),
    ("floor_divide", 2, default_dtypes, all_shapes, "nonzero", None, {}),
    ("fmin", 2, number_dtypes, all_shapes, "some_nan", None, {}),
    ("fmax", 2, number_dtypes, all_shapes, "some_nan", None, {}),
    ("fmod", 2, default_dtypes, all_shapes, "some_nan", None, {}),
    ("heaviside", 2, default_dtypes, all_shapes, "default", None, {}),
    ("hypot", 2, real_dtypes, all_shapes, "default", None, {}),
    ("kron", 2, number_dtypes, nonempty_shapes, "default", None, {}),
    ("outer", 2, number_dtypes, all_shapes, "default", None, {}),
    ("imag", 1, number_dtypes, all_shapes, "some_inf", None, {}),
    ("iscomplex", 1, number_dtypes, all_shapes, "some_inf", None, {}),
    ("isfinite", 1, inexact_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("isinf", 1, inexact_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("isnan", 1, inexact_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("isneginf", 1, float_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("isposinf", 1, float_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("isreal", 1, number_dtypes, all_shapes, "some_inf", None, {}),
    ("isrealobj", 1, number_dtypes, all_shapes, "some_inf", None, {}),
    ("log2", 1, number_dtypes, all_shapes, "positive", None, {}),
    ("log10", 1, number_dtypes, all_shapes, "positive", None, {}),
    ("log1p", 1, number_dtypes, all_shapes, "positive", {np.float64: 1e-12}, {}, "log1p_large"),
    ("log1p", 1, number_dtypes, all_shapes, "small_positive", {np.float64: 1e-12}, {}),
    ("logaddexp", 2, float_dtypes, all_shapes, "some_inf_and_nan", {np.float64: 1e-12}, {}),
    ("logaddexp2", 2, float_dtypes, all_shapes, "some_inf_and_nan", {np.float16: 1e-2, np.float64: 2e-14}, {}),
    ("polyval", 2, number_dtypes, nonempty_nonscalar_array_shapes, "default", {bf16: 4e-2, np.float16: 2e-2, np.float64: 1e-12}, {}),
    ("positive", 1, number_dtypes, all_shapes, "default", None, {}),
    ("pow", 2, number_dtypes, all_shapes, "positive", None, {}),
    ("power", 2, number_dtypes, all_shapes, "positive", None, {}),
    ("rad2deg", 1, float_dtypes, all_shapes, "default", None, {}),
    ("ravel", 1, all_dtypes, all_shapes, "default", None, {}),
    ("real", 1, number_dtypes, all_shapes, "some_inf", None, {}),
    ("remainder", 2, default_dtypes, all_shapes, "some_zero", {np.float16: 1e-2}, {}),
    ("mod", 2, default_dtypes, all_shapes, "some_zero", None, {}),
    ("modf", 1, float_dtypes, all_shapes, "default", None, {}),
    ("modf", 1, int_dtypes, all_shapes, "default", None, {}, "modf_int"),
    ("rint", 1, inexact_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("rint", 1, int_dtypes, all_shapes, "default", None, {}, "rint_int"),
    ("sign", 1, number_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("copysign", 2, default_dtypes, all_shapes, "some_inf_and_nan", None, {}),
    ("sinc", 1, [t for t in number_dtypes if t != bf16], all_shapes, "default", None, {}),
    ("square", 1, number_dtypes, all_shapes, "default", None, {}),
    ("sqrt", 1, number_dtypes, all_shapes, "positive", None, {}),
    ("transpose", 1, all_dtypes, all_shapes, "default", None, {}),
    ("true_divide", 2, all_dtypes, all_shapes, "nonzero", None, {}),
    ("ediff1d", 3, [np.int32], all_shapes, "default", None, {}),
    ("unwrap", 1, [t for t in float_dtypes if t != bf16], nonempty_nonscalar_array_shapes, "default", {bf16: 1e-1, np.float16: 1e-1}, {}),
    ("isclose", 2, [t for t in all_dtypes if t != bf16], all_shapes, "small_positive", None, {}),
    ("gcd", 2, int_dtypes_no_uint64, all_shapes, "default", None, {}),
    ("lcm", 2, int_dtypes_no_uint64, all_shapes, "default", None, {}),
]
# JAX's last record, ("lcm", 2, [np.int8], all_shapes, rand_not_small), has no irgrad dtype.

RECORDS = ONE_TO_ONE_RECORDS + COMPOUND_RECORDS
SAMPLES_PER_RECORD = 4

# Names of these records that irgrad does not have.
MISSING: set[str] = set()

# (test_name, dtypes, shapes) -> why irgrad's answer differs from jax.numpy's
KNOWN_DIFFERENCES: dict[tuple, str] = {
    ("float_power", (np.float32, np.float16), (NP, (3, 1))): "float64 result, as numpy's float_power (irgrad/numpy/exponents.py); jnp gives the operands' float type",
}


def _test_name(record: tuple) -> str:
    return record[7] if len(record) > 7 else record[0]


# --- JAX's rng factories (jax._src.test_util), as small numpy helpers with a fixed seed ------


def _cast(x, shape, dtype):
    """jtu._rand_dtype's last step: integers round, Python scalars are Python numbers."""
    np_dtype = np.float64 if dtype in (float, int, bool) else dtype
    if np.dtype(np_dtype).kind in "iu" or dtype is int:
        x = np.round(x)
    if shape == PY:
        return {float: float, int: int, bool: bool}[dtype](np.asarray(x).item())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.asarray(x).astype(np.int64 if dtype is int else (np.bool_ if dtype is bool else np_dtype))
    return out[()] if shape == NP else out


def _special(x, rng, dtype, values):
    """rand_some_inf/nan/zero: some entries replaced by special values (floats only for inf/nan)."""
    kind = np.dtype(np.float64 if dtype in (float, int, bool) else dtype).kind
    if dtype is int or dtype is bool:
        kind = "i"
    if kind != "f":
        values = [v for v in values if np.isfinite(v)]
    if not values:
        return x
    x = np.array(x, dtype=np.float64)
    for v in values:
        x = np.where(rng.random(x.shape) < 0.15, v, x)
    return x


def _values(kind: str, shape, dtype, rng: np.random.Generator):
    if dtype in complex_dtypes:  # jtu's complex draws: two real draws of the part's dtype
        part = np.float32 if dtype is np.complex64 else np.float64
        x = np.asarray(_values(kind, shape, part, rng)) + 1j * np.asarray(_values(kind, shape, part, rng))
        return x.astype(dtype)[()] if shape == NP else x.astype(dtype)
    dims = () if shape in (PY, NP) else shape
    if dtype in (np.bool_, bool) or kind == "bool":
        return _cast(rng.random(dims) < 0.5, shape, dtype)
    if kind == "default":
        x = 3 * rng.standard_normal(dims)
    elif kind == "default_scale1":
        x = rng.standard_normal(dims)
    elif kind == "nonzero":
        x = 3 * rng.standard_normal(dims)
        x = np.where(np.round(x) == 0, 1.0, x)
    elif kind == "positive":
        x = 2 * rng.random(dims) + 1
    elif kind == "small":
        x = 1e-3 * rng.standard_normal(dims)
    elif kind == "small_positive":
        x = 2e-1 * rng.random(dims)
    elif kind == "uniform_1.5":
        x = rng.uniform(-1.5, 1.5, dims)
    elif kind == "some_equal":
        x = rng.integers(-2, 3, dims).astype(np.float64)  # few distinct values: some compare equal
    elif kind == "some_inf":
        x = _special(3 * rng.standard_normal(dims), rng, dtype, [np.inf, -np.inf])
    elif kind == "some_nan":
        x = _special(3 * rng.standard_normal(dims), rng, dtype, [np.nan])
    elif kind == "some_inf_and_nan":
        x = _special(3 * rng.standard_normal(dims), rng, dtype, [np.inf, -np.inf, np.nan])
    elif kind == "some_zero":
        x = _special(3 * rng.standard_normal(dims), rng, dtype, [0.0])
    else:
        raise ValueError(kind)
    return _cast(x, shape, dtype)


# --- the cases -----------------------------------------------------------------------------


def _broadcast_compatible(shapes) -> bool:
    try:
        np.broadcast_shapes(*(() if s in (PY, NP) else s for s in shapes))
    except ValueError:
        return False
    return True


def _record_cases(record: tuple) -> list[tuple]:
    name, nargs, dtypes, shapes = record[:4]
    combos = [
        (shs, dts)
        for shs in itertools.combinations_with_replacement(shapes, nargs)
        if _broadcast_compatible(shs)
        for dts in itertools.product(*([PYTHON_SCALAR_DTYPES[d] for d in dtypes if d in PYTHON_SCALAR_DTYPES] if s == PY else dtypes for s in shs))
    ]
    seed = zlib.crc32(_test_name(record).encode())
    picked = combos if len(combos) <= SAMPLES_PER_RECORD else random.Random(seed).sample(combos, SAMPLES_PER_RECORD)
    return [(record, shs, dts) for shs, dts in picked]


def _case_id(case) -> str:
    record, shs, dts = case
    return f"{_test_name(record)}-{'-'.join(getattr(d, '__name__', str(d)) for d in dts)}-{'-'.join(map(str, shs)).replace(' ', '')}"


CASES = [case for record in RECORDS if record[0] not in MISSING for case in _record_cases(record)]

# Records whose JAX dtypes include complex ones and whose function irgrad takes complex values in:
# their complex cases (at least one complex operand) are sampled apart, so the real cases above
# stay the same sample. The other records' complex cases wait for complex support (docs/api/python.md).
COMPLEX_RECORDS = {
    "abs", "acos", "acosh", "add", "angle", "angle_deg", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctanh", "asin", "asinh", "atan", "atanh", "conj", "conjugate", "cos", "cosh", "divide", "equal", "exp", "exp2",
    "expm1", "expm1_large", "greater", "greater_equal", "imag", "iscomplex", "isreal", "isrealobj", "less",
    "less_equal", "log", "log10", "log1p", "log1p_large", "log2", "multiply", "negative", "not_equal", "pow",
    "power", "real", "reciprocal", "sign", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh",
    "true_divide",
}
complex_dtypes = [np.complex64, np.complex128]


def _complex_cases(record: tuple) -> list[tuple]:
    shapes = [s for s in record[3] if s != PY]  # JAX's Python scalars are bool, int and float here
    combos = [
        (shs, dts)
        for shs in itertools.combinations_with_replacement(shapes, record[1])
        if _broadcast_compatible(shs)
        for dts in itertools.product(*([*record[2], *complex_dtypes] for _ in shs))
        if any(d in complex_dtypes for d in dts)
    ]
    seed = zlib.crc32(("complex " + _test_name(record)).encode())
    return [(record, shs, dts) for shs, dts in random.Random(seed).sample(combos, min(len(combos), SAMPLES_PER_RECORD))]


CASES += [case for record in RECORDS if _test_name(record) in COMPLEX_RECORDS for case in _complex_cases(record)]

_DEFAULT_TOL = {
    np.dtype(bf16): 1e-2, np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}


def _tol(dtype, record_tol) -> float:
    """jtu.tolerance: the record's tolerance for this dtype, else JAX's default (0 for ints)."""
    dtype = np.dtype(np.float64 if dtype is float else (np.int64 if dtype is int else (np.bool_ if dtype is bool else dtype)))
    if isinstance(record_tol, dict):
        found = {np.dtype(k): v for k, v in record_tol.items()}.get(dtype)
        if found is not None:
            return found
    elif record_tol is not None:
        return record_tol
    return _DEFAULT_TOL.get(dtype, 0.0)


def _is_array_of(arg, dtype) -> bool:
    return isinstance(arg, (np.ndarray, np.generic)) and arg.dtype == dtype


def _irgrad_dtype(jax_dtype, args) -> np.dtype:
    """JAX's x64 dtype with irgrad's defaults: float64/int64 only when an input array has it."""
    jax_dtype = np.dtype(jax_dtype)
    if jax_dtype == np.float64 and not any(_is_array_of(a, np.float64) or _is_array_of(a, np.complex128) for a in args):
        return np.dtype(np.float32)
    if jax_dtype == np.int64 and not any(_is_array_of(a, np.int64) for a in args):
        return np.dtype(np.int32)
    return jax_dtype


def _args(case):
    record, shs, dts = case
    rng = np.random.default_rng(zlib.crc32(_case_id(case).encode()))
    return [_values(record[4], s, d, rng) for s, d in zip(shs, dts)]


def _function(module, record):
    name, kwargs = record[0], record[6]
    return functools.partial(getattr(module, name), **kwargs)


def _leaves(out):
    return list(out) if isinstance(out, tuple) else [out]


def _compare(got, want, args, tol, mode: str) -> None:
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want), (mode, len(got), len(want))
    for g, w in zip(got, want):
        w = np.asarray(w)
        g = np.asarray(g)
        assert g.shape == w.shape, (mode, g.shape, w.shape)
        assert g.dtype == _irgrad_dtype(w.dtype, args), (mode, g.dtype, w.dtype)
        if w.dtype.kind == "c":
            np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128), rtol=tol, atol=tol, err_msg=mode)
        elif w.dtype.kind == "f" or w.dtype == bf16:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol, err_msg=mode)
        else:
            np.testing.assert_array_equal(g, w, err_msg=mode)


def _run(case):
    """irgrad eagerly and under ig.jit, and jax.numpy, on the same inputs."""
    record, shs, dts = case
    args = _args(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = _function(jnp, record)(*args)
    out_dtypes = [_irgrad_dtype(np.asarray(w).dtype, args) for w in _leaves(want)]
    tol = max(_tol(d, record[5]) for d in [*dts, *out_dtypes])
    return args, want, tol


def _known(case) -> str | None:
    record, shs, dts = case
    return KNOWN_DIFFERENCES.get((_test_name(record), tuple(dts), tuple(shs)))


@pytest.mark.parametrize("case", [c for c in CASES if not _known(c)], ids=_case_id)
def test_op_against_jax(case):
    """testOp: irgrad's answer is jax.numpy's, eagerly and jitted (values and dtypes); the
    KNOWN_DIFFERENCES cases are checked by test_known_differences_still_differ instead."""
    record = case[0]
    args, want, tol = _run(case)
    fn = _function(ig, record)
    _compare(fn(*args), want, args, tol, "eager")
    _compare(ig.jit(fn)(*args), want, args, tol, "jit")


def test_missing_names_are_still_missing():
    """MISSING names irgrad lacks; once one exists, its records belong in CASES."""
    assert all(hasattr(jnp, name) for name in MISSING)
    assert sorted(name for name in MISSING if hasattr(ig, name)) == []
    assert MISSING <= {r[0] for r in RECORDS}


def test_complex_number_functions_are_covered_here_on_real_dtypes():
    """The records of numpy's complex-number names run here on irgrad's real dtypes; their
    complex inputs are tests/unit/numpy/test_complex_numbers.py's."""
    names = {"conj", "conjugate", "angle", "imag", "real", "iscomplex", "isreal", "isrealobj"}
    assert names <= {case[0][0] for case in CASES}


@pytest.mark.parametrize("key", sorted(KNOWN_DIFFERENCES, key=repr), ids=repr)
def test_known_differences_still_differ(key):
    """Each KNOWN_DIFFERENCES case still differs (eagerly or jitted); fails once it is fixed."""
    test_name, dts, shs = key
    (record,) = [r for r in RECORDS if _test_name(r) == test_name]
    case = (record, shs, dts)
    assert case in CASES, key
    args, want, tol = _run(case)
    fn = _function(ig, record)
    with pytest.raises(AssertionError):
        _compare(fn(*args), want, args, tol, "eager")
        _compare(ig.jit(fn)(*args), want, args, tol, "jit")
