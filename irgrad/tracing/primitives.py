"""One function per `nn` op, on tracers of matching types (JAX's `lax` layer).

Nothing here broadcasts or promotes: `irgrad.numpy.basic` does that and then calls these.
Each function resolves its operands in the current frame, emits one op and wraps its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, TensorType, i32
from xdsl.ir import Operation, SSAValue

from irgrad.dialects import nn
from irgrad.tracing import dtypes
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.tracing.tracer import FunctionFrame, Tracer, as_tracer, current_frame


def frame() -> FunctionFrame:
    f = current_frame()
    if f is None:
        raise RuntimeError("irgrad.tracing.primitives functions need an active trace")
    return f


def _emit(op: Operation) -> Tracer:
    f = frame()
    f.emit(op)
    result = f.wrap(op.results[0])
    if isinstance(op, _WEAK_PRESERVING) and _weak_operands(f, op):
        f.mark_weak(result)
    return result


def _weak_operands(f: FunctionFrame, op: Operation) -> bool:
    """JAX's rule: an elementwise or shape op's result is weakly typed when its operands are
    (splat constants, which is what Python scalars and a function's own constants become, do
    not count; a select's predicate neither)."""
    values = op.operands[1:] if isinstance(op, nn.SelectOp) else op.operands
    weak = False
    for v in values:
        if v in f.weak_values:
            weak = True
        elif not isinstance(v.owner, nn.FullOp):
            return False
    return weak


_WEAK_PRESERVING = (
    nn.ElementwiseUnaryOp, nn.ElementwiseBinaryOp, nn.SelectOp, nn.BroadcastInDimOp, nn.ReshapeOp,
)


def _v(x: Tracer | Any) -> SSAValue:
    return as_tracer(frame(), x).value


def unary(op_class: type[nn.ElementwiseUnaryOp], x: Tracer) -> Tracer:
    return _emit(op_class(_v(x)))


def binary(op_class: type[nn.ElementwiseBinaryOp], x: Tracer, y: Tracer) -> Tracer:
    return _emit(op_class(_v(x), _v(y)))


def compare(direction: str, x: Tracer, y: Tracer) -> Tracer:
    return _emit(nn.CompareOp(direction, _v(x), _v(y)))


def select(pred: Tracer, on_true: Tracer, on_false: Tracer) -> Tracer:
    return _emit(nn.SelectOp(_v(pred), _v(on_true), _v(on_false)))


def convert(x: Tracer, dtype: Any, drop_imaginary: bool = False) -> Tracer:
    """`nn.convert` to `dtype`. Complex to real keeps the real part only where the caller says so
    (`astype`, as numpy's and JAX's): anywhere else it is a function that does not take complex
    values, and a DTypeError says so instead of dropping the imaginary part."""
    d = dtypes.canonical(dtype)
    if x.dtype == d:
        return x
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(d) and not drop_imaginary:
        raise DTypeError(
            f"complex input (dtype {x.dtype}, shape {x.shape}) is not supported here: converting it to {d} "
            f"would drop its imaginary part (use real() or astype() to do that){user_site()}"
        )
    return _emit(nn.ConvertOp(_v(x), dtypes.element_type(d)))


def reduce(op_class: type[nn.ReduceOp], x: Tracer, axes: Sequence[int], keepdims: bool) -> Tracer:
    return _emit(op_class(_v(x), list(axes), keepdims))


def broadcast_in_dim(x: Tracer, shape: Sequence[int], dims: Sequence[int]) -> Tracer:
    if tuple(shape) == x.shape and list(dims) == list(range(x.ndim)):
        return x
    return _emit(nn.BroadcastInDimOp(_v(x), list(shape), list(dims)))


def reshape(x: Tracer, shape: Sequence[int]) -> Tracer:
    if tuple(shape) == x.shape:
        return x
    return _emit(nn.ReshapeOp(_v(x), list(shape)))


def transpose(x: Tracer, perm: Sequence[int]) -> Tracer:
    if list(perm) == list(range(x.ndim)):
        return x
    return _emit(nn.TransposeOp(_v(x), list(perm)))


def slice(x: Tracer, start: Sequence[int], limit: Sequence[int], stride: Sequence[int]) -> Tracer:
    return _emit(nn.SliceOp(_v(x), list(start), list(limit), list(stride)))


def to_index(i: Tracer | int) -> SSAValue:
    """An `index` scalar from a Python int or a rank-0 integer tracer (for dynamic slices)."""
    f = frame()
    if isinstance(i, int):
        op = arith.ConstantOp.from_int_and_width(i, IndexType())
        f.emit(op)
        return op.result
    t = as_tracer(f, i)
    if t.shape != () or not dtypes.is_int(t.dtype):
        raise TypeError(f"a dynamic index must be a scalar integer, got {t!r}")
    extract = tensor.ExtractOp(t.value, [], t.type.get_element_type())
    f.emit(extract)
    cast = arith.IndexCastOp(extract.result, IndexType())
    f.emit(cast)
    return cast.result


def scalar_to_tensor(value: SSAValue) -> Tracer:
    """A rank-0 tensor tracer from a scalar SSA value (an index becomes int32)."""
    f = frame()
    if isinstance(value.type, IndexType):
        cast = arith.IndexCastOp(value, i32)
        f.emit(cast)
        value = cast.result
    op = tensor.FromElementsOp.build(operands=[[value]], result_types=[TensorType(value.type, [])])
    f.emit(op)
    return f.wrap(op.results[0])


def extract_scalar(x: Tracer) -> SSAValue:
    """The scalar SSA value of a rank-0 tensor tracer (for scf conditions)."""
    f = frame()
    t = as_tracer(f, x)
    op = tensor.ExtractOp(t.value, [], t.type.get_element_type())
    f.emit(op)
    return op.result


def dynamic_slice(x: Tracer, starts: Sequence[Tracer | int], sizes: Sequence[int]) -> Tracer:
    indices = [to_index(s) for s in starts]
    return _emit(nn.DynamicSliceOp(_v(x), indices, list(sizes)))


def dynamic_update_slice(x: Tracer, update: Tracer, starts: Sequence[Tracer | int]) -> Tracer:
    indices = [to_index(s) for s in starts]
    return _emit(nn.DynamicUpdateSliceOp(_v(x), _v(update), indices))


def concatenate(xs: Sequence[Tracer], axis: int) -> Tracer:
    if len(xs) == 1:
        return xs[0]
    return _emit(nn.ConcatenateOp([_v(x) for x in xs], axis))


def pad(x: Tracer, value: Tracer, low: Sequence[int], high: Sequence[int]) -> Tracer:
    return _emit(nn.PadOp(_v(x), _v(value), list(low), list(high)))


def matmul(a: Tracer, b: Tracer) -> Tracer:
    return _emit(nn.MatmulOp(_v(a), _v(b)))


def fft(x: Tracer, fft_type: str, length: Sequence[int]) -> Tracer:
    return _emit(nn.FftOp(_v(x), fft_type, list(length)))


def cholesky(a: Tracer) -> Tracer:
    """`nn.cholesky`: the lower Cholesky factor (all NaN where not positive definite)."""
    return _emit(nn.CholeskyOp(_v(a)))


def triangular_solve(a: Tracer, b: Tracer, lower: bool, unit_diagonal: bool = False) -> Tracer:
    """`nn.triangular_solve`: A^{-1} B for a triangular A (..., n, n), B (..., n, k)."""
    return _emit(nn.TriangularSolveOp(_v(a), _v(b), lower=lower, unit_diagonal=unit_diagonal))


def _emit_all(op: Operation) -> tuple[Tracer, ...]:
    """Emit a multi-result `op` in the current frame; its results as tracers."""
    f = frame()
    f.emit(op)
    return tuple(f.wrap(r) for r in op.results)


def lu(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """`nn.lu`: (lu, pivots, permutation) of P A = L U, as LAPACK's getrf."""
    return _emit_all(nn.LUOp(_v(a)))  # type: ignore[return-value]


def eigh(a: Tracer) -> tuple[Tracer, Tracer]:
    """`nn.eigh`: (w ascending, v) of the symmetric matrix whose lower triangle is a's."""
    return _emit_all(nn.EighOp(_v(a)))  # type: ignore[return-value]


def eig(a: Tracer) -> tuple[Tracer, Tracer]:
    """`nn.eig`: (w, v) of a real square a as (re, im) pairs, w (..., n, 2), v (..., n, n, 2)."""
    return _emit_all(nn.EigOp(_v(a)))  # type: ignore[return-value]


def svd(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """`nn.svd`: the reduced (u, s descending, vt)."""
    return _emit_all(nn.SvdOp(_v(a)))  # type: ignore[return-value]


def qr(a: Tracer) -> tuple[Tracer, Tracer]:
    """`nn.qr`: the reduced (q, r) of a tall or square a, LAPACK's signs."""
    return _emit_all(nn.QrOp(_v(a)))  # type: ignore[return-value]


def conv2d(
    x: Tracer, w: Tracer, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int]
) -> Tracer:
    return _emit(nn.Conv2DOp(_v(x), _v(w), list(stride), list(padding), list(dilation)))


def max_pool2d(x: Tracer, kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int]) -> Tracer:
    return _emit(nn.MaxPool2DOp(_v(x), list(kernel), list(stride), list(padding)))


def gather(x: Tracer, indices: Tracer, axis: int) -> Tracer:
    return _emit(nn.GatherOp(_v(x), _v(indices), axis))


def scatter_add(x: Tracer, indices: Tracer, updates: Tracer, axis: int) -> Tracer:
    return _emit(nn.ScatterAddOp(_v(x), _v(indices), _v(updates), axis))


def iota(shape: Sequence[int], dimension: int, dtype: Any) -> Tracer:
    t = TensorType(dtypes.element_type(dtype), list(shape))
    return _emit(nn.IotaOp(dimension, t))
