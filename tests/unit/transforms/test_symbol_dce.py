"""symbol-dce in the CPU pipeline: traced callees of transforms are private, and once the
autodiff pass has replaced the request that named them, they are not compiled.

The pass's own cases (chains, nested tables, globals) are in
tests/filecheck/transforms/symbol-dce.mlir; this checks the frontend and pipeline together.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import irgrad as ig

W = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
X = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)

_FUNC = re.compile(r"func\.func (?:(private|nested) )?@([\w$.]+)")


def loss(w, x):
    return ig.sum(ig.tanh(x @ w) ** 2)


def loss_checkpointed(w, x):
    return ig.sum(ig.checkpoint(lambda h: ig.tanh(h) ** 2)(x @ w))


def functions(text: str) -> dict[str, str]:
    """Symbol name -> visibility of the func.funcs in `text`."""
    return {name: vis or "public" for vis, name in _FUNC.findall(text)}


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")


@pytest.mark.parametrize("fn", [loss, loss_checkpointed], ids=["plain", "checkpoint"])
def test_value_and_grad_compiles_no_dead_primal(fn):
    jitted = ig.jit(ig.value_and_grad(fn), backend="cpu")
    lowered = jitted.lower(W, X)
    entry = lowered.program.entry

    traced = functions(lowered.as_text("nn"))
    assert traced[entry] == "public"
    assert [vis for name, vis in traced.items() if name != entry] == ["private"] * (len(traced) - 1)
    primal = f"{entry}_1"
    assert primal in traced  # the callee of value_and_grad, traced as its own function

    # After autodiff only the vjp was called, and `inline` put it in the entry: the forward-only
    # copy and the vjp function are both gone, one public function is left.
    loops = functions(lowered.as_text("loops"))
    assert list(loops) == [entry] and loops[entry] == "public"

    value, grad = jitted(W, X)
    want_value, want_grad = ig.jit(ig.value_and_grad(fn), backend="interp")(W, X)
    np.testing.assert_allclose(value, want_value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-5, atol=1e-6)


def test_only_the_entry_is_an_exported_definition_in_llvm():
    llvm = ig.jit(ig.value_and_grad(loss), backend="cpu").lower(W, X).as_text("llvm")
    # Definitions end their line with `{`; declarations (aligned_alloc, free) have no body.
    exported = re.findall(r"^  llvm\.func @(\w+)\(.*\{$", llvm, flags=re.MULTILINE)
    assert [name for name in exported if not name.startswith("_irgrad_packed_")] == ["loss"]
    assert re.findall(r"^  llvm\.func internal @(\w+)\(", llvm, flags=re.MULTILINE) == []  # inlined
