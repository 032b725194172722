"""irgrad/xdsl_patches/implicit_builder_threads.py: threads building with ImplicitBuilder at
once each get exactly their own ops in their own blocks (before: ops inserted twice, an error)."""

from __future__ import annotations

import xdsl.builder
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import Block

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched
from _thread_util import run_together


def test_import_irgrad_applies_it():
    assert is_patched(xdsl.builder._override_operation_post_init)


def test_threads_build_their_own_blocks_at_once():
    def work(k: int) -> None:
        for _ in range(30):
            block = Block()
            with ImplicitBuilder(block):
                made = [arith.ConstantOp.from_int_and_width(k, i32) for _ in range(5)]
            outside = arith.ConstantOp.from_int_and_width(k, i32)  # no builder: not inserted
            assert list(block.ops) == made, f"thread {k}: {len(list(block.ops))} ops"
            assert outside.parent is None

    assert run_together(work) == []


def test_nested_builders_insert_into_the_innermost():
    outer, inner = Block(), Block()
    with ImplicitBuilder(outer):
        a = arith.ConstantOp.from_int_and_width(1, i32)
        with ImplicitBuilder(inner):
            b = arith.ConstantOp.from_int_and_width(2, i32)
        c = arith.ConstantOp.from_int_and_width(3, i32)
    assert list(outer.ops) == [a, c] and list(inner.ops) == [b]
