"""jax.scipy's names: `ig.special` (special.py).
"""

# The library's modules expect Tracer's operators (tensor_methods.install) and each other, so
# importing any of them loads the whole of irgrad/api.py. (A partly imported irgrad.api, while
# it imports these modules itself, is returned as it is.)
import irgrad.api  # noqa: E402, F401
