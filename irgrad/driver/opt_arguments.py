"""The command line of `irgrad-opt`: xDSL's `xdsl-opt` flags plus mlir-opt's.

mlir-opt's spellings (`--pass-pipeline`, `--mlir-print-ir-after-all`, `--mlir-timing`, ...)
are added next to xDSL's, and where both name one thing they share a destination
(`--mlir-print-op-generic` is `--print-op-generic`). As in mlir-opt, an option must be
spelled in full (no argparse abbreviations), and a misspelled one is an error that suggests
the closest option instead of argparse's usage text.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import NoReturn

from irgrad.diagnostics import IrgradError

TOOL = "irgrad-opt"


class CommandLineError(IrgradError):
    """The command line cannot be acted on: bad flag, missing input file, bad output path."""

_MLIR_FLAGS: list[tuple[str, str, str]] = [
    # (flag, destination, help)
    ("--mlir-print-ir-before-all", "print_ir_before_all", "Print the IR before every pass, on stderr"),
    ("--mlir-print-ir-after-all", "print_ir_after_all", "Print the IR after every pass, on stderr"),
    ("--print-ir-after-all", "print_ir_after_all", "Alias of --mlir-print-ir-after-all"),
    ("--mlir-print-ir-after-change", "print_ir_after_change",
     "With --mlir-print-ir-after-all, print the IR after a pass only when the pass changed it"),
    ("--mlir-print-ir-after-failure", "print_ir_after_failure",
     "Print the IR after a pass that failed (and after no other pass)"),
    ("--mlir-timing", "mlir_timing", "Print the wall time of each pass, with a total, on stderr"),
    ("--mlir-pass-statistics", "mlir_pass_statistics",
     "Print each pass's statistics (runs and op counts before and after) on stderr"),
    ("--dump-pass-pipeline", "dump_pass_pipeline", "Print the pass pipeline, in builtin.module(...) form, on stderr"),
    ("--mlir-print-debuginfo", "print_debuginfo", "Print locations (alias of --print-debuginfo)"),
    ("--mlir-print-op-generic", "print_op_generic", "Print ops in the generic form (alias of --print-op-generic)"),
    ("--list-passes", "list_passes", "List the registered passes with their options, then the pipelines, and exit"),
]


def register_arguments(arg_parser: argparse.ArgumentParser, is_pass: Callable[[str], bool]) -> None:
    """Add irgrad's and mlir-opt's flags to a parser xDSL has filled in."""
    arg_parser.prog = TOOL
    arg_parser.allow_abbrev = False
    arg_parser.error = lambda message: _usage_error(arg_parser, message, is_pass)  # type: ignore[method-assign]
    for action in arg_parser._actions:
        if action.dest == "passes":
            # xDSL lists every pass here, hundreds of names: --list-passes does that.
            action.help = "Comma-separated passes to run, e.g. 'cse,canonicalize{max-iterations=3}' (see --list-passes)"
        elif action.dest == "verify_diagnostics":
            action.help = ("Check the diagnostics against the input's expected-error/-warning/-note annotations, "
                           "as mlir-opt does; exit 1 on a missing or unexpected one")
        elif action.dest == "time_passes":
            action.help = "Alias of --mlir-timing"
        elif action.dest == "input_file":
            action.help = "Input file; '-' or none reads standard input"
    arg_parser.add_argument(
        "--pass-pipeline",
        default="",
        help="The pass pipeline in MLIR's form, with op anchors: "
        "'builtin.module(func.func(cse,canonicalize),symbol-dce)'",
    )
    for flag, dest, text in _MLIR_FLAGS:
        arg_parser.add_argument(flag, dest=dest, default=False, action="store_true", help=text)
    arg_parser.add_argument(
        "--verify-each",
        choices=("structural", "numeric", "true", "false"),
        default="structural",
        help="After every pass, verify the IR (structural, the default; 'true' is the same, as "
        "mlir-opt spells it) and with 'numeric' also run the public functions on the reference "
        "interpreter on random inputs, stopping at the first pass that changes their results; "
        "'false' verifies the input only, as mlir-opt --verify-each=false (the verifier is about "
        "half of a long pipeline's time)",
    )
    arg_parser.add_argument(
        VIEW_OP_GRAPH,
        nargs="?",
        const="",
        default=None,
        metavar="OPTIONS",
        help="Print the computation graph of the resulting module as Graphviz DOT instead of its IR, on "
        "stdout or to -o; options as the view-op-graph pass takes them, space-separated: "
        "--view-op-graph='max-label-len=40 max-depth=1'",
    )
    arg_parser.add_argument(
        "--report",
        default=None,
        metavar="FILE",
        help="Write one self-contained HTML page to FILE: the IR after each pass of the pipeline, "
        "with a diff to the one before and the time each pass took",
    )
    arg_parser.add_argument(
        "--gpu-arch",
        default="sm_80",
        help="GPU architecture the ptx target compiles for (default sm_80)",
    )


VIEW_OP_GRAPH = "--view-op-graph"


def spell_out_flags(argv: Sequence[str]) -> list[str]:
    """A bare `--view-op-graph` as `--view-op-graph=`: it takes options only after `=`, as mlir-opt's
    pass flags do, so `--view-op-graph model.mlir` leaves `model.mlir` the input file."""
    return [f"{arg}=" if arg == VIEW_OP_GRAPH else arg for arg in argv]


def _option_strings(arg_parser: argparse.ArgumentParser) -> Iterable[str]:
    for action in arg_parser._actions:
        yield from action.option_strings


def _usage_error(arg_parser: argparse.ArgumentParser, message: str, is_pass: Callable[[str], bool]) -> NoReturn:
    """argparse prints usage and exits 2; irgrad-opt reports every problem one way, exit 1."""
    unknown = re.match(r"unrecognized arguments: (.*)", message)
    if unknown:
        flags = [arg for arg in unknown.group(1).split() if arg.startswith("-")]
        if flags:
            flag = flags[0].split("=", 1)[0]
            if is_pass(flag.lstrip("-")):
                message += (f"; '{flag.lstrip('-')}' is a pass: run it with -p {flag.lstrip('-')} "
                            f"or --pass-pipeline='builtin.module({flag.lstrip('-')})'")
            else:
                close = difflib.get_close_matches(flag, list(_option_strings(arg_parser)), n=1, cutoff=0.6)
                if close:
                    message += f"; did you mean {close[0]}?"
    raise CommandLineError(f"{message} (see '{TOOL} --help')")
