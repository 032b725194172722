"""Every change irgrad makes to xDSL's behaviour, in one place: a module per patch.

Each patch names the xDSL bug or cost it works around (and the upstream issue where there is
one), checks that the code it replaces is still the code it was written for, and is tested in
tests/unit/xdsl_patches/. `import irgrad` applies them (`apply_all`), after checking that the
installed xDSL is the release they were written for: an upgrade fails loudly here rather than
patching code that has moved. The patch of xDSL's LLVM backend is applied where irgrad first
imports that backend (`llvm_call_intrinsic.apply`).
"""

from __future__ import annotations

import xdsl

from irgrad.versions import XDSL_VERSION, installed_version
from irgrad.xdsl_patches import lazy_assembly_formats


class XdslVersionError(ImportError):
    """The installed xDSL is not the release irgrad's patches were written for."""


def check_version() -> None:
    """Raise XdslVersionError unless xDSL is the pinned release."""
    found = installed_version(xdsl)
    if found != XDSL_VERSION:
        raise XdslVersionError(
            f"irgrad needs xdsl=={XDSL_VERSION} (its patches in irgrad/xdsl_patches/ are written "
            f"for that release), found {found}: pip install 'xdsl=={XDSL_VERSION}'"
        )


def apply_all() -> None:
    """Check the version, then apply every patch that does not wait for a lazily imported
    part of xDSL (idempotent). Assembly formats first: before any dialect is defined."""
    check_version()
    lazy_assembly_formats.apply()
    from irgrad.xdsl_patches import (
        affine_compose,
        block_split_before,
        dense_array_values,
        dense_bool_hex,
        dense_hex_floats,
        implicit_builder_threads,
        isa_constraint_cache,
        missing_verifiers,
        literal_limits,
        op_init_fast_path,
        operand_replacement,
        string_literal_backtracking,
        trait_lookup_cache,
        unknown_location,
        value_views,
        upstream_gpu_syntax,
        upstream_op_syntax,
    )

    for patch in (
        dense_hex_floats, dense_bool_hex, block_split_before, dense_array_values, isa_constraint_cache, missing_verifiers,
        implicit_builder_threads, string_literal_backtracking, literal_limits, upstream_op_syntax,
        upstream_gpu_syntax, op_init_fast_path, trait_lookup_cache, unknown_location,
        operand_replacement, affine_compose, value_views,
    ):
        patch.apply()
