"""Optimizers as pure functions over pytrees: `state = opt.init(params)` and
`params, state = opt.update(grads, state, params)`.

The state is a pytree of arrays too (the step count is an int32 scalar array), so a whole
training step - forward, loss, gradient, update - traces into one program with `ig.trace`.
Written with `ig.*` functions: on numpy arrays outside a trace they run at once on the
reference interpreter and return numpy arrays.

Hyperparameters are Python floats, so they are weakly typed: a float64 model stays float64
and a float32 model float32.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

import irgrad as ig

State = dict[str, Any]


class Optimizer(ABC):
    """The optimizer contract; every method is pure (no state is kept on the object)."""

    @abstractmethod
    def init(self, params: Any) -> State:
        """The initial state for `params` (a pytree of arrays)."""

    @abstractmethod
    def update(self, grads: Any, state: State, params: Any) -> tuple[Any, State]:
        """One step: the new params and state; `grads` has the structure of `params`."""


def _zeros_like_tree(tree: Any) -> Any:
    return ig.tree_map(ig.zeros_like, tree)


def _initial_step() -> Any:
    return ig.zeros((), ig.int32)


@dataclass(frozen=True)
class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum and (coupled) weight decay:

        g = grad + weight_decay * p
        v = momentum * v + g            (when momentum != 0; v starts at 0)
        p = p - lr * v                  (p - lr * g without momentum)

    as PyTorch's `torch.optim.SGD` (no dampening). State: `{"step"}`, plus `{"velocity"}`
    (the structure of params) when momentum != 0.
    """

    lr: float
    momentum: float = 0.0
    weight_decay: float = 0.0

    def init(self, params: Any) -> State:
        state: State = {"step": _initial_step()}
        if self.momentum != 0.0:
            state["velocity"] = _zeros_like_tree(params)
        return state

    def update(self, grads: Any, state: State, params: Any) -> tuple[Any, State]:
        if self.weight_decay != 0.0:
            grads = ig.tree_map(lambda g, p: ig.add(g, ig.multiply(self.weight_decay, p)), grads, params)
        new_state: State = {"step": ig.add(state["step"], 1)}
        direction = grads
        if self.momentum != 0.0:
            direction = ig.tree_map(
                lambda v, g: ig.add(ig.multiply(self.momentum, v), g), state["velocity"], grads
            )
            new_state["velocity"] = direction
        new_params = ig.tree_map(lambda p, d: ig.subtract(p, ig.multiply(self.lr, d)), params, direction)
        return new_params, new_state


@dataclass(frozen=True)
class Adam(Optimizer):
    """Adam (Kingma & Ba, Algorithm 1), with AdamW's decoupled weight decay when
    `weight_decay != 0` (Loshchilov & Hutter):

        t = t + 1
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat = m / (1 - b1**t),  v_hat = v / (1 - b2**t)
        p = p - lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * p)

    The decay uses the parameter before the step and is not scaled by the moment estimates,
    as in PyTorch's AdamW. State: `{"step", "m", "v"}`, m and v with the structure of params.
    """

    lr: float
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0

    def init(self, params: Any) -> State:
        return {"step": _initial_step(), "m": _zeros_like_tree(params), "v": _zeros_like_tree(params)}

    def update(self, grads: Any, state: State, params: Any) -> tuple[Any, State]:
        step = ig.add(state["step"], 1)
        m = ig.tree_map(
            lambda m, g: ig.add(ig.multiply(self.b1, m), ig.multiply(1.0 - self.b1, g)), state["m"], grads
        )
        v = ig.tree_map(
            lambda v, g: ig.add(ig.multiply(self.b2, v), ig.multiply(1.0 - self.b2, ig.square(g))),
            state["v"],
            grads,
        )
        # 1 - b**t once per parameter dtype, computed in that dtype (a float64 model gets a
        # float64 correction), not once per parameter.
        corrections: dict[np.dtype, tuple[Any, Any]] = {}

        def bias_corrections(dtype: np.dtype) -> tuple[Any, Any]:
            if dtype not in corrections:
                t = ig.astype(step, dtype)
                corrections[dtype] = (
                    ig.subtract(1.0, ig.power(self.b1, t)),
                    ig.subtract(1.0, ig.power(self.b2, t)),
                )
            return corrections[dtype]

        def new_param(p: Any, m: Any, v: Any) -> Any:
            c1, c2 = bias_corrections(ig.ShapeDtype.of(m).dtype)
            m_hat = ig.divide(m, c1)
            v_hat = ig.divide(v, c2)
            direction = ig.divide(m_hat, ig.add(ig.sqrt(v_hat), self.eps))
            if self.weight_decay != 0.0:
                direction = ig.add(direction, ig.multiply(self.weight_decay, p))
            return ig.subtract(p, ig.multiply(self.lr, direction))

        new_params = ig.tree_map(new_param, params, m, v)
        return new_params, {"step": step, "m": m, "v": v}


def sgd(lr: float, momentum: float = 0.0, weight_decay: float = 0.0) -> SGD:
    """SGD; `weight_decay` is added to the gradient (L2 regularization)."""
    return SGD(float(lr), float(momentum), float(weight_decay))


def adam(lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Adam:
    """Adam without weight decay."""
    return Adam(float(lr), float(b1), float(b2), float(eps), 0.0)


def adamw(lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01) -> Adam:
    """Adam with decoupled weight decay: `p -= lr * weight_decay * p` beside the Adam step."""
    return Adam(float(lr), float(b1), float(b2), float(eps), float(weight_decay))


# ---------------------------------------------------------------------------------------------
# Gradient clipping
# ---------------------------------------------------------------------------------------------


def global_norm(tree: Any) -> Any:
    """The 2-norm of all leaves of `tree` taken together, a float32 scalar (float64 when a
    leaf is float64); half-precision leaves are squared and summed in float32, where their
    squares neither overflow nor flush to zero."""
    leaves = ig.tree_leaves(tree)
    wide = ig.float64 if any(np.dtype(leaf.dtype) == np.float64 for leaf in leaves) else ig.float32
    total = ig.zeros((), wide)
    for leaf in leaves:
        total = total + ig.sum(ig.square(ig.astype(leaf, wide)))
    return ig.sqrt(total)


def clip_by_global_norm(grads: Any, max_norm: float) -> tuple[Any, Any]:
    """`(grads scaled by max_norm / norm where norm > max_norm, norm)`, norm = global_norm:
    the direction kept, the length at most max_norm (optax's clip_by_global_norm, PyTorch's
    clip_grad_norm_). A NaN or inf norm gives NaN gradients, which a finiteness check
    (ig.mixed_precision.all_finite) then catches: with loss scaling, unscale first, then
    clip, so that the norm is the true one."""
    if not max_norm > 0:
        raise ValueError(f"clip_by_global_norm: max_norm must be positive, got {max_norm}")
    norm = global_norm(grads)
    factor = ig.where(norm <= max_norm, 1.0, max_norm / norm)
    return ig.tree_map(lambda g: g * ig.astype(factor, g.dtype), grads), norm
