"""`irgrad-run`: run a function of an IR file on .npy inputs (the peer of mlir-cpu-runner).

    irgrad-run FILE [--entry NAME] [--input a.npy]... [--output out.npz] [--backend interp|cpu|gpu]
               [--no-runtime-checks]

FILE is MLIR text (`-` for stdin), parsed and verified with located diagnostics. Each
`--input` is one .npy file per function argument, in order (a 0-d array for a scalar
argument such as `index` or `f32`). Results are saved as `result0`, `result1`, ... in the
`--output` .npz, or printed as numpy prints them. `--entry` defaults to `main`, or to the only
function of the module.

Bad input (a missing file, a parse or verifier error, an unknown entry, inputs of the wrong
count, shape or dtype) is a diagnostic on stderr and exit code 1; an interpreter bug is an
`internal error` and exit code 2 (IRGRAD_TRACEBACK=1 shows the Python traceback).

A per-device (SPMD) function (one with a "shard.grid" attribute) runs on a simulated grid
(irgrad/backends/spmd.py, spmd_cpu.py), its inputs and results the global arrays.
With `--backend cpu`, `generate-runtime-verification` runs after bufferize, so an index out of
bounds is a diagnostic at the op and exit code 1; `--no-runtime-checks` leaves the checks out.
Details: docs/design/cpu-pipeline.md, "irgrad/driver/run.py".
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from irgrad.diagnostics import IrgradError

TOOL = "irgrad-run"
TRACEBACK_ENV = "IRGRAD_TRACEBACK"
BACKENDS = ("interp", "cpu", "gpu")


class RunError(IrgradError):
    """A problem with the command line or the input files (not with the IR)."""


def load_module(path: str) -> tuple[ModuleOp, dict[str, str]]:
    """Parse and verify an IR file; returns the module and its source text by file name.

    The one place that knows how IR is read, so the parser can be switched in one spot.
    """
    from irgrad.diagnostics import parse_module, verify_module
    from irgrad.context import make_context

    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as err:
        raise RunError(f"could not open input file '{name}': {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise RunError(f"input file '{name}' is not UTF-8: {err}") from None
    sources = {name: text}
    module = parse_module(make_context(), text, name)
    verify_module(module, sources)
    return module, sources


def choose_entry(module: ModuleOp, entry: str | None) -> FuncOp:
    functions = [op for op in module.ops if isinstance(op, FuncOp)]
    names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    if entry is None:
        defined = [f for f in functions if f.body.blocks]
        by_name = {f.sym_name.data: f for f in defined}
        if "main" in by_name:
            return by_name["main"]
        if len(defined) == 1:
            return defined[0]
        raise RunError(f"no @main and several functions ({names}); choose one with --entry")
    for f in functions:
        if f.sym_name.data == entry:
            return f
    raise RunError(f"no function @{entry} in the module (functions: {names})")


def load_inputs(paths: Sequence[str], func: FuncOp) -> list[Any]:
    """The `--input` arrays; a bf16 array saved by numpy reads back as 2-byte voids."""
    from irgrad.ir_numpy import numpy_dtype
    from irgrad.ir_numpy import BFLOAT16

    expected = func.function_type.inputs.data
    if len(paths) != len(expected):
        raise RunError(
            f"@{func.sym_name.data} takes {len(expected)} argument(s), got {len(paths)} --input "
            "file(s)"
        )
    arrays: list[Any] = []
    for index, (path, t) in enumerate(zip(paths, expected)):
        try:
            array = np.load(path, allow_pickle=False)
        except OSError as err:
            message = err.strerror or err
            raise RunError(f"could not read input #{index} '{path}': {message}") from None
        except ValueError as err:
            raise RunError(f"input #{index} '{path}' is not a .npy array: {err}") from None
        if not isinstance(array, np.ndarray):
            raise RunError(f"input #{index} '{path}' is not a .npy array (an .npz archive?)")
        element = getattr(t, "element_type", t)
        try:
            wants_bf16 = numpy_dtype(element) == BFLOAT16
        except TypeError:
            wants_bf16 = False
        if wants_bf16 and array.dtype == np.dtype("V2"):
            array = array.view(BFLOAT16)
        arrays.append(array)
    return arrays


def save_or_print(results: Sequence[Any], output: str | None) -> None:
    if output is None:
        for value in results:
            print(value)
        return
    try:
        np.savez(output, **{f"result{i}": np.asarray(v) for i, v in enumerate(results)})
    except OSError as err:
        raise RunError(f"could not write output file '{output}': {err.strerror or err}") from None


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{TOOL}: error: {message}", file=sys.stderr)
        raise SystemExit(1)


def argument_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog=TOOL,
        description="Run a function of an IR file on .npy inputs. A per-device (SPMD) function "
        "(one with a shard.grid attribute) runs on a simulated device grid, on global inputs.",
    )
    parser.add_argument("file", help="MLIR input file ('-' for stdin)")
    parser.add_argument("--entry", help="function to run (default: main, or the only function)")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="FILE.npy",
        help="one .npy file per function argument, in argument order",
    )
    parser.add_argument("--output", metavar="OUT.npz", help="save results as result0, result1, ...")
    parser.add_argument("--backend", choices=BACKENDS, default="interp", help="interp (the reference interpreter, default), cpu (compiled by LLVM) or gpu (PTX run through pycuda on an NVIDIA GPU)")
    parser.add_argument(
        "--debug-nans",
        action="store_true",
        help="interp backend: stop at the first op that makes a NaN from operands without one, "
        "an error at that op's location",
    )
    parser.add_argument(
        "--debug-infs",
        action="store_true",
        help="with --debug-nans semantics, for infinities too",
    )
    parser.add_argument(
        "--allow-external-calls",
        action="store_true",
        help="cpu backend: let the program call C functions of the process other than irgrad's "
        "runtime, libc's memory functions and libm (the default refuses them: an IR file could "
        "otherwise call system())",
    )
    parser.add_argument(
        "--no-runtime-checks",
        dest="runtime_checks",
        action="store_false",
        help="cpu backend: do not check indices at run time (an out-of-bounds index is then "
        "undefined behaviour, possibly a crash)",
    )
    return parser


def run(argv: Sequence[str] | None) -> int:
    args = argument_parser().parse_args(argv)
    module, sources = load_module(args.file)
    func = choose_entry(module, args.entry)
    inputs = load_inputs(args.input, func)
    if (args.debug_nans or args.debug_infs) and args.backend != "interp":
        raise RunError(f"--debug-nans and --debug-infs run on the reference interpreter (--backend interp), not {args.backend}")
    try:
        if "shard.grid" in func.attributes:
            results = run_on_grid(module, func, inputs, args)
        elif args.backend == "cpu":
            results = run_on_cpu(
                module, func, inputs, runtime_checks=args.runtime_checks, allow_external_calls=args.allow_external_calls
            )
        elif args.backend == "gpu":
            results = run_on_gpu(module, func, inputs)
        else:
            from irgrad.backends.interpreter import run_function
            from irgrad.backends.interpreter.nan_checks import NaNChecker

            checks = [NaNChecker(infs=args.debug_infs)] if args.debug_nans or args.debug_infs else []
            results = run_function(module, func.sym_name.data, inputs, checks)
    except IrgradError as err:
        err.sources = err.sources or sources
        raise
    save_or_print(results, args.output)
    return 0


def run_on_grid(module: ModuleOp, func: FuncOp, inputs: Sequence[Any], args: argparse.Namespace) -> tuple[Any, ...]:
    """A per-device function on the simulated grid: one reference interpreter per device, or
    (--backend cpu) the program compiled piece by piece between its collectives."""
    from irgrad.backends.spmd import run_partitioned

    name = func.sym_name.data
    if args.backend not in ("interp", "cpu"):
        raise RunError(
            f"@{name} is a per-device (SPMD) program (it has a shard.grid attribute); it runs on a "
            f"simulated grid (--backend interp or cpu), not --backend {args.backend}"
        )
    if args.debug_nans or args.debug_infs:
        raise RunError(f"--debug-nans and --debug-infs do not run per-device (SPMD) programs such as @{name} yet")
    runner = None
    if args.backend == "cpu":
        from irgrad.backends.spmd import grid_of_function
        from irgrad.backends.spmd_cpu import SpmdProgram

        found = grid_of_function(module, func)
        assert found is not None
        runner = SpmdProgram(module, name, found[1]).run
    results, _ = run_partitioned(module, name, inputs, runner)
    return results


RUNTIME_CHECKS = "generate-runtime-verification"


def cpu_pipeline(runtime_checks: bool = True) -> str:
    """The `irgrad-cpu` pipeline, with the runtime checks right after bufferize (stage
    "bufferized": every access is a memref.load/store/subview, the loops are still scf)."""
    from irgrad.pipelines import CPU_PIPELINE, CPU_STEPS

    if not runtime_checks:
        return CPU_PIPELINE
    specs: list[str] = []
    for stage, spec in CPU_STEPS:
        specs.append(spec)
        if stage == "bufferized":
            specs.append(RUNTIME_CHECKS)
    if RUNTIME_CHECKS not in specs:
        raise RunError(f"the CPU pipeline has no stage 'bufferized' to run {RUNTIME_CHECKS} after")
    return ",".join(specs)


def run_on_cpu(
    module: ModuleOp, func: FuncOp, inputs: Sequence[Any], *, runtime_checks: bool = True,
    allow_external_calls: bool = False,
) -> tuple[Any, ...]:
    """Lower through the `irgrad-cpu` pipeline (with runtime checks unless told not to),
    compile with LLVM and call `func`; a failed check raises RuntimeCheckError, located."""
    from irgrad.backends.cpu import ArgumentError, compile_module
    from irgrad.registry import run_pipeline

    arg_types = list(func.function_type.inputs.data)
    result_types = list(func.function_type.outputs.data)
    name = func.sym_name.data
    if func.sym_visibility is not None and func.sym_visibility.data != "public":
        raise RunError(f"@{name} is private; the CPU backend compiles public functions")
    lowered = run_pipeline(module.clone(), cpu_pipeline(runtime_checks))
    compiled = compile_module(lowered, allow_external_calls=allow_external_calls)
    try:
        return tuple(compiled.function(name, arg_types, result_types)(*inputs))
    except ArgumentError as err:
        raise RunError(str(err)) from None


def run_on_gpu(module: ModuleOp, func: FuncOp, inputs: Sequence[Any]) -> tuple[Any, ...]:
    """Lower through the `irgrad-gpu` pipeline to PTX and run `func` on the first CUDA
    device; where there is none, GpuUnavailableError says what is missing (after the
    compile, so the PTX path is exercised everywhere)."""
    from irgrad.backends.cpu import ArgumentError
    from irgrad.backends.gpu import compile_module

    name = func.sym_name.data
    compiled = compile_module(module.clone(), name)
    try:
        return compiled(*inputs)
    except ArgumentError as err:
        raise RunError(str(err)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run irgrad-run; 0 on success, 1 for a diagnostic, 2 for an internal error."""
    from irgrad.backends.interpreter import InterpreterInternalError

    try:
        return run(argv)
    except InterpreterInternalError as err:
        return _internal_error(err)
    except IrgradError as err:
        text = err.format()
        print(text if err.is_located else f"{TOOL}: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as err:
        if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
            raise
        return _internal_error(err)


def _internal_error(err: BaseException) -> int:
    if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
        raise err
    print(
        f"{TOOL}: internal error: {type(err).__name__}: {err}\n"
        f"{TOOL}: note: this is a bug in irgrad; rerun with {TRACEBACK_ENV}=1 to see the Python "
        "traceback",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
