"""`irgrad-opt`: parse IR, run a pass pipeline, print the result (the peer of mlir-opt).

It is xDSL's `xdsl-opt` (every flag of it: `-p`, `-t`, `-o`, `--split-input-file`,
`--verify-diagnostics`, `--print-op-generic`, ...) with what a compiler user expects of
mlir-opt on top:
- irgrad's dialects and passes (`irgrad.registry`) next to xDSL's;
- located diagnostics: `file:line:col: error: 'op' op message`, source line, caret, for
  syntax errors and verifier failures, after parsing and after every pass;
- no Python traceback for bad input, a bad command line or a bad pipeline: a diagnostic on
  stderr and exit code 1; a bug in a pass is an `internal error` with exit code 2 (rerun with
  IRGRAD_TRACEBACK=1 to see the traceback);
- with `--split-input-file`, an error in one chunk is reported and the next chunk still runs;
- `--print-ir-after-all`, `--list-passes`, `--version`.

xDSL's `--verify-diagnostics` is kept as it is: the diagnostic goes to stdout and the exit
code is 0, so lit tests `CHECK:` the message.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from io import BytesIO, StringIO
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
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

TOOL = "irgrad-opt"
TRACEBACK_ENV = "IRGRAD_TRACEBACK"


class CommandLineError(IrgradError):
    """The command line cannot be acted on: bad flag, missing input file, bad output path."""


@dataclasses.dataclass
class Chunk:
    """One piece of the input: all of it, or one `// -----` piece with --split-input-file."""

    text: str
    line_offset: int
    """Lines of the file before this chunk's first line."""


def _usage_error(message: str) -> NoReturn:
    raise CommandLineError(f"{message} (see '{TOOL} --help')")


class IrgradOptMain(xDSLOptMain):
    """xDSL's optimizer driver with irgrad's registry, located diagnostics, no tracebacks."""

    version_format = f"{TOOL} {__version__} (xDSL {{xdsl_version}})"

    sources: dict[str, str]
    """Input file name -> its text, for the source lines under diagnostics."""

    current_pass: ModulePass | None = None
    """The pass running now, named in an internal error."""

    def __init__(self, args: Sequence[str] | None = None) -> None:
        self.sources = {}
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
        # argparse prints usage and exits 2; irgrad-opt reports every problem the same way.
        arg_parser.prog = TOOL
        arg_parser.error = _usage_error  # type: ignore[method-assign]
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all",
            default=False,
            action="store_true",
            help="Print the IR to stderr after every pass, as mlir-opt does",
        )
        arg_parser.add_argument(
            "--verify-each",
            choices=("structural", "numeric"),
            default="structural",
            help="After every pass, verify the IR (structural, the default) and with 'numeric' also "
            "run the public functions on the reference interpreter on random inputs, stopping at "
            "the first pass that changes their results",
        )
        arg_parser.add_argument(
            "--gpu-arch",
            default="sm_80",
            help="GPU architecture the ptx target compiles for (default sm_80)",
        )
        arg_parser.add_argument(
            "--list-passes",
            default=False,
            action="store_true",
            help="List the registered passes and pipelines with a description, and exit",
        )

    # -- pipeline -----------------------------------------------------------------------

    def setup_pipeline(self) -> None:
        """Build the `-p` pipeline; verify with locations after parsing and every pass."""
        start = time.perf_counter()
        checker = None
        if self.args.verify_each == "numeric":
            from irgrad.backends.interpreter.numeric_check import NumericChecker  # numpy and the interpreter

            checker = NumericChecker()

        def callback(
            previous: ModulePass | None, module: ModuleOp, next_: ModulePass | None
        ) -> None:
            nonlocal start
            if self.args.time_passes and previous is not None:
                print(f"Pass {previous.name} took {time.perf_counter() - start} seconds")
            if previous is not None and self.args.print_ir_after_all:
                self._print_ir(f"// -----// IR Dump After {previous.name} //----- //", module)
            if not self.args.disable_verify:
                verify_module(module, self.sources)
            if checker is not None:
                if previous is None:
                    checker.baseline(module)
                else:
                    checker.check(module, previous.name)
            if previous and next_ and self.args.print_between_passes:
                print(f"IR after {previous.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
            self.current_pass = next_
            if self.args.time_passes:
                start = time.perf_counter()

        try:
            self.pipeline = registry.build_pipeline(
                self.args.passes,
                self.available_passes,
                registry.irgrad_pipelines(),
                callback,
            )
        except ArgSpecParseError as err:  # a BaseException in xDSL
            raise PipelineError(str(err)) from None

    def _print_ir(self, banner: str, module: ModuleOp) -> None:
        printer = Printer(
            stream=sys.stderr,
            print_generic_format=self.args.print_op_generic,
            print_debuginfo=self.args.print_debuginfo,
        )
        print(banner, file=sys.stderr)
        printer.print_op(module)
        print("\n", file=sys.stderr)

    # -- input and output ---------------------------------------------------------------

    def get_input_name(self) -> str:
        return self.args.input_file or "<stdin>"

    def read_chunks(self) -> list[Chunk]:
        """Read the input (file or stdin), remember its text, split it if asked."""
        name = self.get_input_name()
        try:
            if self.args.input_file is None:
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
        if self.args.input_file is not None:
            extension = os.path.splitext(self.args.input_file)[1].lstrip(".")
            if extension in self.available_frontends:
                return extension
        return "mlir"

    def parse_text(self, chunk: Chunk) -> ModuleOp | None:
        """Parse a chunk; MLIR text goes through the located parser."""
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
        if parse_spec(self.args.target).name == "llvm":
            # xDSL's llvm target reports bad input without a location (or as a TypeError).
            from irgrad.backends.cpu.translate import check_translatable

            check_translatable(module)
        try:
            return self.output_resulting_program(module)
        except NotImplementedError as err:
            # xDSL's translations say so when the IR holds ops they do not handle.
            target = parse_spec(self.args.target).name
            raise IrgradError(
                f"target '{target}' cannot translate this module: {err}"
            ) from err

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
        """Print a diagnostic; True when it makes the run fail."""
        expected = self.args.verify_diagnostics or self.args.parsing_diagnostics
        print(self.render(err), file=sys.stdout if expected else sys.stderr)
        return not expected

    def list_passes(self) -> None:
        listing = registry.list_passes(self.available_passes)
        width = max(len(name) for name, _ in listing)
        print("Passes:")
        for name, description in listing:
            print(f"  {name:<{width}}  {description}".rstrip())
        pipelines = registry.irgrad_pipelines()
        if pipelines:
            print("Pipelines:")
            for name in sorted(pipelines):
                info = pipelines[name]
                print(f"  {name:<{width}}  {info.description} ({info.spec})")

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
                try:
                    module = self.parse_text(chunk)
                    if module is not None:
                        self.current_pass = None
                        self.apply_passes(module)
                        output.write(self.emit(module))
                except (ParseError, DiagnosticException) as err:
                    failed |= self.report(err)
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        return 1 if failed else 0


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
