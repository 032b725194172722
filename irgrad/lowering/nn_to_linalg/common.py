"""Building blocks shared by the `convert-nn-to-linalg` patterns.

Why one module: every pattern builds the same few shapes of IR (a `tensor.empty`, a filled
accumulator, a `linalg.generic` with a scalar body, a reshape, an index clamp), and the rules
that decide bit-exact agreement with the reference interpreter (which types compute in f32,
what the identity of a reduction is) must be written once.

An `Emitter` collects the ops a pattern builds, in order, each at the location of the `nn` op
it replaces; `LoweringPattern` inserts them before that op and replaces it with the value they
compute. Bodies of
`linalg.generic` are built with their own `Emitter` into a fresh block.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar, TypeVar, cast

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from irgrad.diagnostics import PassError
from irgrad.dialects.nn import is_bool, is_float

OpT = TypeVar("OpT", bound=Operation)
Body = Callable[..., Sequence[SSAValue]]
"""A generic's body: `body(emitter, *block_args)` returns the values to yield."""

PARALLEL = IteratorTypeAttr.parallel()
REDUCTION = IteratorTypeAttr.reduction()


class Emitter:
    """Collects ops in order; each gets `location` (the location of the op being lowered)."""

    def __init__(self, location: Attribute):
        self.location = location
        self.ops: list[Operation] = []

    def add(self, op: OpT) -> OpT:
        op.location = self.location
        self.ops.append(op)
        return op

    def __call__(self, op: Operation) -> SSAValue:
        """Add a one-result op and return its result."""
        return self.add(op).results[0]


class LoweringPattern(RewritePattern, ABC):
    """Replaces an op of one of `OPS` with the value `lower` builds.

    A result without elements needs no computation: it becomes a `tensor.empty`, so `lower`
    only ever sees results with at least one element (operands may still be empty).
    """

    OPS: ClassVar[tuple[type[Operation], ...]]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, self.OPS):
            return
        b = Emitter(op.location)
        result_type = cast(TensorType, op.results[0].type)
        if math.prod(result_type.get_shape()) == 0:
            value = empty(b, result_type.get_shape(), result_type.get_element_type())
        else:
            value = self.lower(b, op)
        if value.type != result_type:
            raise PassError(
                f"internal error in convert-nn-to-linalg: lowered to {value.type}, "
                f"expected {result_type}",
                op,
            )
        # Inserted first, so that only the replacement value takes over the op's name.
        rewriter.insert(b.ops, InsertPoint.before(op))
        rewriter.replace(op, [], [value])

    @abstractmethod
    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        """Build the ops computing `op`'s result with `b`; return that result."""


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def tensor_type(value: SSAValue) -> TensorType:
    return cast(TensorType, value.type)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_type(value).get_shape())


def element_of(value: SSAValue) -> Attribute:
    return tensor_type(value).get_element_type()


def is_low_precision(t: Attribute) -> bool:
    """f16 and bf16: the interpreter computes transcendental functions and accumulations in
    f32 and rounds once, so the lowering extends to f32 around them too."""
    return isinstance(t, Float16Type | BFloat16Type)


def compute_type(t: Attribute) -> Attribute:
    return f32 if is_low_precision(t) else t


def is_signed_int(t: Attribute) -> bool:
    """i32 and i64 (read as signed); i1 compares and orders unsigned (false < true)."""
    return isinstance(t, IntegerType) and not is_bool(t)


# ---------------------------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------------------------


def constant(b: Emitter, value: float | int | bool, t: Attribute) -> SSAValue:
    """A scalar `arith.constant` of type `t` (a float, an integer or `index`)."""
    if is_float(t):
        return b(arith.ConstantOp(FloatAttr(float(value), cast(Float32Type, t))))
    if isinstance(t, IndexType):
        return b(arith.ConstantOp(IntegerAttr(int(value), t)))
    if is_bool(t):
        return b(arith.ConstantOp(IntegerAttr(1 if value else 0, cast(IntegerType, t))))
    return b(arith.ConstantOp(IntegerAttr(int(value), cast(IntegerType, t))))


_NO_FASTMATH = arith.FastMathFlagsAttr("none")
_I1 = IntegerType(1)
_CMPF_PREDICATES: dict[str, IntegerAttr] = {}
_CMPF_INDEX = {name: k for k, name in enumerate(
    ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")
)}


def float_binary(b: Emitter, op_type: type[Operation], x: SSAValue, y: SSAValue) -> SSAValue:
    """`op_type(x, y)` for one of arith's float binary ops (addf, mulf, ...), as its
    constructor builds it (result of x's type, no fast-math flags) but by `create`, with
    the flags attribute shared: a third of the cost, and most elementwise bodies are one."""
    return b(op_type.create(operands=[x, y], result_types=[x.type], properties={"fastmath": _NO_FASTMATH}))


def cmpf(b: Emitter, x: SSAValue, y: SSAValue, predicate: str) -> SSAValue:
    """`arith.CmpfOp(x, y, predicate)` by `create`, the predicate attribute built once per name
    (the constructor builds its table of names and an IntegerAttr at every call)."""
    attr = _CMPF_PREDICATES.get(predicate)
    if attr is None:
        attr = _CMPF_PREDICATES[predicate] = IntegerAttr(_CMPF_INDEX[predicate], 64)
    properties = {"predicate": attr, "fastmath": _NO_FASTMATH}
    return b(arith.CmpfOp.create(operands=[x, y], result_types=[_I1], properties=properties))


def select(b: Emitter, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    """`arith.SelectOp(cond, x, y)` by `create`."""
    return b(arith.SelectOp.create(operands=[cond, x, y], result_types=[x.type]))


def extend(b: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
    """`x` extended to the float type `to` (no op when it already is)."""
    return x if x.type == to else b(arith.ExtFOp(x, to))


def truncate(b: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
    """`x` rounded to the float type `to` (no op when it already is)."""
    return x if x.type == to else b(arith.TruncFOp(x, to))


def to_index(b: Emitter, x: SSAValue) -> SSAValue:
    """An `index`, `i32` or `i64` scalar as an `index` (sign-extended)."""
    return x if isinstance(x.type, IndexType) else b(arith.IndexCastOp(x, IndexType()))


def clamp_index(b: Emitter, x: SSAValue, low: int, high: int) -> SSAValue:
    """`min(max(x, low), high)` on `index` values (XLA's start-index clamp)."""
    clamped = b(arith.MaxSIOp(x, constant(b, low, IndexType())))
    return b(arith.MinSIOp(clamped, constant(b, high, IndexType())))


def wrap_and_clamp_index(b: Emitter, raw: SSAValue, size: int) -> SSAValue:
    """gather/scatter_add's index rule: a negative index counts from the end once, then the
    index is clamped to `0 .. size - 1` (numpy's `take` wraps, XLA clamps)."""
    i = to_index(b, raw)
    zero = constant(b, 0, IndexType())
    negative = b(arith.CmpiOp(i, zero, "slt"))
    wrapped = b(arith.SelectOp(negative, b(arith.AddiOp(i, constant(b, size, IndexType()))), i))
    return clamp_index(b, wrapped, 0, max(size - 1, 0))


# ---------------------------------------------------------------------------------------------
# Tensors
# ---------------------------------------------------------------------------------------------


def empty(b: Emitter, shape: Sequence[int], element: Attribute) -> SSAValue:
    """A static `tensor.empty`: what `tensor.EmptyOp([], type)` builds, by `create` (a third
    of the constructor's cost; every elementwise op has one)."""
    return b(tensor.EmptyOp.create(result_types=[_tensor_type(element, tuple(shape))]))


@functools.lru_cache(maxsize=1024)
def _tensor_type(element: Attribute, shape: tuple[int, ...]) -> TensorType:
    """TensorType(element, shape), built once per (element, shape): types are immutable values,
    and building one (with its verification) was a tenth of a large program's conversion."""
    return TensorType(element, list(shape))


def filled(b: Emitter, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    """`linalg.fill` of a `tensor.empty` with the scalar `value`."""
    init = empty(b, shape, value.type)
    return b(linalg.FillOp([value], [init], [init.type]))


def filled_constant(b: Emitter, value: float | int | bool, shape: Sequence[int], t: Attribute) -> SSAValue:
    return filled(b, constant(b, value, t), shape)


def affine_map(num_dims: int, results: Sequence[AffineExpr | int]) -> AffineMapAttr:
    exprs = tuple(AffineExpr.constant(r) if isinstance(r, int) else r for r in results)
    return AffineMapAttr(AffineMap(num_dims, 0, exprs))


@functools.lru_cache(maxsize=64)
def identity_map(rank: int) -> AffineMapAttr:
    """The identity map of `rank` dimensions, built once per rank (an immutable attribute; every
    elementwise op asks for it once per operand)."""
    return AffineMapAttr(AffineMap.identity(rank))


def dims(indices: Sequence[int]) -> list[AffineExpr]:
    return [AffineExpr.dimension(i) for i in indices]


def generic(
    b: Emitter,
    inputs: Sequence[SSAValue],
    input_maps: Sequence[AffineMapAttr],
    inits: Sequence[SSAValue],
    init_maps: Sequence[AffineMapAttr],
    iterators: Sequence[IteratorTypeAttr],
    body: Body,
) -> list[SSAValue]:
    """A `linalg.generic` on tensors; `body(emitter, *scalars)` builds its region."""
    arg_types = [tensor_type(v).get_element_type() for v in (*inputs, *inits)]
    block = Block(arg_types=arg_types)
    inner = Emitter(b.location)
    yielded = body(inner, *block.args)
    inner.add(linalg.YieldOp.create(operands=list(yielded)))  # what YieldOp(*yielded) builds, faster
    block.add_ops(inner.ops)
    op = b.add(
        linalg.GenericOp(
            list(inputs),
            list(inits),
            Region(block),
            [*input_maps, *init_maps],
            ArrayAttr(list(iterators)),
            [v.type for v in inits],
        )
    )
    return list(op.results)


def elementwise(
    b: Emitter, operands: Sequence[SSAValue], element: Attribute, body: Body, shape: Sequence[int] | None = None
) -> SSAValue:
    """An all-parallel generic over `shape` (the first operand's by default) with identity maps,
    producing one tensor of `element`."""
    shape = shape_of(operands[0]) if shape is None else shape
    rank = len(shape)
    (result,) = generic(
        b,
        operands,
        [identity_map(rank)] * len(operands),
        [empty(b, shape, element)],
        [identity_map(rank)],
        [PARALLEL] * rank,
        body,
    )
    return result


def map_elements(b: Emitter, x: SSAValue, element: Attribute, fn: Callable[[Emitter, SSAValue], SSAValue]) -> SSAValue:
    """`fn` applied to every element of `x`, giving a tensor of `element`."""
    return elementwise(b, [x], element, lambda e, v, _out: [fn(e, v)])


def convert_float(b: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
    """A float scalar converted to the float type `to` with one rounding: f16 <-> bf16 (equal
    widths, neither wider) goes through f32, which holds both exactly."""
    source = x.type
    if source == to:
        return x
    wide, narrow = _width(to), _width(source)
    if wide > narrow:
        return extend(b, x, to)
    if wide < narrow:
        return truncate(b, x, to)
    return truncate(b, extend(b, x, f32), to)


def convert_float_tensor(b: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
    """A float tensor converted elementwise to the float element type `to`."""
    if element_of(x) == to:
        return x
    return map_elements(b, x, to, lambda e, v: convert_float(e, v, to))


def _width(t: Attribute) -> int:
    return cast(Float32Type, t).bitwidth


# ---------------------------------------------------------------------------------------------
# Reshapes
# ---------------------------------------------------------------------------------------------


def reassociation(expanded: Sequence[int], collapsed: Sequence[int]) -> list[list[int]] | None:
    """Groups of consecutive `expanded` dimensions whose products are the `collapsed` sizes,
    or None when `collapsed` is not such a grouping. Unit dimensions join the group before them
    (the first group, at the front). Shapes without zero-size dimensions only."""
    if len(expanded) < len(collapsed):
        return None
    if not collapsed:
        return [] if all(d == 1 for d in expanded) else None
    groups: list[list[int]] = []
    i = 0
    for size in collapsed:
        if i >= len(expanded):
            return None
        group, product = [i], expanded[i]
        i += 1
        while product < size and i < len(expanded):
            group.append(i)
            product *= expanded[i]
            i += 1
        if product != size:
            return None
        groups.append(group)
    while i < len(expanded):
        if expanded[i] != 1:
            return None
        groups[-1].append(i)
        i += 1
    return groups


def _reassociation_attr(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in g]) for g in groups])


def collapse(b: Emitter, x: SSAValue, shape: Sequence[int], groups: Sequence[Sequence[int]]) -> SSAValue:
    result_type = TensorType(element_of(x), list(shape))
    return b(
        tensor.CollapseShapeOp.build(
            operands=[x],
            result_types=[result_type],
            properties={"reassociation": _reassociation_attr(groups)},
        )
    )


def expand(b: Emitter, x: SSAValue, shape: Sequence[int], groups: Sequence[Sequence[int]]) -> SSAValue:
    result_type = TensorType(element_of(x), list(shape))
    return b(tensor.ExpandShapeOp(x, [], _reassociation_attr(groups), list(shape), result_type))


def reshape(b: Emitter, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    """`x` with a new static shape of the same element count, in row-major order.

    One `tensor.collapse_shape` or `tensor.expand_shape` when the new shape groups the old
    dimensions (or the other way round); otherwise a collapse to 1-D then an expand. A tensor
    without elements becomes a fresh `tensor.empty` (it holds no data); one element to or from
    rank 0 is a `tensor.extract` and a `tensor.from_elements`.
    """
    source = shape_of(x)
    shape = tuple(shape)
    if source == shape:
        return x
    if math.prod(shape) == 0:
        return empty(b, shape, element_of(x))
    if not source or not shape:
        # One element to or from rank 0, which xDSL's reshape verifiers reject (an empty
        # reassociation): read the element and build the new tensor from it.
        element = b(tensor.ExtractOp(x, [constant(b, 0, IndexType())] * len(source), element_of(x)))
        return b(tensor.FromElementsOp(element, result_type=TensorType(element_of(x), list(shape))))
    if (groups := reassociation(source, shape)) is not None:
        return collapse(b, x, shape, groups)
    if (groups := reassociation(shape, source)) is not None:
        return expand(b, x, shape, groups)
    flat = x if len(source) == 1 else collapse(b, x, [math.prod(source)], [list(range(len(source)))])
    return flat if len(shape) == 1 else expand(b, flat, shape, [list(range(len(shape)))])


# ---------------------------------------------------------------------------------------------
# Reduction identities
# ---------------------------------------------------------------------------------------------


def lowest(t: Attribute) -> float | int | bool:
    """The identity of max: -inf, the minimum integer, false for i1."""
    if is_float(t):
        return -math.inf
    if is_bool(t):
        return False
    return -(2 ** (cast(IntegerType, t).width.data - 1))


def highest(t: Attribute) -> float | int | bool:
    """The identity of min: +inf, the maximum integer, true for i1."""
    if is_float(t):
        return math.inf
    if is_bool(t):
        return True
    return 2 ** (cast(IntegerType, t).width.data - 1) - 1
