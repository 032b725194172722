"""Loss functions: each returns a scalar, the mean over the batch (and any other axes).

Written with `ig.*` functions, so they run eagerly on numpy arrays and stage ops inside
`ig.trace`. Every loss is numerically stable for large inputs: the softmax family subtracts
the maximum, and the binary loss never takes the exponential of a positive number.
"""

from __future__ import annotations

from typing import Any

import irgrad as ig
from irgrad.tracing import dtypes
from irgrad.tracing.errors import DTypeError, ShapeError, user_site


def _shape(x: Any) -> tuple[int, ...]:
    return ig.ShapeDtype.of(x).shape


def mse(pred: Any, target: Any) -> Any:
    """Mean squared error, `mean((pred - target) ** 2)` over all elements."""
    return ig.mean(ig.square(ig.subtract(pred, target)))


def softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """`mean(-log_softmax(logits)[..., labels])` with integer class labels.

    `logits` has shape (..., num_classes) and `labels` the leading shape (...), holding class
    indices in [0, num_classes). Labels out of that range are clamped (as `ig.take_along_axis`
    does), so validate them on the host if they may be wrong.
    """
    label_info = ig.ShapeDtype.of(labels)
    if not dtypes.is_int(label_info.dtype):
        raise DTypeError(
            f"softmax_cross_entropy: labels must be integer class indices, got {label_info.dtype}"
            f" (for one-hot or soft targets, use -mean(sum(targets * ig.log_softmax(logits), -1))){user_site()}"
        )
    logits_shape = _shape(logits)
    if not logits_shape or tuple(logits_shape[:-1]) != label_info.shape:
        raise ShapeError(
            f"softmax_cross_entropy: logits {tuple(logits_shape)} must be labels' shape "
            f"{label_info.shape} plus a class axis{user_site()}"
        )
    log_probs = ig.log_softmax(logits, axis=-1)
    return ig.negative(ig.mean(_pick(log_probs, labels, logits_shape[-1])))


def _pick(log_probs: Any, labels: Any, num_classes: int) -> Any:
    """`take_along_axis(log_probs, labels[..., None], -1)[..., 0]` (negative labels wrapped,
    then clamped, as it does), as a select against the class index summed over the class
    axis: exactly the picked value (the other terms are zeros), and elementwise along the
    batch, so a batch split over devices stays local (a gather at flat indices would need
    every row) and the gradient is a select too, not a scatter."""
    labels = ig.where(ig.less(labels, 0), ig.add(labels, num_classes), labels)
    labels = ig.clip(labels, 0, max(num_classes - 1, 0))
    classes = ig.arange(num_classes, dtype=ig.ShapeDtype.of(labels).dtype)
    chosen = ig.equal(ig.expand_dims(labels, -1), classes)
    return ig.sum(ig.where(chosen, log_probs, ig.zeros_like(log_probs)), axis=-1)


def binary_cross_entropy_with_logits(logits: Any, targets: Any) -> Any:
    """`mean(-t log sigmoid(x) - (1 - t) log(1 - sigmoid(x)))`, computed stably as
    `max(x, 0) - x * t + log1p(exp(-|x|))`. Targets are probabilities in [0, 1]."""
    x = logits
    per_element = ig.add(
        ig.subtract(ig.maximum(x, 0.0), ig.multiply(x, targets)),
        ig.log1p(ig.exp(ig.negative(ig.abs(x)))),
    )
    return ig.mean(per_element)
