"""irgrad/xdsl_patches/op_init_fast_path.py: the same ops and the same errors as xDSL's builder."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import AffineMapAttr, IndexType, TensorType, f32, i32
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    SameVariadicOperandSize,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl import operations

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched


@irdl_op_definition
class PairsOp(IRDLOperation):
    """Three variadic operand groups of one size (an optional one among them), variadic results."""

    name = "test.pairs"
    lhs = var_operand_def()
    rhs = var_operand_def()
    extra = opt_operand_def()
    outs = var_result_def()
    irdl_options = (SameVariadicOperandSize(),)

    def __init__(self, lhs, rhs, extra, outs):  # type: ignore[no-untyped-def]
        super().__init__(operands=[lhs, rhs, extra], result_types=[outs])


@irdl_op_definition
class OneOp(IRDLOperation):
    name = "test.one"
    x = operand_def()


@contextlib.contextmanager
def xdsl_builder() -> Iterator[None]:
    """xDSL's own irdl_op_init in place of the patch, for comparison."""
    patched = operations.irdl_op_init
    operations.irdl_op_init = patched._irgrad_original
    try:
        yield
    finally:
        operations.irdl_op_init = patched


def _values():
    block = Block(arg_types=[f32, f32, i32])
    return block.args


def _describe(op):  # type: ignore[no-untyped-def]
    return (
        op.name,
        [v.type for v in op.operands],
        [r.type for r in op.results],
        dict(op.properties),
        dict(op.attributes),
        len(op.regions),
        len(op.successors),
    )


def _builders():  # type: ignore[no-untyped-def]
    a, b, c = _values()
    t = TensorType(f32, [4])
    empty = tensor.EmptyOp([], t)
    m = AffineMapAttr(AffineMap.identity(1))
    target = Block()
    return [
        lambda: arith.AddfOp(a, b),
        lambda: arith.ConstantOp.from_int_and_width(3, i32),
        lambda: tensor.EmptyOp([], t),
        lambda: linalg.YieldOp(a, b),
        lambda: linalg.GenericOp([empty.tensor, empty], [empty.tensor], Region(Block(arg_types=[f32, f32, f32])),
                                 [m, m, m], [linalg.IteratorTypeAttr.parallel()], [t]),
        lambda: PairsOp([a], (b,), c, [f32, i32]),
        lambda: PairsOp([], [], None, []),
        lambda: func.ReturnOp(a, c),
        lambda: scf.YieldOp(),
        lambda: func.CallOp("f", [a, b], [f32]),
        lambda: OneOp.build(operands=[empty]),  # an Operation as its single result
        lambda: OneOp.build(operands=[[a]]),  # a list of one for a single operand
        lambda: OneOp.create(operands=[a]),
        lambda: arith.AddiOp.build(operands=[c, c], result_types=[i32], attributes={"note": None}),  # None: dropped
        lambda: _branch(target),
    ]


def _branch(target: Block):  # type: ignore[no-untyped-def]
    from xdsl.dialects import cf

    return cf.BranchOp(target)


def test_the_patch_is_installed():
    assert is_patched(operations.irdl_op_init)


def test_ops_are_built_as_xdsl_builds_them():
    fast = [build() for build in _builders()]
    with xdsl_builder():
        slow = [build() for build in _builders()]
    for got, want in zip(fast, slow):
        assert _describe(got) == _describe(want)


def test_a_region_built_from_ops_or_blocks():
    for make in (lambda: [arith.ConstantOp.from_int_and_width(1, i32)], lambda: [Block()]):
        op = scf.ExecuteRegionOp([], make())
        with xdsl_builder():
            want = scf.ExecuteRegionOp([], make())
        assert len(op.region.blocks) == len(want.region.blocks) == 1
        assert len(op.region.block.ops) == len(want.region.block.ops)


def _message(build) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(Exception) as info:
        build()
    return f"{type(info.value).__name__}: {info.value}"


@pytest.mark.parametrize(
    "build",
    [
        lambda a, b, c: OneOp.build(operands=[a, b]),  # too many groups
        lambda a, b, c: OneOp.build(operands=[None]),  # None for a required operand
        lambda a, b, c: OneOp.build(operands=[[a, b]]),  # two values for one
        lambda a, b, c: PairsOp([a, b], [a], None, []),  # same-size groups of sizes 2 and 1
        lambda a, b, c: PairsOp([a], [b], [c, c], []),  # two values for an optional operand
        lambda a, b, c: arith.AddfOp(a, b).__class__.build(operands=[a, b], result_types=[None]),
        lambda a, b, c: scf.ExecuteRegionOp([], [arith.ConstantOp.from_int_and_width(1, i32)]).__class__.build(
            regions=[[Block()], [Block()]]
        ),
    ],
)
def test_errors_are_xdsls(build):  # type: ignore[no-untyped-def]
    a, b, c = _values()
    got = _message(lambda: build(a, b, c))
    with xdsl_builder():
        want = _message(lambda: build(a, b, c))
    assert got == want


def test_segment_sizes_are_shared_values():
    a, b, _ = _values()
    t = TensorType(f32, [4])
    empty = tensor.EmptyOp([], t)
    m = AffineMapAttr(AffineMap.identity(1))

    def generic():  # type: ignore[no-untyped-def]
        return linalg.GenericOp([empty.tensor], [empty.tensor], Region(Block(arg_types=[f32, f32])), [m, m],
                                [linalg.IteratorTypeAttr.parallel()], [t])

    first, second = generic(), generic()
    sizes = first.properties["operandSegmentSizes"]
    assert sizes == second.properties["operandSegmentSizes"]
    assert tuple(sizes.get_values()) == (1, 1)
    assert IndexType() != sizes  # an attribute like any other
