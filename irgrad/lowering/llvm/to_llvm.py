"""`convert-to-llvm`: stage "loops" to stage "llvm" (docs/design/cpu-pipeline.md), in one pass.

Runs, in this order:
0. convert-scf-parallel-to-threads (large parallel loops through the thread pool; option
                                `threads=false` leaves every loop serial)
1. convert-scf-parallel-to-scf  (serial loops; before scf-to-cf, which rejects scf.parallel)
2. convert-blas-to-llvm         (its memref operands become pointers like memref-to-llvm's)
2b. convert-debug-to-llvm       (debug.print to a runtime call; the same pointers)
2c. convert-mpi-to-llvm         (mpi buffer ops to MPI runtime calls; the same pointers)
3. convert-memref-to-llvm       (its strided copies are scf.for nests: before scf-to-cf)
4. convert-scf-to-cf-with-while (scf.for/if/index_switch/while to branches)
5. convert-index-to-llvm
6. convert-arith-to-llvm
7. convert-math-to-llvm
8. convert-func-to-llvm         (with the packed entry wrappers)
9. convert-cf-to-llvm
10. reconcile-unrealized-casts  (the casts between the passes cancel out)
then checks the result with `assert_stage_llvm`, so a leftover op or cast is a located error
here rather than a failure in the LLVM translation.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irgrad.lowering.llvm.arith_to_llvm import ConvertArithToLLVMPass
from irgrad.lowering.llvm.blas_to_llvm import ConvertBlasToLLVMPass
from irgrad.lowering.llvm.cf_to_llvm import ConvertCfToLLVMPass
from irgrad.lowering.llvm.debug_to_llvm import ConvertDebugToLLVMPass
from irgrad.lowering.contracts import assert_stage_llvm
from irgrad.lowering.llvm.func_to_llvm import ConvertFuncToLLVMPass
from irgrad.lowering.llvm.index_to_llvm import ConvertIndexToLLVMPass
from irgrad.lowering.llvm.casts import reconcile_casts
from irgrad.lowering.llvm.math_to_llvm import ConvertMathToLLVMPass
from irgrad.lowering.llvm.memref_to_llvm import ConvertMemRefToLLVMPass
from irgrad.lowering.llvm.mpi_to_llvm import ConvertMpiToLLVMPass
from irgrad.lowering.loops.scf_parallel_to_scf import ConvertScfParallelToScfPass
from irgrad.lowering.llvm.scf_parallel_to_threads import ConvertScfParallelToThreadsPass
from irgrad.lowering.llvm.scf_to_cf_with_while import ConvertScfToCfWithWhilePass


@dataclass(frozen=True)
class ConvertToLLVMPass(ModulePass):
    """Lower stage "loops" (scf, memref, index, arith, math, func, cf) to the llvm dialect.

    Input invariant: stage "loops". Output IR: stage "llvm" (only llvm ops in a
    builtin.module), checked before the pass returns.
    """

    name = "convert-to-llvm"

    packed_interface: bool = True
    threads: bool = True

    def passes(self) -> tuple[ModulePass, ...]:
        parallel: tuple[ModulePass, ...] = (ConvertScfParallelToThreadsPass(),) if self.threads else ()
        return (
            *parallel,
            ConvertScfParallelToScfPass(),
            ConvertBlasToLLVMPass(),
            ConvertDebugToLLVMPass(),
            ConvertMpiToLLVMPass(),
            ConvertMemRefToLLVMPass(),
            ConvertScfToCfWithWhilePass(),
            ConvertIndexToLLVMPass(),
            ConvertArithToLLVMPass(),
            ConvertMathToLLVMPass(),
            ConvertFuncToLLVMPass(packed_interface=self.packed_interface),
            ConvertCfToLLVMPass(),
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with cyclic_gc_paused():
            for p in self.passes():
                p.apply(ctx, op)
            # Casts that do not cancel stay, and assert_stage_llvm names the first one.
            reconcile_casts(op)
        assert_stage_llvm(op)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while IR is rewritten.

    A lowering allocates thousands of IR objects, which keeps triggering full collections
    that scan the whole (large, live) IR: a fifth of the time of this pass. Nothing it
    builds is garbage until it returns, so the collector waits until then.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
