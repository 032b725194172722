// RUN: irgrad-opt %s | filecheck %s
// RUN: irgrad-opt %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt --print-op-generic %s | irgrad-opt | filecheck %s

// A plain func/arith module prints back the same, in custom and in generic syntax.

func.func @add_mul(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  %1 = arith.muli %0, %a : i32
  func.return %1 : i32
}

// CHECK-LABEL: func.func @add_mul(%a: i32, %b: i32) -> i32 {
// CHECK-NEXT:    %0 = arith.addi %a, %b : i32
// CHECK-NEXT:    %1 = arith.muli %0, %a : i32
// CHECK-NEXT:    func.return %1 : i32
// CHECK-NEXT:  }
