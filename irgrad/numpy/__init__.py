"""`ig.*`'s numpy names (jax.numpy's peer): array functions that trace to `nn` IR, or run at
once on numpy arrays, with numpy's broadcasting and JAX's dtype promotion.
"""

# Tracer's numpy operators (`x + y`, `x @ w`, `x[i]`, `x.T`, ...) are this library's functions,
# installed on the tracing core's class when the library is first imported, as jax.numpy
# installs its array methods.
from irgrad.numpy import tensor_methods as _tensor_methods  # noqa: E402

_tensor_methods.install()
