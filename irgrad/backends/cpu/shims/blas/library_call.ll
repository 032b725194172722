; gemm.ll's library branch, last: the CBLAS call itself.
  call void @_irgrad_split_${p}gemm(i32 ${row_major}, i32 %tra, i32 %trb, ${I} %im, ${I} %in, ${I} %ik,
        ${T} %alpha, ptr %a, ${I} %ilda, ptr %b, ${I} %ildb, ${T} %beta, ptr %c, ${I} %ildc)
