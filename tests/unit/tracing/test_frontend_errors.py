"""Trace-time errors: ShapeError / DTypeError name the operation, the shapes or dtypes, and the
user's own file and line (` (at file.py:NN)`), traced and eager, through operators too.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import randint, randn

F = randn(3, 4, seed=1)
V = randn(5, seed=2)
I = randint(0, 3, 4, seed=3)
B = randn(4, seed=4) > 0
IMG = randn(1, 3, 5, 5, seed=5)


def _where(fn) -> str:
    """The ` (at file:line)` suffix for the line `fn` (a one-line lambda) is written on."""
    return f"(at {fn.__code__.co_filename}:{fn.__code__.co_firstlineno})"


def _raises(exc: type[Exception], fn, *args, fragments: tuple[str, ...]) -> str:
    with pytest.raises(exc) as info:
        ig.trace(fn, *args)
    message = str(info.value)
    for fragment in (*fragments, _where(fn)):
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


SHAPE_ERRORS = [
    ("add", lambda x, v: ig.add(x, v), (F, V), ("add", "(3, 4)", "(5,)", "do not broadcast")),
    ("operator", lambda x, v: x * v, (F, V), ("multiply", "(3, 4)", "(5,)")),
    ("reversed-operator", lambda x, v: 2.0 - x + v, (F, V), ("add", "(3, 4)", "(5,)")),
    ("where", lambda x, v: ig.where(x > 0, x, v), (F, V), ("where", "(3, 4)", "(5,)")),
    ("matmul", lambda x, v: x @ v, (F, V), ("matmul", "contracting", "(3, 4)", "(5,)")),
    ("matmul-batch", lambda x, v: ig.matmul(ig.ones((3, 2, 4)), ig.ones((2, 4, 5))), (F, V),
     ("matmul", "(3,)", "(2,)", "do not broadcast")),
    ("reshape", lambda x, v: ig.reshape(x, (5, -1)), (F, V), ("reshape", "12 elements", "(5, -1)")),
    ("reshape-method", lambda x, v: x.reshape(7), (F, V), ("reshape", "12", "(7,)")),
    ("transpose", lambda x, v: ig.transpose(x, (0, 0)), (F, V), ("transpose", "(0, 0)", "(3, 4)")),
    ("broadcast_to", lambda x, v: ig.broadcast_to(x, (3, 5)), (F, V), ("broadcast_to", "(3, 4)", "(3, 5)")),
    ("sum-axis", lambda x, v: ig.sum(x, axis=2), (F, V), ("sum", "axis 2", "rank 2")),
    ("mean-axis", lambda x, v: x.mean(axis=-3), (F, V), ("mean", "axis -3", "rank 2")),
    ("max-empty", lambda x, v: ig.max(x[:0]), (F, V), ("max", "zero-size", "(0, 4)")),
    ("concatenate", lambda x, v: ig.concatenate([x, v]), (F, V), ("concatenate", "(3, 4)", "(5,)")),
    ("squeeze", lambda x, v: ig.squeeze(x, 0), (F, V), ("squeeze", "axis 0", "(3, 4)")),
    ("take_along_axis", lambda x, v: ig.take_along_axis(x, ig.zeros((3,), ig.int32), 1), (F, V),
     ("take_along_axis", "(3,)", "(3, 4)")),
    ("pad", lambda x, v: ig.pad(x, -1), (F, V), ("pad", "negative")),
    # Out-of-range axes are errors, as in numpy, never wrapped around.
    ("transpose-axis", lambda x, v: ig.transpose(x, (3, 0)), (F, V), ("transpose", "axis 3", "rank 2")),
    ("swapaxes-axis", lambda x, v: ig.swapaxes(x, 5, 0), (F, V), ("swapaxes", "axis 5", "rank 2")),
    ("expand_dims-axis", lambda x, v: ig.expand_dims(x, 7), (F, V), ("expand_dims", "axis 7", "rank 3")),
    ("expand_dims-repeated", lambda x, v: ig.expand_dims(x, (0, -4)), (F, V), ("expand_dims", "repeated")),
    ("stack-axis", lambda x, v: ig.stack([x, x], -4), (F, V), ("stack", "axis -4", "rank 3")),
    ("concatenate-axis", lambda x, v: ig.concatenate([x, x], 2), (F, V), ("concatenate", "axis 2", "rank 2")),
    ("take-axis", lambda x, v: ig.take(x, ig.zeros((1,), ig.int32), axis=-3), (F, V), ("take", "axis -3")),
    ("softmax-axis", lambda x, v: ig.softmax(x, axis=2), (F, V), ("softmax", "axis 2")),
]


@pytest.mark.parametrize("name, fn, args, fragments", SHAPE_ERRORS, ids=[e[0] for e in SHAPE_ERRORS])
def test_shape_errors(name, fn, args, fragments):
    _raises(ig.ShapeError, fn, *args, fragments=fragments)


def test_conv2d_shape_errors():
    w_bad = randn(2, 4, 3, 3, seed=6)
    _raises(ig.ShapeError, lambda x, w: ig.conv2d(x, w), IMG, w_bad,
            fragments=("conv2d", "input channels", "(1, 3, 5, 5)", "(2, 4, 3, 3)"))
    _raises(ig.ShapeError, lambda x, w: ig.conv2d(x[0], w), IMG, w_bad, fragments=("conv2d", "NCHW", "(3, 5, 5)"))
    big = randn(2, 3, 7, 7, seed=7)
    _raises(ig.ShapeError, lambda x, w: ig.conv2d(x, w), IMG, big, fragments=("conv2d", "larger"))
    _raises(ig.ShapeError, lambda x: ig.max_pool2d(x[0], 2), IMG, fragments=("max_pool2d", "NCHW"))


DTYPE_ERRORS = [
    ("add-bool", lambda b, i: b + b, (B, I), ("add", "bool")),
    ("negative-bool", lambda b, i: -b, (B, I), ("negative", "bool")),
    ("take-float-indices", lambda b, i: ig.take(ig.ones(3), ig.ones(2)), (B, I), ("take", "indices", "float32")),
    ("one_hot-float", lambda b, i: ig.one_hot(i.astype(ig.float32), 3), (B, I), ("one_hot", "float32")),
    ("unsupported-dtype", lambda b, i: i.astype(np.uint64), (B, I), ("uint64", "not supported")),
]


@pytest.mark.parametrize("name, fn, args, fragments", DTYPE_ERRORS, ids=[e[0] for e in DTYPE_ERRORS])
def test_dtype_errors(name, fn, args, fragments):
    if name == "unsupported-dtype":
        # Raised while reading the dtype, before any op: no user line is needed there.
        with pytest.raises(ig.DTypeError, match="not supported"):
            ig.trace(fn, *args)
        return
    _raises(ig.DTypeError, fn, *args, fragments=fragments)


def test_error_classes():
    assert issubclass(ig.ShapeError, ValueError)
    assert issubclass(ig.DTypeError, TypeError)
    assert issubclass(ig.ConcretizationError, TypeError)
    assert issubclass(ig.UnsupportedError, NotImplementedError)


def test_error_inside_a_helper_points_at_the_helper_line():
    def helper(x, v):
        return x + v  # the innermost user line is this one

    with pytest.raises(ig.ShapeError) as info:
        ig.trace(lambda x, v: helper(x, v), F, V)
    line = helper.__code__.co_firstlineno + 1
    assert f"(at {__file__}:{line})" in str(info.value)


def test_eager_errors_name_the_callers_line():
    with pytest.raises(ig.ShapeError) as info:
        ig.add(F, V)
    line = test_eager_errors_name_the_callers_line.__code__.co_firstlineno + 2
    assert f"add: shapes (3, 4), (5,) do not broadcast (at {__file__}:{line})" == str(info.value)


def test_error_inside_a_loop_body_points_at_the_body():
    body = lambda i, c: c + V  # noqa: E731
    with pytest.raises(ig.ShapeError) as info:
        ig.trace(lambda x: ig.fori_loop(0, 2, body, x), F)
    assert _where(body) in str(info.value)


def test_error_inside_grad_points_at_the_users_line():
    loss = lambda x: ig.sum(x @ V)  # noqa: E731
    with pytest.raises(ig.ShapeError) as info:
        ig.trace(ig.grad(loss), F)
    assert _where(loss) in str(info.value) and "matmul" in str(info.value)


X4 = np.ones((1, 1, 4, 4), np.float32)
W2 = np.ones((1, 1, 2, 2), np.float32)


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda: ig.zeros((-1, 3)), ig.ShapeError, r"zeros: negative dimension in shape \(-1, 3\)"),
        (lambda: ig.jit(lambda: ig.full((2, -3), 1.0))(), ig.ShapeError, r"full: negative dimension in shape \(2, -3\)"),
        (lambda: ig.broadcast_to(np.ones(1), (-1,)), ig.ShapeError, r"broadcast_to: negative dimension"),
        (lambda: ig.reshape(np.ones(6), (-2, -3)), ig.ShapeError, r"reshape: negative dimension in \(-2, -3\)"),
        (lambda: ig.one_hot(np.array([1]), -2), ig.ShapeError, r"one_hot: num_classes must not be negative"),
        (lambda: ig.arange(0, 5, 0), ValueError, r"arange: step must not be zero"),
        (lambda: ig.conv2d(X4, W2, stride=0), ig.ShapeError, r"conv2d: stride must be at least 1, got 0"),
        (lambda: ig.conv2d(X4, W2, dilation=(1, 0)), ig.ShapeError, r"conv2d: dilation must be at least 1"),
        (lambda: ig.conv2d(X4, W2, padding=-1), ig.ShapeError, r"padding must not be negative"),
        (lambda: ig.max_pool2d(X4, 0), ig.ShapeError, r"max_pool2d: kernel_size must be at least 1"),
        (lambda: ig.max_pool2d(X4, 9), ig.ShapeError, r"max_pool2d: kernel \(9, 9\) is larger than the padded input"),
        (lambda: ig.max_pool2d(X4, 2, stride=0), ig.ShapeError, r"max_pool2d: stride must be at least 1"),
    ],
    ids=["zeros", "full", "broadcast_to", "reshape", "one_hot", "arange", "conv-stride", "conv-dilation",
         "conv-padding", "pool-kernel", "pool-too-large", "pool-stride"],
)
def test_impossible_sizes_are_errors_not_empty_results(call, error, message):
    """A negative dimension, a zero stride or a window larger than its input never reaches
    the compiler (where it was an internal error) nor returns an empty array: it is the
    user's mistake, named with the call's line."""
    with pytest.raises(error, match=message) as info:
        call()
    assert "test_frontend_errors.py" in str(info.value)


def test_a_bad_axis_or_static_argument_is_named():
    with pytest.raises(TypeError, match=r"sum: axis must be an int or a tuple of ints, got 0.0"):
        ig.sum(F, axis=0.0)
    with pytest.raises(TypeError, match=r"jit: static argument #1 of \w+ must be hashable"):
        ig.jit(lambda a, s: a * len(s), static_argnums=(1,))(F, [1, 2])
