"""Ahead-of-time stages, as in JAX: `ig.jit(f).lower(*args)` -> `Lowered` -> `.compile()`.

`Lowered` holds the IR after each step of the CPU pipeline (`as_text(stage)` for `nn`,
`autodiff`, `linalg`, `bufferized`, `loops`, `llvm`, `llvm-ir`; `graph(stage)` draws it) and how
long each step took.
`Compiled` is fixed to one signature: a call with another pytree structure, shape or dtype
raises an error naming the argument before any generated code runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from io import StringIO
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from irgrad.tracing.pytree import tree_difference, tree_flatten, tree_leaf_names, tree_unflatten
from irgrad.tracing.tracer import Program, ShapeDtype

if TYPE_CHECKING:
    from irgrad.analysis.op_graph import OpGraph

STAGE_NAMES = ("nn", "autodiff", "linalg", "bufferized", "loops", "llvm", "llvm-ir")


class SignatureError(TypeError):
    """A compiled function was called with arguments of another signature."""


def _print(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue() + "\n"


def _arg_names(program: Program) -> list[str]:
    names = []
    for k, arg in enumerate(program.traced.func_op.body.blocks[0].args[: len(program.in_avals)]):
        names.append(arg.name_hint or f"#{k}")
    return names


class Lowered:
    """A traced program lowered through the CPU pipeline, one module per stage."""

    def __init__(
        self,
        program: Program,
        trace_seconds: float = 0.0,
        fast_math: bool | str = False,
        *,
        keep_stages: bool = True,
        keep_passes: bool = False,
    ):
        """`keep_stages=False` (a plain call of a jitted function, which only compiles)
        keeps no copy of each stage's module: the copies cost a tenth of a cold compile.
        `keep_passes=True` also keeps the IR printed after every pass, with its time
        (`pass_texts`, `pass_seconds`: "stage/NN pass-name" -> text, seconds)."""
        from irgrad.pipelines import cpu_steps
        from irgrad.registry import run_pipeline
        from irgrad.lowering.llvm.to_llvm import cyclic_gc_paused

        self.program = program
        self.modules: dict[str, ModuleOp] = {"nn": program.module.clone()} if keep_stages else {}
        self.seconds: dict[str, float] = {"trace": trace_seconds}
        self.pass_texts: dict[str, str] = {}
        self.pass_seconds: dict[str, float] = {}
        module = program.module.clone()
        # Without the pause, the IR a large program allocates sets off several full
        # collections, each scanning every live object of the process: a sizeable part of
        # a large step's compile (docs/design/cpu-backend.md, "Measured").
        with cyclic_gc_paused():
            for stage, spec in cpu_steps(fast_math):
                start = time.perf_counter()
                if keep_passes:
                    self._run_keeping_passes(module, stage, spec)
                else:
                    run_pipeline(module, spec)
                self.seconds[stage] = time.perf_counter() - start
                if keep_stages:
                    self.modules[stage] = module.clone()
        self._final: ModuleOp | None = None if keep_stages else module
        self._llvm_ir: str | None = None

    def _run_keeping_passes(self, module: ModuleOp, stage: str, spec: str) -> None:
        """Run `spec` pass by pass, keeping the IR after each and its time."""
        from irgrad.context import make_context
        from irgrad.registry import build_pipeline, expand_pipeline_spec

        names = [pass_spec.name for pass_spec in expand_pipeline_spec(spec)]
        done: list[float] = []  # the time each pass ended, the start first

        def callback(previous: Any, op: ModuleOp, following: Any) -> None:
            """xDSL calls it before the first pass (`previous` None) and after each."""
            if previous is not None:
                label = f"{stage}/{len(done):02d} {names[len(done) - 1]}"
                self.pass_seconds[label] = time.perf_counter() - done[-1]
                self.pass_texts[label] = _print(op)
            done.append(time.perf_counter())

        build_pipeline(spec, callback=callback).apply(make_context(plugins=False), module)

    def as_text(self, stage: str = "nn") -> str:
        if stage == "llvm-ir":
            if self._llvm_ir is None:
                from irgrad.backends.cpu import to_llvm_ir

                self._llvm_ir = str(to_llvm_ir(self.modules["llvm"].clone()))
            return self._llvm_ir
        return _print(self._module(stage))

    def graph(self, stage: str = "nn", **options: Any) -> OpGraph:
        """The computation graph of the IR at `stage` (irgrad/analysis/op_graph.py), to draw with
        `.to_dot()` or `.to_svg()`; the inputs carry the Python argument names, and from stage
        "autodiff" on a gradient's adjoint ops stand apart from the primal ones. `options` are
        op_graph's: `max_depth`, `max_label_len`, `print_attrs`, ..."""
        from irgrad.analysis.op_graph import op_graph

        if stage == "llvm-ir":
            raise ValueError(f"stage 'llvm-ir' is LLVM's text, not IR to draw; stages: {', '.join(STAGE_NAMES[:-1])}")
        entry = self.program.entry
        return op_graph(self._module(stage), name=entry, arg_names={entry: _arg_names(self.program)}, **options)

    def _module(self, stage: str) -> ModuleOp:
        if stage not in STAGE_NAMES:
            raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(STAGE_NAMES)}")
        if stage not in self.modules:
            raise ValueError(f"stage {stage!r} was not kept (Lowered(..., keep_stages=False))")
        return self.modules[stage]

    def compile(self) -> Compiled:
        from irgrad.backends.cpu import compile_module

        if self._final is not None:  # not kept: compiled once, in place
            module, self._final = self._final, None
        elif "llvm" in self.modules:
            module = self.modules["llvm"].clone()
        else:
            raise ValueError("this Lowered (keep_stages=False) was compiled already")
        compiled_module = compile_module(module)
        stats = dict(self.seconds)
        s = compiled_module.stats
        stats.update(
            {"llvm-ir": s.translate + s.parse, "optimize": s.optimize, "codegen": s.codegen, "load": s.load}
        )
        self._llvm_ir = self._llvm_ir or compiled_module.llvm_ir
        return Compiled(self.program, compiled_module, stats)


class Compiled:
    """A program compiled for the CPU, callable with numpy arrays in its pytree structure."""

    def __init__(self, program: Program, compiled_module: Any, stats: dict[str, float]):
        fn_type = program.traced.func_op.function_type
        self.program = program
        self.module = compiled_module
        self._stats = stats
        self._function = compiled_module.function(
            program.entry, list(fn_type.inputs.data), list(fn_type.outputs.data)
        )
        self._in_tree = program.traced.in_tree
        self._avals = program.in_avals
        self._names = _arg_names(program)
        self._out_tree = program.traced.out_tree
        self._out_is_leaf = self._out_tree.kind == "leaf"
        self._expected = [(aval.shape, aval.dtype) for aval in self._avals]
        # n when the arguments are n plain leaves (a call with n arrays needs no flattening).
        n = len(self._avals)
        self._flat_arity = n if tree_flatten([0] * n)[1] == self._in_tree else -1

    def stats(self) -> dict[str, float]:
        """Seconds spent in each compile step: trace, each pipeline stage, LLVM's steps."""
        return dict(self._stats)

    def object_code(self) -> bytes:
        return self.module.object_code()

    def _inputs(self, leaves: Sequence[Any]) -> list[Any]:
        # The common case first: every leaf an array of exactly the signature's shape and dtype.
        expected = self._expected
        if len(leaves) == len(expected):
            for x, (shape, dtype) in zip(leaves, expected):
                if type(x) is not np.ndarray or x.shape != shape or x.dtype != dtype:
                    break
            else:
                return list(leaves)
        inputs = []
        for k, (x, aval) in enumerate(zip(leaves, self._avals)):
            if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
                x = np.asarray(x, dtype=aval.dtype)
            elif isinstance(x, np.generic):
                x = np.asarray(x)
            elif not isinstance(x, np.ndarray):
                x = np.asarray(x)
            if x.shape == aval.shape and x.dtype != aval.dtype and _traces_as(x) is aval.dtype:
                x = x.astype(aval.dtype)  # a narrow int (uint8, int16) traces as int32: widen it here too
            if x.shape != aval.shape or x.dtype != aval.dtype:
                if not (x.dtype.newbyteorder("=") == aval.dtype and x.shape == aval.shape):
                    raise SignatureError(
                        f"{self.program.entry}: argument {self._names[k]} has shape {x.shape} and "
                        f"dtype {x.dtype}; this compiled function takes shape {aval.shape} and "
                        f"dtype {aval.dtype}"
                    )
            inputs.append(x)
        return inputs

    def call_flat(self, leaves: Sequence[Any]) -> list[Any]:
        return list(self._function.call(*self._inputs(leaves)))

    def call_leaves(self, leaves: Sequence[Any]) -> Any:
        """A call with the flat leaves of arguments already known to have this structure."""
        outputs = self._function.call(*self._inputs(leaves))
        if self._out_is_leaf and len(outputs) == 1:
            return outputs[0]
        return tree_unflatten(self._out_tree, outputs)

    def array_caller(self) -> Any:
        """`call_leaves` for leaves that are all numpy arrays (`ig.jit`'s fast path): the
        compiled function checks shape, dtype and layout itself (copying what it must), so
        the leaves go to it as they are."""
        call = self._function.call
        if self._out_is_leaf:
            return lambda leaves: call(*leaves)[0]
        out_tree = self._out_tree
        return lambda leaves: tree_unflatten(out_tree, call(*leaves))

    def __call__(self, *args: Any) -> Any:
        if self._flat_arity == len(args) and all([type(a) is np.ndarray for a in args]):
            leaves: Sequence[Any] = args  # the structure is a flat list of arrays: no flatten
        else:
            leaves, tree = tree_flatten(list(args))
            if tree != self._in_tree:
                raise SignatureError(f"{self.program.entry}: {self._structure_error(tree)}")
        outputs = self._function.call(*self._inputs(leaves))
        if self._out_is_leaf and len(outputs) == 1:
            return outputs[0]
        return tree_unflatten(self._out_tree, outputs)


    def _structure_error(self, tree: Any) -> str:
        """Which argument's structure differs, and how."""
        want = self._in_tree
        if len(tree.children) != len(want.children):
            return f"takes {len(want.children)} argument(s), got {len(tree.children)}"
        for k, (got, expected) in enumerate(zip(tree.children, want.children)):
            found = tree_difference(got, expected, f"argument #{k}")
            if found is not None:
                return f"{found} (this compiled function takes arguments {want!r})"
        return f"arguments have structure {tree!r}; this compiled function takes {want!r}"


def leaf_names(args: Sequence[Any], fn: Any) -> list[str]:
    """Readable names of the flat arguments, for messages."""
    import inspect

    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = [f"arg{i}" for i in range(len(args))]
    out: list[str] = []
    for name, arg in zip(names, args):
        out.extend(tree_leaf_names(arg, name))
    return out


def avals_of(leaves: Sequence[Any]) -> tuple[ShapeDtype, ...]:
    return tuple(ShapeDtype.of(x) for x in leaves)


def _traces_as(x: np.ndarray) -> np.dtype | None:
    """The dtype a trace gives an argument like `x` (`dtypes.array_dtype_of`), None if none.
    Compare it with `is`: dtypes are canonical singletons, and numpy's `float64 == None` holds."""
    from irgrad.tracing import dtypes
    from irgrad.tracing.errors import DTypeError

    try:
        return dtypes.array_dtype_of(x)
    except DTypeError:
        return None
