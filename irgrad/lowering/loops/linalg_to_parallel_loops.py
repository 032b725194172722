"""`convert-linalg-to-parallel-loops`: linalg ops on memrefs to `scf.parallel`/`scf.for` nests.

Input invariant: stage "bufferized" of docs/design/cpu-pipeline.md (linalg ops on memrefs,
static shapes). Output IR: stage "loops": no linalg op remains; each became an `scf.parallel`
over its parallel dimensions (omitted when it has none) holding an `scf.for` nest over its
reduction dimensions that carries the output element in a register (loaded once before the
reductions, stored once after).

Every structured op works this way (`linalg.generic`, `fill`, `copy`, `matmul`, `transpose`,
the named elementwise ops, conv and pooling), and `linalg.broadcast` and `linalg.reduce`
(which xDSL's `convert-linalg-to-loops` skips) by the indexing maps they imply. Indices
are the indexing maps evaluated with `arith` on `index` (affine `mod` is non-negative, so it
is a `remsi` with a correction).

Loop order: the op's iteration order is kept, so the reduction order per element is the op's.
One exception (option `reorder_reductions`, on by default): for a matmul-like op the output's
fastest-varying parallel dimension moves innermost, below the reductions, with the output
element accumulated in memory, so the innermost loop walks rows contiguously and LLVM can
vectorize it. Each output element still sees its reduction terms in the same order, so
results are bit-identical.
Details: docs/design/cpu-pipeline.md, "irgrad/lowering/loops/linalg_to_parallel_loops.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError

LINALG_OPS = (LinalgStructuredOperation, linalg.BroadcastOp, linalg.ReduceOp)

CustomBody = Callable[[list[SSAValue], "Cursor"], list[SSAValue]]


@dataclass
class LoopSpec:
    """What a linalg op computes, as loops: operands, maps, loop kinds and ranges, a body."""

    operands: list[SSAValue]
    n_inputs: int
    maps: list[AffineMap]
    parallel: list[bool]
    ranges: list[int]
    body: Block
    custom_body: CustomBody | None = None


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return t.get_shape() if isinstance(t, ShapedType) else ()


def loop_ranges(op: Operation, operands: Sequence[SSAValue], maps: Sequence[AffineMap]) -> list[int]:
    """Each loop's trip count: an operand dimension that loop alone indexes."""
    ranges: list[int | None] = [None] * maps[0].num_dims
    for value, m in zip(operands, maps):
        for dim, expr in enumerate(m.results):
            if isinstance(expr, AffineDimExpr) and ranges[expr.position] is None:
                ranges[expr.position] = _shape(value)[dim]
    if any(r is None or r < 0 for r in ranges):
        raise PassError("has a loop that no static operand dimension bounds", op)
    return [r for r in ranges if r is not None]


def _pooling_max_body(values: list[SSAValue], cursor: Cursor) -> list[SSAValue]:
    # xDSL 0.75 builds linalg.pooling_nchw_max's hidden region as max(x, window), ignoring the
    # accumulator; the op means max(acc, x) (as the reference interpreter computes it).
    x, _window, acc = values
    if isinstance(acc.type, AnyFloat):
        return [cursor.add(arith.MaximumfOp(acc, x)).results[0]]
    return [cursor.add(arith.MaxSIOp(acc, x)).results[0]]


def loop_spec(op: Operation) -> LoopSpec:
    if isinstance(op, linalg.BroadcastOp):
        rank = len(_shape(op.init))
        added = set(op.dimensions.get_values())
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in added)
        maps = [AffineMap(rank, 0, kept), AffineMap.identity(rank)]
        operands = [op.input, op.init]
        return LoopSpec(
            operands, 1, maps, [True] * rank, list(_shape(op.init)), op.hidden_region.block
        )
    if isinstance(op, linalg.ReduceOp):
        rank = len(_shape(op.input))
        reduced = set(op.dimensions.get_values())
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in reduced)
        maps = [AffineMap.identity(rank), AffineMap(rank, 0, kept)]
        parallel = [d not in reduced for d in range(rank)]
        return LoopSpec(
            [op.input, op.init], 1, maps, parallel, list(_shape(op.input)), op.region.block
        )
    assert isinstance(op, LinalgStructuredOperation)
    operands = [*op.inputs, *op.outputs]
    maps = [m.data for m in op.get_indexing_maps()]
    parallel = ["parallel" in str(t.data) for t in op.get_iterator_types()]
    custom = _pooling_max_body if isinstance(op, linalg.PoolingNchwMaxOp) else None
    if not maps:
        raise PassError("has no operands", op)
    return LoopSpec(
        operands,
        len(op.inputs),
        maps,
        parallel,
        loop_ranges(op, operands, maps),
        op.body.block,
        custom,
    )


class Cursor:
    """An insertion point (before `anchor` in `block`) and index arithmetic emitted there."""

    def __init__(self, block: Block, anchor: Operation | None) -> None:
        self.block = block
        self.anchor = anchor
        self.cache: dict[AffineExpr, SSAValue] = {}

    def add(self, op: Operation) -> Operation:
        if self.anchor is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.anchor)
        return op


class Constants:
    """`arith.constant`s of type index, made once (per lowered op, or per function)."""

    def __init__(self, cursor: Cursor, *, at_block_start: bool = False) -> None:
        self.cursor = cursor
        self.at_block_start = at_block_start
        self.last: Operation | None = None
        self.values: dict[int, SSAValue] = {}

    @staticmethod
    def for_function(function: Operation) -> Constants:
        """Constants at the top of `function`'s entry block: they dominate every loop nest
        of the function, and the nests share them."""
        return Constants(Cursor(function.regions[0].blocks[0], None), at_block_start=True)

    def __call__(self, value: int) -> SSAValue:
        if value not in self.values:
            op = arith.ConstantOp(IntegerAttr(value, IndexType()))
            if not self.at_block_start:
                self.cursor.add(op)
            elif self.last is not None:
                self.cursor.block.insert_op_after(op, self.last)
            elif (first := self.cursor.block.first_op) is not None:
                self.cursor.block.insert_op_before(op, first)
            else:
                self.cursor.block.add_op(op)
            self.last = op
            self.values[value] = op.results[0]
        return self.values[value]


def lower_expr(
    expr: AffineExpr, ivs: Sequence[SSAValue | None], cursor: Cursor, const: Constants
) -> SSAValue:
    """`expr` evaluated at the induction variables, with arith on index (memoized per block)."""
    if (cached := cursor.cache.get(expr)) is not None:
        return cached
    match expr:
        case AffineDimExpr():
            iv = ivs[expr.position]
            assert iv is not None
            return iv
        case AffineConstantExpr():
            return const(expr.value)
        case AffineBinaryOpExpr():
            lhs = lower_expr(expr.lhs, ivs, cursor, const)
            rhs = lower_expr(expr.rhs, ivs, cursor, const)
            match expr.kind:
                case AffineBinaryOpKind.Add:
                    result = cursor.add(arith.AddiOp(lhs, rhs)).results[0]
                case AffineBinaryOpKind.Mul:
                    result = cursor.add(arith.MuliOp(lhs, rhs)).results[0]
                case AffineBinaryOpKind.FloorDiv:
                    result = cursor.add(arith.FloorDivSIOp(lhs, rhs)).results[0]
                case AffineBinaryOpKind.CeilDiv:
                    result = cursor.add(arith.CeilDivSIOp(lhs, rhs)).results[0]
                case AffineBinaryOpKind.Mod:
                    # Affine mod is never negative; remsi takes the sign of the dividend.
                    rem = cursor.add(arith.RemSIOp(lhs, rhs)).results[0]
                    negative = cursor.add(arith.CmpiOp(rem, const(0), "slt")).results[0]
                    shifted = cursor.add(arith.AddiOp(rem, rhs)).results[0]
                    result = cursor.add(arith.SelectOp(negative, shifted, rem)).results[0]
        case _:
            raise ValueError(f"unsupported affine expression {expr}")
    cursor.cache[expr] = result
    return result


def indices(
    m: AffineMap, ivs: Sequence[SSAValue | None], cursor: Cursor, const: Constants
) -> list[SSAValue]:
    return [lower_expr(e, ivs, cursor, const) for e in m.results]


def _uses_dims(m: AffineMap) -> set[int]:
    return {d for e in m.results for d in e.used_dims()}


def _contiguous_parallel_dim(spec: LoopSpec) -> int | None:
    """The parallel dim to move innermost in a matmul-like op (module docstring), or None."""
    par = [d for d, p in enumerate(spec.parallel) if p]
    red = [d for d, p in enumerate(spec.parallel) if not p]
    if not red or not par:
        return None
    out_maps = spec.maps[spec.n_inputs :]
    if not out_maps or any(not m.results for m in out_maps):
        return None
    last = out_maps[0].results[-1]
    if not isinstance(last, AffineDimExpr) or not spec.parallel[last.position]:
        return None
    j = last.position
    for m in out_maps:
        if m.results[-1] != last or any(d in red for d in _uses_dims(m)):
            return None
    for value, m in zip(spec.operands[: spec.n_inputs], spec.maps[: spec.n_inputs]):
        if not isinstance(value.type, MemRefType):
            continue
        if j not in _uses_dims(m):
            continue
        if m.results[-1] != last or any(j in e.used_dims() for e in m.results[:-1]):
            return None
    return j


def _inline_body(
    spec: LoopSpec, args: list[SSAValue], ivs: Sequence[SSAValue | None], cursor: Cursor
) -> list[SSAValue]:
    """Move the op's body to `cursor` with its arguments bound; return the yielded values."""
    if spec.custom_body is not None:
        return spec.custom_body(args, cursor)
    body = spec.body
    for index_op in [o for o in body.walk() if isinstance(o, linalg.IndexOp)]:
        iv = ivs[index_op.dim.value.data]
        assert iv is not None
        index_op.result.replace_all_uses_with(iv)
        parent = index_op.parent_block()
        assert parent is not None
        parent.erase_op(index_op)
    for arg, value in zip(body.args, args, strict=True):
        arg.replace_all_uses_with(value)
    terminator = body.last_op
    assert isinstance(terminator, linalg.YieldOp)
    for op in list(body.ops):
        if op is terminator:
            break
        op.detach()
        cursor.add(op)
    return list(terminator.operands)


def _make_for(
    cursor: Cursor, const: Constants, upper: int, iter_args: Sequence[SSAValue]
) -> tuple[scf.ForOp, Cursor]:
    block = Block(arg_types=[IndexType(), *(v.type for v in iter_args)])
    loop = scf.ForOp(const(0), const(upper), const(1), list(iter_args), Region(block))
    cursor.add(loop)
    return loop, Cursor(block, None)


def lower_to_loops(
    op: Operation, *, reorder_reductions: bool = True, constants: Constants | None = None
) -> None:
    """Replace linalg op `op` (on memrefs) by its loop nest, in place.

    `constants` is where index constants go (by default, just before `op`: pass one per
    function, `Constants.for_function`, to share them).
    """
    if op.results or any(isinstance(v.type, TensorType) for v in op.operands):
        raise PassError("requires buffer semantics; run bufferize first", op)
    spec = loop_spec(op)
    block = op.parent_block()
    assert block is not None
    outer = Cursor(block, op)
    const = constants if constants is not None else Constants(Cursor(block, op))
    n = len(spec.parallel)
    ivs: list[SSAValue | None] = [None] * n
    inner_j = _contiguous_parallel_dim(spec) if reorder_reductions else None
    par = [d for d in range(n) if spec.parallel[d] and d != inner_j]
    red = [d for d in range(n) if not spec.parallel[d]]
    if inner_j is not None:
        red = [*red, inner_j]

    cursor = outer
    if par:
        body = Block(arg_types=[IndexType()] * len(par))
        reduce_op = scf.ReduceOp()
        body.add_op(reduce_op)
        loop = scf.ParallelOp(
            [const(0)] * len(par), [const(spec.ranges[d]) for d in par], [const(1)] * len(par), Region(body)
        )
        outer.add(loop)
        for d, iv in zip(par, body.args):
            ivs[d] = iv
        cursor = Cursor(body, reduce_op)

    n_in = spec.n_inputs
    inputs = spec.operands[:n_in]
    outputs = spec.operands[n_in:]
    out_maps = spec.maps[n_in:]
    body_args = spec.body.args

    def load_inputs(at: Cursor, loaded: dict[int, SSAValue] | None = None) -> list[SSAValue]:
        values: list[SSAValue] = []
        for k, (value, m) in enumerate(zip(inputs, spec.maps)):
            if loaded is not None and k in loaded:
                values.append(loaded[k])
            elif not isinstance(value.type, MemRefType):
                values.append(value)
            elif spec.custom_body is None and not body_args[k].uses:
                values.append(value)  # placeholder: the body never reads it
            else:
                values.append(at.add(memref.LoadOp.get(value, indices(m, ivs, at, const))).results[0])
        return values

    def load_outputs(at: Cursor, always: bool) -> list[SSAValue]:
        values: list[SSAValue] = []
        for k, (value, m) in enumerate(zip(outputs, out_maps)):
            if always or spec.custom_body is not None or body_args[n_in + k].uses:
                values.append(at.add(memref.LoadOp.get(value, indices(m, ivs, at, const))).results[0])
            else:
                values.append(value)  # placeholder: the body never reads it
        return values

    def store_outputs(at: Cursor, values: Sequence[SSAValue]) -> None:
        for value, target, m in zip(values, outputs, out_maps, strict=True):
            at.add(memref.StoreOp.get(value, target, indices(m, ivs, at, const)))

    in_registers = inner_j is None and red and all(
        not (_uses_dims(m) & set(red)) for m in out_maps
    )
    if not red:
        args = load_inputs(cursor) + load_outputs(cursor, always=False)
        store_outputs(cursor, _inline_body(spec, args, ivs, cursor))
    elif in_registers:
        accumulators = load_outputs(cursor, always=True)
        loops: list[tuple[scf.ForOp, Cursor]] = []
        inner = cursor
        carried = accumulators
        for d in red:
            loop, inner = _make_for(inner, const, spec.ranges[d], carried)
            ivs[d] = inner.block.args[0]
            carried = list(inner.block.args[1:])
            loops.append((loop, inner))
        results = _inline_body(spec, load_inputs(inner) + carried, ivs, inner)
        for loop, loop_cursor in reversed(loops):
            loop_cursor.add(scf.YieldOp(*results))
            results = list(loop.results)
        store_outputs(cursor, results)
    else:
        inner = cursor
        fors: list[Cursor] = []
        hoisted: dict[int, SSAValue] = {}
        for d in red:
            if d == inner_j:
                # Loads that do not depend on j, once per reduction point: LLVM could not
                # hoist them over the stores into a buffer it cannot prove distinct.
                for k, (value, m) in enumerate(zip(inputs, spec.maps)):
                    used = spec.custom_body is not None or bool(body_args[k].uses)
                    if isinstance(value.type, MemRefType) and used and d not in _uses_dims(m):
                        load = memref.LoadOp.get(value, indices(m, ivs, inner, const))
                        hoisted[k] = inner.add(load).results[0]
                # j is a parallel dimension: a one-dimensional scf.parallel (no reduction)
                # nested in the reduction loops.
                j_body = Block(arg_types=[IndexType()])
                j_reduce = scf.ReduceOp()
                j_body.add_op(j_reduce)
                inner.add(scf.ParallelOp([const(0)], [const(spec.ranges[d])], [const(1)], Region(j_body)))
                inner = Cursor(j_body, j_reduce)
                ivs[d] = j_body.args[0]
                continue
            _, inner = _make_for(inner, const, spec.ranges[d], [])
            ivs[d] = inner.block.args[0]
            fors.append(inner)
        args = load_inputs(inner, hoisted) + load_outputs(inner, always=False)
        store_outputs(inner, _inline_body(spec, args, ivs, inner))
        for loop_cursor in fors:
            loop_cursor.add(scf.YieldOp())
    block.erase_op(op)


@dataclass(frozen=True)
class ConvertLinalgToParallelLoopsPass(ModulePass):
    """Lower every linalg op on memrefs to scf.parallel over its parallel dimensions and an
    scf.for nest over its reductions.

    Input invariant: stage "bufferized" (docs/design/cpu-pipeline.md). Output IR: stage "loops".
    `reorder_reductions` (default true) runs matmul-like ops as i, k, j with the contiguous
    parallel dimension innermost (see irgrad/lowering/loops/linalg_to_parallel_loops.py).
    """

    name = "convert-linalg-to-parallel-loops"

    reorder_reductions: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        constants: dict[Operation, Constants] = {}
        for linalg_op in [o for o in op.walk() if isinstance(o, LINALG_OPS)]:
            function = linalg_op.parent_op()
            while function is not None and not isinstance(function, func.FuncOp):
                function = function.parent_op()
            const = None
            if function is not None and function.body.blocks:
                if function not in constants:
                    constants[function] = Constants.for_function(function)
                const = constants[function]
            lower_to_loops(
                linalg_op, reorder_reductions=self.reorder_reductions, constants=const
            )


__all__ = ["ConvertLinalgToParallelLoopsPass", "lower_to_loops"]
