// RUN: irgrad-opt -p convert-cf-to-llvm --split-input-file %s | filecheck %s
// RUN: not irgrad-opt -p 'convert-cf-to-llvm{lower_asserts=false}' --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// Branches become llvm branches; block arguments of non-entry blocks get llvm types
// (index is i64), uses of the old type go through an unrealized cast.

// CHECK-LABEL: func.func @loop
// CHECK:        %[[INIT:.*]] = builtin.unrealized_conversion_cast %i0 : index to i64
// CHECK:        llvm.br ^[[HEAD:.*]](%n, %[[INIT]] : i32, i64)
// CHECK-NEXT: ^[[HEAD]](%x: i32, %[[K:.*]]: i64):
// CHECK-NEXT:   %k = builtin.unrealized_conversion_cast %[[K]] : i64 to index
// CHECK-NEXT:   %c = arith.cmpi sgt, %x, %c0 : i32
// CHECK-NEXT:   llvm.cond_br %c, ^[[BODY:.*]](%x, %[[K]] : i32, i64), ^[[EXIT:.*]](%x, %[[K]] : i32, i64)
// CHECK:        %[[NEXT:.*]] = builtin.unrealized_conversion_cast %j1 : index to i64
// CHECK-NEXT:   llvm.br ^[[HEAD]](%next, %[[NEXT]] : i32, i64)
// CHECK-NOT:  cf.
func.func @loop(%n: i32) -> (i32, index) {
  %c0 = arith.constant 0 : i32
  %i0 = arith.constant 0 : index
  cf.br ^bb1(%n, %i0 : i32, index)
^bb1(%x: i32, %k: index):
  %c = arith.cmpi sgt, %x, %c0 : i32
  cf.cond_br %c, ^bb2(%x, %k : i32, index), ^bb3(%x, %k : i32, index)
^bb2(%y: i32, %j: index):
  %one = arith.constant 1 : i32
  %next = arith.subi %y, %one : i32
  %i1 = arith.constant 1 : index
  %j1 = arith.addi %j, %i1 : index
  cf.br ^bb1(%next, %j1 : i32, index)
^bb3(%r: i32, %r_1: index):
  func.return %r, %r_1 : i32, index
}

// -----

// xDSL's llvm dialect has no switch: a chain of compares and conditional branches.

// CHECK-LABEL: func.func @switch
// CHECK-DAG:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG:    %[[FIVE:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK:        %[[IS1:.*]] = llvm.icmp "eq" %flag, %[[ONE]] : i32
// CHECK-NEXT:   llvm.cond_br %[[IS1]], ^[[CASE1:.*]], ^[[NEXT:.*]]
// CHECK-NEXT: ^[[NEXT]]:
// CHECK-NEXT:   %[[IS5:.*]] = llvm.icmp "eq" %flag, %[[FIVE]] : i32
// CHECK-NEXT:   llvm.cond_br %[[IS5]], ^[[CASE5:.*]], ^[[DEFAULT:.*]]
func.func @switch(%flag: i32) -> i32 {
  cf.switch %flag : i32, [
    default: ^bb3,
    1: ^bb1,
    5: ^bb2
  ]
^bb1:
  %a = arith.constant 10 : i32
  cf.br ^bb4(%a : i32)
^bb2:
  %b = arith.constant 50 : i32
  cf.br ^bb4(%b : i32)
^bb3:
  %d = arith.constant -1 : i32
  cf.br ^bb4(%d : i32)
^bb4(%r: i32):
  func.return %r : i32
}

// -----

// cf.assert: a conditional branch to the rest of the block, or to a block that calls the CPU
// runtime's irgrad_assert_failed with the message (a NUL-terminated constant, one global per
// distinct message) and is unreachable after it (the runtime makes the compiled call raise
// RuntimeCheckError). With lower_asserts=false (GPU kernels: no such runtime) it is an error.

// CHECK-LABEL: func.func @assert
// CHECK-NEXT:    llvm.cond_br %c, ^[[REST:.*]], ^[[FAIL:.*]]
// CHECK-NEXT:  ^[[REST]]:
// CHECK-NEXT:    %y = arith.addi %x, %x : i32
// CHECK-NEXT:    llvm.cond_br %c, ^[[REST2:.*]], ^[[FAIL2:.*]]
// CHECK-NEXT:  ^[[REST2]]:
// CHECK-NEXT:    func.return %y : i32
// CHECK-NEXT:  ^[[FAIL]]:
// CHECK-NEXT:    %[[MSG:.*]] = llvm.mlir.addressof @_irgrad_assert_message_0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @irgrad_assert_failed(%[[MSG]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.unreachable
// CHECK-NEXT:  ^[[FAIL2]]:
// CHECK-NEXT:    %[[MSG2:.*]] = llvm.mlir.addressof @_irgrad_assert_message_0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @irgrad_assert_failed(%[[MSG2]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.unreachable
// CHECK-NEXT:  }
// "boom" and its NUL:
// CHECK-NEXT:  llvm.mlir.global internal constant @_irgrad_assert_message_0(dense<[98, 111, 111, 109, 0]> : tensor<5xi8>) {addr_space = 0 : i32} : !llvm.array<5 x i8>
// CHECK-NEXT:  llvm.func @irgrad_assert_failed(!llvm.ptr)
// CHECK-NOT:   cf.assert
func.func @assert(%c: i1, %x: i32) -> i32 {
  cf.assert %c, "boom"
  %y = arith.addi %x, %x : i32
  cf.assert %c, "boom"
  func.return %y : i32
}

// ERR: convert-cf-to-llvm.mlir:[[# @LINE - 6]]:3: error: 'cf.assert' op is not supported here: convert-cf-to-llvm{lower_asserts=false} does not lower asserts (GPU kernels have no runtime to report a failed assert)
// ERR-NOT: error:
