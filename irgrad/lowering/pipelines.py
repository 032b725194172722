"""The CPU pipeline by stage, from Python: `lower(module, "linalg")`.

`STAGES` maps each stage of docs/design/cpu-pipeline.md to the pass list that takes `nn` IR
(with autodiff requests) to it; a later stage's list extends an earlier one's. The passes are
the registry's (`irgrad.driver.registry`), so `irgrad-opt -p <spec>` runs exactly the same.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from irgrad.diagnostics import PipelineError
from irgrad.driver.registry import build_pipeline, make_context

STAGES: dict[str, str] = {
    "autodiff": "autodiff,canonicalize,cse,dce",
    "linalg": "autodiff,canonicalize,cse,dce,convert-nn-to-linalg",
    "fused": "autodiff,canonicalize,cse,dce,convert-nn-to-linalg,"
    "linalg-fuse-elementwise,canonicalize,cse",
}
"""Stage name -> the pass-list spec that lowers `nn` IR to that stage."""


def run_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    """Run the passes `spec` names (`-p` syntax) on `module`, in place; returns `module`."""
    build_pipeline(spec).apply(make_context(), module)
    return module


def stage_spec(stage: str) -> str:
    """The pass list for `stage`; PipelineError naming the known stages otherwise."""
    spec = STAGES.get(stage)
    if spec is None:
        known = ", ".join(STAGES)
        raise PipelineError(f"unknown stage '{stage}' (stages: {known})")
    return spec


def lower(module: ModuleOp, stage: str) -> ModuleOp:
    """Lower `nn` IR to `stage` in place (see STAGES); returns `module`."""
    return run_pipeline(module, stage_spec(stage))


__all__ = ["STAGES", "lower", "run_pipeline", "stage_spec"]
