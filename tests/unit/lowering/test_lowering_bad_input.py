"""Bad input to the CPU lowering passes and the LLVM translation: located errors, not crashes.

The irgrad-opt side of each case is in tests/filecheck/lowering (convert-scf-parallel-to-*.mlir,
convert-linalg-to-blas.mlir, linalg-fuse-elementwise.mlir, translate-llvm*.mlir); these check
the Python API the JIT uses: the error class, its location, and that a bad option is refused
when the pass is built.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from irgrad.backends.cpu.translate import TranslationError, to_llvm_ir
from irgrad.diagnostics import PassError, parse_module
from irgrad.context import make_context
from irgrad.lowering.nn_to_linalg.linalg_fuse_elementwise import LinalgFuseElementwisePass
from irgrad.lowering.loops.linalg_to_blas import ConvertLinalgToBlasPass
from irgrad.registry import run_pipeline
from irgrad.lowering.llvm.scf_parallel_to_threads import ConvertScfParallelToThreadsPass


def parse(text: str) -> ModuleOp:
    return parse_module(make_context(), text, "input.mlir")


ZERO_DIMENSIONAL_LOOP = """
func.func @f(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  "scf.parallel"() <{operandSegmentSizes = array<i32: 0, 0, 0, 0>}> ({
  ^bb0:
    %v = memref.load %m[%c0] : memref<4xf32>
    memref.store %v, %m[%c0] : memref<4xf32>
    scf.reduce
  }) : () -> ()
  func.return
}
"""


@pytest.mark.parametrize(
    "spec", ["convert-scf-parallel-to-scf", "convert-scf-parallel-to-threads", "convert-to-llvm"]
)
def test_scf_parallel_without_dimensions_is_a_located_error(spec: str) -> None:
    # It was an IndexError in both passes.
    with pytest.raises(PassError, match="'scf.parallel' op has no loop dimensions") as info:
        run_pipeline(parse(ZERO_DIMENSIONAL_LOOP), spec)
    assert info.value.location is not None
    assert (info.value.location.file, info.value.location.line) == ("input.mlir", 4)


def test_linalg_to_blas_rejects_tensors() -> None:
    module = parse(
        """
func.func @f(%a: tensor<32x48xf32>, %b: tensor<48x40xf32>, %c: tensor<32x40xf32>) -> tensor<32x40xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x48xf32>, tensor<48x40xf32>) outs(%c : tensor<32x40xf32>) -> tensor<32x40xf32>
  func.return %r : tensor<32x40xf32>
}
"""
    )
    with pytest.raises(PassError, match="requires buffer semantics; run bufferize first"):
        run_pipeline(module, "convert-linalg-to-blas")


@pytest.mark.parametrize(
    "build",
    [
        lambda: ConvertScfParallelToThreadsPass(min_work=-1),
        lambda: ConvertLinalgToBlasPass(min_flops=-1),
        lambda: LinalgFuseElementwisePass(recompute_limit=-1),
    ],
)
def test_negative_thresholds_are_refused(build) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="must be at least 0, got -1"):
        build()


def test_fusion_rejects_a_yield_of_the_wrong_type() -> None:
    module = parse(
        """
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.fptosi %a : f32 to i32
    linalg.yield %r : i32
  } -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
"""
    )
    with pytest.raises(PassError, match=r"'linalg.yield' op type of yield operand 1 \('i32'\)"):
        run_pipeline(module, "linalg-fuse-elementwise")


def test_translation_rejects_two_signatures_of_one_intrinsic() -> None:
    # It was llvmlite's TypeError "Type of #3 arg mismatch: i64 != i32".
    module = parse(
        """
builtin.module {
  llvm.func @f(%p: !llvm.ptr, %q: !llvm.ptr, %n: i64, %m: i32) {
    %false = llvm.mlir.constant(false) : i1
    llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%p, %q, %n, %false) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
    llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%q, %p, %m, %false) : (!llvm.ptr, !llvm.ptr, i32, i1) -> ()
    llvm.return
  }
}
"""
    )
    with pytest.raises(TranslationError, match="an intrinsic has one signature") as info:
        to_llvm_ir(module)
    assert info.value.location is not None
    assert info.value.location.line == 6
