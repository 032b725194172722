"""irgrad/xdsl_patches/upstream_op_syntax.py: MLIR's custom form of scf.parallel, memref.copy,
memref.cast and memref.global, read as upstream mlir-opt 19 prints it and printed back the same."""

from __future__ import annotations

import pytest
from xdsl.dialects import memref, scf
from xdsl.utils.exceptions import ParseError

import irgrad  # noqa: F401  (applies the patches)
from irgrad.context import make_context
from xdsl.parser import Parser

# Printed by upstream `mlir-opt` (MLIR 19.1.7) from hand-written input.
UPSTREAM = """\
module {
  memref.global "private" constant @c : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]> {alignment = 64 : i64}
  memref.global @u : memref<3xi32> = uninitialized
  func.func @f(%arg0: memref<4xf32>, %arg1: memref<4xf32, strided<[1], offset: ?>>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.000000e+00 : f32
    memref.copy %arg0, %arg1 : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %cast = memref.cast %arg0 : memref<4xf32> to memref<?xf32>
    %0 = memref.get_global @c : memref<2xf32>
    %1:2 = scf.parallel (%arg2) = (%c0) to (%c4) step (%c1) init (%cst, %cst) -> (f32, f32) {
      %3 = memref.load %arg0[%arg2] : memref<4xf32>
      scf.reduce(%3, %3 : f32, f32) {
      ^bb0(%arg3: f32, %arg4: f32):
        %4 = arith.addf %arg3, %arg4 : f32
        scf.reduce.return %4 : f32
      }, {
      ^bb0(%arg3: f32, %arg4: f32):
        %4 = arith.maximumf %arg3, %arg4 : f32
        scf.reduce.return %4 : f32
      }
    } {mapping = "x"}
    scf.parallel (%arg2, %arg3) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
      %3 = memref.load %arg0[%arg2] : memref<4xf32>
      memref.store %3, %arg1[%arg3] : memref<4xf32, strided<[1], offset: ?>>
      scf.reduce
    }
    return %1#0 : f32
  }
}
"""


def _parse(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _ops(module, op_type):
    return [op for op in module.walk() if isinstance(op, op_type)]


def test_upstream_custom_forms_are_read_with_their_meaning():
    module = _parse(UPSTREAM)
    constant, uninitialized = _ops(module, memref.GlobalOp)
    assert constant.sym_visibility.data == "private" and constant.constant is not None
    assert constant.alignment.value.data == 64 and constant.initial_value.get_values() == (1.0, 2.0)
    assert uninitialized.sym_visibility.data == "public" and uninitialized.constant is None
    assert uninitialized.alignment is None and uninitialized.initial_value.__class__.__name__ == "UnitAttr"
    (copy,) = _ops(module, memref.CopyOp)
    assert copy.source.type != copy.destination.type
    (cast,) = _ops(module, memref.CastOp)
    assert str(cast.dest.type) == "memref<?xf32>"
    reducing, plain = _ops(module, scf.ParallelOp)
    assert len(reducing.initVals) == 2 and [str(r.type) for r in reducing.res] == ["f32", "f32"]
    assert len(reducing.body.block.last_op.reductions) == 2 and "mapping" in reducing.attributes
    assert len(plain.lowerBound) == 2 and not plain.res and isinstance(plain.body.block.last_op, scf.ReduceOp)


def test_printing_gives_the_custom_forms_back():
    text = str(_parse(UPSTREAM))
    for line in (
        'memref.global "private" constant @c : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]> {alignment = 64 : i64}',
        "memref.global @u : memref<3xi32> = uninitialized",
        "memref.copy %arg0, %arg1 : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>",
        "%cast = memref.cast %arg0 : memref<4xf32> to memref<?xf32>",
        "= scf.parallel (%arg2) = (%c0) to (%c4) step (%c1) init (%cst, %cst) -> (f32, f32) {",
        "} {mapping = \"x\"}",
        "scf.parallel (%arg2_1, %arg3_2) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {",
    ):
        assert line in text, line
    assert '"scf.parallel"' not in text and '"memref.' not in text
    # the empty terminator is implicit, the one with operands is printed
    assert text.count("scf.reduce(") == 1 and "scf.reduce\n" not in text
    assert str(_parse(text)) == text


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("scf.parallel (%i, %j) = (%c0) to (%c4) step (%c1) {\n}", "as many bounds and steps as induction variables"),
        ("%r = scf.parallel (%i) = (%c0) to (%c4) step (%c1) init (%z, %z) -> f32 {\n}", "2 init values but 1 result types"),
        ('memref.global "private" @g : memref<2xf32>', "without an initial value"),
        ('memref.global "private" @g : tensor<2xf32> = uninitialized', "needs a memref type"),
    ],
)
def test_malformed_custom_forms_are_parse_errors(body, message):
    text = (
        "func.func @f() {\n  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
        "  %c4 = arith.constant 4 : index\n  %z = arith.constant 0.0 : f32\n  " + body + "\n  func.return\n}\n"
    )
    if body.startswith("memref.global"):
        text = body + "\n"
    with pytest.raises(ParseError, match=message):
        _parse(text)
