"""Pytrees: nested tuples, lists, dicts (and None) of leaves, flattened in a fixed order.

Model parameters are pytrees; every transform flattens its arguments and results with this
module, so their structure (the treedef) is part of a compiled function's signature.
Dict keys are visited in sorted order, as in jax.tree_util, so the flat order is stable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree with its leaves removed; hashable, so usable as a cache key."""

    kind: str  # "leaf", "none", "tuple", "list", "dict"
    children: tuple[TreeDef, ...] = ()
    keys: tuple[Any, ...] = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(
            f"{k!r}: {c!r}" if self.kind == "dict" else repr(c)
            for k, c in zip(self.keys or [None] * len(self.children), self.children)
        )
        return {"tuple": f"({inner})", "list": f"[{inner}]", "dict": f"{{{inner}}}"}[self.kind]


LEAF = TreeDef("leaf")


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeDef]:
    leaves: list[Any] = []

    def visit(node: Any) -> TreeDef:
        if is_leaf is not None and is_leaf(node):
            leaves.append(node)
            return LEAF
        if node is None:
            return TreeDef("none")
        if isinstance(node, tuple) and not hasattr(node, "_fields"):
            return TreeDef("tuple", tuple(visit(c) for c in node))
        if isinstance(node, list):
            return TreeDef("list", tuple(visit(c) for c in node))
        if isinstance(node, dict):
            keys = tuple(sorted(node))
            return TreeDef("dict", tuple(visit(node[k]) for k in keys), keys)
        leaves.append(node)
        return LEAF

    treedef = visit(tree)
    return leaves, treedef


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    it = iter(leaves)

    def build(td: TreeDef) -> Any:
        if td.kind == "leaf":
            return next(it)
        if td.kind == "none":
            return None
        children = [build(c) for c in td.children]
        if td.kind == "tuple":
            return tuple(children)
        if td.kind == "list":
            return children
        return dict(zip(td.keys, children))

    result = build(treedef)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef!r}")
    return result


_SENTINEL = object()


def tree_leaves(tree: Any) -> list[Any]:
    return tree_flatten(tree)[0]


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    leaves, treedef = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    for r, other in zip(rest, others):
        if len(other) != len(leaves):
            raise ValueError(
                f"tree_map: structures differ: {treedef!r} vs {tree_flatten(r)[1]!r}"
            )
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def tree_leaf_names(tree: Any, prefix: str) -> list[str]:
    """Readable names for the leaves, in flat order: `params_w`, `params_layers_0_b`, `x`."""
    names: list[str] = []

    def visit(node: Any, path: str) -> None:
        if node is None:
            return
        if isinstance(node, (tuple, list)) and not hasattr(node, "_fields"):
            for i, c in enumerate(node):
                visit(c, f"{path}_{i}")
        elif isinstance(node, dict):
            for k in sorted(node):
                visit(node[k], f"{path}_{k}")
        else:
            names.append(path)

    visit(tree, prefix)
    return names


def _describe(td: TreeDef) -> str:
    if td.kind == "leaf":
        return "an array or scalar"
    if td.kind == "none":
        return "None"
    if td.kind == "dict":
        return f"a dict with keys {list(td.keys)!r}"
    return f"a {td.kind} of {len(td.children)}"


def tree_difference(got: TreeDef, want: TreeDef, path: str) -> str | None:
    """Where two structures first differ, as "<path>: got X, expected Y" (paths as in
    `tree_leaf_names`: `params_w`, `batch_0`), or None when they are equal."""
    if got == want:
        return None
    if got.kind != want.kind or len(got.children) != len(want.children) or got.keys != want.keys:
        return f"{path}: got {_describe(got)}, expected {_describe(want)}"
    labels = want.keys if want.kind == "dict" else range(len(want.children))
    for label, g, w in zip(labels, got.children, want.children):
        found = tree_difference(g, w, f"{path}_{label}")
        if found is not None:
            return found
    return f"{path}: got {got!r}, expected {want!r}"
