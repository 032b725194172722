"""Memos kept on the IR they describe, for the caches of the `convert-*-to-llvm` passes (a
value's cast, a function's constants, a module's declarations).
"""

from __future__ import annotations

from typing import Any


def memo(owner: object, name: str) -> dict[Any, Any]:
    """A dict kept in `owner`'s own `__dict__` under `name`, so it lives exactly as long as the
    op or value it describes. Why not a global WeakKeyDictionary: these memos hold IR that
    points back at its key (a constant's result at its function, a declaration at its
    module), so such a dictionary kept every module ever lowered alive (about 1,100 objects
    per compile, found by compiling a new function in a loop)."""
    found = owner.__dict__.get(name)
    if found is None:
        found = owner.__dict__[name] = {}
    return found
