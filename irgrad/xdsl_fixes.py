"""Fixes for xDSL 0.75 bugs that irgrad's round trips hit, applied once at import (the LLVM
translation's by `fix_llvm_translation()`, which translate.py calls: importing xDSL's LLVM
backend costs 45 ms, a sixth of `import irgrad`, for programs that may never be compiled).

Each fix is small, says which bug it mends, and checks that the code it patches is still the
code it was written for, so an xDSL upgrade that fixes (or moves) the bug fails loudly here
instead of silently double-patching.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import AnyFloat
from xdsl.parser.attribute_parser import AttrParser

_Element = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]


def _install(owner: object, name: str, replacement: Any, original: Any) -> None:
    """Put `replacement` in place of `owner.name` (the `original`), marked as irgrad's fix
    (so that a second import does not patch twice), with the original's docstring when it
    has none."""
    if replacement.__doc__ is None:
        replacement.__doc__ = original.__doc__
    replacement._irgrad_fixed = True
    setattr(owner, name, replacement)


def _fix_hex_float_elements() -> None:
    """Dense float elements written in hex are bit patterns (MLIR's rule, and what xDSL's own
    printer emits for inf and nan: `dense<[1.0, 0x7F800000]>`); xDSL 0.75 parses them as
    integer values, so `0x7F800000` became 2139095040.0 instead of +inf."""
    original = _Element.to_type
    if getattr(original, "_irgrad_fixed", False):
        return

    def to_type(self, parser, type):  # type: ignore[no-untyped-def]
        if (
            isinstance(type, AnyFloat)
            and isinstance(self.value, int)
            and not isinstance(self.value, bool)
            and self.span.text.lower().lstrip("-").startswith("0x")
        ):
            size = type.compile_time_size
            if self.is_negative or not 0 <= self.value < 1 << (8 * size):
                parser.raise_error(
                    f"hexadecimal float literal does not fit {type}", at_position=self.span
                )
            return type.unpack(self.value.to_bytes(size, "little"), 1)[0]
        return original(self, parser, type)

    _install(_Element, "to_type", to_type, original)


_fix_hex_float_elements()


def fix_llvm_translation() -> None:
    """An intrinsic's pointer parameters must be opaque `ptr`s, whatever its first caller passed.

    xDSL 0.75's translation of `llvm.call_intrinsic` declares the intrinsic with the llvmlite
    types of its first call's arguments. A `llvm.mlir.addressof` value is the llvmlite global
    itself, whose type is a typed pointer (`[6 x float]*`), so after a first
    `llvm.memcpy(out, @f32_constant)` a second `llvm.memcpy(out, @i1_constant)` failed in
    llvmlite: "Type of #2 arg mismatch: [6 x float]* != [6 x i8]*" (any module copying two
    constants of different types). The fix declares the intrinsic first with opaque pointer
    parameters, which every pointer argument matches."""
    from llvmlite import ir
    from xdsl.backend.llvm import convert_op
    from xdsl.backend.llvm.convert_type import convert_type

    original = convert_op._convert_call_intrinsic  # pyright: ignore[reportPrivateUsage]
    if getattr(original, "_irgrad_fixed", False):
        return
    assert original.__code__.co_varnames[:3] == ("op", "builder", "val_map"), (
        "xDSL's _convert_call_intrinsic changed: review irgrad.xdsl_fixes"
    )

    def _convert_call_intrinsic(op, builder, val_map):  # type: ignore[no-untyped-def]
        name = op.intrin.data
        if name not in builder.module.globals:
            arg_types = [
                ir.PointerType(addrspace=t.addrspace) if isinstance(t, ir.PointerType) else t
                for t in (val_map[arg].type for arg in op.args)
            ]
            ret = convert_type(op.ress.type) if op.ress is not None else ir.VoidType()
            ir.Function(builder.module, ir.FunctionType(ret, arg_types), name=name)
        original(op, builder, val_map)

    _install(convert_op, "_convert_call_intrinsic", _convert_call_intrinsic, original)



def _fix_quadratic_block_split() -> None:
    """`Block.split_before` finds its block's index by walking the region's blocks, then walks
    them again to insert the new block there: O(blocks) per split, so lowering a function with
    n loops to cf (each loop splits its block) took O(n^2) (0.8 s of convert-scf-to-cf on a
    transformer training step with 582 loops). Blocks are a linked list: the new block is linked
    in right after the split one, in O(1), with the same result."""
    import inspect

    from xdsl.ir.core import Block

    original = Block.split_before
    if getattr(original, "_irgrad_fixed", False):
        return
    source = inspect.getsource(original)
    assert "a_index = parent.get_block_index(self)" in source and "parent.insert_block(b, a_index + 1)" in source, (
        "xDSL's Block.split_before changed: review irgrad.xdsl_fixes._fix_quadratic_block_split"
    )

    def split_before(self, b_first, *, arg_types=()):  # type: ignore[no-untyped-def]
        if b_first.parent is not self:
            raise ValueError("Cannot split block on operation outside of the block.")
        parent = self.parent
        if parent is None:
            raise ValueError("Cannot split block with no parent.")
        b_last = self._last_op
        a_last = b_first.prev_op
        self._first_op = None if a_last is None else self._first_op
        self._last_op = a_last
        b = Block(arg_types=arg_types)
        parent.insert_block_after(b, self)
        b._first_op = b_first
        b._last_op = b_last
        op = b_first
        while op is not None:
            op.parent = b
            op = op.next_op
        if a_last is not None:
            a_last._next_op = None
        b_first._prev_op = None
        return b

    _install(Block, "split_before", split_before, original)


_fix_quadratic_block_split()


def _fix_dense_array_unpacking() -> None:
    """`DenseArrayBase.get_values` unpacks the array's bytes with `struct` on every call
    (about 2 us), and xDSL reads an op's variadic operands and results through it: every
    `generic.inputs` or `generic.outputs` unpacks `operandSegmentSizes` again. Passes read
    those accessors tens of thousands of times on a large program (a tenth of the CPU
    pipeline's Python time on examples/transformer.py's step). Attributes are immutable, so
    the values are unpacked once per attribute and kept in its `__dict__` (equality,
    hashing and printing read only the dataclass fields)."""
    import inspect

    from xdsl.dialects.builtin import DenseArrayBase

    original = DenseArrayBase.get_values
    if getattr(original, "_irgrad_fixed", False):
        return
    assert "unpack(self.data.data, len(self))" in inspect.getsource(original), (
        "xDSL's DenseArrayBase.get_values changed: review irgrad.xdsl_fixes._fix_dense_array_unpacking"
    )

    def get_values(self):  # type: ignore[no-untyped-def]
        cache = self.__dict__
        values = cache.get("_irgrad_values")
        if values is None:
            values = cache["_irgrad_values"] = original(self)
        return values

    _install(DenseArrayBase, "get_values", get_values, original)


_fix_dense_array_unpacking()


def _fix_isa_constraint_rebuilding() -> None:
    """`xdsl.utils.hints.isa(value, ArrayAttr[IntAttr])` converts the type hint into an
    attribute constraint on every call, walking the generic's arguments (about 0.1 ms), and
    `MemRefType(element, shape)` calls it once per construction: 40% of bufferize's time on a
    transformer step. `isa` looks `irdl_to_attr_constraint` up on `xdsl.irdl` at each call;
    the constraint a (hashable) hint gives is immutable and the same every time, so it is
    built once per hint here."""
    import xdsl.irdl
    from xdsl.utils import hints

    original = xdsl.irdl.irdl_to_attr_constraint
    if getattr(original, "_irgrad_fixed", False):
        return
    import inspect

    assert "irdl_to_attr_constraint(hint_type)" in inspect.getsource(hints.isa), (
        "xDSL's isa changed: review irgrad.xdsl_fixes._fix_isa_constraint_rebuilding"
    )
    cache: dict[object, object] = {}

    def irdl_to_attr_constraint(irdl, *, allow_type_var=False):  # type: ignore[no-untyped-def]
        if allow_type_var:
            return original(irdl, allow_type_var=True)
        try:
            return cache[irdl]
        except KeyError:
            constraint = cache[irdl] = original(irdl)
            return constraint
        except TypeError:  # an unhashable hint
            return original(irdl)

    _install(xdsl.irdl, "irdl_to_attr_constraint", irdl_to_attr_constraint, original)


_fix_isa_constraint_rebuilding()
