"""Vector math: LLVM's vectorized math intrinsics as calls of glibc's libmvec.

Why: LLVM vectorizes a loop calling `llvm.exp.f32` into `llvm.exp.v16f32`, but without a
vector math library its code generator splits that back into 16 calls of `expf`, one libm call
per element. clang's answer is `-fveclib=libmvec`, which llvmlite cannot pass (LLVM 22 keeps the
vector library in the TargetMachine's options, which llvmlite does not expose), so this module
does what LLVM's ReplaceWithVeclib pass does, after optimization: a declaration of a vector
intrinsic glibc's libmvec implements is renamed to libmvec's function of the same type,
following the x86 vector function ABI (`_ZGV<isa>N<lanes><args>_<name>`: isa b = SSE4 for
128-bit vectors, d = AVX2 (c = AVX) for 256-bit, e = AVX-512 for 512-bit; `v` per vector
argument). The calls stay, their callee changes.

Numerics: libmvec's functions are accurate to 4 ulp (glibc's manual) where the scalar libm is
within 1; NaN, infinities and zeros behave as in libm. The scalar remainder iterations of a
vectorized loop still call libm.

Where it applies: x86-64 Linux with glibc's libmvec.so.1 (glibc >= 2.22; more functions from
2.35), and only for a function the library defines (each name is looked up). Elsewhere, or
with `IRGRAD_VECLIB=none`, nothing changes. Cached object code that calls libmvec loads it
again (`ensure_loaded`).
"""

from __future__ import annotations

import os
import platform
import re

import llvmlite.binding as llvm

LIBRARY = "libmvec.so.1"

# LLVM intrinsic -> (libmvec's base name, number of arguments).
FUNCTIONS: dict[str, tuple[str, int]] = {
    "exp": ("exp", 1),
    "exp2": ("exp2", 1),
    "exp10": ("exp10", 1),
    "log": ("log", 1),
    "log2": ("log2", 1),
    "log10": ("log10", 1),
    "sin": ("sin", 1),
    "cos": ("cos", 1),
    "tan": ("tan", 1),
    "asin": ("asin", 1),
    "acos": ("acos", 1),
    "atan": ("atan", 1),
    "sinh": ("sinh", 1),
    "cosh": ("cosh", 1),
    "tanh": ("tanh", 1),
    "pow": ("pow", 2),
    "atan2": ("atan2", 2),
}

_INTRINSIC = re.compile(r"llvm\.(\w+?)\.v(\d+)(f32|f64)$")
_loaded: list[bool] = []


def enabled() -> bool:
    """Whether vector math is on (`IRGRAD_VECLIB` is not `none`) and libmvec loads here."""
    if os.environ.get("IRGRAD_VECLIB", "").strip().lower() in ("none", "off", "0"):
        return False
    return ensure_loaded()


def ensure_loaded() -> bool:
    """Load libmvec into the process (once) so LLVM resolves its symbols; False where the
    machine has none (not x86-64 Linux, or an old or non-glibc C library)."""
    if not _loaded:
        ok = platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")
        if ok:
            try:
                llvm.load_library_permanently(LIBRARY)
            except RuntimeError:
                ok = False
        _loaded.append(ok)
    return _loaded[0]


def _isa(bits: int, features: str) -> str | None:
    if bits == 128:
        return "b"
    if bits == 256:
        return "d" if "+avx2" in features else "c" if "+avx" in features else None
    if bits == 512:
        return "e" if "+avx512f" in features else None
    return None


def libmvec_name(intrinsic: str, features: str) -> str | None:
    """libmvec's function for a vector intrinsic (`llvm.exp.v16f32` -> `_ZGVeN16v_expf`), or
    None where there is none for this width or CPU."""
    match = _INTRINSIC.match(intrinsic)
    if match is None:
        return None
    op, lanes, element = match.group(1), int(match.group(2)), match.group(3)
    if op not in FUNCTIONS:
        return None
    base, arity = FUNCTIONS[op]
    isa = _isa(lanes * (32 if element == "f32" else 64), features)
    if isa is None:
        return None
    return f"_ZGV{isa}N{lanes}{'v' * arity}_{base}{'f' if element == 'f32' else ''}"


def use_vector_math(ref: llvm.ModuleRef, features: str) -> list[str]:
    """Rename the vector math intrinsics of an optimized module to libmvec's functions (those
    the library defines); returns the new names. `features` is the target's feature string."""
    if not enabled():
        return []
    renamed = []
    for fn in ref.functions:
        if not fn.is_declaration or not fn.name.startswith("llvm."):
            continue
        name = libmvec_name(fn.name, features)
        if name is not None and llvm.address_of_symbol(name) is not None:
            fn.name = name
            renamed.append(name)
    return renamed
