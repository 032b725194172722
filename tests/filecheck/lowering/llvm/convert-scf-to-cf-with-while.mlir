// RUN: not irgrad-opt -p convert-scf-to-cf-with-while --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-scf-to-cf-with-while --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// scf.while: the before region is the loop header, its scf.condition a conditional branch
// to the body or out with the same values; the body branches back with its yield.

// CHECK-LABEL: func.func @count_down
// CHECK:        cf.br ^[[BEFORE:.*]](%n, %i0 : i32, index)
// CHECK-NEXT: ^[[BEFORE]](%x: i32, %k: index):
// CHECK-NEXT:   %c = arith.cmpi sgt, %x, %c0 : i32
// CHECK-NEXT:   cf.cond_br %c, ^[[AFTER:.*]](%x, %k : i32, index), ^[[EXIT:.*]](%x, %k : i32, index)
// CHECK-NEXT: ^[[AFTER]](%y: i32, %j: index):
// CHECK:        cf.br ^[[BEFORE]](%next, %j1 : i32, index)
// CHECK-NEXT: ^[[EXIT]](%r: i32, %r_1: index):
// CHECK-NEXT:   func.return %r, %r_1 : i32, index
// CHECK-NOT:  scf.
func.func @count_down(%n: i32) -> (i32, index) {
  %c0 = arith.constant 0 : i32
  %i0 = arith.constant 0 : index
  %r:2 = scf.while (%x = %n, %k = %i0) : (i32, index) -> (i32, index) {
    %c = arith.cmpi sgt, %x, %c0 : i32
    scf.condition(%c) %x, %k : i32, index
  } do {
  ^bb0(%y: i32, %j: index):
    %one = arith.constant 1 : i32
    %next = arith.subi %y, %one : i32
    %i1 = arith.constant 1 : index
    %j1 = arith.addi %j, %i1 : index
    scf.yield %next, %j1 : i32, index
  }
  func.return %r#0, %r#1 : i32, index
}

// -----

// A while nested in a for, and an if in the while's body: one pass lowers them all
// (xDSL's patterns for for/if, irgrad's for while).

// CHECK-LABEL: func.func @nested
// CHECK-NOT:  scf.
// CHECK:      cf.cond_br
// CHECK:      func.return
func.func @nested(%n: index, %limit: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i32) {
    %w = scf.while (%x = %acc) : (i32) -> i32 {
      %c = arith.cmpi slt, %x, %limit : i32
      scf.condition(%c) %x : i32
    } do {
    ^bb0(%y: i32):
      %odd = arith.andi %y, %one : i32
      %is_odd = arith.cmpi ne, %odd, %zero : i32
      %z = scf.if %is_odd -> (i32) {
        %a = arith.addi %y, %one : i32
        scf.yield %a : i32
      } else {
        %b = arith.addi %y, %one : i32
        %b2 = arith.addi %b, %one : i32
        scf.yield %b2 : i32
      }
      scf.yield %z : i32
    }
    scf.yield %w : i32
  }
  func.return %r : i32
}

// -----

// scf.parallel must be lowered first.

func.func @parallel(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %m[%i] : memref<4xf32>
    memref.store %v, %m[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// ERR: convert-scf-to-cf-with-while.mlir:[[# @LINE - 9]]:3: error: 'scf.parallel' op must be lowered before convert-scf-to-cf-with-while; run convert-scf-parallel-to-scf first
