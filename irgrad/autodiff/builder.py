"""`RuleBuilder`: what a derivative rule uses to emit IR.

A rule never builds ops by hand; it asks `b` (`b.mul(ct, y)`, `b.broadcast(ct, shape, dims)`, ...) and gets
the result value back. The builder inserts each op at its insertion point and stamps it with the location of
the primal op being differentiated, so a derivative op points at the user's source line.

Values may be ranked tensors (emitted as `nn` ops) or float scalars (emitted as `arith`/`math` ops): the
elementwise helpers pick the dialect from the operand type, so one rule serves `nn.exp` and `math.exp`.

`None` is a symbolic zero in the arithmetic helpers (`add`, `sub`, `neg`, `mul`, `div`, `select`): `b.add(None,
t)` is `t` and `b.mul(None, y)` is `None`, so forward rules need no case analysis for inactive operands.

Strong zero. A reverse rule multiplies its cotangent by a factor computed from primal values (`exp`: the
result; `sqrt`: `0.5 / y`). Where the cotangent is exactly zero (a `select` routed it to the other branch),
the product must be zero even if the factor is inf or NaN, or `where(x > 0, sqrt(x), 0)` would have NaN
gradients at `x < 0` (jax#1052). `strong_mul`/`strong_div` give `select(ct == 0, ct, ct * f)`; every
elementwise reverse rule with a primal-dependent factor uses them (Enzyme's `strong_zero`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, func, math, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    SymbolRefAttr,
    TensorType,
    UnknownLoc,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from irgrad.autodiff.protocol import DeriverProtocol
from irgrad.dialects import nn
from irgrad.dialects.autodiff import is_differentiable_type

Value = SSAValue

_CMPF_PREDICATES = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}


def is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(cast(TensorType, value.type).get_shape())


def element_type(value: SSAValue) -> Attribute:
    t = value.type
    return t.get_element_type() if isinstance(t, TensorType) else t


class RuleBuilder:
    """Emits ops before `before` (or at the end of `block`) with the location set by `at`."""

    def __init__(
        self,
        block: Block,
        deriver: DeriverProtocol | None = None,
        *,
        before: Operation | None = None,
        function: func.FuncOp | None = None,
    ):
        self.block = block
        self.before = before
        self.deriver = deriver
        self.function = function
        """The primal function being differentiated (names the functions region rules outline)."""
        self.location: Attribute = UnknownLoc()
        self._needs: tuple[bool, ...] = ()
        self._results_needed: tuple[bool, ...] = ()
        self._constants: dict[tuple[Attribute, float], SSAValue] = {}
        self._is_finite: dict[SSAValue, SSAValue] = {}
        self._is_zero: dict[SSAValue, SSAValue] = {}
        self.on_replace_primal: Callable[[Operation, Sequence[SSAValue]], None] | None = None
        self.captured: list[SSAValue] = []
        """For an op with regions: the values its regions use from outside, as in the generated function."""
        self.saved: Any = None
        """Reverse mode: what the op's augment rule returned in the forward sweep (None without one)."""

    # ---------------------------------------------------------------------------------------------------------
    # Driver interface
    # ---------------------------------------------------------------------------------------------------------

    def at(self, location: Attribute, needs: Sequence[bool] = (), results: Sequence[bool] = ()) -> RuleBuilder:
        """Prepare for one rule: stamp ops with `location`; `needs[i]` says operand i wants a cotangent,
        `results[i]` that result i wants a tangent."""
        self.location = location
        self._needs = tuple(needs)
        self._results_needed = tuple(results)
        return self

    def needs(self, index: int) -> bool:
        """True when operand `index` is active, so a reverse rule should compute its cotangent."""
        return index < len(self._needs) and self._needs[index]

    def result_needed(self, index: int) -> bool:
        """Forward mode: True when result `index` is active, so its tangent is used."""
        return index < len(self._results_needed) and self._results_needed[index]

    def emit(self, op: Operation) -> Operation:
        """Insert `op` at the insertion point with the current location; return it."""
        op.location = self.location
        if self.before is not None:
            self.block.insert_op_before(op, self.before)
        else:
            self.block.add_op(op)
        return op

    def value(self, op: Operation) -> SSAValue:
        """Emit a single-result op and return its result."""
        return self.emit(op).results[0]

    def nested(self, block: Block) -> RuleBuilder:
        """A builder appending to `block` (the body of a region being built), with this one's location.

        Constants this builder made are reused (they are emitted before the region's op, so they dominate
        it); constants the nested builder makes stay inside the block.
        """
        inner = RuleBuilder(block, self.deriver, function=self.function)
        inner.location = self.location
        inner._constants = dict(self._constants)
        inner._is_zero = dict(self._is_zero)
        inner._is_finite = dict(self._is_finite)
        return inner

    # ---------------------------------------------------------------------------------------------------------
    # Constants
    # ---------------------------------------------------------------------------------------------------------

    def full(self, value: float | int | bool, type: Attribute) -> SSAValue:
        """A tensor of `type` filled with `value` (`nn.full`), or a scalar `arith.constant`; shared per function."""
        key = (type, float(value))
        cached = self._constants.get(key)
        if cached is not None:
            return cached
        if isinstance(type, TensorType) and isinstance(type.get_element_type(), IndexType):
            # nn has no index tensors (a loop's tape of index counters is one): splat the scalar instead.
            result = self.value(tensor.SplatOp(self.full(value, IndexType()), [], type))
        elif isinstance(type, TensorType):
            result = self.value(nn.FullOp(value, type))
        elif isinstance(type, IntegerType | IndexType):
            result = self.value(arith.ConstantOp(IntegerAttr(int(value), type)))
        else:
            result = self.value(arith.ConstantOp(FloatAttr(float(value), cast(AnyFloat, type))))
        self._constants[key] = result
        return result

    def zeros(self, type: Attribute) -> SSAValue:
        return self.full(0, type)

    def zeros_like(self, value: SSAValue) -> SSAValue:
        return self.zeros(value.type)

    def full_like(self, value: SSAValue, fill: float) -> SSAValue:
        return self.full(fill, value.type)

    def scalar(self, fill: float, like: SSAValue) -> SSAValue:
        """A rank-0 tensor of `like`'s element type (a padding value, say)."""
        return self.full(fill, TensorType(element_type(like), []))

    def constant(self, array: np.ndarray, elem: Attribute) -> SSAValue:
        """An `nn.constant` holding `array` (indices computed at compile time)."""
        type = TensorType(elem, list(array.shape))
        data = [int(v) for v in array.reshape(-1)] if isinstance(elem, IntegerType) else array.reshape(-1).tolist()
        return self.value(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(type, data)))

    def index_constant(self, array: np.ndarray) -> SSAValue:
        """Integer indices as `nn.constant`: i32 when they fit, else i64."""
        fits = array.size == 0 or (array.min() >= -(2**31) and array.max() < 2**31)
        return self.constant(array, i32 if fits else i64)

    # ---------------------------------------------------------------------------------------------------------
    # Elementwise arithmetic (None is a symbolic zero)
    # ---------------------------------------------------------------------------------------------------------

    def _binary(self, nn_op: type[nn.ElementwiseBinaryOp], arith_op: type[Operation], a: Value, b: Value) -> Value:
        if is_tensor(a):
            return self.value(nn_op(a, b))
        return self.value(arith_op(a, b))

    def _unary(self, nn_op: type[nn.ElementwiseUnaryOp], math_op: type[Operation], a: Value) -> Value:
        if is_tensor(a):
            return self.value(nn_op(a))
        return self.value(math_op(a))

    def add(self, a: Value | None, b: Value | None) -> Value | None:
        if a is None:
            return b
        if b is None:
            return a
        return self._binary(nn.AddOp, arith.AddfOp, a, b)

    def sub(self, a: Value | None, b: Value | None) -> Value | None:
        if b is None:
            return a
        if a is None:
            return self.neg(b)
        return self._binary(nn.SubOp, arith.SubfOp, a, b)

    def neg(self, a: Value | None) -> Value | None:
        if a is None:
            return None
        return self._unary(nn.NegOp, arith.NegfOp, a)

    def mul(self, a: Value | None, b: Value | None) -> Value | None:
        if a is None or b is None:
            return None
        return self._binary(nn.MulOp, arith.MulfOp, a, b)

    def div(self, a: Value | None, b: Value) -> Value | None:
        if a is None:
            return None
        return self._binary(nn.DivOp, arith.DivfOp, a, b)

    def scale(self, a: Value | None, factor: float) -> Value | None:
        """`a * factor` for a compile-time constant factor."""
        if a is None:
            return None
        return self.mul(a, self.full_like(a, factor))

    def int_op(self, op_type: type[Operation], a: Value, b: Value) -> Value:
        """An integer (index) arithmetic op `op_type(a, b)`: loop counters and tape positions."""
        return self.value(op_type(a, b))

    def is_zero(self, ct: Value) -> Value:
        """`ct == 0` (i1), computed once per value."""
        cached = self._is_zero.get(ct)
        if cached is None:
            cached = self.compare("eq", ct, self.zeros_like(ct))
            self._is_zero[ct] = cached
        return cached

    def is_finite(self, value: Value) -> Value:
        """`|value| < inf` (i1; false for NaN), computed once per value."""
        cached = self._is_finite.get(value)
        if cached is None:
            magnitude = self._unary(nn.AbsOp, math.AbsFOp, value)
            cached = self.compare("lt", magnitude, self.full_like(value, float("inf")))
            self._is_finite[value] = cached
        return cached

    def strong_mul(self, ct: Value, factor: Value) -> Value:
        """`ct * factor`, but exactly `ct` where `ct == 0` and `factor` is inf or NaN: an
        inf/NaN factor never turns a zero into NaN (Enzyme's strong zero).

        Where `factor` is finite the result is the plain product, so its own derivative in
        `ct` is `factor` even at `ct == 0`: guarding on `ct == 0` alone would make that
        derivative 1 there, and a second reverse sweep (grad of grad) silently wrong."""
        product = self.mul(ct, factor)
        assert product is not None
        guarded = self.select(self.is_zero(ct), ct, product)
        return cast(Value, self.select(self.is_finite(factor), product, guarded))

    def strong_div(self, ct: Value, divisor: Value) -> Value:
        """`ct / divisor`, but exactly `ct` where `ct == 0` and the divisor is 0, inf or NaN
        (see `strong_mul`); a plain quotient wherever it is finite."""
        quotient = self.div(ct, divisor)
        assert quotient is not None
        guarded = self.select(self.is_zero(ct), ct, quotient)
        return cast(Value, self.select(self.is_finite(quotient), quotient, guarded))

    def exp(self, a: Value) -> Value:
        return self._unary(nn.ExpOp, math.ExpOp, a)

    def log(self, a: Value) -> Value:
        return self._unary(nn.LogOp, math.LogOp, a)

    def sin(self, a: Value) -> Value:
        return self._unary(nn.SinOp, math.SinOp, a)

    def cos(self, a: Value) -> Value:
        return self._unary(nn.CosOp, math.CosOp, a)

    def erf(self, a: Value) -> Value:
        return self._unary(nn.ErfOp, math.ErfOp, a)

    def pow(self, a: Value, b: Value) -> Value:
        return self._binary(nn.PowOp, math.PowFOp, a, b)

    def compare(self, direction: str, a: Value, b: Value) -> Value:
        """Elementwise comparison (`eq ne lt le gt ge`), ordered as IEEE: NaN compares false except `ne`."""
        if is_tensor(a):
            return self.value(nn.CompareOp(direction, a, b))
        return self.value(arith.CmpfOp(a, b, _CMPF_PREDICATES[direction]))

    def select(self, pred: Value, on_true: Value | None, on_false: Value | None) -> Value | None:
        """`pred ? on_true : on_false`; a `None` branch is zeros. Never a multiplication by a mask."""
        if on_true is None and on_false is None:
            return None
        if on_true is None:
            on_true = self.zeros_like(cast(Value, on_false))
        if on_false is None:
            on_false = self.zeros_like(on_true)
        if isinstance(pred.type, TensorType):
            return self.value(nn.SelectOp(pred, on_true, on_false))
        return self.value(arith.SelectOp(pred, on_true, on_false))

    def convert(self, a: Value, elem: Attribute) -> Value:
        """Change the element type (`nn.convert`, or `arith.extf`/`truncf` on scalars)."""
        if element_type(a) == elem:
            return a
        if is_tensor(a):
            return self.value(nn.ConvertOp(a, elem))
        if cast(AnyFloat, elem).bitwidth > cast(AnyFloat, a.type).bitwidth:
            return self.value(arith.ExtFOp(a, elem))
        return self.value(arith.TruncFOp(a, elem))

    # ---------------------------------------------------------------------------------------------------------
    # Shapes (tensors only); each returns its operand unchanged when the op would be the identity
    # ---------------------------------------------------------------------------------------------------------

    def broadcast(self, a: Value, shape: Sequence[int], dims: Sequence[int]) -> Value:
        if tuple(shape) == shape_of(a) and list(dims) == list(range(len(shape))):
            return a
        return self.value(nn.BroadcastInDimOp(a, list(shape), list(dims)))

    def reduce_sum(self, a: Value, axes: Sequence[int], keepdims: bool = False) -> Value:
        if not axes:
            return a
        return self.value(nn.ReduceSumOp(a, list(axes), keepdims))

    def reshape(self, a: Value, shape: Sequence[int]) -> Value:
        if tuple(shape) == shape_of(a):
            return a
        return self.value(nn.ReshapeOp(a, list(shape)))

    def transpose(self, a: Value, perm: Sequence[int]) -> Value:
        if list(perm) == list(range(len(perm))):
            return a
        return self.value(nn.TransposeOp(a, list(perm)))

    def swap_last(self, a: Value) -> Value:
        """Transpose the last two dimensions (the matrix transpose of a batched matrix)."""
        rank = len(shape_of(a))
        return self.transpose(a, [*range(rank - 2), rank - 1, rank - 2])

    def slice(
        self, a: Value, start: Sequence[int], limit: Sequence[int], stride: Sequence[int] | None = None
    ) -> Value:
        stride = list(stride) if stride is not None else [1] * len(start)
        if list(start) == [0] * len(start) and tuple(limit) == shape_of(a) and stride == [1] * len(start):
            return a
        return self.value(nn.SliceOp(a, list(start), list(limit), stride))

    def reverse(self, a: Value, dims: Sequence[int]) -> Value:
        """Reverse the listed dimensions (`nn.slice` with stride -1)."""
        shape = shape_of(a)
        dims = [d for d in dims if shape[d] > 1]
        if not dims:
            return a
        start = [n - 1 if d in dims else 0 for d, n in enumerate(shape)]
        limit = [-1 if d in dims else n for d, n in enumerate(shape)]
        stride = [-1 if d in dims else 1 for d in range(len(shape))]
        return self.value(nn.SliceOp(a, start, limit, stride))

    def pad(self, a: Value, low: Sequence[int], high: Sequence[int], fill: float = 0.0) -> Value:
        if not any(low) and not any(high):
            return a
        return self.value(nn.PadOp(a, self.scalar(fill, a), list(low), list(high)))

    def dilate(self, a: Value, factors: Sequence[int]) -> Value:
        """Spread elements `factors[d]` apart with zeros between: index i moves to i * factor.

        The result has size (n - 1) * factor + 1 per dimension. Built from reshape and pad (nn.pad has no
        interior padding): [n] -> [n, 1] -> pad to [n, factor] -> [n * factor] -> drop the trailing zeros.
        """
        shape = shape_of(a)
        if all(f == 1 for f in factors) or 0 in shape:
            return a
        split = [extent for n in shape for extent in (n, 1)]
        high = [extent for f in factors for extent in (0, f - 1)]
        spread = self.pad(self.reshape(a, split), [0] * len(split), high)
        flat = self.reshape(spread, [n * f for n, f in zip(shape, factors)])
        return self.slice(flat, [0] * len(shape), [(n - 1) * f + 1 for n, f in zip(shape, factors)])

    def concatenate(self, values: Sequence[Value], dim: int) -> Value:
        if len(values) == 1:
            return values[0]
        return self.value(nn.ConcatenateOp(list(values), dim))

    def unbroadcast(self, ct: Value, operand_shape: Sequence[int], dims: Sequence[int]) -> Value:
        """The adjoint of `broadcast_in_dim(x, shape(ct), dims)`: sum over the broadcast dimensions.

        Sums over result dimensions no operand dimension maps to and over operand dimensions of size 1
        that were expanded, then drops and permutes dimensions back to the operand's shape.
        """
        result_shape = shape_of(ct)
        new = [d for d in range(len(result_shape)) if d not in dims]
        expanded = [dims[i] for i, n in enumerate(operand_shape) if n == 1 and result_shape[dims[i]] != 1]
        # Keep the summed dimensions only when no dimension disappears, so one reduce_sum does it all.
        summed = self.reduce_sum(ct, sorted(new + expanded), keepdims=not new)
        kept = sorted(dims)
        squeezed = self.reshape(summed, [1 if d in expanded else result_shape[d] for d in kept])
        perm = [kept.index(d) for d in dims]
        return self.reshape(self.transpose(squeezed, perm), list(operand_shape))

    # ---------------------------------------------------------------------------------------------------------
    # Data movement, contractions
    # ---------------------------------------------------------------------------------------------------------

    def dynamic_slice(self, a: Value, starts: Sequence[Value], sizes: Sequence[int]) -> Value:
        return self.value(nn.DynamicSliceOp(a, list(starts), list(sizes)))

    def dynamic_update_slice(self, a: Value, update: Value, starts: Sequence[Value]) -> Value:
        return self.value(nn.DynamicUpdateSliceOp(a, update, list(starts)))

    def extract(self, a: Value, indices: Sequence[Value]) -> Value:
        """`tensor.extract a[indices]`: one element, as a scalar."""
        return self.value(tensor.ExtractOp(a, list(indices), element_type(a)))

    def insert(self, scalar: Value, a: Value, indices: Sequence[Value]) -> Value:
        """`tensor.insert scalar into a[indices]`: `a` with one element replaced."""
        return self.value(tensor.InsertOp(scalar, a, list(indices)))

    def from_elements(self, elements: Sequence[Value], type: TensorType) -> Value:
        """`tensor.from_elements`: a tensor of `type` from its elements in row-major order."""
        return self.value(tensor.FromElementsOp(*elements, result_type=type))

    def gather(self, a: Value, indices: Value, axis: int) -> Value:
        return self.value(nn.GatherOp(a, indices, axis))

    def scatter_add(self, a: Value, indices: Value, updates: Value, axis: int) -> Value:
        return self.value(nn.ScatterAddOp(a, indices, updates, axis))

    def matmul(self, a: Value, b: Value) -> Value:
        return self.value(nn.MatmulOp(a, b))

    def conv2d(
        self,
        x: Value,
        w: Value,
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
    ) -> Value:
        return self.value(nn.Conv2DOp(x, w, list(stride), list(padding), list(dilation)))

    # ---------------------------------------------------------------------------------------------------------
    # Calls and derived functions
    # ---------------------------------------------------------------------------------------------------------

    def call(self, callee: func.FuncOp, args: Sequence[Value]) -> Sequence[SSAValue]:
        """`func.call @callee(args)`; returns its results."""
        op = self.emit(func.CallOp(callee.sym_name.data, list(args), callee.function_type.outputs.data))
        return op.results

    def lookup(self, ref: SymbolRefAttr, at: Operation) -> func.FuncOp:
        """The `func.func` that `ref` names, seen from `at` (a custom_vjp's fwd and bwd, say)."""
        assert self.deriver is not None, "this builder cannot look up functions"
        return self.deriver.lookup(at, ref)

    def derive(
        self, callee: SymbolRefAttr, mode: str, wrt: Sequence[int], at: Operation, seeds: Sequence[int] | None = None
    ) -> func.FuncOp:
        """The derived function `@<callee>_<mode>` for arguments `wrt` and results `seeds` (None: all), built
        once per pattern, then cached. Only the `seeds` results' (co)tangents are propagated."""
        assert self.deriver is not None, "this builder cannot derive functions"
        return self.deriver.derive(callee, mode, tuple(wrt), at, None if seeds is None else tuple(seeds))

    def replace_primal(self, op: Operation, values: Sequence[SSAValue]) -> None:
        """`values` replace the results of the primal op `op` (its clone in the generated function), which
        is erased.

        Forward mode: for a rule whose derivative computation also yields the primal results (a call of
        `@g_jvp` returns `@g`'s results too), so the primal work is not done twice. Reverse mode, in an
        augment rule: for a forward op that also saves what the reverse sweep needs (a loop writing a tape).
        """
        assert self.on_replace_primal is not None, "replace_primal is only available to jvp and augment rules"
        self.on_replace_primal(op, values)


def or_zeros(b: RuleBuilder, value: SSAValue | None, like: SSAValue) -> SSAValue:
    """`value`, or zeros of `like`'s type where it is a symbolic zero."""
    return b.zeros_like(like) if value is None else value


def is_float_type(type: Attribute) -> bool:
    """f16/bf16/f32/f64 scalars and tensors of them: the types that carry derivatives."""
    return is_differentiable_type(type)
