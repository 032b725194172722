// RUN: irgrad-opt --print-ir-after-all -p canonicalize,cse %s 2>&1 >/dev/null | filecheck %s
// RUN: irgrad-opt --print-ir-after-all -p canonicalize,cse %s 2>/dev/null | filecheck %s --check-prefix=OUT

// --print-ir-after-all (the old spelling of --mlir-print-ir-after-all) prints the module after
// every pass to stderr, with MLIR's banner; stdout holds only the result.

func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  %1 = arith.muli %0, %0 : i32
  %2 = arith.muli %0, %0 : i32
  %3 = arith.addi %1, %2 : i32
  func.return %3 : i32
}

// canonicalize folds the `+ 0`; cse then merges the two identical multiplications.
// CHECK:      // -----// IR Dump After Canonicalize (canonicalize) //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        %0 = arith.muli %a, %a : i32
// CHECK-NEXT:   %1 = arith.muli %a, %a : i32
// CHECK-NEXT:   %2 = arith.addi %0, %1 : i32
// CHECK:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        %0 = arith.muli %a, %a : i32
// CHECK-NEXT:   %1 = arith.addi %0, %0 : i32

// OUT-NOT:  IR Dump After
// OUT:      %0 = arith.muli %a, %a : i32
// OUT-NEXT: %1 = arith.addi %0, %0 : i32
// OUT-NEXT: func.return %1 : i32
