"""`ig.nn`: jax.nn's names in one place, for code written against `jax.nn`.

Every function here is also `ig.<name>`; this module only gathers them under jax.nn's
namespace (activations, softmax and friends, one_hot, standardize, dot_product_attention).
The `nn` dialect (the IR these trace to) is `irgrad.dialects.nn`, a different module.
"""

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
from irgrad.nn.functions import log_softmax, logsumexp, one_hot, softmax
from irgrad.numpy.basic import relu, sigmoid, tanh

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "standardize",
    "swish",
    "tanh",
]
