"""Shared pieces of the CPU differential suite (tests/unit/test_cpu_differential_*.py).

The oracle is the reference interpreter; the subject is the whole CPU pipeline (`irgrad-cpu`:
autodiff, convert-nn-to-linalg, fusion, bufferize, loops, convert-to-llvm, LLVM O3, MCJIT).

Two ways in:
- `compile_batch(funcs)`: many `func.func`s (one per case) in one module, interpreted one by
  one on their `nn` IR and compiled together once (compiling costs 0.3-1.5 s per module, so
  hundreds of small cases share one compile). If the batch fails to lower or compile, each
  function is compiled alone so the error lands on the case that caused it.
- `jit_both(fn, *args)`: a Python function through `ig.jit(backend="interp")` and
  `ig.jit(backend="cpu")`.

Tolerances (`assert_same_results`): the issue's, 1e-5 relative in f32 and 1e-12 in f64, one
ulp in f16/bf16 (`_cpu_util.RTOL`); integers and bools exactly; NaN where NaN, infinities
with their signs. `exact=True` asks for bit equality (signed zeros included): every op that
is not a transcendental function or a sum computes the same IEEE operations on both sides.
`normwise=True` measures the error relative to the largest magnitude of the result instead
of elementwise, for results accumulated in another order than numpy's (sums, matmul, conv2d,
gradients): an element that is a difference of nearly equal terms has a relative error that
says nothing about the compiler.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

import irgrad as ig
from _cpu_util import assert_close
from irgrad.backends.cpu import CompiledModule, compile_module
from irgrad.backends.interpreter import run_function
from irgrad.diagnostics import parse_module
from irgrad.context import make_context
from irgrad.frontend.stages import _print
from irgrad.pipelines import CPU_PIPELINE
from irgrad.registry import run_pipeline


def assert_same_results(
    expected: Sequence[Any], got: Sequence[Any], *, exact: bool = False, normwise: bool = False, what: str = ""
) -> None:
    """Each result of the interpreter against the CPU backend's (see the module docstring)."""
    assert len(got) == len(expected), f"{what}: {len(got)} results, expected {len(expected)}"
    for k, (e, g) in enumerate(zip(expected, got)):
        e, g = np.asarray(e), np.asarray(g)
        if exact and e.dtype.kind not in "biu" and e.shape == g.shape:
            # Bit equality with NaN payloads ignored; signed zeros count.
            assert_close(e, g, exact=True, what=f"{what} result #{k}")
        else:
            assert_close(e, g, normwise=normwise, what=f"{what} result #{k}")


def assert_same_trees(expected: Any, got: Any, *, normwise: bool = True, what: str = "") -> None:
    """Two pytrees of results: the same structure, then `assert_same_results` leaf by leaf."""
    e_leaves, e_tree = ig.tree_flatten(expected)
    g_leaves, g_tree = ig.tree_flatten(got)
    assert g_tree == e_tree, f"{what}: result structure {g_tree}, expected {e_tree}"
    assert_same_results(e_leaves, g_leaves, normwise=normwise, what=what)


def jit_both(fn: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    """(interpreter result, CPU result) of `fn(*args)`, each through `ig.jit`."""
    with np.errstate(all="ignore"):
        expected = ig.jit(fn, backend="interp")(*args)
    got = ig.jit(fn, backend="cpu")(*args)
    return expected, got


def check_jit(fn: Callable[..., Any], *args: Any, normwise: bool = True, what: str = "") -> Any:
    """`fn(*args)` on both backends, compared; the inputs must come back unchanged."""
    copies = [np.array(leaf, copy=True) for leaf in ig.tree_leaves(list(args))]
    expected, got = jit_both(fn, *args)
    assert_same_trees(expected, got, normwise=normwise, what=what or getattr(fn, "__name__", "fn"))
    for k, (before, after) in enumerate(zip(copies, ig.tree_leaves(list(args)))):
        np.testing.assert_array_equal(np.asarray(after), before, err_msg=f"{what}: input leaf #{k} was written")
    return got


# ---------------------------------------------------------------------------------------------
# Batches of functions in one module
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one function of a batch gave: the interpreter's and the CPU's results, or the
    error that stopped it (lowering, compiling, or calling)."""

    expected: tuple[Any, ...] = ()
    got: tuple[Any, ...] = ()
    error: BaseException | None = None
    compiled_alone: bool = False

    def results(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        if self.error is not None:
            alone = " (compiled alone, after the batch failed)" if self.compiled_alone else ""
            raise AssertionError(f"CPU pipeline failed{alone}: {type(self.error).__name__}: {self.error}") from self.error
        return self.expected, self.got


def lower_and_compile(module: ModuleOp) -> CompiledModule:
    """A copy of `module` (nn IR) through the whole `irgrad-cpu` pipeline, compiled."""
    lowered = module.clone()
    run_pipeline(lowered, CPU_PIPELINE)
    return compile_module(lowered)


def _call(compiled: CompiledModule, func: FuncOp, args: Sequence[Any]) -> tuple[Any, ...]:
    ft = func.function_type
    fn = compiled.function(func.sym_name.data, list(ft.inputs.data), list(ft.outputs.data))
    return fn(*args)


def compile_batch(funcs: Sequence[FuncOp], inputs: Sequence[Sequence[Any]]) -> list[Outcome]:
    """Interpret each function on its inputs, compile them all in one module, call, return
    one `Outcome` per function (see the module docstring for the fallback)."""
    module = ModuleOp(list(funcs))
    module.verify()
    outcomes = []
    for func, args in zip(funcs, inputs):
        with np.errstate(all="ignore"):
            try:
                outcomes.append(Outcome(expected=tuple(run_function(module, func.sym_name.data, list(args)))))
            except Exception as err:  # the oracle itself failed: report it on the case
                outcomes.append(Outcome(error=err))
    try:
        compiled: CompiledModule | None = lower_and_compile(module)
    except Exception:
        compiled = None
    for func, args, outcome in zip(funcs, inputs, outcomes):
        if outcome.error is not None:
            continue
        try:
            if compiled is None:
                outcome.compiled_alone = True
                alone = ModuleOp([func.clone()])
                outcome.got = _call(lower_and_compile(alone), func, args)
            else:
                outcome.got = _call(compiled, func, args)
        except Exception as err:
            outcome.error = err
    return outcomes


def prefix_symbols(module: ModuleOp, prefix: str) -> str:
    """The body of `module` (printed, without `builtin.module`) with every symbol `@name`
    renamed `@<prefix>name`, so several modules' functions can share one module."""
    text = _print(module).strip()
    assert text.startswith("builtin.module {") and text.endswith("}"), text[:40]
    body = text[len("builtin.module {") : -1]
    return re.sub(r"@([A-Za-z_][\w$.]*)", lambda m: f"@{prefix}{m.group(1)}", body)


def merge(bodies: Sequence[str]) -> ModuleOp:
    """One module from `prefix_symbols` bodies."""
    return parse_module(make_context(), "builtin.module {\n" + "\n".join(bodies) + "\n}")


def rss_bytes() -> int:
    """The process's resident set size, from /proc/self/statm."""
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
