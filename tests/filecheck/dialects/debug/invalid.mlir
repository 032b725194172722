// RUN: irgrad-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of debug.print's verifier; the CHECK line is the diagnostic.

func.func @too_few_positional(%x: tensor<3xf32>) {
  debug.print "{} and {}"(%x) : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op the format string '{} and {}' has 2 positional fields, but the op has 1 positional operands

// -----

func.func @unknown_name(%x: tensor<3xf32>) {
  debug.print "{x} {w}"(%x) {names = ["x"]} : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op the format string '{x} {w}' names w, which no operand is called

// -----

func.func @malformed(%x: tensor<3xf32>) {
  debug.print "{"(%x) : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op bad format string '{': Single '{' encountered in format string

// -----

func.func @mixed_numbering(%x: tensor<3xf32>) {
  debug.print "{} {0}"(%x) : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op bad format string '{} {0}': cannot switch between automatic field numbering and manual field specification

// -----

func.func @names_count(%x: tensor<3xf32>) {
  debug.print "{}"(%x) {names = ["", "y"]} : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op 'names' has 2 entries for 1 operands

// -----

func.func @scalar(%s: f32) {
  debug.print "{}"(%s) : f32
  func.return
}
// CHECK: 'debug.print' op operand #0 must be a tensor or a memref, got f32

// -----

func.func @too_many(%x: tensor<f32>) {
  debug.print ""(%x, %x, %x, %x, %x, %x, %x, %x, %x) : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
  func.return
}
// CHECK: 'debug.print' op takes at most 8 operands, got 9
