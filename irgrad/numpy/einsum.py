"""`ig.einsum`: numpy's Einstein summation, traced to transposes, reshapes and batched matmuls.

The subscripts follow numpy: explicit (`"ij,jk->ik"`) or implicit (the output is the labels that
appear once, sorted), `...` for broadcast dimensions, a label repeated in one operand for its
diagonal (`"ii->i"`, `"ii"` the trace). Operands are contracted left to right, two at a time, as
one `nn.matmul` each:

1. labels an operand alone carries that the output and the later operands do not need are summed
   out first (`nn.reduce_sum`), and a label repeated in one operand is reduced to its diagonal;
2. the pair's labels are sorted into batch (in both, still needed), contracted (in both, no longer
   needed), and free ones of each side; each side is transposed to (batch, free, contracted) (the
   right side to (batch, contracted, free)) and reshaped to three dimensions, so the contraction
   is one batched GEMM (the CPU backend sends large ones to BLAS). A side whose innermost label
   would move is laid out the other way and transposed last, a transpose BLAS takes as a flag;
3. the result is reshaped back and, at the end, transposed to the output's order.

The IR is ordinary `nn`, so einsum differentiates, batches and lowers with no rules of its own.
Size-1 dimensions broadcast against their label's size elsewhere, as in numpy.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, lift, result_dtype
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer

_LETTERS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _parse(subscripts: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels and the output's, with `...` expanded to fresh labels (numpy's rules)."""
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        lhs, out = spec.split("->")
        if "->" in out:
            raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'{user_site()}")
    else:
        lhs, out = spec, None
    inputs = lhs.split(",")
    if len(inputs) != len(ranks):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(inputs)} operands, got {len(ranks)}{user_site()}"
        )
    for part in [*inputs, out or ""]:
        bad = set(part.replace("...", "")) - _LETTERS
        if bad or part.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {part!r} in {subscripts!r}{user_site()}")
    used = set(spec) & _LETTERS
    fresh = iter(sorted(set(map(chr, range(0x100, 0x180))) - used))
    ellipsis_rank = max(
        (rank - len(part.replace("...", "")) for part, rank in zip(inputs, ranks) if "..." in part), default=0
    )
    broadcast = [next(fresh) for _ in range(ellipsis_rank)]
    labels = []
    for part, rank in zip(inputs, ranks):
        if "..." in part:
            head, tail = part.split("...")
            own = rank - len(head) - len(tail)
            if own < 0:
                raise ShapeError(f"einsum: operand {part!r} has rank {rank}, too small for its labels{user_site()}")
            labels.append([*head, *broadcast[ellipsis_rank - own :], *tail])
        else:
            if len(part) != rank:
                raise ShapeError(
                    f"einsum: subscripts {part!r} name {len(part)} dimensions, the operand has rank {rank}{user_site()}"
                )
            labels.append(list(part))
    if out is None:
        counts = Counter(label for part in inputs for label in part.replace("...", ""))
        output = broadcast + sorted(label for label, n in counts.items() if n == 1)
    else:
        head, _, tail = out.partition("...")
        if "..." not in out and broadcast:
            raise ValueError(f"einsum: output {out!r} drops the '...' dimensions{user_site()}")
        output = [*head, *(broadcast if "..." in out else []), *tail]
        everywhere = {label for part in labels for label in part}
        for label in output:
            if label not in everywhere:
                raise ValueError(f"einsum: output label {label!r} appears in no operand of {subscripts!r}{user_site()}")
        if len(set(output)) != len(output):
            raise ValueError(f"einsum: output {out!r} repeats a label{user_site()}")
    return labels, output


def _label_sizes(labels: list[list[str]], arrays: list[Tracer], subscripts: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for part, x in zip(labels, arrays):
        for label, n in zip(part, x.shape):
            if sizes.get(label, 1) != 1 and n not in (1, sizes[label]):
                raise ShapeError(
                    f"einsum: label {label!r} of {subscripts!r} has sizes {sizes[label]} and {n} "
                    f"(operand shapes {[t.shape for t in arrays]}){user_site()}"
                )
            if n != 1 or label not in sizes:
                sizes[label] = n
    return sizes


def _diagonal(x: Tracer, part: list[str]) -> tuple[Tracer, list[str]]:
    """Repeated labels of one operand reduced to their diagonal (a mask, then a sum over the copy)."""
    while len(set(part)) != len(part):
        label = next(lb for lb in part if part.count(lb) > 1)
        first = part.index(label)
        second = part.index(label, first + 1)
        if x.shape[first] != x.shape[second]:
            raise ShapeError(f"einsum: repeated label {label!r} has sizes {x.shape[first]} and {x.shape[second]}{user_site()}")
        same = lax.compare("eq", lax.iota(x.shape, first, np.int32), lax.iota(x.shape, second, np.int32))
        x = np_api.sum(np_api.where(same, x, np.zeros((), x.dtype)), axis=second)
        part = part[:second] + part[second + 1 :]
    return x, part


def _transpose(x: Tracer, part: list[str], order: list[str]) -> Tracer:
    perm = [part.index(label) for label in order]
    return x if perm == list(range(len(perm))) else lax.transpose(x, perm)


def _contract(a: Tracer, pa: list[str], b: Tracer, pb: list[str], keep: set[str], sizes: dict[str, int]):
    """a and b contracted over their shared labels not in `keep`, by one batched matmul."""
    batch = [lb for lb in pa if lb in pb and lb in keep]
    contracted = [lb for lb in pa if lb in pb and lb not in keep]
    free_a = [lb for lb in pa if lb not in pb]
    free_b = [lb for lb in pb if lb not in pa]
    # Size-1 dimensions broadcast against the other side's size.
    for x_name in ("a", "b"):
        x, part = (a, pa) if x_name == "a" else (b, pb)
        target = tuple(sizes[lb] if lb in batch + contracted else n for lb, n in zip(part, x.shape))
        if target != x.shape:
            x = np_api.broadcast_to(x, target)
            a, b = (x, b) if x_name == "a" else (a, x)
    dims = {**dict(zip(pb, b.shape)), **dict(zip(pa, a.shape))}
    size = lambda group: math.prod(dims[lb] for lb in group)  # noqa: E731
    # Each side keeps its innermost dimension innermost where it can: an operand whose last label
    # is on the "wrong" side of the product (a contracted label last in b, a free one in a) is laid
    # out the other way round and then transposed in its last two dimensions, which
    # convert-linalg-to-blas folds into the GEMM's transpose flag instead of copying.
    a_flipped = bool(pa) and pa[-1] in free_a and bool(contracted)
    b_flipped = bool(pb) and pb[-1] in contracted and bool(free_b)
    if a_flipped:
        a3 = lax.reshape(_transpose(a, pa, batch + contracted + free_a), (size(batch), size(contracted), size(free_a)))
        a3 = lax.transpose(a3, [0, 2, 1])
    else:
        a3 = lax.reshape(_transpose(a, pa, batch + free_a + contracted), (size(batch), size(free_a), size(contracted)))
    if b_flipped:
        b3 = lax.reshape(_transpose(b, pb, batch + free_b + contracted), (size(batch), size(free_b), size(contracted)))
        b3 = lax.transpose(b3, [0, 2, 1])
    else:
        b3 = lax.reshape(_transpose(b, pb, batch + contracted + free_b), (size(batch), size(contracted), size(free_b)))
    out = lax.matmul(a3, b3)
    labels = batch + free_a + free_b
    return lax.reshape(out, tuple(dims[lb] for lb in labels)), labels


@api
def einsum(subscripts: str, *arrays: Any) -> Tracer:
    """numpy's einsum; see the module docstring for how it is traced."""
    if not arrays:
        raise ValueError(f"einsum: needs at least one operand{user_site()}")
    dtype = result_dtype(*arrays)
    tracers = [lift(a, dtype) for a in arrays]
    if dtype == dtypes.bool_:
        raise TypeError(f"einsum: bool operands are not supported (convert them to a number type){user_site()}")
    labels, output = _parse(subscripts, [t.ndim for t in tracers])
    sizes = _label_sizes(labels, tracers, subscripts)
    items = []
    for x, part in zip(tracers, labels):
        items.append(_diagonal(x, list(part)))
    # Sum out what only one operand has and nothing later needs, then contract left to right.
    def needed(position: int) -> set[str]:
        later = {lb for _, part in items[position + 1 :] for lb in part}
        return later | set(output)

    x, part = items[0]
    x, part = _sum_alone(x, part, needed(0))
    for k in range(1, len(items)):
        y, py = items[k]
        keep = needed(k)
        y, py = _sum_alone(y, py, keep | set(part))
        x, part = _sum_alone(x, part, keep | set(py))
        x, part = _contract(x, part, y, py, keep, sizes)
    x, part = _sum_alone(x, part, set(output))
    x = np_api.broadcast_to(x, tuple(sizes[lb] for lb in part))
    return _transpose(x, part, output)


def _sum_alone(x: Tracer, part: list[str], keep: set[str]) -> tuple[Tracer, list[str]]:
    axes = [i for i, lb in enumerate(part) if lb not in keep]
    if not axes:
        return x, part
    return np_api.sum(x, axis=tuple(axes)), [lb for lb in part if lb in keep]
