"""The CPU backend vectorizes elementwise f32 loops (LLVM's loop vectorizer at O3).

The optimized LLVM IR of a compiled elementwise function (`CompiledModule.optimized_ir`) must
hold float vectors, and on x86 its machine code packed single-precision arithmetic on
xmm/ymm/zmm registers. Any width of 4 or more passes, so the test holds on SSE-only, AVX2
and AVX-512 machines alike (and on AArch64 NEON for the IR part).
"""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, f32

import irgrad as ig
from _cpu_util import lower, parse
from irgrad.backends.cpu import compile_module, host_target

N = 4096

ELEMENTWISE = f"""
func.func @fma_like(%x: memref<{N}xf32>, %y: memref<{N}xf32>, %out: memref<{N}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {N} : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %cn step %c1 {{
    %a = memref.load %x[%i] : memref<{N}xf32>
    %b = memref.load %y[%i] : memref<{N}xf32>
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %p, %one : f32
    memref.store %r, %out[%i] : memref<{N}xf32>
  }}
  func.return
}}
"""

VECTOR_TYPE = re.compile(r"<(\d+) x float>")
PACKED_SINGLE = re.compile(
    r"^\s*v?(?:add|mul|sub|fmadd\w*|fnmadd\w*)ps\b.*%([xyz])mm\d+", re.MULTILINE
)
REGISTER_FLOATS = {"x": 4, "y": 8, "z": 16}


def vector_widths(ir: str) -> set[int]:
    return {int(n) for n in VECTOR_TYPE.findall(ir)}


def assert_vectorized(ir: str | None) -> None:
    assert ir is not None, "no optimized IR: the module was loaded from object code"
    widths = vector_widths(ir)
    assert widths and max(widths) >= 4, f"no float vectors of 4 or more lanes: {sorted(widths)}"
    assert re.search(r"fmul (?:\w+ )*<\d+ x float>|fadd (?:\w+ )*<\d+ x float>", ir) or re.search(
        r"llvm\.fmuladd\.v\d+f32|llvm\.fma\.v\d+f32", ir
    ), "float vectors, but no vector arithmetic on them"


def is_x86() -> bool:
    return host_target().triple.split("-")[0] in ("x86_64", "i386", "i686")


def assert_packed_assembly(ir: str) -> None:
    """The machine code computes on vector registers with packed-single instructions."""
    asm = host_target().target_machine().emit_assembly(llvm.parse_assembly(ir))
    lanes = {REGISTER_FLOATS[r] for r in PACKED_SINGLE.findall(asm)}
    assert lanes, "no packed single-precision arithmetic in the assembly"
    assert max(lanes) >= 4


def test_elementwise_loop_vectorizes_through_the_backend_api():
    compiled = compile_module(lower(parse(ELEMENTWISE)))
    assert_vectorized(compiled.optimized_ir)
    x = np.linspace(-1, 1, N, dtype=np.float32)
    y = np.linspace(2, 3, N, dtype=np.float32)
    t = MemRefType(f32, [N])
    (out,) = compiled.function("fma_like", [t, t], [t])(x, y)
    np.testing.assert_allclose(out, x * y + 1, rtol=1e-6)
    if is_x86():
        assert_packed_assembly(compiled.optimized_ir)


def test_jitted_elementwise_function_vectorizes(monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    x = np.linspace(-1, 1, N, dtype=np.float32)
    y = np.linspace(2, 3, N, dtype=np.float32)
    compiled = ig.jit(lambda a, b: a * b + 1.0, backend="cpu").lower(x, y).compile()
    assert_vectorized(compiled.module.optimized_ir)
    np.testing.assert_allclose(compiled(x, y), x * y + 1, rtol=1e-6)
    if not is_x86():
        pytest.skip("the assembly check is for x86")
    assert_packed_assembly(compiled.module.optimized_ir)
