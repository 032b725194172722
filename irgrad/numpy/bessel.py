"""The modified Bessel function of order 0 with numpy's name, i0, and the Chebyshev series that
jax.lax's exponentially scaled bessel_i0e and bessel_i1e (irgrad/lax/special.py) share with it.

Cephes' coefficients (those of numpy.i0 and scipy.special.i0e / i1e): on |x| <= 8 a series in
|x| / 2 - 2, beyond it one in 32 / |x| - 2 divided by sqrt(|x|), each summed with Clenshaw's
recurrence in traced ops, so autodiff, vmap, jit and every backend cover them. Each branch sees
a safe argument where the other is taken (no 0 * inf in the unselected branch's gradient).
i0 follows numpy's formula, exp(|x|) times the series (inf from |x| about 710 in float64, as
numpy); float32 stays float32 and integers become float32, as jnp.i0 (numpy computes in
float64). Derivatives are the composite's: i0' = I1 (0 at 0, through |x|'s subgradient).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irgrad.numpy import basic as np_api
from irgrad.numpy.elementwise_support import _const, _float
from irgrad.numpy.support import api
from irgrad.tracing.tracer import Tracer

__all__ = ["i0"]

# Cephes' Chebyshev coefficients (i0.c, i1.c): exp(-x) I0(x) and exp(-x) I1(x) / x on [0, 8]
# (A), exp(-x) sqrt(x) I0(x) and exp(-x) sqrt(x) I1(x) on [8, inf) in 32 / x - 2 (B).
_I0E_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0E_B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)
_I1E_A = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)
_I1E_B = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)


def _chbevl(y: Tracer, coefficients: Sequence[float]) -> Tracer:
    """Clenshaw's recurrence for sum' c_k T_k(y / 2), Cephes' chbevl."""
    b0, b1, b2 = _const(y, coefficients[0]), _const(y, 0.0), _const(y, 0.0)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _branches(a: Tracer, small: Sequence[float], large: Sequence[float]) -> tuple[Tracer, Tracer, Tracer]:
    """(|x| <= 8, the series on [0, 8], the series on (8, inf) / sqrt) for a = |x|, each branch
    evaluated at a safe point where it is not selected."""
    near = a <= 8.0
    a_small = np_api.where(near, a, _const(a, 0.0))
    a_large = np_api.where(near, _const(a, 9.0), a)
    return near, _chbevl(a_small * 0.5 - 2.0, small), _chbevl(32.0 / a_large - 2.0, large) / np_api.sqrt(a_large)


def _i0e(t: Tracer) -> Tracer:
    near, s, l = _branches(np_api.abs(t), _I0E_A, _I0E_B)
    return np_api.where(near, s, l)


def _i1e(t: Tracer) -> Tracer:
    """x * series near 0 (odd, with derivative 1/2 at 0); sign(x) * series / sqrt(|x|) beyond."""
    near, s, l = _branches(np_api.abs(t), _I1E_A, _I1E_B)
    return np_api.where(near, np_api.where(near, t, _const(t, 0.0)) * s, np_api.sign(t) * l)


@api
def i0(x: Any) -> Tracer:
    """numpy's i0, the modified Bessel function of the first kind of order 0: exp(|x|) times
    Cephes' series (numpy's formula). Float32 stays float32 and integers become float32 (as
    jnp.i0; numpy returns float64). Gradient: the composite's, I1(x)."""
    t = _float("i0", x)
    return np_api.exp(np_api.abs(t)) * _i0e(t)
