"""What `irgrad-opt -p` can run: irgrad's passes and named pipelines, next to xDSL's.

Why a registry of factories: importing every pass module is slow, so a pass is registered as
a name and a function that imports its class on first use (as xDSL's `Universe` does);
`irgrad-opt --help` imports none of them.

Adding a pass (one line, in the "irgrad's passes" section at the bottom):

    register_pass(
        "convert-nn-to-linalg",
        lazy("irgrad.lowering.nn_to_linalg", "ConvertNNToLinalgPass"),
    )

The class is a `ModulePass` whose `name` is the registered name; the first line of its
docstring is what `irgrad-opt --list-passes` shows.

Adding a named pipeline (a spelling for a pass list, expanded wherever `-p` accepts a pass):
`register_pipeline("lower-to-llvm", "convert-nn-to-linalg,canonicalize,...", "nn to llvm")`.
Pipelines take no options; `-p 'lower-to-llvm,cse'` expands to the listed passes, so
`--print-ir-after-all` shows every one of them.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import sys
import typing
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.arg_spec import ArgSpec, _convert_arg_to_type, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.utils.hints import type_repr

from irgrad.context import make_context, xdsl_universe
from irgrad.diagnostics import IrgradError, PipelineError
from irgrad.pipelines import CPU_PIPELINE, GPU_PIPELINE, stage_spec

PassFactory = Callable[[], type[ModulePass]]


@dataclass(frozen=True)
class PipelineInfo:
    """A named pipeline: `-p <name>` stands for the pass list `spec`."""

    name: str
    spec: str
    description: str


_PASSES: dict[str, PassFactory] = {}
_PIPELINES: dict[str, PipelineInfo] = {}


def lazy(module: str, attr: str) -> Callable[[], type[ModulePass]]:
    """A pass factory that imports `module` and returns its attribute `attr` when called."""

    def factory() -> type[ModulePass]:
        return getattr(importlib.import_module(module), attr)

    factory.__qualname__ = f"lazy({module}.{attr})"
    return factory


def register_pass(name: str, factory: PassFactory, *, replace: bool = False) -> None:
    """Make `-p <name>` run the pass class `factory()` returns."""
    if not replace and (name in _PASSES or name in _PIPELINES):
        raise ValueError(f"pass or pipeline '{name}' is already registered")
    _PASSES[name] = factory


def register_pipeline(
    name: str, spec: str, description: str, *, replace: bool = False
) -> None:
    """Make `-p <name>` stand for the pass list `spec` (same syntax as `-p`)."""
    if not replace and (name in _PASSES or name in _PIPELINES):
        raise ValueError(f"pass or pipeline '{name}' is already registered")
    _PIPELINES[name] = PipelineInfo(name, spec, description)


def unregister(name: str) -> None:
    """Forget a pass or pipeline (tests use it to undo a registration)."""
    _PASSES.pop(name, None)
    _PIPELINES.pop(name, None)


def irgrad_passes() -> dict[str, PassFactory]:
    """irgrad's own passes, by name."""
    return dict(_PASSES)


def irgrad_pipelines() -> dict[str, PipelineInfo]:
    """irgrad's named pipelines, by name."""
    return dict(_PIPELINES)


@functools.cache
def _xdsl_builtin_passes() -> dict[str, PassFactory]:
    """xDSL's own passes, without plug-ins: no scan of installed distributions."""
    from xdsl.transforms import get_all_passes

    return get_all_passes()


def all_passes() -> dict[str, PassFactory]:
    """xDSL's passes (with plug-ins') and irgrad's; an irgrad pass of the same name wins."""
    passes = dict(xdsl_universe().all_passes)
    passes.update(_PASSES)
    return passes


class _PassLookup(Mapping[str, PassFactory]):
    """`all_passes()` for looking names up: irgrad's, then xDSL's own, and only for a name
    neither has, the plug-ins' (whose discovery is costly the first time), so the
    pipelines of `ig.jit` never scan the installed distributions."""

    def __getitem__(self, name: str) -> PassFactory:
        factory = _PASSES.get(name) or _xdsl_builtin_passes().get(name)
        if factory is None:
            factory = xdsl_universe().all_passes[name]
        return factory

    def __iter__(self):
        return iter(all_passes())

    def __len__(self) -> int:
        return len(all_passes())


# --------------------------------------------------------------------------------------
# Building pipelines
# --------------------------------------------------------------------------------------


def pass_description(pass_class: type[ModulePass]) -> str:
    """The first paragraph of the pass class docstring (else its module's) on one line.

    A paragraph, not a line: docstrings wrap their first sentence.
    """
    for doc in (pass_class.__doc__, sys.modules[pass_class.__module__].__doc__):
        paragraph = (doc or "").strip().split("\n\n")[0]
        # A dataclass without a docstring gets its signature as __doc__: not a description.
        if paragraph and not paragraph.startswith(f"{pass_class.__name__}("):
            return " ".join(paragraph.split())
    return ""


def list_passes(
    passes: Mapping[str, PassFactory] | None = None,
) -> list[tuple[str, str]]:
    """(name, description) of every pass, sorted by name; a pass that fails to load says so."""
    passes = all_passes() if passes is None else passes
    listing: list[tuple[str, str]] = []
    with warnings.catch_warnings():
        # Listing is not using: xDSL's own deprecations in modules nobody runs are noise.
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in sorted(passes):
            try:
                description = pass_description(passes[name]())
            except Exception as err:  # a broken optional pass must not break the listing
                description = f"<failed to load: {type(err).__name__}: {err}>"
            listing.append((name, description))
    return listing


def expand_pipeline_spec(
    spec: str, pipelines: Mapping[str, PipelineInfo] | None = None
) -> list[ArgSpec]:
    """Parse a `-p` string into pass specs, replacing named pipelines by their passes."""
    pipelines = _PIPELINES if pipelines is None else pipelines
    result: list[ArgSpec] = []
    stack: list[str] = []

    def expand(text: str) -> None:
        try:
            specs = list(parse_pipeline(text))
        except ArgSpecParseError as err:
            raise PipelineError(
                f"could not parse pass pipeline '{text}': {_arg_spec_message(err)}"
            ) from err
        for pass_spec in specs:
            info = pipelines.get(pass_spec.name)
            if info is None:
                result.append(pass_spec)
                continue
            if pass_spec.parameters:
                raise PipelineError(f"pipeline '{info.name}' takes no options")
            if info.name in stack:
                raise PipelineError(f"pipeline '{info.name}' includes itself")
            stack.append(info.name)
            expand(info.spec)
            stack.pop()

    expand(spec)
    return result


def _arg_spec_message(err: ArgSpecParseError) -> str:
    """The message of an ArgSpecParseError, whose text is a header and a source context."""
    lines = [line for line in str(err).splitlines()[1:] if line.strip()]
    # The context is: the spec, the caret line, the message under the carets.
    return lines[-1].strip() if lines else str(err)


def build_pipeline(
    spec: str,
    passes: Mapping[str, PassFactory] | None = None,
    pipelines: Mapping[str, PipelineInfo] | None = None,
    callback: PassPipelineCallbackType | None = None,
) -> PassPipeline:
    """Build the pipeline `spec` names (`cse,canonicalize{max-iterations=2}`).

    Raises PipelineError, with a suggestion for a misspelled pass, instead of xDSL's
    ValueError, so the driver can print it as a diagnostic.
    """
    instances = [
        instantiate_pass(pass_spec, passes, pipelines)
        for pass_spec in expand_pipeline_spec(spec, pipelines)
    ]
    return PassPipeline(tuple(instances), callback)


def instantiate_pass(
    pass_spec: ArgSpec,
    passes: Mapping[str, PassFactory] | None = None,
    pipelines: Mapping[str, PipelineInfo] | None = None,
) -> ModulePass:
    """The pass `pass_spec` names, with its options; a PipelineError names what is wrong in
    the user's spelling (`no-such-option`, not the field name `no_such_option`)."""
    passes = _PassLookup() if passes is None else passes
    pipelines = _PIPELINES if pipelines is None else pipelines
    factory = passes.get(pass_spec.name)
    if factory is None:
        known = [*passes, *pipelines]
        close = difflib.get_close_matches(pass_spec.name, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise PipelineError(f"unknown pass '{pass_spec.name}'{hint}")
    try:
        pass_class = factory()
    except IrgradError:
        raise
    except Exception as err:
        raise PipelineError(
            f"pass '{pass_spec.name}' could not be loaded: {type(err).__name__}: {err}"
        ) from err
    if pass_class.name != pass_spec.name:
        raise PipelineError(
            f"pass '{pass_spec.name}' is registered with class {pass_class.__name__}, "
            f"whose name is '{pass_class.name}'"
        )
    pass_spec = _check_options(pass_class, pass_spec)
    try:
        return pass_class.from_pass_spec(pass_spec)
    except (ValueError, TypeError) as err:
        raise PipelineError(f"invalid options for pass '{pass_spec.name}': {err}") from err


MLIR_ONLY_OPTIONS: dict[str, dict[str, type]] = {
    "canonicalize": {
        "max-iterations": int,
        "max-num-rewrites": int,
        "region-simplify": str,
        "top-down": bool,
        "test-convergence": bool,
    },
}
"""Options mlir-opt's spelling of an xDSL pass takes that xDSL's pass has not: accepted (and
type-checked) so MLIR pipelines run, with a warning that they change nothing (xDSL's
canonicalize always runs to a fixed point)."""


class IgnoredOptionWarning(UserWarning):
    """A pass option accepted for mlir-opt compatibility that has no effect here."""


def pass_options(pass_class: type[ModulePass]) -> list[tuple[str, str, str | None]]:
    """(option as spelled on the command line, its type, its default or None) of a pass."""
    options = []
    for field in dataclasses.fields(pass_class):
        if field.name == "name" or not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            default = _option_value_text(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = _option_value_text(field.default_factory())
        else:
            default = None
        kind = field.type if isinstance(field.type, str) else type_repr(field.type)
        options.append((field.name.replace("_", "-"), kind, default))
    return options


def _option_value_text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(_option_value_text(v) for v in value)
    return str(value)


def display_name(pass_class: type[ModulePass]) -> str:
    """The name MLIR's banners and reports give a pass: its class name (`SymbolDCE`)."""
    name = pass_class.__name__
    return name.removesuffix("Pass") or name


def _check_options(pass_class: type[ModulePass], pass_spec: ArgSpec) -> ArgSpec:
    """Reject options the pass has not, or values of the wrong type, naming the option as the
    user wrote it; drop (with a warning) the mlir-only options of MLIR_ONLY_OPTIONS."""
    hints = typing.get_type_hints(pass_class)
    fields = {f.name: f for f in dataclasses.fields(pass_class) if f.init and f.name != "name"}
    mlir_only = MLIR_ONLY_OPTIONS.get(pass_spec.name, {})
    spelled = [f.name.replace("_", "-") for f in fields.values()] + list(mlir_only)
    kept: dict[str, tuple] = {}
    for option, value in pass_spec.parameters.items():
        field = fields.get(option.replace("-", "_"))
        where = f"invalid options for pass '{pass_spec.name}'"
        if field is None and option in mlir_only:
            try:
                _convert_arg_to_type(value, mlir_only[option])
            except ValueError:
                raise PipelineError(
                    f"{where}: option '{option}' takes {mlir_only[option].__name__}, "
                    f"got '{_option_value_text(value)}'"
                ) from None
            warnings.warn(IgnoredOptionWarning(
                f"pass '{pass_spec.name}': option '{option}' is accepted for mlir-opt "
                "compatibility and has no effect here"
            ), stacklevel=2)
            continue
        if field is None:
            close = difflib.get_close_matches(option, spelled, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            takes = f"it takes {', '.join(spelled)}" if spelled else "it takes no options"
            raise PipelineError(f"{where}: no such option '{option}' ({takes}){hint}")
        try:
            _convert_arg_to_type(value, hints.get(field.name, field.type))
        except ValueError:
            expected = type_repr(hints.get(field.name, field.type))
            raise PipelineError(
                f"{where}: option '{option}' takes {expected}, got '{_option_value_text(value)}'"
            ) from None
        kept[option] = value
    return ArgSpec(pass_spec.name, kept)


def run_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    """Run the passes `spec` names (`-p` syntax) on `module`, in place; returns `module`."""
    build_pipeline(spec).apply(make_context(plugins=False), module)
    return module


def lower(module: ModuleOp, stage: str) -> ModuleOp:
    """Lower `nn` IR to the CPU pipeline's `stage` in place (irgrad.pipelines.STAGES)."""
    return run_pipeline(module, stage_spec(stage))


# --------------------------------------------------------------------------------------
# irgrad's passes and pipelines. One line each; keep the imports lazy.
# --------------------------------------------------------------------------------------


register_pass("autodiff", lazy("irgrad.autodiff.autodiff", "AutodiffPass"))
register_pass("checkpoint-chain", lazy("irgrad.autodiff.checkpoint_chain", "CheckpointChainPass"))
register_pass("symbol-dce", lazy("irgrad.transforms.symbol_dce", "SymbolDCEPass"))
register_pass("shard-partition", lazy("irgrad.transforms.shard.shard_partition", "ShardPartitionPass"))
register_pass(
    "shard-erase-annotations", lazy("irgrad.transforms.shard.shard_erase_annotations", "ShardEraseAnnotationsPass")
)
register_pass("convert-shard-to-mpi", lazy("irgrad.transforms.shard.shard_to_mpi", "ConvertShardToMpiPass"))
register_pass(
    "generate-runtime-verification",
    lazy("irgrad.transforms.generate_runtime_verification", "GenerateRuntimeVerificationPass"),
)
register_pass("set-fastmath", lazy("irgrad.transforms.set_fastmath", "SetFastMathPass"))
register_pass("nn-expand-fft", lazy("irgrad.transforms.nn.nn_expand_fft", "ExpandFftPass"))
register_pass("nn-expand-complex", lazy("irgrad.transforms.nn.nn_expand_complex", "ExpandComplexPass"))
register_pass("nn-conv2d-to-im2col", lazy("irgrad.transforms.nn.nn_conv2d_to_im2col", "Conv2DToIm2ColPass"))
register_pass("inline", lazy("irgrad.transforms.inline", "InlinePass"))
register_pass(
    "nn-expand-factorizations", lazy("irgrad.transforms.nn.nn_expand_factorizations", "ExpandFactorizationsPass")
)
register_pass("scf-split-reductions", lazy("irgrad.lowering.loops.scf_split_reductions", "SplitReductionsPass"))
register_pass(
    "split-large-functions", lazy("irgrad.lowering.loops.split_large_functions", "SplitLargeFunctionsPass")
)
register_pass("convert-nn-to-linalg", lazy("irgrad.lowering.nn_to_linalg", "ConvertNNToLinalgPass"))
register_pass(
    "linalg-generalize-upstream-ops",
    lazy("irgrad.lowering.nn_to_linalg.linalg_generalize_upstream_ops", "LinalgGeneralizeUpstreamOpsPass"),
)
register_pass("bufferize", lazy("irgrad.lowering.bufferization.bufferize", "BufferizePass"))
register_pass("convert-linalg-to-blas", lazy("irgrad.lowering.loops.linalg_to_blas", "ConvertLinalgToBlasPass"))
register_pass(
    "convert-factorizations-to-lapack",
    lazy("irgrad.lowering.loops.factorizations_to_lapack", "ConvertFactorizationsToLapackPass"),
)
register_pass("convert-blas-to-llvm", lazy("irgrad.lowering.llvm.blas_to_llvm", "ConvertBlasToLLVMPass"))
register_pass("convert-debug-to-llvm", lazy("irgrad.lowering.llvm.debug_to_llvm", "ConvertDebugToLLVMPass"))
register_pass("convert-mpi-to-llvm", lazy("irgrad.lowering.llvm.mpi_to_llvm", "ConvertMpiToLLVMPass"))
register_pass(
    "convert-linalg-to-parallel-loops",
    lazy("irgrad.lowering.loops.linalg_to_parallel_loops", "ConvertLinalgToParallelLoopsPass"),
)
register_pass(
    "convert-scf-parallel-to-scf",
    lazy("irgrad.lowering.loops.scf_parallel_to_scf", "ConvertScfParallelToScfPass"),
)
register_pass(
    "convert-scf-parallel-to-threads",
    lazy("irgrad.lowering.llvm.scf_parallel_to_threads", "ConvertScfParallelToThreadsPass"),
)
register_pass(
    "convert-scf-to-cf-with-while",
    lazy("irgrad.lowering.llvm.scf_to_cf_with_while", "ConvertScfToCfWithWhilePass"),
)
register_pass("convert-index-to-llvm", lazy("irgrad.lowering.llvm.index_to_llvm", "ConvertIndexToLLVMPass"))
register_pass("convert-arith-to-llvm", lazy("irgrad.lowering.llvm.arith_to_llvm", "ConvertArithToLLVMPass"))
register_pass("convert-math-to-llvm", lazy("irgrad.lowering.llvm.math_to_llvm", "ConvertMathToLLVMPass"))
register_pass(
    "convert-memref-to-llvm", lazy("irgrad.lowering.llvm.memref_to_llvm", "ConvertMemRefToLLVMPass")
)
register_pass("convert-func-to-llvm", lazy("irgrad.lowering.llvm.func_to_llvm", "ConvertFuncToLLVMPass"))
register_pass("convert-cf-to-llvm", lazy("irgrad.lowering.llvm.cf_to_llvm", "ConvertCfToLLVMPass"))
register_pass("convert-to-llvm", lazy("irgrad.lowering.llvm.to_llvm", "ConvertToLLVMPass"))
register_pass(
    "convert-parallel-loops-to-gpu",
    lazy("irgrad.lowering.gpu.parallel_loops_to_gpu", "ConvertParallelLoopsToGpuPass"),
)
register_pass(
    "gpu-kernel-outlining", lazy("irgrad.lowering.gpu.gpu_kernel_outlining", "GpuKernelOutliningPass")
)
register_pass("convert-gpu-to-nvvm", lazy("irgrad.lowering.gpu.gpu_to_nvvm", "ConvertGpuToNVVMPass"))
register_pass("test-miscompile", lazy("irgrad.transforms.test_miscompile", "TestMiscompilePass"))
register_pass("view-op-graph", lazy("irgrad.analysis.view_op_graph", "ViewOpGraphPass"))
register_pass(
    "linalg-fuse-elementwise",
    lazy("irgrad.lowering.nn_to_linalg.linalg_fuse_elementwise", "LinalgFuseElementwisePass"),
)


register_pipeline("irgrad-cpu", CPU_PIPELINE, "nn (with autodiff requests) to the llvm dialect for the CPU")
register_pipeline(
    "irgrad-gpu",
    GPU_PIPELINE,
    "nn (with autodiff requests) to host code and NVVM kernels for NVIDIA GPUs (-t ptx)",
)
