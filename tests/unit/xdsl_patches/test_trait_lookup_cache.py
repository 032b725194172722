"""irgrad/xdsl_patches/trait_lookup_cache.py: the trait xDSL would find, kept per class."""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition, traits_def
from xdsl.traits import ConstantLike, HasParent, IsTerminator, NoTerminator, Pure, SymbolOpInterface

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched

_ORIGINAL = Operation.get_trait.__func__._irgrad_original


def test_the_patch_is_installed():
    assert is_patched(Operation.get_trait.__func__)


def test_answers_are_xdsls():
    classes = [arith.AddfOp, arith.ConstantOp, func.FuncOp, func.ReturnOp, scf.ForOp, scf.YieldOp, linalg.GenericOp]
    traits = [Pure, ConstantLike, IsTerminator, NoTerminator, SymbolOpInterface, HasParent]
    for _ in range(2):  # the second time from the cache
        for cls in classes:
            for trait in traits:
                assert cls.get_trait(trait) is _ORIGINAL(cls, trait)
                assert cls.has_trait(trait) == (_ORIGINAL(cls, trait) is not None)


def test_a_trait_instance_is_compared_as_before():
    assert arith.AddfOp.get_trait(Pure()) == Pure()
    assert arith.AddfOp.get_trait(IsTerminator()) is None


@irdl_op_definition
class PlainOp(IRDLOperation):
    name = "test.plain_trait_cache"
    traits = traits_def()


def test_an_added_trait_is_seen():
    assert PlainOp.get_trait(Pure) is None
    PlainOp.traits.add_trait(Pure())
    assert PlainOp.get_trait(Pure) == Pure()
