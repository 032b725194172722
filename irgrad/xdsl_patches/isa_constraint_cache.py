"""The attribute constraint of a type hint built once per hint.

`xdsl.utils.hints.isa(value, ArrayAttr[IntAttr])` converts the hint into a constraint on
every call, walking the generic's arguments, and `MemRefType(element, shape)` calls it once
per construction (most of bufferize's time on a large program). `isa` looks
`irdl_to_attr_constraint` up on `xdsl.irdl` at each call; the constraint a hashable hint
gives is immutable and always the same, so it is memoized here. Upstream: not reported.
"""

from __future__ import annotations

import xdsl.irdl
from xdsl.utils import hints

from irgrad.xdsl_patches.patching import install, is_patched, require_source


def apply() -> None:
    original = xdsl.irdl.irdl_to_attr_constraint
    if is_patched(original):
        return
    require_source(hints.isa, "irdl_to_attr_constraint(hint_type)", patch="isa_constraint_cache")
    cache: dict[object, object] = {}

    def irdl_to_attr_constraint(irdl, *, allow_type_var=False):  # type: ignore[no-untyped-def]
        if allow_type_var:
            return original(irdl, allow_type_var=True)
        try:
            return cache[irdl]
        except KeyError:
            constraint = cache[irdl] = original(irdl)
            return constraint
        except TypeError:  # an unhashable hint
            return original(irdl)

    install(xdsl.irdl, "irdl_to_attr_constraint", irdl_to_attr_constraint, original)
