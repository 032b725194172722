"""The CPU pipeline by stage, from Python: `lower(module, "linalg")`.

`STAGES` maps each stage of docs/design/cpu-pipeline.md to the pass list that takes `nn` IR
(with autodiff requests) to it; a later stage's list extends an earlier one's. The passes are
the registry's (`irgrad.registry`), so `irgrad-opt -p <spec>` runs exactly the same.
"""

from __future__ import annotations

from irgrad.diagnostics import PipelineError

CPU_STEPS: list[tuple[str, str]] = [
    ("autodiff", "nn-expand-fft,nn-expand-complex,nn-conv2d-to-im2col,autodiff,shard-erase-annotations,inline,symbol-dce,canonicalize,cse,dce"),
    (
        "linalg",
        "nn-expand-factorizations{references=false},convert-nn-to-linalg,linalg-generalize-upstream-ops,"
        "linalg-fuse-elementwise,canonicalize,cse",
    ),
    ("bufferized", "bufferize"),
    (
        "loops",
        "convert-factorizations-to-lapack,convert-linalg-to-blas,convert-linalg-to-parallel-loops,scf-split-reductions,"
        "split-large-functions",
    ),
    ("llvm", "convert-to-llvm"),
]
"""The `irgrad-cpu` pipeline as (stage reached, passes that reach it from the previous stage).
`ig.jit(...).lower(...).as_text(stage)` shows the IR after each step."""

CPU_PIPELINE = ",".join(spec for _, spec in CPU_STEPS)
"""The whole CPU pipeline, registered as the named pipeline `irgrad-cpu`."""


def cpu_steps(fast_math: bool | str = False) -> list[tuple[str, str]]:
    """CPU_STEPS, with fast-math flags put on the loops' float ops where the user asks:
    `True` is LLVM's `fast` (no NaN, no Inf assumed), a string names the flags
    ("reassoc,contract": vectorized sums and FMAs, NaN/Inf kept); see `set-fastmath`."""
    if fast_math is False or fast_math is None:
        return list(CPU_STEPS)
    flags = "fast" if fast_math is True else str(fast_math)
    return [
        (stage, f'{spec},set-fastmath{{flags="{flags}"}}' if stage == "loops" else spec)
        for stage, spec in CPU_STEPS
    ]


def _cumulative(last: str) -> str:
    names = [stage for stage, _ in CPU_STEPS]
    return ",".join(spec for _, spec in CPU_STEPS[: names.index(last) + 1])


STAGES: dict[str, str] = {
    "autodiff": _cumulative("autodiff"),
    "linalg": "nn-expand-fft,nn-expand-complex,nn-conv2d-to-im2col,autodiff,shard-erase-annotations,inline,symbol-dce,canonicalize,cse,dce,"
    "nn-expand-factorizations{references=false},convert-nn-to-linalg,linalg-generalize-upstream-ops",
    "fused": _cumulative("linalg"),
    "bufferized": _cumulative("bufferized"),
    "loops": _cumulative("loops"),
    "llvm": _cumulative("llvm"),
}
"""Stage name -> the pass-list spec that lowers `nn` IR to that stage."""


GPU_STEPS: list[tuple[str, str]] = [
    CPU_STEPS[0],
    # Factorizations as inline loops (kernels like the rest of the program), not LAPACK calls.
    ("linalg", CPU_STEPS[1][1].replace("nn-expand-factorizations{references=false}", "nn-expand-factorizations{outline=false}")),
    CPU_STEPS[2],
    # Every parallel dimension of a linalg op becomes a GPU thread dimension: the CPU's
    # matmul loop order (j innermost, sequential) would leave only i parallel.
    # Large matmuls become blas.gemm host ops on device buffers: cuBLAS on the device.
    ("loops", "convert-linalg-to-blas,convert-linalg-to-parallel-loops{reorder_reductions=false}"),
    ("gpu", "convert-parallel-loops-to-gpu"),
    ("kernels", "gpu-kernel-outlining"),
    ("nvvm", "convert-gpu-to-nvvm"),
]
"""The `irgrad-gpu` pipeline (docs/design/gpu-pipeline.md): the CPU steps up to stage
"bufferized", then loops, kernels and NVVM."""

GPU_PIPELINE = ",".join(spec for _, spec in GPU_STEPS)
"""The whole GPU pipeline, registered as the named pipeline `irgrad-gpu`."""

GPU_STAGES: dict[str, str] = {
    stage: ",".join(spec for _, spec in GPU_STEPS[: k + 1]) for k, (stage, _) in enumerate(GPU_STEPS)
}
"""GPU stage name -> the pass-list spec that lowers `nn` IR to that stage."""


def stage_spec(stage: str) -> str:
    """The pass list for `stage`; PipelineError naming the known stages otherwise."""
    spec = STAGES.get(stage)
    if spec is None:
        known = ", ".join(STAGES)
        raise PipelineError(f"unknown stage '{stage}' (stages: {known})")
    return spec


__all__ = [
    "CPU_PIPELINE",
    "CPU_STEPS",
    "GPU_PIPELINE",
    "GPU_STAGES",
    "GPU_STEPS",
    "STAGES",
    "stage_spec",
]
