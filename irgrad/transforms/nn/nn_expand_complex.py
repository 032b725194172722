"""`nn-expand-complex`: complex tensors as real tensors of (re, im) pairs, before autodiff.

Every value of type `tensor<S x complex<fT>>` becomes `tensor<S x 2 x fT>`: the real part at
index 0 of a new trailing axis, the imaginary part at index 1. That is numpy's (and MLIR's
`complex` lowering's) memory layout of complex64/complex128, so a runtime passes a user's
complex array as a view, with no copy. add, sub, neg, reduce_sum and the data-movement ops run
on the pairs as they are; mul, div, exp, log, sqrt, rsqrt, tanh, pow, sign, sin, cos, compare,
matmul, the parts' ops, convert, select and constants become real ops on the parts (the formulas:
docs/dialects/nn.md, "Complex numbers"). log, sqrt and pow use the stable forms numpy's and
XLA's do (a hypot-style modulus, log1p near |z| = 1, Kahan's square root) and an atan2 of nn ops
(Cephes' rational atan), so the principal branches and the signs of zeros follow numpy.

Why before autodiff: the differentiated program is then a real one, and its derivatives are
those of the pairs, which is JAX's convention once cotangents cross the boundary conjugated
(a JAX cotangent c of a complex value is the pair (Re c, -Im c)). So the pass conjugates the
complex cotangents an `autodiff.vjp` takes and every complex gradient or cotangent that
`autodiff.grad`, `value_and_grad` and `vjp` give; `autodiff.jvp`'s tangents are plain pairs.

Input: nn IR with autodiff requests. Output: the same program with no complex type anywhere
(function signatures included). An op on complex values without a rule is an error naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ComplexType, DenseArrayBase, FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgrad.diagnostics import PassError
from irgrad.dialects import autodiff as ad
from irgrad.dialects import nn
from irgrad.ir_numpy import complex_part_dtype, from_attribute, to_attribute
from irgrad.transforms.nn.complex_pairs import PairBuilder as _Builder
from irgrad.transforms.nn.complex_pairs import atan2 as _atan2, log_modulus as _log_modulus
from irgrad.transforms.nn.complex_pairs import modulus as _modulus, signbit as _signbit


def _is_complex_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType) and isinstance(t.get_element_type(), ComplexType)


def pair_type(t: Attribute) -> Attribute:
    """tensor<S x 2 x fT> for tensor<S x complex<fT>>; function types converted member-wise;
    every other type unchanged."""
    if _is_complex_tensor(t):
        tt = cast(TensorType, t)
        part = cast(ComplexType, tt.get_element_type()).get_element_type()
        return TensorType(part, [*tt.get_shape(), 2])
    if isinstance(t, FunctionType):
        return FunctionType.from_lists([pair_type(a) for a in t.inputs.data], [pair_type(r) for r in t.outputs.data])
    return t


def _mentions_complex(op: Operation) -> bool:
    """A complex tensor or complex scalar among `op`'s operands or results."""
    return any(
        _is_complex_tensor(v.type) or isinstance(v.type, ComplexType) for v in (*op.operands, *op.results)
    )


def _takes_pairs(op: Operation) -> bool:
    """An op whose operand was complex before an earlier rewrite made it pairs: the parts' ops,
    a convert from complex and a compare of complex values have real results, so their types
    alone do not tell."""
    if isinstance(op, nn.RealOp | nn.ImagOp):
        return True
    # A convert's (or compare's) shapes are equal, unless its operand became pairs (S x 2 for S).
    return isinstance(op, nn.ConvertOp | nn.CompareOp) and (
        cast(TensorType, op.operands[0].type).get_shape() != cast(TensorType, op.results[0].type).get_shape()
    )


def _mul(b: _Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    (ar, ai), (br, bi) = b.parts(x), b.parts(y)
    re = b.binary(nn.SubOp, b.binary(nn.MulOp, ar, br), b.binary(nn.MulOp, ai, bi))
    im = b.binary(nn.AddOp, b.binary(nn.MulOp, ar, bi), b.binary(nn.MulOp, ai, br))
    return b.join(re, im)


def _div(b: _Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    (ar, ai), (br, bi) = b.parts(x), b.parts(y)
    d = b.binary(nn.AddOp, b.binary(nn.MulOp, br, br), b.binary(nn.MulOp, bi, bi))
    re = b.binary(nn.AddOp, b.binary(nn.MulOp, ar, br), b.binary(nn.MulOp, ai, bi))
    im = b.binary(nn.SubOp, b.binary(nn.MulOp, ai, br), b.binary(nn.MulOp, ar, bi))
    return b.join(b.binary(nn.DivOp, re, d), b.binary(nn.DivOp, im, d))


def _exp(b: _Builder, x: SSAValue) -> SSAValue:
    ar, ai = b.parts(x)
    e = b.unary(nn.ExpOp, ar)
    return b.join(b.binary(nn.MulOp, e, b.unary(nn.CosOp, ai)), b.binary(nn.MulOp, e, b.unary(nn.SinOp, ai)))


def _sin(b: _Builder, x: SSAValue) -> SSAValue:
    ar, ai = b.parts(x)
    cosh, sinh = b.cosh_sinh(ai)
    s, c = b.unary(nn.SinOp, ar), b.unary(nn.CosOp, ar)
    return b.join(b.binary(nn.MulOp, s, cosh), b.binary(nn.MulOp, c, sinh))


def _cos(b: _Builder, x: SSAValue) -> SSAValue:
    ar, ai = b.parts(x)
    cosh, sinh = b.cosh_sinh(ai)
    s, c = b.unary(nn.SinOp, ar), b.unary(nn.CosOp, ar)
    return b.join(b.binary(nn.MulOp, c, cosh), b.unary(nn.NegOp, b.binary(nn.MulOp, s, sinh)))


# --- the rules --------------------------------------------------------------------------------


def _log(b: _Builder, x: SSAValue) -> SSAValue:
    """log z = log|z| + i atan2(im, re): the principal branch, cut on the negative real axis."""
    ar, ai = b.parts(x)
    return b.join(_log_modulus(b, ar, ai), _atan2(b, ai, ar))


def _sqrt(b: _Builder, x: SSAValue) -> SSAValue:
    """Kahan's principal square root: t = sqrt((|re| + |z|) / 2); (t, im / 2t) for re >= 0,
    (|im| / 2t, copysign(t, im)) otherwise; sqrt(+-0 + i im) keeps im's zero sign, an infinite
    im gives (inf, im)."""
    ar, ai = b.parts(x)
    m = _modulus(b, ar, ai)
    t = b.unary(nn.SqrtOp, b.add(b.scaled(b.unary(nn.AbsOp, ar), 0.5), b.scaled(m, 0.5)))
    zero = b.cmp("eq", t, b.const(t, 0.0))
    two_t = b.scaled(b.select(zero, b.const(t, 1.0), t), 2.0)
    nonneg = b.cmp("ge", ar, b.const(ar, 0.0))
    re = b.select(nonneg, t, b.div(b.unary(nn.AbsOp, ai), two_t))
    im = b.select(nonneg, b.div(ai, two_t), b.select(_signbit(b, ai), b.unary(nn.NegOp, t), t))
    inf = b.const(t, float("inf"))
    im_inf = b.cmp("eq", b.unary(nn.AbsOp, ai), inf)
    return b.join(b.select(im_inf, inf, re), b.select(im_inf, ai, im))


def _rsqrt(b: _Builder, x: SSAValue) -> SSAValue:
    root = _sqrt(b, x)
    re = b.part(root, 0)
    return _div(b, b.join(b.const(re, 1.0), b.const(re, 0.0)), root)


def _tanh(b: _Builder, x: SSAValue) -> SSAValue:
    """tanh(x + iy) = (t, sin y cos y sech^2 x) / (cos^2 y + t^2 sin^2 y), t = tanh x: no
    cancellation (the denominator is a sum of squares; sech^2 x = 1 / cosh^2 x, with cosh a
    sum of exponentials, not 1 - t^2) and no overflow (sech^2 x reaches 0 for large |x|); an
    infinite x gives +-1 + 0i."""
    ar, ai = b.parts(x)
    t = b.unary(nn.TanhOp, ar)
    cosh, _ = b.cosh_sinh(ar)
    sech2 = b.div(b.const(cosh, 1.0), b.mul(cosh, cosh))
    s, c = b.unary(nn.SinOp, ai), b.unary(nn.CosOp, ai)
    d = b.add(b.mul(c, c), b.mul(b.mul(t, t), b.mul(s, s)))
    re, im = b.div(t, d), b.div(b.mul(b.mul(s, c), sech2), d)
    # An infinite real part gives +-1 + 0i whatever y is (C99's ctanh; sin(inf) would say NaN).
    x_inf = b.cmp("eq", b.unary(nn.AbsOp, ar), b.const(ar, float("inf")))
    return b.join(b.select(x_inf, t, re), b.select(x_inf, b.const(ar, 0.0), im))


def _pow(b: _Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """z ** w = exp(w log z): |.| = exp(c log|z| - d arg z), arg = c arg z + d log|z| for
    w = c + id. At z = 0 numpy's values: 1 for w = 0, 0 for Re w > 0, NaN otherwise (the general
    formula reads z = 1 there, so its derivatives stay finite)."""
    (ar, ai), (c, d) = b.parts(x), b.parts(y)
    zero_c, one = b.const(ar, 0.0), b.const(ar, 1.0)
    z0 = b.binary(nn.AndOp, b.cmp("eq", ar, zero_c), b.cmp("eq", ai, zero_c))
    ar_s = b.select(z0, one, ar)
    log_m, theta = _log_modulus(b, ar_s, ai), _atan2(b, ai, ar_s)
    mag = b.unary(nn.ExpOp, b.sub(b.mul(c, log_m), b.mul(d, theta)))
    phase = b.add(b.mul(c, theta), b.mul(d, log_m))
    re, im = b.mul(mag, b.unary(nn.CosOp, phase)), b.mul(mag, b.unary(nn.SinOp, phase))
    w0 = b.binary(nn.AndOp, b.cmp("eq", c, zero_c), b.cmp("eq", d, zero_c))
    at_zero = b.select(w0, one, b.select(b.cmp("gt", c, zero_c), zero_c, b.const(ar, float("nan"))))
    return b.join(b.select(z0, at_zero, re), b.select(z0, zero_c, im))


def _sign(b: _Builder, x: SSAValue) -> SSAValue:
    """z / |z| part by part, 0 at 0 (jnp.sign; NaN where |z| is inf, as jnp's, where numpy 2 gives
    the direction), with a zero derivative as lax.sign's (a stop_gradient)."""
    ar, ai = b.parts(x)
    m = _modulus(b, ar, ai)
    ms = b.select(b.cmp("eq", m, b.const(m, 0.0)), b.const(m, 1.0), m)
    return b.emit(ad.StopGradientOp(b.join(b.div(ar, ms), b.div(ai, ms))))


def _compare(b: _Builder, op: nn.CompareOp, x: SSAValue, y: SSAValue) -> SSAValue:
    """eq: both parts equal; ne: either differs; lt, le, gt, ge: lexicographic, the real parts
    first (numpy's order, and jnp's)."""
    (ar, ai), (br, bi) = b.parts(x), b.parts(y)
    direction = op.direction_name
    if direction in ("eq", "ne"):
        joined = nn.AndOp if direction == "eq" else nn.OrOp
        return b.squeeze(b.binary(joined, b.cmp(direction, ar, br), b.cmp(direction, ai, bi)))
    strict = direction[0] + "t"  # the real parts decide unless they are equal
    return b.squeeze(b.select(b.cmp("eq", ar, br), b.cmp(direction, ai, bi), b.cmp(strict, ar, br)))


def _real_embedding(pairs: np.ndarray) -> np.ndarray:
    """The real (..., 2K, 2N) matrix E of a complex (..., K, N) matrix B given as (re, im) pairs,
    with E[2k + a, 2n + c] = [[re, im], [-im, re]][a][c] of B[k, n]: x @ B on pairs (..., M, K, 2)
    is reshape(x, (..., M, 2K)) @ E, already in pairs order."""
    re, im = pairs[..., 0], pairs[..., 1]
    blocks = np.stack([np.stack([re, im], axis=-1), np.stack([-im, re], axis=-1)], axis=-2)  # ..., K, N, 2, 2
    k, n = re.shape[-2:]
    lead = re.shape[:-2]
    return np.ascontiguousarray(np.swapaxes(blocks, -3, -2).reshape(*lead, 2 * k, 2 * n))


def _matmul(b: _Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    if isinstance(y.owner, nn.ConstantOp):
        return _matmul_by_constant(b, x, from_attribute(y.owner.value))
    (ar, ai), (br, bi) = (tuple(b.squeeze(p) for p in b.parts(v)) for v in (x, y))
    mm = lambda p, q: b.emit(nn.MatmulOp(p, q))  # noqa: E731
    re = b.binary(nn.SubOp, mm(ar, br), mm(ai, bi))
    im = b.binary(nn.AddOp, mm(ar, bi), mm(ai, br))
    return b.join(b.unsqueeze(re), b.unsqueeze(im))


def _matmul_by_constant(b: _Builder, x: SSAValue, pairs: np.ndarray) -> SSAValue:
    """x @ B for a constant B: one real matmul by B's embedding (the same flops as the four
    products of the parts, one GEMM, no slices of x or concatenation of the result)."""
    shape = b.shape(x)  # ..., M, K, 2
    rows = b.emit(nn.ReshapeOp(x, [*shape[:-2], 2 * shape[-2]]))
    embedding = b.emit(nn.ConstantOp(to_attribute(_real_embedding(pairs))))
    product = b.emit(nn.MatmulOp(rows, embedding))
    return b.emit(nn.ReshapeOp(product, [*shape[:-3], shape[-3], pairs.shape[-2], 2]))


def _convert(b: _Builder, op: nn.ConvertOp, x: SSAValue) -> SSAValue:
    target = op.result.type
    from_complex = _takes_pairs(op) or _is_complex_tensor(op.operand.type)
    target_element = cast(TensorType, target).get_element_type()
    if _is_complex_tensor(target):
        part = cast(ComplexType, target_element).get_element_type()
        if from_complex:  # complex64 <-> complex128: both parts
            return b.emit(nn.ConvertOp(x, part))
        re = x if cast(TensorType, x.type).get_element_type() == part else b.emit(nn.ConvertOp(x, part))
        re = b.unsqueeze(re)
        return b.join(re, b.full(re, 0.0))
    re, im = b.parts(x)
    if nn.is_bool(target_element):  # either part nonzero
        ne = lambda p: b.emit(nn.CompareOp("ne", p, b.full(p, 0.0)))  # noqa: E731
        return b.squeeze(b.binary(nn.OrOp, ne(re), ne(im)))
    re = b.squeeze(re)
    return re if re.type == target else b.emit(nn.ConvertOp(re, target_element))


def _constant(op: nn.ConstantOp) -> nn.ConstantOp:
    values = from_attribute(op.value)
    pairs = np.stack([values.real, values.imag], axis=-1).astype(complex_part_dtype(values.dtype))
    return nn.ConstantOp(to_attribute(np.ascontiguousarray(pairs)))


def _ints(attr: Attribute) -> list[int]:
    return list(cast(tuple[int, ...], cast(DenseArrayBase, attr).get_values()))


def _rebuilt(op: Operation, operands: Sequence[SSAValue]) -> Operation | None:
    """The data-movement or pair-wise op `op` on pairs (None if it is not one)."""
    if isinstance(op, nn.AddOp | nn.SubOp):
        return type(op)(operands[0], operands[1])
    if isinstance(op, nn.NegOp):
        return nn.NegOp(operands[0])
    if isinstance(op, nn.ReduceSumOp):
        return nn.ReduceSumOp(operands[0], _ints(op.axes), op.keepdims is not None)
    if isinstance(op, nn.ReshapeOp):
        return nn.ReshapeOp(operands[0], [*cast(TensorType, op.result.type).get_shape(), 2])
    if isinstance(op, nn.TransposeOp):
        perm = _ints(op.perm)
        return nn.TransposeOp(operands[0], [*perm, len(perm)])
    if isinstance(op, nn.BroadcastInDimOp):
        shape = list(cast(TensorType, op.result.type).get_shape())
        dims = _ints(op.dims)
        return nn.BroadcastInDimOp(operands[0], [*shape, 2], [*dims, len(shape)])
    if isinstance(op, nn.SliceOp):
        start, limit, stride = (_ints(a) for a in (op.start, op.limit, op.stride))
        return nn.SliceOp(operands[0], [*start, 0], [*limit, 2], [*stride, 1])
    if isinstance(op, nn.ConcatenateOp):
        return nn.ConcatenateOp(list(operands), op.dimension.value.data)
    return None


_ARITHMETIC = {nn.MulOp: _mul, nn.DivOp: _div, nn.MatmulOp: _matmul, nn.PowOp: _pow}
_UNARY = {
    nn.ExpOp: _exp, nn.SinOp: _sin, nn.CosOp: _cos, nn.LogOp: _log, nn.SqrtOp: _sqrt, nn.RsqrtOp: _rsqrt,
    nn.TanhOp: _tanh, nn.SignOp: _sign,
}  # fmt: skip


def _expand_op(op: Operation) -> SSAValue | None:
    """The pairs replacing `op`'s single complex (or complex-derived) result, emitted before
    `op`; None where `op` only needs its types converted."""
    b = _Builder(InsertPoint.before(op))
    x = list(op.operands)
    if isinstance(op, nn.ConstantOp):
        return b.emit(_constant(op))
    if type(op) in _ARITHMETIC:
        return _ARITHMETIC[type(op)](b, x[0], x[1])
    if type(op) in _UNARY:
        return _UNARY[type(op)](b, x[0])
    if isinstance(op, nn.RealOp | nn.ImagOp):
        return b.squeeze(b.part(x[0], 0 if isinstance(op, nn.RealOp) else 1))
    if isinstance(op, nn.ComplexOp):
        return b.join(b.unsqueeze(x[0]), b.unsqueeze(x[1]))
    if isinstance(op, nn.ConjOp):
        return b.conj(x[0])
    if isinstance(op, nn.CompareOp):
        return _compare(b, op, x[0], x[1])
    if isinstance(op, nn.ConvertOp):
        return _convert(b, op, x[0])
    if isinstance(op, nn.SelectOp):
        shape = b.shape(x[1])
        pred = b.emit(nn.BroadcastInDimOp(x[0], shape, list(range(len(shape) - 1))))
        return b.emit(nn.SelectOp(pred, x[1], x[2]))
    rebuilt = _rebuilt(op, x)
    if rebuilt is None:
        raise _unsupported(op)
    return b.emit(rebuilt)


def _unsupported(op: Operation) -> PassError:
    if isinstance(op, nn.FftOp):  # expanded into complex matmuls first, by nn-expand-fft
        return PassError("on complex values has no rule in nn-expand-complex: run nn-expand-fft before it", op)
    return PassError("on complex values has no rule in nn-expand-complex (it is not supported yet)", op)


_REFUSED = (ad.CustomVJPOp, ad.CustomJVPOp)


def _retype_block_args(block: Block) -> None:
    for arg in list(block.args):
        if _is_complex_tensor(arg.type):
            Rewriter.replace_value_with_new_type(arg, pair_type(arg.type))


def _retype_results(op: Operation) -> None:
    for result in list(op.results):
        if _is_complex_tensor(result.type):
            Rewriter.replace_value_with_new_type(result, pair_type(result.type))


def _conjugate_after(op: Operation, values: Sequence[SSAValue]) -> None:
    """Replace every use of each pair value in `values` with its conjugate, emitted after `op`."""
    after = op.next_op
    assert after is not None  # a request is never its block's terminator
    b = _Builder(InsertPoint.before(after))
    for v in values:
        uses = list(v.uses)
        if not uses:
            continue
        conj = b.conj(v)
        for use in uses:
            use.operation.operands[use.index] = conj


def _conjugate_before(op: Operation, indices: Sequence[int]) -> None:
    b = _Builder(InsertPoint.before(op))
    for i in indices:
        op.operands[i] = b.conj(op.operands[i])


def _complex_positions(types: Sequence[Attribute]) -> list[int]:
    return [k for k, t in enumerate(types) if _is_complex_tensor(t)]


def _expand_request(op: Operation) -> None:
    """Retype a derivative request and conjugate its complex cotangents (module doc)."""
    if isinstance(op, ad.VJPOp):
        # The operands are pairs already; the results, still complex, tell which were: one
        # cotangent per callee result, of its type.
        base = len(op.args)
        n_out = len(op.res) - len(op.wrt_indices)
        cot_in = [base + k for k in _complex_positions(op.res.types[:n_out])]
        cot_out = [n_out + k for k in _complex_positions(op.res.types[n_out:])]
        _conjugate_before(op, cot_in)
        _retype_results(op)
        _conjugate_after(op, [op.res[k] for k in cot_out])
        return
    if isinstance(op, ad.GradOp | ad.ValueAndGradOp):
        first = 1 if isinstance(op, ad.ValueAndGradOp) else 0
        grads = [first + k for k in _complex_positions(op.result_types[first:])]
        _retype_results(op)
        _conjugate_after(op, [op.results[k] for k in grads])
        return
    _retype_results(op)


def expand_function_body(region_owner: Operation) -> None:
    """Expand every complex value inside `region_owner`'s regions, in program order."""
    for region in region_owner.regions:
        for block in region.blocks:
            _retype_block_args(block)
            for op in list(block.ops):
                _expand(op)


def _expand(op: Operation) -> None:
    if isinstance(op, _REFUSED) and _mentions_complex(op):
        raise PassError(
            "with complex values is not supported by nn-expand-complex: a custom rule would see (re, im) "
            "pairs, not JAX's complex convention",
            op,
        )
    if isinstance(op, ad.DifferentiateOp | ad.CheckpointOp | ad.BatchOp):
        _expand_request(op)
        return
    if op.regions:
        expand_function_body(op)
        _retype_results(op)
        return
    if not (_mentions_complex(op) or _takes_pairs(op)):
        return
    if isinstance(op, func.CallOp):  # its callee's signature is converted too
        _retype_results(op)
        return
    if isinstance(op, func.ReturnOp):
        return
    if not isinstance(op, nn.NNOperation) or len(op.results) != 1:
        raise _unsupported(op)
    pairs = _expand_op(op)
    assert pairs is not None
    pairs.name_hint = op.results[0].name_hint
    op.results[0].replace_all_uses_with(pairs)
    Rewriter.erase_op(op)


def has_complex(module: ModuleOp) -> bool:
    """Whether any value of `module` is complex. Only results and function arguments are looked
    at: every other value is one of them (or a region's argument, which a complex result or
    argument feeds). This runs on every compile, so it stays a plain walk (~2 us an op)."""
    for op in module.walk():
        for result in op.results:
            t = result.type
            if isinstance(t, ComplexType) or (isinstance(t, TensorType) and isinstance(t.element_type, ComplexType)):
                return True
        if isinstance(op, func.FuncOp) and any(_is_complex_tensor(t) for t in op.function_type.inputs.data):
            return True
    return False


@dataclass(frozen=True)
class ExpandComplexPass(ModulePass):
    """Complex tensors as trailing (re, im) pairs, JAX's derivative convention at the requests."""

    name = "nn-expand-complex"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not has_complex(op):
            return
        # Verified first: an op that takes no complex values would otherwise see (re, im) pairs.
        for inner in op.walk():
            if _mentions_complex(inner):
                inner.verify_()
        for fn in list(op.walk()):
            if isinstance(fn, func.FuncOp):
                fn.function_type = cast(FunctionType, pair_type(fn.function_type))
                expand_function_body(fn)
