"""`DenseArrayBase.get_values` unpacked once per attribute.

xDSL 0.75 unpacks the array's bytes with `struct` on every call, and reads an op's variadic
operands and results through it: every `generic.inputs` unpacks `operandSegmentSizes`
again, tens of thousands of times in a pass over a large program. Attributes are immutable,
so the values are kept in the attribute's `__dict__` (equality, hashing and printing read
only the dataclass fields). Upstream: not reported.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase

from irgrad.xdsl_patches.patching import install, is_patched, require_source


def apply() -> None:
    original = DenseArrayBase.get_values
    if is_patched(original):
        return
    require_source(original, "unpack(self.data.data, len(self))", patch="dense_array_values")

    def get_values(self):  # type: ignore[no-untyped-def]
        cache = self.__dict__
        values = cache.get("_irgrad_values")
        if values is None:
            values = cache["_irgrad_values"] = original(self)
        return values

    install(DenseArrayBase, "get_values", get_values, original)
