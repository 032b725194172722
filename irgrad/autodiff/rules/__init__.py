"""Derivative rules, one small function per op and mode, grouped by op category.

Importing this package fills the tables in irgrad/autodiff/registry.py (which imports no rule); the
`autodiff` pass calls `load_rules`, which also loads the shard rules once the shard dialect is loaded.
To add a rule, put a `@vjp_rule` and a `@jvp_rule` function next to the rules of the op's siblings
(docs/autodiff.md, "Adding a rule"):

- elementwise.py: nn/arith/math elementwise ops, select, convert, and the zero-derivative ops;
- reduction.py: reduce_sum, reduce_max, reduce_min;
- data_movement.py: broadcast_in_dim, reshape, transpose, slice, dynamic slices, concatenate, pad, gather,
  scatter_add;
- linear.py: matmul, conv2d;  pooling.py: max_pool2d;
- linalg.py: cholesky, triangular_solve, lu;
- func.py: func.call;  autodiff.py: stop_gradient, custom_vjp, checkpoint;
- scf.py: scf.if, scf.for, scf.while (loops.py and outline.py hold what they share); their batching
  rules in scf_batching.py;
- tensor.py: tensor.extract, tensor.insert, tensor.from_elements, tensor.splat, tensor.empty;
- shard.py: shard.shard (the sharding constraint) and the collectives of per-device programs
  (imported by `load_rules` once the shard dialect is loaded, not here);
- debug.py: debug.print (no derivative; a batching rule).
"""

from irgrad.autodiff.rules import (  # noqa: F401  (imported for their registrations)
    autodiff,
    data_movement,
    debug,
    elementwise,
    func,
    linalg,
    linear,
    pooling,
    reduction,
    scf,
    scf_batching,
    tensor,
)


def load_rules() -> None:
    """Import every rule module, filling the tables (idempotent).

    The shard rules load only once the shard dialect has: a program can hold shard ops only
    after that, and a first `ig.jit` call need not import the dialect (and xDSL's) for them."""
    import sys

    if "irgrad.dialects.shard" in sys.modules:
        import irgrad.autodiff.rules.shard  # noqa: F401  (registers on import)
