"""Compile an op's declarative assembly format when the op is first parsed or printed, not
when its class is defined.

xDSL 0.75 compiles `assembly_format` strings into format programs inside
`irdl_op_definition`, so importing a dialect pays for every op's format (a sixth of
`import irgrad`, and as much again for the lowering's dialects), for ops most programs never
print. Here the format is compiled on the op's first `parse` or `print` and kept; a format
with an error is reported there, with the error xDSL raises at definition time
(tests/unit/dialects/test_nn_dialect.py compiles every format irgrad defines). Upstream: not
reported (a performance change, not a bug).

Applied first of all patches, before any dialect of irgrad's is defined: ops defined earlier
(xDSL's builtin dialect) keep xDSL's eager compilation.
"""

from __future__ import annotations

from typing import Any

from xdsl.irdl import operations

from irgrad.xdsl_patches.patching import require_source

_original = operations.get_accessors_from_op_def


def compiled_format(op_type: type) -> Any:
    """The format program of `op_type` (an IRDL op class with an assembly format), compiled
    now if it was not yet; None for an op without one."""
    compile_format = getattr(op_type, "_irgrad_compile_format", None)
    return None if compile_format is None else compile_format()


def _lazy_accessors(op_def: operations.OpDef, custom_verify: Any | None) -> dict[str, Any]:
    text = op_def.assembly_format
    if text is None:
        return _original(op_def, custom_verify)
    op_def.assembly_format = None
    try:
        new_attrs = _original(op_def, custom_verify)
    finally:
        op_def.assembly_format = text
    program: Any = None

    def compile_format() -> Any:
        nonlocal program
        if program is None:
            from xdsl.irdl.declarative_assembly_format import FormatProgram
            from xdsl.utils.exceptions import ParseError, PyRDLOpDefinitionError

            try:
                program = FormatProgram.from_str(text, op_def)
            except ParseError as e:
                raise PyRDLOpDefinitionError("Error during the parsing of the assembly format: ", e.args) from e
        return program

    @classmethod  # type: ignore[misc]
    def parse_with_format(cls: Any, parser: Any) -> Any:
        return compile_format().parse(parser, cls)

    def print_with_format(self: Any, printer: Any) -> Any:
        return compile_format().print(printer, self)

    new_attrs["parse"] = parse_with_format
    new_attrs["print"] = print_with_format
    new_attrs["_irgrad_compile_format"] = staticmethod(compile_format)
    return new_attrs


def apply() -> None:
    """Make IRDL op definitions from now on compile their assembly format lazily (idempotent)."""
    if operations.get_accessors_from_op_def is _lazy_accessors:
        return
    require_source(
        _original,
        "FormatProgram.from_str(op_def.assembly_format, op_def)",
        'new_attrs["print"]',
        patch="lazy_assembly_formats",
    )
    operations.get_accessors_from_op_def = _lazy_accessors  # type: ignore[assignment]
