"""`--pass-pipeline`: MLIR's textual pass pipeline, with op anchors, and the runner of it.

`builtin.module(func.func(cse,canonicalize{max-iterations=3}),symbol-dce)` reads as in
mlir-opt: a pass list nested under `func.func(...)` runs, pass after pass, on each
`func.func` directly inside the module (the anchor must be an op that is isolated from
above); a pass directly under `builtin.module(...)` runs on the module. `-p a,b` is the
pipeline `builtin.module(a,b)`.

Why a runner of its own: xDSL's `PassPipeline` only runs `ModulePass`es on the top module
and calls back between passes. irgrad runs a pass anchored on another op on a module that
holds that op alone, for the pass's run (what such a pass may see in MLIR too), and tells
each `Instrumentation` (IR printing, timing, statistics: pass_instrumentation.py) before
and after every pass, and after one that failed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsolatedFromAbove
from xdsl.utils.arg_spec import ArgSpec, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError

from irgrad import registry
from irgrad.diagnostics import PipelineError

ROOT_ANCHOR = "builtin.module"
_NAME = re.compile(r"[A-Za-z0-9_.$-]+")


@dataclass
class PassEntry:
    """One pass of a pipeline, with the spelling it was given."""

    instance: ModulePass
    column: int = 0

    @property
    def name(self) -> str:
        return registry.display_name(type(self.instance))

    def textual(self) -> str:
        spec = self.instance.spec(include_default=True)
        options = " ".join(
            _option_text(key, value) for key, value in spec.parameters.items()
        )
        return f"{spec.name}{{{options}}}" if options else spec.name


@dataclass
class OpPipeline:
    """Passes (and nested pipelines) anchored on the ops named `anchor`."""

    anchor: str
    elements: list[PassEntry | OpPipeline] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"'{self.anchor}' Pipeline"

    def textual(self) -> str:
        return f"{self.anchor}({','.join(e.textual() for e in self.elements)})"

    def pass_count(self) -> int:
        return sum(1 if isinstance(e, PassEntry) else e.pass_count() for e in self.elements)

    def passes(self) -> list[ModulePass]:
        found: list[ModulePass] = []
        for element in self.elements:
            if isinstance(element, PassEntry):
                found.append(element.instance)
            else:
                found.extend(element.passes())
        return found


def _option_text(key: str, value: tuple) -> str:
    key = key.replace("_", "-")
    if not value:
        return key
    return f"{key}={','.join(ArgSpec._spec_parameter_type_str(v) for v in value)}"


# --------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------


def _error(text: str, column: int, message: str) -> PipelineError:
    """A pipeline error at a 1-based column of the pipeline text, with a caret under it."""
    return PipelineError(
        f"invalid pass pipeline at column {column}: {message}\n  {text}\n  {' ' * (column - 1)}^"
    )


@dataclass
class _Node:
    """A parsed, not yet built, element: an anchor with children or a pass spec."""

    name: str
    column: int
    spec: ArgSpec | None = None
    children: list[_Node] | None = None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def fail(self, message: str, pos: int | None = None) -> PipelineError:
        return _error(self.text, (self.pos if pos is None else pos) + 1, message)

    def parse(self) -> _Node:
        self.skip_spaces()
        root = self.element(top=True)
        self.skip_spaces()
        if self.pos < len(self.text):
            char = self.peek()
            why = "unbalanced parentheses" if char == ")" else "expected the end of the pipeline"
            raise self.fail(f"unexpected '{char}': {why}")
        return root

    def element(self, top: bool = False) -> _Node:
        match = _NAME.match(self.text, self.pos)
        if match is None:
            what = "an op anchor such as 'builtin.module(...)'" if top else "a pass name or an op anchor"
            found = f"'{self.peek()}'" if self.peek() else "the end of the pipeline"
            raise self.fail(f"expected {what}, found {found}")
        start, name = self.pos, match.group()
        self.pos = match.end()
        if self.peek() == "(":
            return _Node(name, start + 1, children=self.nested(start))
        if top:
            raise self.fail(
                "the pipeline must be wrapped with the anchor operation type, "
                f"e.g. 'builtin.module({name})'",
                start,
            )
        if self.peek() != "{":
            return _Node(name, start + 1, spec=ArgSpec(name, {}))
        close = self.closing_brace(self.pos)
        spec_text = self.text[start : close + 1]
        try:
            spec = parse_spec(spec_text)
        except ArgSpecParseError as err:  # a BaseException in xDSL
            message = registry._arg_spec_message(err)
            raise self.fail(f"bad options of pass '{name}': {message}", start + err.token.span.start) from None
        self.pos = close + 1
        return _Node(name, start + 1, spec=spec)

    def closing_brace(self, open_pos: int) -> int:
        quoted = False
        for pos in range(open_pos + 1, len(self.text)):
            char = self.text[pos]
            if char == '"' and self.text[pos - 1] != "\\":
                quoted = not quoted
            elif char == "}" and not quoted:
                return pos
        raise self.fail("unbalanced braces: this '{' is never closed", open_pos)

    def nested(self, anchor_pos: int) -> list[_Node]:
        open_pos = self.pos
        self.pos += 1  # the '('
        children: list[_Node] = []
        self.skip_spaces()
        if self.peek() == ")":
            self.pos += 1
            return children
        while True:
            self.skip_spaces()
            children.append(self.element())
            self.skip_spaces()
            char = self.peek()
            if char == ",":
                self.pos += 1
            elif char == ")":
                self.pos += 1
                return children
            elif not char:
                raise self.fail("unbalanced parentheses: this '(' is never closed", open_pos)
            else:
                raise self.fail(f"expected ',' or ')' after a pass, found '{char}'")


# --------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------


def parse_pass_pipeline(text: str, ctx: Context) -> OpPipeline:
    """The pipeline `text` spells, its passes built; a PipelineError names the column."""
    root = _Parser(text).parse()
    if root.name != ROOT_ANCHOR:
        raise _error(
            text,
            root.column,
            f"the top-level anchor must be '{ROOT_ANCHOR}' (the input is a module), got '{root.name}'",
        )
    return _build(text, root, ctx)


def pipeline_from_pass_list(spec: str) -> OpPipeline:
    """`-p a,b{x=1}` (named pipelines expanded) as the pipeline `builtin.module(a,b{x=1})`."""
    passes = [PassEntry(registry.instantiate_pass(s)) for s in registry.expand_pipeline_spec(spec)]
    return OpPipeline(ROOT_ANCHOR, list(passes))


def _build(text: str, node: _Node, ctx: Context) -> OpPipeline:
    pipeline = OpPipeline(node.name)
    for child in node.children or ():
        if child.children is not None:
            _check_anchor(text, child, ctx)
            pipeline.elements.append(_build(text, child, ctx))
            continue
        assert child.spec is not None
        try:
            specs = registry.expand_pipeline_spec(str(child.spec)) if not child.spec.parameters else [child.spec]
            for spec in specs:
                pipeline.elements.append(PassEntry(registry.instantiate_pass(spec), child.column))
        except PipelineError as err:
            raise _error(text, child.column, err.message) from None
    return pipeline


def _check_anchor(text: str, node: _Node, ctx: Context) -> None:
    op_class = ctx.get_optional_op(node.name)
    if op_class is None:
        dialect = node.name.partition(".")[0]
        known = [op.name for op in ctx.loaded_ops if op.name.startswith(dialect + ".")]
        close = difflib.get_close_matches(node.name, known or [ROOT_ANCHOR, "func.func"], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise _error(text, node.column, f"'{node.name}' does not refer to a registered operation{hint}")
    if not op_class.has_trait(IsolatedFromAbove):
        raise _error(
            text,
            node.column,
            f"'{node.name}' is not isolated from above: passes can only be nested under ops that "
            "are (builtin.module, func.func, gpu.module, ...)",
        )


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------


@dataclass
class PassScope:
    """What one pass runs on: `module`, the top module or one that holds the anchored op
    alone (`wrapped`); `anchor` names that op, `symbol` its sym_name if it has one."""

    module: ModuleOp
    wrapped: bool
    anchor: str
    symbol: str | None = None

    def ops(self) -> list[Operation]:
        """The ops the pass ran on: the module, or what stands in the anchored op's place."""
        return list(self.module.body.block.ops) if self.wrapped else [self.module]

    def op_count(self) -> int:
        return sum(1 for op in self.ops() for _ in op.walk())


class Instrumentation:
    """Hooks around every pass (MLIR's PassInstrumentation); each does nothing by default."""

    def before_pass(self, entry: PassEntry, scope: PassScope) -> None: ...
    def after_pass(self, entry: PassEntry, scope: PassScope) -> None: ...
    def after_pass_failed(self, entry: PassEntry, scope: PassScope) -> None: ...
    def before_pipeline(self, pipeline: OpPipeline) -> None: ...
    def after_pipeline(self, pipeline: OpPipeline) -> None: ...


@dataclass
class PipelineRunner:
    """Runs an OpPipeline on a module, telling `instrumentations` about every pass.

    `after_top_level(name, module)` is called after each element of the top pipeline (a
    pass or a nested pipeline): the driver verifies there; an error it raises right after a
    pass counts as that pass's failure.
    """

    ctx: Context
    instrumentations: Sequence[Instrumentation] = ()
    after_top_level: Callable[[str, ModuleOp], None] | None = None

    def run(self, pipeline: OpPipeline, module: ModuleOp) -> None:
        scope = PassScope(module, wrapped=False, anchor=ROOT_ANCHOR)
        self._run_elements(pipeline.elements, scope, top=True)

    def _run_elements(self, elements: Sequence[PassEntry | OpPipeline], scope: PassScope, top: bool) -> None:
        for element in elements:
            if isinstance(element, PassEntry):
                self._run_pass(element, scope, top)
                continue
            for hook in self.instrumentations:
                hook.before_pipeline(element)
            try:
                for child in list(_anchored_children(scope, element.anchor)):
                    self._run_anchored(element, child)
            finally:
                for hook in self.instrumentations:
                    hook.after_pipeline(element)
            if top and self.after_top_level is not None:
                self.after_top_level(element.name, scope.module)

    def _run_pass(self, entry: PassEntry, scope: PassScope, top: bool) -> None:
        for hook in self.instrumentations:
            hook.before_pass(entry, scope)
        try:
            entry.instance.apply(self.ctx, scope.module)
            if top and self.after_top_level is not None:
                self.after_top_level(entry.instance.name, scope.module)
        except BaseException:
            for hook in self.instrumentations:
                hook.after_pass_failed(entry, scope)
            raise
        for hook in self.instrumentations:
            hook.after_pass(entry, scope)

    def _run_anchored(self, pipeline: OpPipeline, op: Operation) -> None:
        symbol = getattr(op.attributes.get("sym_name") or op.properties.get("sym_name"), "data", None)
        if isinstance(op, ModuleOp):
            self._run_elements(pipeline.elements, PassScope(op, False, pipeline.anchor, symbol), top=False)
            return
        block, after = op.parent_block(), op.next_op
        assert block is not None
        op.detach()
        wrapper = ModuleOp([op])
        try:
            self._run_elements(pipeline.elements, PassScope(wrapper, True, pipeline.anchor, symbol), top=False)
        finally:
            for result in list(wrapper.body.block.ops):
                result.detach()
                if after is None:
                    block.add_op(result)
                else:
                    block.insert_op_before(result, after)


def _anchored_children(scope: PassScope, anchor: str) -> list[Operation]:
    """The ops named `anchor` directly inside the op(s) `scope` stands for."""
    parents = scope.ops()
    return [
        child
        for parent in parents
        for region in parent.regions
        for block in region.blocks
        for child in block.ops
        if child.name == anchor
    ]
