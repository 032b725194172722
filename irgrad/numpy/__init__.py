"""`ig.*`'s numpy names (jax.numpy's peer): array functions that trace to `nn` IR, or run at
once on numpy arrays, with numpy's broadcasting and JAX's dtype promotion.
"""

# The library's modules expect Tracer's operators (tensor_methods.install) and each other, so
# importing any of them loads the whole of irgrad/api.py. (A partly imported irgrad.api, while
# it imports these modules itself, is returned as it is.)
import irgrad.api  # noqa: E402, F401
