"""`irgrad-opt`: parse IR, run a pass pipeline, print the result (the peer of mlir-opt).

It is xDSL's `xdsl-opt` (every flag of it: `-p`, `-t`, `-o`, `--split-input-file`,
`--print-op-generic`, ...) with mlir-opt's command line on top (opt_arguments.py):
- irgrad's dialects and passes (`irgrad.registry`) next to xDSL's; `--list-passes`;
- `--pass-pipeline='builtin.module(func.func(cse),symbol-dce)'`, op anchors included
  (pass_pipeline.py); `-p cse,symbol-dce` is the same pipeline without anchors;
- `--mlir-print-ir-{before,after}-all`, `-after-change`, `-after-failure`, `--mlir-timing`,
  `--mlir-pass-statistics`, `--dump-pass-pipeline`, all on stderr (pass_instrumentation.py);
- `--verify-diagnostics` with MLIR's meaning: `// expected-error @+1 {{...}}` annotations are
  checked, a missing or unexpected diagnostic fails the run (expected_diagnostics.py);
- located diagnostics: `file:line:col: error: 'op' op message`, source line, caret, for
  syntax errors and verifier failures, after parsing and after every pass; a Python
  `UserWarning` from a pass is a `warning:` diagnostic;
- no Python traceback for bad input, a bad command line or a bad pipeline: a diagnostic on
  stderr and exit code 1; a bug in a pass is an `internal error` with exit code 2 (rerun with
  IRGRAD_TRACEBACK=1 to see the traceback);
- with `--split-input-file`, an error in one chunk is reported and the next chunk still runs;
- `--view-op-graph[=options]`: the resulting module's graph as Graphviz DOT instead of its IR.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings
from collections.abc import Sequence
from io import BytesIO, StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from irgrad import __version__, context, registry
from irgrad.diagnostics import (
    IrgradError,
    LocatedParser,
    PipelineError,
    format_parse_error,
    verify_module,
)
from irgrad.driver import expected_diagnostics as expected
from irgrad.driver.opt_arguments import TOOL, CommandLineError, register_arguments, spell_out_flags
from irgrad.driver.pass_instrumentation import IRPrinter, PassStatistics, PassTimer
from irgrad.driver.pass_pipeline import (
    Instrumentation,
    OpPipeline,
    PassEntry,
    PassScope,
    PipelineRunner,
    parse_pass_pipeline,
    pipeline_from_pass_list,
)

TRACEBACK_ENV = "IRGRAD_TRACEBACK"

__all__ = ["CommandLineError", "IrgradOptMain", "main"]


@dataclasses.dataclass
class Chunk:
    """One piece of the input: all of it, or one `// -----` piece with --split-input-file."""

    text: str
    line_offset: int
    """Lines of the file before this chunk's first line."""


class _CurrentPass(Instrumentation):
    """Remembers the pass running now, for the `internal error` message."""

    def __init__(self, tool: IrgradOptMain) -> None:
        self.tool = tool

    def before_pass(self, entry: PassEntry, scope: PassScope) -> None:
        self.tool.current_pass = entry.instance

    def after_pass(self, entry: PassEntry, scope: PassScope) -> None:
        self.tool.current_pass = None


class IrgradOptMain(xDSLOptMain):
    """xDSL's optimizer driver with irgrad's registry, mlir-opt's flags, no tracebacks."""

    version_format = f"{TOOL} {__version__} (xDSL {{xdsl_version}})"

    sources: dict[str, str]
    """Input file name -> its text, for the source lines under diagnostics."""

    current_pass: ModulePass | None = None
    """The pass running now, named in an internal error."""

    op_pipeline: OpPipeline
    """What `--pass-pipeline` or `-p` asks for."""

    def __init__(self, args: Sequence[str] | None = None) -> None:
        self.sources = {}
        self.timer: PassTimer | None = None
        self.statistics: PassStatistics | None = None
        self.instrumentations: list[Instrumentation] = [_CurrentPass(self)]
        self.graph_pass: ModulePass | None = None
        self.report_stages: dict[str, str] = {}
        """With --report: "input" and each top-level pass's name -> the IR after it."""
        self.report_seconds: dict[str, float] = {}
        """The view-op-graph pass whose DOT `--view-op-graph` prints instead of the module."""
        args = spell_out_flags(sys.argv[1:] if args is None else args)
        super().__init__(description="irgrad modular optimizer driver", args=args)

    # -- registration -------------------------------------------------------------------

    def register_all_dialects(self) -> None:
        context.register_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in registry.all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets["ptx"] = _ptx_target

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        names = registry.irgrad_pipelines()
        register_arguments(arg_parser, lambda name: name in self.available_passes or name in names)

    # -- pipeline -----------------------------------------------------------------------

    def setup_pipeline(self) -> None:
        """Build the pipeline and the instrumentation the flags ask for."""
        args = self.args
        if args.time_passes or args.mlir_timing:
            self.timer = PassTimer()
        if args.pass_pipeline and args.passes:
            raise CommandLineError("give the passes with -p or with --pass-pipeline, not both")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", registry.IgnoredOptionWarning)
            try:
                if args.pass_pipeline:
                    self.op_pipeline = parse_pass_pipeline(args.pass_pipeline, self.ctx)
                else:
                    self.op_pipeline = pipeline_from_pass_list(args.passes)
            except ArgSpecParseError as err:  # a BaseException in xDSL
                raise PipelineError(str(err)) from None
        for warning in caught:
            print(f"{TOOL}: warning: {warning.message}", file=sys.stderr)
        self.pipeline = PassPipeline(tuple(self.op_pipeline.passes()))
        if args.view_op_graph is not None:
            self.graph_pass = _view_op_graph_pass(args.view_op_graph, args.target)
        folder = os.path.dirname(os.path.abspath(args.report)) if args.report is not None else ""
        if args.report is not None and not os.path.isdir(folder):
            raise CommandLineError(f"--report {args.report}: the folder {folder} does not exist")
        if args.dump_pass_pipeline:
            print(f"Pass Manager with {self.op_pipeline.pass_count()} passes:", file=sys.stderr)
            print(self.op_pipeline.textual(), file=sys.stderr)
        printing = args.print_ir_before_all or args.print_ir_after_all or args.print_ir_after_failure
        if printing:
            self.instrumentations.append(IRPrinter(
                before=args.print_ir_before_all,
                after=args.print_ir_after_all or (args.print_ir_after_change and not args.print_ir_after_failure),
                only_on_change=args.print_ir_after_change,
                on_failure=args.print_ir_after_failure,
                generic=args.print_op_generic,
                debuginfo=args.print_debuginfo,
            ))
        elif args.print_ir_after_change:
            self.instrumentations.append(IRPrinter(after=True, only_on_change=True,
                                                   generic=args.print_op_generic, debuginfo=args.print_debuginfo))
        if self.timer is not None:
            self.instrumentations.append(self.timer)
        if args.mlir_pass_statistics:
            self.statistics = PassStatistics()
            self.instrumentations.append(self.statistics)

    def _verify(self, module: ModuleOp) -> None:
        if self.args.disable_verify:
            return
        start = time.perf_counter()
        try:
            verify_module(module, self.sources)
        finally:
            if self.timer is not None:
                self.timer.add("Verifier", time.perf_counter() - start)

    def apply_passes(self, prog: ModuleOp) -> None:
        """Verify with locations, then run the pipeline, verifying after every pass (unless
        --verify-each=false, mlir-opt's switch: the input is verified all the same)."""
        self._verify(prog)
        checker = None
        if self.args.verify_each == "numeric":
            from irgrad.backends.interpreter.numeric_check import NumericChecker  # numpy and the interpreter

            checker = NumericChecker()
            checker.baseline(prog)
        remaining = len(self.op_pipeline.elements)
        if self.args.report is not None:
            self.report_stages["input"] = str(prog)
        started = time.perf_counter()

        def after_top_level(name: str, module: ModuleOp) -> None:
            nonlocal remaining, started
            remaining -= 1
            if self.args.report is not None:
                label = name if name not in self.report_stages else f"{name} #{len(self.report_stages)}"
                self.report_seconds[label] = time.perf_counter() - started
                self.report_stages[label] = str(module)
            if self.args.verify_each != "false":
                self._verify(module)
            if checker is not None:
                checker.check(module, name)
            if remaining and self.args.print_between_passes:
                print(f"IR after {name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
            started = time.perf_counter()

        PipelineRunner(self.ctx, self.instrumentations, after_top_level).run(self.op_pipeline, prog)

    # -- input and output ---------------------------------------------------------------

    def reads_stdin(self) -> bool:
        return self.args.input_file in (None, "-")

    def get_input_name(self) -> str:
        return "<stdin>" if self.reads_stdin() else self.args.input_file

    def read_chunks(self) -> list[Chunk]:
        """Read the input (file or stdin), remember its text, split it if asked."""
        name = self.get_input_name()
        try:
            if self.reads_stdin():
                data = sys.stdin.buffer.read()
            else:
                with open(self.args.input_file, "rb") as f:
                    data = f.read()
        except OSError as err:
            raise CommandLineError(
                f"could not open input file '{name}': {err.strerror or err}"
            ) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise CommandLineError(f"input file '{name}' is not UTF-8: {err}") from None
        self.sources[name] = text
        if not self.args.split_input_file:
            return [Chunk(text, 0)]
        # The same split as xdsl-opt, so `// -----` means the same in both tools.
        chunks: list[Chunk] = []
        offset = 0
        for piece in text.split("// -----"):
            chunks.append(Chunk(piece, offset))
            offset += piece.count("\n")
        return chunks

    def frontend_name(self) -> str:
        """`-f`, else the file extension when a frontend claims it, else MLIR."""
        if self.args.frontend:
            return parse_spec(self.args.frontend).name
        if not self.reads_stdin():
            extension = os.path.splitext(self.args.input_file)[1].lstrip(".")
            if extension in self.available_frontends:
                return extension
        return "mlir"

    def parse_text(self, chunk: Chunk) -> ModuleOp | None:
        """Parse a chunk; MLIR text goes through the located parser."""
        start = time.perf_counter()
        try:
            frontend = self.frontend_name()
            if frontend != "mlir":
                return self.parse_chunk(
                    BytesIO(chunk.text.encode()), frontend, chunk.line_offset
                )
            parser = LocatedParser(
                self.ctx, chunk.text, self.get_input_name(), chunk.line_offset
            )
            try:
                return parser.parse_module(not self.args.no_implicit_module)
            except ParseError as err:
                err.span = dataclasses.replace(err.span, line_offset=chunk.line_offset)
                raise
        finally:
            if self.timer is not None:
                self.timer.add("Parser", time.perf_counter() - start)

    def open_output(self) -> IO[str]:
        if self.args.output_file is None:
            return sys.stdout
        try:
            return open(self.args.output_file, "w")
        except OSError as err:
            raise CommandLineError(
                f"could not open output file '{self.args.output_file}': "
                f"{err.strerror or err}"
            ) from None

    # -- running ------------------------------------------------------------------------

    def output_resulting_program(self, prog: ModuleOp) -> str:
        spec = parse_spec(self.args.target)
        if spec.name != "ptx":
            return super().output_resulting_program(prog)
        target = _ptx_target().from_spec(spec)
        if "arch" not in spec.parameters:
            target = dataclasses.replace(target, arch=self.args.gpu_arch)
        output = StringIO()
        target.emit(self.ctx, prog, output)
        return output.getvalue()

    def emit(self, module: ModuleOp) -> str:
        """The module in the `-t` target's format."""
        start = time.perf_counter()
        try:
            if self.graph_pass is not None:
                return self.graph_pass.graph(module).to_dot()  # type: ignore[attr-defined]
            if parse_spec(self.args.target).name == "llvm":
                # xDSL's llvm target reports bad input without a location (or as a TypeError).
                from irgrad.backends.cpu.translate import check_translatable

                check_translatable(module)
            return self.output_resulting_program(module)
        except NotImplementedError as err:
            # xDSL's translations say so when the IR holds ops they do not handle.
            target = parse_spec(self.args.target).name
            raise IrgradError(
                f"target '{target}' cannot translate this module: {err}"
            ) from err
        finally:
            if self.timer is not None:
                self.timer.add("Output", time.perf_counter() - start)

    def render(self, err: Exception) -> str:
        """The MLIR-style text of a diagnostic."""
        if isinstance(err, ParseError):
            return format_parse_error(err)
        if isinstance(err, IrgradError):
            text = err.format(self.sources)
            return text if err.is_located else f"{TOOL}: {text}"
        notes = "".join(f"\n{note}" for note in getattr(err, "__notes__", ()))
        return f"{TOOL}: error: {err}{notes}"

    def report(self, err: Exception) -> bool:
        """Print a diagnostic; True when it makes the run fail (xDSL's --parsing-diagnostics:
        a syntax error goes to stdout and does not)."""
        if self.args.parsing_diagnostics and isinstance(err, ParseError):
            print(self.render(err))
            return False
        print(self.render(err), file=sys.stderr)
        return True

    def list_passes(self) -> None:
        """irgrad's passes, then xDSL's, each with its options; then the named pipelines."""
        ours = registry.irgrad_passes()
        theirs = {name: f for name, f in self.available_passes.items() if name not in ours}
        for title, passes in (("irgrad passes:", ours), ("xDSL passes:", theirs)):
            listing = registry.list_passes(passes)
            width = max(len(name) for name, _ in listing)
            print(title)
            for name, description in listing:
                print(f"  {name:<{width}}  {description}".rstrip())
                try:
                    options = registry.pass_options(passes[name]())
                except Exception:  # noqa: BLE001 - list_passes already said it failed to load
                    options = []
                for option, kind, default in options:
                    shown = "" if default is None else f" (default: {default})"
                    print(f"      --{option}=<{kind}>{shown}")
        pipelines = registry.irgrad_pipelines()
        if pipelines:
            print("Pipelines:")
            width = max(len(name) for name in pipelines)
            for name in sorted(pipelines):
                info = pipelines[name]
                print(f"  {name:<{width}}  {info.description} ({info.spec})")

    def run_chunk(self, chunk: Chunk) -> tuple[str | None, list[expected.Diagnostic], Exception | None]:
        """Parse, transform and print one chunk: its output (None on error), the warnings
        its passes issued, and the error that stopped it."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            try:
                module = self.parse_text(chunk)
                if module is None:
                    return "", [], None
                self.current_pass = None
                self.apply_passes(module)
                text, error = self.emit(module), None
            except (ParseError, DiagnosticException) as err:
                text, error = None, err
        produced = []
        for warning in caught:
            if issubclass(warning.category, UserWarning):
                produced.append(expected.diagnostic_of_warning(warning.message))  # type: ignore[arg-type]
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        return text, produced, error

    def run(self) -> int:  # type: ignore[override]
        """Process every chunk; return the exit code."""
        if self.args.list_passes:
            self.list_passes()
            return 0
        chunks = self.read_chunks()
        output = self.open_output()
        failed = False
        try:
            for i, chunk in enumerate(chunks):
                if i > 0:
                    output.write("// -----\n")
                text, produced, error = self.run_chunk(chunk)
                if self.args.verify_diagnostics:
                    failed |= self.check_diagnostics(chunk, produced, error)
                else:
                    for warning in produced:
                        print(expected.render(warning, self.sources, TOOL), file=sys.stderr)
                    if error is not None:
                        failed |= self.report(error)
                if text is not None:
                    output.write(text)
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
            if self.timer is not None:
                print(self.timer.report(), file=sys.stderr)
            if self.statistics is not None:
                print(self.statistics.report(), file=sys.stderr)
            if self.args.report is not None:
                self._write_report()
        return 1 if failed else 0

    def _write_report(self) -> None:
        """The --report page: the IR after each top-level pass, with diffs and times."""
        from irgrad.frontend.compile_report import render_report, write_report

        title = f"{TOOL} report: {self.get_input_name()}"
        page = render_report(title, self.report_stages, self.report_seconds, notes=[self.op_pipeline.textual()])
        try:
            write_report(self.args.report, page)
        except OSError as err:
            raise CommandLineError(f"--{err}") from None

    def check_diagnostics(
        self, chunk: Chunk, produced: list[expected.Diagnostic], error: Exception | None
    ) -> bool:
        """--verify-diagnostics: match a chunk's diagnostics against its annotations; print
        what does not match on stderr; True when something did not."""
        if error is not None:
            produced = produced + expected.diagnostics_of(error)
        annotations, problems = expected.parse_expectations(chunk.text, self.get_input_name(), chunk.line_offset)
        problems += expected.check(annotations, produced, self.sources)
        for problem in problems:
            print(problem, file=sys.stderr)
        return bool(problems)


def _view_op_graph_pass(options: str, target: str) -> ModulePass:
    """The view-op-graph pass `--view-op-graph=<options>` asks for (its options checked as in `-p`)."""
    if parse_spec(target).name != "mlir":
        raise CommandLineError(f"--view-op-graph prints the graph instead of the module: drop -t {target}")
    graph_pass = registry.build_pipeline(f"view-op-graph{{{options}}}" if options.strip() else "view-op-graph").passes[0]
    if getattr(graph_pass, "output", ""):
        raise CommandLineError("--view-op-graph writes the graph where the module would go: "
                               "give the file with -o, not output=")
    return graph_pass


def _ptx_target() -> type:
    """The `ptx` target (imported on use: it loads llvmlite's NVPTX backend)."""
    from irgrad.backends.gpu.ptx import PTXTarget

    return PTXTarget


def _internal_error(err: BaseException, current_pass: ModulePass | None) -> int:
    where = f" while running pass '{current_pass.name}'" if current_pass else ""
    print(
        f"{TOOL}: internal error{where}: {type(err).__name__}: {err}\n"
        f"{TOOL}: note: this is a bug in irgrad or xDSL; rerun with {TRACEBACK_ENV}=1 "
        "to see the Python traceback",
        file=sys.stderr,
    )
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run irgrad-opt; 0 on success, 1 for a diagnostic, 2 for an internal error."""
    tool: IrgradOptMain | None = None
    try:
        tool = IrgradOptMain(args=argv)
        return tool.run()
    except IrgradError as err:
        text = err.format(tool.sources if tool else None)
        print(text if err.is_located else f"{TOOL}: {text}", file=sys.stderr)
        return 1
    except ArgSpecParseError as err:  # a BaseException: a malformed -t or -f spec
        print(f"{TOOL}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (`| head`) went away: nobody to report to. Point stdout at /dev/null
        # so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except DiagnosticException as err:  # xDSL's, raised outside a chunk
        print(f"{TOOL}: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:
        if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
            raise
        return _internal_error(err, tool.current_pass if tool else None)


if __name__ == "__main__":
    sys.exit(main())
