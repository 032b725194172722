"""Derivative rules, one small function per op and mode, grouped by op category.

Importing this package fills the tables in irgrad/autodiff/registry.py. To add a rule, put a `@vjp_rule`
and a `@jvp_rule` function next to the rules of the op's siblings (docs/autodiff.md, "Adding a rule"):

- elementwise.py: nn/arith/math elementwise ops, select, convert, and the zero-derivative ops;
- reduction.py: reduce_sum, reduce_max, reduce_min;
- data_movement.py: broadcast_in_dim, reshape, transpose, slice, dynamic slices, concatenate, pad, gather,
  scatter_add;
- linear.py: matmul, conv2d;  pooling.py: max_pool2d;
- linalg.py: cholesky, triangular_solve, lu;
- func.py: func.call;  autodiff.py: stop_gradient, custom_vjp, checkpoint;
- scf.py: scf.if, scf.for, scf.while (loops.py and outline.py hold what they share);
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
    tensor,
)
