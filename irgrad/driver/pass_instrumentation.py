"""What `irgrad-opt` reports around each pass, as mlir-opt does: IR dumps, timing, statistics.

- `IRPrinter`: `--mlir-print-ir-before-all`, `-after-all`, `-after-change`, `-after-failure`,
  with MLIR's banners (`// -----// IR Dump After CSE (cse) //----- //`), on stderr; a pass
  anchored on `func.func` dumps the function it ran on, as mlir-opt does by default.
- `PassTimer`: `--mlir-timing`, MLIR's `... Execution time report ...` (wall time per pass,
  nested pipelines indented under `'func.func' Pipeline`, then Rest and Total), on stderr.
- `PassStatistics`: `--mlir-pass-statistics`, MLIR's `... Pass statistics report ...`; xDSL
  passes keep no statistics, so each pass reports the ops before and after it.

Each is a `pass_pipeline.Instrumentation`; the driver chooses which to attach.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from io import StringIO
from typing import IO

from xdsl.printer import Printer

from irgrad.driver.pass_pipeline import Instrumentation, OpPipeline, PassEntry, PassScope

RULE = "===" + "-" * 73 + "==="


def report_header(title: str) -> str:
    """MLIR's report header: a rule, the title centred in 80 columns, a rule."""
    return f"{RULE}\n{' ' * ((80 - len(title)) // 2)}{title}\n{RULE}\n"


@dataclass
class IRPrinter(Instrumentation):
    """Dumps the IR a pass ran on, before or after it, MLIR's way."""

    before: bool = False
    after: bool = False
    only_on_change: bool = False
    on_failure: bool = False
    generic: bool = False
    debuginfo: bool = False
    stream: IO[str] | None = None
    _fingerprints: list[str] = field(default_factory=list)

    def before_pass(self, entry: PassEntry, scope: PassScope) -> None:
        if self.only_on_change:
            self._fingerprints.append(_fingerprint(scope))
        if self.before:
            self._dump("Before", entry, scope)

    def after_pass(self, entry: PassEntry, scope: PassScope) -> None:
        if self.only_on_change:
            if self._fingerprints.pop() == _fingerprint(scope):
                return
        if self.after:
            self._dump("After", entry, scope)

    def after_pass_failed(self, entry: PassEntry, scope: PassScope) -> None:
        if self.only_on_change:
            self._fingerprints.pop()
        if self.after or self.on_failure:
            self._dump("After", entry, scope, failed=True)

    def _dump(self, when: str, entry: PassEntry, scope: PassScope, failed: bool = False) -> None:
        stream = self.stream or sys.stderr
        status = " Failed" if failed else ""
        print(f"// -----// IR Dump {when} {entry.name}{status} ({entry.instance.name}) //----- //", file=stream)
        printer = Printer(stream=stream, print_generic_format=self.generic, print_debuginfo=self.debuginfo)
        for op in scope.ops():
            printer.print_op(op)
            print(file=stream)
        print("\n", file=stream, end="")
        stream.flush()


def _fingerprint(scope: PassScope) -> str:
    """The IR of a scope as generic text with locations: equal text, unchanged IR."""
    text = StringIO()
    printer = Printer(stream=text, print_generic_format=True, print_debuginfo=True)
    for op in scope.ops():
        printer.print_op(op)
    return text.getvalue()


@dataclass
class _Timing:
    name: str
    seconds: float = 0.0
    children: dict[str, _Timing] = field(default_factory=dict)

    def child(self, name: str) -> _Timing:
        return self.children.setdefault(name, _Timing(name))


@dataclass
class PassTimer(Instrumentation):
    """Wall time per pass (summed over the ops a nested pipeline ran on), MLIR's report."""

    start: float = field(default_factory=time.perf_counter)
    root: _Timing = field(default_factory=lambda: _Timing("root"))
    _stack: list[tuple[_Timing, float]] = field(default_factory=list)

    def _current(self) -> _Timing:
        return self._stack[-1][0] if self._stack else self.root

    def _push(self, name: str) -> None:
        self._stack.append((self._current().child(name), time.perf_counter()))

    def _pop(self) -> None:
        timing, started = self._stack.pop()
        timing.seconds += time.perf_counter() - started

    def before_pass(self, entry: PassEntry, scope: PassScope) -> None:
        self._push(entry.name)

    def after_pass(self, entry: PassEntry, scope: PassScope) -> None:
        self._pop()

    after_pass_failed = after_pass

    def before_pipeline(self, pipeline: OpPipeline) -> None:
        self._push(pipeline.name)

    def after_pipeline(self, pipeline: OpPipeline) -> None:
        self._pop()

    def add(self, name: str, seconds: float) -> None:
        """Time spent outside the passes (Parser, Verifier, Output)."""
        self.root.child(name).seconds += seconds

    def report(self) -> str:
        total = max(time.perf_counter() - self.start, 1e-9)
        lines = [report_header("... Execution time report ..."),
                 f"  Total Execution Time: {total:.4f} seconds\n\n",
                 "  ----Wall Time----  ----Name----\n"]

        def row(seconds: float, name: str, indent: int) -> None:
            lines.append(f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {' ' * indent}{name}\n")

        def walk(node: _Timing, indent: int) -> None:
            for child in node.children.values():
                row(child.seconds, child.name, indent)
                walk(child, indent + 2)

        walk(self.root, 0)
        accounted = sum(child.seconds for child in self.root.children.values())
        row(max(total - accounted, 0.0), "Rest", 0)
        row(total, "Total", 0)
        return "".join(lines)


@dataclass
class _Counts:
    name: str
    runs: int = 0
    before: int = 0
    after: int = 0
    children: dict[str, _Counts] = field(default_factory=dict)


@dataclass
class PassStatistics(Instrumentation):
    """Per pass: how often it ran and the ops in what it ran on, before and after."""

    root: _Counts = field(default_factory=lambda: _Counts("root"))
    _stack: list[_Counts] = field(default_factory=list)

    def _current(self) -> _Counts:
        return self._stack[-1] if self._stack else self.root

    def before_pass(self, entry: PassEntry, scope: PassScope) -> None:
        counts = self._current().children.setdefault(entry.name, _Counts(entry.name))
        counts.runs += 1
        counts.before += scope.op_count()
        self._stack.append(counts)

    def after_pass(self, entry: PassEntry, scope: PassScope) -> None:
        self._stack.pop().after += scope.op_count()

    after_pass_failed = after_pass

    def before_pipeline(self, pipeline: OpPipeline) -> None:
        self._stack.append(self._current().children.setdefault(pipeline.name, _Counts(pipeline.name)))

    def after_pipeline(self, pipeline: OpPipeline) -> None:
        self._stack.pop()

    def report(self) -> str:
        lines = [report_header("... Pass statistics report ...")]

        def walk(node: _Counts, indent: int) -> None:
            for child in node.children.values():
                lines.append(f"{' ' * indent}{child.name}\n")
                if child.children:
                    walk(child, indent + 2)
                    continue
                stats = [("num-runs", child.runs, "Number of times the pass ran"),
                         ("ops-before", child.before, "Number of operations before the pass"),
                         ("ops-after", child.after, "Number of operations after the pass")]
                width = max(len(str(value)) for _, value, _ in stats)
                name_width = max(len(name) for name, _, _ in stats)
                for name, value, description in sorted(stats):
                    lines.append(f"{' ' * (indent + 2)}(S) {value:>{width}} {name:<{name_width}} - {description}\n")

        walk(self.root, 0)
        return "".join(lines)
