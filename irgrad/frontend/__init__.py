"""JAX-style transforms and compilation over the library: jit and its stages, grad, vjp, jvp,
vmap, jacobians, custom rules, checkpointing, debugging, `ig.distributed.jit`."""

