"""Rules for elementwise ops: nn on tensors, arith/math on scalars (and tensors), select, convert.

One function serves an nn op and its arith/math twin: the builder emits nn ops for tensors and arith/math
ops for scalars. Reverse rules multiply a cotangent by a primal-derived factor only through
`b.strong_mul`/`b.strong_div`, so a cotangent that is exactly zero stays zero even where the factor is
inf or NaN (see builder.py). Kinks follow JAX: relu'(0) = 0, abs'(0) = 0, and a tie of maximum/minimum sends
half the cotangent to each side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, batched_type, materialize
from irgrad.autodiff.builder import RuleBuilder, element_type
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, non_differentiable, vjp_rule
from irgrad.dialects import nn

T = SSAValue | None

# Creation, comparison, integer bitwise and piecewise-constant ops: their derivative is zero wherever it exists.
non_differentiable(
    nn.ConstantOp,
    nn.FullOp,
    nn.IotaOp,
    nn.SignOp,
    nn.CompareOp,
    nn.AndOp,
    nn.OrOp,
    nn.XorOp,
    nn.ShiftLeftOp,
    nn.ShiftRightLogicalOp,
    arith.ConstantOp,
    arith.CmpfOp,
    math.FloorOp,
    math.CeilOp,
    math.RoundOp,
    math.RoundEvenOp,
    math.TruncOp,
)


# ---------------------------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.NegOp, arith.NegfOp)
def _neg_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.neg(ct)]


@jvp_rule(nn.NegOp, arith.NegfOp)
def _neg_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    return b.neg(t)


def _abs_derivative(b: RuleBuilder, x: SSAValue, v: SSAValue) -> T:
    """`v * sign(x)` as selects: +v where x > 0, -v where x < 0, 0 at x == 0 (abs'(0) = 0),
    and NaN where x is NaN (sign(NaN) is NaN, as JAX: arcsin'(2) is NaN, not 0), except
    for a zero `v` (a strong zero: the unselected side of a `where` stays 0)."""
    zero = b.zeros_like(x)
    nan = b.select(b.compare("ne", x, x), b.strong_mul(v, x), None)
    negative = b.select(b.compare("lt", x, zero), b.neg(v), nan)
    return b.select(b.compare("gt", x, zero), v, negative)


@vjp_rule(nn.AbsOp, math.AbsFOp)
def _abs_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [_abs_derivative(b, op.operands[0], ct)]


@jvp_rule(nn.AbsOp, math.AbsFOp)
def _abs_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return _abs_derivative(b, op.operands[0], t)


@vjp_rule(nn.ExpOp, math.ExpOp)
def _exp_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.strong_mul(ct, op.results[0])]


@jvp_rule(nn.ExpOp, math.ExpOp)
def _exp_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.mul(t, op.results[0])


@vjp_rule(nn.LogOp, math.LogOp)
def _log_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.strong_div(ct, op.operands[0])]


@jvp_rule(nn.LogOp, math.LogOp)
def _log_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.div(t, op.operands[0])


def _tanh_factor(b: RuleBuilder, y: SSAValue) -> SSAValue:
    """tanh'(x) = 1 - y^2."""
    return b.sub(b.full_like(y, 1.0), b.mul(y, y))  # type: ignore[return-value]


@vjp_rule(nn.TanhOp, math.TanhOp)
def _tanh_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.strong_mul(ct, _tanh_factor(b, op.results[0]))]


@jvp_rule(nn.TanhOp, math.TanhOp)
def _tanh_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.mul(t, _tanh_factor(b, op.results[0]))


def _sigmoid_factor(b: RuleBuilder, y: SSAValue) -> SSAValue:
    """sigmoid'(x) = y (1 - y)."""
    return b.mul(y, b.sub(b.full_like(y, 1.0), y))  # type: ignore[return-value]


@vjp_rule(nn.SigmoidOp)
def _sigmoid_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.strong_mul(ct, _sigmoid_factor(b, op.results[0]))]


@jvp_rule(nn.SigmoidOp)
def _sigmoid_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.mul(t, _sigmoid_factor(b, op.results[0]))


def _relu_derivative(b: RuleBuilder, x: SSAValue, v: SSAValue) -> T:
    """`v` where x > 0, else 0: relu'(0) = 0, and NaN inputs get 0."""
    return b.select(b.compare("gt", x, b.zeros_like(x)), v, None)


@vjp_rule(nn.ReluOp)
def _relu_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [_relu_derivative(b, op.operands[0], ct)]


@jvp_rule(nn.ReluOp)
def _relu_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return _relu_derivative(b, op.operands[0], t)


@vjp_rule(nn.SqrtOp, math.SqrtOp)
def _sqrt_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    y = op.results[0]
    return [b.strong_div(ct, b.add(y, y))]  # type: ignore[arg-type]  sqrt'(0) = 1 / 0 = +inf


@jvp_rule(nn.SqrtOp, math.SqrtOp)
def _sqrt_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    y = op.results[0]
    return b.div(t, b.add(y, y))  # type: ignore[arg-type]


def _rsqrt_factor(b: RuleBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    """rsqrt'(x) = -x^(-3/2) / 2 = -0.5 y / x."""
    return b.scale(b.div(y, x), -0.5)  # type: ignore[return-value]


@vjp_rule(nn.RsqrtOp, math.RsqrtOp)
def _rsqrt_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.strong_mul(ct, _rsqrt_factor(b, op.operands[0], op.results[0]))]


@jvp_rule(nn.RsqrtOp, math.RsqrtOp)
def _rsqrt_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.mul(t, _rsqrt_factor(b, op.operands[0], op.results[0]))


@vjp_rule(nn.SinOp, math.SinOp)
def _sin_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.strong_mul(ct, b.cos(op.operands[0]))]


@jvp_rule(nn.SinOp, math.SinOp)
def _sin_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.mul(t, b.cos(op.operands[0]))


@vjp_rule(nn.CosOp, math.CosOp)
def _cos_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.neg(b.strong_mul(ct, b.sin(op.operands[0])))]


@jvp_rule(nn.CosOp, math.CosOp)
def _cos_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.neg(b.mul(t, b.sin(op.operands[0])))


_TWO_OVER_SQRT_PI = 1.1283791670955126


def _erf_factor(b: RuleBuilder, x: SSAValue) -> SSAValue:
    """erf'(x) = 2/sqrt(pi) exp(-x^2), in x's own ops (so it differentiates again)."""
    return b.scale(b.exp(b.neg(b.mul(x, x))), _TWO_OVER_SQRT_PI)  # type: ignore[return-value]


@vjp_rule(nn.ErfOp, math.ErfOp)
def _erf_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.strong_mul(ct, _erf_factor(b, op.operands[0]))]


@jvp_rule(nn.ErfOp, math.ErfOp)
def _erf_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.mul(t, _erf_factor(b, op.operands[0]))


# ---------------------------------------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.AddOp, arith.AddfOp)
def _add_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [ct, ct]


@jvp_rule(nn.AddOp, arith.AddfOp)
def _add_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    return b.add(tx, ty)


@vjp_rule(nn.SubOp, arith.SubfOp)
def _sub_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [ct, b.neg(ct) if b.needs(1) else None]


@jvp_rule(nn.SubOp, arith.SubfOp)
def _sub_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    return b.sub(tx, ty)


@vjp_rule(nn.MulOp, arith.MulfOp)
def _mul_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    x, y = op.operands
    if x is y:  # x * x: both cotangents are ct * x (the driver sums them)
        ct_x = b.strong_mul(ct, x)
        return [ct_x, ct_x]
    return [b.strong_mul(ct, y) if b.needs(0) else None, b.strong_mul(ct, x) if b.needs(1) else None]


@jvp_rule(nn.MulOp, arith.MulfOp)
def _mul_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    x, y = op.operands
    return b.add(b.mul(tx, y), b.mul(x, ty))


@vjp_rule(nn.DivOp, arith.DivfOp)
def _div_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    _, y = op.operands
    z = op.results[0]
    ct_x = b.strong_div(ct, y) if b.needs(0) else None
    ct_y = b.neg(b.strong_mul(ct, b.div(z, y))) if b.needs(1) else None  # d(x/y)/dy = -z / y
    return [ct_x, ct_y]


@jvp_rule(nn.DivOp, arith.DivfOp)
def _div_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    _, y = op.operands
    return b.div(b.sub(tx, b.mul(ty, op.results[0])), y)


def _pow_partials(b: RuleBuilder, op: Operation, want_x: bool, want_y: bool) -> tuple[T, T]:
    """d(x^y)/dx = y x^(y-1), defined as 0 where y == 0 (so 0^0 has no NaN derivative);
    d(x^y)/dy = log(x) x^y, defined as 0 where x == 0 (so 0^y with y > 0 has gradient 0, not NaN)."""
    x, y = op.operands
    z = op.results[0]
    dx = dy = None
    if want_x:
        zero = b.zeros_like(y)
        power = b.mul(y, b.pow(x, b.sub(y, b.full_like(y, 1.0))))  # type: ignore[arg-type]
        dx = b.select(b.compare("eq", y, zero), None, power)
    if want_y:
        safe_x = b.select(b.compare("eq", x, b.zeros_like(x)), b.full_like(x, 1.0), x)
        dy = b.mul(b.log(safe_x), z)  # type: ignore[arg-type]
    return dx, dy


@vjp_rule(nn.PowOp, math.PowFOp)
def _pow_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    dx, dy = _pow_partials(b, op, b.needs(0), b.needs(1))
    return [b.strong_mul(ct, dx) if dx is not None else None, b.strong_mul(ct, dy) if dy is not None else None]


@jvp_rule(nn.PowOp, math.PowFOp)
def _pow_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    dx, dy = _pow_partials(b, op, tx is not None, ty is not None)
    return b.add(b.mul(tx, dx), b.mul(ty, dy))


def _extremum_vjp(b: RuleBuilder, op: Operation, ct: SSAValue, wins: str) -> Cotangents:
    """maximum (wins="gt") / minimum (wins="lt"): the winner takes the cotangent, a tie splits it 0.5/0.5."""
    x, y = op.operands
    half = b.select(b.compare("eq", x, y), b.scale(ct, 0.5), None)
    ct_x = b.select(b.compare(wins, x, y), ct, half) if b.needs(0) else None
    ct_y = b.select(b.compare(wins, y, x), ct, half) if b.needs(1) else None
    return [ct_x, ct_y]


def _extremum_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T, wins: str) -> Tangent:
    x, y = op.operands
    average = b.scale(b.add(tx, ty), 0.5)
    tie_or_y = b.select(b.compare("eq", x, y), average, ty)
    return b.select(b.compare(wins, x, y), tx, tie_or_y)


@vjp_rule(nn.MaximumOp, arith.MaximumfOp, arith.MaxnumfOp)
def _maximum_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return _extremum_vjp(b, op, ct, "gt")


@jvp_rule(nn.MaximumOp, arith.MaximumfOp, arith.MaxnumfOp)
def _maximum_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    return _extremum_jvp(b, op, tx, ty, "gt")


@vjp_rule(nn.MinimumOp, arith.MinimumfOp, arith.MinnumfOp)
def _minimum_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return _extremum_vjp(b, op, ct, "lt")


@jvp_rule(nn.MinimumOp, arith.MinimumfOp, arith.MinnumfOp)
def _minimum_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    return _extremum_jvp(b, op, tx, ty, "lt")


# ---------------------------------------------------------------------------------------------------------------
# Select and convert
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.SelectOp, arith.SelectOp)
def _select_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """The cotangent goes to the taken branch, zeros to the other (a select, never a mask product)."""
    pred = op.operands[0]
    return [
        None,
        b.select(pred, ct, None) if b.needs(1) else None,
        b.select(pred, None, ct) if b.needs(2) else None,
    ]


@jvp_rule(nn.SelectOp, arith.SelectOp)
def _select_jvp(b: RuleBuilder, op: Operation, tp: T, t_true: T, t_false: T) -> Tangent:
    return b.select(op.operands[0], t_true, t_false)


@vjp_rule(nn.ConvertOp, arith.ExtFOp, arith.TruncFOp)
def _convert_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    # Only float -> float reaches here: an integer operand is never active, an integer result never varied.
    return [b.convert(ct, element_type(op.operands[0]))]


@jvp_rule(nn.ConvertOp, arith.ExtFOp, arith.TruncFOp)
def _convert_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.convert(t, element_type(op.results[0]))


# ---------------------------------------------------------------------------------------------------------------
# Batching (vmap)
# ---------------------------------------------------------------------------------------------------------------


@batch_rule(nn.ElementwiseUnaryOp, nn.ElementwiseBinaryOp, nn.CompareOp, nn.SelectOp, nn.ConvertOp)
def _elementwise_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """An elementwise op maps examples to examples: broadcast the unbatched operands to the batch
    and apply the op to [B, ...] operands."""
    operands = materialize(b, args, is_batched)
    result_type = batched_type(op.results[0].type, b.size)
    new = type(op).create(operands=operands, result_types=[result_type], properties=dict(op.properties))
    return b.value(new), True


@batch_rule(arith.IndexCastOp)
def _index_cast_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """A per-example integer turned into an index (`lax.to_index`: `x[i]` with a mapped `i`), or back: a
    batched index is carried as tensor<B x i64> (batching.py), so this is an nn.convert of the batched
    scalar, or nothing at all for i64."""
    target = batched_type(op.results[0].type, b.size).get_element_type()
    return b.convert(args[0], target), True


# Integer (index) arithmetic on batched scalars: a loop counter or a trip count that differs per example (the
# induction variable of a per-example scf.for, the iteration count of a per-example scf.while and the reverse
# loop of its derivative). A batched index is a tensor<B x i64> (batching.py), so each op becomes its nn twin on
# the [B] tensors; nn.div truncates toward zero, as arith.divsi does.
_ARITH_INT_TWINS: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: nn.AddOp,
    arith.SubiOp: nn.SubOp,
    arith.MuliOp: nn.MulOp,
    arith.DivSIOp: nn.DivOp,
    arith.MaxSIOp: nn.MaximumOp,
    arith.MinSIOp: nn.MinimumOp,
    arith.AndIOp: nn.AndOp,
    arith.OrIOp: nn.OrOp,
    arith.XOrIOp: nn.XorOp,
}
_CMPI_DIRECTIONS = {"eq": "eq", "ne": "ne", "slt": "lt", "sle": "le", "sgt": "gt", "sge": "ge"}
_UNSIGNED_DIRECTIONS = {"ult": "lt", "ule": "le", "ugt": "gt", "uge": "ge"}


@batch_rule(*_ARITH_INT_TWINS)
def _arith_int_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """`arith.addi` (subi, muli, divsi, maxsi, minsi, andi, ori, xori) of batched scalars: the nn op on [B]."""
    lhs, rhs = materialize(b, args, is_batched)
    return b.value(_ARITH_INT_TWINS[type(op)](lhs, rhs)), True


def _floor_ceil_adjust(b: BatchBuilder, lhs: SSAValue, rhs: SSAValue, direction: str) -> tuple[SSAValue, SSAValue]:
    """The truncated quotient q = lhs / rhs and where the remainder r = lhs - q * rhs has the sign that moves
    the rounded quotient (`gt`: r * rhs > 0, ceil adds one; `lt`: r * rhs < 0, floor subtracts one)."""
    quotient = b.value(nn.DivOp(lhs, rhs))
    remainder = b.value(nn.SubOp(lhs, b.value(nn.MulOp(quotient, rhs))))
    sign = b.value(nn.MulOp(remainder, rhs))
    return quotient, b.compare(direction, sign, b.full(0, sign.type))


@batch_rule(arith.CeilDivSIOp, arith.FloorDivSIOp, arith.RemSIOp)
def _arith_rounded_div_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> Batched:
    """ceildivsi / floordivsi / remsi of batched scalars, from nn.div (which truncates) and a correction."""
    lhs, rhs = materialize(b, args, is_batched)
    if isinstance(op, arith.RemSIOp):
        quotient = b.value(nn.DivOp(lhs, rhs))
        return b.value(nn.SubOp(lhs, b.value(nn.MulOp(quotient, rhs)))), True
    ceil = isinstance(op, arith.CeilDivSIOp)
    quotient, adjust = _floor_ceil_adjust(b, lhs, rhs, "gt" if ceil else "lt")
    step = b.full(1 if ceil else -1, quotient.type)
    return b.value(nn.SelectOp(adjust, b.value(nn.AddOp(quotient, step)), quotient)), True


@batch_rule(arith.CmpiOp)
def _cmpi_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """A comparison of batched integers: nn.compare on [B], a batched i1 scalar. nn.compare is signed, so an
    unsigned one compares both sides with their sign bit flipped (x xor MIN): a <u b iff a^MIN <s b^MIN."""
    predicate = arith.CMPI_COMPARISON_OPERATIONS[cast(arith.CmpiOp, op).predicate.value.data]
    lhs, rhs = materialize(b, args, is_batched)
    if predicate in _UNSIGNED_DIRECTIONS:
        width = cast(IntegerType, element_type(lhs)).width.data
        sign_bit = -(1 << (width - 1)) if width > 1 else 1
        lhs, rhs = (b.value(nn.XorOp(v, b.full(sign_bit, v.type))) for v in (lhs, rhs))
        return b.compare(_UNSIGNED_DIRECTIONS[predicate], lhs, rhs), True
    return b.compare(_CMPI_DIRECTIONS[predicate], lhs, rhs), True


@batch_rule(arith.SelectOp)
def _arith_select_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> Batched:
    """arith.select of batched scalars (or on a batched condition): nn.select of [B] tensors."""
    pred, on_true, on_false = materialize(b, args, is_batched)
    return b.value(nn.SelectOp(pred, on_true, on_false)), True
