"""Nothing a user passes to a CPU-compiled function crashes the process.

Arrays the generated code cannot read in place (Fortran order, strided views, negative and
zero strides from `np.broadcast_to`, big-endian, misaligned, read-only, subclasses, memory
maps) give the interpreter's results on a clean copy; wrong shapes, dtypes, pytree
structures, kinds and out-of-range scalars give errors that name the argument; and a program
whose intermediate buffer cannot be allocated raises MemoryError instead of writing through a
NULL pointer (checked in a subprocess, so a regression fails the test instead of killing the
test run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import irgrad as ig
from _differential import assert_same_trees
from irgrad.backends.cpu import ArgumentError
from irgrad.tracing.errors import ConcretizationError, DTypeError, ShapeError
from irgrad.frontend.stages import SignatureError

pytestmark = pytest.mark.usefixtures("no_disk_cache")


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")


def program(x: Any, params: Any, scale: Any) -> Any:
    h = ig.tanh(x @ params["w"] + params["b"]) * scale
    return {"h": h, "total": ig.sum(h), "rows": ig.max(h, axis=1)}


X = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
W = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
B = np.linspace(0, 1, 5, dtype=np.float32)


def reference(x: Any, params: Any, scale: Any) -> Any:
    clean = ig.tree_map(lambda a: np.ascontiguousarray(np.asarray(a), dtype=np.asarray(a).dtype.newbyteorder("=")), (x, params))
    return ig.jit(program, backend="interp")(*clean, scale)


def misaligned(a: np.ndarray) -> np.ndarray:
    raw = np.zeros(a.nbytes + 1, np.uint8)
    out = raw[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def readonly(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out.flags.writeable = False
    return out


def memmap(a: np.ndarray, tmp: Path) -> np.ndarray:
    out = np.lib.format.open_memmap(tmp / "x.npy", mode="w+", dtype=a.dtype, shape=a.shape)
    out[...] = a
    return out


LAYOUTS: dict[str, Callable[..., tuple[Any, Any]]] = {
    "fortran_order": lambda tmp: (np.asfortranarray(X), {"w": np.asfortranarray(W), "b": B}),
    "strided_view": lambda tmp: (np.repeat(X, 2, axis=1)[:, ::2], {"w": W[:, :], "b": np.repeat(B, 3)[::3]}),
    "negative_strides": lambda tmp: (X[::-1, ::-1].copy()[::-1, ::-1], {"w": W[::-1][::-1], "b": B[::-1].copy()[::-1]}),
    "zero_strides": lambda tmp: (np.broadcast_to(X[:1], (3, 4)), {"w": W, "b": np.broadcast_to(np.float32(0.5), (5,))}),
    "big_endian": lambda tmp: (X.astype(">f4"), {"w": W.astype(">f4"), "b": B.astype(">f4")}),
    "misaligned": lambda tmp: (misaligned(X), {"w": misaligned(W), "b": B}),
    "read_only": lambda tmp: (readonly(X), {"w": readonly(W), "b": readonly(B)}),
    "subclass": lambda tmp: (np.asmatrix(X), {"w": W.view(type("Sub", (np.ndarray,), {})), "b": B}),
    "memory_map": lambda tmp: (memmap(X, tmp), {"w": W, "b": B}),
}


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_arrays_of_any_layout_give_the_interpreters_results(layout: str, tmp_path: Path) -> None:
    x, params = LAYOUTS[layout](tmp_path)
    jitted = ig.jit(program, backend="cpu")
    for scale in (2.0, np.float32(-1.5)):
        got = jitted(x, params, scale)
        assert_same_trees(reference(x, params, scale), got, normwise=False, what=layout)
    compiled = jitted.lower(X, {"w": W, "b": B}, 2.0).compile()
    assert_same_trees(reference(x, params, 2.0), compiled(x, params, 2.0), normwise=False, what=f"{layout} (compiled)")
    # The results are fresh, writable arrays, not views of the inputs.
    out = jitted(x, params, 2.0)["h"]
    assert out.flags.writeable and out.flags.c_contiguous and not np.shares_memory(out, np.asarray(x))


def test_inputs_are_never_written() -> None:
    def updates(x: Any, i: Any) -> Any:
        y = ig.fori_loop(0, 3, lambda k, c: c * 2.0 + 1.0, x)  # the loop carry starts as x
        return y, ig.concatenate([x, x]), x

    x = X.copy()
    out = ig.jit(updates, backend="cpu")(x, np.int32(1))
    np.testing.assert_array_equal(x, X)
    assert not any(np.shares_memory(o, x) for o in out)


COMPILED_MISUSE: dict[str, tuple[tuple[Any, ...], type[Exception], str]] = {
    "wrong_shape": ((X.T, {"w": W, "b": B}, 2.0), SignatureError, r"argument x has shape \(4, 3\).*takes shape \(3, 4\)"),
    "wrong_dtype": ((X.astype(np.float64), {"w": W, "b": B}, 2.0), SignatureError, "argument x .* dtype float64"),
    "int_array": ((X.astype(np.int32), {"w": W, "b": B}, 2.0), SignatureError, "argument x .* dtype int32"),
    "wrong_structure": ((X, [W, B], 2.0), SignatureError, r"argument #1: got a list of 2, expected a dict with keys \['b', 'w'\]"),
    "missing_key": ((X, {"w": W}, 2.0), SignatureError, r"argument #1: got a dict with keys \['w'\], expected a dict with keys \['b', 'w'\]"),
    "extra_argument": ((X, {"w": W, "b": B}, 2.0, 1.0), SignatureError, r"takes 3 argument\(s\), got 4"),
    "missing_argument": ((X, {"w": W, "b": B}), SignatureError, r"takes 3 argument\(s\), got 2"),
    "none": ((X, {"w": W, "b": B}, None), SignatureError, "argument #2: got None, expected an array or scalar"),
    "string": ((X, {"w": W, "b": B}, "2"), SignatureError, "argument scale .* dtype <U1"),
    "object_array": ((X.astype(object), {"w": W, "b": B}, 2.0), SignatureError, "dtype object"),
    "complex": ((X.astype(np.complex64), {"w": W, "b": B}, 2.0), SignatureError, "dtype complex64"),
    "array_for_scalar": ((X, {"w": W, "b": B}, np.ones(1, np.float32)), SignatureError, r"argument scale has shape \(1,\)"),
    "scalar_for_array": ((np.float32(1), {"w": W, "b": B}, 2.0), SignatureError, r"argument x has shape \(\)"),
    # A Python float is traced weakly typed at float64 (as jax.jit with x64): a float32 scalar differs.
    "f32_scalar": ((X, {"w": W, "b": B}, np.float32(2.0)), SignatureError, "argument scale .* dtype float32"),
    "ragged_list": (([[1.0, 2.0], [3.0]], {"w": W, "b": B}, 2.0), SignatureError, "argument #0: got a list of 2, expected an array or scalar"),
}


@pytest.mark.parametrize("name", list(COMPILED_MISUSE))
def test_compiled_function_rejects_other_signatures_naming_the_argument(name: str) -> None:
    args, error, message = COMPILED_MISUSE[name]
    compiled = ig.jit(program, backend="cpu").lower(X, {"w": W, "b": B}, 2.0).compile()
    with pytest.raises(error, match=message):
        compiled(*args)
    # And it still works afterwards.
    assert_same_trees(reference(X, {"w": W, "b": B}, 2.0), compiled(X, {"w": W, "b": B}, 2.0), normwise=False)


JIT_MISUSE: dict[str, tuple[tuple[Any, ...], type[Exception] | tuple[type[Exception], ...], str]] = {
    "shapes_that_do_not_multiply": ((X.T, {"w": W, "b": B}, 2.0), ShapeError, "matmul"),
    "string": ((X, {"w": W, "b": B}, "2"), DTypeError, "<U1"),
    "none": ((X, {"w": W, "b": B}, None), DTypeError, "object"),
    "complex": ((X.astype(np.complex64), {"w": W, "b": B}, 2.0), DTypeError, "complex64"),
    "object_array": ((X.astype(object), {"w": W, "b": B}, 2.0), DTypeError, "object"),
    "huge_python_int": ((X, {"w": W, "b": B}, 10**400), OverflowError, "too large"),
    # A Python int is a weakly typed int64 (2**40 is fine): past int64 it cannot be passed.
    "int64_out_of_range": ((X, {"w": W, "b": B}, 2**63), OverflowError, "too large"),
    "missing_key": ((X, {"w": W}, 2.0), KeyError, "b"),
    # Lists are pytrees (as in JAX): a list of rows is a list of scalar leaves, not an array.
    "python_list_for_an_array": ((X, {"w": W.tolist(), "b": B}, 2.0), ConcretizationError, "traced"),
}


@pytest.mark.parametrize("name", list(JIT_MISUSE))
def test_jit_rejects_what_it_cannot_trace(name: str) -> None:
    args, error, message = JIT_MISUSE[name]
    with pytest.raises(error, match=message):
        ig.jit(program, backend="cpu")(*args)


def test_jit_retraces_for_new_shapes_and_dtypes() -> None:
    jitted = ig.jit(program, backend="cpu")
    for x, params in [
        (X, {"w": W, "b": B}),
        (X[:2], {"w": W, "b": B}),
        (X.astype(np.float64), {"w": W.astype(np.float64), "b": B.astype(np.float64)}),
        (X.astype(np.float16), {"w": W.astype(np.float16), "b": B.astype(np.float16)}),
        (X, {"w": W.astype(np.float64), "b": B}),  # promoted to f64 in the program
    ]:
        assert_same_trees(reference(x, params, 2.0), jitted(x, params, 2.0), normwise=False)


def test_runtime_checks_arguments_before_the_call() -> None:
    compiled = ig.jit(lambda a, n: a * n, backend="cpu").lower(X, np.int32(3)).compile()
    with pytest.raises(OverflowError, match="3000000000 out of bounds for int32"):
        compiled(X, 3_000_000_000)
    function = compiled._function  # the runtime's CompiledFunction under `Compiled`
    with pytest.raises(ArgumentError, match=r"argument #1 .*expected an array of shape \(\) and dtype int32.*got a int"):
        function(X, 3)
    with pytest.raises(ArgumentError, match=r"takes 2 argument\(s\), got 1"):
        function(X)
    with pytest.raises(ArgumentError, match=r"argument #0 .*expected an array of shape \(3, 4\).*got a list"):
        function([1.0], np.int32(3))
    with pytest.raises(ArgumentError, match=r"argument #0 .*got an array of shape \(4, 3\)"):
        function(X.T, np.int32(3))
    np.testing.assert_array_equal(function(X, np.int32(3))[0], X * 3)


OUT_OF_MEMORY = """
import threading
import numpy as np
import irgrad as ig
from _cpu_util import function

# A loops-stage function whose buffer (2**52 bytes) no machine can allocate: the generated code
# used to write through the NULL that aligned_alloc returned (SIGSEGV). (The load at a run-time
# index keeps LLVM from forwarding the store and deleting the allocation.)
HUGE = '''
func.func @huge(%x: memref<4xf32>, %i: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %small = memref.alloc() : memref<64xf32>
  %tmp = memref.alloc() : memref<1125899906842624xf32>
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %tmp[%c0] : memref<1125899906842624xf32>
  memref.store %v, %small[%c0] : memref<64xf32>
  %w = memref.load %tmp[%i] : memref<1125899906842624xf32>
  memref.store %w, %out[%c0] : memref<4xf32>
  memref.dealloc %tmp : memref<1125899906842624xf32>
  memref.dealloc %small : memref<64xf32>
  func.return
}
func.func @fine(%x: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %tmp = memref.alloc() : memref<4xf32>
  "memref.copy"(%x, %tmp) : (memref<4xf32>, memref<4xf32>) -> ()
  "memref.copy"(%tmp, %out) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %tmp : memref<4xf32>
  func.return
}
'''
x = np.arange(4, dtype=np.float32)
huge, fine = function(HUGE, "huge", 2), function(HUGE, "fine", 1)
for _ in range(3):
    try:
        huge(x, 0)
        raise SystemExit("no MemoryError")
    except MemoryError as err:
        assert "could not allocate a buffer of 4503599627370496 bytes" in str(err), err
    np.testing.assert_array_equal(fine(x)[0], x)

# Several threads, each failing and succeeding in turn: each has its own escape buffer.
errors = []
def worker():
    try:
        for _ in range(200):
            try:
                huge(x, 0)
                errors.append("no MemoryError")
            except MemoryError:
                pass
            np.testing.assert_array_equal(fine(x)[0], x)
    except Exception as err:
        errors.append(repr(err))
threads = [threading.Thread(target=worker) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
assert not errors, errors[:3]

# From the API: an intermediate of 2**23 x 2**23 float32 (2**48 bytes) from ordinary inputs.
n = 2**23
f = ig.jit(lambda v, w: (v[:, None] * v[None, :]) @ w, backend="cpu")
try:
    f(np.ones(n, np.float32), np.ones((n, 1), np.float32))
    raise SystemExit("no MemoryError")
except MemoryError as err:
    assert "out of memory" in str(err), err
print("alive")
"""


def test_allocation_failure_is_a_memory_error_not_a_crash() -> None:
    here = Path(__file__).resolve().parents[2]  # tests/unit: the shared helpers
    env = dict(os.environ, IRGRAD_CACHE_DIR="off", PYTHONPATH=os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(OUT_OF_MEMORY)], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0 and result.stdout.strip() == "alive", (
        f"exit status {result.returncode} (negative: killed by that signal)\n{result.stdout}\n{result.stderr[-3000:]}"
    )
