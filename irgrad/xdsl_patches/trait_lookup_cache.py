"""An op class's trait of a given type, looked up once.

`Operation.get_trait(SomeTrait)` walks the class's traits with an `isinstance` check each
(abc's `__instancecheck__`, in Python, as traits are ABCs), and canonicalize, cse, dce, the
pattern rewriter and the lowerings ask it for every op they visit: 80,000 lookups, 177,000
`isinstance` calls, on the CPU pipeline of a 1,000-op gradient (benchmarks/RESULTS.md,
"Compile time: the per-op constant (issue 26), 2026-12-04"). The answer depends only on the
class, the trait type and the class's trait set, so it is kept per (class, trait type) with
the trait set it was computed from: `OpTraits.add_trait` replaces that set (a new frozenset),
which makes the kept answer stale and recomputed. Lookups by trait instance, and classes
whose `traits` is not exactly an `OpTraits`, go to xDSL's code. Upstream: not reported.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir import Operation
from xdsl.ir.core import OpTraits

from irgrad.xdsl_patches.patching import install, is_patched, require_source


def apply() -> None:
    original = Operation.__dict__["get_trait"]
    if is_patched(original.__func__):
        return
    require_source(original.__func__, "if isinstance(trait, type):", "for t in cls.traits:", patch="trait_lookup_cache")
    require_source(OpTraits.add_trait, "self._traits = self.traits.union((trait,))", patch="trait_lookup_cache")
    lookup = original.__func__
    cache: dict[tuple[type, type], tuple[frozenset[Any], Any]] = {}

    def get_trait(cls, trait):  # type: ignore[no-untyped-def]
        traits = cls.traits
        if type(traits) is not OpTraits or not isinstance(trait, type):
            return lookup(cls, trait)
        current = traits.traits
        key = (cls, trait)
        kept = cache.get(key)
        if kept is not None and kept[0] is current:
            return kept[1]
        found = lookup(cls, trait)
        cache[key] = (current, found)
        return found

    get_trait.__doc__ = lookup.__doc__
    get_trait._irgrad_patch = True  # type: ignore[attr-defined]
    get_trait._irgrad_original = lookup  # type: ignore[attr-defined]
    install(Operation, "get_trait", classmethod(get_trait), original)
