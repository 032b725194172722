// RUN: sh -c 'irgrad-opt %s --split-input-file 2>&1; echo "exit=$?"' | filecheck %s

// Text that parses token by token but that an op's builder rejects (a literal out of its
// type's range, an op missing its operands): a located error at the op, exit 1, where xDSL
// raises a plain ValueError or IndexError (an internal error before).
// CHECK-NOT: Traceback
// CHECK-NOT: internal error

func.func @dense_out_of_range() {
  %c = nn.constant dense<9223372036854775807> : tensor<i32>
  func.return
}
// CHECK: parse-builder-errors.mlir:10:3: error: cannot build this op from its text: Integer value 9223372036854775807 is out of range for type i32

// -----

func.func @named_op_without_operands() {
  linalg.copy
  func.return
}
// CHECK: parse-builder-errors.mlir:18:3: error: cannot build this op from its text

// -----

// An element type xDSL's dense storage has no format for, and a splat too large to hold
// (irgrad/xdsl_patches/literal_limits.py).
func.func @dense_i128() {
  %c = arith.constant dense<[1, 2]> : tensor<2xi128>
  func.return
}
// CHECK: parse-builder-errors.mlir:[[# @LINE - 3]]:3: error: cannot build this op from its text: Format not implemented for i128

// -----

func.func @huge_splat() {
  %c = arith.constant dense<1.0> : tensor<100000000000xf32>
  func.return
}
// CHECK: parse-builder-errors.mlir:[[# @LINE - 3]]:36: error: a dense literal of 100000000000 elements: irgrad holds at most 67108864
// CHECK: exit=1
