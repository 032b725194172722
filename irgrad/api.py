"""The Python model-building API, which `import irgrad as ig` exposes as `ig.*`.

It lives here rather than in irgrad/__init__.py so that importing any part of irgrad (the
command-line tools import irgrad.driver, which imports the package first) does not load it:
irgrad/__init__.py loads this module on the first `ig.<name>` that it lacks. Tracer's
operators are installed by the library itself (irgrad/numpy/__init__.py). Its last step
copies its public names into the package.
"""

from irgrad.numpy.bitwise import (
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    invert,
    left_shift,
    right_shift,
)
from irgrad.frontend.check_grads import GradientCheckError, check_grads
from irgrad.frontend.debugging import debug_nans
from irgrad.diagnostics import NaNError
from irgrad.numpy.control_flow import cond, fori_loop, scan, while_loop
from irgrad.tracing.dtypes import bfloat16, bool_, complex64, complex128, float16, float32, float64, int32, int64
from irgrad.tracing.errors import ConcretizationError, DTypeError, ShapeError, UnsupportedError
from irgrad.numpy.indexing import getitem as _getitem
from irgrad.frontend.jit import jit
from irgrad.numpy.numerics import all, any, argmax, argmin, clip, isfinite, isinf, isnan, std, var
from irgrad.nn.functions import conv2d, log_softmax, logsumexp, max_pool2d, one_hot, softmax
from irgrad.numpy.basic import (
    abs,
    absolute,
    add,
    amax,
    amin,
    arange,
    astype,
    cos,
    divide,
    equal,
    expm1,
    erf,
    exp,
    floor,
    floor_divide,
    mod,
    remainder,
    full,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_not,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    not_equal,
    ones,
    ones_like,
    power,
    relu,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    sum,
    tanh,
    true_divide,
    where,
    zeros,
    zeros_like,
)
from irgrad.tracing.pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from irgrad.numpy.shape import (
    broadcast_to,
    concatenate,
    expand_dims,
    pad,
    reshape,
    squeeze,
    stack,
    swapaxes,
    take,
    take_along_axis,
    transpose,
)
from irgrad.tracing.tracer import Program, ShapeDtype, Tracer
from irgrad.frontend.trace_dispatch import make_program, trace
from irgrad.numpy.custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient
from irgrad.frontend.transforms import eval_shape, grad, jvp, linear_transpose, linearize, value_and_grad, vjp
from irgrad.frontend.vmap import vmap
from irgrad.frontend.jacobians import hessian, jacfwd, jacobian, jacrev
from irgrad.numpy.einsum import einsum
from irgrad.nn.activations import (
    celu,
    dot_product_attention,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    leaky_relu,
    log_sigmoid,
    mish,
    relu6,
    selu,
    silu,
    soft_sign,
    softplus,
    standardize,
    swish,
)

from irgrad.numpy import fft, linalg
from irgrad.numpy.arithmetic import cbrt, divmod, fabs, fmax, fmin, fmod, heaviside, positive, reciprocal
from irgrad.numpy.exponents import exp2, float_power, log10, log2, logaddexp, logaddexp2
from irgrad.numpy.float_parts import copysign, frexp, isneginf, isposinf, ldexp, modf, nan_to_num, signbit
from irgrad.numpy.float_neighbours import nextafter, spacing
from irgrad.numpy.bessel import i0
from irgrad.numpy.complex_numbers import (
    angle, conj, conjugate, imag, iscomplex, iscomplexobj, isreal, isrealobj, real,
)
from irgrad.numpy.bitwise import bitwise_count
from irgrad.numpy.hyperbolic import arccosh, arcsinh, arctanh, cosh, sinh
from irgrad.numpy.integer_functions import gcd, lcm
from irgrad.numpy.logical import logical_and, logical_or, logical_xor
from irgrad.numpy.rounding import around, ceil, rint, round, trunc
from irgrad.numpy.trigonometric import (
    arccos,
    arcsin,
    arctan,
    arctan2,
    deg2rad,
    degrees,
    hypot,
    rad2deg,
    radians,
    sinc,
    tan,
)
from irgrad.numpy.arrays import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    diag,
    diagonal,
    dstack,
    empty,
    empty_like,
    eye,
    flip,
    full_like,
    hstack,
    identity,
    linspace,
    meshgrid,
    moveaxis,
    ravel,
    repeat,
    roll,
    split,
    tile,
    tri,
    tril,
    triu,
    vstack,
)
from irgrad.numpy.array_edits import block, delete, diagflat, insert, resize, unstack
from irgrad.numpy.products import cross, dot, inner, kron, outer, tensordot, vdot
from irgrad.numpy.reductions import (
    allclose,
    argsort,
    array_equal,
    average,
    corrcoef,
    count_nonzero,
    cov,
    cumprod,
    cumsum,
    interp,
    isclose,
    median,
    prod,
    searchsorted,
    sort,
)

from irgrad.numpy.nan_reductions import *  # noqa: E402, F403  (names in its __all__)
from irgrad.numpy.order_statistics import *  # noqa: E402, F403  (names in its __all__)
from irgrad.numpy.differences import *  # noqa: E402, F403  (names in its __all__)
from irgrad.numpy.histograms import *  # noqa: E402, F403  (names in its __all__)
from irgrad.numpy.polynomials import *  # noqa: E402, F403  (names in its __all__)
from irgrad.numpy.selection import *  # noqa: E402, F403  (names in its __all__)
from irgrad.numpy.more import *  # noqa: E402, F403
from irgrad.numpy.array_api_names import *  # noqa: E402, F403  (numpy 2's names)
from irgrad.lax.structured import *  # noqa: E402, F403
from irgrad.numpy.data_dependent import *  # noqa: E402, F403
from irgrad.scipy import special  # noqa: E402  (ig.special, as jax.scipy.special)

del _getitem

from irgrad import debug, lax, layers, losses, mixed_precision, nn, optim, random


def _export() -> None:
    """This module's public names as attributes of the package: `ig.<name>`."""
    import irgrad

    namespace = vars(irgrad)
    for name, value in list(globals().items()):
        if not name.startswith("_") and value is not irgrad:
            namespace[name] = value


_export()
_LOADED = True
"""Set last: the package's lazy lookup (irgrad/__init__.py) serves this module to other
threads only once it is complete."""
