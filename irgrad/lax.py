"""`ig.lax`: jax.lax's names for what irgrad provides (`import irgrad.lax as lax`).

Control flow and transforms (cond, fori_loop, while_loop, scan, switch, map,
associative_scan, stop_gradient), dynamic slicing, top_k, clamp, select/select_n,
integer_pow, cumulative reductions with lax's signature (cumsum/cumprod/cummax/cummin(operand,
axis=0, reverse=False)), and the elementwise ops whose lax semantics are numpy's (lax.add is
ig.add, lax.logistic is ig.sigmoid, lax.rem is ig.fmod, ...). Names whose lax meaning differs
from irgrad's numpy-style function (lax.div truncates integers, lax.round rounds half away from
zero, lax.sort / lax.pad / lax.reduce take other arguments) are not provided. The semantics and
derivative contracts of the lax-specific functions are in irgrad/frontend/lax_api.py.
"""

from irgrad.frontend.activations import expm1
from irgrad.frontend.bitwise_api import (
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
)
from irgrad.frontend.bitwise_api import left_shift as shift_left
from irgrad.frontend.bitwise_api import right_shift as shift_right_arithmetic
from irgrad.frontend.control_flow import cond, fori_loop, scan, while_loop
from irgrad.frontend.lax_api import (
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
from irgrad.frontend.numerics_api import isfinite as is_finite
from irgrad.frontend.numpy_api import (
    abs,
    add,
    cos,
    erf,
    exp,
    floor,
    log,
    log1p,
    rsqrt,
    sign,
    sin,
    sqrt,
    square,
    tanh,
)
from irgrad.frontend.numpy_api import equal as eq
from irgrad.frontend.numpy_api import greater as gt
from irgrad.frontend.numpy_api import greater_equal as ge
from irgrad.frontend.numpy_api import less as lt
from irgrad.frontend.numpy_api import less_equal as le
from irgrad.frontend.numpy_api import maximum as max
from irgrad.frontend.numpy_api import minimum as min
from irgrad.frontend.numpy_api import multiply as mul
from irgrad.frontend.numpy_api import negative as neg
from irgrad.frontend.numpy_api import not_equal as ne
from irgrad.frontend.numpy_api import power as pow
from irgrad.frontend.numpy_api import sigmoid as logistic
from irgrad.frontend.numpy_api import subtract as sub
from irgrad.frontend.numpy_math import arccos as acos
from irgrad.frontend.numpy_math import arcsin as asin
from irgrad.frontend.numpy_math import arctan as atan
from irgrad.frontend.numpy_math import arctan2 as atan2
from irgrad.frontend.numpy_math import cbrt, ceil, cosh, exp2, reciprocal, sinh, tan
from irgrad.frontend.numpy_math import fmod as rem
from irgrad.frontend.shape_api import concatenate, transpose
from irgrad.frontend.transforms import stop_gradient

__all__ = [
    "abs", "acos", "add", "asin", "associative_scan", "atan", "atan2", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "cbrt", "ceil", "clamp", "concatenate", "cond", "cos", "cosh",
    "cummax", "cummin", "cumprod", "cumsum", "dynamic_index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_update_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "eq", "erf", "exp", "exp2", "expm1", "floor", "fori_loop", "ge",
    "gt", "integer_pow", "is_finite", "le", "log", "log1p", "logistic", "lt", "map", "max", "min",
    "mul", "ne", "neg", "pow", "reciprocal", "rem", "rsqrt", "scan", "select", "select_n",
    "shift_left", "shift_right_arithmetic", "sign", "sin", "sinh", "sqrt", "square", "stop_gradient",
    "sub", "switch", "tan", "tanh", "top_k", "transpose", "while_loop",
]  # fmt: skip
