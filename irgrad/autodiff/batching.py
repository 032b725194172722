"""Batching (vmap): build `@f_batch`, the function `f` mapped over a leading batch dimension.

`autodiff.batch @f(args) in_axes out_axes` asks for `f` applied to every example of a batch. The
`autodiff` pass expands it (deriver.py) into a call of a generated function built here, op by op,
as JAX's batching interpreter does it at trace time:

- each value of `f` becomes a value of `@f_batch` that is either *unbatched* (the same for every
  example: it depends on no mapped argument) or *batched*, with the batch as its dimension 0;
- an op whose operands are all unbatched is copied as it is;
- any other op asks its batching rule (`@batch_rule` in irgrad/autodiff/rules/, next to the op's
  derivative rules) for the batched values of its results;
- `func.call` calls the callee's own batched version (built once per which-arguments-are-batched);
- results come back batched or not; the request moves the batch to `out_axes` (-1: unbatched).

Rules see `b.size` (the batch size) and use the helpers here: `batched(b, v, size)` broadcasts an
unbatched value to the batch, `move_axis` transposes a dimension to a new place. Scalars and indices
can be batched too (tensor<B x t>), and loops with per-example trip counts run under a mask.

`@f_batch` is ordinary IR (differentiated, partitioned, lowered like any other function); a request
inside `f` (a gradient, say) is expanded before `f` is batched.
Details: docs/autodiff.md, "irgrad/autodiff/batching.py: batched scalars and loops".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import IndexType, IntegerType, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irgrad.autodiff.builder import RuleBuilder, shape_of
from irgrad.autodiff.errors import AutodiffError
from irgrad.autodiff.protocol import DeriverProtocol
from irgrad.autodiff.registry import BATCH_RULES, NOT_SUPPORTED_YET
from irgrad.dialects.nn import is_float

Batched = tuple[SSAValue, bool]
"""A value of the batched function, and whether it carries the batch (at dimension 0)."""


class BatchBuilder(RuleBuilder):
    """A RuleBuilder that knows the batch size."""

    size: int = 0


def batched_type(t: Attribute, size: int) -> TensorType:
    """The type of a batched value of type `t`: tensor<size x ...> for a ranked tensor, and for a scalar
    (an integer or float: `tensor.extract` of a batched tensor, an scf.if condition) the *batched scalar*
    tensor<size x t>, one element per example."""
    if isinstance(t, TensorType):
        return TensorType(t.get_element_type(), [size, *t.get_shape()])
    if isinstance(t, IndexType):
        return TensorType(i64, [size])  # nn tensors hold no index: a batched index is carried as i64
    if isinstance(t, IntegerType) or is_float(t):
        return TensorType(t, [size])
    raise AutodiffError(f"cannot batch a value of type {t}: vmap maps ranked tensors and scalars only")


def batched(b: RuleBuilder, value: SSAValue, size: int) -> SSAValue:
    """`value` (unbatched) repeated for every example: broadcast to [size, *shape] (a scalar is splat
    to the batched scalar tensor<size x t>)."""
    if not isinstance(value.type, TensorType):
        if isinstance(value.type, IndexType):
            value = b.value(arith.IndexCastOp(value, i64))
        return b.value(tensor.SplatOp(value, [], batched_type(value.type, size)))
    shape = shape_of(value)
    return b.broadcast(value, [size, *shape], list(range(1, len(shape) + 1)))


def materialize(b: BatchBuilder, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> list[SSAValue]:
    """Every operand batched (unbatched ones broadcast), for rules that need them all alike."""
    return [v if bt else batched(b, v, b.size) for v, bt in zip(args, is_batched)]


def move_axis(b: RuleBuilder, value: SSAValue, src: int, dst: int) -> SSAValue:
    """`value` with dimension `src` moved to position `dst` (the others keep their order)."""
    rank = len(shape_of(value))
    if src == dst:
        return value
    order = [d for d in range(rank) if d != src]
    order.insert(dst, src)
    return b.transpose(value, order)


def _rule_for(op: Operation):
    for cls in type(op).__mro__:
        rule = BATCH_RULES.get(cls)  # type: ignore[arg-type]
        if rule is not None:
            return rule
    return None


class Batcher:
    """Batches the ops of one block into a builder, with an environment of batched values."""

    def __init__(self, deriver: DeriverProtocol, b: BatchBuilder, env: dict[SSAValue, Batched]):
        self.deriver = deriver
        self.b = b
        self.env = env

    def lookup(self, value: SSAValue) -> Batched:
        if value not in self.env:
            raise AutodiffError(f"internal error: {value} has no batched value")
        return self.env[value]

    def run(self, ops: Sequence[Operation]) -> None:
        for op in ops:
            self.batch_op(op)

    def captured(self, op: Operation) -> list[SSAValue]:
        """Values defined outside `op` that its regions use."""
        inside = {r for inner in op.walk() for r in (*inner.results, *(a for reg in inner.regions for blk in reg.blocks for a in blk.args))}
        seen: dict[SSAValue, None] = {}
        for inner in op.walk():
            if inner is op:
                continue
            for v in inner.operands:
                if v not in inside and v in self.env:
                    seen.setdefault(v)
        return list(seen)

    def batch_op(self, op: Operation) -> None:
        b = self.b.at(op.location)
        operands = [self.lookup(v) for v in op.operands]
        captured = self.captured(op) if op.regions else []
        any_batched = any(bt for _, bt in operands) or any(self.env[v][1] for v in captured)
        if not any_batched:
            mapping = {v: self.env[v][0] for v in (*op.operands, *captured)}
            clone = op.clone(value_mapper=mapping)
            b.emit(clone)
            for old, new in zip(op.results, clone.results):
                self.env[old] = (new, False)
            return
        if isinstance(op, func.CallOp):
            results = self.call(op, operands)
        else:
            rule = _rule_for(op)
            if rule is None:
                why = NOT_SUPPORTED_YET.get(type(op))
                detail = f": {why}" if why else "; add a @batch_rule next to its derivative rules in irgrad/autodiff/rules/"
                raise AutodiffError(f"has no batching rule (vmap){detail}", op)
            if op.regions:
                out = rule(b, op, [v for v, _ in operands], [bt for _, bt in operands], self)
            else:
                out = rule(b, op, [v for v, _ in operands], [bt for _, bt in operands])
            results = [out] if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], bool) else list(out)
        if len(results) != len(op.results):
            raise AutodiffError(f"internal error: the batching rule of {op.name} returned {len(results)} results", op)
        for old, (value, bt) in zip(op.results, results):
            expected = batched_type(old.type, b.size) if bt else old.type
            if value.type != expected:
                raise AutodiffError(
                    f"internal error: the batching rule of {op.name} made {value.type}, expected {expected}", op
                )
            if old.name_hint and not value.name_hint:
                value.name_hint = old.name_hint
            self.env[old] = (value, bt)

    def call(self, op: func.CallOp, operands: Sequence[Batched]) -> list[Batched]:
        callee = self.deriver.lookup(op, op.callee)
        mask = tuple(bt for _, bt in operands)
        batched_fn, result_mask = self.deriver.derive_batched(callee, mask, self.b.size, op)
        values = self.b.call(batched_fn, [v for v, _ in operands])
        return list(zip(values, result_mask))

    def batch_block(self, block: Block, args: Sequence[Batched], into: Block) -> list[Batched]:
        """Batch `block` (a region body) into `into`, its arguments bound to `args`; returns what its
        terminator yields (the terminator itself is not emitted)."""
        inner_b = cast(BatchBuilder, BatchBuilder(into, self.deriver, function=self.b.function))
        inner_b.size = self.b.size
        inner_b.location = self.b.location
        inner = Batcher(self.deriver, inner_b, dict(self.env))
        for arg, value in zip(block.args, args):
            inner.env[arg] = value
        ops = list(block.ops)
        inner.run(ops[:-1])
        terminator = ops[-1]
        return [inner.lookup(v) for v in terminator.operands]

    def inline_block(self, block: Block, args: Sequence[Batched]) -> list[Batched]:
        """Batch `block` at this batcher's insertion point (both branches of an scf.if whose condition is
        batched run, then select); returns what its terminator yields."""
        scratch = Block()
        results = self.batch_block(block, args, scratch)
        for op in list(scratch.ops):
            op.detach()
            if self.b.before is not None:
                self.b.block.insert_op_before(op, self.b.before)
            else:
                self.b.block.add_op(op)
        return results


def build_batched(
    deriver: DeriverProtocol, primal: func.FuncOp, mask: Sequence[bool], size: int, name: str
) -> tuple[func.FuncOp, tuple[bool, ...]]:
    """`@name`: `primal` batched over `size` examples in the arguments `mask` marks."""
    inputs = primal.function_type.inputs.data
    arg_types = [batched_type(t, size) if m else t for t, m in zip(inputs, mask)]
    block = Block(arg_types=arg_types)
    b = BatchBuilder(block, deriver)
    b.size = size
    b.location = primal.location
    env: dict[SSAValue, Batched] = {}
    for old, new, m in zip(primal.body.block.args, block.args, mask):
        new.name_hint = old.name_hint
        env[old] = (new, m)
    batcher = Batcher(deriver, b, env)
    ops = list(primal.body.block.ops)
    batcher.run(ops[:-1])
    ret = ops[-1]
    assert isinstance(ret, func.ReturnOp)
    results = [batcher.lookup(v) for v in ret.operands]
    b.at(ret.location).emit(func.ReturnOp(*[v for v, _ in results]))
    function = func.FuncOp(
        name, (arg_types, [v.type for v, _ in results]), Region(block), visibility="private"
    )
    function.location = primal.location
    return function, tuple(bt for _, bt in results)


def expand_batch(deriver: DeriverProtocol, b: RuleBuilder, op: Operation) -> list[SSAValue]:
    """The values of an `autodiff.batch` request: move each mapped operand's batch to the front,
    call the batched function, move each result's batch to its `out_axes`."""
    from irgrad.dialects import autodiff as ad

    assert isinstance(op, ad.BatchOp)
    callee = deriver.lookup(op, op.callee)
    size = op.batch_size
    args, mask = [], []
    for value, axis in zip(op.args, op.in_axes_list):
        args.append(move_axis(b, value, axis, 0) if axis >= 0 else value)
        mask.append(axis >= 0)
    function, result_mask = deriver.derive_batched(callee, tuple(mask), size, op)
    values = b.call(function, args)
    outs = []
    for index, (value, is_batched, axis) in enumerate(zip(values, result_mask, op.out_axes_list)):
        if axis < 0:
            if is_batched:
                raise AutodiffError(
                    f"vmap: result #{index} of {op.callee} depends on the mapped arguments, so it cannot "
                    "have out_axes -1 (None)",
                    op,
                )
            outs.append(value)
            continue
        if not is_batched:
            value = batched(b, value, size)
        outs.append(move_axis(b, value, 0, axis))
    return outs


__all__ = [
    "BatchBuilder",
    "Batched",
    "Batcher",
    "batched",
    "batched_type",
    "build_batched",
    "expand_batch",
    "materialize",
    "move_axis",
]
