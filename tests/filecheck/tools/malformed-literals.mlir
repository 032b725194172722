// Literals a fuzzer found that hung the parser or ended in an internal error; each is now a
// located error at the literal, exit 1, at once (irgrad/xdsl_patches/string_literal_backtracking.py
// and literal_limits.py; the builder errors in irgrad/diagnostics.py).
// RUN: sh -c 'irgrad-opt %s --split-input-file 2>&1; echo "exit=$?"' | filecheck %s
// CHECK-NOT: internal error
// CHECK-NOT: Traceback

// An unterminated string literal followed by a long line: xDSL's lexer backtracked
// exponentially over the rest of the line.
func.func @unterminated() {
  %y = "nn.exp %x : tensor<4xf32> attributes {a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7}
  func.return
}
// CHECK: malformed-literals.mlir:[[# @LINE - 3]]:8: error: End of file reached before closing string literal.

// -----

// An integer width past MLIR's 2^24 - 1: the value range of an i4294967296 never finished.
func.func @wide() {
  "test.op"() {a = array<i4294967296: 1, 1>} : () -> ()
  func.return
}
// CHECK: malformed-literals.mlir:[[# @LINE - 3]]:26: error: integer bitwidth 4294967296 is larger than 16777215, the most MLIR allows

// -----

func.func @widest_allowed(%a: i16777215) {
  func.return
}
// CHECK: func.func @widest_allowed(%a: i16777215)

// -----

// A dimension that does not fit 64 bits.
func.func @huge_dimension(%a: memref<18446744073709551616x5xf32>) {
  func.return
}
// CHECK: malformed-literals.mlir:[[# @LINE - 3]]:38: error: invalid dimension 18446744073709551616: larger than 9223372036854775807

// -----

// A zero-width element type in a dense array: a ZeroDivisionError inside xDSL's builder.
func.func @zero_width() {
  "test.op"() {a = array<i0>} : () -> ()
  func.return
}
// CHECK: malformed-literals.mlir:[[# @LINE - 3]]:3: error: cannot build this op from its text: integer modulo by zero
// CHECK: exit=1
