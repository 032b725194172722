"""How a patch of xDSL is put in place: once, marked, and only over the code it was written for."""

from __future__ import annotations

import inspect
from typing import Any


class XdslChanged(AssertionError):
    """The xDSL code a patch replaces is not the code it was written for (an upgrade)."""


def is_patched(function: Any) -> bool:
    """Whether `function` is already irgrad's replacement (a second `apply` does nothing)."""
    return getattr(function, "_irgrad_patch", False)


def require_source(function: Any, *fragments: str, patch: str) -> None:
    """Fail loudly unless xDSL's `function` still contains each of `fragments`."""
    source = inspect.getsource(function)
    missing = [fragment for fragment in fragments if fragment not in source]
    if missing:
        raise XdslChanged(
            f"xDSL's {function.__qualname__} changed ({missing[0]!r} is gone): "
            f"review irgrad/xdsl_patches/{patch}.py"
        )


def install(owner: object, name: str, replacement: Any, original: Any) -> None:
    """Put `replacement` in place of `owner.name` (the `original`), marked as irgrad's patch,
    with the original's docstring when it has none."""
    if replacement.__doc__ is None:
        replacement.__doc__ = original.__doc__
    replacement._irgrad_patch = True
    replacement._irgrad_original = original
    setattr(owner, name, replacement)
