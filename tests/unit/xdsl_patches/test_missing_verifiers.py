"""irgrad/xdsl_patches/missing_verifiers.py: tensor.from_elements and memref.subview verify
what their result types promise (MLIR's checks), with a located error from the tools."""

from __future__ import annotations

import subprocess
import sys

import pytest
from xdsl.dialects import memref, tensor
from xdsl.utils.exceptions import VerifyException

import irgrad  # noqa: F401  (applies the patches)
from irgrad.context import make_context
from irgrad.diagnostics import IrgradError, parse_module
from irgrad.xdsl_patches.patching import is_patched


def test_import_irgrad_applies_it():
    assert is_patched(tensor.FromElementsOp.verify_) and is_patched(memref.SubviewOp.verify_)


def check(text: str, ok: bool, error: str) -> None:
    """`text` verifies when `ok`, else fails with a message matching `error`."""
    if ok:
        parse_module(make_context(), text, "t.mlir").verify()
        return
    with pytest.raises((VerifyException, IrgradError), match=error):
        parse_module(make_context(), text, "t.mlir").verify()


FROM_ELEMENTS = """
func.func @f(%x: f32) -> {t} {{
  %t = tensor.from_elements {elements} : {t}
  func.return %t : {t}
}}
"""


SUBVIEW = """
func.func @f(%a: memref<4x4xf32>) {{
  %v = memref.subview %a[0, 0] [{sizes}] [1, 1] : memref<4x4xf32> to {t}
  func.return
}}
"""


OFFSET_SUBVIEW = """
func.func @f(%a: memref<4x8xf32>, %i: index) {{
  %v = memref.subview %a[{offsets}] [2, 2] [1, 2] : memref<4x8xf32> to memref<2x2xf32, strided<[8, 2], offset: {offset}>>
  func.return
}}
"""


ELEMENTS_ERROR = "elements for a result"
OFFSET_ERROR = "has offset"
SIZES_ERROR = "do not give its result type"
CASES = [
    (FROM_ELEMENTS.format(elements="%x, %x", t="tensor<2xf32>"), None),
    (FROM_ELEMENTS.format(elements="%x", t="tensor<f32>"), None),
    (FROM_ELEMENTS.format(elements=", ".join(["%x"] * 6), t="tensor<2x3xf32>"), None),
    (FROM_ELEMENTS.format(elements="%x", t="tensor<2xf32>"), ELEMENTS_ERROR),
    (FROM_ELEMENTS.format(elements="%x, %x, %x", t="tensor<2xf32>"), ELEMENTS_ERROR),
    (SUBVIEW.format(sizes="2, 2", t="memref<2x2xf32, strided<[4, 1]>>"), None),
    (SUBVIEW.format(sizes="1, 3", t="memref<3xf32, strided<[1]>>"), None),  # rank-reducing
    (SUBVIEW.format(sizes="2, 1", t="memref<2xf32, strided<[4]>>"), None),
    (SUBVIEW.format(sizes="2, 2", t="memref<3x2xf32, strided<[4, 1]>>"), SIZES_ERROR),
    (SUBVIEW.format(sizes="2, 3", t="memref<2xf32, strided<[4]>>"), SIZES_ERROR),
    (OFFSET_SUBVIEW.format(offsets="1, 1", offset="9"), None),
    (OFFSET_SUBVIEW.format(offsets="%i, 1", offset="?"), None),  # dynamic: not checked statically
    (OFFSET_SUBVIEW.format(offsets="1, 1", offset="?"), None),
    (OFFSET_SUBVIEW.format(offsets="1, 4294967296", offset="9"), OFFSET_ERROR),
    (OFFSET_SUBVIEW.format(offsets="0, 1", offset="9"), OFFSET_ERROR),
]


@pytest.mark.parametrize("text, error", CASES)
def test_the_result_type_is_what_the_operands_give(text, error):
    """from_elements: one element per result element; subview: the sizes, unit ones dropped,
    and a static offset where the source's layout and the offsets are static."""
    check(text, error is None, error or "")


def test_the_tool_reports_it_located(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(FROM_ELEMENTS.format(elements="%x", t="tensor<2xf32>"))
    done = subprocess.run([sys.executable, "-m", "irgrad.driver.opt", str(path)], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "bad.mlir:3:3: error: 'tensor.from_elements' op has 1 elements for a result tensor<2xf32> of 2" in done.stderr
    assert "Traceback" not in done.stderr
