"""`ig.lax`: jax.lax's names for what irgrad provides (`import irgrad.lax as lax`).

Control flow and transforms (cond, fori_loop, while_loop, scan, switch, map,
associative_scan, stop_gradient), dynamic slicing, top_k, clamp, select/select_n,
integer_pow, asinh/acosh/atanh, cumulative reductions with lax's signature (cumsum/cumprod/cummax/cummin(operand,
axis=0, reverse=False)), and the elementwise ops whose lax semantics are numpy's (lax.add is
ig.add, lax.logistic is ig.sigmoid, lax.rem is ig.fmod, ...), and lax's structural ops with
lax's signatures (slice, rev, pad with interior padding, dot_general, sort with several
operands, sort_key_val: irgrad/lax/shaping.py), the scaled Bessel functions bessel_i0e and bessel_i1e,
erfc and erf_inv, and the two elementwise ops whose lax meaning differs from irgrad's
numpy-style function (lax.div truncates integers, lax.round rounds halves away from zero:
irgrad/lax/special.py), and the complex ops real, imag, complex, conj with lax's dtypes
(irgrad/lax/complex_parts.py), and lax.fft (irgrad/lax/fourier.py). lax.reduce (it takes a computation) is not provided. The semantics and
derivative contracts of the lax-specific functions are in irgrad/lax/structured.py.
"""

from irgrad.numpy.basic import expm1
from irgrad.numpy.bitwise import (
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    left_shift as shift_left,
    right_shift as shift_right_arithmetic,
)
from irgrad.numpy.control_flow import cond, fori_loop, scan, while_loop
from irgrad.lax.shaping import dot_general, pad, rev, slice, sort, sort_key_val
from irgrad.lax.special import bessel_i0e, bessel_i1e, div, erf_inv, erfc, round
from irgrad.lax.complex_parts import complex, conj, imag, real
from irgrad.lax.fourier import fft
from irgrad.lax.structured import (
    associative_scan,
    clamp,
    cummax,
    cummin,
    cumprod,
    cumsum,
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice,
    dynamic_update_slice_in_dim,
    integer_pow,
    map,
    select,
    select_n,
    switch,
    top_k,
)
from irgrad.numpy.numerics import isfinite as is_finite
from irgrad.numpy.basic import (
    abs,
    add,
    cos,
    equal as eq,
    erf,
    exp,
    floor,
    greater as gt,
    greater_equal as ge,
    less as lt,
    less_equal as le,
    log,
    log1p,
    maximum as max,
    minimum as min,
    multiply as mul,
    negative as neg,
    not_equal as ne,
    power as pow,
    rsqrt,
    sigmoid as logistic,
    sign,
    sin,
    sqrt,
    square,
    subtract as sub,
    tanh,
)
from irgrad.numpy.arithmetic import cbrt, fmod as rem, reciprocal
from irgrad.numpy.exponents import exp2
from irgrad.numpy.hyperbolic import arccosh as acosh, arcsinh as asinh, arctanh as atanh, cosh, sinh
from irgrad.numpy.rounding import ceil
from irgrad.numpy.trigonometric import (
    arccos as acos,
    arcsin as asin,
    arctan as atan,
    arctan2 as atan2,
    tan,
)
from irgrad.numpy.shape import concatenate, transpose
from irgrad.numpy.custom_derivatives import stop_gradient

__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "associative_scan", "atan", "atan2", "atanh", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "cbrt", "ceil", "clamp", "concatenate", "cond", "cos", "cosh",
    "cummax", "cummin", "cumprod", "cumsum", "dynamic_index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_update_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "eq", "erf", "exp", "exp2", "expm1", "floor", "fori_loop", "ge",
    "gt", "integer_pow", "is_finite", "le", "log", "log1p", "logistic", "lt", "map", "max", "min",
    "mul", "ne", "neg", "pow", "reciprocal", "rem", "rsqrt", "scan", "select", "select_n",
    "shift_left", "shift_right_arithmetic", "sign", "sin", "sinh", "sqrt", "square", "stop_gradient",
    "sub", "switch", "tan", "tanh", "top_k", "transpose", "while_loop",
    "dot_general", "pad", "rev", "slice", "sort", "sort_key_val",
    "bessel_i0e", "bessel_i1e", "div", "erf_inv", "erfc", "round",
    "complex", "conj", "imag", "real", "fft",
]  # fmt: skip
