"""Located, MLIR-style diagnostics: `file:line:col: error: message`, the source line, a caret.

Why this module exists: xDSL's parser does not record where an operation came from, and its
verifier reports a failure by printing the whole module with an annotation. irgrad wants what
mlir-opt prints instead, so that a user (of `irgrad-opt` or of the Python frontend, whose ops
carry the user's Python line as a location) can jump straight to the offending line:

    model.mlir:12:8: error: 'nn.matmul' op contracting dimensions differ: lhs 4x3, rhs 5x2
      %2 = nn.matmul %0, %1 : ...
           ^

Three pieces give that:
- `LocatedParser`, an xDSL `Parser` that gives every op without an explicit `loc(...)` a
  `FileLineColLoc` at its first token (results included);
- `verify_module`, which verifies op by op so that a failure names the op and its location;
- one exception hierarchy, rooted at `IrgradError` and built on xDSL's `DiagnosticException`,
  whose `str()` is the MLIR-style text.
"""

from __future__ import annotations

import dataclasses
import linecache
import struct
from collections.abc import Mapping
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    PassFailedException,
    VerifyException,
)
from xdsl.utils.lexer import Location, Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

SourceMap = Mapping[str, str]
"""File name -> full text of that file; where carets take their source lines from."""

# xDSL wraps verifier messages in prefixes that MLIR does not print.
_XDSL_PREFIXES = ("Operation does not verify: ",)


# --------------------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------------------


def location_of(loc: Attribute | None) -> Location | None:
    """The file position a location attribute points at, or None when it has none.

    Named, call-site and fused locations point wherever their first file location does,
    which is the position MLIR's diagnostic printer shows for them too.
    """
    match loc:
        case FileLineColLoc():
            return Location(loc.filename.data, loc.line.data, loc.column.data)
        case NameLoc():
            return location_of(loc.location)
        case CallSiteLoc():
            return location_of(loc.callee) or location_of(loc.caller)
        case FusedLoc():
            for inner in loc.locations:
                if (found := location_of(inner)) is not None:
                    return found
            return None
        case _:
            return None


def file_line_col(file: str, line: int, col: int) -> FileLineColLoc:
    """Build the builtin location attribute `loc("file":line:col)`."""
    return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(col))


def source_line(location: Location, sources: SourceMap | None = None) -> str | None:
    """The text of the line a location points at, without its newline, if it can be found.

    `sources` wins; otherwise the file is read from disk (through `linecache`, so a Python
    frontend location finds the user's `.py` line for free).
    """
    if location.line < 1:
        return None
    if sources is not None and location.file in sources:
        lines = sources[location.file].splitlines()
        return lines[location.line - 1] if location.line <= len(lines) else None
    text = linecache.getline(location.file, location.line)
    return text.rstrip("\r\n") if text else None


def format_diagnostic(
    message: str,
    location: Location | None = None,
    *,
    severity: str = "error",
    line_text: str | None = None,
    caret_len: int = 1,
) -> str:
    """Render one diagnostic the way MLIR's SourceMgr handler does.

    `file:line:col: error: message`, then (when `line_text` is known) the source line and a
    caret under the column. Without a location the text is just `error: message`; a tool
    prefixes its own name (`irgrad-opt: error: ...`).
    """
    head = f"{severity}: {message}"
    if location is None:
        return head
    head = f"{location}: {head}"
    if line_text is None:
        return head
    line_text = line_text.expandtabs(1)  # one column per character, so the caret lines up
    col = max(location.col - 1, 0)
    width = max(1, min(caret_len, len(line_text) - col))
    return f"{head}\n{line_text}\n{' ' * col}^{'~' * (width - 1)}"


# --------------------------------------------------------------------------------------
# Exceptions
# --------------------------------------------------------------------------------------


class IrgradError(DiagnosticException):
    """Base of irgrad's errors about the user's program: a message and maybe a location.

    `str()` gives the MLIR-style text; `format(sources)` does the same with source lines
    taken from `sources` (the driver passes the input files it has read, stdin included).
    """

    message: str
    location: Location | None
    sources: SourceMap | None

    def __init__(
        self,
        message: str,
        location: Location | Attribute | None = None,
        *,
        sources: SourceMap | None = None,
    ) -> None:
        if location is not None and not isinstance(location, Location):
            location = location_of(location)
        self.message = message
        self.location = location
        self.sources = sources
        super().__init__(message)

    @property
    def is_located(self) -> bool:
        return self.location is not None

    def format(self, sources: SourceMap | None = None) -> str:
        """The MLIR-style text, with the source line and caret when the source is known."""
        sources = sources if sources is not None else self.sources
        line = None if self.location is None else source_line(self.location, sources)
        return format_diagnostic(self.message, self.location, line_text=line)

    def __str__(self) -> str:
        return self.format()


class NaNError(IrgradError, FloatingPointError):
    """An op made a NaN (or an infinity) from operands without one: raised, at the op, by the
    interpreter's NaN check (irgrad/backends/interpreter/nan_checks.py, `ig.debug_nans`)."""


class IRParseError(IrgradError):
    """The input text is not valid IR (syntax error, unknown op, type or attribute)."""

    span: Span[str] | Span[bytes]

    @classmethod
    def from_parse_error(cls, error: ParseError) -> IRParseError:
        result = cls(error.msg, error.span.get_location())
        result.span = error.span
        result.__cause__ = error
        return result

    def format(self, sources: SourceMap | None = None) -> str:
        # The span holds the parsed text itself, so `sources` is not needed.
        return _format_span(self.span, self.message)


def nearest_location(op: Operation) -> Attribute:
    """`op`'s location, or its nearest ancestor's when `op` has none: an op a pass built
    without a location (a copy it inserted) is reported inside the function it was put in."""
    current: Operation | None = op
    while current is not None:
        if location_of(current.location) is not None:
            return current.location
        current = current.parent_op()
    return op.location


class IRVerifyError(IrgradError, VerifyException):
    """An operation failed its verifier; the message names the op, MLIR style."""

    op: Operation

    def __init__(
        self, op: Operation, message: str, *, sources: SourceMap | None = None
    ) -> None:
        self.op = op
        super().__init__(f"'{op.name}' op {message}", nearest_location(op), sources=sources)


class PassError(IrgradError, PassFailedException):
    """A pass cannot do its job on this input; the message should say what to run first.

    Raise it from a pass as `PassError("requires buffer semantics; run bufferize first", op)`.
    """

    op: Operation | None

    def __init__(self, message: str, op: Operation | None = None) -> None:
        self.op = op
        if op is None:
            super().__init__(message)
        else:
            super().__init__(f"'{op.name}' op {message}", op.location)


class PipelineError(IrgradError):
    """A pass pipeline cannot be built: unknown pass, bad option, bad syntax."""


def _format_span(span: Span[str] | Span[bytes], message: str, severity: str = "error") -> str:
    """A diagnostic at a parser span: its location, its source line, carets under it."""
    location = span.get_location()
    content = span.input.content
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    # A `--split-input-file` chunk starts at line `line_offset + 1` of its file: pad the
    # chunk text so its lines count like the file's.
    padded = "\n" * span.line_offset + text
    return format_diagnostic(
        message,
        location,
        severity=severity,
        line_text=source_line(location, {location.file: padded}),
        caret_len=max(1, len(span)),
    )


def format_parse_error(error: ParseError) -> str:
    """Render an xDSL ParseError as `file:line:col: error: message`, source line, carets.

    The line number includes the span's `line_offset` (set for `--split-input-file` chunks).
    A `MultipleSpansParseError` adds one `note:` per referenced span.
    """
    text = _format_span(error.span, error.msg)
    if isinstance(error, MultipleSpansParseError):
        for span, note in error.refs:
            text += "\n" + _format_span(span, note or "see here", "note")
    return text


# --------------------------------------------------------------------------------------
# Parsing with locations
# --------------------------------------------------------------------------------------


MAX_OP_NESTING = 64
"""How deep operations may nest in parsed IR (a function's region is depth 2): the recursive
walks of verifiers, passes and printers stay far from Python's stack limit."""


def _first_character(span: Span[str]) -> Span[str]:
    """The first character of `span`, as a plain span (a token may be a string literal, whose
    span class refuses a piece without its closing quote)."""
    return Span(span.start, span.start + 1, span.input)


class LocatedParser(Parser):
    """An xDSL parser that records where every operation came from.

    Each op parsed without an explicit `loc(...)` gets `loc("<name>":line:col)` at its first
    token (the first result, if any). `line_offset` is added to line numbers, for a chunk
    of a `--split-input-file` input that starts after line `line_offset` of its file.
    A verifier failure of an attribute built while parsing (`arith.constant 300 : i8`)
    becomes a ParseError at the op, instead of an unlocated VerifyException.
    """

    def __init__(
        self,
        ctx: Context,
        input: str | bytes,
        name: str = "<unknown>",
        line_offset: int = 0,
    ) -> None:
        super().__init__(ctx, input, name)
        self.name = name
        self.line_offset = line_offset
        self._filename = StringAttr(name)
        # (position, 1-based line of that position in this input): ops are met in text
        # order, so newlines are counted once per input instead of once per op.
        self._cursor: tuple[int, int] = (0, 1)

    def _line_col(self, pos: int, content: str) -> tuple[int, int]:
        cursor_pos, cursor_line = self._cursor
        if pos >= cursor_pos:
            line = cursor_line + content.count("\n", cursor_pos, pos)
        else:
            line = cursor_line - content.count("\n", pos, cursor_pos)
        self._cursor = (pos, line)
        col = pos - (content.rfind("\n", 0, pos) + 1) + 1
        return line + self.line_offset, col

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        content = span.input.content
        assert isinstance(content, str)
        line, col = self._line_col(span.start, content)
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_OP_NESTING:
                raise ParseError(
                    _first_character(span),
                    f"operations nested more than {MAX_OP_NESTING} deep (regions in regions): "
                    "irgrad's passes and printers take at most that")
            op = super().parse_operation()
        except VerifyException as err:
            at_op = _first_character(span)
            raise ParseError(at_op, _clean_message(str(err))) from err
        except (ValueError, IndexError, ArithmeticError, struct.error, NotImplementedError, MemoryError) as err:
            # xDSL builders that reject a literal while parsing (an integer out of its type's
            # range, an op with too few operands) raise these instead of a ParseError: the
            # user's text is still what is wrong, so it is a located error, not a crash.
            at_op = _first_character(span)
            why = str(err) or ("it needs more memory than there is" if isinstance(err, MemoryError) else type(err).__name__)
            raise ParseError(at_op, f"cannot build this op from its text: {why}") from err
        finally:
            self._depth -= 1
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(self._filename, IntAttr(line), IntAttr(col))
        return op

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """Parse a module; an empty input is an empty module, as in mlir-opt.

        The implicit module around top-level ops takes the location of the first op.
        """
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError:
            # Attributes, types or parentheses nested past Python's stack: the text's fault.
            span = self._current_token.span
            raise ParseError(
                _first_character(span),
                "nested too deeply to parse (attributes, types or parentheses within each other)",
            ) from None
        first = module.body.block.first_op
        if isinstance(module.location, UnknownLoc) and first is not None:
            module.location = first.location
        return module


def parse_module(
    ctx: Context, text: str, name: str = "<stdin>", *, line_offset: int = 0
) -> ModuleOp:
    """Parse MLIR text into a located module; a syntax error raises `IRParseError`."""
    try:
        return LocatedParser(ctx, text, name, line_offset).parse_module()
    except ParseError as err:
        err.span = dataclasses.replace(err.span, line_offset=line_offset)
        raise IRParseError.from_parse_error(err) from err


# --------------------------------------------------------------------------------------
# Verification with locations
# --------------------------------------------------------------------------------------


def _clean_message(message: str, op_name: str | None = None) -> str:
    """Turn an xDSL verifier message into an MLIR-style one.

    Drops "Operation does not verify: " and a leading "Operation <name> " or "'<name>' op "
    (the caller adds "'<name>' op " back), joins the lines
    (MLIR messages are one line). The wording is the verifier's own: tests CHECK it.
    """
    message = " ".join(line.strip() for line in message.splitlines() if line.strip())
    changed = True
    while changed:
        changed = False
        for prefix in _XDSL_PREFIXES:
            if message.startswith(prefix):
                message = message[len(prefix) :]
                changed = True
    if op_name is not None:
        # xDSL's structural checks say "Operation x.y ..."; verifiers written MLIR style
        # (like irgrad's) already say "'x.y' op ...", which IRVerifyError adds itself.
        for prefix in (f"Operation {op_name} ", f"'{op_name}' op "):
            if message.startswith(prefix):
                message = message[len(prefix) :]
    return message


def _verify_blocks(op: Operation) -> None:
    """The block checks `Block.verify` makes, which `verify(verify_nested_ops=False)` skips."""
    for region in op.regions:
        if len(region.blocks) != 1 or op.has_trait(NoTerminator):
            continue
        if region.block.first_op is None:
            raise VerifyException(
                "contains empty block in single-block region that expects at least a "
                "terminator"
            )


class _Order:
    """Each op's position in its block, and each multi-block region's dominators and reachable
    blocks, computed once per block (region) per verification."""

    def __init__(self) -> None:
        self.positions: dict[object, dict[Operation, int]] = {}
        self.regions: dict[object, tuple[Any, set[object]]] = {}

    def block_dominates(self, a: Any, b: Any) -> bool:
        """Whether block `a` dominates block `b` of the same region; as in MLIR, a block that
        the entry block does not reach is dominated by every block (its uses are not checked)."""
        from xdsl.irdl.dominance import DominanceInfo

        region = b.parent
        entry = self.regions.get(region)
        if entry is None:
            reachable: set[object] = set()
            stack = [region.blocks.first]
            while stack:
                block = stack.pop()
                if block is None or block in reachable:
                    continue
                reachable.add(block)
                if block.last_op is not None:
                    stack.extend(block.last_op.successors)
            entry = self.regions[region] = (DominanceInfo(region), reachable)
        info, reachable = entry
        return b not in reachable or info.dominates(a, b)

    def before(self, a: Operation, b: Operation) -> bool:
        block = a.parent_block()
        positions = self.positions.get(block)
        if positions is None:
            assert block is not None
            positions = self.positions[block] = {o: k for k, o in enumerate(block.ops)}
        return positions[a] < positions[b]


def _dominance_problem(op: Operation, order: _Order) -> str | None:
    """Why an operand of `op` is not visible at `op` (MLIR's dominance rule), or None.

    A value is visible after its definition in its block and inside the regions of later ops
    of that block (a block argument: everywhere in its block), and in the blocks its block
    dominates in a multi-block region (a CFG: hand-written `cf` IR, xDSL's DominanceInfo;
    blocks the entry does not reach are not checked, as in MLIR)."""
    from xdsl.ir import BlockArgument

    for k, value in enumerate(op.operands):
        if isinstance(value, BlockArgument):
            def_block, def_op = value.block, None
        else:
            def_op = value.op
            def_block = def_op.parent_block()
        if def_block is None:
            continue  # a detached value: another check reports it
        user: Operation | None = op
        visible = False
        while user is not None:
            block = user.parent_block()
            if block is None:
                break
            if block is def_block:
                if def_op is None or (def_op is not user and order.before(def_op, user)):
                    visible = True
                    break
                if def_op is op:
                    return f"operand #{k} is the op's own result (it does not dominate this use)"
                if def_op is user:
                    return f"operand #{k} is a result of the op this use is nested in (it does not dominate this use)"
                return f"operand #{k} is used before its definition (it does not dominate this use)"
            if block.parent is def_block.parent:
                if order.block_dominates(def_block, block):
                    visible = True
                    break
                return (f"operand #{k} is defined in a block that does not dominate this use's block "
                        f"(it does not dominate this use)")
            user = block.parent_op()
        if not visible:
            return (f"operand #{k} is defined in a region that does not enclose this use "
                    f"(it does not dominate this use)")
    return None


def _declaration_problem(op: Operation) -> str | None:
    """A `func.func` without a body is a declaration, which MLIR requires to be private (an
    empty `{}` body parses as one in xDSL, and irgrad-run then found no function to run)."""
    from xdsl.dialects import func

    if isinstance(op, func.FuncOp) and not op.body.blocks:
        visibility = op.sym_visibility.data if op.sym_visibility is not None else "public"
        if visibility == "public":
            return "symbol declaration cannot have public visibility (a body needs at least a func.return)"
    return None


def _region_yield_problem(op: Operation) -> str | None:
    """scf.if / scf.for terminators that do not give the op's results, and a constant
    scf.for step that is not positive (both accepted by xDSL's verifiers)."""
    from xdsl.dialects import arith, scf
    from xdsl.dialects.builtin import IntegerAttr

    if isinstance(op, scf.IfOp | scf.ForOp):
        expected = [r.type for r in op.results]
        for index, region in enumerate(op.regions):
            if not region.blocks:
                continue
            terminator = region.block.last_op
            got = [v.type for v in terminator.operands] if isinstance(terminator, scf.YieldOp) else None
            if got is None:
                return f"region #{index} does not end in scf.yield"
            if got != expected:
                return (f"region #{index} yields {len(got)} value(s) ({', '.join(map(str, got)) or 'none'}), "
                        f"but the op has {len(expected)} result(s) ({', '.join(map(str, expected)) or 'none'})")
    if isinstance(op, scf.ForOp):
        step = op.step.owner
        if isinstance(step, arith.ConstantOp) and isinstance(step.value, IntegerAttr) and step.value.value.data <= 0:
            return f"constant step operand must be positive, got {step.value.value.data}"
    return None


def verify_module(op: Operation, source_text_by_file: SourceMap | None = None) -> None:
    """Verify `op` and everything nested in it, one op at a time.

    Nested ops are verified before their parent, as `Operation.verify` does. The first
    failure raises `IRVerifyError` at the failing op's location; its text has the source line
    and a caret when `source_text_by_file` (or the file on disk) has that line.
    """
    order = _Order()
    for child in op.walk(region_first=True):
        try:
            _verify_blocks(child)
            child.verify(verify_nested_ops=False)
            problem = (
                _dominance_problem(child, order)
                or _region_yield_problem(child)
                or _declaration_problem(child)
            )
            if problem is not None:
                raise VerifyException(problem)
        except VerifyException as err:
            if isinstance(err, IrgradError):
                raise
            message = _clean_message(str(err), child.name)
            raise IRVerifyError(child, message, sources=source_text_by_file) from err
        except IrgradError:
            raise
        except Exception as err:  # noqa: BLE001 - some xDSL verifiers raise a bare Exception
            # (memref.load with the wrong number of indices): still a verifier's finding about
            # this op, so it gets the op's location like any other.
            message = _clean_message(str(err), child.name)
            raise IRVerifyError(child, message, sources=source_text_by_file) from err
