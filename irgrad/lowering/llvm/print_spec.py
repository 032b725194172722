"""The contract between convert-debug-to-llvm and the CPU runtime's print entry point: what a
`debug.print` op means, as a constant JSON string in the object code (its format, operand
names, shapes and dtypes), so that code holding a print means the same in every process and
can be disk-cached. The lowering encodes it, the runtime (irgrad/backends/debug_print.py)
decodes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

Spec = tuple[str, tuple[str, ...], tuple[tuple[tuple[int, ...], np.dtype], ...]]


def encode_spec(fmt: str, names: Sequence[str], arrays: Sequence[tuple[tuple[int, ...], np.dtype]]) -> bytes:
    """The print's format, operand names, shapes and dtypes as JSON: a constant string in the
    object code itself (convert-debug-to-llvm), so that code holding a print means the same
    in every process and can be disk-cached."""
    return json.dumps(
        {"format": fmt, "names": list(names), "arrays": [[list(shape), np.dtype(d).name] for shape, d in arrays]},
        separators=(",", ":"),
    ).encode("utf-8")


def decode_spec(data: bytes) -> Spec:
    spec = json.loads(data.decode("utf-8"))
    arrays = tuple((tuple(shape), np.dtype(dtype)) for shape, dtype in spec["arrays"])
    return spec["format"], tuple(spec["names"]), arrays
