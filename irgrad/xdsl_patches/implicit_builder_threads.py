"""`ImplicitBuilder` from several threads at once.

xDSL 0.75 keeps the implicit builder per thread, but hooks op creation by replacing the class
attribute `Operation.__post_init__` on entry (when the thread had no builder) and putting the
saved one back on exit. Two threads entering together each wrap the other's wrapper, so an op
made in one is inserted twice into its block ("Can't add to a block an operation already
attached to a block"), and exits restore the hooks out of order. The hook is made once and for
all instead: it inserts into the calling thread's builder, if it has one (a thread-local
lookup per op made), and entering or leaving a builder no longer touches the class.
Upstream: not reported.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir.core import Operation

from irgrad.xdsl_patches.patching import install, is_patched, require_source


def apply() -> None:
    import xdsl.builder as builder

    original = builder._override_operation_post_init
    if is_patched(original):
        return
    require_source(original, "Operation.__post_init__ = new_post_init", patch="implicit_builder_threads")
    require_source(builder._op_init_callback, "_current_builder.builder", patch="implicit_builder_threads")
    base = Operation.__post_init__

    def post_init_with_builder(self: Any) -> None:
        base(self)
        builder._op_init_callback(self)

    def override_operation_post_init() -> Any:
        """Install the permanent hook (once); what ImplicitBuilder puts back on exit is it too."""
        if Operation.__post_init__ is not post_init_with_builder:
            Operation.__post_init__ = post_init_with_builder  # type: ignore[method-assign]
        return post_init_with_builder

    install(builder, "_override_operation_post_init", override_operation_post_init, original)
