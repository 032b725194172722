"""The LLVM IR of the LAPACK shims, from the templates in shims/lapack/.

A small shim compiled by LLVM adapts each call to the library library.py chose (layout,
enums, integer width), handles empty sizes, and implements what LAPACK leaves to the caller
(zeroing the other triangle, the failure convention, 0-based pivots and the row
permutation). `shim_ir` assembles the shims a program needs, with the declarations of the
library routines they call; install.py compiles it.
"""

from __future__ import annotations

from collections.abc import Collection

from irgrad.backends.cpu.lapack.entry_points import PRECISIONS, ROUTINES
from irgrad.backends.cpu.shims import template

LAPACK_ROW_MAJOR = 101
LAPACK_COL_MAJOR = 102
UPLO_U = ord("U")
CBLAS_ROW_MAJOR = 101
CBLAS_LEFT = 141
CBLAS_UPPER = 121
CBLAS_LOWER = 122
CBLAS_NO_TRANS = 111
CBLAS_NON_UNIT = 131
CBLAS_UNIT = 132
INT32_MAX = (1 << 31) - 1

JOBZ_V = ord("V")
JOBZ_S = ord("S")
JOBV_N = ord("N")
UPLO_L = ord("L")


def shim_ir(bits: int, entry_points: Collection[str]) -> str:
    """The shims of `entry_points` (a subset of ENTRY_POINTS) for a library with `bits`-bit
    integers, and the declarations of the library routines they call."""
    ity = f"i{bits}"
    int_max = (1 << (bits - 1)) - 1
    common = {
        "I": ity,
        "cast": "trunc" if bits < 64 else "bitcast",
        "ext": "sext" if bits < 64 else "bitcast",
        "int_size": bits // 8,
    }
    parts = [
        "declare i64 @llvm.smax.i64(i64, i64)",
        "declare i64 @llvm.smin.i64(i64, i64)",
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
        "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
        "declare ptr @malloc(i64)",
        "declare void @free(ptr)",
        template("lapack/identity.ll").substitute(),
    ]
    for p, t, size in PRECISIONS:
        wanted = {r for r in ROUTINES if f"irgrad_lapack_{p}{r}" in entry_points}
        parts += [
            template("lapack/fill_nan.ll").substitute(p=p, T=t),
            template("lapack/finite.ll").substitute(p=p, T=t),
            template("lapack/lwork.ll").substitute(
                p=p, T=t, to_double="fpext float %q to double" if t == "float" else "fadd double %q, 0.0"
            ),
        ]
        if "potrf" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}potrf(i32, i8 signext, {ity}, ptr, {ity})",
                template("lapack/potrf.ll").substitute(
                    p=p, T=t, size=size, int_max=int_max, col_major=LAPACK_COL_MAJOR, uplo_u=UPLO_U, **common
                ),
            ]
        if "trsm" in wanted:
            parts += [
                f"declare void @_irgrad_rt_cblas_{p}trsm(i32, i32, i32, i32, i32, {ity}, {ity}, {t}, ptr, "
                f"{ity}, ptr, {ity})",
                template("lapack/trsm.ll").substitute(
                    p=p, T=t, int_max=int_max, row_major=CBLAS_ROW_MAJOR, left=CBLAS_LEFT, no_trans=CBLAS_NO_TRANS,
                    lower_enum=CBLAS_LOWER, upper_enum=CBLAS_UPPER, unit_enum=CBLAS_UNIT,
                    non_unit_enum=CBLAS_NON_UNIT, **common,
                ),
            ]
        if "getrf" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}getrf(i32, {ity}, {ity}, ptr, {ity}, ptr)",
                # getrf's pivots are i32 whatever the library's integers are
                template("lapack/getrf.ll").substitute(p=p, T=t, int_max=min(int_max, INT32_MAX), row_major=LAPACK_ROW_MAJOR, **common),
            ]
        if "syevd" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}syevd(i32, i8 signext, i8 signext, {ity}, ptr, {ity}, ptr, "
                f"ptr, {ity}, ptr, {ity})",
                template("lapack/syevd.ll").substitute(
                    p=p, T=t, size=size, int_max=int_max, row_major=LAPACK_ROW_MAJOR, jobz_v=JOBZ_V, uplo_l=UPLO_L,
                    **common,
                ),
            ]
        if "geev" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}geev(i32, i8 signext, i8 signext, {ity}, ptr, {ity}, ptr, ptr, "
                f"ptr, {ity}, ptr, {ity}, ptr, {ity})",
                template("lapack/geev.ll").substitute(
                    p=p, T=t, size=size, int_max=int_max, row_major=LAPACK_ROW_MAJOR, jobv_n=JOBV_N, jobv_v=JOBZ_V,
                    **common,
                ),
            ]
        if "gesdd" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}gesdd(i32, i8 signext, {ity}, {ity}, ptr, {ity}, ptr, "
                f"ptr, {ity}, ptr, {ity}, ptr, {ity}, ptr)",
                template("lapack/gesdd.ll").substitute(
                    p=p, T=t, size=size, int_max=int_max, col_major=LAPACK_COL_MAJOR, jobz_s=JOBZ_S, **common
                ),
            ]
        if "geqrf" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}geqrf(i32, {ity}, {ity}, ptr, {ity}, ptr, ptr, {ity})",
                f"declare {ity} @_irgrad_rt_lapacke_{p}orgqr(i32, {ity}, {ity}, {ity}, ptr, {ity}, ptr, ptr, {ity})",
                template("lapack/geqrf.ll").substitute(p=p, T=t, size=size, int_max=int_max, row_major=LAPACK_ROW_MAJOR, **common),
            ]
    return "\n".join(parts)


__all__ = ["shim_ir"]
