"""`ig.check_grads`: derivatives against central finite differences in float64.

The check is a dot-product test along random directions (as jax's `check_grads`): for
reverse mode, u . J(x) v from `vjp` against u . (f(x + eps v) - f(x - eps v)) / (2 eps); for
forward mode, `jvp` along v against the same difference. Order 2 repeats the check on the
derivative function itself. Arguments are converted to float64 (complex ones to complex128) first.

Complex values follow JAX's check: tangents and cotangents are complex, and the reverse-mode
identity is checked as jax's `check_vjp` does with irgrad's (JAX's) convention that a vjp
takes and gives conjugate cotangents: <v, conj(vjp(conj(u)))> against <J v, u>, with <a, b> the
real inner product Re(sum(conj(a) * b)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irgrad.tracing.pytree import tree_flatten, tree_unflatten


class GradientCheckError(AssertionError):
    """A derivative disagrees with finite differences; the message gives the worst error."""


def _inexact(x: Any) -> bool:
    return np.asarray(x).dtype.kind in "fc"


def _to_f64(args: Sequence[Any]) -> list[Any]:
    def conv(x: Any) -> Any:
        a = np.asarray(x)
        if a.dtype.kind == "c":
            return a.astype(np.complex128)
        return a.astype(np.float64) if a.dtype.kind == "f" else a

    leaves, tree = tree_flatten(list(args))
    return tree_unflatten(tree, [conv(x) for x in leaves])


def _wide(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64)


def _flat_float(tree: Any) -> list[np.ndarray]:
    return [_wide(x) for x in tree_flatten(tree)[0]]


def _inner(a: Any, b: Any) -> float:
    """The real inner product Re(sum(conj(a) * b)) over all leaves (jax's `inner_prod`): the
    dot product of the (re, im) pairs."""
    return float(sum(np.real(np.vdot(x.reshape(-1), y.reshape(-1))) for x, y in zip(_flat_float(a), _flat_float(b))))


def _conj(tree: Any) -> Any:
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [np.conj(x) if np.asarray(x).dtype.kind == "c" else x for x in leaves])


def _random_leaf(x: Any, rng: np.random.Generator) -> Any:
    kind = np.asarray(x).dtype.kind
    if kind == "c":
        return rng.standard_normal(np.shape(x)) + 1j * rng.standard_normal(np.shape(x))
    return rng.standard_normal(np.shape(x)) if kind == "f" else np.zeros_like(x)


def _random_like(tree: Any, rng: np.random.Generator) -> Any:
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [_random_leaf(x, rng) for x in leaves])


def _axpy(a: float, x: Any, y: Any) -> Any:
    lx, t = tree_flatten(x)
    ly, _ = tree_flatten(y)
    return tree_unflatten(t, [yy + a * xx if _inexact(yy) else yy for xx, yy in zip(lx, ly)])


def check_grads(
    fn: Callable[..., Any],
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = ("fwd", "rev"),
    eps: float = 1e-6,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    seed: int = 0,
) -> None:
    """Raises GradientCheckError with the worst relative error and where, if any check fails."""
    from irgrad.numpy.support import api
    from irgrad.frontend.transforms import jvp, vjp

    rng = np.random.default_rng(seed)
    args = _to_f64(args)

    def check(f: Callable[..., Any], xs: list[Any], level: int) -> None:
        # Traced, then run: `f` sees traced arguments, as under jvp/vjp, so code such as
        # `xs[i]` with a loop counter `i` works (on numpy arguments it could not).
        run = api(f)
        v = _random_like(xs, rng)
        plus = run(*_axpy(eps, v, xs))
        minus = run(*_axpy(-eps, v, xs))
        fd = tree_unflatten(
            tree_flatten(plus)[1],
            [(_wide(p) - _wide(m)) / (2 * eps) for p, m in zip(tree_flatten(plus)[0], tree_flatten(minus)[0])],
        )
        if "fwd" in modes:
            _, tangent = jvp(f, xs, v)
            _compare("jvp", fd, tangent, level, rtol, atol)
        if "rev" in modes:
            out, pullback = vjp(f, *xs)
            u = _random_like(out, rng)
            cts = _conj(pullback(_conj(u)))
            lhs = _inner(fd, u)
            rhs = _inner(v, cts)
            _compare_scalar("vjp", lhs, rhs, level, rtol, atol)
        if level < order:
            def derivative(*ys: Any) -> Any:
                return jvp(f, ys, v)[1] if "fwd" in modes else vjp(f, *ys)[1](_random_fixed)

            _random_fixed = _random_like(run(*xs), np.random.default_rng(seed + level))
            check(derivative, xs, level + 1)

    check(fn, list(args), 1)


def _compare(name: str, expected: Any, actual: Any, level: int, rtol: float, atol: float) -> None:
    for i, (e, a) in enumerate(zip(_flat_float(expected), _flat_float(actual))):
        err = np.abs(e - a)
        tol = atol + rtol * np.abs(e)
        if not np.all(err <= tol * 10):  # finite differences carry O(eps^2) and rounding error
            k = int(np.argmax(err - tol))
            rel = float(err.flat[k] / max(np.abs(e).flat[k], 1e-300))
            raise GradientCheckError(
                f"{name} (order {level}) disagrees with finite differences at output {i}, "
                f"flat index {k}: expected {e.flat[k]!r}, got {a.flat[k]!r} (relative error {rel:.3g})"
            )


def _compare_scalar(name: str, expected: float, actual: float, level: int, rtol: float, atol: float) -> None:
    if not abs(expected - actual) <= 10 * (atol + rtol * abs(expected)):
        rel = abs(expected - actual) / max(abs(expected), 1e-300)
        raise GradientCheckError(
            f"{name} (order {level}): u.(J v) from finite differences is {expected!r}, from vjp "
            f"{actual!r} (relative error {rel:.3g})"
        )
