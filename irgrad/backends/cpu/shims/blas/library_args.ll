; gemm.ll's library branch, first: the arguments cast to the library's integers.
  %tra = select i1 %ta1, i32 ${trans}, i32 ${no_trans}
  %trb = select i1 %tb1, i32 ${trans}, i32 ${no_trans}
  %im = ${cast} i64 %m to ${I}
  %in = ${cast} i64 %n to ${I}
  %ik = ${cast} i64 %k to ${I}
  %ilda = ${cast} i64 %lda to ${I}
  %ildb = ${cast} i64 %ldb to ${I}
  %ildc = ${cast} i64 %ldc to ${I}
