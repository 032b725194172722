"""JAX-style transforms and compilation over the library: jit and its stages, grad, vjp, jvp,
vmap, jacobians, custom rules, checkpointing, debugging, `ig.distributed.jit`."""

# The transforms expect Tracer's operators (tensor_methods.install) and the library, so
# importing any of them loads the whole of irgrad/api.py. (A partly imported irgrad.api is
# returned as it is.)
import irgrad.api  # noqa: E402, F401
