"""Located parsing, op-by-op verification and MLIR-style errors (irgrad/diagnostics.py), and
the irgrad-opt behaviours lit cannot reach: the pass registry and internal errors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FusedLoc,
    ModuleOp,
    NameLoc,
    StringAttr,
    UnknownLoc,
    i32,
    i64,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)
from xdsl.utils.lexer import Location

from irgrad.diagnostics import (
    IRParseError,
    IRVerifyError,
    IrgradError,
    LocatedParser,
    PassError,
    PipelineError,
    file_line_col,
    format_diagnostic,
    format_parse_error,
    location_of,
    parse_module,
    verify_module,
)
from irgrad import context, registry
from irgrad.driver import opt

GOOD = """\
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i32
}
"""

BAD_RETURN = """\
func.func @f(%a: i32) -> i64 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i32
}
"""


@pytest.fixture
def ctx() -> Context:
    return context.make_context()


def loc_tuple(op: Operation) -> tuple[str, int, int] | None:
    loc = location_of(op.location)
    return None if loc is None else tuple(loc)


# --------------------------------------------------------------------------------------
# LocatedParser
# --------------------------------------------------------------------------------------


def test_every_op_gets_the_location_of_its_first_token(ctx: Context) -> None:
    module = LocatedParser(ctx, GOOD, "m.mlir").parse_module()
    located = {op.name: loc_tuple(op) for op in module.walk()}
    assert located == {
        # The implicit module stands where its first op does.
        "builtin.module": ("m.mlir", 1, 1),
        "func.func": ("m.mlir", 1, 1),
        "arith.addi": ("m.mlir", 2, 3),  # at `%0`: results included
        "func.return": ("m.mlir", 3, 3),
    }
    assert all(isinstance(op.location, FileLineColLoc) for op in module.walk())


def test_line_offset_shifts_lines_not_columns(ctx: Context) -> None:
    module = LocatedParser(ctx, GOOD, "m.mlir", line_offset=10).parse_module()
    ret = next(op for op in module.walk() if isinstance(op, func.ReturnOp))
    assert loc_tuple(ret) == ("m.mlir", 13, 3)


def test_explicit_location_is_kept(ctx: Context) -> None:
    text = 'func.func @f(%a: i32) -> i32 {\n  func.return %a : i32 loc("model.py":42:7)\n}\n'
    module = LocatedParser(ctx, text, "m.mlir").parse_module()
    ret = next(op for op in module.walk() if isinstance(op, func.ReturnOp))
    assert loc_tuple(ret) == ("model.py", 42, 7)


def test_generic_syntax_ops_are_located(ctx: Context) -> None:
    text = (
        '"func.func"() <{sym_name = "g", function_type = () -> ()}> ({\n'
        '  "func.return"() : () -> ()\n'
        "}) : () -> ()\n"
    )
    module = LocatedParser(ctx, text, "g.mlir").parse_module()
    assert [loc_tuple(op) for op in module.walk()][1:] == [("g.mlir", 1, 1), ("g.mlir", 2, 3)]


def test_explicit_module_has_its_own_location(ctx: Context) -> None:
    text = "\n\nbuiltin.module {\n  func.func @f() {\n    func.return\n  }\n}\n"
    module = LocatedParser(ctx, text, "m.mlir").parse_module()
    assert loc_tuple(module) == ("m.mlir", 3, 1)
    assert [loc_tuple(op) for op in module.walk()][1:] == [("m.mlir", 4, 3), ("m.mlir", 5, 5)]


def test_empty_input_is_an_empty_module(ctx: Context) -> None:
    module = LocatedParser(ctx, "// nothing here\n", "e.mlir").parse_module()
    assert isinstance(module, ModuleOp) and module.body.block.first_op is None


def test_locations_stay_right_in_a_long_input(ctx: Context) -> None:
    """The incremental line count must agree with counting from the top at every op."""
    body = "".join(f"  %{i} = arith.addi %a, %a : i32\n" for i in range(500))
    text = f"func.func @f(%a: i32) {{\n{body}  func.return\n}}\n"
    module = LocatedParser(ctx, text, "long.mlir").parse_module()
    adds = [op for op in module.walk() if isinstance(op, arith.AddiOp)]
    assert [loc_tuple(op) for op in adds] == [("long.mlir", i + 2, 3) for i in range(500)]


def test_attribute_verifier_failure_while_parsing_is_located(ctx: Context) -> None:
    text = "func.func @f() -> i8 {\n  %0 = arith.constant 300 : i8\n  func.return %0 : i8\n}\n"
    with pytest.raises(ParseError) as info:
        LocatedParser(ctx, text, "c.mlir").parse_module()
    assert info.value.span.get_location() == Location("c.mlir", 2, 3)
    assert "Integer value 300 is out of range for type i8" in info.value.msg


# --------------------------------------------------------------------------------------
# Parse errors
# --------------------------------------------------------------------------------------


def test_format_parse_error_is_mlir_style(ctx: Context) -> None:
    text = "func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a i32\n}\n"
    with pytest.raises(ParseError) as info:
        Parser(ctx, text, "s.mlir").parse_module()
    assert format_parse_error(info.value) == (
        "s.mlir:2:26: error: Expected ':'\n"
        "  %0 = arith.addi %a, %a i32\n"
        "                         ^~~"
    )


def test_parse_module_raises_irparseerror_with_the_file_line(ctx: Context) -> None:
    text = "\nfunc.func @f() {\n  %0 = foo.bar : i32\n}\n"
    with pytest.raises(IRParseError) as info:
        parse_module(ctx, text, "chunk.mlir", line_offset=20)
    err = info.value
    assert isinstance(err, IrgradError) and isinstance(err, DiagnosticException)
    assert err.location is not None and err.location[:2] == ("chunk.mlir", 23)
    lines = str(err).splitlines()
    assert lines[0].startswith("chunk.mlir:23:")
    assert "foo.bar is not registered" in lines[0]
    assert lines[1] == "  %0 = foo.bar : i32"


# --------------------------------------------------------------------------------------
# verify_module
# --------------------------------------------------------------------------------------


def test_valid_module_verifies(ctx: Context) -> None:
    verify_module(parse_module(ctx, GOOD, "ok.mlir"))


def test_verifier_failure_is_located_with_source_line_and_caret(ctx: Context) -> None:
    module = parse_module(ctx, BAD_RETURN, "model.mlir")
    with pytest.raises(IRVerifyError) as info:
        verify_module(module, {"model.mlir": BAD_RETURN})
    err = info.value
    assert isinstance(err, VerifyException) and isinstance(err, IrgradError)
    assert isinstance(err.op, func.ReturnOp)
    assert err.location == Location("model.mlir", 3, 3)
    assert str(err) == (
        "model.mlir:3:3: error: 'func.return' op Expected arguments to have the same types "
        "as the function output types: expected [i64], got [i32]\n"
        "  func.return %0 : i32\n"
        "  ^"
    )
    assert "Operation does not verify" not in str(err)


def test_source_line_is_read_from_disk_without_a_map(ctx: Context, tmp_path) -> None:
    path = tmp_path / "model.mlir"
    path.write_text(BAD_RETURN)
    module = parse_module(ctx, BAD_RETURN, str(path))
    with pytest.raises(IRVerifyError) as info:
        verify_module(module)
    assert str(info.value).splitlines()[1:] == ["  func.return %0 : i32", "  ^"]


def test_structural_failure_names_the_op_without_xdsl_prefix(ctx: Context) -> None:
    text = "func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a : i32\n}\n"
    with pytest.raises(IRVerifyError) as info:
        verify_module(parse_module(ctx, text, "t.mlir"), {"t.mlir": text})
    assert str(info.value).splitlines()[0] == (
        "t.mlir:2:3: error: 'arith.addi' op terminates block in single-block region but "
        "is not a terminator"
    )


def test_empty_body_is_reported_at_the_parent(ctx: Context) -> None:
    function = func.FuncOp("f", ((), ()))  # one block, no terminator
    with pytest.raises(IRVerifyError) as info:
        verify_module(ModuleOp([function]))
    assert str(info.value) == (
        "error: 'func.func' op contains empty block in single-block region that expects "
        "at least a terminator"
    )


def test_op_without_location_still_names_the_op() -> None:
    function = func.FuncOp("f", ((i32,), (i64,)))
    function.body.block.add_op(func.ReturnOp(function.args[0]))
    with pytest.raises(IRVerifyError) as info:
        verify_module(ModuleOp([function]))
    assert isinstance(info.value.op.location, UnknownLoc)
    assert not info.value.is_located
    assert str(info.value).startswith("error: 'func.return' op Expected arguments")


def test_op_without_location_is_reported_at_its_nearest_located_parent(ctx: Context) -> None:
    """An op a pass built without a location (a copy it inserted) is reported in its function."""
    module = parse_module(ctx, "func.func @f(%a: i32) -> i64 {\n  func.return %a : i32\n}\n", "p.mlir")
    function = next(iter(module.ops))
    block = function.body.block
    old = block.last_op
    old.detach()
    old.erase()
    block.add_op(func.ReturnOp(block.args[0]))  # UnknownLoc, and the wrong result type
    with pytest.raises(IRVerifyError) as info:
        verify_module(module)
    assert isinstance(info.value.op.location, UnknownLoc)
    assert str(info.value).startswith("p.mlir:1:1: error: 'func.return' op")


def test_multiline_verifier_messages_become_one_line(ctx: Context) -> None:
    text = '%0 = "arith.constant"() <{value = 3 : i8}> : () -> i32\n'
    with pytest.raises(IRVerifyError) as info:
        verify_module(parse_module(ctx, text, "g.mlir"))
    assert str(info.value).splitlines()[0] == (
        "g.mlir:1:1: error: 'arith.constant' op attribute i32 expected from variable 'T', "
        "but got i8"
    )


def test_mlir_style_verifier_message_is_not_doubled(ctx: Context) -> None:
    """Verifiers that already say "'x.y' op ..." (irgrad's do) are not prefixed twice."""
    module = parse_module(ctx, GOOD, "m.mlir")
    add = next(op for op in module.walk() if isinstance(op, arith.AddiOp))

    def failing_verify() -> None:
        raise VerifyException("'arith.addi' op is broken on purpose")

    add.verify_ = failing_verify  # type: ignore[method-assign]
    with pytest.raises(IRVerifyError) as info:
        verify_module(module, {"m.mlir": GOOD})
    first_line = str(info.value).splitlines()[0]
    assert first_line == "m.mlir:2:3: error: 'arith.addi' op is broken on purpose"


# --------------------------------------------------------------------------------------
# Locations and the hierarchy
# --------------------------------------------------------------------------------------


def test_location_of_unwraps_named_and_fused_locations() -> None:
    inner = file_line_col("model.py", 12, 8)
    assert location_of(inner) == Location("model.py", 12, 8)
    assert location_of(NameLoc(StringAttr("x"), inner)) == Location("model.py", 12, 8)
    assert location_of(FusedLoc([UnknownLoc(), inner], UnknownLoc())) == Location("model.py", 12, 8)
    assert location_of(UnknownLoc()) is None
    assert location_of(None) is None


def test_format_diagnostic() -> None:
    loc = Location("model.py", 2, 5)
    assert format_diagnostic("boom") == "error: boom"
    assert format_diagnostic("boom", loc) == "model.py:2:5: error: boom"
    assert format_diagnostic("look", loc, severity="note", line_text="y = a @ b") == (
        "model.py:2:5: note: look\ny = a @ b\n    ^"
    )


def test_pass_error_is_a_located_pass_failure() -> None:
    op = func.ReturnOp()
    op.location = file_line_col("m.mlir", 4, 3)
    err = PassError("requires buffer semantics; run bufferize first", op)
    assert isinstance(err, PassFailedException) and isinstance(err, IrgradError)
    assert str(err) == (
        "m.mlir:4:3: error: 'func.return' op requires buffer semantics; run bufferize first"
    )
    assert str(PassError("nothing to do")) == "error: nothing to do"


# --------------------------------------------------------------------------------------
# The pass registry
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CrashPass(ModulePass):
    """Raises a plain Python error, as a pass with a bug would."""

    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("boom")


@dataclass(frozen=True)
class RefusePass(ModulePass):
    """Refuses every module with a located PassError."""

    name = "test-refuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = next(o for o in op.walk() if isinstance(o, func.ReturnOp))
        raise PassError("requires buffer semantics; run bufferize first", target)


@pytest.fixture
def test_passes() -> Iterator[None]:
    registry.register_pass("test-crash", lambda: CrashPass)
    registry.register_pass("test-refuse", lambda: RefusePass)
    registry.register_pipeline("test-cleanup", "canonicalize,cse", "canonicalize then cse")
    try:
        yield
    finally:
        for name in ("test-crash", "test-refuse", "test-cleanup"):
            registry.unregister(name)


def test_irgrad_dialects_are_registered_lazily() -> None:
    assert {"nn", "autodiff"} <= set(context.irgrad_dialects())
    assert {"nn", "autodiff"} <= set(context.make_context().registered_dialect_names)


def test_irgrad_pass_names_do_not_shadow_xdsl() -> None:
    from xdsl.universe import Universe

    assert not set(registry.irgrad_passes()) & set(Universe.get_multiverse().all_passes)


def test_pipelines_of_known_passes_do_not_scan_for_plugins(monkeypatch) -> None:
    """Looking up irgrad's and xDSL's own passes never reads the installed distributions'
    entry points (20 ms on the first compile); a name only a plug-in has still resolves."""
    from xdsl.universe import Universe

    from irgrad.pipelines import CPU_PIPELINE

    def scan() -> Universe:
        raise AssertionError("scanned for plug-ins")

    monkeypatch.setattr(registry, "xdsl_universe", scan)
    names = [p.name for p in registry.build_pipeline(CPU_PIPELINE + ",canonicalize,cse").passes]
    assert names[:4] == ["nn-expand-fft", "nn-expand-complex", "nn-conv2d-to-im2col", "autodiff"] and names[-1] == "cse"
    context.make_context(plugins=False)

    class PluginPass(CrashPass):
        name = "test-plugin-pass"

    plugin = Universe(all_passes={"test-plugin-pass": lambda: PluginPass})
    monkeypatch.setattr(registry, "xdsl_universe", lambda: plugin)
    assert [p.name for p in registry.build_pipeline("cse,test-plugin-pass").passes] == [
        "cse",
        "test-plugin-pass",
    ]
    assert "test-plugin-pass" in registry.all_passes()
    with pytest.raises(PipelineError, match="unknown pass 'test-plugin-pas'; did you mean"):
        registry.build_pipeline("test-plugin-pas")


def test_build_pipeline_expands_named_pipelines(test_passes: None) -> None:
    pipeline = registry.build_pipeline("test-cleanup,dce")
    assert [p.name for p in pipeline.passes] == ["canonicalize", "cse", "dce"]


def test_register_twice_is_an_error(test_passes: None) -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.register_pass("test-crash", lambda: CrashPass)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-such-pass", "unknown pass 'no-such-pass'"),
        ("canonicalise", "did you mean 'canonicalize'?"),
        ("cse{foo=1}", "invalid options for pass 'cse'"),
        ("cse{", "could not parse pass pipeline 'cse{'"),
        ("test-cleanup{x=1}", "pipeline 'test-cleanup' takes no options"),
    ],
)
def test_bad_pipelines_raise_pipeline_error(test_passes: None, spec: str, message: str) -> None:
    with pytest.raises(PipelineError, match=message.replace("{", r"\{").replace("?", r"\?")):
        registry.build_pipeline(spec)


def test_list_passes_describes_passes(test_passes: None) -> None:
    listing = dict(registry.list_passes())
    assert listing["canonicalize"] == "Applies all canonicalization patterns."
    assert listing["test-crash"] == "Raises a plain Python error, as a pass with a bug would."


# --------------------------------------------------------------------------------------
# irgrad-opt: what lit cannot reach
# --------------------------------------------------------------------------------------


def write(tmp_path, text: str):
    path = tmp_path / "input.mlir"
    path.write_text(text)
    return str(path)


def test_internal_error_is_short_without_traceback(
    test_passes: None, tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.delenv("IRGRAD_TRACEBACK", raising=False)
    assert opt.main(["-p", "test-crash", write(tmp_path, GOOD)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines() == [
        "irgrad-opt: internal error while running pass 'test-crash': RuntimeError: boom",
        "irgrad-opt: note: this is a bug in irgrad or xDSL; rerun with IRGRAD_TRACEBACK=1 "
        "to see the Python traceback",
    ]


def test_irgrad_traceback_shows_the_traceback(test_passes: None, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("IRGRAD_TRACEBACK", "1")
    with pytest.raises(RuntimeError, match="boom"):
        opt.main(["-p", "test-crash", write(tmp_path, GOOD)])


def test_pass_error_is_a_located_diagnostic(test_passes: None, tmp_path, capsys) -> None:
    path = write(tmp_path, GOOD)
    assert opt.main(["-p", "test-refuse", path]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}:3:3: error: 'func.return' op requires buffer semantics; run bufferize first",
        "  func.return %0 : i32",
        "  ^",
    ]


def test_verify_diagnostics_matches_an_expected_error(tmp_path, capsys) -> None:
    """MLIR's --verify-diagnostics: an annotated error is the expected outcome (exit 0)."""
    annotated = BAD_RETURN.replace(
        "  func.return %0 : i32\n",
        "  // expected-error @+1 {{Expected arguments to have the same types}}\n"
        "  func.return %0 : i32\n",
    )
    assert opt.main(["--verify-diagnostics", write(tmp_path, annotated)]) == 0
    assert "error" not in capsys.readouterr().err


def test_verify_diagnostics_rejects_an_unexpected_error(tmp_path, capsys) -> None:
    path = write(tmp_path, BAD_RETURN)
    assert opt.main(["--verify-diagnostics", path]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:3:3: error: unexpected error: 'func.return' op Expected arguments")


def test_named_pipeline_runs_from_the_command_line(
    test_passes: None, tmp_path, capsys
) -> None:
    text = GOOD.replace(
        "%0 = arith.addi %a, %a : i32",
        "%c = arith.constant 0 : i32\n  %0 = arith.addi %a, %c : i32",
    )
    assert opt.main(["-p", "test-cleanup", "--print-ir-after-all", write(tmp_path, text)]) == 0
    captured = capsys.readouterr()
    assert "// -----// IR Dump After Canonicalize (canonicalize) //----- //" in captured.err
    assert "(cse) //----- //" in captured.err
    assert "func.return %a : i32" in captured.out


def test_broken_dialect_module_is_an_error_only_when_used(tmp_path, capsys, monkeypatch) -> None:
    broken = context._lazy_dialect("nn", "irgrad.no_such_module", "NN")
    monkeypatch.setitem(context._DIALECTS, "nn", broken)
    assert opt.main([write(tmp_path, GOOD)]) == 0
    capsys.readouterr()
    nn_text = (
        "func.func @f(%a: tensor<2xf32>) {\n"
        "  %0 = nn.neg %a : tensor<2xf32>\n"
        "  func.return\n"
        "}\n"
    )
    assert opt.main([write(tmp_path, nn_text)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "dialect 'nn' could not be loaded from irgrad.no_such_module.NN" in err
