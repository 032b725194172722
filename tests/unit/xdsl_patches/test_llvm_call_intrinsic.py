"""irgrad/xdsl_patches/llvm_call_intrinsic.py: an intrinsic called with pointers of two types."""

from __future__ import annotations

from xdsl.backend.llvm import convert_op

from irgrad.backends.cpu import translate  # noqa: F401  (applies the patch with the backend)
from irgrad.xdsl_patches import llvm_call_intrinsic
from irgrad.xdsl_patches.patching import is_patched


def test_translating_a_program_applies_it_once():
    assert is_patched(convert_op._convert_call_intrinsic)
    patched = convert_op._convert_call_intrinsic
    llvm_call_intrinsic.apply()
    assert convert_op._convert_call_intrinsic is patched
