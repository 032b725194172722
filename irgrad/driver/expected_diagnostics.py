"""`--verify-diagnostics` with MLIR's meaning: the input says which diagnostics it expects.

    // expected-error @+1 {{contracting dimensions differ}}
    %2 = nn.matmul %0, %1 : ...

An annotation is `expected-(error|warning|note|remark)`, then `@+N`, `@-N`, `@above`,
`@below` or `@unknown` (or nothing: the annotation's own line), then `{{text}}`; a produced
diagnostic matches when it is of that kind, on that line, and its message contains the text
(MLIR's plain substring match). What is left over is reported as mlir-opt reports it:
`file:line:col: error: expected error "..." was not produced` at the annotation, and
`file:line:col: error: unexpected error: ...` at the diagnostic. With --split-input-file each
chunk is checked against its own annotations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xdsl.utils.exceptions import MultipleSpansParseError, ParseError
from xdsl.utils.lexer import Location

from irgrad.diagnostics import IrgradError, SourceMap, format_diagnostic, location_of, source_line

_ANNOTATION = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$"
)


@dataclass
class Diagnostic:
    """One diagnostic a run produced: its kind, message and place (None: unknown)."""

    severity: str
    message: str
    location: Location | None = None
    notes: list[Diagnostic] = field(default_factory=list)


@dataclass
class Expected:
    """One `expected-*` annotation: the kind, the line it applies to, the text to find."""

    severity: str
    line: int
    text: str
    at: Location
    unknown: bool = False
    matched: bool = False


def diagnostics_of(err: BaseException) -> list[Diagnostic]:
    """The diagnostic (and its notes) an exception of a run stands for."""
    if isinstance(err, ParseError):
        diagnostic = Diagnostic("error", err.msg, err.span.get_location())
        if isinstance(err, MultipleSpansParseError):
            diagnostic.notes = [Diagnostic("note", note or "see here", span.get_location()) for span, note in err.refs]
    elif isinstance(err, IrgradError):
        diagnostic = Diagnostic("error", err.message, err.location)
    else:
        diagnostic = Diagnostic("error", " ".join(str(err).split()) or type(err).__name__)
    for note in getattr(err, "__notes__", ()):
        diagnostic.notes.append(Diagnostic("note", str(note)))
    return [diagnostic]


def diagnostic_of_warning(warning: Warning) -> Diagnostic:
    """A Python warning a pass issued, as a `warning:` diagnostic; located when the warning
    carries a `location` (a location attribute) or an `op`."""
    location = getattr(warning, "location", None)
    if location is None and getattr(warning, "op", None) is not None:
        location = warning.op.location  # type: ignore[attr-defined]
    if location is not None and not isinstance(location, Location):
        location = location_of(location)
    return Diagnostic("warning", str(warning), location)


def parse_expectations(text: str, file: str, line_offset: int = 0) -> tuple[list[Expected], list[str]]:
    """The annotations of one input (or chunk), and the errors in writing them."""
    expected: list[Expected] = []
    errors: list[str] = []
    pending_below: list[Expected] = []
    last_plain_line = line_offset + 0
    lines = text.split("\n")
    for index, raw in enumerate(lines):
        number = line_offset + index + 1
        match = _ANNOTATION.search(raw.rstrip())
        if match is None:
            for item in pending_below:
                item.line = number
            pending_below.clear()
            last_plain_line = number
            continue
        severity, regex, _, offset, body = match.groups()
        at = Location(file, number, match.start() + 1)
        if regex:
            errors.append(format_diagnostic("expected-*-re annotations are not supported; use a plain {{substring}}", at))
            continue
        item = Expected(severity, number, body, at)
        if offset is None:
            pass
        elif offset[0] in "+-":
            item.line = number + int(offset)
        elif offset == "unknown":
            item.unknown = True
        elif offset == "above":
            item.line = last_plain_line
        else:  # below: the next line that is not an annotation
            item.line = line_offset + len(lines)
            pending_below.append(item)
        expected.append(item)
    return expected, errors


def check(expected: list[Expected], produced: list[Diagnostic], sources: SourceMap) -> list[str]:
    """Match what a run produced against what its input expected: the problems, MLIR's text."""
    problems: list[str] = []
    flat = [d for diagnostic in produced for d in (diagnostic, *diagnostic.notes)]
    for diagnostic in flat:
        near_miss = None
        # An annotation not matched yet is preferred; a matched one absorbs repeats, as in MLIR.
        for item in sorted(expected, key=lambda e: e.matched):
            if diagnostic.location is None:
                if not item.unknown:
                    continue
            elif item.unknown or diagnostic.location.line != item.line:
                continue
            if item.text in diagnostic.message:
                if item.severity == diagnostic.severity:
                    item.matched = True
                    break
                near_miss = item
        else:
            if near_miss is not None:
                problems.append(_at(near_miss.at, f"'{diagnostic.severity}' diagnostic emitted when expecting a "
                                    f"'{near_miss.severity}'", sources))
            else:
                problems.append(_at(diagnostic.location, f"unexpected {diagnostic.severity}: {diagnostic.message}",
                                    sources))
    for item in expected:
        if not item.matched:
            problems.append(_at(item.at, f'expected {item.severity} "{item.text}" was not produced', sources))
    return problems


def _at(location: Location | None, message: str, sources: SourceMap) -> str:
    line = None if location is None else source_line(location, sources)
    return format_diagnostic(message, location, line_text=line)


def render(diagnostic: Diagnostic, sources: SourceMap, tool: str) -> str:
    """A diagnostic as mlir-opt prints it (unlocated ones prefixed with the tool's name)."""
    parts = []
    for d in (diagnostic, *diagnostic.notes):
        line = None if d.location is None else source_line(d.location, sources)
        text = format_diagnostic(d.message, d.location, severity=d.severity, line_text=line)
        parts.append(text if d.location is not None or d is not diagnostic else f"{tool}: {text}")
    return "\n".join(parts)
