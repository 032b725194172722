"""Which library serves the LAPACK entry points, and under which symbol names.

- LAPACK: the LAPACKE/CBLAS routines of the library blas.py chose (numpy's bundled OpenBLAS,
  whose symbols are `scipy_LAPACKE_dpotrf_work64_`, `scipy_cblas_dtrsm64_`, ... with 64-bit
  integers), else the first library blas.py's discovery finds that has them. The first naming
  under which potrf, getrf (LAPACKE) and trsm (CBLAS) all resolve in both precisions is used:
  `scipy_*64_` or `*64_` (64-bit integers), then `scipy_*` or the plain names
  `LAPACKE_dpotrf_work`, `cblas_dtrsm` (32-bit integers). The `_work` LAPACKE variants are
  used: the plain ones run a NaN pre-check and return early without factoring.
- syevd, gesdd, geqrf and geev (LAPACKE `{p}syevd_work`, `{p}gesdd_work`, `{p}geqrf_work` +
  `{p}orgqr_work`, `{p}geev_work`) are looked up under that same naming, but do not decide the choice: an entry
  point whose routines the chosen library lacks is, alone, a numpy callback (fallback.py;
  `LapackInfo.fallbacks` lists them; empty for numpy's OpenBLAS, which has them all). So a
  library with an incomplete LAPACK still serves the routines it has.
- No library found, or `IRGRAD_LAPACK=none` (or `off`, `0`): `LapackInfo.available` is False
  and every entry point is a numpy callback. `IRGRAD_LAPACK=/path/to/lib.so` picks a library.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from dataclasses import dataclass

from irgrad.backends.cpu.blas import blas_info, candidates as blas_candidates
from irgrad.backends.cpu.lapack.entry_points import ENTRY_POINTS, PRECISIONS, REQUIRED, ROUTINES

# The library routines each entry point calls, {p} the precision.
_LIBRARY_ROUTINES: dict[str, tuple[str, ...]] = {
    "potrf": ("LAPACKE_{p}potrf_work",),
    "trsm": ("cblas_{p}trsm",),
    "getrf": ("LAPACKE_{p}getrf_work",),
    "syevd": ("LAPACKE_{p}syevd_work",),
    "gesdd": ("LAPACKE_{p}gesdd_work",),
    "geqrf": ("LAPACKE_{p}geqrf_work", "LAPACKE_{p}orgqr_work"),
    "geev": ("LAPACKE_{p}geev_work",),
}

# How a library spells those names, and its integer bits; preferred first.
_NAMINGS = (("scipy_{}64_", 64), ("{}64_", 64), ("scipy_{}", 32), ("{}", 32))


@dataclass(frozen=True)
class LapackInfo:
    """What the `irgrad_lapack_*` entry points call: a library and its symbols, or (library
    None) the numpy reference through ctypes callbacks."""

    library: str | None
    symbols: tuple[str, ...]
    """The library symbols the entry points call, in the order of `ENTRY_POINTS` (s potrf,
    trsm, getrf, syevd, gesdd, geqrf + orgqr, geev, then d), less those of `fallbacks`."""
    int_bits: int | None
    reason: str
    """Why this one (or why no library)."""
    fallbacks: tuple[str, ...] = ()
    """Entry points that are numpy callbacks although a library was chosen (it lacks their
    routines); empty for numpy's OpenBLAS."""

    @property
    def available(self) -> bool:
        return self.library is not None

    def describe(self) -> str:
        if self.library is None:
            return f"no LAPACK ({self.reason}): numpy reference callbacks"
        text = f"{os.path.basename(self.library)}: {', '.join(self.symbols)}, {self.int_bits}-bit ints"
        if self.fallbacks:
            text += f"; numpy reference callbacks for {', '.join(self.fallbacks)}"
        return text


@dataclass(frozen=True)
class Resolved:
    """A library's symbols: per entry point it serves, the (runtime name, library name,
    address) of each routine it calls."""

    bits: int
    routines: dict[str, tuple[tuple[str, str, int], ...]]


def _runtime_name(p: str, routine: str) -> str:
    """The process symbol a shim calls for one library routine (pattern of _LIBRARY_ROUTINES)."""
    base = routine.format(p=p).removesuffix("_work")
    return "_irgrad_rt_" + (base if base.startswith("cblas_") else "lapacke_" + base.removeprefix("LAPACKE_"))


def _resolve(path: str) -> Resolved | None:
    """The first naming under which `path` has every REQUIRED routine, both precisions, with
    the other entry points whose routines it has under that naming; None if there is none."""
    try:
        library = ctypes.CDLL(path)
    except OSError:
        return None

    def lookup(naming: str, p: str, routine: str) -> tuple[tuple[str, str, int], ...] | None:
        found = []
        for pattern in _LIBRARY_ROUTINES[routine]:
            name = naming.format(pattern.format(p=p))
            try:
                address = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
            except AttributeError:
                return None
            if not address:
                return None
            found.append((_runtime_name(p, pattern), name, address))
        return tuple(found)

    for naming, bits in _NAMINGS:
        routines: dict[str, tuple[tuple[str, str, int], ...]] = {}
        for p, _, _ in PRECISIONS:
            for routine in ROUTINES:
                symbols = lookup(naming, p, routine)
                if symbols is not None:
                    routines[f"irgrad_lapack_{p}{routine}"] = symbols
        if all(f"irgrad_lapack_{p}{r}" in routines for p, _, _ in PRECISIONS for r in REQUIRED):
            return Resolved(bits, routines)
    return None


def _candidates() -> Iterator[str]:
    """The library blas.py chose first (its single-threaded private copy where it made one: one
    OpenBLAS, one thread pool), then blas.py's search."""
    info = blas_info()
    if info.loaded_path is not None:
        yield info.loaded_path
    for path in blas_candidates():
        if path not in (info.library, info.loaded_path):
            yield path


def choose() -> tuple[LapackInfo, Resolved | None]:
    """The library (with its symbols) the environment and this machine give, or none."""
    setting = os.environ.get("IRGRAD_LAPACK", "").strip()
    if setting.lower() in ("none", "off", "0", "loops"):
        return LapackInfo(None, (), None, "IRGRAD_LAPACK=" + setting), None
    paths: Iterator[str] = iter([setting]) if setting else _candidates()
    for path in paths:
        found = _resolve(path)
        if found is not None:
            chosen = blas_info()
            how = ("IRGRAD_LAPACK" if setting else f"the GEMM library ({chosen.reason})" if path == chosen.loaded_path
                   else "numpy's BLAS" if "numpy" in path else "found by name")
            names = tuple(name for entry in ENTRY_POINTS for _, name, _ in found.routines.get(entry, ()))
            fallbacks = tuple(entry for entry in ENTRY_POINTS if entry not in found.routines)
            return LapackInfo(path, names, found.bits, how, fallbacks), found
    reason = f"IRGRAD_LAPACK={setting} has no LAPACKE potrf/getrf and CBLAS trsm" if setting else "no LAPACK found"
    return LapackInfo(None, (), None, reason), None


__all__ = ["LapackInfo", "Resolved", "choose"]
